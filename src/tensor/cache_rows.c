/* Row-blocked reading of a .tsl cache (tessel_cache_row_counts,
 * tessel_cache_read_rows): statistics of a cached matrix in bounded memory.
 *
 * The counting pass reads the payload once, front to back, in CACHE_CHUNK
 * pieces through one buffer: it checks what tessel_cache_read checks (the
 * header, the payload checksum, pointers spanning the entries, coordinates
 * in range, every row sorted and unique), so a corrupt cache is refused
 * before any statistics are added, and it keeps only each row's length.
 * A block then reads just its rows' pointers, coordinates and values with
 * pread, and checks them again against the counts (the file may have
 * changed in between). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_internal.h"
#include "tessel/tensor.h"

typedef struct cache_file {
    const char *path;
    int fd;
    cache_header h;
} cache_file;

static int corrupt(const char *path, tessel_diag *diag, const char *why)
{
    return tessel_diag_set(diag, TESSEL_ECORRUPT, path, 0, 0, NULL,
                           "corrupt cache: %s (rebuild it with tessel convert)", why);
}

/* n bytes at offset off of the file. */
static int read_at(const cache_file *f, void *dst, uint64_t n, uint64_t off, tessel_diag *diag)
{
    unsigned char *p = dst;
    while (n > 0) {
        ssize_t got = pread(f->fd, p, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return tessel_diag_set(diag, TESSEL_EIO, f->path, 0, 0, NULL, "read failed: %s",
                                   strerror(errno));
        if (got == 0)
            return corrupt(f->path, diag, "it is truncated");
        p += got;
        n -= (uint64_t)got;
        off += (uint64_t)got;
    }
    return TESSEL_OK;
}

/* Opens the cache at path and checks its header; a cache of other than two
 * modes is refused (the blocks serve matrix statistics). */
static int open_cache(const char *path, cache_file *f, tessel_diag *diag)
{
    f->path = path;
    f->fd = tessel_input_open(path, diag);
    if (f->fd < 0)
        return f->fd;
    struct stat st;
    int rc;
    if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "not a regular file");
    else if ((uint64_t)st.st_size < CACHE_HEADER_BYTES)
        rc = corrupt(path, diag, "shorter than its header");
    else if (!(rc = read_at(f, &f->h, sizeof(f->h), 0, diag)))
        rc = cache_check_header(&f->h, (uint64_t)st.st_size, diag, path);
    if (!rc && f->h.order != 2)
        rc = tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, NULL,
                             "%u modes: row-blocked reading takes a matrix (2 modes)",
                             f->h.order);
    if (rc) {
        close(f->fd);
        f->fd = -1;
    }
    return rc;
}

/* The payload front to back in pieces of buf: the checksum, the row
 * lengths into counts and the layout checks. */
static int verify_payload(const cache_file *f, unsigned char *buf, uint64_t *counts,
                          tessel_diag *diag)
{
    const cache_header *h = &f->h;
    tessel_checksum sum;
    tessel_checksum_init(&sum);
    uint64_t off = CACHE_HEADER_BYTES, rows = h->dims[0], prev = 0;
    /* Pointers: CACHE_CHUNK is a multiple of 8, so no pointer is split. */
    for (uint64_t r = 0; r <= rows;) {
        uint64_t n = rows + 1 - r < CACHE_CHUNK / 8 ? rows + 1 - r : CACHE_CHUNK / 8;
        int rc = read_at(f, buf, n * 8, off, diag);
        if (rc)
            return rc;
        tessel_checksum_update(&sum, buf, n * 8);
        for (uint64_t k = 0; k < n; k++, r++) {
            uint64_t p;
            memcpy(&p, buf + 8 * k, 8);
            if ((r == 0 && p != 0) || p < prev || p > h->nnz || (r == rows && p != h->nnz))
                return corrupt(f->path, diag, p < prev ? "row pointers decrease"
                                                       : "row pointers do not span the entries");
            if (r > 0)
                counts[r - 1] = p - prev;
            prev = p;
        }
        off += n * 8;
    }
    /* Coordinates, row by row through the counts. */
    uint64_t row = 0, left = rows ? counts[0] : 0, last = 0;
    for (uint64_t e = 0; e < h->nnz;) {
        uint64_t n = h->nnz - e < CACHE_CHUNK / 4 ? h->nnz - e : CACHE_CHUNK / 4;
        int rc = read_at(f, buf, n * 4, off, diag);
        if (rc)
            return rc;
        tessel_checksum_update(&sum, buf, n * 4);
        for (uint64_t k = 0; k < n; k++, e++) {
            int first = 0;
            while (left == 0) {
                left = counts[++row];
                first = 1;
            }
            if (e == 0)
                first = 1;
            uint32_t c;
            memcpy(&c, buf + 4 * k, 4);
            if (c >= h->dims[1])
                return corrupt(f->path, diag, "a coordinate is out of range");
            if (!first && c <= last)
                return corrupt(f->path, diag, "entries are not sorted and unique");
            last = c;
            left--;
        }
        off += n * 4;
    }
    /* Values: only the checksum. */
    uint64_t vbytes = h->flags & CACHE_FLAG_VALUES ? h->nnz * 8 : 0;
    for (uint64_t done = 0; done < vbytes;) {
        uint64_t n = vbytes - done < CACHE_CHUNK ? vbytes - done : CACHE_CHUNK;
        int rc = read_at(f, buf, n, off + done, diag);
        if (rc)
            return rc;
        tessel_checksum_update(&sum, buf, n);
        done += n;
    }
    if (tessel_checksum_final(&sum) != h->payload_checksum)
        return corrupt(f->path, diag, "payload checksum mismatch");
    return TESSEL_OK;
}

int tessel_cache_row_counts(const char *path, const tessel_allocator *a, uint64_t *dims,
                            uint64_t **counts, tessel_diag *diag)
{
    *counts = NULL;
    cache_file f;
    int rc = open_cache(path, &f, diag);
    if (rc)
        return rc;
    uint64_t rows = f.h.dims[0];
    uint64_t *c = tessel_alloc_array(a, rows ? rows : 1, sizeof(uint64_t));
    unsigned char *buf = tessel_alloc(a, CACHE_CHUNK);
    if (!c || !buf)
        rc = tessel_diag_oom(diag, path, "counting the entries of every row",
                             !c ? (size_t)(rows * sizeof(uint64_t)) : CACHE_CHUNK);
    else
        rc = verify_payload(&f, buf, c, diag);
    tessel_dealloc(a, buf);
    close(f.fd);
    if (rc) {
        tessel_dealloc(a, c);
        return rc;
    }
    dims[0] = f.h.dims[0];
    dims[1] = f.h.dims[1];
    *counts = c;
    return TESSEL_OK;
}

/* Rows [r0, r1) of the open cache into t (its arrays allocated here). */
static int read_block(const cache_file *f, uint64_t r0, uint64_t r1, tessel_tensor *t,
                      tessel_diag *diag)
{
    const cache_header *h = &f->h;
    const tessel_allocator *a = t->alloc;
    uint64_t rows = h->dims[0];
    t->ptr = tessel_alloc_array(a, rows + 1, sizeof(uint64_t));
    if (!t->ptr)
        return tessel_diag_oom(diag, f->path, "reading a block of cached rows",
                               (size_t)((rows + 1) * sizeof(uint64_t)));
    int rc = read_at(f, t->ptr + r0, (r1 - r0 + 1) * 8, CACHE_HEADER_BYTES + r0 * 8, diag);
    if (rc)
        return rc;
    uint64_t lo = t->ptr[r0], hi = t->ptr[r1];
    for (uint64_t r = r0; r < r1; r++)
        if (t->ptr[r + 1] < t->ptr[r])
            return corrupt(f->path, diag, "row pointers decrease");
    if (lo > hi || hi > h->nnz)
        return corrupt(f->path, diag, "row pointers do not span the entries");
    /* The block's entries start at 0: rows before it are empty. */
    for (uint64_t r = r0; r <= r1; r++)
        t->ptr[r] -= lo;
    memset(t->ptr, 0, r0 * sizeof(uint64_t));
    for (uint64_t r = r1 + 1; r <= rows; r++)
        t->ptr[r] = hi - lo;
    t->nnz = hi - lo;
    if (t->nnz == 0)
        return TESSEL_OK;
    int has_values = (h->flags & CACHE_FLAG_VALUES) != 0;
    t->idx[1] = tessel_alloc_array(a, t->nnz, sizeof(uint32_t));
    if (has_values)
        t->values = tessel_alloc_array(a, t->nnz, sizeof(double));
    if (!t->idx[1] || (has_values && !t->values))
        return tessel_diag_oom(diag, f->path, "reading a block of cached rows",
                               (size_t)(t->nnz * (4u + (has_values ? 8u : 0u))));
    uint64_t idx_off = CACHE_HEADER_BYTES + (rows + 1) * 8;
    rc = read_at(f, t->idx[1], t->nnz * 4, idx_off + lo * 4, diag);
    if (!rc && has_values)
        rc = read_at(f, t->values, t->nnz * 8, idx_off + h->nnz * 4 + lo * 8, diag);
    for (uint64_t k = 0; k < t->nnz && !rc; k++)
        if (t->idx[1][k] >= h->dims[1])
            rc = corrupt(f->path, diag, "a coordinate is out of range");
    return rc;
}

int tessel_cache_read_rows(const char *path, uint64_t row_begin, uint64_t row_end,
                           const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    cache_file f;
    int rc = open_cache(path, &f, diag);
    if (rc)
        return rc;
    if (row_begin > row_end || row_end > f.h.dims[0]) {
        close(f.fd);
        return tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, "rows",
                               "rows [%llu, %llu) are not rows of a %llu-row matrix",
                               (unsigned long long)row_begin, (unsigned long long)row_end,
                               (unsigned long long)f.h.dims[0]);
    }
    tessel_tensor *t = tessel_alloc(a, sizeof(*t));
    if (!t) {
        close(f.fd);
        return tessel_diag_oom(diag, path, "reading a block of cached rows", sizeof(*t));
    }
    memset(t, 0, sizeof(*t));
    t->alloc = a;
    t->order = 2;
    t->dims[0] = f.h.dims[0];
    t->dims[1] = f.h.dims[1];
    memcpy(t->field, f.h.field, sizeof(t->field));
    memcpy(t->symmetry, f.h.symmetry, sizeof(t->symmetry));
    rc = read_block(&f, row_begin, row_end, t, diag);
    close(f.fd);
    if (rc) {
        tessel_tensor_free(&t);
        return rc;
    }
    *out = t;
    return TESSEL_OK;
}
