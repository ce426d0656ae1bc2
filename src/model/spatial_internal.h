/* What spatial.c (the deal) and spatial_steps.c (a unit's intersection
 * steps) share: the split level's geometry along i, k, j and the table of
 * (level tile, unit) work (docs/models/spatial.md). */
#ifndef TESSEL_SPATIAL_INTERNAL_H
#define TESSEL_SPATIAL_INTERNAL_H

#include <stdint.h>

#include "tessel/model.h"

/* One of the three SpMSpM indices i, k, j (SpMV has no j). */
typedef struct sp_axis {
    int index;       /* workload index; -1 absent (SpMV's j) */
    uint64_t extent; /* >= 1 */
    uint64_t edge;   /* the level's tile edge, at most the extent */
    uint64_t unit;   /* the child's tile edge inside it (1 below the innermost level) */
    uint64_t tiles;  /* the level's tiles along the index */
    uint64_t units;  /* units along it in a whole tile; 1 when not split */
    unsigned factor; /* instances it is split over; 1 when not split */
    uint64_t cedge;  /* the child tile an instance walks in time (its intersection grain) */
    uint64_t ctiles; /* child tiles along the index in a whole level tile */
} sp_axis;

/* A unit's work: key = level tile * units per tile + unit. Exact counts
 * macs; the stat estimator's expected MACs go to emacs (spatial_stat.c). */
typedef struct sp_entry {
    uint64_t key, macs, steps;
    double emacs;
} sp_entry;

/* Open addressing, key + 1 stored so that 0 marks an empty slot; or, with
 * dense set, a direct table of `dense` keys (slot[key], already in order). */
typedef struct sp_map {
    const tessel_allocator *a;
    sp_entry *slot;
    uint64_t cap, n;
    uint64_t dense;
} sp_map;

/* Adds macs and steps to key's entry (TESSEL_ENOMEM). */
int sp_map_add(sp_map *m, uint64_t key, uint64_t macs, uint64_t steps);
/* Adds expected MACs to key's entry (TESSEL_ENOMEM). */
int sp_map_add_expected(sp_map *m, uint64_t key, double emacs);
/* Moves the entries to the front of m->slot sorted by key; returns their number. */
uint64_t sp_map_sorted(sp_map *m);
/* a * b, or 0 when it passes 2^63. */
uint64_t sp_mul63(uint64_t a, uint64_t b);
/* Coordinates of nonzero e of tensor t (row r) along workload indices ia, ib (0 if absent). */
void sp_coords(const tessel_spec *spec, unsigned t, const tessel_tensor *x, uint64_t r,
               uint64_t e, int ia, int ib, uint64_t *a, uint64_t *b);
/* Adds every unit's intersection steps to m (spatial_steps.c): A plays
 * A[i,k] (tensor ta), B plays B[k,j] (tb); ax in the order i, k, j. */
int sp_steps_add(const tessel_spec *spec, const tessel_workload_data *data, unsigned ta,
                 unsigned tb, const sp_axis ax[3], uint64_t per_tile, const tessel_allocator *a,
                 sp_map *m);
/* The child tile along ax holding coordinate x, numbered over the whole
 * index, and the number of them (spatial_steps.c). */
uint64_t sp_child_of(const sp_axis *ax, uint64_t x);
uint64_t sp_children(const sp_axis *ax);
/* Pairs the sorted non-empty child tiles of A (key k child * children(i) +
 * i child, macs = nonzeros) and of B (k child * children(j) + j child) on
 * their k child: each pair's merged steps into m (with `steps`: the compute
 * has an intersection unit), and with estimate its expected MACs
 * nnz(A) nnz(B) / (the k child's length) into emacs. */
int sp_pair_up(const sp_entry *A, uint64_t na, const sp_entry *B, uint64_t nb,
               const sp_axis ax[3], uint64_t per_tile, int estimate, int steps, sp_map *m);
/* The expected maximum of n independent normal loads N(mu, var) (var 0:
 * exact), by integrating 1 - prod F over the loads' range (spatial_stat.c). */
double sp_expected_max(const double *mu, const double *var, unsigned n);
/* The extents of the inputs' indices from the statistics' grids, and every
 * unit's steps and expected MACs from them (spatial_stat.c). */
int sp_stat_extents(const tessel_spec *spec, const tessel_stat_data *st, unsigned ta,
                    unsigned tb, uint64_t *extent, tessel_diag *diag);
int sp_stat_fill(const tessel_spec *spec, const tessel_stat_data *st, unsigned ta, unsigned tb,
                 const sp_axis ax[3], uint64_t per_tile, const tessel_allocator *a, sp_map *m,
                 tessel_diag *diag);

#endif
