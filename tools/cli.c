#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/spec.h"

static const char *nearest_option(const char *arg, const cli_option *opts, int nopts)
{
    const char *names[CLI_MAX_ARGS];
    size_t n = 0;
    for (int i = 0; i < nopts && n < CLI_MAX_ARGS; i++)
        if (opts[i].name)
            names[n++] = opts[i].name;
    return tessel_nearest_word(arg, names, n);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tessel %s: error: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

static int find_option(const char *arg, size_t len, const cli_option *opts, int nopts)
{
    for (int i = 0; i < nopts; i++) {
        if (opts[i].name && strlen(opts[i].name) == len && strncmp(arg, opts[i].name, len) == 0)
            return i;
        if (opts[i].alias && strlen(opts[i].alias) == len &&
            strncmp(arg, opts[i].alias, len) == 0)
            return i;
    }
    return -1;
}

static int push(const char *cmd, cli_args *out, int option, const char *value)
{
    if (out->count == CLI_MAX_ARGS)
        return cli_usage_error(cmd, "too many arguments (at most %d)", CLI_MAX_ARGS);
    out->option[out->count] = option;
    out->value[out->count] = value;
    out->count++;
    return CLI_EXIT_OK;
}

int cli_parse(const char *cmd, int argc, char **argv, const cli_option *opts, int nopts,
              cli_args *out)
{
    out->count = 0;
    int only_positionals = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positionals || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (push(cmd, out, -1, arg))
                return CLI_EXIT_USAGE;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positionals = 1;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        int idx = find_option(arg, len, opts, nopts);
        if (idx < 0) {
            char name[64];
            snprintf(name, sizeof(name), "%.*s", (int)(len < 63 ? len : 63), arg);
            const char *near = nearest_option(name, opts, nopts);
            if (near)
                return cli_usage_error(cmd, "unknown option '%s' (did you mean %s?)", name, near);
            return cli_usage_error(cmd, "unknown option '%s' (see tessel %s --help)", name, cmd);
        }
        const char *value = NULL;
        if (opts[idx].takes_value) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return cli_usage_error(cmd, "option %s needs a value", opts[idx].name);
        } else if (eq) {
            return cli_usage_error(cmd, "option %s takes no value", opts[idx].name);
        }
        if (push(cmd, out, idx, value))
            return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

const char *cli_value(const cli_args *a, int index)
{
    const char *v = NULL;
    for (int i = 0; i < a->count; i++)
        if (a->option[i] == index)
            v = a->value[i];
    return v;
}

int cli_has(const cli_args *a, int index)
{
    for (int i = 0; i < a->count; i++)
        if (a->option[i] == index)
            return 1;
    return 0;
}

const char *cli_positional(const cli_args *a, int n)
{
    for (int i = 0; i < a->count; i++)
        if (a->option[i] == -1 && n-- == 0)
            return a->value[i];
    return NULL;
}

int cli_positionals(const cli_args *a)
{
    int n = 0;
    for (int i = 0; i < a->count; i++)
        n += a->option[i] == -1;
    return n;
}

int cli_exit_status(int code)
{
    if (code == TESSEL_OK)
        return CLI_EXIT_OK;
    if (code == TESSEL_ENOMEM || code == TESSEL_EWRITE)
        return CLI_EXIT_FAILURE; /* internal failures: memory, writing outputs */
    return CLI_EXIT_USAGE;
}

int cli_report(const tessel_diag *d)
{
    char buf[1400];
    tessel_diag_format(d, buf, sizeof(buf));
    fprintf(stderr, "%s\n", buf);
    return cli_exit_status(d->code ? d->code : TESSEL_EINVAL);
}

void cli_print_warnings(const tessel_diag_list *w)
{
    for (size_t i = 0; w && i < w->count; i++) {
        const tessel_diag *d = &w->items[i];
        if (d->file[0] && d->line && d->column)
            fprintf(stderr, "%s:%llu:%u: warning: %s\n", d->file, (unsigned long long)d->line,
                    (unsigned)d->column, d->message);
        else if (d->file[0] && d->line)
            fprintf(stderr, "%s:%llu: warning: %s\n", d->file, (unsigned long long)d->line,
                    d->message);
        else if (d->file[0])
            fprintf(stderr, "%s: warning: %s\n", d->file, d->message);
        else
            fprintf(stderr, "warning: %s\n", d->message);
    }
}

int cli_parse_u64(const char *cmd, const char *what, const char *text, unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    if (!text[0] || text[0] == '-' || text[0] == ' ')
        return cli_usage_error(cmd, "%s must be a non-negative integer, not '%s'", what, text);
    unsigned long long v = strtoull(text, &end, 10);
    if (*end || errno == ERANGE)
        return cli_usage_error(cmd, "%s must be a non-negative integer, not '%s'", what, text);
    *out = v;
    return CLI_EXIT_OK;
}

int cli_parse_double(const char *cmd, const char *what, const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (!text[0] || *end || errno == ERANGE || !isfinite(v))
        return cli_usage_error(cmd, "%s must be a finite number, not '%s'", what, text);
    *out = v;
    return CLI_EXIT_OK;
}

int cli_parse_shape(const char *cmd, const char *what, const char *text, unsigned long long *out,
                    unsigned max, unsigned *n)
{
    *n = 0;
    const char *p = text;
    for (;;) {
        char *end = NULL;
        if (*p < '0' || *p > '9')
            break;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno == ERANGE || v == 0 || *n == max)
            break;
        out[(*n)++] = v;
        if (*end == '\0')
            return CLI_EXIT_OK;
        if (*end != 'x' && *end != 'X')
            break;
        p = end + 1;
    }
    return cli_usage_error(cmd,
                           "%s must be positive extents joined by 'x' (e.g. 128x128, at most %u "
                           "of them), not '%s'",
                           what, max, text);
}

int cli_output_open(cli_output *o, const char *path)
{
    o->file = NULL;
    o->stream = stdout;
    if (!path || strcmp(path, "-") == 0)
        return CLI_EXIT_OK;
    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_output_prepare(path, NULL, &d) || tessel_outfile_open(path, NULL, &o->file, &d))
        return cli_report(&d);
    o->stream = tessel_outfile_stream(o->file);
    return CLI_EXIT_OK;
}

int cli_output_close(cli_output *o, int ok)
{
    if (!o->file) {
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "tessel: error: writing to standard output failed\n");
            return CLI_EXIT_FAILURE;
        }
        return ok ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
    }
    if (!ok) {
        tessel_outfile_abort(&o->file);
        return CLI_EXIT_FAILURE;
    }
    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_outfile_commit(&o->file, &d))
        return cli_report(&d);
    return CLI_EXIT_OK;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

enum cli_tensor_kind cli_tensor_kind_of(const char *path)
{
    if (ends_with(path, ".tsl"))
        return CLI_TENSOR_CACHE;
    if (ends_with(path, ".mtx"))
        return CLI_TENSOR_MTX;
    if (ends_with(path, ".tns"))
        return CLI_TENSOR_TNS;
    return CLI_TENSOR_UNKNOWN;
}

int cli_write_tensor(const tessel_tensor *t, enum cli_tensor_kind kind,
                     const tessel_cache_source *src, const char *path, tessel_diag *d)
{
    int rc = tessel_output_prepare(path, NULL, d);
    if (rc)
        return rc;
    if (kind == CLI_TENSOR_CACHE)
        return tessel_cache_write(t, src, path, d);
    if (kind == CLI_TENSOR_MTX)
        return tessel_tensor_write_mtx(t, path, d);
    return tessel_tensor_write_tns(t, path, d);
}

int cli_report_list(const char *cmd, tessel_diag_list *errors, int rc)
{
    char buf[1400];
    for (size_t i = 0; i < errors->count; i++) {
        tessel_diag_format(&errors->items[i], buf, sizeof(buf));
        fprintf(stderr, "%s\n", buf);
    }
    size_t n = errors->count + errors->dropped;
    if (errors->dropped)
        fprintf(stderr, "tessel %s: error: %zu more errors not shown (out of memory)\n", cmd,
                errors->dropped);
    if (n == 0) {
        fprintf(stderr, "tessel %s: error: %s\n", cmd, tessel_strerror(rc));
        n = 1;
    }
    fprintf(stderr, "tessel %s: %zu error%s\n", cmd, n, n == 1 ? "" : "s");
    tessel_diag_list_free(errors);
    return cli_exit_status(rc ? rc : TESSEL_EINVAL);
}

char *cli_quoted_set(const char *prefix, const char *value)
{
    size_t vlen = strlen(value), quotes = 0;
    for (size_t i = 0; i < vlen; i++)
        quotes += value[i] == '\'';
    size_t n = strlen(prefix) + vlen + quotes + 3;
    char *s = malloc(n);
    if (!s)
        return NULL;
    char *p = s + sprintf(s, "%s'", prefix);
    for (size_t i = 0; i < vlen; i++) {
        if (value[i] == '\'')
            *p++ = '\'';
        *p++ = value[i];
    }
    *p++ = '\'';
    *p = '\0';
    return s;
}

static int is_name_char(char c, int first)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

int cli_tensor_set(const char *cmd, const char *arg, char **out)
{
    *out = NULL;
    const char *eq = strchr(arg, '=');
    size_t nlen = eq ? (size_t)(eq - arg) : 0;
    int name_ok = nlen > 0 && nlen < 32;
    for (size_t i = 0; name_ok && i < nlen; i++)
        name_ok = is_name_char(arg[i], i == 0);
    if (!eq || !name_ok || !eq[1])
        return cli_usage_error(cmd,
                               "--tensor needs NAME=DATA with NAME a tensor of the einsum and "
                               "DATA a file, another tensor or dense, not '%s'",
                               arg);
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "workload.data.%.*s=", (int)nlen, arg);
    *out = cli_quoted_set(prefix, eq + 1);
    if (!*out) {
        fprintf(stderr, "tessel %s: error: out of memory\n", cmd);
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

int cli_set_arg(const char *cmd, const char *arg, char **out)
{
    *out = NULL;
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return cli_usage_error(cmd, "--set needs PATH=VALUE, not '%s'", arg);
    *out = strdup(arg);
    if (!*out) {
        fprintf(stderr, "tessel %s: error: out of memory\n", cmd);
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

int cli_write_resolved(const tessel_spec *s, FILE *f)
{
    char *yaml = NULL;
    size_t len = 0;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_spec_resolved_yaml(s, NULL, &yaml, &len, &d);
    if (!rc)
        rc = tessel_spec_resolved_check(yaml, len, NULL, &d);
    if (rc) {
        tessel_dealloc(NULL, yaml);
        return cli_report(&d);
    }
    fwrite(yaml, 1, len, f);
    tessel_dealloc(NULL, yaml);
    return CLI_EXIT_OK;
}
