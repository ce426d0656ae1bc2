/* Fuzz target: Matrix Market from memory (tessel_tensor_parse_mtx).
 *
 * Each input is parsed twice, keeping and dropping explicit zeros. A
 * success must satisfy the tensor layout, the symmetry expansion and the
 * tile statistics (fuzz_check.h); the drop_zeros result must be the kept
 * one minus its zero entries; a failure must be a clean error. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parses with drop_zeros as given; checks either outcome. */
static int parse_checked(const uint8_t *data, size_t size, int drop_zeros, fuzz_alloc *fa,
                         tessel_tensor **out)
{
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.drop_zeros = drop_zeros;
    tessel_diag diag;
    tessel_diag_clear(&diag);
    int rc = tessel_tensor_parse_mtx("fuzz.mtx", data, size, &opt, &fa->allocator, out, &diag);
    if (rc) {
        fuzz_check_failure(rc, *out, &diag);
        return rc;
    }
    fuzz_check_tensor(*out);
    fuzz_check_mtx_symmetry(*out);
    FUZZ_REQUIRE((*out)->alloc == &fa->allocator, "the tensor remembers its allocator");
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_alloc fa;
    fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);
    tessel_tensor *kept = NULL, *dropped = NULL;
    int rc_kept = parse_checked(data, size, 0, &fa, &kept);
    int rc_dropped = parse_checked(data, size, 1, &fa, &dropped);
    /* Both parses read the same text; only the final merge differs, so a
     * file is valid or invalid regardless of drop_zeros. (Out of memory is
     * the exception: the second parse runs with the first's tensor live.) */
    if (rc_kept != TESSEL_ENOMEM && rc_dropped != TESSEL_ENOMEM)
        FUZZ_REQUIRE(rc_kept == rc_dropped, "drop_zeros does not change whether a file parses");
    if (kept && dropped)
        fuzz_check_dropped(kept, dropped);
    if (kept)
        fuzz_check_stats(kept, &fa.allocator);
    if (dropped)
        fuzz_check_stats(dropped, &fa.allocator);
    tessel_tensor_free(&kept);
    tessel_tensor_free(&dropped);
    FUZZ_REQUIRE(kept == NULL && dropped == NULL, "tessel_tensor_free nulls the pointer");
    fuzz_alloc_check_released(&fa, "parsing a .mtx input and building its grids");
    return 0;
}
