/* Internal to the report module: helpers shared by its files. */
#ifndef TESSEL_REPORT_INTERNAL_H
#define TESSEL_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tessel/base.h"

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

#endif
