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
#include <string.h>

#include "exact_internal.h"

/* Position of engine index x in level b's order, 0 outermost; SpMV's unit
 * index j (no loop) is outermost here: x's one column is the same fibre at
 * every iteration, so x(k) stays put while i runs inside k. */
static unsigned read_pos(const engine *e, unsigned b, unsigned x)
{
    return e->spec_index[x] < 0 ? 0 : exact_order_pos(e, b, x) + 1;
}

int exact_inspill_reads(const engine *e, unsigned b, unsigned i)
{
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

int exact_inspill_count(engine *e, unsigned b)
{
    for (unsigned i = 0; i < e->nin; i++) {
        ob_table *t = &e->ob[b % 2][i];
        int kind = exact_inspill_reads(e, b, i);
        if (kind == EXACT_READS_ONCE || !e->in[0].t || !e->in[1].t) {
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
