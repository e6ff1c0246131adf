/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz_kmod_reply.c - libFuzzer target: kmod's generic netlink reply to
 * CNBUS_CMD_GET, parsed by cn_kmod_parse_reply (what cn_kmod_query uses).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libcn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cn_kmod_info info;
	uint8_t *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (cn_kmod_parse_reply(buf, size, &info) == 0 &&
	    (info.ncallbacks > CN_KMOD_MAX_CALLBACKS || info.ncpus > CN_KMOD_MAX_CPUS))
		abort();
	free(buf);
	return 0;
}
