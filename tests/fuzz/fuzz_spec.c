/* Fuzz target: YAML specs from memory (tessel_yaml_parse, tessel_spec_parse).
 *
 * Leading lines of the form "--set PATH=VALUE" are split off and passed as
 * --set arguments, so the fuzzer reaches the override code too. A failed
 * load must be a clean error (negative code, no spec, at least one
 * diagnostic with a message); a successful one must satisfy the limits
 * and invariants spec.h promises. Every allocation must be released. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "tessel/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SETS 4
#define SET_PREFIX "--set "

static int terminated(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

/* limit: 64 for a parsed file; a --set value (itself up to 64 deep) can
 * sit under a path of up to 32 components. */
static void check_tree(const tessel_yaml_node *n, unsigned depth, unsigned limit)
{
    FUZZ_REQUIRE(depth <= limit, "YAML nesting is bounded");
    FUZZ_REQUIRE(n->file && n->line >= 1 && n->column >= 1, "every node has a position");
    if (n->kind == TESSEL_YAML_SCALAR) {
        FUZZ_REQUIRE(n->value && n->value[n->length] == '\0', "scalars are NUL-terminated");
        return;
    }
    FUZZ_REQUIRE(n->count == 0 || n->items, "collections have their items");
    /* Aliases make a DAG; only the first few children are walked, which
     * keeps an alias-heavy input from taking exponential time here. */
    size_t walk = n->count < 16 ? n->count : 16;
    for (size_t i = 0; i < walk; i++) {
        if (n->kind == TESSEL_YAML_MAPPING) {
            FUZZ_REQUIRE(n->keys[i]->kind == TESSEL_YAML_SCALAR, "mapping keys are scalars");
            FUZZ_REQUIRE(n->keys[i]->value[n->keys[i]->length] == '\0', "keys are terminated");
        }
        check_tree(n->items[i], depth + 1, limit);
    }
}

/* A per-rank format: 1 .. TESSEL_SPEC_MAX_INDICES ranks, each a rank format
 * code (0 UOP .. 4 UB). */
static int ranks_ok(int format, unsigned nranks, const unsigned char *ranks)
{
    if (format != TESSEL_SPEC_FORMAT_RANKS || nranks == 0 || nranks > TESSEL_SPEC_MAX_INDICES)
        return 0;
    for (unsigned r = 0; r < nranks; r++)
        if (ranks[r] > 4)
            return 0;
    return 1;
}

static void check_spec(const tessel_spec *s)
{
    const tessel_spec_workload *w = &s->workload;
    FUZZ_REQUIRE(terminated(s->name, sizeof(s->name)), "name is terminated");
    FUZZ_REQUIRE(terminated(s->technology, sizeof(s->technology)), "technology is terminated");
    FUZZ_REQUIRE(s->doc && s->path && w->einsum, "doc, path and einsum are set");
    FUZZ_REQUIRE(w->ntensors >= 2 && w->ntensors <= TESSEL_SPEC_MAX_TENSORS, "tensor count");
    FUZZ_REQUIRE(w->nindices >= 1 && w->nindices <= TESSEL_SPEC_MAX_INDICES, "index count");
    FUZZ_REQUIRE(w->kind >= TESSEL_WORKLOAD_SPMSPM && w->kind <= TESSEL_WORKLOAD_OTHER, "kind");
    FUZZ_REQUIRE(w->tensor[0].data == NULL, "the output has no data");
    for (unsigned t = 0; t < w->ntensors; t++) {
        FUZZ_REQUIRE(terminated(w->tensor[t].name, TESSEL_SPEC_NAME_MAX), "tensor name");
        FUZZ_REQUIRE(tessel_spec_tensor_index(s, w->tensor[t].name) == (int)t,
                     "tensor names are unique");
        FUZZ_REQUIRE(w->tensor[t].rank >= 1 && w->tensor[t].rank <= TESSEL_SPEC_MAX_INDICES,
                     "tensor rank");
        if (t > 0)
            FUZZ_REQUIRE(w->tensor[t].data != NULL, "every input is bound");
        for (unsigned m = 0; m < w->tensor[t].rank; m++)
            FUZZ_REQUIRE(w->tensor[t].index[m] < w->nindices, "index numbers in range");
    }
    for (unsigned i = 0; i < w->nindices; i++)
        FUZZ_REQUIRE(tessel_spec_index(s, w->index_name[i]) == (int)i, "index names unique");
    FUZZ_REQUIRE(s->nlevels >= 1 && s->nlevels <= TESSEL_SPEC_MAX_LEVELS, "level count");
    FUZZ_REQUIRE(s->ntables <= 8, "table count");
    for (unsigned l = 0; l < s->nlevels; l++) {
        const tessel_spec_level *L = &s->level[l];
        FUZZ_REQUIRE(L->name[0] && terminated(L->name, sizeof(L->name)), "level name");
        FUZZ_REQUIRE(tessel_spec_level_index(s, L->name) == (int)l, "level names are unique");
        FUZZ_REQUIRE(L->energy.cls[0], "every level has an energy class");
        FUZZ_REQUIRE(l == 0 || L->capacity > 0, "levels below 0 have a capacity");
        FUZZ_REQUIRE(l > 0 || !L->has_mapping, "level 0 has no mapping");
        FUZZ_REQUIRE(L->instances >= 1 && L->word_bits >= 1 && L->value_bits >= 1,
                     "counts are positive");
        FUZZ_REQUIRE((L->format >= 0 && L->format <= 4) || ranks_ok(L->format, L->nranks, L->ranks),
                     "format code");
        FUZZ_REQUIRE(L->bandwidth >= 0, "bandwidth");
        unsigned seen = 0;
        double sum = 0;
        for (unsigned i = 0; i < w->nindices; i++) {
            FUZZ_REQUIRE(L->order[i] < w->nindices, "order entries are indices");
            seen |= 1u << L->order[i];
        }
        FUZZ_REQUIRE(seen == (1u << w->nindices) - 1, "order is a permutation");
        for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
            const tessel_spec_tensor_level *tl = &L->tensor[t];
            FUZZ_REQUIRE((tl->format >= -1 && tl->format <= 4) ||
                             ranks_ok(tl->format, tl->nranks, tl->ranks),
                         "tensor format code");
            FUZZ_REQUIRE(tl->partition_fraction >= 0 && tl->partition_fraction <= 1,
                         "partition fraction");
            FUZZ_REQUIRE(!(tl->sparse.skip_on & (1u << t)) && !(tl->sparse.gate_on & (1u << t)),
                         "no tensor skips or gates on itself");
            FUZZ_REQUIRE(tl->sparse.skip_on >> w->ntensors == 0, "skip mask within tensors");
            sum += tl->partition_fraction;
            if (L->capacity)
                sum += (double)tl->partition_bytes / (double)L->capacity;
        }
        FUZZ_REQUIRE(sum <= 1.0 + 1e-6, "partitions of a level fit");
    }
    FUZZ_REQUIRE(s->compute.pes >= 1 && s->compute.macs_per_pe >= 1, "compute counts");
    FUZZ_REQUIRE(s->compute.clock_ghz > 0, "clock");
    FUZZ_REQUIRE(s->compute.mac.cls[0], "the MAC has an energy class");
    check_tree(tessel_yaml_root(s->doc), 0, 64 + 32);
    const tessel_spec_strategy *st = &s->strategy;
    static const char *const strategies[] = { "fixed", "conservative", "prescient",
                                              "swiftiles", "drt", "d2t2" };
    int known = 0;
    for (size_t k = 0; k < sizeof(strategies) / sizeof(strategies[0]); k++)
        known |= strcmp(st->name, strategies[k]) == 0;
    FUZZ_REQUIRE(known, "the strategy is one of the six");
    FUZZ_REQUIRE(st->overbooking > 0 && st->overbooking < 1, "overbooking target in (0, 1)");
    FUZZ_REQUIRE(st->tail_samples >= 1 && st->rounds >= 1 && st->rounds <= 100, "sample counts");
    FUZZ_REQUIRE(st->micro[0] >= 1 && st->micro[1] >= 1, "micro tile");
    FUZZ_REQUIRE((st->levels & 1u) == 0 && st->levels >> s->nlevels == 0,
                 "strategy levels are buffer levels of the spec");
}

static void check_errors(int rc, const tessel_spec *s, const tessel_diag_list *l)
{
    FUZZ_REQUIRE(rc < 0, "a failure returns a negative code");
    FUZZ_REQUIRE(s == NULL, "a failure returns no spec");
    FUZZ_REQUIRE(l->count >= 1 || l->dropped, "a failure says why");
    if (rc != TESSEL_ENOMEM && l->count)
        FUZZ_REQUIRE(l->items[0].code == rc, "the code is the first error's");
    for (size_t i = 0; i < l->count; i++) {
        FUZZ_REQUIRE(l->items[i].message[0], "every error has a message");
        char buf[2048];
        FUZZ_REQUIRE(tessel_diag_format(&l->items[i], buf, sizeof(buf)) > 0, "formats");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_alloc fa;
    fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);

    /* The YAML layer alone. */
    tessel_yaml_doc *doc = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_yaml_parse("fuzz.yaml", data, size, &fa.allocator, &doc, &d);
    if (rc) {
        FUZZ_REQUIRE(rc < 0 && doc == NULL && d.code == rc && d.message[0],
                     "a YAML failure is a clean error");
    } else if (tessel_yaml_root(doc)) {
        check_tree(tessel_yaml_root(doc), 0, 64);
    }
    tessel_yaml_free(&doc);
    FUZZ_REQUIRE(doc == NULL, "tessel_yaml_free nulls the pointer");

    /* Leading "--set " lines become overrides; the rest is the spec. */
    char *copy = malloc(size + 1);
    FUZZ_REQUIRE(copy != NULL, "test harness allocation");
    memcpy(copy, data, size);
    copy[size] = '\0';
    const char *sets[MAX_SETS];
    size_t nsets = 0, off = 0;
    while (nsets < MAX_SETS && size - off > strlen(SET_PREFIX) &&
           memcmp(copy + off, SET_PREFIX, strlen(SET_PREFIX)) == 0) {
        char *nl = memchr(copy + off, '\n', size - off);
        if (!nl)
            break;
        *nl = '\0';
        sets[nsets++] = copy + off + strlen(SET_PREFIX);
        off = (size_t)(nl - copy) + 1;
    }
    tessel_diag_list l;
    tessel_diag_list_init(&l, &fa.allocator);
    tessel_spec *s = NULL;
    rc = tessel_spec_parse("fuzz.yaml", copy + off, size - off, sets, nsets, &fa.allocator, &s,
                           &l);
    if (rc == 0) {
        FUZZ_REQUIRE(s != NULL && l.count == 0, "a success has a spec and no errors");
        check_spec(s);
    } else {
        check_errors(rc, s, &l);
    }
    tessel_spec_free(&s);
    FUZZ_REQUIRE(s == NULL, "tessel_spec_free nulls the pointer");
    tessel_diag_list_free(&l);
    free(copy);
    fuzz_alloc_check_released(&fa, "parsing a YAML spec");
    return 0;
}
