/* A sweep's directory: sweep.state (what the outputs belong to), the
 * growing .part files and their recovery after a kill. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sweep_internal.h"

int sweep_join(char *buf, size_t n, const char *dir, const char *name)
{
    size_t len = strlen(dir);
    const char *sep = len && dir[len - 1] == '/' ? "" : "/";
    int w = snprintf(buf, n, "%s%s%s", dir, sep, name);
    return w < 0 || (size_t)w >= n ? TESSEL_ERANGE : TESSEL_OK;
}

int sweep_ensure_dir(const char *dir, tessel_diag *diag)
{
    int rc = tessel_report_check_dir(dir, diag);
    if (rc)
        return rc;
    /* mkdir -p: -o creates missing parents, as every command's -o does */
    return tessel_dirs_make(dir, NULL, diag);
}

int sweep_state_write(const char *dir, const sweep_state *st, const tessel_allocator *a,
                      tessel_diag *diag)
{
    char path[4096];
    if (sweep_join(path, sizeof(path), dir, "sweep.state"))
        return tessel_diag_set(diag, TESSEL_ERANGE, dir, 0, 0, "", "directory name too long");
    return sweep_state_write_to(path, st, a, diag);
}

int sweep_state_write_to(const char *path, const sweep_state *st, const tessel_allocator *a,
                         tessel_diag *diag)
{
    tessel_outfile *f = NULL;
    int rc = tessel_outfile_open(path, a, &f, diag);
    if (rc)
        return rc;
    FILE *out = tessel_outfile_stream(f);
    fprintf(out,
            "tessel-sweep-state 1\nfingerprint %016" PRIx64 "\npoints %" PRIu64 "\n"
            "shard %" PRIu64 " %" PRIu64 "\nrange %" PRIu64 " %" PRIu64 "\nobjectives",
            st->fingerprint, st->total, st->shard_index, st->shard_count, st->first, st->end);
    for (size_t i = 0; i < st->nobjectives; i++)
        fprintf(out, " %s", st->objectives[i]);
    fputc('\n', out);
    if (st->inputs)
        fputs(st->inputs, out);
    return tessel_outfile_commit(&f, diag);
}

static int state_field(FILE *f, const char *name, const char *fmt, uint64_t *a, uint64_t *b)
{
    char key[32];
    int want = b ? 2 : 1;
    if (fscanf(f, "%31s", key) != 1 || strcmp(key, name) != 0)
        return -1;
    if (want == 2)
        return fscanf(f, fmt, a, b) == 2 ? 0 : -1;
    return fscanf(f, fmt, a) == 1 ? 0 : -1;
}

int sweep_state_read(const char *dir, sweep_state *st, tessel_diag *diag)
{
    char path[4096];
    if (sweep_join(path, sizeof(path), dir, "sweep.state"))
        return tessel_diag_set(diag, TESSEL_ERANGE, dir, 0, 0, "", "directory name too long");
    memset(st, 0, sizeof(*st));
    FILE *f = fopen(path, "r");
    if (!f)
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, "", "cannot open: %s (not the "
                               "output directory of a tessel sweep?)", strerror(errno));
    char magic[32];
    unsigned version = 0;
    int ok = fscanf(f, "%31s %u", magic, &version) == 2 &&
             strcmp(magic, "tessel-sweep-state") == 0 && version == 1 &&
             state_field(f, "fingerprint", "%" SCNx64, &st->fingerprint, NULL) == 0 &&
             state_field(f, "points", "%" SCNu64, &st->total, NULL) == 0 &&
             state_field(f, "shard", "%" SCNu64 " %" SCNu64, &st->shard_index,
                         &st->shard_count) == 0 &&
             state_field(f, "range", "%" SCNu64 " %" SCNu64, &st->first, &st->end) == 0;
    char word[64];
    ok = ok && fscanf(f, "%63s", word) == 1 && strcmp(word, "objectives") == 0;
    int c;
    while (ok && (c = fgetc(f)) == ' ') {
        if (st->nobjectives == TESSEL_SWEEP_MAX_OBJECTIVES || fscanf(f, "%63s", word) != 1) {
            ok = 0;
            break;
        }
        memcpy(st->objectives[st->nobjectives++], word, sizeof(word));
    }
    fclose(f);
    if (!ok || st->shard_count == 0 || st->shard_index >= st->shard_count ||
        st->first > st->end || st->end > st->total)
        return tessel_diag_set(diag, TESSEL_ECORRUPT, path, 0, 0, "", "not a tessel sweep "
                               "state file (or damaged)");
    return TESSEL_OK;
}

int tessel_sweep_dir_objectives(const char *dir, char names[][64], size_t max, size_t *n,
                                tessel_diag *diag)
{
    sweep_state st;
    *n = 0;
    int rc = sweep_state_read(dir, &st, diag);
    for (size_t i = 0; !rc && i < st.nobjectives && i < max; i++)
        memcpy(names[(*n)++], st.objectives[i], sizeof(st.objectives[i]));
    return rc;
}
