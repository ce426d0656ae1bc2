/* Fuzz target: the decimal value scanner (scan_double, src/tensor/textio.c
 * and fastfloat.h) against the C library's strtod, and fastfloat_scan, the
 * inline scanner of the chunked reader's common line, on its own.
 *
 * The input, cut at its first NUL or line break, is one line in a buffer
 * laid out as the readers lay theirs out (the line NUL-terminated, then
 * TEXT_PAD more bytes). scan_double must give strtod's double bit for bit,
 * stop where strtod stops, and classify the token as it always has: no
 * number or a token strtod stops inside is SCAN_BAD, a finite decimal
 * beyond the double range SCAN_OVERFLOW, blanks only SCAN_NONE. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/tensor/fastfloat.h"
#include "../../src/tensor/textio.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What scan_double must return for the line s (blank = ' ' or '\t' in
 * front; the token ends at a blank of is_blank's set or at the end). */
static int reference(const char *s, const char *end, double *out, const char **stop_at)
{
    const char *p = s;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\v' || *p == '\f' || *p == '\r'))
        p++;
    if (p == end)
        return SCAN_NONE;
    char *stop = NULL;
    errno = 0;
    double v = strtod(p, &stop);
    if (stop == p || stop > end ||
        (stop < end && *stop != ' ' && *stop != '\t' && *stop != '\v' && *stop != '\f' &&
         *stop != '\r'))
        return SCAN_BAD;
    if (errno == ERANGE && isinf(v))
        return SCAN_OVERFLOW;
    *out = v;
    *stop_at = stop;
    return SCAN_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n = 0;
    while (n < size && data[n] != '\0' && data[n] != '\n')
        n++;
    char *line = malloc(n + 1 + TEXT_PAD);
    FUZZ_REQUIRE(line != NULL, "allocating the line");
    memcpy(line, data, n);
    memset(line + n, 0, 1 + TEXT_PAD);
    const char *p = line;
    double got = 0, want = 0;
    const char *stop = NULL;
    int rc = scan_double(&p, line + n, &got);
    int wrc = reference(line, line + n, &want, &stop);
    FUZZ_REQUIRE(rc == wrc, "scan_double classifies the token as strtod does");
    if (rc == SCAN_OK) {
        FUZZ_REQUIRE(memcmp(&got, &want, sizeof(got)) == 0 || (isnan(got) && isnan(want)),
                     "scan_double gives strtod's double bit for bit");
        FUZZ_REQUIRE(p == stop, "scan_double stops where strtod stops");
    }
    /* fastfloat_scan from the line's first byte, bounded by its end: NULL,
     * a stop its callers refuse (no separator after it), or strtod's
     * double and stop */
    double fast = 0;
    const char *e = fastfloat_scan(line, line + n, &fast);
    if (e && (e == line + n || *e == ' ' || *e == '\t')) {
        char *fstop = NULL;
        double fwant = strtod(line, &fstop);
        FUZZ_REQUIRE(e == fstop, "fastfloat_scan stops where strtod stops");
        FUZZ_REQUIRE(memcmp(&fast, &fwant, sizeof(fast)) == 0,
                     "fastfloat_scan gives strtod's double bit for bit");
    }
    free(line);
    return 0;
}
