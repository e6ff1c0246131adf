// SPDX-License-Identifier: GPL-2.0
/*
 * The records of cnbus_proc.ko (include/libcn/cnbus_proc.h): filled from a
 * task, numbered per CPU and inserted through CBUS, from the tracepoints'
 * own context.
 *
 * Every call here runs with preemption off (the tracepoint's, and the
 * probes' own preempt_disable(), cnbus_proc_main.c): that is what protects
 * the per-CPU state below, which has no lock. Nothing sleeps, faults or
 * allocates: fork and exit records are built on the stack, exec records in
 * a per-CPU buffer made at load; argv is read with copy_from_user_nofault().
 * No record can start on a CPU while another is being built there: the
 * three tracepoints are reached from task context only.
 */
#include <linux/cred.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "cnbus.h"
#include "cnbus_proc_internal.h"

/* One CPU's sequence and counters (written by that CPU only). */
struct cnbus_proc_cpu {
	u32 seq;     /* the next record's number */
	u64 records; /* numbers taken */
	u64 refused; /* of them refused by cnbus_insert() */
};

static DEFINE_PER_CPU(struct cnbus_proc_cpu, cnbus_proc_cpus);

/* Exec records: cn_msg, record, filename and argv (argv_max bytes). */
static void __percpu *cnbus_proc_bufs;

int cnbus_proc_record_init(void)
{
	size_t size = sizeof(struct cn_msg) + sizeof(struct cnbus_proc_record) +
		      CNBUS_PROC_FILENAME_MAX + cnbus_proc_argv_max;

	cnbus_proc_bufs = __alloc_percpu(size, __alignof__(u64));
	return cnbus_proc_bufs ? 0 : -ENOMEM;
}

void cnbus_proc_record_exit(void)
{
	free_percpu(cnbus_proc_bufs);
	cnbus_proc_bufs = NULL;
}

void cnbus_proc_totals(struct cnbus_proc_stats *st)
{
	unsigned int cpu;

	memset(st, 0, sizeof(*st));
	for_each_possible_cpu(cpu) {
		const struct cnbus_proc_cpu *c = per_cpu_ptr(&cnbus_proc_cpus, cpu);

		st->records += READ_ONCE(c->records);
		st->refused += READ_ONCE(c->refused);
	}
	st->inserted = st->records - st->refused;
	st->argv_max = cnbus_proc_argv_max;
}

static_assert(offsetof(struct cnbus_proc_record, comm) == CNBUS_PROC_RECORD_MIN);
static_assert(sizeof(((struct task_struct *)0)->comm) == CNBUS_PROC_COMM_LEN);

/* The fields every record has, from @p. */
static void cnbus_proc_fill(struct cnbus_proc_record *r, u16 type, struct task_struct *p)
{
	struct task_struct *parent;
	const struct cred *cred;

	memset(r, 0, sizeof(*r));
	r->hdr_len = sizeof(*r);
	r->type = type;
	r->cpu = smp_processor_id();
	r->timestamp_ns = ktime_get_ns();
	r->pid = task_pid_nr(p);
	r->tgid = task_tgid_nr(p);
	rcu_read_lock();
	cred = __task_cred(p);
	r->ruid = from_kuid_munged(&init_user_ns, cred->uid);
	r->euid = from_kuid_munged(&init_user_ns, cred->euid);
	r->rgid = from_kgid_munged(&init_user_ns, cred->gid);
	r->egid = from_kgid_munged(&init_user_ns, cred->egid);
	/*
	 * Not get_task_comm(): its task_lock() sleeps on PREEMPT_RT. A name
	 * changed meanwhile (prctl) is read torn at worst, and always ends
	 * with a NUL; exec set the new name before its tracepoint.
	 */
	strscpy_pad(r->comm, p->comm, sizeof(r->comm));
	if (pid_alive(p)) {
		parent = rcu_dereference(p->real_parent);
		r->parent_pid = task_pid_nr(parent);
		r->parent_tgid = task_tgid_nr(parent);
	}
	rcu_read_unlock();
}

/*
 * Number the record in @msg (@len bytes of payload) and insert it. The
 * number is taken whether or not CBUS accepts it, so a refusal shows as a
 * gap in this CPU's numbers; a blocking gfp would sleep on a full ring.
 */
static void cnbus_proc_send(struct cn_msg *msg, size_t len)
{
	struct cnbus_proc_cpu *c = this_cpu_ptr(&cnbus_proc_cpus);

	msg->id.idx = CNBUS_PROC_IDX;
	msg->id.val = CNBUS_PROC_VAL;
	msg->seq = c->seq++;
	msg->ack = 0;
	msg->len = len;
	msg->flags = 0;
	WRITE_ONCE(c->records, c->records + 1);
	if (cnbus_insert(msg, GFP_NOWAIT))
		WRITE_ONCE(c->refused, c->refused + 1);
}

/* A record with nothing after the struct (fork, exit), sent from the stack. */
static void cnbus_proc_send_small(const struct cnbus_proc_record *r)
{
	u8 buf[sizeof(struct cn_msg) + sizeof(*r)] __aligned(8);
	struct cn_msg *msg = (struct cn_msg *)buf;

	memcpy(msg->data, r, sizeof(*r));
	cnbus_proc_send(msg, sizeof(*r));
}

void cnbus_proc_rec_fork(struct task_struct *child)
{
	struct cnbus_proc_record r;

	cnbus_proc_fill(&r, CNBUS_PROC_FORK, child);
	cnbus_proc_send_small(&r);
}

void cnbus_proc_rec_exit(struct task_struct *p)
{
	struct cnbus_proc_record r;

	cnbus_proc_fill(&r, CNBUS_PROC_EXIT, p);
	r.exit_code = p->exit_code;
	r.exit_signal = p->exit_signal;
	cnbus_proc_send_small(&r);
}

/*
 * Copy at most argv_max bytes of the new image's argv (what
 * /proc/PID/cmdline shows) to @dst; returns how many. The exec is @p's own
 * (the tracepoint runs in the task that execs) and its argv was written by
 * this exec, so the pages are there; copy_from_user_nofault() fails rather
 * than fault if one is not, and the record says so. arg_start and arg_end
 * are read without mm->arg_lock (a sleeping lock on PREEMPT_RT): only the
 * task itself can move them (prctl(PR_SET_MM)), and it is here.
 */
static u32 cnbus_proc_argv(struct task_struct *p, char *dst, struct cnbus_proc_record *r)
{
	unsigned long start, end, len, done = 0;
	struct mm_struct *mm = p->mm;

	if (p != current || !mm) {
		r->flags |= CNBUS_PROC_ARGV_FAULT;
		return 0;
	}
	start = READ_ONCE(mm->arg_start);
	end = READ_ONCE(mm->arg_end);
	if (end <= start)
		return 0;
	len = end - start;
	r->argv_total = min_t(unsigned long, len, U32_MAX);
	if (len > cnbus_proc_argv_max) {
		len = cnbus_proc_argv_max;
		r->flags |= CNBUS_PROC_ARGV_CUT;
	}
	/* Page by page: a page that cannot be read ends argv, not the record. */
	while (done < len) {
		unsigned long at = start + done;
		unsigned long chunk = min(len - done, PAGE_SIZE - offset_in_page(at));

		if (copy_from_user_nofault(dst + done, (const void __user *)at, chunk)) {
			r->flags |= CNBUS_PROC_ARGV_FAULT;
			break;
		}
		done += chunk;
	}
	return done;
}

void cnbus_proc_rec_exec(struct task_struct *p, struct linux_binprm *bprm)
{
	struct cn_msg *msg = this_cpu_ptr(cnbus_proc_bufs);
	char *data = (char *)msg->data + sizeof(struct cnbus_proc_record);
	struct cnbus_proc_record r;
	size_t flen;

	cnbus_proc_fill(&r, CNBUS_PROC_EXEC, p);
	flen = strnlen(bprm->filename, CNBUS_PROC_FILENAME_MAX + 1);
	if (flen > CNBUS_PROC_FILENAME_MAX) {
		flen = CNBUS_PROC_FILENAME_MAX;
		r.flags |= CNBUS_PROC_FILENAME_CUT;
	}
	memcpy(data, bprm->filename, flen);
	r.filename_len = flen;
	r.argv_len = cnbus_proc_argv(p, data + flen, &r);
	memcpy(msg->data, &r, sizeof(r));
	cnbus_proc_send(msg, sizeof(r) + flen + r.argv_len);
}
