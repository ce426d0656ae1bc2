/* tessel map: placeholder while it is written (this session). */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_map(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tessel map: error: not built yet\n");
    return CLI_EXIT_FAILURE;
}
