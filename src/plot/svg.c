/* A small SVG 1.1 writer: numbers in a fixed short form, text escaped so
 * that any input bytes give a well-formed document, and the few shapes the
 * figures need. */
#include <math.h>
#include <string.h>

#include "plot_internal.h"

/* Length of the valid UTF-8 sequence at s that XML 1.0 allows as a
 * character, or 0 (a stray continuation byte, an overlong form, a
 * surrogate, U+FFFE/U+FFFF, a truncated sequence). */
static size_t utf8_sequence(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80)
            return 0;
        if (c == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
            return 0; /* U+FFFE, U+FFFF */
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

void tessel_plot_escape(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        size_t len = utf8_sequence(p);
        if (len == 0) {
            fputs("\xef\xbf\xbd", f); /* U+FFFD */
            p++;
            continue;
        }
        if (len > 1) {
            fwrite(p, 1, len, f);
            p += len;
            continue;
        }
        p++;
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        case '\t':
        case '\n':
        case '\r': fputc(' ', f); break;
        default:
            if (c < 0x20 || c == 0x7f)
                fputs("\xef\xbf\xbd", f);
            else
                fputc(c, f);
        }
    }
}

/* ------------------------------------------------------------------ */
/* Numbers. */

void svg_number(FILE *f, double v)
{
    if (!isfinite(v))
        v = 0;
    if (v > 1e5)
        v = 1e5; /* far outside any figure; only clipped lines get there */
    if (v < -1e5)
        v = -1e5;
    long hundredths = lround(v * 100);
    if (hundredths < 0) {
        fputc('-', f);
        hundredths = -hundredths;
    }
    fprintf(f, "%ld", hundredths / 100);
    long frac = hundredths % 100;
    if (frac % 10)
        fprintf(f, ".%02ld", frac);
    else if (frac)
        fprintf(f, ".%ld", frac / 10);
}

void svg_attr(FILE *f, const char *name, double v)
{
    fprintf(f, " %s=\"", name);
    svg_number(f, v);
    fputc('"', f);
}

/* ------------------------------------------------------------------ */
/* Document. */

void svg_begin(FILE *f, double width, double height, const char *title)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fputs("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"", f);
    svg_attr(f, "width", width);
    svg_attr(f, "height", height);
    fputs(" viewBox=\"0 0 ", f);
    svg_number(f, width);
    fputc(' ', f);
    svg_number(f, height);
    fputs("\">\n<title>", f);
    tessel_plot_escape(f, title);
    fputs("</title>\n", f);
    fputs("<rect x=\"0\" y=\"0\"", f);
    svg_attr(f, "width", width);
    svg_attr(f, "height", height);
    fputs(" fill=\"#ffffff\"/>\n", f);
    fprintf(f, "<g font-family=\"Helvetica, Arial, 'Liberation Sans', 'DejaVu Sans', "
               "sans-serif\" font-size=\"%g\" fill=\"%s\">\n",
            PLOT_FONT_SIZE, PLOT_TEXT_COLOUR);
}

void svg_end(FILE *f)
{
    fputs("</g>\n</svg>\n", f);
}

/* ------------------------------------------------------------------ */
/* Text. */

void svg_text_open(FILE *f, double x, double y, const svg_text_style *st)
{
    fputs("<text", f);
    svg_attr(f, "x", x);
    svg_attr(f, "y", y);
    if (st->size != PLOT_FONT_SIZE)
        svg_attr(f, "font-size", st->size);
    if (st->anchor && strcmp(st->anchor, "start") != 0)
        fprintf(f, " text-anchor=\"%s\"", st->anchor);
    if (st->bold)
        fputs(" font-weight=\"bold\"", f);
    if (st->fill)
        fprintf(f, " fill=\"%s\"", st->fill);
    if (st->halo)
        fputs(" stroke=\"#ffffff\" stroke-width=\"3\" stroke-linejoin=\"round\"", f);
    if (st->rotate != 0) {
        fputs(" transform=\"rotate(", f);
        svg_number(f, st->rotate);
        fputc(' ', f);
        svg_number(f, x);
        fputc(' ', f);
        svg_number(f, y);
        fputs(")\"", f);
    }
    fputc('>', f);
}

void svg_text_close(FILE *f)
{
    fputs("</text>\n", f);
}

void svg_text(FILE *f, double x, double y, const svg_text_style *st, const char *text)
{
    svg_text_open(f, x, y, st);
    tessel_plot_escape(f, text);
    svg_text_close(f);
}

/* Advance of one character in ems, roughly Helvetica's, rounded up. */
static double char_width(unsigned char c)
{
    if (c >= 0x80)
        return 0.72;
    if (strchr("iljtfrI.,:;|!' ()[]", c))
        return 0.34;
    if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '%' || c == '@')
        return 0.86;
    if (c >= 'A' && c <= 'Z')
        return 0.70;
    return 0.57;
}

double svg_text_width(const char *s, double size)
{
    double ems = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t len = utf8_sequence(p);
        ems += char_width(*p);
        p += len ? len : 1;
    }
    return ems * size;
}

void svg_shorten(const char *s, size_t max_chars, char *buf, size_t n)
{
    static const char ellipsis[] = "\xe2\x80\xa6";
    if (n == 0)
        return;
    const unsigned char *p = (const unsigned char *)s;
    size_t chars = 0, used = 0;
    while (*p) {
        size_t len = utf8_sequence(p);
        if (len == 0)
            len = 1;
        if (chars + 1 > max_chars || used + len + sizeof(ellipsis) > n) {
            /* Too long: end with an ellipsis in place of the last character kept. */
            if (chars == max_chars && chars > 0) {
                while (used > 0 && (buf[used - 1] & 0xc0) == 0x80)
                    used--;
                if (used > 0)
                    used--;
            }
            memcpy(buf + used, ellipsis, sizeof(ellipsis));
            return;
        }
        memcpy(buf + used, p, len);
        used += len;
        chars++;
        p += len;
    }
    buf[used] = '\0';
}

/* ------------------------------------------------------------------ */
/* Shapes. */

static void end_shape(FILE *f, const char *element, const char *tooltip)
{
    if (!tooltip) {
        fputs("/>\n", f);
        return;
    }
    fputs("><title>", f);
    tessel_plot_escape(f, tooltip);
    fprintf(f, "</title></%s>\n", element);
}

void svg_rect(FILE *f, double x, double y, double w, double h, const char *fill,
              const char *stroke, const char *tooltip)
{
    fputs("<rect", f);
    svg_attr(f, "x", x);
    svg_attr(f, "y", y);
    svg_attr(f, "width", w);
    svg_attr(f, "height", h);
    fprintf(f, " fill=\"%s\"", fill);
    if (stroke)
        fprintf(f, " stroke=\"%s\" stroke-width=\"0.75\"", stroke);
    end_shape(f, "rect", tooltip);
}

void svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke,
              double width, const char *dash)
{
    fputs("<line", f);
    svg_attr(f, "x1", x1);
    svg_attr(f, "y1", y1);
    svg_attr(f, "x2", x2);
    svg_attr(f, "y2", y2);
    fprintf(f, " stroke=\"%s\"", stroke);
    svg_attr(f, "stroke-width", width);
    if (dash)
        fprintf(f, " stroke-dasharray=\"%s\"", dash);
    fputs("/>\n", f);
}

static void path_point(FILE *f, char command, double x, double y)
{
    fputc(command, f);
    svg_number(f, x);
    fputc(' ', f);
    svg_number(f, y);
}

void svg_marker(FILE *f, enum plot_shape shape, double x, double y, double r, const char *fill,
                const char *stroke, double opacity, const char *tooltip)
{
    const char *element = "path";
    switch (shape) {
    case PLOT_SQUARE:
        element = "rect";
        r *= 0.85;
        fputs("<rect", f);
        svg_attr(f, "x", x - r);
        svg_attr(f, "y", y - r);
        svg_attr(f, "width", 2 * r);
        svg_attr(f, "height", 2 * r);
        break;
    case PLOT_TRIANGLE:
    case PLOT_TRIANGLE_DOWN: {
        double s = shape == PLOT_TRIANGLE ? 1 : -1;
        r *= 1.2;
        fputs("<path d=\"", f);
        path_point(f, 'M', x, y - s * r);
        path_point(f, 'L', x + 0.866 * r, y + s * 0.5 * r);
        path_point(f, 'L', x - 0.866 * r, y + s * 0.5 * r);
        fputs("Z\"", f);
        break;
    }
    case PLOT_DIAMOND:
        r *= 1.2;
        fputs("<path d=\"", f);
        path_point(f, 'M', x, y - r);
        path_point(f, 'L', x + r, y);
        path_point(f, 'L', x, y + r);
        path_point(f, 'L', x - r, y);
        fputs("Z\"", f);
        break;
    default:
        element = "circle";
        fputs("<circle", f);
        svg_attr(f, "cx", x);
        svg_attr(f, "cy", y);
        svg_attr(f, "r", r);
        break;
    }
    fprintf(f, " fill=\"%s\"", fill);
    if (opacity < 1)
        svg_attr(f, "fill-opacity", opacity);
    if (stroke)
        fprintf(f, " stroke=\"%s\" stroke-width=\"1\"", stroke);
    end_shape(f, element, tooltip);
}

/* Okabe & Ito (2008), "Color Universal Design": distinguishable with every
 * common colour-vision deficiency. Ordered so that neighbours contrast. */
static const char *const palette[] = {
    "#0072B2", /* blue */
    "#E69F00", /* orange */
    "#009E73", /* bluish green */
    "#D55E00", /* vermillion */
    "#56B4E9", /* sky blue */
    "#CC79A7", /* reddish purple */
    "#F0E442", /* yellow */
    "#000000", /* black */
};

const char *plot_colour(size_t i)
{
    return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}
