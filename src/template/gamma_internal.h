/* Private to the gamma template (src/template/gamma*.c): the FiberCache,
 * the split tree and the stat path's records that more than one of its
 * files use, and the functions they call across files. The model and its
 * sources: gamma.c's top comment. */
#ifndef TESSEL_GAMMA_INTERNAL_H
#define TESSEL_GAMMA_INTERNAL_H

#include "template_internal.h"

#define NIL UINT32_MAX

typedef struct lru {
    uint32_t *prev, *next; /* over B's rows; NIL ends */
    unsigned char *in;     /* resident */
    uint32_t head, tail;   /* most / least recently used */
    uint64_t used, cap;    /* bits */
} lru;

/* The set-associative FiberCache (`policy: set-associative`, gamma §3.2,
 * Table 1: 16 ways, 48 banks). B sits in memory as one array of entries
 * (value + coordinate, gamma Fig. 1), line-aligned at its start, so fiber
 * k covers the bits [ptr[k] e, ptr[k+1] e) of it (e = value + coordinate
 * bits) and the lines floor(ptr[k] e / 8L) .. floor((ptr[k+1] e - 1) / 8L)
 * of L bytes (B's row offsets are not cached). Lines interleave over the banks
 * (bank = line mod banks) and over the sets of a bank (set = (line / banks) mod
 * sets per bank); the two together are set = line mod (banks x sets per bank),
 * so the bank count decides which capacities are legal, not the traffic. Within
 * a set the least recently used line goes first (our stand-in for the paper's
 * fetch/read priority counters with 2-bit SRRIP tie-breaking, §3.2). A
 * reference touches every line of its fiber in order; each missing line
 * costs L bytes from DRAM, and a reference missing any line, or the first
 * reference to a fiber (its lines may have come in with a neighbour),
 * also reads the fiber's row offset. O(lines touched x ways). */
typedef struct sa_cache {
    uint64_t sets, ways;
    uint64_t line_bits, entry_bits;
    uint64_t *tag;   /* sets x ways: line number + 1, 0 empty */
    uint64_t *stamp; /* sets x ways: last use, 0 never */
    uint64_t clock;
    unsigned char *seen; /* per fiber: referenced before */
} sa_cache;

/* `partials: cache`: the live partial output fibers, in slots (slot s is
 * LRU item K + s, after B's K fibers). A slot holds a fiber from its
 * production to its consumption. */
typedef struct partial_pool {
    uint64_t K, nslots;
    uint64_t *nnz;   /* per slot: nonzeros */
    uint64_t *bits;  /* lru: size in bits; set-associative: lines */
    uint64_t *line;  /* set-associative: first line */
    uint32_t *free;  /* free slots, a stack */
    uint64_t nfree;
    uint64_t next_line; /* set-associative: partial fibers are laid out past
                           B's lines, each at the next free line (fresh
                           addresses; gamma §3.3 allocates them dynamically) */
} partial_pool;

/* The FiberCache of either policy. */
typedef struct fiber_cache {
    int set_assoc;
    lru fa;
    sa_cache sa;
    partial_pool pp;
} fiber_cache;

/* `partials: cache`: the split tree, one node per subrow (leaf or not)
 * of a tiled row and its root; a node's partial fiber is produced when its
 * subtree is done and consumed when its parent's children all are. */
typedef struct tnode {
    uint64_t nnz;                   /* its partial fiber's entries */
    uint32_t parent, first, next;   /* NIL ends */
    uint32_t left, slot;            /* children not done; its fiber's slot */
    int spill;                      /* 0: a row's root (its output is Z's row) */
} tnode;

/* The split tree of `partials: cache` (owned arrays; leaf[t] NIL for a
 * task that is a whole row). */
typedef struct split_tree {
    tnode *node;
    uint64_t nnode;
    uint32_t *leaf;
} split_tree;

/* The stat path's spills: the merger's rounds over a row (or leaf
 * subrow) of n fibers, and selective tiling's subrows (see split) split
 * by the column mass of A: a range's share of a row's entries is its
 * share of nnz(A) (pre: prefix sums of nnz(A column k)). A subrow of n
 * expected entries is non-empty with probability 1 - exp(-n) and its
 * partial fiber holds U (1 - exp(-n p / U)) columns. A split node costs
 * min(R, its column range): O(tiled rows x min(R, K) x depth) in all,
 * fine at radix 64, seconds when radix approaches K on large matrices.
 *
 * `partials: cache` also records each partial fiber's reuse distance d:
 * the B references between its production and its consumption in the
 * walk's order (exact path), i.e. those of its later siblings: (R - 1 - j)
 * R^L for the j-th level-L fiber of a full parent, the rest of the row
 * for the last parent's, and the expected entries of the later parts for a
 * tiled subrow. Rows of equal length have equal trees, so the rows are
 * taken by distinct length, each record weighted by the rows' count
 * (mult). */
typedef struct stat_rec {
    double d, nnz, w; /* reuse distance, expected entries, expected count */
} stat_rec;

typedef struct stat_spills {
    double p, U, limit;
    uint64_t R;
    const double *pre;
    double sf, snz, tiled;
    double mult; /* rows of this length (1 for partials: memory) */
    /* partials: cache (on) */
    int on;
    const tessel_allocator *a;
    stat_rec *rec;
    uint64_t nrec, crec;
    int rc;
} stat_spills;

/* Che's load at characteristic time T: B's fibers that fit, resident with
 * probability 1 - exp(-n_k T / M), plus (partials: cache, sp) each partial
 * fiber that fits, resident for min(d, T) of the M references (it leaves
 * when consumed, or when T references pass without a use). */
typedef struct che_in {
    const tessel_spec_level *lv;
    const uint64_t *a_cols, *b_rows;
    uint64_t K;
    double M, cap;
    const stat_spills *sp;
} che_in;

/* gamma_cache.c: the FiberCache (fully associative LRU or set-associative),
 * B's fibers and the partial fibers in it */
uint64_t gamma_fiber_bits(uint64_t nnz, const tessel_spec_level *lv);
int gamma_cache_init(fiber_cache *c, const tpl_options *o, const tessel_spec_level *lv, uint64_t K,
                     uint64_t S, const tpl_csr_view *B, const tessel_allocator *a);
void gamma_cache_free(fiber_cache *c, const tessel_allocator *a);
void gamma_cache_ref(fiber_cache *c, const tpl_csr_view *B, uint32_t k, const tessel_spec_level *lv,
                     tpl_gamma_counts *g);
uint32_t gamma_part_new(fiber_cache *c, const tpl_csr_view *B, uint64_t nnz,
                        const tessel_spec_level *lv, tpl_gamma_counts *g);
void gamma_part_use(fiber_cache *c, uint32_t s, tpl_gamma_counts *g);

/* gamma_order.c: affinity-based reordering of A's rows or tasks */
int gamma_task_order(const tpl_csr_view *T, const tpl_csr_view *B, const tpl_options *o,
                     const tessel_spec_level *lv, const tessel_allocator *a, uint32_t **order);
int gamma_subrows_together(const tpl_csr_view *A, const tpl_csr_view *T,
                           const tessel_allocator *a, uint32_t *order);

/* gamma_tile.c: the merger's rounds and selective tiling into tasks */
uint64_t gamma_union_size(const tpl_csr_view *A, const tpl_csr_view *B, uint64_t p0, uint64_t p1,
                          uint64_t *mark, uint64_t *stamp);
void gamma_merge_rounds(const tpl_csr_view *A, const tpl_csr_view *B, uint64_t p0, uint64_t p1,
                        uint64_t R, uint64_t *mark, uint64_t *stamp, tpl_gamma_counts *g);
int gamma_make_tasks(const tpl_csr_view *A, const tpl_csr_view *B, const tpl_options *o,
                     const tessel_spec_level *lv, uint64_t *mark, const tessel_allocator *a,
                     uint64_t *stamp, tpl_gamma_counts *g, tpl_csr_view *T, split_tree *st);
int gamma_tasks_by_column(const tpl_csr_view *T, const tessel_allocator *a, tpl_csr_view *TT);

/* gamma_walk.c: the exact trace over the tasks */
int gamma_exact(const tessel_spec *spec, const tpl_roles *r, const tessel_workload_data *data,
                const tpl_options *o, const tessel_allocator *a, tpl_gamma_counts *g);

/* gamma_che.c: Che's approximations of the FiberCache (IRM, banded,
 * set-associative) */
int gamma_che_banded(const tessel_spec_level *lv, const tessel_tile_grid *g, const uint64_t *a_cols,
                     const uint64_t *b_rows, uint64_t K, double cap, const tessel_allocator *a,
                     double *misses_out, double *miss_nnz_out);
int gamma_che_set_assoc(const tessel_spec_level *lv, const tpl_options *o, const uint64_t *a_cols,
                        const uint64_t *b_rows, uint64_t K, double M, const tessel_allocator *a,
                        tpl_gamma_counts *g, double *misses_out, double *miss_nnz_out);
double gamma_che_load(const che_in *c, double T);
double gamma_che_time(const che_in *c, double all);

/* gamma_stat.c: the stat path (spills, Che's time, the counts) */
int gamma_stat(const tessel_spec *spec, const tpl_roles *r, const tessel_stat_data *stats,
               const tpl_counts *cnt, const tpl_options *o, const tessel_allocator *a,
               tpl_gamma_counts *g);

#endif
