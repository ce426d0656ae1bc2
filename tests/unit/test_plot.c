/* Unit tests of the plot module (src/plot/): nice ticks on linear and log
 * axes, tick labels, XML escaping of hostile text, Pareto dominance against
 * a brute force, the errors of every figure (missing column, text in a
 * number column, empty table, nothing written on error), deterministic
 * output, a failing stream, and out-of-memory at every allocation. Runs
 * from the project root (tests/plot/ inputs). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessel/plot.h"
#include "tessel/report.h"
#include "test_alloc.h"

/* ------------------------------------------------------------------ */
/* Helpers. */

static tessel_report_csv *parse_text(const char *name, const char *text)
{
    tessel_report_csv *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_report_csv_parse(name, text, strlen(text), NULL, &t, &d);
    ck_assert_msg(rc == 0, "parse failed: %s", d.message);
    return t;
}

static tessel_report_csv *load(const char *path)
{
    tessel_report_csv *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_report_csv_load(path, NULL, &t, &d);
    ck_assert_msg(rc == 0, "load %s failed: %s", path, d.message);
    return t;
}

enum figure { TRAFFIC, ROOFLINE, PARETO, SCATTER };

static int draw(enum figure fig, FILE *f, const tessel_report_csv *a, const tessel_report_csv *b,
                const tessel_plot_options *o, const tessel_allocator *al, tessel_diag *d)
{
    switch (fig) {
    case TRAFFIC: return tessel_plot_traffic(f, a, o, al, d);
    case ROOFLINE: return tessel_plot_roofline(f, a, o, al, d);
    case PARETO: return tessel_plot_pareto(f, a, o, al, d);
    case SCATTER: return tessel_plot_scatter(f, a, b, o, al, d);
    }
    return -100;
}

/* Draws into memory; returns the code, *out the malloc'd text (or NULL). */
static int render(enum figure fig, const tessel_report_csv *a, const tessel_report_csv *b,
                  const tessel_plot_options *o, const tessel_allocator *al, tessel_diag *d,
                  char **out, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    ck_assert_ptr_nonnull(f);
    tessel_diag_clear(d);
    int rc = draw(fig, f, a, b, o, al, d);
    fclose(f);
    *out = buf;
    *len = size;
    return rc;
}

static char *render_ok(enum figure fig, const tessel_report_csv *a, const tessel_report_csv *b,
                       const tessel_plot_options *o)
{
    tessel_diag d;
    char *svg;
    size_t len;
    int rc = render(fig, a, b, o, NULL, &d, &svg, &len);
    ck_assert_msg(rc == 0, "figure %d failed: %s", (int)fig, d.message);
    ck_assert_uint_eq(strlen(svg), len);
    ck_assert(strncmp(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 44) == 0);
    ck_assert_ptr_nonnull(strstr(svg, " viewBox=\"0 0 "));
    ck_assert(len > 7 && strcmp(svg + len - 7, "</svg>\n") == 0);
    return svg;
}

/* Draws and expects an error whose message holds `needle`; nothing may
 * have been written. Returns the diagnostic. */
static tessel_diag render_fails(enum figure fig, const tessel_report_csv *a,
                                const tessel_report_csv *b, const tessel_plot_options *o,
                                int code, const char *needle)
{
    tessel_diag d;
    char *svg;
    size_t len;
    int rc = render(fig, a, b, o, NULL, &d, &svg, &len);
    ck_assert_msg(rc == code, "code %d, expected %d (%s)", rc, code, d.message);
    ck_assert_int_eq(d.code, code);
    ck_assert_msg(strstr(d.message, needle), "message '%s' lacks '%s'", d.message, needle);
    ck_assert_uint_eq(len, 0);
    free(svg);
    return d;
}

static void escaped(const char *in, const char *want)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    tessel_plot_escape(f, in);
    fclose(f);
    ck_assert_msg(strcmp(buf, want) == 0, "escape gave '%s', expected '%s'", buf, want);
    free(buf);
}

static void formatted(double v, const char *want)
{
    char buf[64];
    int n = tessel_plot_format_number(v, buf, sizeof(buf));
    ck_assert_msg(strcmp(buf, want) == 0, "%.17g gave '%s', expected '%s'", v, buf, want);
    ck_assert_int_eq(n, (int)strlen(want));
}

static void ticks_are(const tessel_plot_axis *ax, const double *want, size_t n)
{
    ck_assert_uint_eq(ax->nticks, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs(ax->tick[i] - want[i]) <= 1e-9 * fabs(want[i]),
                      "tick %zu is %.17g, expected %.17g", i, ax->tick[i], want[i]);
    ck_assert_double_eq(ax->lo, ax->tick[0]);
    ck_assert_double_eq(ax->hi, ax->tick[n - 1]);
}

static void well_formed_axis(const tessel_plot_axis *ax, double lo, double hi)
{
    ck_assert(ax->nticks >= 2 && ax->nticks <= TESSEL_PLOT_MAX_TICKS);
    ck_assert(ax->lo <= lo && ax->hi >= hi && ax->lo < ax->hi);
    for (size_t i = 0; i < ax->nticks; i++) {
        ck_assert(ax->tick[i] >= ax->lo && ax->tick[i] <= ax->hi);
        if (i)
            ck_assert(ax->tick[i] > ax->tick[i - 1]);
    }
}

/* ------------------------------------------------------------------ */
/* Ticks and labels. */

START_TEST(linear_ticks)
{
    tessel_plot_axis ax;
    ck_assert_int_eq(tessel_plot_axis_nice(0, 38.3e6, 0, &ax), 0);
    ticks_are(&ax, (const double[]){ 0, 10e6, 20e6, 30e6, 40e6 }, 5);
    ck_assert_int_eq(ax.log10, 0);
    ck_assert_int_eq(tessel_plot_axis_nice(0.13, 0.87, 0, &ax), 0);
    ticks_are(&ax, (const double[]){ 0, 0.2, 0.4, 0.6, 0.8, 1.0 }, 6);
    /* zero is exactly a tick when the range crosses it */
    ck_assert_int_eq(tessel_plot_axis_nice(-3, 7, 0, &ax), 0);
    ticks_are(&ax, (const double[]){ -4, -2, 0, 2, 4, 6, 8 }, 7);
    ck_assert(ax.tick[2] == 0 && !signbit(ax.tick[2]));
    /* a single value is widened; all zeros give [0, 1] */
    ck_assert_int_eq(tessel_plot_axis_nice(5, 5, 0, &ax), 0);
    well_formed_axis(&ax, 5, 5);
    ck_assert_int_eq(tessel_plot_axis_nice(0, 0, 0, &ax), 0);
    ticks_are(&ax, (const double[]){ 0, 0.2, 0.4, 0.6, 0.8, 1 }, 6);
    /* far from zero, tiny spans and huge values */
    ck_assert_int_eq(tessel_plot_axis_nice(1e15, 1e15 + 3, 0, &ax), 0);
    well_formed_axis(&ax, 1e15, 1e15 + 3);
    ck_assert_int_eq(tessel_plot_axis_nice(1e-300, 3e-300, 0, &ax), 0);
    well_formed_axis(&ax, 1e-300, 3e-300);
    ck_assert_int_eq(tessel_plot_axis_nice(0, 1e300, 0, &ax), 0);
    well_formed_axis(&ax, 0, 1e300);
    for (double hi = 0.001; hi < 1e9; hi *= 1.37) {
        ck_assert_int_eq(tessel_plot_axis_nice(0, hi, 0, &ax), 0);
        well_formed_axis(&ax, 0, hi);
        ck_assert(ax.nticks >= 3 && ax.nticks <= 11);
    }
}
END_TEST

START_TEST(log_ticks)
{
    tessel_plot_axis ax;
    ck_assert_int_eq(tessel_plot_axis_nice(3, 3e6, 1, &ax), 0);
    ticks_are(&ax, (const double[]){ 1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7 }, 8);
    ck_assert(ax.log10 && ax.decades);
    /* wide ranges label every k-th decade, aligned so that 10^0 is one */
    ck_assert_int_eq(tessel_plot_axis_nice(1e-3, 1e12, 1, &ax), 0);
    ticks_are(&ax, (const double[]){ 1e-4, 1e-2, 1, 1e2, 1e4, 1e6, 1e8, 1e10, 1e12 }, 9);
    /* about two decades or less: 1, 2, 5 */
    ck_assert_int_eq(tessel_plot_axis_nice(120, 4500, 1, &ax), 0);
    ticks_are(&ax, (const double[]){ 100, 200, 500, 1000, 2000, 5000 }, 6);
    ck_assert_int_eq(ax.decades, 0);
    ck_assert_int_eq(tessel_plot_axis_nice(1000, 5000, 1, &ax), 0);
    ticks_are(&ax, (const double[]){ 1000, 2000, 5000 }, 3);
    /* less than half a decade: linear ticks, all above 0 */
    ck_assert_int_eq(tessel_plot_axis_nice(1000, 1010, 1, &ax), 0);
    well_formed_axis(&ax, 1000, 1010);
    ck_assert(ax.lo > 0 && ax.log10 && !ax.decades);
    ck_assert_int_eq(tessel_plot_axis_nice(7, 7, 1, &ax), 0);
    well_formed_axis(&ax, 7, 7);
    for (double lo = 1e-7; lo < 1e7; lo *= 3.1)
        for (double ratio = 1.01; ratio < 1e9; ratio *= 4.3) {
            ck_assert_int_eq(tessel_plot_axis_nice(lo, lo * ratio, 1, &ax), 0);
            well_formed_axis(&ax, lo * (1 + 1e-9), lo * ratio * (1 - 1e-9));
        }
}
END_TEST

START_TEST(bad_axis_ranges)
{
    tessel_plot_axis ax;
    ck_assert_int_eq(tessel_plot_axis_nice(0, 10, 1, &ax), TESSEL_EINVAL);
    ck_assert_int_eq(tessel_plot_axis_nice(-1, 10, 1, &ax), TESSEL_EINVAL);
    ck_assert_int_eq(tessel_plot_axis_nice(NAN, 10, 0, &ax), TESSEL_EINVAL);
    ck_assert_int_eq(tessel_plot_axis_nice(0, INFINITY, 0, &ax), TESSEL_EINVAL);
    ck_assert_int_eq(tessel_plot_axis_nice(2, 1, 0, &ax), TESSEL_EINVAL);
    ck_assert_int_eq(tessel_plot_axis_nice(-1.7e308, 1.7e308, 0, &ax), TESSEL_EINVAL);
    ck_assert_int_eq(tessel_plot_axis_nice(1e-320, 1, 1, &ax), TESSEL_EINVAL);
}
END_TEST

START_TEST(tick_labels)
{
    formatted(0, "0");
    formatted(0.25, "0.25");
    formatted(2.5, "2.5");
    formatted(0.1 + 0.2, "0.3");
    formatted(999, "999");
    formatted(1000, "1k");
    formatted(40000, "40k");
    formatted(1.5e6, "1.5M");
    formatted(-2000, "-2k");
    formatted(2.5e9, "2.5G");
    formatted(1e18, "1E");
    formatted(1e21, "1e21");
    formatted(3e-5, "3e-5");
    formatted(1.25e-4, "1.25e-4");
    formatted(0.001, "0.001");
    formatted(NAN, "n/a");
    char small[4];
    ck_assert_int_eq(tessel_plot_format_number(1.5e6, small, sizeof(small)), 4);
    ck_assert_str_eq(small, "1.5");
}
END_TEST

START_TEST(escaping)
{
    escaped("plain text 123", "plain text 123");
    escaped("a<b & \"c\" 'd'>", "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
    escaped("tab\there\nline\r", "tab here line ");
    escaped("ctl\x01\x1f\x7f", "ctl\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    /* valid UTF-8 passes: é, €, an emoji */
    escaped("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    /* invalid: a stray byte, a truncated sequence, overlong, surrogate, U+FFFE, > U+10FFFF */
    escaped("\xff", "\xef\xbf\xbd");
    escaped("x\xc3", "x\xef\xbf\xbd");
    escaped("\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd");
    escaped("\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd");
    escaped("\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    escaped("\xef\xbf\xbe", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    escaped("\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    escaped("", "");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Pareto dominance. */

static int dominates(double xa, double ya, double xb, double yb)
{
    return xa <= xb && ya <= yb && (xa < xb || ya < yb);
}

START_TEST(pareto_by_hand)
{
    /* (2,3) dominates (3,4); (4,1) dominates (5,1); the repeated (2,3)
     * is kept; a NaN is never on the front. */
    const double x[] = { 1, 2, 3, 4, 2, 5, NAN, 9 };
    const double y[] = { 5, 3, 4, 1, 3, 1, 0, 0.5 };
    const unsigned char want[] = { 1, 1, 0, 1, 1, 0, 0, 1 };
    unsigned char on[8];
    size_t count = 99;
    ck_assert_int_eq(tessel_plot_pareto_front(x, y, 8, on, &count, NULL), 0);
    ck_assert_uint_eq(count, 5);
    for (size_t i = 0; i < 8; i++)
        ck_assert_msg(on[i] == want[i], "point %zu: %d", i, on[i]);
    ck_assert_int_eq(tessel_plot_pareto_front(x, y, 0, on, &count, NULL), 0);
    ck_assert_uint_eq(count, 0);
}
END_TEST

START_TEST(pareto_against_brute_force)
{
    uint64_t state = 12345;
    for (int round = 0; round < 50; round++) {
        size_t n = 1 + (size_t)round * 7;
        double x[400], y[400];
        unsigned char on[400];
        for (size_t i = 0; i < n; i++) { /* small integers: many ties */
            state = state * 6364136223846793005u + 1442695040888963407u;
            x[i] = (double)((state >> 33) % 20);
            y[i] = (double)((state >> 13) % 20);
        }
        size_t count;
        ck_assert_int_eq(tessel_plot_pareto_front(x, y, n, on, &count, NULL), 0);
        size_t want_count = 0;
        for (size_t i = 0; i < n; i++) {
            int dominated = 0;
            for (size_t j = 0; j < n && !dominated; j++)
                dominated = dominates(x[j], y[j], x[i], y[i]);
            ck_assert_msg(on[i] == !dominated, "round %d point %zu (%g, %g)", round, i, x[i],
                          y[i]);
            want_count += !dominated;
        }
        ck_assert_uint_eq(count, want_count);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* Figures. */

static const char traffic_csv[] =
    "design,workload,data,strategy,estimator,level,tensor,data_bytes,metadata_bytes,energy_pj\n"
    "d,spmspm,G,fixed,exact,DRAM,Z,100,10,5.5\n"
    "d,spmspm,G,fixed,exact,DRAM,A,50,5,2\n"
    "d,spmspm,G,fixed,exact,LLB,Z,100,10,1\n"
    "d,spmspm,G,fixed,exact,LLB,A,200,20,1\n";

START_TEST(traffic_figure)
{
    tessel_report_csv *t = parse_text("traffic.csv", traffic_csv);
    char *svg = render_ok(TRAFFIC, t, NULL, NULL);
    ck_assert_ptr_nonnull(strstr(svg, "Traffic per storage level and tensor"));
    ck_assert_ptr_nonnull(strstr(svg, "<title>LLB, A: 220 bytes</title>"));
    ck_assert_ptr_nonnull(strstr(svg, "d \xc2\xb7 spmspm \xc2\xb7 G \xc2\xb7 fixed"));
    free(svg);
    tessel_plot_options o;
    tessel_plot_options_init(&o);
    o.metric = "energy_pj";
    o.title = "E & <co>";
    svg = render_ok(TRAFFIC, t, NULL, &o);
    ck_assert_ptr_nonnull(strstr(svg, "<title>DRAM, Z: 5.5 energy_pj</title>"));
    ck_assert_ptr_nonnull(strstr(svg, ">E &amp; &lt;co&gt;</text>"));
    free(svg);
    tessel_report_csv_free(&t);

    /* a sweep: leading columns, points capped */
    t = load("tests/plot/sweep-traffic.csv");
    o.metric = NULL;
    o.title = NULL;
    o.max_points = 2;
    svg = render_ok(TRAFFIC, t, NULL, &o);
    ck_assert_ptr_nonnull(strstr(svg, "The first 2 of 6 design points are shown."));
    /* labels: the fields that vary (the point number is left out) */
    ck_assert_ptr_nonnull(strstr(svg, ">256x256x256, IJK-256x256x256</text>"));
    free(svg);
    tessel_report_csv_free(&t);
}
END_TEST

START_TEST(traffic_errors)
{
    tessel_report_csv *t = parse_text("t.csv", "design,level,data_bytes,metadata_bytes\n"
                                               "d,DRAM,1,2\n");
    tessel_diag d = render_fails(TRAFFIC, t, NULL, NULL, TESSEL_EINVAL,
                                 "column 'tensor' not found");
    ck_assert_str_eq(d.file, "t.csv");
    ck_assert_ptr_nonnull(strstr(d.message, "the columns are: design, level, data_bytes"));
    tessel_report_csv_free(&t);

    t = parse_text("t.csv", traffic_csv);
    tessel_plot_options o;
    tessel_plot_options_init(&o);
    o.metric = "enrgy_pj";
    d = render_fails(TRAFFIC, t, NULL, &o, TESSEL_EINVAL, "did you mean 'energy_pj'?");
    o.metric = NULL;
    o.width = TESSEL_PLOT_MAX_SIZE + 1;
    render_fails(TRAFFIC, t, NULL, &o, TESSEL_EINVAL, "must be at most");
    tessel_report_csv_free(&t);

    /* text in a number column: file, line and column */
    t = parse_text("t.csv", "level,tensor,data_bytes,metadata_bytes\nDRAM,A,1,2\n"
                            "DRAM,B, 12x ,2\n");
    d = render_fails(TRAFFIC, t, NULL, NULL, TESSEL_EINVAL, "column 'data_bytes': '12x' is "
                                                            "not a number");
    ck_assert_uint_eq(d.line, 3);
    ck_assert_uint_eq(d.column, 9);
    tessel_report_csv_free(&t);

    t = parse_text("t.csv", "level,tensor,data_bytes,metadata_bytes\nDRAM,A,1,\n");
    render_fails(TRAFFIC, t, NULL, NULL, TESSEL_EINVAL, "empty or non-finite");
    tessel_report_csv_free(&t);
    t = parse_text("t.csv", "level,tensor,data_bytes,metadata_bytes\nDRAM,A,-1,0\n");
    render_fails(TRAFFIC, t, NULL, NULL, TESSEL_EINVAL, "negative");
    tessel_report_csv_free(&t);
    t = parse_text("t.csv", "level,tensor,data_bytes,metadata_bytes\nDRAM,A,1,0\nDRAM,A,2,0\n");
    d = render_fails(TRAFFIC, t, NULL, NULL, TESSEL_EINVAL, "appears twice");
    ck_assert_uint_eq(d.line, 3);
    tessel_report_csv_free(&t);
    t = parse_text("t.csv", "level,tensor,data_bytes,metadata_bytes\n");
    render_fails(TRAFFIC, t, NULL, NULL, TESSEL_EINVAL, "no data rows");
    tessel_report_csv_free(&t);
    t = parse_text("t.csv", "level,tensor,data_bytes,metadata_bytes\nL,A,1,1\nL,B,1,1\nL,C,1,1\n"
                            "L,D,1,1\nL,E,1,1\nL,F,1,1\nL,G,1,1\nL,H,1,1\nL,I,1,1\n");
    render_fails(TRAFFIC, t, NULL, NULL, TESSEL_EINVAL, "more than 8 distinct tensors");
    tessel_report_csv_free(&t);
    t = parse_text("t.csv", "level,tensor,data_bytes,metadata_bytes\nL,A,1e308,1e308\n"
                            "L,B,1e308,1e308\n");
    render_fails(TRAFFIC, t, NULL, NULL, TESSEL_ERANGE, "too tall");
    tessel_report_csv_free(&t);
}
END_TEST

START_TEST(roofline_figure)
{
    tessel_report_csv *t = load("tests/plot/roofline-summary.csv");
    char *svg = render_ok(ROOFLINE, t, NULL, NULL);
    ck_assert_ptr_nonnull(strstr(svg, "compute peak 128 MAC/cycle"));
    ck_assert_ptr_nonnull(strstr(svg, "DRAM bandwidth 68.25 B/cycle"));
    ck_assert_ptr_nonnull(strstr(svg, "of the 3 DRAM-bound points"));
    ck_assert_ptr_nonnull(strstr(svg, ">LLB-bound</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">pe128-bw16</text>")); /* few points: labelled */
    ck_assert_ptr_nonnull(strstr(svg, "2 points lie above the roof"));
    free(svg);
    /* no point bound by the named level: no slope, and the caption says so */
    tessel_plot_options o;
    tessel_plot_options_init(&o);
    o.dram_level = "HBM";
    svg = render_ok(ROOFLINE, t, NULL, &o);
    ck_assert_ptr_nonnull(strstr(svg, "No point is bound by HBM"));
    ck_assert_ptr_null(strstr(svg, "bandwidth 68.25"));
    free(svg);
    tessel_report_csv_free(&t);

    t = parse_text("s.csv", "design,dram_bytes,flops,cycles,bound\nd,1,2,3,DRAM\n");
    tessel_diag d = render_fails(ROOFLINE, t, NULL, NULL, TESSEL_EINVAL,
                                 "column 'compute_cycles' not found");
    ck_assert_str_eq(d.file, "s.csv");
    tessel_report_csv_free(&t);
    t = parse_text("s.csv", "design,dram_bytes,flops,cycles,bound,compute_cycles\n"
                            "d,0,2,3,DRAM,1\nd,5,0,3,compute,1\n");
    render_fails(ROOFLINE, t, NULL, NULL, TESSEL_EINVAL, "nothing to plot");
    tessel_report_csv_free(&t);
    t = parse_text("s.csv", "design,dram_bytes,flops,cycles,bound,compute_cycles\n"
                            "d,10,2,3,DRAM,1\nd,5,two,3,compute,1\n");
    d = render_fails(ROOFLINE, t, NULL, NULL, TESSEL_EINVAL, "'two' is not a number");
    ck_assert_uint_eq(d.line, 3);
    ck_assert_uint_eq(d.column, 5);
    tessel_report_csv_free(&t);
}
END_TEST

START_TEST(pareto_figure)
{
    tessel_report_csv *t = load("tests/plot/sweep-summary.csv");
    tessel_plot_options o;
    tessel_plot_options_init(&o);
    o.x = "energy_pj";
    o.y = "cycles";
    char *svg = render_ok(PARETO, t, NULL, &o);
    ck_assert_ptr_nonnull(strstr(svg, "of 12 design points are Pareto-optimal"));
    free(svg);
    o.log_scale = 1;
    svg = render_ok(PARETO, t, NULL, &o);
    ck_assert_ptr_nonnull(strstr(svg, ">200M</text>")); /* 1-2-5 ticks on 1.4 decades */
    free(svg);
    o.x = "energy_p";
    tessel_diag d = render_fails(PARETO, t, NULL, &o, TESSEL_EINVAL,
                                 "column 'energy_p' not found");
    ck_assert_ptr_nonnull(strstr(d.message, "did you mean 'energy_pj'?"));
    o.x = NULL;
    render_fails(PARETO, t, NULL, &o, TESSEL_EINVAL, "needs the two columns");
    o.x = "design";
    d = render_fails(PARETO, t, NULL, &o, TESSEL_EINVAL, "is not a number");
    ck_assert_uint_eq(d.line, 2);
    tessel_report_csv_free(&t);

    /* empty fields and values <= 0 on log axes are left out and counted */
    t = parse_text("p.csv", "a,b\n1,\n2,3\n0,1\n4,1\n");
    o.x = "a";
    o.y = "b";
    svg = render_ok(PARETO, t, NULL, &o);
    ck_assert_ptr_nonnull(strstr(svg, "1 row without a number in a or")); /* wrapped here */
    ck_assert_ptr_nonnull(strstr(svg, "1 row with a value &lt;= 0 left out (log axes)."));
    free(svg);
    tessel_report_csv_free(&t);
    t = parse_text("p.csv", "a,b\n,1\n");
    render_fails(PARETO, t, NULL, &o, TESSEL_EINVAL, "nothing to plot");
    tessel_report_csv_free(&t);
}
END_TEST

START_TEST(scatter_figure)
{
    tessel_report_csv *p = load("tests/plot/sweep-stat-summary.csv");
    tessel_report_csv *r = load("tests/plot/sweep-summary.csv");
    char *svg = render_ok(SCATTER, p, r, NULL);
    ck_assert_ptr_nonnull(strstr(svg, "dram_bytes, stat against exact: median |error| "));
    ck_assert_ptr_nonnull(strstr(svg, "12 joined rows"));
    free(svg);
    tessel_plot_options o;
    tessel_plot_options_init(&o);
    o.metric = "cycle";
    render_fails(SCATTER, p, r, &o, TESSEL_EINVAL, "'cycle' not found");
    tessel_report_csv_free(&p);
    tessel_report_csv_free(&r);

    /* hand-made: errors 10 %, 0 % and 50 %; one zero left out */
    p = parse_text("pred.csv", "design,data,v\nx,a,11\nx,b,20\nx,c,60\nx,d,0\n");
    r = parse_text("ref.csv", "design,data,v\nx,b,20\nx,a,10\nx,c,40\nx,d,5\nx,e,1\n");
    o.metric = "v";
    svg = render_ok(SCATTER, p, r, &o);
    ck_assert_ptr_nonnull(strstr(svg, "v, pred against ref: median |error| 10 %, p95 "
                                      "100 %"));
    ck_assert_ptr_nonnull(strstr(svg, "1 of 3 points lie outside"));
    ck_assert_ptr_nonnull(strstr(svg, "Not drawn: 0 rows")); /* the caption wraps here */
    ck_assert_ptr_nonnull(strstr(svg, "only in pred, 1 only in ref."));
    ck_assert_ptr_nonnull(strstr(svg, "1 joined row with a value missing or &lt;= 0 left out"));
    free(svg);
    tessel_report_csv_free(&r);
    r = parse_text("ref.csv", "design,data,v\ny,a,1\n");
    render_fails(SCATTER, p, r, &o, TESSEL_EINVAL, "no row joins");
    tessel_report_csv_free(&p);
    tessel_report_csv_free(&r);
}
END_TEST

/* Hostile text everywhere still gives the same well-formed bytes twice. */
START_TEST(deterministic_output)
{
    tessel_report_csv *t = load("tests/plot/hostile-traffic.csv");
    tessel_report_csv *s = load("tests/plot/hostile-summary.csv");
    tessel_plot_options o;
    tessel_plot_options_init(&o);
    o.x = "energy_pj";
    o.y = "cycles";
    o.metric = "data_bytes";
    const enum figure figs[] = { TRAFFIC, ROOFLINE, PARETO, SCATTER };
    for (size_t i = 0; i < 4; i++) {
        const tessel_report_csv *a = figs[i] == TRAFFIC || figs[i] == SCATTER ? t : s;
        char *one = render_ok(figs[i], a, a, &o), *two = render_ok(figs[i], a, a, &o);
        ck_assert_str_eq(one, two);
        ck_assert_ptr_null(strstr(one, "\xff"));
        ck_assert_ptr_null(strstr(one, "\x01"));
        free(one);
        free(two);
    }
    tessel_report_csv_free(&t);
    tessel_report_csv_free(&s);
}
END_TEST

START_TEST(stream_error)
{
    tessel_report_csv *t = parse_text("traffic.csv", traffic_csv);
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    FILE *ro = fdopen(dup(fileno(f)), "r"); /* writes fail */
    ck_assert_ptr_nonnull(ro);
    tessel_diag d;
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_plot_traffic(ro, t, NULL, NULL, &d), TESSEL_EIO);
    ck_assert_ptr_nonnull(strstr(d.message, "writing the figure failed"));
    fclose(ro);
    fclose(f);
    tessel_report_csv_free(&t);
}
END_TEST

/* Fails allocation n for n = 1, 2, ... until the figure succeeds: every
 * failure is TESSEL_ENOMEM, frees everything and writes nothing. */
static void oom_loop(enum figure fig, const tessel_report_csv *a, const tessel_report_csv *b,
                     const tessel_plot_options *o)
{
    int succeeded = 0;
    for (long fail = 1; fail < 2000 && !succeeded; fail++) {
        test_alloc ta;
        test_alloc_init(&ta, fail);
        tessel_diag d;
        char *svg;
        size_t len;
        int rc = render(fig, a, b, o, &ta.allocator, &d, &svg, &len);
        if (rc) {
            ck_assert_msg(rc == TESSEL_ENOMEM, "figure %d fail_at %ld: %d %s", (int)fig, fail, rc,
                          d.message);
            ck_assert_int_eq(d.code, TESSEL_ENOMEM);
            ck_assert_uint_eq(len, 0);
        } else {
            succeeded = 1;
            ck_assert(len > 0);
        }
        free(svg);
        ck_assert_msg(ta.live == 0, "figure %d fail_at %ld: %ld blocks leaked", (int)fig, fail,
                      ta.live);
    }
    ck_assert(succeeded);
}

START_TEST(oom_every_allocation)
{
    tessel_report_csv *traffic = load("tests/plot/sweep-traffic.csv");
    tessel_report_csv *roof = load("tests/plot/roofline-summary.csv");
    tessel_report_csv *sum = load("tests/plot/sweep-summary.csv");
    tessel_report_csv *stat = load("tests/plot/sweep-stat-summary.csv");
    tessel_plot_options o;
    tessel_plot_options_init(&o);
    o.x = "energy_pj";
    o.y = "cycles";
    oom_loop(TRAFFIC, traffic, NULL, &o);
    oom_loop(ROOFLINE, roof, NULL, &o);
    oom_loop(PARETO, sum, NULL, &o);
    oom_loop(SCATTER, stat, sum, &o);
    unsigned char on[3];
    size_t count;
    test_alloc ta;
    test_alloc_init(&ta, 1);
    ck_assert_int_eq(tessel_plot_pareto_front((const double[]){ 1, 2, 3 },
                                              (const double[]){ 3, 2, 1 }, 3, on, &count,
                                              &ta.allocator),
                     TESSEL_ENOMEM);
    tessel_report_csv_free(&traffic);
    tessel_report_csv_free(&roof);
    tessel_report_csv_free(&sum);
    tessel_report_csv_free(&stat);
}
END_TEST

static Suite *plot_suite(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("parts");
    tcase_add_test(tc, linear_ticks);
    tcase_add_test(tc, log_ticks);
    tcase_add_test(tc, bad_axis_ranges);
    tcase_add_test(tc, tick_labels);
    tcase_add_test(tc, escaping);
    tcase_add_test(tc, pareto_by_hand);
    tcase_add_test(tc, pareto_against_brute_force);
    suite_add_tcase(s, tc);
    tc = tcase_create("figures");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, traffic_figure);
    tcase_add_test(tc, traffic_errors);
    tcase_add_test(tc, roofline_figure);
    tcase_add_test(tc, pareto_figure);
    tcase_add_test(tc, scatter_figure);
    tcase_add_test(tc, deterministic_output);
    tcase_add_test(tc, stream_error);
    tcase_add_test(tc, oom_every_allocation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(plot_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
