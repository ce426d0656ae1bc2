/* tessel map: search mappings (loop order, tile shapes, buffer partitions)
 * for the best design point under an objective with the stat estimator;
 * write the winner as a spec file that tessel run accepts as is. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "commands.h"
#include "energy_cli.h"
#include "strategy_cli.h"
#include "tessel/point.h"
#include "tessel/strategy.h"
#include "tessel/sweep.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

enum {
    OPT_HELP,
    OPT_TENSOR,
    OPT_SET,
    OPT_OBJECTIVE,
    OPT_SEARCH,
    OPT_TIME_LIMIT,
    OPT_MAX_POINTS,
    OPT_SEED,
    OPT_BASE,
    OPT_PARTITION_STEP,
    OPT_KEEP_ORDER,
    OPT_KEEP_TILES,
    OPT_FIT,
    OPT_STRICT,
    OPT_LEVELS,
    OPT_STRATEGIES,
    OPT_SPATIAL,
    OPT_DISTRIBUTIONS,
    OPT_OUTPUT,
    OPT_VERIFY,
    OPT_QUIET,
    OPT_NO_MEMO,
    OPT_COUNT
};

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },
    [OPT_TENSOR] = { "--tensor", "-t", 1 },
    [OPT_SET] = { "--set", "-s", 1 },
    [OPT_OBJECTIVE] = { "--objective", NULL, 1 },
    [OPT_SEARCH] = { "--search", NULL, 1 },
    [OPT_TIME_LIMIT] = { "--time-limit", NULL, 1 },
    [OPT_MAX_POINTS] = { "--max-points", NULL, 1 },
    [OPT_SEED] = { "--seed", NULL, 1 },
    [OPT_BASE] = { "--base", NULL, 1 },
    [OPT_PARTITION_STEP] = { "--partition-step", NULL, 1 },
    [OPT_KEEP_ORDER] = { "--keep-order", NULL, 0 },
    [OPT_KEEP_TILES] = { "--keep-tiles", NULL, 0 },
    [OPT_FIT] = { "--fit", NULL, 0 },
    [OPT_STRICT] = { "--strict", NULL, 0 },
    [OPT_LEVELS] = { "--levels", NULL, 1 },
    [OPT_STRATEGIES] = { "--strategies", NULL, 1 },
    [OPT_SPATIAL] = { "--spatial", NULL, 0 },
    [OPT_DISTRIBUTIONS] = { "--distributions", NULL, 1 },
    [OPT_OUTPUT] = { "--output", "-o", 1 },
    [OPT_VERIFY] = { "--verify", NULL, 0 },
    [OPT_QUIET] = { "--quiet", "-q", 0 },
    /* not in --help (its text is a golden test): docs/map.md documents it */
    [OPT_NO_MEMO] = { "--no-memo", NULL, 0 },
};

static void help(void)
{
    printf(
        "usage: tessel map SPEC [options]\n\n"
        "Searches loop order x tile shape x buffer partition split at every level below\n"
        "the backing store for the best design point under an objective, pricing each\n"
        "point with the stat estimator from statistics collected once. Small spaces are\n"
        "searched exhaustively, large ones by hill climbing from seeded random starts.\n"
        "It stops at --time-limit with the best point so far and says how much of the\n"
        "space it saw. The winner is written as a spec file that tessel run accepts.\n\n"
        "options:\n"
        "  -t, --tensor NAME=FILE   bind an input (as tessel run; repeatable)\n"
        "  -s, --set PATH=VALUE     override the spec (as tessel run; repeatable)\n"
        "      --objective O        energy (default), cycles, edp (energy x cycles) or\n"
        "                           dram_bytes\n"
        "      --search S           auto (default: exhaustive up to 20000 points, else\n"
        "                           climb), exhaustive, random or climb\n"
        "      --time-limit SEC     stop after SEC seconds (default 60; 0: no limit)\n"
        "      --max-points N       stop after N points\n"
        "      --seed N             random starts (default 1): same seed, same result\n"
        "      --base RxC           the statistics' base grid (default: chosen from the\n"
        "                           spec's tiles and 128); tile edges are R (default\n"
        "                           128) times a power of two, or a whole extent\n"
        "      --partition-step F   partition fractions in steps of F (default 0.1); 0\n"
        "                           keeps the spec's partitions\n"
        "      --keep-order         keep the spec's loop orders\n"
        "      --keep-tiles         keep the spec's tiles\n"
        "      --fit                only mappings whose input and output tiles all fit\n"
        "                           their partitions (no overbooking; docs/map.md)\n"
        "      --strict             --fit, and no such mapping is an error (exit 2)\n"
        "      --levels A,B         search only these levels (default: all below level 0)\n"
        "      --strategies LIST    tiling strategies searched too, e.g.\n"
        "                           fixed,conservative,swiftiles,d2t2 (default fixed: tile\n"
        "                           edges searched); another strategy sizes the tiles of\n"
        "                           each order and partition split itself\n"
        "      --spatial            search spatial splits too: factors per index whose\n"
        "                           product divides the child's instances, at each\n"
        "                           searched level, under every distribution policy\n"
        "      --distributions LIST the policies --spatial searches (implies it), e.g.\n"
        "                           blocked,dynamic (default: blocked,static-round-robin,\n"
        "                           dynamic)\n"
        "  -o, --output FILE        the chosen mapping as a spec (default mapped.yaml): it\n"
        "                           includes SPEC and overrides the mapping\n"
        "      --verify             estimate the winner with the exact estimator too and\n"
        "                           print both\n"
        "  -q, --quiet              no progress and no summary\n\n"
        "Progress (points evaluated of the space or --max-points, rate, time left, best\n"
        "so far) goes to standard error when it is a terminal.\n\n"
        "example:\n"
        "  tessel map examples/sweep/spmspm-llb.yaml -t A=examples/data/jagmesh7.mtx.gz \\\n"
        "      --objective edp --time-limit 20 -o best.yaml --verify\n"
        "  tessel run best.yaml\n");
}

/* ------------------------------------------------------------------ */
/* Options */

typedef struct map_request {
    const char *spec_path, *out_path;
    char *sets[CLI_MAX_ARGS];
    size_t nsets;
    tessel_map_options map;
    tessel_stat_options stat;
    const char *levels;
    int verify, quiet;
    int strict; /* --strict: --fit, and no fitting point is exit 2 */
} map_request;

static int parse_objective(const char *text, tessel_map_objective *o)
{
    static const char *const names[] = { "energy", "cycles", "edp", "dram_bytes" };
    for (int i = 0; i < 4; i++)
        if (strcmp(text, names[i]) == 0 || strcmp(text, tessel_map_objective_name(i)) == 0) {
            *o = (tessel_map_objective)i;
            return CLI_EXIT_OK;
        }
    return cli_usage_error("map", "--objective is energy, cycles, edp or dram_bytes, not '%s'",
                           text);
}

static int parse_search(const char *text, tessel_map_search *s)
{
    static const char *const names[] = { "auto", "exhaustive", "random", "climb" };
    for (int i = 0; i < 4; i++)
        if (strcmp(text, names[i]) == 0) {
            *s = (tessel_map_search)i;
            return CLI_EXIT_OK;
        }
    return cli_usage_error("map", "--search is auto, exhaustive, random or climb, not '%s'",
                           text);
}

/* "--tensor A=FILE" -> "workload.data.A='FILE'". */
static char *tensor_set(const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1] || eq - arg >= 32)
        return NULL;
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "workload.data.%.*s=", (int)(eq - arg), arg);
    return cli_quoted_set(prefix, eq + 1);
}

/* "blocked,dynamic" -> bits of TESSEL_SPEC_SPATIAL_* policies. */
static int parse_distributions(const char *list, uint32_t *mask)
{
    char buf[256];
    *mask = 0;
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *p = strtok(buf, ","); p; p = strtok(NULL, ",")) {
        int k = tessel_spec_distribution_of(p);
        if (k < 0)
            return cli_usage_error("map", "--distributions: '%s' is not blocked, "
                                   "static-round-robin or dynamic", p);
        *mask |= 1u << k;
    }
    if (!*mask)
        return cli_usage_error("map", "--distributions needs names separated by commas");
    return CLI_EXIT_OK;
}

/* "fixed,swiftiles" -> bits of tessel_strategy_kind. */
static int parse_strategies(const char *list, uint32_t *mask)
{
    char buf[256];
    *mask = 0;
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *p = strtok(buf, ","); p; p = strtok(NULL, ",")) {
        char *set = NULL;
        int rc = cli_strategy_set("map", p, &set);
        free(set);
        if (rc)
            return rc;
        *mask |= 1u << tessel_strategy_from_name(p);
    }
    if (!*mask)
        return cli_usage_error("map", "--strategies needs names separated by commas");
    return CLI_EXIT_OK;
}

static int parse_numbers(const cli_args *args, map_request *r)
{
    const char *v;
    double f;
    unsigned long long u;
    if ((v = cli_value(args, OPT_TIME_LIMIT))) {
        if (cli_parse_double("map", "--time-limit", v, &f) || !(f >= 0))
            return cli_usage_error("map", "--time-limit is seconds >= 0, not '%s'", v);
        r->map.time_limit = f;
    }
    if ((v = cli_value(args, OPT_MAX_POINTS))) {
        if (cli_parse_u64("map", "--max-points", v, &u))
            return CLI_EXIT_USAGE;
        r->map.max_points = u;
    }
    if ((v = cli_value(args, OPT_SEED))) {
        if (cli_parse_u64("map", "--seed", v, &u))
            return CLI_EXIT_USAGE;
        r->map.seed = u;
    }
    if ((v = cli_value(args, OPT_PARTITION_STEP))) {
        if (cli_parse_double("map", "--partition-step", v, &f) || !(f >= 0 && f <= 0.5))
            return cli_usage_error("map", "--partition-step is a fraction in [0, 0.5], not "
                                   "'%s'", v);
        r->map.partition_step = f;
    }
    if ((v = cli_value(args, OPT_BASE))) {
        unsigned long long shape[2];
        unsigned n = 0;
        if (cli_parse_shape("map", "--base", v, shape, 2, &n))
            return CLI_EXIT_USAGE;
        r->stat.base[0] = shape[0];
        r->stat.base[1] = n == 2 ? shape[1] : shape[0];
        r->map.tile_base = shape[0] < r->stat.base[1] ? shape[0] : r->stat.base[1];
    } else {
        /* the statistics' grid is chosen from the spec's tiles and the
         * points' edges, tile_base times powers of two */
        for (unsigned x = 0; x < TESSEL_SPEC_MAX_INDICES; x++)
            r->stat.edge_gcd[x] = r->map.tile_base;
    }
    return CLI_EXIT_OK;
}

static int parse_request(const cli_args *args, map_request *r)
{
    memset(r, 0, sizeof(*r));
    tessel_map_options_init(&r->map);
    tessel_stat_options_init(&r->stat);
    r->map.time_limit = 60;
    if (cli_positionals(args) != 1)
        return cli_usage_error("map", "one spec file, not %d (see tessel map --help)",
                               cli_positionals(args));
    r->spec_path = cli_positional(args, 0);
    r->out_path = cli_value(args, OPT_OUTPUT) ? cli_value(args, OPT_OUTPUT) : "mapped.yaml";
    const char *v;
    if ((v = cli_value(args, OPT_OBJECTIVE)) && parse_objective(v, &r->map.objective))
        return CLI_EXIT_USAGE;
    if ((v = cli_value(args, OPT_SEARCH)) && parse_search(v, &r->map.search))
        return CLI_EXIT_USAGE;
    if (parse_numbers(args, r))
        return CLI_EXIT_USAGE;
    r->map.keep_order = cli_has(args, OPT_KEEP_ORDER);
    r->map.keep_tiles = cli_has(args, OPT_KEEP_TILES);
    r->strict = cli_has(args, OPT_STRICT);
    r->map.fit = cli_has(args, OPT_FIT) || r->strict;
    r->map.no_memo = cli_has(args, OPT_NO_MEMO);
    r->levels = cli_value(args, OPT_LEVELS);
    const char *strategies = cli_value(args, OPT_STRATEGIES);
    if (strategies && parse_strategies(strategies, &r->map.strategies))
        return CLI_EXIT_USAGE;
    const char *policies = cli_value(args, OPT_DISTRIBUTIONS);
    if (policies && parse_distributions(policies, &r->map.spatial_policies))
        return CLI_EXIT_USAGE;
    r->map.spatial = cli_has(args, OPT_SPATIAL) || policies;
    r->verify = cli_has(args, OPT_VERIFY);
    r->quiet = cli_has(args, OPT_QUIET);
    for (int i = 0; i < args->count; i++) {
        char *s = NULL;
        if (args->option[i] == OPT_SET) {
            if (!strchr(args->value[i], '=') || args->value[i][0] == '=')
                return cli_usage_error("map", "--set needs PATH=VALUE, not '%s'",
                                       args->value[i]);
            s = strdup(args->value[i]);
        } else if (args->option[i] == OPT_TENSOR) {
            if (!(s = tensor_set(args->value[i])))
                return cli_usage_error("map", "--tensor needs NAME=FILE, not '%s'",
                                       args->value[i]);
        } else {
            continue;
        }
        if (!s) {
            fprintf(stderr, "tessel map: error: out of memory\n");
            return CLI_EXIT_FAILURE;
        }
        r->sets[r->nsets++] = s;
    }
    return CLI_EXIT_OK;
}

static int level_mask(const map_request *r, const tessel_spec *spec, unsigned *mask)
{
    *mask = 0;
    if (!r->levels)
        return CLI_EXIT_OK;
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", r->levels);
    for (char *p = strtok(buf, ","); p; p = strtok(NULL, ",")) {
        int l = tessel_spec_level_index(spec, p);
        if (l <= 0)
            return cli_usage_error("map", "--levels: '%s' is not a level below the backing "
                                   "store of %s", p, r->spec_path);
        *mask |= 1u << l;
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* The written spec: the winner's resolved spec (what tessel spec writes,
 * through libcyaml's schema), which tessel run reads back as it is. */

static int write_spec(const map_request *r, const tessel_spec *spec, const tessel_map_result *m,
                      double value)
{
    const char *sets[TESSEL_MAP_MAX_SETS];
    for (size_t i = 0; i < m->nsets; i++)
        sets[i] = m->sets[i];
    tessel_spec *winner = NULL;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    int rc = tessel_spec_derive(spec, sets, m->nsets, NULL, &winner, &errors);
    if (rc)
        return cli_report_list("map", &errors, rc);
    tessel_diag_list_free(&errors);
    tessel_outfile *out = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_outfile_open(r->out_path, NULL, &out, &d)) {
        tessel_spec_free(&winner);
        return cli_report(&d);
    }
    FILE *f = tessel_outfile_stream(out);
    fprintf(f, "# Written by tessel map from %s: the best of %llu points (%s search, %.3g "
               "points in the space%s) by %s = %.17g.\n# The resolved spec (docs/spec.md): "
               "tessel run accepts it as it is, from the\n# directory tessel map ran in "
               "(relative paths are as the loader resolved them).\n# The winner's "
               "overrides of the spec:\n",
            r->spec_path, (unsigned long long)m->evaluated, m->search, m->space,
            m->complete ? ", all seen" : "", tessel_map_objective_name(r->map.objective), value);
    for (size_t i = 0; i < m->nsets; i++)
        fprintf(f, "#   %s\n", m->sets[i]);
    rc = cli_write_resolved(winner, f);
    tessel_spec_free(&winner);
    if (rc) {
        tessel_outfile_abort(&out);
        return rc;
    }
    return tessel_outfile_commit(&out, &d) ? cli_report(&d) : CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ */

/* The search's progress on the shared meter (progress.h): a unit is one
 * point evaluated, of the space or --max-points, whichever is smaller; a
 * --time-limit caps the time left. */
typedef struct progress {
    cli_progress meter;
    const char *objective;
    double max_points; /* 0: none */
} progress;

static void show_progress(void *ud, uint64_t evaluated, double space, double best, double t)
{
    progress *p = ud;
    double total = p->max_points > 0 && p->max_points < space ? p->max_points : space;
    char extra[64] = "";
    if (isfinite(best))
        snprintf(extra, sizeof(extra), ", best %s %.6g", p->objective, best);
    cli_progress_update(&p->meter, (double)evaluated, total, t, extra);
}

static void print_point(const char *what, const tessel_report_point *p)
{
    printf("  %-6s dram_bytes %llu (%.3fx compulsory), energy %.6g pJ, cycles %.6g (%s bound)\n",
           what, (unsigned long long)p->dram_bytes, p->traffic_ratio, p->energy_pj,
           p->roofline.cycles, p->bound);
    if (!isnan(p->spatial_cycles)) /* a spatial split: its busiest instance per step */
        printf("         spatial_cycles %.6g, imbalance %.4g, pe_utilization %.4g\n",
               p->spatial_cycles, p->imbalance, p->pe_utilization);
    /* rule 4: what the point's overflowing tiles cost (priced above) */
    for (unsigned l = 1; l < p->nlevels; l++)
        for (unsigned t = 0; t < p->ntensors; t++) {
            const tessel_traffic *tr = &p->traffic[l][t];
            if (tr->overflow_tiles)
                printf("         overflow at %s, %s: %llu of %llu %s larger than the %llu-byte "
                       "partition (largest %llu bytes), %llu bytes of traffic\n",
                       p->level_name[l], p->tensor_name[t],
                       (unsigned long long)tr->overflow_tiles,
                       (unsigned long long)(t == 0 ? tr->writebacks : tr->fills),
                       t == 0 ? "write-backs" : "fills", (unsigned long long)tr->partition_bytes,
                       (unsigned long long)tr->worst_tile_bytes,
                       (unsigned long long)tr->overflow_bytes);
        }
}

static double rel(double a, double b)
{
    return b != 0 ? 100.0 * (a - b) / b : 0;
}

/* The winner's exact traffic on the tiles it was priced with: a strategy
 * decides them once, for the stat estimator's grid, and both estimators
 * use them (point.h's decide_as_stat; drt decides at run time: its exact
 * walk). */
static int exact_of(const tessel_spec *winner, const tessel_workload_data *data,
                    const tessel_stat_data *stats, tessel_result *result, tessel_diag *d)
{
    tessel_point_request req = {
        .spec = winner,
        .estimator = TESSEL_POINT_EXACT,
        .data = data,
        .stats = stats,
        .decide_as_stat = 1,
    };
    tessel_point_result *out = malloc(sizeof(*out));
    if (!out)
        return tessel_diag_set(d, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    int rc = tessel_point_evaluate(&req, out, d);
    if (!rc)
        *result = out->result;
    tessel_point_result_free(out);
    free(out);
    return rc;
}

static int verify(const map_request *r, const tessel_spec *spec, const tessel_workload_data *data,
                  const tessel_stat_data *stats, const tessel_energy_db *db,
                  const tessel_map_result *m)
{
    const char *list[TESSEL_MAP_MAX_SETS];
    for (size_t i = 0; i < m->nsets; i++)
        list[i] = m->sets[i];
    tessel_spec *winner = NULL;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_design_energy energy;
    tessel_result result;
    tessel_report_point *p = malloc(sizeof(*p));
    int rc = p ? tessel_spec_derive(spec, list, m->nsets, NULL, &winner, &errors) : TESSEL_ENOMEM;
    if (!rc)
        rc = tessel_energy_design(db, winner, &energy, &errors);
    if (errors.count)
        d = errors.items[0];
    tessel_diag_list_free(&errors);
    if (!rc)
        rc = exact_of(winner, data, stats, &result, &d);
    char label[TESSEL_REPORT_LABEL_MAX];
    tessel_workload_data_label(data, label, sizeof(label));
    if (!rc)
        rc = tessel_report_point_build(winner, &result, &energy, label,
                                       tessel_strategy_is_fixed(winner) ? "fixed"
                                                                        : winner->strategy.name,
                                       p, &d);
    int status = rc ? cli_report(&d) : CLI_EXIT_OK;
    if (!rc && !r->quiet) {
        print_point("exact", p);
        printf("  stat - exact: dram_bytes %+.2f %%, energy %+.2f %%, cycles %+.2f %%\n",
               rel((double)m->best.dram_bytes, (double)p->dram_bytes),
               rel(m->best.energy_pj, p->energy_pj),
               rel(m->best.roofline.cycles, p->roofline.cycles));
    }
    free(p);
    tessel_spec_free(&winner);
    return status;
}

typedef struct map_state {
    tessel_spec *spec;
    tessel_energy_db *db;
    tessel_workload_data *data;
    tessel_stat_data *stats;
    tessel_map_result *result;
} map_state;

static int run(const map_request *r, map_state *st)
{
    /* -o: a bad path is found now, not after the search; parents are made */
    tessel_diag od;
    tessel_diag_clear(&od);
    if (tessel_output_prepare(r->out_path, NULL, &od))
        return cli_report(&od);
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_load_options load;
    tessel_load_options_init(&load);
    int rc = tessel_spec_load(r->spec_path, (const char *const *)r->sets, r->nsets, NULL,
                              &st->spec, &errors);
    if (!rc)
        rc = tessel_energy_db_load(st->spec, NULL, &st->db, &errors);
    if (!rc)
        rc = tessel_workload_load(st->spec, &load, NULL, &st->data, &errors);
    if (rc)
        return cli_report_list("map", &errors, rc);
    tessel_diag_list_free(&errors);
    cli_energy_warn_design(st->spec, st->db);
    unsigned mask;
    if (level_mask(r, st->spec, &mask))
        return CLI_EXIT_USAGE;
    tessel_map_options o = r->map;
    o.level_mask = mask;
    o.data = st->data;
    progress prog = { .objective = tessel_map_objective_name(o.objective),
                      .max_points = (double)o.max_points };
    cli_progress_init(&prog.meter, "tessel map", "points", r->quiet);
    prog.meter.time_limit = o.time_limit;
    o.progress = show_progress;
    o.progress_ud = &prog;
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_stat_options so = r->stat;
    rc = tessel_point_stats_create(st->spec, st->data, &so, NULL, &st->stats, &d);
    if (!rc && !(st->result = malloc(sizeof(*st->result))))
        rc = tessel_diag_set(&d, TESSEL_ENOMEM, "", 0, 0, "", "out of memory");
    if (!rc)
        rc = tessel_map_run(st->spec, st->stats, st->db, st->data->extent, &o, st->result, &d);
    cli_progress_end(&prog.meter);
    if (rc && r->strict) {
        cli_report(&d);
        return CLI_EXIT_USAGE;
    }
    if (rc)
        return cli_report(&d);
    const tessel_map_result *m = st->result;
    if (!r->quiet) {
        printf("%s search: %llu of %.4g points in %.2f s (%.0f points/s)%s; %llu refused by the "
               "estimator%s\n", m->search, (unsigned long long)m->evaluated, m->space, m->seconds,
               m->seconds > 0 ? (double)m->evaluated / m->seconds : 0.0,
               m->complete ? ", the whole space" : "", (unsigned long long)m->infeasible,
               o.fit ? " or overflowing" : "");
        printf("best %s: %.17g\n", tessel_map_objective_name(o.objective), m->best_value);
        for (size_t i = 0; i < m->nsets; i++)
            printf("  %s\n", m->sets[i]);
        print_point("stat", &m->best);
    }
    int status = r->verify ? verify(r, st->spec, st->data, st->stats, st->db, m) : CLI_EXIT_OK;
    if (!status)
        status = write_spec(r, st->spec, m, m->best_value);
    if (!status && !r->quiet)
        printf("wrote %s\n", r->out_path);
    return status;
}

int cmd_map(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("map", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    map_request r;
    int rc = parse_request(&args, &r);
    if (!rc) {
        map_state st;
        memset(&st, 0, sizeof(st));
        rc = run(&r, &st);
        free(st.result);
        tessel_stat_data_free(&st.stats);
        tessel_workload_free(&st.data);
        tessel_energy_db_free(&st.db);
        tessel_spec_free(&st.spec);
    }
    for (size_t i = 0; i < r.nsets; i++)
        free(r.sets[i]);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tessel: error: writing to standard output failed\n");
        return CLI_EXIT_FAILURE;
    }
    return rc;
}
