/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_kmod.c - `cnctl proc`'s events from cnbus_proc.ko (kmod/): fork,
 * exec and exit records whose exec carries the command line the kernel
 * read at the exec, so a process gone before /proc could be read is
 * named. They are handed on as the proc connector's events are (struct
 * cn_proc_event: the tracker, the filters and the lines take them
 * unchanged), with the command lines prefetched from the records and
 * each task's name (comm) taken from its record.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <libcn/kmod.h>

#include "proc.h"

int proc_kmod_open(struct proc_state *st, const struct cn_open_opts *oo)
{
	int r;

	if (access("/sys/module/cnbus_proc", F_OK))
		return -ENODEV;
	st->s = cn_bus_open(oo);
	if (!st->s)
		return errno == ENOENT ? -ENODEV : -errno;
	r = cn_bus_proc_listen(st->s);
	if (r) {
		cn_close(st->s);
		st->s = NULL;
		return r;
	}
	st->kmod = 1;
	return 0;
}

int proc_kmod_recv(struct proc_state *st, struct cn_proc_event *ev, unsigned int flags)
{
	struct cn_bus_proc_event k[PROC_BATCH];
	const char *argv[PROC_BATCH];
	size_t len[PROC_BATCH];
	int cut[PROC_BATCH];
	int n = cn_bus_proc_recv_batch(st->s, k, PROC_BATCH, flags);

	for (int i = 0; i < n; i++) {
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].what = k[i].what;
		ev[i].cpu = k[i].cpu;
		ev[i].seq = k[i].seq;
		ev[i].timestamp_ns = k[i].timestamp_ns;
		ev[i].pid = k[i].pid;
		ev[i].tgid = k[i].tgid;
		ev[i].ruid = k[i].ruid;
		ev[i].euid = k[i].euid;
		ev[i].lost_before = k[i].lost_before;
		/* The tracker names the task from it, not from /proc. */
		memcpy(ev[i].comm, k[i].comm, sizeof(ev[i].comm));
		if (k[i].what != CN_PROC_EXEC) {
			ev[i].parent_pid = k[i].parent_pid;
			ev[i].parent_tgid = k[i].parent_tgid;
		}
		if (k[i].what == CN_PROC_EXIT) {
			ev[i].exit_code = k[i].exit_code;
			ev[i].exit_signal = (uint32_t)k[i].exit_signal;
		}
		argv[i] = k[i].what == CN_PROC_EXEC ? k[i].argv : NULL;
		len[i] = k[i].argv_len;
		cut[i] = (k[i].flags & CN_BUS_PROC_ARGV_CUT) != 0;
	}
	if (n > 0)
		proc_info_prefetch_argv(st, ev, n, argv, len, cut);
	return n;
}
