/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kstat.h - read cnbus.ko's generic netlink report (guest tests).
 */
#ifndef CNBUS_VM_KSTAT_H
#define CNBUS_VM_KSTAT_H

#include <stdint.h>

#include <libcn/kmod.h>
#include <libcn/kmod_genl.h>

struct kstat {
	uint32_t unit, groups, max_notify, notify_count, cbus_qlen, cbus_budget, possible_cpus;
	char version[CNBUS_VERSION_MAX];
	uint64_t received, dispatched, reply_dropped;
	uint64_t refused[CNBUS_REFUSED_A_MAX + 1];
	unsigned int ncpus; /* CPUs kmod listed: every possible one */
	unsigned int ncbs;  /* callbacks kmod listed */
	/* sums over CPUs, online or not (an offline CPU's counters stay) */
	uint64_t inserted, sent, dropped, refused_cbus, overflowed, queued;
	/* kstat_get_lists() only, until kstat_free(): the lists themselves */
	const struct cn_bus_cpu *cpu;	  /* ncpus of them */
	const struct cn_bus_callback *cb; /* ncbs of them */
	struct cn_bus_info *info;
};

/* Query kmod through libcn (cn_bus_query): counts and sums, no lists
 * (nothing to free). Returns 0 or -errno. */
int kstat_get(struct kstat *ks);

/* The same with the lists of CPUs and callbacks, however long; free them
 * with kstat_free. */
int kstat_get_lists(struct kstat *ks);
void kstat_free(struct kstat *ks);

/* Wait (up to timeout_s) until every CBUS queue is empty and inserted ==
 * sent + dropped; *ks is the last report. Returns 0, -ETIMEDOUT or -EIO. */
int kstat_wait_drained(struct kstat *ks, double timeout_s);

/* Sum of the refusals of received messages (all but CBUS_SHUTDOWN, a
 * refused cnbus_insert()): received == dispatched + this. */
uint64_t kstat_refused_total(const struct kstat *ks);

#endif
