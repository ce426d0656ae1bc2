/* libcyaml's schema of the resolved spec (resolved.h): writes it as YAML,
 * reads such a file back, frees either tree, and the public calls
 * tessel_spec_resolved_yaml / tessel_spec_resolved_check / tessel_spec_origins.
 * Hand-written specs are read by yaml.c + validate.c instead (positions and
 * every error at once); see docs/architecture.md "Library dependencies". */
#include <string.h>

#include <cyaml/cyaml.h>

#include "resolved.h"

#define OPT CYAML_FLAG_OPTIONAL
#define OPT_PTR (CYAML_FLAG_OPTIONAL | CYAML_FLAG_POINTER)
#define STR(key, st, m) CYAML_FIELD_STRING_PTR(key, CYAML_FLAG_POINTER, st, m, 0, CYAML_UNLIMITED)
#define OPT_STR(key, st, m) CYAML_FIELD_STRING_PTR(key, OPT_PTR, st, m, 0, CYAML_UNLIMITED)

static const cyaml_schema_value_t string_entry = {
    CYAML_VALUE_STRING(CYAML_FLAG_POINTER, char, 0, CYAML_UNLIMITED),
};

static const cyaml_schema_field_t attrs_fields[] = {
    OPT_STR("width", rs_attrs, width),
    OPT_STR("datawidth", rs_attrs, datawidth),
    OPT_STR("depth", rs_attrs, depth),
    OPT_STR("size", rs_attrs, size),
    OPT_STR("technology", rs_attrs, technology),
    OPT_STR("exponent", rs_attrs, exponent),
    OPT_STR("mantissa", rs_attrs, mantissa),
    OPT_STR("radix", rs_attrs, radix),
    CYAML_FIELD_END
};

static const cyaml_schema_field_t component_fields[] = {
    STR("class", rs_component, cls),
    CYAML_FIELD_MAPPING_PTR("attributes", OPT_PTR, rs_component, attributes, attrs_fields),
    CYAML_FIELD_END
};

static const cyaml_schema_field_t tile_fields[] = {
    STR("index", rs_tile, index),
    CYAML_FIELD_UINT("size", CYAML_FLAG_DEFAULT, rs_tile, size),
    CYAML_FIELD_END
};
static const cyaml_schema_value_t tile_entry = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, rs_tile, tile_fields),
};

static const cyaml_schema_field_t mapping_fields[] = {
    STR("order", rs_mapping, order),
    CYAML_FIELD_SEQUENCE("tile", CYAML_FLAG_POINTER, rs_mapping, tile, &tile_entry, 0,
                         CYAML_UNLIMITED),
    OPT_STR("spatial", rs_mapping, spatial),
    OPT_STR("distribution", rs_mapping, distribution),
    CYAML_FIELD_SEQUENCE("bypass", OPT_PTR, rs_mapping, bypass, &string_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_END
};

static const cyaml_schema_field_t part_fields[] = {
    STR("tensor", rs_part, tensor),
    STR("format", rs_part, format),
    CYAML_FIELD_FLOAT("partition_bytes", CYAML_FLAG_DEFAULT, rs_part, partition_bytes),
    CYAML_FIELD_SEQUENCE("skip_on", OPT_PTR, rs_part, skip_on, &string_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_SEQUENCE("gate_on", OPT_PTR, rs_part, gate_on, &string_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_SEQUENCE("rank_order", OPT_PTR, rs_part, rank_order, &string_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_SEQUENCE("scalar_skip_on", OPT_PTR, rs_part, scalar_skip_on, &string_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_SEQUENCE("scalar_gate_on", OPT_PTR, rs_part, scalar_gate_on, &string_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_END
};
static const cyaml_schema_value_t part_entry = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, rs_part, part_fields),
};

static const cyaml_schema_field_t level_fields[] = {
    STR("name", rs_level, name),
    CYAML_FIELD_UINT("capacity", CYAML_FLAG_DEFAULT, rs_level, capacity),
    CYAML_FIELD_FLOAT("bandwidth", CYAML_FLAG_DEFAULT, rs_level, bandwidth),
    CYAML_FIELD_UINT("instances", CYAML_FLAG_DEFAULT, rs_level, instances),
    CYAML_FIELD_UINT("word_bits", CYAML_FLAG_DEFAULT, rs_level, word_bits),
    CYAML_FIELD_UINT("value_bits", CYAML_FLAG_DEFAULT, rs_level, value_bits),
    CYAML_FIELD_UINT("coord_bits", CYAML_FLAG_DEFAULT, rs_level, coord_bits),
    CYAML_FIELD_UINT("offset_bits", CYAML_FLAG_DEFAULT, rs_level, offset_bits),
    CYAML_FIELD_UINT("run_bits", CYAML_FLAG_DEFAULT, rs_level, run_bits),
    STR("format", rs_level, format),
    CYAML_FIELD_MAPPING("energy", CYAML_FLAG_DEFAULT, rs_level, energy, component_fields),
    CYAML_FIELD_SEQUENCE("tensors", CYAML_FLAG_POINTER, rs_level, tensors, &part_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_MAPPING_PTR("mapping", OPT_PTR, rs_level, mapping, mapping_fields),
    CYAML_FIELD_FLOAT_PTR("read_bandwidth", OPT_PTR, rs_level, read_bandwidth),
    CYAML_FIELD_FLOAT_PTR("write_bandwidth", OPT_PTR, rs_level, write_bandwidth),
    CYAML_FIELD_UINT_PTR("network_width", OPT_PTR, rs_level, network_width),
    OPT_STR("network_deliver", rs_level, network_deliver),
    OPT_STR("network_class", rs_level, network_class),
    CYAML_FIELD_FLOAT_PTR("network_hop_mm", OPT_PTR, rs_level, network_hop_mm),
    CYAML_FIELD_END
};
static const cyaml_schema_value_t level_entry = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, rs_level, level_fields),
};

static const cyaml_schema_field_t model_fields[] = {
    STR("kind", rs_model, kind),
    CYAML_FIELD_UINT("rows", CYAML_FLAG_DEFAULT, rs_model, rows),
    CYAML_FIELD_UINT("cols", CYAML_FLAG_DEFAULT, rs_model, cols),
    CYAML_FIELD_UINT("nnz", CYAML_FLAG_DEFAULT, rs_model, nnz),
    CYAML_FIELD_FLOAT("density", CYAML_FLAG_DEFAULT, rs_model, density),
    CYAML_FIELD_UINT("bandwidth", CYAML_FLAG_DEFAULT, rs_model, bandwidth),
    CYAML_FIELD_UINT("n", CYAML_FLAG_DEFAULT, rs_model, n),
    CYAML_FIELD_UINT("m", CYAML_FLAG_DEFAULT, rs_model, m),
    CYAML_FIELD_UINT("seed", CYAML_FLAG_DEFAULT, rs_model, seed),
    CYAML_FIELD_END
};

static const cyaml_schema_field_t tensor_fields[] = {
    STR("name", rs_tensor, name),
    STR("role", rs_tensor, role),
    STR("indices", rs_tensor, indices),
    OPT_STR("data", rs_tensor, data),
    CYAML_FIELD_MAPPING_PTR("model", OPT_PTR, rs_tensor, model, model_fields),
    CYAML_FIELD_END
};
static const cyaml_schema_value_t tensor_entry = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, rs_tensor, tensor_fields),
};

static const cyaml_schema_field_t index_fields[] = {
    STR("name", rs_index, name),
    CYAML_FIELD_UINT("extent", CYAML_FLAG_DEFAULT, rs_index, extent),
    CYAML_FIELD_END
};
static const cyaml_schema_value_t index_entry = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, rs_index, index_fields),
};

static const cyaml_schema_field_t workload_fields[] = {
    STR("einsum", rs_workload, einsum),
    STR("kind", rs_workload, kind),
    CYAML_FIELD_SEQUENCE("indices", CYAML_FLAG_POINTER, rs_workload, indices, &index_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_SEQUENCE("tensors", CYAML_FLAG_POINTER, rs_workload, tensors, &tensor_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_END
};

static const cyaml_schema_field_t compute_fields[] = {
    CYAML_FIELD_UINT("pes", CYAML_FLAG_DEFAULT, rs_compute, pes),
    CYAML_FIELD_UINT("macs_per_pe", CYAML_FLAG_DEFAULT, rs_compute, macs_per_pe),
    CYAML_FIELD_FLOAT("clock_ghz", CYAML_FLAG_DEFAULT, rs_compute, clock_ghz),
    CYAML_FIELD_MAPPING("mac", CYAML_FLAG_DEFAULT, rs_compute, mac, component_fields),
    CYAML_FIELD_MAPPING_PTR("intersect", OPT_PTR, rs_compute, intersect, component_fields),
    CYAML_FIELD_FLOAT_PTR("intersect_step_cycles", OPT_PTR, rs_compute, intersect_step_cycles),
    OPT_STR("compute_optimization", rs_compute, compute_optimization),
    CYAML_FIELD_END
};

static const cyaml_schema_field_t strategy_fields[] = {
    STR("name", rs_strategy, name),
    CYAML_FIELD_FLOAT("overbooking", CYAML_FLAG_DEFAULT, rs_strategy, overbooking),
    CYAML_FIELD_UINT("tail_samples", CYAML_FLAG_DEFAULT, rs_strategy, tail_samples),
    CYAML_FIELD_UINT("rounds", CYAML_FLAG_DEFAULT, rs_strategy, rounds),
    CYAML_FIELD_UINT("seed", CYAML_FLAG_DEFAULT, rs_strategy, seed),
    STR("worst", rs_strategy, worst),
    CYAML_FIELD_UINT("micro_rows", CYAML_FLAG_DEFAULT, rs_strategy, micro_rows),
    CYAML_FIELD_UINT("micro_cols", CYAML_FLAG_DEFAULT, rs_strategy, micro_cols),
    STR("growth", rs_strategy, growth),
    OPT_STR("dataflow", rs_strategy, dataflow),
    OPT_STR("order", rs_strategy, order),
    CYAML_FIELD_SEQUENCE("levels", OPT_PTR, rs_strategy, levels, &string_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_END
};

static const cyaml_schema_field_t kv_fields[] = {
    STR("key", rs_kv, key),
    STR("value", rs_kv, value),
    CYAML_FIELD_END
};
static const cyaml_schema_value_t kv_entry = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, rs_kv, kv_fields),
};

static const cyaml_schema_field_t template_fields[] = {
    STR("name", rs_template, name),
    CYAML_FIELD_SEQUENCE("options", OPT_PTR, rs_template, options, &kv_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_END
};

static const cyaml_schema_field_t spec_fields[] = {
    STR("name", rs_spec, name),
    STR("file", rs_spec, file),
    STR("technology", rs_spec, technology),
    CYAML_FIELD_SEQUENCE("energy_tables", OPT_PTR, rs_spec, energy_tables, &string_entry, 0,
                         CYAML_UNLIMITED),
    CYAML_FIELD_MAPPING("workload", CYAML_FLAG_DEFAULT, rs_spec, workload, workload_fields),
    CYAML_FIELD_SEQUENCE("levels", CYAML_FLAG_POINTER, rs_spec, levels, &level_entry, 1,
                         CYAML_UNLIMITED),
    CYAML_FIELD_MAPPING("compute", CYAML_FLAG_DEFAULT, rs_spec, compute, compute_fields),
    CYAML_FIELD_MAPPING("strategy", CYAML_FLAG_DEFAULT, rs_spec, strategy, strategy_fields),
    CYAML_FIELD_MAPPING("template", CYAML_FLAG_DEFAULT, rs_spec, template_, template_fields),
    OPT_STR("timing", rs_spec, timing),
    CYAML_FIELD_END
};

static const cyaml_schema_value_t spec_schema = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_POINTER, rs_spec, spec_fields),
};

const void *rs_schema(void)
{
    return &spec_schema;
}

/* libcyaml allocates through tessel's hook (the same signature) and logs
 * nothing: the library never prints; failures become tessel_diag text. */
static cyaml_config_t config_for(const tessel_allocator *a)
{
    if (!a)
        a = tessel_allocator_default();
    return (cyaml_config_t){
        .log_fn = NULL,
        .log_ctx = NULL,
        .mem_fn = a->fn,
        .mem_ctx = a->ud,
        .log_level = CYAML_LOG_ERROR,
        /* No aliases: a small document must not expand into a large tree. */
        .flags = CYAML_CFG_STYLE_BLOCK | CYAML_CFG_DOCUMENT_DELIM | CYAML_CFG_NO_ALIAS,
    };
}

void rs_free(rs_spec *r, const tessel_allocator *a)
{
    if (!r)
        return;
    cyaml_config_t cfg = config_for(a);
    cyaml_free(&cfg, &spec_schema, r, 0);
}

static int cyaml_code(cyaml_err_t e)
{
    return e == CYAML_ERR_OOM ? TESSEL_ENOMEM : TESSEL_EPARSE;
}

static int save(const rs_spec *r, const tessel_allocator *a, char **yaml, size_t *len,
                tessel_diag *diag)
{
    cyaml_config_t cfg = config_for(a);
    char *text = NULL;
    size_t n = 0;
    cyaml_err_t e = cyaml_save_data(&text, &n, &cfg, &spec_schema, r, 0);
    if (e != CYAML_OK)
        return tessel_diag_set(diag, cyaml_code(e), NULL, 0, 0, "resolved spec",
                               "libcyaml could not write the resolved spec: %s",
                               cyaml_strerror(e));
    *yaml = text;
    *len = n;
    return 0;
}

int tessel_spec_resolved_yaml(const tessel_spec *s, const tessel_allocator *a, char **yaml,
                              size_t *len, tessel_diag *diag)
{
    if (!a)
        a = tessel_allocator_default();
    *yaml = NULL;
    *len = 0;
    rs_spec *r = NULL;
    int rc = rs_build(s, a, &r, NULL);
    if (rc)
        return tessel_diag_set(diag, rc, NULL, 0, 0, "resolved spec", "out of memory");
    rc = save(r, a, yaml, len, diag);
    rs_free(r, a);
    return rc;
}

int rs_load(const char *yaml, size_t len, const tessel_allocator *a, rs_spec **out,
            tessel_diag *diag)
{
    cyaml_config_t cfg = config_for(a);
    *out = NULL;
    cyaml_err_t e = cyaml_load_data((const uint8_t *)yaml, len, &cfg, &spec_schema,
                                    (cyaml_data_t **)out, NULL);
    if (e != CYAML_OK)
        return tessel_diag_set(diag, cyaml_code(e), NULL, 0, 0, "resolved spec",
                               "libcyaml could not read the resolved spec: %s",
                               cyaml_strerror(e));
    return 0;
}

int tessel_spec_resolved_check(const char *yaml, size_t len, const tessel_allocator *a,
                               tessel_diag *diag)
{
    if (!a)
        a = tessel_allocator_default();
    rs_spec *r = NULL;
    int rc0 = rs_load(yaml, len, a, &r, diag);
    if (rc0)
        return rc0;
    char *again = NULL;
    size_t n = 0;
    int rc = save(r, a, &again, &n, diag);
    rs_free(r, a);
    if (rc)
        return rc;
    int same = n == len && memcmp(again, yaml, len) == 0;
    tessel_dealloc(a, again);
    if (!same)
        return tessel_diag_set(diag, TESSEL_ECORRUPT, NULL, 0, 0, "resolved spec",
                               "the resolved spec read back through its schema differs "
                               "from what was written");
    return 0;
}

int tessel_spec_origins(const tessel_spec *s, const tessel_allocator *a,
                        tessel_spec_origin **out, size_t *count, tessel_diag *diag)
{
    if (!a)
        a = tessel_allocator_default();
    *out = NULL;
    *count = 0;
    rs_origins o = { .alloc = a };
    rs_spec *r = NULL;
    int rc = rs_build(s, a, &r, &o);
    rs_free(r, a);
    if (rc) {
        tessel_spec_origins_free(o.items, o.count, a);
        return tessel_diag_set(diag, rc, NULL, 0, 0, "resolved spec", "out of memory");
    }
    *out = o.items;
    *count = o.count;
    return 0;
}

void tessel_spec_origins_free(tessel_spec_origin *items, size_t count, const tessel_allocator *a)
{
    if (!a)
        a = tessel_allocator_default();
    for (size_t i = 0; i < count; i++) {
        tessel_dealloc(a, items[i].path);
        tessel_dealloc(a, items[i].value);
        tessel_dealloc(a, items[i].origin);
    }
    tessel_dealloc(a, items);
}
