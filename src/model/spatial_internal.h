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

/* A unit's work: key = level tile * units per tile + unit. */
typedef struct sp_entry {
    uint64_t key, macs, steps;
} sp_entry;

/* Open addressing, key + 1 stored so that 0 marks an empty slot. */
typedef struct sp_map {
    const tessel_allocator *a;
    sp_entry *slot;
    uint64_t cap, n;
} sp_map;

/* Adds macs and steps to key's entry (TESSEL_ENOMEM). */
int sp_map_add(sp_map *m, uint64_t key, uint64_t macs, uint64_t steps);
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

#endif
