/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz_kmod_reply.c - libFuzzer target: kmod's generic netlink dump
 * (CNBUS_CMD_DUMP), parsed by cn_bus_parse_reply (what cn_bus_query uses);
 * every callback and CPU entry is read so ASan sees the array bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libcn/kmod.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cn_bus_info *info;
	uint8_t *buf = malloc(size ? size : 1);
	uint64_t sum = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (cn_bus_parse_reply(buf, size, &info) == 0) {
		for (uint32_t i = 0; i < info->ncallbacks; i++)
			sum += info->callbacks[i].idx +
			       strnlen(info->callbacks[i].name, sizeof(info->callbacks[i].name));
		for (uint32_t i = 0; i < info->ncpus; i++)
			sum += info->cpus[i].inserted + info->cpus[i].queued;
		sink = sum; /* keeps the reads */
		cn_bus_info_free(info);
	}
	free(buf);
	return 0;
}
