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

#define NOTIFY_MAX_RANGES 16 /* per kind (idx, val) */

struct notify_opts {
	struct cnctl_opts common;
	struct cn_range idx[NOTIFY_MAX_RANGES], val[NOTIFY_MAX_RANGES];
	unsigned int nidx, nval;
	uint32_t group;
};

/* clang-format off */
static void notify_usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl notify --idx FIRST[:RANGE]... --val FIRST[:RANGE]... --group G\n"
		"                    [--count N] [--timeout DURATION] [--unit N] [--json]\n"
		"                    [--quiet]\n"
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
		"  -t, --timeout DURATION   exit after DURATION (500ms, 5s, 2m, 1h, 1d; a bare\n"
		"                           number is seconds; 1ms to 24d). With --count:\n"
		"                           exit 5 if fewer than N arrived by then\n"
		"  -u, --unit N             netlink unit (default: the unit kmod reports)\n"
		"  -j, --json               one JSON object per line: event (\"added\" or\n"
		"                           \"removed\"), idx, val\n"
		"  -q, --quiet              no 'subscribed' line and no summary on stderr\n"
		"  -h, --help               this help\n"
		"      --version            cnctl's version\n"
		"\n"
		"Exit status: 0 ok (also after SIGINT/SIGTERM, --count or --timeout),\n"
		"1 runtime error (also: kmod refused the request as malformed, because its\n"
		"table is full or the same request exists), 2 usage error, 3 permission\n"
		"denied (kmod answered EPERM: no CAP_NET_ADMIN), 4 kmod not loaded or no\n"
		"such netlink unit, 5 --timeout ran out before --count notifications.\n");
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
	struct cnctl_getopt g;
	int have_group = 0, c, r;

	cnctl_getopt_init(&g, CNCTL_CMD_NOTIFY);
	while ((c = cnctl_getopt(&g, argc, argv)) != -1) {
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
		default:
			r = cnctl_common_opt(c, argv, &o->common);
			if (r)
				return r;
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

/* kmod's answer to our own request (CN_SEND_ACK) as an exit code: 0, or
 * the exit code after a one-line error. */
static int check_answer(int r, int unit, uint32_t group)
{
	switch (r) {
	case 0:
		return 0;
	case 1:
		/* No answer: a receiver that ignores NLM_F_ACK (not this
		 * kmod). Carry on: notifications show whether it worked. */
		cnctl_err("notify: warning: kmod did not answer the request; it may have been "
			  "refused");
		return 0;
	case -EPERM:
		cnctl_err("permission denied: kmod answered the notification request with "
			  "EPERM (needs CAP_NET_ADMIN)");
		return CNCTL_EXIT_PERM;
	case -ENOSPC:
		cnctl_err("kmod answered the notification request with ENOSPC: its table is "
			  "full (module parameter max_notify)");
		return CNCTL_EXIT_ERROR;
	case -EEXIST:
		cnctl_err("kmod answered the notification request with EEXIST: the same ranges "
			  "already report to group %u",
			  group);
		return CNCTL_EXIT_ERROR;
	case -EINVAL:
		cnctl_err("kmod answered the notification request with EINVAL: malformed (is "
			  "group %u beyond kmod's groups?)",
			  group);
		return CNCTL_EXIT_ERROR;
	case -ENOBUFS:
		cnctl_err("notify: the socket overran before kmod's answer was read: the "
			  "request may or may not be registered");
		return CNCTL_EXIT_ERROR;
	default:
		return cnctl_unit_err("notify: sending the request", unit, -r);
	}
}

/* cnctl_recv_loop's print: a notification about the requested ranges
 * (the group may carry other traffic). */
static int print_notification(const struct cn_message *m, void *ctx)
{
	const struct notify_opts *o = ctx;
	struct cn_notification nt;

	if (cn_notify_decode(m->msg, &nt) < 0 || !in_ranges(o->idx, o->nidx, nt.idx) ||
	    !in_ranges(o->val, o->nval, nt.val))
		return 0;
	if (o->common.json)
		printf("{\"event\":\"%s\",\"idx\":%u,\"val\":%u}\n", nt.added ? "added" : "removed",
		       nt.idx, nt.val);
	else
		printf("%s 0x%x.0x%x\n", nt.added ? "added" : "removed", nt.idx, nt.val);
	return 1;
}

/* Join the group, send the request and check kmod took it: 0, or the exit
 * code after a one-line error. */
static int subscribe(struct cn_sock *s, const struct notify_opts *o, struct cn_msg *reqmsg)
{
	int r = cn_join(s, o->group);

	if (r == -EINVAL)
		return cnctl_usage_err("notify", "--group '%u': netlink unit %d has no such group",
				       o->group, cn_unit(s));
	if (r < 0)
		return cnctl_unit_err("notify: joining --group", cn_unit(s), -r);
	/* kmod answers the request itself (NLM_F_ACK): the exact refusal of
	 * this request, whatever other clients do meanwhile. */
	return check_answer(cn_send(s, reqmsg, CN_SEND_ACK), cn_unit(s), o->group);
}

int cnctl_notify(int argc, char **argv)
{
	/* No --kmod option: kmod's unit unless --unit. */
	struct notify_opts o = {
		.common = { .cmd = "notify",
			    .usage = notify_usage,
			    .unit = -1,
			    .kmod = 1,
			    .timeout = -1 },
	};
	struct cnctl_recv_loop rl = {
		.o = &o.common, .lost = "notifications", .print = print_notification, .ctx = &o
	};
	_Alignas(struct cn_msg) static unsigned char
	    req[CN_NOTIFY_SIZE(NOTIFY_MAX_RANGES, NOTIFY_MAX_RANGES)];
	_Alignas(struct cn_msg) static unsigned char
	    rm[CN_NOTIFY_SIZE(NOTIFY_MAX_RANGES, NOTIFY_MAX_RANGES)];
	struct cn_msg *reqmsg, *rmmsg;
	int r, ret;

	r = parse_opts(argc, argv, &o);
	if (r)
		return r < 0 ? cnctl_finish_output() : r;
	reqmsg = cn_notify_build(req, sizeof(req), o.idx, o.nidx, o.val, o.nval, o.group);
	rmmsg = cn_notify_build_remove(rm, sizeof(rm), o.idx, o.nidx, o.val, o.nval);
	if (!reqmsg || !rmmsg) {
		cnctl_err("notify: building the request: %s", strerror(errno));
		return CNCTL_EXIT_ERROR;
	}
	r = cnctl_install_signals();
	if (r)
		return r;
	r = cnctl_open(&o.common, CNCTL_RECV_BATCH, &rl.s);
	if (r)
		return r;
	r = subscribe(rl.s, &o, reqmsg);
	if (r) {
		cn_close(rl.s);
		return r;
	}
	if (!o.common.quiet)
		fprintf(stderr, "cnctl: notification request on unit %d, reports to group %u\n",
			cn_unit(rl.s), o.group);

	ret = cnctl_recv_loop(&rl);
	if (ret == CNCTL_EXIT_TIMEOUT)
		cnctl_err("notify: %llu of %llu notifications within %d ms",
			  (unsigned long long)rl.printed, (unsigned long long)o.common.count,
			  o.common.timeout);

	r = cn_send(rl.s, rmmsg, CN_SEND_ACK);
	if (r < 0) {
		/* -ENOENT: kmod no longer had it (unloaded and loaded again). */
		cnctl_err("notify: removing the request: %s", strerror(-r));
		if (ret == CNCTL_EXIT_OK)
			ret = CNCTL_EXIT_ERROR;
	}
	if (!o.common.quiet)
		fprintf(stderr, "cnctl: %llu notifications printed, %llu overruns; request %s\n",
			(unsigned long long)rl.printed, (unsigned long long)rl.overruns,
			r < 0 ? "NOT removed" : "removed");
	cn_close(rl.s);
	return ret;
}
