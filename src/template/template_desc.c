/* The templates' descriptors (template.h): the one list of templates with
 * their template_options (type, accepted values, default, help), the
 * estimators and strategies each supports and the function that evaluates
 * it. The option readers (template.c, sparsepipe.c, extensor.c) check keys
 * against these lists, tessel_point_evaluate (point.h) calls `evaluate`,
 * and the CLI names templates from here. Adding a template is one entry. */
#include <string.h>

#include "template_internal.h"

#define N_OF(a) ((unsigned)(sizeof(a) / sizeof((a)[0])))

static const char *const layouts[] = { "coo", "csr" };

static const tessel_template_option matraptor_opts[] = {
    { "output_format", TESSEL_TEMPLATE_OPT_CHOICE, layouts, 2, "coo",
      "Z as written to memory: coo value + row + column per nonzero (as the DRT simulator "
      "writes it), csr a row offset per row instead of the row coordinate" },
};

static const char *const os_pe_link[] = { "per-nonzero", "per-column" };
static const char *const os_merge[] = { "none", "single-pe" };

static const tessel_template_option outerspace_opts[] = {
    { "output_format", TESSEL_TEMPLATE_OPT_CHOICE, layouts, 2, "coo",
      "Z as written to memory (see matraptor)" },
    { "partial_format", TESSEL_TEMPLATE_OPT_CHOICE, layouts, 2, "csr",
      "the partial products: csr one partial row per nonzero of A that meets a non-empty "
      "row of B, coo value + row + column per product" },
    { "pe_link", TESSEL_TEMPLATE_OPT_CHOICE, os_pe_link, 2, "per-nonzero",
      "what the LLB->PE link (level 2) carries: per-nonzero a nonzero of A and its row of B "
      "per PE; per-column, as the DRT simulator, every PE of column k its whole batch (A's "
      "column, B's row and all the column's partial rows)" },
    { "merge", TESSEL_TEMPLATE_OPT_CHOICE, os_merge, 2, "none",
      "PE work: none (no PE model); single-pe, as the DRT simulator: A's nonzeros dealt "
      "round-robin over the PEs, then the partial rows merged on one PE (MACs - nnz(Z) "
      "cycles) after every other transfer" },
};

static const char *const gamma_policy[] = { "lru", "set-associative" };
static const char *const gamma_reorder[] = { "affinity", "none" };
static const char *const gamma_stat[] = { "banded", "irm" };
static const char *const gamma_tiling[] = { "selective", "none" };
static const char *const gamma_partials[] = { "cache", "memory" };
static const char *const gamma_subrows[] = { "scattered", "together" };

/* Defaults: gamma §3 (whole rows, radix 64, partial fibers in the
 * FiberCache), §4.2 (tiling threshold 25 %), §5 / Table 1 (16 ways, 48
 * banks); the 64-byte line is an assumption (gamma gives none). */
static const tessel_template_option gamma_opts[] = {
    { "output_format", TESSEL_TEMPLATE_OPT_CHOICE, layouts, 2, "csr",
      "Z as written to memory (whole rows from the PEs)" },
    { "cache_bytes", TESSEL_TEMPLATE_OPT_SIZE, NULL, 0, "level 1's capacity",
      "FiberCache capacity (unbounded when level 1 has none)" },
    { "radix", TESSEL_TEMPLATE_OPT_INT, NULL, 0, "64", "merger radix, 2 to 2^20" },
    { "policy", TESSEL_TEMPLATE_OPT_CHOICE, gamma_policy, 2, "lru",
      "FiberCache replacement: whole-row LRU or banked set-associative lines" },
    { "reorder", TESSEL_TEMPLATE_OPT_CHOICE, gamma_reorder, 2, "none",
      "affinity-based row reordering of A (gamma §5.1)" },
    { "stat_model", TESSEL_TEMPLATE_OPT_CHOICE, gamma_stat, 2, "irm",
      "stat path: Che's approximation under the independent reference model or banded" },
    { "ways", TESSEL_TEMPLATE_OPT_INT, NULL, 0, "16", "set-associative ways, 1 to 2^16" },
    { "banks", TESSEL_TEMPLATE_OPT_INT, NULL, 0, "48", "FiberCache banks, 1 to 2^16" },
    { "line_bytes", TESSEL_TEMPLATE_OPT_INT, NULL, 0, "64", "line size, 1 to 2^20" },
    { "tiling", TESSEL_TEMPLATE_OPT_CHOICE, gamma_tiling, 2, "none",
      "selective tiling of rows of B larger than tile_fraction of the cache (gamma §4.2)" },
    { "tile_fraction", TESSEL_TEMPLATE_OPT_REAL, NULL, 0, "0.25",
      "share of the FiberCache above which a row is tiled, in (0, 1]" },
    { "partials", TESSEL_TEMPLATE_OPT_CHOICE, gamma_partials, 2, "cache",
      "where partial fibers live: the FiberCache (gamma §3.3) or memory" },
    { "subrows", TESSEL_TEMPLATE_OPT_CHOICE, gamma_subrows, 2, "scattered",
      "reorder with tiling: subrows ordered one by one, or each row's together" },
};

static const char *const sp_app_names[] = { "pagerank", "bfs", "sssp", "label", "cg" };
static const char *const sp_baseline[] = { "stream", "frontier" };

/* Defaults: sparsepipe §IV-E.2 (16-wide blocks), §V-A (1024 PEs a core);
 * 10 iterations is our choice (the paper gives none). */
static const tessel_template_option sparsepipe_opts[] = {
    { "app", TESSEL_TEMPLATE_OPT_CHOICE, sp_app_names, 5, "pagerank",
      "the iterative application (sparsepipe Table III)" },
    { "iterations", TESSEL_TEMPLATE_OPT_INT, NULL, 0, "10", "iterations, 1 to 2^32" },
    { "buffer_bytes", TESSEL_TEMPLATE_OPT_SIZE, NULL, 0, "level 1's capacity",
      "the shared on-chip buffer, or unbounded" },
    { "block", TESSEL_TEMPLATE_OPT_INT, NULL, 0, "16", "block edge of A's format (1: unblocked)" },
    { "subtensor", TESSEL_TEMPLATE_OPT_INT, NULL, 0, "1024", "rows of A per OEI step" },
    { "frontier", TESSEL_TEMPLATE_OPT_REAL, NULL, 0, "auto",
      "active share of the vector per iteration: auto (the app's preset), dense or (0, 1]" },
    { "baseline", TESSEL_TEMPLATE_OPT_CHOICE, sp_baseline, 2, "stream",
      "the baseline without inter-operator reuse streams A or follows the frontier" },
};

static const char *const ext_variants[] = { "n", "p", "ob", "drt" };
static const char *const ext_drt_levels[] = { "all", "llb" };

static const tessel_template_option extensor_opts[] = {
    { "variant", TESSEL_TEMPLATE_OPT_CHOICE, ext_variants, 4, "n",
      "ExTensor-N (conservative, dense worst case), -P (prescient), -OB (swiftiles + "
      "Tailors overbooking), -OP-DRT (drt)" },
    { "drt_levels", TESSEL_TEMPLATE_OPT_CHOICE, ext_drt_levels, 2, "all",
      "variant drt: DRT at every buffer level, or at the LLB only (prescient below)" },
};

#define BOTH_ESTIMATORS ((1u << TESSEL_STRATEGY_EXACT) | (1u << TESSEL_STRATEGY_STAT))

static const tessel_template_desc descs[TESSEL_TEMPLATE_COUNT] = {
    [TESSEL_TEMPLATE_NONE] = { .kind = TESSEL_TEMPLATE_NONE, .name = "none" },
    [TESSEL_TEMPLATE_EXTENSOR] = {
        .kind = TESSEL_TEMPLATE_EXTENSOR,
        .name = "extensor",
        .summary = "ExTensor's uniform-tile hierarchy with the tiles of one tiling strategy",
        .options = extensor_opts,
        .noptions = N_OF(extensor_opts),
        .estimators = BOTH_ESTIMATORS,
        .strategies = (1u << TESSEL_STRATEGY_CONSERVATIVE) | (1u << TESSEL_STRATEGY_PRESCIENT) |
                      (1u << TESSEL_STRATEGY_SWIFTILES) | (1u << TESSEL_STRATEGY_DRT),
        .evaluate = tpl_eval_extensor,
    },
    [TESSEL_TEMPLATE_GAMMA] = {
        .kind = TESSEL_TEMPLATE_GAMMA,
        .name = "gamma",
        .summary = "Gustavson with a FiberCache of B's rows (gamma §3-5)",
        .options = gamma_opts,
        .noptions = N_OF(gamma_opts),
        .estimators = BOTH_ESTIMATORS,
        .evaluate = tpl_eval_counts,
    },
    [TESSEL_TEMPLATE_OUTERSPACE] = {
        .kind = TESSEL_TEMPLATE_OUTERSPACE,
        .name = "outerspace",
        .summary = "outer product: multiply phase to memory, then a merge phase",
        .options = outerspace_opts,
        .noptions = N_OF(outerspace_opts),
        .estimators = BOTH_ESTIMATORS,
        .evaluate = tpl_eval_counts,
    },
    [TESSEL_TEMPLATE_MATRAPTOR] = {
        .kind = TESSEL_TEMPLATE_MATRAPTOR,
        .name = "matraptor",
        .summary = "row-wise product in C2SR: a row of B fetched per nonzero of A",
        .options = matraptor_opts,
        .noptions = N_OF(matraptor_opts),
        .estimators = BOTH_ESTIMATORS,
        .evaluate = tpl_eval_counts,
    },
    [TESSEL_TEMPLATE_SPARSEPIPE] = {
        .kind = TESSEL_TEMPLATE_SPARSEPIPE,
        .name = "sparsepipe",
        .summary = "iterative y = f(A x) under the OEI dataflow on one shared buffer",
        .options = sparsepipe_opts,
        .noptions = N_OF(sparsepipe_opts),
        .estimators = BOTH_ESTIMATORS,
        .evaluate = tpl_eval_sparsepipe,
    },
};

const tessel_template_desc *tessel_template_describe(tessel_template_kind k)
{
    if ((unsigned)k >= TESSEL_TEMPLATE_COUNT || k == TESSEL_TEMPLATE_NONE)
        return NULL;
    return &descs[k];
}

int tessel_template_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int k = 0; k < (int)TESSEL_TEMPLATE_COUNT; k++)
        if (strcmp(name, descs[k].name) == 0)
            return k;
    return -1;
}

const char *tessel_template_name(tessel_template_kind k)
{
    return (unsigned)k < TESSEL_TEMPLATE_COUNT ? descs[k].name : "?";
}

tessel_template_kind tessel_template_of(const tessel_spec *spec)
{
    if (!spec)
        return TESSEL_TEMPLATE_NONE;
    int k = tessel_template_from_name(spec->template_.name);
    return k < 0 ? TESSEL_TEMPLATE_NONE : (tessel_template_kind)k;
}

size_t tpl_option_keys(tessel_template_kind k, const char **keys, size_t max)
{
    const tessel_template_desc *d = tessel_template_describe(k);
    size_t n = 0;
    for (unsigned i = 0; d && i < d->noptions && n < max; i++)
        keys[n++] = d->options[i].key;
    return n;
}

void tpl_option_list(tessel_template_kind k, char *buf, size_t n)
{
    const tessel_template_desc *d = tessel_template_describe(k);
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned i = 0; d && i < d->noptions && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", d->options[i].key);
}
