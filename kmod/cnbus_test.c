// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for cnbus (the 2005 cn_test.c, rebuilt).
 *
 * The ids and request structs are in include/libcn/cnbus_test.h. Bursts and
 * benches need CAP_NET_ADMIN and their counts are bounded: they hold locks
 * and CPUs for as long as they run, and unload waits for them.
 *
 * 0x123.0x456, 0x123.0x457: echo. The reply goes to the sender's port with
 *     the same seq, ack + 1 and the same payload.
 * 0x123.0x458: burst control. Payload: struct cnbus_test_burst (or just the
 *     __u32 count). Every online CPU inserts count CBUS messages with id
 *     0x123.0x458, seq = 0..count-1, ack = cpu, payload text
 *     "cpu=C burst=N"; from process context, or from hard IRQ (irq_work)
 *     when flags has CNBUS_TEST_BURST_HARDIRQ. With len (at most
 *     CNBUS_TEST_PAD_MAX), messages with an odd seq carry len payload bytes:
 *     the text, its NUL, then 'a' + seq % 26 up to len (too large for a
 *     CBUS slot, so large and small messages share one queue). With
 *     CNBUS_TEST_BURST_ONEIRQ too, each CPU makes all its inserts in one
 *     interrupt (at most CNBUS_TEST_ONEIRQ_MAX), so the CBUS worker cannot
 *     drain in between. When every insert has been made, the request is
 *     answered (seq, ack + 1) with the struct, inserted/refused/enobufs
 *     filled in.
 * 0x123.0x459: multicast. The message is sent on with cnbus_send(msg, 0, 0),
 *     i.e. to the group of its id's callback (0x123); then a message with id
 *     0x999.0x999 is sent the same way (no callback: -ENODEV). The reply
 *     (seq, ack + 1) carries two __s32: both results.
 * 0x123.0x45a: CBUS benchmark. Payload: struct cnbus_test_bench (or just
 *     its first four __u32). On each online CPU in turn (bound work,
 *     preemption off while timing), rounds of batch messages with id
 *     0x123.0x45a and len payload bytes: batch cnbus_send(msg, 0, 0) calls
 *     (direct send to the id's group), batch cnbus_insert() calls, then
 *     cnbus_flush(). local_clock() is read around each batch of sends, each
 *     batch of inserts and from the last insert until the flush returns
 *     (drain). The request is answered (seq, ack + 1) with the struct, the
 *     per-CPU sums filled in. Without a listener on group 0x123 a direct
 *     send costs almost nothing (-ESRCH), so subscribe one first.
 * 0x123.0x45b: CBUS stream, for CPU hotplug under load. Payload: struct
 *     cnbus_test_stream. START: until STOP, a round every tick: each online
 *     CPU inserts per_round messages from a work item bound to it
 *     (preemption off), which then raises an irq_work that inserts
 *     per_round more in hard IRQ; ack = cpu * 2 + kind, seq counting that
 *     CPU's and kind's accepted inserts. The rounds hold off CPU hotplug
 *     only while they queue the work items, so CPUs go offline and online
 *     in between; an irq_work still pending on a CPU that goes down runs
 *     there before it dies, a work item of a CPU that went down runs on
 *     another (and inserts there, under that CPU's number). A CPU going
 *     offline inserts CNBUS_TEST_STREAM_MAX more of the first kind in its
 *     hotplug teardown, so its ring likely holds some when it dies. STOP
 *     waits for the last inserts and answers with the counts.
 * Timer: every period_ms, inserts a CBUS message with id 0x123.0x456,
 *     seq = N, ack = cpu and the text "cpu=C counter=N" (NUL included),
 *     moving to the next online CPU at each tick.
 * callbacks=N: N more callbacks, ids 0x124.0 .. 0x124.N-1, named
 *     "cnbus_test_many_V" (V the val): they answer nothing (their messages
 *     are dropped); they are there to be listed, so that introspection is
 *     tested with many callbacks (tests/vm).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/jiffies.h>
#include <linux/workqueue.h>
#include <linux/irq_work.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/smp.h>
#include <linux/cpumask.h>
#include <linux/sched/clock.h>
#include <linux/netlink.h>

#include <libcn/cnbus_test.h>

#include "cnbus.h"
#include "cnbus_compat.h"

#define CNBUS_TEST_TEXT	     48
#define CNBUS_TEST_IRQ_BATCH 64

static unsigned int period_ms = 1000;
module_param(period_ms, uint, 0444);
MODULE_PARM_DESC(period_ms, "CBUS counter timer period in ms, 0 = off (default 1000)");

#define CNBUS_TEST_MANY_IDX 0x124
#define CNBUS_TEST_MANY_MAX 65536

static unsigned int callbacks;
module_param(callbacks, uint, 0444);
MODULE_PARM_DESC(callbacks, "more callbacks to register, ids 0x124.0..N-1, 0..65536 (default 0)");

struct cnbus_test_cpu {
	struct work_struct work;
	struct irq_work iw;
	struct completion done;
	struct work_struct bench_work;
	struct cnbus_test_bench *bench; /* request; result in bench->cpu[slot] */
	unsigned int slot;
	unsigned int cpu;
	u32 count;
	u32 flags;
	u32 len;
	u32 next;
	struct cn_msg *big; /* CNBUS_TEST_PAD_MAX payload bytes, this CPU's bursts */
	u64 inserted;
	u64 refused;
	u64 enobufs;
	/* Stream: its sources, and per kind what this CPU inserted (below). */
	struct irq_work stream_iw;
	struct work_struct stream_work;
	u32 stream_seq[2];
	u64 stream_inserted[2];
	u64 stream_refused[2];
	u64 stream_enobufs[2];
};

/* The stream (one at a time): its rounds and what they ask for. */
static struct {
	struct mutex lock; /* START and STOP */
	struct delayed_work round;
	bool running;
	bool stopping;
	u32 per_round;
	u64 rounds;
	int hp_state; /* the CPU hotplug state of the last inserts (below) */
} cnbus_test_stream_state;

static struct cnbus_test_cpu *cnbus_test_cpus;
static DEFINE_MUTEX(cnbus_test_burst_lock);
static struct timer_list cnbus_test_timer;
static bool cnbus_test_stopping;
static u64 cnbus_test_counter;

static const struct cb_id cnbus_test_ids[] = {
	{ CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A }, { CNBUS_TEST_IDX, CNBUS_TEST_ECHO_B },
	{ CNBUS_TEST_IDX, CNBUS_TEST_BURST },  { CNBUS_TEST_IDX, CNBUS_TEST_MCAST },
	{ CNBUS_TEST_IDX, CNBUS_TEST_BENCH },  { CNBUS_TEST_IDX, CNBUS_TEST_STREAM },
};

/* Does the sender have CAP_NET_ADMIN (as netlink_capable() checks it)? */
static bool cnbus_test_capable(struct netlink_skb_parms *nsp)
{
	return __netlink_ns_capable(nsp, &init_user_ns, CAP_NET_ADMIN);
}

static void cnbus_test_mcast(struct cn_msg *msg, struct netlink_skb_parms *nsp)
{
	struct {
		struct cn_msg msg;
		__s32 res[2];
	} reply;
	struct cn_msg unknown = {
		.id = { CNBUS_TEST_UNKNOWN, CNBUS_TEST_UNKNOWN },
	};

	reply.res[0] = cnbus_send(msg, 0, 0, GFP_KERNEL);
	reply.res[1] = cnbus_send(&unknown, 0, 0, GFP_KERNEL);
	reply.msg = *msg;
	reply.msg.ack = msg->ack + 1;
	reply.msg.len = sizeof(reply.res);
	cnbus_reply(&reply.msg, nsp->portid, GFP_KERNEL);
}

static void cnbus_test_echo(struct cn_msg *msg, struct netlink_skb_parms *nsp)
{
	struct cn_msg *reply;
	int err;

	reply = kmalloc(sizeof(*reply) + msg->len, GFP_KERNEL);
	if (!reply)
		return;
	memcpy(reply, msg, sizeof(*reply) + msg->len);
	reply->ack = msg->ack + 1;
	err = cnbus_reply(reply, nsp->portid, GFP_KERNEL);
	if (err)
		pr_debug("echo reply to %u: %d\n", nsp->portid, err);
	kfree(reply);
}

/* One burst message; returns cnbus_insert()'s result. */
static int cnbus_test_insert_one(struct cnbus_test_cpu *c, unsigned int cpu, u32 seq, gfp_t gfp)
{
	struct {
		struct cn_msg msg;
		char text[CNBUS_TEST_TEXT];
	} m;
	struct cn_msg *big = c->big;
	int n;

	if (c->len && (seq & 1)) {
		memset(big, 0, sizeof(*big));
		big->id.idx = CNBUS_TEST_IDX;
		big->id.val = CNBUS_TEST_BURST;
		big->seq = seq;
		big->ack = cpu;
		n = scnprintf(big->data, CNBUS_TEST_TEXT, "cpu=%u burst=%u", cpu, seq);
		big->len = max_t(u32, c->len, n + 1);
		memset(big->data + n + 1, 'a' + seq % 26, big->len - n - 1);
		return cnbus_insert(big, gfp);
	}

	memset(&m.msg, 0, sizeof(m.msg));
	m.msg.id.idx = CNBUS_TEST_IDX;
	m.msg.id.val = CNBUS_TEST_BURST;
	m.msg.seq = seq;
	m.msg.ack = cpu;
	n = scnprintf(m.text, sizeof(m.text), "cpu=%u burst=%u", cpu, seq);
	m.msg.len = n + 1;
	return cnbus_insert(&m.msg, gfp);
}

static void cnbus_test_burst_work(struct work_struct *work)
{
	struct cnbus_test_cpu *c = container_of(work, struct cnbus_test_cpu, work);
	u32 i;

	if (c->flags & CNBUS_TEST_BURST_HARDIRQ) {
		/*
		 * Bound work runs on c->cpu, so the irq_work fires there. One
		 * batch per interrupt; sleeping in between lets the CBUS worker
		 * of this CPU drain the queue.
		 */
		while (c->next < c->count) {
			reinit_completion(&c->done);
			if (!irq_work_queue(&c->iw))
				break;
			wait_for_completion(&c->done);
		}
		return;
	}
	for (i = 0; i < c->count; i++) {
		int err = cnbus_test_insert_one(c, c->cpu, i, GFP_KERNEL);

		if (err)
			c->refused++;
		else
			c->inserted++;
		if (err == -ENOBUFS)
			c->enobufs++;
		if (!(i % 1024))
			cond_resched();
	}
}

/* Hard IRQ context: one batch of inserts per invocation (ONEIRQ: all). */
static void cnbus_test_burst_irq(struct irq_work *iw)
{
	struct cnbus_test_cpu *c = container_of(iw, struct cnbus_test_cpu, iw);
	unsigned int cpu = smp_processor_id();
	u32 batch =
	    c->flags & CNBUS_TEST_BURST_ONEIRQ ? CNBUS_TEST_ONEIRQ_MAX : CNBUS_TEST_IRQ_BATCH;
	u32 end = min(c->count, c->next + batch);
	int err;

	for (; c->next < end; c->next++) {
		err = cnbus_test_insert_one(c, cpu, c->next, GFP_ATOMIC);
		if (err)
			c->refused++;
		else
			c->inserted++;
		if (err == -ENOBUFS)
			c->enobufs++;
	}
	complete(&c->done);
}

/* Refuse a burst that is not allowed or exceeds the bounds: -errno, or 0. */
static int cnbus_test_burst_check(const struct cnbus_test_burst *req, struct netlink_skb_parms *nsp)
{
	if (!cnbus_test_capable(nsp))
		return -EPERM;
	if (req->count > CNBUS_TEST_BURST_MAX || req->len > CNBUS_TEST_PAD_MAX ||
	    (req->flags & ~CNBUS_TEST_BURST_FLAGS))
		return -EINVAL;
	if ((req->flags & CNBUS_TEST_BURST_ONEIRQ) &&
	    (!(req->flags & CNBUS_TEST_BURST_HARDIRQ) || req->count > CNBUS_TEST_ONEIRQ_MAX))
		return -EINVAL;
	return 0;
}

static void cnbus_test_burst(struct cn_msg *msg, struct netlink_skb_parms *nsp)
{
	u8 buf[sizeof(struct cn_msg) + sizeof(struct cnbus_test_burst)] __aligned(8);
	struct cn_msg *reply = (struct cn_msg *)buf;
	struct cnbus_test_burst req = { 0 };
	unsigned int cpu;

	/* The count alone, the struct without enobufs (older clients), or all of it. */
	if (msg->len != sizeof(__u32) && msg->len != offsetof(struct cnbus_test_burst, enobufs) &&
	    msg->len != sizeof(req))
		return;
	memcpy(&req, msg->data, msg->len);
	req.cpus = 0;
	req.inserted = 0;
	req.refused = 0;
	req.enobufs = 0;
	req.status = cnbus_test_burst_check(&req, nsp);
	if (req.status)
		goto out_reply;

	mutex_lock(&cnbus_test_burst_lock);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct cnbus_test_cpu *c = &cnbus_test_cpus[cpu];

		c->cpu = cpu;
		c->count = req.count;
		c->next = 0;
		c->inserted = 0;
		c->refused = 0;
		c->enobufs = 0;
		c->flags = req.flags;
		c->len = req.len;
		reinit_completion(&c->done);
		queue_work_on(cpu, system_highpri_wq, &c->work);
	}
	for_each_online_cpu(cpu) {
		struct cnbus_test_cpu *c = &cnbus_test_cpus[cpu];

		flush_work(&c->work);
		req.cpus++;
		req.inserted += c->inserted;
		req.refused += c->refused;
		req.enobufs += c->enobufs;
	}
	cpus_read_unlock();
	mutex_unlock(&cnbus_test_burst_lock);

out_reply:
	/* The payload follows the 20-byte header unpadded. */
	*reply = *msg;
	reply->ack = msg->ack + 1;
	reply->len = sizeof(req);
	memcpy(reply->data, &req, sizeof(req));
	cnbus_reply(reply, nsp->portid, GFP_KERNEL);
}

static void cnbus_test_bench_work(struct work_struct *work)
{
	struct cnbus_test_cpu *c = container_of(work, struct cnbus_test_cpu, bench_work);
	struct cnbus_test_bench_cpu *r = &c->bench->cpu[c->slot];
	u32 count = c->bench->count, batch = c->bench->batch, done = 0, i, n;
	struct cn_msg *m;
	u64 t0, t1;
	bool insert_first = false;

	memset(r, 0, sizeof(*r));
	r->cpu = c->cpu;
	m = kzalloc(sizeof(*m) + c->bench->len, GFP_KERNEL);
	if (!m)
		return;
	m->id.idx = CNBUS_TEST_IDX;
	m->id.val = CNBUS_TEST_BENCH;
	m->ack = c->cpu;
	m->len = c->bench->len;
	memset(m->data, 'b', m->len);
	if (m->len)
		m->data[m->len - 1] = '\0';

	while (done < count) {
		n = min(batch, count - done);
		/* Alternate the order so neither kind always runs first. */
		if (!insert_first) {
			preempt_disable();
			t0 = local_clock();
			for (i = 0; i < n; i++, m->seq++)
				if (cnbus_send(m, 0, 0, GFP_ATOMIC))
					r->direct_err++;
			r->direct_ns += local_clock() - t0;
			preempt_enable();
			r->direct_n += n;
		}
		preempt_disable();
		t0 = local_clock();
		for (i = 0; i < n; i++, m->seq++)
			if (cnbus_insert(m, GFP_ATOMIC))
				r->insert_err++;
		t1 = local_clock();
		preempt_enable();
		r->insert_ns += t1 - t0;
		r->insert_n += n;
		cnbus_flush();
		r->drain_ns += local_clock() - t1;
		r->drain_n += n;
		if (insert_first) {
			preempt_disable();
			t0 = local_clock();
			for (i = 0; i < n; i++, m->seq++)
				if (cnbus_send(m, 0, 0, GFP_ATOMIC))
					r->direct_err++;
			r->direct_ns += local_clock() - t0;
			preempt_enable();
			r->direct_n += n;
		}
		insert_first = !insert_first;
		done += n;
		cond_resched();
	}
	kfree(m);
}

static void cnbus_test_bench(struct cn_msg *msg, struct netlink_skb_parms *nsp)
{
	struct cn_msg *reply;
	struct cnbus_test_bench *b;
	unsigned int cpu, slot = 0;

	if (msg->len != 4 * sizeof(__u32) && msg->len != sizeof(*b))
		return;
	reply = kzalloc(sizeof(*reply) + sizeof(*b), GFP_KERNEL);
	if (!reply)
		return;
	b = (struct cnbus_test_bench *)reply->data;
	memcpy(b, msg->data, 4 * sizeof(__u32));
	b->cpus = 0;
	if (!cnbus_test_capable(nsp)) {
		b->status = -EPERM;
		goto out_reply;
	}
	b->count = min(b->count, CNBUS_TEST_BENCH_MAX);
	b->batch = clamp(b->batch, 1U, CNBUS_TEST_BATCH_MAX);
	b->len = min_t(u32, b->len, CONNECTOR_MAX_MSG_SIZE);

	mutex_lock(&cnbus_test_burst_lock);
	cpus_read_lock();
	/* One CPU at a time: the others stay free for the listener. */
	for_each_online_cpu(cpu) {
		struct cnbus_test_cpu *c = &cnbus_test_cpus[cpu];

		if (slot == CNBUS_TEST_BENCH_CPUS)
			break;
		c->cpu = cpu;
		c->bench = b;
		c->slot = slot++;
		queue_work_on(cpu, system_highpri_wq, &c->bench_work);
		flush_work(&c->bench_work);
	}
	cpus_read_unlock();
	mutex_unlock(&cnbus_test_burst_lock);
	b->cpus = slot;

out_reply:
	reply->id = msg->id;
	reply->seq = msg->seq;
	reply->ack = msg->ack + 1;
	reply->len = sizeof(*b);
	cnbus_reply(reply, nsp->portid, GFP_KERNEL);
	kfree(reply);
}

/*
 * One round's inserts of @kind on this CPU. The caller keeps the CPU
 * (preemption or interrupts off), so its counters of @kind are ours: the
 * other kind may interrupt, but has its own.
 */
static void cnbus_test_stream_insert(unsigned int kind, u32 n)
{
	struct {
		struct cn_msg msg;
		char text[CNBUS_TEST_TEXT];
	} m;
	unsigned int cpu = smp_processor_id();
	struct cnbus_test_cpu *c = &cnbus_test_cpus[cpu];
	int len, err;
	u32 i;

	for (i = 0; i < n; i++) {
		memset(&m.msg, 0, sizeof(m.msg));
		m.msg.id.idx = CNBUS_TEST_IDX;
		m.msg.id.val = CNBUS_TEST_STREAM;
		m.msg.seq = c->stream_seq[kind];
		m.msg.ack = cpu * 2 + kind;
		len = scnprintf(m.text, sizeof(m.text), "cpu=%u stream=%u", cpu, m.msg.seq);
		m.msg.len = len + 1;
		err = cnbus_insert(&m.msg, GFP_ATOMIC);
		if (err) {
			c->stream_refused[kind]++;
			if (err == -ENOBUFS)
				c->stream_enobufs[kind]++;
			continue;
		}
		c->stream_seq[kind]++;
		c->stream_inserted[kind]++;
	}
}

static void cnbus_test_stream_irq(struct irq_work *iw)
{
	cnbus_test_stream_insert(CNBUS_TEST_STREAM_IRQ,
				 READ_ONCE(cnbus_test_stream_state.per_round));
}

/* A round's work item: this CPU's inserts, then its hard IRQ's (irq_work). */
static void cnbus_test_stream_task(struct work_struct *work)
{
	struct cnbus_test_cpu *c = container_of(work, struct cnbus_test_cpu, stream_work);

	preempt_disable();
	cnbus_test_stream_insert(CNBUS_TEST_STREAM_TASK,
				 READ_ONCE(cnbus_test_stream_state.per_round));
	irq_work_queue(&c->stream_iw);
	preempt_enable();
}

/*
 * A round: a work item on every online CPU, then the next round a tick
 * later. The hotplug lock is held only while queueing them (a CPU must not
 * go away under queue_work_on()).
 */
static void cnbus_test_stream_round(struct work_struct *work)
{
	unsigned int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu)
		queue_work_on(cpu, system_highpri_wq, &cnbus_test_cpus[cpu].stream_work);
	cpus_read_unlock();
	cnbus_test_stream_state.rounds++;
	if (!READ_ONCE(cnbus_test_stream_state.stopping))
		queue_delayed_work(system_wq, &cnbus_test_stream_state.round, 1);
}

/*
 * CPU hotplug teardown, on a CPU going offline (no longer active, its work
 * items still bound to it): while a stream runs, a last round of
 * CNBUS_TEST_STREAM_MAX inserts there, so that its ring is likely still
 * holding some when the CPU dies (what cnbus must send before freeing it).
 */
static int cnbus_test_stream_cpu_down(unsigned int cpu)
{
	if (!READ_ONCE(cnbus_test_stream_state.running) ||
	    READ_ONCE(cnbus_test_stream_state.stopping))
		return 0;
	preempt_disable();
	cnbus_test_stream_insert(CNBUS_TEST_STREAM_TASK, CNBUS_TEST_STREAM_MAX);
	preempt_enable();
	return 0;
}

/* Stop the running stream, wait for its last inserts, fill in @res. */
static void cnbus_test_stream_stop(struct cnbus_test_stream *res)
{
	unsigned int cpu;

	lockdep_assert_held(&cnbus_test_stream_state.lock);
	WRITE_ONCE(cnbus_test_stream_state.stopping, true);
	cancel_delayed_work_sync(&cnbus_test_stream_state.round);
	/* A CPU going offline now inserts its last round before this returns. */
	cpus_read_lock();
	cpus_read_unlock();
	for_each_possible_cpu(cpu) {
		struct cnbus_test_cpu *c = &cnbus_test_cpus[cpu];
		unsigned int k;

		flush_work(&c->stream_work);
		irq_work_sync(&c->stream_iw);
		for (k = 0; k < 2; k++) {
			res->inserted += c->stream_inserted[k];
			res->refused += c->stream_refused[k];
			res->enobufs += c->stream_enobufs[k];
		}
		res->inserted_irq += c->stream_inserted[CNBUS_TEST_STREAM_IRQ];
	}
	res->rounds = cnbus_test_stream_state.rounds;
	cnbus_test_stream_state.running = false;
}

static int cnbus_test_stream_start(u32 per_round)
{
	unsigned int cpu;

	lockdep_assert_held(&cnbus_test_stream_state.lock);
	for_each_possible_cpu(cpu) {
		struct cnbus_test_cpu *c = &cnbus_test_cpus[cpu];

		memset(c->stream_seq, 0, sizeof(c->stream_seq));
		memset(c->stream_inserted, 0, sizeof(c->stream_inserted));
		memset(c->stream_refused, 0, sizeof(c->stream_refused));
		memset(c->stream_enobufs, 0, sizeof(c->stream_enobufs));
	}
	cnbus_test_stream_state.per_round = per_round;
	cnbus_test_stream_state.rounds = 0;
	cnbus_test_stream_state.stopping = false;
	cnbus_test_stream_state.running = true;
	queue_delayed_work(system_wq, &cnbus_test_stream_state.round, 0);
	return 0;
}

static void cnbus_test_stream(struct cn_msg *msg, struct netlink_skb_parms *nsp)
{
	u8 buf[sizeof(struct cn_msg) + sizeof(struct cnbus_test_stream)] __aligned(8);
	struct cn_msg *reply = (struct cn_msg *)buf;
	struct cnbus_test_stream req;

	if (msg->len != sizeof(req))
		return;
	memcpy(&req, msg->data, sizeof(req));
	req.rounds = 0;
	req.inserted = 0;
	req.inserted_irq = 0;
	req.refused = 0;
	req.enobufs = 0;
	req.status = 0;
	if (!cnbus_test_capable(nsp)) {
		req.status = -EPERM;
		goto out_reply;
	}
	mutex_lock(&cnbus_test_stream_state.lock);
	if (req.op == CNBUS_TEST_STREAM_START &&
	    (!req.per_round || req.per_round > CNBUS_TEST_STREAM_MAX))
		req.status = -EINVAL;
	else if (req.op == CNBUS_TEST_STREAM_START && cnbus_test_stream_state.running)
		req.status = -EALREADY;
	else if (req.op == CNBUS_TEST_STREAM_START)
		req.status = cnbus_test_stream_start(req.per_round);
	else if (req.op != CNBUS_TEST_STREAM_STOP)
		req.status = -EINVAL;
	else if (!cnbus_test_stream_state.running)
		req.status = -EALREADY;
	else
		cnbus_test_stream_stop(&req);
	mutex_unlock(&cnbus_test_stream_state.lock);

out_reply:
	*reply = *msg;
	reply->ack = msg->ack + 1;
	reply->len = sizeof(req);
	memcpy(reply->data, &req, sizeof(req));
	cnbus_reply(reply, nsp->portid, GFP_KERNEL);
}

static void cnbus_test_timer_fn(struct timer_list *t)
{
	struct {
		struct cn_msg msg;
		char text[CNBUS_TEST_TEXT];
	} m;
	unsigned int cpu = smp_processor_id();
	int n;

	memset(&m.msg, 0, sizeof(m.msg));
	m.msg.id.idx = CNBUS_TEST_IDX;
	m.msg.id.val = CNBUS_TEST_ECHO_A;
	m.msg.seq = (u32)cnbus_test_counter;
	m.msg.ack = cpu;
	n = scnprintf(m.text, sizeof(m.text), "cpu=%u counter=%llu", cpu, cnbus_test_counter);
	m.msg.len = n + 1;
	if (!cnbus_insert(&m.msg, GFP_ATOMIC))
		cnbus_test_counter++;

	/* Next tick on the next online CPU, so every CPU inserts in turn. */
	if (!READ_ONCE(cnbus_test_stopping)) {
		cpu = cpumask_next(cpu, cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first(cpu_online_mask);
		cnbus_test_timer.expires = jiffies + msecs_to_jiffies(period_ms);
		add_timer_on(&cnbus_test_timer, cpu);
	}
}

/* A callback of the callbacks= set: nothing to do, it exists to be listed. */
static void cnbus_test_many_cb(struct cn_msg *msg, struct netlink_skb_parms *nsp)
{
}

/* Remove the first @n callbacks of the callbacks= set. */
static void cnbus_test_del_many(unsigned int n)
{
	struct cb_id id = { .idx = CNBUS_TEST_MANY_IDX };

	for (id.val = 0; id.val < n; id.val++)
		cnbus_del_callback(&id);
}

static int cnbus_test_add_many(void)
{
	struct cb_id id = { .idx = CNBUS_TEST_MANY_IDX };
	char name[CNBUS_TEST_TEXT];
	int err;

	if (callbacks > CNBUS_TEST_MANY_MAX) {
		pr_err("callbacks must be at most %u\n", CNBUS_TEST_MANY_MAX);
		return -EINVAL;
	}
	for (id.val = 0; id.val < callbacks; id.val++) {
		snprintf(name, sizeof(name), "cnbus_test_many_%u", id.val);
		err = cnbus_add_callback(&id, name, cnbus_test_many_cb);
		if (err) {
			cnbus_test_del_many(id.val);
			return err;
		}
	}
	return 0;
}

static void cnbus_test_free_cpus(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		kfree(cnbus_test_cpus[cpu].big);
	kfree(cnbus_test_cpus);
}

static int __init cnbus_test_init(void)
{
	unsigned int cpu;
	int err;

	mutex_init(&cnbus_test_stream_state.lock);
	INIT_DELAYED_WORK(&cnbus_test_stream_state.round, cnbus_test_stream_round);
	cnbus_test_cpus = kcalloc(nr_cpu_ids, sizeof(*cnbus_test_cpus), GFP_KERNEL);
	if (!cnbus_test_cpus)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct cnbus_test_cpu *c = &cnbus_test_cpus[cpu];

		INIT_WORK(&c->work, cnbus_test_burst_work);
		INIT_WORK(&c->bench_work, cnbus_test_bench_work);
		c->iw = IRQ_WORK_INIT_HARD(cnbus_test_burst_irq);
		c->stream_iw = IRQ_WORK_INIT_HARD(cnbus_test_stream_irq);
		INIT_WORK(&c->stream_work, cnbus_test_stream_task);
		init_completion(&c->done);
		c->big = kmalloc(sizeof(*c->big) + CNBUS_TEST_PAD_MAX, GFP_KERNEL);
		if (!c->big) {
			err = -ENOMEM;
			goto out_free_cpus;
		}
	}

	err = cnbus_add_callback(&cnbus_test_ids[0], "cnbus_test_a", cnbus_test_echo);
	if (err)
		goto out_free_cpus;
	err = cnbus_add_callback(&cnbus_test_ids[1], "cnbus_test_b", cnbus_test_echo);
	if (err)
		goto out_del_a;
	err = cnbus_add_callback(&cnbus_test_ids[2], "cnbus_test_burst", cnbus_test_burst);
	if (err)
		goto out_del_b;
	err = cnbus_add_callback(&cnbus_test_ids[3], "cnbus_test_mcast", cnbus_test_mcast);
	if (err)
		goto out_del_burst;
	err = cnbus_add_callback(&cnbus_test_ids[4], "cnbus_test_bench", cnbus_test_bench);
	if (err)
		goto out_del_mcast;
	err = cnbus_add_callback(&cnbus_test_ids[5], "cnbus_test_stream", cnbus_test_stream);
	if (err)
		goto out_del_bench;
	err = cnbus_test_add_many();
	if (err)
		goto out_del_stream;
	err = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "cnbus_test:stream", NULL,
					cnbus_test_stream_cpu_down);
	if (err < 0)
		goto out_del_many;
	cnbus_test_stream_state.hp_state = err;

	timer_setup(&cnbus_test_timer, cnbus_test_timer_fn, 0);
	if (period_ms)
		mod_timer(&cnbus_test_timer, jiffies + msecs_to_jiffies(period_ms));

	pr_info("loaded, timer period %u ms, %u more callbacks\n", period_ms, callbacks);
	return 0;

out_del_many:
	cnbus_test_del_many(callbacks);
out_del_stream:
	cnbus_del_callback(&cnbus_test_ids[5]);
out_del_bench:
	cnbus_del_callback(&cnbus_test_ids[4]);
out_del_mcast:
	cnbus_del_callback(&cnbus_test_ids[3]);
out_del_burst:
	cnbus_del_callback(&cnbus_test_ids[2]);
out_del_b:
	cnbus_del_callback(&cnbus_test_ids[1]);
out_del_a:
	cnbus_del_callback(&cnbus_test_ids[0]);
out_free_cpus:
	cnbus_test_free_cpus();
	return err;
}

static void __exit cnbus_test_exit(void)
{
	int i;

	WRITE_ONCE(cnbus_test_stopping, true);
	timer_delete_sync(&cnbus_test_timer);
	/* Waits for running callbacks, including a burst in progress. */
	cnbus_test_del_many(callbacks);
	for (i = ARRAY_SIZE(cnbus_test_ids) - 1; i >= 0; i--)
		cnbus_del_callback(&cnbus_test_ids[i]);
	/* No START can come any more; a stream left running stops here. */
	mutex_lock(&cnbus_test_stream_state.lock);
	if (cnbus_test_stream_state.running) {
		struct cnbus_test_stream res = {};

		cnbus_test_stream_stop(&res);
		pr_info("stream stopped at unload: %llu inserted, %llu refused\n", res.inserted,
			res.refused);
	}
	mutex_unlock(&cnbus_test_stream_state.lock);
	cpuhp_remove_state_nocalls(cnbus_test_stream_state.hp_state);
	cnbus_test_free_cpus();
	pr_info("unloaded after %llu timer messages\n", cnbus_test_counter);
}

module_init(cnbus_test_init);
module_exit(cnbus_test_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("libcn project");
MODULE_DESCRIPTION("Test callbacks, timer and bursts for cnbus");
