/* The tessel subcommands; each takes the arguments after its name. */
#ifndef TESSEL_TOOLS_COMMANDS_H
#define TESSEL_TOOLS_COMMANDS_H

int cmd_stats(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_map(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_spec(int argc, char **argv);

#endif
