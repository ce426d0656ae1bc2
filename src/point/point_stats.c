/* tessel_point_stats_create (point.h): the statistics a design point is
 * priced from under the stat estimator, collected in one place so that a
 * template that reads them on a base grid of its own (sparsepipe: its
 * blocks) gets that grid from every command (run, compare, map, sweep and
 * the bindings), not from each caller remembering to ask for it. */
#include "tessel/point.h"

int tessel_point_stats_create(const tessel_spec *spec, const tessel_workload_data *data,
                              const tessel_stat_options *opt, const tessel_allocator *a,
                              tessel_stat_data **out, tessel_diag *diag)
{
    tessel_stat_options o;
    if (opt)
        o = *opt;
    else
        tessel_stat_options_init(&o);
    if (spec)
        tessel_template_stat_options(spec, &o);
    return tessel_stat_data_create(spec, data, &o, a, out, diag);
}
