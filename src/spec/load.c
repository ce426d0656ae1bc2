/* tessel_spec_load / tessel_spec_parse: read the top file, follow its
 * includes (merged under it), apply --set, validate. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "resolved.h"
#include "spec_internal.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* ------------------------------------------------------------------ */
/* Errors */

static int record(spec_ctx *c, const tessel_diag *d)
{
    if (!c->first_code)
        c->first_code = d->code;
    if (d->code == TESSEL_ENOMEM)
        c->oom = 1;
    c->nerrors++;
    if (!c->errors)
        return d->code;
    if (c->nerrors <= SPEC_MAX_ERRORS) {
        tessel_diag_list_push(c->errors, d);
    } else if (c->nerrors == SPEC_MAX_ERRORS + 1) {
        tessel_diag stop;
        tessel_diag_set(&stop, d->code, NULL, 0, 0, NULL,
                        "too many errors (more than %u); the rest are not listed",
                        SPEC_MAX_ERRORS);
        tessel_diag_list_push(c->errors, &stop);
    }
    return d->code;
}

int spec_error_at(spec_ctx *c, int code, const char *file, uint64_t line, uint32_t column,
                  const char *field, const char *fmt, ...)
{
    tessel_diag d;
    va_list ap;
    va_start(ap, fmt);
    tessel_diag_vset(&d, code, file, line, column, field, fmt, ap);
    va_end(ap);
    return record(c, &d);
}

int spec_error(spec_ctx *c, int code, const tessel_yaml_node *n, const char *field,
               const char *fmt, ...)
{
    tessel_diag d;
    va_list ap;
    va_start(ap, fmt);
    tessel_diag_vset(&d, code, n ? n->file : NULL, n ? n->line : 0, n ? n->column : 0, field,
                     fmt, ap);
    va_end(ap);
    return record(c, &d);
}

void spec_error_diag(spec_ctx *c, const tessel_diag *d)
{
    record(c, d);
}

int spec_oom(spec_ctx *c)
{
    /* The step; the bytes are those of the YAML reader's own messages. */
    return spec_error_at(c, TESSEL_ENOMEM, NULL, 0, 0, NULL,
                         "out of memory while building the spec from its YAML");
}

void spec_adopt(spec_ctx *c, tessel_yaml_doc **sub)
{
    tessel_yaml_adopt(c->doc, sub);
}

/* ------------------------------------------------------------------ */
/* Paths */

const char *spec_dir_of(const spec_ctx *c, const char *file)
{
    if (!file)
        return "";
    for (const spec_dir *d = c->dirs; d; d = d->next)
        if (strcmp(d->file, file) == 0)
            return d->dir;
    return "";
}

const char *tessel_spec_source(const tessel_spec *s, size_t i)
{
    for (const spec_dir *d = s->dirs; d; d = d->next)
        if (i-- == 0)
            return d->file;
    return NULL;
}

int spec_dir_add(spec_ctx *c, const char *file, const char *dir)
{
    spec_dir *d = tessel_yaml_arena_alloc(c->doc, sizeof(*d));
    if (!d || !(d->file = tessel_yaml_intern(c->doc, file)) ||
        !(d->dir = tessel_yaml_intern(c->doc, dir)))
        return TESSEL_ENOMEM;
    d->next = c->dirs;
    c->dirs = d;
    return TESSEL_OK;
}

char *spec_resolve(const spec_ctx *c, const char *file, const char *path)
{
    const char *dir = spec_dir_of(c, file);
    if (path[0] == '/' || dir[0] == '\0')
        return tessel_strdup(c->alloc, path);
    size_t nd = strlen(dir), np = strlen(path);
    char *out = tessel_alloc(c->alloc, nd + np + 2);
    if (!out)
        return NULL;
    memcpy(out, dir, nd);
    out[nd] = '/';
    memcpy(out + nd + 1, path, np + 1);
    return out;
}

/* The directory part of path ("" when it has none), in the arena. */
static const char *dir_part(spec_ctx *c, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return "";
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = tessel_yaml_arena_alloc(c->doc, n + 1);
    if (!d)
        return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

/* ------------------------------------------------------------------ */
/* Includes */

typedef struct chain {
    const struct chain *up;
    const char *real; /* canonical path of a file being loaded, or NULL */
} chain;

typedef struct source {
    const char *path;      /* file name (or the in-memory spec's name) */
    const void *data;      /* in-memory text, or NULL to read path */
    size_t size;
    const tessel_yaml_node *site; /* the include entry that named it, or NULL */
} source;

static int load_tree(spec_ctx *c, const source *src, const chain *up, unsigned depth,
                     tessel_yaml_node **out);

/* A copy of mapping m without the key `skip` (the include list, which
 * has done its job once the files are merged). */
static tessel_yaml_node *without_key(spec_ctx *c, tessel_yaml_node *m, const char *skip)
{
    tessel_yaml_node *copy = tessel_yaml_new_node(c->doc, TESSEL_YAML_MAPPING, m->file, m->line,
                                                  m->column);
    if (!copy)
        return NULL;
    size_t n = 0;
    if (m->count > 1) {
        copy->keys = tessel_yaml_arena_alloc(c->doc, (m->count - 1) * sizeof(*copy->keys));
        copy->items = tessel_yaml_arena_alloc(c->doc, (m->count - 1) * sizeof(*copy->items));
        if (!copy->keys || !copy->items)
            return NULL;
    }
    for (size_t i = 0; i < m->count; i++) {
        if (tessel_yaml_scalar_is(m->keys[i], skip))
            continue;
        copy->keys[n] = m->keys[i];
        copy->items[n++] = m->items[i];
    }
    copy->count = n;
    return copy;
}

static int include_one(spec_ctx *c, const tessel_yaml_node *entry, const char *from,
                       const chain *up, unsigned depth, tessel_yaml_node **merged)
{
    if (entry->kind != TESSEL_YAML_SCALAR || tessel_yaml_is_null(entry) || entry->length == 0 ||
        strlen(entry->value) != entry->length)
        return spec_error(c, TESSEL_EINVAL, entry, "include",
                          "'include' must be a file name or a list of file names");
    if (depth >= SPEC_MAX_INCLUDE_DEPTH)
        return spec_error(c, TESSEL_ERANGE, entry, "include",
                          "includes nested more than %u files deep", SPEC_MAX_INCLUDE_DEPTH);
    if (++c->nincludes > SPEC_MAX_INCLUDES)
        return spec_error(c, TESSEL_ERANGE, entry, "include",
                          "more than %u included files", SPEC_MAX_INCLUDES);
    char *path = spec_resolve(c, from, entry->value);
    if (!path)
        return spec_oom(c);
    char real[PATH_MAX];
    int rc = TESSEL_OK;
    if (!realpath(path, real)) {
        rc = spec_error(c, TESSEL_EIO, entry, "include", "cannot open include '%s': %s", path,
                        strerror(errno));
        goto done;
    }
    /* A FIFO or device (/dev/stdin, /dev/zero) would block or never end. */
    struct stat st;
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = spec_error(c, TESSEL_EIO, entry, "include", "include '%s' is not a regular file",
                        path);
        goto done;
    }
    for (const chain *k = up; k; k = k->up) {
        if (k->real && strcmp(k->real, real) == 0) {
            rc = spec_error(c, TESSEL_EINVAL, entry, "include",
                            "include cycle: '%s' includes itself (through this entry)", path);
            goto done;
        }
    }
    chain link = { up, real };
    source sub = { path, NULL, 0, entry };
    tessel_yaml_node *tree = NULL;
    if ((rc = load_tree(c, &sub, &link, depth + 1, &tree)))
        goto done;
    if (tree && tree->kind != TESSEL_YAML_MAPPING) {
        rc = spec_error(c, TESSEL_EINVAL, tree, "include",
                        "an included file must hold a mapping");
        goto done;
    }
    if (tree && !(*merged = spec_merge(c->doc, *merged, tree)))
        rc = spec_oom(c);
done:
    tessel_dealloc(c->alloc, path);
    return rc;
}

/* The YAML tree of src with its includes merged under it (a resolved spec
 * turned back into the hand-written form first). */
static int load_tree(spec_ctx *c, const source *src, const chain *up, unsigned depth,
                     tessel_yaml_node **out)
{
    *out = NULL;
    tessel_yaml_doc *doc = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = src->data ? tessel_yaml_parse(src->path, src->data, src->size, c->alloc, &doc, &d)
                       : tessel_yaml_load(src->path, c->alloc, &doc, &d);
    if (rc) {
        if (rc == TESSEL_EIO && src->site)
            return spec_error(c, rc, src->site, "include", "cannot read include '%s': %s",
                              src->path, d.message);
        spec_error_diag(c, &d);
        return rc;
    }
    tessel_yaml_node *root = (tessel_yaml_node *)tessel_yaml_root(doc);
    /* A resolved spec (tessel spec, tessel map -o) is read back through its
     * schema and becomes the hand-written spec it stands for, so the one
     * reader below checks it. Its paths are as the loader resolved them:
     * relative to the directory tessel ran in, not to the file. */
    int resolved = !src->site && rs_is_resolved(root);
    if (resolved) {
        tessel_yaml_free(&doc);
        rc = rs_reread(src->path, src->data, src->size, c->alloc, &doc, &d);
        if (rc) {
            spec_error_diag(c, &d);
            return rc;
        }
        root = (tessel_yaml_node *)tessel_yaml_root(doc);
    }
    /* The node limit bounds the work of a whole spec, not of each file: a
     * small file including a large one 250 times is as large as its sum
     * (issue 25 item 7). */
    c->nodes += tessel_yaml_weight(root);
    if (c->nodes > TESSEL_YAML_MAX_NODES) {
        tessel_yaml_free(&doc);
        if (src->site)
            return spec_error(c, TESSEL_ERANGE, src->site, "include", "the spec and its "
                              "includes hold more than %u YAML nodes together (at '%s')",
                              TESSEL_YAML_MAX_NODES, src->path);
        return spec_error_at(c, TESSEL_ERANGE, src->path, 0, 0, "", "more than %u YAML "
                             "nodes", TESSEL_YAML_MAX_NODES);
    }
    spec_adopt(c, &doc);
    const char *dir = src->data || resolved ? "" : dir_part(c, src->path);
    if (!dir || spec_dir_add(c, src->path, dir))
        return spec_oom(c);
    const tessel_yaml_node *inc = tessel_yaml_get(root, "include");
    if (!inc) {
        *out = root;
        return TESSEL_OK;
    }
    tessel_yaml_node *merged = NULL;
    int first = TESSEL_OK;
    /* Every include is tried, so that all missing files are reported. */
    if (inc->kind == TESSEL_YAML_SEQUENCE) {
        for (size_t i = 0; i < inc->count; i++) {
            rc = include_one(c, inc->items[i], src->path, up, depth, &merged);
            if (rc == TESSEL_ENOMEM || c->nodes > TESSEL_YAML_MAX_NODES)
                return rc; /* out of memory, or too large: reading more only costs */
            if (rc && !first)
                first = rc;
        }
    } else if (!tessel_yaml_is_null(inc)) {
        first = include_one(c, inc, src->path, up, depth, &merged);
    }
    if (first)
        return first;
    tessel_yaml_node *self = without_key(c, root, "include");
    if (!self || !(*out = spec_merge(c->doc, merged, self)))
        return spec_oom(c);
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Entry points */

static void free_strings(tessel_spec *s)
{
    tessel_dealloc(s->alloc, s->path);
    tessel_dealloc(s->alloc, s->workload.einsum);
    for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++)
        tessel_dealloc(s->alloc, s->workload.tensor[t].data);
    for (unsigned i = 0; i < s->ntables; i++)
        tessel_dealloc(s->alloc, s->table[i]);
}

void tessel_spec_free(tessel_spec **s)
{
    if (!s || !*s)
        return;
    free_strings(*s);
    tessel_yaml_free(&(*s)->doc);
    tessel_dealloc((*s)->alloc, *s);
    *s = NULL;
}

/* The file name without directory and extension: the default design name. */
static void file_stem(const char *path, char *out, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot != base)
        len = (size_t)(dot - base);
    if (len >= n)
        len = n - 1;
    memcpy(out, base, len);
    out[len] = '\0';
}

/* Where a file's errors go in the sorted list: spec files in the order
 * their first error was found, then --set, then errors without a file. */
static size_t file_rank(const tessel_diag *items, size_t first, size_t i)
{
    const char *f = items[i].file;
    if (!f[0])
        return SIZE_MAX;
    size_t base = strcmp(f, "--set") == 0 ? SIZE_MAX / 2 : 0;
    for (size_t k = first; k <= i; k++)
        if (strcmp(items[k].file, f) == 0)
            return base + k;
    return base + i;
}

static int diag_before(const tessel_diag *items, size_t first, size_t a, size_t b)
{
    size_t fa = file_rank(items, first, a), fb = file_rank(items, first, b);
    if (fa != fb)
        return fa < fb;
    if (items[a].line != items[b].line)
        return items[a].line < items[b].line;
    return items[a].column < items[b].column;
}

/* Errors are found section by section; a reader wants them in file
 * order, like a compiler's. Stable (insertion sort: at most
 * SPEC_MAX_ERRORS + 1 entries); ranks are computed on the original order. */
static void sort_errors(spec_ctx *c)
{
    if (!c->errors || c->errors->count - c->first_error < 2)
        return;
    tessel_diag *items = c->errors->items;
    size_t first = c->first_error, n = c->errors->count - first;
    size_t *order = tessel_alloc_array(c->alloc, n, sizeof(*order));
    tessel_diag *sorted = tessel_alloc_array(c->alloc, n, sizeof(*sorted));
    if (order && sorted) {
        for (size_t i = 0; i < n; i++) {
            size_t j = i;
            while (j > 0 && diag_before(items, first, first + i, first + order[j - 1])) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = i;
        }
        for (size_t i = 0; i < n; i++)
            sorted[i] = items[first + order[i]];
        memcpy(items + first, sorted, n * sizeof(*sorted));
        if (!c->oom)
            c->first_code = items[first].code;
    }
    /* Out of memory here only leaves the list unsorted. */
    tessel_dealloc(c->alloc, order);
    tessel_dealloc(c->alloc, sorted);
}

/* A new spec with its document and path, and the loader's context for
 * it; NULL when out of memory (counted in c). */
static tessel_spec *spec_begin(spec_ctx *c, const char *path, const tessel_allocator *a,
                               tessel_diag_list *errors)
{
    memset(c, 0, sizeof(*c));
    c->alloc = a;
    c->errors = errors;
    c->first_error = errors ? errors->count : 0;
    tessel_spec *s = tessel_alloc(a, sizeof(*s));
    if (!s) {
        spec_oom(c);
        return NULL;
    }
    memset(s, 0, sizeof(*s));
    s->alloc = a;
    if (!(c->doc = s->doc = tessel_yaml_doc_create(a)) || !(s->path = tessel_strdup(a, path))) {
        tessel_spec_free(&s);
        spec_oom(c);
    }
    return s;
}

/* Applies the overrides to root and validates the result into s. */
static void spec_complete(spec_ctx *c, tessel_yaml_node *root, const char *const *sets,
                          size_t nsets, tessel_spec *s)
{
    for (size_t i = 0; i < nsets && !c->oom; i++)
        spec_apply_set(c, &root, sets[i], (unsigned)i + 1);
    if (!c->oom) {
        char stem[64];
        file_stem(s->path, stem, sizeof(stem));
        tessel_yaml_set_root(s->doc, root);
        spec_fill(c, root, stem, s);
    }
}

/* Sorts the errors and hands out s, or frees it on any error. */
static int spec_finish(spec_ctx *c, tessel_spec *s, tessel_spec **out)
{
    sort_errors(c);
    if (c->first_code || c->nerrors) {
        int rc = c->oom ? TESSEL_ENOMEM : c->first_code ? c->first_code : TESSEL_EINVAL;
        tessel_spec_free(&s);
        return rc;
    }
    s->dirs = c->dirs;
    *out = s;
    return TESSEL_OK;
}

static int spec_run(const source *top, const char *const *sets, size_t nsets,
                    const tessel_allocator *a, tessel_spec **out, tessel_diag_list *errors)
{
    *out = NULL;
    spec_ctx c;
    tessel_spec *s = spec_begin(&c, top->path, a, errors);
    if (!s)
        return TESSEL_ENOMEM;
    char real[PATH_MAX];
    chain top_link = { NULL, (!top->data && realpath(top->path, real)) ? real : NULL };
    tessel_yaml_node *root = NULL;
    if (!load_tree(&c, top, &top_link, 0, &root))
        spec_complete(&c, root, sets, nsets, s);
    return spec_finish(&c, s, out);
}

int tessel_spec_derive(const tessel_spec *base, const char *const *sets, size_t nsets,
                       const tessel_allocator *a, tessel_spec **out, tessel_diag_list *errors)
{
    *out = NULL;
    spec_ctx c;
    tessel_spec *s = spec_begin(&c, base->path, a, errors);
    if (!s)
        return TESSEL_ENOMEM;
    c.dirs = (spec_dir *)base->dirs; /* only prepended to, never changed */
    /* set.c copies along each path and never writes a node in place, so
     * base's tree stays as it is. */
    spec_complete(&c, (tessel_yaml_node *)tessel_yaml_root(base->doc), sets, nsets, s);
    return spec_finish(&c, s, out);
}

int tessel_spec_load(const char *path, const char *const *sets, size_t nsets,
                     const tessel_allocator *a, tessel_spec **out, tessel_diag_list *errors)
{
    source top = { path, NULL, 0, NULL };
    return spec_run(&top, sets, nsets, a, out, errors);
}

int tessel_spec_parse(const char *name, const void *data, size_t size, const char *const *sets,
                      size_t nsets, const tessel_allocator *a, tessel_spec **out,
                      tessel_diag_list *errors)
{
    /* An empty buffer still needs a non-NULL pointer to mean "in memory". */
    source top = { name ? name : "<spec>", data ? data : "", size, NULL };
    return spec_run(&top, sets, nsets, a, out, errors);
}

/* ------------------------------------------------------------------ */
/* Lookups */

int tessel_spec_index(const tessel_spec *s, const char *name)
{
    for (unsigned i = 0; i < s->workload.nindices; i++)
        if (strcmp(s->workload.index_name[i], name) == 0)
            return (int)i;
    return -1;
}

int tessel_spec_tensor_index(const tessel_spec *s, const char *name)
{
    for (unsigned t = 0; t < s->workload.ntensors; t++)
        if (strcmp(s->workload.tensor[t].name, name) == 0)
            return (int)t;
    return -1;
}

int tessel_spec_level_index(const tessel_spec *s, const char *name)
{
    for (unsigned l = 0; l < s->nlevels; l++)
        if (strcmp(s->level[l].name, name) == 0)
            return (int)l;
    return -1;
}

double tessel_spec_partition_sum(const tessel_spec *s, unsigned l)
{
    const tessel_spec_level *L = &s->level[l];
    double sum = 0;
    for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
        sum += L->tensor[t].partition_fraction;
        if (L->capacity && L->tensor[t].partition_bytes)
            sum += (double)L->tensor[t].partition_bytes / (double)L->capacity;
    }
    return sum;
}

double tessel_spec_partition_share(const tessel_spec *s, unsigned l, unsigned t)
{
    const tessel_spec_level *L = &s->level[l];
    const tessel_spec_tensor_level *tl = &L->tensor[t];
    if (tessel_spec_bypassed(s, l, t))
        return 0;
    if (tl->partition_bytes)
        return (double)tl->partition_bytes;
    if (tl->partition_fraction > 0)
        return tl->partition_fraction * (double)L->capacity;
    unsigned kept = 0;
    for (unsigned u = 0; u < s->workload.ntensors; u++)
        kept += !tessel_spec_bypassed(s, l, u);
    return kept ? (double)(L->capacity / kept) : 0;
}

int tessel_spec_bypassed(const tessel_spec *s, unsigned l, unsigned t)
{
    return l < s->nlevels && t < TESSEL_SPEC_MAX_TENSORS && ((s->level[l].bypass >> t) & 1u);
}

uint64_t tessel_spec_partition_bytes(const tessel_spec *s, unsigned l, unsigned t)
{
    const tessel_spec_level *lv = &s->level[l];
    const tessel_spec_tensor_level *tl = &lv->tensor[t];
    if (tessel_spec_bypassed(s, l, t))
        return 0;
    if (tl->partition_bytes)
        return tl->partition_bytes;
    if (tl->partition_fraction > 0)
        return (uint64_t)(tl->partition_fraction * (double)lv->capacity);
    return (uint64_t)tessel_spec_partition_share(s, l, t);
}

int tessel_spec_bind(tessel_spec *s, const char *name, const char *data, tessel_diag *diag)
{
    int t = tessel_spec_tensor_index(s, name);
    if (t < 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "'%s' is not a tensor of the workload '%s'", name,
                               s->workload.einsum ? s->workload.einsum : "");
    if (t == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "'%s' is the output of the workload: only inputs take data",
                               name);
    char *copy = tessel_strdup(s->alloc, data);
    if (!copy)
        return tessel_diag_oom(diag, NULL, "binding data to a tensor", strlen(data) + 1);
    tessel_dealloc(s->alloc, s->workload.tensor[t].data);
    s->workload.tensor[t].data = copy;
    s->workload.tensor[t].pos.file = NULL;
    s->workload.tensor[t].pos.line = 0;
    s->workload.tensor[t].pos.column = 0;
    return TESSEL_OK;
}
