/* The frame of a figure: where the plot area goes, the title, the legend,
 * the caption under everything, and labels placed beside markers. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "plot_internal.h"

#define MARGIN 12.0
#define TITLE_LINE 20.0
#define SUBTITLE_LINE 17.0
#define CAPTION_LINE 15.0
#define LEGEND_LINE 19.0
#define MIN_PLOT_WIDTH 200.0
#define MIN_PLOT_HEIGHT 140.0

void plot_caption_add(plot_frame *fr, const char *fmt, ...)
{
    size_t used = strlen(fr->caption);
    if (used + 2 >= sizeof(fr->caption))
        return;
    if (used)
        fr->caption[used++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fr->caption + used, sizeof(fr->caption) - used, fmt, ap);
    va_end(ap);
}

/* Width of text[from, to) at `size`. */
static double span_width(const char *text, size_t from, size_t to, double size)
{
    char buf[PLOT_CAPTION_MAX];
    size_t n = to - from < sizeof(buf) - 1 ? to - from : sizeof(buf) - 1;
    memcpy(buf, text + from, n);
    buf[n] = '\0';
    return svg_text_width(buf, size);
}

/* Breaks the caption into lines of at most max_width at spaces (a single
 * word longer than that gets a line of its own). */
static void wrap_caption(plot_frame *fr, double max_width)
{
    const char *s = fr->caption;
    size_t len = strlen(s), start = 0;
    fr->caption_lines = 0;
    while (start < len && fr->caption_lines < PLOT_CAPTION_LINES) {
        size_t end = start;
        while (end < len) {
            size_t next = end + 1;
            while (next < len && s[next] != ' ')
                next++;
            if (end > start && span_width(s, start, next, PLOT_SMALL_SIZE) > max_width)
                break;
            end = next;
        }
        fr->caption_from[fr->caption_lines] = start;
        fr->caption_to[fr->caption_lines] = end;
        fr->caption_lines++;
        start = end;
        while (start < len && s[start] == ' ')
            start++;
    }
}

void plot_frame_layout(plot_frame *fr, const plot_frame_request *req)
{
    fr->width = req->width ? req->width : req->default_width;
    fr->height = req->height ? req->height : req->default_height;
    fr->below_x = req->below_x;
    double left = fmax(MARGIN + PLOT_AXIS_SIZE + 14 + req->y_label_width + 9, req->min_left);
    double right = req->legend_width > 0 ? req->legend_width + 2 * MARGIN : 2 * MARGIN;
    if (fr->width < left + right + MIN_PLOT_WIDTH)
        fr->width = ceil(left + right + MIN_PLOT_WIDTH);
    wrap_caption(fr, fr->width - 2 * MARGIN);
    double top = MARGIN + TITLE_LINE + (fr->subtitle[0] ? SUBTITLE_LINE : 0) + 14;
    double bottom = req->below_x + PLOT_AXIS_SIZE + 12 + MARGIN +
                    (fr->caption_lines ? 8 + CAPTION_LINE * (double)fr->caption_lines : 0);
    if (fr->height < top + bottom + MIN_PLOT_HEIGHT)
        fr->height = ceil(top + bottom + MIN_PLOT_HEIGHT);
    fr->x0 = left;
    fr->x1 = fr->width - right;
    fr->y0 = top;
    fr->y1 = fr->height - bottom;
    fr->legend_x = fr->x1 + 1.5 * MARGIN;
}

/* Copies s into buf, shortened until it fits max_width at `size`. */
static void fit_text(const char *s, double size, double max_width, char *buf, size_t n)
{
    size_t chars = strlen(s);
    svg_shorten(s, chars, buf, n);
    while (chars > 4 && svg_text_width(buf, size) > max_width)
        svg_shorten(s, --chars, buf, n);
}

void plot_frame_begin(FILE *f, const plot_frame *fr)
{
    svg_begin(f, fr->width, fr->height, fr->title);
    char buf[512];
    svg_text_style st = { .size = PLOT_TITLE_SIZE, .anchor = "middle", .bold = 1 };
    fit_text(fr->title, PLOT_TITLE_SIZE, fr->width - 2 * MARGIN, buf, sizeof(buf));
    svg_text(f, fr->width / 2, MARGIN + PLOT_TITLE_SIZE, &st, buf);
    if (fr->subtitle[0]) {
        st.size = PLOT_FONT_SIZE;
        st.bold = 0;
        st.fill = PLOT_MUTED_COLOUR;
        fit_text(fr->subtitle, PLOT_FONT_SIZE, fr->width - 2 * MARGIN, buf, sizeof(buf));
        svg_text(f, fr->width / 2, MARGIN + TITLE_LINE + PLOT_FONT_SIZE + 2, &st, buf);
    }
}

void plot_frame_end(FILE *f, const plot_frame *fr)
{
    double y = fr->y1 + fr->below_x + PLOT_AXIS_SIZE + 12 + 8 + PLOT_SMALL_SIZE;
    svg_text_style st = { .size = PLOT_SMALL_SIZE, .fill = PLOT_MUTED_COLOUR };
    char line[PLOT_CAPTION_MAX];
    for (size_t i = 0; i < fr->caption_lines; i++) {
        size_t from = fr->caption_from[i], to = fr->caption_to[i];
        memcpy(line, fr->caption + from, to - from);
        line[to - from] = '\0';
        svg_text(f, MARGIN, y, &st, line);
        y += CAPTION_LINE;
    }
    svg_end(f);
}

/* ------------------------------------------------------------------ */
/* Legend. */

#define LEGEND_LABEL_CHARS 30u
#define LEGEND_SWATCH 26.0

double plot_legend_width(const plot_key *keys, size_t n, const char *heading)
{
    double w = heading ? svg_text_width(heading, PLOT_FONT_SIZE) : 0;
    char buf[128];
    for (size_t i = 0; i < n; i++) {
        svg_shorten(keys[i].label, LEGEND_LABEL_CHARS, buf, sizeof(buf));
        double t = LEGEND_SWATCH + svg_text_width(buf, PLOT_FONT_SIZE);
        if (t > w)
            w = t;
    }
    return w;
}

static void draw_key(FILE *f, double x, double y, const plot_key *k)
{
    double mid = y - PLOT_FONT_SIZE * 0.35;
    switch (k->kind) {
    case PLOT_KEY_BOX:
        svg_rect(f, x + 2, mid - 6, 14, 12, k->colour, "#ffffff", NULL);
        break;
    case PLOT_KEY_MARKER:
        svg_marker(f, k->shape, x + 9, mid, 4.5, k->colour, "#ffffff", 1, NULL);
        break;
    case PLOT_KEY_LINE:
        svg_line(f, x, mid, x + 18, mid, k->colour, 2, k->dash);
        break;
    case PLOT_KEY_BAND:
        svg_rect(f, x, mid - 5, 18, 10, k->colour, NULL, NULL);
        break;
    }
}

void plot_draw_legend(FILE *f, const plot_frame *fr, const char *heading, const plot_key *keys,
                      size_t n)
{
    double x = fr->legend_x, y = fr->y0 + PLOT_FONT_SIZE;
    svg_text_style st = { .size = PLOT_FONT_SIZE };
    if (heading) {
        st.bold = 1;
        svg_text(f, x, y, &st, heading);
        st.bold = 0;
        y += LEGEND_LINE;
    }
    char buf[128];
    for (size_t i = 0; i < n; i++) {
        draw_key(f, x, y, &keys[i]);
        svg_shorten(keys[i].label, LEGEND_LABEL_CHARS, buf, sizeof(buf));
        svg_text(f, x + LEGEND_SWATCH, y, &st, buf);
        y += LEGEND_LINE;
    }
}

/* ------------------------------------------------------------------ */
/* Clipping. */

void plot_clip_begin(FILE *f, const plot_frame *fr)
{
    fputs("<defs><clipPath id=\"plot-area\"><rect", f);
    svg_attr(f, "x", fr->x0);
    svg_attr(f, "y", fr->y0);
    svg_attr(f, "width", fr->x1 - fr->x0);
    svg_attr(f, "height", fr->y1 - fr->y0);
    fputs("/></clipPath></defs>\n<g clip-path=\"url(#plot-area)\">\n", f);
}

void plot_clip_end(FILE *f)
{
    fputs("</g>\n", f);
}

/* ------------------------------------------------------------------ */
/* Point labels. */

typedef plot_box box;

static int boxes_overlap(const box *a, const box *b)
{
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* Candidate places of a label of width w beside a marker at (x, y): the
 * text's anchor point and its box. */
typedef struct place {
    double dx, dy;
    const char *anchor;
} place;

static const place places[] = {
    { 8, 4, "start" },   { -8, 4, "end" },      { 0, -9, "middle" },
    { 0, 17, "middle" }, { 7, -7, "start" },    { 7, 14, "start" },
    { -7, -7, "end" },   { -7, 14, "end" },     { 8, -16, "start" },
    { 8, 24, "start" },  { -8, -16, "end" },    { -8, 24, "end" },
};

static box place_box(const place *p, double x, double y, double w)
{
    double left = x + p->dx;
    if (strcmp(p->anchor, "end") == 0)
        left -= w;
    else if (strcmp(p->anchor, "middle") == 0)
        left -= w / 2;
    box b = { left, y + p->dy - PLOT_SMALL_SIZE, left + w, y + p->dy + 3 };
    return b;
}

void plot_place_labels(FILE *f, const plot_frame *fr, const double *px, const double *py,
                       const char *const *text, size_t n, const plot_box *obstacles,
                       size_t nobstacles)
{
    box taken[2 * PLOT_MAX_LABELS + PLOT_MAX_OBSTACLES];
    size_t ntaken = 0;
    if (n > PLOT_MAX_LABELS)
        n = PLOT_MAX_LABELS;
    for (size_t i = 0; i < n; i++) {
        box m = { px[i] - 5, py[i] - 5, px[i] + 5, py[i] + 5 };
        taken[ntaken++] = m;
    }
    for (size_t i = 0; i < nobstacles && i < PLOT_MAX_OBSTACLES; i++)
        taken[ntaken++] = obstacles[i];
    for (size_t i = 0; i < n; i++) {
        char buf[128];
        svg_shorten(text[i], 28, buf, sizeof(buf));
        double w = svg_text_width(buf, PLOT_SMALL_SIZE);
        size_t best = 0, best_overlaps = (size_t)-1;
        for (size_t p = 0; p < sizeof(places) / sizeof(places[0]); p++) {
            box b = place_box(&places[p], px[i], py[i], w);
            size_t overlaps = 0;
            if (b.x0 < fr->x0 || b.x1 > fr->x1 || b.y0 < fr->y0 || b.y1 > fr->y1)
                overlaps += 2;
            for (size_t t = 0; t < ntaken; t++)
                overlaps += t != i && boxes_overlap(&b, &taken[t]);
            if (overlaps < best_overlaps) {
                best = p;
                best_overlaps = overlaps;
            }
            if (overlaps == 0)
                break;
        }
        taken[ntaken++] = place_box(&places[best], px[i], py[i], w);
        double x = px[i] + places[best].dx, y = py[i] + places[best].dy;
        /* A white halo under the text keeps it legible over lines. */
        svg_text_style st = { .size = PLOT_SMALL_SIZE, .anchor = places[best].anchor,
                              .fill = "#ffffff", .halo = 1 };
        svg_text(f, x, y, &st, buf);
        st.fill = NULL;
        st.halo = 0;
        svg_text(f, x, y, &st, buf);
    }
}

int plot_check_options(const tessel_plot_options *o, tessel_diag *diag)
{
    if (o->width > TESSEL_PLOT_MAX_SIZE || o->height > TESSEL_PLOT_MAX_SIZE)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "figure size %ux%u: each side must be at most %u pixels",
                               o->width, o->height, TESSEL_PLOT_MAX_SIZE);
    return 0;
}

int plot_finish(FILE *f, tessel_diag *diag)
{
    if (fflush(f) != 0 || ferror(f))
        return tessel_diag_set(diag, TESSEL_EIO, NULL, 0, 0, NULL,
                               "writing the figure failed");
    return 0;
}

void tessel_plot_options_init(tessel_plot_options *o)
{
    memset(o, 0, sizeof(*o));
}
