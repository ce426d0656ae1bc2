/* The stat estimator's base grid when the caller leaves it open: per
 * workload index, the gcd of the tile edges the designs use, so that every
 * tile the statistics serve is a whole number of base cells and is merged
 * from them exactly; coarsened only where the grid's index arrays would
 * outgrow the data (then the off-grid edges are priced by stat_offgrid.c). */
#include <string.h>

#include "stat_internal.h"

/* The base edge of an index no design tiles (and the ceiling of the
 * automatic choice): the former fixed default, which keeps the statistics
 * (Corrs, the output sample's cells) and the strategies' granularity as
 * they were for specs whose tiles are multiples of it. */
#define STAT_DEFAULT_BASE 128u

/* Rows of base cells an input may have beyond its nonzeros: a tile row
 * costs a pointer even when empty, so a hypersparse input on a fine grid
 * would hold more pointers than nonzeros. */
#define STAT_MIN_ROW_CAP (1u << 16)

void tessel_stat_options_add_tiles(tessel_stat_options *o, const tessel_spec *spec)
{
    for (unsigned l = 1; l < spec->nlevels; l++)
        for (unsigned x = 0; x < spec->workload.nindices && x < TESSEL_SPEC_MAX_INDICES; x++) {
            uint64_t t = spec->level[l].tile[x], ext = spec->workload.extent[x];
            if (t && !(ext && t >= ext))
                o->edge_gcd[x] = tessel_gcd(o->edge_gcd[x], t);
        }
    if (stat_spec_reads_rows(spec)) /* its formats need the rows statistic */
        o->tile_rows = 1;
}

static uint64_t cells(uint64_t extent, uint64_t base)
{
    return extent ? (extent + base - 1) / base : 1;
}

/* Whether the grid `base` (per engine index) keeps every input's rows of
 * cells within max(nnz, STAT_MIN_ROW_CAP), and the output sample's packed
 * cell keys within 62 bits; else the index to coarsen (its base doubled). */
static int over_cap(const engine *e, const uint64_t *base, unsigned *worst)
{
    for (unsigned i = 0; i < e->nin; i++) {
        const operand *op = &e->in[i];
        double rows = 1;
        unsigned most = op->x[0];
        for (unsigned m = 0; m + 1 < op->order || (op->order == 1 && m == 0); m++) {
            rows *= (double)cells(e->extent[op->x[m]], base[op->x[m]]);
            if (cells(e->extent[op->x[m]], base[op->x[m]]) >
                cells(e->extent[most], base[most]))
                most = op->x[m];
        }
        double cap = op->t && op->t->nnz > STAT_MIN_ROW_CAP ? (double)op->t->nnz
                                                            : (double)STAT_MIN_ROW_CAP;
        if (rows > cap && cells(e->extent[most], base[most]) > 1) {
            *worst = most;
            return 1;
        }
    }
    double key = 1;
    unsigned most = 0;
    for (unsigned x = 0; x < e->nx; x++) {
        key *= (double)cells(e->extent[x], base[x]);
        if (cells(e->extent[x], base[x]) > cells(e->extent[most], base[most]))
            most = x;
    }
    if (key > 4.6e18 && cells(e->extent[most], base[most]) > 1) {
        *worst = most;
        return 1;
    }
    return 0;
}

/* A template with its own buffer policy (gamma, outerspace, matraptor,
 * sparsepipe) reads the base grid as its own statistics (row bands,
 * steps), not as the tile model's cells: its tiles say nothing about the
 * grid it wants, so it gets the default grid or the edges it asked for
 * (opt->own_base, tessel_template_stat_options: sparsepipe's blocks). */
static int own_policy_template(const tessel_spec *s)
{
    const char *t = s->template_.name;
    return t[0] && strcmp(t, "none") != 0 && strcmp(t, "extensor") != 0;
}

void stat_auto_base(const engine *e, const tessel_stat_options *opt, uint64_t *base)
{
    int templ = own_policy_template(e->spec);
    for (unsigned x = 0; x < e->nx && templ; x++) {
        int sx = e->spec_index[x];
        uint64_t own = sx >= 0 && (unsigned)sx < TESSEL_SPEC_MAX_INDICES ? opt->own_base[sx] : 0;
        base[x] = own ? own : STAT_DEFAULT_BASE;
    }
    for (unsigned x = 0; x < e->nx && !templ; x++) {
        int sx = e->spec_index[x];
        uint64_t g = sx >= 0 && (unsigned)sx < TESSEL_SPEC_MAX_INDICES ? opt->edge_gcd[sx] : 0;
        for (unsigned l = 1; sx >= 0 && l < e->spec->nlevels; l++) {
            uint64_t t = e->spec->level[l].tile[sx];
            if (t && t < e->extent[x])
                g = tessel_gcd(g, t);
        }
        base[x] = g == 0 || g % STAT_DEFAULT_BASE == 0 ? STAT_DEFAULT_BASE : g;
    }
    /* the cap: doubling keeps half the edges on the grid where a coarser
     * common divisor might keep none */
    unsigned worst;
    for (unsigned guard = 0; guard < 64 * NX && over_cap(e, base, &worst); guard++)
        base[worst] *= 2;
}

void stat_operand_bases(const engine *e, const uint64_t *index_base, const int *same_as,
                        uint64_t mode_base[][3])
{
    for (unsigned i = 0; i < e->nin; i++)
        for (unsigned m = 0; m < 3; m++)
            mode_base[i][m] = m < e->in[i].order ? index_base[e->in[i].x[m]] : 1;
    /* one tensor in two roles (Z = A A) has one grid: the bases of both */
    for (unsigned i = 0; i < e->nin; i++) {
        if (same_as[i] < 0)
            continue;
        unsigned j = (unsigned)same_as[i];
        for (unsigned m = 0; m < e->in[i].order && m < e->in[j].order; m++) {
            uint64_t g = tessel_gcd(mode_base[i][m], mode_base[j][m]);
            mode_base[i][m] = mode_base[j][m] = g;
        }
    }
}
