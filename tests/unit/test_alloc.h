/* A tessel_allocator for tests: counts live allocations and bytes, tracks
 * the peak, and can fail the n-th allocation (SQLite-style OOM testing). */
#ifndef TESSEL_TEST_ALLOC_H
#define TESSEL_TEST_ALLOC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/base.h"

typedef struct test_alloc {
    tessel_allocator allocator;
    long calls;     /* allocations and growths so far */
    long fail_at;   /* fail the call with this number (1-based); 0 = never */
    long live;      /* blocks currently allocated */
    size_t bytes;   /* bytes currently allocated */
    size_t peak;    /* most bytes ever allocated at once */
} test_alloc;

/* Each block carries its size in a 16-byte header so frees can be counted. */
static void *test_alloc_fn(void *ud, void *ptr, size_t size)
{
    test_alloc *t = ud;
    unsigned char *block = ptr ? (unsigned char *)ptr - 16 : NULL;
    size_t old = 0;
    if (block)
        memcpy(&old, block, sizeof(old));
    if (size == 0) {
        if (block) {
            t->live--;
            t->bytes -= old;
            free(block);
        }
        return NULL;
    }
    t->calls++;
    if (t->fail_at && t->calls == t->fail_at)
        return NULL;
    unsigned char *grown = realloc(block, size + 16);
    if (!grown)
        return NULL;
    memcpy(grown, &size, sizeof(size));
    if (!block)
        t->live++;
    t->bytes = t->bytes - old + size;
    if (t->bytes > t->peak)
        t->peak = t->bytes;
    return grown + 16;
}

static void test_alloc_init(test_alloc *t, long fail_at)
{
    memset(t, 0, sizeof(*t));
    t->allocator.fn = test_alloc_fn;
    t->allocator.ud = t;
    t->fail_at = fail_at;
}

#endif
