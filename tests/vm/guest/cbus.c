// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cbus.c - CBUS, kmod's queued sends: the timer's order, bursts from
 * process context and hard IRQ drained in order per CPU, the ring's
 * overflow budget, refusals past it, mixed sizes, overruns reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <libcn.h>
#include <libcn/cnbus_test.h>
#include <libcn/kmod.h>

#include "kstat.h"
#include "rx_loop.h"
#include "vmtest.h"

int t_cbus_timer_order(void)
{
	enum { N = 40 };
	struct cn_sock *s = open_sock(0, 0);
	long long *last = malloc(ncpu_ids * sizeof(*last));
	unsigned int *percpu = calloc(ncpu_ids, sizeof(*percpu));
	struct cn_message m;
	unsigned int cpu, i;
	unsigned long long counter;
	int rc = 0, r;

	CHECK(last && percpu, "malloc");
	for (i = 0; i < (unsigned int)ncpu_ids; i++)
		last[i] = -1;
	CHECK(s, "cn_open");
	CHECK(cn_join(s, CNBUS_TEST_IDX) == 0, "join");
	for (i = 0; i < N; i++) {
		r = recv_id(s, CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A, 10000, &m);
		CHECK(r == 0, "timer message %u: %d", i, r);
		CHECK(m.msg->len > 0 && m.msg->data[m.msg->len - 1] == 0, "text not terminated");
		CHECK(sscanf((const char *)m.msg->data, "cpu=%u counter=%llu", &cpu, &counter) == 2,
		      "text '%s'", (const char *)m.msg->data);
		CHECK(cpu < (unsigned int)ncpu_ids && cpu == m.msg->ack, "cpu %u ack %u", cpu,
		      m.msg->ack);
		CHECK(m.msg->seq == (uint32_t)counter, "seq %u counter %llu", m.msg->seq, counter);
		CHECK((long long)counter > last[cpu], "cpu %u: counter %llu after %lld", cpu,
		      counter, last[cpu]);
		last[cpu] = (long long)counter;
		percpu[cpu]++;
	}
	for (cpu = 0; cpu < (unsigned int)ncpu_ids; cpu++)
		if (percpu[cpu])
			info("cpu %u: %u timer messages in order", cpu, percpu[cpu]);
out:
	free(last);
	free(percpu);
	cn_close(s);
	return rc;
}

/* Burst receiver thread. */
struct rx {
	struct cn_sock *s;
	volatile int stop;
	volatile uint64_t got; /* burst messages */
	volatile uint64_t all; /* every message walked */
	volatile uint64_t overruns;
	uint64_t order_breaks;
	uint32_t pad_len;     /* odd-seq messages carry this many bytes (0: text only) */
	uint64_t big;	      /* odd-seq messages of pad_len bytes received */
	uint64_t bad_payload; /* messages whose payload is not what was inserted */
	long long *last;      /* per CPU (ack), while the burst runs */
	volatile double last_rx;
	struct cn_stats st; /* the listener's libcn counters after the burst */
};

/* "cpu=C burst=N", NUL, then for odd seq 'a' + seq % 26 up to pad_len. */
static void check_burst_payload(struct rx *rx, const struct cn_msg *m)
{
	char want[48];
	uint32_t n, i;

	n = (uint32_t)snprintf(want, sizeof(want), "cpu=%u burst=%u", m->ack, m->seq) + 1;
	if ((m->seq & 1) && rx->pad_len && m->len == rx->pad_len)
		rx->big++;
	if (m->len != ((m->seq & 1) && rx->pad_len ? rx->pad_len : n) || memcmp(m->data, want, n)) {
		rx->bad_payload++;
		return;
	}
	for (i = n; i < m->len; i++)
		if (m->data[i] != 'a' + m->seq % 26) {
			rx->bad_payload++;
			return;
		}
}

/* A batch the burst receiver read (rx_loop). */
static void rx_took(void *arg, const struct cn_message *msgs, int n)
{
	struct rx *rx = arg;
	int i;

	rx->all += (uint64_t)n;
	for (i = 0; i < n; i++) {
		const struct cn_msg *m = msgs[i].msg;

		if (m->id.idx != CNBUS_TEST_IDX || m->id.val != CNBUS_TEST_BURST || msgs[i].port)
			continue;
		if (m->ack < (uint32_t)ncpu_ids) {
			if ((long long)m->seq <= rx->last[m->ack])
				rx->order_breaks++;
			rx->last[m->ack] = m->seq;
		}
		check_burst_payload(rx, m);
		rx->got++;
	}
}

static void *rx_thread(void *arg)
{
	struct rx *rx = arg;

	rx_loop(rx->s, &rx->stop, &rx->overruns, &rx->last_rx, rx_took, rx);
	return NULL;
}

static int burst(unsigned int count, uint32_t flags, uint32_t len, int rcvbuf, int read_live,
		 struct rx *rx, struct kstat *k0, struct kstat *k1, struct cnbus_test_burst *res)
{
	struct cn_sock *c = open_sock(0, 0);
	unsigned char buf[CN_MSG_SIZE(sizeof(struct cnbus_test_burst))];
	struct cnbus_test_burst req = { .count = count, .flags = flags, .len = len };
	struct cn_message rep;
	struct cn_msg *m;
	pthread_t th;
	int rc = 0, r, i, started = 0;

	memset(rx, 0, sizeof(*rx));
	rx->pad_len = len;
	rx->last = malloc(ncpu_ids * sizeof(*rx->last));
	CHECK(rx->last, "malloc");
	for (i = 0; i < ncpu_ids; i++)
		rx->last[i] = -1;
	rx->s = open_sock(CN_OPEN_NONBLOCK, 0);
	CHECK(c && rx->s, "cn_open");
	r = cn_set_rcvbuf(rx->s, rcvbuf);
	CHECK(r > 0, "rcvbuf %d", r);
	CHECK(cn_join(rx->s, CNBUS_TEST_IDX) == 0, "join");
	CHECK(kstat_wait_drained(k0, 60) == 0, "not drained before");
	if (read_live) {
		CHECK(pthread_create(&th, NULL, rx_thread, rx) == 0, "pthread_create");
		started = 1;
	}
	m = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_IDX, CNBUS_TEST_BURST, &req, sizeof(req));
	r = cn_request(c, m, 0, CN_MATCH_STRICT, 600000, &rep);
	CHECK(r == 0, "burst request %d", r);
	CHECK(rep.msg->len == sizeof(*res), "reply len");
	memcpy(res, rep.msg->data, sizeof(*res));
	CHECK(kstat_wait_drained(k1, 120) == 0, "not drained after the burst");
	if (started) {
		/* Read until everything sent arrived or nothing came for 2 s. */
		uint64_t want = k1->sent - k0->sent;
		double end = now_s() + 120;

		while (rx->got < want && now_s() < end &&
		       !(rx->overruns && now_s() - rx->last_rx > 2.0))
			usleep(20000);
		rx->stop = 1;
		pthread_join(th, NULL);
		started = 0;
		CHECK(cn_stats(rx->s, &rx->st) == 0, "cn_stats");
	}
out:
	if (started) {
		rx->stop = 1;
		pthread_join(th, NULL);
	}
	free(rx->last);
	rx->last = NULL;
	cn_close(c);
	return rc;
}

/*
 * What every CBUS burst must show: all accepted messages arrived intact,
 * in order per CPU (nothing is sent around the queue), the counters add
 * up, refusals were -ENOBUFS and counted, and libcn walked the batched
 * datagrams message by message (its counters agree with what it returned).
 */
static int check_burst(const char *what, unsigned int count, const struct cnbus_test_burst *res,
		       const struct kstat *k0, const struct kstat *k1, const struct rx *rx)
{
	uint64_t ins = k1->inserted - k0->inserted, sent = k1->sent - k0->sent;
	uint64_t dropped = k1->dropped - k0->dropped;
	uint64_t refused = k1->refused_cbus - k0->refused_cbus;
	uint64_t over = k1->overflowed - k0->overflowed;
	int rc = 0;

	info("%s %u x %u cpus: inserted %" PRIu64 " (overflowed %" PRIu64 ") sent %" PRIu64
	     " dropped %" PRIu64 " refused %" PRIu64 " (ENOBUFS %" PRIu64 ") received %" PRIu64
	     " in %" PRIu64 " datagrams, overruns %" PRIu64 " order breaks %" PRIu64
	     " bad payloads %" PRIu64,
	     what, count, res->cpus, ins, over, sent, dropped, refused, res->enobufs, rx->got,
	     rx->st.datagrams, rx->overruns, rx->order_breaks, rx->bad_payload);
	CHECK(res->cpus == (uint32_t)ncpus, "cpus %u", res->cpus);
	CHECK(res->inserted + res->refused == (uint64_t)count * res->cpus, "reply counts");
	CHECK(ins == res->inserted, "inserted %" PRIu64 " reply %" PRIu64, ins, res->inserted);
	CHECK(refused == res->refused, "refused counter %" PRIu64 " reply %" PRIu64, refused,
	      res->refused);
	CHECK(res->enobufs == res->refused, "refusals other than -ENOBUFS");
	CHECK(dropped == 0, "%" PRIu64 " dropped", dropped);
	CHECK(ins == sent + dropped, "accounting");
	CHECK(!rx->overruns, "listener overran");
	CHECK(rx->got == sent, "received %" PRIu64 " of %" PRIu64, rx->got, sent);
	CHECK(rx->order_breaks == 0, "per-CPU order broken");
	CHECK(rx->bad_payload == 0, "%" PRIu64 " payloads differ", rx->bad_payload);
	CHECK(rx->st.messages == rx->all, "libcn counted %" PRIu64 " messages, returned %" PRIu64,
	      (uint64_t)rx->st.messages, (uint64_t)rx->all);
	CHECK(rx->st.datagrams <= rx->st.messages, "more datagrams than messages");
out:
	return rc;
}

static int t_cbus_burst(uint32_t flags, unsigned int count)
{
	struct kstat k0, k1;
	struct cnbus_test_burst res;
	struct rx rx;
	int rc;

	rc = burst(count, flags, 0, 64 << 20, 1, &rx, &k0, &k1, &res);
	if (rc)
		goto out;
	rc = check_burst(flags & CNBUS_TEST_BURST_HARDIRQ ? "burst (hard IRQ)" : "burst", count,
			 &res, &k0, &k1, &rx);
	if (rc)
		goto out;
	/* 3,000 per CPU from hard IRQ fit in the default ring + budget. */
	CHECK(res.refused == 0, "refused %" PRIu64, res.refused);
	/* From hard IRQ, 64 inserts per interrupt queue up before the worker runs. */
	if (flags & CNBUS_TEST_BURST_HARDIRQ)
		CHECK(rx.st.datagrams < rx.st.messages, "%" PRIu64 " messages in as many datagrams",
		      (uint64_t)rx.st.messages);
out:
	cn_close(rx.s);
	return rc;
}

/* What a one-interrupt burst gave: its size, the reply, kmod's counters
 * before and after, what the listener counted (its socket closed). */
struct oneirq {
	unsigned int count;
	struct cnbus_test_burst res;
	struct kstat k0, k1;
	struct rx rx;
};

/*
 * One interrupt per CPU inserts count(ks) records (odd seq ones len bytes,
 * 0: all text), ks kmod's report (ring and budget sizes), read live and
 * checked by check_burst. count() returns 0 when ring and budget do not
 * suit the test; that, or more than one interrupt inserts, skips it (77).
 * b is set whatever the outcome.
 */
static int oneirq_burst(const char *what, uint32_t len, unsigned int (*count)(const struct kstat *),
			struct oneirq *b)
{
	struct kstat ks;
	int rc = 0;

	memset(b, 0, sizeof(*b));
	CHECK(kstat_get(&ks) == 0, "kstat");
	b->count = count(&ks);
	if (!b->count || b->count > CNBUS_TEST_ONEIRQ_MAX) {
		info("cbus_qlen %u, cbus_budget %u: not for one interrupt", ks.cbus_qlen,
		     ks.cbus_budget);
		return 77;
	}
	rc = burst(b->count, CNBUS_TEST_BURST_HARDIRQ | CNBUS_TEST_BURST_ONEIRQ, len, 64 << 20, 1,
		   &b->rx, &b->k0, &b->k1, &b->res);
	if (!rc)
		rc = check_burst(what, b->count, &b->res, &b->k0, &b->k1, &b->rx);
out:
	cn_close(b->rx.s);
	b->rx.s = NULL;
	return rc;
}

/* 200 per CPU past the ring, within ring and budget. A "cpu=C burst=N"
 * record takes 48 bytes; the ring 128 per cbus_qlen. */
static unsigned int past_the_ring(const struct kstat *ks)
{
	unsigned int count = ks->cbus_qlen * 128 / 48 + 200;

	return (uint64_t)count * 48 < (uint64_t)ks->cbus_qlen * 128 + ks->cbus_budget ? count : 0;
}

/*
 * One interrupt per CPU inserts more small messages than the ring holds
 * (the worker cannot run in between): the rest go to the overflow budget,
 * nothing is refused, everything arrives in order, packed into datagrams.
 */
int t_cbus_ring_overflow_order(void)
{
	struct oneirq b;
	int rc = oneirq_burst("one interrupt past the ring", 0, past_the_ring, &b);

	if (rc)
		return rc;
	CHECK(b.res.refused == 0, "refused %" PRIu64, b.res.refused);
	CHECK(b.k1.overflowed - b.k0.overflowed >= (uint64_t)b.res.cpus * 200,
	      "overflowed %" PRIu64, b.k1.overflowed - b.k0.overflowed);
	CHECK(b.rx.st.datagrams < b.rx.st.messages, "not batched");
out:
	return rc;
}

/* More than ring and budget hold. Records: 48 bytes (even seq), 1056 (odd
 * seq, 1 KiB payload); 552 on average. */
static unsigned int past_the_budget(const struct kstat *ks)
{
	return (unsigned int)(((uint64_t)ks->cbus_qlen * 128 + ks->cbus_budget) / 500 + 100);
}

/*
 * One interrupt per CPU inserts more bytes (half of the messages 1 KiB)
 * than ring and budget hold: the excess is refused with -ENOBUFS and
 * counted, what was accepted arrives intact and in order.
 */
int t_cbus_budget_refused(void)
{
	struct oneirq b;
	int rc = oneirq_burst("one interrupt past the budget", 1024, past_the_budget, &b);

	if (rc)
		return rc;
	CHECK(b.res.refused > 0, "nothing refused");
	CHECK(b.rx.big > 0, "no large message arrived");
out:
	return rc;
}

int t_cbus_burst_process(void)
{
	return t_cbus_burst(0, burst_n);
}

int t_cbus_burst_hardirq(void)
{
	return t_cbus_burst(CNBUS_TEST_BURST_HARDIRQ, 3000);
}

/*
 * Small (in a CBUS slot) and large (an skb in the slot) messages alternate
 * in one queue, from process context and from hard IRQ: every payload
 * arrives intact and in order per CPU.
 */
int t_cbus_mixed_sizes(void)
{
	enum { COUNT = 300, LEN = 700 };
	uint32_t flags;
	struct kstat k0, k1;
	struct cnbus_test_burst res;
	struct rx rx = { 0 };
	uint64_t ins, sent, dropped;
	int rc = 0;

	for (flags = 0; flags <= CNBUS_TEST_BURST_HARDIRQ; flags++) {
		rc = burst(COUNT, flags, LEN, 64 << 20, 1, &rx, &k0, &k1, &res);
		if (rc)
			goto out;
		ins = k1.inserted - k0.inserted;
		sent = k1.sent - k0.sent;
		dropped = k1.dropped - k0.dropped;
		info("%s: inserted %" PRIu64 " sent %" PRIu64 " dropped %" PRIu64
		     " received %" PRIu64 " (%" PRIu64 " of %u bytes) bad %" PRIu64
		     " order breaks %" PRIu64,
		     flags ? "hard IRQ" : "process", ins, sent, dropped, rx.got, rx.big, LEN,
		     rx.bad_payload, rx.order_breaks);
		CHECK(res.refused == 0 && ins == res.inserted && ins == (uint64_t)COUNT * res.cpus,
		      "inserted %" PRIu64 " refused %" PRIu64, ins, (uint64_t)res.refused);
		CHECK(ins == sent + dropped, "accounting");
		CHECK(!rx.overruns && rx.got == sent, "received %" PRIu64 " of %" PRIu64, rx.got,
		      sent);
		CHECK(rx.bad_payload == 0, "%" PRIu64 " payloads differ", rx.bad_payload);
		CHECK(rx.big > 0, "no large message arrived");
		CHECK(rx.order_breaks == 0, "per-CPU order broken");
		cn_close(rx.s);
		rx.s = NULL;
	}
out:
	cn_close(rx.s);
	return rc;
}

int t_cbus_overrun_reported(void)
{
	struct kstat k0, k1;
	struct cnbus_test_burst res;
	struct cn_message m;
	struct cn_stats st;
	struct rx rx;
	uint64_t got = 0, want;
	int rc, r, enobufs = 0;

	rc = burst(2000, 0, 0, 4096, 0, &rx, &k0, &k1, &res);
	if (rc)
		goto out;
	want = k1.sent - k0.sent;
	for (;;) {
		r = cn_recv(rx.s, &m, CN_RECV_DONTWAIT);
		if (r == -ENOBUFS) {
			enobufs++;
			continue;
		}
		if (r)
			break;
		if (m.msg->id.val == CNBUS_TEST_BURST)
			got++;
	}
	CHECK(r == -EAGAIN, "last recv %d", r);
	CHECK(cn_stats(rx.s, &st) == 0, "cn_stats");
	info("small buffer: %" PRIu64 " of %" PRIu64 " arrived, ENOBUFS %d, overruns %" PRIu64, got,
	     want, enobufs, st.overruns);
	CHECK(got < want, "everything fit in a 4 KiB buffer?");
	CHECK(enobufs >= 1 && st.overruns >= 1, "overrun not reported");
out:
	cn_close(rx.s);
	return rc;
}
