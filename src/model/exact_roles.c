/* The exact estimator: which workload tensor plays which role, in which
 * mode order (canonical operands). */
#include <string.h>

#include "exact_internal.h"

int exact_oom(engine *e)
{
    return exact_oom_step(e, "evaluating the output's tiles", 0);
}

int exact_oom_step(engine *e, const char *step, uint64_t bytes)
{
    return tessel_diag_oom(e->diag, NULL, step, (size_t)bytes);
}

tessel_format tessel_model_format(int spec_format)
{
    if (spec_format < 0 || spec_format >= (int)TESSEL_FORMAT_COUNT)
        return TESSEL_FORMAT_CSR;
    return (tessel_format)spec_format;
}

/* ------------------------------------------------------------------ */
/* Roles: which workload tensor is which operand, in canonical mode order. */

static int spec_tensor_with(const tessel_spec *s, unsigned rank, int must_have_x, int skip)
{
    for (unsigned t = 1; t < s->workload.ntensors; t++) {
        const tessel_spec_tensor *st = &s->workload.tensor[t];
        if ((int)t == skip || st->rank != rank)
            continue;
        if (must_have_x < 0)
            return (int)t;
        for (unsigned m = 0; m < st->rank; m++)
            if ((int)st->index[m] == must_have_x)
                return (int)t;
    }
    return -1;
}

static int mode_of(const tessel_spec_tensor *st, unsigned spec_x)
{
    for (unsigned m = 0; m < st->rank; m++)
        if (st->index[m] == spec_x)
            return (int)m;
    return -1;
}

/* Binds operand o to workload tensor t with its modes reordered so that
 * mode m holds engine index xs[m]. eng_of_spec maps spec indices. */
static int bind_operand(engine *e, const tessel_workload_data *w, operand *o, unsigned t,
                        const unsigned *xs, unsigned order)
{
    const tessel_spec_tensor *st = &e->spec->workload.tensor[t];
    o->spec_tensor = t;
    o->ranks = st->rank;
    o->order = order;
    for (unsigned m = 0; m < order; m++)
        o->x[m] = xs[m];
    tessel_tensor *src = w->tensor[t];
    if (st->rank == 1 && order == 2) {
        /* SpMV: x[k] becomes a K x 1 matrix. */
        uint64_t dims[2] = { src->dims[0], 1 };
        tessel_coo_builder *b = NULL;
        int rc = tessel_coo_builder_create(2, dims, 0, e->alloc, &b, e->diag);
        for (uint64_t k = 0; !rc && k < src->dims[0]; k++) {
            if (src->ptr[k + 1] > src->ptr[k]) {
                uint32_t c[2] = { (uint32_t)k, 0 };
                rc = tessel_coo_builder_add(b, c, 1.0);
            }
        }
        if (!rc)
            rc = tessel_coo_builder_finish(b, 0, &o->t, e->diag);
        else
            rc = exact_oom_step(e, "building a dense operand",
                                tessel_coo_builder_count(b) * (sizeof(uint32_t) * 2 + sizeof(double)));
        tessel_coo_builder_free(&b);
        o->owned = 1;
        return rc;
    }
    unsigned perm[TESSEL_MAX_ORDER];
    int identity = 1;
    for (unsigned m = 0; m < order; m++) {
        int sx = e->spec_index[xs[m]];
        int sm = mode_of(st, (unsigned)sx);
        perm[m] = (unsigned)sm;
        identity &= sm == (int)m;
    }
    if (identity) {
        o->t = src;
        return TESSEL_OK;
    }
    o->owned = 1;
    return model_permute(src, perm, e->alloc, &o->t, e->diag);
}

static int not_in(const tessel_spec_tensor *st, unsigned x)
{
    return mode_of(st, x) < 0;
}

/* Maps the workload's tensors and indices onto the engine's fixed roles (inputs A, B,
 * optional C; output; i, j, k, ...) for each supported einsum kind. */
int exact_setup_roles(engine *e, const tessel_workload_data *w)
{
    const tessel_spec *s = e->spec;
    const tessel_spec_tensor *out = &s->workload.tensor[0];
    e->kind = s->workload.kind;
    for (unsigned x = 0; x < NX; x++)
        e->spec_index[x] = -1;
    int ta, tb, tc = -1;
    unsigned xa[3], xb[3], xc[3] = { 0 }, xo[3];
    switch (e->kind) {
    case TESSEL_WORKLOAD_SPMSPM:
    case TESSEL_WORKLOAD_SPMV: {
        /* engine: 0 = i, 1 = j, 2 = k */
        e->nx = 3;
        e->spec_index[0] = (int)out->index[0];
        ta = spec_tensor_with(s, 2, (int)out->index[0], -1);
        if (ta < 0)
            goto unsupported;
        tb = e->kind == TESSEL_WORKLOAD_SPMV ? spec_tensor_with(s, 1, -1, ta)
                                             : spec_tensor_with(s, 2, -1, ta);
        if (tb < 0)
            goto unsupported;
        const tessel_spec_tensor *sa = &s->workload.tensor[ta];
        for (unsigned m = 0; m < 2; m++)
            if (sa->index[m] != out->index[0])
                e->spec_index[2] = (int)sa->index[m];
        if (e->kind == TESSEL_WORKLOAD_SPMSPM)
            e->spec_index[1] = (int)out->index[1];
        xa[0] = 0, xa[1] = 2;
        xb[0] = 2, xb[1] = 1;
        xo[0] = 0, xo[1] = 1;
        e->nin = 2;
        e->nred = 1, e->red[0] = 2;
        if (bind_operand(e, w, &e->in[0], (unsigned)ta, xa, 2) ||
            bind_operand(e, w, &e->in[1], (unsigned)tb, xb, 2))
            return e->diag ? e->diag->code : TESSEL_EINVAL;
        break;
    }
    case TESSEL_WORKLOAD_TTM: {
        /* engine: 0, 1 = the output indices the 3-tensor keeps, 2 = the
         * factor's output index, 3 = the contracted index */
        e->nx = 4;
        ta = spec_tensor_with(s, 3, -1, -1);
        tb = spec_tensor_with(s, 2, -1, ta);
        if (ta < 0 || tb < 0)
            goto unsupported;
        const tessel_spec_tensor *st = &s->workload.tensor[ta], *sm = &s->workload.tensor[tb];
        unsigned n = 0;
        for (unsigned m = 0; m < 3; m++) {
            if (!not_in(out, st->index[m]) && n < 2)
                e->spec_index[n++] = (int)st->index[m];
            else
                e->spec_index[3] = (int)st->index[m];
        }
        for (unsigned m = 0; m < 2; m++)
            if (sm->index[m] != (unsigned)e->spec_index[3])
                e->spec_index[2] = (int)sm->index[m];
        xa[0] = 0, xa[1] = 1, xa[2] = 3;
        xb[0] = 3, xb[1] = 2;
        xo[0] = 0, xo[1] = 1, xo[2] = 2;
        e->nin = 2;
        e->nred = 1, e->red[0] = 3;
        if (bind_operand(e, w, &e->in[0], (unsigned)ta, xa, 3) ||
            bind_operand(e, w, &e->in[1], (unsigned)tb, xb, 2))
            return e->diag ? e->diag->code : TESSEL_EINVAL;
        break;
    }
    case TESSEL_WORKLOAD_MTTKRP: {
        /* engine: 0 = i (kept by the 3-tensor), 1 = r, 2 = j, 3 = k */
        e->nx = 4;
        ta = spec_tensor_with(s, 3, -1, -1);
        if (ta < 0)
            goto unsupported;
        const tessel_spec_tensor *st = &s->workload.tensor[ta];
        unsigned n = 2;
        for (unsigned m = 0; m < 3; m++) {
            if (!not_in(out, st->index[m]))
                e->spec_index[0] = (int)st->index[m];
            else if (n < 4)
                e->spec_index[n++] = (int)st->index[m];
        }
        for (unsigned m = 0; m < 2; m++)
            if ((int)out->index[m] != e->spec_index[0])
                e->spec_index[1] = (int)out->index[m];
        tb = spec_tensor_with(s, 2, e->spec_index[2], ta);
        tc = spec_tensor_with(s, 2, e->spec_index[3], ta);
        if (tb < 0 || tc < 0 || tb == tc)
            goto unsupported;
        xa[0] = 0, xa[1] = 2, xa[2] = 3;
        xb[0] = 2, xb[1] = 1;
        xc[0] = 3, xc[1] = 1;
        xo[0] = 0, xo[1] = 1;
        e->nin = 3;
        e->nred = 2, e->red[0] = 2, e->red[1] = 3;
        if (bind_operand(e, w, &e->in[0], (unsigned)ta, xa, 3) ||
            bind_operand(e, w, &e->in[1], (unsigned)tb, xb, 2) ||
            bind_operand(e, w, &e->in[2], (unsigned)tc, xc, 2))
            return e->diag ? e->diag->code : TESSEL_EINVAL;
        break;
    }
    default:
        goto unsupported;
    }
    for (unsigned x = 0; x < NX; x++)
        if (e->spec_index[x] < 0 && x < e->nx && e->kind != TESSEL_WORKLOAD_SPMV)
            goto unsupported;
    e->out.order = e->kind == TESSEL_WORKLOAD_TTM ? 3 : 2;
    for (unsigned m = 0; m < e->out.order; m++)
        e->out.x[m] = xo[m];
    e->out.spec_tensor = 0;
    e->out.ranks = s->workload.tensor[0].rank;
    for (unsigned x = 0; x < e->nx; x++)
        e->extent[x] = e->spec_index[x] < 0 ? 1 : w->extent[e->spec_index[x]];
    for (unsigned i = 0; i < e->nin; i++)
        for (unsigned m = 0; m < e->in[i].order; m++)
            if (e->in[i].t->dims[m] != e->extent[e->in[i].x[m]])
                return tessel_diag_set(e->diag, TESSEL_EINVAL, NULL, 0, 0, "workload.data",
                                       "%s: mode %u has %llu entries, the einsum needs %llu",
                                       s->workload.tensor[e->in[i].spec_tensor].name, m + 1,
                                       (unsigned long long)e->in[i].t->dims[m],
                                       (unsigned long long)e->extent[e->in[i].x[m]]);
    return TESSEL_OK;
unsupported:
    return tessel_diag_set(e->diag, TESSEL_EUNSUPPORTED, s->workload.pos.file,
                           s->workload.pos.line, s->workload.pos.column, "workload.einsum",
                           "the exact estimator handles SpMSpM, SpMV, TTM and MTTKRP; "
                           "'%s' is none of them",
                           s->workload.einsum ? s->workload.einsum : "");
}

