/* LSD radix sort, 8 bits a pass, only as many passes as max_key needs:
 * tile keys, occupancies and generator positions are bounded numbers, so
 * this is linear where a comparison sort would dominate. */
#include <string.h>

#include "tessel/base.h"

static void insertion_sort(uint64_t *keys, uint64_t n)
{
    for (uint64_t i = 1; i < n; i++) {
        uint64_t v = keys[i], j = i;
        while (j > 0 && keys[j - 1] > v) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = v;
    }
}

void tessel_sort_u64(uint64_t *keys, uint64_t *scratch, uint64_t n, uint64_t max_key)
{
    if (n < 48) {
        insertion_sort(keys, n);
        return;
    }
    unsigned passes = 0;
    for (uint64_t m = max_key; m; m >>= 8)
        passes++;
    uint64_t *src = keys, *dst = scratch;
    for (unsigned pass = 0; pass < passes; pass++) {
        unsigned shift = 8 * pass;
        uint64_t offset[256];
        memset(offset, 0, sizeof(offset));
        for (uint64_t i = 0; i < n; i++)
            offset[(src[i] >> shift) & 0xff]++;
        uint64_t sum = 0;
        for (unsigned b = 0; b < 256; b++) {
            uint64_t c = offset[b];
            offset[b] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; i++)
            dst[offset[(src[i] >> shift) & 0xff]++] = src[i];
        uint64_t *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != keys)
        memcpy(keys, src, n * sizeof(uint64_t));
}

/* MSD radix sort in place (American flag sort): each pass permutes the
 * keys into 256 buckets by cycle-leading swaps, then recurses into each
 * bucket on the next lower byte. No scratch array: for the estimators'
 * iteration keys this halves the peak memory of sorting. The recursion is
 * at most 8 deep. */
static void flag_sort(uint64_t *keys, uint64_t n, int shift)
{
    if (n < 48 || shift < 0) {
        insertion_sort(keys, n);
        return;
    }
    uint64_t count[256], start[256], next[256];
    memset(count, 0, sizeof(count));
    for (uint64_t i = 0; i < n; i++)
        count[(keys[i] >> shift) & 0xff]++;
    uint64_t sum = 0;
    for (unsigned b = 0; b < 256; b++) {
        start[b] = next[b] = sum;
        sum += count[b];
    }
    for (unsigned b = 0; b < 256; b++) {
        uint64_t end = start[b] + count[b];
        while (next[b] < end) {
            uint64_t v = keys[next[b]];
            unsigned vb = (unsigned)((v >> shift) & 0xff);
            while (vb != b) { /* follow the cycle until a key of bucket b arrives */
                uint64_t w = keys[next[vb]];
                keys[next[vb]++] = v;
                v = w;
                vb = (unsigned)((v >> shift) & 0xff);
            }
            keys[next[b]++] = v;
        }
    }
    for (unsigned b = 0; b < 256; b++)
        if (count[b] > 1)
            flag_sort(keys + start[b], count[b], shift - 8);
}

void tessel_sort_u64_inplace(uint64_t *keys, uint64_t n, uint64_t max_key)
{
    int shift = -8;
    for (uint64_t m = max_key; m; m >>= 8)
        shift += 8;
    flag_sort(keys, n, shift);
}
