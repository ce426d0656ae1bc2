/* Private to src/spec: the loader's shared context and the steps of
 * tessel_spec_load (includes, merge, --set, einsum, validation). */
#ifndef TESSEL_SPEC_INTERNAL_H
#define TESSEL_SPEC_INTERNAL_H

#include "tessel/spec.h"
#include "yaml_internal.h"

/* More errors than this are almost always one mistake repeated; past it
 * the list ends with a "too many errors" entry instead of growing without
 * bound (a fuzzed mapping can hold 500,000 unknown keys). */
#define SPEC_MAX_ERRORS 100u
/* Include nesting and total included files (a diamond of includes would
 * otherwise load the same files exponentially often). */
#define SPEC_MAX_INCLUDE_DEPTH 16u
#define SPEC_MAX_INCLUDES 256u

/* Directory against which relative paths named in a file resolve. */
typedef struct spec_dir {
    struct spec_dir *next;
    const char *file; /* the name nodes of that file carry */
    const char *dir;  /* "" = the current directory (keep paths as given) */
} spec_dir;

typedef struct spec_ctx {
    const tessel_allocator *alloc;
    tessel_diag_list *errors; /* may be NULL: errors are then only counted */
    size_t first_error;       /* errors->count when the load started */
    int first_code;
    int oom; /* an allocation failed: the result is TESSEL_ENOMEM whatever else */
    unsigned nerrors;
    tessel_yaml_doc *doc; /* the merged document; owns every node */
    spec_dir *dirs;       /* in doc's arena */
    unsigned nincludes;
    uint64_t nodes; /* YAML nodes of every file read so far (the limit is on the sum) */
} spec_ctx;

/* Records an error at node n (or at file:line:col); returns code. After
 * SPEC_MAX_ERRORS the rest are only counted. */
int spec_error(spec_ctx *c, int code, const tessel_yaml_node *n, const char *field,
               const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
int spec_error_at(spec_ctx *c, int code, const char *file, uint64_t line, uint32_t column,
                  const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;
/* Records a diagnostic produced elsewhere (YAML syntax errors). */
void spec_error_diag(spec_ctx *c, const tessel_diag *d);
/* An out-of-memory error (no position). */
int spec_oom(spec_ctx *c);

/* Moves every node of `sub` into c->doc (sub is freed); nodes keep their
 * addresses, so aliases stay shared and nothing is copied. */
void spec_adopt(spec_ctx *c, tessel_yaml_doc **sub);

/* The directory relative paths written in `file` resolve against. */
const char *spec_dir_of(const spec_ctx *c, const char *file);
int spec_dir_add(spec_ctx *c, const char *file, const char *dir);
/* `path` as written in `file`, made relative to the current directory:
 * absolute paths and paths from files without a directory stay as given.
 * Allocated through c->alloc; NULL on OOM. */
char *spec_resolve(const spec_ctx *c, const char *file, const char *path);

/* Include merging (merge.c): `over` wins; mappings merge key by key,
 * sequences whose items all are mappings with a scalar `name` merge item
 * by item, anything else is replaced. Nodes are shared, not copied. NULL
 * when out of memory. */
tessel_yaml_node *spec_merge(tessel_yaml_doc *doc, tessel_yaml_node *base,
                             tessel_yaml_node *over);
/* The item of a sequence of named mappings with that name, or NULL. */
const tessel_yaml_node *spec_named_item(const tessel_yaml_node *seq, const char *name,
                                        size_t *index);

/* One --set argument (number argno, 1-based) applied to *root (set.c).
 * Changed nodes are copied along the path, never modified in place, since
 * included or aliased subtrees are shared. 0 or an error code (recorded). */
int spec_apply_set(spec_ctx *c, tessel_yaml_node **root, const char *arg, unsigned argno);

/* Einsum (einsum.c): fills w's tensors, indices and kind. On a syntax or
 * consistency error returns TESSEL_EINVAL with the 0-based offset in text
 * and a message. */
int spec_einsum_parse(const char *text, tessel_spec_workload *w, size_t *offset, char *msg,
                      size_t msgsize);

/* Validation (validate.c): reads the merged root into s, recording every
 * error. Returns 0 when none was found. */
int spec_fill(spec_ctx *c, const tessel_yaml_node *root, const char *default_name,
              tessel_spec *s);

/* The spec's own spellings (validate.c's tables), for writing a spec back:
 * a tessel_format code's first name ("csr"), a rank format's ("UOP"), the
 * strategy options `worst` and `growth`. "?" for a code with no name. */
const char *spec_format_name(int code);
const char *spec_rank_format_name(unsigned code);
const char *spec_worst_name(int dense);
const char *spec_growth_name(int growth);
/* mapping.strategy_options.dataflow: "merged" (0) or "outer-product" (1). */
const char *spec_dataflow_name(int dataflow);
/* mapping.strategy_options.order: "default" (0: the strategy's paper),
 * "outer-first", "inner-first". */
const char *spec_order_name(int order);
/* mapping.LEVEL.distribution's name (validate_spatial.c). */
const char *spec_spatial_policy_name(int policy);

#endif
