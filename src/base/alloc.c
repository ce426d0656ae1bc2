/* The allocation hook: every allocation in the library goes through a
 * tessel_allocator so tests can count bytes and inject failures. */
#include <stdlib.h>
#include <string.h>

#include "tessel/base.h"

static void *default_alloc_fn(void *ud, void *ptr, size_t size)
{
    (void)ud;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, size);
}

static const tessel_allocator default_allocator = { default_alloc_fn, NULL };

const tessel_allocator *tessel_allocator_default(void)
{
    return &default_allocator;
}

static const tessel_allocator *pick(const tessel_allocator *a)
{
    return a ? a : &default_allocator;
}

void *tessel_alloc(const tessel_allocator *a, size_t size)
{
    if (size == 0)
        return NULL;
    a = pick(a);
    return a->fn(a->ud, NULL, size);
}

void *tessel_alloc_array(const tessel_allocator *a, size_t count, size_t size)
{
    return tessel_realloc_array(a, NULL, count, size);
}

void *tessel_realloc_array(const tessel_allocator *a, void *ptr, size_t count, size_t size)
{
    if (count == 0 || size == 0 || count > SIZE_MAX / size)
        return NULL;
    a = pick(a);
    return a->fn(a->ud, ptr, count * size);
}

void tessel_dealloc(const tessel_allocator *a, void *ptr)
{
    if (!ptr)
        return;
    a = pick(a);
    a->fn(a->ud, ptr, 0);
}

char *tessel_strdup(const tessel_allocator *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = tessel_alloc(a, n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}
