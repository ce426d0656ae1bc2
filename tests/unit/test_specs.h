/* Hand-built specs for the estimator tests, independent of the YAML
 * loader: Z[i,j] = A[i,k] * B[k,j] over DRAM -> LLB (index numbers i 0,
 * j 1, k 2; default skipping; one PE, one MAC, 1 GHz). */
#ifndef TESSEL_TEST_SPECS_H
#define TESSEL_TEST_SPECS_H

#include <stdio.h>
#include <string.h>

#include "tessel/spec.h"

/* A buffer level appended inside s's innermost one: its copy, named name,
 * with tiles of edge on every index of SpMSpM. */
static inline void test_spec_nest(tessel_spec *s, const char *name, uint64_t edge)
{
    unsigned l = s->nlevels++;
    s->level[l] = s->level[l - 1];
    snprintf(s->level[l].name, sizeof(s->level[l].name), "%s", name);
    s->level[l].tile[0] = s->level[l].tile[1] = s->level[l].tile[2] = edge;
}

/* A matrix's per-rank format list [r0, r1] (TESSEL_RANK_*) at one level. */
static inline void test_set_ranks(tessel_spec_tensor_level *tl, unsigned char r0,
                                  unsigned char r1)
{
    tl->format = TESSEL_SPEC_FORMAT_RANKS;
    tl->nranks = 2;
    tl->ranks[0] = r0;
    tl->ranks[1] = r1;
}

/* order like "IKJ"; LLB tile edges ti, tk, tj (0: the whole mode); every
 * width coord_bits except values. */
static inline void test_spec_spmspm(tessel_spec *s, const char *order, uint64_t ti, uint64_t tk,
                                    uint64_t tj, int format, unsigned value_bits,
                                    unsigned coord_bits)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "test");
    tessel_spec_workload *w = &s->workload;
    w->kind = TESSEL_WORKLOAD_SPMSPM;
    w->einsum = "Z[i,j] = A[i,k] * B[k,j]";
    w->nindices = 3;
    strcpy(w->index_name[0], "i");
    strcpy(w->index_name[1], "j");
    strcpy(w->index_name[2], "k");
    w->ntensors = 3;
    const char *names[3] = { "Z", "A", "B" };
    unsigned idx[3][2] = { { 0, 1 }, { 0, 2 }, { 2, 1 } };
    for (unsigned t = 0; t < 3; t++) {
        strcpy(w->tensor[t].name, names[t]);
        w->tensor[t].rank = 2;
        w->tensor[t].index[0] = idx[t][0];
        w->tensor[t].index[1] = idx[t][1];
    }
    s->nlevels = 2;
    for (unsigned l = 0; l < 2; l++) {
        tessel_spec_level *lv = &s->level[l];
        snprintf(lv->name, sizeof(lv->name), "%s", l ? "LLB" : "DRAM");
        lv->instances = 1;
        lv->word_bits = 64;
        lv->value_bits = value_bits;
        lv->coord_bits = lv->offset_bits = lv->run_bits = coord_bits;
        lv->format = format;
        for (unsigned t = 0; t < 3; t++) {
            lv->tensor[t].format = -1;
            lv->tensor[t].sparse.skip_on = t == 0 ? 6u : (t == 1 ? 4u : 2u);
        }
    }
    tessel_spec_level *llb = &s->level[1];
    llb->has_mapping = 1;
    llb->tile[0] = ti;
    llb->tile[1] = tj;
    llb->tile[2] = tk;
    for (unsigned p = 0; p < 3; p++)
        llb->order[p] = order[p] == 'I' ? 0 : order[p] == 'J' ? 1 : 2;
    s->compute.pes = 1;
    s->compute.macs_per_pe = 1;
    s->compute.clock_ghz = 1;
}

/* s (an SpMSpM spec from test_spec_spmspm) made TTM Y[i,j,r] = T[i,j,k] *
 * M[k,r]: index numbers i 0, j 1, r 2, k 3; level 1's order (letters of
 * IJRK) and tiles (i j r k, 0: the whole mode). */
static inline void test_spec_ttm_workload(tessel_spec *s, const char *order, const uint64_t *tile)
{
    tessel_spec_workload *w = &s->workload;
    w->kind = TESSEL_WORKLOAD_TTM;
    w->einsum = "Y[i,j,r] = T[i,j,k] * M[k,r]";
    w->nindices = 4;
    const char *idx_names[4] = { "i", "j", "r", "k" };
    for (unsigned x = 0; x < 4; x++)
        strcpy(w->index_name[x], idx_names[x]);
    const char *names[3] = { "Y", "T", "M" };
    unsigned ranks[3] = { 3, 3, 2 };
    unsigned idx[3][3] = { { 0, 1, 2 }, { 0, 1, 3 }, { 3, 2, 0 } };
    for (unsigned t = 0; t < 3; t++) {
        strcpy(w->tensor[t].name, names[t]);
        w->tensor[t].rank = ranks[t];
        for (unsigned m = 0; m < 3; m++)
            w->tensor[t].index[m] = idx[t][m];
    }
    for (unsigned x = 0; x < 4; x++)
        s->level[1].tile[x] = tile[x];
    for (unsigned p = 0; p < 4; p++) {
        char c = order[p];
        s->level[1].order[p] = c == 'I' ? 0 : c == 'J' ? 1 : c == 'R' ? 2 : 3;
    }
}

/* MTTKRP Y[i,r] = T[i,j,k] * B[j,r] * C[k,r] at one buffer level (csr,
 * unbounded), loop order of letters I R J K, tiles i r j k (0: whole
 * mode); each input skips on both partners. Index numbers i 0, r 1, j 2,
 * k 3. */
static inline void test_spec_mttkrp(tessel_spec *s, const char *order, const uint64_t *tile /* i r j k */)
{
    test_spec_spmspm(s, "IJK", 128, 128, 128, 1, 64, 32);
    s->level[1].capacity = 0;
    tessel_spec_workload *w = &s->workload;
    w->kind = TESSEL_WORKLOAD_MTTKRP;
    w->einsum = "Y[i,r] = T[i,j,k] * B[j,r] * C[k,r]";
    w->nindices = 4;
    strcpy(w->index_name[0], "i");
    strcpy(w->index_name[1], "r");
    strcpy(w->index_name[2], "j");
    strcpy(w->index_name[3], "k");
    w->ntensors = 4;
    const char *names[4] = { "Y", "T", "B", "C" };
    unsigned ranks[4] = { 2, 3, 2, 2 };
    unsigned idx[4][3] = { { 0, 1, 0 }, { 0, 2, 3 }, { 2, 1, 0 }, { 3, 1, 0 } };
    for (unsigned t = 0; t < 4; t++) {
        strcpy(w->tensor[t].name, names[t]);
        w->tensor[t].rank = ranks[t];
        for (unsigned m = 0; m < 3; m++)
            w->tensor[t].index[m] = idx[t][m];
    }
    for (unsigned l = 0; l < 2; l++)
        for (unsigned t = 0; t < 4; t++) {
            s->level[l].tensor[t].format = -1;
            s->level[l].tensor[t].sparse.skip_on = t == 0 ? 14u : 14u & ~(1u << t);
        }
    for (unsigned x = 0; x < 4; x++)
        s->level[1].tile[x] = tile[x];
    for (unsigned p = 0; p < 4; p++) {
        char c = order[p];
        s->level[1].order[p] = c == 'I' ? 0 : c == 'R' ? 1 : c == 'J' ? 2 : 3;
    }
}

#endif
