/* The resolved spec tree (resolved.h) built from a validated tessel_spec,
 * and the origin of every value in it: the file:line:col of the YAML node
 * that set it (after includes and --set), or "default". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolved.h"
#include "spec_internal.h"

typedef struct rb {
    const tessel_allocator *a;
    const tessel_spec *s;
    rs_origins *o;
    int rc;
} rb;

static char *dup(rb *b, const char *text)
{
    char *p = tessel_strdup(b->a, text ? text : "");
    if (!p)
        b->rc = TESSEL_ENOMEM;
    return p;
}

static void *zalloc(rb *b, size_t count, size_t size)
{
    if (count == 0)
        return NULL;
    void *p = tessel_alloc_array(b->a, count, size);
    if (!p)
        b->rc = TESSEL_ENOMEM;
    else
        memset(p, 0, count * size);
    return p;
}

/* Records that `path` holds `value`, set by node n (NULL: a default). */
static void note(rb *b, const char *path, const tessel_yaml_node *n, const char *value)
{
    rs_origins *o = b->o;
    if (!o || o->failed)
        return;
    if (o->count == o->capacity) {
        size_t cap = o->capacity ? 2 * o->capacity : 64;
        tessel_spec_origin *it = tessel_realloc_array(o->alloc, o->items, cap, sizeof(*it));
        if (!it) {
            o->failed = 1;
            return;
        }
        o->items = it;
        o->capacity = cap;
    }
    char where[600];
    if (n && n->file)
        snprintf(where, sizeof(where), "%s:%" PRIu64 ":%" PRIu32, n->file, n->line, n->column);
    else
        snprintf(where, sizeof(where), "default");
    tessel_spec_origin *e = &o->items[o->count];
    e->path = tessel_strdup(o->alloc, path);
    e->value = tessel_strdup(o->alloc, value ? value : "");
    e->origin = tessel_strdup(o->alloc, where);
    if (!e->path || !e->value || !e->origin) {
        tessel_dealloc(o->alloc, e->path);
        tessel_dealloc(o->alloc, e->value);
        tessel_dealloc(o->alloc, e->origin);
        o->failed = 1;
        return;
    }
    o->count++;
}

static void note_u64(rb *b, const char *path, const tessel_yaml_node *n, uint64_t v)
{
    char text[32];
    snprintf(text, sizeof(text), "%" PRIu64, v);
    note(b, path, n, text);
}

/* v in the fewest significant digits that read back as v. */
static void note_double(rb *b, const char *path, const tessel_yaml_node *n, double v)
{
    char text[40];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof(text), "%.*g", digits, v);
        if (strtod(text, NULL) == v)
            break;
    }
    note(b, path, n, text);
}

/* The node under a dotted path below m ("a.b"), or NULL. */
static const tessel_yaml_node *at(const tessel_yaml_node *m, const char *k1, const char *k2)
{
    const tessel_yaml_node *n = tessel_yaml_get(m, k1);
    return k2 ? tessel_yaml_get(n, k2) : n;
}

static const tessel_yaml_node *root_of(const tessel_spec *s)
{
    return s->doc ? tessel_yaml_root(s->doc) : NULL;
}

/* The mapping of level `name` in architecture.levels, or NULL. */
static const tessel_yaml_node *level_node(const tessel_spec *s, const char *name)
{
    const tessel_yaml_node *seq = at(at(root_of(s), "architecture", NULL), "levels", NULL);
    if (!seq || seq->kind != TESSEL_YAML_SEQUENCE)
        return NULL;
    for (size_t i = 0; i < seq->count; i++) {
        const tessel_yaml_node *nm = tessel_yaml_get(seq->items[i], "name");
        if (nm && nm->kind == TESSEL_YAML_SCALAR && strcmp(nm->value, name) == 0)
            return seq->items[i];
    }
    return NULL;
}

/* A format as the spec spells it: a name, or a rank list "[UOP, CP]". */
static char *format_text(rb *b, int format, unsigned nranks, const unsigned char *ranks)
{
    if (format != TESSEL_SPEC_FORMAT_RANKS)
        return dup(b, spec_format_name(format));
    char text[96] = "[";
    for (unsigned r = 0; r < nranks && r < TESSEL_SPEC_MAX_INDICES; r++) {
        size_t len = strlen(text);
        snprintf(text + len, sizeof(text) - len, "%s%s", r ? ", " : "",
                 spec_rank_format_name(ranks[r]));
    }
    size_t len = strlen(text);
    snprintf(text + len, sizeof(text) - len, "]");
    return dup(b, text);
}

static const char *scalar_or_null(const tessel_yaml_node *n)
{
    return n && n->kind == TESSEL_YAML_SCALAR ? n->value : NULL;
}

/* Energy attributes from the component's mapping (only the known keys). */
static rs_attrs *attrs(rb *b, const tessel_yaml_node *m, const char *path)
{
    if (!m || m->kind != TESSEL_YAML_MAPPING)
        return NULL;
    rs_attrs *r = zalloc(b, 1, sizeof(*r));
    if (!r)
        return NULL;
    struct {
        const char *key;
        char **slot;
    } keys[] = { { "width", &r->width },       { "datawidth", &r->datawidth },
                 { "depth", &r->depth },       { "size", &r->size },
                 { "technology", &r->technology }, { "exponent", &r->exponent },
                 { "mantissa", &r->mantissa }, { "radix", &r->radix } };
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        const tessel_yaml_node *n = tessel_yaml_get(m, keys[k].key);
        const char *v = scalar_or_null(n);
        if (!v)
            continue;
        *keys[k].slot = dup(b, v);
        char p[256];
        snprintf(p, sizeof(p), "%s.attributes.%s", path, keys[k].key);
        note(b, p, n, v);
    }
    return r;
}

static void component(rb *b, rs_component *c, const tessel_spec_component *sc,
                      const tessel_yaml_node *cls_node, const char *path)
{
    c->cls = dup(b, sc->cls);
    char p[256];
    snprintf(p, sizeof(p), "%s.class", path);
    note(b, p, cls_node, sc->cls);
    c->attributes = attrs(b, sc->attributes, path);
}

/* The names of the tensors whose bits are set in mask. */
static char **tensor_names(rb *b, uint32_t mask, unsigned *count)
{
    const tessel_spec_workload *w = &b->s->workload;
    unsigned n = 0;
    for (unsigned t = 0; t < w->ntensors; t++)
        n += (mask >> t) & 1u;
    *count = n;
    char **names = zalloc(b, n, sizeof(*names));
    if (!names) {
        *count = 0;
        return NULL;
    }
    for (unsigned t = 0, i = 0; t < w->ntensors; t++)
        if ((mask >> t) & 1u)
            names[i++] = dup(b, w->tensor[t].name);
    return names;
}

/* The tensor's rank_order at a level as index names (none when the spec
 * gives none: the canonical order). */
static void rank_order_of(rb *b, rs_part *p, const tessel_spec_tensor_level *tl,
                          const tessel_yaml_node *tn, const char *base)
{
    const tessel_spec_workload *w = &b->s->workload;
    if (!tl->nrank_order)
        return;
    p->rank_order = zalloc(b, tl->nrank_order, sizeof(*p->rank_order));
    if (!p->rank_order)
        return;
    p->rank_order_count = tl->nrank_order;
    char text[TESSEL_SPEC_MAX_INDICES * (TESSEL_SPEC_NAME_MAX + 2) + 4];
    size_t len = 0;
    for (unsigned i = 0; i < tl->nrank_order; i++) {
        const char *nm = w->index_name[tl->rank_order[i] % TESSEL_SPEC_MAX_INDICES];
        p->rank_order[i] = dup(b, nm);
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", i ? ", " : "[", nm);
    }
    snprintf(text + len, sizeof(text) - len, "]");
    char key[256];
    snprintf(key, sizeof(key), "%s.rank_order", base);
    note(b, key, tessel_yaml_get(tn, "rank_order"), text);
}

/* Tensor t's format, share and skipping at level l. */
static void part(rb *b, rs_part *p, unsigned l, unsigned t, const tessel_yaml_node *tn,
                 const char *path)
{
    const tessel_spec_level *lv = &b->s->level[l];
    const tessel_spec_tensor_level *tl = &lv->tensor[t];
    char base[200], key[256];
    snprintf(base, sizeof(base), "%s.tensors.%s", path, b->s->workload.tensor[t].name);
    p->tensor = dup(b, b->s->workload.tensor[t].name);
    int own = tl->format >= 0;
    p->format = own ? format_text(b, tl->format, tl->nranks, tl->ranks)
                    : format_text(b, lv->format, lv->nranks, lv->ranks);
    snprintf(key, sizeof(key), "%s.format", base);
    note(b, key, own ? tessel_yaml_get(tn, "format") : NULL, p->format);
    p->partition_bytes = lv->capacity ? tessel_spec_partition_share(b->s, l, t) : 0;
    snprintf(key, sizeof(key), "%s.partition", base);
    note_double(b, key, tessel_yaml_get(tn, "partition"), p->partition_bytes);
    p->skip_on = tensor_names(b, tl->sparse.skip_on, &p->skip_on_count);
    p->gate_on = tensor_names(b, tl->sparse.gate_on, &p->gate_on_count);
    p->scalar_skip_on = tensor_names(b, tl->sparse.scalar_skip_on, &p->scalar_skip_on_count);
    p->scalar_gate_on = tensor_names(b, tl->sparse.scalar_gate_on, &p->scalar_gate_on_count);
    rank_order_of(b, p, tl, tn, base);
}

/* Index names in `order`, outermost first: "IJK" when every name is one
 * letter (the spelling specs use), else "i,j,k". */
static char *order_text(rb *b, const unsigned *order, unsigned n)
{
    const tessel_spec_workload *w = &b->s->workload;
    int letters = 1;
    for (unsigned i = 0; i < n; i++)
        letters &= strlen(w->index_name[order[i]]) == 1;
    char text[TESSEL_SPEC_MAX_INDICES * (TESSEL_SPEC_NAME_MAX + 1)] = "";
    for (unsigned i = 0; i < n; i++) {
        const char *nm = w->index_name[order[i] % TESSEL_SPEC_MAX_INDICES];
        size_t len = strlen(text);
        if (letters)
            snprintf(text + len, sizeof(text) - len, "%c",
                     nm[0] >= 'a' && nm[0] <= 'z' ? nm[0] - 'a' + 'A' : nm[0]);
        else
            snprintf(text + len, sizeof(text) - len, "%s%s", i ? "," : "", nm);
    }
    return dup(b, text);
}

/* The spatial split as "{i: 8, j: 16}" and its policy (NULL without one). */
static void spatial_of(rb *b, const tessel_spec_level *lv, const tessel_yaml_node *mn,
                       rs_mapping *m)
{
    const tessel_spec_workload *w = &b->s->workload;
    char text[TESSEL_SPEC_MAX_INDICES * (TESSEL_SPEC_NAME_MAX + 16) + 4];
    size_t len = 0;
    for (unsigned i = 0; i < w->nindices; i++)
        if (lv->spatial[i])
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s: %u", len ? ", " : "{",
                                    w->index_name[i], lv->spatial[i]);
    if (!len)
        return;
    snprintf(text + len, sizeof(text) - len, "}");
    char key[128];
    m->spatial = dup(b, text);
    snprintf(key, sizeof(key), "mapping.%s.spatial", lv->name);
    note(b, key, tessel_yaml_get(mn, "spatial"), m->spatial);
    m->distribution = dup(b, spec_spatial_policy_name(lv->spatial_policy));
    snprintf(key, sizeof(key), "mapping.%s.distribution", lv->name);
    note(b, key, tessel_yaml_get(mn, "distribution"), m->distribution);
}

static rs_mapping *mapping(rb *b, unsigned l)
{
    const tessel_spec_level *lv = &b->s->level[l];
    const tessel_spec_workload *w = &b->s->workload;
    rs_mapping *m = zalloc(b, 1, sizeof(*m));
    if (!m)
        return NULL;
    const tessel_yaml_node *mn = at(root_of(b->s), "mapping", lv->name);
    char key[128];
    m->order = order_text(b, lv->order, w->nindices);
    snprintf(key, sizeof(key), "mapping.%s.order", lv->name);
    note(b, key, tessel_yaml_get(mn, "order"), m->order);
    m->tile = zalloc(b, w->nindices, sizeof(*m->tile));
    m->tile_count = m->tile ? w->nindices : 0;
    for (unsigned i = 0; i < m->tile_count; i++) {
        m->tile[i].index = dup(b, w->index_name[i]);
        m->tile[i].size = lv->tile[i];
        snprintf(key, sizeof(key), "mapping.%s.tile.%s", lv->name, w->index_name[i]);
        note_u64(b, key, tessel_yaml_get(mn, "tile"), lv->tile[i]);
    }
    spatial_of(b, lv, mn, m);
    if (lv->bypass) {
        m->bypass = tensor_names(b, lv->bypass, &m->bypass_count);
        char text[TESSEL_SPEC_MAX_TENSORS * (TESSEL_SPEC_NAME_MAX + 2) + 4] = "[";
        for (unsigned i = 0; m->bypass && i < m->bypass_count; i++) {
            size_t len = strlen(text);
            snprintf(text + len, sizeof(text) - len, "%s%s", i ? ", " : "", m->bypass[i]);
        }
        size_t len = strlen(text);
        snprintf(text + len, sizeof(text) - len, "]");
        const tessel_yaml_node *n = tessel_yaml_get(mn, "bypass");
        snprintf(key, sizeof(key), "mapping.%s.bypass", lv->name);
        note(b, key, n ? n : tessel_yaml_get(mn, "keep"), text);
    }
    return m;
}

/* The pipeline timing's level keys, recorded only where the spec gives them
 * (docs/models/timing.md), so specs without them resolve as before. */
static void level_ports(rb *b, rs_level *r, const tessel_spec_level *lv,
                        const tessel_yaml_node *ln, const char *path)
{
    char key[256];
    const double bw[2] = { lv->read_bandwidth, lv->write_bandwidth };
    const char *name[2] = { "read_bandwidth", "write_bandwidth" };
    double **slot[2] = { &r->read_bandwidth, &r->write_bandwidth };
    for (unsigned p = 0; p < 2; p++) {
        if (!(bw[p] > 0))
            continue;
        *slot[p] = zalloc(b, 1, sizeof(double));
        if (*slot[p])
            **slot[p] = bw[p];
        snprintf(key, sizeof(key), "%s.%s", path, name[p]);
        note_double(b, key, tessel_yaml_get(ln, name[p]), bw[p]);
    }
    if (!lv->network_width)
        return;
    r->network_width = zalloc(b, 1, sizeof(unsigned));
    if (r->network_width)
        *r->network_width = lv->network_width;
    r->network_deliver = dup(b, lv->network_dense ? "dense" : "effectual");
    const tessel_yaml_node *nn = tessel_yaml_get(ln, "network");
    snprintf(key, sizeof(key), "%s.network.width", path);
    note_u64(b, key, tessel_yaml_get(nn, "width"), lv->network_width);
    snprintf(key, sizeof(key), "%s.network.deliver", path);
    note(b, key, tessel_yaml_get(nn, "deliver"), r->network_deliver);
    if (lv->network_class[0])
        r->network_class = dup(b, lv->network_class);
    if (lv->network_hop_mm > 0 && (r->network_hop_mm = zalloc(b, 1, sizeof(double))))
        *r->network_hop_mm = lv->network_hop_mm;
}

/* The sizes and widths of level l, each with its origin. */
static void level_numbers(rb *b, rs_level *r, const tessel_spec_level *lv,
                          const tessel_yaml_node *ln, const char *path)
{
    char key[256];
#define LEVEL_U(field, yaml)                                                   \
    do {                                                                       \
        r->field = lv->field;                                                  \
        snprintf(key, sizeof(key), "%s." yaml, path);                          \
        note_u64(b, key, tessel_yaml_get(ln, yaml), (uint64_t)lv->field);      \
    } while (0)
    LEVEL_U(capacity, "capacity");
    LEVEL_U(instances, "instances");
    LEVEL_U(word_bits, "word_bits");
    LEVEL_U(value_bits, "value_bits");
    LEVEL_U(coord_bits, "coord_bits");
    LEVEL_U(offset_bits, "offset_bits");
    LEVEL_U(run_bits, "run_bits");
#undef LEVEL_U
    r->bandwidth = lv->bandwidth;
    snprintf(key, sizeof(key), "%s.bandwidth", path);
    note_double(b, key, tessel_yaml_get(ln, "bandwidth"), lv->bandwidth);
    level_ports(b, r, lv, ln, path);
}

static void level(rb *b, rs_level *r, unsigned l)
{
    const tessel_spec_level *lv = &b->s->level[l];
    const tessel_yaml_node *ln = level_node(b->s, lv->name);
    char path[128], key[256];
    snprintf(path, sizeof(path), "architecture.levels.%s", lv->name);
    r->name = dup(b, lv->name);
    level_numbers(b, r, lv, ln, path);
    r->format = format_text(b, lv->format, lv->nranks, lv->ranks);
    snprintf(key, sizeof(key), "%s.format", path);
    note(b, key, tessel_yaml_get(ln, "format"), r->format);
    component(b, &r->energy, &lv->energy, tessel_yaml_get(ln, "class"), path);
    unsigned nt = b->s->workload.ntensors;
    r->tensors = zalloc(b, nt, sizeof(*r->tensors));
    r->tensors_count = r->tensors ? nt : 0;
    const tessel_yaml_node *tensors = tessel_yaml_get(ln, "tensors");
    for (unsigned t = 0; t < r->tensors_count; t++)
        part(b, &r->tensors[t], l, t, tessel_yaml_get(tensors, b->s->workload.tensor[t].name),
             path);
    r->mapping = l > 0 ? mapping(b, l) : NULL;
}

static char *indices_text(rb *b, const tessel_spec_tensor *t)
{
    char text[TESSEL_SPEC_MAX_INDICES * (TESSEL_SPEC_NAME_MAX + 1)] = "";
    for (unsigned m = 0; m < t->rank && m < TESSEL_SPEC_MAX_INDICES; m++) {
        size_t len = strlen(text);
        snprintf(text + len, sizeof(text) - len, "%s%s", m ? "," : "",
                 b->s->workload.index_name[t->index[m] % TESSEL_SPEC_MAX_INDICES]);
    }
    return dup(b, text);
}

static rs_model *model(rb *b, const tessel_spec_tensor *t)
{
    static const char *const kinds[] = { "uniform", "banded", "nm", "fixed-structured" };
    if (!t->model.present)
        return NULL;
    rs_model *m = zalloc(b, 1, sizeof(*m));
    if (!m)
        return NULL;
    m->kind = dup(b, t->model.kind >= 0 && t->model.kind < 4 ? kinds[t->model.kind] : "?");
    m->rows = t->model.rows;
    m->cols = t->model.cols;
    m->nnz = t->model.nnz;
    m->density = t->model.density;
    m->bandwidth = t->model.bandwidth;
    m->n = t->model.n;
    m->m = t->model.m;
    m->seed = t->model.seed;
    return m;
}

static void tensor(rb *b, rs_tensor *r, unsigned t)
{
    const tessel_spec_tensor *st = &b->s->workload.tensor[t];
    r->name = dup(b, st->name);
    r->role = dup(b, t == 0 ? "output" : "input");
    r->indices = indices_text(b, st);
    r->data = st->data ? dup(b, st->data) : NULL;
    r->model = model(b, st);
    if (t > 0) {
        char key[128];
        snprintf(key, sizeof(key), "workload.data.%s", st->name);
        note(b, key, at(at(root_of(b->s), "workload", NULL), "data", st->name),
             st->data ? st->data : st->model.present ? "(density model)" : "");
    }
}

static void workload(rb *b, rs_workload *r)
{
    static const char *const kinds[] = { "spmspm", "ttm", "mttkrp", "spmv", "other" };
    const tessel_spec_workload *w = &b->s->workload;
    const tessel_yaml_node *wn = at(root_of(b->s), "workload", NULL);
    r->einsum = dup(b, w->einsum);
    note(b, "workload.einsum", tessel_yaml_get(wn, "einsum"), w->einsum);
    r->kind = dup(b, (unsigned)w->kind < 5 ? kinds[w->kind] : "other");
    r->indices = zalloc(b, w->nindices, sizeof(*r->indices));
    r->indices_count = r->indices ? w->nindices : 0;
    for (unsigned i = 0; i < r->indices_count; i++) {
        r->indices[i].name = dup(b, w->index_name[i]);
        r->indices[i].extent = w->extent[i];
        char key[96];
        snprintf(key, sizeof(key), "workload.dims.%s", w->index_name[i]);
        note_u64(b, key, at(wn, "dims", w->index_name[i]), w->extent[i]);
    }
    r->tensors = zalloc(b, w->ntensors, sizeof(*r->tensors));
    r->tensors_count = r->tensors ? w->ntensors : 0;
    for (unsigned t = 0; t < r->tensors_count; t++)
        tensor(b, &r->tensors[t], t);
}

static void compute(rb *b, rs_compute *r)
{
    const tessel_spec_compute *c = &b->s->compute;
    const tessel_yaml_node *cn = at(at(root_of(b->s), "architecture", NULL), "compute", NULL);
    r->pes = c->pes;
    note_u64(b, "architecture.compute.pes", tessel_yaml_get(cn, "pes"), c->pes);
    r->macs_per_pe = c->macs_per_pe;
    note_u64(b, "architecture.compute.macs_per_pe", tessel_yaml_get(cn, "macs_per_pe"),
             c->macs_per_pe);
    r->clock_ghz = c->clock_ghz;
    note_double(b, "architecture.compute.clock", tessel_yaml_get(cn, "clock"), c->clock_ghz);
    component(b, &r->mac, &c->mac, tessel_yaml_get(cn, "class"), "architecture.compute");
    if (c->optimization) {
        unsigned g = c->optimization & TESSEL_SPEC_COMPUTE_OPT_GATING;
        unsigned k = c->optimization & TESSEL_SPEC_COMPUTE_OPT_SKIPPING;
        r->compute_optimization = dup(b, g && k ? "gating,skipping"
                                         : g    ? "gating"
                                         : k    ? "skipping"
                                                : "none");
    }
    if (c->intersect.cls[0]) {
        r->intersect = zalloc(b, 1, sizeof(*r->intersect));
        if (r->intersect)
            component(b, r->intersect, &c->intersect,
                      at(tessel_yaml_get(cn, "intersect"), "class", NULL),
                      "architecture.compute.intersect");
        r->intersect_step_cycles = zalloc(b, 1, sizeof(double));
        if (r->intersect_step_cycles)
            *r->intersect_step_cycles = c->intersect_step_cycles;
        note_double(b, "architecture.compute.intersect.step_cycles",
                    at(tessel_yaml_get(cn, "intersect"), "step_cycles", NULL),
                    c->intersect_step_cycles);
    }
}

static void strategy_levels(rb *b, rs_strategy *r, uint32_t mask)
{
    unsigned n = 0;
    for (unsigned l = 1; l < b->s->nlevels; l++)
        n += !mask || ((mask >> l) & 1u);
    r->levels = zalloc(b, n, sizeof(*r->levels));
    r->levels_count = r->levels ? n : 0;
    for (unsigned l = 1, i = 0; l < b->s->nlevels && i < r->levels_count; l++)
        if (!mask || ((mask >> l) & 1u))
            r->levels[i++] = dup(b, b->s->level[l].name);
}

static void strategy(rb *b, rs_strategy *r)
{
    const tessel_spec_strategy *st = &b->s->strategy;
    const tessel_yaml_node *mn = at(root_of(b->s), "mapping", NULL);
    const tessel_yaml_node *on = tessel_yaml_get(mn, "strategy_options");
    r->name = dup(b, st->name[0] ? st->name : TESSEL_SPEC_STRATEGY_FIXED);
    note(b, "mapping.strategy", tessel_yaml_get(mn, "strategy"), r->name);
    r->overbooking = st->overbooking;
    note_double(b, "mapping.strategy_options.overbooking", tessel_yaml_get(on, "overbooking"),
                st->overbooking);
    r->tail_samples = st->tail_samples;
    note_u64(b, "mapping.strategy_options.tail_samples", tessel_yaml_get(on, "tail_samples"),
             st->tail_samples);
    r->rounds = st->rounds;
    note_u64(b, "mapping.strategy_options.rounds", tessel_yaml_get(on, "rounds"), st->rounds);
    r->seed = st->seed;
    note_u64(b, "mapping.strategy_options.seed", tessel_yaml_get(on, "seed"), st->seed);
    r->worst = dup(b, spec_worst_name(st->dense_worst));
    note(b, "mapping.strategy_options.worst", tessel_yaml_get(on, "worst"), r->worst);
    r->micro_rows = st->micro[0];
    r->micro_cols = st->micro[1];
    char micro[48];
    snprintf(micro, sizeof(micro), "%" PRIu64 "x%" PRIu64, st->micro[0], st->micro[1]);
    note(b, "mapping.strategy_options.micro_tile", tessel_yaml_get(on, "micro_tile"), micro);
    r->growth = dup(b, spec_growth_name(st->growth));
    note(b, "mapping.strategy_options.growth", tessel_yaml_get(on, "growth"), r->growth);
    if (st->dataflow) { /* written only when set, so that other specs resolve as before */
        r->dataflow = dup(b, spec_dataflow_name(st->dataflow));
        note(b, "mapping.strategy_options.dataflow", tessel_yaml_get(on, "dataflow"),
             r->dataflow);
    }
    r->order = dup(b, spec_order_name(st->order));
    note(b, "mapping.strategy_options.order", tessel_yaml_get(on, "order"), r->order);
    strategy_levels(b, r, st->levels);
}

/* A node as flow YAML text (template options may be lists or mappings). */
static void flow(const tessel_yaml_node *n, char *out, size_t cap)
{
    size_t len = strlen(out);
    if (!n || len + 1 >= cap)
        return;
    if (n->kind == TESSEL_YAML_SCALAR) {
        snprintf(out + len, cap - len, "%s", n->value);
        return;
    }
    int map = n->kind == TESSEL_YAML_MAPPING;
    snprintf(out + len, cap - len, "%s", map ? "{" : "[");
    for (size_t i = 0; i < n->count; i++) {
        len = strlen(out);
        snprintf(out + len, cap - len, "%s", i ? ", " : "");
        if (map) {
            flow(n->keys[i], out, cap);
            len = strlen(out);
            snprintf(out + len, cap - len, ": ");
        }
        flow(n->items[i], out, cap);
    }
    len = strlen(out);
    snprintf(out + len, cap - len, "%s", map ? "}" : "]");
}

static void template_(rb *b, rs_template *r)
{
    const tessel_spec_template *t = &b->s->template_;
    r->name = dup(b, t->name[0] ? t->name : "none");
    note(b, "template", at(root_of(b->s), "template", NULL), r->name);
    const tessel_yaml_node *o = t->options;
    if (!o || o->kind != TESSEL_YAML_MAPPING)
        return;
    r->options = zalloc(b, o->count, sizeof(*r->options));
    r->options_count = r->options ? (unsigned)o->count : 0;
    for (unsigned i = 0; i < r->options_count; i++) {
        char text[512] = "", key[160];
        flow(o->items[i], text, sizeof(text));
        r->options[i].key = dup(b, o->keys[i]->value);
        r->options[i].value = dup(b, text);
        snprintf(key, sizeof(key), "template_options.%s", o->keys[i]->value);
        note(b, key, o->items[i], text);
    }
}

static void top(rb *b, rs_spec *r)
{
    const tessel_spec *s = b->s;
    const tessel_yaml_node *an = at(root_of(s), "architecture", NULL);
    r->name = dup(b, s->name);
    note(b, "name", at(root_of(s), "name", NULL), s->name);
    r->file = dup(b, s->path);
    r->technology = dup(b, s->technology);
    note(b, "architecture.technology", tessel_yaml_get(an, "technology"), s->technology);
    if (s->timing == TESSEL_SPEC_TIMING_PIPELINE) {
        r->timing = dup(b, "pipeline");
        note(b, "architecture.timing", tessel_yaml_get(an, "timing"), r->timing);
    }
    r->energy_tables = zalloc(b, s->ntables, sizeof(*r->energy_tables));
    r->energy_tables_count = r->energy_tables ? s->ntables : 0;
    for (unsigned i = 0; i < r->energy_tables_count; i++) {
        r->energy_tables[i] = dup(b, s->table[i]);
        note(b, "architecture.energy_tables", tessel_yaml_get(an, "energy_tables"),
             s->table[i]);
    }
}

int rs_build(const tessel_spec *s, const tessel_allocator *a, rs_spec **out, rs_origins *origins)
{
    rb b = { .a = a, .s = s, .o = origins, .rc = 0 };
    *out = NULL;
    rs_spec *r = zalloc(&b, 1, sizeof(*r));
    if (!r)
        return TESSEL_ENOMEM;
    top(&b, r);
    workload(&b, &r->workload);
    r->levels = zalloc(&b, s->nlevels, sizeof(*r->levels));
    r->levels_count = r->levels ? s->nlevels : 0;
    for (unsigned l = 0; l < r->levels_count; l++)
        level(&b, &r->levels[l], l);
    compute(&b, &r->compute);
    strategy(&b, &r->strategy);
    template_(&b, &r->template_);
    if (b.rc || (origins && origins->failed)) {
        rs_free(r, a);
        return TESSEL_ENOMEM;
    }
    *out = r;
    return 0;
}
