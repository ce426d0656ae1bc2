/* Fuzz target: energy tables from memory (tessel_energy_db_parse: the YAML
 * tree, then the tessel-table / Accelergy ERT/ART reader).
 *
 * A failure must be a clean error: a TESSEL_E* code, no database, at least
 * one diagnostic with a message. A success is then queried: every class
 * it defines and a few instance names, each with several attribute sets,
 * must resolve to finite, non-negative energies and areas or fail
 * cleanly. Nothing may stay allocated afterwards. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "tessel/energy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_diag(int rc, const tessel_diag *d)
{
    FUZZ_REQUIRE(rc <= TESSEL_ENOMEM && rc >= TESSEL_EUNSUPPORTED,
                 "a failure returns one of the TESSEL_E* codes");
    FUZZ_REQUIRE(d->code == rc, "the diag records the returned code");
    FUZZ_REQUIRE(memchr(d->message, '\0', sizeof(d->message)) != NULL,
                 "the diag message is terminated");
    FUZZ_REQUIRE(d->message[0] != '\0', "the diag says what went wrong");
}

static void check_energy(const tessel_component_energy *e)
{
    for (int a = 0; a < TESSEL_ACTION_COUNT; a++)
        FUZZ_REQUIRE(isfinite(e->pj[a]) && e->pj[a] >= 0, "energies are finite and >= 0");
    FUZZ_REQUIRE(isfinite(e->area_um2) && e->area_um2 >= 0, "areas are finite and >= 0");
    FUZZ_REQUIRE(memchr(e->source, '\0', sizeof(e->source)) != NULL, "the source is terminated");
}

static void query(const tessel_energy_db *db, const char *cls, const tessel_yaml_node *attrs,
                  const char *instance)
{
    tessel_spec_component c;
    memset(&c, 0, sizeof(c));
    size_t n = strlen(cls);
    if (n >= sizeof(c.cls))
        return;
    memcpy(c.cls, cls, n + 1);
    c.attributes = attrs;
    c.pos.file = "fuzz-spec.yaml";
    c.pos.line = 1;
    c.pos.column = 1;
    static const char *const techs[] = {NULL, "45nm", "65nm", "40nm"};
    for (size_t t = 0; t < sizeof(techs) / sizeof(techs[0]); t++) {
        tessel_component_energy e;
        tessel_diag d;
        tessel_diag_clear(&d);
        int rc = tessel_energy_component_sized(db, &c, instance, techs[t], t == 2 ? 32 : 0,
                                               t == 3 ? 65536 : 0, &e, &d);
        if (rc)
            check_diag(rc, &d);
        else
            check_energy(&e);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_alloc fa;
    fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, &fa.allocator);
    tessel_energy_db *db = NULL;
    int rc = tessel_energy_db_parse("fuzz.yaml", data, size, &fa.allocator, &db, &errors);
    if (rc) {
        FUZZ_REQUIRE(db == NULL, "a failed load leaves *out NULL");
        FUZZ_REQUIRE(errors.count > 0 || errors.dropped > 0, "a failed load reports an error");
        for (size_t i = 0; i < errors.count; i++)
            check_diag(errors.items[i].code, &errors.items[i]);
    } else {
        FUZZ_REQUIRE(db != NULL, "a successful load returns a database");
        static const char *const attr_text[] = {
            "{}", "{width: 8}", "{width: 256, depth: 4096}", "{width: 16, depth: 100}",
            "{width: 64, size: 1KiB, technology: 65nm}", "{exponent: 11, mantissa: 53}",
            "{radix: 64}", "{width: 1, depth: 1}", "{depth: 4294967295}", "{technology: 7nm}"};
        static const char *const instances[] = {NULL, "DRAM", "LLB", "MAC", "a", "x.a"};
        size_t na = sizeof(attr_text) / sizeof(attr_text[0]);
        tessel_yaml_doc *docs[sizeof(attr_text) / sizeof(attr_text[0])] = {NULL};
        for (size_t i = 0; i < na; i++) {
            tessel_diag d;
            if (tessel_yaml_parse("attrs.yaml", attr_text[i], strlen(attr_text[i]), &fa.allocator,
                                  &docs[i], &d) != 0)
                docs[i] = NULL;
        }
        for (size_t k = 0;; k++) {
            const char *cls = tessel_energy_db_class_name(db, k);
            if (!cls)
                break;
            query(db, cls, NULL, NULL);
            for (size_t i = 0; i < na; i++)
                if (docs[i])
                    query(db, cls, tessel_yaml_root(docs[i]), NULL);
        }
        for (size_t j = 0; j < sizeof(instances) / sizeof(instances[0]); j++)
            query(db, "SRAM", docs[2] ? tessel_yaml_root(docs[2]) : NULL, instances[j]);
        for (size_t i = 0; i < na; i++)
            tessel_yaml_free(&docs[i]);
    }
    tessel_energy_db_free(&db);
    FUZZ_REQUIRE(db == NULL, "tessel_energy_db_free nulls the pointer");
    tessel_diag_list_free(&errors);
    fuzz_alloc_check_released(&fa, "loading an energy table and resolving its classes");
    return 0;
}
