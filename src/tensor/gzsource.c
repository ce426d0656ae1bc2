/* Gzip input for the text reader, inflated member by member with zlib's
 * inflate() (not gzread): gzread ignores whatever follows a member when it
 * is not another gzip header, so a damaged later member of a multi-member
 * .mtx.gz would silently shorten the tensor. Here every byte after a
 * member must start the next member (or be zero padding, which gzip(1)
 * accepts too); anything else is an error naming the member and offset. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "gzsource.h"


struct gz_source {
    const tessel_allocator *alloc;
    z_stream zs;
    unsigned char *in;
    int fd;
    int between;       /* a member ended; the next must begin (or input end) */
    int input_eof;
    uint64_t members;  /* members finished */
    uint64_t consumed; /* compressed bytes handed to inflate so far */
};

static voidpf gz_zalloc(voidpf opaque, uInt items, uInt size)
{
    return tessel_alloc_array((const tessel_allocator *)opaque, items, size);
}

static void gz_zfree(voidpf opaque, voidpf p)
{
    tessel_dealloc((const tessel_allocator *)opaque, p);
}

int gz_source_open(int fd, const tessel_allocator *a, gz_source **out)
{
    *out = NULL;
    gz_source *g = tessel_alloc(a, sizeof(*g));
    if (!g)
        return TESSEL_ENOMEM;
    memset(g, 0, sizeof(*g));
    g->alloc = a;
    g->fd = fd;
    g->in = tessel_alloc(a, GZ_IN_BYTES);
    g->zs.zalloc = gz_zalloc;
    g->zs.zfree = gz_zfree;
    g->zs.opaque = (voidpf)a;
    /* 15 + 16: a zlib window of 2^15 with a gzip wrapper only */
    if (!g->in || inflateInit2(&g->zs, 15 + 16) != Z_OK) {
        tessel_dealloc(a, g->in);
        tessel_dealloc(a, g);
        return TESSEL_ENOMEM;
    }
    *out = g;
    return TESSEL_OK;
}

void gz_source_close(gz_source *g)
{
    if (!g)
        return;
    inflateEnd(&g->zs);
    if (g->fd >= 0)
        close(g->fd);
    tessel_dealloc(g->alloc, g->in);
    tessel_dealloc(g->alloc, g);
}

/* Tops up the compressed input (keeping what inflate has not taken);
 * 0, or -errno. */
static int gz_fill(gz_source *g)
{
    if (g->input_eof)
        return 0;
    if (g->zs.avail_in)
        memmove(g->in, g->zs.next_in, g->zs.avail_in);
    g->zs.next_in = g->in;
    ssize_t n;
    do
        n = read(g->fd, g->in + g->zs.avail_in, GZ_IN_BYTES - g->zs.avail_in);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if (n == 0)
        g->input_eof = 1;
    g->zs.avail_in += (uInt)n;
    return 0;
}

/* After a member: 1 when the next member begins (inflate reset), 0 when
 * only zero padding remains to the end, -1 when other bytes follow. */
static int gz_next_member(gz_source *g, int *err)
{
    for (;;) {
        if (g->zs.avail_in < 2 && !g->input_eof && (*err = gz_fill(g)) != 0)
            return -1;
        if (g->zs.avail_in >= 2 && g->zs.next_in[0] == 0x1f && g->zs.next_in[1] == 0x8b) {
            inflateReset(&g->zs);
            g->between = 0;
            return 1;
        }
        while (g->zs.avail_in && g->zs.next_in[0] == 0) {
            g->zs.next_in++;
            g->zs.avail_in--;
            g->consumed++;
        }
        if (g->zs.avail_in >= 2 || (g->zs.avail_in && g->input_eof))
            return -1;
        if (!g->zs.avail_in && g->input_eof)
            return 0;
        if ((*err = gz_fill(g)) != 0)
            return -1;
    }
}

long gz_source_read(gz_source *g, void *dst, size_t want, const gz_context *c,
                    tessel_diag *diag)
{
    g->zs.next_out = dst;
    g->zs.avail_out = (uInt)want;
    while (g->zs.avail_out == want) {
        int err = 0;
        if (g->between) {
            int next = gz_next_member(g, &err);
            if (next == 0)
                return 0;
            if (next < 0)
                return err ? tessel_diag_set(diag, TESSEL_EIO, c->name, c->line, 0, NULL,
                                             "read failed: %s", strerror(-err))
                           : tessel_diag_set(diag, TESSEL_EIO, c->name, c->line, 0, NULL,
                                             "damaged compressed data after gzip member %llu "
                                             "(compressed byte %llu): not a gzip member",
                                             (unsigned long long)g->members,
                                             (unsigned long long)g->consumed);
        }
        if (!g->zs.avail_in && (err = gz_fill(g)) != 0)
            return tessel_diag_set(diag, TESSEL_EIO, c->name, c->line, 0, NULL,
                                   "read failed: %s", strerror(-err));
        if (!g->zs.avail_in && g->input_eof) {
            *c->truncated = 1; /* input ended inside a member */
            return 0;
        }
        uInt before = g->zs.avail_in;
        int z = inflate(&g->zs, Z_NO_FLUSH);
        g->consumed += before - g->zs.avail_in;
        if (z == Z_STREAM_END) {
            g->members++;
            g->between = 1;
        } else if (z != Z_OK && z != Z_BUF_ERROR) {
            return tessel_diag_set(diag, z == Z_MEM_ERROR ? TESSEL_ENOMEM : TESSEL_EIO, c->name,
                                   c->line, 0, NULL,
                                   "corrupt compressed data in gzip member %llu (compressed "
                                   "byte %llu)%s%s",
                                   (unsigned long long)g->members + 1,
                                   (unsigned long long)g->consumed,
                                   g->zs.msg ? ": " : "", g->zs.msg ? g->zs.msg : "");
        }
    }
    return (long)(want - g->zs.avail_out);
}
