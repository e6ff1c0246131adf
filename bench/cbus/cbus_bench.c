// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cbus_bench.c - guest side of bench/cbus/run (bench/run's case 4), run as root
 * inside the VM with cnbus.ko and cnbus_test.ko (period_ms=0) loaded.
 *
 * 1. cost of a CBUS insert vs a direct send, measured in the kernel:
 *    cnbus_test's 0x123.0x45a times batches of cnbus_send() and of
 *    cnbus_insert() on each CPU (local_clock(), preemption off) and the
 *    drain of every insert batch (last insert to cnbus_flush() return).
 *    One listener on group 0x123 reads everything, as a real subscriber.
 *    The same measurement again with one datagram per message (cnbus's
 *    cbus_batch set to 1 through sysfs, then restored): the drain rate
 *    of batched datagrams against the one-skb-per-message rate, side by
 *    side in one run.
 * 2. a burst from every CPU at once at the module's defaults: cnbus_test's
 *    0x123.0x458 from process context, then from hard IRQ; the counters'
 *    deltas (inserted, sent, dropped, refused, overflowed) and
 *    what the listener received.
 *
 * Usage: cbus_bench COUNT BATCH LEN BURST BURST_IRQ [LARGE_LEN]
 *   LARGE_LEN: a second measurement with messages too large for a CBUS slot
 *   (the insert then allocates an skb, as a direct send does); 0: none.
 * Prints "BENCH ..." lines (key=value) for the host script, and comments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libcn.h>
#include <libcn/cnbus_test.h>

#include "kstat.h"
#include "rx_loop.h"

/* The test module's protocol (ids, request structs): libcn/cnbus_test.h. */
#define T_IDX	    CNBUS_TEST_IDX
#define T_BURST	    CNBUS_TEST_BURST
#define T_BENCH	    CNBUS_TEST_BENCH
#define BENCH_CPUS  CNBUS_TEST_BENCH_CPUS
#define bench_cpu   cnbus_test_bench_cpu
#define bench_req   cnbus_test_bench
#define burst_req   cnbus_test_burst
#define BATCH_PARAM "/sys/module/cnbus/parameters/cbus_batch"

static int unit;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The listener: counts messages per id value, and overruns. */
struct rx {
	struct cn_sock *s;
	volatile int stop;
	volatile uint64_t bench, burst, overruns;
	volatile double last_rx;
};

/* A batch the listener read (rx_loop). */
static void rx_took(void *arg, const struct cn_message *msgs, int n)
{
	struct rx *rx = arg;
	int i;

	for (i = 0; i < n; i++) {
		if (msgs[i].port || msgs[i].msg->id.idx != T_IDX)
			continue;
		if (msgs[i].msg->id.val == T_BENCH)
			rx->bench++;
		else if (msgs[i].msg->id.val == T_BURST)
			rx->burst++;
	}
}

static void *rx_thread(void *arg)
{
	struct rx *rx = arg;

	rx_loop(rx->s, &rx->stop, &rx->overruns, &rx->last_rx, rx_took, rx);
	return NULL;
}

/* Wait until the listener got `want` of `field` or went quiet for 2 s. */
static void wait_rx(struct rx *rx, volatile uint64_t *field, uint64_t want)
{
	double end = now_s() + 60;

	while (*field < want && now_s() < end && now_s() - rx->last_rx < 2.0)
		usleep(20000);
}

static int run_bench(const char *tag, struct cn_sock *c, struct rx *rx, uint32_t count,
		     uint32_t batch, uint32_t len)
{
	unsigned char buf[CN_MSG_SIZE(sizeof(struct bench_req))];
	struct bench_req req = { .count = count, .batch = batch, .len = len }, res;
	struct cn_message rep;
	struct cn_msg *m;
	uint64_t dn = 0, dns = 0, in = 0, ins = 0, drn = 0, drns = 0, derr = 0, ierr = 0;
	uint64_t rx0 = rx->bench;
	double t0 = now_s();
	unsigned int i;
	int r;

	m = cn_msg_init(buf, sizeof(buf), T_IDX, T_BENCH, &req, 16);
	r = cn_request(c, m, 0, CN_MATCH_STRICT, 600000, &rep);
	if (r || rep.msg->len != sizeof(res)) {
		printf("Bail out! bench request: %d (len %u)\n", r, r ? 0 : rep.msg->len);
		return 1;
	}
	memcpy(&res, rep.msg->data, sizeof(res));
	for (i = 0; i < res.cpus && i < BENCH_CPUS; i++) {
		struct bench_cpu *b = &res.cpu[i];

		printf("BENCH %s-cpu cpu=%u batch=%u len=%u direct_n=%" PRIu64 " direct_ns=%" PRIu64
		       " direct_err=%" PRIu64 " insert_n=%" PRIu64 " insert_ns=%" PRIu64
		       " insert_err=%" PRIu64 " drain_n=%" PRIu64 " drain_ns=%" PRIu64 "\n",
		       tag, b->cpu, res.batch, res.len, b->direct_n, b->direct_ns, b->direct_err,
		       b->insert_n, b->insert_ns, b->insert_err, b->drain_n, b->drain_ns);
		dn += b->direct_n;
		dns += b->direct_ns;
		derr += b->direct_err;
		in += b->insert_n;
		ins += b->insert_ns;
		ierr += b->insert_err;
		drn += b->drain_n;
		drns += b->drain_ns;
	}
	wait_rx(rx, &rx->bench, rx0 + dn + in - derr - ierr);
	printf("BENCH %s-total batch=%u len=%u cpus=%u direct_n=%" PRIu64 " direct_ns=%" PRIu64
	       " direct_err=%" PRIu64 " insert_n=%" PRIu64 " insert_ns=%" PRIu64
	       " insert_err=%" PRIu64 " drain_n=%" PRIu64 " drain_ns=%" PRIu64 " received=%" PRIu64
	       " overruns=%" PRIu64 " wall_s=%.2f\n",
	       tag, res.batch, res.len, res.cpus, dn, dns, derr, in, ins, ierr, drn, drns,
	       rx->bench - rx0, rx->overruns, now_s() - t0);
	return 0;
}

/* Write cnbus's cbus_batch (messages per datagram); returns 0 or -errno. */
static int set_batch(const char *val)
{
	FILE *f = fopen(BATCH_PARAM, "w");
	int r = 0;

	if (!f)
		return -errno;
	if (fputs(val, f) < 0)
		r = -EIO;
	if (fclose(f))
		r = -errno;
	return r;
}

/* The bench once more with one datagram per message, then cbus_batch back. */
static int run_single(struct cn_sock *c, struct rx *rx, uint32_t count, uint32_t batch,
		      uint32_t len)
{
	char old[32] = "";
	FILE *f = fopen(BATCH_PARAM, "r");
	int rc;

	if (!f || !fgets(old, sizeof(old), f)) {
		printf("Bail out! cannot read %s\n", BATCH_PARAM);
		if (f)
			fclose(f);
		return 1;
	}
	fclose(f);
	old[strcspn(old, "\n")] = '\0';
	if (set_batch("1")) {
		printf("Bail out! cannot write %s\n", BATCH_PARAM);
		return 1;
	}
	printf("# cbus_batch %s -> 1 (one datagram per message)\n", old);
	rc = run_bench("single", c, rx, count, batch, len);
	if (set_batch(old)) {
		printf("Bail out! cannot restore %s\n", BATCH_PARAM);
		return 1;
	}
	return rc;
}

static int run_burst(struct cn_sock *c, struct rx *rx, uint32_t count, uint32_t flags)
{
	unsigned char buf[CN_MSG_SIZE(sizeof(struct burst_req))];
	struct burst_req req = { .count = count, .flags = flags }, res;
	struct kstat k0, k1;
	struct cn_message rep;
	struct cn_msg *m;
	uint64_t rx0 = rx->burst, ov0 = rx->overruns, ins, sent, dropped;
	double t0;
	int r;

	if (kstat_wait_drained(&k0, 60)) {
		printf("Bail out! queues not drained before the burst\n");
		return 1;
	}
	t0 = now_s();
	m = cn_msg_init(buf, sizeof(buf), T_IDX, T_BURST, &req, sizeof(req));
	r = cn_request(c, m, 0, CN_MATCH_STRICT, 600000, &rep);
	if (r || rep.msg->len != sizeof(res)) {
		printf("Bail out! burst request: %d\n", r);
		return 1;
	}
	memcpy(&res, rep.msg->data, sizeof(res));
	if (kstat_wait_drained(&k1, 120)) {
		printf("Bail out! queues not drained after the burst\n");
		return 1;
	}
	ins = k1.inserted - k0.inserted;
	sent = k1.sent - k0.sent;
	dropped = k1.dropped - k0.dropped;
	wait_rx(rx, &rx->burst, rx0 + sent);
	printf("BENCH burst ctx=%s per_cpu=%u cpus=%u qlen=%u budget=%u inserted=%" PRIu64
	       " refused=%" PRIu64 " enobufs=%" PRIu64 " overflowed=%" PRIu64 " sent=%" PRIu64
	       " dropped=%" PRIu64 " received=%" PRIu64 " overruns=%" PRIu64 " wall_s=%.2f\n",
	       flags & 1 ? "hardirq" : "process", count, res.cpus, k1.cbus_qlen, k1.cbus_budget,
	       ins, res.refused, res.enobufs, k1.overflowed - k0.overflowed, sent, dropped,
	       rx->burst - rx0, rx->overruns - ov0, now_s() - t0);
	return 0;
}

int main(int argc, char **argv)
{
	struct cn_sock *c;
	struct rx rx = { 0 };
	struct kstat ks;
	pthread_t th;
	uint32_t count, batch, len, burst, burst_irq, large = 0, drain_batch;
	int r, rc = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: %s COUNT BATCH LEN BURST BURST_IRQ [LARGE_LEN]\n", argv[0]);
		return 2;
	}
	count = (uint32_t)strtoul(argv[1], NULL, 0);
	batch = (uint32_t)strtoul(argv[2], NULL, 0);
	len = (uint32_t)strtoul(argv[3], NULL, 0);
	burst = (uint32_t)strtoul(argv[4], NULL, 0);
	burst_irq = (uint32_t)strtoul(argv[5], NULL, 0);
	if (argc == 7)
		large = (uint32_t)strtoul(argv[6], NULL, 0);
	drain_batch = batch <= CNBUS_TEST_BATCH_MAX / 4 ? 4 * batch : CNBUS_TEST_BATCH_MAX;

	r = kstat_get(&ks);
	if (r) {
		printf("Bail out! cnbus not found (%d)\n", r);
		return 1;
	}
	unit = (int)ks.unit;
	printf("# cnbus %s unit %u cbus_qlen %u cbus_budget %u cpus %u\n", ks.version, ks.unit,
	       ks.cbus_qlen, ks.cbus_budget, ks.ncpus);

	c = cn_open(unit, NULL);
	rx.s = cn_open(unit, &(struct cn_open_opts){ .sz = sizeof(struct cn_open_opts),
						     .flags = CN_OPEN_NONBLOCK });
	if (!c || !rx.s || cn_set_rcvbuf(rx.s, 64 << 20) < 0 || cn_join(rx.s, T_IDX)) {
		printf("Bail out! sockets: %s\n", strerror(errno));
		return 1;
	}
	rx.last_rx = now_s();
	if (pthread_create(&th, NULL, rx_thread, &rx)) {
		printf("Bail out! pthread_create\n");
		return 1;
	}

	/* A short warm-up (caches, slabs), then the measured run. */
	rc = run_bench("warmup", c, &rx, batch, batch, len);
	if (!rc)
		rc = run_bench("bench", c, &rx, count, batch, len);
	/*
	 * The drain rates side by side, batched and one datagram per message,
	 * with batches 4x as long (at most 4096): the wake-up of the worker
	 * and of the flushing caller, the same in both, weighs less.
	 */
	if (!rc)
		rc = run_bench("drain", c, &rx, count, drain_batch, len);
	if (!rc)
		rc = run_single(c, &rx, count, drain_batch, len);
	if (!rc && large)
		rc = run_bench("large", c, &rx, count / 4 ? count / 4 : 1, batch, large);
	if (!rc && burst)
		rc = run_burst(c, &rx, burst, 0);
	if (!rc && burst_irq)
		rc = run_burst(c, &rx, burst_irq, 1);

	rx.stop = 1;
	pthread_join(th, NULL);
	cn_close(rx.s);
	cn_close(c);
	printf("BENCH done rc=%d\n", rc);
	return rc;
}
