/* SRAM pricing (and register files past their registers): the bank
 * count, each bank from the table points of its width series (linear in
 * log depth and log value between points, GSL linear interpolation; the
 * next wider series scaled linearly in width, the Accelergy library
 * plug-in's rule) or else from the fitted law (sram_fit.c), then the
 * H-tree between banks (docs/models/energy.md, "SRAM at any size"). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>

#include "energy_internal.h"

#define EN_SERIES_MAX 256u /* SRAM points per width series */

/* Linear interpolation of ys over xs (both already in log space where the
 * caller wants it) at xq, through GSL on a stack-held interpolation object
 * (gsl_interp_linear keeps no state), so that no allocation escapes the
 * tessel allocator. xs strictly increasing and xq inside them. */
static int interp_linear(const double *xs, const double *ys, size_t n, double xq, double *out)
{
    if (n == 1) {
        *out = ys[0];
        return 0;
    }
    gsl_interp in;
    memset(&in, 0, sizeof(in));
    in.type = gsl_interp_linear;
    in.size = n;
    if (gsl_interp_init(&in, xs, ys, n) != GSL_SUCCESS)
        return TESSEL_ERANGE;
    if (gsl_interp_eval_e(&in, xs, ys, xq, NULL, out) != GSL_SUCCESS || !isfinite(*out))
        return TESSEL_ERANGE;
    return 0;
}

/* Interpolates one column of the series: log-log when every value is
 * positive, else linear in the value (leak columns may hold zeros). */
static int interp_column(const en_point *const *s, size_t n, size_t offset, double xq,
                         double *out)
{
    double xs[EN_SERIES_MAX], ys[EN_SERIES_MAX];
    int logy = 1;
    for (size_t i = 0; i < n; i++) {
        double v;
        memcpy(&v, (const char *)s[i] + offset, sizeof(v));
        xs[i] = log(s[i]->depth);
        ys[i] = v;
        if (!(v > 0))
            logy = 0;
    }
    if (logy)
        for (size_t i = 0; i < n; i++)
            ys[i] = log(ys[i]);
    int rc = interp_linear(xs, ys, n, xq, out);
    if (rc == 0 && logy)
        *out = exp(*out);
    return rc;
}

const tessel_yaml_node *en_depth_node(const en_attrs *at)
{
    return at->depth_n ? at->depth_n : at->size_n;
}

/* Depth in words of `width` bits: the depth attribute, else the size
 * attribute, else the level capacity. 0 when none is known. */
double en_storage_depth(const en_attrs *at, unsigned width, uint64_t default_bytes)
{
    if (at->depth > 0)
        return at->depth;
    uint64_t bytes = at->size ? at->size : default_bytes;
    return bytes ? (double)bytes * 8.0 / width : 0;
}

/* One bank of `depth` words from the table points of class k (the series
 * of this width, else the next wider one scaled linearly in width, the
 * Accelergy library plug-in's rule). 1 when the depth is outside the
 * series (range[cap] says what it has), 0 when priced, < 0 on error. */
static int sram_points(const en_where *w, const en_table *t, const en_class *k, unsigned width,
                       double depth, tessel_component_energy *out, char *range, size_t cap)
{
    if (k->npoints == 0) {
        tessel_energy_fmt(range, cap, "no points");
        return 1;
    }
    double ws = -1;
    for (size_t i = 0; i < k->npoints; i++)
        if (k->points[i].width >= width) {
            ws = k->points[i].width;
            break;
        }
    if (ws < 0)
        ws = k->points[k->npoints - 1].width;
    const en_point *s[EN_SERIES_MAX];
    size_t n = 0;
    for (size_t i = 0; i < k->npoints && n < EN_SERIES_MAX; i++)
        if (k->points[i].width == ws)
            s[n++] = &k->points[i];
    double dmin = s[0]->depth, dmax = s[n - 1]->depth;
    if (depth < dmin || depth > dmax) {
        if (n == 1)
            tessel_energy_fmt(range, cap, "only depth %g at width %g", dmin, ws);
        else
            tessel_energy_fmt(range, cap, "depths %g to %g at width %g", dmin, dmax, ws);
        return 1;
    }
    double xq = log(depth);
    double read = 0, write = 0, update = 0, area = 0, leak = 0;
    int rc = interp_column(s, n, offsetof(en_point, read), xq, &read);
    if (!rc)
        rc = interp_column(s, n, offsetof(en_point, write), xq, &write);
    if (!rc)
        rc = interp_column(s, n, offsetof(en_point, update), xq, &update);
    if (!rc)
        rc = interp_column(s, n, offsetof(en_point, area), xq, &area);
    int has_leak = 1;
    for (size_t i = 0; i < n; i++)
        if (s[i]->leak < 0)
            has_leak = 0;
    if (!rc && has_leak)
        rc = interp_column(s, n, offsetof(en_point, leak), xq, &leak);
    if (rc)
        return en_where_error(w, rc, NULL, "attributes.depth", "interpolation failed in %s",
                           t->base);
    double f = width / ws;
    out->pj[TESSEL_ACTION_READ] = read * f;
    out->pj[TESSEL_ACTION_WRITE] = write * f;
    out->pj[TESSEL_ACTION_UPDATE] = update * f;
    out->pj[TESSEL_ACTION_METADATA_READ] = read * f;
    out->pj[TESSEL_ACTION_METADATA_WRITE] = write * f;
    out->pj[TESSEL_ACTION_LEAK] = leak * f;
    out->area_um2 = area * f;
    size_t exact = 0;
    while (exact < n && s[exact]->depth != depth)
        exact++;
    tessel_energy_fmt(out->method, sizeof(out->method), "%s",
                      f != 1 ? "width-scaled" : exact < n ? "point" : "interpolated");
    int len;
    if (exact < n)
        len = tessel_energy_fmt(out->source, sizeof(out->source), "%s: %s %gx%g point (%s)",
                                t->base, k->name, ws, depth, s[exact]->source);
    else
        len = tessel_energy_fmt(out->source, sizeof(out->source),
                                "%s: %s %gx%g, log-log in depth", t->base, k->name, ws, depth);
    if (f != 1 && len > 0 && (size_t)len < sizeof(out->source))
        tessel_energy_fmt(out->source + len, sizeof(out->source) - (size_t)len,
                          ", width-scaled to %u", width);
    return 0;
}

/* An SRAM (or a register file past its registers, with `k` the table's
 * fitted SRAM class): the bank count (given, or automatic above the fit's
 * bank size), each bank from the table points when they cover it, else
 * from the fitted law, then the H-tree between banks. `why` names the
 * path for the source string (NULL for a plain SRAM). */
int en_price_sram(const en_where *w, const en_table *t, const en_class *k,
                  const en_attrs *at, unsigned width, double depth, const char *why,
                  tessel_component_energy *out)
{
    unsigned banks = 1;
    char reason[200];
    if (k->fit.present) {
        int rc = tessel_energy_sram_banks(&k->fit, width, depth, at->banks, &banks, reason,
                                          sizeof(reason));
        if (rc)
            return en_where_error(w, rc, at->banks_n ? at->banks_n : en_depth_node(at),
                               "attributes.depth", "%s %ux%.0f cannot be priced: %s in %s",
                               k->name, width, depth, reason, t->base);
    } else if (at->banks_n) {
        return en_where_error(w, TESSEL_EINVAL, at->banks_n, "attributes.banks",
                           "%s in %s has no fitted model, so it cannot price 'banks'", k->name,
                           t->base);
    }
    double bank_depth = depth / banks;
    char range[96];
    int rc = why ? 1 : sram_points(w, t, k, width, bank_depth, out, range, sizeof(range));
    if (rc < 0)
        return rc;
    if (rc == 1 && !k->fit.present)
        return en_where_error(w, TESSEL_ERANGE, en_depth_node(at), "attributes.depth",
                           "%s depth %g (width %u) is outside %s: it has %s; tessel does not "
                           "extrapolate: add a table point or name an Accelergy ERT for this "
                           "component",
                           k->name, depth, width, t->base, range);
    if (rc == 1) {
        double read, write, area;
        tessel_energy_sram_fit(&k->fit, width, bank_depth, &read, &write, &area);
        out->pj[TESSEL_ACTION_READ] = out->pj[TESSEL_ACTION_METADATA_READ] = read;
        /* as the points: update costs a write; the fitted points give no leak */
        out->pj[TESSEL_ACTION_WRITE] = out->pj[TESSEL_ACTION_UPDATE] = write;
        out->pj[TESSEL_ACTION_METADATA_WRITE] = write;
        out->pj[TESSEL_ACTION_LEAK] = 0;
        out->area_um2 = area;
        tessel_energy_fmt(out->method, sizeof(out->method), "fit");
        tessel_energy_fmt(out->source, sizeof(out->source), "%s: %s fit %ux%g (%s)", t->base,
                          k->name, width, bank_depth, why ? why : "outside the points");
    }
    if (banks > 1) {
        double wire = tessel_energy_sram_wire(&k->fit, width, banks, out->area_um2);
        for (int a = TESSEL_ACTION_READ; a <= TESSEL_ACTION_METADATA_WRITE; a++)
            out->pj[a] += wire;
        out->pj[TESSEL_ACTION_LEAK] *= banks;
        out->area_um2 *= banks;
        size_t len = strlen(out->source);
        if (len + 1 < sizeof(out->source))
            tessel_energy_fmt(out->source + len, sizeof(out->source) - len,
                              "; %u banks + H-tree %.4g pJ", banks, wire);
    }
    out->depth_words = depth;
    out->banks = banks;
    return 0;
}

int en_resolve_sram(const en_where *w, const en_table *t, const en_class *k,
                    const en_attrs *at, unsigned width, uint64_t default_bytes,
                    tessel_component_energy *out)
{
    double depth = en_storage_depth(at, width, default_bytes);
    if (!(depth > 0))
        return en_where_error(w, TESSEL_EINVAL, NULL, "attributes.depth",
                           "class %s needs a 'depth' or 'size' attribute (or a level capacity)",
                           k->name);
    if (k->npoints == 0 && !k->fit.present)
        return en_where_error(w, TESSEL_EINVAL, NULL, "points", "class %s has no SRAM points",
                           k->name);
    return en_price_sram(w, t, k, at, width, depth, NULL, out);
}
