/* Internal to the report module: helpers shared by its files. */
#ifndef TESSEL_REPORT_INTERNAL_H
#define TESSEL_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tessel/base.h"
#include "tessel/spec.h"

/* Reads the whole file at `path` into a fresh buffer (*data, *size; the
 * caller frees *data through `a`). TESSEL_EIO when unreadable, or
 * TESSEL_ENOMEM. */
int report_read_file(const char *path, const tessel_allocator *a, char **data, size_t *size,
                     tessel_diag *diag);

/* The allocator a table was made with (tables are opaque outside
 * csvread.c). */
struct tessel_report_csv;
const tessel_allocator *report_csv_allocator(const struct tessel_report_csv *t);
/* Where the name of column `col` stands in the file (0 when out of range). */
uint64_t report_csv_header_line(const struct tessel_report_csv *t, size_t col);
uint32_t report_csv_header_column(const struct tessel_report_csv *t, size_t col);

/* summary.csv's `level_energy` cell of p into buf (n bytes; "" when it
 * does not fit, which REPORT_LEVEL_ENERGY_MAX bytes always do: a name and
 * six actions of at most 48 bytes per level). */
#define REPORT_LEVEL_ENERGY_MAX (TESSEL_SPEC_MAX_LEVELS * (TESSEL_SPEC_NAME_MAX + 6 * 48))
struct tessel_report_point;
void report_level_energy_text(const struct tessel_report_point *p, char *buf, size_t n);
/* summary.csv's `level_cycles` cell of p into buf (REPORT_LEVEL_ENERGY_MAX
 * bytes always suffice: a name and one number per level). */
void report_level_cycles_text(const struct tessel_report_point *p, char *buf, size_t n);

#endif
