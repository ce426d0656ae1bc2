/* Compulsory traffic (docs/semantics.md rule 3): every input read once and the
 * final output written once, each as ONE untiled tensor (a single tile
 * covering every mode) in the backing store's (level 0) format. It
 * depends on the data and the backing store's format only, never on the
 * mapping or the estimator, so that traffic_ratio = dram_bytes /
 * compulsory_bytes compares mappings. What tiling adds to the metadata
 * is reported apart (tessel_model_tiled_metadata).
 *
 * Tensors are priced in the estimators' canonical mode order (the one
 * every estimator prices its tiles in): SpMSpM A[i,k], B[k,j], Z[i,j].
 *
 * What each estimator knows:
 *   exact     everything from the data (per-rank prefixes counted too);
 *   stat      inputs exact for single-name formats and for per-rank
 *             formats of matrices (nonzeros and non-empty rows are the
 *             line counts); a 3-tensor's (i, x) fibres are estimated; the
 *             output's nonzeros are the estimator's estimate, its
 *             non-empty rows an independence estimate from line counts;
 *   analytic  expectations of the density models. */
#include <math.h>

#include "stat_internal.h"

/* Bytes of one whole tensor of `order` modes (shape = its dims) holding
 * nnz nonzeros in level l's format for workload tensor t. occupied[d]
 * (per-rank formats only) is the number of distinct non-empty coordinate
 * prefixes of length d + 1, d < ranks - 1. */
static int untiled_bytes(const tessel_spec *spec, unsigned l, unsigned t, unsigned order,
                         unsigned ranks, const uint64_t *shape, const double *occupied, double nnz,
                         double *bytes, tessel_diag *diag)
{
    const tessel_spec_level *lv = &spec->level[l];
    const tessel_spec_tensor_level *tl = &lv->tensor[t];
    int f = tl->format >= 0 ? tl->format : lv->format;
    tessel_format_widths w = { lv->value_bits, lv->coord_bits, lv->offset_bits, lv->run_bits };
    if (f == TESSEL_SPEC_FORMAT_TILED_CSF) {
        /* untiled, the tensor is one tile: its pointer, its non-empty rows
         * (occupied[0]) as row segments, a coordinate per nonzero's other
         * modes (docs/spec.md, tiled-csf) */
        double meta = (double)order * w.coord_bits + w.offset_bits +
                      occupied[0] * ((double)w.coord_bits + w.offset_bits) +
                      nnz * (double)(order - 1) * w.coord_bits;
        *bytes = ceil(nnz * w.value_bits / 8) + ceil(meta / 8);
        return TESSEL_OK;
    }
    if (f != TESSEL_SPEC_FORMAT_RANKS) {
        double fixed, per;
        tessel_format_footprint_bits(tessel_model_format(f), order, shape, &w, &fixed, &per);
        *bytes = ceil((fixed + nnz * per) / 8);
        return TESSEL_OK;
    }
    unsigned nranks = tl->format >= 0 ? tl->nranks : lv->nranks;
    const unsigned char *r = tl->format >= 0 ? tl->ranks : lv->ranks;
    if (nranks != ranks || ranks > 3) {
        const tessel_spec_pos *p = tl->pos.file ? &tl->pos : &lv->pos;
        return tessel_diag_set(diag, TESSEL_EINVAL, p->file, p->line, p->column, "format",
                               "level %s: %s has %u modes but its format lists %u ranks",
                               lv->name, spec->workload.tensor[t].name, ranks, nranks);
    }
    uint64_t occ[3];
    for (unsigned d = 0; d + 1 < ranks; d++)
        occ[d] = model_count(occupied[d]);
    occ[ranks - 1] = model_count(nnz);
    double db, mb;
    tessel_rank_footprint_bits(r, ranks, shape, occ, &w, &db, &mb);
    *bytes = ceil(db / 8) + ceil(mb / 8);
    return TESSEL_OK;
}

/* Prefix depths level l's format of workload tensor t needs counted. */
static unsigned prefix_depths(const tessel_spec *spec, unsigned l, unsigned t)
{
    const tessel_spec_level *lv = &spec->level[l];
    const tessel_spec_tensor_level *tl = &lv->tensor[t];
    int f = tl->format >= 0 ? tl->format : lv->format;
    if (f == TESSEL_SPEC_FORMAT_TILED_CSF)
        return 1; /* its untiled rows */
    if (f != TESSEL_SPEC_FORMAT_RANKS)
        return 0;
    unsigned n = tl->format >= 0 ? tl->nranks : lv->nranks;
    return n > 1 ? n - 1 : 0;
}

int exact_output_needs_prefixes(const engine *e)
{
    return prefix_depths(e->spec, 0, e->out.spec_tensor) > 0 ||
           (e->spec->nlevels > 1 && prefix_depths(e->spec, 1, e->out.spec_tensor) > 0);
}

/* One tensor untiled in level 0's format (*at0) and in level 1's (*at1,
 * for the tiled-metadata figure), its ranks in each level's rank order:
 * occ counts the prefixes of the operand's own mode order, occ_cols (a
 * matrix's non-empty columns; NULL: not known) those of the swapped one. */
static int both_levels(const engine *e, const operand *o, const uint64_t *shape,
                       const double *occ, const double *occ_cols, double nnz, double *at0,
                       double *at1, tessel_diag *diag)
{
    double b[2] = { 0, 0 };
    int rc = TESSEL_OK;
    for (unsigned l = 0; !rc && l < 2 && l < e->spec->nlevels; l++) {
        unsigned char rm[3];
        uint64_t sh[3];
        const double *oc = occ;
        if (exact_rank_modes(e, o, l, rm)) {
            oc = occ_cols;
            if (!oc && prefix_depths(e->spec, l, o->spec_tensor)) {
                const tessel_spec_tensor_level *tl = &e->spec->level[l].tensor[o->spec_tensor];
                return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, tl->rank_order_pos.file,
                                       tl->rank_order_pos.line, tl->rank_order_pos.column,
                                       "rank_order", "level %s: %s: rule 3 needs the non-empty "
                                       "fibres of this rank order, which only the exact "
                                       "estimator counts, for a matrix",
                                       e->spec->level[l].name,
                                       e->spec->workload.tensor[o->spec_tensor].name);
            }
            if (!oc)
                oc = occ; /* a single-name format: no counts needed */
        }
        for (unsigned d = 0; d < o->order; d++)
            sh[d] = shape[rm[d]];
        rc = untiled_bytes(e->spec, l, o->spec_tensor, o->order, o->ranks, sh, oc, nnz, &b[l],
                           diag);
    }
    *at0 += b[0];
    *at1 += b[1];
    return rc;
}

/* Stores rule 3's figure; the estimator left every level-1 tile once
 * (its tiled floor) in compulsory_bytes, whose excess over the untiled
 * tensors in the same format is what the tiling adds. */
static void store(tessel_result *r, double at0, double at1)
{
    double tiled = (double)r->compulsory_bytes - at1;
    r->tiled_metadata_bytes = !(fabs(tiled) < 9.2e18) ? (tiled < 0 ? INT64_MIN : INT64_MAX)
                                                      : (int64_t)llround(tiled);
    r->compulsory_bytes = model_count(at0);
}

static void operand_shape(const engine *e, const operand *o, uint64_t *shape)
{
    for (unsigned m = 0; m < o->order; m++)
        shape[m] = e->extent[o->x[m]];
}

/* Distinct non-empty rows (and for 3-tensors (row, mode-1) fibres) of a
 * canonical operand, whose entries are sorted within each row. */
static void operand_prefixes(const tessel_tensor *t, double *occ)
{
    uint64_t rows = 0, fibers = 0;
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        rows += t->ptr[r + 1] > t->ptr[r];
        for (uint64_t p = t->ptr[r]; t->order == 3 && p < t->ptr[r + 1]; p++)
            fibers += p == t->ptr[r] || t->idx[1][p] != t->idx[1][p - 1];
    }
    occ[0] = (double)rows;
    occ[1] = (double)fibers;
}

/* Non-empty columns of a matrix operand (the rows of its swapped rank order). */
static int operand_columns(engine *e, const tessel_tensor *t, double *cols)
{
    *cols = 0;
    if (t->order != 2 || !t->dims[1])
        return TESSEL_OK;
    unsigned char *seen = tessel_alloc_array(e->alloc, t->dims[1], 1);
    if (!seen)
        return exact_oom_step(e, "counting a matrix's columns", t->dims[1]);
    memset(seen, 0, t->dims[1]);
    for (uint64_t p = 0; p < t->nnz; p++) {
        *cols += !seen[t->idx[1][p]];
        seen[t->idx[1][p]] = 1;
    }
    tessel_dealloc(e->alloc, seen);
    return TESSEL_OK;
}

int exact_untiled_compulsory(engine *e, const boundary *bd)
{
    double at0 = 0, at1 = 0, occ[2], cols[2] = { 0, 0 };
    uint64_t shape[3];
    for (unsigned i = 0; i < e->nin; i++) {
        const operand *o = &e->in[i];
        operand_shape(e, o, shape);
        operand_prefixes(o->t, occ);
        unsigned char rm[3];
        int swapped = exact_rank_modes(e, o, 0, rm) ||
                      (e->spec->nlevels > 1 && exact_rank_modes(e, o, 1, rm));
        int rc = swapped ? operand_columns(e, o->t, &cols[0]) : TESSEL_OK;
        if (!rc)
            rc = both_levels(e, o, shape, occ, o->order == 2 ? cols : NULL, (double)o->t->nnz,
                             &at0, &at1, e->diag);
        if (rc)
            return rc;
    }
    const out_table *elements = &bd->table[bd->ntables - 1];
    uint64_t nnz = bd->by_rows ? bd->rows_nnz : 0;
    for (uint64_t o = 0; !bd->by_rows && o < elements->nout; o++)
        nnz += elements->cum[elements->start[o + 1] - 1];
    occ[0] = (double)bd->out_prefixes[0];
    occ[1] = (double)bd->out_prefixes[1];
    operand_shape(e, &e->out, shape);
    int rc = both_levels(e, &e->out, shape, occ, NULL, (double)nnz, &at0, &at1, e->diag);
    if (!rc)
        store(e->res, at0, at1);
    return rc;
}

/* Non-empty slices of a line count. */
static double nonempty_lines(const uint64_t *line, uint64_t n, double *nnz)
{
    double rows = 0, sum = 0;
    for (uint64_t r = 0; r < n; r++) {
        rows += line[r] > 0;
        sum += (double)line[r];
    }
    if (nnz)
        *nnz = sum;
    return rows;
}

/* Expected distinct values among n draws from `of` equally likely ones. */
static double distinct(double n, double of)
{
    return of > 0 ? of * -expm1(n * log1p(-1 / of)) : 0;
}

/* The stat estimator's compulsory bytes from line counts (inputs) and the
 * output estimate in e->res->output_nnz. Rows of the output: row i of
 * the first input is productive unless all its a_i nonzeros meet empty
 * rows of the second (independence: probability q^{a_i}, q the share of
 * empty contracted slices); 3-tensors' fibres spread uniformly. */
void stat_census_collect(const engine *e, const stat_input *const *in, stat_census *c)
{
    memset(c, 0, sizeof(*c));
    uint64_t shape[3];
    for (unsigned i = 0; i < e->nin && i < NIN; i++) {
        const operand *o = &e->in[i];
        const stat_input *s = in[i];
        operand_shape(e, o, shape);
        c->rows[i] = nonempty_lines(s->line_nnz[0], s->dims[0], &c->nnz[i]);
        for (uint64_t r = 0; o->order == 3 && r < s->dims[0]; r++)
            c->fibers[i] += distinct((double)s->line_nnz[0][r], (double)shape[1]);
    }
    if (e->nin < 2)
        return;
    const stat_input *a = in[0], *b = in[1];
    double k_nonempty = nonempty_lines(b->line_nnz[0], b->dims[0], NULL);
    double logq = b->dims[0] && k_nonempty < (double)b->dims[0]
                      ? log1p(-k_nonempty / (double)b->dims[0])
                      : -700.0;
    double xs = e->out.order == 3 ? (double)e->extent[e->out.x[1]] : 1;
    for (uint64_t r = 0; r < a->dims[0]; r++) {
        double ai = (double)a->line_nnz[0][r];
        if (ai <= 0)
            continue;
        c->out_rows += -expm1(ai * logq);
        if (e->out.order == 3) {
            double fibers = distinct(ai, xs);
            c->out_fibers += fibers * -expm1(ai / fibers * logq);
        }
    }
}

int stat_compulsory(engine *e, const stat_census *c, tessel_diag *diag)
{
    double at0 = 0, at1 = 0, occ[2];
    uint64_t shape[3];
    for (unsigned i = 0; i < e->nin; i++) {
        const operand *o = &e->in[i];
        operand_shape(e, o, shape);
        occ[0] = c->rows[i];
        occ[1] = c->fibers[i];
        int rc = both_levels(e, o, shape, occ, NULL, c->nnz[i], &at0, &at1, diag);
        if (rc)
            return rc;
    }
    /* Rule 3 takes the symbolic count where the statistics have it (as
     * exact's); the untiled output in level 1's format, which
     * tiled_metadata_bytes subtracts from the estimated tiles, keeps the
     * estimate, so that the difference stays what tiling adds. */
    double est_nnz = (double)e->res->output_nnz, x0 = 0, x1 = 0;
    e->res->compulsory_estimated = !c->out_exact;
    occ[0] = c->out_exact ? fmin(c->est_rows, est_nnz) : fmin(c->out_rows, est_nnz);
    occ[1] = c->out_exact ? fmin(c->est_fibers, est_nnz) : fmin(c->out_fibers, est_nnz);
    operand_shape(e, &e->out, shape);
    int rc = both_levels(e, &e->out, shape, occ, NULL, est_nnz, &x0, &at1, diag);
    if (!rc && c->out_exact) {
        occ[0] = c->out_rows;
        occ[1] = c->out_fibers;
        x0 = 0;
        rc = both_levels(e, &e->out, shape, occ, NULL, c->out_nnz, &x0, &x1, diag);
    }
    if (!rc)
        store(e->res, at0 + x0, at1);
    return rc;
}

int model_compulsory_expected(engine *e, const double *nnz, tessel_diag *diag)
{
    double at0 = 0, at1 = 0, occ[2];
    uint64_t shape[3];
    for (unsigned i = 0; i <= e->nin; i++) {
        const operand *o = i < e->nin ? &e->in[i] : &e->out;
        double n = i < e->nin ? nnz[i] : (double)e->res->output_nnz;
        operand_shape(e, o, shape);
        occ[0] = distinct(n, (double)shape[0]);
        occ[1] = o->order == 3 ? distinct(n, (double)shape[0] * (double)shape[1]) : 0;
        double cols[2] = { o->order == 2 ? distinct(n, (double)shape[1]) : 0, 0 };
        int rc = both_levels(e, o, shape, occ, o->order == 2 ? cols : NULL, n, &at0, &at1, diag);
        if (rc)
            return rc;
    }
    store(e->res, at0, at1);
    return TESSEL_OK;
}

int tessel_model_untiled_bytes(const tessel_spec *spec, unsigned level, unsigned tensor,
                               unsigned order,
                               const uint64_t *dims, const double *occupied, double nnz,
                               double *bytes, tessel_diag *diag)
{
    double none[2] = { 0, 0 };
    if (order < 1 || order > 3 || tensor >= spec->workload.ntensors || level >= spec->nlevels)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "untiled bytes: tensor %u of order %u at level %u", tensor, order,
                               level);
    return untiled_bytes(spec, level, tensor, order, order, dims, occupied ? occupied : none, nnz,
                         bytes, diag);
}
