// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kstat.c - cnbus.ko's report for the guest tests, read through libcn's
 * cn_bus_query() (generic netlink family "cnbus").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libcn/kmod.h>

#include "kstat.h"

int kstat_get(struct kstat *ks)
{
	struct cn_bus_info *info;
	unsigned int i;
	int r;

	memset(ks, 0, sizeof(*ks));
	r = cn_bus_query(&info);
	if (r)
		return r;
	ks->unit = info->unit;
	ks->groups = info->groups;
	ks->max_notify = info->max_notify;
	ks->notify_count = info->notify_count;
	ks->cbus_qlen = info->cbus_qlen;
	ks->cbus_budget = info->cbus_budget;
	memcpy(ks->version, info->version, sizeof(ks->version));
	ks->version[sizeof(ks->version) - 1] = '\0';
	ks->received = info->received;
	ks->dispatched = info->dispatched;
	ks->reply_dropped = info->reply_dropped;
	/* Same order in both enums (src/kmod.c asserts it). */
	for (i = 0; i < CN_BUS_REFUSED_COUNT; i++)
		ks->refused[CNBUS_REFUSED_A_FIRST + i] = info->refused[i];
	for (i = 0; i < info->ncallbacks && i < KSTAT_MAX_CBS; i++) {
		ks->cb[i].idx = info->callbacks[i].idx;
		ks->cb[i].val = info->callbacks[i].val;
		memcpy(ks->cb[i].name, info->callbacks[i].name, sizeof(ks->cb[i].name));
		ks->cb[i].name[sizeof(ks->cb[i].name) - 1] = '\0';
	}
	ks->ncbs = i;
	for (i = 0; i < info->ncpus && i < KSTAT_MAX_CPUS; i++) {
		struct kstat_cpu *c = &ks->cpu[i];

		c->id = info->cpus[i].cpu;
		c->inserted = info->cpus[i].inserted;
		c->sent = info->cpus[i].sent;
		c->dropped = info->cpus[i].dropped;
		c->refused = info->cpus[i].refused;
		c->overflowed = info->cpus[i].overflowed;
		c->queued = info->cpus[i].queued;
		ks->inserted += c->inserted;
		ks->sent += c->sent;
		ks->dropped += c->dropped;
		ks->refused_cbus += c->refused;
		ks->overflowed += c->overflowed;
		ks->queued += c->queued;
	}
	ks->ncpus = i;
	if (ks->ncbs < info->ncallbacks || i < info->ncpus)
		r = -E2BIG;
	cn_bus_info_free(info);
	return r;
}

uint64_t kstat_refused_total(const struct kstat *ks)
{
	uint64_t t = 0;
	int i;

	for (i = CNBUS_REFUSED_A_FIRST; i <= CNBUS_REFUSED_A_MAX; i++)
		if (i != CNBUS_REFUSED_A_CBUS_SHUTDOWN)
			t += ks->refused[i];
	return t;
}
