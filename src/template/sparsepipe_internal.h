/* What sparsepipe.c (the template: options, exact and stat analyses,
 * traffic) and sparsepipe_sim.c (the OEI hold simulation both analyses
 * share) have in common. The model is described at the top of
 * sparsepipe.c. */
#ifndef TESSEL_TEMPLATE_SPARSEPIPE_INTERNAL_H
#define TESSEL_TEMPLATE_SPARSEPIPE_INTERNAL_H

#include "template_internal.h"

/* sparsepipe §IV-D.1 / Fig. 13: the IS stage of a sub-tensor runs two
 * steps after its OS stage. */
#define SP_LAG 2
/* Fixed point for the held counts: the stat path's spread counts are
 * fractional; both paths share one simulation in 1/2^16 nonzero units. */
#define SP_ONE 65536u

/* An app preset (sparsepipe.c lists them and says where each comes from). */
typedef struct sp_app {
    const char *name;
    int oei;             /* cross-iteration reuse (Table III) */
    int sparse_frontier; /* SpMSpV: the frontier model applies */
    unsigned reads, writes;
} sp_app;

typedef struct sp_options {
    const sp_app *app;
    uint64_t iterations;
    uint64_t buffer_bytes; /* 0: unbounded */
    uint64_t block, subtensor;
    double frontier; /* active share per iteration; < 0: the preset's */
    int baseline_frontier;
} sp_options;

/* ------------------------------------------------------------------ */
/* The hold simulation: held nonzeros per release step in a Fenwick tree
 * (the farthest pending release is a prefix-sum search), O(log P) per
 * arrival and per eviction. */

typedef struct sp_sim {
    uint64_t P;          /* release steps 0 .. P-1 */
    uint64_t *tree;      /* Fenwick sums of cnt, 1-based, P + 1 */
    uint64_t *cnt;       /* held per release step */
    uint64_t *demand_up; /* unbounded hold: arrivals per step (P + 1) */
    uint64_t *demand_dn; /* and releases per step */
    uint64_t *stage;     /* this step's arrivals per release step, before insertion */
    uint64_t *touched;   /* the release steps staged, nstaged of them */
    uint64_t nstaged;
    uint64_t total, cap; /* held; capacity (UINT64_MAX: unbounded) */
    uint64_t refetched;
} sp_sim;

/* What the analysis of A yields for one fused pair. */
typedef struct sp_matrix {
    uint64_t n, nnz, steps, max_step_nnz;
    uint64_t x_needed;           /* non-empty columns of A: the x entries a multiply uses */
    double blocks;               /* nonzero blocks (nnz when unblocked) */
    double hold_max, hold_avg;   /* unbounded hold, nonzeros */
    double refetched;            /* nonzeros the IS re-fetches */
    double capacity;             /* nonzeros the buffer holds; INFINITY unbounded */
} sp_matrix;

int sp_sim_init(const tessel_allocator *a, uint64_t P, uint64_t cap, sp_sim *s);
void sp_sim_free(const tessel_allocator *a, sp_sim *s);
/* Step `step`'s releases: what the IS consumes at that step leaves. */
void sp_sim_release(sp_sim *s, uint64_t step);
/* c units arrive, to be released at step p (staged until sp_sim_evict). */
void sp_sim_arrive(sp_sim *s, uint64_t p, uint64_t c);
/* The step's arrivals into the buffer, then the farthest out until they fit. */
void sp_sim_evict(sp_sim *s, uint64_t o);
/* The hold's maximum and mean over `steps` and the re-fetched nonzeros, into *m. */
void sp_sim_profile(const sp_sim *s, uint64_t steps, sp_matrix *m);
/* Bits of one held nonzero: a value and its (in-block) coordinate. */
unsigned sp_coord_bits_in_block(const tessel_spec_level *lv, uint64_t b);
/* The buffer's room for held nonzeros, in SP_ONE units (UINT64_MAX and
 * *nonzeros INFINITY when unbounded). */
uint64_t sp_hold_capacity(const tessel_spec *spec, const sp_options *o, const sp_matrix *m,
                          double *nonzeros);

#endif
