/* The mapping section of a spec: loop orders, tiles, the strategy and its
 * options, and the template (docs/spec.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "validate_internal.h"

static const char *const mapping_keys[] = { "order", "tile", "spatial", "distribution",
                                            "bypass", "keep" };

/* ------------------------------------------------------------------ */
/* Mapping */

static int index_by_name(const tessel_spec *s, const char *name, size_t len, int fold)
{
    for (unsigned i = 0; i < s->workload.nindices; i++) {
        const char *x = s->workload.index_name[i];
        if (strlen(x) == len && (fold ? strncasecmp(x, name, len) : strncmp(x, name, len)) == 0)
            return (int)i;
    }
    return -1;
}

/* Exact match first, then case-insensitive ("IKJ" for i, k, j). */
int spec_find_index(const tessel_spec *s, const char *name, size_t len)
{
    int i = index_by_name(s, name, len, 0);
    return i >= 0 ? i : index_by_name(s, name, len, 1);
}

static void unknown_index(vctx *v, const tessel_yaml_node *n, uint32_t column, const char *field,
                          const char *what, const char *name, size_t len)
{
    char list[256];
    spec_index_list(v->s, list, sizeof(list));
    spec_error_at(v->c, TESSEL_EINVAL, n->file, n->line, column, field,
                  "'%.*s' in '%s' is not an index of the einsum (indices: %s)",
                  (int)(len > 60 ? 60 : len), name, what, list);
}

/* "i:128,k:128,j:128": a positive count per named index into out[index]
 * (`what` names the key in messages: tile, spatial). */
void spec_read_index_counts(vctx *v, const tessel_yaml_node *n, const char *field,
                            const char *what, uint64_t *out)
{
    const char *text = n->value, *p = text;
    uint32_t base = n->column + (n->quoted ? 1u : 0u);
    while (*p) {
        while (*p == ' ')
            p++;
        const char *name = p;
        while (*p && *p != ':' && *p != ',' && *p != ' ')
            p++;
        size_t len = (size_t)(p - name);
        while (*p == ' ')
            p++;
        if (len == 0 || *p != ':') {
            spec_error_at(v->c, TESSEL_EINVAL, n->file, n->line, base + (uint32_t)(name - text),
                          field, "'%s' must look like i:128,k:64 (index:size, comma separated)",
                          what);
            return;
        }
        p++;
        while (*p == ' ')
            p++;
        const char *num = p;
        uint64_t x = 0;
        int overflow = 0;
        while (*p >= '0' && *p <= '9') {
            unsigned d = (unsigned)(*p - '0');
            if (x > (UINT64_MAX - d) / 10)
                overflow = 1;
            else
                x = x * 10 + d;
            p++;
        }
        const char *num_end = p;
        while (*p == ' ')
            p++;
        if (num_end == num || overflow || x == 0 || (*p && *p != ',')) {
            spec_error_at(v->c, TESSEL_EINVAL, n->file, n->line, base + (uint32_t)(num - text),
                          field, "%s size of '%.*s' must be a positive integer", what,
                          (int)(len > 60 ? 60 : len), name);
            return;
        }
        int idx = spec_find_index(v->s, name, len);
        if (idx < 0)
            unknown_index(v, n, base + (uint32_t)(name - text), field, what, name, len);
        else
            out[idx] = x;
        if (*p == ',') {
            p++;
            if (!*p) {
                spec_error_at(v->c, TESSEL_EINVAL, n->file, n->line,
                              base + (uint32_t)(p - text), field,
                              "'%s' must look like i:128,k:64 (index:size, comma separated)",
                              what);
                return;
            }
        }
    }
}

static void read_tile(vctx *v, const tessel_yaml_node *n, const char *field,
                      tessel_spec_level *L)
{
    if (spec_is_string(n)) {
        spec_read_index_counts(v, n, field, "tile", L->tile);
        return;
    }
    if (n->kind != TESSEL_YAML_MAPPING) {
        spec_err(v, n, field, "'tile' must be \"i:128,k:64\" or a mapping {i: 128, k: 64}");
        return;
    }
    for (size_t i = 0; i < n->count; i++) {
        const tessel_yaml_node *k = n->keys[i];
        char f[128];
        spec_join(f, sizeof(f), field, k->value);
        int idx = spec_find_index(v->s, k->value, k->length);
        if (idx < 0) {
            unknown_index(v, k, k->column, f, "tile", k->value, k->length);
            continue;
        }
        uint64_t x = 0;
        if (tessel_yaml_u64(n->items[i], &x) || x == 0)
            spec_err(v, n->items[i], f, "tile size of '%s' must be a positive integer", k->value);
        else
            L->tile[idx] = x;
    }
}

/* order: "IKJ" (single-letter indices, any case), "i,k,j", or a list. */
static void read_order(vctx *v, const tessel_yaml_node *n, const char *field,
                       tessel_spec_level *L)
{
    tessel_spec *s = v->s;
    unsigned nidx = s->workload.nindices;
    int got[TESSEL_SPEC_MAX_INDICES];
    unsigned ngot = 0, seen = 0;
    int bad = 0;
    char list[256];
    spec_index_list(s, list, sizeof(list));
    if (spec_is_string(n)) {
        const char *p = n->value;
        int separated = strchr(p, ',') || strchr(p, ' ');
        while (*p && !bad) {
            while (*p == ' ' || *p == ',')
                p++;
            if (!*p)
                break;
            const char *name = p;
            if (separated)
                while (*p && *p != ' ' && *p != ',')
                    p++;
            else
                p++;
            int idx = spec_find_index(s, name, (size_t)(p - name));
            if (idx < 0 || ngot == TESSEL_SPEC_MAX_INDICES)
                bad = 1;
            else
                got[ngot++] = idx;
        }
    } else if (n->kind == TESSEL_YAML_SEQUENCE) {
        for (size_t i = 0; i < n->count && !bad; i++) {
            const tessel_yaml_node *it = n->items[i];
            int idx = spec_is_string(it) ? spec_find_index(s, it->value, it->length) : -1;
            if (idx < 0 || ngot == TESSEL_SPEC_MAX_INDICES)
                bad = 1;
            else
                got[ngot++] = idx;
        }
    } else {
        bad = 1;
    }
    for (unsigned i = 0; i < ngot && !bad; i++) {
        if (seen & (1u << got[i]))
            bad = 1;
        seen |= 1u << got[i];
    }
    if (bad || ngot != nidx) {
        spec_err(v, n, field, "'order' must be a permutation of the einsum's indices (%s)", list);
        return;
    }
    for (unsigned i = 0; i < nidx; i++)
        L->order[i] = (unsigned)got[i];
}

/* ------------------------------------------------------------------ */
/* mapping.strategy and mapping.strategy_options (spec.h). */

static const char *const strategy_names[] = { "fixed", "conservative", "prescient",
                                              "swiftiles", "drt", "d2t2" };
static const char *const strategy_option_keys[] = { "overbooking", "tail_samples", "rounds", "seed",
                                                    "worst", "micro_tile", "growth",
                                                    "levels", "order", "dataflow" };
static const char *const strategy_order_names[] = { "outer-first", "inner-first" };
static const char *const strategy_worst_names[] = { "stats", "dense" };
static const char *const drt_growth_names[] = { "contracted-first", "alternating" };
static const char *const drt_dataflow_names[] = { "merged", "outer-product" };

/* One of `names` (exactly), with a did-you-mean; -1 otherwise. */
int spec_read_choice(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                     const char *const *names, size_t count)
{
    if (spec_is_string(n))
        for (size_t i = 0; i < count; i++)
            if (strcmp(n->value, names[i]) == 0)
                return (int)i;
    char list[160] = "";
    for (size_t i = 0; i < count; i++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                 names[i]);
    const char *near = spec_is_string(n) ? tessel_nearest_word(n->value, names, count) : NULL;
    if (near)
        spec_err(v, n, field, "unknown %s '%.60s' (did you mean '%s'?)", name, n->value, near);
    else
        spec_err(v, n, field, "'%s' must be one of: %s", name, list);
    return -1;
}

/* "10%" or 0.1: a fraction strictly between 0 and 1. */
static void read_open_fraction(vctx *v, const tessel_yaml_node *n, const char *field,
                               const char *name, double *out)
{
    double x = -1;
    if (n && n->kind == TESSEL_YAML_SCALAR && n->length > 1 && n->value[n->length - 1] == '%') {
        char *end = NULL;
        double pct = strtod(n->value, &end);
        if (end == n->value + n->length - 1 && isfinite(pct))
            x = pct / 100.0;
    } else if (tessel_yaml_double(n, &x)) {
        x = -1;
    }
    if (!(x > 0 && x < 1)) {
        spec_err(v, n, field, "'%s' must be a fraction between 0 and 1 (10%% or 0.1)", name);
        return;
    }
    *out = x;
}

/* "32x32" or 32 (square). */
static void read_micro_tile(vctx *v, const tessel_yaml_node *n, const char *field,
                            uint64_t *micro)
{
    unsigned long long r = 0, c = 0;
    char tail = 0;
    int got = spec_is_string(n) ? sscanf(n->value, "%llux%llu%c", &r, &c, &tail) : 0;
    if (got == 1 && strspn(n->value, "0123456789") == n->length)
        c = r;
    else if (got != 2)
        r = 0;
    if (!r || !c || r > UINT32_MAX || c > UINT32_MAX) {
        spec_err(v, n, field, "'micro_tile' must be ROWSxCOLS (32x32) or one positive edge");
        return;
    }
    micro[0] = r;
    micro[1] = c;
}

static void read_strategy_levels(vctx *v, const tessel_yaml_node *n, const char *field)
{
    tessel_spec *s = v->s;
    if (!n || n->kind != TESSEL_YAML_SEQUENCE || n->count == 0) {
        spec_err(v, n, field, "'levels' must be a list of level names, e.g. [LLB]");
        return;
    }
    for (size_t i = 0; i < n->count; i++) {
        const tessel_yaml_node *it = n->items[i];
        int l = spec_is_string(it) ? tessel_spec_level_index(s, it->value) : -1;
        if (l <= 0) {
            spec_err(v, it, field, "'%.60s' is not a level below the backing store", spec_shown(it));
            continue;
        }
        s->strategy.levels |= 1u << l;
    }
}

static void read_strategy(vctx *v, const tessel_yaml_node *name, const tessel_yaml_node *opts)
{
    tessel_spec_strategy *st = &v->s->strategy;
    if (name) {
        st->pos = (tessel_spec_pos){ name->file, name->line, name->column };
        int k = spec_read_choice(v, name, "mapping.strategy", "strategy", strategy_names,
                            N_OF(strategy_names));
        if (k >= 0)
            snprintf(st->name, sizeof(st->name), "%s", strategy_names[k]);
    }
    opts = spec_mapping_of(v, opts, "mapping.strategy_options", "strategy_options");
    if (!opts)
        return;
    spec_check_keys(v, opts, "mapping.strategy_options", strategy_option_keys,
               N_OF(strategy_option_keys));
    const tessel_yaml_node *n;
    if ((n = tessel_yaml_get(opts, "overbooking")))
        read_open_fraction(v, n, "mapping.strategy_options.overbooking", "overbooking",
                           &st->overbooking);
    if ((n = tessel_yaml_get(opts, "tail_samples")))
        spec_read_count(v, n, "mapping.strategy_options.tail_samples", "tail_samples", 1000000,
                   &st->tail_samples);
    if ((n = tessel_yaml_get(opts, "rounds")))
        spec_read_count(v, n, "mapping.strategy_options.rounds", "rounds", 100, &st->rounds);
    if ((n = tessel_yaml_get(opts, "seed")))
        spec_read_u64(v, n, "mapping.strategy_options.seed", "seed", &st->seed);
    if ((n = tessel_yaml_get(opts, "worst"))) {
        int k = spec_read_choice(v, n, "mapping.strategy_options.worst", "worst",
                            strategy_worst_names, N_OF(strategy_worst_names));
        if (k >= 0)
            st->dense_worst = k;
    }
    if ((n = tessel_yaml_get(opts, "micro_tile")))
        read_micro_tile(v, n, "mapping.strategy_options.micro_tile", st->micro);
    if ((n = tessel_yaml_get(opts, "growth"))) {
        int k = spec_read_choice(v, n, "mapping.strategy_options.growth", "growth", drt_growth_names,
                            N_OF(drt_growth_names));
        if (k >= 0)
            st->growth = k;
    }
    if ((n = tessel_yaml_get(opts, "dataflow"))) {
        int k = spec_read_choice(v, n, "mapping.strategy_options.dataflow", "dataflow",
                                 drt_dataflow_names, N_OF(drt_dataflow_names));
        if (k >= 0)
            st->dataflow = k;
    }
    if ((n = tessel_yaml_get(opts, "levels")))
        read_strategy_levels(v, n, "mapping.strategy_options.levels");
    if ((n = tessel_yaml_get(opts, "order"))) {
        int k = spec_read_choice(v, n, "mapping.strategy_options.order", "order",
                            strategy_order_names, N_OF(strategy_order_names));
        if (k >= 0)
            st->order = k + 1;
    }
}

const char *spec_order_name(int order)
{
    return order >= 1 && order <= (int)N_OF(strategy_order_names) ? strategy_order_names[order - 1]
                                                                   : "default";
}

const char *spec_worst_name(int dense)
{
    return strategy_worst_names[dense ? 1 : 0];
}

const char *spec_growth_name(int growth)
{
    return drt_growth_names[growth ? 1 : 0];
}

const char *spec_dataflow_name(int dataflow)
{
    return drt_dataflow_names[dataflow ? 1 : 0];
}

static const char *const template_names[] = { "none", "extensor", "gamma", "outerspace",
                                              "matraptor", "sparsepipe" };

void spec_read_template(vctx *v, const tessel_yaml_node *root)
{
    tessel_spec_template *t = &v->s->template_;
    snprintf(t->name, sizeof(t->name), "none");
    const tessel_yaml_node *n = tessel_yaml_get(root, "template");
    if (n && !tessel_yaml_is_null(n)) {
        t->pos = (tessel_spec_pos){ n->file, n->line, n->column };
        int k = spec_read_choice(v, n, "template", "template", template_names, N_OF(template_names));
        if (k >= 0)
            snprintf(t->name, sizeof(t->name), "%s", template_names[k]);
    }
    t->options = spec_mapping_of(v, tessel_yaml_get(root, "template_options"), "template_options",
                            "template_options");
}

void spec_read_mapping(vctx *v, const tessel_yaml_node *root)
{
    tessel_spec *s = v->s;
    const tessel_yaml_node *m = spec_mapping_of(v, tessel_yaml_get(root, "mapping"), "mapping",
                                           "mapping");
    if (!m)
        return;
    read_strategy(v, tessel_yaml_get(m, "strategy"), tessel_yaml_get(m, "strategy_options"));
    const char *names[TESSEL_SPEC_MAX_LEVELS + 2];
    for (unsigned l = 0; l < s->nlevels; l++)
        names[l] = s->level[l].name;
    names[s->nlevels] = "strategy";
    names[s->nlevels + 1] = "strategy_options";
    for (size_t i = 0; i < m->count; i++) {
        const tessel_yaml_node *k = m->keys[i];
        if (tessel_yaml_scalar_is(k, "strategy") || tessel_yaml_scalar_is(k, "strategy_options"))
            continue;
        char field[128], f[128];
        spec_join(field, sizeof(field), "mapping", k->value);
        int l = k->value[0] ? tessel_spec_level_index(s, k->value) : -1;
        if (l < 0) {
            const char *near = tessel_nearest_word(k->value, names, s->nlevels + 2);
            if (near)
                spec_err(v, k, field, "mapping for unknown level '%.60s' (did you mean '%s'?)",
                    k->value, near);
            else
                spec_err(v, k, field, "mapping for unknown level '%.60s'", k->value);
            continue;
        }
        if (l == 0) {
            spec_err(v, k, field,
                "level '%s' is the backing store (level 0): it takes no mapping", k->value);
            continue;
        }
        const tessel_yaml_node *e = spec_mapping_of(v, m->items[i], field, k->value);
        tessel_spec_level *L = &s->level[l];
        L->has_mapping = 1;
        if (!e)
            continue;
        spec_check_keys(v, e, field, mapping_keys, N_OF(mapping_keys));
        if (!v->einsum_ok)
            continue;
        const tessel_yaml_node *n;
        if ((n = tessel_yaml_get(e, "tile"))) {
            spec_join(f, sizeof(f), field, "tile");
            read_tile(v, n, f, L);
        }
        if ((n = tessel_yaml_get(e, "order"))) {
            spec_join(f, sizeof(f), field, "order");
            read_order(v, n, f, L);
        }
        spec_read_spatial(v, e, field, (unsigned)l);
        spec_read_bypass(v, e, field, (unsigned)l);
    }
}
