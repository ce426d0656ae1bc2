/* Fuzz target: saved stat-estimator statistics from memory
 * (tessel_stat_data_parse).
 *
 * As for the other checksummed formats, each input is parsed twice: as
 * given, and with both checksums recomputed over the mutated bytes, so
 * the fuzzer reaches the structure checks behind them. An accepted file
 * is then evaluated on a one-level SpMSpM spec when its einsum is that
 * one: anything the loader lets through must evaluate without a crash, an
 * out-of-bounds access or a leak (the sanitizers and the counting
 * allocator watch), and give non-negative, finite-size counts. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "tessel/model.h"

#define TSD_HEADER 64u
#define OFF_PAYLOAD_SUM 32u
#define OFF_HEADER_SUM 56u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t checksum(const void *p, size_t n)
{
    tessel_checksum c;
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, p, n);
    return tessel_checksum_final(&c);
}

static uint8_t *repaired_copy(const uint8_t *data, size_t size)
{
    if (size < TSD_HEADER)
        return NULL;
    uint8_t *copy = malloc(size);
    if (!copy)
        return NULL;
    memcpy(copy, data, size);
    uint64_t payload_sum = checksum(copy + TSD_HEADER, size - TSD_HEADER);
    memcpy(copy + OFF_PAYLOAD_SUM, &payload_sum, sizeof(payload_sum));
    uint64_t header_sum = checksum(copy, OFF_HEADER_SUM);
    memcpy(copy + OFF_HEADER_SUM, &header_sum, sizeof(header_sum));
    return copy;
}

/* Z[i,j] = A[i,k] * B[k,j], DRAM -> LLB, tiles 128 (whole modes where
 * smaller), inner product. */
static void spec_spmspm(tessel_spec *s)
{
    memset(s, 0, sizeof(*s));
    tessel_spec_workload *w = &s->workload;
    w->kind = TESSEL_WORKLOAD_SPMSPM;
    w->einsum = "Z[i,j] = A[i,k] * B[k,j]";
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
        lv->word_bits = lv->value_bits = 64;
        lv->coord_bits = lv->offset_bits = lv->run_bits = 32;
        lv->format = 1;
        for (unsigned t = 0; t < 3; t++) {
            lv->tensor[t].format = -1;
            lv->tensor[t].sparse.skip_on = t == 0 ? 6u : (t == 1 ? 4u : 2u);
        }
    }
    s->level[1].has_mapping = 1;
    for (unsigned x = 0; x < 3; x++)
        s->level[1].tile[x] = 128;
    for (unsigned p = 0; p < 3; p++)
        s->level[1].order[p] = p == 0 ? 0 : p == 1 ? 1 : 2;
}

static void parse_checked(const uint8_t *data, size_t size, const char *what)
{
    fuzz_alloc fa;
    fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);
    tessel_stat_data *s = NULL;
    tessel_diag diag;
    tessel_diag_clear(&diag);
    int rc = tessel_stat_data_parse("fuzz.tsd", data, size, &fa.allocator, &s, &diag);
    if (rc) {
        FUZZ_REQUIRE(s == NULL, "a failed parse returns nothing");
        fuzz_check_failure(rc, NULL, &diag);
    } else {
        tessel_spec spec;
        spec_spmspm(&spec);
        tessel_result r;
        tessel_diag_clear(&diag);
        rc = tessel_model_stat_eval(&spec, s, &r, &diag);
        if (rc)
            fuzz_check_failure(rc, NULL, &diag);
        else
            FUZZ_REQUIRE(r.dram_bytes >= r.traffic[0][1].data_bytes,
                         "DRAM traffic includes A's data");
        tessel_stat_data_free(&s);
    }
    fuzz_alloc_check_released(&fa, what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse_checked(data, size, "parsing saved statistics");
    uint8_t *copy = repaired_copy(data, size);
    if (copy) {
        parse_checked(copy, size, "parsing saved statistics with repaired checksums");
        free(copy);
    }
    return 0;
}
