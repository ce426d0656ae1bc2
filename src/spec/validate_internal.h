/* What validate.c and its parts (validate_read.c, validate_arch.c,
 * validate_mapping.c) share: the walk's context and the scalar readers.
 * Every reader records its error through spec_err and returns it; the
 * walk goes on (validate.c's comment says why). */
#ifndef TESSEL_SPEC_VALIDATE_INTERNAL_H
#define TESSEL_SPEC_VALIDATE_INTERNAL_H

#include <stdarg.h>

#include "spec_internal.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define BITS_MAX 4096u

typedef struct vctx {
    spec_ctx *c;
    tessel_spec *s;
    int einsum_ok;
    const tessel_yaml_node *level_node[TESSEL_SPEC_MAX_LEVELS];
    const tessel_yaml_node *tensors_node[TESSEL_SPEC_MAX_LEVELS];
} vctx;

/* validate_read.c: field paths and messages */
void spec_append(char *out, size_t n, const char *src);
void spec_join(char *out, size_t n, const char *a, const char *b);
const char *spec_shown(const tessel_yaml_node *n);
int spec_is_string(const tessel_yaml_node *n);
int spec_err(vctx *v, const tessel_yaml_node *n, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
void spec_check_keys(vctx *v, const tessel_yaml_node *m, const char *field,
                     const char *const *valid, size_t n);
tessel_spec_pos spec_pos_of(const tessel_yaml_node *n);
void spec_index_list(const tessel_spec *s, char *out, size_t n);
void spec_tensor_list(const tessel_spec *s, char *out, size_t n);
size_t spec_index_names(const tessel_spec *s, const char **out);
size_t spec_tensor_names(const tessel_spec *s, const char **out);

/* validate_read.c: typed values */
const tessel_yaml_node *spec_mapping_of(vctx *v, const tessel_yaml_node *n, const char *field,
                                        const char *name);
int spec_read_string(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                     char *out, size_t cap);
int spec_read_size(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                   uint64_t *out);
int spec_read_count(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                    uint64_t max, unsigned *out);
int spec_read_positive(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                       const char *what, double *out);
int spec_read_u64(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                  uint64_t *out);
int spec_format_code(vctx *v, const tessel_yaml_node *n, const char *field, int *out,
                     unsigned *nranks, unsigned char *ranks);

/* validate_arch.c, validate_mapping.c: the sections after the workload */
void spec_read_architecture(vctx *v, const tessel_yaml_node *root);
void spec_read_template(vctx *v, const tessel_yaml_node *root);
void spec_read_mapping(vctx *v, const tessel_yaml_node *root);
/* One of `names` (exactly), with a did-you-mean error naming `name`; -1 otherwise. */
int spec_read_choice(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                     const char *const *names, size_t count);
/* Index number of `name` (exact, then case-insensitive), or -1. */
int spec_find_index(const tessel_spec *s, const char *name, size_t len);
/* "i:128,k:64": a positive count per named index into out (validate_mapping.c). */
void spec_read_index_counts(vctx *v, const tessel_yaml_node *n, const char *field,
                            const char *what, uint64_t *out);
/* A tensor name or a list of them -> a mask of tensor numbers; `self`
 * (a tensor that may not appear, or -1u) (validate_arch.c). */
int spec_read_tensor_mask(vctx *v, const tessel_yaml_node *n, const char *field,
                          const char *name, unsigned self, uint32_t *mask);
/* mapping.LEVEL.bypass and .keep of level l (validate_bypass.c). */
void spec_read_bypass(vctx *v, const tessel_yaml_node *e, const char *field, unsigned l);
/* mapping.LEVEL.spatial and .distribution of level l (validate_spatial.c). */
void spec_read_spatial(vctx *v, const tessel_yaml_node *e, const char *field, unsigned l);

#endif
