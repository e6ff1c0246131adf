/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz_notify.c - libFuzzer target: notification control messages.
 * cn_notify_validate on the raw input (a {-1,-1} control payload, what kmod
 * checks), cn_notify_decode on the input taken as a cn_msg, and a round
 * trip: ranges taken from the input, built with cn_notify_build, must
 * validate.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libcn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	struct cn_notification n;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	(void)cn_notify_validate(copy, size);
	if (size >= sizeof(struct cn_msg)) {
		struct cn_msg *m = (struct cn_msg *)copy;

		m->len = (uint16_t)(size - sizeof(*m) > 0xffff ? 0xffff : size - sizeof(*m));
		if (cn_notify_decode(m, &n) == 0 && (n.added != 0 && n.added != 1))
			abort();
	}
	free(copy);

	/* Round trip: first byte splits the ranges between idx and val. */
	if (size >= 1 + 2 * sizeof(struct cn_range)) {
		struct cn_range r[CN_NOTIFY_MAX_RANGES + 2];
		size_t nr = (size - 1) / sizeof(struct cn_range);
		unsigned int nidx;
		union {
			struct cn_msg m;
			uint8_t b[CN_NOTIFY_SIZE(CN_NOTIFY_MAX_RANGES + 2, 0)];
		} u;
		struct cn_msg *m;

		if (nr > CN_NOTIFY_MAX_RANGES + 2)
			nr = CN_NOTIFY_MAX_RANGES + 2;
		memcpy(r, data + 1, nr * sizeof(r[0]));
		nidx = 1 + data[0] % (unsigned int)(nr - 1);
		m = cn_notify_build(&u, sizeof(u), r, nidx, r + nidx, (unsigned int)nr - nidx,
				    1 + data[0]);
		if (m && cn_notify_validate(m->data, m->len) != 0)
			abort(); /* what we build, kmod must accept */
		if (!m == (nr <= CN_NOTIFY_MAX_RANGES))
			abort(); /* fails exactly when there are too many ranges */
	}
	return 0;
}
