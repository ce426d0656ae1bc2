/* Replays fuzz inputs without libFuzzer: calls LLVMFuzzerTestOneInput on
 * every file named on the command line, and on every regular file directly
 * inside each named directory. Built with gcc and ASan/UBSan, this turns
 * the corpus into a regression test (`meson test fuzz-replay-*`).
 *
 * Exit status: 0 when at least one input ran (a failing input aborts), 1
 * on a usage or I/O error or when nothing was found, so a mistyped corpus
 * path cannot pass silently. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The whole file in a fresh buffer of exactly its size (so ASan catches a
 * read one byte past the input); *size = 0 gives a 1-byte dummy. */
static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        if (end >= 0 && fseek(f, 0, SEEK_SET) == 0) {
            len = (size_t)end;
            buf = malloc(len ? len : 1);
            if (buf && fread(buf, 1, len, f) != len) {
                free(buf);
                buf = NULL;
            }
        }
    }
    fclose(f);
    *size = len;
    return buf;
}

static int run_file(const char *path, unsigned long *count)
{
    size_t size = 0;
    uint8_t *data = read_file(path, &size);
    if (!data) {
        fprintf(stderr, "standalone_driver: cannot read %s: %s\n", path, strerror(errno));
        return 1;
    }
    fprintf(stderr, "  %s (%zu bytes)\n", path, size);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    (*count)++;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct path_list {
    char **items;
    size_t n, cap;
} path_list;

/* Appends dir/name; 0 on success, 1 when out of memory. */
static int push_path(path_list *l, const char *dir, const char *name)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        char **items = realloc(l->items, cap * sizeof(*items));
        if (!items)
            return 1;
        l->items = items;
        l->cap = cap;
    }
    size_t len = strlen(dir) + strlen(name) + 2;
    char *path = malloc(len);
    if (!path)
        return 1;
    snprintf(path, len, "%s/%s", dir, name);
    l->items[l->n++] = path;
    return 0;
}

static int is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Regular files directly inside dir, in name order (stable logs). */
static int run_dir(const char *dir, unsigned long *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "standalone_driver: cannot open %s: %s\n", dir, strerror(errno));
        return 1;
    }
    path_list l = { NULL, 0, 0 };
    int bad = 0;
    struct dirent *e;
    while (!bad && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            bad = push_path(&l, dir, e->d_name);
    closedir(d);
    if (bad)
        fprintf(stderr, "standalone_driver: out of memory listing %s\n", dir);
    if (l.n)
        qsort(l.items, l.n, sizeof(*l.items), cmp_names);
    for (size_t i = 0; i < l.n; i++) {
        if (!bad && is_regular(l.items[i]))
            bad = run_file(l.items[i], count);
        free(l.items[i]);
    }
    free(l.items);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 1;
    }
    unsigned long count = 0;
    int bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "standalone_driver: %s: %s\n", argv[i], strerror(errno));
            bad = 1;
        } else if (S_ISDIR(st.st_mode)) {
            bad = run_dir(argv[i], &count);
        } else {
            bad = run_file(argv[i], &count);
        }
    }
    if (bad)
        return 1;
    if (count == 0) {
        fprintf(stderr, "standalone_driver: no inputs found\n");
        return 1;
    }
    printf("replayed %lu inputs\n", count);
    return 0;
}
