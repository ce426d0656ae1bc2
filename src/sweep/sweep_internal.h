/* Private to src/sweep: the parsed sweep file and the steps of a run. */
#ifndef TESSEL_SWEEP_INTERNAL_H
#define TESSEL_SWEEP_INTERNAL_H

#include <stdio.h>

#include "tessel/energy.h"
#include "tessel/sweep.h"

/* Values per axis and points per data entry (a sweep beyond these is a
 * mistake in the file, not a plan). */
#define SWEEP_MAX_VALUES 100000u
#define SWEEP_MAX_POINTS (UINT64_C(1) << 40)
#define SWEEP_MAX_DATA 100000u
#define SWEEP_NO_VALUE UINT32_MAX /* an explicit point that leaves an axis as the spec has it */

typedef struct sweep_axis {
    char *path;      /* the spec path, as for --set */
    size_t nvalues, cap;
    char **values;   /* as written (ranges: generated) */
    char **sets;     /* "path=value" ready for tessel_spec_derive */
    tessel_spec_pos pos;
} sweep_axis;

/* One data entry: bindings NAME -> DATA (a file resolved against the
 * sweep file's directory, another tensor, A^T or dense). A scalar entry
 * binds the spec's first input: name is then "". */
typedef struct sweep_binding {
    char name[TESSEL_SPEC_NAME_MAX];
    char *value; /* a file is already resolved against the sweep file's directory */
} sweep_binding;

typedef struct sweep_data {
    size_t nbindings;
    sweep_binding binding[TESSEL_SPEC_MAX_TENSORS];
    tessel_spec_pos pos;
} sweep_data;

typedef enum sweep_mode { SWEEP_CROSS = 0, SWEEP_RANDOM, SWEEP_LIST } sweep_mode;

/* points: {random: N, seed: S}: a seeded permutation of the cross
 * product's indices [0, n), evaluated at a point's number, so a sample
 * costs nothing in proportion to N (issue 25 item 7). */
typedef struct sweep_perm {
    uint64_t n;      /* the cross product's size */
    unsigned half;   /* bits per Feistel half */
    uint64_t key[6]; /* round keys, from the seed */
} sweep_perm;

struct tessel_sweep {
    const tessel_allocator *alloc;
    char *path;
    char *dir;       /* "" = current directory */
    char *spec_path; /* resolved */
    tessel_sweep_estimator estimator;
    tessel_stat_options stat;
    size_t nsets;
    char **sets;     /* fixed overrides (`set:`) */
    size_t ndata;    /* 0: the spec's own bindings, one entry */
    sweep_data *data;
    size_t naxes;
    sweep_axis axis[TESSEL_SWEEP_MAX_AXES];
    sweep_mode mode;
    uint64_t per_data;  /* design points per data entry */
    sweep_perm perm;    /* SWEEP_RANDOM: design point q is cross-product index perm(q) */
    uint32_t *list;     /* SWEEP_LIST: per_data x naxes value indices (or SWEEP_NO_VALUE) */
    size_t nobjectives;
    char *objectives[TESSEL_SWEEP_MAX_OBJECTIVES];
    const char *objective_view[TESSEL_SWEEP_MAX_OBJECTIVES];
    uint64_t fingerprint;
};

/* file.c: "path=value" for tessel_spec_derive, the value single-quoted
 * (quotes doubled) when `quoted`; NULL when out of memory. */
char *sweep_make_set(const tessel_allocator *a, const char *path, const char *value, int quoted);

/* points.c: the value index of every axis at design point q (0 <=
 * q < per_data) into idx[0..naxes). */
void sweep_point_indices(const tessel_sweep *s, uint64_t q, uint32_t *idx);
/* The permutation of [0, n) that seed chooses, and its value at q < n:
 * points 0..N-1 of a random sample are perm(0..N-1), distinct. */
void sweep_perm_init(sweep_perm *p, uint64_t n, uint64_t seed);
uint64_t sweep_perm_at(const sweep_perm *p, uint64_t q);

/* ------------------------------------------------------------------ */
/* eval.c: everything a point needs, shared read-only by the threads. */
typedef struct sweep_memo sweep_memo;
typedef struct sweep_probe sweep_probe;

/* Axes patched into a copy of a cached spec instead of deriving a spec per
 * point: fields that only price a point (a level's bandwidth, the clock,
 * PEs, MACs per PE), checked on their own when a spec is read, and a
 * level's capacity and its tensors' partitions, which decide traffic and
 * are also checked across values (partitions at most 100 %, at least one
 * byte each). Every value is validated once; a patched point whose values
 * fail the checks across values is derived in full instead (its error as
 * without patching). */
typedef enum sweep_patch_kind {
    SWEEP_PATCH_NONE = 0,
    SWEEP_PATCH_BANDWIDTH,
    SWEEP_PATCH_CLOCK,
    SWEEP_PATCH_PES,
    SWEEP_PATCH_MACS,
    SWEEP_PATCH_CAPACITY,
    SWEEP_PATCH_PARTITION
} sweep_patch_kind;

typedef struct sweep_patch {
    sweep_patch_kind kind[TESSEL_SWEEP_MAX_AXES];
    unsigned level[TESSEL_SWEEP_MAX_AXES];  /* bandwidth, capacity, partition: the level */
    unsigned tensor[TESSEL_SWEEP_MAX_AXES]; /* partition: the tensor */
    double *value[TESSEL_SWEEP_MAX_AXES];   /* per axis value, as the spec reads it
                                             * (partition: the fraction, 0 = none) */
    uint64_t *bytes[TESSEL_SWEEP_MAX_AXES]; /* capacity, partition: bytes (0 = none) */
    int traffic;                            /* a capacity or partition is patched */
} sweep_patch;

/* buffers 0: capacities and partitions are not patched (derived per point). */
int sweep_patch_build(const tessel_sweep *s, const tessel_spec *data_spec, int buffers,
                      const tessel_allocator *a, sweep_patch *out);
void sweep_patch_free(const tessel_allocator *a, sweep_patch *p);

/* Derived specs by their structural axis values (the unpatched axes'
 * value indices), shared by the workers of a data entry: each spec is
 * derived once, by the first worker that needs it, and read-only once
 * published (a point patches a copy). */
typedef struct sweep_spec_store sweep_spec_store;
sweep_spec_store *sweep_spec_store_create(const tessel_allocator *a);
void sweep_spec_store_free(sweep_spec_store **st);
/* The published spec of key, or NULL. */
const tessel_spec *sweep_spec_store_find(sweep_spec_store *st, const uint32_t *key);
/* Publishes *spec (taking it: *spec set NULL) and returns it; when another
 * worker published key meanwhile, frees *spec and returns that one; NULL
 * when the store is full (*spec is then still the caller's). */
const tessel_spec *sweep_spec_store_put(sweep_spec_store *st, const uint32_t *key,
                                        tessel_spec **spec);

/* Per worker: an entry per structural key it met, pointing at the store's
 * spec, with the worker's last estimate of it (for its patched capacities
 * and partitions; the other patched axes cannot change it), and the energy
 * for given PEs, MACs per PE (the MACs' area counts them) and capacities. */
typedef struct sweep_cached {
    uint32_t key[TESSEL_SWEEP_MAX_AXES];
    const tessel_spec *spec; /* the store's */
    int has_result, has_energy;
    uint32_t result_key[TESSEL_SWEEP_MAX_AXES]; /* result's patched capacity and
                                                 * partition value indices */
    tessel_result result;
    unsigned energy_pes, energy_macs;
    uint64_t energy_capacity[TESSEL_SPEC_MAX_LEVELS]; /* the energy's level capacities */
    tessel_design_energy energy;
} sweep_cached;

typedef struct sweep_spec_cache sweep_spec_cache;
sweep_spec_cache *sweep_spec_cache_create(const tessel_allocator *a);
void sweep_spec_cache_free(sweep_spec_cache **c);
sweep_cached *sweep_spec_cache_find(sweep_spec_cache *c, const uint32_t *key);
/* A new entry for key and the store's spec; NULL when full or out of memory. */
sweep_cached *sweep_spec_cache_put(sweep_spec_cache *c, const uint32_t *key,
                                   const tessel_spec *spec);
/* Sets the patched fields of spec to point idx's values. */
void sweep_patch_apply(const sweep_patch *p, const uint32_t *idx, size_t naxes,
                       tessel_spec *spec);
/* 1 when spec's capacities and partitions pass the spec validator's checks
 * across values (partitions add up to at most 100 %, none below a byte). */
int sweep_patch_consistent(const tessel_spec *spec);

typedef struct sweep_shared {
    const tessel_sweep *sweep;
    const tessel_spec *data_spec;       /* base + fixed sets + the data entry's bindings */
    const tessel_workload_data *data;   /* exact */
    const tessel_stat_data *stats;      /* stat */
    const tessel_energy_db *db;
    const char *label;                  /* the `data` column */
    int timing;
    const sweep_patch *patch;           /* NULL: derive every point's spec in full */
    sweep_spec_store *specs;            /* with patch: the derived specs */
} sweep_shared;

/* Rule 4 verdict of a point, the entry point's (tessel_point_feasible on
 * its result and strategy column): feasible, else the outermost
 * overflowing level and tensor. */
typedef struct sweep_verdict {
    int feasible;
    unsigned level, tensor;
} sweep_verdict;

/* Evaluates point p (of the data entry `shared` describes) into *out and
 * its rule 4 verdict into *verdict. memo (the thread's probe) may be NULL. Errors name the
 * point and its axis values. */
int sweep_eval_point(const sweep_shared *shared, sweep_probe *memo, sweep_spec_cache *cache,
                     uint64_t p, tessel_report_point *out, sweep_verdict *verdict,
                     int *memo_hit, tessel_diag *diag);
/* Writes the rows of point p: summary (point, axis values, the verdict,
 * the summary columns) and traffic (one row per level and tensor). */
int sweep_write_rows(const tessel_sweep *s, uint64_t p, const tessel_report_point *pt,
                     const sweep_verdict *verdict, FILE *summary, FILE *traffic);
/* The header lines of the sweep's summary.csv and traffic.csv into f. */
void sweep_write_header(const tessel_sweep *s, FILE *f, int traffic);
/* The summary row of a point that failed with diag (skip_invalid): its
 * identity, the error, no numbers. */
int sweep_write_invalid(const sweep_shared *sh, uint64_t p, const tessel_diag *diag,
                        FILE *summary);

/* feasible.c: summary.csv's "feasible,overflow_level,overflow_tensor," of
 * pt under verdict v. */
void sweep_write_feasible(FILE *f, const tessel_report_point *pt, const sweep_verdict *v);
/* pareto.c: tessel_sweep_pareto; include_infeasible 0 leaves rows whose
 * `feasible` column is 0 out of the front. */
int sweep_pareto(const char *summary_path, const char *out_path, const char *const *objectives,
                 size_t nobjectives, int include_infeasible, const tessel_allocator *a,
                 uint64_t *rows, tessel_diag *diag);

/* memo.c: one table from the traffic-deciding part of a spec to its
 * estimate, shared by the threads, and per thread a probe into it. */
sweep_memo *sweep_memo_create(const tessel_allocator *a);
void sweep_memo_free(sweep_memo **m);
/* stats (may be NULL): the stat estimator's statistics of the data entry,
 * whose per-shape summaries the probe keeps (tessel_stat_cache): those of
 * probe share when given (one table for the threads), else its own. */
sweep_probe *sweep_probe_create(const tessel_allocator *a, sweep_memo *m,
                                const tessel_stat_data *stats, sweep_probe *share);
tessel_stat_cache *sweep_probe_stat_cache(sweep_probe *p);
/* Seconds p's thread waited for other threads' estimates since the last
 * call, each wait counted as the CPU time the estimate still needed when
 * it began (what it lasts on idle cores). */
double sweep_probe_waited(sweep_probe *p);
/* Adds to r the stat shape summaries, nested summaries and step-count
 * tables and geometries p's thread built. */
void sweep_probe_summaries(const sweep_probe *p, tessel_sweep_report *r);
void sweep_probe_free(sweep_probe **p);
/* 1 with *r = spec's estimate when the memo holds it (waiting while
 * another thread estimates it). 0: the caller estimates it, then passes
 * the estimate to sweep_memo_put, or calls sweep_memo_drop when the
 * estimate failed (threads waiting for it then estimate it themselves).
 * cheap: spec's estimate costs microseconds (a full memo that never hit
 * is then skipped). */
int sweep_memo_find(sweep_probe *p, const tessel_spec *spec, int cheap, tessel_result *r);
void sweep_memo_put(sweep_probe *p, const tessel_result *r);
void sweep_memo_drop(sweep_probe *p);

/* ------------------------------------------------------------------ */
/* sched.c: which chunk of a batch each worker evaluates next (contiguous
 * shares, taken in order, the largest share's last chunk once a worker's
 * own is done), the threads paced by their CPU clocks so that each takes
 * what it would take on idle cores. Worker indices are 0..nworkers-1. */
typedef struct sweep_sched sweep_sched;
sweep_sched *sweep_sched_create(const tessel_allocator *a, unsigned nworkers);
void sweep_sched_free(sweep_sched **s);
/* A new batch of nchunks chunks for nworkers workers (at most those of
 * create), before any of their threads runs it. */
void sweep_sched_reset(sweep_sched *s, size_t nchunks, unsigned nworkers);
/* Called by worker index's thread before it takes a chunk of the batch. */
void sweep_sched_start(sweep_sched *s, unsigned index);
/* Worker index's thread will not run the batch: its share is the others'. */
void sweep_sched_gone(sweep_sched *s, unsigned index);
/* The next chunk for worker index (waiting when its pace says so);
 * nchunks when none is left. */
size_t sweep_sched_take(sweep_sched *s, unsigned index);
/* Chunk `chunk` failed: no later chunk is taken from now on. */
void sweep_sched_failed(sweep_sched *s, size_t chunk);

/* ------------------------------------------------------------------ */
/* crew.c: the sweep's worker threads, started once and fed every batch.
 * Worker 0 is the calling thread. */
typedef struct sweep_crew sweep_crew;
typedef void (*sweep_crew_fn)(void *ctx, unsigned index);
/* A crew of at most nworkers workers (no thread started yet). */
sweep_crew *sweep_crew_create(const tessel_allocator *a, unsigned nworkers);
/* Starts threads until nworkers workers can run (at most create's);
 * returns how many can (fewer when a thread could not be started). */
unsigned sweep_crew_grow(sweep_crew *c, unsigned nworkers);
/* fn(ctx, i) for workers 0..nworkers-1 (those grow made), i = 0 on the
 * calling thread; returns when every one has returned. */
void sweep_crew_run(sweep_crew *c, unsigned nworkers, sweep_crew_fn fn, void *ctx);
/* Stops and joins the threads. */
void sweep_crew_free(sweep_crew **c);

/* ------------------------------------------------------------------ */
/* output.c: sweep.state, the .part files, resume. */
typedef struct sweep_state {
    uint64_t fingerprint;
    uint64_t total;         /* points of the whole sweep */
    uint64_t shard_index, shard_count;
    uint64_t first, end;    /* this run's points [first, end) */
    size_t nobjectives;
    char objectives[TESSEL_SWEEP_MAX_OBJECTIVES][64];
    const char *inputs;     /* "input ..." lines (inputs.c), or NULL; not owned */
} sweep_state;

int sweep_state_write(const char *dir, const sweep_state *st, const tessel_allocator *a,
                      tessel_diag *diag);
int sweep_state_read(const char *dir, sweep_state *st, tessel_diag *diag);
/* The same into the file at `path` (a merge writes it aside first). */
int sweep_state_write_to(const char *path, const sweep_state *st, const tessel_allocator *a,
                         tessel_diag *diag);

/* resume.c: cuts the .part file at `path` after its last whole row whose
 * point is <= limit (*last, *found); *has_header = 0 when even the header
 * line is incomplete (the file is then emptied). */
int sweep_part_recover(const char *path, uint64_t limit, uint64_t *last, int *found,
                       int *has_header, tessel_diag *diag);

/* inputs.c: the "input SIZE TIME CHECKSUM PATH" lines of every file a
 * result depends on (spec and includes, energy tables, data files) into
 * *text (allocated); those saved in DIR/sweep.state (*text "" when none);
 * and the check that refuses a resume whose inputs changed, naming the
 * file (saved "" = an older state: not checked). */
int sweep_inputs_collect(const tessel_sweep *s, const tessel_spec *base,
                         const tessel_allocator *a, char **text, tessel_diag *diag);
int sweep_inputs_read(const char *dir, const tessel_allocator *a, char **text,
                      tessel_diag *diag);
int sweep_inputs_check(const char *dir, const char *saved, const char *now, tessel_diag *diag);

/* lock.c: takes the lock on DIR/sweep.lock for `command` ("sweep",
 * "merge"), held until sweep_lock_release(*fd); another process holding
 * it makes this fail at once (TESSEL_EINVAL) naming it. */
int sweep_lock_take(const char *dir, const char *command, int *fd, tessel_diag *diag);
void sweep_lock_release(int fd);

/* Seconds on the monotonic clock (run.c). */
double sweep_now(void);

/* The output directory: checked, created when missing (one level). */
int sweep_ensure_dir(const char *dir, tessel_diag *diag);

/* dir + "/" + name into buf. */
int sweep_join(char *buf, size_t n, const char *dir, const char *name);

#endif
