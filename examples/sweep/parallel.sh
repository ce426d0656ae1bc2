#!/bin/sh
# A sweep split into shards run by GNU parallel on one machine (or, with
# --sshloginfile, on several), then merged:
#
#   sh examples/sweep/parallel.sh examples/sweep/llb-sweep.yaml out 4
#
# The one-liner it runs:
#   parallel tessel sweep SWEEP --shard {}/N -o OUT/shard-{} -j 1 --resume -q ::: $(seq 0 N-1)
set -eu
sweep=${1:?usage: parallel.sh SWEEP.yaml OUT N}
out=${2:?usage: parallel.sh SWEEP.yaml OUT N}
n=${3:-4}
tessel=${TESSEL:-tessel}
mkdir -p "$out"
parallel "$tessel" sweep "$sweep" --shard "{}/$n" -o "$out/shard-{}" -j 1 --resume -q \
    ::: $(seq 0 $((n - 1)))
"$tessel" merge -o "$out/all" "$out"/shard-*
