/* Private to src/spec: building YAML trees in a document's arena (the
 * public API only creates scalars; include merging and --set also need
 * sequences and mappings). */
#ifndef TESSEL_SPEC_YAML_INTERNAL_H
#define TESSEL_SPEC_YAML_INTERNAL_H

#include "tessel/spec.h"

/* Limits of a parsed document (spec.h). */
#define TESSEL_YAML_MAX_DEPTH 64u
#define TESSEL_YAML_MAX_NODES 1000000u

/* size bytes from doc's arena, aligned for any type; NULL when out of memory. */
void *tessel_yaml_arena_alloc(tessel_yaml_doc *doc, size_t size);
/* A copy of `name` owned by doc (one copy per distinct name); NULL on OOM.
 * A NULL name stays NULL. */
const char *tessel_yaml_intern(tessel_yaml_doc *doc, const char *name);
/* An empty node of the given kind (scalars get value ""), or NULL. */
tessel_yaml_node *tessel_yaml_new_node(tessel_yaml_doc *doc, tessel_yaml_kind kind,
                                       const char *file, uint64_t line, uint32_t column);
/* Gives a sequence (keys NULL) or mapping its children, copied into the
 * arena; 0 or TESSEL_ENOMEM. */
int tessel_yaml_set_children(tessel_yaml_doc *doc, tessel_yaml_node *n,
                             tessel_yaml_node *const *keys, tessel_yaml_node *const *items,
                             size_t count);
/* Moves every arena block of *src into dst and frees *src (both must use
 * the same allocator). Nodes keep their addresses, so trees parsed apart
 * can be merged without copying. */
void tessel_yaml_adopt(tessel_yaml_doc *dst, tessel_yaml_doc **src);
/* Nodes under n, n included, aliases counted at their expanded size (a
 * parsed document's root: its whole size). */
uint64_t tessel_yaml_weight(const tessel_yaml_node *n);
/* The allocator doc was created with. */
const tessel_allocator *tessel_yaml_allocator(const tessel_yaml_doc *doc);
/* Nonzero when the scalar n equals the NUL-terminated s exactly. */
int tessel_yaml_scalar_is(const tessel_yaml_node *n, const char *s);

/* The whole file at path (at most 64 MiB: no spec is larger), allocated
 * through a: TESSEL_EIO, TESSEL_ERANGE or TESSEL_ENOMEM with diag filled. */
int tessel_yaml_read_file(const char *path, const tessel_allocator *a, unsigned char **text,
                          size_t *size, tessel_diag *diag);

#endif
