/* Binding a spec's input tensors to data: files, other tensors (possibly
 * transposed) and dense operands, with the index extents checked. */
#include <stdio.h>
#include <string.h>

#include "model_internal.h"

static int oom_list(tessel_diag_list *errors)
{
    return tessel_diag_list_add(errors, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory while "
                                "creating the workload data (asked for %zu bytes)",
                                sizeof(tessel_workload_data));
}

void tessel_workload_free(tessel_workload_data **wp)
{
    if (!wp || !*wp)
        return;
    tessel_workload_data *w = *wp;
    for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++)
        if (w->owned[t])
            tessel_tensor_free(&w->tensor[t]);
    model_workload_memo_free(w);
    tessel_dealloc(w->alloc, w);
    *wp = NULL;
}

void tessel_workload_drop_tensors(tessel_workload_data *w)
{
    if (!w)
        return;
    for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
        if (w->owned[t])
            tessel_tensor_free(&w->tensor[t]);
        w->tensor[t] = NULL;
        w->owned[t] = 0;
    }
    model_workload_memo_free(w);
}

/* "dir/G51.mtx.gz" -> "G51" */
static void file_stem(const char *path, char *buf, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    static const char *const exts[] = { ".mtx.gz", ".tns.gz", ".mtx", ".tns", ".tsl" };
    for (size_t e = 0; e < sizeof(exts) / sizeof(exts[0]); e++) {
        size_t el = strlen(exts[e]);
        if (len > el && strcmp(base + len - el, exts[e]) == 0) {
            len -= el;
            break;
        }
    }
    snprintf(buf, n, "%.*s", (int)len, base);
}

/* A binding names another tensor when it is an input's name, optionally
 * followed by ^T. Returns that tensor's number or -1; *transpose set. */
static int binding_reference(const tessel_spec *spec, const char *data, int *transpose)
{
    char name[TESSEL_SPEC_NAME_MAX + 4];
    size_t len = strlen(data);
    *transpose = 0;
    if (len >= sizeof(name))
        return -1;
    memcpy(name, data, len + 1);
    if (len > 2 && strcmp(name + len - 2, "^T") == 0) {
        name[len - 2] = '\0';
        *transpose = 1;
    }
    for (unsigned t = 1; t < spec->workload.ntensors; t++)
        if (strcmp(spec->workload.tensor[t].name, name) == 0)
            return (int)t;
    return -1;
}

/* The matrix transpose of t (order 2 only). */
int model_transpose(const tessel_tensor *t, const tessel_allocator *a, tessel_tensor **out,
                    tessel_diag *diag)
{
    unsigned perm[2] = { 1, 0 };
    return model_permute(t, perm, a, out, diag);
}

/* Builds the tensor when filling the builder went well (rc == 0); frees
 * the builder either way. */
static int finish_builder(tessel_coo_builder **b, int rc, tessel_tensor **out, tessel_diag *diag)
{
    if (rc) /* the entries' arrays at the count reached */
        rc = tessel_diag_oom(diag, NULL, "copying a tensor's entries (permuted or dense)",
                             (size_t)(tessel_coo_builder_count(*b) * 2 *
                                      (sizeof(uint32_t) + sizeof(double))));
    else
        rc = tessel_coo_builder_finish(*b, 0, out, diag);
    tessel_coo_builder_free(b);
    return rc;
}

/* A copy of t with its modes permuted: mode m of the result is mode
 * perm[m] of t. */
int model_permute(const tessel_tensor *t, const unsigned *perm, const tessel_allocator *a,
                  tessel_tensor **out, tessel_diag *diag)
{
    uint64_t dims[TESSEL_MAX_ORDER];
    for (unsigned m = 0; m < t->order; m++)
        dims[m] = t->dims[perm[m]];
    tessel_coo_builder *b = NULL;
    int rc = tessel_coo_builder_create(t->order, dims, t->values != NULL, a, &b, diag);
    if (rc)
        return rc;
    rc = tessel_coo_builder_reserve(b, t->nnz);
    for (uint64_t r = 0; !rc && r < t->dims[0]; r++) {
        for (uint64_t e = t->ptr[r]; !rc && e < t->ptr[r + 1]; e++) {
            uint32_t src[TESSEL_MAX_ORDER], dst[TESSEL_MAX_ORDER];
            src[0] = (uint32_t)r;
            for (unsigned m = 1; m < t->order; m++)
                src[m] = t->idx[m][e];
            for (unsigned m = 0; m < t->order; m++)
                dst[m] = src[perm[m]];
            rc = tessel_coo_builder_add(b, dst, t->values ? t->values[e] : 1.0);
        }
    }
    return finish_builder(&b, rc, out, diag);
}

/* An all-ones tensor of the given shape (dense operands). */
static int make_dense(unsigned order, const uint64_t *dims, const tessel_allocator *a,
                      tessel_tensor **out, tessel_diag *diag)
{
    uint64_t total = 1;
    for (unsigned m = 0; m < order; m++) {
        if (dims[m] == 0 || total > (UINT64_C(1) << 32) / dims[m])
            return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, NULL,
                                   "a dense operand of more than 2^32 entries is not supported");
        total *= dims[m];
    }
    tessel_coo_builder *b = NULL;
    int rc = tessel_coo_builder_create(order, dims, 0, a, &b, diag);
    if (rc)
        return rc;
    rc = tessel_coo_builder_reserve(b, total);
    uint32_t c[TESSEL_MAX_ORDER] = { 0 };
    for (uint64_t n = 0; !rc && n < total; n++) {
        rc = tessel_coo_builder_add(b, c, 1.0);
        for (int m = (int)order - 1; m >= 0; m--) {
            if (++c[m] < dims[m])
                break;
            c[m] = 0;
        }
    }
    return finish_builder(&b, rc, out, diag);
}

static int add_error(tessel_diag_list *errors, const tessel_spec_tensor *st, tessel_diag *d)
{
    /* Data errors point at the file; binding errors at the spec entry. */
    if (!d->file[0]) {
        tessel_diag_set_file(d, st->pos.file ? st->pos.file : "");
        d->line = st->pos.line;
        d->column = st->pos.column;
    }
    tessel_diag_list_push(errors, d);
    return d->code;
}

/* Records the extent of index x implied by tensor t's mode m; a clash
 * with an extent already known is an error at t's binding. */
static int check_extent(const tessel_spec *spec, tessel_workload_data *w, const char **from,
                        unsigned t, unsigned m, tessel_diag_list *errors)
{
    const tessel_spec_tensor *st = &spec->workload.tensor[t];
    unsigned x = st->index[m];
    uint64_t have = w->tensor[t]->dims[m];
    if (w->extent[x] == 0) {
        w->extent[x] = have;
        from[x] = st->name;
        return TESSEL_OK;
    }
    if (w->extent[x] == have)
        return TESSEL_OK;
    return tessel_diag_list_add(errors, TESSEL_EINVAL, st->pos.file, st->pos.line,
                                st->pos.column, "workload.data",
                                "%s has %llu entries along index %s (mode %u) but %s has %llu",
                                st->name, (unsigned long long)have, spec->workload.index_name[x],
                                m + 1, from[x], (unsigned long long)w->extent[x]);
}

static int load_file(const tessel_spec *spec, tessel_workload_data *w, unsigned t,
                     const tessel_load_options *opt, tessel_diag_list *errors)
{
    const tessel_spec_tensor *st = &spec->workload.tensor[t];
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_tensor_load(st->data, opt, w->alloc, &w->tensor[t], NULL, &d);
    if (rc)
        return add_error(errors, st, &d);
    w->owned[t] = 1;
    file_stem(st->data, w->label[t], sizeof(w->label[t]));
    if (w->tensor[t]->order != st->rank)
        return tessel_diag_list_add(errors, TESSEL_EINVAL, st->pos.file, st->pos.line,
                                    st->pos.column, "workload.data",
                                    "%s is used with %u indices in the einsum but %s has order %u",
                                    st->name, st->rank, st->data, w->tensor[t]->order);
    return TESSEL_OK;
}

/* A density model's seeded synthetic instance (tessel_generate), for the
 * estimators that walk real data. */
static int bind_model(const tessel_spec *spec, tessel_workload_data *w, unsigned t,
                      tessel_diag_list *errors)
{
    const tessel_spec_tensor *st = &spec->workload.tensor[t];
    static const tessel_gen_kind kinds[4] = { TESSEL_GEN_UNIFORM, TESSEL_GEN_BANDED,
                                              TESSEL_GEN_NM, TESSEL_GEN_FIXED };
    static const char *const names[4] = { "uniform", "banded", "nm", "fixed-structured" };
    int k = st->model.kind >= 0 && st->model.kind < 4 ? st->model.kind : 0;
    tessel_gen_params p;
    tessel_gen_params_init(&p, kinds[k]);
    p.rows = st->model.rows;
    p.cols = st->model.cols;
    p.seed = st->model.seed;
    p.density = st->model.density;
    p.bandwidth = st->model.bandwidth;
    p.n = st->model.n;
    p.m = st->model.m;
    p.nnz = st->model.nnz;
    if (k == 0 && !p.nnz) {
        double want = st->model.density * (double)p.rows * (double)p.cols + 0.5;
        p.nnz = want >= 1.8e19 ? UINT64_MAX : (uint64_t)want;
    }
    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_generate(&p, w->alloc, &w->tensor[t], &d))
        return add_error(errors, st, &d);
    w->owned[t] = 1;
    if (k == 0)
        snprintf(w->label[t], sizeof(w->label[t]), "%s-%llux%llu-nnz%llu-s%llu", names[k],
                 (unsigned long long)p.rows, (unsigned long long)p.cols,
                 (unsigned long long)w->tensor[t]->nnz, (unsigned long long)p.seed);
    else if (k == 1)
        snprintf(w->label[t], sizeof(w->label[t]), "%s-%llux%llu-w%llu-d%g-s%llu", names[k],
                 (unsigned long long)p.rows, (unsigned long long)p.cols,
                 (unsigned long long)p.bandwidth, p.density, (unsigned long long)p.seed);
    else if (k == 3)
        snprintf(w->label[t], sizeof(w->label[t]), "%s-%llux%llu-d%g-s%llu", names[k],
                 (unsigned long long)p.rows, (unsigned long long)p.cols, p.density,
                 (unsigned long long)p.seed);
    else
        snprintf(w->label[t], sizeof(w->label[t]), "%s-%llux%llu-%u:%u-s%llu", names[k],
                 (unsigned long long)p.rows, (unsigned long long)p.cols, p.n, p.m,
                 (unsigned long long)p.seed);
    return TESSEL_OK;
}

enum binding_kind { BIND_NONE, BIND_FILE, BIND_REFERENCE, BIND_DENSE, BIND_MODEL };
static enum binding_kind binding_kind(const tessel_spec *spec, unsigned t);

static int bind_reference(const tessel_spec *spec, tessel_workload_data *w, unsigned t,
                          tessel_diag_list *errors)
{
    const tessel_spec_tensor *st = &spec->workload.tensor[t];
    int transpose;
    int src = binding_reference(spec, st->data, &transpose);
    if (src >= 0 && !w->tensor[src] && binding_kind(spec, (unsigned)src) == BIND_FILE)
        return TESSEL_EINVAL; /* its file failed to load: reported already */
    if (src < 0 || !w->tensor[src])
        return tessel_diag_list_add(errors, TESSEL_EINVAL, st->pos.file, st->pos.line,
                                    st->pos.column, "workload.data",
                                    "%s refers to %s, which is not bound to a data file", st->name,
                                    st->data);
    if (!transpose) {
        w->tensor[t] = w->tensor[src];
        memcpy(w->label[t], w->label[src], sizeof(w->label[t]));
        return TESSEL_OK;
    }
    if (w->tensor[src]->order != 2)
        return tessel_diag_list_add(errors, TESSEL_EINVAL, st->pos.file, st->pos.line,
                                    st->pos.column, "workload.data",
                                    "%s: only matrices can be transposed (%s has order %u)",
                                    st->name, st->data, w->tensor[src]->order);
    tessel_diag d;
    tessel_diag_clear(&d);
    if (model_transpose(w->tensor[src], w->alloc, &w->tensor[t], &d))
        return add_error(errors, st, &d);
    w->owned[t] = 1;
    char base[sizeof(w->label[0])];
    memcpy(base, w->label[src], sizeof(base));
    snprintf(w->label[t], sizeof(w->label[t]), "%.250s^T", base);
    return TESSEL_OK;
}

static int bind_dense(const tessel_spec *spec, tessel_workload_data *w, unsigned t,
                      tessel_diag_list *errors)
{
    const tessel_spec_tensor *st = &spec->workload.tensor[t];
    uint64_t dims[TESSEL_MAX_ORDER];
    for (unsigned m = 0; m < st->rank; m++) {
        unsigned x = st->index[m];
        dims[m] = w->extent[x] ? w->extent[x] : spec->workload.extent[x];
        if (dims[m] == 0)
            return tessel_diag_list_add(
                errors, TESSEL_EINVAL, st->pos.file, st->pos.line, st->pos.column,
                "workload.dims",
                "%s is dense but the extent of index %s is unknown: give it in workload.dims",
                st->name, spec->workload.index_name[x]);
    }
    tessel_diag d;
    tessel_diag_clear(&d);
    if (make_dense(st->rank, dims, w->alloc, &w->tensor[t], &d))
        return add_error(errors, st, &d);
    w->owned[t] = 1;
    snprintf(w->label[t], sizeof(w->label[t]), "dense");
    return TESSEL_OK;
}

static enum binding_kind binding_kind(const tessel_spec *spec, unsigned t)
{
    const char *data = spec->workload.tensor[t].data;
    int transpose;
    if (spec->workload.tensor[t].model.present)
        return BIND_MODEL;
    if (!data || !data[0])
        return BIND_NONE;
    if (strcmp(data, "dense") == 0)
        return BIND_DENSE;
    if (binding_reference(spec, data, &transpose) >= 0)
        return BIND_REFERENCE;
    return BIND_FILE;
}

/* A tensor given in memory (tessel_workload_bind) in place of t's binding:
 * borrowed, not owned, labelled as given. */
static int bind_given(const tessel_spec *spec, tessel_workload_data *w, unsigned t,
                      tessel_tensor *given, const char *label, tessel_diag_list *errors)
{
    const tessel_spec_tensor *st = &spec->workload.tensor[t];
    w->tensor[t] = given;
    w->owned[t] = 0;
    snprintf(w->label[t], sizeof(w->label[t]), "%s", label && label[0] ? label : "memory");
    if (given->order != st->rank)
        return tessel_diag_list_add(errors, TESSEL_EINVAL, st->pos.file, st->pos.line,
                                    st->pos.column, "workload.data",
                                    "%s is used with %u indices in the einsum but the tensor "
                                    "given for it has order %u",
                                    st->name, st->rank, given->order);
    return TESSEL_OK;
}

int tessel_workload_load(const tessel_spec *spec, const tessel_load_options *opt,
                         const tessel_allocator *a, tessel_workload_data **out,
                         tessel_diag_list *errors)
{
    return tessel_workload_bind(spec, NULL, NULL, opt, a, out, errors);
}

/* The workload's tensors: those given in memory, then the spec's bindings
 * (files, references to other inputs, dense), with the extents checked. */
int tessel_workload_bind(const tessel_spec *spec, tessel_tensor *const *given,
                         const char *const *labels, const tessel_load_options *opt,
                         const tessel_allocator *a, tessel_workload_data **out,
                         tessel_diag_list *errors)
{
    *out = NULL;
    tessel_workload_data *w = tessel_alloc(a, sizeof(*w));
    if (!w)
        return oom_list(errors);
    memset(w, 0, sizeof(*w));
    w->alloc = a;
    w->ntensors = spec->workload.ntensors;
    model_workload_memo_create(w); /* without memory: nothing kept */
    size_t before = errors->count;
    int first = TESSEL_OK;
    const char *from[TESSEL_SPEC_MAX_INDICES] = { 0 };
    /* Files first, then references to them, then dense operands whose
     * shape the others fix. */
    for (int pass = BIND_FILE; pass <= BIND_DENSE; pass++) {
        for (unsigned t = 1; t < w->ntensors; t++) {
            const tessel_spec_tensor *st = &spec->workload.tensor[t];
            enum binding_kind kind = given && given[t] ? BIND_FILE : binding_kind(spec, t);
            int rc = TESSEL_OK;
            if (pass == BIND_FILE && given && given[t])
                rc = bind_given(spec, w, t, given[t], labels ? labels[t] : NULL, errors);
            else if (pass == BIND_FILE && kind == BIND_NONE)
                rc = tessel_diag_list_add(errors, TESSEL_EINVAL, st->pos.file, st->pos.line,
                                          st->pos.column, "workload.data",
                                          "input %s is not bound to data (use --tensor %s=FILE)",
                                          st->name, st->name);
            else if (kind == BIND_MODEL && pass == BIND_FILE)
                rc = bind_model(spec, w, t, errors);
            else if ((int)kind != pass)
                continue;
            else if (kind == BIND_FILE)
                rc = load_file(spec, w, t, opt, errors);
            else if (kind == BIND_REFERENCE)
                rc = bind_reference(spec, w, t, errors);
            else
                rc = bind_dense(spec, w, t, errors);
            for (unsigned m = 0; !rc && m < st->rank; m++)
                rc = check_extent(spec, w, from, t, m, errors);
            if (rc && !first)
                first = rc;
        }
    }
    for (unsigned x = 0; x < spec->workload.nindices && !first; x++)
        if (!w->extent[x])
            w->extent[x] = spec->workload.extent[x];
    if (first || errors->count > before) {
        tessel_workload_free(&w);
        return first ? first : TESSEL_EINVAL;
    }
    *out = w;
    return TESSEL_OK;
}

void tessel_workload_data_label(const tessel_workload_data *w, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned t = 1; t < w->ntensors; t++) {
        int same = 0;
        for (unsigned u = 1; u < t; u++)
            same |= strcmp(w->label[u], w->label[t]) == 0;
        if (same || used >= n)
            continue;
        int k = snprintf(buf + used, n - used, "%s%s", used ? "*" : "", w->label[t]);
        if (k > 0)
            used += (size_t)k;
    }
}
