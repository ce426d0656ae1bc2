/* Fuzz target: sweep files from memory (tessel_sweep_parse).
 *
 * A failed parse must be a clean error (negative code, no sweep, at least
 * one diagnostic with a message). A successful one must describe a
 * consistent point set: every point (the first, last and a few between)
 * has a value on every axis, within what the file wrote, and the counts
 * multiply out. Every allocation must be released. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "tessel/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_sweep(const tessel_sweep *s)
{
    FUZZ_REQUIRE(tessel_sweep_spec_path(s) && tessel_sweep_spec_path(s)[0], "a base spec");
    uint64_t per = tessel_sweep_points_per_data(s), n = tessel_sweep_point_count(s);
    size_t nd = tessel_sweep_data_count(s), na = tessel_sweep_axis_count(s);
    FUZZ_REQUIRE(per >= 1 && nd >= 1, "at least one point");
    FUZZ_REQUIRE(n / nd == per && n % nd == 0, "points = data x design points");
    FUZZ_REQUIRE(na <= TESSEL_SWEEP_MAX_AXES, "axes are bounded");
    FUZZ_REQUIRE(tessel_sweep_get_estimator(s) <= TESSEL_SWEEP_ANALYTIC, "a known estimator");
    uint64_t probe[5] = { 0, n - 1, n / 2, per - 1, n / 3 };
    for (size_t i = 0; i < 5; i++)
        for (size_t a = 0; a < na; a++) {
            char buf[8];
            const char *v = tessel_sweep_point_value(s, probe[i], a, buf, sizeof(buf));
            FUZZ_REQUIRE(v != NULL, "every point has a value on every axis");
            FUZZ_REQUIRE(strlen(v) < (size_t)1 << 24, "values are terminated");
        }
    const char *const *names;
    size_t no = tessel_sweep_objectives(s, &names);
    FUZZ_REQUIRE(no == 0 || (no >= 2 && no <= TESSEL_SWEEP_MAX_OBJECTIVES), "objectives");
    for (size_t i = 0; i < no; i++)
        FUZZ_REQUIRE(names[i] && names[i][0], "objective names");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_alloc fa;
    fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, &fa.allocator);
    tessel_sweep *s = NULL;
    int rc = tessel_sweep_parse("fuzz.yaml", data, size, &fa.allocator, &s, &errors);
    if (rc) {
        FUZZ_REQUIRE(rc < 0 && s == NULL, "a failure returns a negative code and no sweep");
        FUZZ_REQUIRE(errors.count + errors.dropped > 0, "a failure says why");
        for (size_t i = 0; i < errors.count; i++)
            FUZZ_REQUIRE(errors.items[i].message[0] || errors.items[i].code == TESSEL_ENOMEM,
                         "diagnostics have a message");
    } else {
        check_sweep(s);
    }
    tessel_sweep_free(&s);
    tessel_diag_list_free(&errors);
    fuzz_alloc_check_released(&fa, "sweep");
    return 0;
}
