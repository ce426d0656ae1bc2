#!/bin/sh
# Tile-shape sweep with the stat estimator, until `tessel sweep` exists:
# statistics are collected once (--save-stats), every design point is then
# evaluated from them (--stats) without reading the matrix again.
#
#   sh examples/scripts/shape-sweep.sh MATRIX [SPEC] [OUT]
#
# MATRIX  a matrix file (B = A); SPEC default bench/specs/accuracy.yaml (one
# LLB level); OUT default a new temporary directory. Prints one line per
# point (order, tile, DRAM bytes, traffic / compulsory), the best point,
# and writes OUT/summary.csv with every point's summary row.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tessel=${TESSEL:-$root/build/tools/tessel}
matrix=${1:?usage: shape-sweep.sh MATRIX [SPEC] [OUT]}
spec=${2:-$root/bench/specs/accuracy.yaml}
out=${3:-$(mktemp -d "${TMPDIR:-/tmp}/tessel-sweep.XXXXXX")}
mkdir -p "$out"
[ -x "$tessel" ] || { echo "shape-sweep.sh: $tessel not built (make example builds it)" >&2; exit 2; }

# statistics once, on the first point
"$tessel" run "$spec" --tensor A="$matrix" --tensor B=A -e stat --save-stats "$out/stats.tsd" \
    -q --no-timing -o "$out/first"
rm -f "$out/summary.csv"
for order in IJK IKJ KIJ; do
    for tile in 128:128:128 256:256:256 512:128:512 128:512:128 512:512:512 1024:256:1024; do
        i=${tile%%:*}; rest=${tile#*:}; k=${rest%%:*}; j=${rest#*:}
        name=$order-${i}x${k}x${j}
        "$tessel" run "$spec" --stats "$out/stats.tsd" --set name="$name" \
            --set mapping.LLB.order="$order" --set mapping.LLB.tile="i:$i,k:$k,j:$j" \
            -q --no-timing -o "$out/$name"
        if [ -f "$out/summary.csv" ]; then
            tail -n +2 "$out/$name/summary.csv" >>"$out/summary.csv"
        else
            cp "$out/$name/summary.csv" "$out/summary.csv"
        fi
    done
done
awk -F, 'NR == 1 { for (c = 1; c <= NF; c++) col[$c] = c; next }
         { printf "%-22s %14s %8.3f\n", $col["design"], $col["dram_bytes"], $col["traffic_ratio"]
           if (best == "" || $col["dram_bytes"] + 0 < bestv) { best = $col["design"]; bestv = $col["dram_bytes"] + 0 } }
         END { printf "best: %s (%d DRAM bytes)\n", best, bestv }' "$out/summary.csv"
echo "wrote $out/summary.csv"
