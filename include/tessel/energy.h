/* tessel — energy and performance: component energy/area tables (tessel
 * tables and Accelergy ERT/ART files), per-action energies for the
 * components of a spec, and roofline cycles.  Module `energy`: depends on
 * `spec` (and `base`).  Table format and sources: energy_tables/README.md. */
#ifndef TESSEL_ENERGY_H
#define TESSEL_ENERGY_H

#include <stddef.h>
#include <stdint.h>

#include "tessel/base.h"
#include "tessel/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Actions every component answers (Accelergy v0.4 names). A storage
 * access moves one word of the component's width; `compute` is one MAC or
 * one intersection step; `leak` is per cycle. Metadata actions fall back
 * to read/write when a table has none. */
typedef enum tessel_action {
    TESSEL_ACTION_READ = 0,
    TESSEL_ACTION_WRITE,
    TESSEL_ACTION_UPDATE,
    TESSEL_ACTION_METADATA_READ,
    TESSEL_ACTION_METADATA_WRITE,
    TESSEL_ACTION_COMPUTE,
    TESSEL_ACTION_LEAK,
    TESSEL_ACTION_COUNT
} tessel_action;

const char *tessel_action_name(tessel_action a);

/* Gated actions (an Accelergy ERT's gated_read, gated_metadata_read,
 * mac_gated and mac_skipped): what a skipped or gated scalar access or
 * compute costs (Sparseloop charges its skipped and gated scalar reads at
 * gated_read, a skipped compute at mac_skipped, else mac_gated); 0 when
 * the table has none. Not actions of energy.csv. */
enum { TESSEL_GATED_READ = 0, TESSEL_GATED_METADATA_READ, TESSEL_GATED_COMPUTE,
       TESSEL_SKIPPED_COMPUTE, TESSEL_GATED_COUNT };

/* Energy per action (pJ) and area (um^2) of one component instance, with
 * the table entry it came from (for reports and --explain). */
typedef struct tessel_component_energy {
    double pj[TESSEL_ACTION_COUNT];
    double gated_pj[TESSEL_GATED_COUNT]; /* ERT only: see TESSEL_GATED_READ */
    double area_um2;
    unsigned width_bits; /* bits moved per storage access (from the attributes) */
    char source[256];    /* e.g. "tessel-45nm.yaml: SRAM (CACTI 45nm, interpolated depth 30720)" */
    char table[96];      /* provenance: the table file that priced it (file name part) */
    char entry[96];      /* its class (tessel table) or ERT entry (Accelergy) */
    /* How it was priced: "point" (a table point), "interpolated" (between
     * points), "width-scaled", "fit" (the fitted SRAM law), "dram",
     * "regfile", "arith" or "ert" (docs/models/energy.md). */
    char method[16];
    double depth_words;  /* storage: words of width_bits (0 when none applies) */
    unsigned banks;      /* SRAM banks (1 unless banked), 0 when none applies */
    char technology[16]; /* the node it was scaled to ("" for ERT/DRAM) */
} tessel_component_energy;

/* All tables a spec names, loaded once (read-only afterwards, shareable
 * between threads). */
typedef struct tessel_energy_db tessel_energy_db;

/* Loads every table in spec->table[] (a tessel table or an Accelergy
 * ERT/ART YAML, v0.3 or v0.4, recognised by content). All errors are
 * appended to `errors`; returns the first code. */
int tessel_energy_db_load(const tessel_spec *spec, const tessel_allocator *a,
                          tessel_energy_db **out, tessel_diag_list *errors);
/* Loads one table file (tests, tools). */
int tessel_energy_db_load_file(const char *path, const tessel_allocator *a,
                               tessel_energy_db **out, tessel_diag *diag);
/* Loads one table from memory (`name` stands for the file in messages):
 * the YAML is parsed, then read as a tessel table or ERT/ART. */
int tessel_energy_db_parse(const char *name, const void *data, size_t size,
                           const tessel_allocator *a, tessel_energy_db **out,
                           tessel_diag_list *errors);
void tessel_energy_db_free(tessel_energy_db **db);
/* The i-th class name over all tessel tables of db, or NULL past the end
 * (for listings and suggestions). */
const char *tessel_energy_db_class_name(const tessel_energy_db *db, size_t i);

/* Resolves a component: its class in the tables, scaled to its attributes
 * (width, depth/size, technology; spec->technology when the attributes do
 * not say). `instance` is the component's name in the spec (a level name,
 * "MAC", "intersect"), matched against fully-qualified Accelergy ERT names
 * ("system.chip.LLB[0..0]" matches "LLB"). An unknown class is an error
 * naming the nearest known class. Values between table points are
 * interpolated; outside the table they are an error, never extrapolated
 * silently. */
int tessel_energy_component(const tessel_energy_db *db, const tessel_spec_component *c,
                            const char *instance, const char *technology,
                            tessel_component_energy *out, tessel_diag *diag);

/* tessel_energy_component with defaults for what the attributes leave
 * out: default_width (0 = the class's default, 64 for storage) and
 * default_bytes (a storage level's capacity, giving the depth when the
 * attributes name neither depth nor size; 0 = none).
 * tessel_energy_design passes each level's word_bits and capacity. */
int tessel_energy_component_sized(const tessel_energy_db *db, const tessel_spec_component *c,
                                  const char *instance, const char *technology,
                                  unsigned default_width, uint64_t default_bytes,
                                  tessel_component_energy *out, tessel_diag *diag);

/* Every component of a spec resolved: level[l] for each storage level,
 * then the MAC and the intersection unit (zeros when the spec has none). */
typedef struct tessel_design_energy {
    tessel_component_energy level[TESSEL_SPEC_MAX_LEVELS];
    tessel_component_energy mac;
    tessel_component_energy intersect;
    double area_um2; /* sum over components x instances (PEs for the MAC) */
    /* Level l's network to its child (a `network` or a spatial split;
     * docs/models/energy.md "Network energy"): `read` is the pJ of one
     * delivered value (the child's value_bits) over network_mm[l] mm of
     * wire; method "" when not priced (no such network, or the default
     * class `wire` in none of the tables, or no length known). */
    tessel_component_energy network[TESSEL_SPEC_MAX_LEVELS];
    double network_mm[TESSEL_SPEC_MAX_LEVELS];
} tessel_design_energy;

int tessel_energy_design(const tessel_energy_db *db, const tessel_spec *spec,
                         tessel_design_energy *out, tessel_diag_list *errors);

/* Appends warnings (diagnostics with code 0) about the energy of a spec:
 * ERT/ART entries that answer to no component (with a did-you-mean),
 * components priced by an ERT without attributes.width (the access width
 * is assumed), attributes.width that overrides a different word_bits.
 * `design` (may be NULL) is the result of tessel_energy_design. Returns
 * the number of warnings added, or TESSEL_EINVAL. */
int tessel_energy_warnings(const tessel_energy_db *db, const tessel_spec *spec,
                           const tessel_design_energy *design, tessel_diag_list *warnings);

/* ------------------------------------------------------------------ */
/* Roofline: the run takes as long as its slowest resource. */
typedef struct tessel_roofline {
    double cycles;
    double compute_cycles;                       /* macs / (pes * macs_per_pe) */
    double level_cycles[TESSEL_SPEC_MAX_LEVELS]; /* bytes / (bandwidth per cycle x instances) */
    int bound;                                   /* -1 compute, else the level number */
    double compute_utilization;                  /* compute_cycles / cycles */
    double level_utilization[TESSEL_SPEC_MAX_LEVELS];
    double seconds;                              /* cycles / clock */
} tessel_roofline;

/* level_bytes[l]: all bytes read from or written to level l (both sides). */
void tessel_roofline_evaluate(const tessel_spec *spec, double macs, const double *level_bytes,
                              tessel_roofline *out);
/* The same with the compute side taking at least busy_cycles (a spatial
 * split's slowest instance, docs/models/spatial.md); compute_cycles stays
 * macs / (pes * macs_per_pe), so compute_utilization shows the loss. */
void tessel_roofline_evaluate_busy(const tessel_spec *spec, double macs, double busy_cycles,
                                   const double *level_bytes, tessel_roofline *out);
/* "compute" or the level's name. */
const char *tessel_roofline_bound_name(const tessel_spec *spec, const tessel_roofline *r);

#ifdef __cplusplus
}
#endif
#endif
