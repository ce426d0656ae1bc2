/* Rule 4 feasibility on the command line (docs/outputs.md, docs/semantics.md
 * rule 4): a run reports per level and tensor the tiles that overflow
 * their partition; here they become warnings or, under --strict, errors. */
#include <stdio.h>
#include <string.h>

#include "overflow_cli.h"

int cli_overflow_allowed(const tessel_spec *spec, const char *strategy)
{
    (void)spec;
    return strategy && strcmp(strategy, "swiftiles") == 0;
}

static unsigned long long ull(uint64_t x)
{
    return (unsigned long long)x;
}

int cli_overflow_check(const char *cmd, const tessel_spec *spec, const char *strategy,
                       const tessel_result *r, int strict, int warn)
{
    int fail = strict && !cli_overflow_allowed(spec, strategy);
    int found = 0;
    for (unsigned l = 1; l < r->nlevels; l++)
        for (unsigned t = 0; t < r->ntensors; t++) {
            const tessel_traffic *tr = &r->traffic[l][t];
            if (!tr->overflow_tiles)
                continue;
            found = 1;
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
    return fail && found;
}
