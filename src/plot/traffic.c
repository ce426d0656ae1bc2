/* Traffic breakdown: one stacked bar per storage level, one segment per
 * tensor, from traffic.csv. Rows are grouped into design points by the
 * columns before `level` (design, workload, data, strategy, estimator and
 * whatever a sweep puts in front of them); several points give one group
 * of bars per point. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "plot_internal.h"

#define MAX_LEVELS 16u
#define MAX_TENSORS 8u
#define NO_POINT SIZE_MAX

typedef struct traffic {
    const tessel_report_csv *t;
    const tessel_allocator *alloc;
    size_t level_col, tensor_col;
    size_t value_col[2], nvalue_cols; /* summed: data_bytes + metadata_bytes, or one column */
    const char *metric;               /* "bytes" or the column's name */
    size_t nrows;
    size_t *row_point;   /* per row: its point */
    size_t *point_row;   /* per point: its first row */
    size_t npoints;      /* all points in the file */
    size_t nshown;       /* the first ones, drawn */
    size_t nlevels, ntensors;
    const char *level[MAX_LEVELS], *tensor[MAX_TENSORS];
    double *value;       /* nshown x nlevels x ntensors */
    uint64_t *line;      /* where each value was read (0: absent) */
    plot_labels labels;
    tessel_plot_axis y;
} traffic;

static void traffic_free(traffic *tr)
{
    tessel_dealloc(tr->alloc, tr->row_point);
    tessel_dealloc(tr->alloc, tr->point_row);
    tessel_dealloc(tr->alloc, tr->value);
    tessel_dealloc(tr->alloc, tr->line);
    plot_labels_free(&tr->labels, tr->alloc);
}

/* ------------------------------------------------------------------ */
/* Design points: rows with equal fields before `level`, found through a
 * hash table so that a sweep of many points stays linear. */

static uint64_t point_hash(const traffic *tr, size_t row)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (size_t c = 0; c < tr->level_col; c++) {
        for (const unsigned char *s = (const unsigned char *)tessel_report_csv_cell(tr->t, row, c);
             *s; s++)
            h = (h ^ *s) * 1099511628211u;
        h = (h ^ 0x1f) * 1099511628211u; /* field separator */
    }
    return h;
}

static int same_point(const traffic *tr, size_t r, size_t q)
{
    for (size_t c = 0; c < tr->level_col; c++)
        if (strcmp(tessel_report_csv_cell(tr->t, r, c), tessel_report_csv_cell(tr->t, q, c)) != 0)
            return 0;
    return 1;
}

static int find_points(traffic *tr)
{
    size_t slots = 16;
    while (slots < 2 * tr->nrows)
        slots *= 2;
    size_t *table = tessel_alloc_array(tr->alloc, slots, sizeof(*table));
    tr->row_point = tessel_alloc_array(tr->alloc, tr->nrows, sizeof(*tr->row_point));
    tr->point_row = tessel_alloc_array(tr->alloc, tr->nrows, sizeof(*tr->point_row));
    if (!table || !tr->row_point || !tr->point_row) {
        tessel_dealloc(tr->alloc, table);
        return TESSEL_ENOMEM;
    }
    for (size_t i = 0; i < slots; i++)
        table[i] = NO_POINT;
    for (size_t r = 0; r < tr->nrows; r++) {
        size_t i = (size_t)point_hash(tr, r) & (slots - 1);
        while (table[i] != NO_POINT && !same_point(tr, tr->point_row[table[i]], r))
            i = (i + 1) & (slots - 1);
        if (table[i] == NO_POINT) {
            table[i] = tr->npoints;
            tr->point_row[tr->npoints++] = r;
        }
        tr->row_point[r] = table[i];
    }
    tessel_dealloc(tr->alloc, table);
    return 0;
}

/* Index of name in names[0..*n), appended when new; TESSEL_EINVAL past max. */
static int name_index(const char **names, size_t *n, size_t max, const char *name, size_t *index)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0) {
            *index = i;
            return 0;
        }
    if (*n == max)
        return TESSEL_EINVAL;
    names[*n] = name;
    *index = (*n)++;
    return 0;
}

static int find_levels_and_tensors(traffic *tr, tessel_diag *diag)
{
    for (size_t r = 0; r < tr->nrows; r++) {
        if (tr->row_point[r] >= tr->nshown)
            continue;
        size_t i;
        const char *level = tessel_report_csv_cell(tr->t, r, tr->level_col);
        const char *tensor = tessel_report_csv_cell(tr->t, r, tr->tensor_col);
        if (name_index(tr->level, &tr->nlevels, MAX_LEVELS, level, &i))
            return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(tr->t),
                                   tessel_report_csv_line(tr->t, r), 0, "level",
                                   "more than %u distinct levels; the figure draws at most %u",
                                   MAX_LEVELS, MAX_LEVELS);
        if (name_index(tr->tensor, &tr->ntensors, MAX_TENSORS, tensor, &i))
            return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(tr->t),
                                   tessel_report_csv_line(tr->t, r), 0, "tensor",
                                   "more than %u distinct tensors; the figure tells at most %u "
                                   "apart by colour",
                                   MAX_TENSORS, MAX_TENSORS);
    }
    return 0;
}

static size_t slot_of(const traffic *tr, size_t point, size_t level, size_t tensor)
{
    return (point * tr->nlevels + level) * tr->ntensors + tensor;
}

/* The metric of row r: the sum of the value columns, each a number >= 0. */
static int row_value(const traffic *tr, size_t r, double *v, tessel_diag *diag)
{
    *v = 0;
    for (size_t k = 0; k < tr->nvalue_cols; k++) {
        double x;
        size_t c = tr->value_col[k];
        int rc = plot_read_number(tr->t, r, c, &x, diag);
        if (rc)
            return rc;
        if (isnan(x) || x < 0)
            return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(tr->t),
                                   tessel_report_csv_cell_line(tr->t, r, c),
                                   tessel_report_csv_cell_column(tr->t, r, c),
                                   tessel_report_csv_column_name(tr->t, c),
                                   "column '%s': %s value; bars need a finite number >= 0",
                                   tessel_report_csv_column_name(tr->t, c),
                                   isnan(x) ? "an empty or non-finite" : "a negative");
        *v += x;
    }
    return 0;
}

static int read_values(traffic *tr, tessel_diag *diag)
{
    size_t n = tr->nshown * tr->nlevels * tr->ntensors;
    tr->value = tessel_alloc_array(tr->alloc, n, sizeof(*tr->value));
    tr->line = tessel_alloc_array(tr->alloc, n, sizeof(*tr->line));
    if (!tr->value || !tr->line)
        return PLOT_ENOMEM(diag);
    memset(tr->value, 0, n * sizeof(*tr->value));
    memset(tr->line, 0, n * sizeof(*tr->line));
    for (size_t r = 0; r < tr->nrows; r++) {
        double v;
        int rc = row_value(tr, r, &v, diag);
        if (rc)
            return rc;
        size_t p = tr->row_point[r];
        if (p >= tr->nshown)
            continue;
        size_t l = 0, k = 0;
        name_index(tr->level, &tr->nlevels, MAX_LEVELS,
                   tessel_report_csv_cell(tr->t, r, tr->level_col), &l);
        name_index(tr->tensor, &tr->ntensors, MAX_TENSORS,
                   tessel_report_csv_cell(tr->t, r, tr->tensor_col), &k);
        size_t s = slot_of(tr, p, l, k);
        uint64_t line = tessel_report_csv_line(tr->t, r);
        if (tr->line[s])
            return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(tr->t), line, 0,
                                   NULL, "level %s, tensor %s appears twice for one design "
                                         "point (first at line %llu)",
                                   tr->level[l], tr->tensor[k], (unsigned long long)tr->line[s]);
        tr->value[s] = v;
        tr->line[s] = line;
    }
    return 0;
}

static int choose_metric(traffic *tr, const char *metric, tessel_diag *diag)
{
    const tessel_allocator *a = tr->alloc;
    tr->metric = metric && strcmp(metric, "bytes") != 0 ? metric : "bytes";
    if (strcmp(tr->metric, "bytes") != 0) {
        tr->nvalue_cols = 1;
        return plot_find_column(tr->t, metric, "the traffic figure's --metric", &tr->value_col[0],
                                a, diag);
    }
    tr->nvalue_cols = 2;
    int rc = plot_find_column(tr->t, "data_bytes", "the traffic figure (bytes = data_bytes + "
                                                   "metadata_bytes)",
                              &tr->value_col[0], a, diag);
    if (!rc)
        rc = plot_find_column(tr->t, "metadata_bytes", "the traffic figure (bytes = data_bytes "
                                                       "+ metadata_bytes)",
                              &tr->value_col[1], a, diag);
    return rc;
}

static double largest_stack(const traffic *tr)
{
    double top = 0;
    for (size_t p = 0; p < tr->nshown; p++)
        for (size_t l = 0; l < tr->nlevels; l++) {
            double sum = 0;
            for (size_t k = 0; k < tr->ntensors; k++)
                sum += tr->value[slot_of(tr, p, l, k)];
            top = sum > top ? sum : top;
        }
    return top;
}

static int traffic_read(traffic *tr, const tessel_plot_options *o, tessel_diag *diag)
{
    int rc = plot_require_rows(tr->t, diag);
    if (!rc)
        rc = plot_find_column(tr->t, "level", "the traffic figure", &tr->level_col, tr->alloc,
                              diag);
    if (!rc)
        rc = plot_find_column(tr->t, "tensor", "the traffic figure", &tr->tensor_col, tr->alloc,
                              diag);
    if (!rc)
        rc = choose_metric(tr, o->metric, diag);
    if (rc)
        return rc;
    tr->nrows = tessel_report_csv_rows(tr->t);
    if (find_points(tr))
        return PLOT_ENOMEM(diag);
    size_t max = o->max_points ? o->max_points : TESSEL_PLOT_MAX_POINTS;
    tr->nshown = tr->npoints < max ? tr->npoints : max;
    rc = find_levels_and_tensors(tr, diag);
    if (!rc)
        rc = read_values(tr, diag);
    if (rc)
        return rc;
    if (tessel_plot_axis_nice(0, largest_stack(tr), 0, &tr->y))
        return tessel_diag_set(diag, TESSEL_ERANGE, tessel_report_csv_name(tr->t), 0, 0, NULL,
                               "the bars are too tall to plot (%s adds up past the largest "
                               "double)", tr->metric);
    size_t *cols = tessel_alloc_array(tr->alloc, tr->level_col ? tr->level_col : 1, sizeof(*cols));
    if (!cols)
        return PLOT_ENOMEM(diag);
    for (size_t c = 0; c < tr->level_col; c++)
        cols[c] = c;
    rc = plot_labels_from_rows(tr->t, tr->point_row, tr->nshown, cols, tr->level_col, tr->alloc,
                               &tr->labels);
    tessel_dealloc(tr->alloc, cols);
    return rc ? PLOT_ENOMEM(diag) : 0;
}

/* ------------------------------------------------------------------ */
/* Drawing. */

#define LEVEL_LABEL_SIZE 10.0
#define GROUP_LABEL_CHARS 32u

enum { LABELS_NONE, LABELS_ACROSS, LABELS_UPRIGHT, LABELS_SLANTED };

typedef struct bars {
    double slot;   /* width per design point */
    double pitch;  /* width per bar, gap included */
    double bar;    /* width of a bar */
    double offset; /* from the slot's left edge to the first bar */
    int level_labels, group_labels;
    double level_size;
    double level_height, group_height;
    double group_width; /* of the widest group label */
} bars;

static double widest_level(const traffic *tr, double size)
{
    double w = 0;
    for (size_t l = 0; l < tr->nlevels; l++) {
        double t = svg_text_width(tr->level[l], size);
        w = t > w ? t : w;
    }
    return w;
}

static double widest_group_label(const traffic *tr)
{
    double w = 0;
    char buf[128];
    for (size_t p = 0; p < tr->nshown; p++) {
        svg_shorten(tr->labels.text[p], GROUP_LABEL_CHARS, buf, sizeof(buf));
        double t = svg_text_width(buf, PLOT_SMALL_SIZE);
        w = t > w ? t : w;
    }
    return w;
}

static void bar_geometry(const traffic *tr, double plot_width, bars *b)
{
    int single = tr->nshown == 1;
    double L = (double)tr->nlevels;
    b->slot = plot_width / (double)tr->nshown;
    double inner = single ? fmin(b->slot * 0.75, L * 96) : fmin(b->slot * 0.82, L * 56);
    b->pitch = inner / L;
    b->bar = tr->nlevels > 1 ? b->pitch * 0.84 : b->pitch;
    b->offset = (b->slot - inner) / 2 + (b->pitch - b->bar) / 2;
    b->level_size = single ? PLOT_FONT_SIZE : LEVEL_LABEL_SIZE;
    double lw = widest_level(tr, b->level_size);
    if (lw + 2 <= b->pitch) {
        b->level_labels = LABELS_ACROSS;
        b->level_height = b->level_size + 6;
    } else if (b->pitch >= 11) {
        b->level_labels = LABELS_UPRIGHT;
        b->level_height = lw + 8;
    } else {
        b->level_labels = LABELS_NONE;
        b->level_height = 0;
    }
    b->group_labels = LABELS_NONE;
    b->group_height = 0;
    if (single)
        return;
    double gw = widest_group_label(tr);
    b->group_width = gw;
    if (gw + 6 <= b->slot) {
        b->group_labels = LABELS_ACROSS;
        b->group_height = PLOT_SMALL_SIZE + 8;
    } else {
        b->group_labels = LABELS_SLANTED;
        b->group_height = (gw + PLOT_SMALL_SIZE) * 0.71 + 10;
    }
}

static void draw_level_labels(FILE *f, const plot_frame *fr, const traffic *tr, const bars *b,
                              double slot_left)
{
    svg_text_style st = { .size = b->level_size, .anchor = "middle" };
    if (b->level_labels == LABELS_UPRIGHT) {
        st.anchor = "end";
        st.rotate = -90;
    }
    for (size_t l = 0; l < tr->nlevels; l++) {
        double cx = slot_left + b->offset + (double)l * b->pitch + b->bar / 2;
        if (b->level_labels == LABELS_ACROSS)
            svg_text(f, cx, fr->y1 + 4 + b->level_size, &st, tr->level[l]);
        else if (b->level_labels == LABELS_UPRIGHT)
            svg_text(f, cx + b->level_size * 0.35, fr->y1 + 5, &st, tr->level[l]);
    }
}

static void draw_group_label(FILE *f, const plot_frame *fr, const bars *b, double cx,
                             const char *label)
{
    char buf[128];
    svg_shorten(label, GROUP_LABEL_CHARS, buf, sizeof(buf));
    double y = fr->y1 + b->level_height + 4;
    if (b->group_labels == LABELS_ACROSS) {
        svg_text_style st = { .size = PLOT_SMALL_SIZE, .anchor = "middle" };
        svg_text(f, cx, y + PLOT_SMALL_SIZE, &st, buf);
    } else {
        svg_text_style st = { .size = PLOT_SMALL_SIZE, .anchor = "end", .rotate = -45 };
        svg_text(f, cx + 4, y + 8, &st, buf);
    }
}

static void tooltip(char *buf, size_t n, const traffic *tr, size_t p, size_t l, size_t k,
                    double v)
{
    char number[48];
    snprintf(number, sizeof(number), "%.15g", v);
    if (tr->nshown > 1)
        snprintf(buf, n, "%s: %s, %s: %s %s", tr->labels.text[p], tr->level[l], tr->tensor[k],
                 number, tr->metric);
    else
        snprintf(buf, n, "%s, %s: %s %s", tr->level[l], tr->tensor[k], number, tr->metric);
}

static void draw_bars(FILE *f, const plot_frame *fr, const traffic *tr, const bars *b,
                      const tessel_plot_axis *y)
{
    char tip[512];
    for (size_t p = 0; p < tr->nshown; p++) {
        double slot_left = fr->x0 + (double)p * b->slot;
        for (size_t l = 0; l < tr->nlevels; l++) {
            double x = slot_left + b->offset + (double)l * b->pitch, sum = 0;
            /* The first tensor (the output) on top, as the legend lists it. */
            for (size_t k = tr->ntensors; k-- > 0;) {
                double v = tr->value[slot_of(tr, p, l, k)];
                if (v <= 0)
                    continue;
                double top = plot_axis_position(y, sum + v, fr->y1, fr->y0);
                double bottom = plot_axis_position(y, sum, fr->y1, fr->y0);
                tooltip(tip, sizeof(tip), tr, p, l, k, v);
                svg_rect(f, x, top, b->bar, bottom - top, plot_colour(k),
                         b->bar >= 6 ? "#ffffff" : NULL, tip);
                sum += v;
            }
        }
        draw_level_labels(f, fr, tr, b, slot_left);
        if (b->group_labels != LABELS_NONE)
            draw_group_label(f, fr, b, slot_left + b->slot / 2, tr->labels.text[p]);
    }
}

static void titles(plot_frame *fr, const traffic *tr, const tessel_plot_options *o,
                   const char **y_title)
{
    int bytes = strcmp(tr->metric, "bytes") == 0, energy = strcmp(tr->metric, "energy_pj") == 0;
    *y_title = bytes ? "traffic (bytes, data + metadata)"
                     : energy ? "storage energy (pJ)" : plot_column_title(tr->metric);
    if (o->title)
        snprintf(fr->title, sizeof(fr->title), "%s", o->title);
    else if (bytes)
        snprintf(fr->title, sizeof(fr->title), "Traffic per storage level and tensor");
    else if (energy)
        snprintf(fr->title, sizeof(fr->title), "Storage energy per level and tensor");
    else
        snprintf(fr->title, sizeof(fr->title), "%s per storage level and tensor", tr->metric);
    snprintf(fr->subtitle, sizeof(fr->subtitle), "%s", tr->labels.common);
}

/* The caption for bars laid out as b (NULL: not yet known). */
static void caption(plot_frame *fr, const traffic *tr, const bars *b)
{
    fr->caption[0] = '\0';
    if (tr->nshown < tr->npoints)
        plot_caption_add(fr, "The first %zu of %zu design points are shown.", tr->nshown,
                         tr->npoints);
    if (!b || tr->nshown == 1 || b->level_labels != LABELS_NONE)
        return;
    char list[400] = "";
    for (size_t l = 0; l < tr->nlevels; l++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof(list) - used, "%s%s", l ? ", " : "", tr->level[l]);
    }
    plot_caption_add(fr, "Bars in each group, left to right: %s.", list);
}

/* The plot area's width decides the bars and how their labels fit; the
 * labels decide the room under the axis and, slanted, on the left. A few
 * rounds settle both. */
static void layout(plot_frame *fr, const traffic *tr, const tessel_plot_options *o,
                   plot_frame_request *req, bars *b)
{
    caption(fr, tr, NULL);
    plot_frame_layout(fr, req);
    for (int round = 0; round < 3; round++) {
        bar_geometry(tr, fr->x1 - fr->x0, b);
        double below = 2 + b->level_height + b->group_height;
        double min_left = b->group_labels == LABELS_SLANTED
                              ? (b->group_width + PLOT_SMALL_SIZE) * 0.71 - b->slot / 2 + 8
                              : 0;
        if (round > 0 && below == req->below_x && min_left <= req->min_left)
            return;
        req->below_x = below;
        req->min_left = fmax(req->min_left, min_left);
        if (!o->height)
            req->default_height = 400 + below;
        caption(fr, tr, b);
        plot_frame_layout(fr, req);
    }
    bar_geometry(tr, fr->x1 - fr->x0, b);
}

static void traffic_draw(FILE *f, const traffic *tr, const tessel_plot_options *o)
{
    plot_frame fr;
    memset(&fr, 0, sizeof(fr));
    const char *y_title;
    titles(&fr, tr, o, &y_title);
    const tessel_plot_axis *y = &tr->y;

    plot_key keys[MAX_TENSORS];
    for (size_t k = 0; k < tr->ntensors; k++) {
        plot_key key = { .kind = PLOT_KEY_BOX, .colour = plot_colour(k), .label = tr->tensor[k] };
        keys[k] = key;
    }
    int single = tr->nshown == 1;
    double per_point = fmax((double)tr->nlevels * 16 + 12, 40);
    plot_frame_request req = {
        .width = o->width,
        .height = o->height,
        .default_width = single ? 640 : fmin(fmax(per_point * (double)tr->nshown + 260, 720), 1600),
        .default_height = 480,
        .y_label_width = plot_axis_label_width(y),
        .legend_width = plot_legend_width(keys, tr->ntensors, "tensor"),
    };
    bars b;
    layout(&fr, tr, o, &req, &b);

    const char *x_title = "storage level (outermost first)";
    char x_buf[300];
    if (!single) {
        snprintf(x_buf, sizeof(x_buf), "design point%s%s%s", tr->labels.varying[0] ? " (" : "",
                 tr->labels.varying, tr->labels.varying[0] ? ")" : "");
        x_title = x_buf;
    }
    plot_frame_begin(f, &fr);
    plot_draw_grid(f, &fr, NULL, y);
    draw_bars(f, &fr, tr, &b, y);
    plot_draw_axes(f, &fr, NULL, y, x_title, y_title);
    plot_draw_legend(f, &fr, "tensor", keys, tr->ntensors);
    plot_frame_end(f, &fr);
}

int tessel_plot_traffic(FILE *f, const tessel_report_csv *table, const tessel_plot_options *o,
                        const tessel_allocator *a, tessel_diag *diag)
{
    tessel_plot_options defaults;
    if (!o) {
        tessel_plot_options_init(&defaults);
        o = &defaults;
    }
    traffic tr;
    memset(&tr, 0, sizeof(tr));
    tr.t = table;
    tr.alloc = a;
    int rc = plot_check_options(o, diag);
    if (!rc)
        rc = traffic_read(&tr, o, diag);
    if (!rc) {
        traffic_draw(f, &tr, o);
        rc = plot_finish(f, diag);
    }
    traffic_free(&tr);
    return rc;
}
