/* The DRT simulator's standard output (FPSG-UIUC/DRT), one run per file.
 *
 * The output is free text: progress messages between lines of fields
 * written as "name: value" or "name value", several to a line separated by
 * commas ("runtime: 0.000026, cycles: 26166, busy_cycles: 99508"). A value
 * is a number, possibly followed by a unit ("1800264 bytes"). An item of
 * another shape is message text and skipped. Field names are matched
 * exactly against the table below; fields marked ignored are known and
 * skipped silently, any other name is noted.
 *
 * DRT's "Top" is the DRAM <-> LLB boundary and "Middle" the LLB <-> PE
 * one. tessel reports a boundary on the row of its inner level, so Top
 * becomes level LLB and Middle level PE. Every number taken is in bytes,
 * except cycles and MACCs. */
#include <string.h>

#include "simref_internal.h"

enum drt_field {
    DRT_CYCLES,
    DRT_A_TOP,
    DRT_B_TOP,
    DRT_OR_TOP,
    DRT_OW_TOP,
    DRT_A_MID,
    DRT_B_MID,
    DRT_OR_MID,
    DRT_OW_MID,
    DRT_A_BYTES,
    DRT_B_BYTES,
    DRT_O_BYTES,
    DRT_TOTAL_BYTES,
    DRT_MACCS,
    DRT_TOP_LOGGER,
    DRT_MID_LOGGER,
    DRT_NFIELDS,
    DRT_IGNORED = -1
};

typedef struct drt_name {
    const char *name;
    int field;        /* enum drt_field or DRT_IGNORED */
    const char *unit; /* the unit the value must carry ("" none); NULL: any */
} drt_name;

static const drt_name drt_names[] = {
    { "cycles", DRT_CYCLES, "" },
    { "a_top", DRT_A_TOP, "" },
    { "b_top", DRT_B_TOP, "" },
    { "o_r_top", DRT_OR_TOP, "" },
    { "o_w_top", DRT_OW_TOP, "" },
    { "a_mid", DRT_A_MID, "" },
    { "b_mid", DRT_B_MID, "" },
    { "o_r_mid", DRT_OR_MID, "" },
    { "o_w_mid", DRT_OW_MID, "" },
    { "A bytes", DRT_A_BYTES, "" },
    { "B bytes", DRT_B_BYTES, "" },
    { "O bytes", DRT_O_BYTES, "" },
    { "Total traffic bytes", DRT_TOTAL_BYTES, "" },
    { "Total MACCs", DRT_MACCS, "" },
    { "Top bandwidth logger", DRT_TOP_LOGGER, "bytes" },
    { "Middle bandwidth logger", DRT_MID_LOGGER, "bytes" },
    /* Known and not used (docs/validate.md says why). */
    { "runtime", DRT_IGNORED, NULL },
    { "busy_cycles", DRT_IGNORED, NULL },
    { "I_top", DRT_IGNORED, NULL },
    { "J_top", DRT_IGNORED, NULL },
    { "K_top", DRT_IGNORED, NULL },
    { "total_top", DRT_IGNORED, NULL },
    { "total_mid", DRT_IGNORED, NULL },
    { "BW logger shows", DRT_IGNORED, NULL },
    { "BW logger a", DRT_IGNORED, NULL },
    { "b", DRT_IGNORED, NULL },
    { "o_r", DRT_IGNORED, NULL },
    { "o_w", DRT_IGNORED, NULL },
    { "total_traffic", DRT_IGNORED, NULL },
    { "a_read", DRT_IGNORED, NULL },
    { "b read", DRT_IGNORED, NULL },
    { "o_read", DRT_IGNORED, NULL },
    { "o_write", DRT_IGNORED, NULL },
    { "Model 0", DRT_IGNORED, NULL },
    { "Model 1", DRT_IGNORED, NULL },
    { "A_csf", DRT_IGNORED, NULL },
    { "B_csf", DRT_IGNORED, NULL },
    { "O_csf", DRT_IGNORED, NULL },
    { "O_COO", DRT_IGNORED, NULL },
    { "bandwidth", DRT_IGNORED, NULL },
    { "Total traffic", DRT_IGNORED, NULL },
    { "A traffic", DRT_IGNORED, NULL },
    { "B traffic", DRT_IGNORED, NULL },
    { "O traffic", DRT_IGNORED, NULL },
    { "MEAN", DRT_IGNORED, NULL },
    { "STDEV", DRT_IGNORED, NULL },
    { "middle bandwidth is now", DRT_IGNORED, NULL },
};

/* The value of one field and where it was read. */
typedef struct drt_value {
    int seen;
    uint64_t v;
    uint64_t line;
    uint32_t col;
} drt_value;

typedef struct drt_run {
    const tessel_simref_input *in;
    drt_value f[DRT_NFIELDS];
} drt_run;

static const drt_name *find_name(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(drt_names) / sizeof(drt_names[0]); i++)
        if (strlen(drt_names[i].name) == len && memcmp(drt_names[i].name, name, len) == 0)
            return &drt_names[i];
    return NULL;
}

static int is_letter(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static uint32_t column_of(const char *line, const char *at)
{
    size_t c = (size_t)(at - line) + 1;
    return c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

/* A field's value: the count, its unit checked, stored once (a repeat must
 * agree: DRT prints some fields on two lines). */
static int take_value(simref_ctx *c, drt_run *run, const drt_name *nm, uint64_t line,
                      const char *text, const char *num, size_t numlen, const char *unit,
                      size_t unitlen)
{
    uint32_t col = column_of(text, num);
    const char *want = nm->unit;
    if (strlen(want) != unitlen || memcmp(want, unit, unitlen) != 0)
        return simref_error(c, TESSEL_EPARSE, run->in->name, line, column_of(text, unit),
                            "field '%s': expected %s%s%s after the number, found '%.*s'",
                            nm->name, want[0] ? "the unit '" : "no unit", want, want[0] ? "'" : "",
                            (int)(unitlen < 40 ? unitlen : 40), unit);
    uint64_t v = 0;
    int rc = simref_parse_count(num, numlen, &v);
    if (rc == SIMREF_COUNT_TOO_LARGE)
        return simref_error(c, TESSEL_ERANGE, run->in->name, line, col,
                            "field '%s': %.*s is larger than 2^64 - 1", nm->name,
                            (int)(numlen < 40 ? numlen : 40), num);
    if (rc)
        return simref_error(c, TESSEL_EPARSE, run->in->name, line, col,
                            "field '%s': expected a whole number >= 0, found %.*s", nm->name,
                            (int)(numlen < 40 ? numlen : 40), num);
    drt_value *f = &run->f[nm->field];
    if (f->seen && f->v != v)
        return simref_error(c, TESSEL_EPARSE, run->in->name, line, col,
                            "field '%s' is %llu here but %llu on line %llu", nm->name,
                            (unsigned long long)v, (unsigned long long)f->v,
                            (unsigned long long)f->line);
    if (!f->seen)
        *f = (drt_value){ 1, v, line, col };
    return 0;
}

/* One comma-separated item of a line: a field, or message text. */
static int read_item(simref_ctx *c, drt_run *run, uint64_t line, const char *text,
                     const char *item, size_t len)
{
    item = simref_trim(item, &len);
    const char *colon = memchr(item, ':', len);
    const char *name = item, *rest;
    size_t namelen, restlen;
    if (colon) {
        namelen = (size_t)(colon - item);
        rest = colon + 1;
        restlen = len - namelen - 1;
    } else {
        /* "name value": the value is the last word. */
        size_t sp = len;
        while (sp && item[sp - 1] != ' ' && item[sp - 1] != '\t')
            sp--;
        if (!sp)
            return 0;
        namelen = sp;
        rest = item + sp;
        restlen = len - sp;
    }
    name = simref_trim(name, &namelen);
    rest = simref_trim(rest, &restlen);
    if (!namelen || !restlen || !is_letter(name[0]))
        return 0; /* a heading ("Top DOT NoC:") or message text */
    size_t numlen = simref_number_length(rest, restlen);
    if (!numlen)
        return 0;
    size_t unitlen = restlen - numlen;
    const char *unit = simref_trim(rest + numlen, &unitlen);
    if (!colon && unitlen)
        return 0;
    const drt_name *nm = find_name(name, namelen);
    if (!nm && !colon && memchr(name, ' ', namelen))
        return 0; /* "Starting run 3 of 4": message text ending in a number */
    if (!nm) {
        char buf[SIMREF_NAME_MAX * 4];
        snprintf(buf, sizeof(buf), "%.*s", (int)(namelen < 200 ? namelen : 200), name);
        return simref_note_unknown(c, run->in->name, line, column_of(text, name), "DRT field",
                                   buf);
    }
    if (nm->field == DRT_IGNORED)
        return 0;
    return take_value(c, run, nm, line, text, rest, numlen, unit, unitlen);
}

/* Lines the person who ran the simulator appended (wall time, exit code). */
static int harness_line(const char *text, size_t len)
{
    return (len >= 5 && memcmp(text, "WALL ", 5) == 0) || (len >= 3 && memcmp(text, "RC=", 3) == 0);
}

static int read_lines(simref_ctx *c, drt_run *run)
{
    simref_lines lines;
    simref_lines_init(&lines, run->in);
    const char *text;
    size_t len;
    int more;
    while ((more = simref_next_line(c, &lines, &text, &len)) > 0) {
        if (harness_line(text, len))
            continue;
        size_t start = 0;
        while (start <= len) {
            const char *comma = memchr(text + start, ',', len - start);
            size_t end = comma ? (size_t)(comma - text) : len;
            int rc = read_item(c, run, lines.line, text, text + start, end - start);
            if (rc)
                return rc;
            start = end + 1;
        }
    }
    return more;
}

/* ------------------------------------------------------------------ */
/* From fields to rows. */

static int require(simref_ctx *c, const drt_run *run, int field, const char *where)
{
    if (run->f[field].seen)
        return 0;
    for (size_t i = 0; i < sizeof(drt_names) / sizeof(drt_names[0]); i++)
        if (drt_names[i].field == field)
            return simref_missing(c, run->in, drt_names[i].name, where);
    return simref_missing(c, run->in, "?", where);
}

/* A group of fields DRT prints together: all of them, or none. */
static int require_group(simref_ctx *c, const drt_run *run, int first, int count,
                         const char *where, int mandatory)
{
    int any = 0;
    for (int i = first; i < first + count; i++)
        any |= run->f[i].seen;
    if (!any && !mandatory)
        return 0;
    for (int i = first; i < first + count; i++) {
        int rc = require(c, run, i, where);
        if (rc)
            return rc;
    }
    return 0;
}

static int any_nonzero(const drt_run *run, int first, int count)
{
    for (int i = first; i < first + count; i++)
        if (run->f[i].seen && run->f[i].v)
            return 1;
    return 0;
}

/* Bytes of A, B and Z across one boundary (Z: reads plus writes). */
typedef struct drt_tensors {
    int reported;
    uint64_t bytes[3];
    uint64_t line[3];
} drt_tensors;

static int sum_fields(simref_ctx *c, const drt_run *run, int a, int b, uint64_t *sum)
{
    if (simref_add(run->f[a].v, run->f[b].v, sum))
        return 0;
    return simref_error(c, TESSEL_ERANGE, run->in->name, run->f[b].line, run->f[b].col,
                        "'%s' plus the preceding count exceeds 2^64 - 1", drt_names[b].name);
}

/* Per-tensor bytes of the boundary whose fields start at `first`
 * (a, b, o_r, o_w). Counters that are all zero were not modelled. */
static int dot_noc_tensors(simref_ctx *c, const drt_run *run, int first, drt_tensors *t)
{
    memset(t, 0, sizeof(*t));
    if (!any_nonzero(run, first, 4))
        return 0;
    t->reported = 1;
    t->bytes[0] = run->f[first].v;
    t->bytes[1] = run->f[first + 1].v;
    t->line[0] = run->f[first].line;
    t->line[1] = run->f[first + 1].line;
    t->line[2] = run->f[first + 3].line;
    return sum_fields(c, run, first + 2, first + 3, &t->bytes[2]);
}

static int matraptor_tensors(const drt_run *run, drt_tensors *t)
{
    memset(t, 0, sizeof(*t));
    if (!run->f[DRT_A_BYTES].seen)
        return 0;
    t->reported = 1;
    for (int i = 0; i < 3; i++) {
        t->bytes[i] = run->f[DRT_A_BYTES + i].v;
        t->line[i] = run->f[DRT_A_BYTES + i].line;
    }
    return 0;
}

static int tensor_total(simref_ctx *c, const drt_run *run, const drt_tensors *t, uint64_t *sum)
{
    uint64_t s = 0;
    for (int i = 0; i < 3; i++)
        if (!simref_add(s, t->bytes[i], &s))
            return simref_error(c, TESSEL_ERANGE, run->in->name, t->line[i], 1,
                                "the per-tensor byte counts add up past 2^64 - 1");
    *sum = s;
    return 0;
}

typedef struct drt_result {
    drt_tensors top, mid;
    int have_cycles, have_dram, have_llb_pe;
    uint64_t cycles, dram_bytes, llb_pe_bytes;
} drt_result;

static int interpret(simref_ctx *c, const drt_run *run, drt_result *r)
{
    memset(r, 0, sizeof(*r));
    const char *name = run->in->name;
    const drt_value *f = run->f;
    r->have_cycles = f[DRT_CYCLES].v != 0;
    r->cycles = f[DRT_CYCLES].v;
    int rc = 0;
    if (!r->have_cycles)
        rc = simref_note(c, name, f[DRT_CYCLES].line, f[DRT_CYCLES].col,
                         "cycles: 0 (this run did not model time); cycles left empty");
    if (!rc)
        rc = dot_noc_tensors(c, run, DRT_A_TOP, &r->top);
    if (!rc && !r->top.reported) {
        rc = matraptor_tensors(run, &r->top);
        if (!rc)
            rc = simref_note(c, name, f[DRT_A_TOP].line, f[DRT_A_TOP].col,
                             "the 'Top DOT NoC' counters are all zero: %s",
                             r->top.reported ? "per-tensor DRAM bytes taken from 'A bytes', "
                                               "'B bytes', 'O bytes'"
                                             : "no per-tensor DRAM bytes");
    }
    if (!rc && r->top.reported) {
        r->have_dram = 1;
        rc = tensor_total(c, run, &r->top, &r->dram_bytes);
    } else if (!rc && f[DRT_TOP_LOGGER].v) {
        r->have_dram = 1;
        r->dram_bytes = f[DRT_TOP_LOGGER].v;
    } else if (!rc && f[DRT_TOTAL_BYTES].seen) {
        r->have_dram = 1;
        r->dram_bytes = f[DRT_TOTAL_BYTES].v;
    }
    if (!rc && f[DRT_A_MID].seen) {
        rc = dot_noc_tensors(c, run, DRT_A_MID, &r->mid);
        if (!rc && !r->mid.reported)
            rc = simref_note(c, name, f[DRT_A_MID].line, f[DRT_A_MID].col,
                             "the 'Middle DOT NoC' counters are all zero: no per-tensor LLB-PE "
                             "bytes");
    }
    if (!rc && r->mid.reported) {
        r->have_llb_pe = 1;
        rc = tensor_total(c, run, &r->mid, &r->llb_pe_bytes);
    } else if (!rc && f[DRT_MID_LOGGER].v) {
        r->have_llb_pe = 1;
        r->llb_pe_bytes = f[DRT_MID_LOGGER].v;
    }
    return rc;
}

static const char *const summary_columns[] = { "design", "data", "cycles", "dram_bytes",
                                               "llb_pe_bytes", "flops" };
static const char *const traffic_columns[] = { "design", "data", "level", "tensor",
                                               "total_bytes" };
enum { COL_CYCLES = 2, COL_DRAM, COL_LLB_PE, COL_FLOPS };
enum { COL_TOTAL_BYTES = 4 };

static int summary_row(simref_ctx *c, simref_builder *b, const drt_run *run,
                       const drt_result *r, const char *design)
{
    size_t row;
    int rc = simref_builder_add_row(c, b, run->f[DRT_CYCLES].line, &row);
    if (!rc)
        rc = simref_builder_set(c, b, row, SIMREF_COL_DESIGN, design);
    if (!rc)
        rc = simref_builder_set(c, b, row, SIMREF_COL_DATA, "");
    if (!rc && r->have_cycles)
        rc = simref_builder_set_u64(c, b, row, COL_CYCLES, r->cycles);
    if (!rc && r->have_dram)
        rc = simref_builder_set_u64(c, b, row, COL_DRAM, r->dram_bytes);
    if (!rc && r->have_llb_pe)
        rc = simref_builder_set_u64(c, b, row, COL_LLB_PE, r->llb_pe_bytes);
    if (!rc && run->f[DRT_MACCS].seen)
        rc = simref_builder_set_u64(c, b, row, COL_FLOPS, run->f[DRT_MACCS].v);
    return rc;
}

static int tensor_rows(simref_ctx *c, simref_builder *b, const drt_tensors *t,
                       const char *level, const char *design)
{
    static const char *const tensor[3] = { "A", "B", "Z" };
    int rc = 0;
    for (int i = 0; !rc && t->reported && i < 3; i++) {
        size_t row;
        rc = simref_builder_add_row(c, b, t->line[i], &row);
        if (!rc)
            rc = simref_builder_set(c, b, row, SIMREF_COL_DESIGN, design);
        if (!rc)
            rc = simref_builder_set(c, b, row, SIMREF_COL_DATA, "");
        if (!rc)
            rc = simref_builder_set(c, b, row, SIMREF_COL_LEVEL, level);
        if (!rc)
            rc = simref_builder_set(c, b, row, SIMREF_COL_TENSOR, tensor[i]);
        if (!rc)
            rc = simref_builder_set_u64(c, b, row, COL_TOTAL_BYTES, t->bytes[i]);
    }
    return rc;
}

static int read_run(simref_ctx *c, tessel_simref_grain grain, const tessel_simref_input *in,
                    simref_builder *b)
{
    drt_run run;
    memset(&run, 0, sizeof(run));
    run.in = in;
    int rc = read_lines(c, &run);
    if (!rc)
        rc = require(c, &run, DRT_CYCLES, "(DRT prints it as 'runtime: S, cycles: N, ...')");
    if (!rc)
        rc = require_group(c, &run, DRT_A_TOP, 4, "(DRT prints it under 'Top DOT NoC')", 1);
    if (!rc)
        rc = require_group(c, &run, DRT_A_MID, 4, "(DRT prints it under 'Middle DOT NoC')", 0);
    if (!rc)
        rc = require_group(c, &run, DRT_A_BYTES, 3, "(MatRaptor prints 'A bytes', 'B bytes' "
                                                    "and 'O bytes' together)", 0);
    drt_result r;
    if (!rc)
        rc = interpret(c, &run, &r);
    if (rc)
        return rc;
    char design[1024];
    simref_stem(in->name, design, sizeof(design));
    if (grain == TESSEL_SIMREF_SUMMARY)
        return summary_row(c, b, &run, &r, design);
    rc = tensor_rows(c, b, &r.top, "LLB", design);
    return rc ? rc : tensor_rows(c, b, &r.mid, "PE", design);
}

int simref_read_drt(simref_ctx *c, tessel_simref_grain grain, const tessel_simref_input *in,
                    size_t n, simref_builder *b)
{
    SIMREF_BUILDER_FOR_GRAIN(b, c->alloc, grain, summary_columns, traffic_columns);
    for (size_t i = 0; i < n; i++) {
        int rc = read_run(c, grain, &in[i], b);
        if (rc)
            return rc;
    }
    if (b->nrows == 0)
        return tessel_diag_set(c->diag, TESSEL_EUNSUPPORTED, in[0].name, 0, 0, NULL,
                               "no per-tensor traffic in %s (only totals): compare a "
                               "summary.csv instead",
                               n == 1 ? "this DRT output" : "these DRT outputs");
    return 0;
}
