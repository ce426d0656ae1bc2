/* What generate.c (the generators) and generate_params.c (the kinds, the
 * defaults, the exact position counts and validation of the parameters)
 * share. */
#ifndef TESSEL_TENSOR_GENERATE_INTERNAL_H
#define TESSEL_TENSOR_GENERATE_INTERNAL_H

#include <stdint.h>

#include "tessel/tensor.h"

/* Generated tensors stay within what the builder indexes comfortably. */
#define GEN_MAX_ENTRIES (1ull << 32)
/* R-MAT levels: one per bit of the largest coordinate. */
#define RMAT_MAX_LEVELS 32u
/* Clustered: the largest clique (its members are checked for repeats
 * pairwise). */
#define CLIQUE_MAX_SIZE 4096u
/* N:M groups at most this wide are sampled with a 64-bit mask. */
#define NM_MASK_WIDTH 64u

static inline uint64_t gen_min_u64(uint64_t x, uint64_t y)
{
    return x < y ? x : y;
}

/* banded: the bandwidth clamped to the matrix (i + w + 1 cannot wrap), and
 * the positions with |i - j| <= w. */
uint64_t gen_band_clamp(const tessel_gen_params *p);
uint64_t gen_band_positions(const tessel_gen_params *p);
/* blockdiag: the block size clamped to the matrix, and the positions of
 * the diagonal blocks. */
uint64_t gen_block_clamp(const tessel_gen_params *p);
uint64_t gen_block_positions(const tessel_gen_params *p);
/* Every parameter of the kind, and the expected entries (at most 2^32). */
int gen_validate(const tessel_gen_params *p, uint64_t *expected_out, tessel_diag *diag);

#endif
