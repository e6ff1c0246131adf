// SPDX-License-Identifier: GPL-2.0
/*
 * CBUS: insert-only, any-context fast path.
 *
 * Queue. Each online CPU owns one preallocated byte ring of variable-length
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
 * arbitrary caller could nest in locks the workqueue takes. Not while a
 * drain of that ring runs: a drain stops only when it finds the ring empty
 * under its lock, so it takes what is inserted meanwhile itself. Under
 * load the kick waits (cbus_defer_us): when the ring's last two drains
 * each ended less than cbus_defer_us (rounded up to whole jiffies) after
 * the one before and the last one less than that ago, the work item is
 * queued that much later, as a delayed work, so that the records of a
 * burst go out in few datagrams instead of one worker wake-up, one skb and
 * one wake-up of each reader per record; a ring that holds cbus_batch
 * records or half its cbus_qlen bytes meanwhile has the work queued at
 * once. A record after a quiet spell (no drain that recently), or the
 * second of a pair (a fork and its exit), is sent at once, as with
 * cbus_defer_us=0 or cbus_batch=1. The wait a record can be given is
 * cbus_defer_us rounded up to jiffies (one jiffy at the default), before
 * the worker is scheduled. The worker packs consecutive records of one
 * group into one datagram (up to cbus_batch messages and NLMSG_GOODSIZE
 * bytes: several nlmsghdr + cn_msg, as netlink readers walk them), gives
 * the records' bytes back, then
 * broadcasts the skb: one allocation and one wake-up of each listener per
 * datagram. cbus_batch=1 gives one datagram per message (what earlier
 * versions sent, for readers that take only the first message of a
 * datagram; the benchmark measures both).
 *
 * Counters (per CPU): inserted (accepted), sent (taken off the ring into
 * a datagram, or nobody listened; counted before the broadcast, so a
 * listener that overran still loses it: netlink tells that socket with
 * ENOBUFS), dropped (accepted, lost: the worker found no memory),
 * refused (-ENOBUFS or -EMSGSIZE to the caller), overflowed (accepted
 * into the budget beyond the ring). Once drained: inserted = sent +
 * dropped. They are struct cnbus_cbus_stats, read as they are under the
 * ring's lock (cnbus_cbus_read()).
 *
 * CPU hotplug. Rings exist for the CPUs that have been online since load,
 * so the memory follows the CPUs that came up, not the possible ones (often
 * many more on cloud VMs). A dynamic state of the kernel's CPU hotplug
 * machinery, in its prepare section, makes a CPU's ring the first time the
 * CPU comes up, before it runs anything (so every insert finds one). When
 * the CPU is dead (no code runs there any more, its kick has run: the dying
 * CPU runs pending irq_work, and its interrupts went elsewhere, so nothing
 * can be inserted) what is still queued is sent, in order, from the CPU
 * that runs the hotplug, and the ring stays for the CPU's next start. A
 * ring freed at offline would have to be made again at online, and
 * suspend and hibernation take every CPU but the boot one through both: a
 * failed allocation then would keep the CPU down. The rings are freed at
 * unload. The rest of a CPU's state (lock, counters, work item) is per
 * possible CPU: the counters of a CPU that went away are still read and
 * summed.
 *
 * Drains of a ring (its work item, cnbus_flush(), the hotplug teardown) are
 * serialised by its drain_lock; the ring is made under it too, so a drain
 * reads the buffer under drain_lock alone (it is freed at unload, when the
 * workers and the hotplug state are gone).
 *
 * Unload: cnbus_cbus_exit() sets the shutdown flag under every CPU's lock:
 * an insert either saw the flag (and is refused) or finished queueing
 * before, so after that the rings only shrink. Then removing the hotplug
 * state runs the teardown on every online CPU: anything left is sent. Then
 * every ring is freed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
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
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <net/netlink.h>

#include "cnbus_internal.h"

#define CNBUS_CBUS_SLOT	       128 /* ring bytes per cbus_qlen: a small message */
/* Drains in a row, cbus_defer_us or less apart, before a kick waits. */
#define CNBUS_CBUS_DEFER_AFTER 2

/* A queued message: this header, then struct cn_msg and its payload. */
struct cnbus_cbus_rec {
	u32 size;  /* bytes of the record, 8-aligned; 0: wrap, next record at offset 0 */
	u32 group; /* destination multicast group */
};

struct cnbus_cbus_cpu {
	raw_spinlock_t lock; /* protects the fields from buf to stats */
	u8 *buf;	     /* the ring; NULL until the CPU first comes up */
	u32 size;	     /* bytes in buf */
	u32 head;	     /* oldest record; only a drain moves it */
	u32 tail;	     /* where the next record goes */
	u32 used;	     /* bytes from head to tail, wrap gap included */
	u32 count;	     /* queued messages, including those being packed */
	bool shutdown;
	bool draining;		  /* a drain runs: it takes new records itself, no kick */
	unsigned long kick_delay; /* jiffies the next kick waits; 0: at once */
	unsigned long drained_at; /* jiffies when a drain last found the ring empty */
	u32 drains;		  /* drains in a row, each within cbus_defer_us of the last */
	struct cnbus_cbus_stats stats;
	unsigned int cpu;
	struct delayed_work work;
	struct irq_work kick;
	struct mutex drain_lock; /* one drain at a time; buf and size change under it too */
#ifdef CNBUS_TESTING
	/*
	 * Test builds: kicks this CPU skipped while dying past the point of no
	 * return, and kicks it queued while not online yet (coming up). Only
	 * this CPU writes them, with interrupts off; its death reads and
	 * clears them (the hotplug test shows whether it met either case).
	 */
	u64 kicks_skipped_dying;
	u64 kicks_not_online;
#endif
};

static DEFINE_PER_CPU(struct cnbus_cbus_cpu, cnbus_cbus_cpus);
static struct workqueue_struct *cnbus_cbus_wq;
static int cnbus_cbus_hp_state; /* the dynamic CPU hotplug state */

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

#ifdef CNBUS_TESTING
/* Test builds: count a kick of @q's CPU met outside its online state. */
static void cnbus_cbus_note_kick(struct cnbus_cbus_cpu *q)
{
	if (cpu_online(q->cpu))
		return;
	if (cpu_dying(q->cpu))
		q->kicks_skipped_dying++;
	else
		q->kicks_not_online++;
}
#else
static inline void cnbus_cbus_note_kick(struct cnbus_cbus_cpu *q)
{
}
#endif

/*
 * Caller holds q->lock and has just queued a record. Whether the worker
 * must be kicked, and q->kick_delay, how late: not while a drain runs (it
 * takes the record); on the first record of an empty ring, at once after a
 * quiet spell and cbus_defer_us later under load (CNBUS_CBUS_DEFER_AFTER
 * drains in a row, each within cbus_defer_us of the one before, the last
 * one less than that ago); never late once the ring holds a full datagram's
 * worth (cbus_batch records) or half its ring bytes (a deferred kick is
 * then made again, at once), so that waiting does not make a small ring
 * refuse what it would have taken.
 */
static bool cnbus_cbus_want_kick(struct cnbus_cbus_cpu *q)
{
	u32 batch = READ_ONCE(cnbus_dev.cbus_batch);
	bool full = q->count >= batch || q->used >= cnbus_dev.cbus_qlen * (CNBUS_CBUS_SLOT / 2);
	unsigned long defer;

	if (q->draining)
		return false;
	if (q->count == 1) {
		defer = usecs_to_jiffies(READ_ONCE(cnbus_dev.cbus_defer_us));
		q->kick_delay = 0;
		if (defer && !full && q->drains >= CNBUS_CBUS_DEFER_AFTER &&
		    jiffies - q->drained_at <= defer)
			q->kick_delay = defer;
		return true;
	}
	if (q->kick_delay && full) {
		q->kick_delay = 0;
		return true;
	}
	return false;
}

/*
 * Caller holds q->lock: a drain that sent something found the ring empty.
 * The drains in a row (cnbus_cbus_want_kick()): one more when the last
 * ended less than cbus_defer_us ago, else this is the first.
 */
static void cnbus_cbus_drained(struct cnbus_cbus_cpu *q)
{
	unsigned long now = jiffies;

	if (now - q->drained_at > usecs_to_jiffies(READ_ONCE(cnbus_dev.cbus_defer_us)))
		q->drains = 0;
	if (q->drains < CNBUS_CBUS_DEFER_AFTER)
		q->drains++;
	q->drained_at = now;
}

/*
 * Queue @q's work item, q->kick_delay jiffies from now; at once (a pending
 * timer brought forward) when that is 0. Any context where the workqueue's
 * locks may be taken (process context, the kick's irq_work).
 */
static void cnbus_cbus_queue(struct cnbus_cbus_cpu *q)
{
	unsigned long delay = READ_ONCE(q->kick_delay);

	if (!queue_delayed_work_on(q->cpu, cnbus_cbus_wq, &q->work, delay) && !delay)
		mod_delayed_work_on(q->cpu, cnbus_cbus_wq, &q->work, 0);
}

static void cnbus_cbus_kick_fn(struct irq_work *iw)
{
	struct cnbus_cbus_cpu *q = container_of(iw, struct cnbus_cbus_cpu, kick);

	cnbus_cbus_queue(q);
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
 * the bytes back to inserters, then broadcast. Process context; the
 * caller holds q->drain_lock, so only one drain runs per ring.
 */
static void cnbus_cbus_drain(struct cnbus_cbus_cpu *q)
{
	u32 head, avail, n, next, taken, bytes, group = 0, batch;
	struct sk_buff *skb;
	unsigned long flags;
	bool lost, took = false;

	lockdep_assert_held(&q->drain_lock);
	for (;;) {
		raw_spin_lock_irqsave(&q->lock, flags);
		head = q->head;
		avail = q->count;
		/* Until it finds the ring empty, this drain takes what comes. */
		q->draining = avail;
		q->kick_delay = 0;
		if (!avail && took)
			cnbus_cbus_drained(q);
		raw_spin_unlock_irqrestore(&q->lock, flags);
		if (!avail)
			break;
		took = true;

		/* Writable: whatever the parameter says now (1..1024). */
		batch = READ_ONCE(cnbus_dev.cbus_batch);
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
#ifdef CNBUS_TESTING
			if (unlikely(cnbus_dev.cbus_worker_delay_us))
				usleep_range(cnbus_dev.cbus_worker_delay_us,
					     cnbus_dev.cbus_worker_delay_us + 100);
#endif
			/* -ESRCH, -ENOBUFS (a listener overran and is told): left the bus. */
			cnbus_broadcast(skb, group, GFP_KERNEL);
		}
		cond_resched();
	}
}

static void cnbus_cbus_work(struct work_struct *work)
{
	struct cnbus_cbus_cpu *q = container_of(to_delayed_work(work), struct cnbus_cbus_cpu, work);

	mutex_lock(&q->drain_lock);
	cnbus_cbus_drain(q);
	mutex_unlock(&q->drain_lock);
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
	/*
	 * A task that passes a blocking gfp with interrupts on may be made to
	 * wait below, but only when its ring is full: say at every call if
	 * it cannot sleep (a spinlock held, preemption or BHs off), so that
	 * DEBUG_ATOMIC_SLEEP and lockdep find the misuse before a full ring.
	 */
	might_sleep_if(gfpflags_allow_blocking(gfp) && in_task() && !irqs_disabled());
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
		/* A CPU's ring comes before it first runs and stays until unload. */
		if (WARN_ON_ONCE(!q->buf)) {
			q->stats.refused++;
			raw_spin_unlock_irqrestore(&q->lock, flags);
			return -ENOBUFS;
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
		/* Full, and the caller may sleep: wait for this ring's worker, now. */
		q->kick_delay = 0;
		raw_spin_unlock_irqrestore(&q->lock, flags);
		cnbus_cbus_queue(q);
		flush_work(&q->work.work);
	}
	rec->size = size;
	rec->group = group;
	memcpy(cnbus_cbus_msg(rec), msg, sizeof(*msg) + msg->len);
	q->stats.inserted++;
	if (q->used > cnbus_dev.cbus_qlen * CNBUS_CBUS_SLOT)
		q->stats.overflowed++;
	q->count++;
	kick = cnbus_cbus_want_kick(q);
	raw_spin_unlock(&q->lock);
	/*
	 * Interrupts are still off, so this is q's CPU: from hard IRQ or a
	 * caller that had them off, the kick's irq_work queues the worker
	 * once interrupts are back on. Not on a dying CPU past the point of no
	 * return (going down and no longer online: an irq_work its dying
	 * steps run inserts): a kick queued there would never run, and its
	 * death sends the ring anyway.
	 */
	atomic = irqs_disabled_flags(flags) || in_hardirq();
	if (kick && atomic) {
		if (cpu_online(q->cpu) || !cpu_dying(q->cpu))
			irq_work_queue(&q->kick);
		cnbus_cbus_note_kick(q);
	}
	local_irq_restore(flags);
	if (kick && !atomic)
		cnbus_cbus_queue(q);
	return 0;
}
EXPORT_SYMBOL_GPL(cnbus_insert);

void cnbus_flush(void)
{
	unsigned int cpu;

	might_sleep();
	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		/*
		 * A pending kick queues the work; then the worker empties the
		 * ring (a deferred one is queued at once). Only when one is in
		 * flight: without an irq_work interrupt, irq_work_sync() waits
		 * for an RCU grace period.
		 */
		if (irq_work_is_busy(&q->kick))
			irq_work_sync(&q->kick);
		flush_delayed_work(&q->work);
		/*
		 * A CPU going offline meanwhile has its ring drained by the
		 * hotplug teardown, under drain_lock: wait for that, and send
		 * whatever a worker has not reached yet.
		 */
		mutex_lock(&q->drain_lock);
		cnbus_cbus_drain(q);
		mutex_unlock(&q->drain_lock);
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

static u32 cnbus_cbus_ring_size(void)
{
	return cnbus_dev.cbus_qlen * CNBUS_CBUS_SLOT + ALIGN(cnbus_dev.cbus_budget, 8);
}

/*
 * Hotplug prepare: @cpu is about to come up (or is up, at load). Its ring,
 * made the first time only: a CPU that was up before finds its own, so
 * coming back (after an offline, a suspend) allocates nothing and cannot
 * fail.
 */
static int cnbus_cbus_cpu_prepare(unsigned int cpu)
{
	struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);
	u32 size = cnbus_cbus_ring_size();
	unsigned long flags;
	u8 *buf;

	/* The hotplug lock serialises this with every change of q->buf. */
	if (q->buf)
		return 0;
	/* Without it the CPU does not come up (or cnbus does not load). */
	buf = kvzalloc_node(size, GFP_KERNEL, cpu_to_node(cpu));
	if (!buf)
		return -ENOMEM;
	mutex_lock(&q->drain_lock);
	raw_spin_lock_irqsave(&q->lock, flags);
	q->buf = buf;
	q->size = size;
	q->head = 0;
	q->tail = 0;
	q->used = 0;
	q->count = 0;
	raw_spin_unlock_irqrestore(&q->lock, flags);
	mutex_unlock(&q->drain_lock);
	pr_debug("CPU %u: CBUS ring made, %u bytes\n", cpu, size);
	return 0;
}

/*
 * Hotplug teardown: @cpu is dead (or cnbus is unloading, inserts refused).
 * Nothing can be inserted into its ring any more: send what is queued, in
 * order. The ring and the counters stay (the ring is freed at unload).
 */
static int cnbus_cbus_cpu_dead(unsigned int cpu)
{
	struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);
	unsigned long flags;
	u32 queued;

	raw_spin_lock_irqsave(&q->lock, flags);
	queued = q->count;
	raw_spin_unlock_irqrestore(&q->lock, flags);
	/*
	 * A kick left by the dying CPU ran there; a worker may still be busy,
	 * or a deferred one wait for its timer (still on the dead CPU: timers
	 * move after this step).
	 */
	if (irq_work_is_busy(&q->kick))
		irq_work_sync(&q->kick);
	cancel_delayed_work_sync(&q->work);
	mutex_lock(&q->drain_lock);
	cnbus_cbus_drain(q);
	/* Nothing can insert here now; were it not so, the ring keeps it for the next drain. */
	raw_spin_lock_irqsave(&q->lock, flags);
	WARN_ON_ONCE(q->count);
	raw_spin_unlock_irqrestore(&q->lock, flags);
	mutex_unlock(&q->drain_lock);
#ifdef CNBUS_TESTING
	/* One string, for grep (checkpatch); too long for clang-format. */
	/* clang-format off */
	pr_debug("CPU %u: CBUS ring drained, %u messages queued at its death sent; kicks since its last death: %llu skipped dying, %llu queued not online\n",
		 cpu, queued, q->kicks_skipped_dying, q->kicks_not_online);
	/* clang-format on */
	q->kicks_skipped_dying = 0;
	q->kicks_not_online = 0;
#else
	pr_debug("CPU %u: CBUS ring drained, %u messages queued at its death sent\n", cpu, queued);
#endif
	return 0;
}

/* Unload, or a failed load: free every ring, all drained by now. */
static void cnbus_cbus_free_rings(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		/* Should one be left, it counts: inserted = sent + dropped. */
		if (WARN_ON_ONCE(q->count)) {
			q->stats.dropped += q->count;
			q->count = 0;
		}
		kvfree(q->buf);
		q->buf = NULL;
		q->size = 0;
	}
}

int cnbus_cbus_init(void)
{
	unsigned int cpu;
	int ret;

	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

		raw_spin_lock_init(&q->lock);
		mutex_init(&q->drain_lock);
		INIT_DELAYED_WORK(&q->work, cnbus_cbus_work);
		/* Hard even on PREEMPT_RT: queueing work is allowed there. */
		q->kick = IRQ_WORK_INIT_HARD(cnbus_cbus_kick_fn);
		q->cpu = cpu;
		q->buf = NULL;
		q->size = 0;
		q->count = 0;
		q->shutdown = false;
		q->draining = false;
		q->kick_delay = 0;
		/* Long ago: the first record is sent at once. */
		q->drained_at = jiffies - HZ;
		q->drains = 0;
		memset(&q->stats, 0, sizeof(q->stats));
	}
	cnbus_cbus_wq = alloc_workqueue("cnbus_cbus", WQ_MEM_RECLAIM | CNBUS_WQ_PERCPU, 0);
	if (!cnbus_cbus_wq)
		return -ENOMEM;
	/* Runs the prepare step for every online CPU now, undone on failure. */
	ret = cpuhp_setup_state(CPUHP_BP_PREPARE_DYN, "net/cnbus:cbus", cnbus_cbus_cpu_prepare,
				cnbus_cbus_cpu_dead);
	if (ret < 0) {
		cnbus_cbus_free_rings();
		destroy_workqueue(cnbus_cbus_wq);
		return ret;
	}
	cnbus_cbus_hp_state = ret;
	return 0;
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
	/* From here on the rings only shrink: send what is left, free them. */
	cpuhp_remove_state(cnbus_cbus_hp_state);
	destroy_workqueue(cnbus_cbus_wq);
	cnbus_cbus_free_rings();

	/* Every CPU that ever inserted, online or gone, counts. */
	for_each_possible_cpu(cpu) {
		struct cnbus_cbus_cpu *q = per_cpu_ptr(&cnbus_cbus_cpus, cpu);

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
