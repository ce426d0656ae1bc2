/* tessel_sweep_run: data entries one after the other (statistics once per
 * entry, shared read-only), each entry's points in batches evaluated by
 * `threads` workers in chunks, the rows committed in point order. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tessel/strategy.h"
#include "tessel/point.h"
#include "sweep_internal.h"

#define BATCH_TARGET_SECONDS 0.5
#define BATCH_MAX_POINTS 16384u
#define PROGRESS_INTERVAL 0.2

double sweep_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tessel_sweep_options_init(tessel_sweep_options *o)
{
    memset(o, 0, sizeof(*o));
    o->shard_count = 1;
}

/* ------------------------------------------------------------------ */
/* Workers */

typedef struct worker {
    FILE *summary, *traffic; /* memory streams, rewound every batch */
    char *summary_buf, *traffic_buf;
    size_t summary_size, traffic_size;
    sweep_probe *memo;       /* into run_ctx's memo, shared by the workers */
    sweep_spec_cache *specs; /* entries into run_ctx's spec store */
    tessel_report_point *point;
    uint64_t memo_hits, invalid;
    double cpu, waited; /* this batch: CPU seconds, and seconds waiting for other
                         * threads' estimates */
} worker;

typedef struct chunk {
    uint64_t first, end;
    unsigned worker;
    off_t summary_off, summary_len, traffic_off, traffic_len;
    int rc;
    uint64_t failed_point;
    tessel_diag diag;
} chunk;

typedef struct batch {
    const sweep_shared *shared;
    worker *workers;
    chunk *chunks;
    size_t nchunks;
    sweep_sched *sched;  /* which chunk each worker takes (sched.c) */
    atomic_uint_fast64_t done;
    /* progress (worker 0, the calling thread, reports it) */
    const tessel_sweep_options *opt;
    uint64_t done_before, total;
    double start, last_report;
} batch;

static void report_progress(batch *b, int force)
{
    if (!b->opt->progress)
        return;
    double t = sweep_now();
    if (!force && t - b->last_report < PROGRESS_INTERVAL)
        return;
    b->last_report = t;
    b->opt->progress(b->opt->progress_ud, b->done_before + atomic_load(&b->done), b->total,
                     t - b->start);
}

/* Failures of the point itself (its spec, or an estimator refusing it),
 * not of the machine (memory, files). */
static int point_fault(int rc)
{
    return rc == TESSEL_EINVAL || rc == TESSEL_EUNSUPPORTED || rc == TESSEL_ERANGE;
}

static void run_chunk(batch *b, worker *w, chunk *c)
{
    c->summary_off = ftello(w->summary);
    c->traffic_off = ftello(w->traffic);
    for (uint64_t p = c->first; p < c->end && !c->rc; p++) {
        int hit = 0;
        sweep_verdict verdict = { .feasible = 1 };
        c->rc = sweep_eval_point(b->shared, w->memo, w->specs, p, w->point, &verdict, &hit,
                                 &c->diag);
        if (c->rc && b->opt->skip_invalid && point_fault(c->rc)) {
            c->rc = sweep_write_invalid(b->shared, p, &c->diag, w->summary);
            if (c->rc) {
                tessel_diag_set(&c->diag, c->rc, "", 0, 0, "", "out of memory buffering the "
                                "row of point %llu", (unsigned long long)p);
                c->failed_point = p;
                break;
            }
            w->invalid++;
            atomic_fetch_add(&b->done, 1);
            continue;
        }
        if (!c->rc && sweep_write_rows(b->shared->sweep, p, w->point, &verdict, w->summary,
                                     w->traffic))
            c->rc = tessel_diag_set(&c->diag, TESSEL_ENOMEM, "", 0, 0, "",
                                    "out of memory buffering the rows of point %llu",
                                    (unsigned long long)p);
        if (c->rc) {
            c->failed_point = p;
        } else {
            w->memo_hits += (uint64_t)hit;
            atomic_fetch_add(&b->done, 1);
        }
    }
    c->summary_len = ftello(w->summary) - c->summary_off;
    c->traffic_len = ftello(w->traffic) - c->traffic_off;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void work(batch *b, unsigned index)
{
    worker *w = &b->workers[index];
    sweep_sched_start(b->sched, index);
    double cpu0 = thread_cpu();
    sweep_probe_waited(w->memo);
    for (;;) {
        size_t c = sweep_sched_take(b->sched, index);
        if (c >= b->nchunks)
            break;
        b->chunks[c].worker = index;
        run_chunk(b, w, &b->chunks[c]);
        if (b->chunks[c].rc)
            sweep_sched_failed(b->sched, c);
        if (index == 0)
            report_progress(b, 0);
    }
    w->cpu = thread_cpu() - cpu0;
    w->waited = sweep_probe_waited(w->memo);
}

static void work_entry(void *ctx, unsigned index)
{
    work(ctx, index);
}

/* Runs the batch on nthreads workers of the crew (the calling thread is
 * worker 0); a worker whose thread could not be started leaves its share
 * to the others. */
static int run_batch(batch *b, sweep_crew *crew, unsigned nthreads)
{
    for (unsigned i = 0; i < nthreads; i++)
        b->workers[i].cpu = b->workers[i].waited = 0;
    sweep_sched_reset(b->sched, b->nchunks, nthreads);
    unsigned can = sweep_crew_grow(crew, nthreads);
    for (unsigned i = can; i < nthreads; i++)
        sweep_sched_gone(b->sched, i);
    sweep_crew_run(crew, can, work_entry, b);
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* The run */

typedef struct run_ctx {
    const tessel_sweep *sweep;
    const tessel_sweep_options *opt;
    const tessel_allocator *alloc;
    tessel_sweep_report *report;
    const char *dir;
    char summary_part[4096], traffic_part[4096], summary_path[4096], traffic_path[4096];
    FILE *summary, *traffic;
    tessel_spec *base;
    tessel_energy_db *db;
    unsigned nthreads;
    worker *workers;
    sweep_memo *memo;  /* the data entry's traffic memo, shared by the workers */
    sweep_spec_store *specs; /* the data entry's derived specs, shared by the workers */
    sweep_sched *sched;      /* deals each batch's chunks to the workers */
    sweep_crew *crew;        /* the worker threads, kept across batches */
    uint64_t group;    /* points in a run that share a traffic (pricing_group) */
    uint64_t first, end, next; /* this run's points and the first one not yet written */
    uint64_t batch_points;
    char *inputs;      /* the input files' fingerprint lines (inputs.c) */
    int lock;          /* the directory's lock (lock.c), -1 when not held */
} run_ctx;

static int first_error(tessel_diag_list *errors, int rc, tessel_diag *diag)
{
    if (errors->count)
        *diag = errors->items[0];
    else
        tessel_diag_set(diag, rc, "", 0, 0, "", "%s", tessel_strerror(rc));
    tessel_diag_list_free(errors);
    return rc;
}

static int workers_open(run_ctx *r, tessel_diag *diag)
{
    r->workers = tessel_alloc_array(r->alloc, r->nthreads, sizeof(*r->workers));
    if (!r->workers)
        return tessel_diag_oom(diag, "", "starting the sweep's worker threads",
                               r->nthreads * sizeof(*r->workers));
    memset(r->workers, 0, r->nthreads * sizeof(*r->workers));
    if (!(r->sched = sweep_sched_create(r->alloc, r->nthreads)) ||
        !(r->crew = sweep_crew_create(r->alloc, r->nthreads)))
        return tessel_diag_oom(diag, "", "starting the sweep's chunk scheduler", 0);
    for (unsigned i = 0; i < r->nthreads; i++) {
        worker *w = &r->workers[i];
        w->summary = open_memstream(&w->summary_buf, &w->summary_size);
        w->traffic = open_memstream(&w->traffic_buf, &w->traffic_size);
        w->point = tessel_alloc(r->alloc, sizeof(*w->point));
        if (!w->summary || !w->traffic || !w->point)
            return tessel_diag_oom(diag, "", "starting a worker's row buffers and point record",
                                   w->point ? 0 : sizeof(*w->point));
    }
    return TESSEL_OK;
}

static void workers_close(run_ctx *r)
{
    sweep_crew_free(&r->crew); /* its threads stop before their workers go */
    for (unsigned i = 0; r->workers && i < r->nthreads; i++) {
        worker *w = &r->workers[i];
        if (w->summary)
            fclose(w->summary);
        if (w->traffic)
            fclose(w->traffic);
        free(w->summary_buf); /* open_memstream's buffers come from malloc */
        free(w->traffic_buf);
        tessel_dealloc(r->alloc, w->point);
        sweep_probe_free(&w->memo);
        sweep_spec_cache_free(&w->specs);
    }
    tessel_dealloc(r->alloc, r->workers);
    sweep_memo_free(&r->memo);
    sweep_spec_store_free(&r->specs);
    sweep_sched_free(&r->sched);
    r->workers = NULL;
}

/* A fresh memo and spec store shared by the workers and per worker a
 * probe and a spec cache into them, for a data entry (none with
 * --no-memo: every point is then derived and estimated in full); with
 * statistics, the probes share one table of the stat estimator's shape
 * summaries too. */
static int workers_new_memos(run_ctx *r, const tessel_stat_data *stats, tessel_diag *diag)
{
    for (unsigned i = 0; i < r->nthreads; i++) {
        sweep_probe_free(&r->workers[i].memo);
        sweep_spec_cache_free(&r->workers[i].specs);
    }
    sweep_memo_free(&r->memo);
    sweep_spec_store_free(&r->specs);
    if (r->opt->no_memo)
        return TESSEL_OK;
    if (!(r->memo = sweep_memo_create(r->alloc)) ||
        !(r->specs = sweep_spec_store_create(r->alloc)))
        return tessel_diag_oom(diag, "", "creating the sweep's traffic memo and spec store", 0);
    for (unsigned i = 0; i < r->nthreads; i++) {
        worker *w = &r->workers[i];
        /* worker 0's stat shape summaries are every worker's */
        if (!(w->memo = sweep_probe_create(r->alloc, r->memo, stats,
                                           i ? r->workers[0].memo : NULL)) ||
            !(w->specs = sweep_spec_cache_create(r->alloc)))
            return tessel_diag_oom(diag, "", "creating a worker's traffic memo and spec cache",
                                   0);
    }
    return TESSEL_OK;
}

static int sync_part(FILE *f, const char *path, tessel_diag *diag)
{
    if (fflush(f) || fsync(fileno(f)) || ferror(f))
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, "", "cannot write: %s",
                               strerror(errno));
    return TESSEL_OK;
}

/* Appends the finished chunks (all before the first failed one) to the
 * .part files: every traffic row first, then the summary rows. */
static int commit_chunks(run_ctx *r, batch *b, size_t *committed, tessel_diag *diag)
{
    for (unsigned i = 0; i < r->nthreads; i++) {
        fflush(r->workers[i].summary);
        fflush(r->workers[i].traffic);
    }
    size_t n = 0;
    /* every chunk before the first failed one ran (sched.c); one never
     * started has no offsets */
    while (n < b->nchunks && b->chunks[n].rc == 0 && b->chunks[n].summary_off >= 0)
        n++;
    for (size_t c = 0; c < n; c++) {
        const chunk *k = &b->chunks[c];
        const worker *w = &r->workers[k->worker];
        fwrite(w->traffic_buf + k->traffic_off, 1, (size_t)k->traffic_len, r->traffic);
    }
    int rc = sync_part(r->traffic, r->traffic_part, diag);
    for (size_t c = 0; !rc && c < n; c++) {
        const chunk *k = &b->chunks[c];
        const worker *w = &r->workers[k->worker];
        fwrite(w->summary_buf + k->summary_off, 1, (size_t)k->summary_len, r->summary);
    }
    if (!rc)
        rc = sync_part(r->summary, r->summary_part, diag);
    for (unsigned i = 0; i < r->nthreads; i++) {
        fseeko(r->workers[i].summary, 0, SEEK_SET);
        fseeko(r->workers[i].traffic, 0, SEEK_SET);
    }
    *committed = n;
    return rc;
}

/* Consecutive points that share a traffic: those of the innermost axes
 * that only price a point (bandwidth, clock, PEs, MACs: patched, never in
 * the memo's key) in a cross product; 1 otherwise. */
static uint64_t pricing_group(const tessel_sweep *s, const sweep_patch *patch)
{
    uint64_t g = 1;
    if (s->mode != SWEEP_CROSS)
        return 1;
    for (size_t a = s->naxes; a-- > 0;) {
        sweep_patch_kind k = patch->kind[a];
        if (k != SWEEP_PATCH_BANDWIDTH && k != SWEEP_PATCH_CLOCK && k != SWEEP_PATCH_PES &&
            k != SWEEP_PATCH_MACS)
            break;
        g *= s->axis[a].nvalues;
    }
    return g;
}

/* Batches of two groups per thread at least (when that is not too many
 * points), so that chunks can hold whole groups (chunk_points). */
static void group_floor(run_ctx *r)
{
    uint64_t want = 2u * r->nthreads * r->group;
    if (r->group > 1 && r->group <= BATCH_MAX_POINTS / (2u * r->nthreads) &&
        r->batch_points < want)
        r->batch_points = want;
}

/* Points per chunk of a batch of `count` points from `from`: about
 * 1/32 of a thread's share (a chunk whose points build a shape summary
 * costs many others: with 1/8, mapping-ca-condmat's busiest thread
 * carried 60 % of the work, 1.51x on 2 threads; 1/32 gives 1.95x), a
 * multiple of r->group when the batch holds
 * two groups per thread, so that the threads estimate different traffics
 * at once instead of one waiting for the other's (the memo's in-flight
 * entries); the first chunk then ends on a group boundary. */
static uint64_t chunk_points(const run_ctx *r, uint64_t count)
{
    uint64_t per_chunk = count / (32u * r->nthreads);
    if (per_chunk == 0)
        per_chunk = 1;
    if (r->group > 1 && count / r->group >= 2u * r->nthreads)
        per_chunk = (per_chunk + r->group - 1) / r->group * r->group;
    return per_chunk;
}

/* Points [from, to) evaluated in batches by the workers, committed in point order. */
static int evaluate_range(run_ctx *r, const sweep_shared *sh, uint64_t from, uint64_t to,
                          tessel_diag *diag)
{
    while (from < to) {
        uint64_t count = to - from < r->batch_points ? to - from : r->batch_points;
        uint64_t per_chunk = chunk_points(r, count);
        /* chunk c covers [start + c x per_chunk, ...) clipped to the batch,
         * start the group boundary at or before from when aligned */
        uint64_t lead = per_chunk % r->group == 0 ? from % per_chunk : 0;
        size_t nchunks = (size_t)((lead + count + per_chunk - 1) / per_chunk);
        chunk *chunks = tessel_alloc_array(r->alloc, nchunks, sizeof(*chunks));
        if (!chunks)
            return tessel_diag_oom(diag, "", "dividing a batch of points into chunks",
                                   nchunks * sizeof(*chunks));
        for (size_t c = 0; c < nchunks; c++) {
            memset(&chunks[c], 0, sizeof(chunks[c]));
            uint64_t start = from - lead + c * per_chunk, batch_end = from + count;
            chunks[c].first = start > from ? start : from;
            chunks[c].end = start + per_chunk < batch_end ? start + per_chunk : batch_end;
            chunks[c].summary_off = -1;
        }
        batch b = { .shared = sh, .workers = r->workers, .chunks = chunks, .nchunks = nchunks,
                    .sched = r->sched, .opt = r->opt, .done_before = r->report->evaluated,
                    .total = r->report->points - r->report->resumed };
        atomic_init(&b.done, 0);
        b.start = r->report->eval_seconds > 0 ? sweep_now() - r->report->eval_seconds
                                              : sweep_now();
        b.last_report = 0;
        double t0 = sweep_now();
        unsigned used = r->nthreads < nchunks ? r->nthreads : (unsigned)nchunks;
        run_batch(&b, r->crew, used);
        double took = sweep_now() - t0, busiest = 0;
        r->report->eval_seconds += took;
        for (unsigned i = 0; i < used; i++) {
            double busy = r->workers[i].cpu + r->workers[i].waited;
            r->report->eval_cpu_seconds += r->workers[i].cpu;
            busiest = busy > busiest ? busy : busiest;
        }
        r->report->busiest_seconds += busiest;
        size_t committed = 0;
        int rc = commit_chunks(r, &b, &committed, diag);
        for (size_t c = 0; c < committed; c++)
            r->report->evaluated += chunks[c].end - chunks[c].first;
        if (!rc && committed < nchunks) {
            /* the lowest failed chunk: its error is the sweep's */
            for (size_t c = committed; c < nchunks; c++)
                if (chunks[c].rc) {
                    *diag = chunks[c].diag;
                    rc = chunks[c].rc;
                    break;
                }
        }
        tessel_dealloc(r->alloc, chunks);
        report_progress(&b, 1);
        if (rc)
            return rc;
        from += count;
        /* Batches of about half a second: progress and the kill-safe sync
         * stay frequent whatever a point costs. */
        double scale = took > 0 ? BATCH_TARGET_SECONDS / took : 4;
        scale = scale > 4 ? 4 : scale < 0.25 ? 0.25 : scale;
        uint64_t next = (uint64_t)((double)r->batch_points * scale);
        r->batch_points = next < r->nthreads ? r->nthreads
                          : next > BATCH_MAX_POINTS ? BATCH_MAX_POINTS : next;
        group_floor(r);
    }
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* One data entry */

/* "workload.data.A='file'" (single-quoted: a file name is never a number). */
static char *binding_set(const tessel_allocator *a, const char *name, const char *value)
{
    char path[TESSEL_SPEC_NAME_MAX + 16];
    snprintf(path, sizeof(path), "workload.data.%s", name);
    return sweep_make_set(a, path, value, 1);
}

static int data_spec_create(run_ctx *r, size_t d, tessel_spec **out, tessel_diag *diag)
{
    const tessel_sweep *s = r->sweep;
    char *sets[TESSEL_SPEC_MAX_TENSORS] = { 0 };
    size_t nsets = 0;
    int rc = TESSEL_OK;
    if (s->ndata) {
        const sweep_data *e = &s->data[d];
        for (size_t b = 0; b < e->nbindings && !rc; b++) {
            const char *name = e->binding[b].name[0] ? e->binding[b].name
                               : r->base->workload.ntensors > 1
                                   ? r->base->workload.tensor[1].name
                                   : "";
            if (!(sets[nsets++] = binding_set(r->alloc, name, e->binding[b].value)))
                rc = TESSEL_ENOMEM;
        }
    }
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, r->alloc);
    if (!rc)
        rc = tessel_spec_derive(r->base, (const char *const *)sets, nsets, r->alloc, out,
                                &errors);
    for (size_t i = 0; i < nsets; i++)
        tessel_dealloc(r->alloc, sets[i]);
    if (rc) {
        rc = first_error(&errors, rc, diag);
        if (s->ndata)
            tessel_diag_prefix(diag, "data entry %zu (%s:%llu)", d + 1, s->path,
                               (unsigned long long)s->data[d].pos.line);
        return rc;
    }
    tessel_diag_list_free(&errors);
    return TESSEL_OK;
}

typedef struct entry {
    tessel_spec *spec;
    tessel_workload_data *data;
    tessel_stat_data *stats;
    char label[TESSEL_REPORT_LABEL_MAX];
} entry;

static void entry_free(entry *e)
{
    tessel_stat_data_free(&e->stats);
    tessel_workload_free(&e->data);
    tessel_spec_free(&e->spec);
}

/* A point may choose tiles with a strategy: the spec names one or the
 * extensor template (whose variants are strategies), or an axis sets a
 * strategy or a template option. */
static int uses_strategies(const tessel_sweep *s, const tessel_spec *spec)
{
    if (!tessel_strategy_is_fixed(spec) || tessel_template_of(spec) == TESSEL_TEMPLATE_EXTENSOR)
        return 1;
    for (size_t a = 0; a < s->naxes; a++)
        if (strstr(s->axis[a].path, "strategy") || strstr(s->axis[a].path, "template"))
            return 1;
    return 0;
}

/* The statistics' options for data entry e: a base grid given in the
 * sweep file as it is; otherwise the estimator chooses it from the tiles
 * of every point (each tile axis's values, derived one at a time: a
 * point's edge is the spec's or one axis value's), so that every point is
 * on the grid; and, base given or not, the per-tile rows when a format
 * axis's value reads them (tessel_stat_options_add_tiles). */
static void entry_stat_options(const run_ctx *r, const tessel_spec *spec,
                               tessel_stat_options *opt)
{
    const tessel_sweep *s = r->sweep;
    *opt = s->stat;
    int base = opt->base[0] && opt->base[1];
    for (size_t a = 0; a < s->naxes; a++) {
        /* a format axis too: its values may read the tiles' rows (tile_rows) */
        if (!strstr(s->axis[a].path, "tile") && !strstr(s->axis[a].path, "format"))
            continue;
        if (base && !strstr(s->axis[a].path, "format"))
            continue;
        for (size_t v = 0; v < s->axis[a].nvalues; v++) {
            tessel_spec *p = NULL;
            const char *set = s->axis[a].sets[v];
            if (!tessel_spec_derive(spec, &set, 1, r->alloc, &p, NULL))
                tessel_stat_options_add_tiles(opt, p);
            tessel_spec_free(&p);
        }
    }
}

static int entry_prepare(run_ctx *r, size_t d, entry *e, tessel_diag *diag)
{
    const tessel_sweep *s = r->sweep;
    int rc = data_spec_create(r, d, &e->spec, diag);
    if (rc)
        return rc;
    if (s->estimator == TESSEL_SWEEP_ANALYTIC) {
        tessel_model_analytic_label(e->spec, e->label, sizeof(e->label));
        return TESSEL_OK;
    }
    double t0 = sweep_now();
    tessel_load_options load;
    tessel_load_options_init(&load);
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, r->alloc);
    rc = tessel_workload_load(e->spec, &load, r->alloc, &e->data, &errors);
    if (rc)
        return first_error(&errors, rc, diag);
    tessel_diag_list_free(&errors);
    tessel_workload_data_label(e->data, e->label, sizeof(e->label));
    if (s->estimator == TESSEL_SWEEP_STAT) {
        if (r->opt->stage)
            r->opt->stage(r->opt->progress_ud, e->label);
        tessel_stat_options opt;
        entry_stat_options(r, e->spec, &opt);
        rc = tessel_point_stats_create(e->spec, e->data, &opt, r->alloc, &e->stats, diag);
        /* the statistics are all a fixed mapping needs; strategies that
         * sample or scan tiles (prescient, swiftiles, drt) read the data */
        if (!uses_strategies(s, e->spec))
            tessel_workload_free(&e->data);
    }
    r->report->stats_seconds += sweep_now() - t0;
    return rc;
}

static int run_entry(run_ctx *r, size_t d, tessel_diag *diag)
{
    const tessel_sweep *s = r->sweep;
    uint64_t lo = (uint64_t)d * s->per_data, hi = lo + s->per_data;
    if (lo < r->next)
        lo = r->next;
    if (hi > r->end)
        hi = r->end;
    if (lo >= hi)
        return TESSEL_OK;
    entry e;
    memset(&e, 0, sizeof(e));
    int rc = entry_prepare(r, d, &e, diag);
    sweep_patch patch;
    memset(&patch, 0, sizeof(patch));
    if (!rc)
        rc = workers_new_memos(r, e.stats, diag);
    if (!rc && !r->opt->no_memo)
        rc = sweep_patch_build(s, e.spec, !r->opt->derive_buffers, r->alloc, &patch);
    r->group = !rc && !r->opt->no_memo ? pricing_group(s, &patch) : 1;
    group_floor(r);
    if (!rc) {
        sweep_shared sh = { s, e.spec, e.data, e.stats, r->db, e.label, r->opt->timing,
                            r->opt->no_memo ? NULL : &patch, r->specs };
        rc = evaluate_range(r, &sh, lo, hi, diag);
    }
    sweep_patch_free(r->alloc, &patch);
    for (unsigned i = 0; i < r->nthreads; i++) {
        r->report->memo_hits += r->workers[i].memo_hits;
        r->report->invalid += r->workers[i].invalid;
        r->workers[i].memo_hits = r->workers[i].invalid = 0;
        sweep_probe_summaries(r->workers[i].memo, r->report);
    }
    entry_free(&e);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Directory, state and .part files */

static int file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static int make_paths(run_ctx *r, tessel_diag *diag)
{
    if (sweep_join(r->summary_part, sizeof(r->summary_part), r->dir, "summary.csv.part") ||
        sweep_join(r->traffic_part, sizeof(r->traffic_part), r->dir, "traffic.csv.part") ||
        sweep_join(r->summary_path, sizeof(r->summary_path), r->dir, "summary.csv") ||
        sweep_join(r->traffic_path, sizeof(r->traffic_path), r->dir, "traffic.csv"))
        return tessel_diag_set(diag, TESSEL_ERANGE, r->dir, 0, 0, "", "directory name too long");
    return TESSEL_OK;
}

static void state_of(const run_ctx *r, sweep_state *st)
{
    memset(st, 0, sizeof(*st));
    st->fingerprint = r->sweep->fingerprint;
    st->total = tessel_sweep_point_count(r->sweep);
    st->shard_index = r->opt->shard_count > 1 ? r->opt->shard_index : 0;
    st->shard_count = r->opt->shard_count > 1 ? r->opt->shard_count : 1;
    st->first = r->first;
    st->end = r->end;
    st->inputs = r->inputs;
    const char *const *names = r->opt->objectives;
    size_t n = r->opt->nobjectives;
    if (!names)
        n = tessel_sweep_objectives(r->sweep, &names);
    for (size_t i = 0; i < n && i < TESSEL_SWEEP_MAX_OBJECTIVES; i++)
        snprintf(st->objectives[st->nobjectives++], sizeof(st->objectives[0]), "%s", names[i]);
}

static FILE *open_part(const char *path, const char *mode, tessel_diag *diag)
{
    FILE *f = fopen(path, mode);
    if (!f)
        tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, "", "cannot open: %s", strerror(errno));
    return f;
}

static int start_fresh(run_ctx *r, tessel_diag *diag)
{
    if (!r->opt->overwrite && (file_exists(r->summary_part) || file_exists(r->traffic_part)))
        return tessel_diag_set(diag, TESSEL_EINVAL, r->dir, 0, 0, "",
                               "holds an unfinished sweep (summary.csv.part): --resume "
                               "continues it, --overwrite starts over");
    sweep_state st;
    state_of(r, &st);
    int rc = sweep_state_write(r->dir, &st, r->alloc, diag);
    if (rc)
        return rc;
    if (!(r->summary = open_part(r->summary_part, "wb", diag)) ||
        !(r->traffic = open_part(r->traffic_part, "wb", diag)))
        return TESSEL_EIO;
    sweep_write_header(r->sweep, r->summary, 0);
    sweep_write_header(r->sweep, r->traffic, 1);
    r->next = r->first;
    if ((rc = sync_part(r->traffic, r->traffic_part, diag)))
        return rc;
    return sync_part(r->summary, r->summary_part, diag);
}

/* A finished file without its .part (a kill between the final renames,
 * or a resume of a finished sweep) becomes the .part again. */
static int reopen_final(const char *final, const char *part, tessel_diag *diag)
{
    if (!file_exists(part) && file_exists(final) && rename(final, part) != 0)
        return tessel_diag_set(diag, TESSEL_EIO, final, 0, 0, "", "cannot rename: %s",
                               strerror(errno));
    return TESSEL_OK;
}

/* --resume: check the saved state and inputs against this sweep, keep the finished
 * points' rows and continue after the last complete one. */
static int start_resume(run_ctx *r, tessel_diag *diag)
{
    sweep_state have, want;
    /* Killed before anything was written: nothing to keep, start. */
    if (!file_exists(r->summary_part) && !file_exists(r->traffic_part) &&
        !file_exists(r->summary_path) && !file_exists(r->traffic_path)) {
        int rc = start_fresh(r, diag);
        r->report->resumed = 0;
        return rc;
    }
    int rc = sweep_state_read(r->dir, &have, diag);
    if (rc)
        return rc;
    state_of(r, &want);
    if (have.fingerprint != want.fingerprint || have.total != want.total ||
        have.shard_index != want.shard_index || have.shard_count != want.shard_count)
        return tessel_diag_set(diag, TESSEL_EINVAL, r->dir, 0, 0, "",
                               "holds the outputs of another sweep (a different sweep file, "
                               "base spec or shard): --overwrite starts this one over");
    char *saved = NULL;
    if ((rc = sweep_inputs_read(r->dir, r->alloc, &saved, diag)))
        return rc;
    rc = sweep_inputs_check(r->dir, saved, r->inputs, diag);
    tessel_dealloc(r->alloc, saved);
    if (rc)
        return rc;
    if ((rc = reopen_final(r->summary_path, r->summary_part, diag)) ||
        (rc = reopen_final(r->traffic_path, r->traffic_part, diag)))
        return rc;
    if (!file_exists(r->summary_part) || !file_exists(r->traffic_part))
        return tessel_diag_set(diag, TESSEL_EINVAL, r->dir, 0, 0, "", "has no partial "
                               "outputs to resume (summary.csv.part or traffic.csv.part is "
                               "missing): --overwrite starts over");
    uint64_t last = 0, tlast = 0;
    int found = 0, tfound = 0, head = 0, thead = 0;
    rc = sweep_part_recover(r->summary_part, UINT64_MAX, &last, &found, &head, diag);
    if (rc)
        return rc;
    if (found && (last < r->first || last >= r->end))
        return tessel_diag_set(diag, TESSEL_ECORRUPT, r->summary_part, 0, 0, "point",
                               "last point %llu is outside this run's points",
                               (unsigned long long)last);
    /* Traffic rows past the last whole summary row belong to a batch that
     * did not land (points skipped as invalid have no traffic rows, so
     * none need be left). Without a whole summary row, none counts. */
    if (found)
        rc = sweep_part_recover(r->traffic_part, last, &tlast, &tfound, &thead, diag);
    else if (truncate(r->traffic_part, 0) != 0)
        rc = tessel_diag_set(diag, TESSEL_EIO, r->traffic_part, 0, 0, "", "cannot cut: %s",
                             strerror(errno));
    if (rc)
        return rc;
    if (!(r->summary = open_part(r->summary_part, "ab", diag)) ||
        !(r->traffic = open_part(r->traffic_part, "ab", diag)))
        return TESSEL_EIO;
    if (!head)
        sweep_write_header(r->sweep, r->summary, 0);
    if (!thead)
        sweep_write_header(r->sweep, r->traffic, 1);
    r->next = found ? last + 1 : r->first;
    r->report->resumed = r->next - r->first;
    return TESSEL_OK;
}

static int write_pareto(run_ctx *r, tessel_diag *diag);

/* Every point is written: the Pareto front from the complete .part file,
 * then the final names (a failure before them leaves no finished file). */
static int finish(run_ctx *r, tessel_diag *diag)
{
    int rc = sync_part(r->traffic, r->traffic_part, diag);
    if (!rc)
        rc = sync_part(r->summary, r->summary_part, diag);
    fclose(r->summary);
    fclose(r->traffic);
    r->summary = r->traffic = NULL;
    if (!rc)
        rc = write_pareto(r, diag);
    if (rc)
        return rc;
    if (rename(r->traffic_part, r->traffic_path) != 0 ||
        rename(r->summary_part, r->summary_path) != 0)
        return tessel_diag_set(diag, TESSEL_EIO, r->dir, 0, 0, "", "cannot rename the "
                               "finished outputs: %s", strerror(errno));
    return TESSEL_OK;
}

static int write_pareto(run_ctx *r, tessel_diag *diag)
{
    const char *const *names = r->opt->objectives;
    size_t n = r->opt->nobjectives;
    if (!names)
        n = tessel_sweep_objectives(r->sweep, &names);
    char path[4096];
    sweep_join(path, sizeof(path), r->dir, "pareto.csv");
    if (n == 0) {
        remove(path); /* a stale front would describe other points */
        return TESSEL_OK;
    }
    return sweep_pareto(r->summary_part, path, names, n, r->opt->pareto_infeasible, r->alloc,
                        &r->report->pareto_points, diag);
}

static unsigned online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : n > 256 ? 256u : (unsigned)n;
}

/* This shard's points: [first, end), the shards as even as whole points allow. */
static void shard_range(uint64_t total, uint64_t index, uint64_t count, uint64_t *first,
                        uint64_t *end)
{
    uint64_t q = total / count, rem = total % count;
    *first = index * q + (index < rem ? index : rem);
    *end = *first + q + (index < rem ? 1 : 0);
}

static int run_all(run_ctx *r, tessel_diag *diag)
{
    const tessel_sweep *s = r->sweep;
    /* The spec first: the state lists the files it was read from. */
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, r->alloc);
    int rc = tessel_spec_load(s->spec_path, (const char *const *)s->sets, s->nsets, r->alloc,
                              &r->base, &errors);
    if (!rc)
        rc = tessel_energy_db_load(r->base, r->alloc, &r->db, &errors);
    if (rc)
        return first_error(&errors, rc, diag);
    tessel_diag_list_free(&errors);
    if (r->opt->loaded)
        r->opt->loaded(r->opt->progress_ud, r->base, r->db);
    if ((rc = sweep_inputs_collect(s, r->base, r->alloc, &r->inputs, diag)))
        return rc;
    rc = r->opt->resume ? start_resume(r, diag) : start_fresh(r, diag);
    if (rc)
        return rc;
    if ((rc = workers_open(r, diag)))
        return rc;
    for (size_t d = 0; d < tessel_sweep_data_count(s) && !rc; d++)
        rc = run_entry(r, d, diag);
    if (!rc)
        rc = finish(r, diag);
    return rc;
}

int tessel_sweep_run(const tessel_sweep *s, const char *dir, const tessel_sweep_options *o,
                     const tessel_allocator *a, tessel_sweep_report *report, tessel_diag *diag)
{
    tessel_sweep_options defaults;
    if (!o) {
        tessel_sweep_options_init(&defaults);
        o = &defaults;
    }
    memset(report, 0, sizeof(*report));
    uint64_t count = o->shard_count ? o->shard_count : 1;
    if (o->shard_index >= count)
        return tessel_diag_set(diag, TESSEL_EINVAL, "", 0, 0, "shard", "shard %llu of %llu "
                               "does not exist (shards are numbered from 0)",
                               (unsigned long long)o->shard_index, (unsigned long long)count);
    run_ctx r;
    memset(&r, 0, sizeof(r));
    r.sweep = s;
    r.opt = o;
    r.alloc = a;
    r.report = report;
    r.dir = dir;
    r.lock = -1;
    r.nthreads = o->threads ? (o->threads > 256 ? 256 : o->threads) : online_cores();
    r.batch_points = 16u * r.nthreads;
    shard_range(tessel_sweep_point_count(s), o->shard_index, count, &r.first, &r.end);
    report->points = r.end - r.first;
    report->threads = r.nthreads;
    int rc = make_paths(&r, diag);
    if (!rc)
        rc = sweep_ensure_dir(dir, diag);
    if (!rc)
        rc = sweep_lock_take(dir, "sweep", &r.lock, diag);
    if (!rc)
        rc = run_all(&r, diag);
    if (r.summary)
        fclose(r.summary);
    if (r.traffic)
        fclose(r.traffic);
    workers_close(&r);
    tessel_energy_db_free(&r.db);
    tessel_spec_free(&r.base);
    tessel_dealloc(a, r.inputs);
    sweep_lock_release(r.lock); /* last: the directory is consistent now */
    return rc;
}
