/* Loading energy databases and resolving the components of a spec into
 * per-action energies and areas.
 *
 * Scaling rules (energy_tables/README.md has the sources):
 *   dram     pj_per_bit x width; off chip, so no technology scaling.
 *   sram     sram_price.c: per width series, linear interpolation in
 *            (log depth, log value) between table points; a width without
 *            a series uses the next wider one scaled linearly in width
 *            (the Accelergy library plug-in's rule); outside the points
 *            the table's fitted law (sram_fit.c), else an error; banks
 *            plus an H-tree above the fit's bank size.
 *   regfile  Aladdin: width 1-bit registers + depth address comparators of
 *            ceil(log2 depth) bits (timeloop-accelergy-exercises regfile).
 *   arith    sum of parts, each scaled linearly or quadratically in width
 *            from the nearest reference width at or above it (Aladdin).
 * Then energy and area are multiplied by the table's Stillmaker-Baas
 * factors for the requested node; off-grid nodes are errors. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "energy_internal.h"

const char *tessel_action_name(tessel_action a)
{
    static const char *const names[TESSEL_ACTION_COUNT] = {
        "read", "write", "update", "metadata_read", "metadata_write", "compute", "leak"};
    return (unsigned)a < TESSEL_ACTION_COUNT ? names[a] : "unknown";
}

/* ------------------------------------------------------------------ */
/* Databases */

void tessel_energy_db_free(tessel_energy_db **pdb)
{
    if (!pdb || !*pdb)
        return;
    tessel_energy_db *db = *pdb;
    for (size_t i = 0; i < db->ntables; i++)
        tessel_energy_table_clear(db->alloc, &db->tables[i]);
    tessel_dealloc(db->alloc, db->tables);
    tessel_dealloc(db->alloc, db);
    *pdb = NULL;
}

static tessel_energy_db *db_create(const tessel_allocator *a, size_t ntables)
{
    tessel_energy_db *db = tessel_alloc(a, sizeof(*db));
    if (!db)
        return NULL;
    memset(db, 0, sizeof(*db));
    db->alloc = a;
    if (ntables) {
        db->tables = tessel_alloc_array(a, ntables, sizeof(*db->tables));
        if (!db->tables) {
            tessel_dealloc(a, db);
            return NULL;
        }
        memset(db->tables, 0, ntables * sizeof(*db->tables));
    }
    return db;
}

/* The error lists are optional: NULL collects nothing. */
static void push(tessel_diag_list *errors, const tessel_diag *d)
{
    if (errors)
        tessel_diag_list_push(errors, d);
}

static int push_new(tessel_diag_list *errors, int code, const char *file, const char *msg)
{
    tessel_diag d;
    tessel_diag_set(&d, code, file, 0, 0, NULL, "%s", msg);
    push(errors, &d);
    return code;
}

static int push_oom(tessel_diag_list *errors, const char *file)
{
    return push_new(errors, TESSEL_ENOMEM, file, "out of memory while loading energy tables");
}

/* Loads one file into db->tables[db->ntables] (counted only on success). */
static int load_path(tessel_energy_db *db, const char *path, tessel_diag_list *errors)
{
    tessel_yaml_doc *doc = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_yaml_load(path, db->alloc, &doc, &d);
    if (rc) {
        if (!d.code)
            tessel_diag_set(&d, rc, path, 0, 0, NULL, "cannot read energy table: %s",
                            tessel_strerror(rc));
        push(errors, &d);
        return rc;
    }
    rc = tessel_energy_table_read(doc, path, db->alloc, &db->tables[db->ntables], errors);
    tessel_yaml_free(&doc);
    if (rc == 0)
        db->ntables++;
    return rc;
}

int tessel_energy_db_load(const tessel_spec *spec, const tessel_allocator *a,
                          tessel_energy_db **out, tessel_diag_list *errors)
{
    *out = NULL;
    if (!spec)
        return push_new(errors, TESSEL_EINVAL, NULL, "no spec given");
    unsigned n = spec->ntables;
    if (n > sizeof(spec->table) / sizeof(spec->table[0]))
        n = sizeof(spec->table) / sizeof(spec->table[0]);
    tessel_energy_db *db = db_create(a, n);
    if (!db)
        return push_oom(errors, spec->path);
    int first = 0;
    for (unsigned i = 0; i < n; i++) {
        if (!spec->table[i])
            continue;
        int rc = load_path(db, spec->table[i], errors);
        if (rc && !first)
            first = rc;
    }
    if (first) {
        tessel_energy_db_free(&db);
        return first;
    }
    *out = db;
    return 0;
}

/* Copies the first collected error into diag. */
static int first_error(tessel_diag_list *l, int rc, const char *file, tessel_diag *diag)
{
    if (l->count)
        *diag = l->items[0];
    else
        tessel_diag_set(diag, rc, file, 0, 0, NULL, "%s", tessel_strerror(rc));
    return rc;
}

int tessel_energy_db_load_file(const char *path, const tessel_allocator *a,
                               tessel_energy_db **out, tessel_diag *diag)
{
    *out = NULL;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, a);
    tessel_energy_db *db = db_create(a, 1);
    int rc = db ? load_path(db, path, &errors) : TESSEL_ENOMEM;
    if (rc) {
        if (diag)
            first_error(&errors, rc, path, diag);
        tessel_energy_db_free(&db);
    } else {
        *out = db;
    }
    tessel_diag_list_free(&errors);
    return rc;
}

int tessel_energy_db_parse(const char *name, const void *data, size_t size,
                           const tessel_allocator *a, tessel_energy_db **out,
                           tessel_diag_list *errors)
{
    *out = NULL;
    tessel_yaml_doc *doc = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_yaml_parse(name, data, size, a, &doc, &d);
    if (rc) {
        if (!d.code)
            tessel_diag_set(&d, rc, name, 0, 0, NULL, "%s", tessel_strerror(rc));
        push(errors, &d);
        return rc;
    }
    tessel_energy_db *db = db_create(a, 1);
    if (!db) {
        tessel_yaml_free(&doc);
        return push_oom(errors, name);
    }
    rc = tessel_energy_table_read(doc, name, a, &db->tables[0], errors);
    tessel_yaml_free(&doc);
    if (rc) {
        tessel_energy_db_free(&db);
        return rc;
    }
    db->ntables = 1;
    *out = db;
    return 0;
}

const char *tessel_energy_db_class_name(const tessel_energy_db *db, size_t i)
{
    for (size_t t = 0; db && t < db->ntables; t++) {
        if (i < db->tables[t].nclasses)
            return db->tables[t].classes[i].name;
        i -= db->tables[t].nclasses;
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Component attributes */

static const char *where_name(const en_where *w)
{
    return w->instance && w->instance[0] ? w->instance : w->c->cls;
}

int en_where_error(const en_where *w, int code, const tessel_yaml_node *n, const char *field,
                   const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const char *file = n ? n->file : w->c->pos.file;
    uint64_t line = n ? n->line : w->c->pos.line;
    uint32_t col = n ? n->column : w->c->pos.column;
    return tessel_diag_set(w->diag, code, file, line, col, field, "%s: %s", where_name(w), msg);
}

static int attr_uint(const en_where *w, const tessel_yaml_node *n, const char *key, unsigned *out)
{
    uint64_t v = 0;
    char field[64];
    tessel_energy_fmt(field, sizeof(field), "attributes.%s", key);
    if (tessel_yaml_u64(n, &v) != 0 || v == 0 || v > 0xffffffffu)
        return en_where_error(w, TESSEL_EPARSE, n, field, "'%s' must be a positive whole number",
                           key);
    *out = (unsigned)v;
    return 0;
}

/* The component's attributes into *at; unknown keys are errors with a suggestion. */
static int parse_attrs(const en_where *w, en_attrs *at)
{
    static const char *const keys[] = {"width",    "datawidth", "depth",    "size",  "technology",
                                       "exponent", "mantissa",  "radix",    "banks"};
    memset(at, 0, sizeof(*at));
    const tessel_yaml_node *m = w->c->attributes;
    if (!m || tessel_yaml_is_null(m))
        return 0;
    if (m->kind != TESSEL_YAML_MAPPING)
        return en_where_error(w, TESSEL_EPARSE, m, "attributes", "'attributes' must be a mapping");
    for (size_t i = 0; i < m->count; i++) {
        const char *k = m->keys[i]->value ? m->keys[i]->value : "";
        const tessel_yaml_node *v = m->items[i];
        int rc = 0;
        if (strcmp(k, "width") == 0 || strcmp(k, "datawidth") == 0) {
            if (at->width_n)
                return en_where_error(w, TESSEL_EPARSE, m->keys[i], "attributes",
                                   "give either 'width' or 'datawidth', not both");
            rc = attr_uint(w, v, k, &at->width);
            at->width_n = v;
        } else if (strcmp(k, "depth") == 0) {
            unsigned d = 0;
            rc = attr_uint(w, v, k, &d);
            at->depth = d;
            at->depth_n = v;
        } else if (strcmp(k, "size") == 0) {
            const char *s = v->kind == TESSEL_YAML_SCALAR ? v->value : NULL;
            if (!s || tessel_parse_size(s, &at->size) != 0 || at->size == 0)
                rc = en_where_error(w, TESSEL_EPARSE, v, "attributes.size",
                                 "'size' must be a positive size such as 64KiB");
            at->size_n = v;
        } else if (strcmp(k, "technology") == 0) {
            at->technology = v->kind == TESSEL_YAML_SCALAR ? v->value : NULL;
            at->technology_n = v;
            if (!at->technology)
                rc = en_where_error(w, TESSEL_EPARSE, v, "attributes.technology",
                                 "'technology' must be a node such as 45nm");
        } else if (strcmp(k, "exponent") == 0) {
            rc = attr_uint(w, v, k, &at->exponent);
            at->exponent_n = v;
        } else if (strcmp(k, "mantissa") == 0) {
            rc = attr_uint(w, v, k, &at->mantissa);
            at->mantissa_n = v;
        } else if (strcmp(k, "radix") == 0) {
            rc = attr_uint(w, v, k, &at->radix);
            at->radix_n = v;
        } else if (strcmp(k, "banks") == 0) {
            rc = attr_uint(w, v, k, &at->banks);
            at->banks_n = v;
        } else {
            const char *near = tessel_nearest_word(k, keys, sizeof(keys) / sizeof(keys[0]));
            char field[160];
            tessel_energy_fmt(field, sizeof(field), "attributes.%s", k);
            rc = near ? en_where_error(w, TESSEL_EPARSE, m->keys[i], field,
                                    "unknown attribute '%s' (did you mean '%s'?)", k, near)
                      : en_where_error(w, TESSEL_EPARSE, m->keys[i], field,
                                    "unknown attribute '%s' (known: width, datawidth, depth, "
                                    "size, technology, exponent, mantissa, radix, banks)",
                                    k);
        }
        if (rc)
            return rc;
    }
    if (at->depth_n && at->size_n)
        return en_where_error(w, TESSEL_EPARSE, at->size_n, "attributes.size",
                           "give either 'depth' or 'size', not both");
    return 0;
}

/* ------------------------------------------------------------------ */
/* ERT / ART matching */

/* 1 when an ERT name answers to `instance`: the last dotted component
 * ("system.chip.LLB[0..0]" answers "LLB"), or the whole name with ranges
 * stripped when the instance itself is dotted. */
int tessel_energy_ert_matches(const en_ert *e, const char *instance, int nocase)
{
    const char *target = strchr(instance, '.') ? e->stripped : e->name;
    return nocase ? strcasecmp(target, instance) == 0 : strcmp(target, instance) == 0;
}

/* The entry of table t answering to instance: exact spelling first, then
 * ignoring case ("mac" answers "MAC"). Two answers are an error. */
static int ert_find(const en_table *t, const char *instance, int want_energy, const en_where *w,
                    const en_ert **out)
{
    *out = NULL;
    for (int nocase = 0; nocase < 2 && !*out; nocase++) {
        for (size_t i = 0; i < t->nert; i++) {
            const en_ert *e = &t->ert[i];
            if ((want_energy ? !e->has_energy : !e->has_area) ||
                !tessel_energy_ert_matches(e, instance, nocase))
                continue;
            if (*out)
                return en_where_error(w, TESSEL_EINVAL, NULL, "instance",
                                   "'%s' matches both '%s' and '%s' in %s; name the component "
                                   "by its dotted path",
                                   instance, (*out)->full, e->full, t->base);
            *out = e;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Models */

static unsigned ceil_log2(unsigned v)
{
    unsigned b = 0;
    while (b < 32 && (1ull << b) < v)
        b++;
    return b;
}

static int resolve_regfile(const en_where *w, const en_table *t, const en_class *k,
                           const en_attrs *at, unsigned width, uint64_t default_bytes,
                           tessel_component_energy *out)
{
    double depth = en_storage_depth(at, width, default_bytes);
    if (!(depth > 0))
        depth = 1; /* Accelergy's regfile default depth */
    const en_class *large = NULL; /* the table's fitted SRAM, for register files past max_depth */
    for (size_t i = 0; i < t->nclasses && !large; i++)
        if (t->classes[i].model == EN_MODEL_SRAM && t->classes[i].fit.present)
            large = &t->classes[i];
    if (large && (depth > k->max_depth || width > k->max_width || at->banks_n))
        return en_price_sram(w, t, large, at, width, depth,
                          at->banks_n ? "regfile with banks" : "regfile past its registers",
                          out);
    if (at->banks_n)
        return en_where_error(w, TESSEL_EINVAL, at->banks_n, "attributes.banks",
                           "%s takes no 'banks' (no fitted SRAM in %s)", k->name, t->base);
    if (depth != floor(depth) || depth > k->max_depth)
        return en_where_error(w, TESSEL_ERANGE, en_depth_node(at), "attributes.depth",
                           "%s depth %g must be a whole number from 1 to %u (%s)", k->name, depth,
                           k->max_depth, t->base);
    if (width > k->max_width)
        return en_where_error(w, TESSEL_ERANGE, at->width_n, "attributes.width",
                           "%s width %u is above the table's %u (%s)", k->name, width,
                           k->max_width, t->base);
    /* One access drives `width` registers and compares the address in
     * every row: depth comparators of ceil(log2 depth) bits, scaled
     * linearly from the comparator's reference width (Aladdin). */
    double b = ceil_log2((unsigned)depth) / k->cmp.width;
    double access = width * k->reg.energy + depth * b * k->cmp.energy;
    for (int a = TESSEL_ACTION_READ; a <= TESSEL_ACTION_METADATA_WRITE; a++)
        out->pj[a] = access;
    out->pj[TESSEL_ACTION_LEAK] = width * depth * k->reg.idle + depth * b * k->cmp.idle;
    out->area_um2 = width * depth * k->reg.area + depth * b * k->cmp.area;
    out->depth_words = depth;
    tessel_energy_fmt(out->method, sizeof(out->method), "regfile");
    tessel_energy_fmt(out->source, sizeof(out->source), "%s: %s %ux%g (Aladdin registers + comparators)",
             t->base, k->name, width, depth);
    return 0;
}

/* An arithmetic unit: the sum of its parts scaled in width (Aladdin), per radix for mergers. */
static int resolve_arith(const en_where *w, const en_table *t, const en_class *k,
                         const en_attrs *at, tessel_component_energy *out)
{
    unsigned width;
    if (k->is_float) {
        if (at->width_n)
            return en_where_error(w, TESSEL_EINVAL, at->width_n, "attributes.width",
                               "%s is a floating-point unit: give 'exponent' and 'mantissa' "
                               "instead of a width",
                               k->name);
        unsigned e = at->exponent ? at->exponent : k->default_exponent;
        unsigned m = at->mantissa ? at->mantissa : k->default_mantissa;
        width = e + m;
    } else {
        if (at->exponent_n || at->mantissa_n)
            return en_where_error(w, TESSEL_EINVAL,
                               at->exponent_n ? at->exponent_n : at->mantissa_n,
                               "attributes.exponent",
                               "%s is an integer unit: give 'width', not exponent/mantissa "
                               "(floating point: class fpmac)",
                               k->name);
        width = at->width ? at->width : k->default_width;
    }
    if (width > k->max_width)
        return en_where_error(w, TESSEL_ERANGE, at->width_n ? at->width_n : at->mantissa_n,
                           "attributes.width", "%s width %u is above the table's %u (%s)",
                           k->name, width, k->max_width, t->base);
    unsigned radix = 1;
    if (k->per_radix) {
        radix = at->radix ? at->radix : k->default_radix;
        if (radix < 2 || radix > k->max_radix)
            return en_where_error(w, TESSEL_ERANGE, at->radix_n, "attributes.radix",
                               "%s radix %u must be from 2 to %u", k->name, radix, k->max_radix);
    } else if (at->radix_n) {
        return en_where_error(w, TESSEL_EINVAL, at->radix_n, "attributes.radix",
                           "%s takes no radix", k->name);
    }
    double e = 0, idle = 0, area = 0;
    for (size_t p = 0; p < k->nparts; p++) {
        const en_part *q = &k->part[p];
        size_t r = 0;
        while (r + 1 < q->nrefs && q->ref[r].width < width)
            r++;
        double f = width / q->ref[r].width;
        if (q->quadratic)
            f *= f;
        e += f * q->ref[r].energy;
        idle += f * q->ref[r].idle;
        area += f * q->ref[r].area;
    }
    if (k->per_radix) {
        /* A radix-r merge tree: each element passes ceil(log2 r) levels;
         * the tree holds r - 1 units. */
        e *= ceil_log2(radix);
        idle *= radix - 1;
        area *= radix - 1;
    }
    out->pj[TESSEL_ACTION_COMPUTE] = e;
    out->pj[TESSEL_ACTION_LEAK] = idle;
    tessel_energy_fmt(out->method, sizeof(out->method), "arith");
    out->area_um2 = area;
    out->width_bits = width;
    if (k->per_radix)
        tessel_energy_fmt(out->source, sizeof(out->source), "%s: %s %u-bit radix %u", t->base, k->name,
                 width, radix);
    else
        tessel_energy_fmt(out->source, sizeof(out->source), "%s: %s %u-bit", t->base, k->name, width);
    return 0;
}

/* The energy and area factors for `node` in table t. */
static int tech_factors(const en_where *w, const en_table *t, const char *node,
                        const tessel_yaml_node *at, double *fe, double *fa)
{
    double nm = 0;
    if (tessel_energy_parse_node(node, &nm) != 0)
        return en_where_error(w, TESSEL_EPARSE, at, "attributes.technology",
                           "technology '%s' is not a node such as 45nm", node);
    *fe = *fa = 1;
    if (nm == t->ref_nm)
        return 0;
    for (size_t i = 0; i < t->nnodes; i++)
        if (t->node[i].nm == nm) {
            *fe = t->node[i].energy;
            *fa = t->node[i].area;
            return 0;
        }
    char list[160];
    int len = tessel_energy_fmt(list, sizeof(list), "%s", t->technology);
    for (size_t i = 0; i < t->nnodes && len > 0 && (size_t)len < sizeof(list); i++)
        len += tessel_energy_fmt(list + len, sizeof(list) - (size_t)len, ", %s", t->node[i].name);
    return en_where_error(w, TESSEL_EUNSUPPORTED, at, "attributes.technology",
                       "technology %s is not a node of %s (supported: %s); tessel scales only "
                       "between grid nodes",
                       node, t->base, list);
}

/* One table class priced at the component's attributes: its model's rule (dram, sram,
 * regfile, arith, wire), then the technology factors of the requested node. */
static int resolve_class(const en_where *w, const en_table *t, const en_class *k,
                         const en_attrs *at, const char *technology, unsigned default_width,
                         uint64_t default_bytes, tessel_component_energy *out)
{
    if (k->model == EN_MODEL_UNAVAILABLE)
        return en_where_error(w, TESSEL_EUNSUPPORTED, NULL, "class",
                           "%s has no energy numbers in %s: %s", k->name, t->base, k->source);
    unsigned width = at->width ? at->width : default_width ? default_width : k->default_width;
    if (at->banks_n && k->model != EN_MODEL_SRAM && k->model != EN_MODEL_REGFILE)
        return en_where_error(w, TESSEL_EINVAL, at->banks_n, "attributes.banks",
                           "%s is not an SRAM or register file: it takes no 'banks'", k->name);
    if (k->model != EN_MODEL_ARITH && (at->exponent_n || at->mantissa_n || at->radix_n))
        return en_where_error(w, TESSEL_EINVAL,
                           at->exponent_n ? at->exponent_n
                                          : at->mantissa_n ? at->mantissa_n : at->radix_n,
                           "attributes", "%s is a storage class: it takes width and depth/size",
                           k->name);
    out->width_bits = width;
    int rc = 0;
    switch (k->model) {
    case EN_MODEL_DRAM:
        for (int a = TESSEL_ACTION_READ; a <= TESSEL_ACTION_METADATA_WRITE; a++)
            out->pj[a] = k->pj_per_bit * width;
        tessel_energy_fmt(out->source, sizeof(out->source), "%s: %s %g pJ/bit x %u bits", t->base, k->name,
                 k->pj_per_bit, width);
        tessel_energy_fmt(out->method, sizeof(out->method), "dram");
        /* Off-chip: the logic node of the accelerator does not change the
         * DRAM's energy, so no technology factor applies. */
        return 0;
    case EN_MODEL_SRAM:
        rc = en_resolve_sram(w, t, k, at, width, default_bytes, out);
        break;
    case EN_MODEL_REGFILE:
        rc = resolve_regfile(w, t, k, at, width, default_bytes, out);
        break;
    case EN_MODEL_ARITH:
        rc = resolve_arith(w, t, k, at, out);
        break;
    case EN_MODEL_UNAVAILABLE:
        break;
    case EN_MODEL_WIRE:
        /* one access: `width` bits over one mm; the caller multiplies by the
         * length (tessel_energy_design: a network's hop) */
        out->pj[TESSEL_ACTION_READ] = k->pj_per_bit * width;
        tessel_energy_fmt(out->source, sizeof(out->source), "%s: %s %g pJ/bit/mm x %u bits",
                          t->base, k->name, k->pj_per_bit, width);
        tessel_energy_fmt(out->method, sizeof(out->method), "wire");
        break;
    }
    if (rc)
        return rc;
    const char *node = at->technology ? at->technology
                       : technology && technology[0] ? technology
                                                     : t->technology;
    double fe = 1, fa = 1;
    rc = tech_factors(w, t, node, at->technology_n, &fe, &fa);
    if (rc)
        return rc;
    for (int a = 0; a < TESSEL_ACTION_COUNT; a++)
        out->pj[a] *= fe;
    out->area_um2 *= fa;
    tessel_energy_fmt(out->technology, sizeof(out->technology), "%s", node);
    size_t len = strlen(out->source);
    if (len + 1 < sizeof(out->source))
        tessel_energy_fmt(out->source + len, sizeof(out->source) - len, " @%s", node);
    return 0;
}

static void fill_ert(const en_table *t, const en_ert *e, unsigned width,
                     tessel_component_energy *out)
{
    memcpy(out->pj, e->pj, sizeof(out->pj));
    memcpy(out->gated_pj, e->gated_pj, sizeof(out->gated_pj));
    out->area_um2 = e->has_area ? e->area : 0;
    out->width_bits = width;
    tessel_energy_fmt(out->method, sizeof(out->method), "ert");
    tessel_energy_fmt(out->source, sizeof(out->source), "%s: %s", t->base, e->full);
}

static int unknown_class(const en_where *w, const tessel_energy_db *db)
{
    const char *names[256];
    size_t n = 0;
    int have_ert = 0;
    for (size_t t = 0; t < db->ntables; t++) {
        have_ert |= !db->tables[t].is_tessel;
        for (size_t i = 0; i < db->tables[t].nclasses && n < 256; i++)
            names[n++] = db->tables[t].classes[i].name;
    }
    const char *cls = w->c->cls;
    char ert_note[96] = "";
    if (have_ert && w->instance && w->instance[0])
        tessel_energy_fmt(ert_note, sizeof(ert_note), "; no ERT entry is named '%s'", w->instance);
    if (!cls[0])
        return en_where_error(w, TESSEL_EINVAL, NULL, "class", "no energy class given%s", ert_note);
    const char *near = tessel_nearest_word(cls, names, n);
    if (near)
        return en_where_error(w, TESSEL_EINVAL, NULL, "class",
                           "unknown energy class '%s' (did you mean '%s'?)%s", cls, near,
                           ert_note);
    if (db->ntables == 0)
        return en_where_error(w, TESSEL_EINVAL, NULL, "class",
                           "unknown energy class '%s': no energy tables are loaded", cls);
    return en_where_error(w, TESSEL_EINVAL, NULL, "class", "unknown energy class '%s'%s", cls,
                       ert_note);
}

/* The pJ per action (and area) of one component: its class and attributes looked up in
 * the tables (point, interpolation, width scaling, fitted SRAM, banks), with the source. */
int tessel_energy_component_sized(const tessel_energy_db *db, const tessel_spec_component *c,
                                  const char *instance, const char *technology,
                                  unsigned default_width, uint64_t default_bytes,
                                  tessel_component_energy *out, tessel_diag *diag)
{
    memset(out, 0, sizeof(*out));
    if (!db || !c)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "no energy database or component");
    en_where w = {c, instance, diag};
    en_attrs at;
    int rc = parse_attrs(&w, &at);
    if (rc)
        return rc;
    unsigned width = at.width ? at.width : default_width ? default_width : 64;
    int found = 0;
    for (size_t i = 0; i < db->ntables && !found; i++) {
        const en_table *t = &db->tables[i];
        if (!t->is_tessel) {
            const en_ert *e = NULL;
            if (!instance || !instance[0])
                continue;
            rc = ert_find(t, instance, 1, &w, &e);
            if (rc)
                return rc;
            if (e) {
                fill_ert(t, e, width, out);
                tessel_energy_fmt(out->table, sizeof(out->table), "%s", t->base);
                tessel_energy_fmt(out->entry, sizeof(out->entry), "%s", e->full);
                found = 1;
            }
            continue;
        }
        for (size_t j = 0; j < t->nclasses; j++)
            if (strcmp(t->classes[j].name, c->cls) == 0) {
                rc = resolve_class(&w, t, &t->classes[j], &at, technology, default_width,
                                   default_bytes, out);
                if (rc) {
                    memset(out, 0, sizeof(*out));
                    return rc;
                }
                tessel_energy_fmt(out->table, sizeof(out->table), "%s", t->base);
                tessel_energy_fmt(out->entry, sizeof(out->entry), "%s", t->classes[j].name);
                found = 1;
                break;
            }
    }
    if (!found)
        return unknown_class(&w, db);
    /* An ART entry for this instance gives its area as is. */
    for (size_t i = 0; i < db->ntables && instance && instance[0]; i++) {
        const en_table *t = &db->tables[i];
        const en_ert *e = NULL;
        if (t->is_tessel)
            continue;
        rc = ert_find(t, instance, 0, &w, &e);
        if (rc) {
            memset(out, 0, sizeof(*out));
            return rc;
        }
        if (e) {
            out->area_um2 = e->area;
            size_t len = strlen(out->source);
            if (len + 1 < sizeof(out->source))
                tessel_energy_fmt(out->source + len, sizeof(out->source) - len, "; area %s", t->base);
            break;
        }
    }
    return 0;
}

int tessel_energy_component(const tessel_energy_db *db, const tessel_spec_component *c,
                            const char *instance, const char *technology,
                            tessel_component_energy *out, tessel_diag *diag)
{
    return tessel_energy_component_sized(db, c, instance, technology, 0, 0, out, diag);
}

/* Level l's network to its child (docs/models/energy.md "Network energy"):
 * its wire class (default `wire`) at the child's value width, times the
 * hop: network.hop_mm, else the side of the square the child's instances
 * fill (sqrt(instances x area of one), the H-tree length sram_fit.c takes
 * for banks). Unpriced (method "") without a network, or with the default
 * class in no table, or without a length; a named class must resolve. */
static int network_energy(const tessel_energy_db *db, const tessel_spec *spec, unsigned l,
                          tessel_design_energy *out, tessel_diag *d)
{
    const tessel_spec_level *lv = &spec->level[l];
    int split = 0;
    for (unsigned x = 0; x < TESSEL_SPEC_MAX_INDICES; x++)
        split |= lv->spatial[x] > 0;
    if (!lv->network_width && !split)
        return 0;
    int named = lv->network_class[0] != '\0';
    tessel_spec_component c;
    memset(&c, 0, sizeof(c));
    tessel_energy_fmt(c.cls, sizeof(c.cls), "%s", named ? lv->network_class : "wire");
    c.pos = lv->pos; /* errors name the level (its network has no position of its own) */
    int inner = l + 1 >= spec->nlevels;
    const tessel_spec_level *child = &spec->level[inner ? l : l + 1];
    unsigned vb = child->value_bits ? child->value_bits : 64;
    char name[TESSEL_SPEC_NAME_MAX + 16];
    tessel_energy_fmt(name, sizeof(name), "%s:network", lv->name);
    tessel_component_energy *e = &out->network[l];
    int rc = tessel_energy_component_sized(db, &c, name, spec->technology, vb, 0, e, d);
    if (rc) {
        memset(e, 0, sizeof(*e));
        return named ? rc : 0;
    }
    double one = inner ? out->mac.area_um2 * (spec->compute.macs_per_pe ? spec->compute.macs_per_pe
                                                                        : 1) +
                             out->intersect.area_um2
                       : out->level[l + 1].area_um2;
    double n = inner ? spec->compute.pes : child->instances;
    double mm = lv->network_hop_mm > 0 ? lv->network_hop_mm : sqrt((n > 0 ? n : 1) * one) / 1000;
    if (!(mm > 0) || strcmp(e->method, "wire") != 0) {
        memset(e, 0, sizeof(*e)); /* no length, or not a wire class: not priced */
        return named ? tessel_diag_set(d, TESSEL_EINVAL, lv->pos.file, lv->pos.line,
                                       lv->pos.column, "network.class",
                                       "network of %s: class '%s' is not a wire class, or "
                                       "no hop length is known (give network.hop_mm)",
                                       lv->name, c.cls)
                     : 0;
    }
    out->network_mm[l] = mm;
    e->pj[TESSEL_ACTION_READ] *= mm;
    size_t len = strlen(e->source);
    if (len + 1 < sizeof(e->source))
        tessel_energy_fmt(e->source + len, sizeof(e->source) - len, " x %.4g mm (%s)", mm,
                          lv->network_hop_mm > 0 ? "network.hop_mm" : "side of the child's instances");
    return 0;
}

int tessel_energy_design(const tessel_energy_db *db, const tessel_spec *spec,
                         tessel_design_energy *out, tessel_diag_list *errors)
{
    memset(out, 0, sizeof(*out));
    if (!db || !spec)
        return push_new(errors, TESSEL_EINVAL, NULL, "no energy database or spec");
    int first = 0;
    tessel_diag d;
    unsigned nlevels = spec->nlevels < TESSEL_SPEC_MAX_LEVELS ? spec->nlevels
                                                              : TESSEL_SPEC_MAX_LEVELS;
    for (unsigned l = 0; l < nlevels; l++) {
        const tessel_spec_level *lv = &spec->level[l];
        tessel_diag_clear(&d);
        int rc = tessel_energy_component_sized(db, &lv->energy, lv->name, spec->technology,
                                               lv->word_bits, lv->capacity, &out->level[l], &d);
        if (rc) {
            push(errors, &d);
            first = first ? first : rc;
            continue;
        }
        out->area_um2 += out->level[l].area_um2 * (lv->instances ? lv->instances : 1);
    }
    double pes = spec->compute.pes ? spec->compute.pes : 1;
    double macs = pes * (spec->compute.macs_per_pe ? spec->compute.macs_per_pe : 1);
    tessel_diag_clear(&d);
    int rc = tessel_energy_component(db, &spec->compute.mac, "MAC", spec->technology, &out->mac,
                                     &d);
    if (rc) {
        push(errors, &d);
        first = first ? first : rc;
    } else {
        out->area_um2 += out->mac.area_um2 * macs;
    }
    if (spec->compute.intersect.cls[0]) {
        tessel_diag_clear(&d);
        rc = tessel_energy_component(db, &spec->compute.intersect, "intersect", spec->technology,
                                     &out->intersect, &d);
        if (rc) {
            push(errors, &d);
            first = first ? first : rc;
        } else {
            /* One intersection unit per PE (ExTensor's PE organisation). */
            out->area_um2 += out->intersect.area_um2 * pes;
        }
    }
    for (unsigned l = 0; l < nlevels; l++) {
        tessel_diag_clear(&d);
        rc = network_energy(db, spec, l, out, &d);
        if (rc) {
            push(errors, &d);
            first = first ? first : rc;
        }
    }
    return first;
}
