/* Plausibility warnings for a validated spec: values tessel accepts but
 * that are most likely typos or unit slips (a clock of `1000` read as
 * 1000 GHz, buffers partitioned to a small share of their capacity).
 * Warnings are diagnostics with code 0; the library never prints. */
#include "spec_internal.h"

/* Clocks outside 1 MHz .. 10 GHz: no CMOS accelerator runs there. */
#define PLAUSIBLE_CLOCK_MAX_GHZ 10.0
#define PLAUSIBLE_CLOCK_MIN_GHZ 0.001
/* Partitions that leave more than half a buffer unused. */
#define PLAUSIBLE_PARTITION_MIN 0.5

static void warn_partitions(const tessel_spec *s, unsigned l, tessel_diag_list *w)
{
    const tessel_spec_level *lv = &s->level[l];
    if (!lv->capacity)
        return;
    double sum = 0;
    for (unsigned t = 0; t < s->workload.ntensors && t < TESSEL_SPEC_MAX_TENSORS; t++) {
        const tessel_spec_tensor_level *tl = &lv->tensor[t];
        if (tl->partition_fraction > 0)
            sum += tl->partition_fraction;
        else if (tl->partition_bytes > 0)
            sum += (double)tl->partition_bytes / (double)lv->capacity;
        else
            return; /* a tensor without a partition shares what is left */
    }
    if (sum < PLAUSIBLE_PARTITION_MIN)
        tessel_diag_list_add(w, TESSEL_OK, lv->pos.file, lv->pos.line, lv->pos.column,
                             "partition",
                             "%s: the partitions of its tensors sum to %.1f %% of its capacity, "
                             "so %.1f %% of the buffer is never used",
                             lv->name, 100 * sum, 100 * (1 - sum));
}

int tessel_spec_plausibility(const tessel_spec *s, tessel_diag_list *warnings)
{
    if (!s || !warnings)
        return TESSEL_EINVAL;
    size_t before = warnings->count;
    const tessel_spec_pos *p = &s->compute.pos;
    double ghz = s->compute.clock_ghz;
    if (ghz > PLAUSIBLE_CLOCK_MAX_GHZ)
        tessel_diag_list_add(warnings, TESSEL_OK, p->file, p->line, p->column,
                             "architecture.compute.clock",
                             "clock %g GHz is above 10 GHz: a bare number is read as GHz; "
                             "write the unit (e.g. %gMHz) if MHz was meant",
                             ghz, ghz);
    else if (ghz > 0 && ghz < PLAUSIBLE_CLOCK_MIN_GHZ)
        tessel_diag_list_add(warnings, TESSEL_OK, p->file, p->line, p->column,
                             "architecture.compute.clock",
                             "clock %g GHz (%g Hz) is below 1 MHz: a bare number is read as GHz",
                             ghz, ghz * 1e9);
    unsigned nl = s->nlevels < TESSEL_SPEC_MAX_LEVELS ? s->nlevels : TESSEL_SPEC_MAX_LEVELS;
    for (unsigned l = 0; l < nl; l++)
        warn_partitions(s, l, warnings);
    return (int)(warnings->count - before);
}
