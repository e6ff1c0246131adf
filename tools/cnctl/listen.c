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
#include <string.h>

#include <libcn.h>

#include "common.h"

#define LISTEN_BATCH	  32
#define LISTEN_MAX_GROUPS 32
#define LISTEN_MAX_IDS	  16
#define LISTEN_RCVBUF_MAX (1ull << 30)

struct listen_opts {
	uint32_t groups[LISTEN_MAX_GROUPS];
	unsigned int ngroups;
	uint32_t ids[LISTEN_MAX_IDS][2]; /* idx, val */
	unsigned int nids;
	uint64_t count; /* 0: no limit */
	int timeout;	/* ms, < 0: none */
	int unit, kmod, json, hex, quiet, rcvbuf;
};

/* clang-format off */
static void listen_usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl listen GROUP... [--id ID]... [--count N] [--timeout MS]\n"
		"                    [--hex] [--rcvbuf BYTES] [--unit N | --kmod] [--json]\n"
		"                    [--quiet]\n"
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
		"  -t, --timeout MS    exit after MS milliseconds (with --count: exit 5\n"
		"                      if fewer than N messages were printed by then)\n"
		"  -x, --hex           payload always as hex\n"
		"  -r, --rcvbuf BYTES  socket receive buffer (suffix K, M, G allowed)\n"
		"  -u, --unit N        netlink unit (default: NETLINK_CONNECTOR, 11)\n"
		"  -k, --kmod          use the unit kmod (cnbus.ko) reports\n"
		"  -j, --json          one JSON object per line: idx, val, seq, ack, len,\n"
		"                      flags, port, group, hex (payload bytes), text (when\n"
		"                      the payload is text)\n"
		"  -q, --quiet         no 'listening' line and no summary on stderr\n"
		"  -h, --help          this help\n"
		"\n"
		"The proc connector (group 1) only sends events while some socket has\n"
		"subscribed with PROC_CN_MCAST_LISTEN (e.g. a running 'cnctl proc').\n"
		"Overruns are reported on stderr (\"cnctl: receive buffer overrun,\n"
		"messages lost\") and at exit a summary gives messages printed and\n"
		"overruns.\n"
		"\n"
		"Exit status: 0 ok (also after SIGINT/SIGTERM, --count or --timeout),\n"
		"1 runtime error, 2 usage error (also a group the unit does not have),\n"
		"3 permission denied, 4 no such netlink unit / connector, or kmod not\n"
		"loaded (--kmod), 5 --timeout ran out before --count messages.\n");
}
/* clang-format on */

static int parse_opts(int argc, char **argv, struct listen_opts *o)
{
	static const struct option longopts[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "hex", no_argument, NULL, 'x' },
		{ "rcvbuf", required_argument, NULL, 'r' },
		{ "unit", required_argument, NULL, 'u' },
		{ "kmod", no_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":i:n:t:xr:u:kjqh", longopts, NULL)) != -1) {
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
		case 'n':
			if (cnctl_parse_uint(optarg, 1, UINT64_MAX, &v) < 0)
				return cnctl_usage_err("listen",
						       "invalid --count value '%s': expected a "
						       "positive integer",
						       optarg);
			o->count = v;
			break;
		case 't':
			if (cnctl_parse_timeout("listen", optarg, &o->timeout))
				return CNCTL_EXIT_USAGE;
			break;
		case 'x':
			o->hex = 1;
			break;
		case 'r':
			if (cnctl_parse_size(optarg, 1, LISTEN_RCVBUF_MAX, &v) < 0)
				return cnctl_usage_err(
				    "listen",
				    "invalid --rcvbuf value '%s': expected bytes "
				    "from 1 to 1G (suffix K, M or G allowed)",
				    optarg);
			o->rcvbuf = (int)v;
			break;
		case 'u':
			if (cnctl_parse_unit("listen", optarg, &o->unit))
				return CNCTL_EXIT_USAGE;
			break;
		case 'k':
			o->kmod = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			listen_usage(stdout);
			return -1;
		default:
			return cnctl_opt_err("listen", c, argv);
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
	if (o->unit >= 0 && o->kmod)
		return cnctl_usage_err("listen", "give --unit or --kmod, not both");
	return 0;
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

static int flush_stdout(void)
{
	if (fflush(stdout) == 0)
		return 0;
	if (errno == EPIPE)
		return 1; /* the reader went away: stop quietly */
	cnctl_err("write to stdout: %s", strerror(errno));
	return -1;
}

int cnctl_listen(int argc, char **argv)
{
	struct listen_opts o = { .unit = -1, .timeout = -1 };
	struct cn_open_opts oo = { .sz = sizeof(oo), .batch = LISTEN_BATCH };
	struct cn_message msgs[LISTEN_BATCH];
	uint64_t printed = 0, overruns = 0;
	int64_t deadline = 0;
	struct cn_sock *s;
	int r, ret = CNCTL_EXIT_OK;

	r = parse_opts(argc, argv, &o);
	if (r)
		return r < 0 ? CNCTL_EXIT_OK : r;
	r = cnctl_install_signals();
	if (r < 0) {
		cnctl_err("sigaction: %s", strerror(-r));
		return CNCTL_EXIT_ERROR;
	}
	oo.rcvbuf = o.rcvbuf;
	r = cnctl_open("listen", o.unit, o.kmod, &oo, &s);
	if (r)
		return r;
	if (o.rcvbuf) {
		r = cn_set_rcvbuf(s, o.rcvbuf);
		if (r >= 0 && r / 2 < o.rcvbuf)
			cnctl_err("warning: receive buffer capped at %d bytes (net.core.rmem_max)",
				  r / 2);
	}
	for (unsigned int i = 0; i < o.ngroups; i++) {
		r = cn_join(s, o.groups[i]);
		if (r == -EINVAL) {
			int unit = cn_unit(s);

			cn_close(s);
			return cnctl_usage_err("listen",
					       "GROUP '%u': netlink unit %d has no such "
					       "group",
					       o.groups[i], unit);
		}
		if (r < 0) {
			char what[48];

			snprintf(what, sizeof(what), "listen: joining group %u", o.groups[i]);
			cn_close(s);
			return cnctl_connector_err(what, -r);
		}
	}
	if (!o.quiet) {
		fprintf(stderr, "cnctl: listening on unit %d, group%s", cn_unit(s),
			o.ngroups > 1 ? "s" : "");
		for (unsigned int i = 0; i < o.ngroups; i++)
			fprintf(stderr, "%s%u", i ? "," : " ", o.groups[i]);
		fputc('\n', stderr);
	}
	if (o.timeout >= 0)
		deadline = cnctl_now_ms() + o.timeout;

	while (!cnctl_stop) {
		int n = cn_recv_batch(s, msgs, LISTEN_BATCH, CN_RECV_DONTWAIT);

		if (n > 0) {
			for (int i = 0; i < n && !(o.count && printed >= o.count); i++) {
				if (!wanted(&o, msgs[i].msg))
					continue;
				cnctl_print_message(stdout, &msgs[i], o.json, o.hex, NULL);
				printed++;
			}
			if (o.count && printed >= o.count)
				break;
			continue;
		}
		if (n == -EAGAIN) {
			int wait = -1;

			r = flush_stdout();
			if (r) {
				ret = r < 0 ? CNCTL_EXIT_ERROR : CNCTL_EXIT_OK;
				goto out;
			}
			if (o.timeout >= 0) {
				int64_t left = deadline - cnctl_now_ms();

				if (left <= 0)
					break;
				wait = (int)left;
			}
			r = cnctl_wait_readable(cn_fd(s), wait);
			if (r < 0) {
				cnctl_err("poll: %s", strerror(-r));
				ret = CNCTL_EXIT_ERROR;
				goto out;
			}
			continue;
		}
		switch (n) {
		case -EINTR:
			break;
		case -ENOBUFS:
			overruns++;
			fputs("cnctl: receive buffer overrun, messages lost\n", stderr);
			break;
		case -EBADMSG:
		case -EMSGSIZE:
			cnctl_err("malformed datagram skipped: %s", strerror(-n));
			break;
		default:
			cnctl_err("receive: %s", strerror(-n));
			ret = CNCTL_EXIT_ERROR;
			goto out;
		}
	}
	if (flush_stdout() < 0)
		ret = CNCTL_EXIT_ERROR;
	else if (o.count && printed < o.count && o.timeout >= 0 && !cnctl_stop)
		ret = CNCTL_EXIT_TIMEOUT;
out:
	if (!o.quiet) {
		struct cn_stats st = { 0 };

		if (cn_stats(s, &st) == 0 && st.overruns > overruns)
			overruns = st.overruns;
		fprintf(stderr, "cnctl: %llu messages printed, %llu overruns\n",
			(unsigned long long)printed, (unsigned long long)overruns);
	}
	if (ret == CNCTL_EXIT_TIMEOUT)
		cnctl_err("listen: %llu of %llu messages within %d ms", (unsigned long long)printed,
			  (unsigned long long)o.count, o.timeout);
	cn_close(s);
	return ret;
}
