/* cli/commands.h - one entry point per subcommand (cli/cmd_*.c). */
#ifndef CLI_COMMANDS_H
#define CLI_COMMANDS_H

int cmd_demo(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_collective(int argc, char **argv);
int cmd_p2p(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_workload(int argc, char **argv);
int cmd_scale(int argc, char **argv);

#endif
