// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hotplug.c - CBUS while CPUs go offline and online (guest test
 * cbus_hotplug, run by cnbus_vmtest). cnbus_test's stream inserts on every
 * online CPU, from a work item and from hard IRQ, while the test takes each
 * CPU that can go offline down and up again, round after round, and brings
 * CPUs that were offline when cnbus loaded (the scale boot has them) up and
 * down again. cnbus makes a CPU's ring when the CPU comes up and, when it
 * dies, sends what is queued there before freeing it.
 *
 * Nothing may be lost and every insert is accounted for: each accepted
 * insert arrives once, in order per CPU and kind (seq counts them, so a gap
 * is a loss and a repeat a duplicate), the kernel's counters (of every
 * possible CPU, offline ones included) agree with what the stream counted,
 * and a CPU that went offline has nothing queued and inserted = sent.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libcn.h>
#include <libcn/cnbus_test.h>

#include "kstat.h"
#include "vmtest.h"

#define HOTPLUG_CPUS  4 /* online CPUs taken down and up (all when fewer) */
#define HOTPLUG_EXTRA 2 /* offline CPUs brought up and down (scale boot) */

static unsigned int hotplug_rounds = 10;
static unsigned int stream_per_round = 8;

/* What the listener saw of the stream, per source (ack = cpu * 2 + kind). */
struct stream_rx {
	struct cn_sock *s;
	volatile int stop;
	unsigned int nsrc;
	uint32_t *next; /* the seq each source should send next */
	volatile uint64_t got;
	uint64_t gaps;	  /* messages missing before one that came */
	uint64_t repeats; /* a seq below the expected one: duplicate or reorder */
	uint64_t strays;  /* ack beyond any CPU, or a bad text */
	volatile uint64_t overruns;
	volatile double last_rx;
};

static void *stream_rx_thread(void *arg)
{
	struct stream_rx *rx = arg;
	struct cn_message msgs[64];
	struct pollfd p = { .fd = cn_fd(rx->s), .events = POLLIN };
	char want[48];
	int n, i;

	while (!rx->stop) {
		n = cn_recv_batch(rx->s, msgs, 64, CN_RECV_DONTWAIT);
		if (n == -EAGAIN) {
			poll(&p, 1, 100);
			continue;
		}
		if (n == -ENOBUFS)
			rx->overruns++;
		if (n <= 0)
			continue;
		for (i = 0; i < n; i++) {
			const struct cn_msg *m = msgs[i].msg;

			if (m->id.idx != CNBUS_TEST_IDX || m->id.val != CNBUS_TEST_STREAM ||
			    msgs[i].port)
				continue;
			snprintf(want, sizeof(want), "cpu=%u stream=%u", m->ack / 2, m->seq);
			if (m->ack >= rx->nsrc || m->len != strlen(want) + 1 ||
			    memcmp(m->data, want, m->len)) {
				rx->strays++;
				continue;
			}
			if (m->seq < rx->next[m->ack]) {
				rx->repeats++;
				continue;
			}
			rx->gaps += m->seq - rx->next[m->ack];
			rx->next[m->ack] = m->seq + 1;
			rx->got++;
		}
		rx->last_rx = now_s();
	}
	return NULL;
}

/* Send a stream request; *res gets the answer. Returns 0 or -errno. */
static int stream_request(uint32_t op, uint32_t per_round, struct cnbus_test_stream *res)
{
	unsigned char buf[CN_MSG_SIZE(sizeof(*res))];
	struct cnbus_test_stream req = { .op = op, .per_round = per_round };
	struct cn_sock *c = open_sock(0, 0);
	struct cn_message rep;
	struct cn_msg *m;
	int r;

	if (!c)
		return -errno;
	m = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_IDX, CNBUS_TEST_STREAM, &req, sizeof(req));
	r = cn_request(c, m, 0, CN_MATCH_STRICT, 120000, &rep);
	if (!r && rep.msg->len != sizeof(*res))
		r = -EPROTO;
	if (!r)
		memcpy(res, rep.msg->data, sizeof(*res));
	cn_close(c);
	return r;
}

static const char *cpu_online_path(unsigned int cpu, char *buf, size_t len)
{
	snprintf(buf, len, "/sys/devices/system/cpu/cpu%u/online", cpu);
	return buf;
}

/* 1 online, 0 offline, -1 not hotpluggable (no online file). */
static int cpu_online(unsigned int cpu)
{
	char path[64], c = 0;
	int fd = open(cpu_online_path(cpu, path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, &c, 1);
	close(fd);
	return n == 1 ? c == '1' : -1;
}

/* Take @cpu offline (0) or online (1). Returns 0 or -errno. */
static int cpu_set_online(unsigned int cpu, int on)
{
	char path[64];
	int fd = open(cpu_online_path(cpu, path, sizeof(path)), O_WRONLY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		r = -errno;
	close(fd);
	return r;
}

/*
 * What an offline CPU must show: its ring is gone and everything it
 * queued was sent before (inserted = sent + dropped, nothing queued).
 */
static int check_offline_cpu(unsigned int cpu, uint64_t *checked)
{
	struct kstat k;
	unsigned int i;
	int rc = 0;

	CHECK(kstat_get_lists(&k) == 0, "kstat");
	for (i = 0; i < k.ncpus; i++) {
		const struct cn_bus_cpu *c = &k.cpu[i];

		if (c->cpu != cpu)
			continue;
		CHECK(c->queued == 0, "offline cpu %u: %u queued", cpu, c->queued);
		CHECK(c->inserted == c->sent + c->dropped,
		      "offline cpu %u: inserted %" PRIu64 " sent %" PRIu64 " dropped %" PRIu64, cpu,
		      c->inserted, c->sent, c->dropped);
		(*checked)++;
	}
out:
	kstat_free(&k);
	return rc;
}

/* Messages queued on @cpu's ring now (0 when it has none). */
static uint64_t cpu_queued(unsigned int cpu)
{
	struct kstat k;
	uint64_t q = 0;
	unsigned int i;

	if (kstat_get_lists(&k))
		return 0;
	for (i = 0; i < k.ncpus; i++)
		if (k.cpu[i].cpu == cpu)
			q = k.cpu[i].queued;
	kstat_free(&k);
	return q;
}

/*
 * cnbus says at pr_debug level, when a CPU's ring is freed, how many
 * messages it still held (sent first). Where the kernel has dynamic debug,
 * turn that line on (@on) or off; returns 0 when it could.
 */
static int dyndbg_ring_freed(int on)
{
	static const char *const ctl[] = { "/proc/dynamic_debug/control",
					   "/sys/kernel/debug/dynamic_debug/control" };
	const char *cmd = on ? "func cnbus_cbus_cpu_dead +p" : "func cnbus_cbus_cpu_dead -p";
	unsigned int i;

	for (i = 0; i < sizeof(ctl) / sizeof(ctl[0]); i++) {
		int fd = open(ctl[i], O_WRONLY | O_CLOEXEC);
		ssize_t n;

		if (fd < 0)
			continue;
		n = write(fd, cmd, strlen(cmd));
		close(fd);
		if (n == (ssize_t)strlen(cmd))
			return 0;
	}
	return -1;
}

/* From the kernel log: rings freed, and the messages they held then. */
static void rings_freed(uint64_t *rings, uint64_t *held)
{
	FILE *f = popen("dmesg", "r");
	char line[512], *p;

	*rings = 0;
	*held = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if ((p = strstr(line, "CBUS ring freed, "))) {
			(*rings)++;
			*held += strtoull(p + strlen("CBUS ring freed, "), NULL, 10);
		}
	pclose(f);
}

int t_cbus_hotplug(void)
{
	unsigned int cycle[HOTPLUG_CPUS], extra[HOTPLUG_EXTRA], ncycle = 0, nextra = 0;
	unsigned int cpu, round, i, from_irq_cpus = 0;
	char cpus[256];
	int64_t lost;
	size_t n;
	struct cnbus_test_stream res = { 0 };
	struct stream_rx rx = { 0 };
	uint64_t ins, sent, dropped, refused, arrived = 0, offline_checks = 0, ops = 0;
	uint64_t queued_before = 0; /* on CPUs just before they were taken down */
	uint64_t freed0 = 0, held0 = 0, freed1 = 0, held1 = 0;
	int dyndbg = 0;
	struct kstat k0, k1;
	const char *e;
	pthread_t th;
	int rc = 0, r, started = 0, streaming = 0;
	double t0;

	if ((e = getenv("CNBUS_HOTPLUG")))
		hotplug_rounds = (unsigned int)strtoul(e, NULL, 0);
	/* CPUs that can go offline (cpu0 usually cannot): online ones to
	 * cycle, offline ones (possible, present) to bring up and down. */
	for (cpu = 0; cpu < (unsigned int)ncpu_ids; cpu++) {
		r = cpu_online(cpu);
		if (r == 1 && ncycle < HOTPLUG_CPUS)
			cycle[ncycle++] = cpu;
		else if (r == 0 && nextra < HOTPLUG_EXTRA)
			extra[nextra++] = cpu;
	}
	/* The highest offline CPU rather than the next one, when there are many. */
	for (cpu = (unsigned int)ncpu_ids; nextra == HOTPLUG_EXTRA && cpu-- > extra[1];)
		if (cpu_online(cpu) == 0) {
			extra[1] = cpu;
			break;
		}
	if (!ncycle) {
		info("no CPU can go offline here");
		return 77;
	}

	rx.nsrc = 2 * (unsigned int)ncpu_ids;
	rx.next = calloc(rx.nsrc, sizeof(*rx.next));
	CHECK(rx.next, "calloc");
	rx.s = open_sock(CN_OPEN_NONBLOCK, 0);
	CHECK(rx.s, "cn_open");
	CHECK(cn_set_rcvbuf(rx.s, 64 << 20) > 0, "rcvbuf");
	CHECK(cn_join(rx.s, CNBUS_TEST_IDX) == 0, "join");
	CHECK(kstat_wait_drained(&k0, 60) == 0, "not drained before");
	CHECK(pthread_create(&th, NULL, stream_rx_thread, &rx) == 0, "pthread_create");
	started = 1;
	dyndbg = dyndbg_ring_freed(1) == 0;
	rings_freed(&freed0, &held0);

	r = stream_request(CNBUS_TEST_STREAM_START, stream_per_round, &res);
	CHECK(r == 0 && res.status == 0, "stream start: %d status %d", r, res.status);
	streaming = 1;
	usleep(200000);
	t0 = now_s();
	for (round = 0; round < hotplug_rounds; round++) {
		for (i = 0; i < ncycle; i++) {
			queued_before += cpu_queued(cycle[i]);
			r = cpu_set_online(cycle[i], 0);
			CHECK(r == 0, "cpu %u offline: %d", cycle[i], r);
			ops++;
			CHECK(check_offline_cpu(cycle[i], &offline_checks) == 0, "cpu %u",
			      cycle[i]);
			usleep(20000);
			r = cpu_set_online(cycle[i], 1);
			CHECK(r == 0, "cpu %u online: %d", cycle[i], r);
			ops++;
		}
		for (i = 0; i < nextra; i++) {
			r = cpu_set_online(extra[i], 1);
			CHECK(r == 0, "cpu %u online: %d", extra[i], r);
			ops++;
			usleep(50000);
			queued_before += cpu_queued(extra[i]);
			r = cpu_set_online(extra[i], 0);
			CHECK(r == 0, "cpu %u offline: %d", extra[i], r);
			ops++;
			CHECK(check_offline_cpu(extra[i], &offline_checks) == 0, "cpu %u",
			      extra[i]);
		}
	}
	usleep(200000);
	r = stream_request(CNBUS_TEST_STREAM_STOP, 0, &res);
	CHECK(r == 0 && res.status == 0, "stream stop: %d status %d", r, res.status);
	streaming = 0;
	CHECK(kstat_wait_drained(&k1, 120) == 0, "not drained after the stream");

	ins = k1.inserted - k0.inserted;
	sent = k1.sent - k0.sent;
	dropped = k1.dropped - k0.dropped;
	refused = k1.refused_cbus - k0.refused_cbus;
	/* Read until everything sent arrived, or nothing came for 2 s. */
	while (rx.got < sent && now_s() - rx.last_rx < 2.0)
		usleep(20000);
	rx.stop = 1;
	pthread_join(th, NULL);
	started = 0;
	for (i = 0; i < rx.nsrc; i++) {
		arrived += rx.next[i];
		if (i % 2 == CNBUS_TEST_STREAM_IRQ && rx.next[i])
			from_irq_cpus++;
	}

	lost = (int64_t)res.inserted - (int64_t)rx.got;
	for (i = 0, n = 0; i < ncycle; i++)
		n += snprintf(cpus + n, sizeof(cpus) - n, " %u", cycle[i]);
	for (i = 0; i < nextra; i++)
		n += snprintf(cpus + n, sizeof(cpus) - n, "%s %u",
			      i ? "" : "; up and down:", extra[i]);
	info("hotplug: %u rounds in %.1f s, %" PRIu64 " CPU offline/online operations; down and"
	     " up:%s; %" PRIu64 " messages were queued on CPUs just before they went down",
	     hotplug_rounds, now_s() - t0, ops, cpus, queued_before);
	info("hotplug: stream %" PRIu64 " rounds: inserted %" PRIu64 " (hard IRQ %" PRIu64
	     ", on %u cpus) refused %" PRIu64 " (ENOBUFS %" PRIu64 "); kernel: inserted %" PRIu64
	     " sent %" PRIu64 " dropped %" PRIu64 " refused %" PRIu64,
	     (uint64_t)res.rounds, (uint64_t)res.inserted, (uint64_t)res.inserted_irq,
	     from_irq_cpus, (uint64_t)res.refused, (uint64_t)res.enobufs, ins, sent, dropped,
	     refused);
	if (dyndbg) {
		rings_freed(&freed1, &held1);
		info("hotplug: cnbus freed %" PRIu64 " rings of CPUs that went down; %" PRIu64
		     " messages were queued there at their death, sent before the free",
		     freed1 - freed0, held1 - held0);
	} else {
		info("hotplug: no dynamic debug: cnbus's line on each freed ring is not shown");
	}
	info("hotplug: received %" PRIu64 " (gaps %" PRIu64 ", repeats %" PRIu64 ", strays %" PRIu64
	     ", overruns %" PRIu64 "); offline CPUs checked %" PRIu64 " times; %" PRId64 " lost",
	     (uint64_t)rx.got, rx.gaps, rx.repeats, rx.strays, (uint64_t)rx.overruns,
	     offline_checks, lost);
	CHECK(offline_checks == ops / 2, "offline CPU checked %" PRIu64 " of %" PRIu64 " times",
	      offline_checks, ops / 2);
	CHECK(res.inserted > 0 && res.inserted_irq > 0 && res.inserted_irq < res.inserted,
	      "both kinds inserted");
	CHECK(ins == res.inserted, "kernel inserted %" PRIu64 ", stream %" PRIu64, ins,
	      (uint64_t)res.inserted);
	CHECK(refused == res.refused, "kernel refused %" PRIu64 ", stream %" PRIu64, refused,
	      (uint64_t)res.refused);
	CHECK(res.enobufs == res.refused, "refusals other than ENOBUFS");
	CHECK(ins == sent + dropped, "inserted %" PRIu64 " != sent + dropped", ins);
	CHECK(dropped == 0, "%" PRIu64 " dropped", dropped);
	CHECK(!rx.overruns, "listener overran");
	CHECK(rx.strays == 0 && rx.repeats == 0, "strays or repeats");
	CHECK(lost == 0 && rx.gaps == 0 && arrived == res.inserted && rx.got == sent,
	      "%" PRId64 " lost: arrived %" PRIu64 " of %" PRIu64, lost, (uint64_t)rx.got,
	      (uint64_t)res.inserted);
out:
	if (dyndbg)
		dyndbg_ring_freed(0);
	if (streaming)
		stream_request(CNBUS_TEST_STREAM_STOP, 0, &res);
	if (started) {
		rx.stop = 1;
		pthread_join(th, NULL);
	}
	/* Leave the CPUs as they were. */
	for (i = 0; i < ncycle; i++)
		if (cpu_online(cycle[i]) == 0)
			cpu_set_online(cycle[i], 1);
	for (i = 0; i < nextra; i++)
		if (cpu_online(extra[i]) == 1)
			cpu_set_online(extra[i], 0);
	cn_close(rx.s);
	free(rx.next);
	return rc;
}
