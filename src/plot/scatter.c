/* Predicted against reference: one metric of two CSV files joined like
 * `tessel validate` (tessel_validate_compare), on log-log axes with the
 * line y = x and a band of +-10 %; the title gives the median and p95
 * |relative error| that validate reports. */
#include <math.h>
#include <string.h>

#include "plot_internal.h"

#define BAND 0.10
#define INSIDE_COLOUR "#0072B2"  /* blue */
#define OUTSIDE_COLOUR "#D55E00" /* vermillion */
#define BAND_COLOUR "#dbe9f6"
#define PLOT_SIDE 420.0

typedef struct scatter {
    const tessel_allocator *alloc;
    tessel_validate_result *result;
    const char *metric;
    size_t n;             /* rows drawn */
    size_t *row;          /* their joined rows */
    double *pred, *ref;
    size_t left_out;      /* joined rows with a value missing or <= 0 */
    size_t outside;       /* drawn rows off by more than BAND */
    char pred_name[128], ref_name[128];
    plot_labels labels;   /* over the rows drawn */
    tessel_plot_axis axis; /* both axes */
} scatter;

static void scatter_free(scatter *sc)
{
    tessel_validate_result_free(&sc->result);
    tessel_dealloc(sc->alloc, sc->row);
    tessel_dealloc(sc->alloc, sc->pred);
    tessel_dealloc(sc->alloc, sc->ref);
    plot_labels_free(&sc->labels, sc->alloc);
}

/* The file name without directories and without ".csv". */
static void file_name(const tessel_report_csv *t, char *buf, size_t n)
{
    const char *name = tessel_report_csv_name(t);
    const char *slash = strrchr(name, '/');
    svg_shorten(slash ? slash + 1 : name, 32, buf, n);
    size_t len = strlen(buf);
    if (len > 4 && strcmp(buf + len - 4, ".csv") == 0)
        buf[len - 4] = '\0';
}

/* What a side is called: its `estimator` when every row has the same one,
 * else its file name without directories. */
static void side_name(const tessel_report_csv *t, char *buf, size_t n)
{
    long c = tessel_report_csv_find(t, "estimator");
    size_t rows = tessel_report_csv_rows(t);
    if (c >= 0 && rows > 0) {
        const char *first = tessel_report_csv_cell(t, 0, (size_t)c);
        int same = first[0] != '\0';
        for (size_t r = 1; r < rows && same; r++)
            same = strcmp(tessel_report_csv_cell(t, r, (size_t)c), first) == 0;
        if (same) {
            svg_shorten(first, 24, buf, n);
            return;
        }
    }
    file_name(t, buf, n);
}

static int collect_points(scatter *sc, const tessel_report_csv *pred, tessel_diag *diag)
{
    const tessel_validate_result *r = sc->result;
    if (r->nrows == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(pred), 0, 0, NULL,
                               "no row joins a row of the reference (%zu rows only here, %zu "
                               "only there): nothing to plot",
                               r->only_predicted, r->only_reference);
    sc->row = tessel_alloc_array(sc->alloc, r->nrows, sizeof(*sc->row));
    sc->pred = tessel_alloc_array(sc->alloc, r->nrows, sizeof(*sc->pred));
    sc->ref = tessel_alloc_array(sc->alloc, r->nrows, sizeof(*sc->ref));
    if (!sc->row || !sc->pred || !sc->ref)
        return PLOT_ENOMEM(diag);
    for (size_t i = 0; i < r->nrows; i++) {
        double p = r->pred[i * r->nmetrics], q = r->ref[i * r->nmetrics];
        if (!(p > 0 && q > 0 && isfinite(p) && isfinite(q))) {
            sc->left_out++;
            continue;
        }
        sc->outside += fabs(p - q) > BAND * q;
        sc->row[sc->n] = i;
        sc->pred[sc->n] = p;
        sc->ref[sc->n] = q;
        sc->n++;
    }
    if (sc->n == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(pred), 0, 0, NULL,
                               "no joined row has '%s' above 0 on both sides (log axes): "
                               "nothing to plot",
                               sc->metric);
    return 0;
}

static int scatter_labels(scatter *sc, tessel_diag *diag)
{
    const tessel_validate_result *r = sc->result;
    size_t k = r->nkeys;
    const char **field = tessel_alloc_array(sc->alloc, sc->n, (k ? k : 1) * sizeof(*field));
    if (!field)
        return PLOT_ENOMEM(diag);
    for (size_t i = 0; i < sc->n; i++)
        for (size_t j = 0; j < k; j++)
            field[i * k + j] = r->row_key[sc->row[i] * k + j];
    int rc = plot_labels_build(field, sc->n, k, (const char *const *)r->key, sc->alloc,
                               &sc->labels);
    tessel_dealloc(sc->alloc, field);
    return rc ? PLOT_ENOMEM(diag) : 0;
}

static int scatter_axis(scatter *sc, tessel_diag *diag)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < sc->n; i++) {
        lo = fmin(lo, fmin(sc->pred[i], sc->ref[i]));
        hi = fmax(hi, fmax(sc->pred[i], sc->ref[i]));
    }
    if (tessel_plot_axis_nice(lo / 1.15, hi * 1.15, 1, &sc->axis))
        return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, NULL,
                               "the values of '%s' span too wide a range to plot", sc->metric);
    return 0;
}

static int scatter_read(scatter *sc, const tessel_report_csv *pred, const tessel_report_csv *ref,
                        const tessel_plot_options *o, tessel_diag *diag)
{
    int rc = plot_require_rows(pred, diag);
    if (!rc)
        rc = plot_require_rows(ref, diag);
    if (rc)
        return rc;
    tessel_validate_options join;
    if (o->join)
        join = *o->join;
    else
        tessel_validate_options_init(&join);
    const char *metrics[1] = { sc->metric };
    join.metrics = metrics;
    join.nmetrics = 1;
    rc = tessel_validate_compare(pred, ref, &join, sc->alloc, &sc->result, diag);
    if (!rc)
        rc = collect_points(sc, pred, diag);
    if (!rc)
        rc = scatter_labels(sc, diag);
    if (!rc)
        rc = scatter_axis(sc, diag);
    side_name(pred, sc->pred_name, sizeof(sc->pred_name));
    side_name(ref, sc->ref_name, sizeof(sc->ref_name));
    if (strcmp(sc->pred_name, sc->ref_name) == 0) { /* two runs of one estimator */
        file_name(pred, sc->pred_name, sizeof(sc->pred_name));
        file_name(ref, sc->ref_name, sizeof(sc->ref_name));
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Drawing. */

static void percent(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, "%.3g %%", v * 100);
}

/* The title gives the median and p95 |relative error|; when a title of
 * the caller's or a long one leaves no room, they go to the subtitle. */
static void scatter_titles(plot_frame *fr, const scatter *sc, const tessel_plot_options *o)
{
    const tessel_validate_metric *m = &sc->result->metric[0];
    char median[32], p95[32], stats[160], what[300];
    percent(m->median_abs_rel_err, median, sizeof(median));
    percent(m->p95_abs_rel_err, p95, sizeof(p95));
    snprintf(stats, sizeof(stats), "median |error| %s, p95 %s", median, p95);
    snprintf(what, sizeof(what), "%s, %s against %s", sc->metric, sc->pred_name, sc->ref_name);
    const char *sep = sc->labels.common[0] ? " \xc2\xb7 " : "";
    snprintf(fr->title, sizeof(fr->title), "%s: %s", what, stats);
    if (!o->title && svg_text_width(fr->title, PLOT_TITLE_SIZE) <= fr->width - 24) {
        snprintf(fr->subtitle, sizeof(fr->subtitle), "%s%s%zu joined rows", sc->labels.common,
                 sep, m->rows);
        return;
    }
    snprintf(fr->title, sizeof(fr->title), "%s", o->title ? o->title : what);
    snprintf(fr->subtitle, sizeof(fr->subtitle), "%s (%zu rows)%s%s", stats, m->rows, sep,
             sc->labels.common);
}

static void scatter_caption(plot_frame *fr, const scatter *sc)
{
    const tessel_validate_result *r = sc->result;
    char keys[300] = "";
    for (size_t j = 0; j < r->nkeys; j++) {
        size_t used = strlen(keys);
        snprintf(keys + used, sizeof(keys) - used, "%s%s", j ? ", " : "", r->key[j]);
    }
    plot_caption_add(fr, "Rows joined on %s. Shaded: within \xc2\xb1%g %% of the reference; "
                         "%zu of %zu points lie outside.",
                     keys, BAND * 100, sc->outside, sc->n);
    if (r->only_predicted || r->only_reference)
        plot_caption_add(fr, "Not drawn: %zu rows only in %s, %zu only in %s.",
                         r->only_predicted, sc->pred_name, r->only_reference, sc->ref_name);
    if (sc->left_out)
        plot_caption_add(fr, "%zu joined row%s with a value missing or <= 0 left out (log axes).",
                         sc->left_out, sc->left_out == 1 ? "" : "s");
    if (sc->n <= PLOT_MAX_LABELS && sc->labels.varying[0])
        plot_caption_add(fr, "Labels: %s.", sc->labels.varying);
}

typedef struct pixel {
    double x, y;
} pixel;

static pixel at(const plot_frame *fr, const scatter *sc, double ref, double pred)
{
    pixel p = { plot_axis_position(&sc->axis, ref, fr->x0, fr->x1),
                plot_axis_position(&sc->axis, pred, fr->y1, fr->y0) };
    return p;
}

static void draw_band_and_diagonal(FILE *f, const plot_frame *fr, const scatter *sc)
{
    double lo = sc->axis.lo, hi = sc->axis.hi;
    pixel band[4] = { at(fr, sc, lo, lo * (1 - BAND)), at(fr, sc, hi, hi * (1 - BAND)),
                      at(fr, sc, hi, hi * (1 + BAND)), at(fr, sc, lo, lo * (1 + BAND)) };
    fputs("<polygon points=\"", f);
    for (size_t i = 0; i < 4; i++) {
        if (i)
            fputc(' ', f);
        svg_number(f, band[i].x);
        fputc(',', f);
        svg_number(f, band[i].y);
    }
    fprintf(f, "\" fill=\"%s\"/>\n", BAND_COLOUR);
    pixel a = at(fr, sc, lo, lo), b = at(fr, sc, hi, hi);
    svg_line(f, a.x, a.y, b.x, b.y, PLOT_MUTED_COLOUR, 1.25, NULL);
}

static void draw_points(FILE *f, const plot_frame *fr, const scatter *sc)
{
    const tessel_validate_result *r = sc->result;
    char tip[400];
    for (size_t i = 0; i < sc->n; i++) {
        size_t row = sc->row[i];
        int outside = fabs(sc->pred[i] - sc->ref[i]) > BAND * sc->ref[i];
        snprintf(tip, sizeof(tip), "%s (line %llu) %.15g, %s (line %llu) %.15g: %+.3g %%",
                 sc->pred_name, (unsigned long long)r->pred_line[row], sc->pred[i],
                 sc->ref_name, (unsigned long long)r->ref_line[row], sc->ref[i],
                 (sc->pred[i] - sc->ref[i]) / sc->ref[i] * 100);
        pixel p = at(fr, sc, sc->ref[i], sc->pred[i]);
        svg_marker(f, outside ? PLOT_TRIANGLE : PLOT_CIRCLE, p.x, p.y, 4.5,
                   outside ? OUTSIDE_COLOUR : INSIDE_COLOUR, "#ffffff", 0.85, tip);
    }
}

static void draw_labels(FILE *f, const plot_frame *fr, const scatter *sc)
{
    if (sc->n > PLOT_MAX_LABELS)
        return;
    double px[PLOT_MAX_LABELS], py[PLOT_MAX_LABELS];
    for (size_t i = 0; i < sc->n; i++) {
        pixel p = at(fr, sc, sc->ref[i], sc->pred[i]);
        px[i] = p.x;
        py[i] = p.y;
    }
    plot_place_labels(f, fr, px, py, (const char *const *)sc->labels.text, sc->n, NULL, 0);
}

static void scatter_draw(FILE *f, const scatter *sc, const tessel_plot_options *o)
{
    plot_frame fr;
    memset(&fr, 0, sizeof(fr));
    snprintf(fr.subtitle, sizeof(fr.subtitle), "-"); /* there is always one: see below */
    scatter_caption(&fr, sc);
    char x_title[300], y_title[300], band[64];
    const char *what = plot_column_title(sc->metric);
    snprintf(x_title, sizeof(x_title), "%s: %s", sc->ref_name, what);
    snprintf(y_title, sizeof(y_title), "%s: %s", sc->pred_name, what);
    snprintf(band, sizeof(band), "\xc2\xb1%g %%", BAND * 100);
    plot_key keys[] = {
        { .kind = PLOT_KEY_MARKER, .shape = PLOT_CIRCLE, .colour = INSIDE_COLOUR,
          .label = "within the band" },
        { .kind = PLOT_KEY_MARKER, .shape = PLOT_TRIANGLE, .colour = OUTSIDE_COLOUR,
          .label = "outside" },
        { .kind = PLOT_KEY_LINE, .colour = PLOT_MUTED_COLOUR, .label = "y = x" },
        { .kind = PLOT_KEY_BAND, .colour = BAND_COLOUR, .label = band },
    };
    size_t nkeys = sizeof(keys) / sizeof(keys[0]);
    plot_frame_request req = {
        .width = o->width,
        .height = o->height,
        .default_width = 720,
        .default_height = 560,
        .y_label_width = plot_axis_label_width(&sc->axis),
        .below_x = PLOT_FONT_SIZE + 10,
        .legend_width = plot_legend_width(keys, nkeys, NULL),
    };
    plot_frame_layout(&fr, &req);
    if (!o->width && !o->height) { /* a square plot area, so that y = x is the diagonal */
        req.default_width = fr.width - (fr.x1 - fr.x0) + PLOT_SIDE;
        req.default_height = fr.height - (fr.y1 - fr.y0) + PLOT_SIDE;
        plot_frame_layout(&fr, &req);
    }
    scatter_titles(&fr, sc, o); /* the width is known now */
    plot_frame_begin(f, &fr);
    plot_draw_grid(f, &fr, &sc->axis, &sc->axis);
    plot_clip_begin(f, &fr);
    draw_band_and_diagonal(f, &fr, sc);
    draw_points(f, &fr, sc);
    plot_clip_end(f);
    draw_labels(f, &fr, sc);
    plot_draw_axes(f, &fr, &sc->axis, &sc->axis, x_title, y_title);
    plot_draw_legend(f, &fr, NULL, keys, nkeys);
    plot_frame_end(f, &fr);
}

int tessel_plot_scatter(FILE *f, const tessel_report_csv *predicted,
                        const tessel_report_csv *reference, const tessel_plot_options *o,
                        const tessel_allocator *a, tessel_diag *diag)
{
    tessel_plot_options defaults;
    if (!o) {
        tessel_plot_options_init(&defaults);
        o = &defaults;
    }
    scatter sc;
    memset(&sc, 0, sizeof(sc));
    sc.alloc = a;
    sc.metric = o->metric && o->metric[0] ? o->metric : "dram_bytes";
    int rc = plot_check_options(o, diag);
    if (!rc)
        rc = scatter_read(&sc, predicted, reference, o, diag);
    if (!rc) {
        scatter_draw(f, &sc, o);
        rc = plot_finish(f, diag);
    }
    scatter_free(&sc);
    return rc;
}
