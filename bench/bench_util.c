/* Helpers shared by the benchmarks (see bench_util.h). */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_HEADER 16u

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_best_of(int runs, bench_fn fn, void *ctx)
{
    double best = -1;
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now();
        if (fn(ctx))
            return -1;
        double dt = bench_now() - t0;
        if (best < 0 || dt < best)
            best = dt;
    }
    return best;
}

/* ------------------------------------------------------------------ */

static void *bench_alloc_fn(void *ud, void *ptr, size_t size)
{
    bench_alloc *ba = ud;
    unsigned char *block = ptr ? (unsigned char *)ptr - BENCH_HEADER : NULL;
    size_t old = 0;
    if (block)
        memcpy(&old, block, sizeof(old));
    if (size == 0) {
        if (block) {
            ba->live -= old;
            free(block);
        }
        return NULL;
    }
    unsigned char *grown = realloc(block, size + BENCH_HEADER);
    if (!grown)
        return NULL;
    ba->calls++;
    memcpy(grown, &size, sizeof(size));
    ba->live = ba->live - old + size;
    if (ba->live > ba->peak)
        ba->peak = ba->live;
    return grown + BENCH_HEADER;
}

void bench_alloc_init(bench_alloc *ba)
{
    memset(ba, 0, sizeof(*ba));
    ba->allocator.fn = bench_alloc_fn;
    ba->allocator.ud = ba;
}

void bench_alloc_reset_peak(bench_alloc *ba)
{
    ba->peak = ba->live;
}

/* ------------------------------------------------------------------ */

uint64_t bench_rng_next(bench_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t bench_rng_below(bench_rng *r, uint64_t n)
{
    return bench_rng_next(r) % n;
}

/* One R-MAT draw on a 2^levels grid: at each level pick a quadrant with
 * probabilities a, b, c, d; positions past n are redrawn. */
static void rmat_draw(bench_rng *r, unsigned levels, uint64_t n, uint32_t *rc)
{
    /* a = .57, b = .19, c = .19, d = .05 as thresholds out of 2^16. */
    const uint64_t ta = 37356, tb = 37356 + 12452, tc = 37356 + 2 * 12452;
    for (;;) {
        uint64_t row = 0, col = 0, bits = 0;
        unsigned left = 0;
        for (unsigned l = 0; l < levels; l++) {
            if (left < 16) {
                bits = bench_rng_next(r);
                left = 64;
            }
            uint64_t u = bits & 0xffff;
            bits >>= 16;
            left -= 16;
            row = row << 1 | (u >= tb);
            col = col << 1 | ((u >= ta && u < tb) || u >= tc);
        }
        if (row < n && col < n) {
            rc[0] = (uint32_t)row;
            rc[1] = (uint32_t)col;
            return;
        }
    }
}

int bench_synthetic(bench_synth_kind kind, uint64_t n, uint64_t draws, uint64_t seed,
                    const tessel_allocator *a, tessel_tensor **out)
{
    uint64_t dims[2] = { n, n };
    tessel_coo_builder *b = NULL;
    int rc = tessel_coo_builder_create(2, dims, 1, a, &b, NULL);
    if (rc)
        return rc;
    rc = tessel_coo_builder_reserve(b, draws);
    unsigned levels = 0;
    while ((1ull << levels) < n)
        levels++;
    bench_rng r = { seed };
    for (uint64_t k = 0; k < draws && !rc; k++) {
        uint32_t c[2];
        if (kind == BENCH_SYNTH_RMAT) {
            rmat_draw(&r, levels, n, c);
        } else {
            c[0] = (uint32_t)bench_rng_below(&r, n);
            c[1] = (uint32_t)bench_rng_below(&r, n);
        }
        double v = (double)((bench_rng_next(&r) >> 11) + 1) * 0x1p-53;
        rc = tessel_coo_builder_add(b, c, v);
    }
    if (!rc)
        rc = tessel_coo_builder_finish(b, 0, out, NULL);
    tessel_coo_builder_free(&b);
    return rc;
}

uint64_t bench_csr_bytes(const tessel_tensor *t)
{
    return 8 * (t->dims[0] + 1) + 4 * t->nnz + 8 * t->nnz;
}

const char *bench_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

void bench_spmspm_spec(tessel_spec *s, const char *order, const uint64_t *tile)
{
    memset(s, 0, sizeof(*s));
    tessel_spec_workload *w = &s->workload;
    w->kind = TESSEL_WORKLOAD_SPMSPM;
    w->nindices = 3;
    strcpy(w->index_name[0], "i");
    strcpy(w->index_name[1], "j");
    strcpy(w->index_name[2], "k");
    w->ntensors = 3;
    unsigned idx[3][2] = { { 0, 1 }, { 0, 2 }, { 2, 1 } };
    for (unsigned t = 0; t < 3; t++) {
        snprintf(w->tensor[t].name, sizeof(w->tensor[t].name), "%c", "ZAB"[t]);
        w->tensor[t].rank = 2;
        w->tensor[t].index[0] = idx[t][0];
        w->tensor[t].index[1] = idx[t][1];
    }
    s->nlevels = 2;
    for (unsigned l = 0; l < 2; l++) {
        tessel_spec_level *lv = &s->level[l];
        snprintf(lv->name, sizeof(lv->name), "%s", l ? "LLB" : "DRAM");
        lv->instances = 1;
        lv->word_bits = 64;
        lv->value_bits = 64;
        lv->coord_bits = lv->offset_bits = lv->run_bits = 32;
        lv->format = 1;
        for (unsigned t = 0; t < 3; t++) {
            lv->tensor[t].format = -1;
            lv->tensor[t].sparse.skip_on = t == 0 ? 6u : (t == 1 ? 4u : 2u);
        }
    }
    s->level[1].has_mapping = 1;
    for (unsigned x = 0; x < 3; x++)
        s->level[1].tile[x] = tile[x];
    for (unsigned p = 0; p < 3; p++)
        s->level[1].order[p] = order[p] == 'I' ? 0 : order[p] == 'J' ? 1 : 2;
}

int bench_manifest_open(bench_manifest *m, const char *path)
{
    m->f = fopen(path, "r");
    if (!m->f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return -1;
    }
    snprintf(m->dir, sizeof(m->dir), "%s", path);
    char *slash = strrchr(m->dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        m->dir[0] = '\0';
    char header[4096];
    if (!fgets(header, sizeof(header), m->f))
        header[0] = '\0';
    return 0;
}

int bench_manifest_next(bench_manifest *m, bench_manifest_row *out)
{
    char line[4096];
    while (fgets(line, sizeof(line), m->f)) {
        char *field[6] = { 0 };
        char *p = line;
        for (int i = 0; i < 6 && p; i++) {
            field[i] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = '\0';
        }
        if (!field[5] || strcmp(field[2], "matrix") != 0)
            continue;
        snprintf(out->name, sizeof(out->name), "%.127s", field[0]);
        snprintf(out->file, sizeof(out->file), "%s%s", m->dir, field[1]);
        out->square = strcmp(field[3], field[4]) == 0;
        return 1;
    }
    return 0;
}

void bench_manifest_close(bench_manifest *m)
{
    if (m->f)
        fclose(m->f);
    m->f = NULL;
}

int bench_bind_matrix(char *buf, size_t size, const char *name, const char *matrix)
{
    char real[PATH_MAX];
    if (!realpath(matrix, real)) {
        fprintf(stderr, "%s: not found\n", matrix);
        return -1;
    }
    snprintf(buf, size, "workload.data.%s='%s'", name, real);
    return 0;
}

tessel_spec *bench_spec_load(const char *path, const char *const *sets, size_t nsets,
                             const char *what)
{
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_spec *spec = NULL;
    if (tessel_spec_load(path, sets, nsets, NULL, &spec, &errors))
        fprintf(stderr, "%s: %s\n", what, errors.count ? errors.items[0].message : "?");
    tessel_diag_list_free(&errors);
    return spec;
}

tessel_workload_data *bench_data_load(const tessel_spec *spec, const char *what)
{
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.cache_policy = TESSEL_CACHE_OFF;
    tessel_workload_data *data = NULL;
    if (tessel_workload_load(spec, &opt, NULL, &data, &errors))
        fprintf(stderr, "%s: %s\n", what, errors.count ? errors.items[0].message : "?");
    tessel_diag_list_free(&errors);
    return data;
}
