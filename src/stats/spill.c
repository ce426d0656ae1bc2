/* Streamed statistics with one text pass for several blocks: every entry
 * of the blocks' rows is appended, in the order the single-pass reader
 * hands it to its builder, to its block's region of one spill file (16 B
 * per entry: row, column, value), through one small buffer per block; each
 * block's tensor is then built from its region by the same coordinate
 * builder, so its rows are the ones tessel_mtx_read_rows /
 * tessel_tns_read_rows would give, bit for bit. A region is sized by the
 * counting pass's entries (an upper bound), so regions never overlap. The
 * spill file is unlinked as soon as it is created: nothing is left behind,
 * whatever happens. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spill.h"

/* One record: row and column (u32 each), then the value (f64). */
#define SPILL_RECORD 16u

typedef struct spill_block {
    unsigned char *buf; /* SPILL_BUFFER bytes */
    size_t used;
    uint64_t region;    /* byte offset of the block's region */
    uint64_t written;   /* bytes written to the region */
    uint64_t entries;   /* records so far */
} spill_block;

typedef struct spill_set {
    int fd;
    const char *path;   /* the input, for messages */
    const uint64_t *bounds; /* n + 1 row bounds */
    const uint64_t *room;   /* n counted entries */
    unsigned n;
    spill_block *blk;
    tessel_diag *diag;
} spill_set;

static int spill_io_error(const spill_set *s, const char *what)
{
    return tessel_diag_set(s->diag, TESSEL_EIO, s->path, 0, 0, NULL, "%s the spill file: %s",
                           what, strerror(errno));
}

static int flush_block(spill_set *s, spill_block *b)
{
    size_t done = 0;
    while (done < b->used) {
        ssize_t put = pwrite(s->fd, b->buf + done, b->used - done,
                             (off_t)(b->region + b->written + done));
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return spill_io_error(s, "writing");
        done += (size_t)put;
    }
    b->written += b->used;
    b->used = 0;
    return TESSEL_OK;
}

/* tessel_entry_sink: the entry into its block's buffer (rows outside the
 * blocks are skipped). */
static int spill_entry(void *ctx, const uint32_t *coords, double value)
{
    spill_set *s = ctx;
    uint64_t row = coords[0];
    if (row < s->bounds[0] || row >= s->bounds[s->n])
        return TESSEL_OK;
    unsigned lo = 0, hi = s->n; /* the block k with bounds[k] <= row < bounds[k + 1] */
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (s->bounds[mid] <= row)
            lo = mid;
        else
            hi = mid;
    }
    spill_block *b = &s->blk[lo];
    if (b->entries == s->room[lo])
        return tessel_diag_set(s->diag, TESSEL_EIO, s->path, 0, 0, NULL,
                               "the file changed while it was streamed (rows %llu..%llu hold "
                               "more entries than counted)",
                               (unsigned long long)s->bounds[lo],
                               (unsigned long long)s->bounds[lo + 1] - 1);
    if (b->used + SPILL_RECORD > SPILL_BUFFER) {
        int rc = flush_block(s, b);
        if (rc)
            return rc;
    }
    memcpy(b->buf + b->used, &coords[0], 4);
    memcpy(b->buf + b->used + 4, &coords[1], 4);
    memcpy(b->buf + b->used + 8, &value, 8);
    b->used += SPILL_RECORD;
    b->entries++;
    return TESSEL_OK;
}

/* Block k's tensor from its region, through its buffer. */
static int build_block(spill_set *s, unsigned k, const tessel_entry_info *info,
                       const tessel_load_options *opt, const tessel_allocator *a,
                       tessel_tensor **out)
{
    spill_block *b = &s->blk[k];
    tessel_coo_builder *cb = NULL;
    int rc = tessel_coo_builder_create(2, info->dims, info->has_values, a, &cb, s->diag);
    if (!rc && b->entries && tessel_coo_builder_reserve(cb, b->entries) != TESSEL_OK)
        rc = tessel_diag_oom(s->diag, s->path, "reserving a streamed block's entries",
                             (size_t)(b->entries * SPILL_RECORD));
    for (uint64_t at = 0; !rc && at < b->written;) {
        size_t n = b->written - at < SPILL_BUFFER ? (size_t)(b->written - at) : SPILL_BUFFER;
        ssize_t got = pread(s->fd, b->buf, n, (off_t)(b->region + at));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0 || (size_t)got % SPILL_RECORD) {
            rc = spill_io_error(s, "reading");
            break;
        }
        for (size_t off = 0; off < (size_t)got && !rc; off += SPILL_RECORD) {
            uint32_t c[2];
            double v;
            memcpy(&c[0], b->buf + off, 4);
            memcpy(&c[1], b->buf + off + 4, 4);
            memcpy(&v, b->buf + off + 8, 8);
            if (tessel_coo_builder_add(cb, c, v) != TESSEL_OK)
                rc = tessel_diag_set(s->diag, TESSEL_EIO, s->path, 0, 0, NULL,
                                     "the file changed while it was streamed (an entry "
                                     "outside its extents)");
        }
        at += (uint64_t)got;
    }
    if (!rc)
        rc = tessel_coo_builder_finish(cb, opt && opt->drop_zeros ? TESSEL_BUILD_DROP_ZEROS : 0,
                                       out, s->diag);
    tessel_coo_builder_free(&cb);
    if (!rc) {
        snprintf((*out)->field, sizeof((*out)->field), "%s", info->field);
        snprintf((*out)->symmetry, sizeof((*out)->symmetry), "%s", info->symmetry);
    }
    return rc;
}

/* A spill file in dir, already unlinked. */
static int open_spill(const char *dir, const char *input, const tessel_allocator *a,
                      tessel_diag *diag)
{
    size_t len = strlen(dir) + sizeof("/tessel-spill-XXXXXX");
    char *name = tessel_alloc(a, len);
    if (!name)
        return tessel_diag_oom(diag, input, "naming the spill file", len);
    snprintf(name, len, "%s/tessel-spill-XXXXXX", dir);
    int fd = mkstemp(name);
    if (fd < 0)
        fd = tessel_diag_set(diag, TESSEL_EIO, input, 0, 0, "spill-dir",
                             "cannot create a spill file in %s: %s", dir, strerror(errno));
    else
        unlink(name);
    tessel_dealloc(a, name);
    return fd;
}

int stream_spill_blocks(tessel_stats_part *p, const char *path, const tessel_load_options *opt,
                        const char *dir, const uint64_t *bounds, const uint64_t *room,
                        unsigned n, const tessel_allocator *a, tessel_diag *diag)
{
    spill_set s = { -1, path, bounds, room, n, NULL, diag };
    s.blk = tessel_alloc_array(a, n, sizeof(*s.blk));
    if (!s.blk)
        return tessel_diag_oom(diag, path, "the spill buffers", (size_t)n * sizeof(*s.blk));
    memset(s.blk, 0, (size_t)n * sizeof(*s.blk));
    int rc = TESSEL_OK;
    uint64_t region = 0;
    for (unsigned k = 0; k < n && !rc; k++) {
        s.blk[k].region = region;
        region += room[k] * SPILL_RECORD;
        if (!(s.blk[k].buf = tessel_alloc(a, SPILL_BUFFER)))
            rc = tessel_diag_oom(diag, path, "the spill buffers", SPILL_BUFFER);
    }
    if (!rc && (s.fd = open_spill(dir, path, a, diag)) < 0)
        rc = s.fd;
    tessel_entry_info info;
    memset(&info, 0, sizeof(info));
    if (!rc)
        rc = tessel_file_kind_of(path) == TESSEL_FILE_TNS
                 ? tessel_tns_for_each_entry(path, opt, a, spill_entry, &s, &info, diag)
                 : tessel_mtx_for_each_entry(path, opt, a, spill_entry, &s, &info, diag);
    for (unsigned k = 0; k < n && !rc; k++)
        rc = flush_block(&s, &s.blk[k]);
    if (!rc && (info.order != 2 || info.dims[0] != p->dims[0] || info.dims[1] != p->dims[1]))
        rc = tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL,
                             "the file changed while it was streamed (other extents)");
    for (unsigned k = 0; k < n && !rc; k++) {
        tessel_tensor *m = NULL;
        rc = build_block(&s, k, &info, opt, a, &m);
        if (!rc)
            rc = tessel_stats_part_add(p, m, bounds[k], bounds[k + 1], diag);
        if (!rc && !p->field[0]) {
            snprintf(p->field, sizeof(p->field), "%s", m->field);
            snprintf(p->symmetry, sizeof(p->symmetry), "%s", m->symmetry);
        }
        tessel_tensor_free(&m);
    }
    if (s.fd >= 0)
        close(s.fd);
    for (unsigned k = 0; k < n; k++)
        tessel_dealloc(a, s.blk[k].buf);
    tessel_dealloc(a, s.blk);
    return rc;
}
