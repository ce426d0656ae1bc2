#!/bin/sh
# A libFuzzer campaign on chosen fuzz targets (default: the spec and sweep
# readers, 300 s each, run side by side), seeded with their corpus and the
# repository's own inputs of that kind. Needs clang and libFuzzer (Debian:
# clang, libclang-rt-14-dev; `make fuzz-campaign` installs them).
#
#   tests/fuzz/campaign.sh [SECONDS_PER_TARGET [TARGET...]]
#
# FUZZ_BUILD (default build-fuzz) is the clang build directory, set up here
# when missing; FUZZ_WORK (default $FUZZ_BUILD/campaign) holds each target's
# working corpus, its log and any crash, leak, timeout or out-of-memory
# reproducer (artifacts-TARGET/). The exit status is 1 when any target left
# a reproducer. The last lines of each log give executions, exec/s, cov
# (edges), ft (features) and the corpus size.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-300}
[ $# -gt 0 ] && shift
targets=${*:-spec sweep}
build=${FUZZ_BUILD:-$root/build-fuzz}
work=${FUZZ_WORK:-$build/campaign}

if [ ! -f "$build/build.ninja" ]; then
    CC=clang meson setup "$build" --buildtype=debugoptimized -Dfuzzing=true \
        -Db_sanitize=address,undefined -Db_lundef=false -Dtests=disabled
fi
for t in $targets; do
    ninja -C "$build" "tests/fuzz/fuzz_$t"
done

# Seeds beyond the corpus: the specs and sweep files the project ships and
# tests (a spec's includes are not followed from memory; the file alone is
# a seed).
seeds() {
    case "$1" in
    spec|resolved)
        find "$root/specs" "$root/examples/specs" "$root/tests/spec" -name '*.yaml' ;;
    sweep)
        find "$root/examples/sweep" "$root/tests/sweep" -name '*.yaml' ;;
    energy)
        find "$root/energy_tables" -name '*.yaml' ;;
    esac
}

pids=""
for t in $targets; do
    corpus="$work/$t"
    mkdir -p "$corpus" "$work/artifacts-$t"
    cp "$root/tests/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null || true
    seeds "$t" | while read -r f; do
        cp "$f" "$corpus/seed-$(echo "$f" | sed "s|^$root/||; s|/|-|g")"
    done
    dict=""
    [ -f "$root/tests/fuzz/$t.dict" ] && dict="-dict=$root/tests/fuzz/$t.dict"
    # ASan/UBSan report and abort; fuzz_check.c aborts on a wrong result.
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$build/tests/fuzz/fuzz_$t" $dict -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -max_total_time="$secs" -print_final_stats=1 \
        -artifact_prefix="$work/artifacts-$t/" "$corpus" >"$work/$t.log" 2>&1 &
    pids="$pids $!"
done
status=0
for p in $pids; do
    wait "$p" || status=1
done
for t in $targets; do
    echo "== $t: $(ls "$work/$t" | wc -l) inputs in the corpus"
    grep -E '^#[0-9]+.*(DONE|pulse|REDUCE|NEW)' "$work/$t.log" | tail -1 || true
    grep -E 'stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/$t.log" || true
    if [ -n "$(ls "$work/artifacts-$t")" ]; then
        echo "   reproducers: $(ls "$work/artifacts-$t" | tr '\n' ' ')"
        status=1
    fi
done
exit $status
