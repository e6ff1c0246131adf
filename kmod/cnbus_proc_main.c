// SPDX-License-Identifier: GPL-2.0
/*
 * cnbus_proc.ko: process events through CBUS. One record per fork, exec
 * (with the filename and argv) and exit, made in the scheduler's
 * tracepoints sched_process_fork, sched_process_exec and
 * sched_process_exit and inserted with cnbus_insert(): the wire format is
 * include/libcn/cnbus_proc.h, the records are built in cnbus_proc_record.c.
 *
 * The tracepoints are not exported as symbols to modules, so they are
 * found by name (for_each_kernel_tracepoint(), as out-of-tree tracers do)
 * and the probes attached with tracepoint_probe_register(). At unload,
 * tracepoint_synchronize_unregister() waits for the probes still running,
 * so none runs once the module's code is gone.
 *
 * Who may read the records is cnbus.ko's decision: it lets only a task
 * with CAP_NET_ADMIN in the initial user namespace join CNBUS_PROC_IDX.
 * The module has no lock: its state is per CPU, written with preemption
 * off (cnbus_proc_record.c), and its callbacks only read it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "cnbus.h"
#include "cnbus_proc_internal.h"

unsigned int cnbus_proc_argv_max = CNBUS_PROC_ARGV_DEFAULT;

/* Decimal, in [0, CNBUS_PROC_ARGV_MAX], as cnbus.ko's parameters. */
static int cnbus_proc_argv_max_set(const char *arg, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(arg, 10, &v) || v > CNBUS_PROC_ARGV_MAX) {
		pr_err("%s must be a number in [0, %u]\n", kp->name, CNBUS_PROC_ARGV_MAX);
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops cnbus_proc_argv_max_ops = {
	.set = cnbus_proc_argv_max_set,
	.get = param_get_uint,
};

module_param_cb(argv_max, &cnbus_proc_argv_max_ops, &cnbus_proc_argv_max, 0444);
MODULE_PARM_DESC(argv_max, "bytes of argv an exec record carries, 0..8192 (default 4096)");

/*
 * The probes. Tracepoints run them with preemption off; they say so
 * themselves too, since the records' per-CPU state depends on it.
 *
 * With no socket in the records' group a probe makes nothing: no number is
 * taken and nothing counted, so a producer nobody reads costs one bit test
 * per event. Numbering stays exact for listeners: while one is joined the
 * group has a listener, so every record it could see is made; a listener
 * that joins later starts from the first number it receives (libcn's loss
 * tracking takes a CPU's first number as its start).
 */
static bool cnbus_proc_listened(void)
{
	return cnbus_has_listeners(CNBUS_PROC_IDX);
}

static void cnbus_proc_probe_fork(void *data, struct task_struct *parent, struct task_struct *child)
{
	if (!cnbus_proc_listened())
		return;
	preempt_disable();
	cnbus_proc_rec_fork(child);
	preempt_enable();
}

static void cnbus_proc_probe_exec(void *data, struct task_struct *p, pid_t old_pid,
				  struct linux_binprm *bprm)
{
	if (!cnbus_proc_listened())
		return;
	preempt_disable();
	cnbus_proc_rec_exec(p, bprm);
	preempt_enable();
}

static void cnbus_proc_probe_exit(void *data, struct task_struct *p)
{
	if (!cnbus_proc_listened())
		return;
	preempt_disable();
	cnbus_proc_rec_exit(p);
	preempt_enable();
}

static struct cnbus_proc_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp; /* found at load */
} cnbus_proc_tps[] = {
	{ "sched_process_exit", cnbus_proc_probe_exit },
	{ "sched_process_exec", cnbus_proc_probe_exec },
	{ "sched_process_fork", cnbus_proc_probe_fork },
};

static void cnbus_proc_find(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cnbus_proc_tps); i++)
		if (!strcmp(tp->name, cnbus_proc_tps[i].name))
			cnbus_proc_tps[i].tp = tp;
}

/* Detach the first @n probes and wait until none of them runs. */
static void cnbus_proc_unregister(unsigned int n)
{
	while (n--)
		tracepoint_probe_unregister(cnbus_proc_tps[n].tp, cnbus_proc_tps[n].probe, NULL);
	tracepoint_synchronize_unregister();
}

static const struct cb_id cnbus_proc_id = { CNBUS_PROC_IDX, CNBUS_PROC_VAL };
static const struct cb_id cnbus_proc_stats_id = { CNBUS_PROC_IDX, CNBUS_PROC_VAL_STATS };

/* The records' id: registered for its group; what is sent to it is ignored. */
static void cnbus_proc_records_cb(struct cn_msg *msg, struct netlink_skb_parms *nsp)
{
}

/* Any message to the stats id: answered with the totals. */
static void cnbus_proc_stats_cb(struct cn_msg *msg, struct netlink_skb_parms *nsp)
{
	u8 buf[sizeof(struct cn_msg) + sizeof(struct cnbus_proc_stats)] __aligned(8);
	struct cn_msg *reply = (struct cn_msg *)buf;
	struct cnbus_proc_stats st;

	cnbus_proc_totals(&st);
	reply->id = cnbus_proc_stats_id;
	reply->seq = msg->seq;
	reply->ack = msg->ack + 1;
	reply->len = sizeof(st);
	reply->flags = 0;
	memcpy(reply->data, &st, sizeof(st));
	cnbus_reply(reply, nsp->portid, GFP_KERNEL);
}

static int __init cnbus_proc_init(void)
{
	unsigned int i;
	int err;

	err = cnbus_proc_record_init();
	if (err)
		return err;
	err = cnbus_add_callback(&cnbus_proc_id, "cnbus_proc", cnbus_proc_records_cb);
	if (err)
		goto out_free_records;
	err = cnbus_add_callback(&cnbus_proc_stats_id, "cnbus_proc_stats", cnbus_proc_stats_cb);
	if (err)
		goto out_del_records_id;

	for_each_kernel_tracepoint(cnbus_proc_find, NULL);
	for (i = 0; i < ARRAY_SIZE(cnbus_proc_tps); i++) {
		if (!cnbus_proc_tps[i].tp) {
			pr_err("the kernel has no tracepoint %s\n", cnbus_proc_tps[i].name);
			err = -ENOENT;
			goto out_unregister;
		}
		err =
		    tracepoint_probe_register(cnbus_proc_tps[i].tp, cnbus_proc_tps[i].probe, NULL);
		if (err)
			goto out_unregister;
	}
	pr_info("fork, exec and exit records on 0x%x.0x%x, argv up to %u bytes\n", CNBUS_PROC_IDX,
		CNBUS_PROC_VAL, cnbus_proc_argv_max);
	return 0;

out_unregister:
	cnbus_proc_unregister(i);
	cnbus_del_callback(&cnbus_proc_stats_id);
out_del_records_id:
	cnbus_del_callback(&cnbus_proc_id);
out_free_records:
	cnbus_proc_record_exit();
	return err;
}

static void __exit cnbus_proc_exit(void)
{
	struct cnbus_proc_stats st;

	cnbus_proc_unregister(ARRAY_SIZE(cnbus_proc_tps));
	cnbus_del_callback(&cnbus_proc_stats_id);
	cnbus_del_callback(&cnbus_proc_id);
	cnbus_proc_totals(&st);
	pr_info("unloaded: %llu records, %llu inserted, %llu refused\n", st.records, st.inserted,
		st.refused);
	cnbus_proc_record_exit();
}

module_init(cnbus_proc_init);
module_exit(cnbus_proc_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("libcn project");
MODULE_DESCRIPTION("Process events (fork, exec with argv, exit) through cnbus's CBUS");
