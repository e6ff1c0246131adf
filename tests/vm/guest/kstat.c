// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kstat.c - cnbus.ko's report for the guest tests, read through libcn's
 * cn_bus_query() (generic netlink family "cnbus"), which has no bound on
 * the number of CPUs or callbacks: neither has this.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libcn/kmod.h>

#include "kstat.h"

int kstat_get_lists(struct kstat *ks)
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
	ks->possible_cpus = info->possible_cpus;
	memcpy(ks->version, info->version, sizeof(ks->version));
	ks->version[sizeof(ks->version) - 1] = '\0';
	ks->received = info->received;
	ks->dispatched = info->dispatched;
	ks->reply_dropped = info->reply_dropped;
	/* Same order in both enums (src/kmod.c asserts it). */
	for (i = 0; i < CN_BUS_REFUSED_COUNT; i++)
		ks->refused[CNBUS_REFUSED_A_FIRST + i] = info->refused[i];
	ks->ncbs = info->ncallbacks;
	ks->ncpus = info->ncpus;
	for (i = 0; i < info->ncpus; i++) {
		const struct cn_bus_cpu *c = &info->cpus[i];

		ks->inserted += c->inserted;
		ks->sent += c->sent;
		ks->dropped += c->dropped;
		ks->refused_cbus += c->refused;
		ks->overflowed += c->overflowed;
		ks->queued += c->queued;
	}
	ks->cpu = info->cpus;
	ks->cb = info->callbacks;
	ks->info = info;
	return 0;
}

int kstat_get(struct kstat *ks)
{
	int r = kstat_get_lists(ks);

	kstat_free(ks);
	return r;
}

void kstat_free(struct kstat *ks)
{
	cn_bus_info_free(ks->info);
	ks->info = NULL;
	ks->cpu = NULL;
	ks->cb = NULL;
}

static double kstat_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int kstat_wait_drained(struct kstat *ks, double timeout_s)
{
	double end = kstat_now() + timeout_s;

	for (;;) {
		if (kstat_get(ks))
			return -EIO;
		if (!ks->queued && ks->inserted == ks->sent + ks->dropped)
			return 0;
		if (kstat_now() > end)
			return -ETIMEDOUT;
		usleep(20000);
	}
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
