/* tessel convert -- being written (see issue 3). */
#include "cli.h"
#include "commands.h"

int cmd_convert(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_usage_error("convert", "not implemented yet");
}
