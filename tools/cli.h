/* Shared pieces of the tessel command-line tool: option parsing with
 * suggestions, error printing, exit codes, output streams. Uses only the
 * public API in include/tessel/. */
#ifndef TESSEL_TOOLS_CLI_H
#define TESSEL_TOOLS_CLI_H

#include <stdio.h>

#include "tessel/base.h"
#include "tessel/tensor.h"

/* Exit statuses: 0 success; 1 internal failure (out of memory, write
 * error); 2 bad usage or bad input. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAILURE = 1, CLI_EXIT_USAGE = 2 };

#define CLI_MAX_ARGS 256

typedef struct cli_option {
    const char *name;  /* "--tile"; may be NULL */
    const char *alias; /* "-t"; may be NULL */
    int takes_value;
} cli_option;

typedef struct cli_args {
    int count;
    int option[CLI_MAX_ARGS];        /* index into the option table, -1 for positionals */
    const char *value[CLI_MAX_ARGS]; /* option value or positional */
} cli_args;

/* Parses argv[0..argc) (without the command name). On error prints
 * "tessel CMD: ..." with a suggestion and returns CLI_EXIT_USAGE. */
int cli_parse(const char *cmd, int argc, char **argv, const cli_option *opts, int nopts,
              cli_args *out);
/* Last value of option `index`, or NULL. */
const char *cli_value(const cli_args *a, int index);
int cli_has(const cli_args *a, int index);
/* Positional number n (0-based) or NULL; cli_positionals counts them. */
const char *cli_positional(const cli_args *a, int n);
int cli_positionals(const cli_args *a);

/* Prints the diagnostic as "file:line: error: message" on stderr and
 * returns the exit status for its code. */
int cli_report(const tessel_diag *d);
/* Prints every diagnostic of the list, then "tessel CMD: N errors"; frees
 * the list and returns the exit status for rc. */
int cli_report_list(const char *cmd, tessel_diag_list *errors, int rc);
int cli_exit_status(int code);
/* Prints every diagnostic of the list as "file:line:col: warning: message"
 * on stderr (spec plausibility, energy resolution); the list is kept. */
void cli_print_warnings(const tessel_diag_list *warnings);
/* "tessel CMD: error: ..." on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The resolved spec of s (tessel_spec_resolved_yaml: libcyaml's schema),
 * read back through the schema and compared before it is written to f
 * (tessel spec, tessel map -o). Exit status; errors are printed. */
struct tessel_spec;
int cli_write_resolved(const struct tessel_spec *s, FILE *f);

/* `prefix` followed by YAML single-quoted `value` ('' for a quote), so a
 * file name given to --set is never read as a number, boolean or flow
 * collection. malloc'd; NULL when out of memory. */
char *cli_quoted_set(const char *prefix, const char *value);
/* "--tensor NAME=DATA" -> "workload.data.NAME='DATA'" (malloc'd; the
 * loader resolves a relative file given by --set against the current
 * directory); usage error otherwise. */
int cli_tensor_set(const char *cmd, const char *arg, char **out);
/* "--set PATH=VALUE" checked and copied (malloc'd). */
int cli_set_arg(const char *cmd, const char *arg, char **out);

/* Numbers from option values, whole string or an error message. */
int cli_parse_u64(const char *cmd, const char *what, const char *text, unsigned long long *out);
int cli_parse_double(const char *cmd, const char *what, const char *text, double *out);
/* "128x128", "64x64x32", or "128" (every mode): fills up to max entries,
 * returns the count in *n. */
int cli_parse_shape(const char *cmd, const char *what, const char *text, unsigned long long *out,
                    unsigned max, unsigned *n);

/* Tensor output files, by extension: .tsl (binary cache), .mtx, .tns. */
enum cli_tensor_kind { CLI_TENSOR_UNKNOWN, CLI_TENSOR_CACHE, CLI_TENSOR_MTX, CLI_TENSOR_TNS };
enum cli_tensor_kind cli_tensor_kind_of(const char *path);
/* Writes t as `kind` (atomically); src is the cache's source identity. */
int cli_write_tensor(const tessel_tensor *t, enum cli_tensor_kind kind,
                     const tessel_cache_source *src, const char *path, tessel_diag *d);

/* Output to a file (atomically, via tessel_outfile) or to stdout. */
typedef struct cli_output {
    tessel_outfile *file;
    FILE *stream;
} cli_output;
int cli_output_open(cli_output *o, const char *path); /* path NULL or "-": stdout */
int cli_output_close(cli_output *o, int ok);          /* commits if ok, else aborts */

#endif
