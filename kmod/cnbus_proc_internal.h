/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the two files of cnbus_proc.ko share:
 *
 *   cnbus_proc_record.c  the records: filled from a task, argv read without
 *                        faulting, numbered per CPU, inserted through CBUS
 *   cnbus_proc_main.c    the argv_max parameter, the tracepoints, the id's
 *                        callback (the counters), init and exit
 */
#ifndef CNBUS_PROC_INTERNAL_H
#define CNBUS_PROC_INTERNAL_H

#include <linux/binfmts.h>
#include <linux/sched.h>

#include <libcn/cnbus_proc.h>

extern unsigned int cnbus_proc_argv_max;

/* record: per-CPU state (counters, sequence numbers, the exec buffer). */
int cnbus_proc_record_init(void);
void cnbus_proc_record_exit(void);
void cnbus_proc_totals(struct cnbus_proc_stats *st);

/* record: one record each; preemption off (the tracepoints' context). */
void cnbus_proc_rec_fork(struct task_struct *child);
void cnbus_proc_rec_exec(struct task_struct *p, struct linux_binprm *bprm);
void cnbus_proc_rec_exit(struct task_struct *p);

#endif /* CNBUS_PROC_INTERNAL_H */
