/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * option_table.c - every option of every cnctl subcommand, in one table. Each
 * row says which subcommands take it, so `cnctl notify --join` is still an
 * unknown option while --json, --unit, --timeout... are spelt once. A
 * subcommand's getopt_long tables (short and long) are derived from it.
 */
#include <getopt.h>
#include <string.h>

#include "common.h"

#define PROC	(1u << CNCTL_CMD_PROC)
#define SEND	(1u << CNCTL_CMD_SEND)
#define LISTEN	(1u << CNCTL_CMD_LISTEN)
#define REQUEST (1u << CNCTL_CMD_REQUEST)
#define NOTIFY	(1u << CNCTL_CMD_NOTIFY)
#define KMOD	(1u << CNCTL_CMD_KMOD)
#define ALL	(PROC | SEND | LISTEN | REQUEST | NOTIFY | KMOD)

struct cnctl_option {
	const char *name; /* long name; NULL: a short option only */
	int has_arg;	  /* no_argument or required_argument */
	int letter;	  /* short option, and what getopt_long returns */
	unsigned int cmds;
};

/* Where one long name means two things, the rows say which subcommand
 * takes which (--hex: the payload of send/request, hex output of listen).
 * --timeout is one duration everywhere (cnctl_parse_duration); proc also
 * takes it as -D, forkstat's letter for it. A letter above 255 is a long
 * option only. */
static const struct cnctl_option options[] = {
	{ "ack", required_argument, 'a', SEND | REQUEST },
	{ "color", required_argument, 'c', PROC },
	{ "colour", required_argument, 'c', PROC },
	{ "count", required_argument, 'n', PROC | LISTEN | NOTIFY },
	{ "events", required_argument, 'e', PROC },
	{ "file", required_argument, 'f', SEND | REQUEST },
	{ "group", required_argument, 'g', NOTIFY },
	{ "help", no_argument, 'h', ALL },
	{ "hex", required_argument, 'x', SEND | REQUEST },
	{ "hex", no_argument, 'x', LISTEN },
	{ "id", required_argument, 'i', LISTEN },
	{ "idx", required_argument, 'I', NOTIFY },
	{ "join", required_argument, 'g', REQUEST },
	{ "json", no_argument, 'j', ALL },
	{ "kmod", no_argument, 'k', SEND | LISTEN | REQUEST },
	{ "match", required_argument, 'm', REQUEST },
	{ "no-join", no_argument, 'J', REQUEST },
	{ "quiet", no_argument, 'q', PROC | LISTEN | NOTIFY },
	{ "rcvbuf", required_argument, 'r', PROC | LISTEN | REQUEST },
	{ "seq", required_argument, 's', SEND | REQUEST },
	{ "stats", no_argument, 'S', PROC },
	{ "source", required_argument, 'O', PROC },
	{ "time", required_argument, 'T', PROC },
	{ NULL, required_argument, 'D', PROC },
	{ "timeout", required_argument, 't', PROC | LISTEN | REQUEST | NOTIFY },
	{ "unit", required_argument, 'u', SEND | LISTEN | REQUEST | NOTIFY },
	{ "val", required_argument, 'V', NOTIFY },
	/* cnctl proc's filters and columns (proc_filter.c) */
	{ "pid", required_argument, 'p', PROC },
	{ "tree", no_argument, 'P', PROC },
	{ "pgrp", required_argument, 'g', PROC },
	{ "uid", required_argument, 'U', PROC },
	{ "user", required_argument, 'U', PROC },
	{ "comm", required_argument, 'C', PROC },
	{ "no-threads", no_argument, 'H', PROC },
	{ "threads", no_argument, 'W', PROC },
	{ "extra", no_argument, 'x', PROC },
	{ "prompt", no_argument, 'L', PROC },
	/* cnctl proc's outputs for a service (proc_journal.c, proc_metrics.c) */
	{ "journal", no_argument, CNCTL_OPT_JOURNAL, PROC },
	{ "metrics", required_argument, CNCTL_OPT_METRICS, PROC },
	{ "ecs", no_argument, CNCTL_OPT_ECS, PROC },
	{ "version", no_argument, CNCTL_OPT_VERSION, ALL },
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

_Static_assert(N_OPTIONS < CNCTL_MAX_OPTIONS, "struct cnctl_getopt's tables are too small");

void cnctl_getopt_init(struct cnctl_getopt *g, enum cnctl_cmd_id cmd)
{
	size_t n = 0, k = 0, i;

	/* ':' first: getopt_long returns ':' for a missing value, '?' for an
	 * unknown option, and prints nothing (cnctl_common_opt does). */
	g->shortopts[k++] = ':';
	for (i = 0; i < N_OPTIONS; i++) {
		const struct cnctl_option *o = &options[i];

		if (!(o->cmds & (1u << cmd)))
			continue;
		if (o->name)
			g->longopts[n++] = (struct option){ o->name, o->has_arg, NULL, o->letter };
		if (o->letter <= 0xff && !memchr(g->shortopts, o->letter, k)) {
			g->shortopts[k++] = (char)o->letter;
			if (o->has_arg == required_argument)
				g->shortopts[k++] = ':';
		}
	}
	g->shortopts[k] = '\0';
	g->longopts[n] = (struct option){ NULL, 0, NULL, 0 };
	opterr = 0;
	optind = 1;
}

int cnctl_getopt(struct cnctl_getopt *g, int argc, char **argv)
{
	return getopt_long(argc, argv, g->shortopts, g->longopts, NULL);
}
