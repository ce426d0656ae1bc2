/* Einsum strings: "Z[i,j] = A[i,k] * B[k,j]" -> tensors, indices, kind. */
#include <stdio.h>
#include <string.h>

#include "spec_internal.h"

typedef struct lexer {
    const char *text;
    size_t pos;
    size_t *err_offset;
    char *msg;
    size_t msgsize;
    size_t out_at[TESSEL_SPEC_MAX_INDICES]; /* offsets of the output's indices */
} lexer;

/* Newlines count as blanks: a block scalar (`einsum: >`) ends in one. */
static void skip_blanks(lexer *lx)
{
    while (lx->text[lx->pos] == ' ' || lx->text[lx->pos] == '\t' || lx->text[lx->pos] == '\n' ||
           lx->text[lx->pos] == '\r')
        lx->pos++;
}

static int error_at(lexer *lx, size_t offset, const char *fmt, const char *arg)
{
    *lx->err_offset = offset;
    snprintf(lx->msg, lx->msgsize, fmt, arg);
    return TESSEL_EINVAL;
}

static int is_start(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
}

static int is_rest(char ch)
{
    return is_start(ch) || (ch >= '0' && ch <= '9');
}

/* NAME into out (TESSEL_SPEC_NAME_MAX bytes); `what` names it in errors. */
static int read_name(lexer *lx, char *out, const char *what)
{
    skip_blanks(lx);
    size_t start = lx->pos;
    if (!is_start(lx->text[start]))
        return error_at(lx, start, "einsum: expected %s", what);
    while (is_rest(lx->text[lx->pos]))
        lx->pos++;
    size_t len = lx->pos - start;
    if (len >= TESSEL_SPEC_NAME_MAX)
        return error_at(lx, start, "einsum: %s longer than 31 characters", what);
    memcpy(out, lx->text + start, len);
    out[len] = '\0';
    return TESSEL_OK;
}

static int expect(lexer *lx, char ch, const char *what)
{
    skip_blanks(lx);
    if (lx->text[lx->pos] != ch)
        return error_at(lx, lx->pos, "einsum: expected %s", what);
    lx->pos++;
    return TESSEL_OK;
}

static int index_number(tessel_spec_workload *w, const char *name, lexer *lx, size_t at)
{
    for (unsigned i = 0; i < w->nindices; i++)
        if (strcmp(w->index_name[i], name) == 0)
            return (int)i;
    if (w->nindices == TESSEL_SPEC_MAX_INDICES) {
        error_at(lx, at, "einsum: more than %s different indices", "8");
        return -1;
    }
    memcpy(w->index_name[w->nindices], name, strlen(name) + 1);
    return (int)w->nindices++;
}

/* NAME[idx, idx, ...] */
static int read_tensor(lexer *lx, tessel_spec_workload *w, const char *what)
{
    tessel_spec_tensor *t = &w->tensor[w->ntensors];
    skip_blanks(lx);
    size_t name_at = lx->pos;
    int rc = read_name(lx, t->name, what);
    if (rc)
        return rc;
    for (unsigned u = 0; u < w->ntensors; u++)
        if (strcmp(w->tensor[u].name, t->name) == 0) {
            if (u == 0)
                return error_at(lx, name_at, "einsum: '%s' is the output and an input",
                                t->name);
            return error_at(lx, name_at,
                            "einsum: tensor '%s' appears twice (bind a second name to the "
                            "same data instead, e.g. data: {B: A})", t->name);
        }
    if ((rc = expect(lx, '[', "'[' after the tensor name")))
        return rc;
    for (;;) {
        char name[TESSEL_SPEC_NAME_MAX];
        skip_blanks(lx);
        size_t at = lx->pos;
        if ((rc = read_name(lx, name, "an index name")))
            return rc;
        if (t->rank == TESSEL_SPEC_MAX_INDICES)
            return error_at(lx, at, "einsum: tensor '%s' has more than 8 indices", t->name);
        int idx = index_number(w, name, lx, at);
        if (idx < 0)
            return TESSEL_EINVAL;
        for (unsigned m = 0; m < t->rank; m++)
            if (t->index[m] == (unsigned)idx)
                return error_at(lx, at, "einsum: index '%s' appears twice in one tensor",
                                name);
        if (w->ntensors == 0)
            lx->out_at[t->rank] = at;
        t->index[t->rank++] = (unsigned)idx;
        skip_blanks(lx);
        if (lx->text[lx->pos] == ']') {
            lx->pos++;
            break;
        }
        if ((rc = expect(lx, ',', "',' or ']'")))
            return rc;
    }
    w->ntensors++;
    return TESSEL_OK;
}

static int has_index(const tessel_spec_tensor *t, unsigned idx)
{
    for (unsigned m = 0; m < t->rank; m++)
        if (t->index[m] == idx)
            return 1;
    return 0;
}

/* Indices of a that b lacks, into out; returns how many. */
static unsigned only_in(const tessel_spec_tensor *a, const tessel_spec_tensor *b, unsigned *out)
{
    unsigned n = 0;
    for (unsigned m = 0; m < a->rank; m++)
        if (!has_index(b, a->index[m]))
            out[n++] = a->index[m];
    return n;
}

/* Same index set (ranks equal and every index of a in b). */
static int same_set(const tessel_spec_tensor *a, const unsigned *idx, unsigned n)
{
    if (a->rank != n)
        return 0;
    for (unsigned i = 0; i < n; i++)
        if (!has_index(a, idx[i]))
            return 0;
    return 1;
}

static tessel_workload_kind classify(const tessel_spec_workload *w)
{
    const tessel_spec_tensor *out = &w->tensor[0];
    unsigned nin = w->ntensors - 1;
    unsigned x[TESSEL_SPEC_MAX_INDICES], y[TESSEL_SPEC_MAX_INDICES];
    if (nin == 2) {
        const tessel_spec_tensor *a = &w->tensor[1], *b = &w->tensor[2];
        unsigned na = only_in(a, b, x), nb = only_in(b, a, y);
        unsigned shared = a->rank - na;
        if (a->rank == 2 && b->rank == 2 && shared == 1 && out->rank == 2) {
            unsigned want[2] = { x[0], y[0] };
            /* The shared index is reduced: it must not be in the output. */
            if (same_set(out, want, 2))
                return TESSEL_WORKLOAD_SPMSPM;
        }
        if (a->rank == 2 && b->rank == 1 && shared == 1 && nb == 0 && out->rank == 1 &&
            same_set(out, x, 1))
            return TESSEL_WORKLOAD_SPMV;
        if (a->rank == 3 && b->rank == 2 && shared == 1 && nb == 1 && out->rank == 3) {
            unsigned want[3] = { x[0], x[1], y[0] };
            if (same_set(out, want, 3))
                return TESSEL_WORKLOAD_TTM;
        }
    }
    if (nin == 3) {
        const tessel_spec_tensor *t = &w->tensor[1], *b = &w->tensor[2], *c = &w->tensor[3];
        if (t->rank == 3 && b->rank == 2 && c->rank == 2 && out->rank == 2) {
            /* B and C share the rank index r (not in T); their other
             * indices are two distinct modes of T, and Y keeps T's third
             * mode and r. */
            unsigned nb = only_in(b, t, x), nc = only_in(c, t, y);
            if (nb == 1 && nc == 1 && x[0] == y[0]) {
                unsigned r = x[0];
                unsigned bj = b->index[0] == r ? b->index[1] : b->index[0];
                unsigned ck = c->index[0] == r ? c->index[1] : c->index[0];
                if (bj != ck && has_index(t, bj) && has_index(t, ck)) {
                    unsigned keep = 0;
                    for (unsigned m = 0; m < 3; m++)
                        if (t->index[m] != bj && t->index[m] != ck)
                            keep = t->index[m];
                    unsigned want[2] = { keep, r };
                    if (same_set(out, want, 2))
                        return TESSEL_WORKLOAD_MTTKRP;
                }
            }
        }
    }
    return TESSEL_WORKLOAD_OTHER;
}

int spec_einsum_parse(const char *text, tessel_spec_workload *w, size_t *offset, char *msg,
                      size_t msgsize)
{
    lexer lx = { text, 0, offset, msg, msgsize, { 0 } };
    w->ntensors = 0;
    w->nindices = 0;
    memset(w->tensor, 0, sizeof(w->tensor));
    memset(w->index_name, 0, sizeof(w->index_name));
    int rc = read_tensor(&lx, w, "the output tensor name");
    if (rc)
        return rc;
    if ((rc = expect(&lx, '=', "'='")))
        return rc;
    for (;;) {
        skip_blanks(&lx);
        if (w->ntensors == TESSEL_SPEC_MAX_TENSORS)
            return error_at(&lx, lx.pos, "einsum: at most %s input tensors", "3");
        if ((rc = read_tensor(&lx, w, "an input tensor name")))
            return rc;
        skip_blanks(&lx);
        if (lx.text[lx.pos] == '\0')
            break;
        if ((rc = expect(&lx, '*', "'*' or the end")))
            return rc;
    }
    /* Every output index must come from some input: there is nothing to
     * read its extent or its values from otherwise. */
    const tessel_spec_tensor *out = &w->tensor[0];
    for (unsigned m = 0; m < out->rank; m++) {
        unsigned idx = out->index[m];
        int found = 0;
        for (unsigned t = 1; t < w->ntensors; t++)
            found |= has_index(&w->tensor[t], idx);
        if (!found)
            return error_at(&lx, lx.out_at[m], "einsum: output index '%s' appears in no input",
                            w->index_name[idx]);
    }
    w->kind = classify(w);
    return TESSEL_OK;
}
