/* Bytes one tile occupies in each storage format. The formulas use the
 * requested tile shape, so edge tiles are charged as full tiles (what a
 * buffer partition sized for a tile must hold). */
#include <math.h>
#include <string.h>

#include "tessel/stats.h"

static const char *const format_names[TESSEL_FORMAT_COUNT] = { "coo", "csr", "bitmap", "uop-cp",
                                                               "rle" };

void tessel_format_widths_init(tessel_format_widths *w)
{
    w->value_bits = 64;
    w->coord_bits = 32;
    w->offset_bits = 32;
    w->run_bits = 32;
}

const char *tessel_format_name(tessel_format f)
{
    return (unsigned)f < TESSEL_FORMAT_COUNT ? format_names[f] : "?";
}

int tessel_format_from_name(const char *name)
{
    for (int f = 0; f < TESSEL_FORMAT_COUNT; f++)
        if (strcmp(name, format_names[f]) == 0)
            return f;
    if (strcmp(name, "cp") == 0)
        return TESSEL_FORMAT_CSR;
    return -1;
}

/* Bits needed to write any integer in [0, v] (at least 1). */
static double bits_for_double(double v)
{
    double b = 1;
    while (b < 1024 && ldexp(1.0, (int)b) <= v)
        b++;
    return b;
}

void tessel_format_footprint_bits(tessel_format f, unsigned order, const uint64_t *tile,
                                  const tessel_format_widths *w, double *fixed_bits,
                                  double *bits_per_nonzero)
{
    double value = w->value_bits;
    double positions = 1, inner_positions = 1;
    for (unsigned m = 0; m < order; m++) {
        positions *= (double)tile[m];
        if (m > 0)
            inner_positions *= (double)tile[m];
    }
    double fixed = 0, per = 0;
    switch (f) {
    case TESSEL_FORMAT_COO:
        per = (double)order * w->coord_bits + value;
        break;
    case TESSEL_FORMAT_CSR:
        fixed = ((double)tile[0] + 1) * w->offset_bits;
        per = (double)(order - 1) * w->coord_bits + value;
        break;
    case TESSEL_FORMAT_BITMAP:
        fixed = positions;
        per = value;
        break;
    case TESSEL_FORMAT_UOP_CP:
        /* Offsets wide enough to count a full tile; one coordinate wide
         * enough to address the flattened inner modes of the tile. */
        fixed = ((double)tile[0] + 1) * bits_for_double(positions);
        per = (order > 1 ? bits_for_double(inner_positions - 1) : 0) + value;
        break;
    case TESSEL_FORMAT_RLE:
        per = (double)w->run_bits + value;
        break;
    default:
        break;
    }
    *fixed_bits = fixed;
    *bits_per_nonzero = per;
}

uint64_t tessel_format_footprint(tessel_format f, unsigned order, const uint64_t *tile,
                                 uint64_t n, const tessel_format_widths *w)
{
    double fixed, per;
    tessel_format_footprint_bits(f, order, tile, w, &fixed, &per);
    double bytes = ceil((fixed + (double)n * per) / 8);
    return bytes >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)bytes;
}

static const char *const rank_names[TESSEL_RANK_COUNT] = { "UOP", "CP", "B", "RLE", "UB" };

const char *tessel_rank_format_name(tessel_rank_format f)
{
    return (unsigned)f < TESSEL_RANK_COUNT ? rank_names[f] : "?";
}

int tessel_rank_format_from_name(const char *name)
{
    for (int f = 0; f < TESSEL_RANK_COUNT; f++) {
        const char *a = rank_names[f], *b = name;
        while (*a && *b && (*a == *b || *a == *b - ('a' - 'A')))
            a++, b++;
        if (!*a && !*b)
            return f;
    }
    return -1;
}

void tessel_rank_footprint_bits(const unsigned char *ranks, unsigned order, const uint64_t *tile,
                                const uint64_t *occupied, const tessel_format_widths *w,
                                double *data_bits, double *metadata_bits)
{
    double fibers = 1, meta = 0;
    for (unsigned d = 0; d < order; d++) {
        double shape = (double)tile[d], occ = (double)occupied[d], stored = occ;
        double child_offsets = d + 1 < order ? (occ + 1) * w->offset_bits : 0;
        switch (ranks[d]) {
        case TESSEL_RANK_UOP:
            meta += fibers * (shape + 1) * w->offset_bits;
            stored = fibers * shape;
            break;
        case TESSEL_RANK_UB:
            meta += fibers * shape;
            stored = fibers * shape;
            break;
        case TESSEL_RANK_B:
            meta += fibers * shape;
            break;
        case TESSEL_RANK_CP:
            meta += occ * w->coord_bits + child_offsets;
            break;
        default: /* RLE */
            meta += occ * w->run_bits + child_offsets;
            break;
        }
        fibers = stored;
    }
    *data_bits = fibers * w->value_bits;
    *metadata_bits = meta;
}
