/* Writing a run's report files into an output directory, atomically. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessel/report.h"

/* Creates dir and its missing parents (a sweep or run may name a fresh
 * tree). A file in the way is the caller's mistake (EINVAL). */
int tessel_report_ensure_dir(const char *dir, tessel_diag *diag)
{
    return tessel_dirs_make(dir, NULL, diag);
}

int tessel_report_check_dir(const char *dir, tessel_diag *diag)
{
    struct stat st;
    if (stat(dir, &st) == 0)
        return S_ISDIR(st.st_mode)
                   ? TESSEL_OK
                   : tessel_diag_set(diag, TESSEL_EINVAL, dir, 0, 0, NULL,
                                     "output directory exists but is not a directory");
    /* The parent: dir without trailing slashes and its last component. */
    char parent[4096];
    size_t n = strlen(dir);
    if (n >= sizeof(parent))
        return TESSEL_OK; /* too long to check here; creating it will tell */
    memcpy(parent, dir, n + 1);
    while (n > 1 && parent[n - 1] == '/')
        parent[--n] = '\0';
    char *slash = strrchr(parent, '/');
    if (!slash)
        return TESSEL_OK; /* in the current directory */
    if (slash == parent)
        slash[1] = '\0'; /* "/x": the root */
    else
        *slash = '\0';
    /* the nearest existing ancestor: ensure_dir creates the rest */
    while (stat(parent, &st) != 0 && (slash = strrchr(parent, '/')) != NULL) {
        if (slash == parent)
            slash[1] = '\0';
        else
            *slash = '\0';
        if (slash == parent)
            break;
    }
    if (stat(parent, &st) == 0 && !S_ISDIR(st.st_mode))
        return tessel_diag_set(diag, TESSEL_EINVAL, dir, 0, 0, NULL,
                               "cannot create output directory: %s is not a directory",
                               parent);
    return TESSEL_OK;
}

static char *join(const tessel_allocator *a, const char *dir, const char *name)
{
    size_t nd = strlen(dir), nn = strlen(name);
    int slash = nd > 0 && dir[nd - 1] != '/';
    char *p = tessel_alloc(a, nd + (size_t)slash + nn + 1);
    if (!p)
        return NULL;
    memcpy(p, dir, nd);
    if (slash)
        p[nd] = '/';
    memcpy(p + nd + (size_t)slash, name, nn + 1);
    return p;
}

static int write_file(tessel_outfile *f, int traffic, tessel_report_format format,
                      const tessel_report_point *points, size_t n)
{
    FILE *s = tessel_outfile_stream(f);
    if (format == TESSEL_REPORT_JSON)
        return traffic ? tessel_report_traffic_json(s, points, n)
                       : tessel_report_summary_json(s, points, n);
    fputs(traffic ? tessel_report_traffic_header() : tessel_report_summary_header(), s);
    int rc = TESSEL_OK;
    for (size_t i = 0; i < n && !rc; i++)
        rc = traffic ? tessel_report_traffic_csv_rows(s, &points[i])
                     : tessel_report_summary_csv_row(s, &points[i]);
    return rc;
}

int tessel_report_write_dir(const char *dir, tessel_report_format format,
                            const tessel_report_point *points, size_t n,
                            const tessel_allocator *a, tessel_diag *diag)
{
    if (format != TESSEL_REPORT_CSV && format != TESSEL_REPORT_JSON)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL, "unknown report format");
    int rc = tessel_report_ensure_dir(dir, diag);
    if (rc)
        return rc;
    const char *ext = format == TESSEL_REPORT_JSON ? "json" : "csv";
    char name[2][16];
    snprintf(name[0], sizeof(name[0]), "traffic.%s", ext);
    snprintf(name[1], sizeof(name[1]), "summary.%s", ext);
    char *path[2] = { join(a, dir, name[0]), join(a, dir, name[1]) };
    tessel_outfile *out[2] = { NULL, NULL };
    if (!path[0] || !path[1])
        rc = tessel_diag_oom(diag, dir, "naming the output files", strlen(dir) + sizeof(name[0]) + 1);
    /* Both files are complete in their temporaries before either is renamed. */
    for (int i = 0; i < 2 && !rc; i++) {
        rc = tessel_outfile_open(path[i], a, &out[i], diag);
        if (!rc && write_file(out[i], i == 0, format, points, n) != TESSEL_OK)
            rc = tessel_diag_set(diag, TESSEL_EIO, path[i], 0, 0, NULL,
                                 "cannot write output file");
    }
    /* Both on disk before either rename: only two renames lie between the
     * old pair and the new one. */
    for (int i = 0; i < 2 && !rc; i++)
        rc = tessel_outfile_sync(out[i], diag);
    if (!rc) {
        rc = tessel_outfile_commit(&out[0], diag);
        if (!rc) {
            rc = tessel_outfile_commit(&out[1], diag);
            if (rc)
                unlink(path[0]); /* no traffic file without its summary */
        }
    }
    tessel_outfile_abort(&out[0]);
    tessel_outfile_abort(&out[1]);
    tessel_dealloc(a, path[0]);
    tessel_dealloc(a, path[1]);
    return rc;
}
