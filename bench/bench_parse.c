/* Matrix Market parse throughput: tessel_tensor_read_mtx on each file
 * given, against `wc -l` on the same file in the same run (the cheapest
 * pass over the bytes there is), best of 3 each, files in the page cache.
 *
 * usage: bench_parse FILE.mtx...
 * Prints one row per file and SUMMARY lines for bench/run.sh. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define RUNS 3
#define TARGET_MBS 200.0
#define TARGET_WC_SHARE 0.25

extern char **environ;

typedef struct parse_ctx {
    const char *path;
    const void *data; /* for the in-memory variant */
    size_t size;
    uint64_t nnz;
} parse_ctx;

static int run_read(void *p)
{
    parse_ctx *c = p;
    tessel_tensor *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_tensor_read_mtx(c->path, NULL, NULL, &t, &d);
    if (rc) {
        fprintf(stderr, "bench_parse: %s: %s\n", c->path, d.message);
        return rc;
    }
    c->nnz = t->nnz;
    tessel_tensor_free(&t);
    return 0;
}

static int run_parse_memory(void *p)
{
    parse_ctx *c = p;
    tessel_tensor *t = NULL;
    int rc = tessel_tensor_parse_mtx(c->path, c->data, c->size, NULL, NULL, &t, NULL);
    tessel_tensor_free(&t);
    return rc;
}

/* `wc -l FILE > /dev/null` as a child process, waited for. */
static int run_wc(void *p)
{
    const parse_ctx *c = p;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    char *argv[] = { "wc", "-l", (char *)c->path, NULL };
    pid_t pid;
    int rc = posix_spawnp(&pid, "wc", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return 0;
}

/* The process spawn alone (`true`), to show how much of wc's time on a
 * small file is start-up. */
static int run_true(void *p)
{
    (void)p;
    pid_t pid;
    char *argv[] = { "true", NULL };
    if (posix_spawnp(&pid, "true", NULL, NULL, argv, environ) != 0)
        return -1;
    int status = 0;
    return waitpid(pid, &status, 0) < 0 ? -1 : 0;
}

static void *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat st;
    void *buf = NULL;
    if (fstat(fileno(f), &st) == 0 && (buf = malloc((size_t)st.st_size + 1)) != NULL &&
        fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = buf ? (size_t)st.st_size : 0;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.mtx...\n", argv[0]);
        return 2;
    }
    parse_ctx none = { NULL, NULL, 0, 0 };
    double spawn = bench_best_of(RUNS, run_true, &none);
    printf("Matrix Market parse throughput (best of %d; MB = 10^6 bytes; process spawn "
           "alone %.2f ms)\n",
           RUNS, spawn * 1e3);
    printf("%-24s %9s %10s %10s %9s %10s %9s %10s %9s\n", "file", "MB", "nnz", "read s",
           "read MB/s", "memory s", "mem MB/s", "wc -l s", "read/wc");
    for (int i = 1; i < argc; i++) {
        parse_ctx c = { argv[i], NULL, 0, 0 };
        c.data = slurp(argv[i], &c.size);
        if (!c.data) {
            fprintf(stderr, "bench_parse: cannot read %s\n", argv[i]);
            continue;
        }
        double mb = (double)c.size / 1e6;
        run_wc(&c); /* warm the page cache before anything is timed */
        double t_read = bench_best_of(RUNS, run_read, &c);
        double t_mem = bench_best_of(RUNS, run_parse_memory, &c);
        double t_wc = bench_best_of(RUNS, run_wc, &c);
        free((void *)c.data);
        if (t_read < 0 || t_mem < 0 || t_wc < 0) {
            fprintf(stderr, "bench_parse: %s failed\n", argv[i]);
            continue;
        }
        double share = t_wc / t_read;
        printf("%-24s %9.1f %10llu %10.4f %9.0f %10.4f %9.0f %10.4f %8.1f%%\n",
               bench_basename(argv[i]), mb, (unsigned long long)c.nnz, t_read, mb / t_read,
               t_mem, mb / t_mem, t_wc, 100 * share);
        printf("SUMMARY|parse %s|%.0f MB/s|>= %.0f MB/s\n", bench_basename(argv[i]), mb / t_read,
               TARGET_MBS);
        printf("SUMMARY|parse %s vs wc -l|%.1f%% of wc -l speed (wc %.0f MB/s)|>= %.0f%%\n",
               bench_basename(argv[i]), 100 * share, mb / t_wc, 100 * TARGET_WC_SHARE);
    }
    return 0;
}
