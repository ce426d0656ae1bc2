/* Rule 4 (docs/semantics.md; Tailors §4, §6.2) at an inner buffer level: the
 * bumped part of an overbooked tile is fetched from the parent again at
 * every read of it by the child level during the tile's residency.
 *
 * The walk of boundary b (parent -> level b) prices each fill of a tile T
 * of S bytes whole and, at a further use of the resident T, its bumped
 * part S - P again (P: T's partition). That is the rule when the child
 * reads T exactly once per use, which holds at the innermost level: the
 * compute merges each operand tile once per effectual tile iteration (the
 * `intersections` count). At an inner level the child is level b+1, which
 * fills its sub-tiles of T as often as its own loop nest needs them: once
 * per level-b use only when level b+1 reuses every sub-tile, and more
 * often otherwise. So the walk of b records every overbooked tile it moved
 * (exact_ob_note), the walk of b+1 adds up the nonzeros it filled from each
 * (exact_ob_child), and exact_ob_settle replaces the per-use charge with
 * the per-read one.
 *
 * Tailors keep the head of the tile resident and stream the tail through
 * a FIFO region (§4); a sub-tile fill reads part of T, whose bumped share
 * is taken as uniform, (S - P) / S of every byte read: §6.2 finds the lost
 * reuse follows the share of bumped data "as expected from a scan access
 * pattern rather than on specific sparsity patterns". With R = the
 * nonzeros level b+1 filled from T over the run divided by T's nonzeros
 * (whole reads of T by the child), F fills and U uses of T at level b:
 *   per-use charge (walk):   (U - F) (S - P)
 *   per-read charge (rule):  max(0, R - F) (S - P)
 * each fill's own stream covering the first read of its residency. */
#include <string.h>

#include "exact_internal.h"

uint64_t exact_ob_key(const engine *e, unsigned l, unsigned i, const uint64_t *lc)
{
    const operand *o = &e->in[i];
    uint64_t key = 0;
    for (unsigned m = 0; m < o->order; m++) {
        unsigned x = o->x[m];
        uint64_t e_l = exact_level_edge(e, l, x), n = (e->extent[x] + e_l - 1) / e_l;
        key = key * (n ? n : 1) + lc[x];
    }
    return key;
}

static int is_inner(const engine *e, unsigned b)
{
    return b + 1 < e->nlev;
}

/* The slot of the level-(b-1) overbooked tile holding input i's level-b
 * tile at level-b coordinates c, UINT64_MAX when it is not recorded. */
static uint64_t parent_slot(const engine *e, const boundary *bd, unsigned i, const uint64_t *c)
{
    unsigned pl = bd->b - 1;
    const ob_table *t = &e->ob[pl % 2][i];
    if (pl == 0 || !t->n)
        return UINT64_MAX;
    uint64_t pc[NX] = { 0 };
    for (unsigned x = 0; x < e->nx; x++)
        pc[x] = c[x] * bd->tile[x] / exact_level_edge(e, pl, x);
    return model_map_find(&t->index, exact_ob_key(e, pl, i, pc));
}

int exact_ob_note(engine *e, const boundary *bd, unsigned i, const uint64_t *c, uint64_t nnz,
                  uint64_t data, uint64_t meta, uint64_t part, int fill)
{
    /* the innermost level's tiles: for the compute's reads, and below an
     * inner level for the reads of the parent tile they cascade to */
    int compute = e->inspill && bd->b + 1 == e->nlev &&
                  (exact_inspill_reads(e, bd->b, i) != EXACT_READS_ONCE || bd->b >= 2);
    if ((!is_inner(e, bd->b) && !compute) || !part || data + meta <= part)
        return TESSEL_OK;
    ob_table *t = &e->ob[bd->b % 2][i];
    t->index.alloc = e->alloc;
    uint64_t *slot = model_map_slot(&t->index, exact_ob_key(e, bd->b, i, c), t->n);
    if (!slot)
        return exact_oom_step(e, "indexing overbooked tiles", model_map_grow_bytes(&t->index));
    if (*slot == t->n) {
        if (t->n == t->cap) {
            uint64_t cap = t->cap ? 2 * t->cap : 64;
            ob_tile *v = tessel_realloc_array(e->alloc, t->t, cap, sizeof(ob_tile));
            if (!v)
                return exact_oom_step(e, "recording overbooked tiles", cap * sizeof(ob_tile));
            t->t = v;
            t->cap = cap;
        }
        ob_tile *n = &t->t[t->n++];
        memset(n, 0, sizeof(*n));
        n->nnz = nnz;
        n->bytes = data + meta;
        n->meta = meta;
        n->part = part;
        n->band = c[2]; /* SpMSpM's, SpMV's k tile (stat_inspill.c, on the stat walk) */
        n->up = parent_slot(e, bd, i, c);
    }
    ob_tile *n = &t->t[*slot];
    n->fills += fill != 0;
    n->uses++;
    return TESSEL_OK;
}

int exact_ob_child(engine *e, const boundary *bd, unsigned i, const uint64_t *c, uint64_t nnz)
{
    uint64_t s = parent_slot(e, bd, i, c);
    if (s != UINT64_MAX)
        e->ob[(bd->b - 1) % 2][i].t[s].child_nnz += nnz;
    return TESSEL_OK;
}

void exact_ob_cascade(engine *e, unsigned b)
{
    for (unsigned i = 0; b >= 2 && i < e->nin; i++) {
        const ob_table *t = &e->ob[b % 2][i];
        ob_table *up = &e->ob[(b - 1) % 2][i];
        for (uint64_t k = 0; k < t->n; k++) {
            const ob_tile *n = &t->t[k];
            if (n->up == UINT64_MAX || n->up >= up->n || !n->nnz || !n->bytes)
                continue;
            double reads = (double)n->child_nnz / (double)n->nnz;
            double beyond = reads > (double)n->fills ? reads - (double)n->fills : 0;
            double share = (double)(n->bytes - n->part) / (double)n->bytes;
            up->t[n->up].child_nnz += (uint64_t)(beyond * share * (double)n->nnz);
        }
    }
}

/* Bumped bytes split into data and metadata like the tile's own bytes,
 * truncated as the walk splits them. */
static uint64_t meta_of(const ob_tile *n, uint64_t extra)
{
    return (uint64_t)((double)extra * (double)n->meta / (double)n->bytes);
}

/* Level b's overbooked tiles, once level b+1 has been walked: the per-use
 * charge of the walk replaced with the per-read charge (header). */
void exact_ob_settle(engine *e, unsigned b)
{
    for (unsigned i = 0; i < e->nin; i++) {
        ob_table *t = &e->ob[b % 2][i];
        tessel_traffic *tr = &e->res->traffic[b][e->in[i].spec_tensor];
        for (uint64_t k = 0; k < t->n; k++) {
            const ob_tile *n = &t->t[k];
            uint64_t extra = n->bytes - n->part;
            uint64_t again = n->uses - n->fills;
            uint64_t old_meta = again * meta_of(n, extra), old = again * extra;
            double reads = n->nnz ? (double)n->child_nnz / (double)n->nnz : 0;
            double beyond = reads > (double)n->fills ? reads - (double)n->fills : 0;
            uint64_t now = (uint64_t)(beyond * (double)extra);
            uint64_t now_meta = meta_of(n, now);
            tr->in_data = tr->in_data - (old - old_meta) + (now - now_meta);
            tr->in_metadata = tr->in_metadata - old_meta + now_meta;
            tr->bumped_bytes = tr->bumped_bytes - old + now;
            tr->overflow_bytes = tr->overflow_bytes - old + now;
        }
        model_map_free(&t->index);
        tessel_dealloc(e->alloc, t->t);
        memset(t, 0, sizeof(*t));
    }
}

void exact_ob_free(engine *e)
{
    for (unsigned g = 0; g < 2; g++)
        for (unsigned i = 0; i < NIN; i++) {
            model_map_free(&e->ob[g][i].index);
            tessel_dealloc(e->alloc, e->ob[g][i].t);
            memset(&e->ob[g][i], 0, sizeof(e->ob[g][i]));
        }
}
