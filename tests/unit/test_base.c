/* Unit tests of src/base: diagnostics, allocation helpers, checksum,
 * atomic output files. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessel/base.h"
#include "test_alloc.h"

START_TEST(diag_formatting)
{
    tessel_diag d;
    char buf[256];
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_diag_set(&d, TESSEL_EPARSE, "a.mtx", 12, 0, "row", "bad %s", "row"),
                     TESSEL_EPARSE);
    tessel_diag_format(&d, buf, sizeof(buf));
    ck_assert_str_eq(buf, "a.mtx:12: error: bad row");
    tessel_diag_set(&d, TESSEL_EINVAL, "s.yaml", 3, 7, NULL, "unknown key");
    tessel_diag_format(&d, buf, sizeof(buf));
    ck_assert_str_eq(buf, "s.yaml:3:7: error: unknown key");
    tessel_diag_set(&d, TESSEL_EIO, "x", 0, 0, NULL, "gone");
    tessel_diag_format(&d, buf, sizeof(buf));
    ck_assert_str_eq(buf, "x: error: gone");
    /* A NULL diag is allowed and the code still comes back. */
    ck_assert_int_eq(tessel_diag_set(NULL, TESSEL_ERANGE, NULL, 0, 0, NULL, "x"), TESSEL_ERANGE);
    ck_assert_str_eq(tessel_strerror(TESSEL_ENOMEM), "out of memory");
}
END_TEST

START_TEST(alloc_helpers)
{
    test_alloc ta;
    test_alloc_init(&ta, 0);
    ck_assert_ptr_null(tessel_alloc_array(&ta.allocator, SIZE_MAX / 2, 4));
    ck_assert_ptr_null(tessel_alloc(&ta.allocator, 0));
    char *s = tessel_strdup(&ta.allocator, "tessel");
    ck_assert_str_eq(s, "tessel");
    int *v = tessel_alloc_array(&ta.allocator, 10, sizeof(int));
    v = tessel_realloc_array(&ta.allocator, v, 1000, sizeof(int));
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(ta.live, 2);
    tessel_dealloc(&ta.allocator, v);
    tessel_dealloc(&ta.allocator, s);
    tessel_dealloc(&ta.allocator, NULL);
    ck_assert_int_eq(ta.live, 0);
    ck_assert_uint_eq(ta.bytes, 0);
}
END_TEST

/* tessel_alloc_zeroed: zero bytes through a custom allocator (whose
 * blocks are dirty: a freed block's bytes come back) and through the
 * default one (calloc), NULL on a zero count or an overflowing size, and a
 * custom allocator's failure passed on. */
START_TEST(alloc_zeroed)
{
    test_alloc ta;
    test_alloc_init(&ta, 0);
    unsigned char *dirty = tessel_alloc_array(&ta.allocator, 4096, 1);
    ck_assert_ptr_nonnull(dirty);
    memset(dirty, 0xab, 4096);
    tessel_dealloc(&ta.allocator, dirty);
    uint64_t *z = tessel_alloc_zeroed(&ta.allocator, 512, sizeof(uint64_t));
    ck_assert_ptr_nonnull(z);
    for (int i = 0; i < 512; i++)
        ck_assert_uint_eq(z[i], 0);
    ck_assert_int_eq(ta.live, 1);
    tessel_dealloc(&ta.allocator, z);
    ck_assert_ptr_null(tessel_alloc_zeroed(&ta.allocator, 0, 8));
    ck_assert_ptr_null(tessel_alloc_zeroed(&ta.allocator, SIZE_MAX / 2, 4));
    test_alloc_init(&ta, 1);
    ck_assert_ptr_null(tessel_alloc_zeroed(&ta.allocator, 8, 8));
    ck_assert_int_eq(ta.live, 0);
    for (int round = 0; round < 2; round++) { /* the second may reuse the first's block */
        uint64_t *d = tessel_alloc_zeroed(NULL, 1 << 20, sizeof(uint64_t));
        ck_assert_ptr_nonnull(d);
        for (int i = 0; i < (1 << 20); i += 997)
            ck_assert_uint_eq(d[i], 0);
        memset(d, 0xcd, (size_t)(1 << 20) * sizeof(uint64_t));
        tessel_dealloc(NULL, d);
    }
}
END_TEST

START_TEST(checksum_independent_of_split)
{
    unsigned char data[1000];
    for (int i = 0; i < 1000; i++)
        data[i] = (unsigned char)(i * 7 + 3);
    tessel_checksum whole;
    tessel_checksum_init(&whole);
    tessel_checksum_update(&whole, data, sizeof(data));
    uint64_t expect = tessel_checksum_final(&whole);
    for (size_t split = 0; split <= sizeof(data); split += 37) {
        tessel_checksum c;
        tessel_checksum_init(&c);
        tessel_checksum_update(&c, data, split);
        tessel_checksum_update(&c, data + split, sizeof(data) - split);
        ck_assert_uint_eq(tessel_checksum_final(&c), expect);
    }
    /* Any single flipped bit or a shorter input changes it. */
    for (size_t i = 0; i < sizeof(data); i += 13) {
        data[i] ^= 0x10;
        tessel_checksum c;
        tessel_checksum_init(&c);
        tessel_checksum_update(&c, data, sizeof(data));
        ck_assert_uint_ne(tessel_checksum_final(&c), expect);
        data[i] ^= 0x10;
    }
    tessel_checksum c;
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, data, sizeof(data) - 1);
    ck_assert_uint_ne(tessel_checksum_final(&c), expect);
}
END_TEST

START_TEST(outfile_atomic)
{
    char dir[] = "/tmp/tessel-out-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/result.csv", dir);
    tessel_outfile *f = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_outfile_open(path, NULL, &f, &d), TESSEL_OK);
    fputs("half", tessel_outfile_stream(f));
    struct stat st;
    ck_assert_int_ne(stat(path, &st), 0); /* not visible before commit */
    tessel_outfile_abort(&f);
    ck_assert_ptr_null(f);
    ck_assert_int_ne(stat(path, &st), 0);
    ck_assert_int_eq(tessel_outfile_open(path, NULL, &f, &d), TESSEL_OK);
    fputs("whole\n", tessel_outfile_stream(f));
    ck_assert_int_eq(tessel_outfile_commit(&f, &d), TESSEL_OK);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 6);
    /* The directory holds only the result: no temporary left behind. */
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1", dir);
    ck_assert_int_eq(system(cmd), 0);
    char missing[96];
    snprintf(missing, sizeof(missing), "%s/no-such-dir/x.csv", dir);
    ck_assert_int_eq(tessel_outfile_open(missing, NULL, &f, &d), TESSEL_EWRITE);
    ck_assert_ptr_nonnull(strstr(d.message, "cannot create"));
    /* a symlink at the final path is refused, never followed or replaced */
    char link[96];
    snprintf(link, sizeof(link), "%s/link.csv", dir);
    ck_assert_int_eq(symlink(path, link), 0);
    ck_assert_int_eq(tessel_outfile_open(link, NULL, &f, &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "symbolic link"));
    unlink(link);
    unlink(path);
    rmdir(dir);
}
END_TEST


static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Both radix sorts against qsort: sizes around the insertion-sort cutoff,
 * narrow and full 64-bit key ranges, many duplicates. */
START_TEST(radix_sorts_match_qsort)
{
    static const uint64_t sizes[] = { 0, 1, 2, 47, 48, 49, 1000, 100000 };
    static const uint64_t ranges[] = { 1, 255, 256, 70000, UINT64_MAX };
    uint64_t state = 88172645463325252ull;
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
        for (size_t ri = 0; ri < sizeof(ranges) / sizeof(ranges[0]); ri++) {
            uint64_t n = sizes[si], max = ranges[ri];
            uint64_t *a = malloc((n + 1) * sizeof(uint64_t)), *b = malloc((n + 1) * sizeof(uint64_t));
            uint64_t *c = malloc((n + 1) * sizeof(uint64_t)), *scratch = malloc((n + 1) * sizeof(uint64_t));
            ck_assert(a && b && c && scratch);
            for (uint64_t i = 0; i < n; i++) {
                state ^= state << 13, state ^= state >> 7, state ^= state << 17;
                a[i] = max == UINT64_MAX ? state : state % (max + 1);
            }
            memcpy(b, a, n * sizeof(uint64_t));
            memcpy(c, a, n * sizeof(uint64_t));
            qsort(a, n, sizeof(uint64_t), cmp_u64);
            tessel_sort_u64(b, scratch, n, max);
            tessel_sort_u64_inplace(c, n, max);
            for (uint64_t i = 0; i < n; i++) {
                ck_assert_uint_eq(b[i], a[i]);
                ck_assert_uint_eq(c[i], a[i]);
            }
            free(a), free(b), free(c), free(scratch);
        }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("base");
    TCase *tc = tcase_create("base");
    tcase_set_timeout(tc, 120); /* the radix-sort check takes seconds under ASan on a busy machine */
    tcase_add_test(tc, diag_formatting);
    tcase_add_test(tc, alloc_helpers);
    tcase_add_test(tc, alloc_zeroed);
    tcase_add_test(tc, checksum_independent_of_split);
    tcase_add_test(tc, outfile_atomic);
    tcase_add_test(tc, radix_sorts_match_qsort);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
