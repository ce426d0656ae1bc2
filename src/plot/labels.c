/* Names for the points of a figure. A sweep's rows share most identity
 * fields (design, workload, estimator, ...) and differ in a few (data, an
 * axis value): the shared ones go into the subtitle once, the differing
 * ones label each point. */
#include <stdio.h>
#include <string.h>

#include "plot_internal.h"

#define FIELD_CHARS 24u /* longest field shown, in characters */
#define SEPARATOR ", "
#define COMMON_SEPARATOR " \xc2\xb7 " /* middle dot */

static int column_varies(const char *const *field, size_t n, size_t k, size_t j)
{
    for (size_t i = 1; i < n; i++)
        if (strcmp(field[i * k + j], field[j]) != 0)
            return 1;
    return 0;
}

/* Appends s (shortened to FIELD_CHARS) to buf, after sep when buf is not
 * empty. */
static void append(char *buf, size_t n, const char *sep, const char *s)
{
    size_t used = strlen(buf);
    char part[FIELD_CHARS * 4 + 4];
    svg_shorten(s, FIELD_CHARS, part, sizeof(part));
    if (used + strlen(sep) + strlen(part) + 1 > n)
        return;
    snprintf(buf + used, n - used, "%s%s", used ? sep : "", part);
}

/* Bytes the longest label needs, with its NUL. */
static size_t label_length(const char *const *field, size_t n, size_t k,
                           const unsigned char *shown)
{
    size_t longest = 24; /* room for "#n" */
    for (size_t i = 0; i < n; i++) {
        size_t len = 1;
        for (size_t j = 0; j < k; j++) {
            if (!shown[j])
                continue;
            size_t f = strlen(field[i * k + j]);
            len += (f < FIELD_CHARS * 4 ? f : FIELD_CHARS * 4) + 3 + strlen(SEPARATOR);
        }
        if (len > longest)
            longest = len;
    }
    return longest;
}

int plot_labels_build(const char *const *field, size_t n, size_t k, const char *const *names,
                      const tessel_allocator *a, plot_labels *out)
{
    memset(out, 0, sizeof(*out));
    if (n == 0)
        return 0;
    unsigned char *shown = k ? tessel_alloc(a, k) : NULL;
    if (k && !shown)
        return TESSEL_ENOMEM;
    size_t nshown = 0, point_column = k;
    for (size_t j = 0; j < k; j++) {
        shown[j] = (unsigned char)column_varies(field, n, k, j);
        nshown += shown[j];
        if (strcmp(names[j], "point") == 0)
            point_column = j;
        if (!shown[j] && field[j][0])
            append(out->common, sizeof(out->common), COMMON_SEPARATOR, field[j]);
    }
    /* The point number says nothing the varying axis values do not. */
    if (point_column < k && shown[point_column] && nshown > 1) {
        shown[point_column] = 0;
        nshown--;
    }
    for (size_t j = 0; j < k; j++)
        if (shown[j])
            append(out->varying, sizeof(out->varying), SEPARATOR, names[j]);

    size_t each = label_length(field, n, k, shown);
    out->text = tessel_alloc_array(a, n, sizeof(*out->text));
    char *storage = tessel_alloc_array(a, n, each);
    if (!out->text || !storage) {
        tessel_dealloc(a, out->text);
        tessel_dealloc(a, storage);
        tessel_dealloc(a, shown);
        memset(out, 0, sizeof(*out));
        return TESSEL_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        char *s = storage + i * each;
        s[0] = '\0';
        for (size_t j = 0; j < k; j++)
            if (shown[j])
                append(s, each, SEPARATOR, field[i * k + j]);
        if (!nshown)
            snprintf(s, each, "#%zu", i + 1);
        out->text[i] = s;
    }
    out->n = n;
    tessel_dealloc(a, shown);
    return 0;
}

void plot_labels_free(plot_labels *l, const tessel_allocator *a)
{
    if (l->text) {
        tessel_dealloc(a, l->text[0]); /* the one block holding every label */
        tessel_dealloc(a, l->text);
    }
    memset(l, 0, sizeof(*l));
}

int plot_labels_from_rows(const tessel_report_csv *t, const size_t *rows, size_t n,
                          const size_t *cols, size_t k, const tessel_allocator *a,
                          plot_labels *out)
{
    memset(out, 0, sizeof(*out));
    if (n == 0)
        return 0;
    const char **field = NULL, **names = NULL;
    if (k) {
        field = tessel_alloc_array(a, n, k * sizeof(*field));
        names = tessel_alloc_array(a, k, sizeof(*names));
        if (!field || !names) {
            tessel_dealloc(a, field);
            tessel_dealloc(a, names);
            return TESSEL_ENOMEM;
        }
    }
    for (size_t j = 0; j < k; j++)
        names[j] = tessel_report_csv_column_name(t, cols[j]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < k; j++)
            field[i * k + j] = tessel_report_csv_cell(t, rows[i], cols[j]);
    int rc = plot_labels_build(field, n, k, names, a, out);
    tessel_dealloc(a, field);
    tessel_dealloc(a, names);
    return rc;
}
