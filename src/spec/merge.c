/* Merging an included file's tree under the including file's. */
#include <stdint.h>
#include <string.h>

#include "spec_internal.h"

static const tessel_yaml_node *name_of(const tessel_yaml_node *item)
{
    const tessel_yaml_node *n = tessel_yaml_get(item, "name");
    return n && n->kind == TESSEL_YAML_SCALAR ? n : NULL;
}

const tessel_yaml_node *spec_named_item(const tessel_yaml_node *seq, const char *name,
                                        size_t *index)
{
    if (!seq || seq->kind != TESSEL_YAML_SEQUENCE)
        return NULL;
    for (size_t i = 0; i < seq->count; i++) {
        const tessel_yaml_node *n = name_of(seq->items[i]);
        if (n && tessel_yaml_scalar_is(n, name)) {
            if (index)
                *index = i;
            return seq->items[i];
        }
    }
    return NULL;
}

static int all_named(const tessel_yaml_node *seq)
{
    for (size_t i = 0; i < seq->count; i++)
        if (!name_of(seq->items[i]))
            return 0;
    return 1;
}

static int same_scalar(const tessel_yaml_node *a, const tessel_yaml_node *b)
{
    return a->length == b->length && memcmp(a->value, b->value, a->length) == 0;
}

static tessel_yaml_node *merge_at(tessel_yaml_doc *doc, tessel_yaml_node *base,
                                  tessel_yaml_node *over, unsigned depth);

/* over's keys (or item names) by hash, so that finding base's key in
 * over costs O(1) and a merge is linear in the two sizes, not their
 * product (issue 25 item 7: a spec including a 229 KB file 250 times). */
typedef struct key_index {
    size_t *slot; /* j + 1; 0 = empty */
    size_t mask;
} key_index;

static size_t key_hash(const tessel_yaml_node *k)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < k->length; i++)
        h = (h ^ (unsigned char)k->value[i]) * UINT64_C(1099511628211);
    return (size_t)h;
}

/* names[j] is over's j-th key (NULL: never matches). */
static int key_index_build(const tessel_allocator *a, const tessel_yaml_node *const *names,
                           size_t n, key_index *ix)
{
    size_t cap = 2;
    while (cap < 2 * n)
        cap *= 2;
    ix->mask = cap - 1;
    if (!(ix->slot = tessel_alloc_array(a, cap, sizeof(*ix->slot))))
        return TESSEL_ENOMEM;
    memset(ix->slot, 0, cap * sizeof(*ix->slot));
    for (size_t j = 0; j < n; j++) {
        if (!names[j])
            continue;
        size_t i = key_hash(names[j]) & ix->mask;
        while (ix->slot[i])
            i = (i + 1) & ix->mask;
        ix->slot[i] = j + 1;
    }
    return TESSEL_OK;
}

/* The first unused j whose name equals k, or n when none. Equal names
 * probe in insertion order, so repeated names match in order as before. */
static size_t key_index_find(const key_index *ix, const tessel_yaml_node *const *names,
                             const unsigned char *used, size_t n, const tessel_yaml_node *k)
{
    if (!k)
        return n;
    size_t best = n;
    for (size_t i = key_hash(k) & ix->mask; ix->slot[i]; i = (i + 1) & ix->mask) {
        size_t j = ix->slot[i] - 1;
        if (!used[j] && j < best && same_scalar(names[j], k))
            best = j;
    }
    return best;
}

/* Result: base's keys in base's order (values merged where over has the
 * key), then over's new keys. The merged mapping takes over's position. */
static tessel_yaml_node *merge_mappings(tessel_yaml_doc *doc, tessel_yaml_node *base,
                                        tessel_yaml_node *over, unsigned depth)
{
    const tessel_allocator *a = tessel_yaml_allocator(doc);
    size_t cap = base->count + over->count;
    tessel_yaml_node *m = tessel_yaml_new_node(doc, TESSEL_YAML_MAPPING, over->file,
                                               over->line, over->column);
    if (!m || cap == 0)
        return m;
    tessel_yaml_node **keys = tessel_alloc_array(a, cap, sizeof(*keys));
    tessel_yaml_node **items = tessel_alloc_array(a, cap, sizeof(*items));
    unsigned char *used = tessel_alloc(a, over->count ? over->count : 1);
    key_index ix = { NULL, 0 };
    tessel_yaml_node *result = NULL;
    if (!keys || !items || !used)
        goto done;
    memset(used, 0, over->count ? over->count : 1);
    if (key_index_build(a, (const tessel_yaml_node *const *)over->keys, over->count, &ix))
        goto done;
    size_t n = 0;
    for (size_t i = 0; i < base->count; i++) {
        size_t j = key_index_find(&ix, (const tessel_yaml_node *const *)over->keys, used,
                                  over->count, base->keys[i]);
        if (j == over->count) {
            keys[n] = base->keys[i];
            items[n++] = base->items[i];
            continue;
        }
        used[j] = 1;
        keys[n] = over->keys[j];
        if (!(items[n++] = merge_at(doc, base->items[i], over->items[j], depth + 1)))
            goto done;
    }
    for (size_t j = 0; j < over->count; j++) {
        if (!used[j]) {
            keys[n] = over->keys[j];
            items[n++] = over->items[j];
        }
    }
    if (tessel_yaml_set_children(doc, m, keys, items, n) == TESSEL_OK)
        result = m;
done:
    tessel_dealloc(a, ix.slot);
    tessel_dealloc(a, keys);
    tessel_dealloc(a, items);
    tessel_dealloc(a, used);
    return result;
}

/* Items of base in base's order (merged with over's item of the same
 * name), then over's new items: an including file can change one level's
 * capacity without restating the others. */
static tessel_yaml_node *merge_named(tessel_yaml_doc *doc, tessel_yaml_node *base,
                                     tessel_yaml_node *over, unsigned depth)
{
    const tessel_allocator *a = tessel_yaml_allocator(doc);
    size_t cap = base->count + over->count;
    tessel_yaml_node *s = tessel_yaml_new_node(doc, TESSEL_YAML_SEQUENCE, over->file,
                                               over->line, over->column);
    if (!s || cap == 0)
        return s;
    tessel_yaml_node **items = tessel_alloc_array(a, cap, sizeof(*items));
    unsigned char *used = tessel_alloc(a, over->count ? over->count : 1);
    const tessel_yaml_node **names = tessel_alloc_array(a, over->count, sizeof(*names));
    key_index ix = { NULL, 0 };
    tessel_yaml_node *result = NULL;
    if (!items || !used || !names)
        goto done;
    memset(used, 0, over->count ? over->count : 1);
    for (size_t j = 0; j < over->count; j++)
        names[j] = name_of(over->items[j]);
    if (key_index_build(a, names, over->count, &ix))
        goto done;
    size_t n = 0;
    for (size_t i = 0; i < base->count; i++) {
        const tessel_yaml_node *bn = name_of(base->items[i]);
        size_t j = key_index_find(&ix, names, used, over->count, bn);
        if (j == over->count) {
            items[n++] = base->items[i];
            continue;
        }
        used[j] = 1;
        if (!(items[n++] = merge_at(doc, base->items[i], over->items[j], depth + 1)))
            goto done;
    }
    for (size_t j = 0; j < over->count; j++)
        if (!used[j])
            items[n++] = over->items[j];
    if (tessel_yaml_set_children(doc, s, NULL, items, n) == TESSEL_OK)
        result = s;
done:
    tessel_dealloc(a, ix.slot);
    tessel_dealloc(a, names);
    tessel_dealloc(a, items);
    tessel_dealloc(a, used);
    return result;
}

static tessel_yaml_node *merge_at(tessel_yaml_doc *doc, tessel_yaml_node *base,
                                  tessel_yaml_node *over, unsigned depth)
{
    /* Parsed trees are at most 64 deep, so this bound is never the limit
     * for real input; it only keeps the recursion finite by construction. */
    if (!base || depth > 2 * TESSEL_YAML_MAX_DEPTH)
        return over;
    if (base->kind == TESSEL_YAML_MAPPING && over->kind == TESSEL_YAML_MAPPING)
        return merge_mappings(doc, base, over, depth);
    if (base->kind == TESSEL_YAML_SEQUENCE && over->kind == TESSEL_YAML_SEQUENCE &&
        base->count && over->count && all_named(base) && all_named(over))
        return merge_named(doc, base, over, depth);
    return over;
}

tessel_yaml_node *spec_merge(tessel_yaml_doc *doc, tessel_yaml_node *base,
                             tessel_yaml_node *over)
{
    if (!over)
        return base;
    return merge_at(doc, base, over, 0);
}
