/* The gamma template's stat path (the model: gamma.c): the merger's
 * spills and selective tiling from the statistics, Che's characteristic
 * time, the counts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gamma_internal.h"

static void stat_record(stat_spills *s, double d, double nnz, double w)
{
    if (!s->on || s->rc || !(w > 0))
        return;
    if (s->nrec == s->crec) {
        uint64_t c = s->crec ? 2 * s->crec : 256;
        stat_rec *r = tessel_realloc_array(s->a, s->rec, c, sizeof(stat_rec));
        if (!r) {
            s->rc = TESSEL_ENOMEM;
            return;
        }
        s->rec = r;
        s->crec = c;
    }
    s->rec[s->nrec++] = (stat_rec){ d, nnz, w };
}

static void stat_rounds(stat_spills *s, uint64_t n)
{
    double U = s->U, p = s->p;
    for (uint64_t gsz = s->R; gsz < n; gsz = tpl_sat_mul(gsz, s->R)) {
        uint64_t full = n / gsz, rest = n % gsz;
        double u_full = U > 0 ? -U * expm1(-(double)gsz * p / U) : 0;
        double u_rest = U > 0 ? -U * expm1(-(double)rest * p / U) : 0;
        s->sf += s->mult * ((double)full + (rest > 0));
        s->snz += s->mult * ((double)full * u_full + (rest ? u_rest : 0));
        if (s->on) {
            uint64_t P = tpl_sat_mul(gsz, s->R), nf = n / P;
            for (uint64_t j = 0; nf && j < s->R; j++)
                stat_record(s, (double)((s->R - 1 - j) * gsz), u_full, s->mult * (double)nf);
            for (uint64_t g0 = nf * P; g0 < n; g0 += gsz) {
                uint64_t g1 = n - g0 > gsz ? g0 + gsz : n;
                stat_record(s, (double)(n - g1), g1 - g0 == gsz ? u_full : u_rest, s->mult);
            }
        }
        if (gsz > UINT64_MAX / s->R)
            break;
    }
}

static void stat_split(stat_spills *s, double n, uint64_t k0, uint64_t k1, int spill, double d)
{
    if (spill) {
        double f = -expm1(-n), u = s->U > 0 ? -s->U * expm1(-n * s->p / s->U) : 0;
        s->sf += s->mult * f;
        s->snz += s->mult * u;
        stat_record(s, d, f > 0 ? u / f : 0, s->mult * f);
    }
    double W = s->pre && k1 > k0 ? s->pre[k1] - s->pre[k0] : 0;
    if (!(n > 1 && n > s->limit && k1 - k0 > 1 && W > 0)) {
        stat_rounds(s, tpl_round_count(n));
        return;
    }
    /* R parts, or the w single columns when R >= w (the other parts empty) */
    uint64_t w = k1 - k0, parts = s->R < w ? s->R : w;
    for (uint64_t c = 0; c < parts; c++) {
        uint64_t c0 = k0 + w * c / parts, c1 = k0 + w * (c + 1) / parts;
        double nc = n * (s->pre[c1] - s->pre[c0]) / W;
        if (nc <= 0)
            continue;
        if (nc >= n * (1 - 1e-12)) { /* one part holds it all: narrow, the
                                         * same subrow (its spill counted above) */
            stat_split(s, n, c0, c1, 0, d);
            return;
        }
        stat_split(s, nc, c0, c1, 1, n * (s->pre[k1] - s->pre[c1]) / W);
    }
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Expected FiberCache misses (Che's characteristic time T) and spills from the statistics. */
int gamma_stat(const tessel_spec *spec, const tpl_roles *r, const tessel_stat_data *stats,
               const tpl_counts *cnt, const tpl_options *o, const tessel_allocator *a,
               tpl_gamma_counts *g)
{
    const tessel_spec_level *lv = &spec->level[1];
    uint64_t n_ai, n_ak, n_bk;
    int x;
    const uint64_t *a_rows = tessel_stat_data_line_nnz(stats, r->ta, 0, &n_ai, &x);
    const uint64_t *a_cols = tessel_stat_data_line_nnz(stats, r->ta, 1, &n_ak, &x);
    const uint64_t *b_rows = tessel_stat_data_line_nnz(stats, r->tb, 0, &n_bk, &x);
    /* tpl_counts_stat has checked these */
    double M = 0, cap = (double)o->cache_bytes * 8, all = 0;
    for (uint64_t k = 0; k < n_bk; k++) {
        if (!a_cols[k])
            continue;
        M += (double)a_cols[k];
        double s = (double)gamma_fiber_bits(b_rows[k], lv);
        if (s <= cap)
            all += s;
    }
    /* spills: the union of m fibers of p products each on average, as the
     * occupancy of U columns, U the row's expected output nonzeros (its
     * share nnz(Z) n / nnz(A) of the output estimate, at most J): uniform
     * independent hits within the columns the row reaches */
    double J = (double)cnt->cols_b;
    int pc = !o->partials_mem;
    stat_spills sp = { cnt->nnz_a ? (double)cnt->multiplies / (double)cnt->nnz_a : 0,
                       0,
                       INFINITY,
                       o->radix,
                       NULL,
                       0,
                       0,
                       0,
                       1,
                       pc,
                       a,
                       NULL,
                       0,
                       0,
                       0 };
    double *pre = NULL;
    uint64_t *len = NULL;
    int rc = TESSEL_OK;
    if (o->tiling) {
        double avg = n_bk ? (double)gamma_fiber_bits(cnt->nnz_b / n_bk, lv) : 1;
        sp.limit = o->tile_fraction * cap / (avg > 0 ? avg : 1);
        pre = tessel_alloc_array(a, n_ak + 1, sizeof(double));
        if (!pre)
            return TESSEL_ENOMEM;
        pre[0] = 0;
        for (uint64_t k = 0; k < n_ak; k++)
            pre[k + 1] = pre[k] + (double)a_cols[k];
        sp.pre = pre;
    }
    if (pc) { /* by distinct row length */
        len = tessel_alloc_array(a, n_ai ? n_ai : 1, sizeof(uint64_t));
        if (!len) {
            rc = TESSEL_ENOMEM;
            goto out;
        }
        memcpy(len, a_rows, n_ai * sizeof(uint64_t));
        qsort(len, n_ai, sizeof(uint64_t), cmp_u64);
    }
    for (uint64_t i = 0; i < n_ai && !sp.rc;) {
        uint64_t n = pc ? len[i] : a_rows[i], i1 = i + 1;
        while (pc && i1 < n_ai && len[i1] == n)
            i1++;
        sp.mult = (double)(i1 - i);
        sp.U = cnt->nnz_a ? (double)cnt->nnz_z * (double)n / (double)cnt->nnz_a : 0;
        if (sp.U > J)
            sp.U = J;
        if (pre && n > 1 && (double)n > sp.limit)
            g->tiled_rows += i1 - i;
        stat_split(&sp, (double)n, 0, n_ak, 0, 0);
        i = i1;
    }
    rc = sp.rc;
    if (rc)
        goto out;
    /* characteristic times, in references: B's alone, and (partials:
     * cache) with the partial fibers' occupancy, the one then used for B
     * (lru under the independent reference model) and for the partials */
    che_in ci = { lv, a_cols, b_rows, n_bk, M, cap, NULL };
    double T = o->set_assoc ? INFINITY : gamma_che_time(&ci, all);
    double Tp = INFINITY;
    if (pc && M > 0) {
        double pall = all;
        for (uint64_t i = 0; i < sp.nrec; i++) {
            double s = sp.rec[i].nnz * ((double)lv->value_bits + lv->coord_bits) + lv->offset_bits;
            if (s <= cap)
                pall += sp.rec[i].w * s * sp.rec[i].d / M;
        }
        ci.sp = &sp;
        Tp = gamma_che_time(&ci, pall);
        if (!o->set_assoc)
            T = Tp;
    }
    double misses = 0, miss_nnz = 0, refs = 0;
    int idx[2] = { -1, -1 };
    const tessel_tile_grid *grid = o->stat_irm ? NULL : tessel_stat_data_grid(stats, r->ta, idx);
    if (o->set_assoc) {
        for (uint64_t k = 0; k < n_bk; k++)
            refs += (double)a_cols[k];
        rc = gamma_che_set_assoc(lv, o, a_cols, b_rows, n_bk, M, a, g, &misses, &miss_nnz);
        if (rc)
            goto out;
    } else if (grid && grid->order == 2 && idx[0] == (int)r->xi && idx[1] == (int)r->xk &&
               grid->dims[1] == n_bk && all > cap) {
        for (uint64_t k = 0; k < n_bk; k++)
            refs += (double)a_cols[k];
        rc = gamma_che_banded(lv, grid, a_cols, b_rows, n_bk, cap, a, &misses, &miss_nnz);
        if (rc)
            goto out;
    } else {
        for (uint64_t k = 0; k < n_bk; k++) {
            if (!a_cols[k])
                continue;
            double nk = (double)a_cols[k];
            double s = (double)gamma_fiber_bits(b_rows[k], lv);
            double m;
            if (s > cap)
                m = nk;
            else if (isinf(T))
                m = 1;
            else
                m = 1 + (nk - 1) * exp(-nk * T / M);
            misses += m;
            miss_nnz += m * (double)b_rows[k];
            refs += nk;
        }
    }
    g->misses = tpl_round_count(misses);
    g->miss_nnz = tpl_round_count(miss_nnz);
    g->hits = tpl_round_count(refs - misses);
    double sf = sp.sf, snz = sp.snz;
    if (pc) {
        /* a partial fiber of s bits reaches DRAM (written back, read back)
         * when it outlives its own characteristic time T_s, the time for
         * C - s bits of other items to arrive (load(T_s) = C - s; a large
         * fiber has less room above it in the LRU stack than Che's T
         * allows for small items), or does not fit at all. load() is
         * tabulated on a geometric grid below Tp: T_s <= Tp. */
        enum { NT = 121 };
        double tt[NT], ff[NT];
        for (int i = 0; !isinf(Tp) && i < NT; i++) {
            tt[i] = Tp * exp2((double)(i - (NT - 21)) / 10); /* Tp 2^-10 .. Tp 2^2 */
            ff[i] = gamma_che_load(&ci, tt[i]);
        }
        g->partial_fibers = tpl_round_count(sf);
        g->partial_nnz = tpl_round_count(snz);
        sf = snz = 0;
        for (uint64_t i = 0; i < sp.nrec; i++) {
            const stat_rec *q = &sp.rec[i];
            double s = q->nnz * ((double)lv->value_bits + lv->coord_bits) + lv->offset_bits;
            int out = s > cap;
            if (!out && !isinf(Tp)) {
                int lo = 0, hi = NT - 1; /* the first grid point whose load reaches C - s */
                while (lo < hi) {
                    int mid = (lo + hi) / 2;
                    if (ff[mid] >= cap - s)
                        hi = mid;
                    else
                        lo = mid + 1;
                }
                out = q->d > tt[lo];
            }
            if (out) {
                sf += q->w;
                snz += q->w * q->nnz;
            }
        }
    }
    g->spill_fibers = tpl_round_count(sf);
    g->spill_nnz = tpl_round_count(snz);
out:
    tessel_dealloc(a, pre);
    tessel_dealloc(a, len);
    tessel_dealloc(a, sp.rec);
    return rc;
}
