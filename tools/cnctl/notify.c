/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * notify.c - `cnctl notify`: ask kmod (cnbus.ko) for add/remove notifications
 * of callbacks in idx and val ranges (the {-1,-1} control message built by
 * cn_notify_build), print each notification, and remove the request again
 * on exit (cn_notify_build_remove), also after SIGINT/SIGTERM.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <libcn.h>

#include "common.h"

#define NOTIFY_BATCH	  32
#define NOTIFY_MAX_RANGES 16 /* per kind (idx, val) */

struct notify_opts {
	struct cn_range idx[NOTIFY_MAX_RANGES], val[NOTIFY_MAX_RANGES];
	unsigned int nidx, nval;
	uint32_t group;
	uint64_t count; /* 0: no limit */
	int timeout;	/* ms, < 0: none */
	int unit, json, quiet;
};

/* clang-format off */
static void notify_usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl notify --idx FIRST[:RANGE]... --val FIRST[:RANGE]... --group G\n"
		"                    [--count N] [--timeout MS] [--unit N] [--json] [--quiet]\n"
		"\n"
		"Ask kmod (cnbus.ko) to report when a callback whose idx lies in one of\n"
		"the --idx ranges and whose val lies in one of the --val ranges is\n"
		"registered (added) or removed, join group G where those reports go, and\n"
		"print each one: \"added 0x123.0x456\" / \"removed 0x123.0x456\". The\n"
		"request is removed again when cnctl exits (--count, --timeout, SIGINT,\n"
		"SIGTERM). Needs CAP_NET_ADMIN; kmod bounds the number of requests.\n"
		"\n"
		"Options:\n"
		"  -I, --idx FIRST[:RANGE]  idx range [FIRST, FIRST+RANGE) (RANGE default 1;\n"
		"                           repeatable; decimal or 0x hex)\n"
		"  -V, --val FIRST[:RANGE]  val range, as --idx\n"
		"  -g, --group G            multicast group for the notifications (>= 1)\n"
		"  -n, --count N            exit after printing N notifications\n"
		"  -t, --timeout MS         exit after MS milliseconds (with --count: exit 5\n"
		"                           if fewer than N arrived by then)\n"
		"  -u, --unit N             netlink unit (default: the unit kmod reports)\n"
		"  -j, --json               one JSON object per line: event (\"added\" or\n"
		"                           \"removed\"), idx, val\n"
		"  -q, --quiet              no 'subscribed' line and no summary on stderr\n"
		"  -h, --help               this help\n"
		"\n"
		"Exit status: 0 ok (also after SIGINT/SIGTERM, --count or --timeout),\n"
		"1 runtime error (also: kmod refused the request as malformed or because\n"
		"its table is full), 2 usage error, 3 permission denied (no CAP_NET_ADMIN),\n"
		"4 kmod not loaded or no such netlink unit, 5 --timeout ran out before\n"
		"--count notifications.\n");
}
/* clang-format on */

static int add_range(const char *opt, const char *arg, struct cn_range *r, unsigned int *n)
{
	if (*n >= NOTIFY_MAX_RANGES)
		return cnctl_usage_err("notify", "more than %d %s ranges", NOTIFY_MAX_RANGES, opt);
	if (cnctl_parse_range(arg, &r[*n].first, &r[*n].range) < 0)
		return cnctl_usage_err("notify",
				       "invalid %s value '%s': expected FIRST[:RANGE] (RANGE >= 1, "
				       "decimal or 0x hex)",
				       opt, arg);
	(*n)++;
	return 0;
}

static int parse_opts(int argc, char **argv, struct notify_opts *o)
{
	static const struct option longopts[] = {
		{ "idx", required_argument, NULL, 'I' },
		{ "val", required_argument, NULL, 'V' },
		{ "group", required_argument, NULL, 'g' },
		{ "count", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "unit", required_argument, NULL, 'u' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int have_group = 0, c, r;
	uint64_t v;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":I:V:g:n:t:u:jqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'I':
			r = add_range("--idx", optarg, o->idx, &o->nidx);
			if (r)
				return r;
			break;
		case 'V':
			r = add_range("--val", optarg, o->val, &o->nval);
			if (r)
				return r;
			break;
		case 'g':
			if (cnctl_parse_u32(optarg, &o->group) < 0 || o->group == 0)
				return cnctl_usage_err("notify",
						       "invalid --group value '%s': "
						       "expected a group number >= 1",
						       optarg);
			have_group = 1;
			break;
		case 'n':
			if (cnctl_parse_uint(optarg, 1, UINT64_MAX, &v) < 0)
				return cnctl_usage_err("notify",
						       "invalid --count value '%s': expected a "
						       "positive integer",
						       optarg);
			o->count = v;
			break;
		case 't':
			if (cnctl_parse_timeout("notify", optarg, &o->timeout))
				return CNCTL_EXIT_USAGE;
			break;
		case 'u':
			if (cnctl_parse_unit("notify", optarg, &o->unit))
				return CNCTL_EXIT_USAGE;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			notify_usage(stdout);
			return -1;
		default:
			return cnctl_opt_err("notify", c, argv);
		}
	}
	if (optind < argc)
		return cnctl_usage_err("notify", "unexpected argument '%s'", argv[optind]);
	if (o->nidx == 0)
		return cnctl_usage_err("notify", "missing --idx FIRST[:RANGE]");
	if (o->nval == 0)
		return cnctl_usage_err("notify", "missing --val FIRST[:RANGE]");
	if (!have_group)
		return cnctl_usage_err("notify", "missing --group G");
	return 0;
}

static int in_ranges(const struct cn_range *r, unsigned int n, uint32_t x)
{
	for (unsigned int i = 0; i < n; i++)
		if (x >= r[i].first && x - r[i].first < r[i].range)
			return 1;
	return 0;
}

/* kmod's refusal counters around the request: kmod sends no error back
 * (there is no NLM_F_ACK through libcn), so a refusal shows only there. */
static uint64_t refusals[CN_KMOD_REFUSED_COUNT];
static int have_refusals;

static void snapshot_refusals(void)
{
	static struct cn_kmod_info info;

	have_refusals = cn_kmod_query(&info) == 0;
	if (have_refusals)
		memcpy(refusals, info.refused, sizeof(refusals));
}

/* Returns 0, or the exit code after a one-line error. */
static int check_refusals(void)
{
	static struct cn_kmod_info info;

	if (!have_refusals || cn_kmod_query(&info) < 0)
		return 0;
	if (info.refused[CN_KMOD_REFUSED_NOTIFY_PERM] > refusals[CN_KMOD_REFUSED_NOTIFY_PERM]) {
		cnctl_err("permission denied: kmod refused the notification request (needs "
			  "CAP_NET_ADMIN)");
		return CNCTL_EXIT_PERM;
	}
	if (info.refused[CN_KMOD_REFUSED_NOTIFY_FULL] > refusals[CN_KMOD_REFUSED_NOTIFY_FULL]) {
		cnctl_err("kmod refused the notification request: its table is full "
			  "(max_notify=%u)",
			  info.max_notify);
		return CNCTL_EXIT_ERROR;
	}
	if (info.refused[CN_KMOD_REFUSED_NOTIFY_INVAL] > refusals[CN_KMOD_REFUSED_NOTIFY_INVAL]) {
		cnctl_err("kmod refused the notification request as malformed (kmod has %u "
			  "groups)",
			  info.groups);
		return CNCTL_EXIT_ERROR;
	}
	return 0;
}

int cnctl_notify(int argc, char **argv)
{
	struct notify_opts o = { .unit = -1, .timeout = -1 };
	struct cn_open_opts oo = { .sz = sizeof(oo), .batch = NOTIFY_BATCH };
	_Alignas(struct cn_msg) static unsigned char
	    req[CN_NOTIFY_SIZE(NOTIFY_MAX_RANGES, NOTIFY_MAX_RANGES)];
	_Alignas(struct cn_msg) static unsigned char
	    rm[CN_NOTIFY_SIZE(NOTIFY_MAX_RANGES, NOTIFY_MAX_RANGES)];
	struct cn_message msgs[NOTIFY_BATCH];
	uint64_t printed = 0, overruns = 0;
	struct cn_msg *reqmsg, *rmmsg;
	int64_t deadline = 0;
	struct cn_sock *s;
	int r, ret = CNCTL_EXIT_OK;

	r = parse_opts(argc, argv, &o);
	if (r)
		return r < 0 ? CNCTL_EXIT_OK : r;
	reqmsg = cn_notify_build(req, sizeof(req), o.idx, o.nidx, o.val, o.nval, o.group);
	rmmsg = cn_notify_build_remove(rm, sizeof(rm), o.idx, o.nidx, o.val, o.nval);
	if (!reqmsg || !rmmsg) {
		cnctl_err("notify: building the request: %s", strerror(errno));
		return CNCTL_EXIT_ERROR;
	}
	r = cnctl_install_signals();
	if (r < 0) {
		cnctl_err("sigaction: %s", strerror(-r));
		return CNCTL_EXIT_ERROR;
	}
	r = cnctl_open("notify", o.unit, 1, &oo, &s);
	if (r)
		return r;
	r = cn_join(s, o.group);
	if (r == -EINVAL) {
		int unit = cn_unit(s);

		cn_close(s);
		return cnctl_usage_err("notify", "--group '%u': netlink unit %d has no such group",
				       o.group, unit);
	}
	if (r < 0) {
		cn_close(s);
		return cnctl_connector_err("notify: joining --group", -r);
	}

	snapshot_refusals();
	r = cn_send(s, reqmsg, 0);
	if (r < 0) {
		cn_close(s);
		return cnctl_connector_err("notify: sending the request", -r);
	}
	r = check_refusals();
	if (r) {
		cn_close(s);
		return r;
	}
	if (!o.quiet)
		fprintf(stderr, "cnctl: notification request on unit %d, reports to group %u\n",
			cn_unit(s), o.group);
	if (o.timeout >= 0)
		deadline = cnctl_now_ms() + o.timeout;

	while (!cnctl_stop && !(o.count && printed >= o.count)) {
		int n = cn_recv_batch(s, msgs, NOTIFY_BATCH, CN_RECV_DONTWAIT);

		if (n > 0) {
			for (int i = 0; i < n && !(o.count && printed >= o.count); i++) {
				struct cn_notification nt;

				if (cn_notify_decode(msgs[i].msg, &nt) < 0 ||
				    !in_ranges(o.idx, o.nidx, nt.idx) ||
				    !in_ranges(o.val, o.nval, nt.val))
					continue; /* other traffic of the group */
				if (o.json)
					printf("{\"event\":\"%s\",\"idx\":%u,\"val\":%u}\n",
					       nt.added ? "added" : "removed", nt.idx, nt.val);
				else
					printf("%s 0x%x.0x%x\n", nt.added ? "added" : "removed",
					       nt.idx, nt.val);
				printed++;
			}
			continue;
		}
		if (n == -EAGAIN) {
			int wait = -1;

			if (fflush(stdout) != 0) {
				if (errno != EPIPE) {
					cnctl_err("write to stdout: %s", strerror(errno));
					ret = CNCTL_EXIT_ERROR;
				}
				goto remove;
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
				goto remove;
			}
			continue;
		}
		if (n == -EINTR)
			continue;
		if (n == -ENOBUFS) {
			overruns++;
			fputs("cnctl: receive buffer overrun, notifications lost\n", stderr);
			continue;
		}
		if (n == -EBADMSG || n == -EMSGSIZE) {
			cnctl_err("malformed datagram skipped: %s", strerror(-n));
			continue;
		}
		cnctl_err("receive: %s", strerror(-n));
		ret = CNCTL_EXIT_ERROR;
		goto remove;
	}
	if (fflush(stdout) != 0 && errno != EPIPE) {
		cnctl_err("write to stdout: %s", strerror(errno));
		ret = CNCTL_EXIT_ERROR;
	} else if (o.count && printed < o.count && o.timeout >= 0 && !cnctl_stop) {
		cnctl_err("notify: %llu of %llu notifications within %d ms",
			  (unsigned long long)printed, (unsigned long long)o.count, o.timeout);
		ret = CNCTL_EXIT_TIMEOUT;
	}
remove:
	r = cn_send(s, rmmsg, 0);
	if (r < 0) {
		cnctl_err("notify: removing the request: %s", strerror(-r));
		if (ret == CNCTL_EXIT_OK)
			ret = CNCTL_EXIT_ERROR;
	}
	if (!o.quiet)
		fprintf(stderr, "cnctl: %llu notifications printed, %llu overruns; request %s\n",
			(unsigned long long)printed, (unsigned long long)overruns,
			r < 0 ? "NOT removed" : "removed");
	cn_close(s);
	return ret;
}
