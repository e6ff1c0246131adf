/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * send.c - `cnctl send ID [DATA]`: send one connector message and print the
 * seq and ack it went out with (libcn's genealogy, or the caller's).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <libcn.h>

#include "common.h"

/* clang-format off */
static void send_usage(FILE *f)
{
	fprintf(f,
		"Usage: cnctl send ID [DATA] [--hex HEX | --file PATH] [--seq N] [--ack N]\n"
		"                  [--unit N | --kmod] [--json]\n"
		"\n"
		"Send one message with id ID (IDX.VAL, each decimal or 0x hex, e.g.\n"
		"0x123.0x456) to the kernel and print the seq and ack it carried.\n"
		"The payload is DATA as text (without a trailing NUL), or the bytes of\n"
		"--hex, or the contents of --file; none: an empty message.\n"
		"The kernel sends nothing back for an id nobody registered: no error.\n"
		"\n"
		"Options:\n"
		"  -x, --hex HEX      payload as hex digit pairs (\"01000000\", \"de:ad\")\n"
		"  -f, --file PATH    payload read from PATH ('-': standard input)\n"
		"  -s, --seq N        send this seq (default: the socket's next, from a\n"
		"                     random start)\n"
		"  -a, --ack N        send this ack (default: random)\n"
		"  -u, --unit N       netlink unit (default: NETLINK_CONNECTOR, 11)\n"
		"  -k, --kmod         use the unit kmod (cnbus.ko) reports\n"
		"  -j, --json         print {\"idx\",\"val\",\"seq\",\"ack\",\"len\",\"unit\"}\n"
		"  -h, --help         this help\n"
		"\n"
		"Numbers (N) are decimal or 0x hex, 32 bits. The payload is at most 16384\n"
		"bytes (CONNECTOR_MAX_MSG_SIZE).\n"
		"\n"
		"Exit status: 0 sent, 1 runtime error, 2 usage error, 3 permission denied,\n"
		"4 no such netlink unit / connector, or kmod not loaded (--kmod).\n");
}
/* clang-format on */

int cnctl_send(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hex", required_argument, NULL, 'x' },
		{ "file", required_argument, NULL, 'f' },
		{ "seq", required_argument, NULL, 's' },
		{ "ack", required_argument, NULL, 'a' },
		{ "unit", required_argument, NULL, 'u' },
		{ "kmod", no_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	_Alignas(struct cn_msg) static unsigned char buf[CN_MSG_SIZE(CONNECTOR_MAX_MSG_SIZE)];
	const char *hex = NULL, *file = NULL, *text = NULL;
	unsigned int flags = 0;
	uint32_t idx, val, seq = 0, ack = 0;
	int unit = -1, kmod = 0, json = 0;
	struct cn_sock *s;
	struct cn_msg *msg;
	size_t len;
	int c, r;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":x:f:s:a:u:kjh", longopts, NULL)) != -1) {
		switch (c) {
		case 'x':
			hex = optarg;
			break;
		case 'f':
			file = optarg;
			break;
		case 's':
			if (cnctl_parse_u32(optarg, &seq) < 0)
				return cnctl_usage_err("send",
						       "invalid --seq value '%s': expected "
						       "a 32-bit number",
						       optarg);
			flags |= CN_SEND_KEEP_SEQ;
			break;
		case 'a':
			if (cnctl_parse_u32(optarg, &ack) < 0)
				return cnctl_usage_err("send",
						       "invalid --ack value '%s': expected "
						       "a 32-bit number",
						       optarg);
			flags |= CN_SEND_KEEP_ACK;
			break;
		case 'u':
			if (cnctl_parse_unit("send", optarg, &unit))
				return CNCTL_EXIT_USAGE;
			break;
		case 'k':
			kmod = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			send_usage(stdout);
			return CNCTL_EXIT_OK;
		default:
			return cnctl_opt_err("send", c, argv);
		}
	}
	if (optind >= argc)
		return cnctl_usage_err("send", "missing ID (IDX.VAL, e.g. 0x123.0x456)");
	if (cnctl_parse_id(argv[optind], &idx, &val) < 0)
		return cnctl_usage_err(
		    "send", "invalid ID '%s': expected IDX.VAL (decimal or 0x hex)", argv[optind]);
	if (optind + 1 < argc)
		text = argv[optind + 1];
	if (optind + 2 < argc)
		return cnctl_usage_err("send", "unexpected argument '%s'", argv[optind + 2]);
	if (unit >= 0 && kmod)
		return cnctl_usage_err("send", "give --unit or --kmod, not both");

	msg = cn_msg_init(buf, sizeof(buf), idx, val, NULL, 0);
	if (!msg) {
		cnctl_err("send: building the message: %s", strerror(errno));
		return CNCTL_EXIT_ERROR;
	}
	r = cnctl_load_data("send", text, hex, file, msg->data, CONNECTOR_MAX_MSG_SIZE, &len);
	if (r)
		return r;
	msg->len = (uint16_t)len;
	msg->seq = seq;
	msg->ack = ack;

	r = cnctl_open("send", unit, kmod, NULL, &s);
	if (r)
		return r;
	r = cn_send(s, msg, flags);
	if (r < 0) {
		r = cnctl_connector_err("send", -r);
		cn_close(s);
		return r;
	}
	if (json)
		printf("{\"idx\":%u,\"val\":%u,\"seq\":%u,\"ack\":%u,\"len\":%u,\"unit\":%d}\n",
		       msg->id.idx, msg->id.val, msg->seq, msg->ack, msg->len, cn_unit(s));
	else
		printf("sent 0x%x.0x%x seq=%u ack=%u len=%u unit=%d\n", msg->id.idx, msg->id.val,
		       msg->seq, msg->ack, msg->len, cn_unit(s));
	cn_close(s);
	if (fflush(stdout) != 0) {
		cnctl_err("write to stdout: %s", strerror(errno));
		return CNCTL_EXIT_ERROR;
	}
	return CNCTL_EXIT_OK;
}
