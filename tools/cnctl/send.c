/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * send.c - `cnctl send ID [DATA]`: send one connector message and print the
 * seq and ack it went out with (libcn's genealogy, or the caller's).
 */
#include <getopt.h>
#include <stdio.h>

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
		"      --version      cnctl's version\n"
		"\n"
		"Numbers (N) are decimal or 0x hex, 32 bits. The payload is at most 16384\n"
		"bytes (CONNECTOR_MAX_MSG_SIZE).\n"
		"\n"
		"Exit status: 0 sent, 1 runtime error, 2 usage error, 3 permission denied,\n"
		"4 no such netlink unit / connector, or kmod not loaded (--kmod).\n");
}
/* clang-format on */

static int parse_opts(int argc, char **argv, struct cnctl_msg_args *m, struct cnctl_opts *o)
{
	struct cnctl_getopt g;
	int c, r;

	cnctl_getopt_init(&g, CNCTL_CMD_SEND);
	while ((c = cnctl_getopt(&g, argc, argv)) != -1) {
		r = cnctl_msg_opt(c, argv, m, o);
		if (r)
			return r;
	}
	return cnctl_msg_positional(argc, argv, m, o);
}

int cnctl_send(int argc, char **argv)
{
	_Alignas(struct cn_msg) static unsigned char buf[CN_MSG_SIZE(CONNECTOR_MAX_MSG_SIZE)];
	struct cnctl_opts o = { .cmd = "send", .usage = send_usage, .unit = -1 };
	struct cnctl_msg_args m = { 0 };
	struct cn_sock *s;
	struct cn_msg *msg;
	int r;

	r = parse_opts(argc, argv, &m, &o);
	if (r)
		return r < 0 ? cnctl_finish_output() : r;
	r = cnctl_msg_build("send", &m, buf, sizeof(buf), &msg);
	if (r)
		return r;
	r = cnctl_open(&o, 0, &s);
	if (r)
		return r;
	r = cn_send(s, msg, m.flags);
	if (r < 0) {
		r = cnctl_unit_err("send", cn_unit(s), -r);
		cn_close(s);
		return r;
	}
	if (o.json)
		printf("{\"idx\":%u,\"val\":%u,\"seq\":%u,\"ack\":%u,\"len\":%u,\"unit\":%d}\n",
		       msg->id.idx, msg->id.val, msg->seq, msg->ack, msg->len, cn_unit(s));
	else
		printf("sent 0x%x.0x%x seq=%u ack=%u len=%u unit=%d\n", msg->id.idx, msg->id.val,
		       msg->seq, msg->ack, msg->len, cn_unit(s));
	cn_close(s);
	return cnctl_finish_output();
}
