/* The analytic estimator: SpMSpM traffic in closed form for inputs given
 * as density models (Sparseloop's vocabulary), without data and without
 * drawing an instance. Cost O(tiles along k), whatever the matrix size.
 *
 * The tile occupancy of each input comes from its model's exact per-tile
 * distributions (tessel_density_occupancy_create: expected non-empty
 * tiles and nonzeros, edge tiles included). The model is then taken as
 * homogeneous, with independent inputs: a tile is non-empty with
 * probability p = E[non-empty tiles] / tiles, so the sums over the tiling
 * domain of d2t2 eqs. 13-17 become expectations of binomial counts, and
 * the output follows eq. 19 with independent multiplies (for uniform
 * inputs D2T2's Corrs are the density, eq. 20's divisor is 1). That holds
 * for uniform and N:M models. A banded model is not homogeneous (its
 * non-empty tiles line the diagonal), so it is refused: `stat` on its
 * synthetic instance handles it.
 *
 * Canonical loop orders as in stat.c: IJK, IKJ, KIJ, the other three by
 * mirroring Z^T = B^T A^T. */
#include <math.h>
#include <string.h>

#include "stat_internal.h"

/* One operand as the estimator sees it. */
typedef struct operand_model {
    tessel_density_model model; /* in operand orientation: rows x cols */
    double tiles, nonempty, nnz;
    double p;                   /* P(tile non-empty) */
    double data, meta;          /* expected bytes of a non-empty tile */
    double density;             /* per element */
    unsigned spec_tensor;
    int model_index, flip;      /* the spec tensor holding the model; rows are its columns */
} operand_model;

/* The spec tensor a binding finally names, and whether it is transposed
 * on the way (`B: A^T`). -1 when it is no density model. */
static int model_of(const tessel_spec *s, unsigned t, int *transposed)
{
    *transposed = 0;
    for (unsigned hops = 0; hops < TESSEL_SPEC_MAX_TENSORS; hops++) {
        const tessel_spec_tensor *st = &s->workload.tensor[t];
        if (st->model.present)
            return (int)t;
        if (!st->data)
            return -1;
        size_t n = strlen(st->data);
        int tr = n > 2 && strcmp(st->data + n - 2, "^T") == 0;
        int found = -1;
        for (unsigned u = 1; u < s->workload.ntensors; u++)
            if (strncmp(s->workload.tensor[u].name, st->data, tr ? n - 2 : n) == 0 &&
                s->workload.tensor[u].name[tr ? n - 2 : n] == '\0')
                found = (int)u;
        if (found < 0)
            return -1;
        *transposed ^= tr;
        t = (unsigned)found;
    }
    return -1;
}

static int not_model(const tessel_spec *s, unsigned t, tessel_diag *diag)
{
    const tessel_spec_tensor *st = &s->workload.tensor[t];
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, st->pos.file, st->pos.line, st->pos.column,
                           "workload.data",
                           "the analytic estimator needs density models; %s is bound to '%s' "
                           "(use --estimator stat or exact for data)",
                           st->name, st->data ? st->data : "nothing");
}

/* Operand o's model in the orientation the einsum uses it (rows = its
 * first engine index). */
static int operand_setup(const engine *e, unsigned i, const uint64_t *tile, operand_model *om,
                         tessel_diag *diag)
{
    const tessel_spec *s = e->spec;
    unsigned t = e->in[i].spec_tensor;
    int transposed;
    int m = model_of(s, t, &transposed);
    if (m < 0)
        return not_model(s, t, diag);
    const tessel_spec_tensor *mt = &s->workload.tensor[m];
    memset(om, 0, sizeof(*om));
    om->spec_tensor = t;
    tessel_density_model *d = &om->model;
    d->kind = (tessel_density_kind)mt->model.kind;
    d->rows = mt->model.rows;
    d->cols = mt->model.cols;
    d->nnz = mt->model.nnz;
    d->density = mt->model.density;
    d->n = mt->model.n;
    d->m = mt->model.m;
    d->bandwidth = mt->model.bandwidth;
    /* the spec tensor's own mode order against the operand's */
    const tessel_spec_tensor *st = &s->workload.tensor[t];
    int flip = transposed ^ ((int)st->index[0] != e->spec_index[e->in[i].x[0]]);
    uint64_t occ_tile[2] = { tile[flip], tile[!flip] };
    tessel_density_occupancy *occ = NULL;
    int rc = tessel_density_occupancy_create(d, occ_tile, e->alloc, &occ, diag);
    if (rc)
        return rc;
    om->tiles = (double)occ->tiles;
    om->nonempty = occ->nonempty;
    om->nnz = occ->nnz;
    tessel_density_occupancy_free(&occ);
    if (flip) {
        uint64_t r = d->rows;
        d->rows = d->cols;
        d->cols = r;
    }
    om->model_index = m;
    om->flip = flip;
    om->p = om->tiles > 0 ? om->nonempty / om->tiles : 0;
    om->p = om->p < 0 ? 0 : om->p > 1 ? 1 : om->p; /* rounding of the sums */
    om->density = om->nnz / ((double)d->rows * (double)d->cols);
    return TESSEL_OK;
}

/* Expected bytes of a non-empty tile holding `mean` nonzeros on average
 * (footprints are affine in the count). */
static void tile_bytes_mean(const tile_cost *tc, double mean, double *data, double *meta)
{
    double fixed, per;
    tessel_format_footprint_bits(tc->format, tc->order, tc->shape, &tc->widths, &fixed, &per);
    *data = mean * tc->widths.value_bits / 8;
    *meta = (fixed + mean * per) / 8 - *data;
    if (*meta < 0)
        *meta = 0;
}

/* ------------------------------------------------------------------ */
/* Closed forms. nI, nK, nJ: tiles along i, k, j. */

typedef struct closed {
    double nI, nK, nJ;
    double pA, pB;
    double E;  /* effectual tile iterations */
} closed;

static double binom_pmf(double n, double p, double k)
{
    if (p <= 0)
        return k == 0 ? 1 : 0;
    if (p >= 1)
        return k == n ? 1 : 0;
    double l = model_log_gamma(n + 1) - model_log_gamma(k + 1) -
               model_log_gamma(n - k + 1) + k * log(p) + (n - k) * log1p(-p);
    return exp(l);
}

/* IJK: A tiles reused between consecutive effectual (i, j) of a row,
 * when the last effectual k of one pair is the first of the next. For a
 * row with a non-empty tiles, each pair's effectual k are an independent
 * p_B-subset of them: P(max S1 = min S2 | both non-empty) =
 * a pB^2 (1-pB)^(a-1) / (1 - (1-pB)^a)^2, over nJ (1 - (1-pB)^a) - 1
 * junctions. */
static double ijk_a_saves(const closed *c)
{
    double saves = 0, pB = c->pB;
    for (double a = 1; a <= c->nK; a++) {
        double pa = binom_pmf(c->nK, c->pA, a);
        if (pa < 1e-300)
            continue;
        double hit = 1 - pow(1 - pB, a);
        if (hit <= 0)
            continue;
        double junctions = c->nJ * hit - 1;
        if (junctions <= 0)
            continue;
        double same = a * pB * pB * pow(1 - pB, a - 1) / (hit * hit);
        saves += pa * junctions * same;
    }
    return c->nI * saves;
}

/* action_optimization at the backing store (model_scalar.c, docs/semantics.md
 * "At an outer level"): the expected fills of each input without the
 * skipping (a fill at every change of its non-empty tile in loop order) less
 * its fills, times the mean non-empty tile's nonzeros and metadata. A row of
 * A's tiles (I) with one non-empty tile keeps it across j under IJK; one with
 * a >= 2 refills each across every j. B's non-empty tiles repeat per i
 * under IJK and IKJ (one in all stays), per k row under KIJ (one in its row
 * stays across i). */
static void outer_dense(engine *e, const closed *c, const char *canon, unsigned ia,
                        double fillsA, double fillsB, double nzA, double mA, double nzB,
                        double mB)
{
    double dA, dB;
    if (strcmp(canon, "IJK") == 0) {
        double one = binom_pmf(c->nK, c->pA, 1);
        dA = c->nI * (one + (c->nK * c->pA - one) * c->nJ);
    } else {
        dA = c->nI * c->nK * c->pA;
    }
    if (strcmp(canon, "KIJ") == 0) {
        double one = binom_pmf(c->nJ, c->pB, 1);
        dB = c->nK * (one + (c->nJ * c->pB - one) * c->nI);
    } else {
        double one = binom_pmf(c->nK * c->nJ, c->pB, 1);
        dB = c->nI * c->nK * c->nJ * c->pB - (c->nI - 1) * one;
    }
    double sA = dA > fillsA ? dA - fillsA : 0, sB = dB > fillsB ? dB - fillsB : 0;
    e->outer_nnz[0][ia] = sA * nzA;
    e->outer_meta[0][ia] = sA * mA;
    e->outer_nnz[0][1 - ia] = sB * nzB;
    e->outer_meta[0][1 - ia] = sB * mB;
}

static void set_input(tessel_traffic *tr, double fills, double data, double meta, double bumped)
{
    tr->fills = model_count(fills);
    double d = fills * data, m = fills * meta;
    double bm = bumped > 0 && data + meta > 0 ? bumped * meta / (data + meta) : 0;
    tr->in_data = model_count(d + (bumped > 0 ? bumped - bm : 0));
    tr->in_metadata = model_count(m + bm);
    tr->bumped_bytes = model_count(bumped);
    tr->overflow_bytes = tr->bumped_bytes;
    tr->worst_tile_bytes = model_count(data + meta);
}

/* Rule 4 on the expected tile: the overflow streams on each reuse. */
static double overflow(double data, double meta, uint64_t part)
{
    double total = data + meta;
    return part && total > (double)part ? total - (double)part : 0;
}

/* Rule 4 for the output (docs/semantics.md rule 4; Tailors §3.3, §6.2), as the exact
 * walk prices it: after a visit whose run continues at the next visit,
 * the part of the tile's partial results beyond Z's partition spills to
 * the parent and is read back by that next visit. Homogeneous model: the
 * tile holds cells (1 - rho^(t+1)) nonzeros after reduction tile t; a
 * visit at t continues its run when a later visit exists (IJK: the pair's
 * next effectual k; nJ = 1 under IKJ likewise) or, under IKJ and KIJ with
 * several tiles along the free indices, when the next effectual k's tile
 * rows start on the tile the previous one ended on (merge). Returns the
 * expected spilled bytes (each moves out once and back in once). */
static double output_spill(const closed *c, const char *canon, double cells, double rho,
                           double d1, double m0, double m1, uint64_t part)
{
    if (!part || m0 + cells * (d1 + m1) <= (double)part)
        return 0;
    double ab = c->pA * c->pB, qA = 1 - pow(1 - c->pA, c->nI), qB = 1 - pow(1 - c->pB, c->nJ);
    /* P(a row of B's tiles ends on the tile the next row starts on),
     * given both rows non-empty; the same for A's tile columns */
    double mB = qB > 0 ? c->nJ * c->pB * c->pB * pow(1 - c->pB, c->nJ - 1) / (qB * qB) : 0;
    double mA = qA > 0 ? c->nI * c->pA * c->pA * pow(1 - c->pA, c->nI - 1) / (qA * qA) : 0;
    double spill = 0, w = rho;
    for (double t = 0; t < c->nK && t < 65536; t++, w *= rho) {
        double over = m0 + cells * (1 - w) * (d1 + m1) - (double)part;
        if (over <= 0 || t + 1 >= c->nK) /* no visit after the last (0 x log 0: NaN) */
            continue;
        double later;
        if (strcmp(canon, "IJK") == 0) /* every pair, a visit at t and one after */
            later = c->nI * c->nJ * ab * -expm1((c->nK - 1 - t) * log1p(-ab));
        else if (strcmp(canon, "IKJ") == 0) /* per row i, an effectual k and a next one */
            later = c->nI * c->pA * qB * -expm1((c->nK - 1 - t) * log1p(-c->pA * qB)) * mB;
        else
            later = qA * qB * -expm1((c->nK - 1 - t) * log1p(-qA * qB)) * mA * mB;
        spill += later * over;
    }
    return spill;
}

/* a + b, saturating at 2^64 - 1 (a saturated count is refused later) */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Rule 4 inside a visit (docs/semantics.md rule 4): the compute adds one
 * reduction coordinate at a time, and every update step of a pair but the
 * last of its visit spills the tile's bytes beyond Z's partition (the
 * visit's last step is output_spill's). Homogeneous model: coordinate u of
 * a pair is a step (holds a multiply) with ps = P(A's rows of I hold a
 * nonzero in column u) P(B's columns of J one in row u); after global
 * coordinate g the tile holds cells (1 - (1 - q)^(g+1)) nonzeros. Returns
 * the expected spilled bytes over all pairs. */
static double output_spill_inside(const closed *c, double tk, double ps, double cells, double q,
                                  double d1, double m0, double m1, uint64_t part)
{
    if (!part || m0 + cells * (d1 + m1) <= (double)part || ps <= 0)
        return 0;
    double spill = 0, lq = log1p(-q), lps = log1p(-ps);
    for (double t = 0; t < c->nK && t * tk < 4194304; t++)
        for (double u = 0; u + 1 < tk && t * tk + u < 4194304; u++) {
            double over = m0 + cells * -expm1((t * tk + u + 1) * lq) * (d1 + m1) - (double)part;
            if (over > 0)
                spill += ps * -expm1((tk - 1 - u) * lps) * over;
        }
    return c->nI * c->nJ * spill;
}

/* An uncompressed output (rule 2 with a dense tile): each write-back and
 * read-back moves the whole tile, the first visit of a tile pair reads
 * nothing back; at the compute the MACs read the partial sum before every
 * update but those of the first reduction coordinate, E[MACs] (K - 1) / K
 * rounded down as Sparseloop counts it (issue 26; exact_dense.c). */
static void dense_output(engine *e, const closed *c, const char *canon, const tile_cost *cz,
                        double nnz, double macs, double pairs, double K)
{
    tessel_result *r = e->res;
    tessel_traffic *tz = &r->traffic[1][0];
    uint64_t occ[2] = { cz->shape[0], cz->shape[0] * cz->shape[1] }, data, meta;
    exact_tile_bytes(cz, occ[1], occ, &data, &meta);
    double wb = pairs, up = 0;
    if (strcmp(canon, "IJK") != 0) {
        wb = c->E;
        up = c->E - pairs;
    }
    tz->writebacks = model_count(wb);
    tz->updates = model_count(up);
    tz->out_data = model_count(wb * (double)data);
    tz->out_metadata = model_count(wb * (double)meta);
    tz->in_data = model_count(up * (double)data);
    tz->in_metadata = model_count(up * (double)meta);
    uint64_t partZ = exact_partition_bytes(e, 1, 0);
    tz->partition_bytes = partZ;
    tz->worst_tile_bytes = data + meta;
    if (partZ && data + meta > partZ)
        tz->overflow_tiles = tz->writebacks;
    r->macs = model_count(macs);
    r->output_nnz = model_count(nnz);
    double reads = K > 0 ? floor(macs * (K - 1) / K) : 0;
    e->dense_first_set = 1;
    e->dense_first = r->macs > (uint64_t)reads ? r->macs - (uint64_t)reads : 0;
}

/* Traffic of one loop order and tile shape (ti, tk, tj) at the buffer level from the
 * density models: fills, reads and spills of A, B and Z into e->res. */
static int evaluate(engine *e, const operand_model *oa, const operand_model *ob,
                    const char *order, double ti, double tk, double tj, const boundary *bd,
                    tessel_diag *diag)
{
    (void)diag;
    tessel_result *r = e->res;
    const tessel_spec *s = e->spec;
    tile_cost ca, cb, cz;
    int rc = exact_tile_cost_init(e, bd, &e->in[0], &ca);
    if (!rc)
        rc = exact_tile_cost_init(e, bd, &e->in[1], &cb);
    if (!rc)
        rc = exact_tile_cost_init(e, bd, &e->out, &cz);
    if (rc)
        return rc;
    /* an uncompressed output ([UB, UB]): a dense tile, the same bytes at
     * every write-back (docs/semantics.md, dense outputs) */
    int zdense = cz.ranked && model_tensor_uncompressed(s, 1, e->out.spec_tensor);
    if (ca.ranked || cb.ranked || (cz.ranked && !zdense) || ca.tiled || cb.tiled || cz.tiled)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, s->level[1].pos.file,
                               s->level[1].pos.line, s->level[1].pos.column, "format",
                               "the analytic estimator prices single-name formats and an "
                               "uncompressed output ([UB, UB]), not other per-rank lists or "
                               "tiled-csf");
    /* mirror: orders with j outside i swap the operands */
    int mirror = strcmp(order, "JIK") == 0 || strcmp(order, "JKI") == 0 ||
                 strcmp(order, "KJI") == 0;
    const operand_model *A = mirror ? ob : oa, *B = mirror ? oa : ob;
    const tile_cost *cA = mirror ? &cb : &ca, *cB = mirror ? &ca : &cb;
    double I = (double)(mirror ? ob->model.cols : oa->model.rows);
    double J = (double)(mirror ? oa->model.rows : ob->model.cols);
    double K = (double)oa->model.cols;
    if (mirror) {
        double t = ti;
        ti = tj;
        tj = t;
    }
    char canon[4];
    /* k's position decides: innermost IJK, middle IKJ, outermost KIJ */
    const char *kp = strchr(order, 'K');
    memcpy(canon, kp == order + 2 ? "IJK" : kp == order + 1 ? "IKJ" : "KIJ", 4);
    closed c = { ceil(I / ti), ceil(K / tk), ceil(J / tj), A->p, B->p, 0 };
    c.E = c.nK * c.nI * c.pA * c.nJ * c.pB;
    double dA, mA, dB, mB;
    tile_bytes_mean(cA, A->nonempty > 0 ? A->nnz / A->nonempty : 0, &dA, &mA);
    tile_bytes_mean(cB, B->nonempty > 0 ? B->nnz / B->nonempty : 0, &dB, &mB);
    uint64_t partA = exact_partition_bytes(e, 1, A->spec_tensor);
    uint64_t partB = exact_partition_bytes(e, 1, B->spec_tensor);
    double qA = 1 - pow(1 - c.pA, c.nI), qB = 1 - pow(1 - c.pB, c.nJ);
    double fillsA, fillsB, bumpA = 0, bumpB = 0;
    if (strcmp(canon, "IJK") == 0) {
        double saves = ijk_a_saves(&c);
        fillsA = c.E - saves;
        bumpA = saves * overflow(dA, mA, partA);
    } else {
        fillsA = c.nI * c.nK * c.pA * qB;
        bumpA = c.nI * c.nK * c.pA * (c.nJ * c.pB - qB) * overflow(dA, mA, partA);
    }
    if (strcmp(canon, "KIJ") == 0) {
        double one = c.nJ * c.pB * pow(1 - c.pB, c.nJ - 1); /* P(B tile row holds one tile) */
        fillsB = c.nK * (one * qA + (c.nJ * c.pB - one) * c.nI * c.pA);
        bumpB = c.nK * one * (c.nI * c.pA - qA) * overflow(dB, mB, partB);
    } else {
        fillsB = c.E;
    }
    if (e->nlev == 2) {
        /* Rule 4 per read of the compute (exact_inspill.c), in the level's
         * order (the canonical one above follows the tile loops): a tile
         * of A read per expected non-empty column of B in its k band
         * (fibres) or each A(i, k) per expected nonzero of B's row k
         * (elements); B mirrored. The expected whole reads of the tiles
         * beyond their fills move the bumped part again. */
        int kA = exact_inspill_reads(e, 1, mirror ? 1 : 0);
        int kB = exact_inspill_reads(e, 1, mirror ? 0 : 1);
        double rA = kA == EXACT_READS_FIBRES ? J * -expm1(tk * log1p(-B->density)) : J * B->density;
        double rB = kB == EXACT_READS_FIBRES ? I * -expm1(tk * log1p(-A->density)) : I * A->density;
        rA *= c.nI * c.nK * c.pA;
        rB *= c.nK * c.nJ * c.pB;
        if (kA != EXACT_READS_ONCE)
            bumpA = (rA > fillsA ? rA - fillsA : 0) * overflow(dA, mA, partA);
        if (kB != EXACT_READS_ONCE)
            bumpB = (rB > fillsB ? rB - fillsB : 0) * overflow(dB, mB, partB);
    }
    set_input(&r->traffic[1][A->spec_tensor], fillsA, dA, mA, bumpA);
    set_input(&r->traffic[1][B->spec_tensor], fillsB, dB, mB, bumpB);
    /* the expected tile against the partition: all fills or none */
    r->traffic[1][A->spec_tensor].partition_bytes = partA;
    r->traffic[1][B->spec_tensor].partition_bytes = partB;
    if (overflow(dA, mA, partA) > 0)
        r->traffic[1][A->spec_tensor].overflow_tiles = r->traffic[1][A->spec_tensor].fills;
    if (overflow(dB, mB, partB) > 0)
        r->traffic[1][B->spec_tensor].overflow_tiles = r->traffic[1][B->spec_tensor].fills;

    /* Output: independent multiplies, q per (i, k, j). A product of a
     * matrix with its own transpose (B: A^T) is a Gram matrix instead:
     * its diagonal holds every non-empty line, and the multiplies are
     * sums of squared line counts (binomial: E[c^2] = L d (1 - d) +
     * (L d)^2). */
    int gram = oa->model_index == ob->model_index && oa->flip != ob->flip;
    double q = A->density * B->density;
    double pz = -expm1(K * log1p(-q));               /* P(Z[i,j] != 0) */
    double nnz = I * J * pz;
    double macs = A->nnz * B->nnz / (K > 0 ? K : 1);
    double pdiag = 0; /* gram: P(a diagonal element is non-zero) */
    if (gram) {
        double d = A->density;
        pdiag = -expm1(K * log1p(-d));
        nnz = I * pdiag + I * (I - 1) * pz;
        macs = K * (I * d * (1 - d) + I * d * I * d);
    }
    double pairs = c.nI * c.nJ * -expm1(c.nK * log1p(-c.pA * c.pB));
    double cells = ti * tj;
    double out_tiles = c.nI * c.nJ * -expm1(cells * log1p(-pz));
    if (gram) {
        /* the diagonal crosses about max(nI, nJ) tiles, min(ti, tj) cells each */
        double nd = c.nI > c.nJ ? c.nI : c.nJ, dcells = ti < tj ? ti : tj;
        double empty_d = exp(cells * log1p(-pz) + dcells * log1p(-pdiag));
        out_tiles += nd * (exp(cells * log1p(-pz)) - empty_d);
        pz = nnz / (I * J); /* the mean, for the partial sums below */
    }
    double zfixed, zper;
    tessel_format_footprint_bits(cz.format, cz.order, cz.shape, &cz.widths, &zfixed, &zper);
    double d1 = cz.widths.value_bits / 8.0, m0 = zfixed / 8, m1 = zper / 8 - d1;
    if (zdense) {
        dense_output(e, &c, canon, &cz, nnz, macs, pairs, K);
    } else {
        tessel_traffic *tz = &r->traffic[1][0];
        double written = nnz, wb = pairs, up = 0;
        if (strcmp(canon, "IJK") != 0) {
            /* A nonzero first appears at reduction tile t0 (geometric in the
             * tiles' chance of no multiply, rho) and is written back at every
             * later visit of its tile pair (each k tile a visit with pA pB). */
            double rho = exp(tk * log1p(-q)), norm = -expm1(c.nK * log(rho > 0 ? rho : 1e-300));
            double later = 0, w = 1;
            for (double t = 0; t < c.nK && norm > 0; t++, w *= rho)
                later += w * (1 - rho) / norm * (c.nK - 1 - t);
            written = nnz * (1 + c.pA * c.pB * later);
            wb = c.E;
            up = c.E - pairs;
        }
        double read = written - nnz;
        tz->writebacks = model_count(wb);
        tz->updates = model_count(up);
        tz->out_data = model_count(written * d1);
        tz->out_metadata = model_count(wb * m0 + written * m1);
        tz->in_data = model_count(read * d1);
        tz->in_metadata = model_count((up > 0 ? up : 0) * m0 + read * m1);
        uint64_t partZ = exact_partition_bytes(e, 1, 0);
        double spill = output_spill(&c, canon, cells, exp(tk * log1p(-q)), d1, m0, m1, partZ);
        /* inside a visit, per live group of the order inside the tile
         * (exact_live_edge): a group of li x lj cells with its share of the
         * tile's fixed metadata, steps where its rows of A and columns of B
         * both hold a nonzero */
        double li = (double)exact_live_edge(e, 1, mirror ? 1 : 0, (uint64_t)ti);
        double lj = (double)exact_live_edge(e, 1, mirror ? 0 : 1, (uint64_t)tj);
        double groups = ceil(ti / li) * ceil(tj / lj);
        double ps = -expm1(li * log1p(-A->density)) * -expm1(lj * log1p(-B->density));
        spill += groups * output_spill_inside(&c, tk, ps, li * lj, q, d1, m0 / groups, m1, partZ);
        if (spill > 0) {
            double sm = written > 0 ? spill * (wb * m0 + written * m1) /
                                          (wb * m0 + written * (d1 + m1))
                                    : 0;
            tz->out_data = sat_add(tz->out_data, model_count(spill - sm));
            tz->in_data = sat_add(tz->in_data, model_count(spill - sm));
            tz->out_metadata = sat_add(tz->out_metadata, model_count(sm));
            tz->in_metadata = sat_add(tz->in_metadata, model_count(sm));
            tz->bumped_bytes = model_count(spill);
            tz->overflow_bytes = 2 * tz->bumped_bytes;
        }
        /* the mean write-back against the partition */
        double mean_wb = wb > 0 ? m0 + written / wb * (d1 + m1) : 0;
        tz->partition_bytes = partZ;
        tz->worst_tile_bytes = model_count(m0 + cells * pz * (d1 + m1) > mean_wb
                                               ? m0 + cells * pz * (d1 + m1) : mean_wb);
        if (partZ && mean_wb > (double)partZ)
            tz->overflow_tiles = tz->writebacks;
    }

    r->effectual_tiles[1] = model_count(c.E);
    r->macs = model_count(macs);
    r->output_nnz = model_count(nnz);
    double meanA = A->nonempty > 0 ? A->nnz / A->nonempty : 0;
    double meanB = B->nonempty > 0 ? B->nnz / B->nonempty : 0;
    r->intersections = model_count(c.E * (meanA + meanB));
    double coord = s->level[1].coord_bits / 8.0; /* 4-bit coordinates are half a byte */
    r->traffic[1][A->spec_tensor].child_read_metadata = model_count(c.E * meanA * coord);
    r->traffic[1][B->spec_tensor].child_read_metadata = model_count(c.E * meanB * coord);
    if (e->nlev == 2)
        outer_dense(e, &c, canon, mirror ? 1 : 0, fillsA, fillsB, meanA, mA, meanB, mB);
    if (e->nlev == 2) {
        /* scalar action_optimization (model_scalar.c): per effectual tile
         * iteration A's nonzeros and format once per j of the tile, B's
         * once per i; exact_scalar_finish splits them */
        unsigned ia = mirror ? 1 : 0;
        e->scalar_reads[ia] = c.E * meanA * (tj < J ? tj : J);
        e->scalar_format[ia] = c.E * mA * (tj < J ? tj : J);
        e->scalar_reads[1 - ia] = c.E * meanB * (ti < I ? ti : I);
        e->scalar_format[1 - ia] = c.E * mB * (ti < I ? ti : I);
        /* compute_optimization: the same nonzero points, and the tiles'
         * points (model_scalar.c) */
        e->compute_nz[ia] = e->scalar_reads[ia];
        e->compute_nz[1 - ia] = e->scalar_reads[1 - ia];
        e->compute_points = c.E * (ti < I ? ti : I) * (tj < J ? tj : J) * (tk < K ? tk : K);
        e->compute_macs = macs; /* unrounded, as Sparseloop's probabilities */
    }
    r->compulsory_bytes = model_count(A->nonempty * (dA + mA) + B->nonempty * (dB + mB) +
                                            out_tiles * m0 + nnz * (d1 + m1));
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Banded models: their non-empty tiles line the diagonal, so the tiles
 * are not alike and the closed forms above do not hold. Instead every
 * tile's chance of holding a nonzero is computed from the band cells it
 * covers, the tiles that more likely hold one than not make the tile
 * grids, and the output's nonzeros are summed element by element along
 * the band with their first multiply's reduction tile (truncated
 * geometric over the k both bands share); the closed sums of the stat
 * estimator (stat_spmspm.c) then price both. Cost: the band's output
 * elements times the reduction tiles each spans. */

#define BAND_ELEMENTS_MAX 50000000.0

/* Band cells |r - c| <= w of rows [r0, r1) and columns [c0, c1). */
static uint64_t band_cells(uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1, uint64_t w)
{
    uint64_t n = 0;
    for (uint64_t r = r0; r < r1; r++) {
        uint64_t lo = r > w ? r - w : 0, hi = r + w;
        lo = lo > c0 ? lo : c0;
        hi = hi < c1 - 1 ? hi : c1 - 1;
        n += hi >= lo ? hi - lo + 1 : 0;
    }
    return n;
}

static int band_grid(const operand_model *om, uint64_t tr, uint64_t tc, const tessel_allocator *a,
                     stat_grid *g)
{
    const tessel_density_model *d = &om->model;
    uint64_t R = d->rows, C = d->cols, w = d->bandwidth;
    uint64_t nr = (R + tr - 1) / tr, nc = (C + tc - 1) / tc;
    /* each tile row meets at most (tr + 2w) / tc + 2 tile columns */
    uint64_t per = (tr + 2 * w) / tc + 2, cap = nr * (per < nc ? per : nc);
    if (stat_grid_alloc_like(nr, nc, cap, a, g))
        return TESSEL_ENOMEM;
    uint64_t n = 0;
    for (uint64_t r = 0; r < nr; r++) {
        uint64_t r0 = r * tr, r1 = r0 + tr < R ? r0 + tr : R;
        uint64_t first = r0 > w ? (r0 - w) / tc : 0, last = (r1 - 1 + w) / tc;
        for (uint64_t c = first; c <= last && c < nc; c++) {
            uint64_t c0 = c * tc, c1 = c0 + tc < C ? c0 + tc : C;
            double cells = (double)band_cells(r0, r1, c0, c1, w);
            double p = -expm1(cells * log1p(-d->density));
            if (cells <= 0 || p < 0.5)
                continue;
            uint64_t cnt = model_count(d->density * cells / p);
            if (cnt > UINT32_MAX) { /* stat_grid counts are 32-bit */
                stat_grid_free(a, g);
                return TESSEL_ERANGE;
            }
            g->col[n] = (uint32_t)c;
            g->nnz[n++] = cnt ? (uint32_t)cnt : 1;
        }
        g->ptr[r + 1] = n;
    }
    g->n = n;
    return TESSEL_OK;
}

/* Length of the band in line x of a (rows x cols) band w: along a row
 * (cols = its length) or a column. */
static double band_line(uint64_t x, uint64_t len, uint64_t w)
{
    uint64_t lo = x > w ? x - w : 0, hi = x + w < len - 1 ? x + w : len - 1;
    return hi >= lo ? (double)(hi - lo + 1) : 0;
}

/* The output's expected nonzeros per (i tile, j tile, first k tile). */
static int band_sample(const operand_model *A, const operand_model *B, int gram, uint64_t ti,
                       uint64_t tj, uint64_t tk, const tessel_allocator *al,
                       stat_output_sample *s)
{
    uint64_t I = A->model.rows, K = A->model.cols, J = B->model.cols;
    uint64_t wa = A->model.bandwidth, wb = B->model.bandwidth, w = wa + wb;
    uint64_t ext[4] = { (I + ti - 1) / ti, 1, (J + tj - 1) / tj, (K + tk - 1) / tk };
    double l1q = log1p(-A->model.density * B->model.density), l1a = log1p(-A->model.density);
    memset(s, 0, sizeof(*s));
    s->base[0] = ti, s->base[1] = tj, s->base[2] = tk, s->base[3] = 1;
    model_map cells = { .alloc = al };
    for (uint64_t i = 0; i < I; i++) {
        uint64_t j0 = i > w ? i - w : 0, j1 = i + w < J - 1 ? i + w : J - 1;
        for (uint64_t j = j0; j <= j1 && j < J; j++) {
            uint64_t lo = i > wa ? i - wa : 0, hi = i + wa;
            uint64_t blo = j > wb ? j - wb : 0, bhi = j + wb;
            lo = lo > blo ? lo : blo;
            hi = hi < bhi ? hi : bhi;
            hi = hi < K - 1 ? hi : K - 1;
            if (lo > hi)
                continue;
            double l = gram && i == j ? l1a : l1q; /* A A^T: A[i,k] A[i,k] is one entry */
            for (uint64_t kt = lo / tk; kt <= hi / tk; kt++) {
                uint64_t a = kt * tk > lo ? kt * tk : lo;
                uint64_t b = (kt + 1) * tk - 1 < hi ? (kt + 1) * tk - 1 : hi;
                double mass = exp((double)(a - lo) * l) - exp((double)(b - lo + 1) * l);
                if (!(mass > 0))
                    continue;
                uint64_t key = ((i / ti) * ext[2] + j / tj) * ext[3] + kt;
                if (model_map_add(&cells, key, mass)) {
                    model_map_free(&cells);
                    return TESSEL_ENOMEM;
                }
                s->nnz += mass;
            }
        }
    }
    int rc = stat_output_sample_from_cells(al, &cells, ext, s);
    model_map_free(&cells);
    if (!rc) {
        s->base[0] = ti, s->base[1] = tj, s->base[2] = tk, s->base[3] = 1;
        s->rows = s->sampled_rows = I;
    }
    return rc;
}

static int banded_evaluate(engine *e, const operand_model *oa, const operand_model *ob,
                           const boundary *bd, tessel_diag *diag)
{
    const tessel_allocator *a = e->alloc;
    uint64_t ti = bd->tile[0], tj = bd->tile[1], tk = bd->tile[2];
    uint64_t I = oa->model.rows, K = oa->model.cols, J = ob->model.cols;
    double W = (double)(oa->model.bandwidth + ob->model.bandwidth);
    if ((double)I * (2 * W + 1) * (1 + 2 * W / (double)tk) > BAND_ELEMENTS_MAX)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, e->spec->path, 0, 0, "workload.data",
                               "the analytic estimator's banded path sums the output element "
                               "by element, and this band is too large (use --estimator stat)");
    int gram = oa->model_index == ob->model_index && oa->flip != ob->flip;
    boundary_grids g;
    memset(&g, 0, sizeof(g));
    stat_output_sample smp;
    memset(&smp, 0, sizeof(smp));
    int rc = band_grid(oa, ti, tk, a, &g.ga);
    if (!rc)
        rc = band_grid(ob, tk, tj, a, &g.gb);
    if (!rc)
        rc = band_sample(oa, ob, gram, ti, tj, tk, a, &smp);
    if (rc) {
        stat_grid_free(a, &g.ga);
        stat_grid_free(a, &g.gb);
        if (rc == TESSEL_ERANGE)
            return tessel_diag_set(diag, rc, NULL, 0, 0, "model",
                                   "a tile of the banded model holds 2^32 or more nonzeros: "
                                   "more than the stat estimator's 32-bit tile counts hold");
        return tessel_diag_oom(diag, NULL, "building the banded model's tile grids and output "
                               "sample", 0);
    }
    g.pos_row = stat_loop_position(bd, 0);
    g.pos_col = stat_loop_position(bd, 1);
    g.pos_k = stat_loop_position(bd, 2);
    /* multiplies: sum over k of E[column k of A] E[row k of B]; a Gram
     * product squares one binomial count (E[c^2] = n d (1 - d) + (n d)^2) */
    double flops = 0, da = oa->model.density, db = ob->model.density;
    for (uint64_t k = 0; k < K; k++) {
        double ca = band_line(k, I, oa->model.bandwidth), rb = band_line(k, J, ob->model.bandwidth);
        flops += gram ? ca * da * (1 - da) + ca * da * ca * da : ca * da * rb * db;
    }
    stat_problem p;
    memset(&p, 0, sizeof(p));
    p.alloc = a;
    p.out_cells = ti * tj;
    p.tk = tk;
    p.f_i = p.f_j = p.f_k = 1;
    rc = stat_solve(e, bd, &g, &p, flops, 1, &smp, diag);
    stat_output_sample_free(a, &smp);
    return rc;
}

/* The level-1 loop order as letters over i, j, k; whole-extent indices
 * (no loop) count as outermost. */
static void order_letters(const boundary *bd, char *order)
{
    static const char letter[3] = { 'I', 'J', 'K' };
    int used[3] = { 0, 0, 0 };
    unsigned n = 0;
    char tail[4];
    unsigned nt = 0;
    for (unsigned d = 0; d < bd->ndigits; d++) {
        tail[nt++] = letter[bd->d[d].x];
        used[bd->d[d].x] = 1;
    }
    for (unsigned x = 0; x < 3; x++)
        if (!used[x])
            order[n++] = letter[x];
    memcpy(order + n, tail, nt);
    order[3] = '\0';
}

/* The analytic estimator: SpMSpM on two levels from density models alone (no tiles
 * walked): checks the workload, binds the models, prices the mapping. */
int tessel_model_analytic(const tessel_spec *spec, const tessel_allocator *a, tessel_result *out,
                          tessel_diag *diag)
{
    double start = model_now();
    memset(out, 0, sizeof(*out));
    snprintf(out->estimator, sizeof(out->estimator), "analytic");
    out->nlevels = spec->nlevels;
    out->ntensors = spec->workload.ntensors;
    const tessel_spec_workload *w = &spec->workload;
    if (w->kind != TESSEL_WORKLOAD_SPMSPM || w->ntensors != 3)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, w->pos.file, w->pos.line,
                               w->pos.column, "workload.einsum",
                               "the analytic estimator handles SpMSpM so far; use --estimator "
                               "exact or stat");
    if (spec->nlevels != 2)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->path, 0, 0,
                               "architecture.levels",
                               "the analytic estimator models one buffer level below the "
                               "backing store; this spec has %u levels",
                               spec->nlevels);
    engine e;
    memset(&e, 0, sizeof(e));
    e.spec = spec;
    e.alloc = a;
    e.diag = diag;
    e.res = out;
    e.nlev = spec->nlevels;
    e.kind = w->kind;
    e.nx = 3;
    /* roles: Z[i,j]; A holds i (and k), B holds k and j */
    const tessel_spec_tensor *z = &w->tensor[0];
    unsigned ta = w->tensor[1].index[0] == z->index[0] || w->tensor[1].index[1] == z->index[0]
                      ? 1
                      : 2;
    unsigned tb = 3 - ta;
    const tessel_spec_tensor *sa = &w->tensor[ta];
    e.spec_index[0] = (int)z->index[0];
    e.spec_index[1] = (int)z->index[1];
    e.spec_index[2] = (int)(sa->index[0] == z->index[0] ? sa->index[1] : sa->index[0]);
    e.spec_index[3] = -1;
    e.nin = 2;
    e.in[0] = (operand){ .order = 2, .x = { 0, 2 }, .spec_tensor = ta, .ranks = 2 };
    e.in[1] = (operand){ .order = 2, .x = { 2, 1 }, .spec_tensor = tb, .ranks = 2 };
    e.out = (operand){ .order = 2, .x = { 0, 1 }, .spec_tensor = 0, .ranks = 2 };
    e.nred = 1;
    e.red[0] = 2;
    /* extents from the models */
    for (unsigned i = 0; i < 2; i++) {
        int tr;
        int m = model_of(spec, e.in[i].spec_tensor, &tr);
        if (m < 0)
            return not_model(spec, e.in[i].spec_tensor, diag);
        const tessel_spec_tensor *mt = &w->tensor[m], *st = &w->tensor[e.in[i].spec_tensor];
        uint64_t dims[2] = { mt->model.rows, mt->model.cols };
        for (unsigned mode = 0; mode < 2; mode++) {
            uint64_t v = dims[mode ^ (unsigned)tr];
            for (unsigned x = 0; x < 3; x++)
                if (e.spec_index[x] == (int)st->index[mode]) {
                    if (e.extent[x] && e.extent[x] != v)
                        return tessel_diag_set(diag, TESSEL_EINVAL, st->pos.file, st->pos.line,
                                               st->pos.column, "workload.data",
                                               "%s: index %s has %llu entries here but %llu "
                                               "elsewhere",
                                               st->name, w->index_name[st->index[mode]],
                                               (unsigned long long)v,
                                               (unsigned long long)e.extent[x]);
                    e.extent[x] = v;
                }
        }
    }
    boundary bd;
    memset(&bd, 0, sizeof(bd));
    bd.b = 1;
    int rc = exact_geometry(&e, &bd);
    operand_model oa, ob;
    if (!rc) {
        uint64_t tile_a[2] = { bd.tile[0], bd.tile[2] }, tile_b[2] = { bd.tile[2], bd.tile[1] };
        rc = operand_setup(&e, 0, tile_a, &oa, diag);
        if (!rc)
            rc = operand_setup(&e, 1, tile_b, &ob, diag);
    }
    int banded = 0;
    if (!rc) {
        banded = (oa.model.kind == TESSEL_DENSITY_BANDED) +
                 (ob.model.kind == TESSEL_DENSITY_BANDED);
        if (banded == 1)
            rc = tessel_diag_set(diag, TESSEL_EUNSUPPORTED, w->pos.file, w->pos.line,
                                 w->pos.column, "workload.data",
                                 "the analytic estimator takes either two banded models or none; "
                                 "for a banded one times another model use --estimator stat");
    }
    if (!rc) /* priced at the backing store of two levels, uniform models */
        rc = model_scalar_outer_refuse(spec, diag, spec->nlevels == 2 && !banded ? NULL
                                       : "the analytic estimator under nested levels or "
                                         "banded models");
    if (!rc && banded && (exact_scalar_on(&e, 0) || exact_scalar_on(&e, 1) ||
                          spec->compute.optimization))
        rc = tessel_diag_set(diag, TESSEL_EUNSUPPORTED, w->pos.file, w->pos.line, w->pos.column,
                             "action_optimization",
                             "the analytic estimator prices scalar and compute skipping and "
                             "gating for tiles that are alike, not for banded models: use -e "
                             "exact");
    if (!rc && banded) {
        rc = banded_evaluate(&e, &oa, &ob, &bd, diag);
    } else if (!rc) {
        char order[4];
        order_letters(&bd, order);
        rc = evaluate(&e, &oa, &ob, order, (double)bd.tile[0], (double)bd.tile[2],
                      (double)bd.tile[1], &bd, diag);
        if (!rc)
            exact_algorithmic_counts(&e, &bd);
    }
    if (!rc) {
        double nnz[2] = { oa.nnz, ob.nnz };
        rc = model_compulsory_expected(&e, nnz, diag);
    }
    if (!rc)
        exact_finish_counts(&e);
    if (!rc)
        rc = model_result_check(out, spec, diag);
    out->seconds = model_now() - start;
    return rc;
}

/* The `data` column for density models: "uniform-1000x1000-nnz9950",
 * "banded-4000x4000-w50-d0.3", "nm-2048x2048-2:256",
 * joined with '*' per input, "^T" for transposed bindings. */
void tessel_model_analytic_label(const tessel_spec *spec, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned t = 1; t < spec->workload.ntensors && used + 1 < n; t++) {
        int tr;
        int m = model_of(spec, t, &tr);
        char one[160];
        if (m < 0) {
            snprintf(one, sizeof(one), "%s", spec->workload.tensor[t].name);
        } else {
            const tessel_spec_tensor *mt = &spec->workload.tensor[m];
            unsigned long long r = mt->model.rows, c = mt->model.cols;
            if (mt->model.kind == TESSEL_DENSITY_NM)
                snprintf(one, sizeof(one), "nm-%llux%llu-%u:%u%s", r, c, mt->model.n,
                         mt->model.m, tr ? "^T" : "");
            else if (mt->model.kind == TESSEL_DENSITY_FIXED)
                snprintf(one, sizeof(one), "fixed-structured-%llux%llu-d%g%s", r, c,
                         mt->model.density, tr ? "^T" : "");
            else if (mt->model.kind == TESSEL_DENSITY_BANDED)
                snprintf(one, sizeof(one), "banded-%llux%llu-w%llu-d%g%s", r, c,
                         (unsigned long long)mt->model.bandwidth, mt->model.density,
                         tr ? "^T" : "");
            else if (mt->model.nnz)
                snprintf(one, sizeof(one), "uniform-%llux%llu-nnz%llu%s", r, c,
                         (unsigned long long)mt->model.nnz, tr ? "^T" : "");
            else
                snprintf(one, sizeof(one), "uniform-%llux%llu-d%g%s", r, c, mt->model.density,
                         tr ? "^T" : "");
        }
        int k = snprintf(buf + used, n - used, "%s%s", t > 1 ? "*" : "", one);
        if (k < 0 || (size_t)k >= n - used)
            break;
        used += (size_t)k;
    }
}
