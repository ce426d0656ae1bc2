/* Gamma (Zhang et al., ASPLOS 2021): row-wise Gustavson SpMSpM with a
 * FiberCache holding rows (fibers) of B (gamma §3, §4; DESIGN.md rule 5).
 *
 * The model, at the DRAM / FiberCache boundary (level 1):
 *   A  streamed once in CSR (bypasses the FiberCache, gamma §3):
 *      nnz(A) (value + coord) + rows(A) offset, as MatRaptor.
 *   B  for each row i of A in order, for each a_ik, row k of B is looked up
 *      in the FiberCache: capacity C bytes (template_options.cache_bytes,
 *      default the capacity of level 1), whole fibers of
 *      nnz(B row k) (value + coord) + offset bits each, fiber-granular LRU,
 *      fully associative (`policy: lru`, the only policy). A hit moves no
 *      DRAM bytes; a miss fetches the fiber from DRAM. A fiber larger than
 *      C is fetched and not kept (it would evict everything for nothing).
 *   Z  written once (output_format, default csr for gamma: its rows leave
 *      the PEs whole, gamma §3).
 *   spills: a PE merges at most R fibers at once (radix, default 64,
 *      gamma §3.1). Row i with n = nnz(A row i) > R fibers is merged in
 *      rounds: round L (L = 1, 2, ... while n > R^L) merges each group of
 *      R^L consecutive fibers into one intermediate partial fiber. Each
 *      intermediate fiber is written to memory and read back once (our
 *      pessimistic choice: gamma keeps them in the FiberCache when they fit;
 *      they do not take cache space in this model). Its size is the union of
 *      the columns of the fibers it merges (exact path: counted with a
 *      marker array; stat path: J (1 - exp(-m p / J)) for m fibers of p
 *      products on average, the occupancy of J columns under uniform
 *      independent hits), plus one offset. Counted as Z's updates (reads)
 *      and extra write-backs.
 * Deeper levels (l >= 2) as MatRaptor (template_traffic.c).
 *
 * template_options (all optional): output_format (coo | csr, default csr),
 * cache_bytes (a size > 0), radix (2 .. 2^20), policy (lru), reorder
 * (affinity | none, default none), stat_model (irm | banded, default irm;
 * see che_banded). Gamma's selective coordinate-space tiling (gamma §4.2)
 * is not modelled.
 *
 * Exact: one trace-driven pass over A's rows in order (or in the affinity
 * order, `reorder: affinity`). The LRU list is a doubly-linked list over B's
 * row numbers (the row number is its own perfect hash: arrays of K entries),
 * O(1) per reference: O(nnz(A) + K) for the cache, O(multiplies x rounds)
 * for the spills.
 *
 * Stat: Che's characteristic-time approximation of LRU (H. Che, Y. Tung,
 * Z. Wang, "Hierarchical Web caching systems: modeling, design and
 * experimental results", IEEE JSAC 20(7), 2002), for items of unequal
 * sizes. References to fiber k arrive as a Poisson process over the M =
 * nnz(A) references with rate n_k / M, n_k = nnz(A column k) (the
 * independent reference model: the row order of A is ignored). A fiber is
 * in an LRU cache iff it was referenced in the last T references, so with
 * probability 1 - exp(-n_k T / M); T solves
 *     sum_k s_k (1 - exp(-n_k T / M)) = C
 * over the fibers that fit (s_k <= C), by bisection (the left side grows
 * with T). When all the referenced fibers fit together, only the
 * compulsory misses remain. Expected misses of fiber k: its first reference
 * (compulsory) plus (n_k - 1) exp(-n_k T / M); a fiber larger than C
 * misses n_k times. All inputs are the per-line nonzero counts of the
 * statistics (nnz of A's rows and columns, of B's rows). */
#include <math.h>
#include <string.h>

#include "template_internal.h"

/* ------------------------------------------------------------------ */
/* Helpers (the same conventions as template_traffic.c). */

static uint64_t sat_add(uint64_t x, uint64_t y)
{
    return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

static uint64_t sat_mul(uint64_t x, uint64_t y)
{
    return y && x > UINT64_MAX / y ? UINT64_MAX : x * y;
}

static uint64_t bytes(uint64_t n, unsigned bits)
{
    if (bits && n > UINT64_MAX / bits)
        return UINT64_MAX;
    uint64_t b = n * bits;
    return b / 8 + (b % 8 != 0);
}

static uint64_t round_count(double x)
{
    if (!(x > 0))
        return 0;
    if (x >= 18446744073709549568.0)
        return UINT64_MAX;
    return (uint64_t)llround(x);
}

/* ------------------------------------------------------------------ */
/* CSR views: template_counts.c's tpl_csr_of. */

static int mode_of(const tessel_spec_tensor *st, unsigned x)
{
    for (unsigned m = 0; m < st->rank; m++)
        if (st->index[m] == x)
            return (int)m;
    return -1;
}

/* ------------------------------------------------------------------ */
/* Exact: the LRU FiberCache over the trace. */

#define NIL UINT32_MAX

typedef struct lru {
    uint32_t *prev, *next; /* over B's rows; NIL ends */
    unsigned char *in;     /* resident */
    uint32_t head, tail;   /* most / least recently used */
    uint64_t used, cap;    /* bits */
} lru;

static void lru_unlink(lru *c, uint32_t k)
{
    if (c->prev[k] != NIL)
        c->next[c->prev[k]] = c->next[k];
    else
        c->head = c->next[k];
    if (c->next[k] != NIL)
        c->prev[c->next[k]] = c->prev[k];
    else
        c->tail = c->prev[k];
}

static void lru_push(lru *c, uint32_t k)
{
    c->prev[k] = NIL;
    c->next[k] = c->head;
    if (c->head != NIL)
        c->prev[c->head] = k;
    c->head = k;
    if (c->tail == NIL)
        c->tail = k;
}

/* Fiber k's size in bits at widths (v + c per entry, o per fiber). */
static uint64_t fiber_bits(uint64_t nnz, const tessel_spec_level *lv)
{
    return sat_add(sat_mul(nnz, (uint64_t)lv->value_bits + lv->coord_bits), lv->offset_bits);
}

/* Affinity-based row reordering (gamma §4.1, simplified): a greedy order
 * in which the next row is the unvisited row sharing the most columns
 * (B rows) with the last w rows scheduled. Candidates are the rows found
 * through the columns of the window's rows (A by columns), each column's
 * row list scanned at most `scan` entries, so the work is
 * O(nnz(A) x w x scan) at worst; ties and an empty candidate set fall back
 * to the next unvisited row in the original order. score[] counts, per
 * candidate row, the columns it shares with the window (updated as rows
 * enter and leave the window). */
static int affinity_order(const tpl_csr_view *A, const tpl_csr_view *AT, uint64_t w,
                          const tessel_allocator *a, uint32_t *order)
{
    const uint64_t scan = 64;
    uint64_t n = A->rows;
    uint32_t *score = tessel_alloc_array(a, n ? n : 1, sizeof(uint32_t));
    unsigned char *done = tessel_alloc_array(a, n ? n : 1, 1);
    uint32_t *win = tessel_alloc_array(a, w ? w : 1, sizeof(uint32_t));
    uint32_t *cand = tessel_alloc_array(a, n ? n : 1, sizeof(uint32_t));
    unsigned char *incand = tessel_alloc_array(a, n ? n : 1, 1);
    int rc = TESSEL_OK;
    if (!score || !done || !win || !cand || !incand) {
        rc = TESSEL_ENOMEM;
        goto out;
    }
    memset(score, 0, (n ? n : 1) * sizeof(uint32_t));
    memset(done, 0, n ? n : 1);
    memset(incand, 0, n ? n : 1);
    uint64_t ncand = 0, nwin = 0, next_unvisited = 0;
    for (uint64_t pos = 0; pos < n; pos++) {
        /* best candidate: the highest score among those collected */
        uint64_t best = UINT64_MAX;
        uint32_t best_score = 0;
        uint64_t keep = 0;
        for (uint64_t c = 0; c < ncand; c++) {
            uint32_t r = cand[c];
            if (done[r] || score[r] == 0) {
                incand[r] = 0;
                continue;
            }
            cand[keep++] = r;
            if (score[r] > best_score || (score[r] == best_score && r < best))
                best = r, best_score = score[r];
        }
        ncand = keep;
        if (best == UINT64_MAX) {
            while (done[next_unvisited])
                next_unvisited++;
            best = next_unvisited;
        }
        uint32_t row = (uint32_t)best;
        order[pos] = row;
        done[row] = 1;
        /* the row leaving the window, then the one entering it */
        if (w && nwin == w) {
            uint32_t old = win[pos % w];
            for (uint64_t p = A->ptr[old]; p < A->ptr[old + 1]; p++) {
                uint64_t k = A->idx[p];
                uint64_t end = AT->ptr[k + 1] - AT->ptr[k] > scan ? AT->ptr[k] + scan
                                                                  : AT->ptr[k + 1];
                for (uint64_t q = AT->ptr[k]; q < end; q++)
                    if (score[AT->idx[q]])
                        score[AT->idx[q]]--;
            }
        } else if (w) {
            nwin++;
        }
        if (!w)
            continue;
        win[pos % w] = row;
        for (uint64_t p = A->ptr[row]; p < A->ptr[row + 1]; p++) {
            uint64_t k = A->idx[p];
            uint64_t end = AT->ptr[k + 1] - AT->ptr[k] > scan ? AT->ptr[k] + scan
                                                              : AT->ptr[k + 1];
            for (uint64_t q = AT->ptr[k]; q < end; q++) {
                uint32_t r = AT->idx[q];
                if (done[r])
                    continue;
                score[r]++;
                if (!incand[r]) {
                    incand[r] = 1;
                    cand[ncand++] = r;
                }
            }
        }
    }
out:
    tessel_dealloc(a, score);
    tessel_dealloc(a, done);
    tessel_dealloc(a, win);
    tessel_dealloc(a, cand);
    tessel_dealloc(a, incand);
    return rc;
}

static int gamma_exact(const tessel_spec *spec, const tpl_roles *r,
                       const tessel_workload_data *data, const tpl_options *o,
                       const tessel_allocator *a, tpl_gamma_counts *g)
{
    const tessel_spec_level *lv = &spec->level[1];
    const tessel_tensor *ta = data->tensor[r->ta], *tb = data->tensor[r->tb];
    tpl_csr_view A, B, AT;
    memset(&B, 0, sizeof(B));
    memset(&AT, 0, sizeof(AT));
    lru c;
    memset(&c, 0, sizeof(c));
    uint64_t *mark = NULL;
    uint32_t *order = NULL;
    int rc = tpl_csr_of(ta, mode_of(&spec->workload.tensor[r->ta], r->xi) == 0 ? 0 : 1, a, &A);
    if (!rc)
        rc = tpl_csr_of(tb, mode_of(&spec->workload.tensor[r->tb], r->xk) == 0 ? 0 : 1, a, &B);
    if (rc)
        goto out;
    /* tpl_counts_exact has checked the shapes */
    uint64_t K = B.rows, J = B.cols;
    c.prev = tessel_alloc_array(a, K ? K : 1, sizeof(uint32_t));
    c.next = tessel_alloc_array(a, K ? K : 1, sizeof(uint32_t));
    c.in = tessel_alloc_array(a, K ? K : 1, 1);
    mark = tessel_alloc_array(a, J ? J : 1, sizeof(uint64_t));
    if (!c.prev || !c.next || !c.in || !mark) {
        rc = TESSEL_ENOMEM;
        goto out;
    }
    memset(c.in, 0, K ? K : 1);
    memset(mark, 0, (J ? J : 1) * sizeof(uint64_t));
    c.head = c.tail = NIL;
    c.cap = sat_mul(o->cache_bytes, 8);
    if (o->reorder && A.rows) {
        /* the window: as many rows as the cache holds fibers on average */
        double avg = K ? (double)fiber_bits(B.nnz / (K ? K : 1), lv) : 1;
        double fit = avg > 0 ? (double)c.cap / avg : 0;
        uint64_t w = fit >= 1024 ? 1024 : (uint64_t)fit;
        if (w < 1)
            w = 1;
        /* the window is counted in rows of A: fibers / average row length */
        uint64_t per_row = A.rows ? (A.nnz + A.rows - 1) / A.rows : 1;
        w = per_row ? w / per_row : w;
        if (w < 1)
            w = 1;
        rc = tpl_csr_of(ta, mode_of(&spec->workload.tensor[r->ta], r->xi) != 0 ? 0 : 1, a, &AT);
        if (!rc) {
            order = tessel_alloc_array(a, A.rows, sizeof(uint32_t));
            rc = order ? affinity_order(&A, &AT, w, a, order) : TESSEL_ENOMEM;
        }
        if (rc)
            goto out;
    }
    uint64_t stamp = 0;
    uint64_t R = o->radix;
    for (uint64_t ii = 0; ii < A.rows; ii++) {
        uint64_t i = order ? order[ii] : ii;
        for (uint64_t p = A.ptr[i]; p < A.ptr[i + 1]; p++) {
            uint32_t k = A.idx[p];
            uint64_t nk = B.ptr[k + 1] - B.ptr[k];
            if (c.in[k]) {
                lru_unlink(&c, k);
                lru_push(&c, k);
                g->hits++;
                continue;
            }
            g->misses++;
            g->miss_nnz = sat_add(g->miss_nnz, nk);
            uint64_t s = fiber_bits(nk, lv);
            if (s > c.cap)
                continue; /* fetched and used, not kept */
            while (c.used + s > c.cap && c.tail != NIL) {
                uint32_t v = c.tail;
                lru_unlink(&c, v);
                c.in[v] = 0;
                c.used -= fiber_bits(B.ptr[v + 1] - B.ptr[v], lv);
            }
            lru_push(&c, k);
            c.in[k] = 1;
            c.used += s;
        }
        /* merge rounds: groups of R^L consecutive fibers while n > R^L */
        uint64_t n = A.ptr[i + 1] - A.ptr[i];
        for (uint64_t gsz = R; gsz < n; gsz = sat_mul(gsz, R)) {
            for (uint64_t g0 = 0; g0 < n; g0 += gsz) {
                uint64_t g1 = g0 + gsz < n ? g0 + gsz : n;
                stamp++;
                uint64_t u = 0;
                for (uint64_t p = A.ptr[i] + g0; p < A.ptr[i] + g1; p++) {
                    uint32_t k = A.idx[p];
                    for (uint64_t q = B.ptr[k]; q < B.ptr[k + 1]; q++) {
                        uint64_t j = B.idx ? B.idx[q] : 0;
                        if (mark[j] != stamp) {
                            mark[j] = stamp;
                            u++;
                        }
                    }
                }
                g->spill_fibers++;
                g->spill_nnz = sat_add(g->spill_nnz, u);
            }
            if (gsz > UINT64_MAX / R)
                break;
        }
    }
out:
    tessel_dealloc(a, c.prev);
    tessel_dealloc(a, c.next);
    tessel_dealloc(a, c.in);
    tessel_dealloc(a, mark);
    tessel_dealloc(a, order);
    tpl_csr_view_free(a, &A);
    tpl_csr_view_free(a, &B);
    tpl_csr_view_free(a, &AT);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Statistical: Che's approximation (see the top comment). */

/* The banded refinement of Che's approximation, when the statistics hold
 * A's base tile grid by rows (i then k): the trace visits A's row blocks
 * (bands) in order, and within band b fiber k is referenced
 * n_kb = n_k cnt(b, K) / cnt(., K) times (K its column block: its
 * references spread over the bands as its block's nonzeros are), as a
 * Poisson process over the band's M_b references. Per band, Che's T_b
 * solves sum_k s_k (1 - exp(-n_kb T_b / M_b)) = C over the band's fibers
 * (T_b infinite when the band's expected footprint sum_k s_k (1 -
 * exp(-n_kb)) fits). Fiber k then misses on its first reference in the
 * band unless resident from earlier bands (probability r_k), and on each
 * later one with probability exp(-n_kb T_b / M_b):
 *     misses_kb = p_kb (1 - r_k) + (n_kb - p_kb) exp(-n_kb T_b / M_b),
 *     p_kb = 1 - exp(-n_kb)  (referenced at all in the band).
 * At the band's end r_k = 1 - exp(-n_kb T_b / M_b) for its fibers (p_kb
 * when T_b is infinite), and the fibers it did not reference survive with
 * probability max(0, 1 - footprint / C) (a cumulative factor per band, so
 * a band costs only its own fibers). Our heuristic extension of Che (the
 * independent reference model within a band, a row-block's worth of
 * locality across them); O(non-empty tiles x tile width x bisection
 * steps). */
static int che_banded(const tessel_spec_level *lv, const tessel_tile_grid *g,
                      const uint64_t *a_cols, const uint64_t *b_rows, uint64_t K, double cap,
                      const tessel_allocator *a, double *misses_out, double *miss_nnz_out)
{
    uint64_t tw = g->tile[1], nb = g->extent[0], nkb = g->extent[1];
    double *colsum = tessel_alloc_array(a, nkb ? nkb : 1, sizeof(double));
    double *res = tessel_alloc_array(a, K ? K : 1, sizeof(double));
    uint64_t *last = tessel_alloc_array(a, K ? K : 1, sizeof(uint64_t));
    double *cum = tessel_alloc_array(a, nb + 1, sizeof(double));
    if (!colsum || !res || !last || !cum) {
        tessel_dealloc(a, colsum);
        tessel_dealloc(a, res);
        tessel_dealloc(a, last);
        tessel_dealloc(a, cum);
        return TESSEL_ENOMEM;
    }
    memset(colsum, 0, (nkb ? nkb : 1) * sizeof(double));
    for (uint64_t t = 0; t < g->nonempty; t++)
        colsum[g->key[t]] += (double)g->count[t];
    for (uint64_t k = 0; k < K; k++)
        res[k] = 0, last[k] = 0;
    cum[0] = 0;
    double misses = 0, miss_nnz = 0;
    uint64_t t0 = 0;
    for (uint64_t b = 0; b < nb; b++) {
        cum[b + 1] = cum[b];
        if (t0 >= g->nonempty || g->group[t0] != b)
            continue;
        uint64_t t1 = t0;
        double M = 0;
        while (t1 < g->nonempty && g->group[t1] == b)
            M += (double)g->count[t1++];
        /* the band's footprint */
        double foot = 0;
        for (uint64_t t = t0; t < t1; t++) {
            double share = (double)g->count[t] / colsum[g->key[t]];
            uint64_t k1 = (g->key[t] + 1) * tw < K ? (g->key[t] + 1) * tw : K;
            for (uint64_t k = g->key[t] * tw; k < k1; k++) {
                double s = (double)fiber_bits(b_rows[k], lv);
                if (a_cols[k] && s <= cap)
                    foot += s * -expm1(-(double)a_cols[k] * share);
            }
        }
        double T = INFINITY;
        if (foot > cap) {
            double lo = 0, hi = M;
            for (int it = 0; it < 60; it++) {
                double mid = it < 30 && hi > 2 * lo ? sqrt((lo > 0 ? lo : 1e-9 * M) * hi)
                                                    : 0.5 * (lo + hi);
                double f = 0;
                for (uint64_t t = t0; t < t1; t++) {
                    double share = (double)g->count[t] / colsum[g->key[t]];
                    uint64_t k1 = (g->key[t] + 1) * tw < K ? (g->key[t] + 1) * tw : K;
                    for (uint64_t k = g->key[t] * tw; k < k1; k++) {
                        double s = (double)fiber_bits(b_rows[k], lv);
                        if (a_cols[k] && s <= cap)
                            f += s * -expm1(-(double)a_cols[k] * share * mid / M);
                    }
                }
                if (f < cap)
                    lo = mid;
                else
                    hi = mid;
            }
            T = 0.5 * (lo + hi);
        }
        for (uint64_t t = t0; t < t1; t++) {
            double share = (double)g->count[t] / colsum[g->key[t]];
            uint64_t k1 = (g->key[t] + 1) * tw < K ? (g->key[t] + 1) * tw : K;
            for (uint64_t k = g->key[t] * tw; k < k1; k++) {
                if (!a_cols[k])
                    continue;
                double n = (double)a_cols[k] * share;
                double s = (double)fiber_bits(b_rows[k], lv);
                double p = -expm1(-n), m, r;
                if (s > cap) {
                    m = n, r = 0;
                } else {
                    double r0 = res[k] * exp(cum[b] - cum[last[k]]);
                    double e = isinf(T) ? 0 : exp(-n * T / M);
                    m = p * (1 - r0) + (n - p > 0 ? (n - p) * e : 0);
                    r = isinf(T) ? p + (1 - p) * r0 : 1 - e;
                }
                misses += m;
                miss_nnz += m * (double)b_rows[k];
                res[k] = r;
                last[k] = b + 1;
            }
        }
        double sigma = foot < cap ? 1 - foot / cap : 0;
        cum[b + 1] = cum[b] + log(sigma > 1e-300 ? sigma : 1e-300);
        t0 = t1;
    }
    tessel_dealloc(a, colsum);
    tessel_dealloc(a, res);
    tessel_dealloc(a, last);
    tessel_dealloc(a, cum);
    *misses_out = misses;
    *miss_nnz_out = miss_nnz;
    return TESSEL_OK;
}

static int gamma_stat(const tessel_spec *spec, const tpl_roles *r, const tessel_stat_data *stats,
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
        double s = (double)fiber_bits(b_rows[k], lv);
        if (s <= cap)
            all += s;
    }
    double T = INFINITY; /* characteristic time, in references */
    if (all > cap) {
        double lo = 0, hi = 1;
        for (int it = 0; it < 200; it++) { /* grow until the cache overflows */
            double f = 0;
            for (uint64_t k = 0; k < n_bk; k++) {
                double s = (double)fiber_bits(b_rows[k], lv);
                if (a_cols[k] && s <= cap)
                    f += s * -expm1(-(double)a_cols[k] * hi / M);
            }
            if (f >= cap)
                break;
            lo = hi;
            hi *= 2;
        }
        for (int it = 0; it < 100; it++) {
            double mid = 0.5 * (lo + hi), f = 0;
            for (uint64_t k = 0; k < n_bk; k++) {
                double s = (double)fiber_bits(b_rows[k], lv);
                if (a_cols[k] && s <= cap)
                    f += s * -expm1(-(double)a_cols[k] * mid / M);
            }
            if (f < cap)
                lo = mid;
            else
                hi = mid;
            if (hi - lo <= 1e-9 * hi)
                break;
        }
        T = 0.5 * (lo + hi);
    }
    double misses = 0, miss_nnz = 0, refs = 0;
    int idx[2] = { -1, -1 };
    const tessel_tile_grid *grid = o->stat_irm ? NULL : tessel_stat_data_grid(stats, r->ta, idx);
    if (grid && grid->order == 2 && idx[0] == (int)r->xi && idx[1] == (int)r->xk &&
        grid->dims[1] == n_bk && all > cap) {
        for (uint64_t k = 0; k < n_bk; k++)
            refs += (double)a_cols[k];
        int rc = che_banded(lv, grid, a_cols, b_rows, n_bk, cap, a, &misses, &miss_nnz);
        if (rc)
            return rc;
    } else {
    for (uint64_t k = 0; k < n_bk; k++) {
        if (!a_cols[k])
            continue;
        double nk = (double)a_cols[k];
        double s = (double)fiber_bits(b_rows[k], lv);
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
    g->misses = round_count(misses);
    g->miss_nnz = round_count(miss_nnz);
    g->hits = round_count(refs - misses);
    /* spills: the union of m fibers of p products each on average, as the
     * occupancy of U columns, U the row's expected output nonzeros (its
     * share nnz(Z) n / nnz(A) of the output estimate, at most J): uniform
     * independent hits within the columns the row reaches */
    double J = (double)cnt->cols_b, p = cnt->nnz_a ? (double)cnt->multiplies / (double)cnt->nnz_a : 0;
    double sf = 0, snz = 0;
    uint64_t R = o->radix;
    for (uint64_t i = 0; i < n_ai; i++) {
        uint64_t n = a_rows[i];
        double U = cnt->nnz_a ? (double)cnt->nnz_z * (double)n / (double)cnt->nnz_a : 0;
        if (U > J)
            U = J;
        for (uint64_t gsz = R; gsz < n; gsz = sat_mul(gsz, R)) {
            uint64_t full = n / gsz, rest = n % gsz;
            double u_full = U > 0 ? -U * expm1(-(double)gsz * p / U) : 0;
            double u_rest = U > 0 ? -U * expm1(-(double)rest * p / U) : 0;
            sf += (double)full + (rest > 0);
            snz += (double)full * u_full + (rest ? u_rest : 0);
            if (gsz > UINT64_MAX / R)
                break;
        }
    }
    g->spill_fibers = round_count(sf);
    g->spill_nnz = round_count(snz);
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Into tessel_result. */

int tpl_gamma(const tessel_spec *spec, const tpl_roles *r, const tessel_workload_data *data,
              const tessel_stat_data *stats, const tpl_counts *c, const tpl_options *o,
              const tessel_allocator *a, tessel_result *out, tpl_gamma_counts *g,
              tessel_diag *diag)
{
    memset(g, 0, sizeof(*g));
    int rc = data ? gamma_exact(spec, r, data, o, a, g) : gamma_stat(spec, r, stats, c, o, a, g);
    if (rc)
        return tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    tpl_matraptor(spec, r, c, o, out);
    const tessel_spec_level *lv = &spec->level[1];
    unsigned v = lv->value_bits, cb = lv->coord_bits, ob = lv->offset_bits;
    tessel_traffic *tb = &out->traffic[1][r->tb], *tz = &out->traffic[1][0];
    tb->fills = g->misses;
    tb->in_data = bytes(g->miss_nnz, v);
    tb->in_metadata = sat_add(bytes(g->miss_nnz, cb), bytes(g->misses, ob));
    tb->algorithmic = sat_add(tb->fills, tb->updates);
    uint64_t sd = bytes(g->spill_nnz, v);
    uint64_t sm = sat_add(bytes(g->spill_nnz, cb), bytes(g->spill_fibers, ob));
    tz->updates = g->spill_fibers;
    tz->writebacks = sat_add(tz->writebacks, g->spill_fibers);
    tz->in_data = sd;
    tz->in_metadata = sm;
    tz->out_data = sat_add(tz->out_data, sd);
    tz->out_metadata = sat_add(tz->out_metadata, sm);
    tz->algorithmic = sat_add(tz->fills, tz->updates);
    tpl_finish(spec, out);
    return TESSEL_OK;
}
