/* The human-readable summary of one design point. */
#include <math.h>
#include <string.h>

#include "tessel/report.h"

/* "812 B", "46.2 KiB", "1.23 GiB". */
static void human_bytes(char *buf, size_t n, double bytes)
{
    static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (!(bytes >= 1024.0)) {
        snprintf(buf, n, "%.0f B", bytes);
        return;
    }
    double v = bytes / 1024.0;
    unsigned u = 0;
    while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, n, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}

/* "12.3 s", "4.56 ms", "789 us", "12 ns". */
static void human_seconds(char *buf, size_t n, double s)
{
    if (!isfinite(s))
        snprintf(buf, n, "-");
    else if (s >= 1.0 || s == 0.0)
        snprintf(buf, n, "%.3g s", s);
    else if (s >= 1e-3)
        snprintf(buf, n, "%.3g ms", s * 1e3);
    else if (s >= 1e-6)
        snprintf(buf, n, "%.3g us", s * 1e6);
    else
        snprintf(buf, n, "%.3g ns", s * 1e9);
}

static double percent(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0.0;
}

static void energy_line(FILE *f, const char *name, double pj, double total)
{
    fprintf(f, "  %-12s %12.4g uJ %6.1f %%\n", name, pj * 1e-6, percent(pj, total));
}

int tessel_report_print(FILE *f, const tessel_report_point *p, unsigned flags)
{
    char b1[32], b2[32], b3[32];
    fprintf(f, "%s: %s on %s (strategy %s, estimator %s)\n", p->design, p->workload,
            p->data[0] ? p->data : "-", p->strategy[0] ? p->strategy : "-",
            p->estimator[0] ? p->estimator : "-");

    fprintf(f, "\ntraffic by level and tensor:\n");
    fprintf(f, "  %-10s %-6s %10s %10s %10s %10s %10s %10s %12s\n", "level", "tensor", "fills",
            "updates", "writebacks", "reads", "data", "metadata", "energy uJ");
    for (unsigned l = 0; l < p->nlevels; l++)
        for (unsigned t = 0; t < p->ntensors; t++) {
            const tessel_traffic *tr = &p->traffic[l][t];
            human_bytes(b1, sizeof(b1), (double)tr->data_bytes);
            human_bytes(b2, sizeof(b2), (double)tr->metadata_bytes);
            fprintf(f, "  %-10s %-6s %10llu %10llu %10llu %10llu %10s %10s %12.4g\n",
                    p->level_name[l], p->tensor_name[t], (unsigned long long)tr->fills,
                    (unsigned long long)tr->updates, (unsigned long long)tr->writebacks,
                    (unsigned long long)tr->reads, b1, b2, p->access[l][t].energy_pj * 1e-6);
        }

    human_bytes(b1, sizeof(b1), (double)p->dram_bytes);
    human_bytes(b2, sizeof(b2), (double)p->compulsory_bytes);
    fprintf(f, "\n%s traffic %s, compulsory %s%s, ratio %.3f\n",
            p->nlevels ? p->level_name[0] : "backing store", b1, b2,
            p->compulsory_estimated ? " (output count estimated)" : "", p->traffic_ratio);
    fprintf(f, "MACs %llu, intersections %llu, output nonzeros %llu",
            (unsigned long long)p->macs, (unsigned long long)p->intersections,
            (unsigned long long)p->output_nnz);
    if (isfinite(p->output_nnz_stderr)) /* stat: the output sample's standard error */
        fprintf(f, " +- %.4g (%.2f %%)", p->output_nnz_stderr,
                p->output_nnz ? 100.0 * p->output_nnz_stderr / (double)p->output_nnz : 0.0);
    fputc('\n', f);

    fprintf(f, "\nenergy %.4g uJ:\n", p->energy_pj * 1e-6);
    for (unsigned l = 0; l < p->nlevels; l++)
        energy_line(f, p->level_name[l], p->level_energy_pj[l], p->energy_pj);
    energy_line(f, "MAC", p->mac_energy_pj, p->energy_pj);
    energy_line(f, "intersect", p->intersect_energy_pj, p->energy_pj);
    energy_line(f, "leak", p->leak_energy_pj, p->energy_pj);

    human_seconds(b3, sizeof(b3), p->roofline.seconds);
    fprintf(f, "\ncycles %.6g (%s at %g GHz), bound: %s\n", p->roofline.cycles, b3, p->clock_ghz,
            p->bound[0] ? p->bound : "-");
    fprintf(f, "utilisation: compute %.1f %%", 100.0 * p->roofline.compute_utilization);
    for (unsigned l = 0; l < p->nlevels; l++)
        fprintf(f, ", %s %.1f %%", p->level_name[l], 100.0 * p->roofline.level_utilization[l]);
    fprintf(f, "\narea %.4g mm^2\n", p->area_um2 * 1e-6);
    if (!(flags & TESSEL_REPORT_NO_TIMES)) {
        human_seconds(b3, sizeof(b3), p->model_seconds);
        fprintf(f, "estimator time %s\n", b3);
    }
    return ferror(f) ? TESSEL_EIO : TESSEL_OK;
}
