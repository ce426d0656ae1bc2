/* Roofline: performance (MACs per cycle, flops / cycles) against
 * operational intensity (MACs per DRAM byte, flops / dram_bytes) on
 * log-log axes, one marker per design point, coloured by what bounds it.
 *
 * summary.csv has no bandwidth column, so the ceilings come from the rows:
 *   compute peak    = flops / compute_cycles (MACs per cycle at full use);
 *   DRAM bandwidth  = dram_bytes / cycles of the points whose `bound` is
 *                     the DRAM level: their time is their DRAM bytes over
 *                     the bandwidth, so they sit exactly on the slope.
 * With no DRAM-bound point the slope is unknown and not drawn (the caption
 * says so). A sweep over PEs or bandwidths has several ceilings: the
 * highest of each kind makes the roof, the others are drawn dashed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_internal.h"

#define MAX_BOUNDS 6u       /* marker kinds; the rest share "other" */
#define MAX_CEILINGS 8u     /* dashed ceilings drawn besides the roof */

typedef struct roofline {
    const tessel_report_csv *t;
    const tessel_allocator *alloc;
    const char *dram;
    size_t flops_col, dram_col, cycles_col, compute_col, bound_col;
    size_t n;                /* points drawn */
    size_t *row;
    double *intensity, *performance;
    unsigned char *kind;     /* index into bound[] */
    size_t left_out;
    double *peak, *bandwidth; /* ceilings: distinct and descending once read */
    size_t npeaks, nbandwidths, dram_bound;
    size_t nbounds;
    char bound[MAX_BOUNDS + 1][64];
    plot_labels labels;
    tessel_plot_axis xa, ya;
} roofline;

static void roofline_free(roofline *rf)
{
    const tessel_allocator *a = rf->alloc;
    tessel_dealloc(a, rf->row);
    tessel_dealloc(a, rf->intensity);
    tessel_dealloc(a, rf->performance);
    tessel_dealloc(a, rf->kind);
    tessel_dealloc(a, rf->peak);
    tessel_dealloc(a, rf->bandwidth);
    plot_labels_free(&rf->labels, a);
}

static int find_columns(roofline *rf, tessel_diag *diag)
{
    static const char why[] = "the roofline figure";
    int rc = plot_find_column(rf->t, "flops", why, &rf->flops_col, rf->alloc, diag);
    if (!rc)
        rc = plot_find_column(rf->t, "dram_bytes", why, &rf->dram_col, rf->alloc, diag);
    if (!rc)
        rc = plot_find_column(rf->t, "cycles", why, &rf->cycles_col, rf->alloc, diag);
    if (!rc)
        rc = plot_find_column(rf->t, "compute_cycles", "the roofline's compute ceiling",
                              &rf->compute_col, rf->alloc, diag);
    if (!rc)
        rc = plot_find_column(rf->t, "bound", "the roofline (colours, DRAM ceiling)",
                              &rf->bound_col, rf->alloc, diag);
    return rc;
}

/* The marker kind of a `bound` value: compute first, DRAM second, then
 * others in order of appearance; past MAX_BOUNDS they share "other". */
static unsigned char bound_kind(roofline *rf, const char *bound)
{
    for (size_t i = 0; i < rf->nbounds; i++)
        if (strcmp(rf->bound[i], bound) == 0)
            return (unsigned char)i;
    if (rf->nbounds == MAX_BOUNDS) {
        snprintf(rf->bound[MAX_BOUNDS], sizeof(rf->bound[0]), "other");
        return MAX_BOUNDS;
    }
    snprintf(rf->bound[rf->nbounds], sizeof(rf->bound[0]), "%s", bound);
    return (unsigned char)rf->nbounds++;
}

static int descending(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a > b ? -1 : a < b;
}

/* Sorts list[0..*n) descending and keeps one of each run of values equal
 * within a relative 1e-9. */
static void sort_distinct(double *list, size_t *n)
{
    qsort(list, *n, sizeof(*list), descending);
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (k == 0 || list[k - 1] - list[i] > 1e-9 * list[k - 1])
            list[k++] = list[i];
    *n = k;
}

static int read_row(roofline *rf, size_t r, tessel_diag *diag)
{
    double flops, dram, cycles, compute;
    int rc = plot_read_number(rf->t, r, rf->flops_col, &flops, diag);
    if (!rc)
        rc = plot_read_number(rf->t, r, rf->dram_col, &dram, diag);
    if (!rc)
        rc = plot_read_number(rf->t, r, rf->cycles_col, &cycles, diag);
    if (!rc)
        rc = plot_read_number(rf->t, r, rf->compute_col, &compute, diag);
    if (rc)
        return rc;
    if (!(flops > 0 && dram > 0 && cycles > 0)) {
        rf->left_out++;
        return 0;
    }
    const char *bound = tessel_report_csv_cell(rf->t, r, rf->bound_col);
    if (compute > 0)
        rf->peak[rf->npeaks++] = flops / compute;
    if (strcmp(bound, rf->dram) == 0) {
        rf->bandwidth[rf->nbandwidths++] = dram / cycles;
        rf->dram_bound++;
    }
    rf->row[rf->n] = r;
    rf->intensity[rf->n] = flops / dram;
    rf->performance[rf->n] = flops / cycles;
    rf->kind[rf->n] = bound_kind(rf, bound);
    rf->n++;
    return 0;
}

static void range_include(double *lo, double *hi, double v)
{
    if (v > 0 && isfinite(v)) {
        *lo = v < *lo ? v : *lo;
        *hi = v > *hi ? v : *hi;
    }
}

/* Axes enclosing every point, every ceiling and the roof's ridge. */
static int roofline_axes(roofline *rf)
{
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    for (size_t i = 0; i < rf->n; i++) {
        range_include(&xlo, &xhi, rf->intensity[i]);
        range_include(&ylo, &yhi, rf->performance[i]);
    }
    for (size_t i = 0; i < rf->npeaks; i++)
        range_include(&ylo, &yhi, rf->peak[i]);
    if (rf->npeaks && rf->nbandwidths)
        range_include(&xlo, &xhi, rf->peak[0] / rf->bandwidth[0]);
    int rc = tessel_plot_axis_nice(xlo / 2, xhi * 2, 1, &rf->xa);
    if (!rc)
        rc = tessel_plot_axis_nice(ylo / 2, yhi * 2, 1, &rf->ya);
    return rc;
}

static int roofline_read(roofline *rf, tessel_diag *diag)
{
    int rc = plot_require_rows(rf->t, diag);
    if (!rc)
        rc = find_columns(rf, diag);
    if (rc)
        return rc;
    size_t rows = tessel_report_csv_rows(rf->t);
    rf->row = tessel_alloc_array(rf->alloc, rows, sizeof(*rf->row));
    rf->intensity = tessel_alloc_array(rf->alloc, rows, sizeof(*rf->intensity));
    rf->performance = tessel_alloc_array(rf->alloc, rows, sizeof(*rf->performance));
    rf->kind = tessel_alloc_array(rf->alloc, rows, sizeof(*rf->kind));
    rf->peak = tessel_alloc_array(rf->alloc, rows, sizeof(*rf->peak));
    rf->bandwidth = tessel_alloc_array(rf->alloc, rows, sizeof(*rf->bandwidth));
    if (!rf->row || !rf->intensity || !rf->performance || !rf->kind || !rf->peak ||
        !rf->bandwidth)
        return PLOT_ENOMEM(diag);
    /* compute and DRAM take the first two kinds, in that order */
    bound_kind(rf, "compute");
    bound_kind(rf, rf->dram);
    for (size_t r = 0; r < rows && !rc; r++)
        rc = read_row(rf, r, diag);
    if (rc)
        return rc;
    if (rf->n == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(rf->t), 0, 0, NULL,
                               "no row has flops, dram_bytes and cycles all above 0: nothing "
                               "to plot");
    sort_distinct(rf->peak, &rf->npeaks);
    sort_distinct(rf->bandwidth, &rf->nbandwidths);
    if (roofline_axes(rf))
        return tessel_diag_set(diag, TESSEL_ERANGE, tessel_report_csv_name(rf->t), 0, 0, NULL,
                               "the intensities or performances span too wide a range to plot");
    if (rf->n > PLOT_MAX_LABELS)
        return 0;
    size_t ncols = tessel_report_csv_columns(rf->t);
    size_t *cols = tessel_alloc_array(rf->alloc, ncols, sizeof(*cols));
    if (!cols)
        return PLOT_ENOMEM(diag);
    size_t k = plot_identity_columns(rf->t, cols);
    rc = plot_labels_from_rows(rf->t, rf->row, rf->n, cols, k, rf->alloc, &rf->labels);
    tessel_dealloc(rf->alloc, cols);
    return rc ? PLOT_ENOMEM(diag) : 0;
}

/* ------------------------------------------------------------------ */
/* Drawing. */

#define ROOF_COLOUR "#333333"
#define CEILING_COLOUR "#999999"

typedef struct pixel {
    double x, y;
} pixel;

static pixel at(const plot_frame *fr, const roofline *rf, double intensity, double performance)
{
    pixel p = { plot_axis_position(&rf->xa, intensity, fr->x0, fr->x1),
                plot_axis_position(&rf->ya, performance, fr->y1, fr->y0) };
    return p;
}

static void polyline(FILE *f, const pixel *p, size_t n, const char *colour, double width,
                     const char *dash)
{
    fputs("<polyline fill=\"none\" points=\"", f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(' ', f);
        svg_number(f, p[i].x);
        fputc(',', f);
        svg_number(f, p[i].y);
    }
    fprintf(f, "\" stroke=\"%s\"", colour);
    svg_attr(f, "stroke-width", width);
    if (dash)
        fprintf(f, " stroke-dasharray=\"%s\"", dash);
    fputs("/>\n", f);
}

/* The bandwidth line b x I across the whole x axis. */
static void slope(FILE *f, const plot_frame *fr, const roofline *rf, double b, const char *colour,
                  double width, const char *dash)
{
    pixel p[2] = { at(fr, rf, rf->xa.lo, b * rf->xa.lo), at(fr, rf, rf->xa.hi, b * rf->xa.hi) };
    polyline(f, p, 2, colour, width, dash);
}

static void draw_ceilings(FILE *f, const plot_frame *fr, const roofline *rf)
{
    for (size_t i = 1; i < rf->npeaks && i <= MAX_CEILINGS; i++) {
        pixel p[2] = { at(fr, rf, rf->xa.lo, rf->peak[i]), at(fr, rf, rf->xa.hi, rf->peak[i]) };
        polyline(f, p, 2, CEILING_COLOUR, 1, "5 4");
    }
    for (size_t i = 1; i < rf->nbandwidths && i <= MAX_CEILINGS; i++)
        slope(f, fr, rf, rf->bandwidth[i], CEILING_COLOUR, 1, "5 4");
    if (rf->npeaks && rf->nbandwidths) {
        double peak = rf->peak[0], ridge = peak / rf->bandwidth[0];
        pixel p[3] = { at(fr, rf, rf->xa.lo, rf->bandwidth[0] * rf->xa.lo),
                       at(fr, rf, ridge, peak), at(fr, rf, rf->xa.hi, peak) };
        polyline(f, p, 3, ROOF_COLOUR, 2, NULL);
    } else if (rf->npeaks) {
        pixel p[2] = { at(fr, rf, rf->xa.lo, rf->peak[0]), at(fr, rf, rf->xa.hi, rf->peak[0]) };
        polyline(f, p, 2, ROOF_COLOUR, 2, NULL);
    } else if (rf->nbandwidths) {
        slope(f, fr, rf, rf->bandwidth[0], ROOF_COLOUR, 2, NULL);
    }
}

/* Distance from (x, y) to the segment from p to q. */
static double segment_distance(double x, double y, pixel p, pixel q)
{
    double dx = q.x - p.x, dy = q.y - p.y, len2 = dx * dx + dy * dy;
    double t = len2 > 0 ? ((x - p.x) * dx + (y - p.y) * dy) / len2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double ex = p.x + t * dx - x, ey = p.y + t * dy - y;
    return sqrt(ex * ex + ey * ey);
}

#define LABEL_OFFSET 10.0 /* from the line to the text's baseline */

/* Text already drawn, kept clear of the point labels. */
typedef struct obstacles {
    plot_box box[PLOT_MAX_OBSTACLES];
    size_t n;
} obstacles;

static void add_obstacle(obstacles *o, double x0, double y0, double x1, double y1)
{
    if (o->n == PLOT_MAX_OBSTACLES)
        return;
    plot_box b = { x0, y0, x1, y1 };
    o->box[o->n++] = b;
}

/* A slanted text line as small boxes along its middle, from p to q. */
static void add_slanted_obstacle(obstacles *o, pixel p, pixel q)
{
    double len = hypot(q.x - p.x, q.y - p.y);
    size_t steps = (size_t)(len / 8) + 1;
    for (size_t i = 0; i <= steps && i < 32; i++) {
        double t = (double)i / (double)steps;
        double x = p.x + t * (q.x - p.x), y = p.y + t * (q.y - p.y);
        add_obstacle(o, x - 6, y - 6, x + 6, y + 6);
    }
}

/* The label of the bandwidth line, written along it, above it, at the
 * first of a few places (fractions of the way, in log x, from where the
 * line enters the plot area to the ridge) where it covers no marker. */
static void slope_label(FILE *f, const plot_frame *fr, const roofline *rf, const char *text,
                        obstacles *taken)
{
    static const double at_fraction[] = { 0.3, 0.15, 0.45, 0.6, 0.05, 0.75 };
    double b = rf->bandwidth[0];
    double enter = fmax(rf->xa.lo, rf->ya.lo / b);
    double leave = rf->npeaks ? fmin(rf->peak[0] / b, rf->xa.hi) : fmin(rf->xa.hi, rf->ya.hi / b);
    if (!(leave > enter))
        return;
    double width = svg_text_width(text, PLOT_SMALL_SIZE), best_clearance = -1;
    pixel best = { 0, 0 }, best_mid0 = { 0, 0 }, best_mid1 = { 0, 0 };
    double best_angle = 0;
    for (size_t k = 0; k < sizeof(at_fraction) / sizeof(at_fraction[0]); k++) {
        double x = enter * pow(leave / enter, at_fraction[k]);
        pixel p = at(fr, rf, x, b * x), q = at(fr, rf, x * 2, b * x * 2);
        double angle = atan2(q.y - p.y, q.x - p.x);
        double nx = sin(angle), ny = -cos(angle); /* the normal pointing up */
        pixel start = { p.x + nx * LABEL_OFFSET, p.y + ny * LABEL_OFFSET };
        pixel mid0 = { start.x + nx * 4, start.y + ny * 4 };
        pixel mid1 = { mid0.x + width * cos(angle), mid0.y + width * sin(angle) };
        if (mid1.x > fr->x1 || mid1.y < fr->y0)
            continue; /* would leave the plot area */
        double clearance = INFINITY;
        for (size_t i = 0; i < rf->n; i++) {
            pixel m = at(fr, rf, rf->intensity[i], rf->performance[i]);
            clearance = fmin(clearance, segment_distance(m.x, m.y, mid0, mid1));
        }
        if (clearance > best_clearance) {
            best_clearance = clearance;
            best = start;
            best_angle = angle;
            best_mid0 = mid0;
            best_mid1 = mid1;
        }
        if (clearance > 12)
            break;
    }
    if (best_clearance < 0)
        return;
    svg_text_style along = { .size = PLOT_SMALL_SIZE, .fill = ROOF_COLOUR,
                             .rotate = best_angle * 180 / 3.14159265358979323846 };
    svg_text(f, best.x, best.y, &along, text);
    add_slanted_obstacle(taken, best_mid0, best_mid1);
}

static void ceiling_labels(FILE *f, const plot_frame *fr, const roofline *rf, obstacles *taken)
{
    char value[48], text[128];
    svg_text_style st = { .size = PLOT_SMALL_SIZE, .anchor = "end", .fill = ROOF_COLOUR };
    if (rf->npeaks) {
        tessel_plot_format_number(rf->peak[0], value, sizeof(value));
        snprintf(text, sizeof(text), "compute peak %s MAC/cycle", value);
        pixel p = at(fr, rf, rf->xa.hi, rf->peak[0]);
        svg_text(f, fr->x1 - 6, p.y - 5, &st, text);
        add_obstacle(taken, fr->x1 - 6 - svg_text_width(text, PLOT_SMALL_SIZE),
                     p.y - 5 - PLOT_SMALL_SIZE, fr->x1 - 6, p.y - 2);
    }
    if (!rf->nbandwidths)
        return;
    double b = rf->bandwidth[0];
    tessel_plot_format_number(b, value, sizeof(value));
    snprintf(text, sizeof(text), "%s bandwidth %s B/cycle", rf->dram, value);
    slope_label(f, fr, rf, text, taken);
}

static void draw_points(FILE *f, const plot_frame *fr, const roofline *rf)
{
    char tip[400];
    for (size_t i = 0; i < rf->n; i++) {
        pixel p = at(fr, rf, rf->intensity[i], rf->performance[i]);
        snprintf(tip, sizeof(tip), "line %llu: %.6g MAC/byte, %.6g MAC/cycle, bound by %s",
                 (unsigned long long)tessel_report_csv_line(rf->t, rf->row[i]), rf->intensity[i],
                 rf->performance[i], tessel_report_csv_cell(rf->t, rf->row[i], rf->bound_col));
        svg_marker(f, (enum plot_shape)(rf->kind[i] % PLOT_SHAPES), p.x, p.y, 5,
                   plot_colour(rf->kind[i]), "#ffffff", 0.9, tip);
    }
}

static void draw_point_labels(FILE *f, const plot_frame *fr, const roofline *rf,
                              const obstacles *taken)
{
    if (!rf->labels.n)
        return;
    double px[PLOT_MAX_LABELS], py[PLOT_MAX_LABELS];
    for (size_t i = 0; i < rf->n; i++) {
        pixel p = at(fr, rf, rf->intensity[i], rf->performance[i]);
        px[i] = p.x;
        py[i] = p.y;
    }
    plot_place_labels(f, fr, px, py, (const char *const *)rf->labels.text, rf->n, taken->box,
                      taken->n);
}

/* Points above the roof: designs whose own ceilings no row reveals (a
 * faster DRAM, say, when none of them is DRAM-bound). */
static size_t above_roof(const roofline *rf)
{
    size_t n = 0;
    for (size_t i = 0; i < rf->n; i++) {
        double roof = INFINITY;
        if (rf->npeaks)
            roof = rf->peak[0];
        if (rf->nbandwidths)
            roof = fmin(roof, rf->bandwidth[0] * rf->intensity[i]);
        n += rf->performance[i] > roof * (1 + 1e-9);
    }
    return n;
}

static void roofline_caption(plot_frame *fr, const roofline *rf)
{
    plot_caption_add(fr, "Compute peak = flops / compute_cycles.");
    if (rf->nbandwidths)
        plot_caption_add(fr, "%s bandwidth = dram_bytes / cycles of the %zu %s-bound point%s.",
                         rf->dram, rf->dram_bound, rf->dram, rf->dram_bound == 1 ? "" : "s");
    else
        plot_caption_add(fr, "No point is bound by %s, so its bandwidth is unknown and not "
                             "drawn.", rf->dram);
    if (rf->npeaks > 1 || rf->nbandwidths > 1)
        plot_caption_add(fr, "Dashed: the lower ceilings of other design points.");
    size_t above = above_roof(rf);
    if (above)
        plot_caption_add(fr, "%zu point%s above the roof: %s design%s higher ceilings, which "
                             "bound no row and so cannot be drawn.",
                         above, above == 1 ? " lies" : "s lie", above == 1 ? "its" : "their",
                         above == 1 ? " has" : "s have");
    if (rf->npeaks > MAX_CEILINGS + 1 || rf->nbandwidths > MAX_CEILINGS + 1)
        plot_caption_add(fr, "Only the %u highest of each kind are drawn.", MAX_CEILINGS + 1);
    if (rf->labels.n && rf->labels.varying[0])
        plot_caption_add(fr, "Labels: %s.", rf->labels.varying);
    if (rf->left_out)
        plot_caption_add(fr, "%zu row%s without flops, dram_bytes and cycles above 0 left out.",
                         rf->left_out, rf->left_out == 1 ? "" : "s");
}

static size_t legend_keys(const roofline *rf, plot_key *keys, char labels[][80])
{
    size_t n = 0;
    for (size_t k = 0; k <= MAX_BOUNDS; k++) {
        int used = 0;
        for (size_t i = 0; i < rf->n && !used; i++)
            used = rf->kind[i] == k;
        if (!used)
            continue;
        snprintf(labels[n], 80, "%s-bound", rf->bound[k]);
        plot_key key = { .kind = PLOT_KEY_MARKER, .shape = (enum plot_shape)(k % PLOT_SHAPES),
                         .colour = plot_colour(k), .label = labels[n] };
        keys[n++] = key;
    }
    plot_key roof = { .kind = PLOT_KEY_LINE, .colour = ROOF_COLOUR, .label = "roof" };
    plot_key other = { .kind = PLOT_KEY_LINE, .colour = CEILING_COLOUR, .dash = "5 4",
                       .label = "other ceilings" };
    if (rf->npeaks || rf->nbandwidths)
        keys[n++] = roof;
    if (rf->npeaks > 1 || rf->nbandwidths > 1)
        keys[n++] = other;
    return n;
}

static void roofline_draw(FILE *f, const roofline *rf, const tessel_plot_options *o,
                          const char *common)
{
    plot_frame fr;
    memset(&fr, 0, sizeof(fr));
    snprintf(fr.title, sizeof(fr.title), "%s", o->title ? o->title : "Roofline");
    snprintf(fr.subtitle, sizeof(fr.subtitle), "%s", common);
    roofline_caption(&fr, rf);
    plot_key keys[MAX_BOUNDS + 3];
    char labels[MAX_BOUNDS + 1][80];
    size_t nkeys = legend_keys(rf, keys, labels);
    plot_frame_request req = {
        .width = o->width,
        .height = o->height,
        .default_width = 720,
        .default_height = 500,
        .y_label_width = plot_axis_label_width(&rf->ya),
        .below_x = PLOT_FONT_SIZE + 10,
        .legend_width = plot_legend_width(keys, nkeys, NULL),
    };
    plot_frame_layout(&fr, &req);
    plot_frame_begin(f, &fr);
    plot_draw_grid(f, &fr, &rf->xa, &rf->ya);
    plot_clip_begin(f, &fr);
    draw_ceilings(f, &fr, rf);
    draw_points(f, &fr, rf);
    plot_clip_end(f);
    obstacles taken = { .n = 0 };
    ceiling_labels(f, &fr, rf, &taken);
    draw_point_labels(f, &fr, rf, &taken);
    plot_draw_axes(f, &fr, &rf->xa, &rf->ya, "operational intensity (MACs per DRAM byte)",
                   "performance (MACs per cycle)");
    plot_draw_legend(f, &fr, NULL, keys, nkeys);
    plot_frame_end(f, &fr);
}

/* The identity fields every point shares, for the subtitle. */
static int common_fields(const roofline *rf, char *buf, size_t n, tessel_diag *diag)
{
    buf[0] = '\0';
    if (rf->labels.n) {
        snprintf(buf, n, "%s", rf->labels.common);
        return 0;
    }
    size_t *cols = tessel_alloc_array(rf->alloc, tessel_report_csv_columns(rf->t), sizeof(*cols));
    if (!cols)
        return PLOT_ENOMEM(diag);
    plot_labels all;
    size_t k = plot_identity_columns(rf->t, cols);
    int rc = plot_labels_from_rows(rf->t, rf->row, rf->n, cols, k, rf->alloc, &all);
    tessel_dealloc(rf->alloc, cols);
    if (rc)
        return PLOT_ENOMEM(diag);
    snprintf(buf, n, "%s", all.common);
    plot_labels_free(&all, rf->alloc);
    return 0;
}

int tessel_plot_roofline(FILE *f, const tessel_report_csv *summary, const tessel_plot_options *o,
                         const tessel_allocator *a, tessel_diag *diag)
{
    tessel_plot_options defaults;
    if (!o) {
        tessel_plot_options_init(&defaults);
        o = &defaults;
    }
    roofline rf;
    memset(&rf, 0, sizeof(rf));
    rf.t = summary;
    rf.alloc = a;
    rf.dram = o->dram_level && o->dram_level[0] ? o->dram_level : "DRAM";
    char common[256];
    int rc = plot_check_options(o, diag);
    if (!rc)
        rc = roofline_read(&rf, diag);
    if (!rc)
        rc = common_fields(&rf, common, sizeof(common), diag);
    if (!rc) {
        roofline_draw(f, &rf, o, common);
        rc = plot_finish(f, diag);
    }
    roofline_free(&rf);
    return rc;
}
