/* `architecture.timing: pipeline` (docs/models/timing.md has the derivation):
 * per boundary between two levels, the first step's fill, the compute and
 * the last output piece's drain in sequence, every other transfer hidden
 * behind them when the child level has room for two tiles (double
 * buffering), else all transfers and the compute in series; and the cycles
 * a level's network takes to deliver the streamed operand to its child. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tessel/report.h"

/* Bytes per cycle of a port of `gbs` GB/s on every instance of lv (0: unbounded). */
static double rate(const tessel_spec *spec, const tessel_spec_level *lv, double gbs)
{
    double clock = spec->compute.clock_ghz;
    return clock > 0 && gbs > 0 ? gbs * (lv->instances ? lv->instances : 1) / clock : 0;
}

static double cycles_at(double bytes, double per_cycle)
{
    return bytes > 0 && per_cycle > 0 ? bytes / per_cycle : 0;
}

/* Cycles level lv's ports take to read `rd` and write `wr` bytes: one shared
 * port of `bandwidth` (the roofline's), or separate read and write ports
 * working at once when the spec gives either. */
static double port_time(const tessel_spec *spec, const tessel_spec_level *lv, double rd, double wr)
{
    if (!(lv->read_bandwidth > 0) && !(lv->write_bandwidth > 0))
        return cycles_at(rd + wr, rate(spec, lv, lv->bandwidth));
    double r = rate(spec, lv, lv->read_bandwidth > 0 ? lv->read_bandwidth : lv->bandwidth);
    double w = rate(spec, lv, lv->write_bandwidth > 0 ? lv->write_bandwidth : lv->bandwidth);
    return fmax(cycles_at(rd, r), cycles_at(wr, w));
}

/* Boundary l (parent l-1, child l): `in` bytes filled into l and `out`
 * bytes written back from it, at the slower of the two levels' ports. */
static double boundary_time(const tessel_spec *spec, unsigned l, double in, double out)
{
    return fmax(port_time(spec, &spec->level[l - 1], in, out),
                port_time(spec, &spec->level[l], out, in));
}

static double traffic_in(const tessel_traffic *t)
{
    return (double)t->in_data + (double)t->in_metadata;
}

static double traffic_out(const tessel_traffic *t)
{
    return (double)t->out_data + (double)t->out_metadata;
}

/* The child's edge along index x inside level l's tiles: level l+1's tile,
 * below the innermost level the drt micro tile (rows along the output's
 * first index, columns along the others) or one coordinate. */
static uint64_t child_edge(const tessel_spec *spec, const tessel_result *r, unsigned l, unsigned x)
{
    if (l + 1 < spec->nlevels)
        return r->tile[l + 1][x] ? r->tile[l + 1][x] : spec->level[l + 1].tile[x];
    if (strcmp(spec->strategy.name, "drt") == 0)
        return spec->strategy.micro[x == spec->workload.tensor[0].index[0] ? 0 : 1];
    return 1;
}

/* Child tiles along index x inside one of level l's tiles (1 when an edge
 * is unknown). */
static double units_along(const tessel_spec *spec, const tessel_result *r, unsigned l, unsigned x)
{
    uint64_t edge = r->tile[l][x] ? r->tile[l][x] : spec->level[l].tile[x];
    if (!edge)
        edge = r->extent[x] ? r->extent[x] : spec->workload.extent[x];
    uint64_t c = child_edge(spec, r, l, x);
    return edge && c && c < edge ? ceil((double)edge / (double)c) : 1;
}

static int indexes(const tessel_spec_tensor *t, unsigned x)
{
    for (unsigned m = 0; m < t->rank; m++)
        if (t->index[m] == x)
            return 1;
    return 0;
}

/* The pieces an output tile of level l completes in: along every output
 * index the order places outside the first reduction index, the child
 * tiles it holds. Unknown edges count as one piece (the whole tile drains). */
static double output_pieces(const tessel_spec *spec, const tessel_result *r, unsigned l)
{
    double pieces = 1;
    for (unsigned o = 0; o < spec->workload.nindices; o++) {
        unsigned x = spec->level[l].order[o];
        if (!indexes(&spec->workload.tensor[0], x))
            break; /* the first reduction index: no piece is final before its last step */
        pieces *= units_along(spec, r, l, x);
    }
    return pieces;
}

/* A `spatial` split at level l above another level: every tile level l+1
 * fills is read once from level l and delivered to each instance that works
 * on it, the instances along the split indices the tensor lacks (at most the
 * child tiles there are along each); an output's partials come back from as
 * many (spatial reduction). Returns 0 when level l has no such split. */
static int multicast_stage(const tessel_spec *spec, const tessel_result *r, unsigned l,
                           tessel_report_pipeline *p)
{
    const tessel_spec_level *lv = &spec->level[l];
    unsigned c = l + 1;
    int split = 0;
    for (unsigned x = 0; x < spec->workload.nindices; x++)
        split |= lv->spatial[x] > 0;
    if (!split || c >= spec->nlevels)
        return 0;
    double vb = spec->level[c].value_bits ? spec->level[c].value_bits : 64;
    double delivered = 0;
    for (unsigned t = 0; t < r->ntensors; t++) {
        double copies = 1;
        for (unsigned x = 0; x < spec->workload.nindices; x++)
            if (lv->spatial[x] && !indexes(&spec->workload.tensor[t], x))
                copies *= fmin((double)lv->spatial[x], units_along(spec, r, l, x));
        const tessel_traffic *tr = &r->traffic[c][t];
        double bytes = (t == 0 ? (double)tr->out_data : (double)tr->in_data) * copies;
        p->network_bytes[l][t] = bytes;
        p->network_values[l][t] = bytes * 8.0 / vb;
        delivered += p->network_values[l][t];
    }
    if (lv->network_width)
        p->network_cycles[l] = ceil(delivered / (double)lv->network_width);
    return 1;
}

/* Room for two tiles of every tensor at level l (its partition, else its
 * share of the capacity): the next step's fill can land while this step's
 * tiles are in use. A tile is the largest seen, else the mean fill. */
static int double_buffered(const tessel_spec *spec, const tessel_result *r, unsigned l)
{
    const tessel_spec_level *lv = &spec->level[l];
    if (!lv->capacity)
        return 1;
    double total = 0;
    for (unsigned t = 0; t < r->ntensors; t++) {
        const tessel_traffic *tr = &r->traffic[l][t];
        uint64_t moves = tr->fills + tr->updates + tr->writebacks;
        double mean = moves ? (traffic_in(tr) + traffic_out(tr)) / (double)moves : 0;
        double tile = fmax((double)tr->worst_tile_bytes, mean);
        if (tr->partition_bytes && 2 * tile > (double)tr->partition_bytes)
            return 0;
        total += 2 * tile;
    }
    return total <= (double)lv->capacity;
}

/* A template's tail (tessel_tail: OuterSPACE's merge on one PE) starts when
 * every other transfer and the compute are done: at each boundary its reads
 * overlap its compute and its writes follow it; the slowest boundary decides. */
static double tail_time(const tessel_spec *spec, const tessel_result *r)
{
    const tessel_tail *tail = &r->tail;
    double t = 0;
    for (unsigned l = 1; tail->present && l < spec->nlevels; l++)
        t = fmax(t, fmax(boundary_time(spec, l, tail->in_bytes[l], 0), tail->cycles) +
                        boundary_time(spec, l, 0, tail->out_bytes[l]));
    return t;
}

/* Boundary l's stage: transfer, exposed fill and drain, and its time; without
 * the tail's transfers and compute, then the tail (tail_time) after it. */
static void boundary_stage(const tessel_spec *spec, const tessel_result *r, unsigned l,
                           double tail_cycles, tessel_report_pipeline *p)
{
    const tessel_tail *tail = &r->tail;
    double tail_in = tail->present ? tail->in_bytes[l] : 0;
    double tail_out = tail->present ? tail->out_bytes[l] : 0;
    double compute = tail->present ? fmax(0, p->compute - tail->cycles) : p->compute;
    double in = -tail_in, out = -tail_out, first = 0;
    for (unsigned t = 0; t < r->ntensors; t++) {
        const tessel_traffic *tr = &r->traffic[l][t];
        in += traffic_in(tr);
        out += traffic_out(tr);
        uint64_t moves = tr->fills + tr->updates;
        if (t > 0 && moves)
            first += traffic_in(tr) / (double)moves; /* each input's first tile */
    }
    const tessel_traffic *z = &r->traffic[l][0];
    double lanes = (double)spec->compute.pes * (double)spec->compute.macs_per_pe;
    int innermost = l + 1 == spec->nlevels;
    double vb = spec->level[l].value_bits ? spec->level[l].value_bits : 64;
    double values = (double)z->out_data * 8.0 / vb; /* the output's values written back */
    /* The MACs' accumulators emit one result per lane a cycle (SAM's blocks
     * take one token a cycle): only the innermost level's output leaves them. */
    double emit = innermost && lanes > 0 ? values / lanes : 0;
    p->transfer[l] = boundary_time(spec, l, in, out);
    p->fill[l] = boundary_time(spec, l, first, 0);
    p->double_buffered[l] = double_buffered(spec, r, l);
    if (z->writebacks) {
        double pieces = output_pieces(spec, r, l) * (double)z->writebacks;
        p->drain[l] = fmax(boundary_time(spec, l, 0, (traffic_out(z) - tail_out) / pieces),
                           emit / pieces);
    }
    p->stage[l] = p->double_buffered[l] ? fmax(p->transfer[l], p->fill[l] + compute + p->drain[l])
                                        : p->transfer[l] + compute + emit;
    p->stage[l] += tail_cycles;
}

/* Level l's network (`network: {width, deliver}`) delivering to its child
 * (level l+1, or the compute below the innermost level): per step, a tile
 * visit of the child, every lane that holds a value of the stationary input
 * (the one filled least often) receives one value of each streamed input
 * (`dense`, SIGMA's zeros too), or the step's effectual MACs do
 * (`effectual`); a step takes whole cycles of `width` values. */
static void network_stage(const tessel_spec *spec, const tessel_result *r, unsigned l,
                          tessel_report_pipeline *p)
{
    const tessel_spec_level *lv = &spec->level[l];
    unsigned c = l + 1 < spec->nlevels ? l + 1 : l;
    double vb = spec->level[c].value_bits ? spec->level[c].value_bits : 64;
    uint64_t steps = 0, least = UINT64_MAX;
    unsigned stationary = 0;
    for (unsigned t = 1; t < r->ntensors; t++) {
        uint64_t f = r->traffic[c][t].fills + r->traffic[c][t].updates;
        if (f > steps)
            steps = f;
        if (f && f < least) {
            least = f;
            stationary = t;
        }
    }
    if (!steps || !stationary || !lv->network_width)
        return;
    double held = (double)r->traffic[c][stationary].in_data * 8.0 / vb;
    double per_step = lv->network_dense ? held / (double)least : (double)r->macs / (double)steps;
    for (unsigned t = 1; t < r->ntensors; t++) {
        p->network_values[l][t] = t == stationary ? held : per_step * (double)steps;
        p->network_bytes[l][t] = p->network_values[l][t] * vb / 8.0;
    }
    p->network_cycles[l] = (double)steps * ceil(per_step / (double)lv->network_width);
    /* Per step (dense, exact): each stationary fill's own ceil(values / width),
     * once per streamed step it stays for (steps / its fills: STONNE's
     * per-fold ceilings, every column of a fold takes its fold's cycles). */
    uint64_t per_fill = r->traffic[c][stationary].fill_network_cycles;
    if (lv->network_dense && c == l + 1 && per_fill)
        p->network_cycles[l] = (double)steps / (double)least * (double)per_fill;
}

/* The energy of level l's deliveries: each value once over the network's
 * hop at its pJ per value (tessel_design_energy.network), NaN unpriced. */
static void network_price(const tessel_design_energy *e, const tessel_result *r, unsigned l,
                          tessel_report_pipeline *p)
{
    int priced = e->network[l].method[0] != '\0';
    for (unsigned t = 0; t < r->ntensors; t++) {
        double v = p->network_values[l][t];
        p->network_pj[l][t] = priced ? v * e->network[l].pj[TESSEL_ACTION_READ] : NAN;
        if (priced && v > 0)
            p->network_energy_pj += p->network_pj[l][t];
    }
}

void tessel_report_pipeline_apply(const tessel_spec *spec, const tessel_result *result,
                                  tessel_report_point *pt)
{
    tessel_report_pipeline *p = &pt->pipeline;
    tessel_roofline *rf = &pt->roofline;
    memset(p, 0, sizeof(*p));
    p->present = 1;
    p->compute = fmax(rf->compute_cycles, isnan(pt->spatial_cycles) ? 0 : pt->spatial_cycles);
    p->cycles = rf->cycles;
    const char *what = NULL;
    unsigned at = 0;
    double tail = tail_time(spec, result);
    for (unsigned l = 0; l < spec->nlevels; l++) {
        if (l > 0) {
            boundary_stage(spec, result, l, tail, p);
            if (p->stage[l] > p->cycles) {
                p->cycles = p->stage[l];
                what = "pipeline";
                at = l;
            }
        }
        if (!multicast_stage(spec, result, l, p))
            network_stage(spec, result, l, p);
        network_price(&pt->energy, result, l, p);
        if (p->network_cycles[l] > p->cycles) {
            p->cycles = p->network_cycles[l];
            what = "network";
            at = l;
        }
    }
    if (!what)
        return; /* the roofline's bound decides */
    rf->cycles = p->cycles;
    rf->bound = (int)at;
    rf->compute_utilization = rf->compute_cycles / rf->cycles;
    for (unsigned l = 0; l < spec->nlevels; l++)
        rf->level_utilization[l] = rf->level_cycles[l] / rf->cycles;
    double hz = spec->compute.clock_ghz * 1e9;
    if (spec->compute.clock_ghz > 0)
        rf->seconds = isfinite(hz) ? rf->cycles / hz : rf->cycles / spec->compute.clock_ghz * 1e-9;
    char name[TESSEL_SPEC_NAME_MAX + 16];
    snprintf(name, sizeof(name), "%s:%s", what, spec->level[at].name);
    size_t n = strlen(name) < sizeof(pt->bound) ? strlen(name) : sizeof(pt->bound) - 1;
    memcpy(pt->bound, name, n);
    pt->bound[n] = '\0';
}
