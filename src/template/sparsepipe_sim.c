/* Sparsepipe's OEI hold simulation (the model: sparsepipe.c's top
 * comment; sparsepipe §IV-D.1): nonzeros the OS stage delivers wait in the
 * buffer until the IS stage consumes them SP_LAG steps later; when they do
 * not fit, the ones released farthest out are evicted and re-fetched. */
#include <math.h>
#include <string.h>

#include "sparsepipe_internal.h"

void sp_sim_free(const tessel_allocator *a, sp_sim *s)
{
    tessel_dealloc(a, s->tree);
    tessel_dealloc(a, s->cnt);
    tessel_dealloc(a, s->demand_up);
    tessel_dealloc(a, s->demand_dn);
    tessel_dealloc(a, s->stage);
    tessel_dealloc(a, s->touched);
    memset(s, 0, sizeof(*s));
}

int sp_sim_init(const tessel_allocator *a, uint64_t P, uint64_t cap, sp_sim *s)
{
    memset(s, 0, sizeof(*s));
    s->P = P;
    s->cap = cap;
    s->tree = tessel_alloc_array(a, P + 1, sizeof(uint64_t));
    s->cnt = tessel_alloc_array(a, P + 1, sizeof(uint64_t));
    s->demand_up = tessel_alloc_array(a, P + 1, sizeof(uint64_t));
    s->demand_dn = tessel_alloc_array(a, P + 1, sizeof(uint64_t));
    s->stage = tessel_alloc_array(a, P + 1, sizeof(uint64_t));
    s->touched = tessel_alloc_array(a, P + 1, sizeof(uint64_t));
    if (!s->tree || !s->cnt || !s->demand_up || !s->demand_dn || !s->stage || !s->touched) {
        sp_sim_free(a, s);
        return TESSEL_ENOMEM;
    }
    memset(s->tree, 0, (P + 1) * sizeof(uint64_t));
    memset(s->cnt, 0, (P + 1) * sizeof(uint64_t));
    memset(s->demand_up, 0, (P + 1) * sizeof(uint64_t));
    memset(s->demand_dn, 0, (P + 1) * sizeof(uint64_t));
    memset(s->stage, 0, (P + 1) * sizeof(uint64_t));
    return TESSEL_OK;
}

/* delta is added modulo 2^64: a removal passes 0 - x (the sums stay true). */
static void fen_add(sp_sim *s, uint64_t i, uint64_t delta)
{
    for (uint64_t j = i + 1; j <= s->P; j += j & (0 - j))
        s->tree[j] += delta;
}

/* The last step holding anything (total > 0): the first prefix reaching total. */
static uint64_t fen_top(const sp_sim *s)
{
    uint64_t pos = 0, rem = s->total, step = 1;
    while (step * 2 <= s->P)
        step *= 2;
    for (; step; step /= 2)
        if (pos + step <= s->P && s->tree[pos + step] < rem) {
            pos += step;
            rem -= s->tree[pos];
        }
    return pos; /* 0-based */
}

void sp_sim_release(sp_sim *s, uint64_t step)
{
    uint64_t c = s->cnt[step];
    if (!c)
        return;
    fen_add(s, step, 0 - c);
    s->cnt[step] = 0;
    s->total -= c;
}

/* c nonzeros loaded at this step, needed by the IS at step p (later):
 * gathered per p, then inserted once per step and p by sp_sim_evict. */
void sp_sim_arrive(sp_sim *s, uint64_t p, uint64_t c)
{
    if (!s->stage[p])
        s->touched[s->nstaged++] = p;
    s->stage[p] += c;
}

/* The step's arrivals into the buffer, then the farthest out until they fit. */
void sp_sim_evict(sp_sim *s, uint64_t o)
{
    for (uint64_t e = 0; e < s->nstaged; e++) {
        uint64_t p = s->touched[e], c = s->stage[p];
        s->stage[p] = 0;
        s->cnt[p] += c;
        fen_add(s, p, c);
        s->total += c;
        s->demand_up[o] += c;
        s->demand_dn[p] += c;
    }
    s->nstaged = 0;
    while (s->total > s->cap) {
        uint64_t q = fen_top(s);
        uint64_t take = s->cnt[q] < s->total - s->cap ? s->cnt[q] : s->total - s->cap;
        s->cnt[q] -= take;
        fen_add(s, q, 0 - take);
        s->total -= take;
        s->refetched += take;
    }
}

void sp_sim_profile(const sp_sim *s, uint64_t steps, sp_matrix *m)
{
    double held = 0, sum = 0, max = 0;
    for (uint64_t t = 0; t < steps; t++) {
        held += (double)s->demand_up[t] - (double)s->demand_dn[t];
        sum += held;
        if (held > max)
            max = held;
    }
    m->hold_max = max / SP_ONE;
    m->hold_avg = steps ? sum / (double)steps / SP_ONE : 0;
    m->refetched = (double)s->refetched / SP_ONE;
}

/* Bits of one held nonzero: a value and its (in-block) coordinate. */
unsigned sp_coord_bits_in_block(const tessel_spec_level *lv, uint64_t b)
{
    if (b <= 1)
        return lv->coord_bits;
    unsigned bits = 0;
    while (bits < 64 && (UINT64_C(1) << bits) < b * b)
        bits++;
    return bits;
}

/* The buffer's room for held nonzeros, in SP_ONE units. */
uint64_t sp_hold_capacity(const tessel_spec *spec, const sp_options *o, const sp_matrix *m,
                              double *nonzeros)
{
    if (!o->buffer_bytes) {
        *nonzeros = INFINITY;
        return UINT64_MAX;
    }
    const tessel_spec_level *lv = &spec->level[1];
    uint64_t elem = (uint64_t)lv->value_bits + sp_coord_bits_in_block(lv, o->block);
    uint64_t vectors = 4 + o->app->reads + o->app->writes;
    uint64_t reserve = tpl_sat_add(tpl_sat_mul(2 * m->max_step_nnz, elem),
                               tpl_sat_mul(tpl_sat_mul(o->subtensor, lv->value_bits), vectors));
    uint64_t have = tpl_sat_mul(o->buffer_bytes, 8);
    uint64_t room = have > reserve ? (have - reserve) / (elem ? elem : 1) : 0;
    *nonzeros = (double)room;
    return tpl_sat_mul(room, SP_ONE);
}
