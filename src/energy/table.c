/* Reading energy tables: tessel's own format (energy_tables/README.md);
 * Accelergy ERT / ART files are read by ert.c, the typed field readers
 * are in table_yaml.c.
 *
 * Every problem is reported with the file, line and column of the YAML
 * node and the field path inside the table, and reading goes on so that
 * one pass reports all of them.  The loaded table copies everything it
 * needs: the YAML document can be freed afterwards. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy_internal.h"

/* ------------------------------------------------------------------ */
/* tessel tables */

/* `unavailable` records a class the sources do not cover (with the
 * reason), so that asking for it says why instead of "unknown class". */
static const char *const model_names[] = {"dram", "sram", "regfile", "arith", "unavailable",
                                          "wire"};
#define EN_NMODELS (sizeof(model_names) / sizeof(model_names[0]))

static int read_ref(en_ctx *c, const tessel_yaml_node *m, const char *prefix, int need_width,
                    en_ref *r)
{
    /* The per-bit register entry has no width of its own. */
    static const char *const keys[] = {"energy", "idle", "area", "source", "width"};
    if (m->kind != TESSEL_YAML_MAPPING)
        return en_error(c, TESSEL_EPARSE, m, prefix, "expected a mapping");
    en_check_keys(c, m, keys, need_width ? 5 : 4, prefix);
    memset(r, 0, sizeof(*r));
    r->width = 1;
    int bad = 0;
    if (need_width)
        bad |= en_get_number(c, m, m, prefix, "width", NUM_REQUIRED | NUM_POSITIVE, &r->width) < 0;
    bad |= en_get_number(c, m, m, prefix, "energy", NUM_REQUIRED, &r->energy) < 0;
    bad |= en_get_number(c, m, m, prefix, "idle", NUM_REQUIRED, &r->idle) < 0;
    bad |= en_get_number(c, m, m, prefix, "area", NUM_REQUIRED, &r->area) < 0;
    bad |= en_get_string(c, m, prefix, "source", 1, r->source, sizeof(r->source)) < 0;
    return bad ? TESSEL_EPARSE : 0;
}

static int cmp_point(const void *pa, const void *pb)
{
    const en_point *a = pa, *b = pb;
    if (a->width != b->width)
        return a->width < b->width ? -1 : 1;
    if (a->depth != b->depth)
        return a->depth < b->depth ? -1 : 1;
    return 0;
}

static int read_sram(en_ctx *c, const tessel_yaml_node *m, const char *prefix, en_class *k)
{
    char field[128];
    en_join_field(field, sizeof(field), prefix, "points");
    const tessel_yaml_node *pts = tessel_yaml_get(m, "points");
    if (!pts || pts->kind != TESSEL_YAML_SEQUENCE || pts->count == 0)
        return en_error(c, TESSEL_EPARSE, pts ? pts : m, field,
                        "an sram class needs a non-empty sequence 'points'");
    k->points = tessel_alloc_array(c->alloc, pts->count, sizeof(*k->points));
    if (!k->points)
        return en_oom(c);
    static const char *const keys[] = {"width", "depth", "read", "write",
                                       "update", "leak", "area", "source"};
    int bad = 0;
    for (size_t i = 0; i < pts->count; i++) {
        const tessel_yaml_node *p = pts->items[i];
        char pf[128];
        tessel_energy_fmt(pf, sizeof(pf), "%s[%zu]", field, i);
        if (p->kind != TESSEL_YAML_MAPPING) {
            bad = en_error(c, TESSEL_EPARSE, p, pf, "expected a mapping");
            continue;
        }
        en_check_keys(c, p, keys, sizeof(keys) / sizeof(keys[0]), pf);
        en_point *q = &k->points[k->npoints];
        memset(q, 0, sizeof(*q));
        q->leak = -1;
        int b = 0;
        b |= en_get_number(c, p, p, pf, "width", NUM_REQUIRED | NUM_POSITIVE | NUM_INTEGER,
                        &q->width) < 0;
        b |= en_get_number(c, p, p, pf, "depth", NUM_REQUIRED | NUM_POSITIVE | NUM_INTEGER,
                        &q->depth) < 0;
        b |= en_get_number(c, p, p, pf, "read", NUM_REQUIRED | NUM_POSITIVE, &q->read) < 0;
        b |= en_get_number(c, p, p, pf, "write", NUM_REQUIRED | NUM_POSITIVE, &q->write) < 0;
        int has_update = en_get_number(c, p, p, pf, "update", NUM_POSITIVE, &q->update);
        b |= has_update < 0;
        if (has_update == 0)
            q->update = q->write; /* Accelergy v0.4 ERTs: update costs a write */
        b |= en_get_number(c, p, p, pf, "leak", 0, &q->leak) < 0;
        b |= en_get_number(c, p, p, pf, "area", NUM_REQUIRED | NUM_POSITIVE, &q->area) < 0;
        b |= en_get_string(c, p, pf, "source", 1, q->source, sizeof(q->source)) < 0;
        if (b) {
            bad = TESSEL_EPARSE;
            continue;
        }
        for (size_t j = 0; j < k->npoints; j++)
            if (k->points[j].width == q->width && k->points[j].depth == q->depth) {
                bad = en_error(c, TESSEL_EPARSE, p, pf, "a second point for width %g depth %g",
                               q->width, q->depth);
                b = 1;
                break;
            }
        if (!b)
            k->npoints++;
    }
    qsort(k->points, k->npoints, sizeof(*k->points), cmp_point);
    return bad;
}

/* One law {c0, c1, c2}; coefficients may be negative (c0 is a log). */
static int read_law(en_ctx *c, const tessel_yaml_node *m, const char *prefix, const char *key,
                    en_law *out)
{
    static const char *const keys[] = {"c0", "c1", "c2"};
    char field[128];
    en_join_field(field, sizeof(field), prefix, key);
    const tessel_yaml_node *n = tessel_yaml_get(m, key);
    if (!n || n->kind != TESSEL_YAML_MAPPING)
        return en_error(c, TESSEL_EPARSE, n ? n : m, field,
                        "missing '%s': a mapping {c0, c1, c2}", key);
    en_check_keys(c, n, keys, 3, field);
    double v[3] = {0, 0, 0};
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        char f[160];
        en_join_field(f, sizeof(f), field, keys[i]);
        const tessel_yaml_node *x = tessel_yaml_get(n, keys[i]);
        if (!x || tessel_yaml_double(x, &v[i]) != 0 || !isfinite(v[i]))
            bad = en_error(c, TESSEL_EPARSE, x ? x : n, f, "'%s' must be a number", keys[i]);
    }
    out->c0 = v[0];
    out->c1 = v[1];
    out->c2 = v[2];
    return bad;
}

/* The optional `fit:` of an sram class: the fitted law, its range, banking
 * and wire term, with sources (format: energy_tables/README.md). */
static int read_fit(en_ctx *c, const tessel_yaml_node *m, const char *prefix, en_fit *f)
{
    memset(f, 0, sizeof(*f));
    const tessel_yaml_node *n = tessel_yaml_get(m, "fit");
    if (!n)
        return 0;
    char field[128];
    en_join_field(field, sizeof(field), prefix, "fit");
    if (n->kind != TESSEL_YAML_MAPPING)
        return en_error(c, TESSEL_EPARSE, n, field, "'fit' must be a mapping");
    static const char *const keys[] = {"source",    "method",     "points",    "read",
                                       "write",     "area",       "min_bytes", "max_bytes",
                                       "min_width", "max_width",  "bank_bytes", "wire"};
    en_check_keys(c, n, keys, sizeof(keys) / sizeof(keys[0]), field);
    int bad = 0;
    char method[EN_SOURCE_MAX];
    bad |= en_get_string(c, n, field, "source", 1, f->source, sizeof(f->source)) < 0;
    bad |= en_get_string(c, n, field, "method", 1, method, sizeof(method)) < 0;
    bad |= en_get_string(c, n, field, "points", 1, f->points, sizeof(f->points)) < 0;
    bad |= read_law(c, n, field, "read", &f->read) != 0;
    bad |= read_law(c, n, field, "write", &f->write) != 0;
    bad |= read_law(c, n, field, "area", &f->area) != 0;
    unsigned flags = NUM_REQUIRED | NUM_POSITIVE;
    bad |= en_get_number(c, n, n, field, "min_bytes", flags, &f->min_bytes) < 0;
    bad |= en_get_number(c, n, n, field, "max_bytes", flags, &f->max_bytes) < 0;
    bad |= en_get_uint(c, n, field, "min_width", flags, &f->min_width) < 0;
    bad |= en_get_uint(c, n, field, "max_width", flags, &f->max_width) < 0;
    bad |= en_get_number(c, n, n, field, "bank_bytes", flags, &f->bank_bytes) < 0;
    const tessel_yaml_node *w = tessel_yaml_get(n, "wire");
    char wf[160];
    en_join_field(wf, sizeof(wf), field, "wire");
    if (!w || w->kind != TESSEL_YAML_MAPPING) {
        bad = en_error(c, TESSEL_EPARSE, w ? w : n, wf,
                       "missing 'wire': {pj_per_bit_mm, source}");
    } else {
        static const char *const wkeys[] = {"pj_per_bit_mm", "source"};
        en_check_keys(c, w, wkeys, 2, wf);
        bad |= en_get_number(c, w, w, wf, "pj_per_bit_mm", NUM_REQUIRED, &f->wire_pj_per_bit_mm) < 0;
        bad |= en_get_string(c, w, wf, "source", 1, f->wire_source, sizeof(f->wire_source)) < 0;
    }
    if (!bad && (f->min_bytes > f->max_bytes || f->min_width > f->max_width ||
                 f->bank_bytes > f->max_bytes))
        bad = en_error(c, TESSEL_EPARSE, n, field,
                       "need min_bytes <= max_bytes, min_width <= max_width and "
                       "bank_bytes <= max_bytes");
    f->present = !bad;
    return bad ? TESSEL_EPARSE : 0;
}

static int cmp_ref(const void *pa, const void *pb)
{
    const en_ref *a = pa, *b = pb;
    return a->width < b->width ? -1 : a->width > b->width ? 1 : 0;
}

/* An arith class's `parts`: each part's name, scaling law and referenced classes. */
static int read_parts(en_ctx *c, const tessel_yaml_node *m, const char *prefix, en_class *k)
{
    char field[128];
    en_join_field(field, sizeof(field), prefix, "parts");
    const tessel_yaml_node *parts = tessel_yaml_get(m, "parts");
    if (!parts || parts->kind != TESSEL_YAML_SEQUENCE || parts->count == 0 ||
        parts->count > EN_PARTS_MAX)
        return en_error(c, TESSEL_EPARSE, parts ? parts : m, field,
                        "an arith class needs 'parts': a sequence of 1 to %u parts",
                        EN_PARTS_MAX);
    static const char *const keys[] = {"name", "scaling", "refs"};
    static const char *const scalings[] = {"linear", "quadratic"};
    int bad = 0;
    for (size_t i = 0; i < parts->count; i++) {
        const tessel_yaml_node *p = parts->items[i];
        char pf[128];
        tessel_energy_fmt(pf, sizeof(pf), "%s[%zu]", field, i);
        if (p->kind != TESSEL_YAML_MAPPING) {
            bad = en_error(c, TESSEL_EPARSE, p, pf, "expected a mapping");
            continue;
        }
        en_check_keys(c, p, keys, 3, pf);
        en_part *q = &k->part[k->nparts++];
        memset(q, 0, sizeof(*q));
        if (en_get_string(c, p, pf, "name", 1, q->name, sizeof(q->name)) < 0)
            bad = TESSEL_EPARSE;
        const tessel_yaml_node *s = tessel_yaml_get(p, "scaling");
        const char *st = en_scalar_text(s);
        char sf[128];
        en_join_field(sf, sizeof(sf), pf, "scaling");
        if (!st || (strcmp(st, "linear") != 0 && strcmp(st, "quadratic") != 0)) {
            const char *near = st ? tessel_nearest_word(st, scalings, 2) : NULL;
            bad = en_error(c, TESSEL_EPARSE, s ? s : p, sf,
                           "'scaling' must be linear or quadratic%s%s%s", near ? " (did you mean '" : "",
                           near ? near : "", near ? "'?)" : "");
        } else {
            q->quadratic = strcmp(st, "quadratic") == 0;
        }
        const tessel_yaml_node *refs = tessel_yaml_get(p, "refs");
        char rf[128];
        en_join_field(rf, sizeof(rf), pf, "refs");
        if (!refs || refs->kind != TESSEL_YAML_SEQUENCE || refs->count == 0 ||
            refs->count > EN_REFS_MAX) {
            bad = en_error(c, TESSEL_EPARSE, refs ? refs : p, rf,
                           "'refs' must be a sequence of 1 to %u reference widths", EN_REFS_MAX);
            continue;
        }
        for (size_t j = 0; j < refs->count; j++) {
            char ef[128];
            tessel_energy_fmt(ef, sizeof(ef), "%s[%zu]", rf, j);
            if (read_ref(c, refs->items[j], ef, 1, &q->ref[q->nrefs]) != 0) {
                bad = TESSEL_EPARSE;
                continue;
            }
            for (size_t r = 0; r < q->nrefs; r++)
                if (q->ref[r].width == q->ref[q->nrefs].width) {
                    bad = en_error(c, TESSEL_EPARSE, refs->items[j], ef,
                                   "a second reference at width %g", q->ref[r].width);
                    break;
                }
            q->nrefs++;
        }
        qsort(q->ref, q->nrefs, sizeof(q->ref[0]), cmp_ref);
    }
    return bad;
}

/* One class of a tessel table, by its model's keys; every problem is reported. */
static int read_class(en_ctx *c, const tessel_yaml_node *m, const char *prefix, en_table *t,
                      en_class *k)
{
    memset(k, 0, sizeof(*k));
    if (m->kind != TESSEL_YAML_MAPPING)
        return en_error(c, TESSEL_EPARSE, m, prefix, "a class must be a mapping");
    int bad = 0;
    if (en_get_string(c, m, prefix, "name", 1, k->name, sizeof(k->name)) < 0)
        bad = TESSEL_EPARSE;
    for (size_t i = 0; i < t->nclasses && k->name[0]; i++)
        if (strcmp(t->classes[i].name, k->name) == 0)
            bad = en_error(c, TESSEL_EPARSE, tessel_yaml_get(m, "name"), prefix,
                           "class '%s' is defined twice", k->name);
    char field[128];
    en_join_field(field, sizeof(field), prefix, "model");
    const tessel_yaml_node *mn = tessel_yaml_get(m, "model");
    const char *ms = en_scalar_text(mn);
    size_t model = 0;
    while (ms && model < EN_NMODELS && strcmp(ms, model_names[model]) != 0)
        model++;
    if (!ms || model == EN_NMODELS) {
        const char *near = ms ? tessel_nearest_word(ms, model_names, EN_NMODELS) : NULL;
        if (near)
            en_error(c, TESSEL_EPARSE, mn ? mn : m, field,
                     "unknown model '%s' (did you mean '%s'?)", ms, near);
        else
            en_error(c, TESSEL_EPARSE, mn ? mn : m, field,
                     "'model' must be one of dram, sram, regfile, arith, unavailable, wire");
        return TESSEL_EPARSE;
    }
    k->model = (en_model)model;
    if (k->model == EN_MODEL_UNAVAILABLE) {
        static const char *const keys[] = {"name", "model", "reason"};
        en_check_keys(c, m, keys, sizeof(keys) / sizeof(keys[0]), prefix);
        if (en_get_string(c, m, prefix, "reason", 1, k->source, sizeof(k->source)) < 0)
            bad = TESSEL_EPARSE;
        return bad ? TESSEL_EPARSE : 0;
    }
    if (en_get_string(c, m, prefix, "source", 1, k->source, sizeof(k->source)) < 0)
        bad = TESSEL_EPARSE;
    k->default_width = 64;
    switch (k->model) {
    case EN_MODEL_DRAM: {
        static const char *const keys[] = {"name", "model", "source", "default_width",
                                           "pj_per_bit"};
        en_check_keys(c, m, keys, sizeof(keys) / sizeof(keys[0]), prefix);
        bad |= en_get_uint(c, m, prefix, "default_width", NUM_POSITIVE, &k->default_width) < 0;
        bad |= en_get_number(c, m, m, prefix, "pj_per_bit", NUM_REQUIRED | NUM_POSITIVE,
                          &k->pj_per_bit) < 0;
        break;
    }
    case EN_MODEL_WIRE: {
        static const char *const keys[] = {"name", "model", "source", "pj_per_bit_mm"};
        en_check_keys(c, m, keys, sizeof(keys) / sizeof(keys[0]), prefix);
        bad |= en_get_number(c, m, m, prefix, "pj_per_bit_mm", NUM_REQUIRED | NUM_POSITIVE,
                             &k->pj_per_bit) < 0;
        break;
    }
    case EN_MODEL_SRAM: {
        static const char *const keys[] = {"name",   "model", "source",
                                           "default_width", "points", "fit"};
        en_check_keys(c, m, keys, sizeof(keys) / sizeof(keys[0]), prefix);
        bad |= en_get_uint(c, m, prefix, "default_width", NUM_POSITIVE, &k->default_width) < 0;
        bad |= read_fit(c, m, prefix, &k->fit) != 0;
        int r = read_sram(c, m, prefix, k);
        if (r == TESSEL_ENOMEM)
            return r;
        bad |= r != 0;
        break;
    }
    case EN_MODEL_REGFILE: {
        static const char *const keys[] = {"name",     "model",      "source",    "default_width",
                                           "register", "comparator", "max_depth", "max_width"};
        en_check_keys(c, m, keys, sizeof(keys) / sizeof(keys[0]), prefix);
        bad |= en_get_uint(c, m, prefix, "default_width", NUM_POSITIVE, &k->default_width) < 0;
        bad |= en_get_uint(c, m, prefix, "max_depth", NUM_REQUIRED | NUM_POSITIVE, &k->max_depth) < 0;
        bad |= en_get_uint(c, m, prefix, "max_width", NUM_REQUIRED | NUM_POSITIVE, &k->max_width) < 0;
        const tessel_yaml_node *reg = tessel_yaml_get(m, "register");
        const tessel_yaml_node *cmp = tessel_yaml_get(m, "comparator");
        char rf[128], cf[128];
        en_join_field(rf, sizeof(rf), prefix, "register");
        en_join_field(cf, sizeof(cf), prefix, "comparator");
        if (!reg)
            bad = en_error(c, TESSEL_EPARSE, m, rf, "missing 'register' (energy per bit)");
        else
            bad |= read_ref(c, reg, rf, 0, &k->reg) != 0;
        if (!cmp)
            bad = en_error(c, TESSEL_EPARSE, m, cf, "missing 'comparator'");
        else
            bad |= read_ref(c, cmp, cf, 1, &k->cmp) != 0;
        break;
    }
    case EN_MODEL_ARITH: {
        static const char *const keys[] = {
            "name",      "model",         "source",    "operand",   "default_width",
            "max_width", "default_exponent", "default_mantissa", "per_radix",
            "default_radix", "max_radix", "parts"};
        en_check_keys(c, m, keys, sizeof(keys) / sizeof(keys[0]), prefix);
        const tessel_yaml_node *op = tessel_yaml_get(m, "operand");
        const char *os = en_scalar_text(op);
        char of[128];
        en_join_field(of, sizeof(of), prefix, "operand");
        if (op && (!os || (strcmp(os, "int") != 0 && strcmp(os, "float") != 0)))
            bad = en_error(c, TESSEL_EPARSE, op, of, "'operand' must be int or float");
        k->is_float = os && strcmp(os, "float") == 0;
        k->default_width = 32;
        bad |= en_get_uint(c, m, prefix, "default_width", NUM_POSITIVE, &k->default_width) < 0;
        bad |= en_get_uint(c, m, prefix, "max_width", NUM_REQUIRED | NUM_POSITIVE, &k->max_width) < 0;
        if (k->is_float) {
            bad |= en_get_uint(c, m, prefix, "default_exponent", NUM_REQUIRED | NUM_POSITIVE,
                            &k->default_exponent) < 0;
            bad |= en_get_uint(c, m, prefix, "default_mantissa", NUM_REQUIRED | NUM_POSITIVE,
                            &k->default_mantissa) < 0;
        }
        const tessel_yaml_node *pr = tessel_yaml_get(m, "per_radix");
        if (pr) {
            char pf[128];
            en_join_field(pf, sizeof(pf), prefix, "per_radix");
            if (tessel_yaml_bool(pr, &k->per_radix) != 0)
                bad = en_error(c, TESSEL_EPARSE, pr, pf, "'per_radix' must be true or false");
        }
        if (k->per_radix) {
            k->default_radix = 2;
            bad |= en_get_uint(c, m, prefix, "default_radix", NUM_POSITIVE, &k->default_radix) < 0;
            bad |= en_get_uint(c, m, prefix, "max_radix", NUM_REQUIRED | NUM_POSITIVE,
                            &k->max_radix) < 0;
            if (k->default_radix < 2 || k->max_radix < k->default_radix)
                bad = en_error(c, TESSEL_EPARSE, m, prefix,
                               "need 2 <= default_radix <= max_radix");
        }
        bad |= read_parts(c, m, prefix, k) != 0;
        break;
    }
    case EN_MODEL_UNAVAILABLE:
        break;
    }
    return bad ? TESSEL_EPARSE : 0;
}

static int read_scaling(en_ctx *c, const tessel_yaml_node *m, en_table *t)
{
    const char *prefix = "tessel_energy_table.technology_scaling";
    if (m->kind != TESSEL_YAML_MAPPING)
        return en_error(c, TESSEL_EPARSE, m, prefix, "expected a mapping");
    static const char *const keys[] = {"source", "nodes"};
    en_check_keys(c, m, keys, 2, prefix);
    char src[EN_SOURCE_MAX];
    int bad = en_get_string(c, m, prefix, "source", 1, src, sizeof(src)) < 0;
    const tessel_yaml_node *nodes = tessel_yaml_get(m, "nodes");
    char nf[128];
    en_join_field(nf, sizeof(nf), prefix, "nodes");
    if (!nodes || nodes->kind != TESSEL_YAML_SEQUENCE)
        return en_error(c, TESSEL_EPARSE, nodes ? nodes : m, nf, "'nodes' must be a sequence");
    for (size_t i = 0; i < nodes->count; i++) {
        const tessel_yaml_node *n = nodes->items[i];
        char pf[128];
        tessel_energy_fmt(pf, sizeof(pf), "%s[%zu]", nf, i);
        if (n->kind != TESSEL_YAML_MAPPING) {
            bad = en_error(c, TESSEL_EPARSE, n, pf, "expected a mapping");
            continue;
        }
        static const char *const nkeys[] = {"node", "energy", "area"};
        en_check_keys(c, n, nkeys, 3, pf);
        if (t->nnodes == EN_NODE_MAX) {
            bad = en_error(c, TESSEL_EPARSE, n, pf, "at most %u technology nodes", EN_NODE_MAX);
            break;
        }
        en_node *q = &t->node[t->nnodes];
        memset(q, 0, sizeof(*q));
        const tessel_yaml_node *nn = tessel_yaml_get(n, "node");
        char ff[128];
        en_join_field(ff, sizeof(ff), pf, "node");
        int b = 0;
        if (!en_scalar_text(nn) || tessel_energy_parse_node(en_scalar_text(nn), &q->nm) != 0 ||
            en_copy_str(q->name, sizeof(q->name), en_scalar_text(nn))) {
            b = en_error(c, TESSEL_EPARSE, nn ? nn : n, ff, "'node' must be a size like 65nm");
        }
        b |= en_get_number(c, n, n, pf, "energy", NUM_REQUIRED | NUM_POSITIVE, &q->energy) < 0;
        b |= en_get_number(c, n, n, pf, "area", NUM_REQUIRED | NUM_POSITIVE, &q->area) < 0;
        if (b) {
            bad = 1;
            continue;
        }
        for (size_t j = 0; j < t->nnodes; j++)
            if (t->node[j].nm == q->nm) {
                b = en_error(c, TESSEL_EPARSE, nn, ff, "node %s is listed twice", q->name);
                break;
            }
        if (!b && q->nm == t->ref_nm && (q->energy != 1 || q->area != 1))
            b = en_error(c, TESSEL_EPARSE, nn, ff,
                         "the reference node %s must have factors 1 (or be left out)", q->name);
        if (b)
            bad = 1;
        else
            t->nnodes++;
    }
    return bad ? TESSEL_EPARSE : 0;
}

static int read_tessel(en_ctx *c, const tessel_yaml_node *root, en_table *t)
{
    const char *prefix = "tessel_energy_table";
    if (root->kind != TESSEL_YAML_MAPPING)
        return en_error(c, TESSEL_EPARSE, root, prefix, "expected a mapping");
    static const char *const keys[] = {"version", "technology", "source", "technology_scaling",
                                       "classes"};
    en_check_keys(c, root, keys, 5, prefix);
    t->is_tessel = 1;
    const tessel_yaml_node *v = tessel_yaml_get(root, "version");
    uint64_t version = 0;
    if (!v || tessel_yaml_u64(v, &version) != 0 || version != 1)
        en_error(c, v ? TESSEL_EUNSUPPORTED : TESSEL_EPARSE, v ? v : root, "tessel_energy_table.version",
                 "unsupported table version (this tessel reads version 1)");
    const tessel_yaml_node *tech = tessel_yaml_get(root, "technology");
    if (!en_scalar_text(tech) || tessel_energy_parse_node(en_scalar_text(tech), &t->ref_nm) != 0 ||
        en_copy_str(t->technology, sizeof(t->technology), en_scalar_text(tech)))
        en_error(c, TESSEL_EPARSE, tech ? tech : root, "tessel_energy_table.technology",
                 "'technology' must be the reference node of the table, like 45nm");
    const tessel_yaml_node *sc = tessel_yaml_get(root, "technology_scaling");
    if (sc && t->ref_nm > 0)
        read_scaling(c, sc, t);
    const tessel_yaml_node *cls = tessel_yaml_get(root, "classes");
    if (!cls || cls->kind != TESSEL_YAML_SEQUENCE)
        return en_error(c, TESSEL_EPARSE, cls ? cls : root, "tessel_energy_table.classes",
                        "'classes' must be a sequence");
    if (cls->count) {
        t->classes = tessel_alloc_array(c->alloc, cls->count, sizeof(*t->classes));
        if (!t->classes)
            return en_oom(c);
    }
    for (size_t i = 0; i < cls->count; i++) {
        char pf[128];
        tessel_energy_fmt(pf, sizeof(pf), "%s.classes[%zu]", prefix, i);
        en_class *k = &t->classes[t->nclasses];
        int r = read_class(c, cls->items[i], pf, t, k);
        /* Keep even a class with errors so that its points are freed with
         * the table; the table as a whole is rejected anyway. */
        t->nclasses++;
        if (r == TESSEL_ENOMEM)
            return r;
    }
    return 0;
}

/* ------------------------------------------------------------------ */

void tessel_energy_table_clear(const tessel_allocator *a, en_table *t)
{
    for (size_t i = 0; i < t->nclasses; i++)
        tessel_dealloc(a, t->classes[i].points);
    tessel_dealloc(a, t->classes);
    tessel_dealloc(a, t->ert);
    tessel_dealloc(a, t->path);
    memset(t, 0, sizeof(*t));
}

int tessel_energy_table_read(const tessel_yaml_doc *doc, const char *path,
                             const tessel_allocator *a, en_table *t, tessel_diag_list *errors)
{
    en_ctx c = {errors, a, path, 0};
    memset(t, 0, sizeof(*t));
    t->path = tessel_strdup(a, path);
    if (!t->path)
        return en_oom(&c);
    const char *slash = strrchr(t->path, '/');
    t->base = slash ? slash + 1 : t->path;
    const tessel_yaml_node *root = tessel_yaml_root(doc);
    static const char *const tops[] = {"tessel_energy_table", "ERT", "ART", "ERT_summary",
                                       "ART_summary"};
    if (!root || root->kind != TESSEL_YAML_MAPPING || root->count == 0) {
        en_error(&c, TESSEL_EPARSE, root, NULL,
                 "not an energy table: expected a mapping with tessel_energy_table, ERT, ART, "
                 "ERT_summary or ART_summary");
    } else {
        en_check_keys(&c, root, tops, 5, NULL);
        const tessel_yaml_node *tt = tessel_yaml_get(root, "tessel_energy_table");
        if (tt && root->count > 1)
            en_error(&c, TESSEL_EPARSE, root, NULL,
                     "a tessel table cannot share its file with Accelergy ERT/ART data");
        if (tt) {
            read_tessel(&c, tt, t);
        } else {
            size_t cap = 0;
            for (size_t i = 1; i < 5 && c.first != TESSEL_ENOMEM; i++) {
                const tessel_yaml_node *m = tessel_yaml_get(root, tops[i]);
                if (m)
                    en_read_accelergy(&c, m, tops[i], t, &cap);
            }
        }
    }
    if (c.first) {
        tessel_energy_table_clear(a, t);
        return c.first;
    }
    return 0;
}
