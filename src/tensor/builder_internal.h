/* Internal to src/tensor: the steps of the coordinate builder that a reader
 * building the compressed-first-mode arrays in place (mtx_chunked.c) shares,
 * so both give the same tensor bit for bit. */
#ifndef TESSEL_TENSOR_BUILDER_INTERNAL_H
#define TESSEL_TENSOR_BUILDER_INTERNAL_H

#include "tessel/tensor.h"

/* TESSEL_ERANGE (diag filled) when `rows` row pointers would dwarf `count`
 * entries (the hypersparse refusal of docs/data.md's limits). */
int tensor_check_ptr_size(unsigned order, uint64_t rows, uint64_t count, int has_values,
                          tessel_diag *diag);

/* t holds its entries grouped by slice (ptr set), each slice in input order:
 * sorts every unsorted slice (stably), sums duplicates in input order, drops
 * zeros with TESSEL_BUILD_DROP_ZEROS and shrinks the arrays to nnz. */
int tensor_finish_slices(tessel_tensor *t, unsigned flags, tessel_diag *diag);

/* Out-of-memory messages (issue 25 item 9): the bytes b's coordinate and
 * value arrays ask for when they grow to hold `extra` more entries (0: its
 * next growth on an add). */
uint64_t tensor_builder_grow_bytes(const tessel_coo_builder *b, uint64_t extra);

#endif
