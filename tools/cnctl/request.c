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
#define REQUEST_RCVBUF_MAX (1ull << 30)

/* clang-format off */
static void request_usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl request ID [DATA] [--hex HEX | --file PATH] [--timeout MS]\n"
		"                     [--match strict|ack-only] [--seq N] [--ack N]\n"
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
		"  -t, --timeout MS    wait at most MS milliseconds (default 1000)\n"
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
		"\n"
		"Exit status: 0 reply printed, 1 runtime error (including a receive buffer\n"
		"overrun while waiting), 2 usage error, 3 permission denied, 4 no such\n"
		"netlink unit / connector, or kmod not loaded (--kmod), 5 no reply within\n"
		"the timeout.\n");
}
/* clang-format on */

int cnctl_request(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hex", required_argument, NULL, 'x' },
		{ "file", required_argument, NULL, 'f' },
		{ "timeout", required_argument, NULL, 't' },
		{ "match", required_argument, NULL, 'm' },
		{ "seq", required_argument, NULL, 's' },
		{ "ack", required_argument, NULL, 'a' },
		{ "join", required_argument, NULL, 'g' },
		{ "no-join", no_argument, NULL, 'J' },
		{ "rcvbuf", required_argument, NULL, 'r' },
		{ "unit", required_argument, NULL, 'u' },
		{ "kmod", no_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	_Alignas(struct cn_msg) static unsigned char buf[CN_MSG_SIZE(CONNECTOR_MAX_MSG_SIZE)];
	const char *hex = NULL, *file = NULL, *text = NULL;
	enum cn_match policy = CN_MATCH_STRICT;
	uint32_t idx, val, seq = 0, ack = 0, join[REQUEST_MAX_JOIN];
	unsigned int flags = 0, njoin = 0;
	int unit = -1, kmod = 0, json = 0, nojoin = 0, timeout = REQUEST_TIMEOUT_MS, rcvbuf = 0;
	struct cn_open_opts oo = { .sz = sizeof(oo) };
	struct cn_message reply;
	struct timespec t0, t1;
	struct cn_sock *s;
	struct cn_msg *msg;
	char extra[128];
	long long rtt_us;
	uint64_t v;
	size_t len;
	int c, r;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":x:f:t:m:s:a:g:Jr:u:kjh", longopts, NULL)) != -1) {
		switch (c) {
		case 'x':
			hex = optarg;
			break;
		case 'f':
			file = optarg;
			break;
		case 't':
			if (cnctl_parse_timeout("request", optarg, &timeout))
				return CNCTL_EXIT_USAGE;
			break;
		case 'm':
			if (strcmp(optarg, "strict") == 0)
				policy = CN_MATCH_STRICT;
			else if (strcmp(optarg, "ack-only") == 0)
				policy = CN_MATCH_ACK_ONLY;
			else
				return cnctl_usage_err(
				    "request",
				    "invalid --match value '%s': expected strict "
				    "or ack-only",
				    optarg);
			break;
		case 's':
			if (cnctl_parse_u32(optarg, &seq) < 0)
				return cnctl_usage_err("request",
						       "invalid --seq value '%s': "
						       "expected a 32-bit number",
						       optarg);
			flags |= CN_SEND_KEEP_SEQ;
			break;
		case 'a':
			if (cnctl_parse_u32(optarg, &ack) < 0)
				return cnctl_usage_err("request",
						       "invalid --ack value '%s': "
						       "expected a 32-bit number",
						       optarg);
			flags |= CN_SEND_KEEP_ACK;
			break;
		case 'g':
			if (njoin >= REQUEST_MAX_JOIN)
				return cnctl_usage_err("request", "more than %d --join groups",
						       REQUEST_MAX_JOIN);
			if (cnctl_parse_u32(optarg, &join[njoin]) < 0 || join[njoin] == 0)
				return cnctl_usage_err("request",
						       "invalid --join value '%s': "
						       "expected a group number >= 1",
						       optarg);
			njoin++;
			break;
		case 'J':
			nojoin = 1;
			break;
		case 'r':
			if (cnctl_parse_size(optarg, 1, REQUEST_RCVBUF_MAX, &v) < 0)
				return cnctl_usage_err(
				    "request",
				    "invalid --rcvbuf value '%s': expected bytes "
				    "from 1 to 1G (suffix K, M or G allowed)",
				    optarg);
			rcvbuf = (int)v;
			break;
		case 'u':
			if (cnctl_parse_unit("request", optarg, &unit))
				return CNCTL_EXIT_USAGE;
			break;
		case 'k':
			kmod = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			request_usage(stdout);
			return CNCTL_EXIT_OK;
		default:
			return cnctl_opt_err("request", c, argv);
		}
	}
	if (optind >= argc)
		return cnctl_usage_err("request", "missing ID (IDX.VAL, e.g. 0x123.0x456)");
	if (cnctl_parse_id(argv[optind], &idx, &val) < 0)
		return cnctl_usage_err("request",
				       "invalid ID '%s': expected IDX.VAL (decimal or 0x hex)",
				       argv[optind]);
	if (optind + 1 < argc)
		text = argv[optind + 1];
	if (optind + 2 < argc)
		return cnctl_usage_err("request", "unexpected argument '%s'", argv[optind + 2]);
	if (unit >= 0 && kmod)
		return cnctl_usage_err("request", "give --unit or --kmod, not both");

	msg = cn_msg_init(buf, sizeof(buf), idx, val, NULL, 0);
	if (!msg) {
		cnctl_err("request: building the message: %s", strerror(errno));
		return CNCTL_EXIT_ERROR;
	}
	r = cnctl_load_data("request", text, hex, file, msg->data, CONNECTOR_MAX_MSG_SIZE, &len);
	if (r)
		return r;
	msg->len = (uint16_t)len;
	msg->seq = seq;
	msg->ack = ack;

	r = cnctl_install_signals();
	if (r < 0) {
		cnctl_err("sigaction: %s", strerror(-r));
		return CNCTL_EXIT_ERROR;
	}
	oo.rcvbuf = rcvbuf;
	r = cnctl_open("request", unit, kmod, &oo, &s);
	if (r)
		return r;
	if (rcvbuf) {
		r = cn_set_rcvbuf(s, rcvbuf);
		if (r >= 0 && r / 2 < rcvbuf)
			cnctl_err("warning: receive buffer capped at %d bytes (net.core.rmem_max)",
				  r / 2);
	}
	/* The id's group: best effort (a unit may have fewer groups). */
	if (!nojoin && idx != 0)
		(void)cn_join(s, idx);
	for (unsigned int i = 0; i < njoin; i++) {
		r = cn_join(s, join[i]);
		if (r < 0) {
			cnctl_err("request: joining --join group %u: %s", join[i], strerror(-r));
			cn_close(s);
			return r == -EINVAL ? CNCTL_EXIT_USAGE : cnctl_connector_err("join", -r);
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = cn_request(s, msg, flags, policy, timeout, &reply);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (r < 0) {
		int ret;

		switch (-r) {
		case ETIMEDOUT:
			cnctl_err("request: no reply to 0x%x.0x%x seq=%u ack=%u within %d ms "
				  "(--match %s)",
				  msg->id.idx, msg->id.val, msg->seq, msg->ack, timeout,
				  policy == CN_MATCH_STRICT ? "strict" : "ack-only");
			ret = CNCTL_EXIT_TIMEOUT;
			break;
		case ENOBUFS:
			cnctl_err("request: receive buffer overrun while waiting: the reply may "
				  "have been lost");
			ret = CNCTL_EXIT_ERROR;
			break;
		case EINTR:
			ret = cnctl_stop ? CNCTL_EXIT_OK : CNCTL_EXIT_ERROR;
			if (!cnctl_stop)
				cnctl_err("request: %s", strerror(-r));
			break;
		default:
			ret = cnctl_connector_err("request", -r);
			break;
		}
		cn_close(s);
		return ret;
	}
	rtt_us = ((long long)t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000;
	if (json)
		snprintf(extra, sizeof(extra), ",\"req_seq\":%u,\"req_ack\":%u,\"rtt_us\":%lld",
			 msg->seq, msg->ack, rtt_us);
	else
		snprintf(extra, sizeof(extra), " (request seq=%u ack=%u, %lld us)", msg->seq,
			 msg->ack, rtt_us);
	cnctl_print_message(stdout, &reply, json, 0, extra);
	cn_close(s);
	if (fflush(stdout) != 0) {
		cnctl_err("write to stdout: %s", strerror(errno));
		return CNCTL_EXIT_ERROR;
	}
	return CNCTL_EXIT_OK;
}
