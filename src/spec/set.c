/* --set PATH=VALUE overrides, applied to the merged tree before
 * validation, so an override is checked exactly like the file it edits. */
#include <string.h>

#include "spec_internal.h"

#define SET_MAX_COMPONENTS 32u

typedef struct set_job {
    spec_ctx *c;
    const char *arg;
    unsigned argno;
    const char *file; /* "--set", interned in c->doc */
    size_t ncomp;
    const char *comp[SET_MAX_COMPONENTS]; /* NUL-terminated copies */
    size_t at[SET_MAX_COMPONENTS];        /* 0-based offset in arg */
    tessel_yaml_node *value;
    char path[128]; /* the path as given, for `field` */
} set_job;

static int set_fail(set_job *j, size_t offset, const char *fmt, const char *a, const char *b)
{
    return spec_error_at(j->c, TESSEL_EINVAL, "--set", j->argno, (uint32_t)offset + 1, j->path,
                         fmt, a, b, j->arg);
}

/* The value's nodes get file "--set", line = the argument's number and
 * their column within the whole argument. Nodes already moved (shared by
 * aliases) carry the new file pointer and are left alone. */
static void relocate(tessel_yaml_node *n, const char *from, const char *to, unsigned argno,
                     size_t shift, unsigned depth)
{
    if (n->file != from || depth > 2 * TESSEL_YAML_MAX_DEPTH)
        return;
    n->file = to;
    n->line = argno;
    n->column += (uint32_t)shift;
    for (size_t i = 0; i < n->count; i++) {
        relocate(n->items[i], from, to, argno, shift, depth + 1);
        if (n->keys)
            relocate(n->keys[i], from, to, argno, shift, depth + 1);
    }
}

static tessel_yaml_node *new_key(set_job *j, size_t i)
{
    return tessel_yaml_new_scalar(j->c->doc, j->comp[i], j->file, j->argno,
                                  (uint32_t)j->at[i] + 1);
}

/* The path prefix comp[0..i) as text, for messages. */
static void prefix(const set_job *j, size_t i, char *buf, size_t n)
{
    buf[0] = '\0';
    size_t len = 0;
    for (size_t k = 0; k < i; k++) {
        size_t w = strlen(j->comp[k]);
        if (len + w + 2 >= n)
            break;
        if (k)
            buf[len++] = '.';
        memcpy(buf + len, j->comp[k], w + 1);
        len += w;
    }
}

/* Returns, in *out, a copy of `node` with comp[i..] set; node may be NULL
 * (a missing key: a mapping is created). */
static int set_in(set_job *j, tessel_yaml_node *node, size_t i, tessel_yaml_node **out)
{
    spec_ctx *c = j->c;
    const tessel_allocator *a = c->alloc;
    int last = i + 1 == j->ncomp;
    if (node && node->kind == TESSEL_YAML_SCALAR && tessel_yaml_is_null(node))
        node = NULL;
    if (!node) {
        node = tessel_yaml_new_node(c->doc, TESSEL_YAML_MAPPING, j->file, j->argno,
                                    (uint32_t)j->at[i] + 1);
        if (!node)
            return spec_oom(c);
    }
    if (node->kind == TESSEL_YAML_SCALAR) {
        char where[128];
        prefix(j, i, where, sizeof(where));
        return set_fail(j, j->at[i], "'%s' is a value, not a mapping: it has no '%s' (--set %s)",
                        where, j->comp[i]);
    }
    size_t idx = SIZE_MAX;
    tessel_yaml_node *child = NULL;
    if (node->kind == TESSEL_YAML_MAPPING) {
        for (size_t k = 0; k < node->count; k++)
            if (tessel_yaml_scalar_is(node->keys[k], j->comp[i]))
                idx = k;
    } else if (!spec_named_item(node, j->comp[i], &idx)) {
        char where[128];
        prefix(j, i, where, sizeof(where));
        return set_fail(j, j->at[i], "'%s' has no item named '%s' (--set %s)", where,
                        j->comp[i]);
    }
    if (idx != SIZE_MAX)
        child = node->items[idx];
    tessel_yaml_node *replacement = j->value;
    if (!last) {
        int rc = set_in(j, child, i + 1, &replacement);
        if (rc)
            return rc;
    }
    size_t n = node->count + (idx == SIZE_MAX);
    tessel_yaml_node *copy = tessel_yaml_new_node(c->doc, node->kind, node->file, node->line,
                                                  node->column);
    tessel_yaml_node **keys = NULL, **items = tessel_alloc_array(a, n, sizeof(*items));
    int is_map = node->kind == TESSEL_YAML_MAPPING;
    if (is_map)
        keys = tessel_alloc_array(a, n, sizeof(*keys));
    int rc = TESSEL_OK;
    if (!copy || !items || (is_map && !keys)) {
        rc = spec_oom(c);
        goto done;
    }
    if (node->count) {
        memcpy(items, node->items, node->count * sizeof(*items));
        if (is_map)
            memcpy(keys, node->keys, node->count * sizeof(*keys));
    }
    if (idx == SIZE_MAX) {
        idx = node->count;
        if (!(keys[idx] = new_key(j, i))) {
            rc = spec_oom(c);
            goto done;
        }
    }
    items[idx] = replacement;
    if (tessel_yaml_set_children(c->doc, copy, keys, items, n))
        rc = spec_oom(c);
    else
        *out = copy;
done:
    tessel_dealloc(a, keys);
    tessel_dealloc(a, items);
    return rc;
}

static const char *const top_keys[] = { "name", "include", "workload", "architecture",
                                        "mapping", "template", "template_options" };

/* A first component naming a level (and no top-level key) is shorthand
 * for architecture.levels.NAME. */
static int is_level_shorthand(const tessel_yaml_node *root, const char *first)
{
    for (size_t k = 0; k < sizeof(top_keys) / sizeof(top_keys[0]); k++)
        if (strcmp(first, top_keys[k]) == 0)
            return 0;
    const tessel_yaml_node *levels = tessel_yaml_get(tessel_yaml_get(root, "architecture"),
                                                     "levels");
    return spec_named_item(levels, first, NULL) != NULL;
}

/* Text that YAML reads as one plain scalar, whatever it holds: letters,
 * digits and . _ / + - : , only (so no ": ", " #", flow brackets, quotes,
 * anchors or tags), not starting with - or : . Such values (sizes, names,
 * numbers, "i:64,k:64") skip the YAML parser: a sweep derives thousands
 * of specs a second. */
static int is_simple_plain(const char *text)
{
    if (!text[0] || text[0] == '-' || text[0] == ':' || text[0] == ',')
        return 0;
    for (const char *p = text; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '.' || ch == '_' || ch == '/' || ch == '+' || ch == '-' || ch == ':' ||
                 ch == ',';
        if (!ok)
            return 0;
    }
    return 1;
}

static int parse_value(set_job *j, const char *text, size_t offset)
{
    spec_ctx *c = j->c;
    if (is_simple_plain(text)) {
        j->value = tessel_yaml_new_scalar(c->doc, text, j->file, j->argno, (uint32_t)offset + 1);
        return j->value ? TESSEL_OK : spec_oom(c);
    }
    tessel_yaml_doc *vdoc = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_yaml_parse("--set", text, strlen(text), c->alloc, &vdoc, &d);
    if (rc) {
        if (rc == TESSEL_ENOMEM)
            return spec_oom(c);
        return spec_error_at(c, rc, "--set", j->argno, (uint32_t)(offset + d.column), j->path,
                             "%s (--set %s)", d.message, j->arg);
    }
    tessel_yaml_node *root = (tessel_yaml_node *)tessel_yaml_root(vdoc);
    if (root) {
        /* Any node of vdoc carries vdoc's interned name; take it from the root. */
        relocate(root, root->file, j->file, j->argno, offset, 0);
    } else {
        /* "KEY=" sets null, as "key:" does in a file. */
        root = tessel_yaml_new_scalar(vdoc, "", j->file, j->argno, (uint32_t)offset + 1);
        if (!root) {
            tessel_yaml_free(&vdoc);
            return spec_oom(c);
        }
    }
    spec_adopt(c, &vdoc);
    j->value = root;
    return TESSEL_OK;
}

/* Applies one --set PATH=VALUE to the merged tree: parses the value as YAML, walks or
 * creates the path (level names as shorthand) and reports errors at --set:N:COL. */
int spec_apply_set(spec_ctx *c, tessel_yaml_node **root, const char *arg, unsigned argno)
{
    set_job j;
    memset(&j, 0, sizeof(j));
    j.c = c;
    j.arg = arg;
    j.argno = argno;
    const char *eq = strchr(arg, '=');
    size_t plen = eq ? (size_t)(eq - arg) : strlen(arg);
    size_t w = plen < sizeof(j.path) ? plen : sizeof(j.path) - 1;
    memcpy(j.path, arg, w);
    j.path[w] = '\0';
    if (!eq)
        return spec_error_at(c, TESSEL_EINVAL, "--set", argno, 1, j.path,
                             "--set needs PATH=VALUE, got '%s'", arg);
    if (!(j.file = tessel_yaml_intern(c->doc, "--set")))
        return spec_oom(c);
    /* Components are copied into the arena: they become key nodes. */
    char *buf = tessel_yaml_arena_alloc(c->doc, plen + 1);
    if (!buf)
        return spec_oom(c);
    memcpy(buf, arg, plen);
    buf[plen] = '\0';
    size_t start = 0;
    for (size_t i = 0; i <= plen; i++) {
        if (i < plen && buf[i] != '.')
            continue;
        if (i == start)
            return spec_error_at(c, TESSEL_EINVAL, "--set", argno, (uint32_t)start + 1, j.path,
                                 "empty name in the path of --set %s", arg);
        if (j.ncomp == SET_MAX_COMPONENTS)
            return spec_error_at(c, TESSEL_EINVAL, "--set", argno, (uint32_t)start + 1, j.path,
                                 "path of --set %s has more than %u parts", arg,
                                 SET_MAX_COMPONENTS);
        buf[i] = '\0';
        j.comp[j.ncomp] = buf + start;
        j.at[j.ncomp++] = start;
        start = i + 1;
    }
    int rc = parse_value(&j, eq + 1, plen + 1);
    if (rc)
        return rc;
    if (*root && (*root)->kind != TESSEL_YAML_MAPPING)
        return spec_error_at(c, TESSEL_EINVAL, "--set", argno, 1, j.path,
                             "the spec is not a mapping: cannot apply --set %s", arg);
    if (is_level_shorthand(*root, j.comp[0])) {
        if (j.ncomp + 2 > SET_MAX_COMPONENTS)
            return spec_error_at(c, TESSEL_EINVAL, "--set", argno, 1, j.path,
                                 "path of --set %s has more than %u parts", arg,
                                 SET_MAX_COMPONENTS);
        memmove(j.comp + 2, j.comp, j.ncomp * sizeof(j.comp[0]));
        memmove(j.at + 2, j.at, j.ncomp * sizeof(j.at[0]));
        j.comp[0] = "architecture";
        j.comp[1] = "levels";
        j.at[1] = j.at[0] = j.at[2];
        j.ncomp += 2;
    }
    tessel_yaml_node *updated = NULL;
    if ((rc = set_in(&j, *root, 0, &updated)))
        return rc;
    *root = updated;
    return TESSEL_OK;
}
