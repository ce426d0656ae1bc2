/* Internal to the report module: what the simulator-reference readers
 * (simref_drt.c, simref_stonne.c, simref_sam.c) share with simref.c:
 * notes, positions, numbers, text lines and the table builder. */
#ifndef TESSEL_REPORT_SIMREF_INTERNAL_H
#define TESSEL_REPORT_SIMREF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "jsonread.h"
#include "tessel/report.h"

#define SIMREF_NAME_MAX 64u /* bytes of a field name remembered for de-duplicating notes */

/* One call's working state: where notes and errors go. */
typedef struct simref_ctx {
    const tessel_allocator *alloc;
    tessel_diag_list *notes; /* may be NULL */
    tessel_diag *diag;
    size_t nnoted;           /* names noted so far */
    char noted[TESSEL_SIMREF_MAX_NOTES][SIMREF_NAME_MAX];
    size_t unlisted;         /* unknown names past the cap */
} simref_ctx;

/* "unknown WHAT 'NAME' (ignored)" at file:line:col, once per name. */
int simref_note_unknown(simref_ctx *c, const char *file, uint64_t line, uint32_t col,
                        const char *what, const char *name);
/* A note of its own (not de-duplicated, not capped). */
int simref_note(simref_ctx *c, const char *file, uint64_t line, uint32_t col, const char *fmt,
                ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* An error with position (code TESSEL_EPARSE, TESSEL_ERANGE, ...). */
int simref_error(simref_ctx *c, int code, const char *file, uint64_t line, uint32_t col,
                 const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
int simref_out_of_memory(simref_ctx *c);

/* Where data[0..size) ends: the line and column just past its last byte. */
void simref_end_position(const char *data, size_t size, uint64_t *line, uint32_t *col);

/* A missing field: an error at the file's end naming the field. */
int simref_missing(simref_ctx *c, const tessel_simref_input *in, const char *field,
                   const char *where);

/* ------------------------------------------------------------------ */
/* Numbers. */

enum { SIMREF_COUNT_OK = 0, SIMREF_COUNT_NOT_WHOLE, SIMREF_COUNT_TOO_LARGE };

/* s[0..len) as a count: digits only, at most 2^64 - 1. */
int simref_parse_count(const char *s, size_t len, uint64_t *v);
/* Length of the number at s[0..len): [-]digits[.digits][(e|E)[+-]digits];
 * 0 when none starts there. */
size_t simref_number_length(const char *s, size_t len);
/* s[0..len) as a finite real number (the whole text); 0 when it is not. */
int simref_parse_real(const char *s, size_t len, double *v);
/* a + b into *sum; 0 on overflow. */
int simref_add(uint64_t a, uint64_t b, uint64_t *sum);

/* A JSON number node as a count (errors name `field`). */
int simref_json_count(simref_ctx *c, const char *file, const json_doc *doc, const json_node *n,
                      const char *field, uint64_t *v);

/* Members of a JSON object a reader knows: a slot of its own (slot >= 0),
 * or known and ignored (slot < 0). */
typedef struct simref_member {
    const char *key;
    int slot;
} simref_member;

/* The members of `obj` (which must be an object: else an error naming
 * `path`): found[slot] = the member's node (found[0..nslots) are cleared
 * first). Keys not in the list are noted as "unknown WHAT 'PATH.KEY'"; a
 * key with a slot given twice is an error. */
int simref_json_members(simref_ctx *c, const char *file, const json_doc *doc,
                        const json_node *obj, const char *path, const char *what,
                        const simref_member *members, size_t nmembers, const json_node **found,
                        size_t nslots);
/* An error unless n has `type`: "field 'PATH': expected X, found Y". */
int simref_json_expect(simref_ctx *c, const char *file, const json_node *n, json_type type,
                       const char *path);
/* A missing member: an error at the object that should hold it. */
int simref_json_missing(simref_ctx *c, const char *file, const json_node *obj,
                        const char *path, const char *key);

/* ------------------------------------------------------------------ */
/* Text lines (LF or CRLF). A NUL byte is an error at its position. */

typedef struct simref_lines {
    const tessel_simref_input *in;
    size_t pos;
    uint64_t line; /* of the line last returned */
} simref_lines;

void simref_lines_init(simref_lines *l, const tessel_simref_input *in);
/* 1 with the next line in *text / *len (without its end), 0 at the end,
 * or a negative error. */
int simref_next_line(simref_ctx *c, simref_lines *l, const char **text, size_t *len);

/* s[0..*len) without blanks (space, tab) around it. */
const char *simref_trim(const char *s, size_t *len);

/* The file name up to its first '.' (without directories), "run" when
 * empty, cut to fit n bytes. */
void simref_stem(const char *name, char *buf, size_t n);

/* ------------------------------------------------------------------ */
/* Rows of the table being built. Column 0 is `design`, 1 `data`; the
 * traffic grain adds `level` and `tensor`. Metric columns that stay empty
 * in every row are left out of the table. */

enum { SIMREF_COL_DESIGN, SIMREF_COL_DATA, SIMREF_COL_LEVEL, SIMREF_COL_TENSOR };

typedef struct simref_builder {
    const tessel_allocator *alloc;
    const char *const *columns;
    size_t ncols, nkeys;
    char **cells;    /* nrows x ncols, NULL for empty */
    uint64_t *lines; /* per row */
    size_t nrows, cap;
    const char *name; /* the table's name: the run's main file (NULL: the first input) */
} simref_builder;

void simref_builder_init(simref_builder *b, const tessel_allocator *a,
                         const char *const *columns, size_t ncols, size_t nkeys);
/* The builder of a reader with one column set per grain: the summary
 * grain keys on design and data, the traffic grain on those, level and
 * tensor. */
#define SIMREF_BUILDER_FOR_GRAIN(b, a, grain, summary, traffic)                               \
    simref_builder_for_grain((b), (a), (grain), (summary), sizeof(summary) / sizeof((summary)[0]), \
                             (traffic), sizeof(traffic) / sizeof((traffic)[0]))
void simref_builder_for_grain(simref_builder *b, const tessel_allocator *a,
                              tessel_simref_grain grain, const char *const *summary,
                              size_t nsummary, const char *const *traffic, size_t ntraffic);
void simref_builder_free(simref_builder *b);
/* A new row (all empty) from `line`; *row receives its index. */
int simref_builder_add_row(simref_ctx *c, simref_builder *b, uint64_t line, size_t *row);
int simref_builder_set(simref_ctx *c, simref_builder *b, size_t row, size_t col,
                       const char *text);
int simref_builder_set_u64(simref_ctx *c, simref_builder *b, size_t row, size_t col,
                           uint64_t v);
/* The table (named `name`); the builder keeps nothing the table needs. */
int simref_builder_finish(simref_ctx *c, simref_builder *b, const char *name,
                          tessel_report_csv **out);

/* ------------------------------------------------------------------ */
/* The readers: rows for the given inputs into b (already initialised by
 * the reader itself with its columns through simref_builder_init). */

int simref_read_drt(simref_ctx *c, tessel_simref_grain grain, const tessel_simref_input *in,
                    size_t n, simref_builder *b);
int simref_read_stonne(simref_ctx *c, tessel_simref_grain grain, const tessel_simref_input *in,
                       size_t n, simref_builder *b);
int simref_read_sam(simref_ctx *c, tessel_simref_grain grain, const tessel_simref_input *in,
                    size_t n, simref_builder *b);

#endif
