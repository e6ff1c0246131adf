/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * request.c - `cnctl request ID [DATA]`: send one message and wait for its
 * genealogical reply (cn_request: same seq and ack + 1, or ack + 1 only for
 * the proc connector), then print the reply.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <libcn.h>

#include "common.h"

#define REQUEST_TIMEOUT_MS 1000
#define REQUEST_MAX_JOIN   8

/* clang-format off */
static void request_usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl request ID [DATA] [--hex HEX | --file PATH]\n"
		"                     [--timeout DURATION] [--match strict|ack-only]\n"
		"                     [--seq N] [--ack N]\n"
		"                     [--join G]... [--no-join] [--rcvbuf BYTES]\n"
		"                     [--unit N | --kmod] [--json]\n"
		"\n"
		"Send one message with id ID (IDX.VAL, each decimal or 0x hex) and wait for\n"
		"its reply: a message with the same id, the same seq and ack + 1 (strict),\n"
		"or the same id and ack + 1 (ack-only: the proc connector overwrites seq).\n"
		"Print the reply like 'cnctl listen' does, with the request's seq and ack\n"
		"and the round-trip time. Other messages that arrive meanwhile are ignored.\n"
		"\n"
		"Options:\n"
		"  -x, --hex HEX       payload as hex digit pairs\n"
		"  -f, --file PATH     payload read from PATH ('-': standard input)\n"
		"  -t, --timeout DURATION\n"
		"                      wait at most DURATION (default 1s; 500ms, 5s, 2m,\n"
		"                      1h, 1d; a bare number is seconds; 1ms to 24d)\n"
		"  -m, --match POLICY  strict (default) or ack-only\n"
		"  -s, --seq N         send this seq (default: the socket's next)\n"
		"  -a, --ack N         send this ack (default: random)\n"
		"  -g, --join G        also join multicast group G (repeatable)\n"
		"  -J, --no-join       do not join group IDX. By default the socket joins\n"
		"                      the id's group IDX (if the unit has it) so that a\n"
		"                      reply multicast there (the proc connector's ack to\n"
		"                      LISTEN, 1.1 with --hex 01000000) is seen\n"
		"  -r, --rcvbuf BYTES  socket receive buffer (suffix K, M, G allowed): room\n"
		"                      for the group's other traffic while waiting\n"
		"  -u, --unit N        netlink unit (default: NETLINK_CONNECTOR, 11)\n"
		"  -k, --kmod          use the unit kmod (cnbus.ko) reports\n"
		"  -j, --json          the reply as one JSON object (as 'cnctl listen --json'\n"
		"                      plus req_seq, req_ack, rtt_us)\n"
		"  -h, --help          this help\n"
		"      --version       cnctl's version\n"
		"\n"
		"Exit status: 0 reply printed, 1 runtime error (including a receive buffer\n"
		"overrun while waiting), 2 usage error, 3 permission denied, 4 no such\n"
		"netlink unit / connector, or kmod not loaded (--kmod), 5 no reply within\n"
		"the timeout.\n");
}
/* clang-format on */

struct request_opts {
	struct cnctl_opts common;
	struct cnctl_msg_args msg;
	enum cn_match policy;
	uint32_t join[REQUEST_MAX_JOIN];
	unsigned int njoin;
	int nojoin;
};

static int parse_opts(int argc, char **argv, struct request_opts *o)
{
	struct cnctl_getopt g;
	int c, r;

	cnctl_getopt_init(&g, CNCTL_CMD_REQUEST);
	while ((c = cnctl_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "strict") == 0)
				o->policy = CN_MATCH_STRICT;
			else if (strcmp(optarg, "ack-only") == 0)
				o->policy = CN_MATCH_ACK_ONLY;
			else
				return cnctl_usage_err(
				    "request",
				    "invalid --match value '%s': expected strict "
				    "or ack-only",
				    optarg);
			break;
		case 'g':
			if (o->njoin >= REQUEST_MAX_JOIN)
				return cnctl_usage_err("request", "more than %d --join groups",
						       REQUEST_MAX_JOIN);
			if (cnctl_parse_u32(optarg, &o->join[o->njoin]) < 0 ||
			    o->join[o->njoin] == 0)
				return cnctl_usage_err("request",
						       "invalid --join value '%s': "
						       "expected a group number >= 1",
						       optarg);
			o->njoin++;
			break;
		case 'J':
			o->nojoin = 1;
			break;
		default:
			r = cnctl_msg_opt(c, argv, &o->msg, &o->common);
			if (r)
				return r;
		}
	}
	return cnctl_msg_positional(argc, argv, &o->msg, &o->common);
}

/* Report a failed cn_request (r < 0) and return the exit code. */
static int request_err(int r, const struct cn_sock *s, const struct cn_msg *msg,
		       const struct request_opts *o)
{
	switch (-r) {
	case ETIMEDOUT:
		cnctl_err("request: no reply to 0x%x.0x%x seq=%u ack=%u within %d ms "
			  "(--match %s)",
			  msg->id.idx, msg->id.val, msg->seq, msg->ack, o->common.timeout,
			  o->policy == CN_MATCH_STRICT ? "strict" : "ack-only");
		return CNCTL_EXIT_TIMEOUT;
	case ENOBUFS:
		cnctl_err("request: receive buffer overrun while waiting: the reply may "
			  "have been lost");
		return CNCTL_EXIT_ERROR;
	case EINTR:
		if (cnctl_stop)
			return CNCTL_EXIT_OK;
		cnctl_err("request: %s", strerror(-r));
		return CNCTL_EXIT_ERROR;
	default:
		return cnctl_unit_err("request", cn_unit(s), -r);
	}
}

int cnctl_request(int argc, char **argv)
{
	_Alignas(struct cn_msg) static unsigned char buf[CN_MSG_SIZE(CONNECTOR_MAX_MSG_SIZE)];
	struct request_opts o = {
		.common = { .cmd = "request",
			    .usage = request_usage,
			    .unit = -1,
			    .timeout = REQUEST_TIMEOUT_MS },
		.policy = CN_MATCH_STRICT,
	};
	struct cn_message reply;
	struct timespec t0, t1;
	struct cn_sock *s;
	struct cn_msg *msg;
	char extra[128];
	long long rtt_us;
	int r;

	r = parse_opts(argc, argv, &o);
	if (r)
		return r < 0 ? cnctl_finish_output() : r;
	r = cnctl_msg_build("request", &o.msg, buf, sizeof(buf), &msg);
	if (r)
		return r;
	r = cnctl_install_signals();
	if (r)
		return r;
	r = cnctl_open(&o.common, 0, &s);
	if (r)
		return r;
	/* The id's group: best effort (a unit may have fewer groups). */
	if (!o.nojoin && o.msg.idx != 0)
		(void)cn_join(s, o.msg.idx);
	for (unsigned int i = 0; i < o.njoin; i++) {
		r = cn_join(s, o.join[i]);
		if (r < 0) {
			cnctl_err("request: joining --join group %u: %s", o.join[i], strerror(-r));
			cn_close(s);
			return r == -EINVAL ? CNCTL_EXIT_USAGE
					    : cnctl_unit_err("join", cn_unit(s), -r);
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = cn_request(s, msg, o.msg.flags, o.policy, o.common.timeout, &reply);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (r < 0) {
		r = request_err(r, s, msg, &o);
		cn_close(s);
		return r;
	}
	rtt_us = ((long long)t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000;
	if (o.common.json)
		snprintf(extra, sizeof(extra), ",\"req_seq\":%u,\"req_ack\":%u,\"rtt_us\":%lld",
			 msg->seq, msg->ack, rtt_us);
	else
		snprintf(extra, sizeof(extra), " (request seq=%u ack=%u, %lld us)", msg->seq,
			 msg->ack, rtt_us);
	cnctl_print_message(stdout, &reply, o.common.json, 0, extra);
	cn_close(s);
	return cnctl_finish_output();
}
