/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz_proc.c - libFuzzer target: proc connector event decoding.
 * The input is a cn_msg (20-byte header, then payload); its len is set to
 * the payload actually present, as cn_parse_next guarantees for received
 * messages. Also feeds the input, as a string, to cn_proc_parse_mask.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libcn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cn_proc_event ev;
	struct cn_msg *m;
	char *str;
	uint32_t mask;

	if (size >= sizeof(struct cn_msg) &&
	    size - sizeof(struct cn_msg) <= CONNECTOR_MAX_MSG_SIZE) {
		m = malloc(size);
		if (!m)
			return 0;
		memcpy(m, data, size);
		m->len = (uint16_t)(size - sizeof(*m));
		if (cn_proc_decode(m, &ev) == 0) {
			(void)cn_proc_what_name(ev.what);
			if (memchr(ev.comm, '\0', sizeof(ev.comm)) == NULL)
				abort(); /* comm must be NUL-terminated */
		}
		free(m);
	}

	str = malloc(size + 1);
	if (!str)
		return 0;
	memcpy(str, data, size);
	str[size] = '\0';
	if (cn_proc_parse_mask(str, &mask) == 0 && (mask & ~(uint32_t)CN_PROC_ALL))
		abort(); /* only known bits */
	free(str);
	return 0;
}
