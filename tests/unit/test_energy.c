/* Check suite for the energy module: table lookups against the published
 * numbers (../shared/reference/energy-numbers.md), SRAM interpolation,
 * technology scaling, Accelergy ERT/ART reading, design resolution, error
 * messages, roofline and out-of-memory behaviour.  Runs from the project
 * root (meson test workdir). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>

#include "tessel/energy.h"
#include "tessel/spec.h"
#include "test_alloc.h"

#define TABLE "energy_tables/tessel-45nm.yaml"

/* Relative closeness for values computed through logs and products. */
#define ck_assert_close(x, y)                                                                  \
    do {                                                                                       \
        double x_ = (x), y_ = (y);                                                             \
        ck_assert_msg(fabs(x_ - y_) <= 1e-9 * fmax(1.0, fabs(y_)), "%s = %.12g, expected %.12g", \
                      #x, x_, y_);                                                             \
    } while (0)

static tessel_energy_db *load_table(void)
{
    tessel_energy_db *db = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_energy_db_load_file(TABLE, NULL, &db, &d);
    char buf[1024];
    tessel_diag_format(&d, buf, sizeof(buf));
    ck_assert_msg(rc == 0, "loading %s: %s", TABLE, buf);
    ck_assert_ptr_nonnull(db);
    return db;
}

/* A component of class cls whose attributes are the YAML mapping `attrs`
 * (NULL = none); the document stays alive in *doc. */
static tessel_spec_component component(const char *cls, const char *attrs, tessel_yaml_doc **doc)
{
    tessel_spec_component c;
    memset(&c, 0, sizeof(c));
    snprintf(c.cls, sizeof(c.cls), "%s", cls);
    c.pos.file = "spec.yaml";
    c.pos.line = 7;
    c.pos.column = 3;
    *doc = NULL;
    if (attrs) {
        tessel_diag d;
        int rc = tessel_yaml_parse("attrs.yaml", attrs, strlen(attrs), NULL, doc, &d);
        ck_assert_msg(rc == 0, "parsing attributes %s: %s", attrs, d.message);
        c.attributes = tessel_yaml_root(*doc);
    }
    return c;
}

/* Resolves cls{attrs} at `tech` (NULL = the table's node); returns the
 * code, the result in *out and the diagnostic in *d. */
static int resolve(const tessel_energy_db *db, const char *cls, const char *attrs,
                   const char *instance, const char *tech, tessel_component_energy *out,
                   tessel_diag *d)
{
    tessel_yaml_doc *doc = NULL;
    tessel_spec_component c = component(cls, attrs, &doc);
    tessel_diag_clear(d);
    int rc = tessel_energy_component(db, &c, instance, tech, out, d);
    tessel_yaml_free(&doc);
    return rc;
}

static tessel_component_energy must_resolve(const tessel_energy_db *db, const char *cls,
                                            const char *attrs, const char *tech)
{
    tessel_component_energy e;
    tessel_diag d;
    int rc = resolve(db, cls, attrs, NULL, tech, &e, &d);
    char buf[1024];
    tessel_diag_format(&d, buf, sizeof(buf));
    ck_assert_msg(rc == 0, "%s %s: %s", cls, attrs ? attrs : "", buf);
    return e;
}

START_TEST(test_action_names)
{
    ck_assert_str_eq(tessel_action_name(TESSEL_ACTION_READ), "read");
    ck_assert_str_eq(tessel_action_name(TESSEL_ACTION_METADATA_WRITE), "metadata_write");
    ck_assert_str_eq(tessel_action_name(TESSEL_ACTION_COMPUTE), "compute");
    ck_assert_str_eq(tessel_action_name(TESSEL_ACTION_LEAK), "leak");
    ck_assert_str_eq(tessel_action_name(TESSEL_ACTION_COUNT), "unknown");
}
END_TEST

/* energy-numbers.md 2.1: [CA] type2energy x 64 bits. */
START_TEST(test_dram)
{
    tessel_energy_db *db = load_table();
    tessel_component_energy e = must_resolve(db, "LPDDR4", "{width: 64}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 512.0);
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], 512.0);
    ck_assert_close(e.pj[TESSEL_ACTION_UPDATE], 512.0);
    ck_assert_close(e.pj[TESSEL_ACTION_METADATA_READ], 512.0);
    ck_assert_close(e.pj[TESSEL_ACTION_LEAK], 0.0);
    ck_assert_close(e.area_um2, 0.0);
    ck_assert_uint_eq(e.width_bits, 64);
    ck_assert_ptr_nonnull(strstr(e.source, "LPDDR4"));
    e = must_resolve(db, "HBM2", "{width: 64}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 249.6);
    e = must_resolve(db, "GDDR6", "{width: 64}", NULL); /* Micron 7.5 pJ/bit */
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 480.0);
    /* Default width 64; width scales linearly; no technology scaling off chip. */
    e = must_resolve(db, "LPDDR4", NULL, "65nm");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 512.0);
    ck_assert_uint_eq(e.width_bits, 64);
    e = must_resolve(db, "LPDDR4", "{width: 32}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 256.0);
    tessel_energy_db_free(&db);
    ck_assert_ptr_null(db);
}
END_TEST

/* DDR4: derived from the MT40A1G8 datasheet currents by Micron TN-40-07's
 * method (tessel-45nm.yaml): read burst 1.2 V x (135 - 43) mA x 4 x 0.833 ns
 * per 64 bits, plus activate/precharge over a streamed 8192-bit row. */
START_TEST(test_ddr4)
{
    tessel_energy_db *db = load_table();
    double burst = 1.2 * (135 - 43) * 1e-3 * 4 * 0.833e-9 * 1e12 / 64;
    double act = 1.2 * (48 - (43 * 32 + 34 * 14.16) / 46.16) * 1e-3 * 46.16e-9 * 1e12 / 8192;
    ck_assert(fabs(burst + act - 5.8) < 0.005); /* the table's rounded figure */
    tessel_component_energy e = must_resolve(db, "DDR4", "{width: 64}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 5.8 * 64);
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], 5.8 * 64);
    ck_assert_ptr_nonnull(strstr(e.source, "DDR4"));
    tessel_energy_db_free(&db);
}
END_TEST

/* A class of model `unavailable` is an error that gives its reason. */
START_TEST(test_unavailable)
{
    static const char text[] =
        "tessel_energy_table:\n"
        "  version: 1\n"
        "  technology: 45nm\n"
        "  technology_scaling: {source: test, nodes: []}\n"
        "  classes:\n"
        "    - {name: HBM3, model: unavailable, reason: no sourced HBM3 figure}\n";
    tessel_energy_db *db = NULL;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    ck_assert_int_eq(tessel_energy_db_parse("mem.yaml", text, strlen(text), NULL, &db, &errors),
                     0);
    tessel_component_energy e;
    tessel_diag d;
    int rc = resolve(db, "HBM3", "{width: 64}", "DRAM", NULL, &e, &d);
    ck_assert_int_eq(rc, TESSEL_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(d.message, "DRAM: HBM3 has no energy numbers"));
    ck_assert_ptr_nonnull(strstr(d.message, "no sourced HBM3 figure"));
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 0.0);
    tessel_energy_db_free(&db);
    tessel_diag_list_free(&errors);
}
END_TEST

/* Aladdin 5 ns rows: multiplier quadratic, adder linear in width
 * (energy-numbers.md 2.2 and the checks in 3). */
START_TEST(test_mac)
{
    tessel_energy_db *db = load_table();
    tessel_component_energy e = must_resolve(db, "intmac", "{width: 8}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], 8.63 * 0.0625 + 0.0857 * 0.25);
    ck_assert_msg(fabs(e.pj[TESSEL_ACTION_COMPUTE] - 0.5608) < 5e-5, "0.5608 of the ERT");
    ck_assert_close(e.pj[TESSEL_ACTION_LEAK], 0.24 * 0.0625 + 0.0119 * 0.25);
    ck_assert_msg(fabs(e.pj[TESSEL_ACTION_LEAK] - 0.01798) < 1e-5, "mac_gated 0.01798");
    ck_assert_close(e.area_um2, 332.25);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 0.0);
    ck_assert_uint_eq(e.width_bits, 8);
    e = must_resolve(db, "intmac", NULL, NULL); /* default 16 bits */
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], 2.20035);
    ck_assert_close(e.area_um2, 1239.5);
    ck_assert_close(e.pj[TESSEL_ACTION_LEAK], 0.06595);
    e = must_resolve(db, "fpmac", NULL, NULL); /* single precision */
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], 24.4 + 7.928);
    e = must_resolve(db, "fpmac", "{exponent: 11, mantissa: 53}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], 92.938 + 23.269);
    ck_assert_close(e.area_um2, 4910.0 + 5120.0);
    ck_assert_uint_eq(e.width_bits, 64);
    e = must_resolve(db, "fpmac", "{exponent: 5, mantissa: 11}", NULL); /* half: from SP rows */
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], 24.4 / 4 + 7.928 / 2);
    e = must_resolve(db, "adder", "{width: 16}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], 0.0857 / 2);
    e = must_resolve(db, "intersect", NULL, NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], 0.029015);
    ck_assert_close(e.area_um2, 70.0);
    e = must_resolve(db, "merger", "{radix: 64}", NULL); /* 6 levels, 63 comparators */
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], 6 * 0.029015);
    ck_assert_close(e.area_um2, 63 * 70.0);

    tessel_diag d;
    ck_assert_int_eq(resolve(db, "intmac", "{width: 128}", NULL, NULL, &e, &d), TESSEL_ERANGE);
    ck_assert_int_eq(resolve(db, "intmac", "{exponent: 8}", NULL, NULL, &e, &d), TESSEL_EINVAL);
    ck_assert_int_eq(resolve(db, "fpmac", "{width: 32}", NULL, NULL, &e, &d), TESSEL_EINVAL);
    ck_assert_int_eq(resolve(db, "merger", "{radix: 1}", NULL, NULL, &e, &d), TESSEL_ERANGE);
    ck_assert_int_eq(resolve(db, "adder", "{radix: 4}", NULL, NULL, &e, &d), TESSEL_EINVAL);
    tessel_energy_db_free(&db);
}
END_TEST

/* Aladdin registers + address comparators; 1x8 is the 0.072 pJ reg/LRF of
 * the Eyeriss-v2 and STC ERTs. */
START_TEST(test_regfile)
{
    tessel_energy_db *db = load_table();
    tessel_component_energy e = must_resolve(db, "regfile", "{width: 8, depth: 1}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 0.072);
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], 0.072);
    ck_assert_close(e.area_um2, 8 * 5.98);
    e = must_resolve(db, "regfile", "{width: 32, depth: 64}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 32 * 0.009 + 64 * 0.029015 * 6 / 32);
    ck_assert_close(e.area_um2, 32 * 64 * 5.98 + 64 * 70 * 6.0 / 32);
    e = must_resolve(db, "regfile", "{width: 32, size: 64B}", NULL); /* depth 16 */
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 32 * 0.009 + 16 * 0.029015 * 4 / 32);
    tessel_diag d;
    /* Past its 128 registers a register file is priced by the table's fitted
     * SRAM law (docs/models/energy.md). */
    ck_assert_int_eq(resolve(db, "regfile", "{width: 32, depth: 200}", "PEbuf", NULL, &e, &d), 0);
    ck_assert_str_eq(e.method, "fit");
    ck_assert_ptr_nonnull(strstr(e.source, "regfile past its registers"));
    ck_assert_close(e.pj[TESSEL_ACTION_READ], exp(-6.076047 + 1.156241 * log(32.0) +
                                                  0.497863 * log(200.0)));
    ck_assert_int_eq(resolve(db, "regfile", "{width: 32, depth: 2.5}", "PEbuf", NULL, &e, &d),
                     TESSEL_EPARSE);
    tessel_energy_db_free(&db);
}
END_TEST

START_TEST(test_sram)
{
    tessel_energy_db *db = load_table();
    /* A table point is returned as is. */
    tessel_component_energy e = must_resolve(db, "SRAM", "{width: 16, depth: 224}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 0.71011);
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], 1.13063);
    ck_assert_close(e.pj[TESSEL_ACTION_UPDATE], 1.13063);
    ck_assert_close(e.pj[TESSEL_ACTION_METADATA_READ], 0.71011);
    ck_assert_close(e.area_um2, 3474.22);
    ck_assert_ptr_nonnull(strstr(e.source, "weights_spad"));
    /* 4096 lies halfway between 2048 and 8192 in log depth, so log-log
     * interpolation gives the geometric mean of the two points. */
    e = must_resolve(db, "SRAM", "{width: 256, depth: 4096}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], sqrt(51.870888 * 124.695));
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], sqrt(66.310888 * 118.118));
    ck_assert_close(e.area_um2, sqrt(199065.0 * 1069102.0));
    ck_assert_uint_eq(e.width_bits, 256);
    /* An off-centre depth: 12288 between 8192 and 16384. */
    e = must_resolve(db, "SRAM", "{width: 256, depth: 12288}", NULL);
    double t = log(12288.0 / 8192.0) / log(2.0);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], exp(log(124.695) + t * log(140.096 / 124.695)));
    /* Size instead of depth: 128 KiB of 256-bit words = 4096 words. */
    tessel_component_energy s = must_resolve(db, "SRAM", "{width: 256, size: 128KiB}", NULL);
    ck_assert_close(s.pj[TESSEL_ACTION_READ], sqrt(51.870888 * 124.695));
    /* A width without points: the next wider series, linear in width. */
    s = must_resolve(db, "SRAM", "{width: 128, depth: 4096}", NULL);
    ck_assert_close(s.pj[TESSEL_ACTION_READ], sqrt(51.870888 * 124.695) / 2);
    ck_assert_uint_eq(s.width_bits, 128);
    ck_assert_ptr_nonnull(strstr(s.source, "width-scaled"));

    tessel_diag d;
    ck_assert_int_eq(resolve(db, "SRAM", "{width: 64}", NULL, NULL, &e, &d), TESSEL_EINVAL);
    ck_assert_int_eq(resolve(db, "SRAM", "{width: 64, depth: 16, size: 1KiB}", NULL, NULL, &e, &d),
                     TESSEL_EPARSE);
    tessel_energy_db_free(&db);
}
END_TEST

/* Stillmaker-Baas factors from 45 nm (energy-numbers.md 2.6). */
START_TEST(test_technology)
{
    tessel_energy_db *db = load_table();
    tessel_component_energy e = must_resolve(db, "intmac", "{width: 8}", "65nm");
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], (8.63 * 0.0625 + 0.0857 * 0.25) * 1.2407);
    ck_assert_close(e.area_um2, 332.25 * 1.5);
    ck_assert_ptr_nonnull(strstr(e.source, "@65nm"));
    /* The attribute wins over the spec's node. */
    e = must_resolve(db, "intmac", "{width: 8, technology: 7nm}", "65nm");
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], (8.63 * 0.0625 + 0.0857 * 0.25) * 0.0943);
    ck_assert_close(e.area_um2, 332.25 * 0.059);
    e = must_resolve(db, "SRAM", "{width: 16, depth: 224}", "32nm");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 0.71011 * 0.6593);
    ck_assert_close(e.area_um2, 3474.22 * 0.46);
    e = must_resolve(db, "intmac", "{width: 8}", "45nm");
    ck_assert_close(e.area_um2, 332.25);
    /* Off the grid: an error that lists the supported nodes. */
    tessel_diag d;
    ck_assert_int_eq(resolve(db, "intmac", "{width: 8, technology: 40nm}", NULL, NULL, &e, &d),
                     TESSEL_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(d.message, "supported: 45nm, 7nm, 14nm"));
    ck_assert_ptr_nonnull(strstr(d.message, "130nm"));
    ck_assert_uint_eq(d.line, 1);
    ck_assert_int_eq(resolve(db, "intmac", "{width: 8}", NULL, "22nm", &e, &d),
                     TESSEL_EUNSUPPORTED);
    /* 28 nm: log-linear between the 32 and 20 nm grid nodes (docs/models/energy.md). */
    e = must_resolve(db, "intmac", "{width: 8}", "28nm");
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], (8.63 * 0.0625 + 0.0857 * 0.25) * 0.4834);
    ck_assert_str_eq(d.file, "spec.yaml"); /* no attribute: the component's position */
    ck_assert_uint_eq(d.line, 7);
    ck_assert_int_eq(resolve(db, "intmac", "{width: 8}", NULL, "fast", &e, &d), TESSEL_EPARSE);
    tessel_energy_db_free(&db);
}
END_TEST

START_TEST(test_unknown_class)
{
    tessel_energy_db *db = load_table();
    tessel_component_energy e;
    tessel_diag d;
    ck_assert_int_eq(resolve(db, "SRAMM", "{width: 64}", "LLB", NULL, &e, &d), TESSEL_EINVAL);
    ck_assert_str_eq(d.message, "LLB: unknown energy class 'SRAMM' (did you mean 'SRAM'?)");
    ck_assert_str_eq(d.file, "spec.yaml");
    ck_assert_uint_eq(d.line, 7);
    ck_assert_uint_eq(d.column, 3);
    ck_assert_str_eq(d.field, "class");
    ck_assert_int_eq(resolve(db, "fpmca", NULL, "MAC", NULL, &e, &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "did you mean 'fpmac'?"));
    ck_assert_int_eq(resolve(db, "quantum_flux", NULL, "X", NULL, &e, &d), TESSEL_EINVAL);
    ck_assert_str_eq(d.message, "X: unknown energy class 'quantum_flux'");
    /* A typo in an attribute name. */
    ck_assert_int_eq(resolve(db, "SRAM", "{widht: 64, depth: 4096}", "LLB", NULL, &e, &d),
                     TESSEL_EPARSE);
    ck_assert_ptr_nonnull(strstr(d.message, "unknown attribute 'widht' (did you mean 'width'?)"));
    ck_assert_str_eq(d.file, "attrs.yaml");
    ck_assert_uint_eq(d.line, 1);
    ck_assert_uint_eq(d.column, 2);
    ck_assert_int_eq(resolve(db, "SRAM", "{width: -4, depth: 4096}", "LLB", NULL, &e, &d),
                     TESSEL_EPARSE);
    ck_assert_int_eq(resolve(db, "SRAM", "[1, 2]", "LLB", NULL, &e, &d), TESSEL_EPARSE);
    tessel_energy_db_free(&db);
}
END_TEST

static tessel_energy_db *load_file(const char *path)
{
    tessel_energy_db *db = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_energy_db_load_file(path, NULL, &db, &d);
    char buf[1024];
    tessel_diag_format(&d, buf, sizeof(buf));
    ck_assert_msg(rc == 0, "loading %s: %s", path, buf);
    return db;
}

static tessel_component_energy must_instance(const tessel_energy_db *db, const char *cls,
                                             const char *instance)
{
    tessel_component_energy e;
    tessel_diag d;
    int rc = resolve(db, cls, NULL, instance, NULL, &e, &d);
    ck_assert_msg(rc == 0, "%s: %s", instance, d.message);
    return e;
}

START_TEST(test_ert_v03)
{
    tessel_energy_db *db = load_file("tests/energy/ert-v03.yaml");
    tessel_component_energy e = must_instance(db, "SRAM", "psum_spad");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 0.25281);
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], 0.25281);
    ck_assert_close(e.pj[TESSEL_ACTION_UPDATE], 0.25281); /* falls back to write */
    ck_assert_close(e.pj[TESSEL_ACTION_LEAK], 0.01232);   /* v0.3 idle */
    ck_assert_uint_eq(e.width_bits, 64);
    ck_assert_ptr_nonnull(strstr(e.source, "eyeriss_168.PE[0..167].psum_spad"));
    e = must_instance(db, "intmac", "MACs"); /* mac_random -> compute */
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], 2.20035);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 0.0);
    /* Argument variants: data_delta = address_delta = 1 wins. */
    e = must_instance(db, "SRAM", "shared_glb");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 49.1739);
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], 37.1554);
    ck_assert_close(e.pj[TESSEL_ACTION_UPDATE], 37.1554);
    ck_assert_close(e.pj[TESSEL_ACTION_METADATA_READ], 0.0); /* given as 0: kept */
    ck_assert_close(e.pj[TESSEL_ACTION_METADATA_WRITE], 37.1554);
    e = must_instance(db, "LPDDR4", "DRAM"); /* missing write falls back to read */
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 512.0);
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], 512.0);
    ck_assert_close(e.pj[TESSEL_ACTION_METADATA_READ], 40.0);
    ck_assert_close(e.pj[TESSEL_ACTION_METADATA_WRITE], 512.0);
    e = must_instance(db, "LPDDR4", "eyeriss_168.DRAM"); /* a dotted instance */
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 512.0);
    /* No entry and no tessel table: the class is unknown. */
    tessel_diag d;
    ck_assert_int_eq(resolve(db, "SRAM", NULL, "LLB", NULL, &e, &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "no ERT entry is named 'LLB'"));
    tessel_energy_db_free(&db);
}
END_TEST

/* A spec skeleton: only what the energy module reads. */
static void spec_init(tessel_spec *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->technology, sizeof(s->technology), "45nm");
    s->compute.pes = 1;
    s->compute.macs_per_pe = 1;
    s->compute.clock_ghz = 1;
}

static tessel_spec_level *spec_level(tessel_spec *s, const char *name, const char *cls)
{
    tessel_spec_level *l = &s->level[s->nlevels++];
    snprintf(l->name, sizeof(l->name), "%s", name);
    snprintf(l->energy.cls, sizeof(l->energy.cls), "%s", cls);
    l->instances = 1;
    l->word_bits = 64;
    return l;
}

START_TEST(test_ert_v04_art)
{
    static char ert[] = "tests/energy/ert-v04.yaml", art[] = "tests/energy/art-v04.yaml",
                tab[] = TABLE;
    tessel_spec s;
    spec_init(&s);
    s.table[0] = ert;
    s.table[1] = art;
    s.table[2] = tab;
    s.ntables = 3;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_energy_db *db = NULL;
    ck_assert_int_eq(tessel_energy_db_load(&s, NULL, &db, &errors), 0);
    ck_assert_uint_eq(errors.count, 0);
    tessel_component_energy e = must_instance(db, "LPDDR4", "DRAM");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 512.0);
    ck_assert_close(e.pj[TESSEL_ACTION_UPDATE], 512.0);
    ck_assert_close(e.area_um2, 0.0);
    e = must_instance(db, "SRAM", "GlobalBuffer");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 51.870888);
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], 66.310888);
    ck_assert_close(e.pj[TESSEL_ACTION_LEAK], 0.003241);
    ck_assert_close(e.area_um2, 199065.0);
    ck_assert_ptr_nonnull(strstr(e.source, "art-v04.yaml"));
    e = must_instance(db, "intmac", "MAC"); /* "mac[1..256]", case ignored */
    ck_assert_close(e.pj[TESSEL_ACTION_COMPUTE], 0.315);
    ck_assert_close(e.pj[TESSEL_ACTION_LEAK], 0.0036);
    ck_assert_close(e.area_um2, 417.0);
    /* Not in the ERT: the tessel table answers by class. */
    e = must_instance(db, "regfile", "PEbuf");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 64 * 0.009); /* 64 x 1 */
    tessel_energy_db_free(&db);
    tessel_diag_list_free(&errors);
}
END_TEST

START_TEST(test_ert_summary)
{
    tessel_energy_db *db = load_file("tests/energy/ert-summary.yaml");
    tessel_component_energy e = must_instance(db, "SRAM", "psum_spad");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 0.16654); /* average_energy */
    ck_assert_close(e.pj[TESSEL_ACTION_LEAK], 0.00801);
    e = must_instance(db, "SRAM", "iact_spad");
    ck_assert_close(e.pj[TESSEL_ACTION_METADATA_READ], 0.14934);
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], 0.13003);
    tessel_energy_db_free(&db);
}
END_TEST

static int has_error(const tessel_diag_list *l, uint64_t line, const char *field, const char *text)
{
    for (size_t i = 0; i < l->count; i++)
        if (l->items[i].line == line && strcmp(l->items[i].field, field) == 0 &&
            strstr(l->items[i].message, text))
            return 1;
    return 0;
}

static void dump(const tessel_diag_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        char buf[1024];
        tessel_diag_format(&l->items[i], buf, sizeof(buf));
        fprintf(stderr, "  [%s] %s\n", l->items[i].field, buf);
    }
}

START_TEST(test_bad_table)
{
    static char bad[] = "tests/energy/bad-table.yaml", missing[] = "tests/energy/nope.yaml",
                good[] = "tests/energy/ert-v03.yaml";
    tessel_spec s;
    spec_init(&s);
    s.table[0] = bad;
    s.table[1] = good;
    s.table[2] = missing;
    s.ntables = 3;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_energy_db *db = NULL;
    int rc = tessel_energy_db_load(&s, NULL, &db, &errors);
    ck_assert_int_eq(rc, TESSEL_EPARSE);
    ck_assert_ptr_null(db);
    int ok = has_error(&errors, 10, "tessel_energy_table.classes[0].points[0].read",
                       "must be positive") &&
             has_error(&errors, 11, "tessel_energy_table.classes[0].points[1].source",
                       "every number in a table needs its source") &&
             has_error(&errors, 14, "tessel_energy_table.classes[1].pj_per_bitt",
                       "did you mean 'pj_per_bit'?") &&
             has_error(&errors, 17, "tessel_energy_table.classes[2].model",
                       "did you mean 'arith'?");
    if (!ok)
        dump(&errors);
    ck_assert(ok);
    for (size_t i = 0; i < errors.count; i++)
        if (strstr(errors.items[i].file, "bad-table"))
            ck_assert_uint_gt(errors.items[i].column, 0);
    /* The missing file is reported too, after the bad one. */
    int io = 0;
    for (size_t i = 0; i < errors.count; i++)
        io |= strstr(errors.items[i].file, "nope.yaml") != NULL;
    ck_assert(io);
    tessel_diag_list_free(&errors);
}
END_TEST

static int parse_text(const char *text, tessel_diag_list *errors)
{
    tessel_energy_db *db = NULL;
    int rc = tessel_energy_db_parse("mem.yaml", text, strlen(text), NULL, &db, errors);
    ck_assert(rc == 0 ? db != NULL : db == NULL);
    tessel_energy_db_free(&db);
    return rc;
}

START_TEST(test_bad_documents)
{
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    ck_assert_int_eq(parse_text("ERT: {version: 0.2, tables: []}\n", &errors),
                     TESSEL_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(errors.items[0].message, "tessel reads 0.3 and 0.4"));
    ck_assert_str_eq(errors.items[0].field, "ERT.version");
    ck_assert_int_eq(parse_text("- 1\n- 2\n", &errors), TESSEL_EPARSE);
    ck_assert_int_eq(parse_text("ERTT: {version: 0.3, tables: []}\n", &errors), TESSEL_EPARSE);
    ck_assert_ptr_nonnull(strstr(errors.items[errors.count - 1].message, "did you mean 'ERT'?"));
    ck_assert_int_eq(parse_text("ERT:\n  version: 0.4\n  tables:\n  - name: a.b\n    actions:\n"
                                "    - {name: read, energy: fast}\n",
                                &errors),
                     TESSEL_EPARSE);
    ck_assert_uint_eq(errors.items[errors.count - 1].line, 6);
    ck_assert_int_eq(parse_text("ART: {version: '0.4', tables: [{name: x, area: -1}]}\n", &errors),
                     TESSEL_EPARSE);
    ck_assert_int_eq(parse_text("tessel_energy_table: {version: 2, technology: 45nm, classes: []}\n",
                                &errors),
                     TESSEL_EUNSUPPORTED);
    ck_assert_int_eq(parse_text("tessel_energy_table: {version: 1, technology: 45nm, classes: []}\n"
                                "ERT: {version: 0.3, tables: []}\n",
                                &errors),
                     TESSEL_EPARSE);
    ck_assert_int_eq(parse_text("ERT: {version: 0.3, tables: [{name: a, actions: []},"
                                " {name: a, actions: []}]}\n",
                                &errors),
                     TESSEL_EPARSE);
    ck_assert_int_eq(parse_text("ERT: {version: 0.3, tables: [{name: x.a, actions: []},"
                                " {name: y.a, actions: []}]}\n",
                                &errors),
                     0);
    tessel_diag_list_free(&errors);

    /* The error list is optional. */
    tessel_energy_db *none = NULL;
    ck_assert_int_eq(tessel_energy_db_parse("null.yaml", "ERT: 1\n", 7, NULL, &none, NULL),
                     TESSEL_EPARSE);
    ck_assert_ptr_null(none);
    ck_assert_int_eq(tessel_energy_db_parse("null.yaml", "a: [\n", 5, NULL, &none, NULL),
                     TESSEL_EPARSE);

    /* Two entries answering the same instance: an error naming both. */
    const char *two = "ERT: {version: 0.3, tables: [{name: x.a, actions: [{name: read, energy: 1}]},"
                      " {name: y.a, actions: [{name: read, energy: 2}]}]}\n";
    tessel_diag_list_init(&errors, NULL);
    tessel_energy_db *db = NULL;
    ck_assert_int_eq(tessel_energy_db_parse("two.yaml", two, strlen(two), NULL, &db, &errors), 0);
    tessel_component_energy e;
    tessel_diag d;
    ck_assert_int_eq(resolve(db, "SRAM", NULL, "a", NULL, &e, &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "matches both 'x.a' and 'y.a'"));
    e = must_instance(db, "SRAM", "y.a");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 2.0);
    tessel_energy_db_free(&db);
    tessel_diag_list_free(&errors);
}
END_TEST

/* DRAM (LPDDR4), a 128 KiB LLB (SRAM, 256 bits), 4 PEbuf register files of
 * 16 x 32 bits and 4 PEs of 8-bit intmacs, priced from tessel-45nm.yaml. */
static void three_levels(tessel_spec *s, char *tab, tessel_yaml_doc **d)
{
    spec_init(s);
    s->table[0] = tab;
    s->ntables = 1;
    tessel_spec_level *l = spec_level(s, "DRAM", "LPDDR4");
    l->energy = component("LPDDR4", "{width: 64}", &d[0]);
    l = spec_level(s, "LLB", "SRAM");
    l->energy = component("SRAM", "{width: 256}", &d[1]); /* depth from the capacity */
    l->capacity = 128 * 1024;
    l = spec_level(s, "PEbuf", "regfile");
    l->energy = component("regfile", "{depth: 16}", &d[2]); /* width from word_bits */
    l->word_bits = 32;
    l->instances = 4;
    s->compute.pes = 4;
    s->compute.macs_per_pe = 1;
    s->compute.mac = component("intmac", "{width: 8}", &d[3]);
}

START_TEST(test_design)
{
    static char tab[] = TABLE;
    tessel_spec s;
    tessel_yaml_doc *dd[4];
    three_levels(&s, tab, dd);
    tessel_yaml_doc *d0 = dd[0], *d1 = dd[1], *d2 = dd[2], *d3 = dd[3];
    s.level[1].instances = 2;
    s.compute.macs_per_pe = 2;
    snprintf(s.compute.intersect.cls, sizeof(s.compute.intersect.cls), "intersect");

    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_energy_db *db = NULL;
    ck_assert_int_eq(tessel_energy_db_load(&s, NULL, &db, &errors), 0);
    tessel_design_energy de;
    int rc = tessel_energy_design(db, &s, &de, &errors);
    if (rc)
        dump(&errors);
    ck_assert_int_eq(rc, 0);
    ck_assert_close(de.level[0].pj[TESSEL_ACTION_READ], 512.0);
    ck_assert_close(de.level[1].pj[TESSEL_ACTION_READ], sqrt(51.870888 * 124.695));
    double rf_read = 32 * 0.009 + 16 * 0.029015 * 4 / 32;
    double rf_area = 32 * 16 * 5.98 + 16 * 70 * 4.0 / 32;
    ck_assert_close(de.level[2].pj[TESSEL_ACTION_READ], rf_read);
    ck_assert_uint_eq(de.level[2].width_bits, 32);
    ck_assert_close(de.mac.pj[TESSEL_ACTION_COMPUTE], 8.63 * 0.0625 + 0.0857 * 0.25);
    ck_assert_close(de.intersect.pj[TESSEL_ACTION_COMPUTE], 0.029015);
    double area = 2 * sqrt(199065.0 * 1069102.0) + 4 * rf_area + 8 * 332.25 + 4 * 70.0;
    ck_assert_close(de.area_um2, area);

    /* Every broken component is reported, not just the first. */
    snprintf(s.level[1].energy.cls, sizeof(s.level[1].energy.cls), "SRMA");
    s.level[2].energy.attributes = NULL;
    s.level[2].capacity = 1ull << 30; /* 1 GiB: beyond the fitted SRAM the regfile falls back on */
    snprintf(s.compute.intersect.cls, sizeof(s.compute.intersect.cls), "intersekt");
    tessel_diag_list_free(&errors);
    tessel_diag_list_init(&errors, NULL);
    rc = tessel_energy_design(db, &s, &de, &errors);
    ck_assert_int_eq(rc, TESSEL_EINVAL);
    ck_assert_uint_eq(errors.count, 3);
    ck_assert_ptr_nonnull(strstr(errors.items[0].message, "LLB: unknown energy class 'SRMA'"));
    ck_assert_ptr_nonnull(strstr(errors.items[1].message, "PEbuf: SRAM 32x268435456 cannot be priced"));
    ck_assert_ptr_nonnull(strstr(errors.items[2].message, "did you mean 'intersect'"));
    tessel_energy_db_free(&db);
    tessel_diag_list_free(&errors);
    tessel_yaml_free(&d0);
    tessel_yaml_free(&d1);
    tessel_yaml_free(&d2);
    tessel_yaml_free(&d3);
}
END_TEST

/* Network energy (docs/models/energy.md "Network energy"): the `wire` class,
 * 0.325 pJ per bit per mm, at the child's value width over the hop: the
 * side of the child's instances by default, network.hop_mm when given. */
START_TEST(test_network)
{
    static char tab[] = TABLE;
    tessel_spec s;
    tessel_yaml_doc *dd[4];
    three_levels(&s, tab, dd);
    tessel_yaml_doc *d0 = dd[0], *d1 = dd[1], *d2 = dd[2], *d3 = dd[3];
    s.level[1].network_width = 8;     /* priced: default class and hop */
    s.level[2].value_bits = 16;
    s.level[2].spatial[0] = 2;        /* a split below the innermost level */
    s.level[2].network_hop_mm = 0.5;

    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_energy_db *db = NULL;
    ck_assert_int_eq(tessel_energy_db_load(&s, NULL, &db, &errors), 0);
    tessel_design_energy de;
    int rc = tessel_energy_design(db, &s, &de, &errors);
    if (rc)
        dump(&errors);
    ck_assert_int_eq(rc, 0);
    /* LLB -> 4 PEbuf instances of 16x32-bit registers: a square of side
     * sqrt(4 x area); one 16-bit value over it */
    double rf_area = 32 * 16 * 5.98 + 16 * 70 * 4.0 / 32;
    double side = sqrt(4 * rf_area) / 1000;
    ck_assert_close(de.network_mm[1], side);
    ck_assert_close(de.network[1].pj[TESSEL_ACTION_READ], 0.325 * 16 * side);
    ck_assert_str_eq(de.network[1].method, "wire");
    ck_assert_str_eq(de.network[1].entry, "wire");
    /* PEbuf -> its MACs over the given 0.5 mm; DRAM has no network */
    ck_assert_close(de.network[2].pj[TESSEL_ACTION_READ], 0.325 * 16 * 0.5);
    ck_assert_str_eq(de.network[0].method, "");
    ck_assert_close(de.area_um2, sqrt(199065.0 * 1069102.0) + 4 * rf_area + 4 * 332.25);

    /* a named class must be a wire class */
    snprintf(s.level[1].network_class, sizeof(s.level[1].network_class), "intmac");
    tessel_diag_list_free(&errors);
    tessel_diag_list_init(&errors, NULL);
    ck_assert_int_eq(tessel_energy_design(db, &s, &de, &errors), TESSEL_EINVAL);
    ck_assert_uint_eq(errors.count, 1);
    ck_assert_ptr_nonnull(strstr(errors.items[0].message, "not a wire class"));
    tessel_energy_db_free(&db);
    tessel_diag_list_free(&errors);
    tessel_yaml_free(&d0);
    tessel_yaml_free(&d1);
    tessel_yaml_free(&d2);
    tessel_yaml_free(&d3);
}
END_TEST

/* The fitted SRAM law of tessel-45nm.yaml (docs/models/energy.md). */
static const double law_read[3] = {-6.076047, 1.156241, 0.497863};
static const double law_write[3] = {-5.531908, 1.187922, 0.418450};
static const double law_area[3] = {0.811503, 0.892323, 0.915851};

static double law(const double *c, double width, double depth)
{
    return exp(c[0] + c[1] * log(width) + c[2] * log(depth));
}

START_TEST(test_sram_fit)
{
    tessel_energy_db *db = load_table();
    /* 8 KiB at 64 bits: the only 64-bit point is 16384 deep, so the law. */
    tessel_component_energy e = must_resolve(db, "SRAM", "{width: 64, size: 8KiB}", NULL);
    ck_assert_str_eq(e.method, "fit");
    ck_assert_uint_eq(e.banks, 1);
    ck_assert_close(e.depth_words, 1024.0);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], law(law_read, 64, 1024));
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], law(law_write, 64, 1024));
    ck_assert_close(e.pj[TESSEL_ACTION_UPDATE], law(law_write, 64, 1024));
    ck_assert_close(e.pj[TESSEL_ACTION_LEAK], 0.0);
    ck_assert_close(e.area_um2, law(law_area, 64, 1024));
    /* Below a width's points: the law too (the points stay exact where they reach). */
    e = must_resolve(db, "SRAM", "{width: 256, depth: 1024}", NULL);
    ck_assert_close(e.pj[TESSEL_ACTION_READ], law(law_read, 256, 1024));
    e = must_resolve(db, "SRAM", "{width: 256, depth: 16384}", NULL);
    ck_assert_str_eq(e.method, "point");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 140.096);
    /* 1 MiB at 256 bits: two banks of the 16384x256 point, plus the H-tree
     * across both (0.325 pJ/bit/mm over the side of their square). */
    e = must_resolve(db, "SRAM", "{width: 256, size: 1MiB}", NULL);
    double wire = 0.325 * 256 * sqrt(2 * 2079246.0) / 1000;
    ck_assert_uint_eq(e.banks, 2);
    ck_assert_str_eq(e.method, "point");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 140.096 + wire);
    ck_assert_close(e.pj[TESSEL_ACTION_WRITE], 134.505 + wire);
    ck_assert_close(e.area_um2, 2 * 2079246.0);
    ck_assert_ptr_nonnull(strstr(e.source, "2 banks + H-tree"));
    /* Banks given: 4 banks of 4096, each interpolated between the points. */
    e = must_resolve(db, "SRAM", "{width: 256, depth: 16384, banks: 4}", NULL);
    double bank = sqrt(199065.0 * 1069102.0);
    ck_assert_uint_eq(e.banks, 4);
    ck_assert_close(e.pj[TESSEL_ACTION_READ],
                    sqrt(51.870888 * 124.695) + 0.325 * 256 * sqrt(4 * bank) / 1000);
    /* 30 MiB at 512 bits: 60 banks of 8192 words, past the 512-bit points: the law. */
    e = must_resolve(db, "SRAM", "{width: 512, size: 30MiB}", NULL);
    ck_assert_uint_eq(e.banks, 60);
    ck_assert_str_eq(e.method, "fit");
    double a = law(law_area, 512, 8192);
    ck_assert_close(e.pj[TESSEL_ACTION_READ],
                    law(law_read, 512, 8192) + 0.325 * 512 * sqrt(60 * a) / 1000);
    ck_assert_close(e.area_um2, 60 * a);
    /* Technology scales the law like the points. */
    e = must_resolve(db, "SRAM", "{width: 64, size: 8KiB}", "65nm");
    ck_assert_close(e.pj[TESSEL_ACTION_READ], law(law_read, 64, 1024) * 1.2407);
    /* Outside the fitted range: errors that say so. */
    tessel_diag d;
    ck_assert_int_eq(resolve(db, "SRAM", "{width: 256, size: 128MiB}", "LLB", NULL, &e, &d),
                     TESSEL_ERANGE);
    ck_assert_ptr_nonnull(strstr(d.message, "LLB: SRAM 256x4194304 cannot be priced"));
    ck_assert_ptr_nonnull(strstr(d.message, "outside the fitted model's 64 to 67108864 bytes"));
    ck_assert_close(e.pj[TESSEL_ACTION_READ], 0.0);
    ck_assert_int_eq(resolve(db, "SRAM", "{width: 2048, size: 1MiB}", NULL, NULL, &e, &d),
                     TESSEL_ERANGE);
    ck_assert_ptr_nonnull(strstr(d.message, "width 2048"));
    ck_assert_int_eq(resolve(db, "SRAM", "{width: 64, size: 32B}", NULL, NULL, &e, &d),
                     TESSEL_ERANGE);
    ck_assert_int_eq(resolve(db, "SRAM", "{width: 64, depth: 16, banks: 32}", NULL, NULL, &e, &d),
                     TESSEL_ERANGE);
    ck_assert_ptr_nonnull(strstr(d.message, "less than one 64-bit word per bank"));
    ck_assert_int_eq(resolve(db, "LPDDR4", "{banks: 2}", NULL, NULL, &e, &d), TESSEL_EINVAL);
    ck_assert_int_eq(resolve(db, "intmac", "{banks: 2}", NULL, NULL, &e, &d), TESSEL_EINVAL);
    tessel_energy_db_free(&db);
}
END_TEST

/* The coefficients in the table are the least-squares fit on ln q of the
 * `fit` rows of energy_tables/sram-points.tsv (bench/energy_fit.py), here
 * refitted independently with GSL. */
START_TEST(test_fit_matches_points)
{
    FILE *f = fopen("energy_tables/sram-points.tsv", "r");
    ck_assert_ptr_nonnull(f);
    double w[64], dp[64], q[3][64];
    size_t n = 0;
    int header = 0;
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (!header) {
            header = 1;
            ck_assert_int_eq(strncmp(line, "use\twidth\tdepth\tbanks\tread\twrite\tarea\tsource", 44), 0);
            continue;
        }
        if (strncmp(line, "fit\t", 4) != 0)
            continue;
        double banks;
        ck_assert_int_lt(n, 64);
        ck_assert_int_eq(sscanf(line + 4, "%lf\t%lf\t%lf\t%lf\t%lf\t%lf", &w[n], &dp[n], &banks,
                                &q[0][n], &q[1][n], &q[2][n]), 6);
        n++;
    }
    fclose(f);
    ck_assert_uint_eq(n, 10);
    const double *want[3] = {law_read, law_write, law_area};
    for (int k = 0; k < 3; k++) {
        gsl_matrix *X = gsl_matrix_alloc(n, 3), *cov = gsl_matrix_alloc(3, 3);
        gsl_vector *y = gsl_vector_alloc(n), *c = gsl_vector_alloc(3);
        gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, 3);
        for (size_t i = 0; i < n; i++) {
            gsl_matrix_set(X, i, 0, 1.0);
            gsl_matrix_set(X, i, 1, log(w[i]));
            gsl_matrix_set(X, i, 2, log(dp[i]));
            gsl_vector_set(y, i, log(q[k][i]));
        }
        double chisq;
        ck_assert_int_eq(gsl_multifit_linear(X, y, c, cov, &chisq, ws), 0);
        for (int j = 0; j < 3; j++)
            ck_assert_msg(fabs(gsl_vector_get(c, (size_t)j) - want[k][j]) < 5e-6,
                          "quantity %d c%d: refit %.7f, table %.7f", k, j,
                          gsl_vector_get(c, (size_t)j), want[k][j]);
        gsl_multifit_linear_free(ws);
        gsl_matrix_free(X);
        gsl_matrix_free(cov);
        gsl_vector_free(y);
        gsl_vector_free(c);
    }
}
END_TEST

/* Plausibility and energy warnings on issue 23's design: code 0, never errors. */
START_TEST(test_warnings)
{
    const char *sets[] = {
        "architecture.energy_tables=[tests/cli/cases/inputs/energy/glb.ERT.yaml,"
        "energy_tables/tessel-45nm.yaml]",
        "architecture.compute.clock=1000", "GLB.tensors.A.partition=5%",
        "GLB.tensors.B.partition=10%", "GLB.tensors.Z.partition=10%"};
    const char *spec_path = "examples/specs/glb256k-pe8k.yaml";
    for (int with = 0; with < 2; with++) {
        tessel_diag_list errors, warn;
        tessel_diag_list_init(&errors, NULL);
        tessel_diag_list_init(&warn, NULL);
        tessel_spec *spec = NULL;
        int rc = tessel_spec_load(spec_path, sets, with ? 5 : 0, NULL, &spec, &errors);
        if (rc)
            dump(&errors);
        ck_assert_int_eq(rc, 0);
        ck_assert_int_eq(tessel_spec_plausibility(spec, &warn), with ? 2 : 0);
        tessel_energy_db *db = NULL;
        ck_assert_int_eq(tessel_energy_db_load(spec, NULL, &db, &errors), 0);
        tessel_design_energy de;
        ck_assert_int_eq(tessel_energy_design(db, spec, &de, &errors), 0);
        ck_assert_int_eq(tessel_energy_warnings(db, spec, &de, &warn), with ? 2 : 0);
        for (size_t i = 0; i < warn.count; i++)
            ck_assert_int_eq(warn.items[i].code, 0);
        if (with) {
            ck_assert_ptr_nonnull(strstr(warn.items[0].message, "1000 GHz is above 10 GHz"));
            ck_assert_ptr_nonnull(strstr(warn.items[1].message, "GLB: the partitions"));
            ck_assert_ptr_nonnull(strstr(warn.items[1].message, "25.0 %"));
            ck_assert_ptr_nonnull(strstr(warn.items[2].message, "'system.GlobalBuffer[1..1]'"));
            ck_assert_ptr_nonnull(strstr(warn.items[2].message, "did you mean 'GLB'"));
            ck_assert_ptr_nonnull(strstr(warn.items[3].message, "PEB: priced per access by"));
            ck_assert_str_eq(de.level[2].method, "ert");
        }
        tessel_energy_db_free(&db);
        tessel_spec_free(&spec);
        tessel_diag_list_free(&errors);
        tessel_diag_list_free(&warn);
    }
}
END_TEST

START_TEST(test_roofline)
{
    tessel_spec s;
    spec_init(&s);
    s.compute.pes = 128;
    s.compute.macs_per_pe = 1;
    s.compute.clock_ghz = 1;
    spec_level(&s, "DRAM", "LPDDR4")->bandwidth = 68.25;
    spec_level(&s, "LLB", "SRAM")->bandwidth = 0; /* unbounded */
    tessel_roofline r;

    /* DRAM bound: 1e6 bytes / 68.25 B/cycle > 1e6 MACs / 128. */
    double bytes[TESSEL_SPEC_MAX_LEVELS] = {1e6, 5e7};
    tessel_roofline_evaluate(&s, 1e6, bytes, &r);
    ck_assert_close(r.compute_cycles, 1e6 / 128);
    ck_assert_close(r.level_cycles[0], 1e6 / 68.25);
    ck_assert_close(r.level_cycles[1], 0.0);
    ck_assert_close(r.cycles, 1e6 / 68.25);
    ck_assert_int_eq(r.bound, 0);
    ck_assert_str_eq(tessel_roofline_bound_name(&s, &r), "DRAM");
    ck_assert_close(r.compute_utilization, (1e6 / 128) / (1e6 / 68.25));
    ck_assert_close(r.level_utilization[0], 1.0);
    ck_assert_close(r.level_utilization[1], 0.0);
    ck_assert_close(r.seconds, (1e6 / 68.25) / 1e9);

    /* Compute bound. */
    bytes[0] = 1e5;
    tessel_roofline_evaluate(&s, 1e6, bytes, &r);
    ck_assert_close(r.cycles, 1e6 / 128);
    ck_assert_int_eq(r.bound, -1);
    ck_assert_str_eq(tessel_roofline_bound_name(&s, &r), "compute");
    ck_assert_close(r.compute_utilization, 1.0);
    ck_assert_close(r.level_utilization[0], (1e5 / 68.25) / (1e6 / 128));

    /* Instances multiply a level's bandwidth; the clock converts GB/s to
     * bytes per cycle: 10 GB/s x 4 / 2 GHz = 20 B/cycle. */
    s.compute.clock_ghz = 2;
    s.level[1].bandwidth = 10;
    s.level[1].instances = 4;
    bytes[0] = 0;
    bytes[1] = 1e6;
    tessel_roofline_evaluate(&s, 1e3, bytes, &r);
    ck_assert_close(r.level_cycles[1], 1e6 / 20);
    ck_assert_int_eq(r.bound, 1);
    ck_assert_str_eq(tessel_roofline_bound_name(&s, &r), "LLB");
    ck_assert_close(r.seconds, (1e6 / 20) / 2e9);

    /* Nothing to do: zero cycles, zero utilizations, compute "bound". */
    tessel_roofline_evaluate(&s, 0, NULL, &r);
    ck_assert_close(r.cycles, 0.0);
    ck_assert_close(r.compute_utilization, 0.0);
    ck_assert_int_eq(r.bound, -1);
    ck_assert_close(r.seconds, 0.0);
}
END_TEST

/* Fails each allocation in turn: every failure is ENOMEM with nothing
 * left allocated, and the loop ends with a clean success. */
static void oom_file(const char *path)
{
    for (long n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_energy_db *db = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        int rc = tessel_energy_db_load_file(path, &ta.allocator, &db, &d);
        if (rc == 0) {
            ck_assert_ptr_nonnull(db);
            ck_assert_int_lt(ta.calls, n); /* the failure point was never reached */
            tessel_energy_db_free(&db);
            ck_assert_int_eq(ta.live, 0);
            break;
        }
        ck_assert_msg(rc == TESSEL_ENOMEM, "%s, failing allocation %ld: code %d (%s)", path, n, rc,
                      d.message);
        ck_assert_ptr_null(db);
        ck_assert_msg(ta.live == 0, "%s, failing allocation %ld: %ld blocks leaked", path, n,
                      ta.live);
        ck_assert_int_lt(n, 100000);
    }
}

START_TEST(test_oom)
{
    oom_file(TABLE);
    oom_file("tests/energy/ert-v03.yaml");
    oom_file("tests/energy/ert-summary.yaml");

    /* Through tessel_energy_db_load, with the error list on the same allocator. */
    static char ert[] = "tests/energy/ert-v04.yaml", tab[] = TABLE;
    tessel_spec s;
    spec_init(&s);
    s.table[0] = ert;
    s.table[1] = tab;
    s.ntables = 2;
    for (long n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_diag_list errors;
        tessel_diag_list_init(&errors, &ta.allocator);
        tessel_energy_db *db = NULL;
        int rc = tessel_energy_db_load(&s, &ta.allocator, &db, &errors);
        tessel_diag_list_free(&errors);
        if (rc == 0) {
            tessel_energy_db_free(&db);
            ck_assert_int_eq(ta.live, 0);
            break;
        }
        ck_assert_int_eq(rc, TESSEL_ENOMEM);
        ck_assert_int_eq(ta.live, 0);
    }
}
END_TEST

static Suite *energy_suite(void)
{
    Suite *s = suite_create("energy");
    TCase *t = tcase_create("tables");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_action_names);
    tcase_add_test(t, test_dram);
    tcase_add_test(t, test_ddr4);
    tcase_add_test(t, test_unavailable);
    tcase_add_test(t, test_mac);
    tcase_add_test(t, test_regfile);
    tcase_add_test(t, test_sram);
    tcase_add_test(t, test_sram_fit);
    tcase_add_test(t, test_fit_matches_points);
    tcase_add_test(t, test_technology);
    tcase_add_test(t, test_unknown_class);
    suite_add_tcase(s, t);
    TCase *a = tcase_create("accelergy");
    tcase_add_test(a, test_ert_v03);
    tcase_add_test(a, test_ert_v04_art);
    tcase_add_test(a, test_ert_summary);
    tcase_add_test(a, test_bad_table);
    tcase_add_test(a, test_bad_documents);
    suite_add_tcase(s, a);
    TCase *d = tcase_create("design");
    tcase_set_timeout(d, 300);
    tcase_add_test(d, test_design);
    tcase_add_test(d, test_network);
    tcase_add_test(d, test_warnings);
    tcase_add_test(d, test_roofline);
    tcase_add_test(d, test_oom);
    suite_add_tcase(s, d);
    return s;
}

int main(void)
{
    /* The library checks its GSL calls' codes; GSL must not abort. */
    gsl_set_error_handler_off();
    SRunner *sr = srunner_create(energy_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
