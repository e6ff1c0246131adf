/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kstat.h - read cnbus.ko's generic netlink report (guest tests).
 */
#ifndef CNBUS_VM_KSTAT_H
#define CNBUS_VM_KSTAT_H

#include <stdint.h>

#include <libcn/kmod_genl.h>

#define KSTAT_MAX_CPUS 64
#define KSTAT_MAX_CBS  64

struct kstat_cpu {
	uint32_t id;
	uint64_t inserted, sent, dropped, refused, overflowed;
	uint32_t queued;
};

struct kstat_cb {
	uint32_t idx, val;
	char name[CNBUS_NAME_MAX];
};

struct kstat {
	uint32_t unit, groups, max_notify, notify_count, cbus_qlen, cbus_budget;
	char version[CNBUS_VERSION_MAX];
	uint64_t received, dispatched, reply_dropped;
	uint64_t refused[CNBUS_REFUSED_A_MAX + 1];
	unsigned int ncpus;
	struct kstat_cpu cpu[KSTAT_MAX_CPUS];
	unsigned int ncbs;
	struct kstat_cb cb[KSTAT_MAX_CBS];
	/* sums over CPUs */
	uint64_t inserted, sent, dropped, refused_cbus, overflowed, queued;
};

/* Query kmod through libcn (cn_bus_query). Returns 0 or -errno. */
int kstat_get(struct kstat *ks);

/* Sum of the refusals of received messages (all but CBUS_SHUTDOWN, a
 * refused cnbus_insert()): received == dispatched + this. */
uint64_t kstat_refused_total(const struct kstat *ks);

#endif
