/* tessel_sweep_merge: shards hold consecutive ranges of points in point
 * order, so the merged files are shard 0's files followed by the other
 * shards' rows without their headers.
 *
 * All or nothing (issue 25 items 3 and 5): every merged file is first
 * written aside (NAME.merge) while each shard's rows are checked to hold
 * exactly its own points, so that together they tile the sweep's points
 * with no overlap and no gap; only when every file is complete are they
 * renamed into place. A failing merge leaves the directory's previous
 * files as they were. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sweep_internal.h"

#define MERGE_ASIDE ".merge"

typedef struct shard {
    const char *dir;
    sweep_state state;
} shard;

/* What the rows of one shard's file must hold: summary rows are the
 * points first..end-1, each once and in order; traffic rows lie in that
 * range in non-decreasing order. */
typedef struct rows_rule {
    uint64_t first, end;
    int summary;
    uint64_t next;      /* summary: the point the next row must hold */
    uint64_t last;      /* traffic: the last point seen */
    int seen;
} rows_rule;

/* Checks the row starting with `line` (its point number) against rule. */
static int check_row(const char *line, rows_rule *r, const char *path, uint64_t lineno,
                     tessel_diag *diag)
{
    uint64_t p = 0;
    size_t i = 0;
    for (; line[i] >= '0' && line[i] <= '9' && i < 19; i++)
        p = 10 * p + (uint64_t)(line[i] - '0');
    if (i == 0 || line[i] != ',')
        return tessel_diag_set(diag, TESSEL_ECORRUPT, path, lineno, 0, "point", "a row does not "
                               "start with its point number (not a sweep's output?)");
    if (p < r->first || p >= r->end)
        return tessel_diag_set(diag, TESSEL_EINVAL, path, lineno, 1, "point", "holds point "
                               "%llu, outside this shard's points %llu..%llu: the shards "
                               "overlap (the point belongs to another shard)",
                               (unsigned long long)p, (unsigned long long)r->first,
                               (unsigned long long)(r->end - 1));
    if (!r->summary) {
        if (r->seen && p < r->last)
            return tessel_diag_set(diag, TESSEL_EINVAL, path, lineno, 1, "point", "point %llu "
                                   "comes after point %llu: rows out of order (edited?)",
                                   (unsigned long long)p, (unsigned long long)r->last);
        r->seen = 1;
        r->last = p;
        return TESSEL_OK;
    }
    if (p < r->next)
        return tessel_diag_set(diag, TESSEL_EINVAL, path, lineno, 1, "point", "point %llu "
                               "appears twice", (unsigned long long)p);
    if (p > r->next)
        return tessel_diag_set(diag, TESSEL_EINVAL, path, lineno, 1, "point", "points "
                               "%llu..%llu are missing (a gap before point %llu)",
                               (unsigned long long)r->next, (unsigned long long)(p - 1),
                               (unsigned long long)p);
    r->next = p + 1;
    return TESSEL_OK;
}

/* Copies `path` into out, without its first line when skip_header,
 * checking every row by `rule`; the header read is compared with `header`
 * (set from the first file). */
static int copy_rows(const char *path, FILE *out, int skip_header, char *header, size_t hsize,
                     rows_rule *rule, tessel_diag *diag)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, "", "cannot open: %s (is the "
                               "shard finished?)", strerror(errno));
    char line[65536];
    int first = 1, at_start = 1, rc = TESSEL_OK;
    uint64_t lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        size_t n = strlen(line);
        int whole = n > 0 && line[n - 1] == '\n';
        if (first) {
            first = 0;
            lineno = 1;
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
        } else if (at_start) {
            lineno++;
            if ((rc = check_row(line, rule, path, lineno, diag)))
                break;
        }
        at_start = whole;
        fputs(line, out);
    }
    if (!rc && ferror(f))
        rc = tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, "", "read error");
    if (!rc && !at_start)
        rc = tessel_diag_set(diag, TESSEL_ECORRUPT, path, lineno, 0, "", "the last row is cut "
                             "off (unfinished or damaged shard)");
    if (!rc && rule->summary && rule->next != rule->end)
        rc = tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, "point", "points %llu..%llu are "
                             "missing (unfinished or edited shard: it holds its points "
                             "%llu..%llu)", (unsigned long long)rule->next,
                             (unsigned long long)(rule->end - 1),
                             (unsigned long long)rule->first,
                             (unsigned long long)(rule->end - 1));
    fclose(f);
    return rc;
}

/* The shards' states: one sweep, each shard once, their ranges tiling
 * 0..total-1 (sorted by shard index). */
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
        uint64_t from = i ? sh[i - 1].state.end : 0;
        if (s->first > from)
            return tessel_diag_set(diag, TESSEL_EINVAL, sh[i].dir, 0, 0, "", "points "
                                   "%llu..%llu are in no shard (a gap before shard %zu)",
                                   (unsigned long long)from, (unsigned long long)(s->first - 1),
                                   i);
        if (s->first < from)
            return tessel_diag_set(diag, TESSEL_EINVAL, sh[i].dir, 0, 0, "", "points "
                                   "%llu..%llu are in shards %zu and %zu (they overlap)",
                                   (unsigned long long)s->first, (unsigned long long)(from - 1),
                                   i - 1, i);
    }
    if (sh[n - 1].state.end != sh[0].state.total)
        return tessel_diag_set(diag, TESSEL_EINVAL, sh[n - 1].dir, 0, 0, "", "points %llu..%llu "
                               "are in no shard (a gap after the last shard)",
                               (unsigned long long)sh[n - 1].state.end,
                               (unsigned long long)(sh[0].state.total - 1));
    return TESSEL_OK;
}

/* Writes the shards' `name` files merged into DIR/name.merge, checking
 * every row. */
static int merge_file(const shard *sh, size_t n, const char *name, const char *aside,
                      const tessel_allocator *a, int summary, tessel_diag *diag)
{
    tessel_outfile *out = NULL;
    int rc = tessel_outfile_open(aside, a, &out, diag);
    char header[65536] = "";
    for (size_t i = 0; i < n && !rc; i++) {
        char in[4096];
        rows_rule rule = { sh[i].state.first, sh[i].state.end, summary, sh[i].state.first, 0,
                           0 };
        if (sweep_join(in, sizeof(in), sh[i].dir, name))
            rc = tessel_diag_set(diag, TESSEL_ERANGE, sh[i].dir, 0, 0, "", "name too long");
        else
            rc = copy_rows(in, tessel_outfile_stream(out), i > 0, header, sizeof(header),
                           &rule, diag);
    }
    if (rc) {
        tessel_outfile_abort(&out);
        return rc;
    }
    return tessel_outfile_commit(&out, diag);
}

enum { M_TRAFFIC, M_SUMMARY, M_STATE, M_PARETO, M_FILES };
static const char *const merged_name[M_FILES] = { "traffic.csv", "summary.csv", "sweep.state",
                                                  "pareto.csv" };

typedef struct merge_paths {
    char final[M_FILES][4096];
    char aside[M_FILES][4096];
} merge_paths;

/* The merged files, written aside; *has_pareto is 0 when there are no
 * objectives (the old pareto.csv is then removed at the end). */
static int merge_aside(shard *sh, size_t n, const merge_paths *mp,
                       const char *const *objectives, size_t nobjectives,
                       const tessel_allocator *a, int *has_pareto, tessel_diag *diag)
{
    int rc = merge_file(sh, n, "traffic.csv", mp->aside[M_TRAFFIC], a, 0, diag);
    if (!rc)
        rc = merge_file(sh, n, "summary.csv", mp->aside[M_SUMMARY], a, 1, diag);
    char *inputs = NULL;
    if (!rc)
        rc = sweep_inputs_read(sh[0].dir, a, &inputs, diag);
    sweep_state st = sh[0].state;
    if (!rc) {
        st.shard_index = 0;
        st.shard_count = 1;
        st.first = 0;
        st.end = st.total;
        st.inputs = inputs;
        if (objectives) {
            st.nobjectives = 0;
            for (size_t i = 0; i < nobjectives && i < TESSEL_SWEEP_MAX_OBJECTIVES; i++)
                snprintf(st.objectives[st.nobjectives++], sizeof(st.objectives[0]), "%s",
                         objectives[i]);
        }
        rc = sweep_state_write_to(mp->aside[M_STATE], &st, a, diag);
    }
    tessel_dealloc(a, inputs);
    *has_pareto = !rc && st.nobjectives > 0;
    if (*has_pareto) {
        const char *names[TESSEL_SWEEP_MAX_OBJECTIVES];
        for (size_t i = 0; i < st.nobjectives; i++)
            names[i] = st.objectives[i];
        rc = tessel_sweep_pareto(mp->aside[M_SUMMARY], mp->aside[M_PARETO], names,
                                 st.nobjectives, a, NULL, diag);
    }
    return rc;
}

static int merge_locked(shard *sh, size_t n, const char *dir, const char *const *objectives,
                        size_t nobjectives, const tessel_allocator *a, tessel_diag *diag)
{
    merge_paths *mp = tessel_alloc(a, sizeof(*mp));
    if (!mp)
        return tessel_diag_oom(diag, dir, "naming the merged files", sizeof(*mp));
    int rc = TESSEL_OK;
    for (int f = 0; f < M_FILES && !rc; f++) {
        char name[64];
        snprintf(name, sizeof(name), "%s%s", merged_name[f], MERGE_ASIDE);
        if (sweep_join(mp->final[f], sizeof(mp->final[f]), dir, merged_name[f]) ||
            sweep_join(mp->aside[f], sizeof(mp->aside[f]), dir, name))
            rc = tessel_diag_set(diag, TESSEL_ERANGE, dir, 0, 0, "", "directory name too "
                                 "long");
    }
    int has_pareto = 0;
    if (!rc)
        rc = merge_aside(sh, n, mp, objectives, nobjectives, a, &has_pareto, diag);
    /* Every file is whole: only the renames lie between the old set and
     * the new one. */
    for (int f = 0; f < M_FILES && !rc; f++) {
        if (f == M_PARETO && !has_pareto) {
            if (remove(mp->final[f]) != 0 && errno != ENOENT)
                rc = tessel_diag_set(diag, TESSEL_EWRITE, mp->final[f], 0, 0, "", "cannot "
                                     "remove the stale Pareto front: %s", strerror(errno));
        } else if (rename(mp->aside[f], mp->final[f]) != 0) {
            rc = tessel_diag_set(diag, TESSEL_EWRITE, mp->final[f], 0, 0, "", "cannot rename "
                                 "the merged file into place: %s", strerror(errno));
        }
    }
    if (rc)
        for (int f = 0; f < M_FILES; f++)
            remove(mp->aside[f]);
    tessel_dealloc(a, mp);
    return rc;
}

int tessel_sweep_merge(const char *const *shard_dirs, size_t n, const char *dir,
                       const char *const *objectives, size_t nobjectives,
                       const tessel_allocator *a, uint64_t *points, tessel_diag *diag)
{
    if (n == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, "", 0, 0, "", "no shard directories");
    shard *sh = tessel_alloc_array(a, n, sizeof(*sh));
    if (!sh)
        return tessel_diag_oom(diag, "", "reading the shards' states", n * sizeof(*sh));
    for (size_t i = 0; i < n; i++)
        sh[i].dir = shard_dirs[i];
    /* The lock first: a merge into a directory in use fails at once. */
    int lock = -1;
    int rc = sweep_ensure_dir(dir, diag);
    if (!rc)
        rc = sweep_lock_take(dir, "merge", &lock, diag);
    if (!rc)
        rc = check_shards(sh, n, diag);
    if (!rc)
        rc = merge_locked(sh, n, dir, objectives, nobjectives, a, diag);
    sweep_lock_release(lock);
    if (!rc && points)
        *points = sh[0].state.total;
    tessel_dealloc(a, sh);
    return rc;
}
