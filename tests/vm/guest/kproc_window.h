/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kproc_window.h - cnbus_proc.ko's loss counted exactly (guest tests
 * kproc_overrun_exact and kproc_ring_refused, bench/cbus-proc's cbp-loss).
 * The module numbers every record it makes per CPU (cn_msg.seq), whether
 * or not CBUS or the socket keeps it; so between the exits of two children
 * pinned to a CPU (sentinels), the records received from that CPU plus the
 * loss libcn reported before them must be the records numbered there.
 */
#ifndef CNBUS_VM_KPROC_WINDOW_H
#define CNBUS_VM_KPROC_WINDOW_H

#include <stdint.h>
#include <sys/types.h>

#include <libcn/kmod.h>

#define KWIN_CPUS 64

/* Each CPU's window: from its first sentinel's record to its last's. */
struct kwin {
	int64_t first[KWIN_CPUS], last[KWIN_CPUS]; /* the sentinels' seqs, -1: none yet */
	uint64_t received[KWIN_CPUS], lost[KWIN_CPUS];
};

/* No sentinel seen, nothing counted. */
void kwin_init(struct kwin *w);

/* A child pinned to cpu that waits wait_ms (0: not at all) and exits: its
 * exit record is numbered on that CPU. Reaped; its pid, or -1. */
pid_t kwin_sentinel(int cpu, unsigned int wait_ms);

/* Count record ev: received, with the loss before it, while its CPU's
 * window is open. The exit of sentinel[cpu] (ncpus of them; NULL: none
 * awaited), the first seen, opens that CPU's window (first) or closes it.
 * Returns 1 for such a sentinel, 0 for another record, -ERANGE for a CPU
 * from KWIN_CPUS on. */
int kwin_count(struct kwin *w, const struct cn_bus_proc_event *ev, const pid_t *sentinel, int ncpus,
	       int first);

/* The windows of CPUs 0 to ncpus - 1, summed. */
struct kwin_sum {
	uint64_t numbered, received, lost;
	uint64_t silent; /* over the CPUs, |numbered - received - lost| each */
	int bad_cpu;	 /* the first CPU where that is not 0, -1: none */
};
void kwin_sum(const struct kwin *w, int ncpus, struct kwin_sum *sum);

#endif
