/* tessel_sweep_merge: shards hold consecutive ranges of points in point
 * order, so the merged files are shard 0's files followed by the other
 * shards' rows without their headers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sweep_internal.h"

typedef struct shard {
    const char *dir;
    sweep_state state;
} shard;

/* Copies `path` into out, without its first line when skip_header; the
 * header read is compared with `header` (set from the first file). Counts
 * the lines copied. */
static int copy_rows(const char *path, FILE *out, int skip_header, char *header, size_t hsize,
                     uint64_t *lines, tessel_diag *diag)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, "", "cannot open: %s (is the "
                               "shard finished?)", strerror(errno));
    char line[65536];
    int first = 1, rc = TESSEL_OK;
    *lines = 0;
    while (fgets(line, sizeof(line), f)) {
        size_t n = strlen(line);
        int whole = n > 0 && line[n - 1] == '\n';
        if (first) {
            first = 0;
            if (!whole) {
                rc = tessel_diag_set(diag, TESSEL_ECORRUPT, path, 1, 0, "", "header line "
                                     "too long or unterminated");
                break;
            }
            if (!header[0])
                snprintf(header, hsize, "%s", line);
            else if (strcmp(header, line) != 0) {
                rc = tessel_diag_set(diag, TESSEL_EINVAL, path, 1, 0, "", "its columns differ "
                                     "from the first shard's");
                break;
            }
            if (skip_header)
                continue;
        } else if (whole) {
            (*lines)++;
        }
        fputs(line, out);
    }
    if (!rc && ferror(f))
        rc = tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, "", "read error");
    fclose(f);
    return rc;
}

static int check_shards(shard *sh, size_t n, tessel_diag *diag)
{
    for (size_t i = 0; i < n; i++) {
        int rc = sweep_state_read(sh[i].dir, &sh[i].state, diag);
        if (rc)
            return rc;
    }
    /* by shard index; each index once */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && sh[j].state.shard_index < sh[j - 1].state.shard_index; j--) {
            shard t = sh[j];
            sh[j] = sh[j - 1];
            sh[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        const sweep_state *s = &sh[i].state, *s0 = &sh[0].state;
        if (s->fingerprint != s0->fingerprint || s->total != s0->total)
            return tessel_diag_set(diag, TESSEL_EINVAL, sh[i].dir, 0, 0, "",
                                   "is a shard of another sweep than %s", sh[0].dir);
        if (s->shard_count != n)
            return tessel_diag_set(diag, TESSEL_EINVAL, sh[i].dir, 0, 0, "",
                                   "is shard %llu of %llu, but %zu directories were given",
                                   (unsigned long long)s->shard_index,
                                   (unsigned long long)s->shard_count, n);
        if (s->shard_index != i)
            return tessel_diag_set(diag, TESSEL_EINVAL, sh[i].dir, 0, 0, "",
                                   "shard %llu appears twice (or shard %zu is missing)",
                                   (unsigned long long)s->shard_index, i);
    }
    return TESSEL_OK;
}

static int merge_file(const shard *sh, size_t n, const char *name, const char *dir,
                      const tessel_allocator *a, int check_counts, tessel_diag *diag)
{
    char path[4096];
    if (sweep_join(path, sizeof(path), dir, name))
        return tessel_diag_set(diag, TESSEL_ERANGE, dir, 0, 0, "", "directory name too long");
    tessel_outfile *out = NULL;
    int rc = tessel_outfile_open(path, a, &out, diag);
    char header[65536] = "";
    for (size_t i = 0; i < n && !rc; i++) {
        char in[4096];
        uint64_t lines = 0;
        if (sweep_join(in, sizeof(in), sh[i].dir, name))
            rc = tessel_diag_set(diag, TESSEL_ERANGE, sh[i].dir, 0, 0, "", "name too long");
        else
            rc = copy_rows(in, tessel_outfile_stream(out), i > 0, header, sizeof(header),
                           &lines, diag);
        uint64_t want = sh[i].state.end - sh[i].state.first;
        if (!rc && check_counts && lines != want)
            rc = tessel_diag_set(diag, TESSEL_ECORRUPT, in, 0, 0, "",
                                 "holds %llu points, but shard %zu has %llu (unfinished or "
                                 "edited?)", (unsigned long long)lines, i,
                                 (unsigned long long)want);
    }
    if (rc) {
        tessel_outfile_abort(&out);
        return rc;
    }
    return tessel_outfile_commit(&out, diag);
}

int tessel_sweep_merge(const char *const *shard_dirs, size_t n, const char *dir,
                       const char *const *objectives, size_t nobjectives,
                       const tessel_allocator *a, uint64_t *points, tessel_diag *diag)
{
    if (n == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, "", 0, 0, "", "no shard directories");
    shard *sh = tessel_alloc_array(a, n, sizeof(*sh));
    if (!sh)
        return tessel_diag_set(diag, TESSEL_ENOMEM, "", 0, 0, "", "out of memory");
    for (size_t i = 0; i < n; i++)
        sh[i].dir = shard_dirs[i];
    int rc = check_shards(sh, n, diag);
    if (!rc)
        rc = sweep_ensure_dir(dir, diag);
    if (!rc)
        rc = merge_file(sh, n, "traffic.csv", dir, a, 0, diag);
    if (!rc)
        rc = merge_file(sh, n, "summary.csv", dir, a, 1, diag);
    sweep_state st;
    if (!rc) {
        st = sh[0].state;
        st.shard_index = 0;
        st.shard_count = 1;
        st.first = 0;
        st.end = st.total;
        if (objectives) {
            st.nobjectives = 0;
            for (size_t i = 0; i < nobjectives && i < TESSEL_SWEEP_MAX_OBJECTIVES; i++)
                snprintf(st.objectives[st.nobjectives++], sizeof(st.objectives[0]), "%s",
                         objectives[i]);
        }
        rc = sweep_state_write(dir, &st, a, diag);
    }
    if (!rc && points)
        *points = st.total;
    char summary[4096], pareto[4096];
    if (!rc && (sweep_join(summary, sizeof(summary), dir, "summary.csv") ||
                sweep_join(pareto, sizeof(pareto), dir, "pareto.csv")))
        rc = tessel_diag_set(diag, TESSEL_ERANGE, dir, 0, 0, "", "directory name too long");
    if (!rc && st.nobjectives) {
        const char *names[TESSEL_SWEEP_MAX_OBJECTIVES];
        for (size_t i = 0; i < st.nobjectives; i++)
            names[i] = st.objectives[i];
        rc = tessel_sweep_pareto(summary, pareto, names, st.nobjectives, a, NULL, diag);
    } else if (!rc) {
        remove(pareto);
    }
    tessel_dealloc(a, sh);
    return rc;
}
