/* Unit tests of src/report: energy accounting, roofline input, CSV/JSON
 * writers (headers, quoting, numbers), atomic output directories, the
 * human summary, out-of-memory behaviour. Specs and results are built by
 * hand so that the module is tested on its own. */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessel/report.h"
#include "test_alloc.h"

/* docs/outputs.md, the core columns: the columns every report starts with. */
#define DESIGN_TRAFFIC_COLUMNS                                                                    \
    "design,workload,data,strategy,estimator,level,tensor,fills,reads,updates,writebacks,"       \
    "data_bytes,metadata_bytes,energy_pj"
#define DESIGN_SUMMARY_COLUMNS                                                                    \
    "design,workload,data,strategy,estimator,dram_bytes,compulsory_bytes,traffic_ratio,flops,"   \
    "energy_pj,cycles,bound,seconds"

/* ------------------------------------------------------------------ */
/* Fixtures: a two-level SpMSpM design (DRAM -> LLB x 2 instances). */

static void make_spec(tessel_spec *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "toy");
    s->workload.kind = TESSEL_WORKLOAD_SPMSPM;
    s->workload.ntensors = 3;
    snprintf(s->workload.tensor[0].name, TESSEL_SPEC_NAME_MAX, "Z");
    snprintf(s->workload.tensor[1].name, TESSEL_SPEC_NAME_MAX, "A");
    snprintf(s->workload.tensor[2].name, TESSEL_SPEC_NAME_MAX, "B");
    s->nlevels = 2;
    snprintf(s->level[0].name, TESSEL_SPEC_NAME_MAX, "DRAM");
    s->level[0].bandwidth = 16; /* GB/s: 16 bytes per cycle at 1 GHz */
    s->level[0].instances = 1;
    s->level[0].word_bits = 64;
    snprintf(s->level[1].name, TESSEL_SPEC_NAME_MAX, "LLB");
    s->level[1].capacity = 1 << 20;
    s->level[1].bandwidth = 256;
    s->level[1].instances = 2;
    s->level[1].word_bits = 256; /* overridden by the energy width below */
    s->compute.pes = 4;
    s->compute.macs_per_pe = 1;
    s->compute.clock_ghz = 1.0;
}

static void make_energy(tessel_design_energy *e)
{
    memset(e, 0, sizeof(*e));
    /* DRAM: width 0 -> the spec's word_bits (64 bits = 8 bytes). */
    double dram[TESSEL_ACTION_COUNT] = { 64, 32, 16, 8, 4, 0, 0.5 };
    /* LLB: 128-bit words (16 bytes) from the energy table. */
    double llb[TESSEL_ACTION_COUNT] = { 2, 1, 0.5, 0.25, 0.125, 0, 0.25 };
    memcpy(e->level[0].pj, dram, sizeof(dram));
    memcpy(e->level[1].pj, llb, sizeof(llb));
    e->level[1].width_bits = 128;
    e->mac.pj[TESSEL_ACTION_COMPUTE] = 1.5;
    e->mac.pj[TESSEL_ACTION_LEAK] = 0.125;
    e->intersect.pj[TESSEL_ACTION_COMPUTE] = 0.75;
    e->area_um2 = 12345.5;
    snprintf(e->level[0].table, sizeof(e->level[0].table), "toy.yaml");
    snprintf(e->level[0].entry, sizeof(e->level[0].entry), "DDR");
}

static void make_result(tessel_result *r)
{
    memset(r, 0, sizeof(*r));
    r->nlevels = 2;
    r->ntensors = 3;
    snprintf(r->estimator, sizeof(r->estimator), "exact");
    for (unsigned t = 0; t < 3; t++) {
        tessel_traffic *d = &r->traffic[0][t], *b = &r->traffic[1][t];
        uint64_t k = t + 1;
        d->fills = 0;
        d->reads = 10 * k;
        d->data_bytes = 800 * k;
        d->metadata_bytes = 80 * k;
        d->child_read_data = 800 * k;
        d->child_read_metadata = 80 * k;
        d->child_write_data = t == 0 ? 160 : 0;
        d->child_write_metadata = t == 0 ? 16 : 0;
        b->fills = 10 * k;
        b->updates = t == 0 ? 2 : 0;
        b->writebacks = t == 0 ? 3 : 0;
        b->reads = 100 * k;
        b->data_bytes = 800 * k;
        b->metadata_bytes = 80 * k;
        b->in_data = 800 * k;
        b->in_metadata = 80 * k;
        b->out_data = t == 0 ? 160 : 0;
        b->out_metadata = t == 0 ? 16 : 0;
        b->child_read_data = 3200 * k;
        b->child_read_metadata = 320 * k;
        b->child_write_data = t == 0 ? 64 : 0;
        b->algorithmic = 40 * k;
        b->skipped = 20 * k;
        b->gated = 10 * k - (t == 0 ? 2 : 0);
        b->bumped_bytes = 7 * t;
        /* rule 4: Z overflows in 1 of its 3 write-backs, each input in
         * half of its fills */
        b->overflow_tiles = t == 0 ? 1 : 5 * k;
        b->overflow_bytes = t == 0 ? 6 : 7 * t;
        b->partition_bytes = 500;
        b->worst_tile_bytes = 900 * k;
    }
    r->macs = 1000;
    r->intersections = 400;
    r->output_nnz = 77;
    r->compulsory_bytes = 4000;
    r->dram_bytes = 5000;
    r->seconds = 0.25;
}

static void make_point(tessel_report_point *p)
{
    tessel_spec s;
    tessel_result r;
    tessel_design_energy e;
    make_spec(&s);
    make_result(&r);
    make_energy(&e);
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, "G51*G51^T", "fixed", p, NULL), 0);
}

/* ------------------------------------------------------------------ */
/* Energy accounting */

/* Scalar skipping and gating (docs/models/energy.md): at the LLB (128-bit
 * words, 32-bit values: 4 values a word) 40 skipped and 8 gated scalar
 * reads are 12 words at a gated read of 0.0625 pJ = 0.75 pJ; 64 skipped
 * format bytes are 4 more metadata-read words at 0.25 = 1 pJ; 32 gated
 * format bytes 2 words at a gated metadata read of 0.5 = 1 pJ. A's storage
 * energy grows by 2.75 pJ, counted in the level's `read` (gated) and
 * `metadata_read` terms. */
START_TEST(skipped_and_gated_energy)
{
    tessel_spec s;
    tessel_result r;
    tessel_design_energy e;
    tessel_report_point base, p;
    make_spec(&s);
    s.level[1].value_bits = 32;
    make_result(&r);
    make_energy(&e);
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, "d", "fixed", &base, NULL), 0);
    e.level[1].gated_pj[TESSEL_GATED_READ] = 0.0625;
    e.level[1].gated_pj[TESSEL_GATED_METADATA_READ] = 0.5;
    tessel_traffic *a = &r.traffic[1][1];
    a->skipped_reads = 40;
    a->gated_reads = 8;
    a->skipped_metadata_bytes = 64;
    a->gated_metadata_bytes = 32;
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, "d", "fixed", &p, NULL), 0);
    ck_assert(fabs(p.access[1][1].energy_pj - base.access[1][1].energy_pj - 2.75) < 1e-9);
    ck_assert(fabs(p.access[1][1].gated_energy_pj - 1.75) < 1e-9);
    ck_assert(fabs(p.access[1][1].metadata_reads - base.access[1][1].metadata_reads - 4) < 1e-9);
    ck_assert(fabs(p.level_action_pj[1][0] - base.level_action_pj[1][0] - 1.75) < 1e-9);
    ck_assert(fabs(p.level_action_pj[1][3] - base.level_action_pj[1][3] - 1.0) < 1e-9);
    ck_assert(fabs(p.energy_pj - base.energy_pj - 2.75) < 1e-9);
}
END_TEST

/* reads_elements / writes_elements: the child's bytes over the child's
 * value width below the innermost level; at the innermost level the MACs'
 * reads (the level's `reads`: one value per operand per multiply, fewer
 * for an uncompressed output) and one result of the output per multiply. */
START_TEST(element_counts)
{
    tessel_spec s;
    tessel_result r;
    tessel_design_energy e;
    tessel_report_point p;
    make_spec(&s);
    make_result(&r);
    make_energy(&e);
    s.level[0].value_bits = 64; /* the backing store's width is not the one that counts */
    s.level[1].value_bits = 32;
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, "d", "fixed", &p, NULL), 0);
    for (unsigned t = 0; t < 3; t++) {
        ck_assert_uint_eq(p.reads_elements[0][t], 800 * (t + 1) / 4);
        ck_assert_uint_eq(p.writes_elements[0][t], t == 0 ? 40 : 0);
        ck_assert_uint_eq(p.reads_elements[1][t], 100 * (t + 1));
        ck_assert_uint_eq(p.writes_elements[1][t], t == 0 ? 1000 : 0);
    }
    /* A width that is not a whole number of bytes: the nearest count. */
    s.level[1].value_bits = 12;
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, "d", "fixed", &p, NULL), 0);
    ck_assert_uint_eq(p.reads_elements[0][0], 533);  /* 800 B x 8 / 12 = 533.3 */
    ck_assert_uint_eq(p.reads_elements[0][1], 1067); /* 1600 B x 8 / 12 = 1066.7 */
    ck_assert_uint_eq(p.writes_elements[0][0], 107); /* 160 B x 8 / 12 = 106.7 */
    /* They reach both writers. */
    char *rows = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&rows, &n);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(tessel_report_traffic_csv_row(f, &p, 0, 1), 0);
    ck_assert_int_eq(tessel_report_traffic_json(f, &p, 1), 0);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_ptr_nonnull(strstr(rows, ",1067,0,0,0,0,0,0,0,0,0\n"));
    ck_assert_ptr_nonnull(strstr(rows, "\"reads_elements\": 533, \"writes_elements\": 107"));
    free(rows);
}
END_TEST

START_TEST(energy_arithmetic)
{
    tessel_spec s;
    tessel_result r;
    tessel_design_energy e;
    make_spec(&s);
    make_result(&r);
    make_energy(&e);
    tessel_report_point p;
    tessel_diag d;
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, "G51", "fixed", &p, &d), 0);
    ck_assert_str_eq(p.design, "toy");
    ck_assert_str_eq(p.workload, "spmspm");
    ck_assert_str_eq(p.data, "G51");
    ck_assert_str_eq(p.strategy, "fixed");
    ck_assert_str_eq(p.estimator, "exact");
    ck_assert_str_eq(p.level_name[1], "LLB");
    ck_assert_str_eq(p.tensor_name[0], "Z");

    /* DRAM, Z: 8-byte words (spec word_bits); reads (0 + 800) / 8 = 100 x 64,
     * writes 0, updates 160 / 8 = 20 x 16, metadata reads 80 / 8 = 10 x 8,
     * metadata writes 16 / 8 = 2 x 4 (child_write_metadata). */
    const tessel_report_access *a = &p.access[0][0];
    ck_assert(a->word_bits == 64);
    ck_assert(a->reads == 100 && a->writes == 0 && a->updates == 20);
    ck_assert(a->metadata_reads == 10 && a->metadata_writes == 2);
    ck_assert(a->energy_pj == 100 * 64 + 20 * 16 + 10 * 8 + 2 * 4);
    /* DRAM, B (k = 3): reads 2400 / 8 = 300 x 64; metadata reads 240 / 8 = 30 x 8. */
    a = &p.access[0][2];
    ck_assert(a->energy_pj == 300 * 64 + 30 * 8);
    /* LLB, Z: 16-byte words (energy width beats spec word_bits):
     * reads (160 + 3200) / 16 = 210 x 2; writes 800 / 16 = 50 x 1;
     * updates 64 / 16 = 4 x 0.5; metadata reads (16 + 320) / 16 = 21 x 0.25;
     * metadata writes 80 / 16 = 5 x 0.125. */
    a = &p.access[1][0];
    ck_assert(a->word_bits == 128);
    ck_assert(a->reads == 210 && a->writes == 50 && a->updates == 4);
    ck_assert(a->metadata_reads == 21 && a->metadata_writes == 5);
    ck_assert(a->energy_pj == 210 * 2 + 50 * 1 + 4 * 0.5 + 21 * 0.25 + 5 * 0.125);
    /* LLB, A (k = 2): reads 6400 / 16 = 400 x 2; writes 1600 / 16 = 100 x 1;
     * metadata reads 640 / 16 = 40 x 0.25; metadata writes 160 / 16 = 10 x 0.125. */
    a = &p.access[1][1];
    ck_assert(a->energy_pj == 400 * 2 + 100 * 1 + 40 * 0.25 + 10 * 0.125);

    double storage = 0;
    for (unsigned l = 0; l < 2; l++) {
        double level = 0;
        for (unsigned t = 0; t < 3; t++)
            level += p.access[l][t].energy_pj;
        ck_assert(p.level_energy_pj[l] == level);
        storage += level;
    }
    ck_assert(p.storage_energy_pj == storage);
    ck_assert(p.mac_energy_pj == 1000 * 1.5);
    ck_assert(p.intersect_energy_pj == 400 * 0.75);

    /* Roofline input: every byte each level reads or writes. */
    double dram_bytes = 0, llb_bytes = 0;
    for (unsigned t = 0; t < 3; t++) {
        uint64_t k = t + 1;
        dram_bytes += 880.0 * k + (t == 0 ? 176 : 0);
        llb_bytes += 880.0 * k + 3520.0 * k + (t == 0 ? 176 + 64 : 0);
    }
    ck_assert(p.level_bytes[0] == dram_bytes);
    ck_assert(p.level_bytes[1] == llb_bytes);
    tessel_roofline rl;
    tessel_roofline_evaluate(&s, 1000, p.level_bytes, &rl);
    ck_assert(memcmp(&rl, &p.roofline, sizeof(rl)) == 0);
    ck_assert_str_eq(p.bound, tessel_roofline_bound_name(&s, &rl));

    /* Leak: per cycle DRAM 0.5 x 1 + LLB 0.25 x 2 instances + MAC 0.125 x 4 PEs. */
    ck_assert(p.leak_energy_pj == p.roofline.cycles * (0.5 + 0.5 + 0.5));
    ck_assert(p.energy_pj == storage + 1500 + 300 + p.leak_energy_pj);

    /* by action: DRAM's reads are Z 100 + A 200 + B 300 words x 64 pJ; its
     * leak 0.5 per cycle; LLB's metadata writes Z 5 + A 10 + B 15 x 0.125 */
    ck_assert(p.level_action_pj[0][0] == 600 * 64);
    ck_assert(p.level_action_pj[0][5] == p.roofline.cycles * 0.5);
    ck_assert(p.level_action_pj[1][4] == 30 * 0.125);
    ck_assert(p.level_action_pj[1][5] == p.roofline.cycles * 0.5);
    double terms = 0, level_leak = 0;
    for (unsigned l = 0; l < 2; l++) {
        double storage_l = 0;
        for (unsigned ac = 0; ac < 6; ac++)
            terms += p.level_action_pj[l][ac];
        for (unsigned ac = 0; ac < 5; ac++)
            storage_l += p.level_action_pj[l][ac];
        ck_assert(fabs(storage_l - p.level_energy_pj[l]) <= 1e-9 * p.level_energy_pj[l]);
        level_leak += p.level_action_pj[l][5];
    }
    ck_assert(fabs(terms + 1500 + 300 + (p.leak_energy_pj - level_leak) - p.energy_pj) <=
              1e-9 * p.energy_pj);

    ck_assert(p.traffic_ratio == 1.25);
    ck_assert_uint_eq(p.macs, 1000);
    ck_assert_uint_eq(p.output_nnz, 77);
    ck_assert(p.model_seconds == 0.25);
    ck_assert(p.area_um2 == 12345.5);
}
END_TEST

START_TEST(word_size_default_and_fractions)
{
    tessel_spec s;
    tessel_result r;
    tessel_design_energy e;
    make_spec(&s);
    make_result(&r);
    make_energy(&e);
    s.level[0].word_bits = 0; /* neither energy nor spec: 64 bits */
    e.level[1].width_bits = 0;
    s.level[1].word_bits = 48; /* 6-byte words: fractional accesses */
    r.compulsory_bytes = 0;
    tessel_report_point p;
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, NULL, NULL, &p, NULL), 0);
    ck_assert(p.access[0][0].word_bits == 64);
    ck_assert(p.access[1][0].word_bits == 48);
    ck_assert(p.access[1][0].writes == 800.0 * 8 / 48);
    ck_assert(p.traffic_ratio == 0);
    ck_assert_str_eq(p.data, "");
    ck_assert_str_eq(p.strategy, "");
}
END_TEST

START_TEST(build_rejects_mismatch)
{
    tessel_spec s;
    tessel_result r;
    tessel_design_energy e;
    make_spec(&s);
    make_result(&r);
    make_energy(&e);
    tessel_report_point p;
    tessel_diag d;
    tessel_diag_clear(&d);
    r.nlevels = 3;
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, "x", "y", &p, &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "3 levels"));
    r.nlevels = 2;
    char label[TESSEL_REPORT_LABEL_MAX + 10];
    memset(label, 'x', sizeof(label) - 1);
    label[sizeof(label) - 1] = '\0';
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, label, "y", &p, &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "data"));
    /* An estimator name filling all 16 bytes without a NUL is cut, not overrun. */
    memset(r.estimator, 'e', sizeof(r.estimator));
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, "x", "y", &p, &d), TESSEL_EINVAL);
}
END_TEST

START_TEST(workload_names)
{
    ck_assert_str_eq(tessel_report_workload_name(TESSEL_WORKLOAD_SPMSPM), "spmspm");
    ck_assert_str_eq(tessel_report_workload_name(TESSEL_WORKLOAD_SPMV), "spmv");
    ck_assert_str_eq(tessel_report_workload_name(TESSEL_WORKLOAD_TTM), "ttm");
    ck_assert_str_eq(tessel_report_workload_name(TESSEL_WORKLOAD_MTTKRP), "mttkrp");
    ck_assert_str_eq(tessel_report_workload_name(TESSEL_WORKLOAD_OTHER), "other");
    ck_assert_str_eq(tessel_report_workload_name((tessel_workload_kind)99), "other");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Writers */

/* The text written by fn into a memory stream (caller frees). */
static char *capture_rows(int (*fn)(FILE *, const tessel_report_point *),
                          const tessel_report_point *p)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fn(f, p), 0);
    fclose(f);
    return buf;
}

static char *capture_json(int (*fn)(FILE *, const tessel_report_point *, size_t),
                          const tessel_report_point *p, size_t count)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fn(f, p, count), 0);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_ptr_nonnull(buf);
    return buf;
}

static unsigned count_char(const char *s, char c)
{
    unsigned n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

/* Fields of a CSV line (commas outside quotes, plus one). */
static unsigned csv_fields(const char *s)
{
    unsigned n = 1;
    int quoted = 0;
    for (; *s && *s != '\n'; s++) {
        quoted ^= *s == '"';
        n += !quoted && *s == ',';
    }
    return n;
}

START_TEST(headers_match_design)
{
    const char *t = tessel_report_traffic_header();
    const char *s = tessel_report_summary_header();
    ck_assert_int_eq(strncmp(t, DESIGN_TRAFFIC_COLUMNS ",", strlen(DESIGN_TRAFFIC_COLUMNS) + 1),
                     0);
    ck_assert_int_eq(strncmp(s, DESIGN_SUMMARY_COLUMNS ",", strlen(DESIGN_SUMMARY_COLUMNS) + 1),
                     0);
    ck_assert_str_eq(t, DESIGN_TRAFFIC_COLUMNS
                     ",algorithmic,actual,skipped,gated,bumped_bytes,"
                     "reads_elements,writes_elements,overflow_tiles_share,overflow_bytes,"
                     "partition_bytes,worst_tile_bytes,skipped_reads,gated_reads,"
                     "skipped_metadata_bytes,gated_metadata_bytes\n");
    ck_assert_str_eq(s, DESIGN_SUMMARY_COLUMNS
                     ",model_seconds,output_nnz,output_nnz_stderr,intersections,compute_cycles,"
                     "compute_utilization,area_um2,stat_offgrid_edges,stat_design_may_differ,"
                     "stat_path,tiled_metadata_bytes,tiles,"
                     "storage_energy_pj,mac_energy_pj,intersect_energy_pj,leak_energy_pj,"
                     "level_energy,spatial_cycles,imbalance,work_stdev,pe_utilization,"
                     "algorithmic_computes,actual_computes,gated_computes,skipped_computes,level_cycles\n");
}
END_TEST

START_TEST(traffic_rows)
{
    tessel_report_point p;
    make_point(&p);
    char *rows = capture_rows(tessel_report_traffic_csv_rows, &p);
    /* One row per (level, tensor), as many fields as header columns. */
    ck_assert_uint_eq(count_char(rows, '\n'), 6);
    unsigned cols = count_char(tessel_report_traffic_header(), ',');
    char *line = rows;
    for (int i = 0; i < 6; i++) {
        char *nl = strchr(line, '\n');
        *nl = '\0';
        unsigned c = 0;
        for (char *q = line; *q; q++)
            c += *q == ',';
        ck_assert_uint_eq(c, cols);
        *nl = '\n';
        line = nl + 1;
    }
    /* LLB, Z row spelled out: energy 420 + 50 + 2 + 5.25 + 0.625 = 477.875. */
    ck_assert_ptr_nonnull(strstr(rows, "toy,spmspm,G51*G51^T,fixed,exact,LLB,Z,"
                                       "10,100,2,3,800,80,477.875,40,12,20,8,0,100,1000,"
                                       "0.3333333333333333,6,500,900,0,0,0,0\n"));
    /* an input's share counts its fills: 5 of 10 */
    ck_assert_ptr_nonnull(strstr(rows, ",0.5,7,500,1800,0,0,0,0\n"));
    ck_assert_int_eq(strncmp(rows, "toy,spmspm,G51*G51^T,fixed,exact,DRAM,Z,0,10,0,0,800,80,", 56),
                     0);
    free(rows);

    char *sum = capture_rows(tessel_report_summary_csv_row, &p);
    char expect[512];
    snprintf(expect, sizeof(expect), "toy,spmspm,G51*G51^T,fixed,exact,5000,4000,1.25,1000,");
    ck_assert_int_eq(strncmp(sum, expect, strlen(expect)), 0);
    ck_assert_ptr_nonnull(strstr(sum, ",0.25,77,,400,")); /* exact: no standard error */
    /* area, stat columns, then tiled_metadata_bytes, tiles (none priced), the energy terms */
    ck_assert_ptr_nonnull(strstr(sum, ",12345.5,0,0,,0,,"));
    ck_assert_ptr_nonnull(strstr(sum, ",1500,300,"));
    ck_assert_ptr_nonnull(strstr(sum, "\"DRAM=read:38400,"));
    ck_assert_uint_eq(csv_fields(sum), count_char(tessel_report_summary_header(), ',') + 1);
    free(sum);
}
END_TEST

START_TEST(csv_quoting_and_numbers)
{
    tessel_report_point p;
    make_point(&p);
    snprintf(p.design, sizeof(p.design), "a,b \"c\"");
    snprintf(p.data, sizeof(p.data), "line\nbreak");
    p.traffic_ratio = 0.1;
    p.energy_pj = 1.0 / 3.0;
    p.model_seconds = NAN;
    p.area_um2 = 1e300;
    char *sum = capture_rows(tessel_report_summary_csv_row, &p);
    ck_assert_int_eq(strncmp(sum, "\"a,b \"\"c\"\"\",spmspm,\"line\nbreak\",fixed,", 38), 0);
    ck_assert_ptr_nonnull(strstr(sum, ",0.1,1000,0.3333333333333333,"));
    ck_assert(strtod("0.3333333333333333", NULL) == 1.0 / 3.0);
    ck_assert_ptr_nonnull(strstr(sum, ",,77,")); /* NaN model_seconds: empty field */
    ck_assert_ptr_nonnull(strstr(sum, ",1e+300,0,0,"));
    free(sum);
}
END_TEST

/* A small JSON reader: validates the text and finds the first value of a
 * key (as raw text) inside the first object of the array. */
typedef struct json_reader {
    const char *p;
    const char *want_key;
    const char *found;
    size_t found_len;
    int objects;
} json_reader;

static void ws(json_reader *r)
{
    while (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r')
        r->p++;
}

static int json_value(json_reader *r);

static int json_str(json_reader *r)
{
    if (*r->p != '"')
        return 0;
    r->p++;
    while (*r->p != '"') {
        if (!*r->p || (unsigned char)*r->p < 0x20)
            return 0;
        if (*r->p == '\\') {
            r->p++;
            if (*r->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)r->p[i]))
                        return 0;
                r->p += 4;
            } else if (!strchr("\"\\/bfnrt", *r->p)) {
                return 0;
            }
        }
        r->p++;
    }
    r->p++;
    return 1;
}

static int json_value(json_reader *r)
{
    ws(r);
    if (*r->p == '{') {
        r->objects++;
        r->p++;
        ws(r);
        if (*r->p == '}')
            return r->p++, 1;
        for (;;) {
            ws(r);
            const char *k = r->p;
            if (!json_str(r))
                return 0;
            int match = r->objects == 1 && r->want_key && !r->found &&
                        (size_t)(r->p - k - 2) == strlen(r->want_key) &&
                        strncmp(k + 1, r->want_key, strlen(r->want_key)) == 0;
            ws(r);
            if (*r->p++ != ':')
                return 0;
            ws(r);
            const char *v = r->p;
            if (!json_value(r))
                return 0;
            if (match) {
                r->found = v;
                r->found_len = (size_t)(r->p - v);
            }
            ws(r);
            if (*r->p == ',') {
                r->p++;
                continue;
            }
            if (*r->p++ != '}')
                return 0;
            return 1;
        }
    }
    if (*r->p == '[') {
        r->p++;
        ws(r);
        if (*r->p == ']')
            return r->p++, 1;
        for (;;) {
            if (!json_value(r))
                return 0;
            ws(r);
            if (*r->p == ',') {
                r->p++;
                continue;
            }
            return *r->p++ == ']';
        }
    }
    if (*r->p == '"')
        return json_str(r);
    if (strncmp(r->p, "null", 4) == 0 || strncmp(r->p, "true", 4) == 0)
        return r->p += 4, 1;
    if (strncmp(r->p, "false", 5) == 0)
        return r->p += 5, 1;
    char *end;
    strtod(r->p, &end);
    if (end == r->p || *r->p == '+' || *r->p == '.')
        return 0;
    r->p = end;
    return 1;
}

/* Validates the whole text; returns the raw value of `key` in the first
 * object (a static copy) or NULL. */
static const char *json_check(const char *text, const char *key, int *objects)
{
    static char value[256];
    json_reader r = { text, key, NULL, 0, 0 };
    ck_assert_msg(json_value(&r), "invalid JSON near: %.40s", r.p);
    ws(&r);
    ck_assert_msg(*r.p == '\0', "trailing text: %.40s", r.p);
    if (objects)
        *objects = r.objects;
    if (!r.found)
        return NULL;
    snprintf(value, sizeof(value), "%.*s", (int)r.found_len, r.found);
    return value;
}

/* The keys of the first object, joined by commas (to compare with the CSV header). */
static void json_keys(const char *text, char *out, size_t n)
{
    const char *p = strchr(text, '{');
    const char *end = strchr(p, '}');
    out[0] = '\0';
    while ((p = strchr(p, '"')) && p < end) {
        const char *q = strchr(p + 1, '"');
        const char *after = q + 1;
        while (*after == ' ')
            after++;
        if (*after == ':') {
            size_t len = strlen(out);
            snprintf(out + len, n - len, "%s%.*s", len ? "," : "", (int)(q - p - 1), p + 1);
        }
        p = q + 1;
        if (*after == ':' && *(after + 2) == '"') { /* skip a string value */
            p = strchr(after + 3, '"');
            while (p[-1] == '\\')
                p = strchr(p + 1, '"');
            p++;
        }
    }
    size_t len = strlen(out);
    snprintf(out + len, n - len, "\n");
}

START_TEST(json_output)
{
    tessel_report_point p[2];
    make_point(&p[0]);
    make_point(&p[1]);
    snprintf(p[0].design, sizeof(p[0].design), "quote\" back\\slash\ttab\x01");
    p[0].model_seconds = INFINITY;
    char *t = capture_json(tessel_report_traffic_json, p, 2);
    int objects = 0;
    const char *v = json_check(t, "design", &objects);
    ck_assert_int_eq(objects, 12);
    ck_assert_str_eq(v, "\"quote\\\" back\\\\slash\\ttab\\u0001\"");
    ck_assert_str_eq(json_check(t, "energy_pj", NULL), "6808");
    ck_assert_str_eq(json_check(t, "reads", NULL), "10");
    char keys[1024];
    json_keys(t, keys, sizeof(keys));
    ck_assert_str_eq(keys, tessel_report_traffic_header());
    free(t);

    char *s = capture_json(tessel_report_summary_json, p, 2);
    json_check(s, NULL, &objects);
    /* per point: itself, and energy_sources' 4 components with their pj */
    ck_assert_int_eq(objects, 2 * (1 + 4 * 2));
    ck_assert_ptr_nonnull(strstr(s, "\"energy_sources\": [{\"component\": \"DRAM\", "
                                    "\"table\": \"toy.yaml\", \"entry\": \"DDR\", "
                                    "\"source\": \"\", \"method\": \"\", \"area_um2\": 0, "
                                    "\"pj\": {\"read\": 64, "));
    ck_assert_str_eq(json_check(s, "model_seconds", NULL), "null");
    ck_assert_str_eq(json_check(s, "traffic_ratio", NULL), "1.25");
    char bound[64];
    snprintf(bound, sizeof(bound), "\"%s\"", p[1].bound);
    ck_assert_str_eq(json_check(s, "bound", NULL), bound);
    json_keys(s, keys, sizeof(keys));
    /* the CSV's columns, then the JSON-only energy_sources (up to the
     * first component's pJ) */
    char want[1024];
    snprintf(want, sizeof(want), "%.*s,energy_sources,component,table,entry,source,method,area_um2,pj,read,write,"
             "update,metadata_read,metadata_write,compute,leak\n",
             (int)strlen(tessel_report_summary_header()) - 1, tessel_report_summary_header());
    ck_assert_str_eq(keys, want);
    free(s);

    char *empty = capture_json(tessel_report_summary_json, p, 0);
    ck_assert_str_eq(empty, "[]\n");
    json_check(empty, NULL, NULL);
    free(empty);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Output directories */

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    ck_assert_ptr_nonnull(buf);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void remove_tree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(write_dir_csv_and_json)
{
    char tmp[] = "/tmp/tessel-report-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    char dir[300], path[400];
    snprintf(dir, sizeof(dir), "%s/out", tmp);
    tessel_report_point p;
    make_point(&p);
    tessel_diag d;
    tessel_diag_clear(&d);
    /* The directory is created. */
    ck_assert_int_eq(tessel_report_write_dir(dir, TESSEL_REPORT_CSV, &p, 1, NULL, &d), 0);
    snprintf(path, sizeof(path), "%s/traffic.csv", dir);
    char *t = read_all(path);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(strncmp(t, tessel_report_traffic_header(),
                             strlen(tessel_report_traffic_header())),
                     0);
    ck_assert_uint_eq(count_char(t, '\n'), 7);
    free(t);
    snprintf(path, sizeof(path), "%s/summary.csv", dir);
    char *s = read_all(path);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(count_char(s, '\n'), 2);
    free(s);
    /* Again into the existing directory (with a trailing slash), as JSON. */
    snprintf(path, sizeof(path), "%s/", dir);
    ck_assert_int_eq(tessel_report_write_dir(path, TESSEL_REPORT_JSON, &p, 1, NULL, &d), 0);
    snprintf(path, sizeof(path), "%s/summary.json", dir);
    s = read_all(path);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(json_check(s, "flops", NULL), "1000");
    free(s);
    ck_assert_int_eq(entries(dir), 4);
    remove_tree(tmp);
}
END_TEST

START_TEST(write_dir_failures_leave_nothing)
{
    char tmp[] = "/tmp/tessel-report-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    char dir[300], path[400];
    tessel_report_point p;
    make_point(&p);
    tessel_diag d;

    /* A missing parent directory is created (mkdir -p), then removed
     * again here so that the failures below start from an empty tmp. */
    snprintf(dir, sizeof(dir), "%s/missing/out", tmp);
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_report_write_dir(dir, TESSEL_REPORT_CSV, &p, 1, NULL, &d),
                     TESSEL_OK);
    ck_assert_int_eq(entries(dir), 2);
    snprintf(dir, sizeof(dir), "%s/missing", tmp);
    remove_tree(dir);
    ck_assert_int_eq(entries(tmp), 0);

    /* A file where the directory should be. */
    snprintf(dir, sizeof(dir), "%s/file", tmp);
    FILE *f = fopen(dir, "w");
    fclose(f);
    ck_assert_int_eq(tessel_report_write_dir(dir, TESSEL_REPORT_CSV, &p, 1, NULL, &d),
                     TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "not a directory"));
    unlink(dir);

    /* a directory where traffic.csv goes is refused before anything is
     * written (a rename would fail on it): no file and no temporary is left. */
    snprintf(dir, sizeof(dir), "%s/out", tmp);
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    snprintf(path, sizeof(path), "%s/traffic.csv", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    ck_assert_int_eq(tessel_report_write_dir(dir, TESSEL_REPORT_CSV, &p, 1, NULL, &d),
                     TESSEL_EINVAL);
    ck_assert_int_eq(entries(dir), 1);
    ck_assert_int_eq(rmdir(path), 0);

    /* the same for summary.csv: traffic.csv is not committed either. */
    snprintf(path, sizeof(path), "%s/summary.csv", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    ck_assert_int_eq(tessel_report_write_dir(dir, TESSEL_REPORT_CSV, &p, 1, NULL, &d),
                     TESSEL_EINVAL);
    ck_assert_int_eq(entries(dir), 1);
    snprintf(path, sizeof(path), "%s/traffic.csv", dir);
    ck_assert(!exists(path));
    remove_tree(tmp);
}
END_TEST

START_TEST(check_dir)
{
    char tmp[] = "/tmp/tessel-report-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    char dir[300];
    tessel_diag d;
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_report_check_dir(tmp, &d), 0);
    ck_assert_int_eq(tessel_report_check_dir("/", &d), 0);
    ck_assert_int_eq(tessel_report_check_dir("/tessel-no-such-dir", &d), 0);
    ck_assert_int_eq(tessel_report_check_dir("tessel-no-such-dir", &d), 0);
    snprintf(dir, sizeof(dir), "%s/new//", tmp);
    ck_assert_int_eq(tessel_report_check_dir(dir, &d), 0);
    ck_assert_int_eq(entries(tmp), 0); /* checking creates nothing */
    snprintf(dir, sizeof(dir), "%s/missing/new", tmp);
    ck_assert_int_eq(tessel_report_check_dir(dir, &d), 0); /* parents are made */
    ck_assert_int_eq(entries(tmp), 0);
    snprintf(dir, sizeof(dir), "%s/file", tmp);
    FILE *f = fopen(dir, "w");
    fclose(f);
    ck_assert_int_eq(tessel_report_check_dir(dir, &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "not a directory"));
    snprintf(dir, sizeof(dir), "%s/file/new", tmp);
    ck_assert_int_eq(tessel_report_check_dir(dir, &d), TESSEL_EINVAL);
    remove_tree(tmp);
}
END_TEST

START_TEST(write_dir_out_of_memory)
{
    char tmp[] = "/tmp/tessel-report-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/out", tmp);
    tessel_report_point p;
    make_point(&p);
    int succeeded = 0;
    for (long fail = 1; fail < 100 && !succeeded; fail++) {
        test_alloc ta;
        test_alloc_init(&ta, fail);
        tessel_diag d;
        tessel_diag_clear(&d);
        int rc = tessel_report_write_dir(dir, TESSEL_REPORT_JSON, &p, 1, &ta.allocator, &d);
        ck_assert_int_eq(ta.live, 0);
        if (rc == 0) {
            succeeded = 1;
            ck_assert_int_eq(entries(dir), 2);
        } else {
            ck_assert_int_eq(rc, TESSEL_ENOMEM);
            ck_assert_int_eq(entries(dir), 0);
        }
    }
    ck_assert(succeeded);
    remove_tree(tmp);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Human summary */

START_TEST(human_summary)
{
    tessel_report_point p;
    make_point(&p);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    ck_assert_int_eq(tessel_report_print(f, &p, 0), 0);
    fclose(f);
    ck_assert_ptr_nonnull(
        strstr(buf, "toy: spmspm on G51*G51^T (strategy fixed, estimator exact)"));
    ck_assert_ptr_nonnull(strstr(buf, "DRAM traffic 4.88 KiB, compulsory 3.91 KiB, ratio 1.250"));
    ck_assert_ptr_nonnull(strstr(buf, "MACs 1000, intersections 400, output nonzeros 77"));
    ck_assert_ptr_nonnull(strstr(buf, "  LLB        Z              10          2          3"));
    ck_assert_ptr_nonnull(strstr(buf, "estimator time 250 ms"));
    ck_assert_ptr_nonnull(strstr(buf, "bound: "));
    ck_assert_ptr_nonnull(strstr(buf, "  MAC "));
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &n);
    ck_assert_int_eq(tessel_report_print(f, &p, TESSEL_REPORT_NO_TIMES), 0);
    fclose(f);
    ck_assert_ptr_null(strstr(buf, "estimator time"));
    free(buf);
}
END_TEST

/* ------------------------------------------------------------------ */
/* timing: pipeline (docs/models/timing.md), hand-checked. Z[i,j] = A[i,k] * B[k,j]
 * on DRAM -> Buf (innermost); indices i 0, k 1, j 2. */

static void pipe_spec(tessel_spec *s, double dram_gbs, uint64_t capacity, unsigned lanes)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "pipe");
    s->timing = TESSEL_SPEC_TIMING_PIPELINE;
    s->workload.kind = TESSEL_WORKLOAD_SPMSPM;
    s->workload.ntensors = 3;
    s->workload.nindices = 3;
    const char *tn[3] = { "Z", "A", "B" };
    const unsigned idx[3][2] = { { 0, 2 }, { 0, 1 }, { 1, 2 } };
    for (unsigned t = 0; t < 3; t++) {
        snprintf(s->workload.tensor[t].name, TESSEL_SPEC_NAME_MAX, "%s", tn[t]);
        s->workload.tensor[t].rank = 2;
        s->workload.tensor[t].index[0] = idx[t][0];
        s->workload.tensor[t].index[1] = idx[t][1];
    }
    s->nlevels = 2;
    snprintf(s->level[0].name, TESSEL_SPEC_NAME_MAX, "DRAM");
    s->level[0].bandwidth = dram_gbs;
    s->level[0].instances = 1;
    snprintf(s->level[1].name, TESSEL_SPEC_NAME_MAX, "Buf");
    s->level[1].capacity = capacity;
    s->level[1].instances = 1;
    s->level[1].value_bits = 64;
    for (unsigned x = 0; x < 3; x++)
        s->level[1].order[x] = x; /* i, k, j */
    s->compute.pes = lanes;
    s->compute.macs_per_pe = 1;
    s->compute.clock_ghz = 1.0;
    snprintf(s->strategy.name, sizeof(s->strategy.name), "fixed");
}

/* A 800 B in one fill, B 480 B in one fill, Z 40 values (320 B) written
 * back once; level 0 sees the same bytes from its side. */
static void pipe_result(tessel_result *r, uint64_t macs)
{
    memset(r, 0, sizeof(*r));
    r->nlevels = 2;
    r->ntensors = 3;
    snprintf(r->estimator, sizeof(r->estimator), "exact");
    const uint64_t in[3] = { 0, 800, 480 };
    for (unsigned t = 0; t < 3; t++) {
        tessel_traffic *d = &r->traffic[0][t], *b = &r->traffic[1][t];
        b->fills = t ? 1 : 0;
        b->in_data = in[t];
        b->worst_tile_bytes = t ? in[t] : 320;
        d->child_read_data = in[t];
    }
    r->traffic[1][0].writebacks = 1;
    r->traffic[1][0].out_data = 320;
    r->traffic[0][0].child_write_data = 320;
    r->tile[1][0] = 4; /* i: four rows a tile: with order IKJ, four output pieces */
    r->macs = macs;
}

static tessel_report_point *pipe_point(const tessel_spec *s, const tessel_result *r)
{
    tessel_design_energy e;
    make_energy(&e);
    tessel_report_point *p = malloc(sizeof(*p));
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(tessel_report_point_build(s, r, &e, "d", "fixed", p, NULL), 0);
    return p;
}

START_TEST(pipeline_serial_and_double_buffered)
{
    tessel_spec s;
    tessel_result r;
    /* 16 B a cycle; 400 MACs on 4 lanes = 100 cycles; the boundary's 1,600 B = 100 cycles. */
    pipe_spec(&s, 16, 1000, 4);
    pipe_result(&r, 400);
    tessel_report_point *p = pipe_point(&s, &r);
    /* A's 800 B do not fit twice in 1,000 B: serial, 100 + 100 + 40 values / 4 lanes */
    ck_assert_int_eq(p->pipeline.double_buffered[1], 0);
    ck_assert_double_eq_tol(p->pipeline.transfer[1], 100, 1e-9);
    ck_assert_double_eq_tol(p->roofline.cycles, 210, 1e-9);
    ck_assert_str_eq(p->bound, "pipeline:Buf");
    free(p);
    /* Room for two: first fill (800 + 480) / 16 = 80, compute 100, the last of 4 pieces
     * 320 / 4 / 16 = 5 (its 10 values over 4 lanes take 2.5): 185 */
    s.level[1].capacity = 10000;
    p = pipe_point(&s, &r);
    ck_assert_int_eq(p->pipeline.double_buffered[1], 1);
    ck_assert_double_eq_tol(p->pipeline.fill[1], 80, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.drain[1], 5, 1e-9);
    ck_assert_double_eq_tol(p->roofline.cycles, 185, 1e-9);
    ck_assert_double_eq_tol(p->roofline.seconds, 185e-9, 1e-18);
    free(p);
    /* A read port of 32 GB/s beside the shared 16: reads 1,280 / 32 = 40, writes 320 / 16 = 20 */
    s.level[0].read_bandwidth = 32;
    p = pipe_point(&s, &r);
    ck_assert_double_eq_tol(p->pipeline.transfer[1], 40, 1e-9);
    ck_assert_double_eq_tol(p->roofline.cycles, 40 + 100 + 5, 1e-9);
    free(p);
    /* Order KIJ: the reduction index outermost, one piece: 320 / 16 = 20 */
    s.level[0].read_bandwidth = 0;
    s.level[1].order[0] = 1;
    s.level[1].order[1] = 0;
    p = pipe_point(&s, &r);
    ck_assert_double_eq_tol(p->pipeline.drain[1], 20, 1e-9);
    ck_assert_double_eq_tol(p->roofline.cycles, 80 + 100 + 20, 1e-9);
    free(p);
    /* Roofline timing: the same point is 100 cycles, DRAM- or compute-bound */
    s.timing = TESSEL_SPEC_TIMING_ROOFLINE;
    p = pipe_point(&s, &r);
    ck_assert_int_eq(p->pipeline.present, 0);
    ck_assert_double_eq_tol(p->roofline.cycles, 100, 1e-9);
    free(p);
}
END_TEST

START_TEST(pipeline_accumulator_drain)
{
    /* SAM-like: no bandwidth anywhere, one lane, order KIJ: 400 MACs, then the 40 output
     * values leave one a cycle after the last product */
    tessel_spec s;
    tessel_result r;
    pipe_spec(&s, 0, 0, 1);
    s.level[1].order[0] = 1;
    s.level[1].order[1] = 0;
    pipe_result(&r, 400);
    tessel_report_point *p = pipe_point(&s, &r);
    ck_assert_double_eq_tol(p->pipeline.fill[1], 0, 1e-12);
    ck_assert_double_eq_tol(p->pipeline.drain[1], 40, 1e-9);
    ck_assert_double_eq_tol(p->roofline.cycles, 440, 1e-9);
    ck_assert_double_eq_tol(p->roofline.compute_utilization, 400.0 / 440.0, 1e-12);
    free(p);
}
END_TEST

/* A template's serial tail (tessel_tail, OuterSPACE's merge on one PE): Z's partial rows
 * (160 B) read back and its 320 B written after the rest, 50 merge cycles, which the PE
 * work (150 = 100 + 50) includes. Main stage, double-buffered: the first fill 80 + the
 * compute without the tail 100 + the last piece's emission 10 values / 4 lanes / 4 pieces
 * = 2.5 (its bytes are the tail's) = 182.5; then the tail, max(160 / 16, 50) + 320 / 16 =
 * 70: 252.5. The roofline alone: the PE work, 150. */
START_TEST(pipeline_serial_tail)
{
    tessel_spec s;
    tessel_result r;
    pipe_spec(&s, 16, 10000, 4);
    pipe_result(&r, 400);
    r.traffic[1][0].in_data = 160;
    r.traffic[0][0].child_read_data = 160;
    r.spatial.present = 1;
    r.spatial.level = 1;
    r.spatial.step_max_work = r.spatial.max_work = 150;
    r.spatial.mean_work = 100;
    r.tail.present = 1;
    r.tail.cycles = 50;
    r.tail.in_bytes[1] = 160;
    r.tail.out_bytes[1] = 320;
    tessel_report_point *p = pipe_point(&s, &r);
    ck_assert_double_eq_tol(p->pipeline.transfer[1], 80, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.drain[1], 2.5, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.stage[1], 252.5, 1e-9);
    ck_assert_double_eq_tol(p->roofline.cycles, 252.5, 1e-9);
    ck_assert_str_eq(p->bound, "pipeline:Buf");
    free(p);
    s.timing = TESSEL_SPEC_TIMING_ROOFLINE;
    p = pipe_point(&s, &r);
    ck_assert_double_eq_tol(p->roofline.cycles, 150, 1e-9);
    free(p);
}
END_TEST

START_TEST(pipeline_network)
{
    /* DRAM's network, 4 values a cycle, to Buf: A (stationary) filled twice with 8 values
     * each, B ten times; 30 MACs */
    tessel_spec s;
    tessel_result r;
    pipe_spec(&s, 0, 0, 64);
    pipe_result(&r, 30);
    r.traffic[1][1].fills = 2;
    r.traffic[1][1].in_data = 2 * 8 * 8;
    r.traffic[1][2].fills = 10;
    r.traffic[1][0].out_data = 0;
    s.level[0].network_width = 4;
    s.level[0].network_dense = 1;
    tessel_report_point *p = pipe_point(&s, &r);
    /* dense: 10 steps x ceil(8 lanes / 4) = 20 cycles; B delivered 10 x 8 = 80 times */
    ck_assert_double_eq_tol(p->pipeline.network_cycles[0], 20, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.network_values[0][1], 16, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.network_values[0][2], 80, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.network_bytes[0][2], 640, 1e-9);
    ck_assert_double_eq_tol(p->roofline.cycles, 20, 1e-9);
    ck_assert_str_eq(p->bound, "network:DRAM");
    /* the network rows of traffic.csv */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(tessel_report_traffic_csv_rows(f, p), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "DRAM:network,B,0,0,0,0,640,0,,0,0,0,0,0,80,0,"));
    ck_assert_ptr_nonnull(strstr(buf, "DRAM:network,A,0,0,0,0,128,0,,0,0,0,0,0,16,0,"));
    ck_assert_ptr_null(strstr(buf, "DRAM:network,Z"));
    free(buf);
    free(p);
    /* effectual: 30 MACs over 10 steps, ceil(3 / 4) = 1 cycle a step; B delivered 30 times */
    s.level[0].network_dense = 0;
    p = pipe_point(&s, &r);
    ck_assert_double_eq_tol(p->pipeline.network_cycles[0], 10, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.network_values[0][2], 30, 1e-9);
    free(p);
    /* per step (exact's fill_network_cycles): A's two fills hold 3 and 13 values, the same
     * 16 in all, ceil(3 / 4) + ceil(13 / 4) = 1 + 4 = 5 cycles a step over both fills; each
     * stays for 10 / 2 = 5 steps: 25 cycles, where the mean fill gives 20; effectual keeps
     * its MACs per step */
    r.traffic[1][1].fill_network_cycles = 5;
    p = pipe_point(&s, &r);
    ck_assert_double_eq_tol(p->pipeline.network_cycles[0], 10, 1e-9);
    free(p);
    s.level[0].network_dense = 1;
    p = pipe_point(&s, &r);
    ck_assert_double_eq_tol(p->pipeline.network_cycles[0], 25, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.network_values[0][2], 80, 1e-9);
    free(p);
}
END_TEST

START_TEST(pipeline_multicast)
{
    /* DRAM -> GLB -> PE, GLB split {k: 2, j: 4}; GLB tiles k 8, j 8 over PE tiles k 4, j 4:
     * two child tiles along each. A[i,k] lacks j: each PE fill of A goes to min(4, 2) = 2
     * instances; B[k,j] has both: once; Z[i,j] lacks k: partials from min(2, 2) = 2 */
    tessel_spec s;
    tessel_result r;
    pipe_spec(&s, 0, 0, 4);
    s.nlevels = 3;
    s.level[2] = s.level[1];
    snprintf(s.level[1].name, TESSEL_SPEC_NAME_MAX, "GLB");
    snprintf(s.level[2].name, TESSEL_SPEC_NAME_MAX, "PE");
    s.level[1].spatial[1] = 2;
    s.level[1].spatial[2] = 4;
    s.level[1].network_width = 10;
    pipe_result(&r, 400);
    r.nlevels = 3;
    for (unsigned t = 0; t < 3; t++)
        r.traffic[2][t] = r.traffic[1][t];
    r.tile[1][1] = r.tile[1][2] = 8;
    r.tile[2][1] = r.tile[2][2] = 4;
    tessel_design_energy e;
    make_energy(&e);
    e.level[2] = e.level[1];
    tessel_report_point *p = malloc(sizeof(*p));
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, "d", "fixed", p, NULL), 0);
    ck_assert_double_eq_tol(p->pipeline.network_bytes[1][1], 1600, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.network_bytes[1][2], 480, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.network_bytes[1][0], 640, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.network_values[1][1], 200, 1e-9);
    /* 200 + 60 + 80 values, 10 a cycle */
    ck_assert_double_eq_tol(p->pipeline.network_cycles[1], 34, 1e-9);
    /* unpriced (no network energy in e): empty row energy, total unchanged */
    ck_assert(isnan(p->pipeline.network_pj[1][1]));
    double unpriced = p->energy_pj;
    /* priced at 0.5 pJ a delivered value: (200 + 60 + 80) x 0.5 = 170 pJ more */
    snprintf(e.network[1].method, sizeof(e.network[1].method), "wire");
    e.network[1].pj[TESSEL_ACTION_READ] = 0.5;
    ck_assert_int_eq(tessel_report_point_build(&s, &r, &e, "d", "fixed", p, NULL), 0);
    ck_assert_double_eq_tol(p->pipeline.network_pj[1][1], 100, 1e-9);
    ck_assert_double_eq_tol(p->pipeline.network_energy_pj, 170, 1e-9);
    ck_assert_double_eq_tol(p->energy_pj - unpriced, 170, 1e-6);
    free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_add_test(tc, energy_arithmetic);
    tcase_add_test(tc, element_counts);
    tcase_add_test(tc, skipped_and_gated_energy);
    tcase_add_test(tc, word_size_default_and_fractions);
    tcase_add_test(tc, build_rejects_mismatch);
    tcase_add_test(tc, workload_names);
    tcase_add_test(tc, headers_match_design);
    tcase_add_test(tc, traffic_rows);
    tcase_add_test(tc, csv_quoting_and_numbers);
    tcase_add_test(tc, json_output);
    tcase_add_test(tc, write_dir_csv_and_json);
    tcase_add_test(tc, write_dir_failures_leave_nothing);
    tcase_add_test(tc, check_dir);
    tcase_add_test(tc, write_dir_out_of_memory);
    tcase_add_test(tc, human_summary);
    tcase_add_test(tc, pipeline_serial_and_double_buffered);
    tcase_add_test(tc, pipeline_accumulator_drain);
    tcase_add_test(tc, pipeline_network);
    tcase_add_test(tc, pipeline_multicast);
    tcase_add_test(tc, pipeline_serial_tail);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
