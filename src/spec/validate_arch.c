/* The architecture section of a spec: levels, their tensors' partitions and
 * formats, components, compute, energy tables and clock (docs/spec.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "validate_internal.h"

static const char *const arch_keys[] = { "technology", "energy_tables", "levels", "compute",
                                         "timing" };
static const char *const level_keys[] = { "name",       "capacity",    "bandwidth",
                                          "instances",  "word_bits",   "value_bits",
                                          "coord_bits", "offset_bits", "run_bits",
                                          "format",     "class",       "attributes",
                                          "tensors",    "read_bandwidth", "write_bandwidth",
                                          "network",    "action_optimization" };
static const char *const tensor_level_keys[] = { "partition", "format", "skip_on", "gate_on",
                                                 "rank_order" };
static const char *const compute_keys[] = { "pes",   "macs_per_pe", "clock",
                                            "class", "attributes",  "intersect",
                                            "compute_optimization" };
static const char *const intersect_keys[] = { "class", "attributes", "step_cycles" };

/* ------------------------------------------------------------------ */
/* Architecture */

static void read_component(vctx *v, const tessel_yaml_node *m, const char *field,
                           tessel_spec_component *comp)
{
    char f[128];
    const tessel_yaml_node *cls = tessel_yaml_get(m, "class");
    spec_join(f, sizeof(f), field, "class");
    comp->pos = spec_pos_of(cls ? cls : m);
    if (!cls)
        spec_err(v, m, f, "missing energy class ('class')");
    else
        spec_read_string(v, cls, f, "class", comp->cls, sizeof(comp->cls));
    spec_join(f, sizeof(f), field, "attributes");
    comp->attributes = spec_mapping_of(v, tessel_yaml_get(m, "attributes"), f, "attributes");
}

/* skip_on / gate_on (and mapping.LEVEL.bypass / keep, self = -1u): a
 * tensor name or a list of them -> mask. */
int spec_read_tensor_mask(vctx *v, const tessel_yaml_node *n, const char *field,
                          const char *name, unsigned self, uint32_t *mask)
{
    const tessel_spec *s = v->s;
    uint32_t m = 0;
    size_t count = n->kind == TESSEL_YAML_SEQUENCE ? n->count : 1;
    if (n->kind == TESSEL_YAML_MAPPING)
        return spec_err(v, n, field, "'%s' must be a list of tensor names", name);
    if (n->kind == TESSEL_YAML_SCALAR && tessel_yaml_is_null(n))
        count = 0;
    int rc = TESSEL_OK;
    for (size_t i = 0; i < count; i++) {
        const tessel_yaml_node *it = n->kind == TESSEL_YAML_SEQUENCE ? n->items[i] : n;
        int t = spec_is_string(it) ? tessel_spec_tensor_index(s, it->value) : -1;
        if (t < 0) {
            char list[256];
            spec_tensor_list(s, list, sizeof(list));
            rc = spec_err(v, it, field, "'%.60s' in '%s' is not a tensor of the einsum (%s)",
                     spec_shown(it), name, list);
            continue;
        }
        if ((unsigned)t == self) {
            rc = spec_err(v, it, field, "a tensor cannot %s on itself",
                     strcmp(name, "skip_on") == 0   ? "skip"
                     : strcmp(name, "gate_on") == 0 ? "gate"
                                                    : "condition");
            continue;
        }
        m |= 1u << t;
    }
    if (!rc)
        *mask = m;
    return rc;
}

/* The pipeline timing's keys of a level (docs/models/timing.md): separate
 * read and write ports, and the network that delivers to its child. */
static void read_ports(vctx *v, const tessel_yaml_node *lv, const char *field,
                       tessel_spec_level *L)
{
    char f[256];
    const tessel_yaml_node *n;
    spec_join(f, sizeof(f), field, "read_bandwidth");
    if ((n = tessel_yaml_get(lv, "read_bandwidth")))
        spec_read_positive(v, n, f, "read_bandwidth", "GB/s", &L->read_bandwidth);
    spec_join(f, sizeof(f), field, "write_bandwidth");
    if ((n = tessel_yaml_get(lv, "write_bandwidth")))
        spec_read_positive(v, n, f, "write_bandwidth", "GB/s", &L->write_bandwidth);
    spec_join(f, sizeof(f), field, "network");
    const tessel_yaml_node *net = tessel_yaml_get(lv, "network");
    if (!net || !(net = spec_mapping_of(v, net, f, "network")))
        return;
    static const char *const net_keys[] = { "width", "deliver", "class", "hop_mm" };
    static const char *const deliver_names[] = { "effectual", "dense" };
    spec_check_keys(v, net, f, net_keys, N_OF(net_keys));
    char g[300];
    spec_join(g, sizeof(g), f, "width");
    if ((n = tessel_yaml_get(net, "width")))
        spec_read_count(v, n, g, "width", UINT32_MAX, &L->network_width);
    else
        spec_err(v, net, g, "'network' needs 'width' (values delivered per cycle)");
    spec_join(g, sizeof(g), f, "deliver");
    if ((n = tessel_yaml_get(net, "deliver"))) {
        int k = spec_read_choice(v, n, g, "deliver", deliver_names, N_OF(deliver_names));
        L->network_dense = k == 1;
    }
    /* its energy (docs/models/energy.md "Network energy"): a wire class and the hop */
    spec_join(g, sizeof(g), f, "class");
    if ((n = tessel_yaml_get(net, "class")))
        spec_read_string(v, n, g, "class", L->network_class, sizeof(L->network_class));
    spec_join(g, sizeof(g), f, "hop_mm");
    if ((n = tessel_yaml_get(net, "hop_mm")))
        spec_read_positive(v, n, g, "hop_mm", "mm", &L->network_hop_mm);
}

/* partition: "25%", 0.25 (a plain number <= 1) or a size. */
static void read_partition(vctx *v, const tessel_yaml_node *n, const char *field,
                           tessel_spec_tensor_level *tl)
{
    static const char *const shape =
        "'partition' must be a percentage (25%), a fraction (0.25) or a size (1MiB)";
    if (!n || n->kind != TESSEL_YAML_SCALAR || strlen(n->value) != n->length) {
        spec_err(v, n, field, "%s", shape);
        return;
    }
    const char *text = n->value;
    size_t len = n->length;
    if (len > 1 && text[len - 1] == '%') {
        char *end = NULL;
        double pct = strtod(text, &end);
        if (end != text + len - 1 || !(text[0] >= '0' && text[0] <= '9') || !isfinite(pct)) {
            spec_err(v, n, field, "%s", shape);
        } else if (!(pct > 0) || pct > 100) {
            spec_err(v, n, field, "'partition' must be more than 0%% and at most 100%%");
        } else {
            tl->partition_fraction = pct / 100.0;
        }
        return;
    }
    double x = 0;
    if (!tessel_yaml_double(n, &x) && x <= 1) {
        if (!(x > 0))
            spec_err(v, n, field, "'partition' must be greater than zero");
        else
            tl->partition_fraction = x;
        return;
    }
    uint64_t b = 0;
    if (text[0] == '-') {
        spec_err(v, n, field, "'partition' must be greater than zero");
    } else if (tessel_parse_size(text, &b)) {
        spec_err(v, n, field, "%s", shape);
    } else {
        tl->partition_bytes = b; /* > 1 here: 0 and 1 read as fractions */
    }
}

/* `rank_order: [n, k]`: every index of tensor t once, outermost rank first
 * (Sparseloop's rank order, docs/sparseloop.md). */
static void read_rank_order(vctx *v, const tessel_yaml_node *n, const char *field, unsigned t,
                            tessel_spec_tensor_level *tl)
{
    const tessel_spec_tensor *st = &v->s->workload.tensor[t];
    if (n->kind != TESSEL_YAML_SEQUENCE || n->count != st->rank) {
        spec_err(v, n, field, "'rank_order' lists each of %s's %u indices once, outermost rank "
                 "first (e.g. [%s%s%s])", st->name, st->rank,
                 v->s->workload.index_name[st->index[st->rank > 1 ? st->rank - 1 : 0]],
                 st->rank > 1 ? ", " : "", st->rank > 1 ? v->s->workload.index_name[st->index[0]] : "");
        return;
    }
    unsigned seen = 0;
    for (size_t i = 0; i < n->count; i++) {
        const tessel_yaml_node *r = n->items[i];
        int m = -1;
        for (unsigned k = 0; spec_is_string(r) && k < st->rank; k++)
            if (strcmp(r->value, v->s->workload.index_name[st->index[k]]) == 0)
                m = (int)k;
        if (m < 0) {
            spec_err(v, r, field, "'%.60s' is not an index of %s", spec_shown(r), st->name);
            return;
        }
        if (seen >> m & 1u) {
            spec_err(v, r, field, "'%.60s' is listed twice in %s's rank order", spec_shown(r),
                     st->name);
            return;
        }
        seen |= 1u << m;
        tl->rank_order[i] = (unsigned char)st->index[m];
    }
    tl->nrank_order = st->rank;
    tl->rank_order_pos = spec_pos_of(n);
}

static void read_level_tensors(vctx *v, unsigned l, const tessel_yaml_node *lv,
                               const char *field)
{
    tessel_spec *s = v->s;
    char f[128];
    spec_join(f, sizeof(f), field, "tensors");
    const tessel_yaml_node *ts = spec_mapping_of(v, tessel_yaml_get(lv, "tensors"), f, "tensors");
    v->tensors_node[l] = ts;
    if (!ts || !v->einsum_ok)
        return;
    for (size_t i = 0; i < ts->count; i++) {
        const tessel_yaml_node *k = ts->keys[i];
        char tf[128];
        spec_join(tf, sizeof(tf), f, k->value);
        int t = tessel_spec_tensor_index(s, k->value);
        if (t < 0) {
            const char *cand[TESSEL_SPEC_MAX_TENSORS];
            const char *near = tessel_nearest_word(k->value, cand, spec_tensor_names(s, cand));
            if (near)
                spec_err(v, k, tf, "'%.60s' is not a tensor of the einsum (did you mean '%s'?)",
                    k->value, near);
            else
                spec_err(v, k, tf, "'%.60s' is not a tensor of the einsum", k->value);
            continue;
        }
        tessel_spec_tensor_level *tl = &s->level[l].tensor[t];
        tl->pos = spec_pos_of(ts->items[i]);
        const tessel_yaml_node *m = spec_mapping_of(v, ts->items[i], tf, k->value);
        if (!m)
            continue;
        spec_check_keys(v, m, tf, tensor_level_keys, N_OF(tensor_level_keys));
        char kf[128];
        const tessel_yaml_node *n;
        if ((n = tessel_yaml_get(m, "partition"))) {
            spec_join(kf, sizeof(kf), tf, "partition");
            read_partition(v, n, kf, tl);
        }
        if ((n = tessel_yaml_get(m, "format"))) {
            spec_join(kf, sizeof(kf), tf, "format");
            spec_format_code(v, n, kf, &tl->format, &tl->nranks, tl->ranks);
        }
        if ((n = tessel_yaml_get(m, "rank_order"))) {
            spec_join(kf, sizeof(kf), tf, "rank_order");
            read_rank_order(v, n, kf, (unsigned)t, tl);
        }
        if ((n = tessel_yaml_get(m, "skip_on"))) {
            spec_join(kf, sizeof(kf), tf, "skip_on");
            spec_read_tensor_mask(v, n, kf, "skip_on", (unsigned)t, &tl->sparse.skip_on);
        }
        if ((n = tessel_yaml_get(m, "gate_on"))) {
            spec_join(kf, sizeof(kf), tf, "gate_on");
            spec_read_tensor_mask(v, n, kf, "gate_on", (unsigned)t, &tl->sparse.gate_on);
        }
    }
}

/* One `action_optimization` entry, Sparseloop's spelling
 * {type: skipping|gating, target: A, condition_on: [B]}: the compute's
 * scalar reads of the target are skipped (gated) where a condition tensor
 * is zero (docs/spec.md, docs/sparseloop.md). An input conditions on other
 * inputs; the output on every input (its reads and updates are those of
 * the multiplies). */
static void read_action(vctx *v, unsigned l, const tessel_yaml_node *a, const char *field)
{
    static const char *const keys[] = { "type", "target", "condition_on" };
    static const char *const types[] = { "skipping", "gating" };
    const tessel_spec *s = v->s;
    if (a->kind != TESSEL_YAML_MAPPING) {
        spec_err(v, a, field, "an 'action_optimization' entry is a mapping {type, target, "
                 "condition_on}");
        return;
    }
    spec_check_keys(v, a, field, keys, N_OF(keys));
    char f[300];
    const tessel_yaml_node *ty = tessel_yaml_get(a, "type"), *tg = tessel_yaml_get(a, "target");
    const tessel_yaml_node *co = tessel_yaml_get(a, "condition_on");
    if (!ty || !tg || !co) {
        spec_err(v, a, field, "an 'action_optimization' entry needs 'type' (skipping or "
                 "gating), 'target' and 'condition_on'");
        return;
    }
    spec_join(f, sizeof(f), field, "type");
    int k = spec_read_choice(v, ty, f, "type", types, N_OF(types));
    spec_join(f, sizeof(f), field, "target");
    int t = spec_is_string(tg) ? tessel_spec_tensor_index(s, tg->value) : -1;
    if (t < 0) {
        char list[256];
        spec_tensor_list(s, list, sizeof(list));
        spec_err(v, tg, f, "'%.60s' is not a tensor of the einsum (%s)", spec_shown(tg), list);
        return;
    }
    uint32_t mask = 0, inputs = 0;
    for (unsigned u = 1; u < s->workload.ntensors; u++)
        inputs |= 1u << u;
    spec_join(f, sizeof(f), field, "condition_on");
    if (spec_read_tensor_mask(v, co, f, "condition_on", (unsigned)t, &mask) || k < 0)
        return;
    if (!mask || (mask & 1u) || (t == 0 && mask != inputs)) {
        spec_err(v, co, f, t == 0 ? "the output conditions on every input (its reads follow "
                                    "the multiplies)"
                                  : "an input conditions on one or more other inputs");
        return;
    }
    tessel_spec_sparse *sp = &v->s->level[l].tensor[t].sparse;
    if (k == 0)
        sp->scalar_skip_on |= mask;
    else
        sp->scalar_gate_on |= mask;
}

/* `action_optimization: [...]` of level l: scalar skipping and gating of
 * the reads the level serves its child (the compute's at the innermost;
 * the caller, which knows the number of levels, refuses the output's
 * above it). */
static void read_actions(vctx *v, unsigned l, const tessel_yaml_node *lv, const char *field)
{
    const tessel_yaml_node *n = tessel_yaml_get(lv, "action_optimization");
    if (!n || !v->einsum_ok)
        return;
    char f[256];
    spec_join(f, sizeof(f), field, "action_optimization");
    if (n->kind != TESSEL_YAML_SEQUENCE) {
        spec_err(v, n, f, "'action_optimization' must be a list of {type, target, "
                 "condition_on}");
        return;
    }
    for (size_t i = 0; i < n->count; i++) {
        char g[300];
        snprintf(g, sizeof(g), "%s[%zu]", f, i);
        read_action(v, l, n->items[i], g);
    }
}

static void level_defaults(tessel_spec *s, tessel_spec_level *L)
{
    L->instances = 1;
    L->word_bits = 64;
    L->value_bits = 64;
    L->coord_bits = 32;
    L->offset_bits = 32;
    L->run_bits = 32;
    L->format = 1;
    uint32_t inputs = 0;
    for (unsigned t = 1; t < s->workload.ntensors; t++)
        inputs |= 1u << t;
    for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
        L->tensor[t].format = -1;
        /* docs/semantics.md traffic rules: nothing moves for an ineffectual
         * iteration, i.e. every input skips on the others, the output on
         * all inputs. */
        L->tensor[t].sparse.skip_on = t == 0 ? inputs : inputs & ~(1u << t);
        L->tensor[t].sparse.gate_on = 0;
    }
    for (unsigned i = 0; i < TESSEL_SPEC_MAX_INDICES; i++)
        L->order[i] = i;
}

/* Level l of architecture.levels: its name, sizes, widths, formats, ports and tensors. */
static void read_level(vctx *v, unsigned l, const tessel_yaml_node *lv)
{
    tessel_spec *s = v->s;
    tessel_spec_level *L = &s->level[l];
    char field[128], f[128];
    const tessel_yaml_node *name = tessel_yaml_get(lv, "name");
    if (spec_is_string(name) && name->length < TESSEL_SPEC_NAME_MAX) {
        spec_join(field, sizeof(field), "architecture.levels", name->value);
    } else {
        char num[32];
        snprintf(num, sizeof(num), "[%u]", l);
        spec_join(field, sizeof(field), "", "architecture.levels");
        spec_append(field, sizeof(field), num);
    }
    L->pos = spec_pos_of(lv);
    v->level_node[l] = lv;
    spec_check_keys(v, lv, field, level_keys, N_OF(level_keys));
    spec_join(f, sizeof(f), field, "name");
    if (!name) {
        spec_err(v, lv, f, "a level needs a 'name'");
    } else if (!spec_read_string(v, name, f, "name", L->name, sizeof(L->name))) {
        if (strcmp(L->name, "strategy") == 0 || strcmp(L->name, "strategy_options") == 0)
            spec_err(v, name, f, "'%s' is reserved (mapping.%s): name the level otherwise", L->name,
                L->name);
        for (unsigned k = 0; k < l; k++) {
            if (strcmp(s->level[k].name, L->name) == 0) {
                spec_err(v, name, f, "duplicate level name '%s' (first at line %llu)", L->name,
                    (unsigned long long)v->level_node[k]->line);
                break;
            }
        }
    }
    const tessel_yaml_node *n;
    spec_join(f, sizeof(f), field, "capacity");
    n = tessel_yaml_get(lv, "capacity");
    if (n && !tessel_yaml_is_null(n))
        spec_read_size(v, n, f, "capacity", &L->capacity);
    else if (l > 0)
        spec_err(v, n ? n : lv, f,
            "missing 'capacity' (required on every level below the backing store)");
    spec_join(f, sizeof(f), field, "bandwidth");
    if ((n = tessel_yaml_get(lv, "bandwidth")))
        spec_read_positive(v, n, f, "bandwidth", "GB/s", &L->bandwidth);
    read_ports(v, lv, field, L);
    spec_join(f, sizeof(f), field, "instances");
    if ((n = tessel_yaml_get(lv, "instances")))
        spec_read_count(v, n, f, "instances", UINT32_MAX, &L->instances);
    static const char *const bit_keys[] = { "word_bits", "value_bits", "coord_bits",
                                            "offset_bits", "run_bits" };
    unsigned *bits[] = { &L->word_bits, &L->value_bits, &L->coord_bits, &L->offset_bits,
                         &L->run_bits };
    for (size_t i = 0; i < N_OF(bit_keys); i++) {
        spec_join(f, sizeof(f), field, bit_keys[i]);
        if ((n = tessel_yaml_get(lv, bit_keys[i])))
            spec_read_count(v, n, f, bit_keys[i], BITS_MAX, bits[i]);
    }
    spec_join(f, sizeof(f), field, "format");
    if ((n = tessel_yaml_get(lv, "format")))
        spec_format_code(v, n, f, &L->format, &L->nranks, L->ranks);
    read_component(v, lv, field, &L->energy);
    read_level_tensors(v, l, lv, field);
    read_actions(v, l, lv, field);
}

static void read_tables(vctx *v, const tessel_yaml_node *arch)
{
    tessel_spec *s = v->s;
    const tessel_yaml_node *t = tessel_yaml_get(arch, "energy_tables");
    if (!t || tessel_yaml_is_null(t))
        return;
    const char *f = "architecture.energy_tables";
    size_t count = t->kind == TESSEL_YAML_SEQUENCE ? t->count : 1;
    if (t->kind == TESSEL_YAML_MAPPING) {
        spec_err(v, t, f, "'energy_tables' must be a file name or a list of file names");
        return;
    }
    if (count > N_OF(s->table)) {
        spec_error(v->c, TESSEL_ERANGE, t, f, "more than %zu energy tables", N_OF(s->table));
        count = N_OF(s->table);
    }
    for (size_t i = 0; i < count; i++) {
        const tessel_yaml_node *it = t->kind == TESSEL_YAML_SEQUENCE ? t->items[i] : t;
        if (!spec_is_string(it) || it->length == 0) {
            spec_err(v, it, f, "'energy_tables' must be a file name or a list of file names");
            continue;
        }
        char *path = spec_resolve(v->c, it->file, it->value);
        if (!path) {
            spec_oom(v->c);
            return;
        }
        s->table[s->ntables++] = path;
    }
}

/* clock: a number in GHz, or "1GHz" / "800 MHz". */
static void read_clock(vctx *v, const tessel_yaml_node *n, const char *field, double *ghz)
{
    double x = 0;
    if (!tessel_yaml_double(n, &x)) {
        if (x > 0)
            *ghz = x;
        else
            spec_err(v, n, field, "'clock' must be greater than zero");
        return;
    }
    if (spec_is_string(n) && n->value[0] >= '0' && n->value[0] <= '9') {
        char *end = NULL;
        x = strtod(n->value, &end);
        while (*end == ' ')
            end++;
        double scale = strcasecmp(end, "GHz") == 0 ? 1.0 : strcasecmp(end, "MHz") == 0 ? 1e-3 : 0;
        if (scale > 0 && isfinite(x) && x > 0) {
            *ghz = x * scale;
            return;
        }
    }
    spec_err(v, n, field, "'clock' must be a frequency such as 1GHz or 800MHz (a number is GHz)");
}

/* `compute_optimization: [{type: gating}, {type: skipping}]` (Sparseloop's
 * compute-optimization of the compute target, docs/spec.md): given, even
 * empty, the MAC follows Sparseloop's compute rules (docs/semantics.md
 * "Compute skipping and gating"); absent, it runs the effectual multiplies
 * only. */
static void read_compute_optimization(vctx *v, const tessel_yaml_node *n, tessel_spec_compute *cp)
{
    static const char *const types[] = { "gating", "skipping" };
    static const char *const keys[] = { "type" };
    const char *field = "architecture.compute.compute_optimization";
    if (n->kind != TESSEL_YAML_SEQUENCE) {
        spec_err(v, n, field, "'compute_optimization' must be a list of {type: gating} or "
                 "{type: skipping} ([] for neither)");
        return;
    }
    if (v->einsum_ok && v->s->workload.ntensors > 3) {
        spec_err(v, n, field, "'compute_optimization' takes a workload of two inputs (the "
                 "compute's states of three operands are not built)");
        return;
    }
    cp->optimization = TESSEL_SPEC_COMPUTE_OPT_GIVEN;
    for (size_t i = 0; i < n->count; i++) {
        char f[128];
        snprintf(f, sizeof(f), "%s[%zu]", field, i);
        const tessel_yaml_node *a = n->items[i];
        const tessel_yaml_node *ty = a->kind == TESSEL_YAML_MAPPING ? tessel_yaml_get(a, "type")
                                                                    : NULL;
        if (!ty) {
            spec_err(v, a, f, "a 'compute_optimization' entry is a mapping {type: gating} or "
                     "{type: skipping}");
            continue;
        }
        spec_check_keys(v, a, f, keys, N_OF(keys));
        char tf[160];
        spec_join(tf, sizeof(tf), f, "type");
        int k = spec_read_choice(v, ty, tf, "type", types, N_OF(types));
        if (k == 0)
            cp->optimization |= TESSEL_SPEC_COMPUTE_OPT_GATING;
        else if (k == 1)
            cp->optimization |= TESSEL_SPEC_COMPUTE_OPT_SKIPPING;
    }
}

static void read_compute(vctx *v, const tessel_yaml_node *arch)
{
    tessel_spec_compute *cp = &v->s->compute;
    cp->pes = 1;
    cp->macs_per_pe = 1;
    cp->clock_ghz = 1.0;
    cp->intersect_step_cycles = 1.0;
    const char *field = "architecture.compute";
    const tessel_yaml_node *c = tessel_yaml_get(arch, "compute");
    if (!c) {
        spec_err(v, arch, field, "missing 'compute' (PEs, clock and the MAC's energy class)");
        return;
    }
    if (!(c = spec_mapping_of(v, c, field, "compute"))) {
        if (tessel_yaml_is_null(tessel_yaml_get(arch, "compute")))
            spec_err(v, tessel_yaml_get(arch, "compute"), field, "'compute' must be a mapping");
        return;
    }
    cp->pos = spec_pos_of(c);
    spec_check_keys(v, c, field, compute_keys, N_OF(compute_keys));
    const tessel_yaml_node *n;
    if ((n = tessel_yaml_get(c, "pes")))
        spec_read_count(v, n, "architecture.compute.pes", "pes", UINT32_MAX, &cp->pes);
    if ((n = tessel_yaml_get(c, "macs_per_pe")))
        spec_read_count(v, n, "architecture.compute.macs_per_pe", "macs_per_pe", UINT32_MAX,
                   &cp->macs_per_pe);
    if ((n = tessel_yaml_get(c, "clock")))
        read_clock(v, n, "architecture.compute.clock", &cp->clock_ghz);
    read_component(v, c, field, &cp->mac);
    if ((n = tessel_yaml_get(c, "compute_optimization")))
        read_compute_optimization(v, n, cp);
    const tessel_yaml_node *in = tessel_yaml_get(c, "intersect");
    const char *inf = "architecture.compute.intersect";
    if (in && (in = spec_mapping_of(v, in, inf, "intersect"))) {
        spec_check_keys(v, in, inf, intersect_keys, N_OF(intersect_keys));
        read_component(v, in, inf, &cp->intersect);
        if ((n = tessel_yaml_get(in, "step_cycles")))
            spec_read_positive(v, n, "architecture.compute.intersect.step_cycles", "step_cycles",
                               "cycles per intersection step", &cp->intersect_step_cycles);
    }
}

/* The architecture section: tables, timing, every level (an outer level's
 * action_optimization targets inputs only) and the compute. */
void spec_read_architecture(vctx *v, const tessel_yaml_node *root)
{
    tessel_spec *s = v->s;
    const tessel_yaml_node *arch = tessel_yaml_get(root, "architecture");
    if (!arch) {
        spec_err(v, root, "architecture", "missing 'architecture' (levels and compute)");
        return;
    }
    if (!(arch = spec_mapping_of(v, arch, "architecture", "architecture"))) {
        if (tessel_yaml_is_null(tessel_yaml_get(root, "architecture")))
            spec_err(v, tessel_yaml_get(root, "architecture"), "architecture",
                "'architecture' must be a mapping");
        return;
    }
    spec_check_keys(v, arch, "architecture", arch_keys, N_OF(arch_keys));
    const tessel_yaml_node *n = tessel_yaml_get(arch, "technology");
    if (n)
        spec_read_string(v, n, "architecture.technology", "technology", s->technology,
                    sizeof(s->technology));
    read_tables(v, arch);
    if ((n = tessel_yaml_get(arch, "timing"))) {
        static const char *const timing_names[] = { "roofline", "pipeline" };
        int k = spec_read_choice(v, n, "architecture.timing", "timing", timing_names,
                                 N_OF(timing_names));
        s->timing = k == 1 ? TESSEL_SPEC_TIMING_PIPELINE : TESSEL_SPEC_TIMING_ROOFLINE;
    }
    const tessel_yaml_node *levels = tessel_yaml_get(arch, "levels");
    const char *lf = "architecture.levels";
    if (!levels) {
        spec_err(v, arch, lf, "missing 'levels' (the storage levels, backing store first)");
    } else if (levels->kind != TESSEL_YAML_SEQUENCE) {
        spec_err(v, levels, lf, "'levels' must be a list of levels");
    } else if (levels->count == 0) {
        spec_err(v, levels, lf, "'levels' must list at least one level");
    } else {
        size_t count = levels->count;
        if (count > TESSEL_SPEC_MAX_LEVELS) {
            spec_error(v->c, TESSEL_ERANGE, levels->items[TESSEL_SPEC_MAX_LEVELS], lf,
                       "more than %u levels", TESSEL_SPEC_MAX_LEVELS);
            count = TESSEL_SPEC_MAX_LEVELS;
        }
        for (size_t l = 0; l < count; l++) {
            const tessel_yaml_node *lv = levels->items[l];
            level_defaults(s, &s->level[l]);
            s->nlevels = (unsigned)l + 1;
            if (lv->kind != TESSEL_YAML_MAPPING) {
                spec_err(v, lv, lf, "a level must be a mapping (name, capacity, class, ...)");
                continue;
            }
            read_level(v, (unsigned)l, lv);
            const tessel_yaml_node *ao = tessel_yaml_get(lv, "action_optimization");
            char af[128];
            spec_join(af, sizeof(af), "architecture.levels", s->level[l].name);
            spec_append(af, sizeof(af), ".action_optimization");
            const tessel_spec_sparse *zs = &s->level[l].tensor[0].sparse;
            if (ao && l + 1 < count && (zs->scalar_skip_on | zs->scalar_gate_on))
                spec_err(v, ao, af,
                         "above the innermost level 'action_optimization' skips (gates) an "
                         "input's reads that fill the level below; the output's (its "
                         "read-backs) are not built: target an input here, or the output "
                         "at the innermost level");
        }
    }
    read_compute(v, arch);
}
