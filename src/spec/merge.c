/* Merging an included file's tree under the including file's. */
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
    tessel_yaml_node *result = NULL;
    if (!keys || !items || !used)
        goto done;
    memset(used, 0, over->count ? over->count : 1);
    size_t n = 0;
    for (size_t i = 0; i < base->count; i++) {
        size_t j;
        for (j = 0; j < over->count; j++)
            if (!used[j] && same_scalar(base->keys[i], over->keys[j]))
                break;
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
    tessel_yaml_node *result = NULL;
    if (!items || !used)
        goto done;
    memset(used, 0, over->count ? over->count : 1);
    size_t n = 0;
    for (size_t i = 0; i < base->count; i++) {
        const tessel_yaml_node *bn = name_of(base->items[i]);
        size_t j;
        for (j = 0; j < over->count; j++)
            if (!used[j] && same_scalar(bn, name_of(over->items[j])))
                break;
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
