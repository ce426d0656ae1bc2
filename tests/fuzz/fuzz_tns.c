/* Fuzz target: FROSTT .tns from memory (tessel_tensor_parse_tns).
 *
 * Parsed keeping and dropping zeros, like fuzz_mtx. Extents come from the
 * largest coordinates, so a kept result must reach the last index of every
 * mode. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int parse_checked(const uint8_t *data, size_t size, int drop_zeros, fuzz_alloc *fa,
                         tessel_tensor **out)
{
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.drop_zeros = drop_zeros;
    tessel_diag diag;
    tessel_diag_clear(&diag);
    int rc = tessel_tensor_parse_tns("fuzz.tns", data, size, &opt, &fa->allocator, out, &diag);
    if (rc) {
        fuzz_check_failure(rc, *out, &diag);
        return rc;
    }
    fuzz_check_tensor(*out);
    if (!drop_zeros)
        fuzz_check_tns_extents(*out);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_alloc fa;
    fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);
    tessel_tensor *kept = NULL, *dropped = NULL;
    int rc_kept = parse_checked(data, size, 0, &fa, &kept);
    int rc_dropped = parse_checked(data, size, 1, &fa, &dropped);
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
    fuzz_alloc_check_released(&fa, "parsing a .tns input and building its grids");
    return 0;
}
