/* Unit tests of src/report/writers.c: the fast CSV/JSON writers give the
 * same bytes as the reference implementation below (the writers as they
 * were before the row buffers and the printf-free number formatting), on
 * random design points: random doubles of every kind, u64 extremes,
 * strings that need quoting or escaping, rows longer than the row buffer. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/report.h"

/* ================================================================== */
/* REFERENCE IMPLEMENTATION: a verbatim copy of the slow writers (fprintf,
 * snprintf + strtod), renamed ref_*. Do not optimize: it defines the
 * expected bytes. */

typedef struct ref_emitter {
    FILE *f;
    int json;
    int nfields;
} ref_emitter;

static void ref_begin(ref_emitter *e)
{
    e->nfields = 0;
    if (e->json)
        fputc('{', e->f);
}

static void ref_end(ref_emitter *e)
{
    fputs(e->json ? "}" : "\n", e->f);
}

static void ref_key(ref_emitter *e, const char *name)
{
    if (e->json)
        fprintf(e->f, "%s\"%s\": ", e->nfields ? ", " : "", name);
    else if (e->nfields)
        fputc(',', e->f);
    e->nfields++;
}

static void ref_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c == '\r')
            fputs("\\r", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void ref_emit_str(ref_emitter *e, const char *name, const char *value)
{
    ref_key(e, name);
    if (e->json)
        ref_json_string(e->f, value);
    else
        tessel_csv_field(e->f, value);
}

static void ref_emit_u64(ref_emitter *e, const char *name, uint64_t value)
{
    ref_key(e, name);
    fprintf(e->f, "%llu", (unsigned long long)value);
}

static void ref_format_double(char *buf, size_t n, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (prec == 17 || strtod(buf, NULL) == v)
            return;
    }
}

static void ref_emit_double(ref_emitter *e, const char *name, double value)
{
    ref_key(e, name);
    if (!isfinite(value)) {
        if (e->json)
            fputs("null", e->f);
        return;
    }
    char buf[40];
    ref_format_double(buf, sizeof(buf), value);
    fputs(buf, e->f);
}

static int ref_stream_status(FILE *f)
{
    return ferror(f) ? TESSEL_EIO : TESSEL_OK;
}

static void ref_point_keys(ref_emitter *e, const tessel_report_point *p)
{
    ref_emit_str(e, "design", p->design);
    ref_emit_str(e, "workload", p->workload);
    ref_emit_str(e, "data", p->data);
    ref_emit_str(e, "strategy", p->strategy);
    ref_emit_str(e, "estimator", p->estimator);
}

static void ref_traffic_record(ref_emitter *e, const tessel_report_point *p, unsigned l,
                               unsigned t)
{
    const tessel_traffic *tr = &p->traffic[l][t];
    ref_begin(e);
    ref_point_keys(e, p);
    ref_emit_str(e, "level", p->level_name[l]);
    ref_emit_str(e, "tensor", p->tensor_name[t]);
    ref_emit_u64(e, "fills", tr->fills);
    ref_emit_u64(e, "reads", tr->reads);
    ref_emit_u64(e, "updates", tr->updates);
    ref_emit_u64(e, "writebacks", tr->writebacks);
    ref_emit_u64(e, "data_bytes", tr->data_bytes);
    ref_emit_u64(e, "metadata_bytes", tr->metadata_bytes);
    ref_emit_double(e, "energy_pj", p->access[l][t].energy_pj);
    ref_emit_u64(e, "algorithmic", tr->algorithmic);
    ref_emit_u64(e, "actual", tr->fills + tr->updates);
    ref_emit_u64(e, "skipped", tr->skipped);
    ref_emit_u64(e, "gated", tr->gated);
    ref_emit_u64(e, "bumped_bytes", tr->bumped_bytes);
    ref_emit_u64(e, "reads_elements", p->reads_elements[l][t]);
    ref_emit_u64(e, "writes_elements", p->writes_elements[l][t]);
    uint64_t moved = t == 0 ? tr->writebacks : tr->fills;
    ref_emit_double(e, "overflow_tiles_share",
                    moved ? (double)tr->overflow_tiles / (double)moved : 0.0);
    ref_emit_u64(e, "overflow_bytes", tr->overflow_bytes);
    ref_emit_u64(e, "partition_bytes", tr->partition_bytes);
    ref_emit_u64(e, "worst_tile_bytes", tr->worst_tile_bytes);
    ref_emit_u64(e, "skipped_reads", tr->skipped_reads);
    ref_emit_u64(e, "gated_reads", tr->gated_reads);
    ref_emit_u64(e, "skipped_metadata_bytes", tr->skipped_metadata_bytes);
    ref_emit_u64(e, "gated_metadata_bytes", tr->gated_metadata_bytes);
    ref_end(e);
}

static void ref_emit_i64(ref_emitter *e, const char *name, int64_t value)
{
    ref_key(e, name);
    fprintf(e->f, "%lld", (long long)value);
}

/* level_energy: "NAME=read:X,write:X,update:X,metadata_read:X,metadata_write:X,leak:X;..."
 * (an empty number for a value that is not finite; nothing when too long) */
static void ref_level_energy(const tessel_report_point *p, char *buf, size_t n)
{
    static const char *const actions[6] = { "read", "write", "update", "metadata_read",
                                            "metadata_write", "leak" };
    char tmp[8192] = "";
    for (unsigned l = 0; l < p->nlevels; l++) {
        snprintf(tmp + strlen(tmp), sizeof(tmp) - strlen(tmp), "%s%s=", l ? ";" : "",
                 p->level_name[l]);
        for (unsigned a = 0; a < 6; a++) {
            char num[40] = "";
            if (isfinite(p->level_action_pj[l][a]))
                ref_format_double(num, sizeof(num), p->level_action_pj[l][a]);
            snprintf(tmp + strlen(tmp), sizeof(tmp) - strlen(tmp), "%s%s:%s", a ? "," : "",
                     actions[a], num);
        }
    }
    if (strlen(tmp) < n)
        snprintf(buf, n, "%s", tmp);
    else
        buf[0] = '\0';
}

/* level_cycles: "NAME=C;..." (an empty number for a value that is not finite) */
static void ref_level_cycles(const tessel_report_point *p, char *buf, size_t n)
{
    char tmp[8192] = "";
    for (unsigned l = 0; l < p->nlevels; l++) {
        char num[40] = "";
        if (isfinite(p->roofline.level_cycles[l]))
            ref_format_double(num, sizeof(num), p->roofline.level_cycles[l]);
        snprintf(tmp + strlen(tmp), sizeof(tmp) - strlen(tmp), "%s%s=%s", l ? ";" : "",
                 p->level_name[l], num);
    }
    snprintf(buf, n, "%s", tmp);
}

static void ref_component(FILE *f, const char *name, const tessel_component_energy *c)
{
    static const char *const actions[TESSEL_ACTION_COUNT] = {
        "read", "write", "update", "metadata_read", "metadata_write", "compute", "leak"
    };
    fputs("{\"component\": ", f);
    ref_json_string(f, name);
    fputs(", \"table\": ", f);
    ref_json_string(f, c->table);
    fputs(", \"entry\": ", f);
    ref_json_string(f, c->entry);
    fputs(", \"source\": ", f);
    ref_json_string(f, c->source);
    fputs(", \"method\": ", f);
    ref_json_string(f, c->method);
    fputs(", \"area_um2\": ", f);
    char area[40];
    if (isfinite(c->area_um2)) {
        ref_format_double(area, sizeof(area), c->area_um2);
        fputs(area, f);
    } else {
        fputs("null", f);
    }
    fputs(", \"pj\": {", f);
    for (int a = 0; a < TESSEL_ACTION_COUNT; a++) {
        fprintf(f, "%s\"%s\": ", a ? ", " : "", actions[a]);
        char num[40];
        if (isfinite(c->pj[a])) {
            ref_format_double(num, sizeof(num), c->pj[a]);
            fputs(num, f);
        } else {
            fputs("null", f);
        }
    }
    fputs("}}", f);
}

static void ref_summary_record(ref_emitter *e, const tessel_report_point *p)
{
    ref_begin(e);
    ref_point_keys(e, p);
    ref_emit_u64(e, "dram_bytes", p->dram_bytes);
    ref_emit_u64(e, "compulsory_bytes", p->compulsory_bytes);
    ref_emit_double(e, "traffic_ratio", p->traffic_ratio);
    ref_emit_u64(e, "flops", p->macs);
    ref_emit_double(e, "energy_pj", p->energy_pj);
    ref_emit_double(e, "cycles", p->roofline.cycles);
    ref_emit_str(e, "bound", p->bound);
    ref_emit_double(e, "seconds", p->roofline.seconds);
    ref_emit_double(e, "model_seconds", p->model_seconds);
    ref_emit_u64(e, "output_nnz", p->output_nnz);
    ref_emit_double(e, "output_nnz_stderr", p->output_nnz_stderr);
    ref_emit_u64(e, "intersections", p->intersections);
    ref_emit_double(e, "compute_cycles", p->roofline.compute_cycles);
    ref_emit_double(e, "compute_utilization", p->roofline.compute_utilization);
    ref_emit_double(e, "area_um2", p->area_um2);
    ref_emit_u64(e, "stat_offgrid_edges", p->stat_offgrid_edges);
    ref_emit_u64(e, "stat_design_may_differ", p->stat_design_may_differ);
    ref_emit_str(e, "stat_path", p->stat_path);
    ref_emit_i64(e, "tiled_metadata_bytes", p->tiled_metadata_bytes);
    ref_emit_str(e, "tiles", p->tiles);
    ref_emit_double(e, "storage_energy_pj", p->storage_energy_pj);
    ref_emit_double(e, "mac_energy_pj", p->mac_energy_pj);
    ref_emit_double(e, "intersect_energy_pj", p->intersect_energy_pj);
    ref_emit_double(e, "leak_energy_pj", p->leak_energy_pj);
    char levels[TESSEL_SPEC_MAX_LEVELS * (TESSEL_SPEC_NAME_MAX + 6 * 48)];
    ref_level_energy(p, levels, sizeof(levels));
    ref_emit_str(e, "level_energy", levels);
    ref_emit_double(e, "spatial_cycles", p->spatial_cycles);
    ref_emit_double(e, "imbalance", p->imbalance);
    ref_emit_double(e, "work_stdev", p->work_stdev);
    ref_emit_double(e, "pe_utilization", p->pe_utilization);
    ref_emit_u64(e, "algorithmic_computes", p->computes_algorithmic);
    ref_emit_u64(e, "actual_computes", p->computes_actual);
    ref_emit_u64(e, "gated_computes", p->computes_gated);
    ref_emit_u64(e, "skipped_computes", p->computes_skipped);
    ref_level_cycles(p, levels, sizeof(levels));
    ref_emit_str(e, "level_cycles", levels);
    if (e->json) {
        ref_key(e, "energy_sources");
        fputc('[', e->f);
        for (unsigned l = 0; l < p->nlevels; l++) {
            fputs(l ? ", " : "", e->f);
            ref_component(e->f, p->level_name[l], &p->energy.level[l]);
        }
        fputs(", ", e->f);
        ref_component(e->f, "MAC", &p->energy.mac);
        fputs(", ", e->f);
        ref_component(e->f, "intersect", &p->energy.intersect);
        fputc(']', e->f);
    }
    ref_end(e);
}

static int ref_traffic_csv_rows(FILE *f, const tessel_report_point *p)
{
    ref_emitter e = { f, 0, 0 };
    for (unsigned l = 0; l < p->nlevels; l++)
        for (unsigned t = 0; t < p->ntensors; t++)
            ref_traffic_record(&e, p, l, t);
    return ref_stream_status(f);
}

static int ref_traffic_csv_row(FILE *f, const tessel_report_point *p, unsigned level,
                               unsigned tensor)
{
    if (level >= p->nlevels || tensor >= p->ntensors)
        return TESSEL_EINVAL;
    ref_emitter e = { f, 0, 0 };
    ref_traffic_record(&e, p, level, tensor);
    return ref_stream_status(f);
}

static int ref_summary_csv_row(FILE *f, const tessel_report_point *p)
{
    ref_emitter e = { f, 0, 0 };
    ref_summary_record(&e, p);
    return ref_stream_status(f);
}

static int ref_traffic_json(FILE *f, const tessel_report_point *p, size_t n)
{
    ref_emitter e = { f, 1, 0 };
    int first = 1;
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        for (unsigned l = 0; l < p[i].nlevels; l++)
            for (unsigned t = 0; t < p[i].ntensors; t++) {
                fputs(first ? "\n  " : ",\n  ", f);
                first = 0;
                ref_traffic_record(&e, &p[i], l, t);
            }
    fputs(first ? "]\n" : "\n]\n", f);
    return ref_stream_status(f);
}

static int ref_summary_json(FILE *f, const tessel_report_point *p, size_t n)
{
    ref_emitter e = { f, 1, 0 };
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        ref_summary_record(&e, &p[i]);
    }
    fputs(n ? "\n]\n" : "]\n", f);
    return ref_stream_status(f);
}

/* END OF REFERENCE IMPLEMENTATION */
/* ================================================================== */

/* xorshift64: a fixed seed, so a failure reproduces. */
static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static double nudge(uint64_t *rng, double v)
{
    for (uint64_t steps = next_random(rng) % 4; steps; steps--)
        v = nextafter(v, next_random(rng) % 2 ? INFINITY : 0);
    return v;
}

static double random_double(uint64_t *rng)
{
    static const double special[] = {
        0.0, 1.0, 0.5, 0.1, 1.0 / 3.0, 477.875, 1e15, 1e15 - 1, 1e15 + 2, 1e-14, 1e22,
        9007199254740992.0 /* 2^53 */, 9007199254740993.0, 18014398509481984.0,
        DBL_MIN, DBL_MAX, DBL_TRUE_MIN, 4.9406564584124654e-324 * 12345, INFINITY, NAN
    };
    uint64_t r = next_random(rng);
    double v;
    switch (next_random(rng) % 10) {
    case 0: /* any bit pattern: NaNs, infinities, denormals included */
        memcpy(&v, &r, sizeof(v));
        break;
    case 1:
        v = nudge(rng, special[r % (sizeof(special) / sizeof(special[0]))]);
        break;
    case 2: /* integers around 1e15 and 2^53 */
        v = (r % 2 ? 1e15 : 9007199254740992.0) + (double)(int64_t)(r % 4001) - 2000;
        break;
    case 3: /* integers of every size */
        v = (double)(r >> (next_random(rng) % 64));
        break;
    case 4: /* binary fractions: exact decimals of any length, rounding ties */
        v = ldexp((double)(r >> (11 + next_random(rng) % 40)), -(int)(next_random(rng) % 64));
        break;
    case 5: /* decimal-looking values of every magnitude */
        v = (double)(r % 100000000000000000u) * pow(10, (int)(next_random(rng) % 50) - 35);
        break;
    case 6: /* near powers of ten and two, where the digit count changes */
        v = nudge(rng, next_random(rng) % 2 ? pow(10, (int)(r % 50) - 20)
                                            : ldexp(1, (int)(r % 160) - 80));
        break;
    default: /* a full significand at a wide range of exponents */
        v = ldexp((double)(r >> 11), (int)(next_random(rng) % 220) - 150);
        break;
    }
    return next_random(rng) % 2 ? -v : v;
}

static uint64_t random_u64(uint64_t *rng)
{
    uint64_t r = next_random(rng);
    switch (next_random(rng) % 5) {
    case 0:
        return r % 2 ? 0 : UINT64_MAX;
    case 1: { /* powers of ten and their neighbours */
        uint64_t p = 1;
        for (uint64_t k = r % 20; k; k--)
            p *= 10;
        return p + (uint64_t)(int64_t)(next_random(rng) % 3) - 1;
    }
    case 2:
        return r;
    default:
        return r >> (next_random(rng) % 64);
    }
}

/* A string for a field of `size` bytes: often empty or short, sometimes
 * full; with characters that need CSV quoting or JSON escaping. */
static void random_string(uint64_t *rng, char *out, size_t size)
{
    static const char alphabet[] = "abcXYZ019 .*^_-,,\"\"\r\n\\\t\x01\x1f\x7f\x80\xc3\xa9\xff";
    size_t len;
    switch (next_random(rng) % 6) {
    case 0:
        len = 0;
        break;
    case 1:
        len = size - 1;
        break;
    default:
        len = next_random(rng) % (size < 12 ? size : 12);
        break;
    }
    int plain = next_random(rng) % 3 == 0; /* no special characters at all */
    for (size_t i = 0; i < len; i++) {
        size_t choices = plain ? 15 : sizeof(alphabet) - 1;
        out[i] = alphabet[next_random(rng) % choices];
    }
    out[len] = '\0';
}

static void random_point(uint64_t *rng, tessel_report_point *p)
{
    memset(p, 0, sizeof(*p));
    random_string(rng, p->design, sizeof(p->design));
    random_string(rng, p->workload, sizeof(p->workload));
    random_string(rng, p->data, sizeof(p->data));
    random_string(rng, p->strategy, sizeof(p->strategy));
    random_string(rng, p->estimator, sizeof(p->estimator));
    random_string(rng, p->bound, sizeof(p->bound));
    p->nlevels = 1 + (unsigned)(next_random(rng) % TESSEL_SPEC_MAX_LEVELS);
    p->ntensors = 1 + (unsigned)(next_random(rng) % TESSEL_SPEC_MAX_TENSORS);
    for (unsigned l = 0; l < p->nlevels; l++)
        random_string(rng, p->level_name[l], sizeof(p->level_name[l]));
    for (unsigned t = 0; t < p->ntensors; t++)
        random_string(rng, p->tensor_name[t], sizeof(p->tensor_name[t]));
    for (unsigned l = 0; l < p->nlevels; l++)
        for (unsigned t = 0; t < p->ntensors; t++) {
            tessel_traffic *tr = &p->traffic[l][t];
            uint64_t *counts[] = { &tr->fills, &tr->reads, &tr->updates, &tr->writebacks,
                                   &tr->data_bytes, &tr->metadata_bytes, &tr->algorithmic,
                                   &tr->skipped, &tr->gated, &tr->bumped_bytes,
                                   &tr->overflow_tiles, &tr->overflow_bytes,
                                   &tr->partition_bytes, &tr->worst_tile_bytes,
                                   &tr->skipped_reads, &tr->gated_reads,
                                   &tr->skipped_metadata_bytes, &tr->gated_metadata_bytes };
            for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
                *counts[i] = random_u64(rng);
            p->access[l][t].energy_pj = random_double(rng);
            p->reads_elements[l][t] = random_u64(rng);
            p->writes_elements[l][t] = random_u64(rng);
        }
    p->dram_bytes = random_u64(rng);
    p->compulsory_bytes = random_u64(rng);
    p->macs = random_u64(rng);
    p->output_nnz = random_u64(rng);
    p->intersections = random_u64(rng);
    double *values[] = { &p->traffic_ratio, &p->energy_pj, &p->roofline.cycles,
                         &p->roofline.seconds, &p->model_seconds, &p->roofline.compute_cycles,
                         &p->roofline.compute_utilization, &p->area_um2, &p->output_nnz_stderr };
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        *values[i] = random_double(rng);
    /* issue 20's columns */
    p->tiled_metadata_bytes = (int64_t)random_u64(rng);
    random_string(rng, p->tiles, sizeof(p->tiles));
    double *energies[] = { &p->storage_energy_pj, &p->mac_energy_pj, &p->intersect_energy_pj,
                           &p->leak_energy_pj };
    for (size_t i = 0; i < sizeof(energies) / sizeof(energies[0]); i++)
        *energies[i] = random_double(rng);
    /* issue 22's spatial columns */
    double *spatial[] = { &p->spatial_cycles, &p->imbalance, &p->work_stdev, &p->pe_utilization };
    for (size_t i = 0; i < sizeof(spatial) / sizeof(spatial[0]); i++)
        *spatial[i] = random_double(rng);
    /* issue 26's compute columns */
    p->computes_algorithmic = random_u64(rng);
    p->computes_actual = random_u64(rng);
    p->computes_gated = random_u64(rng);
    p->computes_skipped = random_u64(rng);
    for (unsigned l = 0; l < p->nlevels; l++) {
        for (unsigned a = 0; a < 6; a++)
            p->level_action_pj[l][a] = random_double(rng);
        random_string(rng, p->energy.level[l].table, sizeof(p->energy.level[l].table));
        random_string(rng, p->energy.level[l].entry, sizeof(p->energy.level[l].entry));
        random_string(rng, p->energy.level[l].source, sizeof(p->energy.level[l].source));
        for (unsigned a = 0; a < TESSEL_ACTION_COUNT; a++)
            p->energy.level[l].pj[a] = random_double(rng);
    }
    random_string(rng, p->energy.mac.entry, sizeof(p->energy.mac.entry));
    p->energy.intersect.pj[TESSEL_ACTION_COMPUTE] = random_double(rng);
}

/* ------------------------------------------------------------------ */
/* Output of one writer call, captured from a memory stream. */
typedef struct capture {
    FILE *f;
    char *text;
    size_t len;
} capture;

static void capture_open(capture *c)
{
    c->text = NULL;
    c->len = 0;
    c->f = open_memstream(&c->text, &c->len);
    ck_assert_ptr_nonnull(c->f);
}

static void capture_close(capture *c)
{
    ck_assert_int_eq(fclose(c->f), 0);
}

/* Same bytes (and lengths: the text may hold no NUL, but check anyway). */
static void assert_same(const char *what, long case_number, capture *got, capture *want)
{
    capture_close(got);
    capture_close(want);
    size_t at = 0;
    while (at < got->len && at < want->len && got->text[at] == want->text[at])
        at++;
    ck_assert_msg(got->len == want->len && at == got->len,
                  "%s, case %ld: differs at byte %zu:\n got: %.80s\nwant: %.80s", what,
                  case_number, at, got->text + (at > 20 ? at - 20 : 0),
                  want->text + (at > 20 ? at - 20 : 0));
    free(got->text);
    free(want->text);
}

static void check_point(const tessel_report_point *p, long case_number)
{
    capture got, want;

    capture_open(&got);
    capture_open(&want);
    ck_assert_int_eq(tessel_report_summary_csv_row(got.f, p), ref_summary_csv_row(want.f, p));
    assert_same("summary_csv_row", case_number, &got, &want);

    capture_open(&got);
    capture_open(&want);
    ck_assert_int_eq(tessel_report_traffic_csv_rows(got.f, p), ref_traffic_csv_rows(want.f, p));
    assert_same("traffic_csv_rows", case_number, &got, &want);

    /* one row, including indices out of range (TESSEL_EINVAL, no output) */
    capture_open(&got);
    capture_open(&want);
    for (unsigned l = 0; l <= p->nlevels; l++)
        for (unsigned t = 0; t <= p->ntensors; t++)
            ck_assert_int_eq(tessel_report_traffic_csv_row(got.f, p, l, t),
                             ref_traffic_csv_row(want.f, p, l, t));
    assert_same("traffic_csv_row", case_number, &got, &want);
}

START_TEST(random_points_match_reference)
{
    uint64_t rng = 0x9e3779b97f4a7c15u;
    tessel_report_point *p = malloc(2 * sizeof(*p));
    ck_assert_ptr_nonnull(p);
    for (long i = 0; i < 3000; i++) {
        random_point(&rng, &p[0]);
        random_point(&rng, &p[1]);
        check_point(&p[0], i);

        size_t n = (size_t)(next_random(&rng) % 3); /* 0, 1 or 2 points */
        capture got, want;
        capture_open(&got);
        capture_open(&want);
        ck_assert_int_eq(tessel_report_summary_json(got.f, p, n), ref_summary_json(want.f, p, n));
        assert_same("summary_json", i, &got, &want);
        capture_open(&got);
        capture_open(&want);
        ck_assert_int_eq(tessel_report_traffic_json(got.f, p, n), ref_traffic_json(want.f, p, n));
        assert_same("traffic_json", i, &got, &want);
    }
    free(p);
}
END_TEST

/* Many more doubles: eight per summary row, one per traffic row. */
START_TEST(random_doubles_match_reference)
{
    uint64_t rng = 0x0123456789abcdefu;
    tessel_report_point *p = malloc(sizeof(*p));
    ck_assert_ptr_nonnull(p);
    random_point(&rng, p);
    for (long i = 0; i < 40000; i++) {
        double *values[] = { &p->traffic_ratio, &p->energy_pj, &p->roofline.cycles,
                             &p->roofline.seconds, &p->model_seconds,
                             &p->roofline.compute_cycles, &p->roofline.compute_utilization,
                             &p->area_um2, &p->output_nnz_stderr };
        for (size_t k = 0; k < sizeof(values) / sizeof(values[0]); k++)
            *values[k] = random_double(&rng);
        capture got, want;
        capture_open(&got);
        capture_open(&want);
        ck_assert_int_eq(tessel_report_summary_csv_row(got.f, p), ref_summary_csv_row(want.f, p));
        assert_same("summary_csv_row doubles", i, &got, &want);
    }
    free(p);
}
END_TEST

/* The longest fields, every character quoted or escaped: a JSON record
 * longer than the writers' row buffer goes out in pieces, whole. */
START_TEST(longest_fields_match_reference)
{
    tessel_report_point *p = malloc(sizeof(*p));
    ck_assert_ptr_nonnull(p);
    uint64_t rng = 42;
    random_point(&rng, p);
    const char fill[] = { '"', '\x01', ',', '\n' };
    for (size_t f = 0; f < sizeof(fill); f++) {
        memset(p->data, fill[f], sizeof(p->data) - 1);
        memset(p->design, fill[f], sizeof(p->design) - 1);
        memset(p->level_name[0], fill[f], sizeof(p->level_name[0]) - 1);
        memset(p->bound, fill[f], sizeof(p->bound) - 1);
        check_point(p, (long)f);
        capture got, want;
        capture_open(&got);
        capture_open(&want);
        ck_assert_int_eq(tessel_report_traffic_json(got.f, p, 1), ref_traffic_json(want.f, p, 1));
        ck_assert_int_eq(tessel_report_summary_json(got.f, p, 1), ref_summary_json(want.f, p, 1));
        assert_same("json, longest fields", (long)f, &got, &want);
    }
    free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("writers");
    TCase *tc = tcase_create("writers");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, random_points_match_reference);
    tcase_add_test(tc, random_doubles_match_reference);
    tcase_add_test(tc, longest_fields_match_reference);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
