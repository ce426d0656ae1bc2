/* Statistics part files (.tpart): one tessel_stats_part, so shards summarised
 * on many machines merge on one (tessel stats --merge).
 *
 * Layout (little-endian, as .tstat; all fields u64 unless noted):
 *   magic "TESSELP\n" (8 bytes), version (u32), header size (u32),
 *   byte-order mark 0x01020304 (u32), flags (u32, 0), order (u32), padding
 *   (u32, 0), dims[8], tile[8] (entries past the order 0), nnz, shard,
 *   shards, row_begin, row_end, tile pairs n_t, row pairs n_r, source
 *   length, field (16 bytes), symmetry (16 bytes), payload checksum, header
 *   checksum (of everything before it).
 *   payload: tile values[n_t], tile counts[n_t], row values[n_r], row
 *   counts[n_r], mode_count[m][dims[m]] for m = 1..order-1, source bytes.
 * Version 1 (tessel before 3-mode streaming) was 2-D only: dims[2] and
 * tile[2] without an order; it is refused with a message naming both
 * versions. The reader checks sizes before allocating, both checksums,
 * ascending values and that tiles, rows and every mode's slices each hold
 * nnz entries. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessel/stats.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .tpart format is little-endian"
#endif

#define PART_MAGIC "TESSELP\n"
#define PART_VERSION 2u
#define PART_BOM 0x01020304u
#define PART_SOURCE_MAX 4096u

typedef struct part_header {
    char magic[8];
    uint32_t version, header_bytes, bom, flags;
    uint32_t order, padding;
    uint64_t dims[TESSEL_MAX_ORDER], tile[TESSEL_MAX_ORDER];
    uint64_t nnz, shard, shards, row_begin, row_end;
    uint64_t ntile, nrow, source_len;
    char field[16], symmetry[16];
    uint64_t payload_sum;
    uint64_t header_sum;
} part_header;

static uint64_t sum_of(const void *data, size_t n)
{
    tessel_checksum c;
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, data, n);
    return tessel_checksum_final(&c);
}

/* 1 when the bytes could not all be written. */
static int put(FILE *f, const void *data, size_t bytes)
{
    return bytes && fwrite(data, 1, bytes, f) != bytes;
}

int tessel_stats_part_write(const char *path, const tessel_stats_part *p, tessel_diag *diag)
{
    uint64_t *tv = NULL, *tc = NULL, *rv = NULL, *rcnt = NULL, nt = 0, nr = 0;
    int rc = tessel_occupancy_acc_pairs(p->tiles, &tv, &tc, &nt, diag);
    if (!rc)
        rc = tessel_occupancy_acc_pairs(p->rows, &rv, &rcnt, &nr, diag);
    part_header h;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, PART_MAGIC, 8);
    h.version = PART_VERSION;
    h.header_bytes = sizeof(h);
    h.bom = PART_BOM;
    h.order = p->order;
    memcpy(h.dims, p->dims, p->order * sizeof(uint64_t));
    memcpy(h.tile, p->tile, p->order * sizeof(uint64_t));
    h.nnz = p->nnz;
    h.shard = p->shard;
    h.shards = p->shards;
    h.row_begin = p->row_begin;
    h.row_end = p->row_end;
    h.ntile = nt;
    h.nrow = nr;
    h.source_len = strnlen(p->source, PART_SOURCE_MAX);
    memcpy(h.field, p->field, sizeof(h.field));
    memcpy(h.symmetry, p->symmetry, sizeof(h.symmetry));
    /* The payload's checksum goes in the header, so it is taken first. */
    enum { PIECES = 5 + TESSEL_MAX_ORDER - 1 };
    const void *piece[PIECES] = { tv, tc, rv, rcnt };
    uint64_t bytes[PIECES] = { nt * 8, nt * 8, nr * 8, nr * 8 };
    int np = 4;
    for (unsigned m = 1; m < p->order; m++, np++) {
        piece[np] = p->mode_count[m];
        bytes[np] = p->dims[m] * 8;
    }
    piece[np] = p->source;
    bytes[np++] = h.source_len;
    tessel_checksum c;
    tessel_checksum_init(&c);
    for (int i = 0; i < np; i++)
        if (bytes[i]) /* empty arrays are NULL */
            tessel_checksum_update(&c, piece[i], bytes[i]);
    h.payload_sum = tessel_checksum_final(&c);
    h.header_sum = sum_of(&h, offsetof(part_header, header_sum));
    tessel_outfile *out = NULL;
    if (!rc)
        rc = tessel_outfile_open(path, p->alloc, &out, diag);
    if (!rc) {
        FILE *f = tessel_outfile_stream(out);
        int bad = put(f, &h, sizeof(h));
        for (int i = 0; i < np && !bad; i++)
            bad = put(f, piece[i], bytes[i]);
        rc = bad ? tessel_outfile_abort_failed(&out, diag) : tessel_outfile_commit(&out, diag);
    }
    tessel_dealloc(p->alloc, tv);
    tessel_dealloc(p->alloc, tc);
    tessel_dealloc(p->alloc, rv);
    tessel_dealloc(p->alloc, rcnt);
    return rc;
}

static int corrupt(tessel_diag *diag, const char *path, const char *field, const char *what)
{
    return tessel_diag_set(diag, TESSEL_ECORRUPT, path, 0, 0, field,
                           "not a valid statistics part: %s", what);
}

/* The header's own checks: magic, version, sizes against the file's. */
static int check_header(const part_header *h, uint64_t file_bytes, const char *path,
                        tessel_diag *diag)
{
    if (memcmp(h->magic, PART_MAGIC, 8) != 0)
        return corrupt(diag, path, "magic", "it does not start with TESSELP");
    if (h->version != PART_VERSION)
        return tessel_diag_set(diag, TESSEL_ECORRUPT, path, 0, 0, "version",
                               "statistics part version %u; this tessel reads version %u "
                               "(summarise the shard again with this tessel)",
                               h->version, PART_VERSION);
    if (h->header_bytes != sizeof(*h) || h->bom != PART_BOM || h->flags != 0)
        return corrupt(diag, path, "header", "header size, byte order or flags");
    if (h->header_sum != sum_of(h, offsetof(part_header, header_sum)))
        return corrupt(diag, path, "header", "header checksum mismatch");
    int shape_ok = h->order >= 1 && h->order <= TESSEL_MAX_ORDER && h->padding == 0;
    uint64_t slices = 0; /* counters of modes 1..order-1 */
    for (unsigned m = 0; shape_ok && m < TESSEL_MAX_ORDER; m++) {
        if (m < h->order)
            shape_ok = h->dims[m] <= TESSEL_MAX_DIM && h->tile[m] != 0;
        else
            shape_ok = h->dims[m] == 0 && h->tile[m] == 0;
        if (m >= 1 && m < h->order)
            slices += h->dims[m];
    }
    if (!shape_ok || h->source_len > PART_SOURCE_MAX || !memchr(h->field, 0, 16) ||
        !memchr(h->symmetry, 0, 16) || h->shard == 0 || h->shard > h->shards ||
        h->row_begin > h->row_end || h->row_end > h->dims[0] || h->ntile > h->nnz ||
        h->nrow > h->dims[0])
        return corrupt(diag, path, "header", "a field is out of range");
    if (h->ntile > file_bytes / 16 || h->nrow > file_bytes / 16)
        return corrupt(diag, path, "payload", "the file size does not match the header");
    /* no overflow: ntile and nrow are below file_bytes / 16, slices below
     * 8 * 2^32 */
    uint64_t payload = (2 * h->ntile + 2 * h->nrow + slices) * 8 + h->source_len;
    if (file_bytes != sizeof(*h) + payload)
        return corrupt(diag, path, "payload", "the file size does not match the header");
    return TESSEL_OK;
}

/* Adds n (value, count) pairs to acc, checking they ascend; *nnz += sum. */
static int add_pairs(tessel_occupancy_acc *acc, const uint64_t *v, const uint64_t *c, uint64_t n,
                     uint64_t *nnz, tessel_diag *diag)
{
    for (uint64_t i = 0; i < n; i++) {
        if (v[i] == 0 || c[i] == 0 || (i && v[i] <= v[i - 1]))
            return TESSEL_ECORRUPT;
        int rc = tessel_occupancy_acc_add(acc, v[i], c[i], diag);
        if (rc)
            return rc;
        *nnz += v[i] * c[i];
    }
    return TESSEL_OK;
}

/* The part from a checked header and payload. */
static int build(const part_header *h, const uint64_t *w, const tessel_allocator *a,
                 const char *path, tessel_stats_part **out, tessel_diag *diag)
{
    tessel_stats_part *p = NULL;
    int rc = tessel_stats_part_create(h->order, h->dims, h->tile, a, &p, diag);
    if (rc)
        return rc;
    p->nnz = h->nnz;
    p->shard = h->shard;
    p->shards = h->shards;
    p->row_begin = h->row_begin;
    p->row_end = h->row_end;
    memcpy(p->field, h->field, 16);
    memcpy(p->symmetry, h->symmetry, 16);
    const uint64_t *tv = w, *tc = tv + h->ntile, *rv = tc + h->ntile, *rcnt = rv + h->nrow;
    const uint64_t *slices = rcnt + h->nrow;
    uint64_t tn = 0, rn = 0;
    rc = add_pairs(p->tiles, tv, tc, h->ntile, &tn, diag);
    if (!rc)
        rc = add_pairs(p->rows, rv, rcnt, h->nrow, &rn, diag);
    if (!rc && (tn != h->nnz || rn != h->nnz))
        rc = TESSEL_ECORRUPT;
    for (unsigned m = 1; m < h->order; m++) {
        uint64_t cn = 0;
        memcpy(p->mode_count[m], slices, h->dims[m] * 8);
        for (uint64_t c = 0; c < h->dims[m]; c++)
            cn += slices[c];
        slices += h->dims[m];
        if (cn != h->nnz)
            rc = rc ? rc : TESSEL_ECORRUPT;
    }
    memcpy(p->source, slices, h->source_len);
    p->source[h->source_len] = '\0';
    if (rc) {
        tessel_stats_part_free(&p);
        return rc == TESSEL_ECORRUPT
                   ? corrupt(diag, path, "payload", "occupancies or counts do not add up")
                   : rc;
    }
    *out = p;
    return TESSEL_OK;
}

int tessel_stats_part_read(const char *path, const tessel_allocator *a, tessel_stats_part **out,
                           tessel_diag *diag)
{
    *out = NULL;
    int fd = tessel_input_open(path, diag);
    if (fd < 0)
        return fd;
    struct stat st;
    part_header h;
    uint64_t *payload = NULL;
    /* The magic and version first: a version 1 file's header is shorter. */
    size_t lead = offsetof(part_header, header_bytes);
    memset(&h, 0, sizeof(h));
    int rc = fstat(fd, &st) != 0 || (uint64_t)st.st_size < lead
                 ? corrupt(diag, path, "header", "the file is shorter than a header")
                 : TESSEL_OK;
    if (!rc && tessel_read_full(fd, &h, lead))
        rc = corrupt(diag, path, "header", "cannot read the header");
    if (!rc && memcmp(h.magic, PART_MAGIC, 8) == 0 && h.version != PART_VERSION)
        rc = check_header(&h, (uint64_t)st.st_size, path, diag);
    if (!rc && (uint64_t)st.st_size < sizeof(h))
        rc = corrupt(diag, path, "header", "the file is shorter than a header");
    if (!rc && tessel_read_full(fd, (char *)&h + lead, sizeof(h) - lead))
        rc = corrupt(diag, path, "header", "cannot read the header");
    if (!rc)
        rc = check_header(&h, (uint64_t)st.st_size, path, diag);
    uint64_t bytes = rc ? 0 : (uint64_t)st.st_size - sizeof(h);
    if (!rc) {
        payload = tessel_alloc(a, bytes + 8);
        if (!payload)
            rc = tessel_diag_oom(diag, path, "reading a statistics part", (size_t)bytes);
    }
    if (!rc && tessel_read_full(fd, payload, bytes))
        rc = corrupt(diag, path, "payload", "the file ends early");
    if (!rc && sum_of(payload, bytes) != h.payload_sum)
        rc = corrupt(diag, path, "payload", "payload checksum mismatch");
    if (!rc)
        rc = build(&h, payload, a, path, out, diag);
    tessel_dealloc(a, payload);
    close(fd);
    return rc;
}
