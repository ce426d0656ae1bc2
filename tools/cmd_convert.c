/* tessel convert: between tensor file formats, and into the binary cache. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "tessel/tensor.h"

enum { OPT_HELP, OPT_DROP_ZEROS, OPT_COMPLEX, OPT_VERBOSE, OPT_CHECK, OPT_COUNT };

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },
    [OPT_DROP_ZEROS] = { "--drop-zeros", NULL, 0 },
    [OPT_COMPLEX] = { "--complex", NULL, 1 },
    [OPT_VERBOSE] = { "--verbose", "-v", 0 },
    [OPT_CHECK] = { "--check", NULL, 0 },
};

static void help(void)
{
    printf("usage: tessel convert IN OUT [options]\n"
           "       tessel convert IN --check [options]\n\n"
           "Reads IN (.mtx, .mtx.gz, .tns, .tns.gz or .tsl) and writes OUT, whose kind\n"
           "follows its extension: .tsl (binary cache, loads at memory speed and is\n"
           "recognised as fresh for IN by --cache), .mtx (matrices) or .tns.\n"
           "OUT is written to a temporary file and renamed when complete.\n"
           "With --check IN is only read (its errors reported) and nothing is written.\n\n"
           "options:\n"
           "      --drop-zeros      drop explicit zeros (after summing duplicates)\n"
           "      --complex POLICY  magnitude (default: keep |z|) or reject\n"
           "      --check           read IN only, without OUT (parse time, errors)\n"
           "  -v, --verbose         print entries, bytes and seconds on stderr\n");
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Taken before IN is read: if IN changes meanwhile the cache is marked
 * stale, never fresh with the old contents. A cache read from a cache has
 * no text source (identity 0). */
static int source_identity(const char *in, enum cli_tensor_kind kind, const tessel_load_options *opt,
                           tessel_cache_source *src, tessel_diag *d)
{
    memset(src, 0, sizeof(*src));
    if (kind != CLI_TENSOR_CACHE || tessel_file_kind_of(in) == TESSEL_FILE_CACHE)
        return TESSEL_OK;
    return tessel_cache_source_of(in, opt, src, d);
}

int cmd_convert(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("convert", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    int check = cli_has(&args, OPT_CHECK);
    if (check && cli_positionals(&args) != 1)
        return cli_usage_error("convert", "--check takes IN only, no OUT");
    if (!check && cli_positionals(&args) != 2)
        return cli_usage_error("convert", "expected IN and OUT (see tessel convert --help)");
    const char *in = cli_positional(&args, 0), *out = check ? NULL : cli_positional(&args, 1);
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.drop_zeros = cli_has(&args, OPT_DROP_ZEROS);
    const char *cx = cli_value(&args, OPT_COMPLEX);
    if (cx && strcmp(cx, "reject") == 0)
        opt.complex_policy = TESSEL_COMPLEX_REJECT;
    else if (cx && strcmp(cx, "magnitude") != 0)
        return cli_usage_error("convert", "--complex must be magnitude or reject, not '%s'", cx);
    tessel_diag d;
    tessel_diag_clear(&d);
    /* --check: no OUT, read as for a .mtx (no cache source identity). */
    enum cli_tensor_kind kind = check ? CLI_TENSOR_MTX : cli_tensor_kind_of(out);
    /* Checked before reading IN, which may take minutes. */
    if (kind == CLI_TENSOR_UNKNOWN) {
        tessel_diag_set(&d, TESSEL_EINVAL, out, 0, 0, NULL,
                        "unknown output kind: the name must end in .tsl, .mtx or .tns");
        return cli_report(&d);
    }
    tessel_cache_source src;
    tessel_tensor *t = NULL;
    double start = seconds_now();
    int rc = source_identity(in, kind, &opt, &src, &d);
    if (!rc)
        rc = tessel_tensor_load(in, &opt, NULL, &t, NULL, &d);
    double loaded = seconds_now();
    if (!rc && !check)
        rc = cli_write_tensor(t, kind, &src, out, &d);
    if (!rc && cli_has(&args, OPT_VERBOSE) && check)
        fprintf(stderr, "%s: %llu entries, %llu bytes in memory; read %.3f s, nothing written\n",
                in, (unsigned long long)t->nnz, (unsigned long long)tessel_tensor_bytes(t),
                loaded - start);
    else if (!rc && cli_has(&args, OPT_VERBOSE))
        fprintf(stderr, "%s: %llu entries, %llu bytes in memory; read %.3f s, written %.3f s\n",
                in, (unsigned long long)t->nnz, (unsigned long long)tessel_tensor_bytes(t),
                loaded - start, seconds_now() - loaded);
    tessel_tensor_free(&t);
    return rc ? cli_report(&d) : CLI_EXIT_OK;
}
