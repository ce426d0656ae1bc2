/* tessel gen: seeded synthetic sparse matrices. */
#include <limits.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "tessel/tensor.h"

enum {
    OPT_HELP, OPT_OUTPUT, OPT_ROWS, OPT_COLS, OPT_SIZE, OPT_NNZ, OPT_DENSITY, OPT_BANDWIDTH,
    OPT_BLOCK, OPT_A, OPT_B, OPT_C, OPT_D, OPT_N, OPT_M, OPT_SEED, OPT_PATTERN, OPT_VERBOSE,
    OPT_CLIQUES, OPT_CLIQUE_MAX, OPT_ALPHA, OPT_SKEW, OPT_TAIL, OPT_COUNT
};

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },       [OPT_OUTPUT] = { "--output", "-o", 1 },
    [OPT_ROWS] = { "--rows", NULL, 1 },       [OPT_COLS] = { "--cols", NULL, 1 },
    [OPT_SIZE] = { "--size", NULL, 1 },       [OPT_NNZ] = { "--nnz", NULL, 1 },
    [OPT_DENSITY] = { "--density", NULL, 1 }, [OPT_BANDWIDTH] = { "--bandwidth", NULL, 1 },
    [OPT_BLOCK] = { "--block", NULL, 1 },     [OPT_A] = { "--a", NULL, 1 },
    [OPT_B] = { "--b", NULL, 1 },             [OPT_C] = { "--c", NULL, 1 },
    [OPT_D] = { "--d", NULL, 1 },             [OPT_N] = { "--n", NULL, 1 },
    [OPT_M] = { "--m", NULL, 1 },             [OPT_SEED] = { "--seed", NULL, 1 },
    [OPT_PATTERN] = { "--pattern", NULL, 0 }, [OPT_VERBOSE] = { "--verbose", "-v", 0 },
    [OPT_CLIQUES] = { "--cliques", NULL, 1 }, [OPT_CLIQUE_MAX] = { "--clique-max", NULL, 1 },
    [OPT_ALPHA] = { "--alpha", NULL, 1 },     [OPT_SKEW] = { "--skew", NULL, 1 },
    [OPT_TAIL] = { "--tail", NULL, 1 },
};

static void help(void)
{
    printf(
        "usage: tessel gen KIND --rows R --cols C [parameters] -o FILE\n\n"
        "Writes a seeded synthetic sparse matrix to FILE (.mtx, .tns or .tsl, written\n"
        "atomically). The same parameters and seed give the same matrix everywhere.\n\n"
        "kinds and their parameters:\n"
        "  uniform    --nnz N                 exactly N distinct positions, uniformly\n"
        "  banded     --bandwidth W [--density D]  positions with |i-j| <= W, each kept\n"
        "                                     with probability D (default 1)\n"
        "  rmat       --nnz N [--a --b --c --d]  N R-MAT draws (power law), repeats\n"
        "                                     merged, so at most N entries\n"
        "                                     (defaults 0.57 0.19 0.19 0.05; alias powerlaw)\n"
        "  blockdiag  --block B [--density D] diagonal B x B blocks, each position kept\n"
        "                                     with probability D (default 1)\n"
        "  nm         --n N --m M             every aligned group of M columns in a row\n"
        "                                     holds exactly N nonzeros (default 2:4)\n"
        "  clustered  --cliques Q [--clique-max S --alpha A --skew Z --tail T]\n"
        "                                     co-authorship-like, square, symmetric, no\n"
        "                                     diagonal: Q cliques of sizes 2..S drawn with\n"
        "                                     P(s) ~ s^-A (defaults S 32, A 2.5), members\n"
        "                                     drawn by Zipf popularity (rank+1)^-Z over a\n"
        "                                     seeded vertex permutation (default Z 0.8, 0:\n"
        "                                     uniform), plus T edges between two popular\n"
        "                                     vertices (default 0); repeats merged\n"
        "  fixed-structured --density D       Sparseloop's fixed-structured model: every\n"
        "                                     row segment of W columns holds floor or\n"
        "                                     ceil of W x D nonzeros, rows phase-shifted\n"
        "                                     (golden ratio from --seed) so tiles hold\n"
        "                                     close to their shape x D\n\n"
        "common options:\n"
        "      --rows R, --cols C  extents (--size N sets both)\n"
        "      --seed S            random seed (default 1)\n"
        "      --pattern           no values (default: values uniform in (0, 1])\n"
        "  -o, --output FILE       where to write (required)\n"
        "  -v, --verbose           print kind, extents and entries on stderr\n\n"
        "examples:\n"
        "  tessel gen uniform --size 100000 --nnz 1000000 -o u.mtx\n"
        "  tessel gen banded --size 50000 --bandwidth 8 --density 0.5 -o b.mtx\n"
        "  tessel gen rmat --size 1048576 --nnz 10000000 --seed 7 -o r.tsl\n"
        "  tessel gen blockdiag --size 4096 --block 64 --density 0.2 -o d.mtx\n"
        "  tessel gen nm --rows 1024 --cols 4096 --n 2 --m 4 --pattern -o s.mtx\n"
        "  tessel gen clustered --size 100000 --cliques 60000 --tail 100000 -o c.mtx\n");
}

static int u64_option(const cli_args *args, int opt, uint64_t *out)
{
    const char *v = cli_value(args, opt);
    unsigned long long n;
    if (!v)
        return CLI_EXIT_OK;
    if (cli_parse_u64("gen", options[opt].name, v, &n))
        return CLI_EXIT_USAGE;
    *out = n;
    return CLI_EXIT_OK;
}

static int unsigned_option(const cli_args *args, int opt, unsigned *out)
{
    uint64_t v = *out;
    if (u64_option(args, opt, &v))
        return CLI_EXIT_USAGE;
    if (v > UINT_MAX)
        return cli_usage_error("gen", "%s must be at most %u", options[opt].name, UINT_MAX);
    *out = (unsigned)v;
    return CLI_EXIT_OK;
}

/* Which parameters each kind reads; giving another one is almost certainly
 * a mistake (e.g. --density for uniform, which takes --nnz). */
static int option_applies(tessel_gen_kind kind, int opt)
{
    switch (opt) {
    case OPT_NNZ: return kind == TESSEL_GEN_UNIFORM || kind == TESSEL_GEN_RMAT;
    case OPT_DENSITY:
        return kind == TESSEL_GEN_BANDED || kind == TESSEL_GEN_BLOCKDIAG ||
               kind == TESSEL_GEN_FIXED;
    case OPT_BANDWIDTH: return kind == TESSEL_GEN_BANDED;
    case OPT_BLOCK: return kind == TESSEL_GEN_BLOCKDIAG;
    case OPT_A:
    case OPT_B:
    case OPT_C:
    case OPT_D: return kind == TESSEL_GEN_RMAT;
    case OPT_N:
    case OPT_M: return kind == TESSEL_GEN_NM;
    case OPT_CLIQUES:
    case OPT_CLIQUE_MAX:
    case OPT_ALPHA:
    case OPT_SKEW:
    case OPT_TAIL: return kind == TESSEL_GEN_CLUSTERED;
    default: return 1;
    }
}

static int double_option(const cli_args *args, int opt, double *out)
{
    const char *v = cli_value(args, opt);
    return v ? cli_parse_double("gen", options[opt].name, v, out) : CLI_EXIT_OK;
}

static int parse_params(const cli_args *args, tessel_gen_params *p)
{
    const char *kind = cli_positional(args, 0);
    int k = tessel_gen_kind_from_name(kind);
    if (k < 0)
        return cli_usage_error("gen",
                               "unknown kind '%s' (uniform, banded, rmat, blockdiag, nm, clustered or "
                               "fixed-structured)",
                               kind);
    tessel_gen_params_init(p, (tessel_gen_kind)k);
    for (int i = 0; i < args->count; i++)
        if (args->option[i] >= 0 && !option_applies(p->kind, args->option[i]))
            return cli_usage_error("gen", "%s does not apply to %s (see tessel gen --help)",
                                   options[args->option[i]].name, kind);
    uint64_t size = 0;
    if (u64_option(args, OPT_SIZE, &size))
        return CLI_EXIT_USAGE;
    p->rows = p->cols = size;
    if (u64_option(args, OPT_ROWS, &p->rows) || u64_option(args, OPT_COLS, &p->cols) ||
        u64_option(args, OPT_NNZ, &p->nnz) || u64_option(args, OPT_BANDWIDTH, &p->bandwidth) ||
        u64_option(args, OPT_BLOCK, &p->block) || u64_option(args, OPT_SEED, &p->seed) ||
        double_option(args, OPT_DENSITY, &p->density) || double_option(args, OPT_A, &p->a) ||
        double_option(args, OPT_B, &p->b) || double_option(args, OPT_C, &p->c) ||
        double_option(args, OPT_D, &p->d) || unsigned_option(args, OPT_N, &p->n) ||
        unsigned_option(args, OPT_M, &p->m) || u64_option(args, OPT_CLIQUES, &p->cliques) ||
        u64_option(args, OPT_CLIQUE_MAX, &p->clique_max) ||
        u64_option(args, OPT_TAIL, &p->tail) || double_option(args, OPT_ALPHA, &p->alpha) ||
        double_option(args, OPT_SKEW, &p->skew))
        return CLI_EXIT_USAGE;
    /* A given 0 reaches tessel_generate, which names the bad extent. */
    if ((!cli_has(args, OPT_ROWS) || !cli_has(args, OPT_COLS)) && !cli_has(args, OPT_SIZE))
        return cli_usage_error("gen", "give the extents with --rows and --cols, or --size");
    int needs_nnz = p->kind == TESSEL_GEN_UNIFORM || p->kind == TESSEL_GEN_RMAT;
    if (needs_nnz && !cli_has(args, OPT_NNZ))
        return cli_usage_error("gen", "%s needs --nnz", kind);
    if (p->kind == TESSEL_GEN_BANDED && !cli_has(args, OPT_BANDWIDTH))
        return cli_usage_error("gen", "banded needs --bandwidth");
    if (p->kind == TESSEL_GEN_BLOCKDIAG && !cli_has(args, OPT_BLOCK))
        return cli_usage_error("gen", "blockdiag needs --block");
    if (p->kind == TESSEL_GEN_CLUSTERED && !cli_has(args, OPT_CLIQUES))
        return cli_usage_error("gen", "clustered needs --cliques");
    if (p->kind == TESSEL_GEN_FIXED && !cli_has(args, OPT_DENSITY))
        return cli_usage_error("gen", "fixed-structured needs --density");
    p->values = !cli_has(args, OPT_PATTERN);
    return CLI_EXIT_OK;
}

int cmd_gen(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("gen", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    if (cli_positionals(&args) != 1)
        return cli_usage_error("gen", "expected one KIND (see tessel gen --help)");
    const char *out = cli_value(&args, OPT_OUTPUT);
    if (!out)
        return cli_usage_error("gen", "-o FILE is required (.mtx, .tns or .tsl)");
    enum cli_tensor_kind kind = cli_tensor_kind_of(out);
    if (kind == CLI_TENSOR_UNKNOWN)
        return cli_usage_error("gen", "the output name must end in .mtx, .tns or .tsl");
    tessel_gen_params p;
    if (parse_params(&args, &p))
        return CLI_EXIT_USAGE;
    /* No source file: a zero identity, which no text file matches. */
    const tessel_cache_source no_source = { 0, 0, 0 };
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_tensor *t = NULL;
    int rc = tessel_generate(&p, NULL, &t, &d);
    if (!rc)
        rc = cli_write_tensor(t, kind, &no_source, out, &d);
    if (!rc && cli_has(&args, OPT_VERBOSE))
        fprintf(stderr, "%s: %s %llu x %llu, %llu entries\n", out, tessel_gen_kind_name(p.kind),
                (unsigned long long)p.rows, (unsigned long long)p.cols,
                (unsigned long long)t->nnz);
    tessel_tensor_free(&t);
    /* Generator errors name no file; naming the command gives them the
     * "tessel gen: error: ..." form of the usage errors. */
    if (rc && !d.file[0])
        tessel_diag_set_file(&d, "tessel gen");
    return rc ? cli_report(&d) : CLI_EXIT_OK;
}
