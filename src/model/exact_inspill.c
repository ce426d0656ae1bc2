/* Rule 4 for inputs at the innermost level, in the compute's loop order
 * (docs/semantics.md rule 4, "Inputs", "The compute's reads"; Tailors §4,
 * §6.2): the bumped part S - P of an overbooked tile is fetched from the
 * parent at every read of the tile by the compute, and the compute reads
 * an operand again once per iteration of an index the operand does not
 * carry that the level's order places outside the operand's innermost own
 * index (the compute walks a tile's coordinates in its level's order, the
 * assumption rule 4 "Outputs" states).
 *
 * For SpMSpM Z[i,j] = A[i,k] B[k,j] that gives three cases per operand:
 *   - the other output index inside (A under IKJ/KIJ, B under JKI/KJI):
 *     one read per tile use, the walk's per-use charge, kept;
 *   - the operand's innermost own index is k (A under IJK/JIK, B under
 *     IJK/JIK): each fibre (A's row i, B's column j) is scanned once per
 *     fibre of the other operand it meets, a non-empty B column j (A row
 *     i) in the same k band: nnz(T) x the non-empty fibres of the other
 *     operand in T's k band, over the whole run;
 *   - its innermost own index is its output index (A under JKI/KJI, B
 *     under IKJ/KIJ): A's column k is scanned once per nonzero B(k, j),
 *     so each A(i, k) is read nnz(B row k) times (B(k, j): nnz(A column k)).
 * TTM and MTTKRP take the same rule in general form (join_count below):
 * an element is read once per distinct assignment of the indices its
 * tensor does not carry that sit outside its innermost own index, where
 * every other input meets it.
 * A fibre pair is scanned when both fibres are non-empty, whether or not
 * their coordinates meet: the intersection builds both coordinate streams
 * "in a scan access pattern over the shared dimension" (Tailors §5.2)
 * and only then knows whether they meet, as an effectual tile iteration
 * is one whose two tiles are non-empty (docs/semantics.md, the two-level
 * view). A fibre with no nonzero is never scanned.
 *
 * The reads go into exact_bumped.c's tables as the nonzeros the child read
 * from each overbooked tile, and exact_ob_settle charges
 * max(0, R - F) (S - P) in place of the walk's (U - F) (S - P). Below an
 * inner level, each read beyond the fills re-streams the tile's bumped
 * share from the parent tile, which reads that share of the parent tile's
 * data again (exact_ob_cascade). */
#include <stdlib.h>
#include <string.h>

#include "exact_internal.h"

/* Position of engine index x in level b's order, 0 outermost; SpMV's unit
 * index j (no loop) is outermost here: x's one column is the same fibre at
 * every iteration, so x(k) stays put while i runs inside k. */
static unsigned read_pos(const engine *e, unsigned b, unsigned x)
{
    return e->spec_index[x] < 0 ? 0 : exact_order_pos(e, b, x) + 1;
}

/* Whether operand o carries engine index x. */
static int carries(const operand *o, unsigned x)
{
    for (unsigned m = 0; m < o->order; m++)
        if (o->x[m] == x)
            return 1;
    return 0;
}

/* Position of operand o's innermost own index in level b's order. */
static unsigned inner_pos(const engine *e, unsigned b, const operand *o)
{
    unsigned ps = 0;
    for (unsigned m = 0; m < o->order; m++) {
        unsigned p = read_pos(e, b, o->x[m]);
        ps = p > ps ? p : ps;
    }
    return ps;
}

/* TTM and MTTKRP: input i is read again when an index it does not carry
 * sits outside its innermost own index (the SpMSpM rule, generalised). */
static int join_reads(const engine *e, unsigned b, unsigned i)
{
    const operand *o = &e->in[i];
    unsigned ps = inner_pos(e, b, o);
    for (unsigned x = 0; x < e->nx; x++)
        if (!carries(o, x) && read_pos(e, b, x) < ps)
            return EXACT_READS_JOIN;
    return EXACT_READS_ONCE;
}

int exact_inspill_reads(const engine *e, unsigned b, unsigned i)
{
    if ((e->kind == TESSEL_WORKLOAD_TTM || e->kind == TESSEL_WORKLOAD_MTTKRP) && i < e->nin &&
        b + 1 == e->nlev)
        return join_reads(e, b, i);
    if ((e->kind != TESSEL_WORKLOAD_SPMSPM && e->kind != TESSEL_WORKLOAD_SPMV) || e->nin != 2 ||
        i >= 2 || b + 1 != e->nlev || (e->kind == TESSEL_WORKLOAD_SPMV && i == 0))
        return EXACT_READS_ONCE; /* SpMV's A: x has one fibre, so once per use */
    const operand *o = &e->in[i];
    unsigned other = o->x[0] == 2 ? o->x[1] : o->x[0]; /* the operand's output index */
    unsigned y = 1 - other;                              /* the index it does not carry */
    unsigned pk = read_pos(e, b, 2), po = read_pos(e, b, other);
    unsigned inner = pk > po ? pk : po;
    if (read_pos(e, b, y) > inner)
        return EXACT_READS_ONCE;
    return pk > po ? EXACT_READS_FIBRES : EXACT_READS_ELEMENTS;
}

/* Input i's level-b tile holding coordinates (m0, m1) of its two modes,
 * as exact_bumped.c keys it. */
static uint64_t tile_key(const engine *e, unsigned b, unsigned i, uint64_t m0, uint64_t m1)
{
    const operand *o = &e->in[i];
    uint64_t lc[NX] = { 0 };
    lc[o->x[0]] = m0 / exact_level_edge(e, b, o->x[0]);
    lc[o->x[1]] = m1 / exact_level_edge(e, b, o->x[1]);
    return exact_ob_key(e, b, i, lc);
}

/* Per k band of level b (k / edge), the other operand's non-empty fibres
 * along the index input i does not carry: B's columns with a nonzero in
 * the band (for A), A's rows (for B). */
static uint64_t *band_fibres(engine *e, unsigned b, unsigned i)
{
    uint64_t ek = exact_level_edge(e, b, 2), nb = (e->extent[2] + ek - 1) / ek;
    const tessel_tensor *t = e->in[1 - i].t;
    uint64_t nf = i == 0 ? t->dims[1] : t->dims[0]; /* B's columns, A's rows */
    uint64_t *cnt = tessel_alloc_array(e->alloc, nb ? nb : 1, sizeof(uint64_t));
    uint64_t *seen = tessel_alloc_array(e->alloc, (i == 0 ? nf : nb) + 1, sizeof(uint64_t));
    if (!cnt || !seen) {
        tessel_dealloc(e->alloc, cnt);
        tessel_dealloc(e->alloc, seen);
        return NULL;
    }
    memset(cnt, 0, (nb ? nb : 1) * sizeof(uint64_t));
    memset(seen, 0, ((i == 0 ? nf : nb) + 1) * sizeof(uint64_t));
    for (uint64_t r = 0; r < t->dims[0]; r++)
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            if (i == 0) { /* B's rows k ascend: a column is new to band k / ek once */
                uint64_t band = r / ek, j = t->idx[1][p];
                if (seen[j] != band + 1) {
                    seen[j] = band + 1;
                    cnt[band]++;
                }
            } else { /* A's row r: each band it touches counts it once */
                uint64_t band = t->idx[1][p] / ek;
                if (seen[band] != r + 1) {
                    seen[band] = r + 1;
                    cnt[band]++;
                }
            }
        }
    tessel_dealloc(e->alloc, seen);
    return cnt;
}

/* Per k, the other operand's nonzeros on k: B's row k (for A), A's column
 * k (for B). */
static uint64_t *k_weights(engine *e, unsigned i)
{
    uint64_t K = e->extent[2];
    uint64_t *w = tessel_alloc_array(e->alloc, K ? K : 1, sizeof(uint64_t));
    if (!w)
        return NULL;
    memset(w, 0, (K ? K : 1) * sizeof(uint64_t));
    const tessel_tensor *t = e->in[1 - i].t;
    for (uint64_t r = 0; r < t->dims[0]; r++)
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            uint64_t k = i == 0 ? r : t->idx[1][p];
            if (k < K)
                w[k]++;
        }
    return w;
}

/* The compute's reads of input i's overbooked tiles at level b, as
 * nonzeros read (ob_tile.child_nnz). */
static int count_reads(engine *e, unsigned b, unsigned i, int kind)
{
    ob_table *tb = &e->ob[b % 2][i];
    const tessel_tensor *t = e->in[i].t;
    uint64_t *w = kind == EXACT_READS_FIBRES ? band_fibres(e, b, i) : k_weights(e, i);
    if (!w)
        return exact_oom_step(e, "counting the compute's reads of overbooked tiles",
                              (e->extent[2] + 1) * sizeof(uint64_t));
    uint64_t ek = exact_level_edge(e, b, 2);
    for (uint64_t r = 0; r < t->dims[0]; r++)
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            uint64_t c = t->idx[1][p], k = i == 0 ? c : r;
            uint64_t s = model_map_find(&tb->index, tile_key(e, b, i, r, c));
            if (s != UINT64_MAX)
                tb->t[s].child_nnz += kind == EXACT_READS_FIBRES ? w[k / ek] : w[k];
        }
    tessel_dealloc(e->alloc, w);
    return TESSEL_OK;
}

/* TTM and MTTKRP (EXACT_READS_JOIN). Input X's element c is read once per
 * distinct assignment z of the indices X does not carry for which every
 * other operand holds a nonzero consistent with (c, z): on an index it
 * shares with X, c's coordinate where the order puts that index outside
 * X's innermost own index and c's level-b band on the innermost one (the
 * scanned index); on an index X does not carry, z's coordinate outside
 * X's innermost own index and z's level-b tile inside it (the compute
 * walks each tile use apart). With one other operand (TTM) that is its
 * distinct projections per match; MTTKRP joins the two others on the
 * index they share beyond X. Each pair of operands of both einsums shares
 * exactly one index, the match. */

typedef struct join_entry {
    uint64_t m, p; /* match component, projection (one or two packed) */
} join_entry;

typedef struct join_side {
    unsigned shared, nproj, proj[2];
    join_entry *v;
    uint64_t n;
} join_side;

/* Index x's component of coordinate c: the coordinate outside the read
 * input's innermost own index (position ps), its level-b tile at it or
 * inside it. */
static uint64_t join_comp(const engine *e, unsigned b, unsigned x, uint64_t c, unsigned ps)
{
    return read_pos(e, b, x) < ps ? c : c / exact_level_edge(e, b, x);
}

static int entry_cmp(const void *pa, const void *pb)
{
    const join_entry *a = pa, *b = pb;
    if (a->m != b->m)
        return a->m < b->m ? -1 : 1;
    return a->p < b->p ? -1 : a->p > b->p;
}

/* Operand o's nonzeros as sorted distinct (match, projection) pairs for
 * read input i; 1 when o does not share exactly one index with i. */
static int side_build(engine *e, unsigned b, unsigned i, unsigned o, unsigned ps, join_side *sd)
{
    const operand *X = &e->in[i], *O = &e->in[o];
    unsigned nshared = 0;
    for (unsigned m = 0; m < O->order; m++) {
        if (carries(X, O->x[m])) {
            sd->shared = O->x[m];
            nshared++;
        } else if (sd->nproj < 2) {
            sd->proj[sd->nproj++] = O->x[m];
        }
    }
    if (nshared != 1 || sd->nproj == 0)
        return 1;
    const tessel_tensor *t = O->t;
    sd->v = tessel_alloc_array(e->alloc, t->nnz ? t->nnz : 1, sizeof(join_entry));
    if (!sd->v)
        return exact_oom_step(e, "counting the compute's reads of overbooked tiles",
                              t->nnz * sizeof(join_entry));
    uint64_t c[NX] = { 0 };
    for (uint64_t r = 0; r < t->dims[0]; r++)
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            c[O->x[0]] = r;
            for (unsigned m = 1; m < O->order; m++)
                c[O->x[m]] = t->idx[m][p];
            join_entry *n = &sd->v[sd->n++];
            n->m = join_comp(e, b, sd->shared, c[sd->shared], ps);
            n->p = join_comp(e, b, sd->proj[0], c[sd->proj[0]], ps);
            if (sd->nproj == 2)
                n->p = n->p * e->extent[sd->proj[1]] +
                       join_comp(e, b, sd->proj[1], c[sd->proj[1]], ps);
        }
    qsort(sd->v, sd->n, sizeof(join_entry), entry_cmp);
    uint64_t k = 0;
    for (uint64_t q = 0; q < sd->n; q++)
        if (!k || sd->v[q].m != sd->v[k - 1].m || sd->v[q].p != sd->v[k - 1].p)
            sd->v[k++] = sd->v[q];
    sd->n = k;
    return TESSEL_OK;
}

/* First entry of sd at or after (m, p). */
static uint64_t side_lower(const join_side *sd, uint64_t m, uint64_t p)
{
    uint64_t lo = 0, hi = sd->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (sd->v[mid].m < m || (sd->v[mid].m == m && sd->v[mid].p < p))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Reads of X's element at coordinates c: side 0's projections for its
 * match, each (MTTKRP) only where side 1 holds its shared component. */
static uint64_t join_reads_of(const engine *e, unsigned b, const join_side *sd, unsigned nside,
                              const uint64_t *c, unsigned ps)
{
    uint64_t m0 = join_comp(e, b, sd[0].shared, c[sd[0].shared], ps);
    uint64_t lo = side_lower(&sd[0], m0, 0), hi = side_lower(&sd[0], m0 + 1, 0);
    if (nside == 1)
        return hi - lo;
    uint64_t m1 = join_comp(e, b, sd[1].shared, c[sd[1].shared], ps), n = 0;
    unsigned x1 = sd[1].proj[0];
    for (uint64_t q = lo; q < hi; q++) {
        uint64_t p = sd[0].v[q].p, s = p;
        if (sd[0].nproj == 2)
            s = sd[0].proj[0] == x1 ? p / e->extent[sd[0].proj[1]] : p % e->extent[sd[0].proj[1]];
        uint64_t at = side_lower(&sd[1], m1, s);
        n += at < sd[1].n && sd[1].v[at].m == m1 && sd[1].v[at].p == s;
    }
    return n;
}

/* The compute's reads of input i's overbooked tiles at level b under
 * EXACT_READS_JOIN; the per-use charge where the operands do not have
 * the shape above. */
static int join_count(engine *e, unsigned b, unsigned i)
{
    ob_table *tb = &e->ob[b % 2][i];
    const operand *X = &e->in[i];
    unsigned ps = inner_pos(e, b, X), nside = 0;
    join_side sd[2];
    memset(sd, 0, sizeof(sd));
    int rc = TESSEL_OK, odd = 0;
    for (unsigned o = 0; o < e->nin && !rc && !odd; o++)
        if (o != i && nside < 2) {
            rc = side_build(e, b, i, o, ps, &sd[nside++]);
            odd = rc == 1;
        }
    if (!rc && nside == 2 && sd[1].nproj > sd[0].nproj) {
        join_side t = sd[0];
        sd[0] = sd[1];
        sd[1] = t;
    }
    if (!rc && nside == 2) { /* the second side's projection is the first's */
        unsigned x1 = sd[1].proj[0];
        odd = sd[1].nproj != 1 ||
              (sd[0].proj[0] != x1 && (sd[0].nproj < 2 || sd[0].proj[1] != x1));
    }
    for (uint64_t k = 0; odd && k < tb->n; k++)
        tb->t[k].child_nnz = tb->t[k].uses * tb->t[k].nnz;
    const tessel_tensor *t = X->t;
    uint64_t c[NX] = { 0 }, lc[NX] = { 0 };
    for (uint64_t r = 0; !rc && !odd && r < t->dims[0]; r++)
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            c[X->x[0]] = r;
            for (unsigned m = 1; m < X->order; m++)
                c[X->x[m]] = t->idx[m][p];
            for (unsigned m = 0; m < X->order; m++)
                lc[X->x[m]] = c[X->x[m]] / exact_level_edge(e, b, X->x[m]);
            uint64_t s = model_map_find(&tb->index, exact_ob_key(e, b, i, lc));
            if (s != UINT64_MAX)
                tb->t[s].child_nnz += join_reads_of(e, b, sd, nside, c, ps);
        }
    for (unsigned n = 0; n < 2; n++)
        tessel_dealloc(e->alloc, sd[n].v);
    return rc == 1 ? TESSEL_OK : rc;
}

int exact_inspill_count(engine *e, unsigned b)
{
    for (unsigned i = 0; i < e->nin; i++) {
        ob_table *t = &e->ob[b % 2][i];
        int kind = exact_inspill_reads(e, b, i);
        if (kind == EXACT_READS_JOIN) {
            int rc = t->n ? join_count(e, b, i) : TESSEL_OK;
            if (rc)
                return rc;
        } else if (kind == EXACT_READS_ONCE || !e->in[0].t || !e->in[1].t) {
            for (uint64_t k = 0; k < t->n; k++) /* once per use: the walk's charge */
                t->t[k].child_nnz = t->t[k].uses * t->t[k].nnz;
        } else if (t->n) {
            int rc = count_reads(e, b, i, kind);
            if (rc)
                return rc;
        }
    }
    exact_ob_cascade(e, b);
    return TESSEL_OK;
}
