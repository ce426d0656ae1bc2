/* The fitted SRAM model: energy per access and area of an SRAM of any
 * capacity, port width and bank count from a power law fitted to published
 * CACTI-based points (energy_tables/sram-points.tsv, refitted by
 * bench/energy_fit.py; the law, its sources and its error table are in
 * docs/models/energy.md).
 *
 *   ln q = c0 + c1 ln(width) + c2 ln(depth of one bank), q = read, write, area
 *
 * A power law because CACTI's own off-grid rule is one (the CACTI plug-in
 * scales energy by depth^0.78 and width about linearly, energy-numbers.md
 * 2.4) and because a least-squares fit in logs weighs every point by its
 * relative error. The fitted depth exponent of read energy, about 0.5, is
 * the sqrt(capacity) growth of bit-line and H-tree length. Buffers larger
 * than bank_bytes (the largest fitted array) are split into equal banks;
 * an access then also drives `width` wires from the port to the farthest
 * bank, an H-tree whose root-to-leaf length is taken as the side of the
 * square holding all banks (S/2 + S/4 + ... -> S). */
#include <math.h>
#include <stddef.h>

#include "energy_internal.h"

static double law(const en_law *l, double width, double depth)
{
    return exp(l->c0 + l->c1 * log(width) + l->c2 * log(depth));
}

int tessel_energy_sram_banks(const en_fit *f, unsigned width, double depth, unsigned banks,
                             unsigned *out, char *why, size_t cap)
{
    double bytes = depth * width / 8.0;
    if (width < f->min_width || width > f->max_width) {
        tessel_energy_fmt(why, cap, "width %u is outside the fitted model's %u to %u bits", width,
                          f->min_width, f->max_width);
        return TESSEL_ERANGE;
    }
    if (!(bytes >= f->min_bytes) || !(bytes <= f->max_bytes)) {
        tessel_energy_fmt(why, cap, "%.0f bytes is outside the fitted model's %.0f to %.0f bytes",
                          bytes, f->min_bytes, f->max_bytes);
        return TESSEL_ERANGE;
    }
    if (banks == 0) {
        double b = ceil(bytes / f->bank_bytes);
        banks = b < 1 ? 1 : (unsigned)b;
    }
    if (!(depth / banks >= 1)) {
        tessel_energy_fmt(why, cap, "%u banks of %g words leave less than one %u-bit word per bank",
                          banks, depth, width);
        return TESSEL_ERANGE;
    }
    *out = banks;
    return 0;
}

void tessel_energy_sram_fit(const en_fit *f, unsigned width, double bank_depth, double *read,
                            double *write, double *area)
{
    *read = law(&f->read, width, bank_depth);
    *write = law(&f->write, width, bank_depth);
    *area = law(&f->area, width, bank_depth);
}

double tessel_energy_sram_wire(const en_fit *f, unsigned width, unsigned banks, double bank_area)
{
    if (banks <= 1)
        return 0;
    /* um^2 -> mm: the side of the square holding every bank. */
    double side_mm = sqrt(bank_area * banks) / 1000.0;
    return f->wire_pj_per_bit_mm * width * side_mm;
}
