/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * common_opts.c - the options several cnctl subcommands share (--unit, --kmod,
 * --json, --quiet, --count, --timeout, --rcvbuf, --help, --version): one meaning and
 * one error message each, wherever they appear.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#ifndef CNCTL_VERSION
#define CNCTL_VERSION "unknown"
#endif

#define CNCTL_RCVBUF_MAX (1ull << 30)

/* A getopt_long error (c is ':' or '?'): print it, return CNCTL_EXIT_USAGE. */
static int opt_err(const char *cmd, int c, char **argv)
{
	if (c == ':')
		return cnctl_usage_err(cmd, "option '%s' needs a value", argv[optind - 1]);
	/* getopt_long sets optopt to a known long option's letter when it was
	 * given a value it does not take ("--hex=ab" for listen's --hex). */
	if (optopt && strncmp(argv[optind - 1], "--", 2) == 0)
		return cnctl_usage_err(cmd, "option '%.*s' takes no value",
				       (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
	if (optopt)
		return cnctl_usage_err(cmd, "unknown option '-%c'", optopt);
	return cnctl_usage_err(cmd, "unknown option '%s'", argv[optind - 1]);
}

int cnctl_common_opt(int c, char **argv, struct cnctl_opts *o)
{
	uint64_t v;

	switch (c) {
	case 'u':
		/* MAX_LINKS is 32: netlink units are 0..31. */
		if (cnctl_parse_uint(optarg, 0, 31, &v) < 0)
			return cnctl_usage_err(
			    o->cmd, "invalid --unit value '%s': expected a netlink unit 0..31",
			    optarg);
		o->unit = (int)v;
		return 0;
	case 'k':
		o->kmod = 1;
		return 0;
	case 'j':
		o->json = 1;
		return 0;
	case 'q':
		o->quiet = 1;
		return 0;
	case 'n':
		if (cnctl_parse_uint(optarg, 1, UINT64_MAX, &v) < 0)
			return cnctl_usage_err(
			    o->cmd, "invalid --count value '%s': expected a positive integer",
			    optarg);
		o->count = v;
		return 0;
	case 't': {
		int64_t ms;

		if (cnctl_parse_timeout(o->cmd, optarg, &ms))
			return CNCTL_EXIT_USAGE;
		o->timeout = (int)ms; /* at most CNCTL_DURATION_MAX_MS */
		return 0;
	}
	case 'r':
		if (cnctl_parse_size(optarg, 1, CNCTL_RCVBUF_MAX, &v) < 0)
			return cnctl_usage_err(o->cmd,
					       "invalid --rcvbuf value '%s': expected bytes "
					       "from 1 to 1G (suffix K, M or G allowed)",
					       optarg);
		o->rcvbuf = (int)v;
		return 0;
	case 'h':
		o->usage(stdout);
		return CNCTL_HELP_SHOWN;
	case CNCTL_OPT_VERSION:
		cnctl_print_version(stdout);
		return CNCTL_HELP_SHOWN;
	default:
		return opt_err(o->cmd, c, argv);
	}
}

int cnctl_parse_timeout(const char *cmd, const char *arg, int64_t *ms)
{
	if (cnctl_parse_duration(arg, ms) == 0)
		return 0;
	return cnctl_usage_err(cmd,
			       "invalid --timeout value '%s': expected a duration from 1ms to 24d, "
			       "a number with a unit ms, s, m, h or d (a bare number is seconds), "
			       "e.g. 500ms, 5, 1.5m",
			       arg);
}

void cnctl_print_version(FILE *f)
{
	fprintf(f, "cnctl (libcn) %s\n", CNCTL_VERSION);
}

int cnctl_check_unit_kmod(const struct cnctl_opts *o)
{
	if (o->unit >= 0 && o->kmod)
		return cnctl_usage_err(o->cmd, "give --unit or --kmod, not both");
	return 0;
}
