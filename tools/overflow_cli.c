/* Rule 4 feasibility on the command line (docs/outputs.md, docs/semantics.md
 * rule 4): a run reports per level and tensor the tiles that overflow
 * their partition; here they become warnings or, under --strict, errors. */
#include <stdio.h>
#include <string.h>

#include "overflow_cli.h"
#include "tessel/point.h"

int cli_overflow_allowed(const tessel_spec *spec, const char *strategy)
{
    (void)spec;
    return tessel_point_may_overbook(strategy); /* the entry point's list */
}

static unsigned long long ull(uint64_t x)
{
    return (unsigned long long)x;
}

int cli_overflow_check(const char *cmd, const tessel_spec *spec, const char *strategy,
                       const tessel_result *r, int strict, int warn)
{
    /* the entry point's rule 4 verdict; the loop below only words it */
    int fail = strict && !tessel_point_feasible(r, strategy, NULL, NULL);
    for (unsigned l = 1; l < r->nlevels; l++)
        for (unsigned t = 0; t < r->ntensors; t++) {
            const tessel_traffic *tr = &r->traffic[l][t];
            if (!tr->overflow_tiles)
                continue;
            if (!fail && !warn)
                continue;
            uint64_t moved = t == 0 ? tr->writebacks : tr->fills;
            fprintf(stderr,
                    "tessel %s: %s: level %s, tensor %s: %llu of %llu %s overflow the "
                    "%llu-byte partition (%.1f %%), the largest %llu bytes; ",
                    cmd, fail ? "error" : "warning", spec->level[l].name,
                    spec->workload.tensor[t].name, ull(tr->overflow_tiles), ull(moved),
                    t == 0 ? "write-backs" : "tiles filled", ull(tr->partition_bytes),
                    moved ? 100.0 * (double)tr->overflow_tiles / (double)moved : 100.0,
                    ull(tr->worst_tile_bytes));
            if (fail)
                fprintf(stderr, "the spec does not allow overbooking (strategy %s)\n",
                        strategy ? strategy : "fixed");
            else
                fprintf(stderr, "rule 4 streams the overflow: %llu bytes\n",
                        ull(tr->overflow_bytes));
        }
    return fail;
}

/* "i 0..8191 x k 8192..16383" */
static void tile_text(const tessel_spec *spec, const tessel_overflow_check *c, char *buf,
                      size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned m = 0; m < c->order && len < n; m++) {
        if (c->index[m] < 0)
            continue;
        len += (size_t)snprintf(buf + len, n - len, "%s%s %llu..%llu", len ? " x " : "",
                                spec->workload.index_name[c->index[m]], ull(c->first[m]),
                                ull(c->last[m]));
    }
}

int cli_overflow_precheck(const char *cmd, const tessel_spec *spec, const char *strategy,
                          const tessel_feasibility *f)
{
    if (cli_overflow_allowed(spec, strategy))
        return 0;
    int fail = 0;
    for (unsigned i = 0; i < f->n; i++)
        fail |= f->item[i].certain;
    for (unsigned i = 0; i < f->n; i++) {
        const tessel_overflow_check *c = &f->item[i];
        if (fail && !c->certain)
            continue; /* the run fails anyway: a bound adds nothing */
        char tile[256];
        tile_text(spec, c, tile, sizeof(tile));
        if (c->certain) {
            fprintf(stderr,
                    "tessel %s: error: level %s, tensor %s: %llu of %llu non-empty tiles "
                    "overflow the %llu-byte partition; the worst, %s, holds %llu bytes; the "
                    "spec does not allow overbooking (checked before the estimate)\n",
                    cmd, spec->level[c->level].name, spec->workload.tensor[c->tensor].name,
                    ull(c->overflow_tiles), ull(c->tiles), ull(c->partition_bytes), tile,
                    ull(c->worst_tile_bytes));
        } else {
            fprintf(stderr,
                    "tessel %s: note: level %s, tensor %s may overflow the %llu-byte "
                    "partition: a tile such as %s can reach %llu bytes (a bound from row and "
                    "column products); the estimate decides\n",
                    cmd, spec->level[c->level].name, spec->workload.tensor[c->tensor].name,
                    ull(c->partition_bytes), tile, ull(c->worst_tile_bytes));
        }
    }
    return fail;
}
