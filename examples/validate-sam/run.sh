#!/bin/sh
# Run tessel on SAM's matmul_kij input and compare with SAM's raw outputs (see README.md
# in this directory).
#
#   TESSEL=path/to/tessel SIMREF=path/to/simulator-outputs sh examples/validate-sam/run.sh
#
# TESSEL defaults to ../../build-rel/tools/tessel and SIMREF to
# ../../../shared/reference/simulator-outputs, both relative to this script.
# Exit status: 0 when the checks pass, 77 when SIMREF is missing (skipped), 1 when the
# explanation of the cycle gap stops holding (SAM's cycles against the serial token count
# built from tessel's counts, within 1 %), 2 when tessel is missing or a run fails.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
TESSEL=${TESSEL:-$here/../../build-rel/tools/tessel}
SIMREF=${SIMREF:-$here/../../../shared/reference/simulator-outputs}

if [ ! -d "$SIMREF" ]; then
    echo "validate-sam: skipped: simulator outputs not found at $SIMREF (set SIMREF=DIR)"
    exit 77
fi
SIMREF=$(cd "$SIMREF" && pwd)
for f in rand1k_d1_A.mtx.gz sam/matmul_kij_rand1k_d1_A_back_N.csv sam/rand1k_kij.log; do
    if [ ! -f "$SIMREF/$f" ]; then
        echo "validate-sam: skipped: $SIMREF/$f is missing" >&2
        exit 77
    fi
done
if [ ! -x "$TESSEL" ]; then
    echo "validate-sam: error: no tessel binary at $TESSEL" >&2
    echo "  build one (from the repository root): meson setup build-rel --buildtype=release && ninja -C build-rel tools/tessel" >&2
    echo "  or point TESSEL at an existing binary: TESSEL=path/to/tessel sh $0" >&2
    exit 2
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/validate-sam.XXXXXX")
trap 'rm -rf "$out"' EXIT
trap 'exit 130' INT TERM

CSV=$SIMREF/sam/matmul_kij_rand1k_d1_A_back_N.csv
fail=0

# scol COLUMN: a column of tessel's summary.csv
scol() {
    awk -F, -v col="$1" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        NR == 2 { print $c[col]; exit }' "$out/sam/summary.csv"
}

# tcol LEVEL TENSOR COLUMN: a column of tessel's traffic.csv
tcol() {
    awk -F, -v lv="$1" -v tn="$2" -v col="$3" '
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["level"] == lv && $c["tensor"] == tn { print $c[col]; found = 1; exit }
        END { if (!found) exit 1 }' "$out/sam/traffic.csv"
}

# block NAME COLUMN: a column of SAM's per-block CSV (start, finish, duration)
block() {
    awk -F, -v b="$1" -v col="$2" '
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $1 == b { print $c[col]; found = 1; exit }
        END { if (!found) exit 1 }' "$CSV" || {
        echo "validate-sam: error: $CSV has no block $1" >&2
        exit 2
    }
}

row() {
    awk -v t="$1" -v p="$2" -v r="$3" 'BEGIN {
        d = p - r
        printf "%-40s %10.0f %10.0f %+10.0f %+8.2f%%\n", t, p, r, d, (r != 0 ? 100 * d / r : 0)
    }'
}

if ! "$TESSEL" run "$here/matmul-kij.yaml" -o "$out/sam" -q --no-timing \
        --tensor "A=$SIMREF/rand1k_d1_A.mtx.gz" --tensor B=A; then
    echo "validate-sam: error: tessel run matmul-kij.yaml failed" >&2
    exit 2
fi

# ---------------------------------------------------------------- cycles
flops=$(scol flops)
cycles=$(scol cycles)
nnz_z=$(scol output_nnz)
sam_cycles=$(awk -F, 'NR > 1 && $3 + 0 > m { m = $3 + 0 } END { print m }' "$CSV")
echo "== SAM matmul_kij on rand1k_d1_A (A·A): cycles"
printf '%-40s %10s %10s %10s %9s\n' quantity tessel SAM difference rel
row "cycles" "$cycles" "$sam_cycles"
echo "tessel's cycles are a roofline: max(effectual multiplies $flops / (1 multiplier x 1 per cycle),"
echo "  bytes / bandwidth of DRAM and Buffer, both unbounded as SAM models no memory) = compute bound."
echo "  Not modelled: control (stop) tokens, and the accumulator's barrier between the"
echo "  multiply stream and the output stream (SAM runs them one after the other)."
# The same under `timing: pipeline` (docs/models/timing.md): order KIJ puts the reduction
# index outermost, so the output is one piece that leaves after the last product, one value
# per lane a cycle.
if ! "$TESSEL" run "$here/matmul-kij.yaml" -o "$out/samp" -q --no-timing \
        --set architecture.timing=pipeline --tensor "A=$SIMREF/rand1k_d1_A.mtx.gz" --tensor B=A; then
    echo "validate-sam: error: tessel run matmul-kij.yaml (pipeline) failed" >&2
    exit 2
fi
pcycles=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    NR == 2 { print $c["cycles"]; exit }' "$out/samp/summary.csv")
row "cycles (timing: pipeline)" "$pcycles" "$sam_cycles"
echo "tessel's pipeline: effectual multiplies $flops, then nnz(Z) $nnz_z values emitted after the"
echo "  last one (no control tokens)."
echo "-- tessel validate sam/summary.csv sam/$(basename "$CSV") sam/rand1k_kij.log -r sam --set-key design=sam-matmul-kij --set-key data=rand1k_d1_A"
rc=0
"$TESSEL" validate "$out/sam/summary.csv" "$CSV" "$SIMREF/sam/rand1k_kij.log" -r sam \
    --set-key design=sam-matmul-kij --set-key data=rand1k_d1_A >"$out/validate.txt" 2>&1 || rc=$?
sed "s|$SIMREF/||g" "$out/validate.txt"
if [ "$rc" -ne 0 ]; then
    echo "validate-sam: error: tessel validate exited with $rc" >&2
    exit 2
fi

# ---------------------------------------------------------------- the gap, measured
# kij is an outer product: no output is final before the last k, so SAM's sparse
# accumulator takes every product first and only then streams the output out. Each
# phase moves one token per cycle: the multiply phase a product per multiply plus a stop
# token per nonzero of A's columns (one per (k, i) fiber of the repeated row of B), the
# write phase a value per output nonzero plus a stop token per output row.
nnz_a=$(tcol DRAM A reads_elements)
rows_z=1000   # rows of rand1k_d1_A·rand1k_d1_A (simulator-outputs/README.md: 1000x1000)
mul_phase=$((flops + nnz_a))
out_phase=$((nnz_z + rows_z))
mul_finish=$(block mul_5 finish)
write_start=$(block fiberwrite_X1_1 start)
write_cycles=$(block fiberwrite_X1_1 duration)
echo
echo "== Explanation check: SAM's cycles = multiply phase + output phase, one token per cycle"
printf '%-40s %10s %10s %10s %9s\n' phase "tessel's counts" SAM difference rel
row "multiply: flops + nnz(A)" "$mul_phase" "$mul_finish"
row "output: nnz(Z) + rows of Z" "$out_phase" "$write_cycles"
row "total" $((mul_phase + out_phase)) "$sam_cycles"
echo "  (SAM: mul_5 finishes at cycle $mul_finish; fiberwrite_X1_1 starts at $write_start,"
echo "   after spaccumulator2 has taken every product, and runs $write_cycles cycles)"
if awk -v p=$((mul_phase + out_phase)) -v r="$sam_cycles" 'BEGIN { d = p - r; if (d < 0) d = -d; exit !(d <= 0.01 * r) }'; then
    echo "ok: the serial token count is within 1 % of SAM's cycles"
else
    echo "FAIL: the serial token count is not within 1 % of SAM's cycles (explanation no longer holds)"
    fail=1
fi

echo
if [ "$fail" -ne 0 ]; then
    echo "validate-sam: FAILED"
    exit 1
fi
echo "validate-sam: ok (tessel's roofline is a lower bound, $(awk -v p="$cycles" -v r="$sam_cycles" 'BEGIN { printf "%.1f %%", 100 * (p - r) / r }') from SAM; the gap is explained above)"
