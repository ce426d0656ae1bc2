/* Axes: "nice" tick values on linear and log10 scales, the mapping from
 * values to pixels, and drawing ticks, grid lines and labels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_internal.h"

#define LINEAR_TARGET_TICKS 5.0
#define LINEAR_MAX_TICKS 11u
#define LOG_MAX_DECADE_TICKS 9u

/* The smallest 1, 2 or 5 x 10^k at least raw (raw > 0). */
static double nice_step(double raw)
{
    double power = pow(10, floor(log10(raw)));
    double m = raw / power;
    if (m <= 1 + 1e-9)
        return power;
    if (m <= 2 + 1e-9)
        return 2 * power;
    if (m <= 5 + 1e-9)
        return 5 * power;
    return 10 * power;
}

static int linear_ticks(double lo, double hi, tessel_plot_axis *ax)
{
    double step = nice_step((hi - lo) / LINEAR_TARGET_TICKS);
    for (;;) {
        double first = floor(lo / step + 1e-9), last = ceil(hi / step - 1e-9);
        if (!isfinite(first) || !isfinite(last))
            return TESSEL_EINVAL;
        if (last - first + 1 <= LINEAR_MAX_TICKS) {
            ax->nticks = 0;
            for (double k = first; k <= last; k++) {
                double t = k * step;
                ax->tick[ax->nticks++] = fabs(t) < step * 1e-9 ? 0 : t;
            }
            ax->lo = first * step;
            ax->hi = last * step;
            return 0;
        }
        step = nice_step(step * 1.5);
    }
}

/* 10^e for integer e, exactly where doubles allow. */
static double power_of_ten(int e)
{
    return pow(10, e);
}

/* Powers of ten, every k-th one, enclosing [lo, hi]. */
static void decade_ticks(double lo, double hi, tessel_plot_axis *ax)
{
    int e0 = (int)floor(log10(lo) + 1e-9), e1 = (int)ceil(log10(hi) - 1e-9);
    if (e1 <= e0)
        e1 = e0 + 1;
    int k = 1;
    while ((e1 - e0 + k - 1) / k + 1 > (int)LOG_MAX_DECADE_TICKS)
        k++;
    /* Align to multiples of k so that 10^0 is a tick when in range. */
    e0 = (int)floor((double)e0 / k) * k;
    e1 = (int)ceil((double)e1 / k) * k;
    ax->nticks = 0;
    for (int e = e0; e <= e1; e += k)
        ax->tick[ax->nticks++] = power_of_ten(e);
    ax->lo = ax->tick[0];
    ax->hi = ax->tick[ax->nticks - 1];
    ax->decades = 1;
}

/* 1, 2 and 5 x 10^e, from the largest at most lo to the smallest at least
 * hi (used for spans of at most about two decades). */
static void one_two_five_ticks(double lo, double hi, tessel_plot_axis *ax)
{
    static const double mantissa[] = { 1, 2, 5 };
    double candidate[1 + 5 * 3];
    size_t n = 0;
    int e = (int)floor(log10(lo) + 1e-9);
    candidate[n++] = 5 * power_of_ten(e - 1);
    for (int d = 0; d < 5; d++)
        for (int m = 0; m < 3; m++)
            candidate[n++] = mantissa[m] * power_of_ten(e + d);
    size_t first = 0;
    while (first + 1 < n && candidate[first + 1] <= lo * (1 + 1e-12))
        first++;
    ax->nticks = 0;
    for (size_t i = first; i < n && ax->nticks < TESSEL_PLOT_MAX_TICKS; i++) {
        ax->tick[ax->nticks++] = candidate[i];
        if (candidate[i] >= hi * (1 - 1e-12))
            break;
    }
    ax->lo = ax->tick[0];
    ax->hi = ax->tick[ax->nticks - 1];
}

int tessel_plot_axis_nice(double lo, double hi, int log10_scale, tessel_plot_axis *out)
{
    memset(out, 0, sizeof(*out));
    out->log10 = log10_scale != 0;
    if (!isfinite(lo) || !isfinite(hi) || lo > hi)
        return TESSEL_EINVAL;
    if (!log10_scale) {
        if (hi - lo <= fabs(hi) * 1e-12) {
            double pad = lo == 0 ? 1 : fabs(lo) * 0.1;
            lo = lo == 0 ? 0 : lo - pad;
            hi = hi + pad;
        }
        if (!isfinite(hi - lo))
            return TESSEL_EINVAL;
        return linear_ticks(lo, hi, out);
    }
    if (lo <= 0 || lo < 1e-290 || hi > 1e290)
        return TESSEL_EINVAL;
    if (hi <= lo * (1 + 1e-12)) {
        lo /= 2;
        hi *= 2;
    }
    double span = log10(hi) - log10(lo);
    if (span > 2.3) {
        decade_ticks(lo, hi, out);
        return 0;
    }
    if (span >= 0.5) {
        one_two_five_ticks(lo, hi, out);
        return 0;
    }
    int rc = linear_ticks(lo, hi, out);
    if (rc)
        return rc;
    if (out->lo <= 0) { /* cannot happen for span < 0.5, kept as a guard */
        out->lo = lo;
        size_t k = 0;
        for (size_t i = 0; i < out->nticks; i++)
            if (out->tick[i] >= lo)
                out->tick[k++] = out->tick[i];
        out->nticks = k;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Labels. */

static const char *const si_prefix[] = { "", "k", "M", "G", "T", "P", "E" };

/* "2.5e-5": a mantissa with up to three digits and a plain exponent. */
static int format_exponent(double v, char *buf, size_t n)
{
    char tmp[48];
    snprintf(tmp, sizeof(tmp), "%.2e", v);
    char *e = strchr(tmp, 'e');
    if (!e)
        return snprintf(buf, n, "%s", tmp);
    int exponent = atoi(e + 1);
    *e = '\0';
    char *end = e;
    while (end > tmp && end[-1] == '0')
        *--end = '\0';
    if (end > tmp && end[-1] == '.')
        *--end = '\0';
    return snprintf(buf, n, "%se%d", tmp, exponent);
}

int tessel_plot_format_number(double v, char *buf, size_t n)
{
    if (!isfinite(v))
        return snprintf(buf, n, "%s", isnan(v) ? "n/a" : v > 0 ? "inf" : "-inf");
    double a = fabs(v);
    if (a == 0)
        return snprintf(buf, n, "0");
    if (a >= 1e21 || a < 1e-3)
        return format_exponent(v, buf, n);
    if (a < 1000)
        return snprintf(buf, n, "%.4g", v);
    size_t p = 0;
    while (a >= 999.95 && p + 1 < sizeof(si_prefix) / sizeof(si_prefix[0])) {
        a /= 1000;
        v /= 1000;
        p++;
    }
    return snprintf(buf, n, "%.4g%s", v, si_prefix[p]);
}

/* ------------------------------------------------------------------ */
/* Mapping. */

double plot_axis_position(const tessel_plot_axis *ax, double v, double p_lo, double p_hi)
{
    double t;
    if (ax->log10) {
        if (!(v > 0))
            return p_lo - 100 * (p_hi - p_lo);
        t = (log10(v) - log10(ax->lo)) / (log10(ax->hi) - log10(ax->lo));
    } else {
        t = (v - ax->lo) / (ax->hi - ax->lo);
    }
    return p_lo + t * (p_hi - p_lo);
}

#define EXPONENT_SCALE 0.75

static int decade_exponent(double v)
{
    return (int)lround(log10(v));
}

/* Width of one tick label as drawn. */
static double tick_label_width(const tessel_plot_axis *ax, double v)
{
    char buf[48];
    if (ax->decades) {
        snprintf(buf, sizeof(buf), "%d", decade_exponent(v));
        return svg_text_width("10", PLOT_FONT_SIZE) +
               svg_text_width(buf, PLOT_FONT_SIZE * EXPONENT_SCALE);
    }
    tessel_plot_format_number(v, buf, sizeof(buf));
    return svg_text_width(buf, PLOT_FONT_SIZE);
}

double plot_axis_label_width(const tessel_plot_axis *ax)
{
    double w = 0;
    for (size_t i = 0; i < ax->nticks; i++) {
        double t = tick_label_width(ax, ax->tick[i]);
        if (t > w)
            w = t;
    }
    return w;
}

/* ------------------------------------------------------------------ */
/* Drawing. */

#define AXIS_COLOUR "#333333"
#define TICK_LENGTH 5.0

static void draw_tick_label(FILE *f, double x, double y, const char *anchor,
                            const tessel_plot_axis *ax, double v)
{
    svg_text_style st = { .size = PLOT_FONT_SIZE, .anchor = anchor };
    char buf[48];
    if (!ax->decades) {
        tessel_plot_format_number(v, buf, sizeof(buf));
        svg_text(f, x, y, &st, buf);
        return;
    }
    /* 10 with a raised exponent; a true minus sign for negative ones. */
    int e = decade_exponent(v);
    svg_text_open(f, x, y, &st);
    fputs("10<tspan", f);
    svg_attr(f, "dy", -PLOT_FONT_SIZE * 0.45);
    svg_attr(f, "font-size", PLOT_FONT_SIZE * EXPONENT_SCALE);
    fprintf(f, ">%s%d</tspan>", e < 0 ? "\xe2\x88\x92" : "", e < 0 ? -e : e);
    svg_text_close(f);
}

/* Minor ticks 2..9 x 10^e on decade axes of one decade per tick. */
static int has_minor_ticks(const tessel_plot_axis *ax)
{
    return ax->decades && ax->nticks >= 2 && ax->nticks <= 7 &&
           decade_exponent(ax->tick[1]) - decade_exponent(ax->tick[0]) == 1;
}

void plot_draw_grid(FILE *f, const plot_frame *fr, const tessel_plot_axis *x,
                    const tessel_plot_axis *y)
{
    fprintf(f, "<g stroke=\"%s\" stroke-width=\"1\">\n", PLOT_GRID_COLOUR);
    for (size_t i = 0; y && i < y->nticks; i++) {
        double py = plot_axis_position(y, y->tick[i], fr->y1, fr->y0);
        fputs("<line", f);
        svg_attr(f, "x1", fr->x0);
        svg_attr(f, "y1", py);
        svg_attr(f, "x2", fr->x1);
        svg_attr(f, "y2", py);
        fputs("/>\n", f);
    }
    for (size_t i = 0; x && i < x->nticks; i++) {
        double px = plot_axis_position(x, x->tick[i], fr->x0, fr->x1);
        fputs("<line", f);
        svg_attr(f, "x1", px);
        svg_attr(f, "y1", fr->y0);
        svg_attr(f, "x2", px);
        svg_attr(f, "y2", fr->y1);
        fputs("/>\n", f);
    }
    fputs("</g>\n", f);
}

static void draw_minor_ticks(FILE *f, const plot_frame *fr, const tessel_plot_axis *ax, int is_x)
{
    if (!has_minor_ticks(ax))
        return;
    for (size_t i = 0; i + 1 < ax->nticks; i++) {
        for (int m = 2; m <= 9; m++) {
            double v = ax->tick[i] * m;
            if (is_x) {
                double px = plot_axis_position(ax, v, fr->x0, fr->x1);
                svg_line(f, px, fr->y1, px, fr->y1 + TICK_LENGTH * 0.6, AXIS_COLOUR, 0.75, NULL);
            } else {
                double py = plot_axis_position(ax, v, fr->y1, fr->y0);
                svg_line(f, fr->x0 - TICK_LENGTH * 0.6, py, fr->x0, py, AXIS_COLOUR, 0.75, NULL);
            }
        }
    }
}

static void draw_x_axis(FILE *f, const plot_frame *fr, const tessel_plot_axis *x)
{
    for (size_t i = 0; i < x->nticks; i++) {
        double px = plot_axis_position(x, x->tick[i], fr->x0, fr->x1);
        svg_line(f, px, fr->y1, px, fr->y1 + TICK_LENGTH, AXIS_COLOUR, 1, NULL);
        draw_tick_label(f, px, fr->y1 + TICK_LENGTH + PLOT_FONT_SIZE + 2, "middle", x,
                        x->tick[i]);
    }
    draw_minor_ticks(f, fr, x, 1);
}

static void draw_y_axis(FILE *f, const plot_frame *fr, const tessel_plot_axis *y)
{
    for (size_t i = 0; i < y->nticks; i++) {
        double py = plot_axis_position(y, y->tick[i], fr->y1, fr->y0);
        svg_line(f, fr->x0 - TICK_LENGTH, py, fr->x0, py, AXIS_COLOUR, 1, NULL);
        draw_tick_label(f, fr->x0 - TICK_LENGTH - 4, py + PLOT_FONT_SIZE * 0.35, "end", y,
                        y->tick[i]);
    }
    draw_minor_ticks(f, fr, y, 0);
}

void plot_draw_axes(FILE *f, const plot_frame *fr, const tessel_plot_axis *x,
                    const tessel_plot_axis *y, const char *x_title, const char *y_title)
{
    if (x)
        draw_x_axis(f, fr, x);
    if (y)
        draw_y_axis(f, fr, y);
    svg_line(f, fr->x0, fr->y0, fr->x0, fr->y1, AXIS_COLOUR, 1, NULL);
    svg_line(f, fr->x0, fr->y1, fr->x1, fr->y1, AXIS_COLOUR, 1, NULL);
    svg_text_style st = { .size = PLOT_AXIS_SIZE, .anchor = "middle" };
    if (x_title)
        svg_text(f, (fr->x0 + fr->x1) / 2, fr->y1 + fr->below_x + PLOT_AXIS_SIZE + 6, &st,
                 x_title);
    if (y_title) {
        st.rotate = -90;
        svg_text(f, 8 + PLOT_AXIS_SIZE, (fr->y0 + fr->y1) / 2, &st, y_title);
    }
}
