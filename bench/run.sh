#!/bin/sh
# Builds the benchmarks in a release build and runs them all, then prints
# one table of the headline figures beside their targets. Figures only:
# nothing here passes or fails.
#
#   sh bench/run.sh                  # everything (a few minutes, ~1 GB in $TMPDIR)
#   BENCH_QUICK=1 sh bench/run.sh    # small synthetic sizes, for a smoke run
#
# Environment: BUILD_BENCH (default build-bench), DATA (default ../shared/data),
# TMPDIR (where the synthetic .mtx and the cache go; removed afterwards).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_BENCH:-$root/build-bench}
data=${DATA:-$root/../shared/data}
case $build in /*) ;; *) build=$root/$build ;; esac

if [ -n "${BENCH_QUICK:-}" ]; then
    synth_mtx_nnz=1000000 synth_nnz=1000000 synth_size=200000
else
    synth_mtx_nnz=15000000 synth_nnz=20000000 synth_size=2000000
fi

if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$root" --buildtype=release
fi
ninja -C "$build" bench/bench_parse bench/bench_stats bench/bench_cache bench/bench_memory bench/bench_exact \
    tools/tessel >/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
results=$tmp/results.txt
: >"$results"

# ---------------------------------------------------------------- inputs
# (a) the largest shared matrix by entries, decompressed
parse_files=""
if [ -f "$data/mtx/ca-CondMat.mtx.gz" ]; then
    gzip -dc "$data/mtx/ca-CondMat.mtx.gz" >"$tmp/ca-CondMat.mtx"
    parse_files="$tmp/ca-CondMat.mtx"
else
    echo "bench: $data/mtx not found; skipping the real matrices" >&2
fi

# (b) a big synthetic .mtx: `tessel gen` when it works, else awk
synth=$tmp/synthetic-uniform.mtx
if "$build/tools/tessel" gen uniform --size "$synth_size" --nnz "$synth_mtx_nnz" --seed 7 \
        -o "$synth" 2>/dev/null; then
    how="tessel gen uniform"
else
    how="awk"
    awk -v n="$synth_size" -v nnz="$synth_mtx_nnz" 'BEGIN {
        srand(7)
        print "%%MatrixMarket matrix coordinate real general"
        print n, n, nnz
        # duplicates are allowed in Matrix Market (summed on read)
        for (k = 0; k < nnz; k++)
            printf "%d %d %.6g\n", int(rand() * n) + 1, int(rand() * n) + 1, rand()
    }' >"$synth"
fi
echo "bench: synthetic .mtx ($how): $(wc -c <"$synth") bytes, $synth_mtx_nnz entries" >&2
parse_files="$parse_files $synth"

shared=""
if [ -d "$data/mtx" ]; then
    shared=$(ls "$data"/mtx/*.mtx.gz)
fi

# ---------------------------------------------------------------- runs
run() {
    echo
    "$@" | tee -a "$results" | grep -v '^SUMMARY|'
}
# shellcheck disable=SC2086  # word splitting of the file lists is intended
run "$build/bench/bench_parse" $parse_files
# shellcheck disable=SC2086
run "$build/bench/bench_stats" --synthetic-nnz "$synth_nnz" --synthetic-size "$synth_size" $shared
run "$build/bench/bench_cache" --nnz "$synth_nnz" --size "$synth_size" "$tmp"
# shellcheck disable=SC2086
run "$build/bench/bench_memory" --synthetic-nnz "$synth_nnz" --synthetic-size "$synth_size" $shared
# The exact estimator against a symbolic SpGEMM baseline: rma10-sized
# synthetic matrices (about 2 minutes), or the largest shared ones when quick.
if [ -n "${BENCH_QUICK:-}" ]; then
    run "$build/bench/bench_exact" "$data/mtx/bcsstk16.mtx.gz" "$data/mtx/ca-CondMat.mtx.gz" \
        "$data/mtx/wiki-Vote.mtx.gz"
else
    run "$build/bench/bench_exact"
fi

# ---------------------------------------------------------------- table
# Per-matrix rows of stats/memory are summarised as the worst shared
# matrix and each synthetic one; the full rows are above.
echo
echo "Summary (machine: $(nproc) CPUs, $(uname -m); release build in $build)"
awk -F'|' '
function row(m, v, t) { printf "%-44s %-52s %s\n", m, v, t }
BEGIN { row("measure", "value", "target") ; row("-------", "-----", "------") }
$1 != "SUMMARY" { next }
$2 ~ /^stats pass / || $2 ~ /^memory / {
    name = $2; sub(/^(stats pass|memory) /, "", name)
    kind = ($2 ~ /^stats/) ? "stats" : "memory"
    if (name ~ /^synthetic/) { row($2, $3, $4); next }
    # worst shared matrix: highest ratio (the number before "x")
    v = $3; if (kind == "stats") { sub(/^.*, /, "", v) } ; v += 0
    if (!(kind in worst) || v > worst[kind]) { worst[kind] = v; wrow[kind] = $2 " (worst shared)"; wval[kind] = $3; wt[kind] = $4 }
    n[kind]++
    next
}
{ row($2, $3, $4) }
END {
    for (k in wrow) row(wrow[k], wval[k], wt[k])
    for (k in n) printf "(%s: %d shared matrices measured)\n", k, n[k]
}' "$results"
