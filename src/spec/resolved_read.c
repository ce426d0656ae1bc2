/* A resolved spec (tessel spec, tessel map -o) read back as a design: the
 * tree libcyaml loads through the schema (resolved_schema.c) is written in
 * the vocabulary of hand-written specs (docs/spec.md), which the ordinary
 * reader (validate.c) then checks and loads. So one reader decides what a
 * spec means, and a resolved file gives the numbers of the spec it came
 * from. Every value is explicit in a resolved spec: nothing is left to a
 * default, except where the resolved form itself means "none" (capacity
 * or bandwidth 0: unbounded; tile 0: the whole extent; order default). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "resolved.h"
#include "yaml_internal.h"

typedef struct sb {
    const tessel_allocator *a;
    char *text;
    size_t len, cap;
    int failed;
} sb;

static void put(sb *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void put(sb *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->text ? b->text + b->len : NULL, b->text ? b->cap - b->len : 0, fmt,
                          ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->text && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->len + (size_t)n)
            cap *= 2;
        char *grown = tessel_alloc(b->a, cap);
        if (!grown) {
            b->failed = 1;
            return;
        }
        if (b->text) {
            memcpy(grown, b->text, b->len);
            tessel_dealloc(b->a, b->text);
        }
        grown[b->len] = '\0';
        b->text = grown;
        b->cap = cap;
    }
}

/* A string as a YAML single-quoted scalar: never read as a number, a
 * boolean or null, whatever it holds (file names, the einsum). */
static void quoted(sb *b, const char *s)
{
    put(b, "'");
    for (const char *p = s ? s : ""; *p; p++) {
        if (*p == '\'')
            put(b, "''");
        else
            put(b, "%c", *p);
    }
    put(b, "'");
}

/* A list of names in flow style: [A, B]. */
static void names(sb *b, char *const *v, unsigned n)
{
    put(b, "[");
    for (unsigned i = 0; i < n; i++) {
        put(b, "%s", i ? ", " : "");
        quoted(b, v[i]);
    }
    put(b, "]");
}

/* class and attributes of a component, at `indent`. The attributes are
 * written plain: they were plain scalars (numbers, technology names). */
static void component(sb *b, const rs_component *c, const char *indent)
{
    put(b, "%sclass: ", indent);
    quoted(b, c->cls);
    put(b, "\n");
    const rs_attrs *at = c->attributes;
    if (!at)
        return;
    put(b, "%sattributes:\n", indent);
    const struct {
        const char *key, *value;
    } kv[] = { { "width", at->width },       { "datawidth", at->datawidth },
               { "depth", at->depth },       { "size", at->size },
               { "technology", at->technology }, { "exponent", at->exponent },
               { "mantissa", at->mantissa }, { "radix", at->radix } };
    for (size_t k = 0; k < sizeof(kv) / sizeof(kv[0]); k++)
        if (kv[k].value)
            put(b, "%s  %s: %s\n", indent, kv[k].key, kv[k].value);
}

static void workload(sb *b, const rs_workload *w)
{
    put(b, "workload:\n  einsum: ");
    quoted(b, w->einsum);
    put(b, "\n  data:\n");
    for (unsigned t = 1; t < w->tensors_count; t++) {
        const rs_tensor *r = &w->tensors[t];
        if (r->model) { /* a density model stands for the data */
            const rs_model *m = r->model;
            put(b, "    %s: {model: %s, rows: %" PRIu64 ", cols: %" PRIu64, r->name, m->kind,
                m->rows, m->cols);
            if (m->nnz)
                put(b, ", nnz: %" PRIu64, m->nnz);
            else
                put(b, ", density: %.17g", m->density);
            if (strcmp(m->kind, "banded") == 0)
                put(b, ", bandwidth: %" PRIu64, m->bandwidth);
            if (strcmp(m->kind, "nm") == 0)
                put(b, ", n: %u, m: %u", m->n, m->m);
            put(b, ", seed: %" PRIu64 "}\n", m->seed);
        } else if (r->data) {
            put(b, "    %s: ", r->name);
            quoted(b, r->data);
            put(b, "\n");
        }
    }
    int dims = 0;
    for (unsigned i = 0; i < w->indices_count; i++)
        dims |= w->indices[i].extent != 0;
    if (!dims)
        return;
    put(b, "  dims:\n");
    for (unsigned i = 0; i < w->indices_count; i++)
        if (w->indices[i].extent)
            put(b, "    %s: %" PRIu64 "\n", w->indices[i].name, w->indices[i].extent);
}

/* Tensor p's part of a level: a partition as written by the resolved
 * spec, in bytes (a whole number of bytes as a size, so it reads back
 * exactly; otherwise as the fraction of the capacity it is). */
static void part(sb *b, const rs_level *lv, const rs_part *p)
{
    put(b, "        %s:\n          format: %s\n", p->tensor, p->format);
    if (lv->capacity && p->partition_bytes > 0) {
        double whole = (double)(uint64_t)p->partition_bytes;
        if (whole == p->partition_bytes && p->partition_bytes > 1)
            put(b, "          partition: %" PRIu64 "\n", (uint64_t)p->partition_bytes);
        else
            put(b, "          partition: %.17g\n", p->partition_bytes / (double)lv->capacity);
    }
    if (p->skip_on_count) {
        put(b, "          skip_on: ");
        names(b, p->skip_on, p->skip_on_count);
        put(b, "\n");
    }
    if (p->gate_on_count) {
        put(b, "          gate_on: ");
        names(b, p->gate_on, p->gate_on_count);
        put(b, "\n");
    }
    if (p->rank_order_count) {
        put(b, "          rank_order: ");
        names(b, p->rank_order, p->rank_order_count);
        put(b, "\n");
    }
}

static void level(sb *b, const rs_level *lv)
{
    put(b, "    - name: %s\n", lv->name);
    if (lv->capacity)
        put(b, "      capacity: %" PRIu64 "\n", lv->capacity);
    if (lv->bandwidth > 0)
        put(b, "      bandwidth: %.17g\n", lv->bandwidth);
    if (lv->read_bandwidth)
        put(b, "      read_bandwidth: %.17g\n", *lv->read_bandwidth);
    if (lv->write_bandwidth)
        put(b, "      write_bandwidth: %.17g\n", *lv->write_bandwidth);
    if (lv->network_width) {
        put(b, "      network: {width: %u, deliver: %s", *lv->network_width,
            lv->network_deliver ? lv->network_deliver : "effectual");
        if (lv->network_class)
            put(b, ", class: %s", lv->network_class);
        if (lv->network_hop_mm)
            put(b, ", hop_mm: %.17g", *lv->network_hop_mm);
        put(b, "}\n");
    }
    put(b, "      instances: %u\n      word_bits: %u\n      value_bits: %u\n"
           "      coord_bits: %u\n      offset_bits: %u\n      run_bits: %u\n"
           "      format: %s\n",
        lv->instances, lv->word_bits, lv->value_bits, lv->coord_bits, lv->offset_bits,
        lv->run_bits, lv->format);
    component(b, &lv->energy, "      ");
    put(b, "      tensors:\n");
    for (unsigned t = 0; t < lv->tensors_count; t++)
        part(b, lv, &lv->tensors[t]);
    /* the parts' scalar conditions back into the level's action_optimization */
    int any = 0;
    for (unsigned t = 0; t < lv->tensors_count; t++) {
        const rs_part *p = &lv->tensors[t];
        for (int g = 0; g < 2; g++) {
            unsigned n = g ? p->scalar_gate_on_count : p->scalar_skip_on_count;
            if (!n)
                continue;
            if (!any++)
                put(b, "      action_optimization:\n");
            put(b, "        - {type: %s, target: %s, condition_on: ", g ? "gating" : "skipping",
                p->tensor);
            names(b, g ? p->scalar_gate_on : p->scalar_skip_on, n);
            put(b, "}\n");
        }
    }
}

static void architecture(sb *b, const rs_spec *r)
{
    put(b, "architecture:\n  technology: ");
    quoted(b, r->technology);
    put(b, "\n");
    if (r->timing)
        put(b, "  timing: %s\n", r->timing);
    if (r->energy_tables_count) {
        put(b, "  energy_tables: ");
        names(b, r->energy_tables, r->energy_tables_count);
        put(b, "\n");
    }
    put(b, "  levels:\n");
    for (unsigned l = 0; l < r->levels_count; l++)
        level(b, &r->levels[l]);
    const rs_compute *c = &r->compute;
    put(b, "  compute:\n    pes: %u\n    macs_per_pe: %u\n    clock: %.17g\n", c->pes,
        c->macs_per_pe, c->clock_ghz);
    component(b, &c->mac, "    ");
    if (c->intersect) {
        put(b, "    intersect:\n");
        component(b, c->intersect, "      ");
        if (c->intersect_step_cycles)
            put(b, "      step_cycles: %.17g\n", *c->intersect_step_cycles);
    }
    if (c->compute_optimization) {
        const char *o = c->compute_optimization;
        put(b, "    compute_optimization: [%s%s%s]\n",
            strstr(o, "gating") ? "{type: gating}" : "",
            strstr(o, "gating") && strstr(o, "skipping") ? ", " : "",
            strstr(o, "skipping") ? "{type: skipping}" : "");
    }
}

/* The tile as "i:128,k:64", leaving out the indices tiled whole (0). */
static void tile(sb *b, const rs_mapping *m)
{
    int any = 0;
    for (unsigned i = 0; i < m->tile_count; i++)
        if (m->tile[i].size) {
            put(b, "%s%s:%" PRIu64, any ? "," : "", m->tile[i].index, m->tile[i].size);
            any = 1;
        }
}

static void mapping(sb *b, const rs_spec *r)
{
    put(b, "mapping:\n");
    for (unsigned l = 1; l < r->levels_count; l++) {
        const rs_mapping *m = r->levels[l].mapping;
        if (!m)
            continue;
        put(b, "  %s:\n    order: %s\n", r->levels[l].name, m->order);
        int any = 0;
        for (unsigned i = 0; i < m->tile_count; i++)
            any |= m->tile[i].size != 0;
        if (any) {
            put(b, "    tile: '");
            tile(b, m);
            put(b, "'\n");
        }
        if (m->spatial)
            put(b, "    spatial: %s\n    distribution: %s\n", m->spatial,
                m->distribution ? m->distribution : "blocked");
        if (m->bypass_count) {
            put(b, "    bypass: ");
            names(b, m->bypass, m->bypass_count);
            put(b, "\n");
        }
    }
    const rs_strategy *st = &r->strategy;
    put(b, "  strategy: %s\n", st->name);
    if (strcmp(st->name, "fixed") == 0)
        return;
    put(b, "  strategy_options:\n    overbooking: %.17g\n    tail_samples: %u\n"
           "    rounds: %u\n    seed: %" PRIu64 "\n    worst: %s\n"
           "    micro_tile: %" PRIu64 "x%" PRIu64 "\n    growth: %s\n",
        st->overbooking, st->tail_samples, st->rounds, st->seed, st->worst, st->micro_rows,
        st->micro_cols, st->growth);
    if (st->order && strcmp(st->order, "default") != 0)
        put(b, "    order: %s\n", st->order);
    if (st->dataflow && strcmp(st->dataflow, "merged") != 0)
        put(b, "    dataflow: %s\n", st->dataflow);
    if (st->levels_count) {
        put(b, "    levels: ");
        names(b, st->levels, st->levels_count);
        put(b, "\n");
    }
}

static void template_(sb *b, const rs_template *t)
{
    if (!t->name || strcmp(t->name, "none") == 0)
        return;
    put(b, "template: %s\n", t->name);
    if (!t->options_count)
        return;
    /* the options were written as flow YAML text of what the spec held */
    put(b, "template_options:\n");
    for (unsigned i = 0; i < t->options_count; i++)
        put(b, "  %s: %s\n", t->options[i].key, t->options[i].value);
}

int rs_spec_text(const rs_spec *r, const tessel_allocator *a, char **text, size_t *len)
{
    sb b = { .a = a };
    *text = NULL;
    *len = 0;
    put(&b, "# read from a resolved spec (written by tessel spec or tessel map)\nname: ");
    quoted(&b, r->name);
    put(&b, "\n");
    workload(&b, &r->workload);
    architecture(&b, r);
    mapping(&b, r);
    template_(&b, &r->template_);
    if (b.failed) {
        tessel_dealloc(a, b.text);
        return TESSEL_ENOMEM;
    }
    *text = b.text;
    *len = b.len;
    return 0;
}

int rs_is_resolved(const tessel_yaml_node *root)
{
    return root && root->kind == TESSEL_YAML_MAPPING && tessel_yaml_get(root, "levels") &&
           tessel_yaml_get(root, "file") && !tessel_yaml_get(root, "architecture");
}

int rs_reread(const char *path, const void *data, size_t size, const tessel_allocator *a,
              tessel_yaml_doc **out, tessel_diag *diag)
{
    *out = NULL;
    unsigned char *file = NULL;
    if (!data) {
        int rc = tessel_yaml_read_file(path, a, &file, &size, diag);
        if (rc)
            return rc;
        data = file;
    }
    rs_spec *r = NULL;
    int rc = rs_load(data, size, a, &r, diag);
    tessel_dealloc(a, file);
    if (rc) {
        tessel_diag_prefix(diag, "%s: ", path);
        return rc;
    }
    char *text = NULL;
    size_t len = 0;
    rc = rs_spec_text(r, a, &text, &len);
    rs_free(r, a);
    if (rc)
        return tessel_diag_set(diag, rc, path, 0, 0, "", "out of memory");
    rc = tessel_yaml_parse(path, text, len, a, out, diag);
    tessel_dealloc(a, text);
    return rc;
}
