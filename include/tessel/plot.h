/* tessel — figures: self-contained SVG 1.1 plots of tessel's CSV reports,
 * ready for a paper draft.  Module `plot`: depends on `report` (and what
 * it uses).  docs/plot.md describes every figure.
 *
 * Four figures, each drawn from tables read with tessel_report_csv_load:
 *   traffic   stacked bars per storage level, one segment per tensor, bars
 *             grouped per design point (traffic.csv)
 *   roofline  performance against operational intensity on log-log axes,
 *             with the compute and DRAM-bandwidth ceilings (summary.csv)
 *   pareto    two columns to minimise, the non-dominated points joined by
 *             a step line (summary.csv, pareto.csv)
 *   scatter   predicted against reference values of one metric, joined
 *             like tessel_validate_compare, with y = x and a +-10 % band
 *
 * Columns are looked up by name, so extra columns anywhere (a sweep's
 * leading `point` and axis columns) are fine. Every function checks its
 * input before writing anything: on error nothing has been written to the
 * stream, and diag names the file, and the line and column when one field
 * is at fault. Output is deterministic: identical inputs and options give
 * byte-identical SVG. The library writes only to the FILE * it is given. */
#ifndef TESSEL_PLOT_H
#define TESSEL_PLOT_H

#include <stddef.h>
#include <stdio.h>

#include "tessel/base.h"
#include "tessel/report.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TESSEL_PLOT_MAX_POINTS 40u  /* traffic: design points drawn by default */
#define TESSEL_PLOT_MAX_SIZE 4000u  /* largest width or height, in pixels */

typedef struct tessel_plot_options {
    const char *title;      /* NULL: a title describing the figure */
    unsigned width, height; /* SVG size in pixels, at most TESSEL_PLOT_MAX_SIZE; 0: the
                               figure's default. Grown when too small for the text. */
    /* traffic: the column stacked per level and tensor; NULL or "bytes":
     * data_bytes + metadata_bytes. Any numeric column works (energy_pj).
     * scatter: the metric compared; NULL: dram_bytes. */
    const char *metric;
    size_t max_points;      /* traffic: points drawn (the first ones); 0: TESSEL_PLOT_MAX_POINTS */
    const char *dram_level; /* roofline: the backing store's name in `bound`; NULL: "DRAM" */
    const char *x, *y;      /* pareto: the two columns to minimise (both required) */
    int log_scale;          /* pareto: log10 axes (points <= 0 are left out, and counted) */
    /* scatter: how rows are joined; NULL: tessel_validate_compare's default
     * keys. Its metric list is ignored (`metric` above is used). */
    const tessel_validate_options *join;
} tessel_plot_options;

void tessel_plot_options_init(tessel_plot_options *o);

/* The figures. `f` receives the whole SVG document. Return 0, TESSEL_EINVAL
 * for a missing column, a field that is not a number, an empty table or a
 * bad option, TESSEL_ENOMEM, or TESSEL_EIO when the stream reports an
 * error. `a` may be NULL (the default allocator). */
int tessel_plot_traffic(FILE *f, const tessel_report_csv *traffic, const tessel_plot_options *o,
                        const tessel_allocator *a, tessel_diag *diag);
int tessel_plot_roofline(FILE *f, const tessel_report_csv *summary, const tessel_plot_options *o,
                         const tessel_allocator *a, tessel_diag *diag);
int tessel_plot_pareto(FILE *f, const tessel_report_csv *table, const tessel_plot_options *o,
                       const tessel_allocator *a, tessel_diag *diag);
int tessel_plot_scatter(FILE *f, const tessel_report_csv *predicted,
                        const tessel_report_csv *reference, const tessel_plot_options *o,
                        const tessel_allocator *a, tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* Building blocks, public so that they can be tested and reused. */

#define TESSEL_PLOT_MAX_TICKS 16u

/* An axis: its ends and its labelled ticks, "nice" numbers enclosing the
 * data range.
 *   linear  ticks are multiples of 1, 2 or 5 x 10^k, about five of them;
 *   log10   spanning more than about two decades: powers of ten (every
 *           k-th one for a wide range), labelled 10^e (decades = 1);
 *           about two decades or less: 1-2-5 multiples; less than half a
 *           decade: linear ticks placed on the log scale. */
typedef struct tessel_plot_axis {
    double lo, hi;   /* the axis ends (lo < hi; both > 0 on a log axis) */
    int log10;       /* positions are log10(value) */
    int decades;     /* the ticks are powers of ten, labelled 10^e */
    size_t nticks;
    double tick[TESSEL_PLOT_MAX_TICKS]; /* ascending, lo <= tick <= hi */
} tessel_plot_axis;

/* The axis for data in [lo, hi] (lo <= hi; lo == hi is widened). TESSEL_EINVAL
 * for values that are not finite, lo > hi, or lo <= 0 on a log axis. */
int tessel_plot_axis_nice(double lo, double hi, int log10, tessel_plot_axis *out);

/* A tick label: "0", "0.25", "2.5", "40k", "1.5M", "3e-05". Returns the
 * length it needed, like snprintf. */
int tessel_plot_format_number(double v, char *buf, size_t n);

/* Writes s as XML character data or attribute text: & < > " ' become
 * entities; control characters and bytes that are not valid UTF-8 become
 * U+FFFD, so any input gives a well-formed document. */
void tessel_plot_escape(FILE *f, const char *s);

/* Marks in on_front[0..n) (1 or 0) the points not dominated when both x
 * and y are minimised: no other point has x' <= x and y' <= y with one of
 * them strictly smaller. Equal points are all kept. Points whose x or y is
 * not finite are never on the front. *count gets the number marked.
 * 0 or TESSEL_ENOMEM. */
int tessel_plot_pareto_front(const double *x, const double *y, size_t n, unsigned char *on_front,
                             size_t *count, const tessel_allocator *a);

#ifdef __cplusplus
}
#endif
#endif
