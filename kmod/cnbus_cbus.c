// SPDX-License-Identifier: GPL-2.0
/*
 * CBUS: insert-only, any-context fast path.
 *
 * Queue. Each CPU owns one preallocated byte ring of variable-length
 * records (record header, struct cn_msg, payload; 8-byte aligned): the
 * "ring" proper is cbus_qlen * 128 bytes (cbus_qlen small messages), and
 * cbus_budget more bytes are an overflow that takes a burst the worker has
 * not caught up with yet (counted as overflowed). cnbus_insert() copies
 * the message into the current CPU's ring under that CPU's raw spinlock
 * with interrupts off: no allocation and no sleeping lock, so it is the
 * same code in process context, softirq, hard IRQ and on PREEMPT_RT, for
 * messages of any size up to CONNECTOR_MAX_MSG_SIZE (the copy is the only
 * work done with interrupts off). A message that does not fit (ring and
 * budget full) is refused with -ENOBUFS and counted, never dropped
 * silently; a caller whose gfp allows blocking waits for the worker
 * instead. Nothing is ever sent from the caller's context, so no message
 * overtakes queued ones: order per CPU holds in every case.
 *
 * Drain. When a ring goes from empty to non-empty its CPU's work item is
 * queued: directly from process context, through an irq_work (the kick)
 * from hard IRQ or with interrupts off, where queueing work from an
 * arbitrary caller could nest in locks the workqueue takes. The worker
 * packs consecutive records of one group into one datagram (up to
 * cbus_batch messages and NLMSG_GOODSIZE bytes: several nlmsghdr + cn_msg,
 * as netlink readers walk them), gives the records' bytes back, then
 * broadcasts the skb: one allocation and one wake-up of each listener per
 * datagram. cbus_batch=1 gives one datagram per message (what earlier
 * versions sent, for readers that take only the first message of a
 * datagram; the benchmark measures both).
 *
 * Counters (per CPU): inserted (accepted), sent (handed to netlink or
 * nobody listened), dropped (accepted, lost: the worker found no memory),
 * refused (-ENOBUFS or -EMSGSIZE to the caller), overflowed (accepted
 * into the budget beyond the ring). Once drained: inserted = sent +
 * dropped. They are struct cnbus_cbus_stats, read as they are under the
 * ring's lock (cnbus_cbus_read()).
 *
 * Unload: cnbus_cbus_exit() sets the shutdown flag under every CPU's lock:
 * an insert either saw the flag (and is refused) or finished queueing
 * before, so after that the rings only shrink. Then the kicks and work
 * items are flushed and anything left is sent.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/irq_work.h>
#include <linux/skbuff.h>
#include <linux/preempt.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/topology.h>
#include <net/netlink.h>

#include "cnbus_internal.h"

#define CNBUS_CBUS_QLEN_MAX   65536
#define CNBUS_CBUS_SLOT	      128 /* ring bytes per cbus_qlen: a small message */
#define CNBUS_CBUS_BUDGET_MAX (64U << 20)
#define CNBUS_CBUS_BATCH_MAX  1024

module_param_named(cbus_qlen, cnbus_dev.cbus_qlen, uint, 0444);
MODULE_PARM_DESC(cbus_qlen,
		 "per-CPU CBUS ring in small messages (128 bytes each), 1..65536 (default 1024)");

module_param_named(cbus_budget, cnbus_dev.cbus_budget, uint, 0444);
MODULE_PARM_DESC(cbus_budget,
		 "per-CPU CBUS overflow bytes beyond the ring, 0..64 MiB (default 262144)");

static unsigned int cbus_batch = 64;
module_param(cbus_batch, uint, 0644);
MODULE_PARM_DESC(cbus_batch,
		 "messages per CBUS datagram, 1..1024 (default 64; 1: one datagram per message)");

static unsigned int cbus_worker_delay_us;
module_param(cbus_worker_delay_us, uint, 0444);
MODULE_PARM_DESC(cbus_worker_delay_us,
		 "testing only: the CBUS worker sleeps this long before each datagram (default 0)");

/* A queued message: this header, then struct cn_msg and its payload. */
struct cnbus_cbus_rec {
	u32 size;  /* bytes of the record, 8-aligned; 0: wrap, next record at offset 0 */
	u32 group; /* destination multicast group */
};

struct cnbus_cbus_cpu {
	raw_spinlock_t lock; /* protects everything below but work and kick */
	u8 *buf;
	u32 size;  /* bytes in buf */
	u32 head;  /* oldest record; only the worker moves it */
	u32 tail;  /* where the next record goes */
	u32 used;  /* bytes from head to tail, wrap gap included */
	u32 count; /* queued messages, including those being packed */
	bool shutdown;
	unsigned int cpu;
	struct work_struct work;
	struct irq_work kick;
	struct cnbus_cbus_stats stats;
};

static DEFINE_PER_CPU(struct cnbus_cbus_cpu, cnbus_cbus_cpus);
static struct workqueue_struct *cnbus_cbus_wq;

static inline struct cn_msg *cnbus_cbus_msg(struct cnbus_cbus_rec *rec)
{
	return (struct cn_msg *)(rec + 1);
}

static inline u32 cnbus_cbus_rec_size(u32 len)
{
	return ALIGN(sizeof(struct cnbus_cbus_rec) + sizeof(struct cn_msg) + len, 8);
}

/*
 * Room for a record of @size bytes at the tail, or NULL. Caller holds
 * q->lock. A record never wraps: when it does not fit before the end of
 * the buffer, a wrap mark is left there and it goes to offset 0.
 */
static struct cnbus_cbus_rec *cnbus_cbus_reserve(struct cnbus_cbus_cpu *q, u32 size)
{
	u32 tail;

	if (size > q->size - q->used)
		return NULL;
	if (!q->used) {
		/* Empty: start over at the beginning, the fewest wraps. */
		q->head = 0;
		q->tail = 0;
	}
	tail = q->tail;
	if (q->used && tail <= q->head) {
		/* Wrapped already: the free bytes are tail..head. */
		if (q->head - tail < size)
			return NULL;
	} else if (q->size - tail < size) {
		/* Free: tail..end and 0..head; the record needs the latter. */
		if (q->head < size)
			return NULL;
		((struct cnbus_cbus_rec *)(q->buf + tail))->size = 0;
		q->used += q->size - tail;
		tail = 0;
	}
	q->tail = tail + size == q->size ? 0 : tail + size;
	q->used += size;
	return (struct cnbus_cbus_rec *)(q->buf + tail);
}

static void cnbus_cbus_kick_fn(struct irq_work *iw)
{
	struct cnbus_cbus_cpu *q = container_of(iw, struct cnbus_cbus_cpu, kick);

	queue_work_on(q->cpu, cnbus_cbus_wq, &q->work);
}

/*
 * Pack, from @head, up to @avail queued records into one datagram:
 * consecutive records of one group, at most @batch of them and
 * NLMSG_GOODSIZE bytes (a single larger message goes alone). Returns how
 * many; *next is the offset after them, *taken the ring bytes they used
 * (wrap gaps included), *bytes the skb size, *group their group. Reads
 * only records queued before the caller's look at q->count.
 */
static u32 cnbus_cbus_plan(struct cnbus_cbus_cpu *q, u32 head, u32 avail, u32 batch, u32 *next,
			   u32 *taken, u32 *bytes, u32 *group)
{
	u32 n = 0, pos = head, need;

	*taken = 0;
	*bytes = 0;
	while (n < avail && n < batch) {
		struct cnbus_cbus_rec *rec = (struct cnbus_cbus_rec *)(q->buf + pos);

		if (!rec->size) {
			/* A wrap mark is always followed by a queued record. */
			*taken += q->size - pos;
			pos = 0;
			continue;
		}
		need = nlmsg_total_size(sizeof(struct cn_msg) + cnbus_cbus_msg(rec)->len);
		if (n && (rec->group != *group || *bytes + need > NLMSG_GOODSIZE))
			break;
		*group = rec->group;
		*bytes += need;
		*taken += rec->size;
		pos += rec->size;
		if (pos == q->size)
			pos = 0;
		n++;
	}
	*next = pos;
	return n;
}

/* Copy @n records from @head into a new skb of @bytes; NULL without memory. */
static struct sk_buff *cnbus_cbus_pack(struct cnbus_cbus_cpu *q, u32 head, u32 n, u32 bytes,
				       u32 group)
{
	struct sk_buff *skb = alloc_skb(bytes, GFP_KERNEL);
	u32 pos = head;

	if (!skb)
		return NULL;
	while (n) {
		struct cnbus_cbus_rec *rec = (struct cnbus_cbus_rec *)(q->buf + pos);

		if (!rec->size) {
			pos = 0;
			continue;
		}
		/* cnbus_cbus_plan() sized the skb for these records. */
		if (WARN_ON_ONCE(cnbus_msg_put(skb, cnbus_cbus_msg(rec)))) {
			kfree_skb(skb);
			return NULL;
		}
		pos += rec->size;
		if (pos == q->size)
			pos = 0;
		n--;
	}
	NETLINK_CB(skb).dst_group = group;
	return skb;
}

/*
 * Send every queued record of @q in order, one datagram at a time: plan
 * and pack it (the records stay ours until head moves past them), give
 * the bytes back to inserters, then broadcast. Process context; only one
 * drain runs per ring (the work item, or the exit path after it).
 */
static void cnbus_cbus_drain(struct cnbus_cbus_cpu *q)
{
	u32 head, avail, n, next, taken, bytes, group = 0, batch;
	struct sk_buff *skb;
	unsigned long flags;
	bool lost;

	for (;;) {
		raw_spin_lock_irqsave(&q->lock, flags);
		head = q->head;
		avail = q->count;
		raw_spin_unlock_irqrestore(&q->lock, flags);
		if (!avail)
			break;

		batch = clamp_t(u32, READ_ONCE(cbus_batch), 1, CNBUS_CBUS_BATCH_MAX);
		n = cnbus_cbus_plan(q, head, avail, batch, &next, &taken, &bytes, &group);
		skb = NULL;
		lost = false;
		/* Nobody listens: the messages leave the bus here (as -ESRCH). */
		if (unlikely(!cnbus_dev.nls)) {
			lost = true;
		} else if (netlink_has_listeners(cnbus_dev.nls, group)) {
			skb = cnbus_cbus_pack(q, head, n, bytes, group);
			lost = !skb;
		}

		raw_spin_lock_irqsave(&q->lock, flags);
		q->head = next;
		q->used -= taken;
		q->count -= n;
		if (lost)
			q->stats.dropped += n;
		else
			q->stats.sent += n;
		raw_spin_unlock_irqrestore(&q->lock, flags);

		if (skb) {
			if (unlikely(cbus_worker_delay_us))
				usleep_range(cbus_worker_delay_us, cbus_worker_delay_us + 100);
			/* -ESRCH, -ENOBUFS (a listener overran and is told): left the bus. */
			cnbus_broadcast(skb, group, GFP_KERNEL);
		}
		cond_resched();
	}
}

static void cnbus_cbus_work(struct work_struct *work)
{
	cnbus_cbus_drain(container_of(work, struct cnbus_cbus_cpu, work));
}

int cnbus_insert(const struct cn_msg *msg, gfp_t gfp)
{
	struct cnbus_cbus_rec *rec;
	struct cnbus_cbus_cpu *q;
	unsigned long flags;
	bool kick, atomic;
	u32 group, size;
	int err;

	if (WARN_ON_ONCE(in_nmi()))
		return -EINVAL;
	if (!msg || msg->len > CONNECTOR_MAX_MSG_SIZE)
		return -EINVAL;
	err = cnbus_dest_group(&msg->id, 0, &group);
	if (err)
		return err;
	size = cnbus_cbus_rec_size(msg->len);

	for (;;) {
		local_irq_save(flags);
		q = this_cpu_ptr(&cnbus_cbus_cpus);
		raw_spin_lock(&q->lock);
		if (unlikely(q->shutdown)) {
			raw_spin_unlock_irqrestore(&q->lock, flags);
			cnbus_refuse(CNBUS_REFUSED_A_CBUS_SHUTDOWN);
			return -ESHUTDOWN;
		}
		rec = cnbus_cbus_reserve(q, size);
		if (likely(rec))
			break;
		if (size > q->size) {
			q->stats.refused++;
			raw_spin_unlock_irqrestore(&q->lock, flags);
			return -EMSGSIZE;
		}
		if (!gfpflags_allow_blocking(gfp) || irqs_disabled_flags(flags) || !in_task()) {
			q->stats.refused++;
			raw_spin_unlock_irqrestore(&q->lock, flags);
			return -ENOBUFS;
		}
		/* Full, and the caller may sleep: wait for this ring's worker. */
		raw_spin_unlock_irqrestore(&q->lock, flags);
		queue_work_on(q->cpu, cnbus_cbus_wq, &q->work);
		flush_work(&q->work);
	}
	rec->size = size;
	rec->group = group;
	memcpy(cnbus_cbus_msg(rec), msg, sizeof(*msg) + msg->len);
	q->stats.inserted++;
	if (q->used > cnbus_dev.cbus_qlen * CNBUS_CBUS_SLOT)
		q->stats.overflowed++;
	kick = q->count++ == 0;
	raw_spin_unlock(&q->lock);
	/*
	 * Interrupts are still off, so this is q's CPU: from hard IRQ or a
	 * caller that had them off, the kick's irq_work queues the worker
	 * once interrupts are back on.
	 */
	atomic = irqs_disabled_flags(flags) || in_hardirq();
	if (kick && atomic)
		irq_work_queue(&q->kick);
	local_irq_restore(flags);
	if (kick && !atomic)
		queue_work_on(q->cpu, cnbus_cbus_wq, &q->work);
	return 0;
}
EXPORT_SYMBOL_GPL(cnbus_insert);

void cnbus_flush(void)
{
	unsigned int cpu;

	might_sleep();
	/* A pending kick queues the work; then the worker empties the ring. */
	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		irq_work_sync(&q->kick);
		flush_work(&q->work);
	}
}
EXPORT_SYMBOL_GPL(cnbus_flush);

/* @cpu's counters into *st, one consistent snapshot; returns its queued messages. */
u32 cnbus_cbus_read(unsigned int cpu, struct cnbus_cbus_stats *st)
{
	struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);
	unsigned long flags;
	u32 queued;

	raw_spin_lock_irqsave(&q->lock, flags);
	*st = q->stats;
	queued = q->count;
	raw_spin_unlock_irqrestore(&q->lock, flags);
	return queued;
}

int cnbus_cbus_init(void)
{
	unsigned int cpu;
	u32 size;

	if (!cnbus_dev.cbus_qlen || cnbus_dev.cbus_qlen > CNBUS_CBUS_QLEN_MAX) {
		pr_err("cbus_qlen must be in [1, %u]\n", CNBUS_CBUS_QLEN_MAX);
		return -EINVAL;
	}
	if (cnbus_dev.cbus_budget > CNBUS_CBUS_BUDGET_MAX) {
		pr_err("cbus_budget must be at most %u\n", CNBUS_CBUS_BUDGET_MAX);
		return -EINVAL;
	}
	if (!cbus_batch || cbus_batch > CNBUS_CBUS_BATCH_MAX) {
		pr_err("cbus_batch must be in [1, %u]\n", CNBUS_CBUS_BATCH_MAX);
		return -EINVAL;
	}
	size = cnbus_dev.cbus_qlen * CNBUS_CBUS_SLOT + ALIGN(cnbus_dev.cbus_budget, 8);
	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		raw_spin_lock_init(&q->lock);
		INIT_WORK(&q->work, cnbus_cbus_work);
		/* Hard even on PREEMPT_RT: queueing work is allowed there. */
		q->kick = IRQ_WORK_INIT_HARD(cnbus_cbus_kick_fn);
		q->cpu = cpu;
		q->size = size;
		q->head = 0;
		q->tail = 0;
		q->used = 0;
		q->count = 0;
		q->shutdown = false;
		memset(&q->stats, 0, sizeof(q->stats));
		q->buf = kvzalloc_node(size, GFP_KERNEL, cpu_to_node(cpu));
		if (!q->buf)
			goto out_free_rings;
	}
	cnbus_cbus_wq = alloc_workqueue("cnbus_cbus", WQ_MEM_RECLAIM | CNBUS_WQ_PERCPU, 0);
	if (!cnbus_cbus_wq)
		goto out_free_rings;
	return 0;

out_free_rings:
	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		kvfree(q->buf);
		q->buf = NULL;
	}
	return -ENOMEM;
}

void cnbus_cbus_exit(void)
{
	struct cnbus_cbus_stats sum = {};
	unsigned int cpu, pending = 0;
	unsigned long flags;

	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		raw_spin_lock_irqsave(&q->lock, flags);
		q->shutdown = true;
		pending += q->count;
		raw_spin_unlock_irqrestore(&q->lock, flags);
	}
	/* From here on the rings only shrink. */
	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		irq_work_sync(&q->kick);
		flush_work(&q->work);
		/* A CPU that went offline may leave work undone: finish it. */
		cnbus_cbus_drain(q);
	}
	destroy_workqueue(cnbus_cbus_wq);

	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		WARN_ON_ONCE(q->count);
		kvfree(q->buf);
		q->buf = NULL;
		sum.inserted += q->stats.inserted;
		sum.sent += q->stats.sent;
		sum.dropped += q->stats.dropped;
		sum.refused += q->stats.refused;
		sum.overflowed += q->stats.overflowed;
	}
	/* One string, for grep (checkpatch); too long for clang-format. */
	/* clang-format off */
	pr_info("cbus: %u queued at unload, drained; inserted %llu sent %llu dropped %llu refused %llu overflowed %llu\n",
		pending, sum.inserted, sum.sent, sum.dropped, sum.refused, sum.overflowed);
	/* clang-format on */
}
