/* Internal pieces of the plot module: the SVG writer (svg.c), axes
 * (axis.c), the figure frame with title, legend and caption (frame.c),
 * column look-ups with clear errors (table.c) and point labels
 * (labels.c). Figures live in one file each. */
#ifndef TESSEL_PLOT_INTERNAL_H
#define TESSEL_PLOT_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "tessel/plot.h"

/* ------------------------------------------------------------------ */
/* svg.c: elements with attributes written in a fixed form. Coordinates
 * have at most two decimals, so the output does not depend on the last
 * bits of a computation and stays small. */

#define PLOT_FONT_SIZE 12.0   /* tick labels, legend */
#define PLOT_SMALL_SIZE 11.0  /* captions, point labels */
#define PLOT_AXIS_SIZE 13.0   /* axis titles */
#define PLOT_TITLE_SIZE 15.0
#define PLOT_TEXT_COLOUR "#222222"
#define PLOT_MUTED_COLOUR "#555555"
#define PLOT_GRID_COLOUR "#e4e4e4"

void svg_number(FILE *f, double v);
void svg_attr(FILE *f, const char *name, double v); /* ` name="v"` */

/* The XML declaration, the <svg> root with its viewBox, a <title>, a white
 * background and a group giving the font; svg_end closes them. */
void svg_begin(FILE *f, double width, double height, const char *title);
void svg_end(FILE *f);

typedef struct svg_text_style {
    double size;
    const char *anchor; /* "start" (NULL), "middle" or "end" */
    const char *fill;   /* NULL: PLOT_TEXT_COLOUR */
    int bold;
    double rotate;      /* degrees, about (x, y); 0: none */
    int halo;           /* a wide white outline (drawn under the text proper) */
} svg_text_style;

/* <text ...> without content (write it with tessel_plot_escape), and its
 * end; svg_text writes a whole element with escaped text. */
void svg_text_open(FILE *f, double x, double y, const svg_text_style *st);
void svg_text_close(FILE *f);
void svg_text(FILE *f, double x, double y, const svg_text_style *st, const char *text);

/* Estimated width in pixels of s in the sans-serif font at `size` (no font
 * metrics are available; the estimate errs on the wide side). */
double svg_text_width(const char *s, double size);
/* Copies s into buf[0..n), cut at max_chars code points with a trailing
 * ellipsis when longer (never inside a UTF-8 sequence). */
void svg_shorten(const char *s, size_t max_chars, char *buf, size_t n);

/* Shapes. `tooltip`, when not NULL, becomes a <title> child (shown on
 * hover in a browser). `stroke` NULL: none. */
void svg_rect(FILE *f, double x, double y, double w, double h, const char *fill,
              const char *stroke, const char *tooltip);
void svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke,
              double width, const char *dash);

enum plot_shape { PLOT_CIRCLE, PLOT_SQUARE, PLOT_TRIANGLE, PLOT_DIAMOND, PLOT_TRIANGLE_DOWN,
                  PLOT_SHAPES };
void svg_marker(FILE *f, enum plot_shape shape, double x, double y, double r, const char *fill,
                const char *stroke, double opacity, const char *tooltip);

/* Colour i of the Okabe-Ito palette (colour-blind safe; cycles after 8). */
const char *plot_colour(size_t i);

/* ------------------------------------------------------------------ */
/* axis.c */

/* Pixel of value v on an axis drawn from p_lo (at ax->lo) to p_hi. Values
 * <= 0 on a log axis land far outside (for clipped lines only). */
double plot_axis_position(const tessel_plot_axis *ax, double v, double p_lo, double p_hi);
/* Width of the widest tick label. */
double plot_axis_label_width(const tessel_plot_axis *ax);

/* ------------------------------------------------------------------ */
/* frame.c: the figure's layout. The plot area is [x0, x1] x [y0, y1] in
 * pixels (y grows downwards), around it the title, the axes, the legend
 * (right of the plot area) and the caption (below everything). */

#define PLOT_CAPTION_MAX 1024u
#define PLOT_CAPTION_LINES 8u

typedef struct plot_frame {
    double width, height;
    double x0, x1, y0, y1;
    double below_x;           /* height under the x axis used by tick or group labels */
    double legend_x;          /* left edge of the legend */
    size_t caption_lines;
    size_t caption_from[PLOT_CAPTION_LINES], caption_to[PLOT_CAPTION_LINES]; /* in caption[] */
    char caption[PLOT_CAPTION_MAX];
    char title[512], subtitle[512];
} plot_frame;

/* Appends a sentence to the caption (printf style), separated by a space. */
void plot_caption_add(plot_frame *fr, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

typedef struct plot_frame_request {
    unsigned width, height;    /* from the options; 0: default_width/height */
    double default_width, default_height;
    double y_label_width;      /* widest y tick label */
    double below_x;            /* height under the x axis for its labels */
    double legend_width;       /* 0: no legend */
    double min_left;           /* least x of the plot area (room for slanted labels) */
} plot_frame_request;

/* Places the plot area. Title and caption must be set before (the caption
 * is wrapped to the width here). */
void plot_frame_layout(plot_frame *fr, const plot_frame_request *req);

typedef struct plot_key {
    enum { PLOT_KEY_BOX, PLOT_KEY_MARKER, PLOT_KEY_LINE, PLOT_KEY_BAND } kind;
    enum plot_shape shape;
    const char *colour;
    const char *dash; /* lines: NULL for solid */
    const char *label;
} plot_key;

/* Width a legend with these entries needs. */
double plot_legend_width(const plot_key *keys, size_t n, const char *heading);

/* Draws the document start, the title and subtitle. */
void plot_frame_begin(FILE *f, const plot_frame *fr);
/* Draws the caption and ends the document. */
void plot_frame_end(FILE *f, const plot_frame *fr);
void plot_draw_legend(FILE *f, const plot_frame *fr, const char *heading, const plot_key *keys,
                      size_t n);

/* Grid lines, axis lines, ticks, tick labels and the axis titles. x may
 * be NULL (bar charts label their own categories). */
void plot_draw_axes(FILE *f, const plot_frame *fr, const tessel_plot_axis *x,
                    const tessel_plot_axis *y, const char *x_title, const char *y_title);
void plot_draw_grid(FILE *f, const plot_frame *fr, const tessel_plot_axis *x,
                    const tessel_plot_axis *y);
/* A clip path of the plot area (id "plot-area"), and a group using it. */
void plot_clip_begin(FILE *f, const plot_frame *fr);
void plot_clip_end(FILE *f);

/* Labels beside up to PLOT_MAX_LABELS markers at (px[i], py[i]), each
 * placed where it overlaps neither the markers, the labels already placed
 * nor the obstacles (other text), when such a place exists. */
#define PLOT_MAX_LABELS 10u
#define PLOT_MAX_OBSTACLES 48u
typedef struct plot_box {
    double x0, y0, x1, y1;
} plot_box;
void plot_place_labels(FILE *f, const plot_frame *fr, const double *px, const double *py,
                       const char *const *text, size_t n, const plot_box *obstacles,
                       size_t nobstacles);

/* TESSEL_EINVAL for a size past TESSEL_PLOT_MAX_SIZE. */
int plot_check_options(const tessel_plot_options *o, tessel_diag *diag);

/* Checks the stream after writing. */
int plot_finish(FILE *f, tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* table.c */

/* The column's index; else TESSEL_EINVAL naming the file, the column,
 * `why` it is needed, a did-you-mean and the file's columns. */
int plot_find_column(const tessel_report_csv *t, const char *name, const char *why,
                     size_t *col, const tessel_allocator *a, tessel_diag *diag);
/* TESSEL_EINVAL when the table has no data rows. */
int plot_require_rows(const tessel_report_csv *t, tessel_diag *diag);
/* The field as a number: NAN when empty or not finite; TESSEL_EINVAL with
 * the file, line and column when it is text. */
int plot_read_number(const tessel_report_csv *t, size_t row, size_t col, double *v,
                     tessel_diag *diag);
/* The columns that identify a design point in a summary-like table: those
 * before `dram_bytes` when it exists, else those holding text (not
 * numbers) somewhere. cols needs room for every column. */
size_t plot_identity_columns(const tessel_report_csv *t, size_t *cols);

/* An axis title for a column: "energy (pJ)" for energy_pj, ... */
const char *plot_column_title(const char *column);

/* ------------------------------------------------------------------ */
/* labels.c: names for the points of a figure. */

typedef struct plot_labels {
    size_t n;
    char **text;       /* per point: its varying identity fields, ", "-joined */
    char common[256];  /* the fields every point shares, " · "-joined */
    char varying[256]; /* the names of the varying columns */
} plot_labels;

/* field[i * k + j] is column j of point i; names[j] its column name. */
int plot_labels_build(const char *const *field, size_t n, size_t k, const char *const *names,
                      const tessel_allocator *a, plot_labels *out);
void plot_labels_free(plot_labels *l, const tessel_allocator *a);
/* The same for rows[0..n) of a table over columns cols[0..k). */
int plot_labels_from_rows(const tessel_report_csv *t, const size_t *rows, size_t n,
                          const size_t *cols, size_t k, const tessel_allocator *a,
                          plot_labels *out);

#define PLOT_ENOMEM(diag) tessel_diag_set(diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory")

#endif
