/* Binary cache load speed: tessel_cache_read of a large cache written with
 * tessel_cache_write, best of 5, the file in the page cache; beside a plain
 * read(2) of the same file into one buffer (the floor for any loader).
 *
 * usage: bench_cache [--nnz N] [--size N] [DIR]
 * (a synthetic uniform matrix, default 20M entries on 2M x 2M; the cache
 * file goes to DIR, default /tmp, and is removed afterwards). Skips with a
 * message when the cache functions are not implemented. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"

#define RUNS 5

typedef struct cache_ctx {
    const char *path;
    uint64_t bytes;
    void *buf;
    int rc;
} cache_ctx;

static int run_load(void *p)
{
    cache_ctx *c = p;
    tessel_tensor *t = NULL;
    c->rc = tessel_cache_read(c->path, NULL, NULL, &t, NULL);
    tessel_tensor_free(&t);
    return c->rc;
}

static int run_read(void *p)
{
    cache_ctx *c = p;
    int fd = open(c->path, O_RDONLY);
    if (fd < 0)
        return -1;
    uint64_t done = 0;
    while (done < c->bytes) {
        ssize_t n = read(fd, (char *)c->buf + done, c->bytes - done);
        if (n <= 0)
            break;
        done += (uint64_t)n;
    }
    close(fd);
    return done == c->bytes ? 0 : -1;
}

static void summary_skip(const char *why)
{
    printf("binary cache: skipped (%s)\n", why);
    printf("SUMMARY|cache load|skipped: %s|GB/s, no target\n", why);
}

int main(int argc, char **argv)
{
    uint64_t nnz = 20000000, size = 2000000;
    const char *dir = "/tmp";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--nnz") == 0 && i + 1 < argc)
            nnz = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = strtoull(argv[++i], NULL, 10);
        else
            dir = argv[i];
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/bench_cache-%ld.tsl", dir, (long)getpid());
    tessel_tensor *t = NULL;
    if (bench_synthetic(BENCH_SYNTH_UNIFORM, size, nnz, 11, NULL, &t)) {
        fprintf(stderr, "bench_cache: could not build the synthetic matrix\n");
        return 1;
    }
    tessel_diag d;
    tessel_diag_clear(&d);
    double t0 = bench_now();
    int rc = tessel_cache_write(t, NULL, path, &d);
    double t_write = bench_now() - t0;
    uint64_t tensor_nnz = t->nnz;
    tessel_tensor_free(&t);
    if (rc == TESSEL_EUNSUPPORTED) {
        summary_skip("tessel_cache_write is not implemented");
        return 0;
    }
    if (rc) {
        fprintf(stderr, "bench_cache: write failed: %s\n", d.message);
        return 1;
    }
    struct stat st;
    cache_ctx c = { path, 0, NULL, 0 };
    if (stat(path, &st) == 0)
        c.bytes = (uint64_t)st.st_size;
    c.buf = malloc(c.bytes ? c.bytes : 1);
    if (!c.buf) {
        unlink(path);
        return 1;
    }
    memset(c.buf, 0, c.bytes);
    double t_load = bench_best_of(RUNS, run_load, &c);
    double t_read = bench_best_of(RUNS, run_read, &c);
    free(c.buf);
    unlink(path);
    if (t_load < 0) {
        if (c.rc == TESSEL_EUNSUPPORTED)
            summary_skip("tessel_cache_read is not implemented");
        else
            fprintf(stderr, "bench_cache: read failed (%s)\n", tessel_strerror(c.rc));
        return c.rc == TESSEL_EUNSUPPORTED ? 0 : 1;
    }
    double gb = (double)c.bytes / 1e9;
    printf("Binary cache load (best of %d; GB = 10^9 bytes; file in the page cache)\n", RUNS);
    printf("%-22s %12s %10s %10s %10s %10s %10s %9s\n", "tensor", "nnz", "file MB", "write s",
           "load s", "load GB/s", "read(2) s", "load/read");
    printf("%-22s %12llu %10.1f %10.3f %10.4f %10.2f %10.4f %8.1f%%\n", "synthetic-uniform",
           (unsigned long long)tensor_nnz, gb * 1e3, t_write, t_load, gb / t_load, t_read,
           100 * t_read / t_load);
    printf("SUMMARY|cache load (%.0f MB)|%.2f GB/s (%.0f%% of read(2) at %.2f GB/s)|GB/s, no "
           "target\n",
           gb * 1e3, gb / t_load, 100 * t_read / t_load, gb / t_read);
    return 0;
}
