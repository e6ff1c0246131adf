/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_tracker.h - the process tracker's table and its /proc reader, shared
 * by proc_tracker.c (table, events, sync) and proc_scan.c (/proc). */
#ifndef LIBCN_PROC_TRACKER_H
#define LIBCN_PROC_TRACKER_H

#include <stddef.h>

#include "hash_table.h"
#include "internal.h"

/* One table slot (hash_table.h, keyed by pid): the public entry, the sync
 * generation that last saw it in /proc, and how many live processes in the
 * table name it as their parent (so that its exit looks for children to
 * reparent only when it has some). No task has pid 0 in /proc or in an
 * event's subject, so key 0 can mark a free slot.
 *
 * A process's slot (pid == tgid) stands for the process until its last
 * thread exits (docs/DESIGN.md, "Process exits"): threads counts its live
 * tasks as the tracker knows them (its main thread unless
 * CN_PROC_ENTRY_MAIN_EXITED, and its other threads), and the exit that
 * takes it to 0 is the process's. core: a thread of it left with a core
 * dump (only the dumping thread's exit code carries the bit, and it need
 * not be the last).
 *
 * The caller's data (cn_proc_tracker_opts.data_size bytes) follows the
 * struct, at PROC_SLOT_DATA, in the same slot: it moves with the entry
 * when a deletion shifts slots back. */
struct cn_proc_slot {
	uint64_t key; /* the pid */
	struct cn_proc_entry e;
	uint32_t gen;
	uint32_t children;
	uint32_t threads;
	uint32_t core;
};

/* Where a slot's caller data starts: aligned as malloc's memory is, as the
 * slots themselves are (their size is a multiple of it). */
#define PROC_SLOT_ALIGN _Alignof(max_align_t)
#define PROC_SLOT_DATA                                                                             \
	((sizeof(struct cn_proc_slot) + PROC_SLOT_ALIGN - 1) & ~(PROC_SLOT_ALIGN - 1))

struct cn_proc_tracker {
	struct cn__htab tab;	      /* the slots; tab.max: entries kept at most */
	uint32_t live;		      /* tasks alive as far as the tracker knows */
	uint32_t flags;		      /* CN_PROC_TRACKER_* */
	uint32_t gen;		      /* current sync generation */
	int blind;		      /* events were lost since the last sync */
	uint64_t lost_first_ns;	      /* CLOCK_MONOTONIC when the first loss since the
				      last sync was told (0: none) */
	uint64_t lost_last_ns;	      /* ... and the last one */
	uint64_t synced_ns;	      /* CLOCK_MONOTONIC when the last complete sync
				      began (0: none): a gap of events before it
				      is one that sync repaired */
	int proc_fd;		      /* the procfs root, O_PATH */
	uint32_t data_size;	      /* the caller's bytes per entry */
	cn_proc_data_end_fn data_end; /* told when an entry's data ends; NULL: none */
	void *data_arg;
	/* The last entry an exit removed, with its data: a slot of the
	 * table's size, not in the table. held: its data has not ended yet
	 * (it does at the next change, when it is no longer valid). */
	struct cn_proc_slot *gone;
	int gone_held;
	struct cn_proc_tracker_stats st;
};

/* A task as /proc shows it. */
struct cn_proc_task {
	pid_t pid, tgid, ppid;
	uint64_t start_ns; /* CLOCK_MONOTONIC */
	char comm[16];
	/* A zombie (or dead): its exit event is sent already. live_threads:
	 * its process still runs in other threads (a main thread that left by
	 * pthread_exit is a zombie until the last one exits). */
	uint8_t zombie, live_threads;
	uint32_t threads; /* num_threads: its process's threads not yet reaped */
};

/* proc_scan.c */
/* Read task `pid`'s comm into comm[16] (dirfd: the procfs root). 0 or -errno. */
int cn__proc_read_comm(int proc_fd, pid_t pid, char comm[16]);
/* Read task `pid`'s parent process id (PPid) into *ppid. 0 or -errno. */
int cn__proc_read_ppid(int proc_fd, pid_t pid, pid_t *ppid);
/* Call fn for every task in procfs (threads too unless no_threads); stops
 * when fn returns < 0 and returns that. 0 or -errno. */
int cn__proc_scan(int proc_fd, int no_threads, int (*fn)(const struct cn_proc_task *, void *),
		  void *arg);

#endif /* LIBCN_PROC_TRACKER_H */
