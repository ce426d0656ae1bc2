/* A fast non-cryptographic 64-bit checksum over 32-byte stripes in four
 * independent lanes (so the multiplies pipeline), for binary cache files.
 * It only has to catch corruption and truncation, not adversaries. */
#include <string.h>

#include "tessel/base.h"

#define PRIME_A 0x9E3779B185EBCA87ull
#define PRIME_B 0xC2B2AE3D27D4EB4Full
#define PRIME_C 0x165667B19E3779F9ull

static uint64_t rotl(uint64_t x, unsigned r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint64_t mix_lane(uint64_t acc, uint64_t word)
{
    acc += word * PRIME_B;
    acc = rotl(acc, 31);
    return acc * PRIME_A;
}

static void stripe(tessel_checksum *c, const unsigned char *p)
{
    for (unsigned i = 0; i < 4; i++)
        c->lane[i] = mix_lane(c->lane[i], load64(p + 8 * i));
}

void tessel_checksum_init(tessel_checksum *c)
{
    memset(c, 0, sizeof(*c));
    c->lane[0] = PRIME_A + PRIME_B;
    c->lane[1] = PRIME_B;
    c->lane[2] = 0;
    c->lane[3] = (uint64_t)0 - PRIME_A;
}

void tessel_checksum_update(tessel_checksum *c, const void *data, size_t n)
{
    const unsigned char *p = data;
    c->total += n;
    if (c->npending) {
        size_t take = 32 - c->npending;
        if (take > n)
            take = n;
        memcpy(c->pending + c->npending, p, take);
        c->npending += (unsigned)take;
        p += take;
        n -= take;
        if (c->npending < 32)
            return;
        stripe(c, c->pending);
        c->npending = 0;
    }
    while (n >= 32) {
        stripe(c, p);
        p += 32;
        n -= 32;
    }
    memcpy(c->pending, p, n);
    c->npending = (unsigned)n;
}

uint64_t tessel_checksum_final(const tessel_checksum *c)
{
    uint64_t h = rotl(c->lane[0], 1) + rotl(c->lane[1], 7) + rotl(c->lane[2], 12) +
                 rotl(c->lane[3], 18);
    h ^= c->total * PRIME_C;
    for (unsigned i = 0; i < c->npending; i++)
        h = rotl(h ^ (c->pending[i] * PRIME_C), 11) * PRIME_A;
    h ^= h >> 33;
    h *= PRIME_B;
    h ^= h >> 29;
    h *= PRIME_C;
    h ^= h >> 32;
    return h;
}
