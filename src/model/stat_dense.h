/* Private to the stat estimator: an output whose per-rank list stores every
 * position of a tile ([UB, UB], [UOP, UB]), priced from the tile's shape and
 * the write-back and read-back counts (stat_dense.c, docs/models/stat.md
 * "Uncompressed outputs"). */
#ifndef TESSEL_MODEL_STAT_DENSE_H
#define TESSEL_MODEL_STAT_DENSE_H

#include "stat_internal.h"

/* Whether a per-rank list's footprint is the same for every tile of one
 * shape: no rank reads a prefix count and the leaf stores every position
 * (UB). */
int stat_dense_list(const unsigned char *ranks, unsigned n);

/* Whether the output is held at level l in such a list. */
int stat_dense_output(const tessel_spec *s, unsigned l);

/* Level l's output list passes stat_dense_list: what stat still refuses
 * before any work (an uncompressed innermost output of MTTKRP, whose
 * first-step multiplies the line counts do not give), else TESSEL_OK. */
int stat_dense_check(const tessel_spec *s, unsigned l, tessel_diag *diag);

/* After every boundary's outcome is stored and before exact_finish_counts:
 * each level holding the output in a fixed-footprint list gets its
 * write-back and read-back bytes from the tile's bytes, and an uncompressed
 * output at the innermost level gets the multiplies at the first reduction
 * coordinate (its reads that do not read, docs/semantics.md rule 2) from the
 * inputs' line counts. An error names what the statistics cannot price. */
int stat_dense_apply(engine *e, const stat_input *const *in, tessel_diag *diag);

#endif
