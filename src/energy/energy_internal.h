/* energy module internals: the loaded form of tessel energy tables and of
 * Accelergy ERT/ART files, shared by table.c (reading) and component.c
 * (resolving components).  The table format is documented in
 * energy_tables/README.md. */
#ifndef TESSEL_ENERGY_INTERNAL_H
#define TESSEL_ENERGY_INTERNAL_H

#include <stddef.h>

#include "tessel/energy.h"

#define EN_NAME_MAX 64u
#define EN_FULLNAME_MAX 160u
#define EN_SOURCE_MAX 200u
#define EN_NODE_MAX 16u   /* technology nodes per table */
#define EN_PARTS_MAX 4u   /* parts of an arithmetic unit (multiplier + adder, ...) */
#define EN_REFS_MAX 4u    /* reference widths per part (fp single, double) */

typedef enum en_model {
    EN_MODEL_DRAM = 0, /* pj_per_bit x width; off chip: no technology scaling */
    EN_MODEL_SRAM,     /* table points per width, log-log interpolation in depth */
    EN_MODEL_REGFILE,  /* Aladdin registers + address comparators */
    EN_MODEL_ARITH,    /* sum of parts scaled linearly / quadratically in width */
    EN_MODEL_UNAVAILABLE, /* named but without numbers: `source` holds the reason */
    EN_MODEL_WIRE      /* pj_per_bit_mm x width: one access per mm of wire */
} en_model;

/* One SRAM table point: energies (pJ per access of `width` bits), leak
 * (pJ per cycle, < 0 = not given) and area (um^2). */
typedef struct en_point {
    double width, depth;
    double read, write, update, leak, area;
    char source[EN_SOURCE_MAX];
} en_point;

/* A primitive at one reference width: dynamic energy per operation, idle
 * energy per cycle, area. */
typedef struct en_ref {
    double width;
    double energy, idle, area;
    char source[EN_SOURCE_MAX];
} en_ref;

typedef struct en_part {
    char name[EN_NAME_MAX];
    int quadratic; /* 0: linear in width, 1: quadratic */
    size_t nrefs;  /* sorted by width */
    en_ref ref[EN_REFS_MAX];
} en_part;

/* One quantity of the fitted SRAM law: ln q = c0 + c1 ln(width) + c2 ln(depth). */
typedef struct en_law {
    double c0, c1, c2;
} en_law;

/* The fitted SRAM model of an sram class (`fit:`), used where the points
 * do not reach: per-access read/write energy and area of one bank as a
 * power law in width and depth (docs/models/energy.md), banks of at most
 * bank_bytes, plus an H-tree wire term between banks. */
typedef struct en_fit {
    int present;
    en_law read, write, area;
    double min_bytes, max_bytes;       /* capacity range the fit answers for */
    unsigned min_width, max_width;     /* port widths it answers for */
    double bank_bytes;                 /* larger buffers are split into banks of this size */
    double wire_pj_per_bit_mm;         /* H-tree wire energy between banks */
    char points[EN_NAME_MAX];          /* the points file it was fitted to */
    char source[EN_SOURCE_MAX];
    char wire_source[EN_SOURCE_MAX];
} en_fit;

typedef struct en_class {
    char name[EN_NAME_MAX];
    en_model model;
    char source[EN_SOURCE_MAX]; /* the reason, for unavailable classes */
    unsigned default_width;
    /* dram; wire: pJ per bit per mm */
    double pj_per_bit;
    /* sram: sorted by (width, depth) */
    en_point *points;
    size_t npoints;
    en_fit fit; /* optional: sizes and widths the points do not cover */
    /* regfile */
    en_ref reg; /* per bit */
    en_ref cmp; /* one comparator at cmp.width bits */
    unsigned max_depth;
    /* arith (and max_width for regfile) */
    unsigned max_width;
    int is_float;
    unsigned default_exponent, default_mantissa;
    int per_radix; /* merger: energy x ceil(log2 radix), area/idle x (radix - 1) */
    unsigned default_radix, max_radix;
    size_t nparts;
    en_part part[EN_PARTS_MAX];
} en_class;

typedef struct en_node {
    char name[16];
    double nm;
    double energy, area; /* factors from the table's reference node */
} en_node;

/* An Accelergy ERT and/or ART entry. */
typedef struct en_ert {
    char name[EN_NAME_MAX];         /* last dotted component, [a..b] ranges stripped */
    char stripped[EN_FULLNAME_MAX]; /* the whole name, ranges stripped */
    char full[EN_FULLNAME_MAX];     /* as written */
    int has_energy, has_area;
    double pj[TESSEL_ACTION_COUNT];
    double gated_pj[TESSEL_GATED_COUNT];
    double area;
} en_ert;

typedef struct en_table {
    char *path;
    const char *base; /* file name part of path, for source strings */
    int is_tessel;
    /* tessel tables */
    char technology[16];
    double ref_nm;
    size_t nnodes;
    en_node node[EN_NODE_MAX];
    en_class *classes;
    size_t nclasses;
    /* ERT / ART */
    en_ert *ert;
    size_t nert;
} en_table;

struct tessel_energy_db {
    const tessel_allocator *alloc;
    en_table *tables;
    size_t ntables;
};

/* Parses one table document (tessel table or ERT/ART) into t; every
 * problem is appended to `errors`; returns the first code. */
int tessel_energy_table_read(const tessel_yaml_doc *doc, const char *path,
                             const tessel_allocator *a, en_table *t, tessel_diag_list *errors);
void tessel_energy_table_clear(const tessel_allocator *a, en_table *t);

/* Reading state of one table (table.c, ert.c, table_yaml.c). */
typedef struct en_ctx {
    tessel_diag_list *errors;
    const tessel_allocator *alloc;
    const char *file;
    int first; /* first error code, 0 while none */
} en_ctx;

/* table_yaml.c: typed field readers. en_error appends a diagnostic at node
 * n (the table file when NULL) and returns code; the getters report their
 * own problems. */
int en_error(en_ctx *c, int code, const tessel_yaml_node *n, const char *field, const char *fmt,
             ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
int en_oom(en_ctx *c);
/* Copies src into dst[cap], truncating; returns 1 when it had to truncate. */
int en_copy_str(char *dst, size_t cap, const char *src);
/* "prefix.key", or "key" without a prefix. */
void en_join_field(char *out, size_t cap, const char *prefix, const char *key);
const char *en_scalar_text(const tessel_yaml_node *n);
/* Unknown keys of mapping m are errors, with the nearest allowed key. */
void en_check_keys(en_ctx *c, const tessel_yaml_node *m, const char *const *allowed, size_t n,
                   const char *prefix);
enum { NUM_REQUIRED = 1, NUM_POSITIVE = 2, NUM_INTEGER = 4 };
/* m[key] as a finite number >= 0 (> 0 with NUM_POSITIVE): 1 when stored,
 * 0 when absent (an error if required), -1 on a bad value (reported). */
int en_get_number(en_ctx *c, const tessel_yaml_node *m, const tessel_yaml_node *at,
                  const char *prefix, const char *key, unsigned flags, double *out);
int en_get_uint(en_ctx *c, const tessel_yaml_node *m, const char *prefix, const char *key,
                unsigned flags, unsigned *out);
/* A non-empty string under key, copied into dst (truncated to cap). */
int en_get_string(en_ctx *c, const tessel_yaml_node *m, const char *prefix, const char *key,
                  int required, char *dst, size_t cap);

/* ert.c: the ERT, ART, ERT_summary or ART_summary mapping m (its top-level
 * `key`) appended to t's entries (*cap is their allocated count). */
int en_read_accelergy(en_ctx *c, const tessel_yaml_node *m, const char *key, en_table *t,
                      size_t *cap);

/* snprintf for messages, field paths and source strings, where cutting a
 * long name short is intended (and -Wformat-truncation would flag it). */
int tessel_energy_fmt(char *dst, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* 1 when ERT entry e answers to `instance` (component.c): its last dotted
 * part, or its whole stripped name when the instance is dotted. */
int tessel_energy_ert_matches(const en_ert *e, const char *instance, int nocase);

/* A component's attributes as component.c parses them. */
typedef struct en_attrs {
    unsigned width;
    const tessel_yaml_node *width_n;
    double depth; /* 0 = not given */
    const tessel_yaml_node *depth_n;
    uint64_t size; /* bytes, 0 = not given */
    const tessel_yaml_node *size_n;
    const char *technology;
    const tessel_yaml_node *technology_n;
    unsigned exponent, mantissa, radix;
    const tessel_yaml_node *exponent_n, *mantissa_n, *radix_n;
    unsigned banks; /* 0 = not given */
    const tessel_yaml_node *banks_n;
} en_attrs;

/* What a resolution needs to word its errors (component.c). */
typedef struct en_where {
    const tessel_spec_component *c;
    const char *instance;
    tessel_diag *diag;
} en_where;

int en_where_error(const en_where *w, int code, const tessel_yaml_node *n, const char *field,
                   const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* sram_price.c. The node that gave the depth (depth or size attribute). */
const tessel_yaml_node *en_depth_node(const en_attrs *at);
/* Depth in words of `width` bits: the depth attribute, else the size
 * attribute, else default_bytes (the level capacity); 0 when none. */
double en_storage_depth(const en_attrs *at, unsigned width, uint64_t default_bytes);
/* An SRAM of class k (or a register file past its registers, k the
 * table's fitted SRAM and `why` the reason for the source string). */
int en_price_sram(const en_where *w, const en_table *t, const en_class *k, const en_attrs *at,
                  unsigned width, double depth, const char *why, tessel_component_energy *out);
int en_resolve_sram(const en_where *w, const en_table *t, const en_class *k, const en_attrs *at,
                    unsigned width, uint64_t default_bytes, tessel_component_energy *out);

/* The fitted SRAM model (sram_fit.c). tessel_energy_sram_banks checks
 * that `depth` words of `width` bits lie in the fit's range and gives the
 * bank count: `banks` when given (> 0), else as many banks of at most
 * f->bank_bytes as needed; TESSEL_ERANGE with the reason in why[cap]. */
int tessel_energy_sram_banks(const en_fit *f, unsigned width, double depth, unsigned banks,
                             unsigned *out, char *why, size_t cap);
/* Read and write energy per access and area of one bank of bank_depth words. */
void tessel_energy_sram_fit(const en_fit *f, unsigned width, double bank_depth, double *read,
                            double *write, double *area);
/* The H-tree wire energy per access between `banks` banks of bank_area
 * um^2 each (0 for one bank). */
double tessel_energy_sram_wire(const en_fit *f, unsigned width, unsigned banks, double bank_area);

/* Parses "45nm", "45 nm" or a plain number of nanometres; 0 or -1. */
int tessel_energy_parse_node(const char *text, double *nm);

#endif
