/* Private to module `template` (src/template/). */
#ifndef TESSEL_TEMPLATE_INTERNAL_H
#define TESSEL_TEMPLATE_INTERNAL_H

#include <stdint.h>

#include "tessel/template.h"

/* Which workload tensor plays which role of Z[i,j] = A[i,k] * B[k,j]
 * (SpMV y[i] = A[i,k] * x[k]: x is B with one column). */
typedef struct tpl_roles {
    unsigned ta, tb;  /* workload tensor numbers of A and B (Z is 0) */
    unsigned xi, xk;  /* workload index numbers of i and k */
    int xj;           /* of j; -1 for SpMV */
    int spmv;
} tpl_roles;

/* sparsepipe.c: the base edge its stat path needs on A's indices (0:
 * none of its own; bad options: 0, the evaluation reports them). */
uint64_t tpl_sparsepipe_stat_base(const tessel_spec *spec);

/* outerspace_pe.c: per-PE multiply cycles of the DRT simulator's
 * round-robin deal of A's nonzeros, column by column. */
typedef struct tpl_pe_deal {
    uint64_t pes;
    uint64_t last;           /* the PE the round robin points at after the last column */
    double sum, sumsq;       /* over the PEs: their cycles, and squared */
    double max;              /* the busiest PE */
    double max_other;        /* the busiest PE other than `last` */
    double last_work;        /* PE `last`'s cycles */
} tpl_pe_deal;

typedef struct tpl_pe_deal_state {
    uint64_t pes, slot;
    double all;   /* cycles every PE has */
    double *diff; /* pes + 1: difference array of the rest */
    const tessel_allocator *alloc;
} tpl_pe_deal_state;

int tpl_pe_deal_begin(tpl_pe_deal_state *s, uint64_t pes, const tessel_allocator *a);
void tpl_pe_deal_column(tpl_pe_deal_state *s, uint64_t a, uint64_t b);
void tpl_pe_deal_end(tpl_pe_deal_state *s, tpl_pe_deal *out);
void tpl_pe_deal_free(tpl_pe_deal_state *s);

/* Everything both templates' traffic depends on: sizes, nonzeros and the
 * few joint counts of A and B. Exact from the data, or from the
 * statistics (then nnz_z and rows_z are estimates, the rest exact). */
typedef struct tpl_counts {
    uint64_t rows_a;          /* I */
    uint64_t cols_a;          /* K (= rows of B) */
    uint64_t cols_b;          /* J (1 for SpMV) */
    uint64_t nnz_a, nnz_b;
    uint64_t rows_a_nonempty; /* rows of A holding a nonzero */
    uint64_t cols_a_nonempty; /* columns of A holding a nonzero */
    uint64_t rows_b_nonempty;
    uint64_t multiplies;      /* sum over A's nonzeros a_ik of nnz(B row k) */
    uint64_t a_effectual;     /* nonzeros a_ik whose B row k is non-empty */
    uint64_t b_effectual;     /* nonzeros b_kj whose A column k is non-empty */
    uint64_t k_effectual;     /* k with both A column k and B row k non-empty */
    uint64_t nnz_z;
    uint64_t rows_z_nonempty;
    /* Per column k of A with a_k nonzeros and b_k in B's row k (OuterSPACE
     * as the DRT simulator runs it, outerspace_pe.c): sum of a_k^2 and of
     * a_k^2 b_k (saturating), and the round-robin deal of A's nonzeros over
     * the PEs (compute.pes), b_k cycles each. */
    uint64_t a_col_sq, a_col_sq_b;
    tpl_pe_deal deal;
} tpl_counts;

/* Output / partial-product layouts (template_options). */
typedef enum tpl_layout { TPL_COO = 0, TPL_CSR = 1 } tpl_layout;

typedef struct tpl_options {
    tpl_layout output;  /* output_format: Z as written to memory (default coo) */
    tpl_layout partial; /* partial_format, outerspace: partial products (default csr) */
    int pe_link_column; /* pe_link, outerspace: per-column (1) or per-nonzero (0, default) */
    int merge_single;   /* merge, outerspace: single-pe (1) or none (0, default) */
    /* gamma only (gamma.c): */
    uint64_t cache_bytes; /* cache_bytes: FiberCache capacity (default level 1's) */
    uint64_t radix;       /* radix: PE merger radix (default 64) */
    int reorder;          /* reorder: affinity (1) or none (0, default) */
    int stat_irm;         /* stat_model: irm (1, default) or banded (0) */
    int set_assoc;        /* policy: set-associative (1) or lru (0, default) */
    uint64_t ways, banks, line_bytes; /* set-associative organisation */
    int tiling;           /* tiling: selective (1) or none (0, default) */
    double tile_fraction; /* tile_fraction: footprint / cache over which a row is split */
    int subrows_together; /* subrows: together (1) or scattered (0, default) */
    int partials_mem;     /* partials: memory (1) or cache (0, default) */
} tpl_options;

/* gamma.c: the FiberCache's and the PE mergers' counts. */
typedef struct tpl_gamma_counts {
    uint64_t hits, misses;   /* B-fiber references */
    uint64_t miss_nnz;       /* nonzeros of the fibers fetched */
    uint64_t spill_fibers;   /* intermediate partial fibers written and read back */
    uint64_t spill_nnz;      /* their nonzeros */
    uint64_t line_misses;    /* policy set-associative: lines fetched */
    uint64_t tiled_rows, subrows; /* tiling selective: rows split, leaf subrows */
    uint64_t partial_fibers, partial_nnz; /* partials: cache: all produced (spill_*:
                                             those that reached DRAM) */
} tpl_gamma_counts;

/* template_counts.c */
int tpl_roles_of(const tessel_spec *spec, tpl_roles *r, tessel_diag *diag);
int tpl_counts_exact(const tessel_spec *spec, const tpl_roles *r,
                     const tessel_workload_data *data, const tessel_allocator *a,
                     tpl_counts *c, tessel_diag *diag);
int tpl_counts_stat(const tessel_spec *spec, const tpl_roles *r, const tessel_stat_data *stats,
                    const tessel_allocator *a, tpl_counts *c, tessel_diag *diag);

/* template_traffic.c */
void tpl_matraptor(const tessel_spec *spec, const tpl_roles *r, const tpl_counts *c,
                   const tpl_options *o, tessel_result *out);
void tpl_outerspace(const tessel_spec *spec, const tpl_roles *r, const tpl_counts *c,
                    const tpl_options *o, tessel_result *out);
/* outerspace_pe.c: template option merge: single-pe, the PEs' work (the
 * round-robin multiply phase, then MACs - nnz(Z) on one PE) into
 * out->spatial and the merge as out->tail's cycles. */
void tpl_outerspace_merge(const tpl_counts *c, tessel_result *out);

/* gamma.c: exact (data) or Che-approximated (stats) FiberCache traffic. */
int tpl_gamma(const tessel_spec *spec, const tpl_roles *r, const tessel_workload_data *data,
              const tessel_stat_data *stats, const tpl_counts *c, const tpl_options *o,
              const tessel_allocator *a, tessel_result *out, tpl_gamma_counts *g,
              tessel_diag *diag);

/* template_traffic.c: level 0's view of level 1, the MACs' reads at the
 * innermost level, per-level byte totals and dram_bytes (again after a
 * level's transfers change). */
void tpl_finish(const tessel_spec *spec, tessel_result *r);

/* template_counts.c: a matrix by rows, ptr[rows + 1] and idx (the column
 * of each entry; NULL when every entry is in column 0, SpMV's vector),
 * borrowed from a tensor or owned (a transpose). */
typedef struct tpl_csr_view {
    uint64_t rows, cols, nnz;
    const uint64_t *ptr;
    const uint32_t *idx;
    uint64_t *own_ptr;
    uint32_t *own_idx;
} tpl_csr_view;

/* Tensor t by rows of its mode `row_mode` (0: as stored; 1: transposed;
 * a vector: one column). */
int tpl_csr_of(const tessel_tensor *t, int row_mode, const tessel_allocator *a, tpl_csr_view *v);
void tpl_csr_view_free(const tessel_allocator *a, tpl_csr_view *v);

/* template_util.c: saturating sum and product; bytes of n items of `bits`
 * each, rounded up (saturating); an estimate rounded to a count (0 below
 * or at 0, UINT64_MAX beyond); tensor st's mode of workload index x (-1:
 * none); a monotonic clock in seconds; a TESSEL_EINVAL diagnostic at node n
 * (else the template key) naming template_options.KEY (KEY NULL: the
 * mapping itself), "template NAME: WHAT". */
uint64_t tpl_sat_add(uint64_t x, uint64_t y);
uint64_t tpl_sat_mul(uint64_t x, uint64_t y);
uint64_t tpl_bytes(uint64_t n, unsigned bits);
uint64_t tpl_round_count(double x);
int tpl_mode_of(const tessel_spec_tensor *st, unsigned x);
double tpl_now(void);
/* The descriptors' option keys of template k (template_desc.c): up to max
 * into keys, their number returned; and as "a, b, c" into buf. */
size_t tpl_option_keys(tessel_template_kind k, const char **keys, size_t max);
void tpl_option_list(tessel_template_kind k, char *buf, size_t n);

/* The descriptors' evaluate functions (template.c). */
int tpl_eval_counts(const tessel_template_call *call, tessel_result *out,
                    tessel_strategy_choice *choice, tessel_sparsepipe_figures *fig,
                    tessel_diag *diag);
int tpl_eval_sparsepipe(const tessel_template_call *call, tessel_result *out,
                        tessel_strategy_choice *choice, tessel_sparsepipe_figures *fig,
                        tessel_diag *diag);
int tpl_eval_extensor(const tessel_template_call *call, tessel_result *out,
                      tessel_strategy_choice *choice, tessel_sparsepipe_figures *fig,
                      tessel_diag *diag);

int tpl_option_error(const tessel_spec *spec, const tessel_yaml_node *n, const char *key,
                     const char *what, tessel_diag *diag);

#endif
