#!/bin/sh
# Issue-5 accuracy benchmark: the `stat` estimator against the `exact` one on
# SpMSpM Z = A*A for every shared matrix, three dataflows and a fixed list of
# tile shapes. Figures only: nothing here passes or fails (targets are printed
# beside the figures).
#
#   sh bench/accuracy.sh                     # exact reference only (~40 s on 2 CPUs)
#   sh bench/accuracy.sh --estimator stat    # exact + stat, errors, ranking, speed
#   sh bench/accuracy.sh --quick             # 3 small matrices x 3 shapes (smoke run)
#
# Options: --estimator stat (also run stat and compare), --quick, --out DIR,
# -h/--help. Environment:
#   BUILD_ACC  build directory (default build-acc; set up as a release build when missing)
#   DATA       shared data (default ../shared/data; matrices in $DATA/mtx/*.mtx.gz)
#   OUT        output directory (default: a new mktemp dir, kept and printed at the end)
#   SHAPES     tile shapes "IxKxJ ..." replacing the list below
#   ORDERS     dataflows (default "IJK IKJ KIJ")
#   MATRICES   matrix stems replacing the list (e.g. "G51 bcsstk16")
#   TIMED      matrices run with timing (model_seconds) instead of --no-timing
#              (default "bcsstk16 ca-CondMat wiki-Vote", the three largest; "all")
#   STAT_ARGS  extra arguments for the stat runs only
#   STAT_INPUT tstat: save each matrix's statistics once (`tessel stats --save
#              $OUT/stats/M.tstat`, default grid) and bind A to that file in the
#              stat runs instead of the .mtx.gz (for when `tessel run` reads .tstat)
#
# Design space. Spec bench/specs/accuracy.yaml (DRAM -> LLB, 2 MiB LLB, csr,
# partitions A 38 %, B 38 %, Z 24 %). Base tile T = 256: a dense 256x256 csr
# tile of 64-bit values (787,460 B) fills one operand partition. Shapes are
# i = T*r*s, k = T*s/r, j = i with aspect r in {1/4,1/2,1,2,4} (A's i:k ratio
# r^2 = 1/16..16) and size s in {1/2,1,2} (area 1/4..4 x T*T), keeping only
# the shapes that are multiples of the 128x128 base grid:
#
#   shape (i x k x j)   A tile area / T^2   A aspect i:k
#   128 x 128 x 128          1/4               1
#   128 x 512 x 128          1                 1/4
#   256 x 256 x 256          1                 1
#   512 x 128 x 512          1                 4
#   128 x 2048 x 128         4                 1/16
#   256 x 1024 x 256         4                 1/4
#   512 x 512 x 512          4                 1
#   1024 x 256 x 1024        4                 4
#   2048 x 128 x 2048        4                 16
#
# Every point is `tessel run bench/specs/accuracy.yaml --tensor A=M --tensor B=A
# --set mapping.LLB.order=O --set mapping.LLB.tile=i:I,k:K,j:J
# --set name=acc-O-IxKxJ --estimator E -q [--no-timing] -o DIR`, so rows of
# all the CSVs join on (design, data).
#
# Output ($OUT):
#   points/MATRIX/O-IxKxJ/{exact,stat}/{traffic,summary}.csv   one run each
#   exact-summary.csv exact-traffic.csv  (stat-summary.csv stat-traffic.csv)
#   validate-dram.{txt,csv} validate-traffic.{txt,csv}   tessel validate (stat only)
#   table.txt      the table printed at the end (bench/accuracy_table.py)
#   errors.log     stderr of the runs that failed
#   cache/         binary tensor caches (--cache-dir)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_ACC:-$root/build-acc}
data=${DATA:-$root/../shared/data}
case $build in /*) ;; *) build=$root/$build ;; esac
spec=$root/bench/specs/accuracy.yaml
tessel=$build/tools/tessel

want_stat=0 quick=0 out=${OUT:-}
while [ $# -gt 0 ]; do
    case $1 in
        --estimator) [ $# -ge 2 ] || { echo "accuracy.sh: --estimator needs a value" >&2; exit 2; }
                     case $2 in
                         stat) want_stat=1 ;;
                         exact) ;;
                         *) echo "accuracy.sh: --estimator must be stat (exact always runs)" >&2; exit 2 ;;
                     esac
                     shift 2 ;;
        --estimator=stat) want_stat=1; shift ;;
        --estimator=exact) shift ;;
        --quick) quick=1; shift ;;
        --out) [ $# -ge 2 ] || { echo "accuracy.sh: --out needs a directory" >&2; exit 2; }
               out=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "accuracy.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

if [ $quick = 1 ]; then
    default_matrices="G51 olm1000 rajat19"
    default_shapes="256x256x256 128x2048x128 2048x128x2048"
else
    default_matrices=""   # every $data/mtx/*.mtx.gz
    default_shapes="128x128x128 128x512x128 256x256x256 512x128x512 128x2048x128 256x1024x256 512x512x512 1024x256x1024 2048x128x2048"
fi
shapes=${SHAPES:-$default_shapes}
orders=${ORDERS:-IJK IKJ KIJ}
timed=${TIMED:-bcsstk16 ca-CondMat wiki-Vote}
matrices=${MATRICES:-$default_matrices}
if [ -z "$matrices" ]; then
    [ -d "$data/mtx" ] || { echo "accuracy.sh: $data/mtx not found (set DATA)" >&2; exit 2; }
    for f in "$data"/mtx/*.mtx.gz; do
        [ -f "$f" ] || continue
        b=${f##*/}; matrices="$matrices ${b%.mtx.gz}"
    done
fi
for m in $matrices; do
    [ -f "$data/mtx/$m.mtx.gz" ] || { echo "accuracy.sh: $data/mtx/$m.mtx.gz not found" >&2; exit 2; }
done

# ---------------------------------------------------------------- build
if [ ! -x "$tessel" ]; then
    [ -f "$build/build.ninja" ] || meson setup "$build" "$root" --buildtype=release >/dev/null
    ninja -C "$build" tools/tessel >/dev/null
fi

if [ -z "$out" ]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/tessel-accuracy.XXXXXX")
else
    mkdir -p "$out"
fi
case $out in /*) ;; *) out=$(cd "$out" && pwd) ;; esac
mkdir -p "$out/points" "$out/cache"
: >"$out/errors.log"
rm -f "$out"/exact-*.csv "$out"/stat-*.csv "$out"/validate-*.txt "$out"/validate-*.csv "$out/table.txt"

# Wall clock in seconds with a fraction when date(1) has %N (GNU), else whole seconds.
if [ "$(date +%N 2>/dev/null | tr -d 0-9)" = "" ] && [ -n "$(date +%N 2>/dev/null)" ]; then
    now() { date +%s.%N; }
else
    now() { date +%s; }
fi
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

"$tessel" run "$spec" --dry-run >/dev/null

# run_point MATRIX ORDER SHAPE ESTIMATOR: one design point; 0 when it wrote its CSVs.
run_point() {
    rp_i=${3%%x*}; rp_rest=${3#*x}; rp_k=${rp_rest%%x*}; rp_j=${rp_rest#*x}
    rp_dir=$out/points/$1/$2-$3/$4
    mkdir -p "$rp_dir"
    rm -f "$rp_dir/traffic.csv" "$rp_dir/summary.csv"   # no stale result from an earlier run
    rp_timing=--no-timing
    case " $timed " in *" $1 "*|*" all "*) rp_timing= ;; esac
    rp_extra=''; rp_a=$data/mtx/$1.mtx.gz
    if [ "$4" = stat ]; then
        rp_extra=${STAT_ARGS:-}
        [ "${STAT_INPUT:-}" = tstat ] && rp_a=$out/stats/$1.tstat
    fi
    # shellcheck disable=SC2086  # $rp_timing and $rp_extra are word lists on purpose
    if "$tessel" run "$spec" --tensor "A=$rp_a" --tensor B=A \
            --set "mapping.LLB.order=$2" --set "mapping.LLB.tile=i:$rp_i,k:$rp_k,j:$rp_j" \
            --set "name=acc-$2-$3" --estimator "$4" -q $rp_timing \
            --cache-dir "$out/cache" $rp_extra -o "$rp_dir" 2>"$rp_dir/stderr"; then
        rm -f "$rp_dir/stderr"
        return 0
    fi
    { echo "== $1 $2 $3 $4"; cat "$rp_dir/stderr"; } >>"$out/errors.log"
    return 1
}

# save_stats MATRIX: with STAT_INPUT=tstat, its statistics file for the stat runs.
save_stats() {
    if [ "${STAT_INPUT:-}" = tstat ] && [ ! -f "$out/stats/$1.tstat" ]; then
        mkdir -p "$out/stats"
        "$tessel" stats "$data/mtx/$1.mtx.gz" --save "$out/stats/$1.tstat" >/dev/null 2>>"$out/errors.log" ||
            echo "accuracy.sh: tessel stats --save failed on $1 (see $out/errors.log)" >&2
    fi
}

# ---------------------------------------------------------------- stat probe
run_stat=0
if [ $want_stat = 1 ]; then
    probe_m=${matrices# }; probe_m=${probe_m%% *}
    probe_shape=${shapes%% *}; probe_order=${orders%% *}
    probe_err=$out/points/$probe_m/$probe_order-$probe_shape/stat/stderr
    save_stats "$probe_m"
    if run_point "$probe_m" "$probe_order" "$probe_shape" stat; then
        run_stat=1
    elif grep -qiE 'not available|must be exact' "$probe_err"; then
        echo "stat estimator not available yet ($(sed -n 's/^tessel run: //p' "$probe_err" |
            head -n 1)); running exact only" >&2
    else
        echo "stat estimator failed on its first point; running exact only:" >&2
        sed 's/^/  /' "$probe_err" >&2
    fi
    rm -rf "$out/points/$probe_m/$probe_order-$probe_shape/stat"
fi

# ---------------------------------------------------------------- runs
nmat=0; for m in $matrices; do nmat=$((nmat + 1)); done
npershape=0; for s in $shapes; do npershape=$((npershape + 1)); done
norders=0; for o in $orders; do norders=$((norders + 1)); done
per_matrix=$((npershape * norders))
estimators=exact; [ $run_stat = 1 ] && estimators="exact stat"

echo "accuracy: $nmat matrices x $norders dataflows ($orders) x $npershape shapes = $((nmat * per_matrix)) design points; estimators: $estimators; output $out" >&2
t_all=$(now)
idx=0; failed=0; points=0
for m in $matrices; do
    idx=$((idx + 1))
    t0=$(now); ok=0; bad=0; st_s=0
    for o in $orders; do
        for s in $shapes; do
            if run_point "$m" "$o" "$s" exact; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
        done
    done
    t1=$(now)
    if [ $run_stat = 1 ]; then
        save_stats "$m"
        for o in $orders; do
            for s in $shapes; do
                run_point "$m" "$o" "$s" stat || bad=$((bad + 1))
            done
        done
        st_s=$(elapsed "$t1" "$(now)")
    fi
    failed=$((failed + bad)); points=$((points + ok))
    line="[$idx/$nmat] $m: $ok points, $(elapsed "$t0" "$(now)") s"
    [ $run_stat = 1 ] && line="$line (exact $(elapsed "$t0" "$t1") s, stat $st_s s)"
    [ $bad -gt 0 ] && line="$line, $bad runs FAILED (see $out/errors.log)"
    echo "$line" >&2
done
wall=$(elapsed "$t_all" "$(now)")

# ---------------------------------------------------------------- concatenate
# concat ESTIMATOR FILE: every point's FILE under one header (checked identical).
concat() {
    c_dst=$out/$1-$2
    c_tmp=$c_dst.tmp
    : >"$c_tmp"
    c_head=
    for m in $matrices; do
        for o in $orders; do
            for s in $shapes; do
                c_f=$out/points/$m/$o-$s/$1/$2
                [ -f "$c_f" ] || continue
                c_h=$(head -n 1 "$c_f")
                if [ -z "$c_head" ]; then
                    c_head=$c_h; printf '%s\n' "$c_head" >"$c_tmp"
                elif [ "$c_h" != "$c_head" ]; then
                    echo "accuracy.sh: $c_f: header differs from the first $2; skipped" >&2
                    continue
                fi
                tail -n +2 "$c_f" >>"$c_tmp"
            done
        done
    done
    if [ -n "$c_head" ]; then mv "$c_tmp" "$c_dst"; else rm -f "$c_tmp"; fi
}
concat exact summary.csv
concat exact traffic.csv
if [ $run_stat = 1 ]; then
    concat stat summary.csv
    concat stat traffic.csv
fi

# ---------------------------------------------------------------- validate
if [ -f "$out/stat-summary.csv" ] && [ -f "$out/exact-summary.csv" ]; then
    "$tessel" validate "$out/stat-summary.csv" "$out/exact-summary.csv" --metric dram_bytes \
        -o "$out/validate-dram.csv" >"$out/validate-dram.txt" 2>&1 ||
        echo "accuracy.sh: tessel validate (summary) failed: see $out/validate-dram.txt" >&2
    "$tessel" validate "$out/stat-traffic.csv" "$out/exact-traffic.csv" \
        --metric data_bytes,metadata_bytes,fills,updates,writebacks \
        -o "$out/validate-traffic.csv" >"$out/validate-traffic.txt" 2>&1 ||
        echo "accuracy.sh: tessel validate (traffic) failed: see $out/validate-traffic.txt" >&2
fi

# ---------------------------------------------------------------- table
{
    echo "accuracy benchmark: $points exact points ($nmat matrices x $norders dataflows x $npershape shapes), $failed failed runs, wall $wall s"
    echo "machine: $(nproc 2>/dev/null || echo '?') CPUs, $(uname -m); binary $tessel"
    echo "shapes (IxKxJ): $shapes"
    echo
    python3 "$root/bench/accuracy_table.py" "$out" --timed "$timed"
} >"$out/table.txt"
cat "$out/table.txt"
echo
echo "output kept in $out"
