/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * main.c - cnctl, the libcn command-line tool: finds the subcommand in the
 * table below and runs it. A new subcommand is one file with a handler
 * `int cnctl_NAME(int argc, char **argv)` (argv[0] is its name; it parses its
 * own options, prints its own --help, returns an exit code) and one line here.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"

static const struct cnctl_cmd commands[] = {
	{ "proc", cnctl_proc, "print live process events (fork, exec, exit, ...) from the kernel" },
	{ "send", cnctl_send, "send one message (ID as IDX.VAL; text, hex or file payload)" },
	{ "listen", cnctl_listen, "join groups and print every message that arrives" },
	{ "request", cnctl_request, "send a message and print its reply (seq/ack genealogy)" },
	{ "notify", cnctl_notify, "print kmod's add/remove notifications for id ranges" },
	{ "kmod", cnctl_kmod, "show kmod's (cnbus.ko) unit, callbacks and counters" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl COMMAND [OPTIONS]\n"
		"       cnctl COMMAND --help | --version\n"
		"       cnctl --help | --version\n"
		"\n"
		"Talk to the Linux kernel connector (NETLINK_CONNECTOR) and to kmod\n"
		"(cnbus.ko, on its own netlink unit) through libcn.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f,
		"\n"
		"Exit status:\n"
		"  0  success (also when stopped by SIGINT, SIGTERM or a count limit)\n"
		"  1  runtime error\n"
		"  2  usage error (bad command, option or argument)\n"
		"  3  permission denied by the kernel\n"
		"  4  the kernel has no such connector (or netlink unit), or kmod is\n"
		"     not loaded (kmod, notify, --kmod)\n"
		"  5  timeout: no reply (request), or fewer messages than --count\n"
		"     within --timeout (listen, notify)\n"
		"\n"
		"Message commands use NETLINK_CONNECTOR (11) unless given --unit N, or\n"
		"--kmod for the unit kmod reports; notify uses kmod's unit by default.\n"
		"See cnctl(1).\n");
}
/* clang-format on */

static const struct cnctl_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct cnctl_cmd *cmd;
	const char *name;

	cnctl_reserve_stdio();
	if (argc < 2) {
		cnctl_err("no command given (try 'cnctl --help')");
		return CNCTL_EXIT_USAGE;
	}
	name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
		usage(stdout);
		return cnctl_finish_output();
	}
	if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0) {
		cnctl_print_version(stdout);
		return cnctl_finish_output();
	}
	if (strcmp(name, "help") == 0 && argc >= 3) {
		/* `cnctl help proc` is `cnctl proc --help`. */
		char help[] = "--help";
		char *sub[] = { argv[2], help, NULL };

		cmd = find_command(argv[2]);
		if (!cmd) {
			cnctl_err("unknown command '%s' (try 'cnctl --help')", argv[2]);
			return CNCTL_EXIT_USAGE;
		}
		return cmd->fn(2, sub);
	}
	if (name[0] == '-') {
		cnctl_err("unknown option '%s' (try 'cnctl --help')", name);
		return CNCTL_EXIT_USAGE;
	}
	cmd = find_command(name);
	if (!cmd) {
		cnctl_err("unknown command '%s' (try 'cnctl --help')", name);
		return CNCTL_EXIT_USAGE;
	}
	return cmd->fn(argc - 1, argv + 1);
}
