/* The YAML tree of spec.h, built from libyaml's event parser.
 *
 * libyaml's own document loader recurses on nesting depth, cannot report
 * duplicate keys and allocates through malloc; consuming events instead
 * lets the tree be built with an explicit stack, checked as it grows, and
 * stored in an arena that goes through the tessel_allocator hook (libyaml's
 * internal buffers still use malloc: it has no hook). */
#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "yaml_internal.h"

/* ------------------------------------------------------------------ */
/* Arena */

typedef struct arena_block {
    struct arena_block *next;
    size_t size, used;
    max_align_t data[];
} arena_block;

typedef struct interned_name {
    struct interned_name *next;
    char name[];
} interned_name;

/* Every node carries its alias-expanded size, so that a small document
 * whose aliases expand to billions of nodes ("billion laughs") is refused
 * at parse time instead of exploding later copies and walks. */
typedef struct node_ext {
    tessel_yaml_node pub; /* first: a tessel_yaml_node * is a node_ext * */
    uint64_t weight;
} node_ext;

struct tessel_yaml_doc {
    const tessel_allocator *alloc;
    arena_block *blocks;
    size_t next_block;
    interned_name *names;
    tessel_yaml_node *root;
    size_t failed; /* bytes of the arena block that could not be allocated */
};

#define ARENA_FIRST_BLOCK 4096u
#define ARENA_MAX_BLOCK ((size_t)1 << 20)

tessel_yaml_doc *tessel_yaml_doc_create(const tessel_allocator *a)
{
    tessel_yaml_doc *doc = tessel_alloc(a, sizeof(*doc));
    if (!doc)
        return NULL;
    memset(doc, 0, sizeof(*doc));
    doc->alloc = a;
    doc->next_block = ARENA_FIRST_BLOCK;
    return doc;
}

void tessel_yaml_free(tessel_yaml_doc **doc)
{
    if (!doc || !*doc)
        return;
    arena_block *b = (*doc)->blocks;
    while (b) {
        arena_block *next = b->next;
        tessel_dealloc((*doc)->alloc, b);
        b = next;
    }
    tessel_dealloc((*doc)->alloc, *doc);
    *doc = NULL;
}

void tessel_yaml_adopt(tessel_yaml_doc *dst, tessel_yaml_doc **src)
{
    if (!src || !*src)
        return;
    arena_block *head = (*src)->blocks;
    if (head) {
        arena_block *tail = head;
        while (tail->next)
            tail = tail->next;
        /* dst keeps allocating from its current block, so the adopted
         * chain goes behind it. */
        if (dst->blocks) {
            tail->next = dst->blocks->next;
            dst->blocks->next = head;
        } else {
            dst->blocks = head;
        }
    }
    tessel_dealloc((*src)->alloc, *src);
    *src = NULL;
}

const tessel_allocator *tessel_yaml_allocator(const tessel_yaml_doc *doc)
{
    return doc->alloc;
}

void *tessel_yaml_arena_alloc(tessel_yaml_doc *doc, size_t size)
{
    const size_t align = alignof(max_align_t);
    if (size > SIZE_MAX / 2)
        return NULL;
    size = (size + align - 1) & ~(align - 1);
    if (size == 0)
        size = align;
    arena_block *b = doc->blocks;
    if (!b || b->size - b->used < size) {
        /* Blocks double up to 1 MiB, so small documents cost a few
         * allocations and big ones waste little. */
        size_t want = doc->next_block;
        if (want < size)
            want = size;
        arena_block *nb = tessel_alloc(doc->alloc, sizeof(arena_block) + want);
        if (!nb) {
            doc->failed = sizeof(arena_block) + want;
            return NULL;
        }
        nb->size = want;
        nb->used = 0;
        nb->next = doc->blocks;
        doc->blocks = nb;
        if (doc->next_block < ARENA_MAX_BLOCK)
            doc->next_block *= 2;
        b = nb;
    }
    void *p = (unsigned char *)b->data + b->used;
    b->used += size;
    return p;
}

const char *tessel_yaml_intern(tessel_yaml_doc *doc, const char *name)
{
    if (!name)
        return NULL;
    for (interned_name *n = doc->names; n; n = n->next)
        if (strcmp(n->name, name) == 0)
            return n->name;
    size_t len = strlen(name);
    interned_name *n = tessel_yaml_arena_alloc(doc, sizeof(*n) + len + 1);
    if (!n)
        return NULL;
    memcpy(n->name, name, len + 1);
    n->next = doc->names;
    doc->names = n;
    return n->name;
}

static char *arena_strndup(tessel_yaml_doc *doc, const char *s, size_t len)
{
    char *copy = tessel_yaml_arena_alloc(doc, len + 1);
    if (!copy)
        return NULL;
    if (len)
        memcpy(copy, s, len);
    copy[len] = '\0';
    return copy;
}

tessel_yaml_node *tessel_yaml_new_node(tessel_yaml_doc *doc, tessel_yaml_kind kind,
                                       const char *file, uint64_t line, uint32_t column)
{
    node_ext *e = tessel_yaml_arena_alloc(doc, sizeof(*e));
    if (!e)
        return NULL;
    memset(e, 0, sizeof(*e));
    e->weight = 1;
    tessel_yaml_node *n = &e->pub;
    n->kind = kind;
    n->line = line;
    n->column = column;
    n->value = "";
    if (file && !(n->file = tessel_yaml_intern(doc, file)))
        return NULL;
    return n;
}

tessel_yaml_node *tessel_yaml_new_scalar(tessel_yaml_doc *doc, const char *value,
                                         const char *file, uint64_t line, uint32_t column)
{
    if (!doc || !value)
        return NULL;
    tessel_yaml_node *n = tessel_yaml_new_node(doc, TESSEL_YAML_SCALAR, file, line, column);
    if (!n)
        return NULL;
    n->length = strlen(value);
    if (!(n->value = arena_strndup(doc, value, n->length)))
        return NULL;
    return n;
}

int tessel_yaml_set_children(tessel_yaml_doc *doc, tessel_yaml_node *n,
                             tessel_yaml_node *const *keys, tessel_yaml_node *const *items,
                             size_t count)
{
    n->count = count;
    n->keys = NULL;
    n->items = NULL;
    if (count == 0)
        return TESSEL_OK;
    if (count > SIZE_MAX / sizeof(*items) / 2)
        return TESSEL_ENOMEM;
    n->items = tessel_yaml_arena_alloc(doc, count * sizeof(*items));
    if (!n->items)
        return TESSEL_ENOMEM;
    memcpy(n->items, items, count * sizeof(*items));
    if (keys) {
        n->keys = tessel_yaml_arena_alloc(doc, count * sizeof(*keys));
        if (!n->keys)
            return TESSEL_ENOMEM;
        memcpy(n->keys, keys, count * sizeof(*keys));
    }
    return TESSEL_OK;
}

int tessel_yaml_set_root(tessel_yaml_doc *doc, tessel_yaml_node *root)
{
    if (!doc)
        return TESSEL_EINVAL;
    doc->root = root;
    return TESSEL_OK;
}

const tessel_yaml_node *tessel_yaml_root(const tessel_yaml_doc *doc)
{
    return doc ? doc->root : NULL;
}

int tessel_yaml_scalar_is(const tessel_yaml_node *n, const char *s)
{
    if (!n || n->kind != TESSEL_YAML_SCALAR)
        return 0;
    size_t len = strlen(s);
    return n->length == len && memcmp(n->value, s, len) == 0;
}

const tessel_yaml_node *tessel_yaml_get(const tessel_yaml_node *m, const char *key)
{
    if (!m || m->kind != TESSEL_YAML_MAPPING)
        return NULL;
    for (size_t i = 0; i < m->count; i++)
        if (tessel_yaml_scalar_is(m->keys[i], key))
            return m->items[i];
    return NULL;
}

/* Depth is bounded: parsed trees are at most TESSEL_YAML_MAX_DEPTH deep
 * and merged ones no deeper than their sources, so recursion here is
 * bounded by the guard, not by the input. */
static tessel_yaml_node *copy_node(tessel_yaml_doc *doc, const tessel_yaml_node *src,
                                   unsigned depth)
{
    if (depth > 2 * TESSEL_YAML_MAX_DEPTH)
        return NULL;
    tessel_yaml_node *n = tessel_yaml_new_node(doc, src->kind, src->file, src->line, src->column);
    if (!n)
        return NULL;
    n->quoted = src->quoted;
    if (src->kind == TESSEL_YAML_SCALAR) {
        n->length = src->length;
        if (!(n->value = arena_strndup(doc, src->value, src->length)))
            return NULL;
        return n;
    }
    if (src->count == 0)
        return n;
    n->count = src->count;
    n->items = tessel_yaml_arena_alloc(doc, src->count * sizeof(*n->items));
    if (!n->items)
        return NULL;
    if (src->kind == TESSEL_YAML_MAPPING) {
        n->keys = tessel_yaml_arena_alloc(doc, src->count * sizeof(*n->keys));
        if (!n->keys)
            return NULL;
    }
    for (size_t i = 0; i < src->count; i++) {
        if (!(n->items[i] = copy_node(doc, src->items[i], depth + 1)))
            return NULL;
        if (n->keys && !(n->keys[i] = copy_node(doc, src->keys[i], depth + 1)))
            return NULL;
    }
    return n;
}

tessel_yaml_node *tessel_yaml_copy(tessel_yaml_doc *doc, const tessel_yaml_node *src)
{
    if (!doc || !src)
        return NULL;
    return copy_node(doc, src, 0);
}

/* ------------------------------------------------------------------ */
/* Parser */

typedef struct anchor_slot {
    const char *name; /* in the arena */
    tessel_yaml_node *node;
} anchor_slot;

typedef struct frame {
    tessel_yaml_node *node;
    size_t pending_start;
    const char *anchor; /* registered when the collection is complete */
} frame;

typedef struct builder {
    tessel_yaml_doc *doc;
    const char *name; /* interned */
    const unsigned char *data;
    size_t size;
    tessel_diag *diag;
    frame stack[TESSEL_YAML_MAX_DEPTH];
    unsigned depth;
    /* Children of the open collections, flattened; a mapping's are key,
     * value, key, value... Copied into exact-size arena arrays at the end. */
    tessel_yaml_node **pending;
    size_t npending, cap_pending;
    anchor_slot *anchors;
    size_t nanchors, cap_anchors; /* cap is 0 or a power of two */
    uint64_t weight;              /* nodes so far, aliases expanded */
    unsigned documents;
    size_t want;                  /* bytes of a failed allocation outside the arena */
} builder;

static uint64_t weight_of(const tessel_yaml_node *n)
{
    return ((const node_ext *)n)->weight;
}

uint64_t tessel_yaml_weight(const tessel_yaml_node *n)
{
    return n ? weight_of(n) : 0;
}

static int fail(builder *b, int code, yaml_mark_t mark, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int fail(builder *b, int code, yaml_mark_t mark, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tessel_diag_vset(b->diag, code, b->name, (uint64_t)mark.line + 1, (uint32_t)mark.column + 1,
                     NULL, fmt, ap);
    va_end(ap);
    return code;
}

/* The size asked for is b->want when a site set it, else the arena's
 * failed block (0 for libyaml's own buffers, whose size it keeps). */
static int fail_oom(builder *b)
{
    size_t bytes = b->want ? b->want : b->doc ? b->doc->failed : sizeof(tessel_yaml_doc);
    return tessel_diag_oom(b->diag, b->name, "reading YAML", bytes);
}

static size_t hash_name(const char *s)
{
    size_t h = 1469598103934665603u & SIZE_MAX;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * (size_t)1099511628211u;
    return h;
}

static tessel_yaml_node *anchor_find(const builder *b, const char *name)
{
    if (!b->cap_anchors)
        return NULL;
    size_t mask = b->cap_anchors - 1;
    for (size_t i = hash_name(name) & mask; b->anchors[i].name; i = (i + 1) & mask)
        if (strcmp(b->anchors[i].name, name) == 0)
            return b->anchors[i].node;
    return NULL;
}

/* A redefined anchor replaces the old one (YAML: an alias refers to the
 * most recent node with that anchor). */
static int anchor_put(builder *b, const char *name, tessel_yaml_node *node)
{
    if (2 * (b->nanchors + 1) > b->cap_anchors) {
        size_t cap = b->cap_anchors ? 2 * b->cap_anchors : 16;
        anchor_slot *slots = tessel_alloc_array(b->doc->alloc, cap, sizeof(*slots));
        if (!slots) {
            b->want = cap * sizeof(*slots);
            return TESSEL_ENOMEM;
        }
        memset(slots, 0, cap * sizeof(*slots));
        for (size_t i = 0; i < b->cap_anchors; i++) {
            if (!b->anchors[i].name)
                continue;
            size_t j = hash_name(b->anchors[i].name) & (cap - 1);
            while (slots[j].name)
                j = (j + 1) & (cap - 1);
            slots[j] = b->anchors[i];
        }
        tessel_dealloc(b->doc->alloc, b->anchors);
        b->anchors = slots;
        b->cap_anchors = cap;
    }
    size_t mask = b->cap_anchors - 1;
    size_t i = hash_name(name) & mask;
    for (; b->anchors[i].name; i = (i + 1) & mask) {
        if (strcmp(b->anchors[i].name, name) == 0) {
            b->anchors[i].node = node;
            return TESSEL_OK;
        }
    }
    b->anchors[i].name = name;
    b->anchors[i].node = node;
    b->nanchors++;
    return TESSEL_OK;
}

static int register_anchor(builder *b, const yaml_char_t *anchor, tessel_yaml_node *node)
{
    if (!anchor)
        return TESSEL_OK;
    const char *name = arena_strndup(b->doc, (const char *)anchor, strlen((const char *)anchor));
    if (!name || anchor_put(b, name, node))
        return fail_oom(b);
    return TESSEL_OK;
}

static int add_weight(builder *b, uint64_t w, yaml_mark_t mark)
{
    b->weight += w;
    if (b->weight > TESSEL_YAML_MAX_NODES)
        return fail(b, TESSEL_ERANGE, mark, "document too large: more than %u nodes "
                    "(aliases counted at their expanded size)", TESSEL_YAML_MAX_NODES);
    return TESSEL_OK;
}

/* True when the next child of the innermost open collection is a mapping key. */
static int at_key(const builder *b)
{
    if (!b->depth)
        return 0;
    const frame *f = &b->stack[b->depth - 1];
    return f->node->kind == TESSEL_YAML_MAPPING && (b->npending - f->pending_start) % 2 == 0;
}

static int attach(builder *b, tessel_yaml_node *n)
{
    if (!b->depth) {
        b->doc->root = n;
        return TESSEL_OK;
    }
    if (b->npending == b->cap_pending) {
        size_t cap = b->cap_pending ? 2 * b->cap_pending : 64;
        tessel_yaml_node **p = tessel_realloc_array(b->doc->alloc, b->pending, cap, sizeof(*p));
        if (!p) {
            b->want = cap * sizeof(*p);
            return fail_oom(b);
        }
        b->pending = p;
        b->cap_pending = cap;
    }
    b->pending[b->npending++] = n;
    return TESSEL_OK;
}

typedef struct key_ref {
    const tessel_yaml_node *key;
    size_t ord;
} key_ref;

static int key_cmp(const void *pa, const void *pb)
{
    const key_ref *a = pa, *b = pb;
    if (a->key->length != b->key->length)
        return a->key->length < b->key->length ? -1 : 1;
    int c = memcmp(a->key->value, b->key->value, a->key->length);
    if (c)
        return c;
    return a->ord < b->ord ? -1 : a->ord > b->ord;
}

static int same_key(const tessel_yaml_node *a, const tessel_yaml_node *b)
{
    return a->length == b->length && memcmp(a->value, b->value, a->length) == 0;
}

static int report_duplicate(builder *b, const tessel_yaml_node *first,
                            const tessel_yaml_node *dup)
{
    yaml_mark_t mark = { 0, dup->line - 1, dup->column - 1 };
    return fail(b, TESSEL_EPARSE, mark, "duplicate key '%.*s' (first at line %llu)",
                dup->length > 60 ? 60 : (int)dup->length, dup->value,
                (unsigned long long)first->line);
}

/* Reports the earliest key that repeats an earlier one. Small mappings
 * compare pairwise; big ones sort, so a 500,000-key mapping stays
 * O(n log n). */
static int check_duplicates(builder *b, tessel_yaml_node *const *kv, size_t n)
{
    if (n <= 16) {
        for (size_t j = 1; j < n; j++)
            for (size_t i = 0; i < j; i++)
                if (same_key(kv[2 * i], kv[2 * j]))
                    return report_duplicate(b, kv[2 * i], kv[2 * j]);
        return TESSEL_OK;
    }
    key_ref *refs = tessel_alloc_array(b->doc->alloc, n, sizeof(*refs));
    if (!refs) {
        b->want = n * sizeof(*refs);
        return fail_oom(b);
    }
    for (size_t i = 0; i < n; i++) {
        refs[i].key = kv[2 * i];
        refs[i].ord = i;
    }
    qsort(refs, n, sizeof(*refs), key_cmp);
    size_t best = SIZE_MAX, first = 0;
    for (size_t i = 1; i < n; i++) {
        if (same_key(refs[i - 1].key, refs[i].key) && refs[i].ord < best) {
            /* refs[i - 1] is not necessarily the first of its run, but the
             * run's first element sorts first; walk back to it. */
            size_t f = i - 1;
            while (f > 0 && same_key(refs[f - 1].key, refs[i].key))
                f--;
            best = refs[i].ord;
            first = refs[f].ord;
        }
    }
    tessel_dealloc(b->doc->alloc, refs);
    if (best != SIZE_MAX)
        return report_duplicate(b, kv[2 * first], kv[2 * best]);
    return TESSEL_OK;
}

static int close_collection(builder *b)
{
    frame *f = &b->stack[b->depth - 1];
    tessel_yaml_node *n = f->node;
    size_t nchild = b->npending - f->pending_start;
    /* pending is still NULL when no collection so far had children. */
    tessel_yaml_node **kids = nchild ? b->pending + f->pending_start : NULL;
    node_ext *e = (node_ext *)n;
    if (n->kind == TESSEL_YAML_MAPPING) {
        size_t pairs = nchild / 2;
        int rc = check_duplicates(b, kids, pairs);
        if (rc)
            return rc;
        n->count = pairs;
        if (pairs) {
            n->keys = tessel_yaml_arena_alloc(b->doc, pairs * sizeof(*n->keys));
            n->items = tessel_yaml_arena_alloc(b->doc, pairs * sizeof(*n->items));
            if (!n->keys || !n->items)
                return fail_oom(b);
            for (size_t i = 0; i < pairs; i++) {
                n->keys[i] = kids[2 * i];
                n->items[i] = kids[2 * i + 1];
            }
        }
    } else {
        if (tessel_yaml_set_children(b->doc, n, NULL, kids, nchild))
            return fail_oom(b);
    }
    for (size_t i = 0; i < nchild; i++) {
        e->weight += weight_of(kids[i]);
        if (e->weight > TESSEL_YAML_MAX_NODES) /* already refused; keeps the sum bounded */
            e->weight = TESSEL_YAML_MAX_NODES + 1;
    }
    b->npending = f->pending_start;
    const char *anchor = f->anchor;
    b->depth--;
    if (anchor && anchor_put(b, anchor, n))
        return fail_oom(b);
    return attach(b, n);
}

static int open_collection(builder *b, const yaml_event_t *ev, tessel_yaml_kind kind)
{
    if (at_key(b))
        return fail(b, TESSEL_EPARSE, ev->start_mark, "mapping keys must be scalars");
    if (b->depth == TESSEL_YAML_MAX_DEPTH)
        return fail(b, TESSEL_ERANGE, ev->start_mark, "nesting deeper than %u levels",
                    TESSEL_YAML_MAX_DEPTH);
    int rc = add_weight(b, 1, ev->start_mark);
    if (rc)
        return rc;
    tessel_yaml_node *n = tessel_yaml_new_node(b->doc, kind, NULL, ev->start_mark.line + 1,
                                               (uint32_t)ev->start_mark.column + 1);
    if (!n)
        return fail_oom(b);
    n->file = b->name;
    const yaml_char_t *anchor = kind == TESSEL_YAML_MAPPING ? ev->data.mapping_start.anchor
                                                            : ev->data.sequence_start.anchor;
    frame *f = &b->stack[b->depth];
    f->node = n;
    f->pending_start = b->npending;
    f->anchor = NULL;
    if (anchor) {
        f->anchor = arena_strndup(b->doc, (const char *)anchor, strlen((const char *)anchor));
        if (!f->anchor)
            return fail_oom(b);
    }
    b->depth++;
    return TESSEL_OK;
}

static int on_scalar(builder *b, const yaml_event_t *ev)
{
    int rc = add_weight(b, 1, ev->start_mark);
    if (rc)
        return rc;
    tessel_yaml_node *n = tessel_yaml_new_node(b->doc, TESSEL_YAML_SCALAR, NULL,
                                               ev->start_mark.line + 1,
                                               (uint32_t)ev->start_mark.column + 1);
    if (!n)
        return fail_oom(b);
    n->file = b->name;
    n->length = ev->data.scalar.length;
    if (!(n->value = arena_strndup(b->doc, (const char *)ev->data.scalar.value, n->length)))
        return fail_oom(b);
    /* Only plain scalars are typed; quoting or an explicit !!str makes a
     * string of "128" or "yes". */
    n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
                (ev->data.scalar.tag &&
                 strcmp((const char *)ev->data.scalar.tag, YAML_STR_TAG) == 0);
    if ((rc = register_anchor(b, ev->data.scalar.anchor, n)))
        return rc;
    return attach(b, n);
}

static int on_alias(builder *b, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    tessel_yaml_node *n = anchor_find(b, name);
    if (!n) {
        for (unsigned i = 0; i < b->depth; i++)
            if (b->stack[i].anchor && strcmp(b->stack[i].anchor, name) == 0)
                return fail(b, TESSEL_EPARSE, ev->start_mark,
                            "alias '*%.60s' refers to a node that contains it", name);
        return fail(b, TESSEL_EPARSE, ev->start_mark, "unknown alias '*%.60s'", name);
    }
    if (at_key(b) && n->kind != TESSEL_YAML_SCALAR)
        return fail(b, TESSEL_EPARSE, ev->start_mark, "mapping keys must be scalars");
    int rc = add_weight(b, weight_of(n), ev->start_mark);
    if (rc)
        return rc;
    return attach(b, n);
}

/* libyaml reports reader errors (bad UTF-8, control characters) as a byte
 * offset only; turn it into a line and column. */
static void offset_mark(const builder *b, size_t offset, yaml_mark_t *mark)
{
    mark->line = 0;
    mark->column = 0;
    if (offset > b->size)
        offset = b->size;
    for (size_t i = 0; i < offset; i++) {
        if (b->data[i] == '\n') {
            mark->line++;
            mark->column = 0;
        } else {
            mark->column++;
        }
    }
}

static int syntax_error(builder *b, const yaml_parser_t *p)
{
    if (p->error == YAML_MEMORY_ERROR)
        return fail_oom(b);
    yaml_mark_t mark = p->problem_mark;
    if (p->error == YAML_READER_ERROR)
        offset_mark(b, p->problem_offset, &mark);
    const char *problem = p->problem ? p->problem : "malformed YAML";
    /* libyaml gives up on a plain (implicit) key of more than 1024
     * characters with "could not find expected ':'" at the key's end;
     * name the real cause, at the key's start. */
    if (p->context && strcmp(p->context, "while scanning a simple key") == 0 &&
        p->problem_mark.line == p->context_mark.line &&
        p->problem_mark.index > p->context_mark.index + 1024)
        return fail(b, TESSEL_EPARSE, p->context_mark,
                    "a mapping key longer than 1024 characters (YAML's limit for a key "
                    "written without '?')");
    if (p->context)
        return fail(b, TESSEL_EPARSE, mark, "%s (%s at line %llu)", problem, p->context,
                    (unsigned long long)p->context_mark.line + 1);
    return fail(b, TESSEL_EPARSE, mark, "%s", problem);
}

static int on_event(builder *b, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++b->documents > 1)
            return fail(b, TESSEL_EPARSE, ev->start_mark,
                        "more than one YAML document in the stream");
        return TESSEL_OK;
    case YAML_SCALAR_EVENT:
        return on_scalar(b, ev);
    case YAML_ALIAS_EVENT:
        return on_alias(b, ev);
    case YAML_SEQUENCE_START_EVENT:
        return open_collection(b, ev, TESSEL_YAML_SEQUENCE);
    case YAML_MAPPING_START_EVENT:
        return open_collection(b, ev, TESSEL_YAML_MAPPING);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return close_collection(b);
    default:
        return TESSEL_OK;
    }
}

int tessel_yaml_parse(const char *name, const void *data, size_t size,
                      const tessel_allocator *a, tessel_yaml_doc **out, tessel_diag *diag)
{
    *out = NULL;
    builder b;
    memset(&b, 0, sizeof(b));
    b.diag = diag;
    b.data = data;
    b.size = size;
    b.name = name ? name : "<yaml>";
    b.doc = tessel_yaml_doc_create(a);
    if (!b.doc)
        return fail_oom(&b);
    if (!(b.name = tessel_yaml_intern(b.doc, b.name))) {
        size_t bytes = b.doc->failed;
        tessel_yaml_free(&b.doc);
        return tessel_diag_oom(diag, name, "reading YAML", bytes);
    }
    yaml_parser_t parser;
    int rc = TESSEL_OK;
    if (!yaml_parser_initialize(&parser)) {
        rc = fail_oom(&b);
    } else {
        yaml_parser_set_input_string(&parser, data, size);
        for (;;) {
            yaml_event_t ev;
            if (!yaml_parser_parse(&parser, &ev)) {
                rc = syntax_error(&b, &parser);
                break;
            }
            rc = on_event(&b, &ev);
            int done = ev.type == YAML_STREAM_END_EVENT;
            yaml_event_delete(&ev);
            if (rc || done)
                break;
        }
        yaml_parser_delete(&parser);
    }
    tessel_dealloc(b.doc->alloc, b.pending);
    tessel_dealloc(b.doc->alloc, b.anchors);
    if (rc) {
        tessel_yaml_free(&b.doc);
        return rc;
    }
    *out = b.doc;
    return TESSEL_OK;
}

int tessel_yaml_read_file(const char *path, const tessel_allocator *a, unsigned char **text,
                          size_t *size, tessel_diag *diag)
{
    *text = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "cannot open: %s",
                               strerror(errno));
    size_t cap = 4096, len = 0;
    unsigned char *buf = tessel_alloc(a, cap);
    int rc = TESSEL_OK;
    if (!buf)
        rc = tessel_diag_oom(diag, path, "reading a YAML file", cap);
    while (!rc) {
        if (len == cap) {
            /* Specs are small; anything past 64 MiB is not one. */
            if (cap >= ((size_t)64 << 20)) {
                rc = tessel_diag_set(diag, TESSEL_ERANGE, path, 0, 0, NULL,
                                     "file too large for a YAML spec (over 64 MiB)");
                break;
            }
            unsigned char *grown = tessel_realloc_array(a, buf, 2, cap);
            if (!grown) {
                rc = tessel_diag_oom(diag, path, "reading a YAML file", 2 * cap);
                break;
            }
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                rc = tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "read error: %s",
                                     strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc) {
        tessel_dealloc(a, buf);
        return rc;
    }
    *text = buf;
    *size = len;
    return TESSEL_OK;
}

int tessel_yaml_load(const char *path, const tessel_allocator *a, tessel_yaml_doc **out,
                     tessel_diag *diag)
{
    *out = NULL;
    unsigned char *text = NULL;
    size_t len = 0;
    int rc = tessel_yaml_read_file(path, a, &text, &len, diag);
    if (!rc)
        rc = tessel_yaml_parse(path, text, len, a, out, diag);
    tessel_dealloc(a, text);
    return rc;
}
