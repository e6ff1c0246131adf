/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz_parse.c - libFuzzer target: datagram framing. Walks a whole received
 * datagram with cn_parse_next, as cn_recv does, and hands every message it
 * accepts to the decoders (cn_proc_decode, cn_notify_decode, cn_is_reply).
 * Checks: the walk always advances and ends, accepted messages lie inside
 * the datagram and their cn_msg.len fits.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libcn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exactly sized, 4-byte aligned copy, as in a receive slot, so
	 * AddressSanitizer sees any read past the datagram. */
	uint8_t *buf = malloc(size ? size : 1);
	struct cn_parse_pos pos = { 0 };
	static union {
		struct cn_msg m;
		uint8_t b[sizeof(struct cn_msg) + 65536];
	} rec; /* an aligned copy of each record */

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	for (unsigned int steps = 0; steps <= size; steps++) {
		const struct cn_msg *m = NULL;
		size_t before = pos.offset;
		int r = cn_parse_next(buf, size, &pos, &m);

		if (r == 0)
			break;
		if (pos.offset <= before || pos.offset > size || pos.msg_end > size)
			abort(); /* must advance, must stay inside */
		if (r == -EBADMSG)
			break;
		if (r < 0)
			continue;
		struct cn_msg h;

		if (!m || (const uint8_t *)m < buf)
			abort();
		/* A record of a w1 bundle may be unaligned: read through a
		 * copy, as libcn.h tells callers of cn_parse_next to. */
		memcpy(&h, m, sizeof(h));
		if ((const uint8_t *)m + sizeof(h) + h.len > buf + size)
			abort();
		memcpy(rec.b, m, sizeof(h) + h.len);
		m = &rec.m;

		struct cn_proc_event ev;
		struct cn_notification n;

		if (cn_proc_decode(m, &ev) == 0)
			(void)cn_proc_what_name(ev.what);
		(void)cn_notify_decode(m, &n);
		(void)cn_is_reply(m, m, CN_MATCH_STRICT);
		if (m->len)
			(void)cn_notify_validate(m->data, m->len);
	}
	free(buf);
	return 0;
}
