// SPDX-License-Identifier: GPL-2.0
/*
 * cnbus_cbus.c - CBUS: insert-only, any-context fast path.
 *
 * cnbus_insert() copies the message into an skb with the caller's gfp mask
 * and appends it to the current CPU's queue under that CPU's own spinlock
 * (irqsave; no lock is shared between CPUs). When a queue goes from empty
 * to non-empty, the CPU's work item is queued on that CPU; the worker takes
 * the whole queue and multicasts it. No polling. A full queue (cbus_qlen)
 * falls back to a direct send from the caller's context, as in 2005.
 *
 * Unload: cnbus_cbus_exit() sets the shutdown flag, then takes every CPU's
 * lock once: an insert either saw the flag under its lock (and is refused)
 * or finished queueing before we got the lock, so after that the queues only
 * shrink. Then every work item is flushed and anything left is sent.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/preempt.h>
#include <linux/hardirq.h>
#include <linux/delay.h>
#include <net/netlink.h>

#include "cnbus_internal.h"

unsigned int cnbus_cbus_qlen = 1024;
module_param_named(cbus_qlen, cnbus_cbus_qlen, uint, 0444);
MODULE_PARM_DESC(cbus_qlen, "maximum length of each per-CPU CBUS queue (default 1024)");

struct cnbus_cbus_cpu {
	spinlock_t lock;	   /* protects queue, shutdown and counters */
	struct sk_buff_head queue; /* dst_group in NETLINK_CB */
	struct work_struct work;
	bool shutdown;
	u64 inserted;
	u64 sent;
	u64 sent_direct;
	u64 dropped;
};

static unsigned int cbus_worker_delay_us;
module_param(cbus_worker_delay_us, uint, 0444);
MODULE_PARM_DESC(cbus_worker_delay_us,
		 "testing only: the CBUS worker sleeps this long before each send (default 0)");

static DEFINE_PER_CPU(struct cnbus_cbus_cpu, cnbus_cbus_cpus);
static struct workqueue_struct *cnbus_cbus_wq;

/* Send one queued skb; returns true if it was handed to netlink. */
static bool cnbus_cbus_xmit(struct sk_buff *skb, gfp_t gfp)
{
	int err = cnbus_broadcast(skb, NETLINK_CB(skb).dst_group, gfp);

	/*
	 * -ESRCH: nobody listens; -ENOBUFS: a listener overran and sees
	 * ENOBUFS itself. Both mean the message left the bus.
	 */
	return !err || err == -ESRCH || err == -ENOBUFS;
}

static void cnbus_cbus_work(struct work_struct *work)
{
	struct cnbus_cbus_cpu *q = container_of(work, struct cnbus_cbus_cpu, work);
	struct sk_buff_head batch;
	struct sk_buff *skb;
	unsigned long flags;
	u64 sent, dropped;

	__skb_queue_head_init(&batch);
	for (;;) {
		spin_lock_irqsave(&q->lock, flags);
		skb_queue_splice_init(&q->queue, &batch);
		spin_unlock_irqrestore(&q->lock, flags);
		if (skb_queue_empty(&batch))
			break;

		sent = 0;
		dropped = 0;
		while ((skb = __skb_dequeue(&batch))) {
			if (unlikely(cbus_worker_delay_us))
				usleep_range(cbus_worker_delay_us, cbus_worker_delay_us + 100);
			if (cnbus_cbus_xmit(skb, GFP_KERNEL))
				sent++;
			else
				dropped++;
		}
		spin_lock_irqsave(&q->lock, flags);
		q->sent += sent;
		q->dropped += dropped;
		spin_unlock_irqrestore(&q->lock, flags);
		cond_resched();
	}
}

int cnbus_insert(const struct cn_msg *msg, gfp_t gfp)
{
	struct cnbus_cbus_cpu *q;
	struct sk_buff *skb;
	unsigned long flags;
	bool kick, atomic_ctx, direct = false;
	u32 group;
	int err;

	if (WARN_ON_ONCE(in_nmi()))
		return -EINVAL;
	if (!msg || msg->len > CONNECTOR_MAX_MSG_SIZE)
		return -EINVAL;
	err = cnbus_group_of(&msg->id, &group);
	if (err)
		return err;
	if (!group || group > cnbus_groups)
		return -EINVAL;
	skb = cnbus_msg_skb(msg, group, gfp);
	if (!skb)
		return -ENOMEM;

	local_irq_save(flags);
	q = this_cpu_ptr(&cnbus_cbus_cpus);
	spin_lock(&q->lock);
	if (unlikely(q->shutdown)) {
		spin_unlock(&q->lock);
		local_irq_restore(flags);
		dev_kfree_skb_any(skb);
		cnbus_refuse(CNBUS_REFUSED_CBUS_SHUTDOWN);
		return -ESHUTDOWN;
	}
	q->inserted++;
	if (skb_queue_len(&q->queue) >= READ_ONCE(cnbus_cbus_qlen)) {
		direct = true;
	} else {
		kick = skb_queue_empty(&q->queue);
		__skb_queue_tail(&q->queue, skb);
		if (kick)
			queue_work_on(smp_processor_id(), cnbus_cbus_wq, &q->work);
	}
	spin_unlock(&q->lock);
	local_irq_restore(flags);

	if (!direct)
		return 0;

	/*
	 * Queue full: send from here, as the 2005 code did. Not in hard IRQ
	 * or with interrupts off, where netlink delivery is not safe: there the
	 * message is dropped and counted.
	 */
	atomic_ctx = in_hardirq() || irqs_disabled();
	if (!atomic_ctx && cnbus_cbus_xmit(skb, gfp)) {
		spin_lock_irqsave(&q->lock, flags);
		q->sent_direct++;
		spin_unlock_irqrestore(&q->lock, flags);
	} else {
		if (atomic_ctx)
			dev_kfree_skb_any(skb);
		spin_lock_irqsave(&q->lock, flags);
		q->dropped++;
		spin_unlock_irqrestore(&q->lock, flags);
	}
	return 0;
}
EXPORT_SYMBOL_GPL(cnbus_insert);

void cnbus_cbus_read(unsigned int cpu, struct cnbus_cpu_stats *st)
{
	struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	st->inserted = q->inserted;
	st->sent = q->sent;
	st->sent_direct = q->sent_direct;
	st->dropped = q->dropped;
	st->queued = skb_queue_len(&q->queue);
	spin_unlock_irqrestore(&q->lock, flags);
}

int cnbus_cbus_init(void)
{
	unsigned int cpu;

	if (!cnbus_cbus_qlen) {
		pr_err("cbus_qlen must be at least 1\n");
		return -EINVAL;
	}
	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		spin_lock_init(&q->lock);
		__skb_queue_head_init(&q->queue);
		INIT_WORK(&q->work, cnbus_cbus_work);
		q->shutdown = false;
	}
	cnbus_cbus_wq = alloc_workqueue("cnbus_cbus", WQ_MEM_RECLAIM, 0);
	if (!cnbus_cbus_wq)
		return -ENOMEM;
	return 0;
}

void cnbus_cbus_exit(void)
{
	u64 inserted = 0, sent = 0, direct = 0, dropped = 0;
	unsigned int cpu, pending = 0;
	struct sk_buff *skb;
	unsigned long flags;

	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		spin_lock_irqsave(&q->lock, flags);
		q->shutdown = true;
		pending += skb_queue_len(&q->queue);
		spin_unlock_irqrestore(&q->lock, flags);
	}
	/* From here on the queues only shrink. */
	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		flush_work(&q->work);
		/* A CPU that went offline may leave work undone: finish it. */
		for (;;) {
			spin_lock_irqsave(&q->lock, flags);
			skb = __skb_dequeue(&q->queue);
			spin_unlock_irqrestore(&q->lock, flags);
			if (!skb)
				break;
			if (cnbus_nls && cnbus_cbus_xmit(skb, GFP_KERNEL)) {
				spin_lock_irqsave(&q->lock, flags);
				q->sent++;
				spin_unlock_irqrestore(&q->lock, flags);
			} else {
				if (!cnbus_nls)
					kfree_skb(skb);
				spin_lock_irqsave(&q->lock, flags);
				q->dropped++;
				spin_unlock_irqrestore(&q->lock, flags);
			}
		}
	}
	destroy_workqueue(cnbus_cbus_wq);

	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		WARN_ON_ONCE(!skb_queue_empty(&q->queue));
		inserted += q->inserted;
		sent += q->sent;
		direct += q->sent_direct;
		dropped += q->dropped;
	}
	pr_info("cbus: %u queued at unload, drained; inserted %llu sent %llu sent_direct %llu "
		"dropped %llu\n",
		pending, inserted, sent, direct, dropped);
}
