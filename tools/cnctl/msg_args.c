/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * msg_args.c - the arguments of cnctl's message subcommands (send, listen,
 * request, notify): connector ids, ranges, the payload (DATA, --hex,
 * --file) and the message send and request build from them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libcn.h>

#include "common.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int cnctl_parse_u32(const char *s, uint32_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		if (!*s)
			return -1;
		for (; *s; s++) {
			int d = hexval(*s);

			if (d < 0)
				return -1;
			v = v * 16 + (uint64_t)d;
			if (v > UINT32_MAX)
				return -1;
		}
	} else if (cnctl_parse_uint(s, 0, UINT32_MAX, &v) < 0) {
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* Split s at its first `sep` and parse both sides with cnctl_parse_u32.
 * Returns 0, -1 when a side is not a number, or 1 when s has no sep. */
static int parse_u32_pair(const char *s, char sep, uint32_t *a, uint32_t *b)
{
	const char *at = strchr(s, sep);
	char head[32];
	size_t n;

	if (!at)
		return 1;
	n = (size_t)(at - s);
	if (n == 0 || n >= sizeof(head))
		return -1;
	memcpy(head, s, n);
	head[n] = '\0';
	if (cnctl_parse_u32(head, a) < 0 || cnctl_parse_u32(at + 1, b) < 0)
		return -1;
	return 0;
}

int cnctl_parse_id(const char *s, uint32_t *idx, uint32_t *val)
{
	return parse_u32_pair(s, '.', idx, val) == 0 ? 0 : -1;
}

int cnctl_parse_range(const char *s, uint32_t *first, uint32_t *range)
{
	int r;

	*range = 1;
	r = parse_u32_pair(s, ':', first, range);
	if (r > 0)
		return cnctl_parse_u32(s, first);
	if (r < 0 || *range == 0 || (uint64_t)*first + *range - 1 > UINT32_MAX)
		return -1;
	return 0;
}

/* The payload: at most one of text (DATA), hex (--hex) and file (--file).
 * Fills buf (size bytes) and *len. Returns 0, or an exit code after
 * printing a one-line error. */
static int load_data(const char *cmd, const char *text, const char *hex, const char *file,
		     void *buf, size_t size, size_t *len)
{
	unsigned char *out = buf;
	size_t n = 0;

	if (!!text + !!hex + !!file > 1)
		return cnctl_usage_err(cmd, "give the payload once: DATA '%s', --hex or --file",
				       text  ? text
				       : hex ? hex
					     : file);
	if (text) {
		n = strlen(text);
		if (n > size)
			return cnctl_usage_err(cmd, "DATA is %zu bytes, more than %zu", n, size);
		memcpy(out, text, n);
	} else if (hex) {
		const char *p = hex;

		/* Pairs of hex digits; spaces and colons between pairs are allowed. */
		while (*p) {
			int hi, lo;

			if (*p == ' ' || *p == ':') {
				p++;
				continue;
			}
			hi = hexval(p[0]);
			lo = hi < 0 ? -1 : hexval(p[1]);
			if (hi < 0 || lo < 0)
				return cnctl_usage_err(
				    cmd,
				    "invalid --hex value '%s': expected pairs of "
				    "hex digits",
				    hex);
			if (n >= size)
				return cnctl_usage_err(cmd, "--hex value is more than %zu bytes",
						       size);
			out[n++] = (unsigned char)(hi << 4 | lo);
			p += 2;
		}
	} else if (file) {
		int fd = strcmp(file, "-") == 0 ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC);
		unsigned char extra;

		if (fd < 0) {
			cnctl_err("--file '%s': %s", file, strerror(errno));
			return CNCTL_EXIT_ERROR;
		}
		for (;;) {
			ssize_t r = n < size ? read(fd, out + n, size - n) : read(fd, &extra, 1);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				cnctl_err("--file '%s': %s", file, strerror(errno));
				if (fd != STDIN_FILENO)
					close(fd);
				return CNCTL_EXIT_ERROR;
			}
			if (r == 0)
				break;
			if (n >= size) {
				if (fd != STDIN_FILENO)
					close(fd);
				return cnctl_usage_err(cmd, "--file '%s' is more than %zu bytes",
						       file, size);
			}
			n += (size_t)r;
		}
		if (fd != STDIN_FILENO)
			close(fd);
	}
	*len = n;
	return 0;
}

int cnctl_msg_opt(int c, char **argv, struct cnctl_msg_args *m, struct cnctl_opts *o)
{
	switch (c) {
	case 'x':
		m->hex = optarg;
		return 0;
	case 'f':
		m->file = optarg;
		return 0;
	case 's':
		if (cnctl_parse_u32(optarg, &m->seq) < 0)
			return cnctl_usage_err(
			    o->cmd, "invalid --seq value '%s': expected a 32-bit number", optarg);
		m->flags |= CN_SEND_KEEP_SEQ;
		return 0;
	case 'a':
		if (cnctl_parse_u32(optarg, &m->ack) < 0)
			return cnctl_usage_err(
			    o->cmd, "invalid --ack value '%s': expected a 32-bit number", optarg);
		m->flags |= CN_SEND_KEEP_ACK;
		return 0;
	default:
		return cnctl_common_opt(c, argv, o);
	}
}

int cnctl_msg_positional(int argc, char **argv, struct cnctl_msg_args *m,
			 const struct cnctl_opts *o)
{
	if (optind >= argc)
		return cnctl_usage_err(o->cmd, "missing ID (IDX.VAL, e.g. 0x123.0x456)");
	if (cnctl_parse_id(argv[optind], &m->idx, &m->val) < 0)
		return cnctl_usage_err(
		    o->cmd, "invalid ID '%s': expected IDX.VAL (decimal or 0x hex)", argv[optind]);
	if (optind + 1 < argc)
		m->text = argv[optind + 1];
	if (optind + 2 < argc)
		return cnctl_usage_err(o->cmd, "unexpected argument '%s'", argv[optind + 2]);
	return cnctl_check_unit_kmod(o);
}

int cnctl_msg_build(const char *cmd, const struct cnctl_msg_args *m, void *buf, size_t size,
		    struct cn_msg **out)
{
	struct cn_msg *msg = cn_msg_init(buf, size, m->idx, m->val, NULL, 0);
	size_t len = 0;
	int r;

	if (!msg) {
		cnctl_err("%s: building the message: %s", cmd, strerror(errno));
		return CNCTL_EXIT_ERROR;
	}
	r = load_data(cmd, m->text, m->hex, m->file, msg->data, CONNECTOR_MAX_MSG_SIZE, &len);
	if (r)
		return r;
	msg->len = (uint16_t)len;
	msg->seq = m->seq;
	msg->ack = m->ack;
	*out = msg;
	return 0;
}
