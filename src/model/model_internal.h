/* Private to src/model. */
#ifndef TESSEL_MODEL_INTERNAL_H
#define TESSEL_MODEL_INTERNAL_H

#include <string.h>

#include "tessel/model.h"

int model_permute(const tessel_tensor *t, const unsigned *perm, const tessel_allocator *a,
                  tessel_tensor **out, tessel_diag *diag);
int model_transpose(const tessel_tensor *t, const tessel_allocator *a, tessel_tensor **out,
                    tessel_diag *diag);

/* workload_count.c: the memo kept with a workload data (NULL without
 * memory: nothing kept). */
int model_workload_memo_create(tessel_workload_data *w);
void model_workload_memo_free(tessel_workload_data *w);

/* Seconds on the monotonic clock (estimators time themselves). */
double model_now(void);

/* A count from an estimate: rounded, 0 for negative or NaN, saturating
 * at UINT64_MAX instead of wrapping. */
uint64_t model_count(double x);

/* Scalar action_optimization (model_scalar.c): an input's traversed
 * scalar reads and their format bytes split into actual and skipped (or
 * gated) reads; the actual format share becomes child_read_metadata. The
 * output's dense loop nest reads beyond its reads are skipped (gated). */
void model_scalar_split(tessel_traffic *tr, const tessel_spec_sparse *sp, double traversed,
                        double format_bytes, double actual);
void model_scalar_output(tessel_traffic *tz, const tessel_spec_sparse *sp, double dense_reads);
/* action_optimization above the innermost level: who (an estimator's or a
 * route's name) refuses it; NULL (exact, stat) only under bypass. At any
 * level, an input conditioned on a strict subset of the other inputs
 * (three inputs) is refused. */
int model_scalar_outer_refuse(const tessel_spec *s, tessel_diag *diag, const char *who);

/* TESSEL_ERANGE when a count of r saturated at 2^64 - 1. */
int model_result_check(const tessel_result *r, const tessel_spec *spec, tessel_diag *diag);

/* A growable array of 64-bit words. */
typedef struct model_vec {
    const tessel_allocator *alloc;
    uint64_t *v;
    uint64_t n, cap;
} model_vec;

int model_vec_push(model_vec *a, uint64_t x);
void model_vec_free(model_vec *a);
/* The bytes a's next growth asks for (out-of-memory messages). */
uint64_t model_vec_grow_bytes(const model_vec *a);

/* Open-addressing map from 64-bit keys (not UINT64_MAX) to slots. */
typedef struct model_map {
    const tessel_allocator *alloc;
    uint64_t *keys;
    uint64_t *vals;
    uint64_t cap, n;
} model_map;

/* The value slot of key, inserting it with value `init` when missing;
 * NULL when out of memory. */
uint64_t *model_map_slot(model_map *m, uint64_t key, uint64_t init);
/* The value of key, or UINT64_MAX when it is missing. */
uint64_t model_map_find(const model_map *m, uint64_t key);
void model_map_free(model_map *m);
/* The bytes m's next growth asks for (keys and values). */
uint64_t model_map_grow_bytes(const model_map *m);

/* A map used for weights: each value is a double's bits. */
static inline double model_bits_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

static inline uint64_t model_double_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

/* Adds w to key's weight (0 when new); TESSEL_ENOMEM when out of memory. */
int model_map_add(model_map *m, uint64_t key, double w);
/* key's weight (the key must be present). */
double model_map_weight(const model_map *m, uint64_t key);

/* lgamma(x) without writing the global signgam, so that threads may call
 * it (stat_outspill.c). */
double model_log_gamma(double x);

#endif
