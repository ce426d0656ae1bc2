/* Gamma (Zhang et al., ASPLOS 2021): row-wise Gustavson SpMSpM with a
 * FiberCache holding rows (fibers) of B (gamma §3, §4; docs/semantics.md rule 5).
 *
 * The model, at the DRAM / FiberCache boundary (level 1):
 *   A  streamed once in CSR (bypasses the FiberCache, gamma §3):
 *      nnz(A) (value + coord) + rows(A) offset, as MatRaptor.
 *   B  for each row i of A in order, for each a_ik, row k of B is looked up
 *      in the FiberCache: capacity C bytes (template_options.cache_bytes,
 *      default the capacity of level 1), whole fibers of
 *      nnz(B row k) (value + coord) + offset bits each, fiber-granular LRU,
 *      fully associative (`policy: lru`, default). A hit moves no DRAM
 *      bytes; a miss fetches the fiber from DRAM. A fiber larger than C is
 *      fetched and not kept (it would evict everything for nothing).
 *      `policy: set-associative`: the paper's organisation instead, lines
 *      of line_bytes in sets of `ways`, banked (see sa_cache below).
 *   Z  written once (output_format, default csr for gamma: its rows leave
 *      the PEs whole, gamma §3).
 *   spills: a PE merges at most R fibers at once (radix, default 64,
 *      gamma §3.1). Row i with n = nnz(A row i) > R fibers is merged in
 *      rounds: round L (L = 1, 2, ... while n > R^L) merges each group of
 *      R^L consecutive fibers into one intermediate partial fiber. Its size
 *      is the union of the columns of the fibers it merges (exact path:
 *      counted with a marker array; stat path: J (1 - exp(-m p / J)) for m
 *      fibers of p products on average, the occupancy of J columns under
 *      uniform independent hits), plus one offset.
 *      `partials: cache` (default, gamma §3.3): a partial fiber is written
 *      into the FiberCache when produced, competing with B's fibers for
 *      capacity, and freed when its merge consumes it. Only a dirty partial
 *      fiber evicted before then reaches DRAM: written back, and read back
 *      by its merge (a fiber larger than the cache goes straight to DRAM).
 *      The exact trace walks each row's merge tree in the scheduler's order
 *      (walk, task_done); the stat path compares each fiber's reuse
 *      distance with Che's characteristic time (see stat_spills).
 *      `partials: memory`: every partial fiber is written to DRAM and read
 *      back, taking no cache space (the model before partials: cache).
 *      The DRAM ones count as Z's updates (reads) and extra write-backs.
 * Deeper levels (l >= 2) as MatRaptor (template_traffic.c).
 *
 * template_options (all optional): output_format (coo | csr, default csr),
 * partials (cache | memory, default cache),
 * cache_bytes (a size > 0), radix (2 .. 2^20), policy (lru |
 * set-associative, default lru), ways (16), banks (48), line_bytes (64),
 * reorder (affinity | none, default none), tiling (selective | none,
 * default none), tile_fraction (0.25; see split), subrows (scattered |
 * together, default scattered; gamma_subrows_together), stat_model (irm |
 * banded, default irm; see gamma_che_banded; the set-associative policy has its
 * own stat model, gamma_che_set_assoc).
 *
 * Exact: one trace-driven pass over A's rows (or their subrows under
 * `tiling: selective`) in order, or in the affinity order (`reorder:
 * affinity`). The LRU list is a doubly-linked list over B's
 * row numbers (the row number is its own perfect hash: arrays of K entries),
 * O(1) per reference: O(nnz(A) + K) for the cache, O(multiplies x rounds)
 * for the spills.
 *
 * Stat: Che's characteristic-time approximation of LRU (H. Che, Y. Tung,
 * Z. Wang, "Hierarchical Web caching systems: modeling, design and
 * experimental results", IEEE JSAC 20(7), 2002), for items of unequal
 * sizes. References to fiber k arrive as a Poisson process over the M =
 * nnz(A) references with rate n_k / M, n_k = nnz(A column k) (the
 * independent reference model: the row order of A is ignored). A fiber is
 * in an LRU cache iff it was referenced in the last T references, so with
 * probability 1 - exp(-n_k T / M); T solves
 *     sum_k s_k (1 - exp(-n_k T / M)) = C
 * over the fibers that fit (s_k <= C), by bisection (the left side grows
 * with T). When all the referenced fibers fit together, only the
 * compulsory misses remain. Expected misses of fiber k: its first reference
 * (compulsory) plus (n_k - 1) exp(-n_k T / M); a fiber larger than C
 * misses n_k times. All inputs are the per-line nonzero counts of the
 * statistics (nnz of A's rows and columns, of B's rows).
 *
 * With partials: cache, T also counts the partial fibers' occupancy (each
 * resident for min(d, T) of the M references, d its reuse distance), and a
 * partial fiber reaches DRAM when d exceeds its own T_s (load(T_s) = C - s).
 * The set-associative and banded B estimates do not see that occupancy.
 *
 * Selective tiling on the stat path: its subrows' spills (stat_split).
 * Its effect on B is not estimated: the subrows of a row are consecutive
 * slices of it, so without reordering the exact trace is unchanged, and
 * with reordering the gain is a row-order effect that the independent
 * reference model does not see (nor does it see affinity reordering). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gamma_internal.h"

/* ------------------------------------------------------------------ */
/* Into tessel_result. */

/* policy set-associative: a bounded cache_bytes made of whole banks of
 * whole sets (banks x ways x line_bytes), and a tag array we can hold. */
static int check_organisation(const tessel_spec *spec, const tpl_options *o, tessel_diag *diag)
{
    const tessel_yaml_node *n = spec->template_.options;
    for (size_t i = 0; n && n->kind == TESSEL_YAML_MAPPING && i < n->count; i++)
        if (strcmp(n->keys[i]->value, "cache_bytes") == 0) {
            n = n->items[i]; /* point at the size given */
            break;
        }
    const char *file = n ? n->file : spec->template_.pos.file;
    uint64_t line = n ? n->line : spec->template_.pos.line;
    uint32_t col = n ? n->column : spec->template_.pos.column;
    uint64_t unit = tpl_sat_mul(tpl_sat_mul(o->banks, o->ways), o->line_bytes);
    if (o->cache_bytes == UINT64_MAX)
        return tessel_diag_set(diag, TESSEL_EINVAL, file, line, col, "template_options.cache_bytes",
                               "template gamma: policy set-associative needs a bounded cache "
                               "(cache_bytes or the capacity of level %s)",
                               spec->level[1].name);
    if (unit == UINT64_MAX || o->cache_bytes % unit != 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, file, line, col, "template_options.cache_bytes",
                               "template gamma: cache_bytes %llu is not a multiple of banks x "
                               "ways x line_bytes = %llu x %llu x %llu",
                               (unsigned long long)o->cache_bytes, (unsigned long long)o->banks,
                               (unsigned long long)o->ways, (unsigned long long)o->line_bytes);
    if (o->cache_bytes / o->line_bytes > (1ull << 28))
        return tessel_diag_set(diag, TESSEL_EINVAL, file, line, col, "template_options.cache_bytes",
                               "template gamma: %llu lines is more than the 2^28 the "
                               "set-associative trace holds",
                               (unsigned long long)(o->cache_bytes / o->line_bytes));
    return TESSEL_OK;
}

int tpl_gamma(const tessel_spec *spec, const tpl_roles *r, const tessel_workload_data *data,
              const tessel_stat_data *stats, const tpl_counts *c, const tpl_options *o,
              const tessel_allocator *a, tessel_result *out, tpl_gamma_counts *g, tessel_diag *diag)
{
    memset(g, 0, sizeof(*g));
    int rc = o->set_assoc ? check_organisation(spec, o, diag) : TESSEL_OK;
    if (rc)
        return rc;
    rc = data ? gamma_exact(spec, r, data, o, a, g) : gamma_stat(spec, r, stats, c, o, a, g);
    if (rc)
        return tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    tpl_matraptor(spec, r, c, o, out);
    const tessel_spec_level *lv = &spec->level[1];
    unsigned v = lv->value_bits, cb = lv->coord_bits, ob = lv->offset_bits;
    tessel_traffic *tb = &out->traffic[1][r->tb], *tz = &out->traffic[1][0];
    tb->fills = g->misses;
    tb->in_data = tpl_bytes(g->miss_nnz, v);
    tb->in_metadata = tpl_sat_add(tpl_bytes(g->miss_nnz, cb), tpl_bytes(g->misses, ob));
    if (o->set_assoc) {
        /* whole lines: their bytes split between values and coordinates
         * as B's entries are, plus one offset per fiber reference that
         * missed a line */
        uint64_t lb = tpl_sat_mul(g->line_misses, o->line_bytes);
        tb->fills = g->line_misses;
        tb->in_data = lb / (v + cb) * v + lb % (v + cb) * v / (v + cb);
        tb->in_metadata = tpl_sat_add(lb - tb->in_data, tpl_bytes(g->misses, ob));
    }
    tb->algorithmic = tpl_sat_add(tb->fills, tb->updates);
    uint64_t sd = tpl_bytes(g->spill_nnz, v);
    uint64_t sm = tpl_sat_add(tpl_bytes(g->spill_nnz, cb), tpl_bytes(g->spill_fibers, ob));
    tz->updates = g->spill_fibers;
    tz->writebacks = tpl_sat_add(tz->writebacks, g->spill_fibers);
    tz->in_data = sd;
    tz->in_metadata = sm;
    tz->out_data = tpl_sat_add(tz->out_data, sd);
    tz->out_metadata = tpl_sat_add(tz->out_metadata, sm);
    tz->algorithmic = tpl_sat_add(tz->fills, tz->updates);
    tpl_finish(spec, out);
    return TESSEL_OK;
}
