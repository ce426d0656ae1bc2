/* Binary tensor cache (.tsl).
 *
 * Layout (little-endian; the byte-order mark rejects a file whose bytes
 * were swapped, and big-endian hosts are refused at compile time below):
 *   offset  size  field
 *        0     8  magic "TESSELC\n"
 *        8     4  format version (CACHE_VERSION)
 *       12     4  header size (CACHE_HEADER_BYTES)
 *       16     4  order
 *       20     4  flags (bit 0: values present)
 *       24    64  dims[8]
 *       88     8  nnz
 *       96     8  source size in bytes
 *      104     8  source mtime in ns
 *      112     4  source load options (tessel_cache_source.options)
 *      116     4  byte-order mark 0x01020304
 *      120    16  field name, NUL padded
 *      136    16  symmetry name, NUL padded
 *      152     8  payload size in bytes
 *      160     8  payload checksum
 *      168    80  zero
 *      248     8  checksum of bytes 0..247
 *   payload: ptr[dims[0]+1] (u64), idx[1..order-1][nnz] (u32), values[nnz] (f64)
 *
 * Nothing in a cache is trusted: sizes are checked against the file size
 * before anything is allocated, both checksums are verified, and the
 * arrays are checked for the layout every tensor must have.
 *
 * A pattern-only load maps the file instead of reading it (map_payload):
 * ptr and idx are the file's bytes in place, read-only, which spares the
 * fresh pages (their zeroing by the kernel) and the copy of a read. */
#define _DEFAULT_SOURCE /* MADV_DONTNEED, MADV_POPULATE_READ */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_internal.h"
#include "tessel/tensor.h"

/* Headers and arrays are written and read as raw memory, so the host's
 * byte order is the file's; a big-endian port needs byte swapping here. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .tsl cache format is little-endian"
#endif

/* Where cache bytes come from: a file descriptor or a memory block. */
typedef struct cache_input {
    const char *name;
    int fd;
    const unsigned char *mem;
    uint64_t size, pos;
} cache_input;

static int input_read(cache_input *in, void *dst, uint64_t n)
{
    if (n > in->size - in->pos)
        return TESSEL_ECORRUPT;
    if (in->mem) {
        memcpy(dst, in->mem + in->pos, n);
        in->pos += n;
        return TESSEL_OK;
    }
    int rc = tessel_read_full(in->fd, dst, n);
    if (rc == TESSEL_OK)
        in->pos += n;
    return rc;
}

static uint64_t header_checksum(const cache_header *h)
{
    tessel_checksum c;
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, h, offsetof(cache_header, header_checksum));
    return tessel_checksum_final(&c);
}

/* Payload bytes implied by the header; 0 with *ok = 0 on overflow. */
static uint64_t payload_size(const cache_header *h, int *ok)
{
    *ok = 0;
    if (h->dims[0] >= UINT64_MAX / 8 || h->nnz > UINT64_MAX / 64)
        return 0;
    uint64_t bytes = (h->dims[0] + 1) * 8;
    uint64_t per_entry = 4ull * (h->order - 1) + ((h->flags & CACHE_FLAG_VALUES) ? 8u : 0u);
    if (per_entry && h->nnz > (UINT64_MAX - bytes) / per_entry)
        return 0;
    *ok = 1;
    return bytes + h->nnz * per_entry;
}

static int bounded_string(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

/* What is wrong with a header read from a file of `total` bytes, or NULL.
 * Everything a later allocation or loop relies on is settled here. */
static const char *header_problem(const cache_header *h, uint64_t total)
{
    if (memcmp(h->magic, CACHE_MAGIC, 8) != 0)
        return "not a tessel cache (bad magic)";
    if (h->bom != CACHE_BOM)
        return "written on a machine with the other byte order";
    if (h->version != CACHE_VERSION)
        return "written by another version of tessel";
    if (h->header_bytes != CACHE_HEADER_BYTES || header_checksum(h) != h->header_checksum)
        return "header checksum mismatch";
    if (h->order < 1 || h->order > TESSEL_MAX_ORDER || (h->flags & ~CACHE_FLAG_VALUES))
        return "invalid order or flags";
    for (unsigned m = 0; m < h->order; m++)
        if (h->dims[m] > TESSEL_MAX_DIM)
            return "a dimension exceeds tessel's limit";
    int ok = 0;
    uint64_t expect = payload_size(h, &ok);
    if (!ok || expect != h->payload_bytes || total - CACHE_HEADER_BYTES != h->payload_bytes)
        return "its size does not match its header (truncated?)";
    if (!bounded_string(h->field, sizeof(h->field)) ||
        !bounded_string(h->symmetry, sizeof(h->symmetry)))
        return "invalid field or symmetry name";
    /* tensor.h: values are NULL exactly for pattern tensors (and when
     * there are no entries at all). */
    int has_values = (h->flags & CACHE_FLAG_VALUES) != 0;
    if (h->nnz && has_values == (strcmp(h->field, "pattern") == 0))
        return "the field name disagrees with the stored values";
    return NULL;
}

int cache_check_header(const cache_header *h, uint64_t total, tessel_diag *diag,
                       const char *name)
{
    const char *why = header_problem(h, total);
    if (why)
        return tessel_diag_set(diag, TESSEL_ECORRUPT, name, 0, 0, NULL,
                               "corrupt cache: %s (rebuild it with tessel convert)", why);
    return TESSEL_OK;
}

/* Reads an array of count*size bytes into a fresh buffer, checksumming. */
static int read_array(cache_input *in, const tessel_allocator *a, uint64_t count, size_t size,
                      tessel_checksum *sum, void **out)
{
    *out = NULL;
    if (count == 0)
        return TESSEL_OK;
    unsigned char *buf = tessel_alloc_array(a, count, size);
    if (!buf)
        return TESSEL_ENOMEM;
    uint64_t total = count * size;
    for (uint64_t done = 0; done < total;) {
        uint64_t n = total - done < CACHE_CHUNK ? total - done : CACHE_CHUNK;
        int rc = input_read(in, buf + done, n);
        if (rc) {
            tessel_dealloc(a, buf);
            return rc;
        }
        tessel_checksum_update(sum, buf + done, n);
        done += n;
    }
    *out = buf;
    return TESSEL_OK;
}

/* read_array's checksum of count * size bytes without keeping them: one
 * CACHE_CHUNK buffer at most (a pattern-only load's values). */
static int skip_array(cache_input *in, const tessel_allocator *a, uint64_t count, size_t size,
                      tessel_checksum *sum)
{
    uint64_t total = count * size;
    if (total == 0)
        return TESSEL_OK;
    uint64_t cap = total < CACHE_CHUNK ? total : CACHE_CHUNK;
    unsigned char *buf = tessel_alloc(a, (size_t)cap);
    if (!buf)
        return TESSEL_ENOMEM;
    int rc = TESSEL_OK;
    for (uint64_t done = 0; done < total && !rc;) {
        uint64_t n = total - done < cap ? total - done : cap;
        rc = input_read(in, buf, n);
        if (!rc)
            tessel_checksum_update(sum, buf, n);
        done += n;
    }
    tessel_dealloc(a, buf);
    return rc;
}

static int entry_less(const tessel_tensor *t, uint64_t x, uint64_t y)
{
    for (unsigned m = 1; m < t->order; m++)
        if (t->idx[m][x] != t->idx[m][y])
            return t->idx[m][x] < t->idx[m][y];
    return 0;
}

/* The row pointers' invariants of tessel_tensor (tensor.h). */
static const char *check_pointers(const tessel_tensor *t)
{
    if (t->ptr[0] != 0 || t->ptr[t->dims[0]] != t->nnz)
        return "row pointers do not span the entries";
    for (uint64_t r = 0; r < t->dims[0]; r++)
        if (t->ptr[r] > t->ptr[r + 1])
            return "row pointers decrease";
    return NULL;
}

/* A matrix's rows [r0, r1) hold strictly increasing columns below
 * dims[1]: a pass without branches on the entries (the hot case). */
static int matrix_rows_ok(const tessel_tensor *t, uint64_t r0, uint64_t r1)
{
    const uint32_t *col = t->idx[1];
    unsigned bad = 0;
    for (uint64_t r = r0; r < r1; r++) {
        uint64_t lo = t->ptr[r], hi = t->ptr[r + 1];
        if (lo == hi)
            continue;
        for (uint64_t k = lo + 1; k < hi; k++)
            bad |= col[k] <= col[k - 1];
        bad |= col[hi - 1] >= t->dims[1]; /* the largest, when sorted */
    }
    return !bad;
}

/* The entries' invariants over rows [r0, r1), the row pointers checked;
 * the first problem in entry order. */
static const char *check_entries(const tessel_tensor *t, uint64_t r0, uint64_t r1)
{
    if (t->order == 2 && matrix_rows_ok(t, r0, r1))
        return NULL;
    for (uint64_t r = r0; r < r1; r++)
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
            for (unsigned m = 1; m < t->order; m++)
                if (t->idx[m][k] >= t->dims[m])
                    return "a coordinate is out of range";
            if (k > t->ptr[r] && !entry_less(t, k - 1, k))
                return "entries are not sorted and unique";
        }
    return NULL;
}

/* The layout invariants of tessel_tensor (tensor.h). One pass over the
 * entries: the arrays are far larger than the CPU caches by now, so each
 * extra pass costs a full trip to memory. */
static const char *check_structure(const tessel_tensor *t)
{
    const char *why = check_pointers(t);
    return why ? why : check_entries(t, 0, t->dims[0]);
}

static int matches(const cache_header *h, const tessel_cache_source *expect)
{
    return h->source_size == expect->size && h->source_mtime_ns == expect->mtime_ns &&
           h->source_options == expect->options;
}

static int read_payload(cache_input *in, const cache_header *h, int pattern_only,
                        const tessel_allocator *a, tessel_tensor *t, tessel_diag *diag)
{
    tessel_checksum sum;
    tessel_checksum_init(&sum);
    uint64_t asked = (h->dims[0] + 1) * sizeof(uint64_t); /* the array being read */
    int rc = read_array(in, a, h->dims[0] + 1, sizeof(uint64_t), &sum, (void **)&t->ptr);
    for (unsigned m = 1; m < t->order && !rc; m++) {
        asked = t->nnz * sizeof(uint32_t);
        rc = read_array(in, a, t->nnz, sizeof(uint32_t), &sum, (void **)&t->idx[m]);
    }
    if (!rc && (h->flags & CACHE_FLAG_VALUES)) {
        asked = t->nnz * sizeof(double);
        rc = pattern_only ? skip_array(in, a, t->nnz, sizeof(double), &sum)
                          : read_array(in, a, t->nnz, sizeof(double), &sum, (void **)&t->values);
    }
    if (rc == TESSEL_ENOMEM)
        return tessel_diag_oom(diag, in->name, "reading a cached tensor's arrays", (size_t)asked);
    if (rc == TESSEL_EIO)
        return tessel_diag_set(diag, rc, in->name, 0, 0, NULL, "read failed: %s",
                               strerror(errno));
    const char *why = rc ? "it is truncated"
                      : tessel_checksum_final(&sum) != h->payload_checksum
                          ? "payload checksum mismatch"
                          : check_structure(t);
    if (why)
        return tessel_diag_set(diag, TESSEL_ECORRUPT, in->name, 0, 0, NULL,
                               "corrupt cache: %s (rebuild it with tessel convert)", why);
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Mapped pattern-only loads */

/* A matrix's column indices are checksummed and checked a window of this
 * many bytes at a time (L2-sized), so the second look finds them cached. */
#define MAP_WINDOW (256u << 10)

/* madvise over [p, p + n), p rounded down to its page; only a hint, so a
 * kernel without the advice changes nothing. */
static void advise(const unsigned char *p, uint64_t n, int advice)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || n == 0)
        return;
    uintptr_t start = (uintptr_t)p & ~((uintptr_t)page - 1);
    (void)madvise((void *)start, (size_t)((uintptr_t)p + n - start), advice);
}

/* Prefaults [p, p + n) in one call instead of a fault per few pages. */
static void populate(const unsigned char *p, uint64_t n)
{
#ifdef MADV_POPULATE_READ
    advise(p, n, MADV_POPULATE_READ);
#else
    (void)p;
    (void)n;
#endif
}

/* Checksums a matrix's column indices window by window, checking each
 * window's rows while they are cached; *why keeps the first structural
 * problem (the checksum is still taken to the end, so a damaged file is
 * reported as a checksum mismatch, as the read path reports it). */
static void sum_and_check_columns(const tessel_tensor *t, tessel_checksum *sum, const char **why)
{
    const uint64_t window = MAP_WINDOW / sizeof(uint32_t);
    const unsigned char *col = (const unsigned char *)t->idx[1];
    for (uint64_t r0 = 0; r0 < t->dims[0];) {
        uint64_t r1 = r0 + 1;
        while (r1 < t->dims[0] && t->ptr[r1] - t->ptr[r0] < window)
            r1++;
        uint64_t k0 = t->ptr[r0], k1 = t->ptr[r1];
        tessel_checksum_update(sum, col + k0 * sizeof(uint32_t),
                               (size_t)((k1 - k0) * sizeof(uint32_t)));
        if (!*why)
            *why = check_entries(t, r0, r1);
        r0 = r1;
    }
}

/* Checksums the mapped values a CACHE_CHUNK at a time and drops each chunk
 * from the mapping once summed, so they never stay resident. */
static void sum_and_drop(const unsigned char *p, uint64_t n, tessel_checksum *sum)
{
    for (uint64_t done = 0; done < n;) {
        uint64_t k = n - done < CACHE_CHUNK ? n - done : CACHE_CHUNK;
        populate(p + done, k);
        tessel_checksum_update(sum, p + done, (size_t)k);
        advise(p + done, k, MADV_DONTNEED);
        done += k;
    }
}

/* The payload of a pattern-only load in place: the file mapped read-only
 * and private, t->ptr and t->idx pointing into it (t->mapping records the
 * mapping; tessel_tensor_free unmaps it), checked as read_payload checks
 * what it reads. TESSEL_OK with t->mapping NULL when the file cannot be
 * mapped: the caller reads it instead. */
static int map_payload(cache_input *in, const cache_header *h, tessel_tensor *t,
                       tessel_diag *diag)
{
    if (in->fd < 0 || in->size > SIZE_MAX)
        return TESSEL_OK;
    void *map = mmap(NULL, (size_t)in->size, PROT_READ, MAP_PRIVATE, in->fd, 0);
    if (map == MAP_FAILED)
        return TESSEL_OK;
    t->mapping = map;
    t->mapping_bytes = in->size;
    unsigned char *base = map;
    uint64_t ptr_bytes = (h->dims[0] + 1) * sizeof(uint64_t);
    uint64_t idx_bytes = t->nnz * sizeof(uint32_t);
    uint64_t index_end = CACHE_HEADER_BYTES + ptr_bytes + (t->order - 1) * idx_bytes;
    populate(base + CACHE_HEADER_BYTES, index_end - CACHE_HEADER_BYTES);
    t->ptr = (uint64_t *)(void *)(base + CACHE_HEADER_BYTES);
    for (unsigned m = 1; m < t->order && t->nnz; m++)
        t->idx[m] = (uint32_t *)(void *)(base + CACHE_HEADER_BYTES + ptr_bytes +
                                         (m - 1) * idx_bytes);
    tessel_checksum sum;
    tessel_checksum_init(&sum);
    tessel_checksum_update(&sum, t->ptr, (size_t)ptr_bytes);
    const char *why = check_pointers(t);
    if (!why && t->order == 2 && t->nnz) {
        sum_and_check_columns(t, &sum, &why);
    } else {
        tessel_checksum_update(&sum, base + CACHE_HEADER_BYTES + ptr_bytes,
                               (size_t)(index_end - CACHE_HEADER_BYTES - ptr_bytes));
        why = why ? why : check_entries(t, 0, t->dims[0]);
    }
    sum_and_drop(base + index_end, in->size - index_end, &sum);
    if (tessel_checksum_final(&sum) != h->payload_checksum)
        why = "payload checksum mismatch";
    if (why)
        return tessel_diag_set(diag, TESSEL_ECORRUPT, in->name, 0, 0, NULL,
                               "corrupt cache: %s (rebuild it with tessel convert)", why);
    return TESSEL_OK;
}

static int cache_load(cache_input *in, const tessel_cache_source *expect, int pattern_only,
                      const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    cache_header h;
    if (in->size < CACHE_HEADER_BYTES || input_read(in, &h, sizeof(h)) != TESSEL_OK)
        return tessel_diag_set(diag, TESSEL_ECORRUPT, in->name, 0, 0, NULL,
                               "corrupt cache: shorter than its header (rebuild it with tessel "
                               "convert)");
    int rc = cache_check_header(&h, in->size, diag, in->name);
    if (rc)
        return rc;
    if (expect && !matches(&h, expect))
        return tessel_diag_set(diag, TESSEL_ESTALE, in->name, 0, 0, NULL,
                               "stale cache: its source file or load options changed");
    tessel_tensor *t = tessel_alloc(a, sizeof(*t));
    if (!t)
        return tessel_diag_oom(diag, in->name, "reading a cached tensor", sizeof(*t));
    memset(t, 0, sizeof(*t));
    t->alloc = a;
    t->order = h.order;
    /* Extents past the order stay 0 whatever the file holds there. */
    memcpy(t->dims, h.dims, h.order * sizeof(uint64_t));
    t->nnz = h.nnz;
    memcpy(t->field, h.field, sizeof(t->field));
    memcpy(t->symmetry, h.symmetry, sizeof(t->symmetry));
    rc = pattern_only ? map_payload(in, &h, t, diag) : TESSEL_OK;
    if (!rc && !t->mapping)
        rc = read_payload(in, &h, pattern_only, a, t, diag);
    if (rc) {
        tessel_tensor_free(&t);
        return rc;
    }
    *out = t;
    return TESSEL_OK;
}

int tessel_cache_read(const char *path, const tessel_cache_source *expect,
                      const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    return cache_read_file(path, expect, 0, a, out, diag);
}

int cache_read_file(const char *path, const tessel_cache_source *expect, int pattern_only,
                    const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    cache_input in = { path, tessel_input_open(path, diag), NULL, 0, 0 };
    if (in.fd < 0)
        return in.fd;
    struct stat st;
    int rc;
    if (fstat(in.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "not a regular file");
    } else {
        in.size = (uint64_t)st.st_size;
        rc = cache_load(&in, expect, pattern_only, a, out, diag);
    }
    close(in.fd);
    return rc;
}

int tessel_cache_parse(const char *name, const void *data, size_t size, const tessel_allocator *a,
                       tessel_tensor **out, tessel_diag *diag)
{
    cache_input in = { name, -1, data, size, 0 };
    return cache_load(&in, NULL, 0, a, out, diag);
}

/* ------------------------------------------------------------------ */

static void fill_header(const tessel_tensor *t, const tessel_cache_source *src, cache_header *h)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->magic, CACHE_MAGIC, 8);
    h->version = CACHE_VERSION;
    h->header_bytes = CACHE_HEADER_BYTES;
    h->order = t->order;
    h->flags = t->values && t->nnz ? CACHE_FLAG_VALUES : 0;
    memcpy(h->dims, t->dims, sizeof(h->dims));
    for (unsigned m = t->order; m < TESSEL_MAX_ORDER; m++)
        h->dims[m] = 0;
    h->nnz = t->nnz;
    if (src) {
        h->source_size = src->size;
        h->source_mtime_ns = src->mtime_ns;
        h->source_options = src->options;
    }
    h->bom = CACHE_BOM;
    memcpy(h->field, t->field, sizeof(h->field) - 1);
    memcpy(h->symmetry, t->symmetry, sizeof(h->symmetry) - 1);
}

typedef struct cache_array {
    const void *data;
    uint64_t bytes;
} cache_array;

static unsigned payload_arrays(const tessel_tensor *t, const cache_header *h, cache_array *arr)
{
    unsigned n = 0;
    arr[n++] = (cache_array){ t->ptr, (t->dims[0] + 1) * sizeof(uint64_t) };
    for (unsigned m = 1; m < t->order; m++)
        arr[n++] = (cache_array){ t->idx[m], t->nnz * sizeof(uint32_t) };
    if (h->flags & CACHE_FLAG_VALUES)
        arr[n++] = (cache_array){ t->values, t->nnz * sizeof(double) };
    return n;
}

int tessel_cache_write(const tessel_tensor *t, const tessel_cache_source *src, const char *path,
                       tessel_diag *diag)
{
    cache_header h;
    fill_header(t, src, &h);
    cache_array arr[TESSEL_MAX_ORDER + 1];
    unsigned narr = payload_arrays(t, &h, arr);
    tessel_checksum sum;
    tessel_checksum_init(&sum);
    for (unsigned i = 0; i < narr; i++)
        if (arr[i].bytes)
            tessel_checksum_update(&sum, arr[i].data, arr[i].bytes);
    int ok = 0;
    h.payload_bytes = payload_size(&h, &ok);
    h.payload_checksum = tessel_checksum_final(&sum);
    h.header_checksum = header_checksum(&h);
    tessel_outfile *f = NULL;
    int rc = tessel_outfile_open(path, t->alloc, &f, diag);
    if (rc)
        return rc;
    FILE *s = tessel_outfile_stream(f);
    int bad = fwrite(&h, sizeof(h), 1, s) != 1;
    for (unsigned i = 0; i < narr && !bad; i++)
        bad = arr[i].bytes && fwrite(arr[i].data, 1, arr[i].bytes, s) != arr[i].bytes;
    if (bad) {
        return tessel_outfile_abort_failed(&f, diag);
    }
    return tessel_outfile_commit(&f, diag);
}
