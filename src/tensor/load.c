/* Loading any supported tensor file, with the optional binary cache. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_internal.h"
#include "tessel/tensor.h"

void tessel_load_options_init(tessel_load_options *o)
{
    memset(o, 0, sizeof(*o));
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int sniff_kind(const char *path)
{
    int fd = tessel_input_open(path, NULL);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        if (fd >= 0)
            close(fd);
        return TESSEL_FILE_UNKNOWN;
    }
    char head[16] = { 0 };
    size_t n = fread(head, 1, sizeof(head) - 1, f);
    fclose(f);
    if (n >= 8 && memcmp(head, "TESSEL", 6) == 0)
        return TESSEL_FILE_CACHE;
    if (n >= 2 && memcmp(head, "%%", 2) == 0)
        return TESSEL_FILE_MTX;
    return TESSEL_FILE_UNKNOWN;
}

int tessel_file_kind_of(const char *path)
{
    if (ends_with(path, ".mtx") || ends_with(path, ".mtx.gz"))
        return TESSEL_FILE_MTX;
    if (ends_with(path, ".tns") || ends_with(path, ".tns.gz"))
        return TESSEL_FILE_TNS;
    if (ends_with(path, ".tsl"))
        return TESSEL_FILE_CACHE;
    return sniff_kind(path);
}

static uint32_t option_bits(const tessel_load_options *opt)
{
    return (opt->drop_zeros ? 1u : 0u) | (opt->complex_policy == TESSEL_COMPLEX_REJECT ? 2u : 0u);
}

int tessel_cache_source_of(const char *path, const tessel_load_options *opt,
                           tessel_cache_source *src, tessel_diag *diag)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "cannot open: %s",
                               strerror(errno));
    memset(src, 0, sizeof(*src));
    src->size = (uint64_t)st.st_size;
    src->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    src->options = option_bits(opt);
    return TESSEL_OK;
}

/* FNV-1a of the absolute path: distinguishes same-named sources. */
static uint64_t path_hash(const char *path)
{
    char resolved[PATH_MAX];
    const char *key = realpath(path, resolved) ? resolved : path;
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *c = (const unsigned char *)key; *c; c++)
        h = (h ^ *c) * 1099511628211ull;
    return h;
}

int tessel_cache_path_for(const char *path, const tessel_load_options *opt, char *buf, size_t n)
{
    int len;
    if (!opt || !opt->cache_dir) {
        len = snprintf(buf, n, "%s.tsl", path);
    } else {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        len = snprintf(buf, n, "%s/%s-%016llx.tsl", opt->cache_dir, base,
                       (unsigned long long)path_hash(path));
    }
    return len < 0 || (size_t)len >= n ? TESSEL_ERANGE : TESSEL_OK;
}

static int read_source(const char *path, int kind, const tessel_load_options *opt,
                       const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    if (kind == TESSEL_FILE_MTX)
        return tessel_tensor_read_mtx(path, opt, a, out, diag);
    if (kind == TESSEL_FILE_TNS)
        return tessel_tensor_read_tns(path, opt, a, out, diag);
    if (kind == TESSEL_FILE_CACHE)
        return cache_read_file(path, NULL, opt->pattern_only, a, out, diag);
    int fd = tessel_input_open(path, diag);
    if (fd < 0)
        return fd;
    close(fd);
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, path, 0, 0, NULL,
                           "unknown tensor file type: expected .mtx, .mtx.gz, .tns, .tns.gz or "
                           ".tsl");
}

/* A pattern-only load's tensor: its values freed (a text source parses
 * them; a cache of it keeps them). */
static void drop_values(const tessel_load_options *opt, tessel_tensor *t)
{
    if (!opt->pattern_only || !t || !t->values)
        return;
    tessel_dealloc(t->alloc, t->values);
    t->values = NULL;
}

int tessel_tensor_load(const char *path, const tessel_load_options *opt,
                       const tessel_allocator *a, tessel_tensor **out, int *origin,
                       tessel_diag *diag)
{
    *out = NULL;
    tessel_load_options defaults;
    if (!opt) {
        tessel_load_options_init(&defaults);
        opt = &defaults;
    }
    int kind = tessel_file_kind_of(path);
    if (origin)
        *origin = kind == TESSEL_FILE_CACHE ? TESSEL_LOADED_CACHE : TESSEL_LOADED_SOURCE;
    if (opt->cache_policy == TESSEL_CACHE_OFF || kind == TESSEL_FILE_CACHE ||
        kind == TESSEL_FILE_UNKNOWN) {
        int rc = read_source(path, kind, opt, a, out, diag);
        drop_values(opt, *out);
        return rc;
    }

    tessel_cache_source src;
    int rc = tessel_cache_source_of(path, opt, &src, diag);
    if (rc)
        return rc;
    char cache_path[PATH_MAX + 64];
    if (tessel_cache_path_for(path, opt, cache_path, sizeof(cache_path)) != TESSEL_OK) {
        rc = read_source(path, kind, opt, a, out, diag);
        drop_values(opt, *out);
        return rc;
    }
    if (opt->cache_policy == TESSEL_CACHE_USE &&
        cache_read_file(cache_path, &src, opt->pattern_only, a, out, NULL) == TESSEL_OK) {
        if (origin)
            *origin = TESSEL_LOADED_CACHE;
        return TESSEL_OK;
    }
    rc = read_source(path, kind, opt, a, out, diag);
    if (rc)
        return rc;
    /* A stale, corrupt or missing cache is rebuilt; failing to write one
     * (read-only directory, full disk) only costs speed next time. */
    if (tessel_cache_write(*out, &src, cache_path, NULL) == TESSEL_OK && origin)
        *origin = TESSEL_LOADED_CACHE_REBUILT;
    drop_values(opt, *out);
    return TESSEL_OK;
}
