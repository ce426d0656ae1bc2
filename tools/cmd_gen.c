/* tessel gen -- being written (see issue 3). */
#include "cli.h"
#include "commands.h"

int cmd_gen(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_usage_error("gen", "not implemented yet");
}
