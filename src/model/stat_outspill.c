/* Rule 4 for an output tile inside one visit in the stat estimator
 * (docs/semantics.md rule 4, "Outputs"): the update steps exact_outspill.c
 * counts from the data, estimated from the visit's operand tiles. */
#define _DEFAULT_SOURCE /* lgamma_r */
#include <math.h>

#include "stat_internal.h"

/* lgamma without its write of the global signgam (a data race between a
 * sweep's threads, make tsan); the same value. */
double model_log_gamma(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

uint64_t stat_step_width(const engine *e, unsigned b)
{
    unsigned kx = e->red[0];
    if (b + 1 >= e->nlev || e->spec_index[kx] < 0)
        return 1;
    return exact_level_edge(e, b + 1, kx);
}

/* Reduction steps of width `step` in reduction tile k of edge tk (the
 * last tile may be cut by the extent). */
double stat_visit_slots(uint64_t k, uint64_t tk, uint64_t extent, uint64_t step)
{
    uint64_t lo = k * tk, hi = lo + tk < extent ? lo + tk : extent;
    uint64_t w = hi > lo ? hi - lo : 1, s = step ? step : 1;
    return (double)((w + s - 1) / s);
}

/* The visit's steps: its `slots` reduction steps each hold a multiply when
 * A's tile (na nonzeros) and B's (nb) both hold a nonzero in it; with the
 * nonzeros spread uniformly, P(a slot of A is empty) = (1 - 1/slots)^na.
 * At least one step: the visit is effectual. */
double stat_visit_steps(double slots, double na, double nb)
{
    if (slots <= 1)
        return 1;
    double ea = exp(na * log1p(-1 / slots)), eb = exp(nb * log1p(-1 / slots));
    double m = floor(slots * (1 - ea) * (1 - eb) + 0.5);
    return m < 1 ? 1 : m;
}

/* Sum over the steps t = 1 .. m - 1 before the visit's last of the bytes
 * beyond the partition, S(t) - part when positive, S growing from b0
 * (before the visit) to b1 (after its last step, which the per-visit
 * charge prices). Each step fills a share of the tile's empty cells, as
 * the homogeneous model's partial tiles do (docs/models/analytic.md):
 * S(t) = full - (full - b0) r^t with r^m = (full - b1) / (full - b0),
 * full the bytes of the whole tile (every cell). A geometric series in
 * closed form; linear when the tile ends full. */
double stat_spill_inside(double b0, double b1, double full, double m, double part)
{
    if (m < 2 || b1 <= part)
        return 0;
    /* linear (d per step) when the tile ends full, or hardly grows (r would
     * round to 1: log r = 0) */
    if (full - b1 <= 1e-9 * full || b1 - b0 <= 1e-9 * full) {
        double d = (b1 - b0) / m, first = 1;
        if (b0 + d <= part)
            first = d > 0 ? floor((part - b0) / d) + 1 : m;
        if (first > m - 1)
            return 0;
        double cnt = m - first;
        return cnt * (b0 - part) + d * (first + m - 1) * cnt / 2;
    }
    double r = pow((full - b1) / (full - b0), 1 / m), first = 1;
    if (b0 + (full - b0) * (1 - r) <= part) /* S(t) > part: r^t < (full - part) / (full - b0) */
        first = floor(log((full - part) / (full - b0)) / log(r)) + 1;
    if (first > m - 1)
        return 0;
    double cnt = m - first;
    return cnt * (full - part) - (full - b0) * pow(r, first) * -expm1(cnt * log(r)) / (1 - r);
}

/* Live groups per tile along the output's rows and columns at boundary
 * bd (exact_live_edge: the order inside a tile), in the canonical roles
 * (mirror: rows are j). */
void stat_live_groups(const engine *e, const boundary *bd, int mirror, double *gi, double *gj)
{
    unsigned xi = e->out.x[0], xj = e->out.x[1];
    double a = ceil((double)bd->tile[xi] / (double)exact_live_edge(e, bd->b, xi, bd->tile[xi]));
    double c = ceil((double)bd->tile[xj] / (double)exact_live_edge(e, bd->b, xj, bd->tile[xj]));
    *gi = mirror ? c : a;
    *gj = mirror ? a : c;
}

/* Whether a visit ending at b1 bytes can spill inside (stat_spill_visit
 * is 0 otherwise): a group's share of the tile exceeds the partition.
 * Callers test it before looking up the visit's operand tiles. */
int stat_spill_visit_over(double b1, double gi, double gj, double part)
{
    double n = gi * gj > 1 ? gi * gj : 1;
    return b1 / n > part;
}

/* Rule 4 inside one visit in the order inside the tile: the tile (A's
 * tile of na nonzeros against B's of nb over `slots` reduction steps,
 * growing from b0 to b1 bytes, full when every cell holds one) is gi x gj
 * live groups, each finished before the next; each takes an equal share
 * of the bytes, A's tile rows (na / gi) and B's columns (nb / gj), and
 * spills at its steps before its last (stat_spill_inside). */
double stat_spill_visit(double slots, double na, double nb, double b0, double b1, double full,
                        double gi, double gj, double part)
{
    double n = gi * gj > 1 ? gi * gj : 1;
    if (!stat_spill_visit_over(b1, gi, gj, part))
        return 0; /* stat_spill_inside's own test, before the steps' exponentials */
    double m = stat_visit_steps(slots, na / (gi > 1 ? gi : 1), nb / (gj > 1 ? gj : 1));
    return n * stat_spill_inside(b0 / n, b1 / n, full / n, m, part);
}

/* Whether a tile-effectual visit (A's and B's tiles both non-empty) holds
 * a multiply, as exact's steps count it: certain when the sample saw an
 * output nonzero first appear in it (grew). Else A's na nonzeros spread
 * uniformly occupy d_A = slots (1 - (1 - 1/slots)^na) of the visit's
 * slots (at least one: the tile is not empty), B's d_B, and two random
 * sets of those sizes miss each other with the hypergeometric chance
 * C(slots - d_A, d_B) / C(slots, d_B) (lgamma for fractional sizes;
 * Gamma's reciprocal takes it smoothly to 0 as d_A + d_B passes slots). A
 * visit without a multiply leaves the tile alone, so only the visits with
 * one spill between visits. Until stop 24 the slots were independent,
 * 1 - (1 - p_A p_B)^slots with p_X = d_X / slots, which lets A's tile be
 * empty in every slot: one nonzero of A against a B tile filling every
 * slot had 1 - (1 - 1/slots)^slots (0.68 at 4 slots) for a certain
 * multiply, and G51's REG visits summed 13 % below their real 87,746
 * (now 3.5 % below). */
double stat_visit_live(double slots, double na, double nb, int grew)
{
    if (grew || slots <= 1)
        return 1;
    double da = -slots * expm1(na * log1p(-1 / slots));
    double db = -slots * expm1(nb * log1p(-1 / slots));
    if (da + db >= slots + 1) /* 1 / Gamma(slots - da - db + 1) = 0 from here on */
        return 1;
    double miss = model_log_gamma(slots - da + 1) + model_log_gamma(slots - db + 1) -
                  model_log_gamma(slots + 1) - model_log_gamma(slots - da - db + 1);
    return -expm1(miss);
}
