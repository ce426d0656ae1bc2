/* The fingerprint of a sweep's input files, kept in sweep.state so that
 * --resume refuses to mix results of changed inputs with old ones (issue
 * 25 item 4). Every file that decides a result is listed: the spec file
 * and its includes, the energy tables, and every data file a data entry or
 * the spec binds. A file is known by its size, its modification time and a
 * checksum of its first and last SWEEP_INPUT_BLOCK bytes: cheap for a
 * 1 GB matrix, and a format header, the statistics at a file's end or an
 * edited entry near either end all show. An edit in the middle that keeps
 * size and time is not seen; rewriting a file sets its time. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweep_internal.h"

#define SWEEP_INPUT_BLOCK 16384u

typedef struct text_buf {
    const tessel_allocator *a;
    char *p;
    size_t n, cap;
    int oom;
    size_t want; /* the size asked for when an allocation failed */
} text_buf;

static void text_add(text_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = tessel_realloc_array(b->a, b->p, cap, 1);
        if (!p) {
            b->oom = 1;
            b->want = cap;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

/* Size, time and the checksum of the two end blocks of the regular file
 * at path; 0 when it is not one (a tensor name, `dense`, A^T). */
static int input_line(text_buf *b, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return 0;
    tessel_diag ignored;
    int fd = tessel_input_open(path, &ignored);
    if (fd < 0)
        return 0;
    char block[SWEEP_INPUT_BLOCK];
    tessel_checksum ck;
    tessel_checksum_init(&ck);
    ssize_t got = pread(fd, block, sizeof(block), 0);
    if (got > 0)
        tessel_checksum_update(&ck, block, (size_t)got);
    if (sb.st_size > (off_t)SWEEP_INPUT_BLOCK) {
        got = pread(fd, block, sizeof(block), sb.st_size - (off_t)SWEEP_INPUT_BLOCK);
        if (got > 0)
            tessel_checksum_update(&ck, block, (size_t)got);
    }
    close(fd);
    char line[128];
    int n = snprintf(line, sizeof(line), "input %" PRIu64 " %lld.%09ld %016" PRIx64 " ",
                     (uint64_t)sb.st_size, (long long)sb.st_mtim.tv_sec,
                     (long)sb.st_mtim.tv_nsec, tessel_checksum_final(&ck));
    text_add(b, line, (size_t)n);
    /* the path ends the line: a line break in it would end it early */
    for (const char *c = path; *c; c++)
        text_add(b, *c == '\n' ? "?" : c, 1);
    text_add(b, "\n", 1);
    return 1;
}

int sweep_inputs_collect(const tessel_sweep *s, const tessel_spec *base,
                         const tessel_allocator *a, char **text, tessel_diag *diag)
{
    text_buf b = { a, NULL, 0, 0, 0, 0 };
    const char *src;
    for (size_t i = 0; (src = tessel_spec_source(base, i)) != NULL; i++)
        input_line(&b, src);
    for (unsigned i = 0; i < base->ntables; i++)
        input_line(&b, base->table[i]);
    for (unsigned t = 1; t < base->workload.ntensors; t++)
        if (base->workload.tensor[t].data)
            input_line(&b, base->workload.tensor[t].data);
    for (size_t d = 0; d < s->ndata; d++)
        for (size_t k = 0; k < s->data[d].nbindings; k++)
            input_line(&b, s->data[d].binding[k].value);
    text_add(&b, "", 0);
    if (b.oom || !b.p) {
        tessel_dealloc(a, b.p);
        *text = NULL;
        return tessel_diag_oom(diag, s->path, "listing the sweep's input files", b.want);
    }
    *text = b.p;
    return TESSEL_OK;
}

int sweep_inputs_read(const char *dir, const tessel_allocator *a, char **text,
                      tessel_diag *diag)
{
    char path[4096];
    *text = NULL;
    if (sweep_join(path, sizeof(path), dir, "sweep.state"))
        return tessel_diag_set(diag, TESSEL_ERANGE, dir, 0, 0, "", "directory name too long");
    FILE *f = fopen(path, "r");
    if (!f)
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, "", "cannot open: %s",
                               strerror(errno));
    text_buf b = { a, NULL, 0, 0, 0, 0 };
    char line[8192];
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "input ", 6) == 0)
            text_add(&b, line, strlen(line));
    text_add(&b, "", 0);
    fclose(f);
    if (b.oom) {
        tessel_dealloc(a, b.p);
        return tessel_diag_oom(diag, path, "reading the saved input list", b.want);
    }
    *text = b.p;
    return TESSEL_OK;
}

/* Splits "input SIZE TIME CHECKSUM PATH" at its fields; 0 when malformed. */
static int split_line(const char *line, size_t len, char fields[3][48], const char **path,
                      size_t *path_len)
{
    const char *p = line + 6, *end = line + len;
    for (int i = 0; i < 3; i++) {
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        if (!sp || (size_t)(sp - p) >= sizeof(fields[i]))
            return 0;
        memcpy(fields[i], p, (size_t)(sp - p));
        fields[i][sp - p] = '\0';
        p = sp + 1;
    }
    *path = p;
    *path_len = (size_t)(end - p);
    return 1;
}

static const char *next_line(const char *p, size_t *len)
{
    if (!p || !*p)
        return NULL;
    const char *nl = strchr(p, '\n');
    *len = nl ? (size_t)(nl - p) : strlen(p);
    return p;
}

int sweep_inputs_check(const char *dir, const char *saved, const char *now, tessel_diag *diag)
{
    static const char *const what[3] = { "its size", "its modification time",
                                         "its contents" };
    /* A state written before inputs were listed: nothing to compare. */
    if (!saved || !*saved)
        return TESSEL_OK;
    const char *p = saved, *q = now;
    size_t lp, lq;
    while ((p = next_line(p, &lp)) != NULL) {
        char fp[3][48], fq[3][48];
        const char *pp, *pq;
        size_t np, nq;
        if (!split_line(p, lp, fp, &pp, &np))
            return tessel_diag_set(diag, TESSEL_ECORRUPT, dir, 0, 0, "", "sweep.state: a "
                                   "damaged input line (--overwrite starts the sweep afresh)");
        if (!(q = next_line(q, &lq)) || !split_line(q, lq, fq, &pq, &nq) || np != nq ||
            memcmp(pp, pq, np) != 0)
            return tessel_diag_set(diag, TESSEL_EINVAL, dir, 0, 0, "", "the sweep's input "
                                   "files are not those it started with (%.*s is no longer "
                                   "one of them, or is no longer a file): resuming would mix "
                                   "results; --overwrite starts the sweep afresh",
                                   (int)np, pp);
        for (int i = 0; i < 3; i++)
            if (strcmp(fp[i], fq[i]) != 0)
                return tessel_diag_set(diag, TESSEL_EINVAL, dir, 0, 0, "", "%.*s changed "
                                       "since the sweep started (%s differs): resuming "
                                       "would mix results of the old and the new file; "
                                       "--overwrite starts the sweep afresh", (int)np, pp,
                                       what[i]);
        p += lp + (p[lp] == '\n');
        q += lq + (q[lq] == '\n');
    }
    if ((q = next_line(q, &lq)) != NULL) {
        char fq[3][48];
        const char *pq;
        size_t nq;
        if (!split_line(q, lq, fq, &pq, &nq)) {
            pq = q;
            nq = lq;
        }
        return tessel_diag_set(diag, TESSEL_EINVAL, dir, 0, 0, "", "the sweep's input files "
                               "are not those it started with (%.*s is new): resuming would "
                               "mix results; --overwrite starts the sweep afresh", (int)nq,
                               pq);
    }
    return TESSEL_OK;
}
