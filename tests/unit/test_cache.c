/* Unit tests of the binary tensor cache (src/tensor/cache.c) and of the
 * cache policy of tessel_tensor_load: round trips, every truncation and
 * flipped byte, structurally bad files with valid checksums, oversized
 * claims, staleness, rebuilding, cache directories and out-of-memory;
 * and the same for pattern-only loads, which map the file. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessel/tensor.h"
#include "test_alloc.h"

/* The header layout documented at the top of src/tensor/cache.c; the tests
 * forge files with it, so a layout change must show up here. */
enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 8,
    OFF_HEADER_BYTES = 12,
    OFF_ORDER = 16,
    OFF_FLAGS = 20,
    OFF_DIMS = 24,
    OFF_NNZ = 88,
    OFF_FIELD = 120,
    OFF_PAYLOAD_BYTES = 152,
    OFF_PAYLOAD_SUM = 160,
    OFF_HEADER_SUM = 248,
    HEADER_BYTES = 256
};

typedef struct file_bytes {
    unsigned char *data;
    size_t size;
} file_bytes;

/* Each test runs in its own forked process with its own directory. */
static char work_dir[64];

static void make_work_dir(void)
{
    snprintf(work_dir, sizeof(work_dir), "/tmp/tessel-cache-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(work_dir));
}

static void remove_work_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work_dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void path_in_dir(char *buf, size_t n, const char *name)
{
    ck_assert_int_lt(snprintf(buf, n, "%s/%s", work_dir, name), (int)n);
}

/* ------------------------------------------------------------------ */
/* Tensors and files. */

typedef struct tensor_case {
    const char *name;
    unsigned order;
    uint64_t dims[3];
    unsigned nnz;
    uint32_t coords[6][3];
    int values;
} tensor_case;

static const tensor_case cases[] = {
    { "matrix", 2, { 4, 5 }, 5, { { 0, 0 }, { 0, 4 }, { 1, 2 }, { 3, 0 }, { 3, 3 } }, 1 },
    { "matrix-pattern", 2, { 4, 9 }, 3, { { 3, 8 }, { 0, 0 }, { 1, 4 } }, 0 },
    { "tensor", 3, { 2, 3, 4 }, 4, { { 0, 1, 2 }, { 1, 0, 0 }, { 1, 0, 3 }, { 1, 2, 0 } }, 1 },
    { "tensor-pattern", 3, { 3, 2, 2 }, 3, { { 2, 1, 1 }, { 0, 0, 1 }, { 2, 0, 0 } }, 0 },
    { "empty-matrix", 2, { 3, 3 }, 0, { { 0 } }, 1 },
    { "empty-tensor", 3, { 2, 2, 2 }, 0, { { 0 } }, 0 },
    { "vector", 1, { 6 }, 2, { { 5 }, { 1 } }, 1 },
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static tessel_tensor *build(const tensor_case *c, const tessel_allocator *a)
{
    tessel_coo_builder *b = NULL;
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(c->order, c->dims, c->values, a, &b, NULL), 0);
    for (unsigned k = 0; k < c->nnz; k++)
        ck_assert_int_eq(tessel_coo_builder_add(b, c->coords[k], 1.5 + k), 0);
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

static void assert_same_tensor(const tessel_tensor *a, const tessel_tensor *b)
{
    ck_assert_uint_eq(a->order, b->order);
    ck_assert_mem_eq(a->dims, b->dims, sizeof(a->dims));
    ck_assert_uint_eq(a->nnz, b->nnz);
    ck_assert_mem_eq(a->ptr, b->ptr, (a->dims[0] + 1) * sizeof(uint64_t));
    ck_assert_ptr_null(b->idx[0]);
    for (unsigned m = 1; m < a->order; m++) {
        ck_assert_int_eq(b->idx[m] == NULL, a->nnz == 0);
        if (a->nnz)
            ck_assert_mem_eq(a->idx[m], b->idx[m], a->nnz * sizeof(uint32_t));
    }
    ck_assert_int_eq(b->values != NULL, a->values != NULL && a->nnz > 0);
    if (b->values)
        ck_assert_mem_eq(a->values, b->values, a->nnz * sizeof(double));
    ck_assert_str_eq(a->field, b->field);
    ck_assert_str_eq(a->symmetry, b->symmetry);
}

static file_bytes slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    file_bytes fb = { NULL, (size_t)ftell(f) };
    rewind(f);
    fb.data = malloc(fb.size);
    ck_assert_ptr_nonnull(fb.data);
    ck_assert_uint_eq(fread(fb.data, 1, fb.size, f), fb.size);
    fclose(f);
    return fb;
}

static void spit(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, size, f), size);
    ck_assert_int_eq(fclose(f), 0);
}

static void write_text(const char *path, const char *text)
{
    spit(path, text, strlen(text));
}

/* The bytes of a cache of cases[i] written with source identity src. */
static file_bytes cache_bytes(int i, const tessel_cache_source *src)
{
    char path[128];
    path_in_dir(path, sizeof(path), "bytes.tsl");
    tessel_tensor *t = build(&cases[i], NULL);
    ck_assert_int_eq(tessel_cache_write(t, src, path, NULL), TESSEL_OK);
    tessel_tensor_free(&t);
    file_bytes fb = slurp(path);
    unlink(path);
    return fb;
}

static uint64_t checksum_of(const void *data, size_t n)
{
    tessel_checksum c;
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, data, n);
    return tessel_checksum_final(&c);
}

static void put_u32(file_bytes *fb, size_t off, uint32_t v)
{
    memcpy(fb->data + off, &v, sizeof(v));
}

static void put_u64(file_bytes *fb, size_t off, uint64_t v)
{
    memcpy(fb->data + off, &v, sizeof(v));
}

/* Recomputes both checksums, so only the semantic checks can object. */
static void reseal(file_bytes *fb)
{
    put_u64(fb, OFF_PAYLOAD_SUM, checksum_of(fb->data + HEADER_BYTES, fb->size - HEADER_BYTES));
    put_u64(fb, OFF_HEADER_SUM, checksum_of(fb->data, OFF_HEADER_SUM));
}

/* Parses fb with a counting allocator: the result code, and no block may
 * outlive a failure. *peak (may be NULL) receives the most bytes held. */
static int parse_counted(const file_bytes *fb, size_t size, tessel_diag *d, size_t *peak)
{
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_tensor *t = NULL;
    tessel_diag_clear(d);
    int rc = tessel_cache_parse("forged.tsl", fb->data, size, &ta.allocator, &t, d);
    ck_assert_int_eq(rc == TESSEL_OK, t != NULL);
    tessel_tensor_free(&t);
    ck_assert_int_eq(ta.live, 0);
    if (peak)
        *peak = ta.peak;
    return rc;
}

static void assert_corrupt(const file_bytes *fb, const char *needle)
{
    tessel_diag d;
    int rc = parse_counted(fb, fb->size, &d, NULL);
    ck_assert_msg(rc == TESSEL_ECORRUPT, "expected ECORRUPT, got %d (%s)", rc, d.message);
    ck_assert_str_eq(d.file, "forged.tsl");
    ck_assert_msg(strstr(d.message, "corrupt cache") && strstr(d.message, needle),
                  "message '%s' lacks '%s'", d.message, needle);
}

/* ------------------------------------------------------------------ */

START_TEST(round_trip)
{
    const tensor_case *c = &cases[_i];
    char path[128];
    path_in_dir(path, sizeof(path), "rt.tsl");
    tessel_tensor *a = build(c, NULL);
    const tessel_cache_source src = { 1234, 5678901234, 3 };
    ck_assert_int_eq(tessel_cache_write(a, &src, path, NULL), TESSEL_OK);

    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_tensor *b = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_cache_read(path, &src, &ta.allocator, &b, &d), TESSEL_OK);
    ck_assert_ptr_eq(b->alloc, &ta.allocator);
    assert_same_tensor(a, b);
    tessel_tensor_free(&b);
    ck_assert_int_eq(ta.live, 0);

    /* From memory, and through the generic loader (kind by extension). */
    file_bytes fb = slurp(path);
    ck_assert_int_eq(tessel_cache_parse(c->name, fb.data, fb.size, NULL, &b, &d), TESSEL_OK);
    assert_same_tensor(a, b);
    tessel_tensor_free(&b);
    int origin = -1;
    ck_assert_int_eq(tessel_tensor_load(path, NULL, NULL, &b, &origin, &d), TESSEL_OK);
    ck_assert_int_eq(origin, TESSEL_LOADED_CACHE);
    assert_same_tensor(a, b);
    tessel_tensor_free(&b);
    free(fb.data);
    tessel_tensor_free(&a);
}
END_TEST

/* The file's name and the advice travel with every error. */
START_TEST(errors_name_the_file)
{
    char path[128];
    path_in_dir(path, sizeof(path), "bad.tsl");
    write_text(path, "TESSELC\nshort");
    tessel_tensor *t = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_cache_read(path, NULL, NULL, &t, &d), TESSEL_ECORRUPT);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(d.file, path);
    ck_assert_ptr_nonnull(strstr(d.message, "rebuild it with tessel convert"));

    path_in_dir(path, sizeof(path), "missing.tsl");
    ck_assert_int_eq(tessel_cache_read(path, NULL, NULL, &t, &d), TESSEL_EIO);
    ck_assert_str_eq(d.file, path);
    ck_assert_int_eq(tessel_cache_read(work_dir, NULL, NULL, &t, &d), TESSEL_EIO);
    ck_assert_ptr_null(t);
}
END_TEST

/* Every proper prefix of a file, on disk and in memory. */
START_TEST(every_truncation_is_corrupt)
{
    file_bytes fb = cache_bytes(_i, NULL);
    char path[128];
    path_in_dir(path, sizeof(path), "cut.tsl");
    for (size_t n = 0; n < fb.size; n++) {
        tessel_diag d;
        ck_assert_int_eq(parse_counted(&fb, n, &d, NULL), TESSEL_ECORRUPT);
        spit(path, fb.data, n);
        test_alloc ta;
        test_alloc_init(&ta, 0);
        tessel_tensor *t = NULL;
        int rc = tessel_cache_read(path, NULL, &ta.allocator, &t, &d);
        ck_assert_msg(rc == TESSEL_ECORRUPT || rc == TESSEL_EIO, "length %zu: %d", n, rc);
        ck_assert_ptr_null(t);
        ck_assert_int_eq(ta.live, 0);
    }
    free(fb.data);
}
END_TEST

/* Any single damaged byte, low or high bit, anywhere. */
START_TEST(every_flipped_byte_is_corrupt)
{
    file_bytes fb = cache_bytes(_i, NULL);
    static const unsigned char masks[] = { 0x01, 0x80, 0xff };
    for (size_t off = 0; off < fb.size; off++)
        for (size_t k = 0; k < sizeof(masks); k++) {
            fb.data[off] ^= masks[k];
            tessel_diag d;
            int rc = parse_counted(&fb, fb.size, &d, NULL);
            ck_assert_msg(rc == TESSEL_ECORRUPT, "offset %zu mask %#x: %d", off, masks[k], rc);
            fb.data[off] ^= masks[k];
        }
    free(fb.data);
}
END_TEST

START_TEST(wrong_magic_and_version)
{
    file_bytes fb = cache_bytes(0, NULL);
    memcpy(fb.data + OFF_MAGIC, "TESSELX\n", 8);
    reseal(&fb);
    assert_corrupt(&fb, "bad magic");
    memcpy(fb.data + OFF_MAGIC, "TESSELC\n", 8);
    put_u32(&fb, OFF_VERSION, 2);
    reseal(&fb);
    assert_corrupt(&fb, "version");
    put_u32(&fb, OFF_VERSION, 1);
    put_u32(&fb, OFF_HEADER_BYTES, HEADER_BYTES + 8);
    reseal(&fb);
    assert_corrupt(&fb, "header");
    free(fb.data);
}
END_TEST

/* Files whose checksums are right but whose content breaks the tensor
 * layout: only the structure checks stand between them and the caller. */
typedef struct forgery {
    const char *what;
    size_t offset; /* into the file */
    unsigned width; /* 4 or 8 */
    uint64_t value;
    const char *needle;
} forgery;

/* cases[0] is the 4x5 matrix with ptr = {0, 2, 3, 3, 5} and
 * idx[1] = {0, 4, 2, 0, 3}: ptr at 256, idx[1] at 296, values at 316. */
static const forgery forgeries[] = {
    { "ptr[0] != 0", 256, 8, 1, "row pointers" },
    { "ptr[rows] != nnz", 256 + 4 * 8, 8, 4, "row pointers" },
    { "ptr decreases", 256 + 2 * 8, 8, 1, "row pointers decrease" },
    { "ptr beyond nnz", 256 + 3 * 8, 8, 99, "row pointers" },
    { "column out of range", 296 + 1 * 4, 4, 5, "out of range" },
    { "column huge", 296 + 1 * 4, 4, UINT32_MAX, "out of range" },
    { "duplicate entry", 296 + 1 * 4, 4, 0, "sorted and unique" },
    { "unsorted slice", 296 + 3 * 4, 4, 4, "sorted and unique" },
    { "order 0", OFF_ORDER, 4, 0, "order" },
    { "order 9", OFF_ORDER, 4, 9, "order" },
    { "unknown flag", OFF_FLAGS, 4, 3, "flags" },
    { "dims beyond the limit", OFF_DIMS + 8, 8, (uint64_t)TESSEL_MAX_DIM + 1, "dimension" },
    { "rows disagree with size", OFF_DIMS, 8, 5, "size" },
    { "nnz disagrees with size", OFF_NNZ, 8, 6, "size" },
    { "payload size lies", OFF_PAYLOAD_BYTES, 8, 8, "size" },
    { "values flag dropped", OFF_FLAGS, 4, 0, "size" },
};
#define NFORGERIES ((int)(sizeof(forgeries) / sizeof(forgeries[0])))

START_TEST(structure_is_checked)
{
    const forgery *f = &forgeries[_i];
    file_bytes fb = cache_bytes(0, NULL);
    ck_assert_uint_eq(fb.size, HEADER_BYTES + 5 * 8 + 5 * 4 + 5 * 8);
    if (f->width == 4)
        put_u32(&fb, f->offset, (uint32_t)f->value);
    else
        put_u64(&fb, f->offset, f->value);
    reseal(&fb);
    assert_corrupt(&fb, f->needle);
    free(fb.data);
}
END_TEST

START_TEST(field_name_is_checked)
{
    file_bytes fb = cache_bytes(0, NULL);
    memset(fb.data + OFF_FIELD, 'x', 16);
    reseal(&fb);
    assert_corrupt(&fb, "field or symmetry");
    memcpy(fb.data + OFF_FIELD, "pattern\0", 8);
    reseal(&fb);
    assert_corrupt(&fb, "disagrees");
    free(fb.data);
    /* A pattern file (cases[1]) claiming a real field. */
    fb = cache_bytes(1, NULL);
    memcpy(fb.data + OFF_FIELD, "real\0\0\0\0", 8);
    reseal(&fb);
    assert_corrupt(&fb, "disagrees");
    free(fb.data);
}
END_TEST

/* A header claiming enormous arrays in a small file is refused before any
 * array is allocated. */
START_TEST(huge_claims_allocate_nothing)
{
    /* rows, nnz, payload bytes (0: as written); the 4x5 matrix has 4, 5. */
    static const uint64_t claims[][3] = {
        { 4, 1000000000000ull, 0 },
        { 4, UINT64_MAX, 0 },
        { 4, UINT64_MAX / 16 + 1, 0 },
        { 4000000000ull, 5, 0 },
        { UINT64_MAX, 5, 0 },
        { 4, 5, 1ull << 40 },
        /* Self-consistent headers: only the file size gives them away. */
        { 4, 1000000000000ull, 5 * 8 + 1000000000000ull * 12 },
        { 4000000000ull, 5, 4000000001ull * 8 + 5 * 12 },
    };
    for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++) {
        file_bytes fb = cache_bytes(0, NULL);
        put_u64(&fb, OFF_DIMS, claims[i][0]);
        put_u64(&fb, OFF_NNZ, claims[i][1]);
        if (claims[i][2])
            put_u64(&fb, OFF_PAYLOAD_BYTES, claims[i][2]);
        reseal(&fb);
        tessel_diag d;
        size_t peak = 0;
        ck_assert_int_eq(parse_counted(&fb, fb.size, &d, &peak), TESSEL_ECORRUPT);
        ck_assert_msg(peak < 1024, "claim %zu: %zu bytes allocated", i, peak);
        free(fb.data);
    }
}
END_TEST

START_TEST(stale_source_is_refused)
{
    char path[128];
    path_in_dir(path, sizeof(path), "stale.tsl");
    const tessel_cache_source src = { 4096, 1700000000123456789, 1 };
    tessel_tensor *t = build(&cases[0], NULL);
    ck_assert_int_eq(tessel_cache_write(t, &src, path, NULL), TESSEL_OK);
    tessel_tensor_free(&t);
    const tessel_cache_source others[] = {
        { 4097, src.mtime_ns, src.options },
        { src.size, src.mtime_ns + 1, src.options },
        { src.size, src.mtime_ns, 0 },
        { 0, 0, 0 },
    };
    tessel_diag d;
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        test_alloc ta;
        test_alloc_init(&ta, 0);
        ck_assert_int_eq(tessel_cache_read(path, &others[i], &ta.allocator, &t, &d),
                         TESSEL_ESTALE);
        ck_assert_ptr_null(t);
        ck_assert_int_eq(ta.live, 0);
        ck_assert_str_eq(d.file, path);
    }
    ck_assert_int_eq(tessel_cache_read(path, &src, NULL, &t, &d), TESSEL_OK);
    tessel_tensor_free(&t);
    ck_assert_int_eq(tessel_cache_read(path, NULL, NULL, &t, &d), TESSEL_OK);
    tessel_tensor_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The cache policy of tessel_tensor_load. */

static const char *const source_v1 =
    "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n3 2 2\n2 2 0\n";
static const char *const source_v2 =
    "%%MatrixMarket matrix coordinate real general\n3 4 4\n1 1 1\n3 2 2\n2 2 5\n3 4 7\n";

/* Loads src and checks where the tensor came from and its size. */
static void load_expect(const char *src, const tessel_load_options *opt, int origin,
                        uint64_t nnz)
{
    tessel_tensor *t = NULL;
    tessel_diag d;
    int got = -1;
    int rc = tessel_tensor_load(src, opt, NULL, &t, &got, &d);
    ck_assert_msg(rc == TESSEL_OK, "%s: %s", src, d.message);
    ck_assert_int_eq(got, origin);
    ck_assert_uint_eq(t->nnz, nnz);
    tessel_tensor_free(&t);
}

static void set_mtime(const char *path, time_t seconds)
{
    struct timespec times[2] = { { seconds, 0 }, { seconds, 0 } };
    ck_assert_int_eq(utimensat(AT_FDCWD, path, times, 0), 0);
}

static void damage(const char *path, long offset)
{
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, offset, SEEK_SET), 0);
    int c = fgetc(f);
    ck_assert_int_ne(c, EOF);
    ck_assert_int_eq(fseek(f, offset, SEEK_SET), 0);
    fputc(c ^ 0x40, f);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(load_builds_uses_and_rebuilds)
{
    char src[128], cache[192];
    path_in_dir(src, sizeof(src), "m.mtx");
    write_text(src, source_v1);
    set_mtime(src, 1000000000);
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.cache_policy = TESSEL_CACHE_USE;
    ck_assert_int_eq(tessel_cache_path_for(src, &opt, cache, sizeof(cache)), TESSEL_OK);
    ck_assert_int_eq(access(cache, F_OK), -1);

    load_expect(src, &opt, TESSEL_LOADED_CACHE_REBUILT, 3);
    ck_assert_int_eq(access(cache, F_OK), 0);
    load_expect(src, &opt, TESSEL_LOADED_CACHE, 3);

    /* Only the mtime changes (a touch): rebuilt, then used again. */
    set_mtime(src, 1000000001);
    load_expect(src, &opt, TESSEL_LOADED_CACHE_REBUILT, 3);
    load_expect(src, &opt, TESSEL_LOADED_CACHE, 3);

    /* Rewritten with other content. */
    write_text(src, source_v2);
    load_expect(src, &opt, TESSEL_LOADED_CACHE_REBUILT, 4);
    load_expect(src, &opt, TESSEL_LOADED_CACHE, 4);

    /* Other load options are another identity; REBUILD ignores freshness. */
    write_text(src, source_v1);
    load_expect(src, &opt, TESSEL_LOADED_CACHE_REBUILT, 3);
    opt.drop_zeros = 1;
    load_expect(src, &opt, TESSEL_LOADED_CACHE_REBUILT, 2);
    load_expect(src, &opt, TESSEL_LOADED_CACHE, 2);
    opt.cache_policy = TESSEL_CACHE_REBUILD;
    load_expect(src, &opt, TESSEL_LOADED_CACHE_REBUILT, 2);
    opt.cache_policy = TESSEL_CACHE_OFF;
    load_expect(src, &opt, TESSEL_LOADED_SOURCE, 2);
}
END_TEST

/* A damaged cache beside its source is replaced, never believed: once in
 * the payload, once in the header, once cut short. */
START_TEST(corrupt_cache_is_rebuilt)
{
    char src[128], cache[192];
    path_in_dir(src, sizeof(src), "m.mtx");
    write_text(src, source_v2);
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.cache_policy = TESSEL_CACHE_USE;
    ck_assert_int_eq(tessel_cache_path_for(src, &opt, cache, sizeof(cache)), TESSEL_OK);
    load_expect(src, &opt, TESSEL_LOADED_CACHE_REBUILT, 4);
    static const long offsets[] = { HEADER_BYTES + 12, OFF_NNZ, OFF_HEADER_SUM };
    for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
        damage(cache, offsets[i]);
        load_expect(src, &opt, TESSEL_LOADED_CACHE_REBUILT, 4);
        load_expect(src, &opt, TESSEL_LOADED_CACHE, 4);
    }
    ck_assert_int_eq(truncate(cache, HEADER_BYTES + 7), 0);
    load_expect(src, &opt, TESSEL_LOADED_CACHE_REBUILT, 4);
    load_expect(src, &opt, TESSEL_LOADED_CACHE, 4);
}
END_TEST

START_TEST(cache_dir_holds_the_cache)
{
    char src[128], dir[128], cache[256], beside[192];
    path_in_dir(src, sizeof(src), "t.tns");
    path_in_dir(dir, sizeof(dir), "caches");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    write_text(src, "1 2 3 4.5\n2 1 1 1\n2 1 3 2\n");
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.cache_policy = TESSEL_CACHE_USE;
    opt.cache_dir = dir;
    ck_assert_int_eq(tessel_cache_path_for(src, &opt, cache, sizeof(cache)), TESSEL_OK);
    ck_assert_ptr_nonnull(strstr(cache, dir));
    ck_assert_ptr_nonnull(strstr(cache, "/t.tns-"));
    load_expect(src, &opt, TESSEL_LOADED_CACHE_REBUILT, 3);
    load_expect(src, &opt, TESSEL_LOADED_CACHE, 3);
    ck_assert_int_eq(access(cache, F_OK), 0);
    snprintf(beside, sizeof(beside), "%s.tsl", src);
    ck_assert_int_eq(access(beside, F_OK), -1);

    /* An unwritable cache location costs speed, not correctness. */
    char nowhere[160];
    path_in_dir(nowhere, sizeof(nowhere), "no-such-dir");
    opt.cache_dir = nowhere;
    load_expect(src, &opt, TESSEL_LOADED_SOURCE, 3);
}
END_TEST

/* Writing goes through a temporary file: a failed write leaves no file,
 * a good one leaves exactly the cache (overwriting an older one). */
START_TEST(writes_are_atomic)
{
    char path[160], cmd[192];
    path_in_dir(path, sizeof(path), "no-such-dir/x.tsl");
    tessel_tensor *t = build(&cases[0], NULL);
    tessel_diag d;
    ck_assert_int_eq(tessel_cache_write(t, NULL, path, &d), TESSEL_EWRITE);
    ck_assert_str_eq(d.file, path);
    ck_assert_int_eq(access(path, F_OK), -1);
    path_in_dir(path, sizeof(path), "x.tsl");
    ck_assert_int_eq(tessel_cache_write(t, NULL, path, &d), TESSEL_OK);
    ck_assert_int_eq(tessel_cache_write(t, NULL, path, &d), TESSEL_OK);
    snprintf(cmd, sizeof(cmd), "test \"$(ls -A '%s')\" = x.tsl", work_dir);
    ck_assert_int_eq(system(cmd), 0);
    tessel_tensor_free(&t);
}
END_TEST

/* Failing the n-th allocation, for every n, gives ENOMEM and frees all. */
START_TEST(out_of_memory_every_allocation)
{
    const tensor_case *c = &cases[_i];
    char path[128];
    path_in_dir(path, sizeof(path), "oom.tsl");
    tessel_tensor *a = build(c, NULL);
    ck_assert_int_eq(tessel_cache_write(a, NULL, path, NULL), TESSEL_OK);
    long n = 1;
    for (;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_tensor *b = NULL;
        tessel_diag d;
        int rc = tessel_cache_read(path, NULL, &ta.allocator, &b, &d);
        if (rc == TESSEL_OK) {
            ck_assert_int_lt(ta.calls, n); /* nothing left to fail */
            assert_same_tensor(a, b);
            tessel_tensor_free(&b);
            ck_assert_int_eq(ta.live, 0);
            break;
        }
        ck_assert_msg(rc == TESSEL_ENOMEM, "allocation %ld: %d (%s)", n, rc, d.message);
        ck_assert_int_eq(d.code, TESSEL_ENOMEM);
        ck_assert_ptr_null(b);
        ck_assert_int_eq(ta.live, 0);
        ck_assert_int_lt(n, 100);
    }
    /* tensor, ptr, one array per further mode, values */
    ck_assert_int_eq(n - 1, 2 + (c->nnz ? (long)c->order - 1 + (c->values != 0) : 0));
    tessel_tensor_free(&a);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Mapped pattern-only loads: a .tsl's ptr and idx used in place. */

/* tessel_tensor_load of path with pattern_only, through ta. */
static int load_pattern(const char *path, test_alloc *ta, tessel_tensor **t, tessel_diag *d)
{
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.pattern_only = 1;
    tessel_diag_clear(d);
    return tessel_tensor_load(path, &opt, &ta->allocator, t, NULL, d);
}

/* b holds a's pattern (ptr and idx) and no values. */
static void assert_same_pattern(const tessel_tensor *a, const tessel_tensor *b)
{
    ck_assert_uint_eq(a->order, b->order);
    ck_assert_mem_eq(a->dims, b->dims, sizeof(a->dims));
    ck_assert_uint_eq(a->nnz, b->nnz);
    ck_assert_mem_eq(a->ptr, b->ptr, (a->dims[0] + 1) * sizeof(uint64_t));
    ck_assert_ptr_null(b->idx[0]);
    for (unsigned m = 1; m < a->order; m++) {
        ck_assert_int_eq(b->idx[m] == NULL, a->nnz == 0);
        if (a->nnz)
            ck_assert_mem_eq(a->idx[m], b->idx[m], a->nnz * sizeof(uint32_t));
    }
    ck_assert_ptr_null(b->values);
    ck_assert_str_eq(a->field, b->field);
}

/* The load maps the file: the allocator gives only the tensor's struct, the
 * arrays lie in t->mapping; a clone owns copies that outlive the mapping. */
START_TEST(pattern_load_maps_the_file)
{
    const tensor_case *c = &cases[_i];
    char path[128];
    path_in_dir(path, sizeof(path), "map.tsl");
    tessel_tensor *a = build(c, NULL);
    ck_assert_int_eq(tessel_cache_write(a, NULL, path, NULL), TESSEL_OK);
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_tensor *b = NULL;
    tessel_diag d;
    ck_assert_msg(load_pattern(path, &ta, &b, &d) == TESSEL_OK, "%s", d.message);
    assert_same_pattern(a, b);
    ck_assert_ptr_nonnull(b->mapping);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(b->mapping_bytes, (uint64_t)st.st_size);
    const unsigned char *lo = b->mapping;
    ck_assert((const unsigned char *)b->ptr == lo + HEADER_BYTES);
    ck_assert_int_eq(ta.live, 1);
    ck_assert_uint_eq(ta.peak, sizeof(tessel_tensor));

    tessel_tensor *copy = NULL;
    ck_assert_int_eq(tessel_tensor_clone(b, 0, &ta.allocator, &copy, &d), TESSEL_OK);
    ck_assert_ptr_null(copy->mapping);
    ck_assert_uint_eq(copy->mapping_bytes, 0);
    ck_assert((const unsigned char *)copy->ptr < lo ||
              (const unsigned char *)copy->ptr >= lo + b->mapping_bytes);
    tessel_tensor_free(&b);
    ck_assert_ptr_null(b);
    assert_same_pattern(a, copy); /* read after the unmapping */
    tessel_tensor_free(&copy);
    ck_assert_int_eq(ta.live, 0);
    tessel_tensor_free(&a);
}
END_TEST

/* path written with fb's first n bytes, loaded pattern-only: corrupt, with
 * nothing mapped or allocated left behind; the message (returned in d). */
static void assert_pattern_load_corrupt(const char *path, const file_bytes *fb, size_t n,
                                        tessel_diag *d)
{
    spit(path, fb->data, n);
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_tensor *t = NULL;
    int rc = load_pattern(path, &ta, &t, d);
    ck_assert_msg(rc == TESSEL_ECORRUPT, "length %zu: %d (%s)", n, rc, d->message);
    ck_assert_ptr_null(t);
    ck_assert_int_eq(ta.live, 0);
    ck_assert_str_eq(d->file, path);
    ck_assert_ptr_nonnull(strstr(d->message, "corrupt cache"));
}

/* Every proper prefix of a file and any single damaged byte, loaded
 * pattern-only from disk: a clear error naming the file, no crash. */
START_TEST(pattern_load_damaged_files)
{
    file_bytes fb = cache_bytes(_i, NULL);
    char path[128];
    path_in_dir(path, sizeof(path), "cut.tsl");
    tessel_diag d;
    for (size_t n = 0; n < fb.size; n++) {
        assert_pattern_load_corrupt(path, &fb, n, &d);
        ck_assert_msg(strstr(d.message, n < HEADER_BYTES ? "shorter than its header"
                                                         : "truncated?"),
                      "length %zu: %s", n, d.message);
    }
    for (size_t off = 0; off < fb.size; off++) {
        fb.data[off] ^= 0x81;
        assert_pattern_load_corrupt(path, &fb, fb.size, &d);
        fb.data[off] ^= 0x81;
    }
    free(fb.data);
}
END_TEST

/* The forgeries of structure_is_checked, from disk through the mapping:
 * the same messages as the read path's. */
START_TEST(pattern_load_checks_structure)
{
    char path[128];
    path_in_dir(path, sizeof(path), "forged.tsl");
    file_bytes fb = cache_bytes(0, NULL);
    for (int i = 0; i < NFORGERIES; i++) {
        const forgery *f = &forgeries[i];
        file_bytes forged = { malloc(fb.size), fb.size };
        ck_assert_ptr_nonnull(forged.data);
        memcpy(forged.data, fb.data, fb.size);
        if (f->width == 4)
            put_u32(&forged, f->offset, (uint32_t)f->value);
        else
            put_u64(&forged, f->offset, f->value);
        reseal(&forged);
        tessel_diag d;
        assert_pattern_load_corrupt(path, &forged, forged.size, &d);
        ck_assert_msg(strstr(d.message, f->needle), "%s: message '%s' lacks '%s'", f->what,
                      d.message, f->needle);
        free(forged.data);
    }
    free(fb.data);
}
END_TEST

/* A matrix whose columns span many of the mapped load's check windows
 * (256 KiB of column indices each): 600 rows of 500 entries, 1.2 MB. */
static tessel_tensor *wide_matrix(void)
{
    const uint64_t dims[2] = { 600, 1000 };
    tessel_coo_builder *b = NULL;
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 1, NULL, &b, NULL), 0);
    int bad = 0; /* one assertion, not 300,000 (each one messages Check's parent) */
    for (uint32_t r = 0; r < 600; r++)
        for (uint32_t k = 0; k < 500; k++) {
            const uint32_t xy[2] = { r, (r * 7 + k * 2) % 1000 };
            bad |= tessel_coo_builder_add(b, xy, 1.0 + k) != 0;
        }
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    ck_assert_uint_eq(t->nnz, 300000);
    return t;
}

/* Past the first window: the mapped pattern equals the read one; a defect
 * deep in the columns is found with the read path's message, and a damaged
 * byte there, left unsealed, is a checksum mismatch. */
START_TEST(pattern_load_across_windows)
{
    char path[128];
    path_in_dir(path, sizeof(path), "wide.tsl");
    tessel_tensor *a = wide_matrix();
    ck_assert_int_eq(tessel_cache_write(a, NULL, path, NULL), TESSEL_OK);
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_tensor *b = NULL;
    tessel_diag d;
    ck_assert_int_eq(load_pattern(path, &ta, &b, &d), TESSEL_OK);
    ck_assert_ptr_nonnull(b->mapping);
    assert_same_pattern(a, b);
    tessel_tensor_free(&b);

    file_bytes fb = slurp(path);
    /* Row 500's columns are 0, 2, 4, ...; its first entry is entry 250000,
     * in the fourth window. */
    size_t cols = HEADER_BYTES + 601 * 8;
    static const struct {
        size_t entry;
        uint32_t value;
        int seal;
        const char *needle;
    } defects[] = {
        { 250000, 1000, 1, "out of range" }, /* column 1000 of 1000 */
        { 250001, 0, 1, "sorted and unique" },
        { 250001, 1, 0, "payload checksum mismatch" }, /* still sorted */
    };
    for (size_t i = 0; i < sizeof(defects) / sizeof(defects[0]); i++) {
        file_bytes bad = { malloc(fb.size), fb.size };
        ck_assert_ptr_nonnull(bad.data);
        memcpy(bad.data, fb.data, fb.size);
        put_u32(&bad, cols + defects[i].entry * 4, defects[i].value);
        if (defects[i].seal)
            reseal(&bad);
        spit(path, bad.data, bad.size);
        ck_assert_int_eq(load_pattern(path, &ta, &b, &d), TESSEL_ECORRUPT);
        ck_assert_ptr_null(b);
        ck_assert_msg(strstr(d.message, defects[i].needle), "%s", d.message);
        free(bad.data);
    }
    ck_assert_int_eq(ta.live, 0);
    free(fb.data);
    tessel_tensor_free(&a);
}
END_TEST

/* tessel_cache_write replaces a file by renaming a new one over it, so a
 * tensor mapped from the old file keeps the old bytes. */
START_TEST(mapped_tensor_survives_a_rewrite)
{
    char path[128];
    path_in_dir(path, sizeof(path), "swap.tsl");
    tessel_tensor *a = build(&cases[0], NULL), *other = build(&cases[1], NULL);
    ck_assert_int_eq(tessel_cache_write(a, NULL, path, NULL), TESSEL_OK);
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_tensor *b = NULL;
    tessel_diag d;
    ck_assert_int_eq(load_pattern(path, &ta, &b, &d), TESSEL_OK);
    ck_assert_ptr_nonnull(b->mapping);
    ck_assert_int_eq(tessel_cache_write(other, NULL, path, NULL), TESSEL_OK);
    assert_same_pattern(a, b);
    tessel_tensor_free(&b);
    ck_assert_int_eq(load_pattern(path, &ta, &b, &d), TESSEL_OK);
    assert_same_pattern(other, b);
    tessel_tensor_free(&b);
    ck_assert_int_eq(ta.live, 0);
    tessel_tensor_free(&a);
    tessel_tensor_free(&other);
}
END_TEST

/* Out of memory: a mapped load allocates the tensor's struct only. */
START_TEST(pattern_load_out_of_memory)
{
    const tensor_case *c = &cases[_i];
    char path[128];
    path_in_dir(path, sizeof(path), "oom.tsl");
    tessel_tensor *a = build(c, NULL);
    ck_assert_int_eq(tessel_cache_write(a, NULL, path, NULL), TESSEL_OK);
    test_alloc ta;
    test_alloc_init(&ta, 1);
    tessel_tensor *b = NULL;
    tessel_diag d;
    ck_assert_int_eq(load_pattern(path, &ta, &b, &d), TESSEL_ENOMEM);
    ck_assert_ptr_null(b);
    ck_assert_int_eq(ta.live, 0);
    test_alloc_init(&ta, 2);
    ck_assert_int_eq(load_pattern(path, &ta, &b, &d), TESSEL_OK);
    ck_assert_int_eq(ta.calls, 1);
    assert_same_pattern(a, b);
    tessel_tensor_free(&b);
    ck_assert_int_eq(ta.live, 0);
    tessel_tensor_free(&a);
}
END_TEST

static Suite *cache_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("cache");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, make_work_dir, remove_work_dir);
    tcase_add_loop_test(tc, round_trip, 0, NCASES);
    tcase_add_test(tc, errors_name_the_file);
    tcase_add_loop_test(tc, every_truncation_is_corrupt, 0, NCASES);
    tcase_add_loop_test(tc, every_flipped_byte_is_corrupt, 0, NCASES);
    tcase_add_test(tc, wrong_magic_and_version);
    tcase_add_loop_test(tc, structure_is_checked, 0, NFORGERIES);
    tcase_add_test(tc, field_name_is_checked);
    tcase_add_test(tc, huge_claims_allocate_nothing);
    tcase_add_test(tc, stale_source_is_refused);
    tcase_add_test(tc, load_builds_uses_and_rebuilds);
    tcase_add_test(tc, corrupt_cache_is_rebuilt);
    tcase_add_test(tc, cache_dir_holds_the_cache);
    tcase_add_test(tc, writes_are_atomic);
    tcase_add_loop_test(tc, out_of_memory_every_allocation, 0, NCASES);
    tcase_add_loop_test(tc, pattern_load_maps_the_file, 0, NCASES);
    tcase_add_loop_test(tc, pattern_load_damaged_files, 0, NCASES);
    tcase_add_test(tc, pattern_load_checks_structure);
    tcase_add_test(tc, pattern_load_across_windows);
    tcase_add_test(tc, mapped_tensor_survives_a_rewrite);
    tcase_add_loop_test(tc, pattern_load_out_of_memory, 0, NCASES);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cache_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
