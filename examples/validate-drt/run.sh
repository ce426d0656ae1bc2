#!/bin/sh
# Run tessel on the DRT simulator's shared input and compare with the simulator's raw
# outputs (see README.md in this directory).
#
#   TESSEL=path/to/tessel SIMREF=path/to/simulator-outputs sh examples/validate-drt/run.sh
#
# TESSEL defaults to ../../build-rel/tools/tessel and SIMREF to
# ../../../shared/reference/simulator-outputs, both relative to this script.
# Exit status: 0 when the checks pass, 77 when SIMREF is missing (skipped), 1 when the
# MatRaptor per-tensor equality, the OuterSPACE total within +-10 % or the tiled-csf
# inputs' equality with A_csf / B_csf (ExTensor, TACTile) fails, 2 when
# tessel is missing or a run fails.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
TESSEL=${TESSEL:-$here/../../build-rel/tools/tessel}
SIMREF=${SIMREF:-$here/../../../shared/reference/simulator-outputs}

if [ ! -d "$SIMREF" ]; then
    echo "validate-drt: skipped: simulator outputs not found at $SIMREF (set SIMREF=DIR)"
    exit 77
fi
SIMREF=$(cd "$SIMREF" && pwd)
for f in rand1k_d1_A.mtx.gz rand1k_d1_B.mtx.gz drt/extensor_static.txt drt/tactile_dyn.txt \
         drt/matraptor_patched.txt drt/outerspace_patched.txt; do
    if [ ! -f "$SIMREF/$f" ]; then
        echo "validate-drt: skipped: $SIMREF/$f is missing" >&2
        exit 77
    fi
done
if [ ! -x "$TESSEL" ]; then
    echo "validate-drt: error: no tessel binary at $TESSEL" >&2
    echo "  build one (from the repository root): meson setup build-rel --buildtype=release && ninja -C build-rel tools/tessel" >&2
    echo "  or point TESSEL at an existing binary: TESSEL=path/to/tessel sh $0" >&2
    exit 2
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/validate-drt.XXXXXX")
trap 'rm -rf "$out"' EXIT
trap 'exit 130' INT TERM

A="$SIMREF/rand1k_d1_A.mtx.gz"
B="$SIMREF/rand1k_d1_B.mtx.gz"
fail=0

# tessel run SPEC NAME [ARGS...]: writes $out/NAME/{traffic,summary}.csv
run() {
    spec=$1 name=$2
    shift 2
    if ! "$TESSEL" run "$here/$spec" -o "$out/$name" -q --no-timing "$@"; then
        echo "validate-drt: error: tessel run $spec failed" >&2
        exit 2
    fi
}

# tcol DIR LEVEL TENSOR COLUMN: a column of traffic.csv, found by header name
tcol() {
    awk -F, -v lv="$2" -v tn="$3" -v col="$4" '
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["level"] == lv && $c["tensor"] == tn { print $c[col]; found = 1; exit }
        END { if (!found) exit 1 }' "$1/traffic.csv"
}

# tbytes DIR TENSOR: bytes of TENSOR across the DRAM <-> LLB boundary (data + metadata)
tbytes() {
    d=$(tcol "$1" LLB "$2" data_bytes)
    m=$(tcol "$1" LLB "$2" metadata_bytes)
    echo $((d + m))
}

# simfield FILE NAME: the first 'NAME: value' item of a DRT output (items separated by commas)
simfield() {
    awk -v k="$2" '{
        n = split($0, it, /, */)
        for (i = 1; i <= n; i++) {
            s = it[i]; sub(/^[ \t]+/, "", s)
            p = index(s, ": ")
            if (p && substr(s, 1, p - 1) == k) { v = substr(s, p + 2); sub(/ .*/, "", v); print v; found = 1; exit }
        }
    } END { if (!found) exit 1 }' "$1"
}

header() {
    echo
    echo "== $1"
    printf '%-8s %12s %12s %12s %9s\n' tensor tessel simulator difference rel
}

# row TENSOR TESSEL SIMULATOR ('-' = not reported)
row() {
    awk -v t="$1" -v p="$2" -v r="$3" 'BEGIN {
        if (r == "-") { printf "%-8s %12d %12s %12s %9s\n", t, p, "n/a", "n/a", "n/a"; exit }
        d = p - r
        printf "%-8s %12d %12d %+12d %+8.2f%%\n", t, p, r, d, (r != 0 ? 100 * d / r : 0)
    }'
}

# within P R TOL: |P - R| <= TOL * R
within() {
    awk -v p="$1" -v r="$2" -v tol="$3" 'BEGIN { d = p - r; if (d < 0) d = -d; exit !(d <= tol * r) }'
}

# tessel validate, paths shortened in its output; exit 2 if it cannot compare (rc 2 or 1)
validate() {
    echo "-- tessel validate $*" | sed "s|$out/||g; s|$SIMREF/||g"
    rc=0
    "$TESSEL" validate "$@" >"$out/validate.txt" 2>&1 || rc=$?
    sed "s|$SIMREF/||g" "$out/validate.txt"
    if [ "$rc" -ne 0 ]; then
        echo "validate-drt: error: tessel validate exited with $rc" >&2
        exit 2
    fi
}

# ---------------------------------------------------------------- MatRaptor
run matraptor.yaml mr --tensor "A=$A" --tensor B=A
f=$SIMREF/drt/matraptor_patched.txt
header "MatRaptor (template matraptor, A·A): DRAM bytes, must be equal"
pz=$(tbytes "$out/mr" Z) pa=$(tbytes "$out/mr" A) pb=$(tbytes "$out/mr" B)
ra=$(simfield "$f" "A bytes") rb=$(simfield "$f" "B bytes") rz=$(simfield "$f" "O bytes")
row A "$pa" "$ra"; row B "$pb" "$rb"; row Z "$pz" "$rz"
row total $((pa + pb + pz)) $((ra + rb + rz))
if [ "$pa" -ne "$ra" ] || [ "$pb" -ne "$rb" ] || [ "$pz" -ne "$rz" ]; then
    echo "FAIL: MatRaptor per-tensor DRAM bytes differ from the simulator"
    fail=1
else
    echo "ok: MatRaptor A, B and Z equal the simulator's"
fi
validate "$out/mr/traffic.csv" "$f" -r drt --set-key design=drt-matraptor --set-key data=rand1k_d1_A

# ---------------------------------------------------------------- OuterSPACE
run outerspace.yaml os --tensor "A=$A" --tensor B=A
f=$SIMREF/drt/outerspace_patched.txt
header "OuterSPACE (template outerspace, A·A): DRAM bytes, total within 10 %"
pz=$(tbytes "$out/os" Z) pa=$(tbytes "$out/os" A) pb=$(tbytes "$out/os" B)
rt=$(simfield "$f" "Top bandwidth logger")
row A "$pa" -; row B "$pb" -; row "Z+part" "$pz" -
row total $((pa + pb + pz)) "$rt"
if within $((pa + pb + pz)) "$rt" 0.10; then
    echo "ok: OuterSPACE total within 10 % of the simulator's"
else
    echo "FAIL: OuterSPACE total DRAM bytes differ from the simulator's by more than 10 %"
    fail=1
fi
validate "$out/os/summary.csv" "$f" -r drt --set-key design=drt-outerspace --set-key data=rand1k_d1_A

# The LLB -> PE link (tessel's PEB rows; pe_link: per-column, docs/models/templates.md)
# against the simulator's "Middle bandwidth logger": must be equal.
header "OuterSPACE LLB -> PE bytes (pe_link: per-column), must be equal"
pm=0
for t in A B Z; do
    d=$(tcol "$out/os" PEB $t data_bytes) m=$(tcol "$out/os" PEB $t metadata_bytes)
    row "$t" $((d + m)) -
    pm=$((pm + d + m))
done
rm_=$(simfield "$f" "Middle bandwidth logger")
row total "$pm" "$rm_"
if [ "$pm" -ne "$rm_" ]; then
    echo "FAIL: OuterSPACE LLB -> PE bytes differ from the simulator's Middle"
    fail=1
else
    echo "ok: OuterSPACE LLB -> PE bytes equal the simulator's Middle"
fi

# ---------------------------------------------------------------- ExTensor static
run extensor-static.yaml ex --tensor "A=$A" --tensor B=A
f=$SIMREF/drt/extensor_static.txt
header "ExTensor static 32x32x32 tiles (fixed 1024-coordinate LLB tiles over 32x32 PE tiles, A·A): DRAM bytes"
pz=$(tbytes "$out/ex" Z) pa=$(tbytes "$out/ex" A) pb=$(tbytes "$out/ex" B)
ra=$(simfield "$f" a_top) rb=$(simfield "$f" b_top)
rz=$(( $(simfield "$f" o_r_top) + $(simfield "$f" o_w_top) ))
row A "$pa" "$ra"; row B "$pb" "$rb"; row Z "$pz" "$rz"
row total $((pa + pb + pz)) $((ra + rb + rz))
validate "$out/ex/traffic.csv" "$f" -r drt --set-key design=drt-extensor-static \
    --set-key data=rand1k_d1_A
validate "$out/ex/summary.csv" "$f" -r drt --set-key design=drt-extensor-static --set-key data=rand1k_d1_A

# ---------------------------------------------------------------- TACTile (DRT dynamic)
run tactile-dyn.yaml ta --tensor "A=$A" --tensor "B=$B"
f=$SIMREF/drt/tactile_dyn.txt
header "TACTile, DRT dynamic tiling (drt strategy, A·B): DRAM bytes"
pz=$(tbytes "$out/ta" Z) pa=$(tbytes "$out/ta" A) pb=$(tbytes "$out/ta" B)
ta_a=$(simfield "$f" a_top) ta_b=$(simfield "$f" b_top)
ta_z=$(( $(simfield "$f" o_r_top) + $(simfield "$f" o_w_top) ))
row A "$pa" "$ta_a"; row B "$pb" "$ta_b"; row Z "$pz" "$ta_z"
row total $((pa + pb + pz)) $((ta_a + ta_b + ta_z))
validate "$out/ta/traffic.csv" "$f" -r drt --set-key design=drt-tactile-dyn \
    --set-key 'data=rand1k_d1_A*rand1k_d1_B'
validate "$out/ta/summary.csv" "$f" -r drt --set-key design=drt-tactile-dyn --set-key 'data=rand1k_d1_A*rand1k_d1_B'

# The PE work of the spec's spatial split ({j: 128}, round robin; docs/models/spatial.md)
# against the simulator's per-PE intersection cycles ("MEAN: N, STDEV N" over its 128 PEs).
# One step (the mapping's LLB tile is the whole matrix), so the busiest PE's work is
# spatial_cycles and the mean is spatial_cycles / imbalance.
scol() {  # summary.csv has quoted fields with commas: read it as CSV
    python3 -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1])))[sys.argv[2]])' \
        "$1/summary.csv" "$2"
}
echo
echo "== TACTile PE work per PE (cycles): tessel spatial split against the simulator"
printf '%-8s %12s %12s %12s %9s\n' stat tessel simulator difference rel
sp=$(scol "$out/ta" spatial_cycles) im=$(scol "$out/ta" imbalance) sd=$(scol "$out/ta" work_stdev)
sim_mean=$(awk '/^MEAN:/ { v = $2; sub(/,/, "", v); print v; exit }' "$f")
sim_sd=$(awk '/^MEAN:/ { print $4; exit }' "$f")
row mean "$(awk -v a="$sp" -v b="$im" 'BEGIN { printf "%d", a / b + 0.5 }')" "$sim_mean"
row stdev "$(awk -v a="$sd" 'BEGIN { printf "%d", a + 0.5 }')" "$sim_sd"
echo "tessel busiest PE: $sp cycles (spatial_cycles); roofline cycles (the larger of it and DRAM's bound): $(scol "$out/ta" cycles)"

# ---------------------------------------------------------------- cycles: roofline and pipeline
# The same two runs under `timing: pipeline` (docs/models/timing.md): the macro tile's first
# fill and the last output piece's drain are exposed around the PE work.
run extensor-static.yaml exp --tensor "A=$A" --tensor B=A --set architecture.timing=pipeline
run tactile-dyn.yaml tap --tensor "A=$A" --tensor "B=$B" --set architecture.timing=pipeline
run outerspace.yaml osp --tensor "A=$A" --tensor B=A --set architecture.timing=pipeline
echo
echo "== Cycles: tessel's roofline (default) and timing: pipeline against the simulator"
printf '%-24s %12s %12s %12s %9s\n' design tessel simulator difference rel
for d in "ExTensor static:ex:exp:extensor_static" "TACTile:ta:tap:tactile_dyn" \
    "OuterSPACE:os:osp:outerspace_patched"; do
    label=${d%%:*} rest=${d#*:}
    rf=${rest%%:*} rest=${rest#*:}
    pl=${rest%%:*} sim=${rest#*:}
    sc=$(simfield "$SIMREF/drt/$sim.txt" cycles)
    row "$label roofline" "$(scol "$out/$rf" cycles | awk '{ printf "%d", $1 + 0.5 }')" "$sc"
    row "$label pipeline" "$(scol "$out/$pl" cycles | awk '{ printf "%d", $1 + 0.5 }')" "$sc"
done
echo "pipeline bounds: ExTensor $(scol "$out/exp" bound), TACTile $(scol "$out/tap" bound), OuterSPACE $(scol "$out/osp" bound)"
echo "OuterSPACE PE work (merge: single-pe): busiest PE + merge $(scol "$out/os" spatial_cycles) cycles"

# ---------------------------------------------------------------- tiled-csf
# The tensors are stored as the simulator stores them, a CSF of 32x32 tiles (tiled-csf over
# the drt strategy's micro tiles or the PE level's tiles, docs/spec.md): with every micro
# tile moved once, A's and B's DRAM bytes must equal the simulator's A_csf and B_csf, and
# TACTile's Z (written once) its O_csf.
echo
echo "== tiled-csf: tessel's DRAM bytes must equal the simulator's A_csf / B_csf / O_csf"
printf '%-22s %12s %12s %s\n' tensor tessel simulator ""
equal() {
    if [ "$2" -eq "$3" ]; then verdict=equal; else verdict=DIFFERS; fail=1; fi
    printf '%-22s %12d %12d %s\n' "$1" "$2" "$3" "$verdict"
}
equal "ExTensor A" "$(tbytes "$out/ex" A)" "$(simfield "$SIMREF/drt/extensor_static.txt" A_csf)"
equal "ExTensor B (= A)" "$(tbytes "$out/ex" B)" "$(simfield "$SIMREF/drt/extensor_static.txt" B_csf)"
equal "TACTile A" "$(tbytes "$out/ta" A)" "$(simfield "$SIMREF/drt/tactile_dyn.txt" A_csf)"
equal "TACTile B" "$(tbytes "$out/ta" B)" "$(simfield "$SIMREF/drt/tactile_dyn.txt" B_csf)"
equal "TACTile Z" "$(tbytes "$out/ta" Z)" "$(simfield "$SIMREF/drt/tactile_dyn.txt" O_csf)"
if [ "$fail" -ne 0 ]; then
    echo "FAIL: tiled-csf tensors differ from the simulator's A_csf / B_csf / O_csf"
fi

echo
if [ "$fail" -ne 0 ]; then
    echo "validate-drt: FAILED"
    exit 1
fi
echo "validate-drt: ok (MatRaptor equal, OuterSPACE within 10 %, A, B and TACTile's Z in tiled-csf equal)"
