/* Rule 4 feasibility of a sweep's design points (DESIGN.md rule 4, issue
 * 20): a point is infeasible when some tile overflows its partition and
 * the spec does not allow overbooking. Only the swiftiles strategy (and
 * the ExTensor-OB variant that runs it) overbooks on purpose; a fixed
 * mapping or any other strategy promises tiles that fit, so its overflow
 * is priced (streamed, spilled) but the point does not keep that promise.
 * Infeasible points keep their rows (marked) and stay out of the Pareto
 * front unless asked for. */
#include <string.h>

#include "sweep_internal.h"

int sweep_point_feasible(const tessel_report_point *pt, unsigned *level, unsigned *tensor)
{
    if (strcmp(pt->strategy, "swiftiles") == 0)
        return 1;
    /* the outermost level first: its overflow costs DRAM traffic */
    for (unsigned l = 1; l < pt->nlevels; l++)
        for (unsigned t = 0; t < pt->ntensors; t++)
            if (pt->traffic[l][t].overflow_tiles) {
                if (level)
                    *level = l;
                if (tensor)
                    *tensor = t;
                return 0;
            }
    return 1;
}

void sweep_write_feasible(FILE *f, const tessel_report_point *pt)
{
    unsigned l = 0, t = 0;
    if (sweep_point_feasible(pt, &l, &t)) {
        fputs("1,,,", f);
        return;
    }
    fputs("0,", f);
    tessel_csv_field(f, pt->level_name[l]);
    fputc(',', f);
    tessel_csv_field(f, pt->tensor_name[t]);
    fputc(',', f);
}
