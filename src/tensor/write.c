/* Writing tensors as Matrix Market or FROSTT text (atomically). */
#include <stdio.h>

#include "tessel/tensor.h"

static int finish(tessel_outfile **f, int write_failed, tessel_diag *diag)
{
    if (write_failed)
        return tessel_outfile_abort_failed(f, diag);
    return tessel_outfile_commit(f, diag);
}

int tessel_tensor_write_mtx(const tessel_tensor *t, const char *path, tessel_diag *diag)
{
    if (t->order != 2)
        return tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, NULL,
                               "Matrix Market holds matrices; this tensor has order %u (write "
                               ".tns instead)",
                               t->order);
    tessel_outfile *f = NULL;
    int rc = tessel_outfile_open(path, t->alloc, &f, diag);
    if (rc)
        return rc;
    FILE *s = tessel_outfile_stream(f);
    int bad = fprintf(s, "%%%%MatrixMarket matrix coordinate %s general\n",
                      t->values ? "real" : "pattern") < 0;
    bad |= fprintf(s, "%llu %llu %llu\n", (unsigned long long)t->dims[0],
                   (unsigned long long)t->dims[1], (unsigned long long)t->nnz) < 0;
    for (uint64_t r = 0; r < t->dims[0] && !bad; r++) {
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
            if (t->values)
                fprintf(s, "%llu %u %.17g\n", (unsigned long long)r + 1, t->idx[1][k] + 1,
                        t->values[k]);
            else
                fprintf(s, "%llu %u\n", (unsigned long long)r + 1, t->idx[1][k] + 1);
        }
        bad |= ferror(s);
    }
    return finish(&f, bad, diag);
}

int tessel_tensor_write_tns(const tessel_tensor *t, const char *path, tessel_diag *diag)
{
    tessel_outfile *f = NULL;
    int rc = tessel_outfile_open(path, t->alloc, &f, diag);
    if (rc)
        return rc;
    FILE *s = tessel_outfile_stream(f);
    int bad = 0;
    for (uint64_t r = 0; r < t->dims[0] && !bad; r++) {
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
            fprintf(s, "%llu", (unsigned long long)r + 1);
            for (unsigned m = 1; m < t->order; m++)
                fprintf(s, " %u", t->idx[m][k] + 1);
            fprintf(s, " %.17g\n", t->values ? t->values[k] : 1.0);
        }
        bad |= ferror(s);
    }
    return finish(&f, bad, diag);
}
