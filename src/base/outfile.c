/* Atomic output files: write to PATH.tmp.XXXXXX, fsync, rename over PATH.
 * Only a regular file (or nothing) at PATH is ever replaced. */
#include <errno.h>
#include <fcntl.h>
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

/* What lies at path: 0 nothing or a regular file, else a TESSEL_EINVAL
 * naming the kind, for a rename would replace (and destroy) it. lstat, so
 * a symlink is seen as one and never followed. */
static int target_check(const char *path, tessel_diag *diag)
{
    struct stat st;
    if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
        return TESSEL_OK;
    const char *kind = S_ISLNK(st.st_mode)    ? "a symbolic link"
                       : S_ISDIR(st.st_mode)  ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, NULL,
                           "refusing to write: the output path is %s, which writing would "
                           "replace (give a regular file's path, or - for standard output "
                           "where the command allows it)",
                           kind);
}

/* mkdir -p of dir (no trailing slash; modified in place and restored);
 * 0 or an errno. */
static int dirs_make(char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0)
        return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    char *slash = strrchr(dir, '/');
    int err = 0;
    if (slash && slash != dir) {
        *slash = '\0';
        err = dirs_make(dir);
        *slash = '/';
    }
    if (!err && mkdir(dir, 0777) != 0 && errno != EEXIST)
        err = errno;
    return err;
}

/* Creates the missing directories above path (mkdir -p of its dirname);
 * 0 or an errno. */
static int parents_make(char *path)
{
    char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    *slash = '\0';
    int err = dirs_make(path);
    *slash = '/';
    return err;
}

int tessel_dirs_make(const char *dir, const tessel_allocator *a, tessel_diag *diag)
{
    char *copy = tessel_strdup(a, dir);
    if (!copy)
        return tessel_diag_oom(diag, dir, "creating an output directory", strlen(dir) + 1);
    size_t n = strlen(copy);
    while (n > 1 && copy[n - 1] == '/')
        copy[--n] = '\0';
    int err = dirs_make(copy);
    tessel_dealloc(a, copy);
    if (err == ENOTDIR)
        return tessel_diag_set(diag, TESSEL_EINVAL, dir, 0, 0, NULL,
                               "cannot create output directory: it or a parent is not a "
                               "directory");
    if (err)
        return tessel_diag_set(diag, TESSEL_EWRITE, dir, 0, 0, NULL,
                               "cannot create output directory: %s", strerror(err));
    return TESSEL_OK;
}

int tessel_output_prepare(const char *path, const tessel_allocator *a, tessel_diag *diag)
{
    int rc = target_check(path, diag);
    if (rc)
        return rc;
    char *dir = tessel_strdup(a, path);
    if (!dir)
        return tessel_diag_oom(diag, path, "checking an output path", strlen(path) + 1);
    int err = parents_make(dir);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir ? 1 : 0] = '\0';
    if (!err && access(slash ? dir : ".", W_OK) != 0)
        err = errno;
    tessel_dealloc(a, dir);
    if (err == ENOTDIR) /* a file where a directory should be: the caller's mistake */
        return tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, NULL,
                               "cannot write output file here: a file is in the way of its "
                               "directory");
    if (err)
        return tessel_diag_set(diag, TESSEL_EWRITE, path, 0, 0, NULL,
                               "cannot write output file here: %s", strerror(err));
    return TESSEL_OK;
}

int tessel_outfile_open(const char *path, const tessel_allocator *a, tessel_outfile **out,
                        tessel_diag *diag)
{
    *out = NULL;
    int rc = target_check(path, diag);
    if (rc)
        return rc;
    tessel_outfile *f = tessel_alloc(a, sizeof(*f));
    if (!f)
        return tessel_diag_oom(diag, path, "opening an output file", sizeof(*f));
    memset(f, 0, sizeof(*f));
    f->alloc = a;
    size_t n = strlen(path);
    f->path = tessel_strdup(a, path);
    f->tmp_path = tessel_alloc(a, n + sizeof(".tmp.XXXXXX"));
    if (!f->path || !f->tmp_path) {
        size_t asked = f->path ? n + sizeof(".tmp.XXXXXX") : n + 1;
        outfile_release(f);
        return tessel_diag_oom(diag, path, "opening an output file", asked);
    }
    memcpy(f->tmp_path, path, n);
    memcpy(f->tmp_path + n, ".tmp.XXXXXX", sizeof(".tmp.XXXXXX"));
    int fd = mkstemp(f->tmp_path);
    int err = 0;
    if (fd < 0) {
        err = errno;
        outfile_release(f);
        return tessel_diag_set(diag, TESSEL_EWRITE, path, 0, 0, NULL,
                               "cannot create output file: %s", strerror(err));
    }
    /* mkstemp creates 0600; results are ordinary files others may read. */
    (void)fchmod(fd, 0644);
    f->stream = fdopen(fd, "wb");
    if (!f->stream) {
        err = errno;
        close(fd);
        unlink(f->tmp_path);
        outfile_release(f);
        return tessel_diag_set(diag, TESSEL_EWRITE, path, 0, 0, NULL,
                               "cannot open output file: %s", strerror(err));
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
    return tessel_diag_set(diag, TESSEL_EWRITE, f->path, 0, 0, NULL,
                           "cannot write output file: %s", strerror(err));
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
        rc = tessel_diag_set(diag, TESSEL_EWRITE, f->path, 0, 0, NULL, "cannot write output file");
    } else {
        int err = outfile_finish(f);
        /* checked again: something may have appeared at path meanwhile */
        rc = err ? TESSEL_OK : target_check(f->path, diag);
        if (rc) {
            unlink(f->tmp_path);
            outfile_release(f);
            return rc;
        }
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

int tessel_outfile_abort_failed(tessel_outfile **fp, tessel_diag *diag)
{
    int err = errno ? errno : EIO;
    const char *path = *fp ? (*fp)->path : NULL;
    tessel_diag_set(diag, TESSEL_EWRITE, path, 0, 0, NULL, "cannot write output file: %s",
                    strerror(err));
    tessel_outfile_abort(fp);
    return TESSEL_EWRITE;
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

int tessel_input_open(const char *path, tessel_diag *diag)
{
    /* O_NONBLOCK: opening a FIFO without a writer must not wait */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "cannot open: %s",
                               strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int dir = S_ISDIR(st.st_mode);
        close(fd);
        return tessel_diag_set(diag, dir ? TESSEL_EIO : TESSEL_EINVAL, path, 0, 0, NULL,
                               dir ? "cannot read: is a directory"
                                   : "cannot read: not a regular file (a FIFO, device or "
                                     "socket); tessel reads inputs from files");
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
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
