/* The lock on a sweep's output directory: one sweep, resume or merge
 * writes a directory at a time (issue 25 item 2). A record lock (fcntl)
 * on DIR/sweep.lock is held for the command's life; the kernel drops it
 * when the process ends, killed or not, so a stale lock file never blocks
 * anyone. The file holds who took it (pid, host, start time) so that the
 * refusal can name the holder. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sweep_internal.h"

/* The holder's record, one line, for the refusal ("pid 12 on host h,
 * sweep since 2026-01-01T00:00:00Z"); "unknown" while the holder is still
 * writing it. */
static void holder_text(int fd, char *buf, size_t n)
{
    char raw[512];
    ssize_t got = pread(fd, raw, sizeof(raw) - 1, 0);
    if (got <= 0) {
        snprintf(buf, n, "unknown");
        return;
    }
    raw[got] = '\0';
    unsigned long pid = 0;
    char host[256] = "?", since[64] = "?", what[32] = "?";
    if (sscanf(raw, "pid %lu host %255s started %63s command %31s", &pid, host, since, what) != 4) {
        snprintf(buf, n, "unknown");
        return;
    }
    snprintf(buf, n, "pid %lu on host %s, tessel %s since %s", pid, host, what, since);
}

static int lock_error(const char *dir, const char *path, tessel_diag *diag)
{
    return tessel_diag_set(diag, TESSEL_EWRITE, dir, 0, 0, "", "cannot lock the directory "
                           "(%s): %s", path, strerror(errno));
}

int sweep_lock_take(const char *dir, const char *command, int *fd_out, tessel_diag *diag)
{
    *fd_out = -1;
    char path[4096];
    if (sweep_join(path, sizeof(path), dir, "sweep.lock"))
        return tessel_diag_set(diag, TESSEL_ERANGE, dir, 0, 0, "", "directory name too long");
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0)
        return lock_error(dir, path, diag);
    struct flock fl;
    memset(&fl, 0, sizeof(fl));
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_SETLK, &fl) != 0) {
        int busy = errno == EACCES || errno == EAGAIN;
        /* A file system without record locks (some NFS mounts without a
         * lock manager) must not stop sweeps: they run unlocked there, as
         * before the lock existed. */
        if (errno == ENOLCK || errno == EOPNOTSUPP || errno == ENOSYS) {
            *fd_out = fd;
            return TESSEL_OK;
        }
        if (!busy) {
            int rc = lock_error(dir, path, diag);
            close(fd);
            return rc;
        }
        char holder[512];
        holder_text(fd, holder, sizeof(holder));
        close(fd);
        return tessel_diag_set(diag, TESSEL_EINVAL, dir, 0, 0, "", "is in use by another "
                               "tessel sweep, resume or merge (%s; lock file %s): wait for it "
                               "to end or stop it, then run this again", holder, path);
    }
    char host[256] = "unknown", since[64] = "unknown", rec[640];
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "unknown");
    host[sizeof(host) - 1] = '\0';
    for (char *h = host; *h; h++)
        if (*h == ' ' || *h == '\n')
            *h = '_';
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
    int len = snprintf(rec, sizeof(rec), "pid %ld host %s started %s command %s\n",
                       (long)getpid(), host, since, command);
    /* The record only names the holder: failing to write it does not
     * weaken the lock, so it is not an error. */
    if (ftruncate(fd, 0) == 0 && len > 0)
        (void)!pwrite(fd, rec, (size_t)len, 0);
    *fd_out = fd;
    return TESSEL_OK;
}

void sweep_lock_release(int fd)
{
    if (fd >= 0)
        close(fd); /* closing drops the record lock */
}
