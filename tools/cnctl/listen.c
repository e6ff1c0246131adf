/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * listen.c - `cnctl listen GROUP...`: join multicast groups and print every
 * message that arrives (id, seq, ack, len, flags, data), one line each.
 * Overruns (messages lost) are reported on stderr as they happen and summed
 * up at exit, as `cnctl proc` does.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include <libcn.h>

#include "common.h"

#define LISTEN_MAX_GROUPS 32
#define LISTEN_MAX_IDS	  16

struct listen_opts {
	struct cnctl_opts common;
	uint32_t groups[LISTEN_MAX_GROUPS];
	unsigned int ngroups;
	uint32_t ids[LISTEN_MAX_IDS][2]; /* idx, val */
	unsigned int nids;
	int hex;
};

/* clang-format off */
static void listen_usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl listen GROUP... [--id ID]... [--count N]\n"
		"                    [--timeout DURATION] [--hex] [--rcvbuf BYTES]\n"
		"                    [--unit N | --kmod] [--json] [--quiet]\n"
		"\n"
		"Join the multicast groups GROUP... (group numbers: a connector user's\n"
		"group is its idx, e.g. 1 for the proc connector) and print every message\n"
		"that arrives from the kernel, one line each: id (IDX.VAL in hex), seq,\n"
		"ack, len, flags, sender port, group, and the payload as a quoted string\n"
		"when it is text, else as hex.\n"
		"\n"
		"Options:\n"
		"  -i, --id ID         only messages with this id (IDX.VAL; repeatable)\n"
		"  -n, --count N       exit after printing N messages\n"
		"  -t, --timeout DURATION\n"
		"                      exit after DURATION (500ms, 5s, 2m, 1h, 1d; a bare\n"
		"                      number is seconds; 1ms to 24d). With --count: exit\n"
		"                      5 if fewer than N messages were printed by then\n"
		"  -x, --hex           payload always as hex\n"
		"  -r, --rcvbuf BYTES  socket receive buffer (suffix K, M, G allowed)\n"
		"  -u, --unit N        netlink unit (default: NETLINK_CONNECTOR, 11)\n"
		"  -k, --kmod          use the unit kmod (cnbus.ko) reports\n"
		"  -j, --json          one JSON object per line: idx, val, seq, ack, len,\n"
		"                      flags, port, group, hex (payload bytes), text (when\n"
		"                      the payload is text)\n"
		"  -q, --quiet         no 'listening' line and no summary on stderr\n"
		"  -h, --help          this help\n"
		"      --version       cnctl's version\n"
		"\n"
		"The proc connector (group 1) only sends events while some socket has\n"
		"subscribed with PROC_CN_MCAST_LISTEN (e.g. a running 'cnctl proc').\n"
		"Overruns are reported on stderr (\"cnctl: receive buffer overrun,\n"
		"messages lost\") and at exit a summary gives messages printed,\n"
		"overruns (reports) and how many messages the kernel dropped for the\n"
		"socket in all (an overrun is reported once for any number).\n"
		"\n"
		"Exit status: 0 ok (also after SIGINT/SIGTERM, --count or --timeout),\n"
		"1 runtime error, 2 usage error (also a group the unit does not have),\n"
		"3 permission denied, 4 no such netlink unit / connector, or kmod not\n"
		"loaded (--kmod), 5 --timeout ran out before --count messages.\n");
}
/* clang-format on */

static int parse_opts(int argc, char **argv, struct listen_opts *o)
{
	struct cnctl_getopt g;
	int c, r;

	cnctl_getopt_init(&g, CNCTL_CMD_LISTEN);
	while ((c = cnctl_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'i':
			if (o->nids >= LISTEN_MAX_IDS)
				return cnctl_usage_err("listen", "more than %d --id filters",
						       LISTEN_MAX_IDS);
			if (cnctl_parse_id(optarg, &o->ids[o->nids][0], &o->ids[o->nids][1]) < 0)
				return cnctl_usage_err("listen",
						       "invalid --id value '%s': expected IDX.VAL "
						       "(decimal or 0x hex)",
						       optarg);
			o->nids++;
			break;
		case 'x':
			o->hex = 1;
			break;
		default:
			r = cnctl_common_opt(c, argv, &o->common);
			if (r)
				return r;
		}
	}
	if (optind >= argc)
		return cnctl_usage_err("listen", "missing GROUP (a group number, e.g. 1)");
	for (; optind < argc; optind++) {
		if (o->ngroups >= LISTEN_MAX_GROUPS)
			return cnctl_usage_err("listen", "more than %d groups", LISTEN_MAX_GROUPS);
		if (cnctl_parse_u32(argv[optind], &o->groups[o->ngroups]) < 0 ||
		    o->groups[o->ngroups] == 0)
			return cnctl_usage_err("listen",
					       "invalid GROUP '%s': expected a group number >= 1",
					       argv[optind]);
		o->ngroups++;
	}
	return cnctl_check_unit_kmod(&o->common);
}

static int wanted(const struct listen_opts *o, const struct cn_msg *msg)
{
	if (o->nids == 0)
		return 1;
	for (unsigned int i = 0; i < o->nids; i++)
		if (msg->id.idx == o->ids[i][0] && msg->id.val == o->ids[i][1])
			return 1;
	return 0;
}

/* cnctl_recv_loop's print: the message unless --id filters it out. */
static int print_wanted(const struct cn_message *m, void *ctx)
{
	const struct listen_opts *o = ctx;

	if (!wanted(o, m->msg))
		return 0;
	cnctl_print_message(stdout, m, o->common.json, o->hex, NULL);
	return 1;
}

static int join_groups(struct cn_sock *s, const struct listen_opts *o)
{
	for (unsigned int i = 0; i < o->ngroups; i++) {
		int r = cn_join(s, o->groups[i]);

		if (r == -EINVAL)
			return cnctl_usage_err("listen",
					       "GROUP '%u': netlink unit %d has no such "
					       "group",
					       o->groups[i], cn_unit(s));
		if (r < 0) {
			char what[48];

			snprintf(what, sizeof(what), "listen: joining group %u", o->groups[i]);
			return cnctl_unit_err(what, cn_unit(s), -r);
		}
	}
	return 0;
}

int cnctl_listen(int argc, char **argv)
{
	struct listen_opts o = {
		.common = { .cmd = "listen", .usage = listen_usage, .unit = -1, .timeout = -1 },
	};
	struct cnctl_recv_loop rl = {
		.o = &o.common, .lost = "messages", .print = print_wanted, .ctx = &o
	};
	int r;

	r = parse_opts(argc, argv, &o);
	if (r)
		return r < 0 ? cnctl_finish_output() : r;
	r = cnctl_install_signals();
	if (r)
		return r;
	r = cnctl_open(&o.common, CNCTL_RECV_BATCH, &rl.s);
	if (r)
		return r;
	r = join_groups(rl.s, &o);
	if (r) {
		cn_close(rl.s);
		return r;
	}
	if (!o.common.quiet) {
		fprintf(stderr, "cnctl: listening on unit %d, group%s", cn_unit(rl.s),
			o.ngroups > 1 ? "s" : "");
		for (unsigned int i = 0; i < o.ngroups; i++)
			fprintf(stderr, "%s%u", i ? "," : " ", o.groups[i]);
		fputc('\n', stderr);
	}

	r = cnctl_recv_loop(&rl);

	if (!o.common.quiet) {
		struct cn_stats st = { 0 };
		uint64_t drops = 0;

		if (cn_stats(rl.s, &st) == 0 && st.overruns > rl.overruns)
			rl.overruns = st.overruns;
		/* An overrun is one report of any number of lost messages:
		 * the kernel's own count says how many. */
		if (cn_drops(rl.s, &drops) == 0)
			fprintf(stderr,
				"cnctl: %llu messages printed, %llu overruns, %llu messages "
				"dropped by the kernel\n",
				(unsigned long long)rl.printed, (unsigned long long)rl.overruns,
				(unsigned long long)drops);
		else
			fprintf(stderr, "cnctl: %llu messages printed, %llu overruns\n",
				(unsigned long long)rl.printed, (unsigned long long)rl.overruns);
	}
	if (r == CNCTL_EXIT_TIMEOUT)
		cnctl_err("listen: %llu of %llu messages within %d ms",
			  (unsigned long long)rl.printed, (unsigned long long)o.common.count,
			  o.common.timeout);
	cn_close(rl.s);
	return r;
}
