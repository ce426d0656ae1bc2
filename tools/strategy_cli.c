/* Strategy helpers shared by tessel run and tessel compare. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "strategy_cli.h"

int cli_strategy_set(const char *cmd, const char *name, char **out)
{
    *out = NULL;
    if (tessel_strategy_from_name(name) < 0) {
        const char *names[TESSEL_STRATEGY_COUNT];
        for (unsigned k = 0; k < TESSEL_STRATEGY_COUNT; k++)
            names[k] = tessel_strategy_name((tessel_strategy_kind)k);
        const char *near = tessel_nearest_word(name, names, TESSEL_STRATEGY_COUNT);
        if (near)
            return cli_usage_error(cmd, "unknown strategy '%s' (did you mean '%s'?)", name, near);
        char list[160]; /* "fixed, conservative, ... or d2t2", from strategy.h */
        size_t len = 0;
        list[0] = '\0';
        for (unsigned k = 0; k < TESSEL_STRATEGY_COUNT && len < sizeof(list); k++)
            len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
                                    k == 0 ? "" : k + 1 == TESSEL_STRATEGY_COUNT ? " or " : ", ",
                                    names[k]);
        return cli_usage_error(cmd, "unknown strategy '%s' (%s)", name, list);
    }
    *out = cli_quoted_set("mapping.strategy=", name);
    if (!*out) {
        fprintf(stderr, "tessel %s: error: out of memory\n", cmd);
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

void cli_print_choice(FILE *f, const tessel_strategy_choice *c, int no_timing)
{
    fprintf(f, "strategy %s: %s\n", tessel_strategy_name(c->kind), c->shape);
    if (!isnan(c->buffer_utilization))
        fprintf(f, "  buffer utilization %.1f %%, overbooked tiles %.2f %%",
                100 * c->buffer_utilization, 100 * c->overbooking_rate);
    if (c->overbooking_target > 0)
        fprintf(f, " (target %.2f %%, %llu tiles sampled)", 100 * c->overbooking_target,
                (unsigned long long)c->sampled_tiles);
    if (!isnan(c->buffer_utilization))
        fputc('\n', f);
    if (c->predicted_dram_bytes > 0)
        fprintf(f, "  stat-predicted DRAM bytes of the chosen shape %.0f\n",
                c->predicted_dram_bytes);
    if (!no_timing)
        fprintf(f, "  decided in %.3f s (%llu candidate shapes)\n", c->seconds,
                (unsigned long long)c->candidates);
}

int cli_overrides(const char *cmd, const cli_args *args, int opt_set, int opt_tensor,
                  int opt_strategy, char ***sets, size_t *n)
{
    *n = 0;
    *sets = calloc((size_t)args->count + 1, sizeof(**sets));
    if (!*sets) {
        fprintf(stderr, "tessel %s: error: out of memory\n", cmd);
        return CLI_EXIT_FAILURE;
    }
    for (int i = 0; i < args->count; i++) {
        char *s = NULL;
        int o = args->option[i], rc;
        if (o == opt_set)
            rc = cli_set_arg(cmd, args->value[i], &s);
        else if (o == opt_tensor)
            rc = cli_tensor_set(cmd, args->value[i], &s);
        else if (opt_strategy >= 0 && o == opt_strategy)
            rc = cli_strategy_set(cmd, args->value[i], &s);
        else
            continue;
        if (rc)
            return rc;
        (*sets)[(*n)++] = s;
    }
    return CLI_EXIT_OK;
}
