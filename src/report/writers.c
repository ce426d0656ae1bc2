/* traffic / summary writers: CSV and JSON from the same field lists, so
 * the two formats cannot drift apart. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "tessel/report.h"

/* Column names are a public interface (docs/outputs.md):
 * the core columns first, tessel's appended after them. */
static const char traffic_header[] =
    "design,workload,data,strategy,estimator,level,tensor,fills,reads,updates,writebacks,"
    "data_bytes,metadata_bytes,energy_pj,algorithmic,actual,skipped,gated,bumped_bytes,"
    "reads_elements,writes_elements,overflow_tiles_share,overflow_bytes,partition_bytes,"
    "worst_tile_bytes,skipped_reads,gated_reads,skipped_metadata_bytes,gated_metadata_bytes\n";
static const char summary_header[] =
    "design,workload,data,strategy,estimator,dram_bytes,compulsory_bytes,traffic_ratio,flops,"
    "energy_pj,cycles,bound,seconds,model_seconds,output_nnz,output_nnz_stderr,intersections,"
    "compute_cycles,compute_utilization,area_um2,stat_offgrid_edges,stat_design_may_differ,"
    "stat_path,tiled_metadata_bytes,tiles,storage_energy_pj,mac_energy_pj,"
    "intersect_energy_pj,leak_energy_pj,level_energy,spatial_cycles,imbalance,work_stdev,"
    "pe_utilization,algorithmic_computes,actual_computes,gated_computes,skipped_computes,"
    "level_cycles\n";

const char *tessel_report_traffic_header(void)
{
    return traffic_header;
}

const char *tessel_report_summary_header(void)
{
    return summary_header;
}

/* ------------------------------------------------------------------ */
/* One record being written: CSV fields or JSON members, built in a local
 * buffer and written with one fwrite when the record ends. A record longer
 * than the buffer (no CSV row is, with tessel_report_point's field sizes;
 * a JSON record with many escapes can be) goes out in pieces as the buffer
 * fills: never truncated. */
typedef struct emitter {
    FILE *f;
    int json;
    int nfields;
    size_t len;     /* bytes of buf in use */
    char buf[4096]; /* a CSV row of the longest fields, all quoted: < 3 KB */
} emitter;

static void emitter_init(emitter *e, FILE *f, int json)
{
    e->f = f;
    e->json = json;
    e->nfields = 0;
    e->len = 0;
}

static void flush(emitter *e)
{
    if (e->len)
        fwrite(e->buf, 1, e->len, e->f);
    e->len = 0;
}

/* Room for n more bytes (n <= sizeof(buf)) at the end of the buffer. */
static char *reserve(emitter *e, size_t n)
{
    if (sizeof(e->buf) - e->len < n)
        flush(e);
    return e->buf + e->len;
}

static void put(emitter *e, const char *s, size_t n)
{
    while (n > sizeof(e->buf) - e->len) {
        size_t room = sizeof(e->buf) - e->len;
        memcpy(e->buf + e->len, s, room);
        e->len += room;
        s += room;
        n -= room;
        flush(e);
    }
    memcpy(e->buf + e->len, s, n);
    e->len += n;
}

static void put_char(emitter *e, char c)
{
    *reserve(e, 1) = c;
    e->len++;
}

static void put_str(emitter *e, const char *s)
{
    put(e, s, strlen(s));
}

static void begin(emitter *e)
{
    e->nfields = 0;
    if (e->json)
        put_char(e, '{');
}

static void end(emitter *e)
{
    put_char(e, e->json ? '}' : '\n');
    flush(e);
}

static void key(emitter *e, const char *name)
{
    if (e->json) {
        if (e->nfields)
            put(e, ", ", 2);
        put_char(e, '"');
        put_str(e, name);
        put(e, "\": ", 3);
    } else if (e->nfields) {
        put_char(e, ',');
    }
    e->nfields++;
}

static void json_string(emitter *e, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    put_char(e, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            put_char(e, '\\');
            put_char(e, (char)c);
        } else if (c == '\n') {
            put(e, "\\n", 2);
        } else if (c == '\t') {
            put(e, "\\t", 2);
        } else if (c == '\r') {
            put(e, "\\r", 2);
        } else if (c < 0x20 || c == 0x7f) {
            char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
            put(e, u, sizeof(u));
        } else {
            put_char(e, (char)c);
        }
    }
    put_char(e, '"');
}

/* tessel_csv_field's rule (RFC 4180): quoted when holding , " CR or LF,
 * with quotes doubled. */
static void csv_field(emitter *e, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        put_str(e, s);
        return;
    }
    put_char(e, '"');
    for (const char *quote; (quote = strchr(s, '"')); s = quote + 1) {
        put(e, s, (size_t)(quote - s) + 1);
        put_char(e, '"');
    }
    put_str(e, s);
    put_char(e, '"');
}

static void emit_str(emitter *e, const char *name, const char *value)
{
    key(e, name);
    if (e->json)
        json_string(e, value);
    else
        csv_field(e, value);
}

/* The decimal digits of v, as %llu prints them; returns their count (<= 20). */
static size_t format_u64(char *out, uint64_t v)
{
    char reversed[20];
    size_t n = 0;
    do {
        reversed[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = reversed[n - 1 - i];
    return n;
}

static void emit_u64(emitter *e, const char *name, uint64_t value)
{
    key(e, name);
    e->len += format_u64(reserve(e, 20), value);
}

/* Doubles: the shortest of %.15g, %.16g, %.17g that strtod reads back as
 * v. Two fast paths give the same bytes without printf; anything else
 * takes the snprintf + strtod route.
 *
 * 1. An integer below 1e15 in magnitude (zeros included) has at most 15
 *    digits, so %.15g prints it exactly, in %f style (its exponent is below
 *    15), with no point: the sign ("-0" for -0.0), then the digits. They
 *    read back as v, so %.15g is the answer.
 * 2. For 1e-14 <= |v| < 1e22, |v| * 10^s for a suitable s is an exact
 *    fraction n / b of 128-bit integers whose integer part q has 18 to 20
 *    digits: the leading digits of |v|, and below them what decides their
 *    rounding. Rounding q to P digits, half to even on the exact value, is
 *    what %.Pg prints; whether strtod reads those digits back as v (to
 *    nearest, ties to even) is decided exactly from the distance to v and
 *    the gaps to v's neighbouring doubles, all scaled by 10^s * b. Like the
 *    contract itself, this takes printf and strtod to round exactly, in
 *    the default rounding mode (glibc does; tests/unit/test_writers.c
 *    compares both paths with the snprintf + strtod route). */

/* %.Pg text (P = precision) of the value digits x 10^(exponent + 1 - D),
 * D the number of digits: the sign, then %e style when the exponent is
 * below -4 or at least P, else %f style; trailing zeros of the fraction
 * dropped. Returns its length (< 32). */
static size_t format_g(char *out, int negative, uint64_t digits, int precision, int exponent)
{
    char text[20];
    while (digits >= 10 && digits % 10 == 0)
        digits /= 10;
    size_t len = format_u64(text, digits), n = 0;
    if (negative)
        out[n++] = '-';
    if (exponent < -4 || exponent >= precision) {
        out[n++] = text[0];
        if (len > 1) {
            out[n++] = '.';
            memcpy(out + n, text + 1, len - 1);
            n += len - 1;
        }
        out[n++] = 'e';
        out[n++] = exponent < 0 ? '-' : '+';
        unsigned magnitude = (unsigned)(exponent < 0 ? -exponent : exponent);
        if (magnitude < 10)
            out[n++] = '0';
        return n + format_u64(out + n, magnitude);
    }
    if (exponent < 0) {
        size_t zeros = (size_t)(-exponent - 1);
        memcpy(out + n, "0.", 2);
        memset(out + n + 2, '0', zeros);
        n += 2 + zeros;
        memcpy(out + n, text, len);
        return n + len;
    }
    size_t whole = (size_t)exponent + 1;
    if (len <= whole) {
        memcpy(out + n, text, len);
        memset(out + n + len, '0', whole - len);
        return n + whole;
    }
    memcpy(out + n, text, whole);
    out[n + whole] = '.';
    memcpy(out + n + whole + 1, text + whole, len - whole);
    return n + len + 1;
}

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 wide;
__extension__ typedef __int128 wide_signed;

static wide power(unsigned base, int exponent)
{
    wide p = 1;
    while (exponent-- > 0)
        p *= base;
    return p;
}

/* |v| x 10^s (see fast path 2 above) and the doubles around |v|. */
typedef struct scaled {
    wide q, r, b;       /* |v| x 10^s = q + r / b, 0 <= r < b */
    wide gap;           /* the gap to the next double up, x 10^s x b */
    int gap_below_half; /* the gap to the next double down is half of it */
    int even;           /* |v|'s significand is even: a tie reads back as |v| */
    unsigned ndigits;   /* of q: 18 to 20 */
    int exponent;       /* of q's leading digit, as a power of 10 of |v| */
} scaled;

/* For 1e-14 <= magnitude < 1e22; 0 when log10 misled the choice of s. */
static int scale(double magnitude, scaled *x)
{
    int binary_exponent;
    double fraction = frexp(magnitude, &binary_exponent);
    uint64_t significand = (uint64_t)ldexp(fraction, 53); /* magnitude = significand x 2^e */
    int e = binary_exponent - 53;
    int s = 18 - (int)floor(log10(magnitude)); /* -4 <= s <= 32 unless log10 is far off */
    wide n;                                    /* |v| x 10^s = n / b */
    if (s < -4 || s > 32)
        return 0;
    if (s >= 0) { /* significand x 5^s x 2^(s + e), below 2^53 x 5^32 < 2^128 */
        wide five = power(5, s);
        n = significand * five;
        x->gap = five;
        x->b = 1;
        if (s + e >= 0) {
            n <<= s + e;
            x->gap <<= s + e;
        } else if (s + e > -100) {
            x->b <<= -(s + e); /* below 2^72 when q >= 10^17, checked below */
        } else {
            return 0;
        }
    } else { /* |v| > 1e18 > 2^53, so e > 0: significand x 2^e / 10^-s, e <= 21 */
        n = (wide)significand << e;
        x->gap = (wide)1 << e;
        x->b = power(10, -s);
    }
    x->q = n / x->b;
    x->r = n % x->b;
    wide e17 = power(10, 17);
    if (x->q < e17 || x->q >= e17 * 1000)
        return 0;
    x->ndigits = 18 + (x->q >= e17 * 10) + (x->q >= e17 * 100);
    x->exponent = (int)x->ndigits - 1 - s;
    x->gap_below_half = significand == (uint64_t)1 << 52;
    x->even = significand % 2 == 0;
    return 1;
}

/* q rounded to `precision` digits (half to even on the exact n / b), and
 * whether strtod reads those digits back as |v|. May return 10^precision. */
static uint64_t round_digits(const scaled *x, int precision, int *reads_back)
{
    wide unit = power(10, (int)x->ndigits - precision);
    wide digits = x->q / unit, dropped = x->q % unit;
    if (dropped > unit / 2 || (dropped == unit / 2 && (x->r || digits % 2)))
        digits++;
    /* from |v| to the digits' value, x 10^s x b: below 10^5 x 2^72 */
    wide_signed distance = ((wide_signed)(digits * unit) - (wide_signed)x->q) *
                           (wide_signed)x->b - (wide_signed)x->r;
    wide twice = (wide)(distance < 0 ? -distance : distance) * 2;
    if (distance < 0 && x->gap_below_half)
        twice *= 2;
    *reads_back = twice < x->gap || (twice == x->gap && x->even);
    return (uint64_t)digits;
}

static size_t format_double_exact(char *out, double v)
{
    double magnitude = fabs(v);
    scaled x;
    if (!(magnitude >= 1e-14 && magnitude < 1e22) || !scale(magnitude, &x))
        return 0;
    for (int precision = 15;; precision++) {
        int reads_back;
        uint64_t digits = round_digits(&x, precision, &reads_back);
        if (reads_back || precision == 17) {
            int carried = digits == (uint64_t)power(10, precision);
            return format_g(out, signbit(v) != 0, digits, precision, x.exponent + carried);
        }
    }
}
#else
static size_t format_double_exact(char *out, double v)
{
    (void)out;
    (void)v;
    return 0;
}
#endif

/* Returns the length written (< 32). */
static size_t format_double(char *out, double v);

size_t tessel_report_format_double(char *out, double v)
{
    size_t n = format_double(out, v);
    out[n] = '\0';
    return n;
}

static size_t format_double(char *out, double v)
{
    if (fabs(v) < 1e15 && v == (double)(int64_t)v) {
        size_t n = 0;
        if (signbit(v))
            out[n++] = '-';
        return n + format_u64(out + n, (uint64_t)fabs(v));
    }
    size_t n = format_double_exact(out, v);
    if (n)
        return n;
    for (int prec = 15; prec <= 17; prec++) {
        n = (size_t)snprintf(out, 32, "%.*g", prec, v);
        if (prec == 17 || strtod(out, NULL) == v)
            break;
    }
    return n;
}

static void emit_double(emitter *e, const char *name, double value)
{
    key(e, name);
    if (!isfinite(value)) {
        if (e->json)
            put(e, "null", 4);
        return;
    }
    e->len += format_double(reserve(e, 32), value);
}

static void emit_i64(emitter *e, const char *name, int64_t value)
{
    key(e, name);
    char *out = reserve(e, 24);
    size_t n = 0;
    if (value < 0)
        out[n++] = '-';
    uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    e->len += n + format_u64(out + n, magnitude);
}

/* Level l's storage energy by action and its leakage, as the `level_energy`
 * column names them. */
static const char *const level_actions[6] = { "read", "write", "update", "metadata_read",
                                              "metadata_write", "leak" };

/* Appends s[0..k) at buf + *len, keeping room for a NUL; 0 when it does
 * not fit. */
static int append_text(char *buf, size_t n, size_t *len, const char *s, size_t k)
{
    if (k >= n - *len)
        return 0;
    memcpy(buf + *len, s, k);
    *len += k;
    return 1;
}

/* "DRAM=read:1.5,write:0,...,leak:2;LLB=..." (docs/outputs.md); values.c
 * hands the same text to bindings. Built with memcpy and format_double,
 * not snprintf: it is written for every point of a sweep or a binding. */
void report_level_energy_text(const tessel_report_point *p, char *buf, size_t n)
{
    size_t len = 0;
    int ok = n > 0;
    for (unsigned l = 0; ok && l < p->nlevels; l++) {
        ok = (!l || append_text(buf, n, &len, ";", 1)) &&
             append_text(buf, n, &len, p->level_name[l], strlen(p->level_name[l])) &&
             append_text(buf, n, &len, "=", 1);
        for (unsigned a = 0; a < 6 && ok; a++) {
            char cell[64]; /* ",metadata_write:" and a double: < 48 bytes */
            size_t k = 0, name = strlen(level_actions[a]);
            if (a)
                cell[k++] = ',';
            memcpy(cell + k, level_actions[a], name);
            k += name;
            cell[k++] = ':';
            double v = p->level_action_pj[l][a];
            if (isfinite(v))
                k += format_double(cell + k, v);
            ok = append_text(buf, n, &len, cell, k);
        }
    }
    if (n)
        buf[ok ? len : 0] = '\0';
}

/* "DRAM=1200;LLB=310.5;PEB=0" (docs/outputs.md): each level's busy cycles,
 * the cycles its bandwidth needs for the bytes across the boundary with
 * its parent (the roofline's per-level term; 0 for an unbounded level). */
void report_level_cycles_text(const tessel_report_point *p, char *buf, size_t n)
{
    size_t len = 0;
    int ok = n > 0;
    for (unsigned l = 0; ok && l < p->nlevels; l++) {
        char cell[48];
        size_t k = 0;
        double v = p->roofline.level_cycles[l];
        if (isfinite(v))
            k = format_double(cell, v);
        ok = (!l || append_text(buf, n, &len, ";", 1)) &&
             append_text(buf, n, &len, p->level_name[l], strlen(p->level_name[l])) &&
             append_text(buf, n, &len, "=", 1) && append_text(buf, n, &len, cell, k);
    }
    if (n)
        buf[ok ? len : 0] = '\0';
}

/* JSON only: which table, entry and per-action pJ priced each component. */
static void json_component(emitter *e, const char *name, const tessel_component_energy *c)
{
    static const char *const actions[TESSEL_ACTION_COUNT] = {
        "read", "write", "update", "metadata_read", "metadata_write", "compute", "leak"
    };
    put_str(e, "{\"component\": ");
    json_string(e, name);
    put_str(e, ", \"table\": ");
    json_string(e, c->table);
    put_str(e, ", \"entry\": ");
    json_string(e, c->entry);
    put_str(e, ", \"source\": ");
    json_string(e, c->source);
    /* how it was priced and the area of one instance (issue 23) */
    put_str(e, ", \"method\": ");
    json_string(e, c->method);
    put_str(e, ", \"area_um2\": ");
    if (isfinite(c->area_um2))
        e->len += format_double(reserve(e, 32), c->area_um2);
    else
        put(e, "null", 4);
    put_str(e, ", \"pj\": {");
    for (int a = 0; a < TESSEL_ACTION_COUNT; a++) {
        if (a)
            put(e, ", ", 2);
        put_char(e, '"');
        put_str(e, actions[a]);
        put(e, "\": ", 3);
        if (isfinite(c->pj[a]))
            e->len += format_double(reserve(e, 32), c->pj[a]);
        else
            put(e, "null", 4);
    }
    put_str(e, "}}");
}

static void json_energy_sources(emitter *e, const tessel_report_point *p)
{
    key(e, "energy_sources");
    put_char(e, '[');
    for (unsigned l = 0; l < p->nlevels; l++) {
        if (l)
            put(e, ", ", 2);
        json_component(e, p->level_name[l], &p->energy.level[l]);
    }
    put(e, ", ", 2);
    json_component(e, "MAC", &p->energy.mac);
    put(e, ", ", 2);
    json_component(e, "intersect", &p->energy.intersect);
    for (unsigned l = 0; l < p->nlevels; l++) /* priced networks (docs/models/energy.md) */
        if (p->energy.network[l].method[0]) {
            char name[TESSEL_SPEC_NAME_MAX + 16];
            snprintf(name, sizeof(name), "%s:network", p->level_name[l]);
            put(e, ", ", 2);
            json_component(e, name, &p->energy.network[l]);
        }
    put_char(e, ']');
}

static int stream_status(FILE *f)
{
    return ferror(f) ? TESSEL_EIO : TESSEL_OK;
}

/* ------------------------------------------------------------------ */
static void point_keys(emitter *e, const tessel_report_point *p)
{
    emit_str(e, "design", p->design);
    emit_str(e, "workload", p->workload);
    emit_str(e, "data", p->data);
    emit_str(e, "strategy", p->strategy);
    emit_str(e, "estimator", p->estimator);
}

static void traffic_record(emitter *e, const tessel_report_point *p, unsigned l, unsigned t)
{
    const tessel_traffic *tr = &p->traffic[l][t];
    begin(e);
    point_keys(e, p);
    emit_str(e, "level", p->level_name[l]);
    emit_str(e, "tensor", p->tensor_name[t]);
    emit_u64(e, "fills", tr->fills);
    emit_u64(e, "reads", tr->reads);
    emit_u64(e, "updates", tr->updates);
    emit_u64(e, "writebacks", tr->writebacks);
    emit_u64(e, "data_bytes", tr->data_bytes);
    emit_u64(e, "metadata_bytes", tr->metadata_bytes);
    emit_double(e, "energy_pj", p->access[l][t].energy_pj);
    emit_u64(e, "algorithmic", tr->algorithmic);
    /* model.h: fills + updates + gated + skipped = algorithmic; write-backs
     * are not part of that balance, so they are not counted as actual. */
    emit_u64(e, "actual", tr->fills + tr->updates);
    emit_u64(e, "skipped", tr->skipped);
    emit_u64(e, "gated", tr->gated);
    emit_u64(e, "bumped_bytes", tr->bumped_bytes);
    emit_u64(e, "reads_elements", p->reads_elements[l][t]);
    emit_u64(e, "writes_elements", p->writes_elements[l][t]);
    /* rule 4: of the tiles moved in (inputs: fills; the output: its
     * write-backs), the share larger than the partition */
    uint64_t moved = t == 0 ? tr->writebacks : tr->fills;
    emit_double(e, "overflow_tiles_share",
                moved ? (double)tr->overflow_tiles / (double)moved : 0.0);
    emit_u64(e, "overflow_bytes", tr->overflow_bytes);
    emit_u64(e, "partition_bytes", tr->partition_bytes);
    emit_u64(e, "worst_tile_bytes", tr->worst_tile_bytes);
    /* scalar action_optimization at the compute (model_scalar.c) */
    emit_u64(e, "skipped_reads", tr->skipped_reads);
    emit_u64(e, "gated_reads", tr->gated_reads);
    emit_u64(e, "skipped_metadata_bytes", tr->skipped_metadata_bytes);
    emit_u64(e, "gated_metadata_bytes", tr->gated_metadata_bytes);
    end(e);
}

/* A network row (`timing: pipeline`, docs/outputs.md): the values level l's
 * network delivers of tensor t to its child, their bytes in the child's
 * value width, their energy (empty when not priced); every other column 0. */
static void network_record(emitter *e, const tessel_report_point *p, unsigned l, unsigned t)
{
    char level[TESSEL_SPEC_NAME_MAX + 16];
    snprintf(level, sizeof(level), "%s:network", p->level_name[l]);
    double values = p->pipeline.network_values[l][t];
    static const char *const zero[] = { "fills", "reads", "updates", "writebacks" };
    begin(e);
    point_keys(e, p);
    emit_str(e, "level", level);
    emit_str(e, "tensor", p->tensor_name[t]);
    for (unsigned i = 0; i < 4; i++)
        emit_u64(e, zero[i], 0);
    emit_u64(e, "data_bytes", (uint64_t)(p->pipeline.network_bytes[l][t] + 0.5));
    emit_u64(e, "metadata_bytes", 0);
    emit_double(e, "energy_pj", p->pipeline.network_pj[l][t]);
    static const char *const zero2[] = { "algorithmic", "actual", "skipped", "gated",
                                         "bumped_bytes" };
    for (unsigned i = 0; i < 5; i++)
        emit_u64(e, zero2[i], 0);
    emit_u64(e, "reads_elements", (uint64_t)(values + 0.5));
    emit_u64(e, "writes_elements", 0);
    emit_double(e, "overflow_tiles_share", 0.0);
    emit_u64(e, "overflow_bytes", 0);
    emit_u64(e, "partition_bytes", 0);
    emit_u64(e, "worst_tile_bytes", 0);
    static const char *const zero3[] = { "skipped_reads", "gated_reads",
                                         "skipped_metadata_bytes", "gated_metadata_bytes" };
    for (unsigned i = 0; i < 4; i++)
        emit_u64(e, zero3[i], 0);
    end(e);
}

/* Calls network_record for every (level, tensor) whose network delivered values. */
static void network_records(emitter *e, const tessel_report_point *p, int *first)
{
    if (!p->pipeline.present)
        return;
    for (unsigned l = 0; l < p->nlevels; l++)
        for (unsigned t = 0; t < p->ntensors; t++) {
            if (!(p->pipeline.network_values[l][t] > 0))
                continue;
            if (e->json) {
                fputs(*first ? "\n  " : ",\n  ", e->f);
                *first = 0;
            }
            network_record(e, p, l, t);
        }
}

static void summary_record(emitter *e, const tessel_report_point *p)
{
    begin(e);
    point_keys(e, p);
    emit_u64(e, "dram_bytes", p->dram_bytes);
    emit_u64(e, "compulsory_bytes", p->compulsory_bytes);
    emit_double(e, "traffic_ratio", p->traffic_ratio);
    emit_u64(e, "flops", p->macs);
    emit_double(e, "energy_pj", p->energy_pj);
    emit_double(e, "cycles", p->roofline.cycles);
    emit_str(e, "bound", p->bound);
    emit_double(e, "seconds", p->roofline.seconds);
    emit_double(e, "model_seconds", p->model_seconds);
    emit_u64(e, "output_nnz", p->output_nnz);
    emit_double(e, "output_nnz_stderr", p->output_nnz_stderr);
    emit_u64(e, "intersections", p->intersections);
    emit_double(e, "compute_cycles", p->roofline.compute_cycles);
    emit_double(e, "compute_utilization", p->roofline.compute_utilization);
    emit_double(e, "area_um2", p->area_um2);
    emit_u64(e, "stat_offgrid_edges", p->stat_offgrid_edges);
    emit_u64(e, "stat_design_may_differ", p->stat_design_may_differ);
    emit_str(e, "stat_path", p->stat_path);
    emit_i64(e, "tiled_metadata_bytes", p->tiled_metadata_bytes);
    emit_str(e, "tiles", p->tiles);
    emit_double(e, "storage_energy_pj", p->storage_energy_pj);
    emit_double(e, "mac_energy_pj", p->mac_energy_pj);
    emit_double(e, "intersect_energy_pj", p->intersect_energy_pj);
    emit_double(e, "leak_energy_pj", p->leak_energy_pj);
    char levels[REPORT_LEVEL_ENERGY_MAX];
    report_level_energy_text(p, levels, sizeof(levels));
    emit_str(e, "level_energy", levels);
    emit_double(e, "spatial_cycles", p->spatial_cycles);
    emit_double(e, "imbalance", p->imbalance);
    emit_double(e, "work_stdev", p->work_stdev);
    emit_double(e, "pe_utilization", p->pe_utilization);
    /* the compute in Sparseloop's words (model_scalar.c) */
    emit_u64(e, "algorithmic_computes", p->computes_algorithmic);
    emit_u64(e, "actual_computes", p->computes_actual);
    emit_u64(e, "gated_computes", p->computes_gated);
    emit_u64(e, "skipped_computes", p->computes_skipped);
    report_level_cycles_text(p, levels, sizeof(levels));
    emit_str(e, "level_cycles", levels);
    if (e->json)
        json_energy_sources(e, p);
    end(e);
}

int tessel_report_traffic_csv_rows(FILE *f, const tessel_report_point *p)
{
    emitter e;
    emitter_init(&e, f, 0);
    for (unsigned l = 0; l < p->nlevels; l++)
        for (unsigned t = 0; t < p->ntensors; t++)
            traffic_record(&e, p, l, t);
    network_records(&e, p, NULL);
    return stream_status(f);
}

int tessel_report_traffic_csv_row(FILE *f, const tessel_report_point *p, unsigned level,
                                  unsigned tensor)
{
    if (level >= p->nlevels || tensor >= p->ntensors)
        return TESSEL_EINVAL;
    emitter e;
    emitter_init(&e, f, 0);
    traffic_record(&e, p, level, tensor);
    return stream_status(f);
}

int tessel_report_summary_csv_row(FILE *f, const tessel_report_point *p)
{
    emitter e;
    emitter_init(&e, f, 0);
    summary_record(&e, p);
    return stream_status(f);
}

int tessel_report_traffic_json(FILE *f, const tessel_report_point *p, size_t n)
{
    emitter e;
    emitter_init(&e, f, 1);
    int first = 1;
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        for (unsigned l = 0; l < p[i].nlevels; l++)
            for (unsigned t = 0; t < p[i].ntensors; t++) {
                fputs(first ? "\n  " : ",\n  ", f);
                first = 0;
                traffic_record(&e, &p[i], l, t);
            }
    for (size_t i = 0; i < n; i++)
        network_records(&e, &p[i], &first);
    fputs(first ? "]\n" : "\n]\n", f);
    return stream_status(f);
}

int tessel_report_summary_json(FILE *f, const tessel_report_point *p, size_t n)
{
    emitter e;
    emitter_init(&e, f, 1);
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        summary_record(&e, &p[i]);
    }
    fputs(n ? "\n]\n" : "]\n", f);
    return stream_status(f);
}
