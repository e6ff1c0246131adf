// SPDX-License-Identifier: GPL-2.0
/*
 * cnbus_cbus.c - CBUS: insert-only, any-context fast path.
 *
 * Each CPU owns a ring of cbus_qlen preallocated slots and a spinlock that
 * no other CPU's inserts take. cnbus_insert() copies a message that fits a
 * slot (CNBUS_CBUS_INLINE payload bytes) into the next free slot of the
 * current CPU's ring under that lock (irqsave): no allocation, so the
 * caller pays for a copy and a lock, not for an skb. A larger message is
 * built into an skb first, with the caller's gfp mask, and the slot holds
 * the skb, so both kinds keep one order per CPU. When a ring goes from
 * empty to non-empty, the CPU's work item is queued on that CPU; the worker
 * takes the slots in order, in chunks: it builds the skbs of inline ones in
 * process context, gives the chunk's slots back, then sends. No polling. A full ring (cbus_qlen
 * messages) falls back to a direct send from the caller's context, as in
 * 2005 (in hard IRQ or with interrupts off, a drop that is counted).
 *
 * Unload: cnbus_cbus_exit() sets the shutdown flag under every CPU's lock:
 * an insert either saw the flag under its lock (and is refused) or finished
 * queueing before we got the lock, so after that the rings only shrink.
 * Then every work item is flushed and anything left is sent.
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
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/topology.h>
#include <net/netlink.h>

#include "cnbus_internal.h"

#define CNBUS_CBUS_QLEN_MAX 65536
#define CNBUS_CBUS_SLOT	    128 /* bytes per slot: two cache lines */
#define CNBUS_CBUS_CHUNK    32	/* slots the worker frees at once */

unsigned int cnbus_cbus_qlen = 1024;
module_param_named(cbus_qlen, cnbus_cbus_qlen, uint, 0444);
MODULE_PARM_DESC(cbus_qlen, "length of each per-CPU CBUS queue, 1..65536 (default 1024)");

/* One queued message: inline (skb NULL) or a prebuilt skb. */
struct cnbus_cbus_slot {
	struct sk_buff *skb;
	u32 group;
	u32 pad;
	u8 data[CNBUS_CBUS_SLOT - 16] __aligned(8); /* struct cn_msg + payload */
};

#define CNBUS_CBUS_INLINE (sizeof_field(struct cnbus_cbus_slot, data) - sizeof(struct cn_msg))

struct cnbus_cbus_cpu {
	spinlock_t lock; /* protects head, tail, count, shutdown and counters */
	struct cnbus_cbus_slot *ring;
	unsigned int head;  /* oldest queued slot */
	unsigned int tail;  /* next free slot */
	unsigned int count; /* queued slots, including those being sent */
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

/* Send one skb to its group; returns true if it was handed to netlink. */
static bool cnbus_cbus_xmit(struct sk_buff *skb, gfp_t gfp)
{
	int err = cnbus_broadcast(skb, NETLINK_CB(skb).dst_group, gfp);

	/*
	 * -ESRCH: nobody listens; -ENOBUFS: a listener overran and sees
	 * ENOBUFS itself. Both mean the message left the bus.
	 */
	return !err || err == -ESRCH || err == -ENOBUFS;
}

/*
 * Empty one slot (process context): its skb, built now for an inline
 * message, goes to @batch. Returns false if the message is lost (no
 * memory); a message nobody listens to leaves the bus here (as -ESRCH).
 */
static bool cnbus_cbus_take_slot(struct cnbus_cbus_slot *s, struct sk_buff_head *batch)
{
	struct sk_buff *skb = s->skb;

	s->skb = NULL;
	if (unlikely(!cnbus_nls)) {
		kfree_skb(skb);
		return false;
	}
	if (!netlink_has_listeners(cnbus_nls, s->group)) {
		consume_skb(skb);
		return true;
	}
	if (!skb) {
		skb = cnbus_msg_skb((const struct cn_msg *)s->data, s->group, GFP_KERNEL);
		if (!skb)
			return false;
	}
	__skb_queue_tail(batch, skb);
	return true;
}

/*
 * Send every queued slot of @q in order, CNBUS_CBUS_CHUNK at a time: the
 * chunk's skbs are built, its slots given back to inserters, then the skbs
 * are sent. Process context.
 */
static void cnbus_cbus_drain(struct cnbus_cbus_cpu *q)
{
	unsigned int head, n, i, size = READ_ONCE(cnbus_cbus_qlen);
	struct sk_buff_head batch;
	struct sk_buff *skb;
	unsigned long flags;
	u64 sent, dropped;

	__skb_queue_head_init(&batch);
	for (;;) {
		spin_lock_irqsave(&q->lock, flags);
		head = q->head;
		n = min_t(unsigned int, q->count, CNBUS_CBUS_CHUNK);
		spin_unlock_irqrestore(&q->lock, flags);
		if (!n)
			break;

		/* Slots head..head+n-1 stay ours until head moves past them. */
		sent = 0;
		dropped = 0;
		for (i = 0; i < n; i++)
			if (!cnbus_cbus_take_slot(&q->ring[(head + i) % size], &batch))
				dropped++;
		sent = n - dropped - skb_queue_len(&batch);
		spin_lock_irqsave(&q->lock, flags);
		q->head = (head + n) % size;
		q->count -= n;
		q->sent += sent;
		q->dropped += dropped;
		spin_unlock_irqrestore(&q->lock, flags);

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

static void cnbus_cbus_work(struct work_struct *work)
{
	cnbus_cbus_drain(container_of(work, struct cnbus_cbus_cpu, work));
}

int cnbus_insert(const struct cn_msg *msg, gfp_t gfp)
{
	struct cnbus_cbus_slot *slot;
	struct cnbus_cbus_cpu *q;
	struct sk_buff *skb = NULL;
	unsigned long flags;
	bool atomic_ctx, full = false;
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
	/* Too large for a slot: build the skb now, with the caller's gfp. */
	if (msg->len > CNBUS_CBUS_INLINE) {
		skb = cnbus_msg_skb(msg, group, gfp);
		if (!skb)
			return -ENOMEM;
	}

	local_irq_save(flags);
	q = this_cpu_ptr(&cnbus_cbus_cpus);
	spin_lock(&q->lock);
	if (unlikely(q->shutdown)) {
		spin_unlock(&q->lock);
		local_irq_restore(flags);
		if (skb)
			dev_kfree_skb_any(skb);
		cnbus_refuse(CNBUS_REFUSED_A_CBUS_SHUTDOWN);
		return -ESHUTDOWN;
	}
	q->inserted++;
	if (unlikely(q->count >= cnbus_cbus_qlen)) {
		full = true;
	} else {
		slot = &q->ring[q->tail];
		slot->skb = skb;
		slot->group = group;
		if (!skb)
			memcpy(slot->data, msg, sizeof(*msg) + msg->len);
		if (++q->tail == cnbus_cbus_qlen)
			q->tail = 0;
		if (q->count++ == 0)
			queue_work_on(smp_processor_id(), cnbus_cbus_wq, &q->work);
	}
	spin_unlock(&q->lock);
	local_irq_restore(flags);

	if (likely(!full))
		return 0;

	/*
	 * Queue full: send from here, as the 2005 code did. Not in hard IRQ
	 * or with interrupts off, where netlink delivery is not safe: there the
	 * message is dropped and counted.
	 */
	atomic_ctx = in_hardirq() || irqs_disabled();
	if (!atomic_ctx && !skb)
		skb = cnbus_msg_skb(msg, group, gfp);
	if (!atomic_ctx && skb && cnbus_cbus_xmit(skb, gfp)) {
		spin_lock_irqsave(&q->lock, flags);
		q->sent_direct++;
		spin_unlock_irqrestore(&q->lock, flags);
	} else {
		/* cnbus_cbus_xmit() consumed the skb it was given. */
		if (atomic_ctx && skb)
			dev_kfree_skb_any(skb);
		spin_lock_irqsave(&q->lock, flags);
		q->dropped++;
		spin_unlock_irqrestore(&q->lock, flags);
	}
	return 0;
}
EXPORT_SYMBOL_GPL(cnbus_insert);

void cnbus_flush(void)
{
	unsigned int cpu;

	might_sleep();
	/* Each worker runs until its queue is empty (see cnbus_cbus_work). */
	for_each_possible_cpu(cpu)
		flush_work(&per_cpu_ptr(&cnbus_cbus_cpus, cpu)->work);
}
EXPORT_SYMBOL_GPL(cnbus_flush);

void cnbus_cbus_read(unsigned int cpu, struct cnbus_cpu_stats *st)
{
	struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	st->inserted = q->inserted;
	st->sent = q->sent;
	st->sent_direct = q->sent_direct;
	st->dropped = q->dropped;
	st->queued = q->count;
	spin_unlock_irqrestore(&q->lock, flags);
}

int cnbus_cbus_init(void)
{
	unsigned int cpu;

	if (!cnbus_cbus_qlen || cnbus_cbus_qlen > CNBUS_CBUS_QLEN_MAX) {
		pr_err("cbus_qlen must be in [1, %u]\n", CNBUS_CBUS_QLEN_MAX);
		return -EINVAL;
	}
	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		spin_lock_init(&q->lock);
		INIT_WORK(&q->work, cnbus_cbus_work);
		q->head = 0;
		q->tail = 0;
		q->count = 0;
		q->shutdown = false;
		q->ring = kvzalloc_node(array_size(cnbus_cbus_qlen, sizeof(*q->ring)), GFP_KERNEL,
					cpu_to_node(cpu));
		if (!q->ring)
			goto out_free_rings;
	}
	cnbus_cbus_wq = alloc_workqueue("cnbus_cbus", WQ_MEM_RECLAIM | CNBUS_WQ_PERCPU, 0);
	if (!cnbus_cbus_wq)
		goto out_free_rings;
	return 0;

out_free_rings:
	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		kvfree(q->ring);
		q->ring = NULL;
	}
	return -ENOMEM;
}

void cnbus_cbus_exit(void)
{
	u64 inserted = 0, sent = 0, direct = 0, dropped = 0;
	unsigned int cpu, pending = 0;
	unsigned long flags;

	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		spin_lock_irqsave(&q->lock, flags);
		q->shutdown = true;
		pending += q->count;
		spin_unlock_irqrestore(&q->lock, flags);
	}
	/* From here on the rings only shrink. */
	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		flush_work(&q->work);
		/* A CPU that went offline may leave work undone: finish it. */
		cnbus_cbus_drain(q);
	}
	destroy_workqueue(cnbus_cbus_wq);

	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		WARN_ON_ONCE(q->count);
		kvfree(q->ring);
		q->ring = NULL;
		inserted += q->inserted;
		sent += q->sent;
		direct += q->sent_direct;
		dropped += q->dropped;
	}
	pr_info("cbus: %u queued at unload, drained; inserted %llu sent %llu sent_direct %llu "
		"dropped %llu\n",
		pending, inserted, sent, direct, dropped);
}
