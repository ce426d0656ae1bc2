/* traffic / summary writers: CSV and JSON from the same field lists, so
 * the two formats cannot drift apart. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/report.h"

/* Column names are a public interface (DESIGN.md "Outputs", README.md):
 * DESIGN.md's columns first, tessel's appended after them. */
static const char traffic_header[] =
    "design,workload,data,strategy,estimator,level,tensor,fills,reads,updates,writebacks,"
    "data_bytes,metadata_bytes,energy_pj,algorithmic,actual,skipped,gated,bumped_bytes\n";
static const char summary_header[] =
    "design,workload,data,strategy,estimator,dram_bytes,compulsory_bytes,traffic_ratio,flops,"
    "energy_pj,cycles,bound,seconds,model_seconds,output_nnz,intersections,compute_cycles,"
    "compute_utilization,area_um2\n";

const char *tessel_report_traffic_header(void)
{
    return traffic_header;
}

const char *tessel_report_summary_header(void)
{
    return summary_header;
}

/* ------------------------------------------------------------------ */
/* One record being written: CSV fields or JSON members. */
typedef struct emitter {
    FILE *f;
    int json;
    int nfields;
} emitter;

static void begin(emitter *e)
{
    e->nfields = 0;
    if (e->json)
        fputc('{', e->f);
}

static void end(emitter *e)
{
    fputs(e->json ? "}" : "\n", e->f);
}

static void key(emitter *e, const char *name)
{
    if (e->json)
        fprintf(e->f, "%s\"%s\": ", e->nfields ? ", " : "", name);
    else if (e->nfields)
        fputc(',', e->f);
    e->nfields++;
}

static void json_string(FILE *f, const char *s)
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

static void emit_str(emitter *e, const char *name, const char *value)
{
    key(e, name);
    if (e->json)
        json_string(e->f, value);
    else
        tessel_csv_field(e->f, value);
}

static void emit_u64(emitter *e, const char *name, uint64_t value)
{
    key(e, name);
    fprintf(e->f, "%llu", (unsigned long long)value);
}

/* The shortest of %.15g, %.16g, %.17g that reads back as v. */
static void format_double(char *buf, size_t n, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (prec == 17 || strtod(buf, NULL) == v)
            return;
    }
}

static void emit_double(emitter *e, const char *name, double value)
{
    key(e, name);
    if (!isfinite(value)) {
        if (e->json)
            fputs("null", e->f);
        return;
    }
    char buf[40];
    format_double(buf, sizeof(buf), value);
    fputs(buf, e->f);
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
    end(e);
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
    emit_u64(e, "intersections", p->intersections);
    emit_double(e, "compute_cycles", p->roofline.compute_cycles);
    emit_double(e, "compute_utilization", p->roofline.compute_utilization);
    emit_double(e, "area_um2", p->area_um2);
    end(e);
}

int tessel_report_traffic_csv_rows(FILE *f, const tessel_report_point *p)
{
    emitter e = { f, 0, 0 };
    for (unsigned l = 0; l < p->nlevels; l++)
        for (unsigned t = 0; t < p->ntensors; t++)
            traffic_record(&e, p, l, t);
    return stream_status(f);
}

int tessel_report_traffic_csv_row(FILE *f, const tessel_report_point *p, unsigned level,
                                  unsigned tensor)
{
    if (level >= p->nlevels || tensor >= p->ntensors)
        return TESSEL_EINVAL;
    emitter e = { f, 0, 0 };
    traffic_record(&e, p, level, tensor);
    return stream_status(f);
}

int tessel_report_summary_csv_row(FILE *f, const tessel_report_point *p)
{
    emitter e = { f, 0, 0 };
    summary_record(&e, p);
    return stream_status(f);
}

int tessel_report_traffic_json(FILE *f, const tessel_report_point *p, size_t n)
{
    emitter e = { f, 1, 0 };
    int first = 1;
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        for (unsigned l = 0; l < p[i].nlevels; l++)
            for (unsigned t = 0; t < p[i].ntensors; t++) {
                fputs(first ? "\n  " : ",\n  ", f);
                first = 0;
                traffic_record(&e, &p[i], l, t);
            }
    fputs(first ? "]\n" : "\n]\n", f);
    return stream_status(f);
}

int tessel_report_summary_json(FILE *f, const tessel_report_point *p, size_t n)
{
    emitter e = { f, 1, 0 };
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        summary_record(&e, &p[i]);
    }
    fputs(n ? "\n]\n" : "]\n", f);
    return stream_status(f);
}
