#!/bin/sh
# Shards without a scheduler: N background processes, then tessel merge. The
# test suite runs it and checks that the merged files equal a single run's.
#
#   sh examples/sweep/shards.sh SWEEP.yaml OUT [N]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tessel=${TESSEL:-$root/build/tools/tessel}
sweep=${1:?usage: shards.sh SWEEP.yaml OUT [N]}
out=${2:?usage: shards.sh SWEEP.yaml OUT [N]}
n=${3:-3}
mkdir -p "$out"
i=0
pids=""
while [ "$i" -lt "$n" ]; do
    "$tessel" sweep "$sweep" --shard "$i/$n" -o "$out/shard-$i" -j 1 -q --overwrite &
    pids="$pids $!"
    i=$((i + 1))
done
for p in $pids; do wait "$p"; done
"$tessel" merge -o "$out/all" "$out"/shard-*
"$tessel" sweep "$sweep" -o "$out/single" -q --overwrite
for f in summary.csv traffic.csv pareto.csv sweep.state; do
    cmp "$out/all/$f" "$out/single/$f"
done
echo "shards.sh: $n shards merged into $out/all, identical to one run"
