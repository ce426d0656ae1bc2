/* Pareto front: every design point as a grey dot over two columns that
 * are both minimised (energy and cycles, say), the non-dominated points
 * highlighted and joined by the step line that bounds what is reachable. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_internal.h"

typedef struct ranked {
    double x, y;
    size_t index;
} ranked;

/* By x, then y, then input order (qsort is not stable; this keeps the
 * result independent of the C library). */
static int by_x_then_y(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    if (a->y != b->y)
        return a->y < b->y ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Sorted by x, a point is dominated exactly when an earlier point other
 * than its equal has y' <= y; the running minimum of y over the front so
 * far decides it. */
int tessel_plot_pareto_front(const double *x, const double *y, size_t n, unsigned char *on_front,
                             size_t *count, const tessel_allocator *a)
{
    *count = 0;
    if (n == 0)
        return 0;
    memset(on_front, 0, n);
    ranked *r = tessel_alloc_array(a, n, sizeof(*r));
    if (!r)
        return TESSEL_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && isfinite(y[i])) {
            ranked p = { x[i], y[i], i };
            r[m++] = p;
        }
    qsort(r, m, sizeof(*r), by_x_then_y);
    const ranked *last = NULL; /* the last point put on the front */
    for (size_t i = 0; i < m; i++) {
        int equal_to_last = last && r[i].x == last->x && r[i].y == last->y;
        if (!last || r[i].y < last->y || equal_to_last) {
            on_front[r[i].index] = 1;
            (*count)++;
            if (!equal_to_last)
                last = &r[i];
        }
    }
    tessel_dealloc(a, r);
    return 0;
}

/* ------------------------------------------------------------------ */

typedef struct pareto {
    const tessel_report_csv *t;
    const tessel_allocator *alloc;
    size_t x_col, y_col;
    size_t n;              /* points drawn */
    size_t *row;           /* their rows */
    double *x, *y;
    unsigned char *on_front;
    size_t nfront;
    size_t missing, not_positive; /* rows left out */
    plot_labels labels;    /* of every point drawn */
    size_t *front;         /* indices of the front's points, in x order */
    tessel_plot_axis xa, ya;
} pareto;

static void pareto_free(pareto *pa)
{
    const tessel_allocator *a = pa->alloc;
    tessel_dealloc(a, pa->row);
    tessel_dealloc(a, pa->x);
    tessel_dealloc(a, pa->y);
    tessel_dealloc(a, pa->on_front);
    tessel_dealloc(a, pa->front);
    plot_labels_free(&pa->labels, a);
}

static int read_points(pareto *pa, int log_scale, tessel_diag *diag)
{
    size_t rows = tessel_report_csv_rows(pa->t);
    pa->row = tessel_alloc_array(pa->alloc, rows, sizeof(*pa->row));
    pa->x = tessel_alloc_array(pa->alloc, rows, sizeof(*pa->x));
    pa->y = tessel_alloc_array(pa->alloc, rows, sizeof(*pa->y));
    if (!pa->row || !pa->x || !pa->y)
        return PLOT_ENOMEM(diag);
    for (size_t r = 0; r < rows; r++) {
        double x, y;
        int rc = plot_read_number(pa->t, r, pa->x_col, &x, diag);
        if (!rc)
            rc = plot_read_number(pa->t, r, pa->y_col, &y, diag);
        if (rc)
            return rc;
        if (isnan(x) || isnan(y)) {
            pa->missing++;
            continue;
        }
        if (log_scale && (x <= 0 || y <= 0)) {
            pa->not_positive++;
            continue;
        }
        pa->row[pa->n] = r;
        pa->x[pa->n] = x;
        pa->y[pa->n] = y;
        pa->n++;
    }
    if (pa->n == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(pa->t), 0, 0, NULL,
                               "no row has numbers in both '%s' and '%s'%s: nothing to plot",
                               tessel_report_csv_column_name(pa->t, pa->x_col),
                               tessel_report_csv_column_name(pa->t, pa->y_col),
                               log_scale ? " above 0 (log axes)" : "");
    return 0;
}

static int by_x_of(const pareto *pa, size_t i, size_t j)
{
    if (pa->x[i] != pa->x[j])
        return pa->x[i] < pa->x[j];
    if (pa->y[i] != pa->y[j])
        return pa->y[i] < pa->y[j];
    return i < j;
}

/* The front's points in x order (insertion sort: fronts are short). */
static int collect_front(pareto *pa, tessel_diag *diag)
{
    pa->front = tessel_alloc_array(pa->alloc, pa->nfront, sizeof(*pa->front));
    if (!pa->front)
        return PLOT_ENOMEM(diag);
    size_t k = 0;
    for (size_t i = 0; i < pa->n; i++) {
        if (!pa->on_front[i])
            continue;
        size_t j = k++;
        while (j > 0 && by_x_of(pa, i, pa->front[j - 1])) {
            pa->front[j] = pa->front[j - 1];
            j--;
        }
        pa->front[j] = i;
    }
    return 0;
}

/* Labels from the identity fields that vary over all points drawn, so
 * that a front point's label tells it from every other point. */
static int point_labels(pareto *pa, tessel_diag *diag)
{
    size_t ncols = tessel_report_csv_columns(pa->t);
    size_t *cols = tessel_alloc_array(pa->alloc, ncols, sizeof(*cols));
    if (!cols)
        return PLOT_ENOMEM(diag);
    size_t k = plot_identity_columns(pa->t, cols);
    int rc = plot_labels_from_rows(pa->t, pa->row, pa->n, cols, k, pa->alloc, &pa->labels);
    tessel_dealloc(pa->alloc, cols);
    return rc ? PLOT_ENOMEM(diag) : 0;
}

static void range_of(const double *v, size_t n, double *lo, double *hi)
{
    *lo = *hi = v[0];
    for (size_t i = 1; i < n; i++) {
        *lo = v[i] < *lo ? v[i] : *lo;
        *hi = v[i] > *hi ? v[i] : *hi;
    }
}

/* A little room around the data so that no marker sits on an axis. */
static int padded_axis(const double *v, size_t n, int log_scale, tessel_plot_axis *ax)
{
    double lo, hi;
    range_of(v, n, &lo, &hi);
    if (log_scale) {
        lo /= 1.08;
        hi *= 1.08;
    } else {
        double pad = (hi - lo) * 0.04;
        lo -= pad;
        hi += pad;
        if (lo < 0 && lo + pad >= 0)
            lo = 0; /* keep non-negative data on a non-negative axis */
    }
    return tessel_plot_axis_nice(lo, hi, log_scale, ax);
}

static int pareto_read(pareto *pa, const tessel_plot_options *o, tessel_diag *diag)
{
    if (!o->x || !o->y || !o->x[0] || !o->y[0])
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "the Pareto figure needs the two columns to minimise (--x and "
                               "--y)");
    int rc = plot_require_rows(pa->t, diag);
    if (!rc)
        rc = plot_find_column(pa->t, o->x, "the Pareto figure's --x", &pa->x_col, pa->alloc,
                              diag);
    if (!rc)
        rc = plot_find_column(pa->t, o->y, "the Pareto figure's --y", &pa->y_col, pa->alloc,
                              diag);
    if (!rc)
        rc = read_points(pa, o->log_scale, diag);
    if (rc)
        return rc;
    pa->on_front = tessel_alloc(pa->alloc, pa->n);
    if (!pa->on_front ||
        tessel_plot_pareto_front(pa->x, pa->y, pa->n, pa->on_front, &pa->nfront, pa->alloc))
        return PLOT_ENOMEM(diag);
    if (padded_axis(pa->x, pa->n, o->log_scale, &pa->xa) ||
        padded_axis(pa->y, pa->n, o->log_scale, &pa->ya))
        return tessel_diag_set(diag, TESSEL_ERANGE, tessel_report_csv_name(pa->t), 0, 0, NULL,
                               "the values of '%s' or '%s' span too wide a range to plot", o->x,
                               o->y);
    rc = collect_front(pa, diag);
    if (!rc)
        rc = point_labels(pa, diag);
    return rc;
}

/* ------------------------------------------------------------------ */

#define ALL_COLOUR "#9a9a9a"
#define FRONT_COLOUR "#D55E00" /* vermillion */

/* The staircase bounding the reachable region: right along y, then down. */
static void draw_front_line(FILE *f, const plot_frame *fr, const pareto *pa,
                            const tessel_plot_axis *xa, const tessel_plot_axis *ya)
{
    fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"", FRONT_COLOUR);
    for (size_t i = 0; i < pa->nfront; i++) {
        size_t p = pa->front[i];
        double px = plot_axis_position(xa, pa->x[p], fr->x0, fr->x1);
        double py = plot_axis_position(ya, pa->y[p], fr->y1, fr->y0);
        if (i > 0) {
            fputc('H', f);
            svg_number(f, px);
        }
        fputc(i ? 'V' : 'M', f);
        if (!i) {
            svg_number(f, px);
            fputc(' ', f);
        }
        svg_number(f, py);
    }
    fputs("\"/>\n", f);
}

static void point_tooltip(char *buf, size_t n, const pareto *pa, size_t i)
{
    snprintf(buf, n, "line %llu: %s = %.15g, %s = %.15g",
             (unsigned long long)tessel_report_csv_line(pa->t, pa->row[i]),
             tessel_report_csv_column_name(pa->t, pa->x_col), pa->x[i],
             tessel_report_csv_column_name(pa->t, pa->y_col), pa->y[i]);
}

static void draw_points(FILE *f, const plot_frame *fr, const pareto *pa,
                        const tessel_plot_axis *xa, const tessel_plot_axis *ya)
{
    char tip[300];
    for (size_t i = 0; i < pa->n; i++) {
        if (pa->on_front[i])
            continue;
        point_tooltip(tip, sizeof(tip), pa, i);
        svg_marker(f, PLOT_CIRCLE, plot_axis_position(xa, pa->x[i], fr->x0, fr->x1),
                   plot_axis_position(ya, pa->y[i], fr->y1, fr->y0), 3.5, ALL_COLOUR, NULL, 0.7,
                   tip);
    }
    draw_front_line(f, fr, pa, xa, ya);
    for (size_t k = 0; k < pa->nfront; k++) {
        size_t i = pa->front[k];
        point_tooltip(tip, sizeof(tip), pa, i);
        svg_marker(f, PLOT_DIAMOND, plot_axis_position(xa, pa->x[i], fr->x0, fr->x1),
                   plot_axis_position(ya, pa->y[i], fr->y1, fr->y0), 5, FRONT_COLOUR, "#ffffff",
                   1, tip);
    }
}

static void draw_front_labels(FILE *f, const plot_frame *fr, const pareto *pa,
                              const tessel_plot_axis *xa, const tessel_plot_axis *ya)
{
    if (pa->nfront > PLOT_MAX_LABELS)
        return;
    double px[PLOT_MAX_LABELS], py[PLOT_MAX_LABELS];
    const char *text[PLOT_MAX_LABELS];
    for (size_t k = 0; k < pa->nfront; k++) {
        size_t i = pa->front[k];
        px[k] = plot_axis_position(xa, pa->x[i], fr->x0, fr->x1);
        py[k] = plot_axis_position(ya, pa->y[i], fr->y1, fr->y0);
        text[k] = pa->labels.text[i];
    }
    plot_place_labels(f, fr, px, py, text, pa->nfront, NULL, 0);
}

static void pareto_caption(plot_frame *fr, const pareto *pa, const tessel_plot_options *o)
{
    plot_caption_add(fr, "%zu of %zu design points are Pareto-optimal: no other point is as low "
                         "in both %s and %s and lower in one.",
                     pa->nfront, pa->n, o->x, o->y);
    if (pa->nfront > PLOT_MAX_LABELS)
        plot_caption_add(fr, "Too many to label.");
    else if (pa->labels.varying[0])
        plot_caption_add(fr, "Labels: %s.", pa->labels.varying);
    if (pa->missing)
        plot_caption_add(fr, "%zu row%s without a number in %s or %s left out.", pa->missing,
                         pa->missing == 1 ? "" : "s", o->x, o->y);
    if (pa->not_positive)
        plot_caption_add(fr, "%zu row%s with a value <= 0 left out (log axes).",
                         pa->not_positive, pa->not_positive == 1 ? "" : "s");
}

static void pareto_draw(FILE *f, const pareto *pa, const tessel_plot_options *o)
{
    plot_frame fr;
    memset(&fr, 0, sizeof(fr));
    const char *x_title = plot_column_title(o->x), *y_title = plot_column_title(o->y);
    if (o->title)
        snprintf(fr.title, sizeof(fr.title), "%s", o->title);
    else
        snprintf(fr.title, sizeof(fr.title), "Pareto front: %s against %s, both minimised", o->y,
                 o->x);
    snprintf(fr.subtitle, sizeof(fr.subtitle), "%s", pa->labels.common);
    pareto_caption(&fr, pa, o);
    const tessel_plot_axis *xa = &pa->xa, *ya = &pa->ya;
    plot_key keys[] = {
        { .kind = PLOT_KEY_MARKER, .shape = PLOT_CIRCLE, .colour = ALL_COLOUR,
          .label = "design point" },
        { .kind = PLOT_KEY_MARKER, .shape = PLOT_DIAMOND, .colour = FRONT_COLOUR,
          .label = "Pareto-optimal" },
        { .kind = PLOT_KEY_LINE, .colour = FRONT_COLOUR, .label = "Pareto front" },
    };
    size_t nkeys = sizeof(keys) / sizeof(keys[0]);
    plot_frame_request req = {
        .width = o->width,
        .height = o->height,
        .default_width = 720,
        .default_height = 500,
        .y_label_width = plot_axis_label_width(ya),
        .below_x = PLOT_FONT_SIZE + 10,
        .legend_width = plot_legend_width(keys, nkeys, NULL),
    };
    plot_frame_layout(&fr, &req);
    plot_frame_begin(f, &fr);
    plot_draw_grid(f, &fr, xa, ya);
    plot_clip_begin(f, &fr);
    draw_points(f, &fr, pa, xa, ya);
    plot_clip_end(f);
    draw_front_labels(f, &fr, pa, xa, ya);
    plot_draw_axes(f, &fr, xa, ya, x_title, y_title);
    plot_draw_legend(f, &fr, NULL, keys, nkeys);
    plot_frame_end(f, &fr);
}

int tessel_plot_pareto(FILE *f, const tessel_report_csv *table, const tessel_plot_options *o,
                       const tessel_allocator *a, tessel_diag *diag)
{
    tessel_plot_options defaults;
    if (!o) {
        tessel_plot_options_init(&defaults);
        o = &defaults;
    }
    pareto pa;
    memset(&pa, 0, sizeof(pa));
    pa.t = table;
    pa.alloc = a;
    int rc = plot_check_options(o, diag);
    if (!rc)
        rc = pareto_read(&pa, o, diag);
    if (!rc) {
        pareto_draw(f, &pa, o);
        rc = plot_finish(f, diag);
    }
    pareto_free(&pa);
    return rc;
}
