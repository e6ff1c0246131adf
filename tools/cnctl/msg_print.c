/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * msg_print.c - one received connector message as a line or a JSON object
 * (listen, request, notify).
 */
#include <stdio.h>
#include <string.h>

#include <libcn.h>

#include "common.h"

/* Is the payload text worth printing as a string: printable ASCII, UTF-8,
 * tabs and newlines, optionally ending in NUL bytes (C strings)? */
static int is_text(const unsigned char *d, size_t n)
{
	while (n > 0 && d[n - 1] == '\0')
		n--;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = d[i];

		if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
			return 0;
		if (c == 0x7f)
			return 0;
	}
	return 1;
}

static void put_hex(FILE *f, const unsigned char *d, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		putc_unlocked(digits[d[i] >> 4], f);
		putc_unlocked(digits[d[i] & 15], f);
	}
}

void cnctl_print_message(FILE *f, const struct cn_message *m, int json, int force_hex,
			 const char *extra)
{
	const struct cn_msg *msg = m->msg;
	const unsigned char *d = msg->data;
	size_t n = msg->len;
	int text = is_text(d, n);

	if (json) {
		fprintf(f,
			"{\"idx\":%u,\"val\":%u,\"seq\":%u,\"ack\":%u,\"len\":%u,\"flags\":%u,"
			"\"port\":%u,\"group\":%u,\"hex\":\"",
			msg->id.idx, msg->id.val, msg->seq, msg->ack, msg->len, msg->flags, m->port,
			m->group);
		put_hex(f, d, n);
		putc_unlocked('"', f);
		if (text) {
			/* json_string stops at the first NUL (trailing NULs of a C string). */
			fputs(",\"text\":", f);
			json_string(f, (const char *)d, n);
		}
		if (extra)
			fputs(extra, f);
		fputs("}\n", f);
		return;
	}
	fprintf(f, "0x%x.0x%x seq=%u ack=%u len=%u flags=0x%x port=%u group=%u", msg->id.idx,
		msg->id.val, msg->seq, msg->ack, msg->len, msg->flags, m->port, m->group);
	if (n > 0 && text && !force_hex) {
		fputs(" data=", f);
		json_string(f, (const char *)d, n);
	} else if (n > 0) {
		fputs(" hex=", f);
		put_hex(f, d, n);
	}
	if (extra)
		fputs(extra, f);
	putc_unlocked('\n', f);
}
