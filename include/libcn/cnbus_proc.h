/* SPDX-License-Identifier: LGPL-2.1-or-later WITH Linux-syscall-note */
/*
 * libcn/cnbus_proc.h - wire format of kmod's process-event producer,
 * cnbus_proc.ko: one record per fork, exec and exit, inserted through CBUS
 * from the scheduler's tracepoints and multicast on kmod's netlink unit.
 * Shared by the module (kmod/cnbus_proc.c) and libcn (cn_kproc_recv(3)),
 * which decodes it into struct cn_kproc_event: programs use that.
 *
 * Only <linux/types.h> style types: the header compiles in the kernel and
 * in userspace. All fields are in host byte order.
 */
#ifndef LIBCN_CNBUS_PROC_H
#define LIBCN_CNBUS_PROC_H

#include <linux/types.h>

/*
 * The id of every record; idx is also the multicast group. Joining that
 * group needs CAP_NET_ADMIN in the initial user namespace (cnbus.ko checks
 * it at every join, loaded producer or not): argv may hold what hidepid
 * hides in /proc.
 */
#define CNBUS_PROC_IDX	     0x2
#define CNBUS_PROC_VAL	     0x1 /* the records */
#define CNBUS_PROC_VAL_STATS 0x2 /* the totals: struct cnbus_proc_stats */

/* Record types (cnbus_proc_record.type). */
#define CNBUS_PROC_FORK 1U /* a task was created (a process or a thread) */
#define CNBUS_PROC_EXEC 2U /* a task ran execve() successfully */
#define CNBUS_PROC_EXIT 3U /* a task exited */

/* Record flags (cnbus_proc_record.flags). */
#define CNBUS_PROC_ARGV_CUT	0x1U /* argv longer than the module's argv_max: cut */
#define CNBUS_PROC_ARGV_FAULT	0x2U /* argv could not be read (all or the rest of it) */
#define CNBUS_PROC_FILENAME_CUT 0x4U /* filename longer than CNBUS_PROC_FILENAME_MAX */

/* Bounds: the filename's bytes, the module's argv_max parameter. */
#define CNBUS_PROC_FILENAME_MAX 4096U
#define CNBUS_PROC_ARGV_DEFAULT 4096U
#define CNBUS_PROC_ARGV_MAX	8192U

/* Bytes of a record's comm: the kernel's TASK_COMM_LEN. */
#define CNBUS_PROC_COMM_LEN 16U

/*
 * One record: the payload of a cn_msg with id {CNBUS_PROC_IDX,
 * CNBUS_PROC_VAL} whose seq is the per-CPU sequence number of the record
 * (the CPU is in the record): every record the module makes on a CPU takes
 * the next number, inserted or not, so a gap in one CPU's numbers is a
 * loss. While no socket is in the group the module makes no record (and
 * takes no number): a listener's first record from a CPU starts its count. ack is 0. Pids are those of the initial pid namespace, ids those
 * of the initial user namespace.
 *
 * An exec record is followed by filename_len bytes of the filename the
 * program was started with (bprm->filename, no NUL) and argv_len bytes of
 * the new image's argv, as /proc/PID/cmdline has them (each argument ends
 * with a NUL); argv_total is argv's whole length, larger than argv_len
 * when it was cut (CNBUS_PROC_ARGV_CUT). Fork and exit records carry
 * nothing after the struct. A later version may append fields: readers
 * take the data at hdr_len, and a field only when hdr_len covers it (comm
 * was appended: records of an older module end before it).
 */
struct cnbus_proc_record {
	__u16 hdr_len;	    /* sizeof(struct cnbus_proc_record): where the data starts */
	__u16 type;	    /* CNBUS_PROC_FORK, _EXEC, _EXIT */
	__u32 cpu;	    /* the CPU of the record and of its sequence number */
	__u64 timestamp_ns; /* CLOCK_MONOTONIC (ktime_get_ns()) */
	__s32 pid;	    /* the task (fork: the child) */
	__s32 tgid;	    /* its process */
	__s32 parent_pid;   /* its real parent (as the proc connector reports) */
	__s32 parent_tgid;
	__u32 ruid, euid;   /* real and effective user ids */
	__u32 rgid, egid;   /* real and effective group ids */
	__u32 exit_code;    /* exit: wait(2) status */
	__s32 exit_signal;  /* exit: the signal the parent gets (-1: none, a thread) */
	__u32 flags;	    /* CNBUS_PROC_ARGV_CUT, ... */
	__u32 filename_len; /* exec: bytes of filename after the struct */
	__u32 argv_len;	    /* exec: bytes of argv after the filename */
	__u32 argv_total;   /* exec: argv's whole length in the new image */
	/* The task's name (exec: the new one), NUL-padded. */
	char comm[CNBUS_PROC_COMM_LEN];
};

/* hdr_len of a record made before comm was appended: the least there is. */
#define CNBUS_PROC_RECORD_MIN 72U

/*
 * The producer's totals since it was loaded, summed over the CPUs: the
 * answer (id {CNBUS_PROC_IDX, CNBUS_PROC_VAL_STATS}, same seq, ack + 1) to
 * any message sent to that id. Every record
 * made took a sequence number; it was inserted, or refused by CBUS (the
 * CPU's ring was full: a gap in that CPU's numbers). records = inserted +
 * refused once no probe runs.
 */
struct cnbus_proc_stats {
	__u64 records;	/* records made (sequence numbers taken) */
	__u64 inserted; /* accepted by cnbus_insert() */
	__u64 refused;	/* refused by cnbus_insert(): lost */
	__u32 argv_max; /* the module's argv_max parameter */
	__u32 pad;	/* 0 */
};

#endif /* LIBCN_CNBUS_PROC_H */
