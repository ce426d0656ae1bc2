/* Roofline performance: a run takes as long as its slowest resource, the
 * MAC array or the bandwidth of one storage level. */
#include <math.h>
#include <string.h>

#include "tessel/energy.h"

void tessel_roofline_evaluate(const tessel_spec *spec, double macs, const double *level_bytes,
                              tessel_roofline *out)
{
    tessel_roofline_evaluate_busy(spec, macs, 0, level_bytes, out);
}

void tessel_roofline_evaluate_busy(const tessel_spec *spec, double macs, double busy_cycles,
                                   const double *level_bytes, tessel_roofline *out)
{
    memset(out, 0, sizeof(*out));
    out->bound = -1;
    if (!spec)
        return;
    double lanes = (double)spec->compute.pes * (double)spec->compute.macs_per_pe;
    double clock = spec->compute.clock_ghz;
    out->compute_cycles = lanes > 0 && macs > 0 ? macs / lanes : 0;
    out->cycles = busy_cycles > out->compute_cycles ? busy_cycles : out->compute_cycles;
    unsigned n = spec->nlevels < TESSEL_SPEC_MAX_LEVELS ? spec->nlevels : TESSEL_SPEC_MAX_LEVELS;
    for (unsigned l = 0; l < n; l++) {
        const tessel_spec_level *lv = &spec->level[l];
        double bytes = level_bytes ? level_bytes[l] : 0;
        /* GB/s over GHz is bytes per cycle; every instance of a level
         * (one per PE, say) has its own port. Bandwidth 0 = unbounded. */
        double per_cycle = clock > 0 ? lv->bandwidth * (lv->instances ? lv->instances : 1) / clock
                                     : 0;
        double c = per_cycle > 0 && bytes > 0 ? bytes / per_cycle : 0;
        out->level_cycles[l] = c;
        /* Strictly greater: on a tie the run counts as compute bound, then
         * as bound by the outermost level. */
        if (c > out->cycles) {
            out->cycles = c;
            out->bound = (int)l;
        }
    }
    if (out->cycles > 0) {
        out->compute_utilization = out->compute_cycles / out->cycles;
        for (unsigned l = 0; l < n; l++)
            out->level_utilization[l] = out->level_cycles[l] / out->cycles;
    }
    /* A clock beyond 1.8e299 GHz overflows in Hz; dividing in GHz first
     * keeps the time finite (and equal up to rounding). */
    double hz = clock * 1e9;
    if (clock > 0)
        out->seconds = isfinite(hz) ? out->cycles / hz : out->cycles / clock * 1e-9;
}

const char *tessel_roofline_bound_name(const tessel_spec *spec, const tessel_roofline *r)
{
    if (!spec || !r || r->bound < 0 || (unsigned)r->bound >= spec->nlevels ||
        (unsigned)r->bound >= TESSEL_SPEC_MAX_LEVELS)
        return "compute";
    return spec->level[r->bound].name;
}
