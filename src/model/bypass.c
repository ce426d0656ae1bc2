/* Per-level bypass (docs/semantics.md "Bypass", mapping.LEVEL.bypass): a
 * tensor a level does not store moves nothing into or out of that level;
 * its child (the next level, or the MACs below the innermost level) reads
 * and writes it at the nearest level above that keeps it, as Sparseloop's
 * `bypass` routes a dataspace past a storage level. */
#include "exact_internal.h"

/* The counts of each estimator are per boundary: what level l+1 fills,
 * reads back and writes back depends on l+1's tiles and the loop nest above
 * it, not on whether level l holds the tensor (the loop nest of a bypassed
 * level still runs). So bypassing only re-routes the child's side: level
 * l's child reads and writes become its parent's, and level l's own row is
 * emptied (no fills, no capacity, no energy). Levels are taken innermost
 * first, so a run of bypassing levels hands the innermost kept child's
 * traffic up to the kept ancestor. Level 0 always keeps every tensor. */
void exact_bypass(engine *e)
{
    const tessel_spec *s = e->spec;
    tessel_result *r = e->res;
    for (unsigned t = 0; t < r->ntensors; t++)
        for (unsigned l = e->nlev - 1; l >= 1; l--) {
            if (!tessel_spec_bypassed(s, l, t))
                continue;
            tessel_traffic *tr = &r->traffic[l][t], *up = &r->traffic[l - 1][t];
            up->reads = tr->reads;
            up->child_read_data = tr->child_read_data;
            up->child_read_metadata = tr->child_read_metadata;
            up->child_write_data = tr->child_write_data;
            up->child_write_metadata = tr->child_write_metadata;
            /* the compute's scalar skips happen where it reads (model_scalar.c) */
            up->skipped_reads = tr->skipped_reads;
            up->gated_reads = tr->gated_reads;
            up->skipped_metadata_bytes = tr->skipped_metadata_bytes;
            up->gated_metadata_bytes = tr->gated_metadata_bytes;
            memset(tr, 0, sizeof(*tr));
        }
}
