/* Private to the stat estimator's closed sums (stat_spmspm.c) and their
 * per-shape summaries (stat_cache.c): the working state of one SpMSpM
 * boundary evaluation and the steps both files run on it. */
#ifndef TESSEL_MODEL_STAT_CLOSED_H
#define TESSEL_MODEL_STAT_CLOSED_H

#include <math.h>

#include "stat_internal.h"

typedef struct price {
    double data, meta;
} price;

/* Output tiles are priced as data = nnz * d1 and meta = m0 + nnz * m1,
 * fitted between an empty tile and a full one (exact for COO, CSR,
 * bitmap and UOP-CP footprints). */
typedef struct affine {
    double d1, m0, m1;
} affine;

/* A non-ranked format's footprint is fixed + nnz * per bits, rounded up
 * to bytes (tessel_format_footprint), of which ceil(nnz * value bits / 8)
 * are data: the same arithmetic as exact_tile_bytes, without its calls. */
typedef struct pricer {
    double fixed, per, value_bits;
    int whole;                  /* all three whole numbers: integer arithmetic */
    int split;                  /* a per-rank list: data and metadata rounded to bytes
                                   apart, as exact_tile_bytes rounds them (stat_ranks.c) */
    int rows;                   /* a per-rank list not affine in n: priced by
                                   stat_rows_price from estimated prefix counts */
    tile_cost cost;             /* with rows: the tile's format and shape */
    uint64_t ifixed, iper, ivalue;
} pricer;

typedef struct work {
    const stat_problem *p;
    pricer price_a, price_b;
    int bitsets;                /* the pair walk's bitsets below (else estimates) */
    uint64_t words;             /* 64-bit words per bitset over the reduction tiles */
    /* Per non-empty tile (NULL: built without prices, or priced by size
     * below); or, where a tile's price is its size's (stat_grid_price
     * without per-tile counts), per size 0 .. the grid's fullest tile:
     * 16 B per tile was boundary 1's peak at scale (docs/models/stat.md). */
    price *a_price, *b_price;
    price *a_size, *b_size;
    uint64_t *a_col;            /* non-empty A tiles per tile column k */
    uint64_t *a_first, *a_last; /* smallest and largest tile row in column k */
    double *a_col_nnz;          /* nonzeros of A's tile column k */
    uint64_t *b_row;            /* non-empty B tiles per tile row k */
    double *b_row_nnz;
    uint64_t *arows;            /* per tile row i: bitset of A's non-empty k */
    uint64_t *bcols;            /* per tile column j: bitset of B's non-empty k */
    /* Output runs that merge (consecutive effectual iterations on one
     * output tile): bit k of row i set when the run of output tile
     * (i, merge_j[k]) at step k continues at its next visit. */
    uint64_t *merge_bits, *merge_j;
    double merges;
} work;

/* The price of non-empty tile n of canonical input q (0: a, 1: b), from
 * stat_work_init's prices. */
static inline price stat_work_price(const work *w, unsigned q, uint64_t n)
{
    const price *per = q ? w->b_price : w->a_price;
    if (per)
        return per[n];
    return (q ? w->b_size : w->a_size)[(q ? &w->p->b : &w->p->a)->nnz[n]];
}

/* One level's unskipped (read or gated) inputs: their fills, gated fills
 * and rule 4 uses over every iteration where their own tile is non-empty,
 * in place of the skipping sums (stat_spmspm.c). */
void stat_unskipped_inputs(const work *w, stat_outcome *o);

/* The output tile pairs: v = |K(i) & K(j)| effectual reduction steps. */
typedef struct pair_sums {
    double pairs, sum_v, sum_v2;
} pair_sums;

/* What stat_output_traffic takes as known instead of walking the output
 * sample: the nonzeros the write-backs carry, and (a whole sample) the
 * non-empty output tiles. */
typedef struct stat_known {
    double written, nonempty;
    double max_pair_nnz; /* the sample's fullest output tile (-1: not known) */
} stat_known;

/* Set bits of a word without relying on a popcount instruction. */
static inline uint64_t stat_bits_set(uint64_t x)
{
    x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
    x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
    x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (x * UINT64_C(0x0101010101010101)) >> 56;
}

/* A per-rank list whose price needs the tile's non-empty prefixes (rows):
 * those estimated from nnz (src/model/stat_ranks.c). */
price stat_rows_price(const pricer *pr, uint64_t nnz);

/* A tile of nnz nonzeros at pricer pr: whole bytes of data and metadata. */
static inline price stat_fast_price(const pricer *pr, uint64_t nnz)
{
    if (pr->whole && nnz < (UINT64_C(1) << 40)) {
        uint64_t total = (pr->ifixed + nnz * pr->iper + 7) / 8, data = (nnz * pr->ivalue + 7) / 8;
        if (data > total)
            data = total;
        return (price){ (double)data, (double)(total - data) };
    }
    if (pr->rows)
        return stat_rows_price(pr, nnz);
    double data = ceil((double)nnz * pr->value_bits / 8);
    if (pr->split)
        return (price){ data, ceil((pr->fixed + (double)nnz * (pr->per - pr->value_bits)) / 8) };
    double total = ceil((pr->fixed + (double)nnz * pr->per) / 8);
    if (data > total)
        data = total;
    return (price){ data, total - data };
}

pricer stat_pricer_of(const tile_cost *tc);
/* n elements of size bytes from a, zero-filled (room for one when n is 0). */
void *stat_zeroed(const tessel_allocator *a, uint64_t n, size_t size);
/* An input's fills and the bytes they and rule 4's streaming move, into
 * its traffic row (the overflow columns are the caller's). */
void stat_store_fills(tessel_traffic *tr, const stat_counts *c);
/* stat_store_fills and the overflow columns: tiles filled over their
 * partition, bytes streamed beyond it, the largest tile filled. */
void stat_store_input(tessel_traffic *tr, const stat_counts *c);
/* Rule 1: `times` fills of a tile of price pr into partition part (0:
 * unbounded), counting those that overflow it. */
void stat_add_fill(stat_counts *c, double times, price pr, uint64_t part);
/* Rule 4: `times` uses of a resident overbooked tile without a fill, each
 * streaming the part beyond the partition again. */
void stat_add_bumped(stat_counts *c, double times, price pr, uint64_t part);
/* Whether the pair walk's bitsets fit the word budget (else estimates). */
int stat_bitsets_fit(const stat_problem *p);
/* The per-k counts and (bitsets) the pair bitsets of p's grids; with
 * prices, every tile's price at p's costs. */
int stat_work_init(work *w, const stat_problem *p, int bitsets, int prices);
void stat_work_free(work *w);
uint64_t stat_b_first_j(const stat_problem *p, uint64_t k);
uint64_t stat_b_last_j(const stat_problem *p, uint64_t k);
/* Index of B's tile (k, j), which must be non-empty. */
uint64_t stat_b_tile(const stat_problem *p, uint64_t k, uint64_t j);
void stat_walk_pairs(const work *w, pair_sums *ps, stat_outcome *o, uint64_t *reuse_a,
                     uint64_t *reuse_b);
void stat_estimate_pairs(const work *w, double effectual, pair_sums *ps);
/* w->merges (and with bitsets the merge bits, which must be zero) for
 * p->order. */
void stat_find_merges(work *w);
int stat_sample_written(const work *w, double *written);
uint64_t stat_written_tiles(const stat_output_sample *s, uint64_t f_k, int unfolded);
double stat_written_strata(const stat_output_sample *s, uint64_t f_k, const double *wh,
                           const double *sh, uint64_t nt);
int stat_sample_pairs(const work *w, double *pairs);
/* Whether an output tile of p's shape could outgrow the output's
 * partition (rule 4): then stat_output_traffic needs the pair bitsets
 * and the sample, which a cached summary does not keep. */
int stat_output_may_spill(const stat_problem *p);
/* The sample's fullest output tile pair (weighted nonzeros), for a
 * summary that keeps no pair walk: with it, a point whose tiles all fit
 * needs no spill pricing (rule 4). */
int stat_sample_max_pair(const work *w, double *max);
/* Bytes of an output tile of p's shape holding nnz nonzeros. */
double stat_output_tile_bytes(const stat_problem *p, double nnz);
/* The output's counts into o (o->effectual set); known may be NULL. */
int stat_output_traffic(const work *w, const pair_sums *ps, const stat_known *known,
                        stat_outcome *o);


/* Lowest and highest set bit of a non-zero word. */
static inline unsigned stat_low_bit(uint64_t x)
{
    return (unsigned)__builtin_ctzll(x);
}

static inline unsigned stat_high_bit(uint64_t x)
{
    return 63u - (unsigned)__builtin_clzll(x);
}

/* Bytes of a tile of `cells` cells as data and metadata lines in its
 * nonzeros (stat_spmspm.c). */
affine stat_affine_fit(const tile_cost *tc, uint64_t cells);

#endif
