/* Atomic output files: write to PATH.tmp.XXXXXX, fsync, rename over PATH. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessel/base.h"

struct tessel_outfile {
    const tessel_allocator *alloc;
    FILE *stream;
    char *path;
    char *tmp_path;
    int failed; /* tessel_outfile_sync failed; the temporary file is gone */
};

static void outfile_release(tessel_outfile *f)
{
    if (f->stream)
        fclose(f->stream);
    tessel_dealloc(f->alloc, f->path);
    tessel_dealloc(f->alloc, f->tmp_path);
    tessel_dealloc(f->alloc, f);
}

int tessel_outfile_open(const char *path, const tessel_allocator *a, tessel_outfile **out,
                        tessel_diag *diag)
{
    *out = NULL;
    tessel_outfile *f = tessel_alloc(a, sizeof(*f));
    if (!f)
        return tessel_diag_set(diag, TESSEL_ENOMEM, path, 0, 0, NULL, "out of memory");
    memset(f, 0, sizeof(*f));
    f->alloc = a;
    size_t n = strlen(path);
    f->path = tessel_strdup(a, path);
    f->tmp_path = tessel_alloc(a, n + sizeof(".tmp.XXXXXX"));
    if (!f->path || !f->tmp_path) {
        outfile_release(f);
        return tessel_diag_set(diag, TESSEL_ENOMEM, path, 0, 0, NULL, "out of memory");
    }
    memcpy(f->tmp_path, path, n);
    memcpy(f->tmp_path + n, ".tmp.XXXXXX", sizeof(".tmp.XXXXXX"));
    int fd = mkstemp(f->tmp_path);
    if (fd < 0) {
        int err = errno;
        outfile_release(f);
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "cannot create output file: %s",
                               strerror(err));
    }
    /* mkstemp creates 0600; results are ordinary files others may read. */
    (void)fchmod(fd, 0644);
    f->stream = fdopen(fd, "wb");
    if (!f->stream) {
        int err = errno;
        close(fd);
        unlink(f->tmp_path);
        outfile_release(f);
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "cannot open output file: %s",
                               strerror(err));
    }
    *out = f;
    return TESSEL_OK;
}

FILE *tessel_outfile_stream(tessel_outfile *f)
{
    return f->stream;
}

/* Flushes, fsyncs and closes the temporary file; 0 or an errno. */
static int outfile_finish(tessel_outfile *f)
{
    if (!f->stream)
        return 0;
    int failed = ferror(f->stream) || fflush(f->stream) != 0;
    int err = failed ? errno : 0;
    if (!failed && fsync(fileno(f->stream)) != 0 && errno != EINVAL && errno != EROFS) {
        failed = 1;
        err = errno;
    }
    if (fclose(f->stream) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    f->stream = NULL;
    return failed ? (err ? err : EIO) : 0;
}

static int outfile_fail(tessel_outfile *f, int err, tessel_diag *diag)
{
    unlink(f->tmp_path);
    return tessel_diag_set(diag, TESSEL_EIO, f->path, 0, 0, NULL, "cannot write output file: %s",
                           strerror(err));
}

int tessel_outfile_sync(tessel_outfile *f, tessel_diag *diag)
{
    int err = outfile_finish(f);
    if (err) {
        f->failed = 1;
        return outfile_fail(f, err, diag);
    }
    return TESSEL_OK;
}

int tessel_outfile_commit(tessel_outfile **fp, tessel_diag *diag)
{
    tessel_outfile *f = *fp;
    *fp = NULL;
    int rc = TESSEL_OK;
    if (f->failed) {
        rc = tessel_diag_set(diag, TESSEL_EIO, f->path, 0, 0, NULL, "cannot write output file");
    } else {
        int err = outfile_finish(f);
        if (!err && rename(f->tmp_path, f->path) != 0)
            err = errno;
        if (err)
            rc = outfile_fail(f, err, diag);
    }
    outfile_release(f);
    return rc;
}

void tessel_outfile_abort(tessel_outfile **fp)
{
    if (!fp || !*fp)
        return;
    tessel_outfile *f = *fp;
    *fp = NULL;
    if (f->stream) {
        fclose(f->stream);
        f->stream = NULL;
    }
    unlink(f->tmp_path);
    outfile_release(f);
}

void tessel_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int tessel_read_full(int fd, void *dst, uint64_t n)
{
    unsigned char *p = dst;
    while (n > 0) {
        size_t want = n > (1u << 30) ? (1u << 30) : (size_t)n;
        ssize_t got = read(fd, p, want);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got == 0 ? TESSEL_ECORRUPT : TESSEL_EIO;
        p += got;
        n -= (uint64_t)got;
    }
    return TESSEL_OK;
}
