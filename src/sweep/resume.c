/* Recovering the .part files of a killed sweep. Rows are appended in
 * point order, a batch's traffic rows before its summary rows, and synced
 * per batch; so the points whose summary row is complete have all their
 * traffic rows, and everything after the last such row is cut off. Rows
 * are found by line ends (a field holding a line break, which only a
 * design name or file name could bring, is not supported here). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweep_internal.h"

#define RESUME_BLOCK 4096

/* Offset just after the '\n' that ends the line before `end` (the start
 * of the line that ends at `end`); 0 when there is none. */
static int line_start(FILE *f, off_t end, off_t *start)
{
    char buf[RESUME_BLOCK];
    off_t pos = end - 1; /* the byte at end - 1 is the line's own '\n' */
    while (pos > 0) {
        off_t from = pos > RESUME_BLOCK ? pos - RESUME_BLOCK : 0;
        size_t n = (size_t)(pos - from);
        if (fseeko(f, from, SEEK_SET) || fread(buf, 1, n, f) != n)
            return TESSEL_EIO;
        for (size_t i = n; i-- > 0;)
            if (buf[i] == '\n') {
                *start = from + (off_t)i + 1;
                return TESSEL_OK;
            }
        pos = from;
    }
    *start = 0;
    return TESSEL_OK;
}

/* The `point` field at the start of a row (digits up to the first comma). */
static int row_point(FILE *f, off_t start, uint64_t *p)
{
    char buf[32];
    if (fseeko(f, start, SEEK_SET))
        return TESSEL_EIO;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    uint64_t v = 0;
    size_t i = 0;
    for (; i < n && buf[i] >= '0' && buf[i] <= '9' && i < 19; i++)
        v = 10 * v + (uint64_t)(buf[i] - '0');
    if (i == 0 || i >= n || buf[i] != ',')
        return TESSEL_ECORRUPT;
    *p = v;
    return TESSEL_OK;
}

/* End of the first line (the header), or -1 when the file has no whole line. */
static int header_end(FILE *f, off_t size, off_t *end)
{
    char buf[RESUME_BLOCK];
    off_t pos = 0;
    *end = -1;
    while (pos < size) {
        if (fseeko(f, pos, SEEK_SET))
            return TESSEL_EIO;
        size_t n = fread(buf, 1, sizeof(buf), f);
        if (n == 0)
            return TESSEL_EIO;
        char *nl = memchr(buf, '\n', n);
        if (nl) {
            *end = pos + (nl - buf) + 1;
            return TESSEL_OK;
        }
        pos += (off_t)n;
    }
    return TESSEL_OK;
}

/* Finds, from the end of the .part file at `path`, the last whole row
 * whose point is <= limit, and cuts the file just after it. *found is 0
 * when no row qualifies (the file is then cut after its header, or to
 * nothing when even the header is incomplete: *has_header = 0). */
int sweep_part_recover(const char *path, uint64_t limit, uint64_t *last, int *found,
                       int *has_header, tessel_diag *diag)
{
    *found = 0;
    *has_header = 0;
    FILE *f = fopen(path, "r+b");
    if (!f)
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, "", "cannot open: %s",
                               strerror(errno));
    struct stat sb;
    off_t head = -1, end = 0, start;
    int rc = fstat(fileno(f), &sb) ? TESSEL_EIO : header_end(f, sb.st_size, &head);
    if (!rc && head >= 0) {
        *has_header = 1;
        end = sb.st_size;
        /* a row cut by the kill: its line has no end */
        if (end > head && (rc = line_start(f, end + 1, &start)) == 0 && start < end)
            end = start;
        while (!rc && end > head) {
            uint64_t p;
            if ((rc = line_start(f, end, &start)) || (rc = row_point(f, start, &p)))
                break;
            if (p <= limit) {
                *found = 1;
                *last = p;
                break;
            }
            end = start;
        }
        if (!rc && !*found)
            end = head;
    }
    if (!rc && (fflush(f) || ftruncate(fileno(f), end) || fsync(fileno(f))))
        rc = TESSEL_EIO;
    fclose(f);
    if (rc == TESSEL_ECORRUPT)
        return tessel_diag_set(diag, rc, path, 0, 0, "point", "a row does not start with its "
                               "point number: not a sweep's output (remove it or use "
                               "--overwrite)");
    if (rc)
        return tessel_diag_set(diag, rc, path, 0, 0, "", "cannot read or cut the partial "
                               "output: %s", strerror(errno));
    return TESSEL_OK;
}
