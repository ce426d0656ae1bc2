#!/bin/sh
# A sweep on a Slurm cluster: one array task per shard, then one merge.
#
#   sbatch --array=0-15 examples/sweep/slurm-array.sh examples/sweep/llb-sweep.yaml out
#   # when every task has finished:
#   tessel merge -o out/all out/shard-*
#
# Each task evaluates the consecutive 1/N of the points numbered by its array
# index (N = the array's size) into OUT/shard-INDEX; a task that was killed or
# preempted is resubmitted as it is: --resume keeps what it had finished.
# tessel merge then writes OUT/all/summary.csv, traffic.csv and pareto.csv,
# byte for byte what one run of the whole sweep writes.
#SBATCH --job-name=tessel-sweep
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
set -eu
sweep=${1:?usage: slurm-array.sh SWEEP.yaml OUT}
out=${2:?usage: slurm-array.sh SWEEP.yaml OUT}
tessel=${TESSEL:-tessel}
index=${SLURM_ARRAY_TASK_ID:?run under sbatch --array=0-(N-1)}
count=${SLURM_ARRAY_TASK_COUNT:?run under sbatch --array}
mkdir -p "$out"
exec "$tessel" sweep "$sweep" --shard "$index/$count" -o "$out/shard-$index" \
    -j "${SLURM_CPUS_PER_TASK:-1}" --resume -q
