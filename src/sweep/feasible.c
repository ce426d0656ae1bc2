/* Rule 4 feasibility columns of a sweep's design points (docs/semantics.md
 * rule 4, issue 20). The verdict is the entry point's
 * (tessel_point_feasible, src/point/point.c): a point is infeasible when
 * some tile overflows its partition and its strategy does not overbook on
 * purpose. Infeasible points keep their rows (marked) and stay out of the
 * Pareto front unless asked for. */

#include "sweep_internal.h"

void sweep_write_feasible(FILE *f, const tessel_report_point *pt, const sweep_verdict *v)
{
    if (v->feasible) {
        fputs("1,,,", f);
        return;
    }
    fputs("0,", f);
    tessel_csv_field(f, pt->level_name[v->level]);
    fputc(',', f);
    tessel_csv_field(f, pt->tensor_name[v->tensor]);
    fputc(',', f);
}
