// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hotplug.c - CBUS while CPUs go offline and online (guest test
 * cbus_hotplug, run by cnbus_vmtest). cnbus_test's stream inserts on every
 * online CPU, from a work item and from hard IRQ, while the test takes each
 * CPU that can go offline down and up again, round after round, and brings
 * CPUs that were offline when cnbus loaded (the scale boot has them) up and
 * down again. cnbus makes a CPU's ring when the CPU first comes up and,
 * when it dies, sends what is queued there and keeps the ring: a CPU's
 * later starts allocate nothing (checked from cnbus's debug lines).
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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libcn.h>
#include <libcn/cnbus_test.h>

#include "kstat.h"
#include "rx_loop.h"
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

/* A batch the stream's listener read (rx_loop). */
static void stream_rx_took(void *arg, const struct cn_message *msgs, int n)
{
	struct stream_rx *rx = arg;
	char want[48];
	int i;

	for (i = 0; i < n; i++) {
		const struct cn_msg *m = msgs[i].msg;

		if (m->id.idx != CNBUS_TEST_IDX || m->id.val != CNBUS_TEST_STREAM || msgs[i].port)
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
}

static void *stream_rx_thread(void *arg)
{
	struct stream_rx *rx = arg;

	rx_loop(rx->s, &rx->stop, &rx->overruns, &rx->last_rx, stream_rx_took, rx);
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

int cpu_online(unsigned int cpu)
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

int cpu_set_online(unsigned int cpu, int on)
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
 * What an offline CPU must show: everything it queued was sent when it
 * died (inserted = sent + dropped, nothing queued).
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
 * cnbus says at pr_debug level when it makes a CPU's ring (the CPU's first
 * start since load) and, when a CPU died, how many messages its ring still
 * held (sent then; the ring stays). Where the kernel has dynamic debug,
 * turn those lines on (@on) or off; returns 0 when it could.
 */
static int dyndbg_rings(int on)
{
	static const char *const ctl[] = { "/proc/dynamic_debug/control",
					   "/sys/kernel/debug/dynamic_debug/control" };
	static const char *const func[] = { "cnbus_cbus_cpu_prepare", "cnbus_cbus_cpu_dead" };
	unsigned int i, j, done;
	char cmd[96];

	for (i = 0; i < sizeof(ctl) / sizeof(ctl[0]); i++) {
		for (j = 0, done = 0; j < sizeof(func) / sizeof(func[0]); j++) {
			int fd = open(ctl[i], O_WRONLY | O_CLOEXEC);
			int len =
			    snprintf(cmd, sizeof(cmd), "func %s %s", func[j], on ? "+p" : "-p");

			if (fd < 0)
				break;
			done += write(fd, cmd, (size_t)len) == len;
			close(fd);
		}
		if (done == sizeof(func) / sizeof(func[0]))
			return 0;
	}
	return -1;
}

#define RING_LOG_MARK "cnbus_vmtest: cbus_hotplug starts"

/* Put RING_LOG_MARK in the kernel log: ring_log_read() counts from there. */
static void ring_log_mark(void)
{
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, RING_LOG_MARK "\n", strlen(RING_LOG_MARK) + 1) < 0)
		info("hotplug: /dev/kmsg: %s", strerror(errno));
	close(fd);
}

/* What cnbus's ring lines in the kernel log say since the last mark. */
struct ring_log {
	uint64_t made;	  /* rings made */
	uint64_t drained; /* CPUs that died, their rings drained */
	uint64_t held;	  /* messages those rings held at the deaths */
	/* Test builds of cnbus (CNBUS_TESTING) say at each death: */
	uint64_t kicks_said;	 /* deaths that did */
	uint64_t kicks_skipped;	 /* kicks skipped on the CPU while it was dying */
	uint64_t kicks_upcoming; /* kicks queued while it was not online yet */
};

/* Reads the log into *rl and, for each of the @n @cpus, the rings made for it into @made_on. */
static void ring_log_read(struct ring_log *rl, const unsigned int *cpus, unsigned int n,
			  uint64_t *made_on)
{
	FILE *f = popen("dmesg", "r");
	char line[512], *p;
	unsigned int cpu, i;

	memset(rl, 0, sizeof(*rl));
	memset(made_on, 0, n * sizeof(*made_on));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, RING_LOG_MARK)) {
			memset(rl, 0, sizeof(*rl));
			memset(made_on, 0, n * sizeof(*made_on));
		} else if ((p = strstr(line, ": CBUS ring made, "))) {
			while (p > line && p[-1] >= '0' && p[-1] <= '9')
				p--;
			cpu = (unsigned int)strtoul(p, NULL, 10);
			rl->made++;
			for (i = 0; i < n; i++)
				made_on[i] += cpus[i] == cpu;
		} else if ((p = strstr(line, "CBUS ring drained, "))) {
			unsigned long long skipped, upcoming;

			rl->drained++;
			rl->held += strtoull(p + strlen("CBUS ring drained, "), NULL, 10);
			p = strstr(p, "kicks since its last death: ");
			if (p && sscanf(p, "kicks since its last death: %llu skipped dying, %llu",
					&skipped, &upcoming) == 2) {
				rl->kicks_said++;
				rl->kicks_skipped += skipped;
				rl->kicks_upcoming += upcoming;
			}
		}
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
	unsigned int all[HOTPLUG_CPUS + HOTPLUG_EXTRA];
	uint64_t made_on[HOTPLUG_CPUS + HOTPLUG_EXTRA], extra_made = 0;
	struct ring_log rl = { 0 };
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
	dyndbg = dyndbg_rings(1) == 0;
	ring_log_mark();

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
		memcpy(all, cycle, ncycle * sizeof(*all));
		memcpy(all + ncycle, extra, nextra * sizeof(*all));
		ring_log_read(&rl, all, ncycle + nextra, made_on);
		for (i = 0; i < nextra; i++)
			extra_made += made_on[ncycle + i];
		info("hotplug: cnbus drained the rings of %" PRIu64 " CPUs that went down (%" PRIu64
		     " messages queued there at their death, sent then) and kept them; it made "
		     "%" PRIu64 " rings (%" PRIu64 " for the %u CPUs offline at the start)",
		     rl.drained, rl.held, rl.made, extra_made, nextra);
		/*
		 * The two edges of cnbus_insert()'s kick, which the checks
		 * above would not notice were they wrong: say whether this run
		 * met them at all.
		 */
		if (rl.kicks_said)
			info("hotplug: kicks on a dying CPU past the point of no return (skipped):"
			     " %" PRIu64 "%s; kicks on a CPU not online yet (queued): %" PRIu64
			     "%s",
			     rl.kicks_skipped, rl.kicks_skipped ? "" : " (not exercised)",
			     rl.kicks_upcoming, rl.kicks_upcoming ? "" : " (not exercised)");
		else
			info("hotplug: cnbus.ko is not a test build: its kicks at the edges of"
			     " online are not counted");
	} else {
		info("hotplug: no dynamic debug: that a ring is kept at offline and made"
		     " once is not checked");
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
	if (dyndbg) {
		/* Each death drains a ring; no CPU gets a second one. */
		CHECK(rl.drained == ops / 2, "%" PRIu64 " rings drained for %" PRIu64 " offlines",
		      rl.drained, ops / 2);
		for (i = 0; i < ncycle; i++)
			CHECK(!made_on[i], "cpu %u, online at the start, got %" PRIu64 " new rings",
			      cycle[i], made_on[i]);
		for (i = 0; i < nextra; i++)
			CHECK(made_on[ncycle + i] <= 1, "cpu %u got %" PRIu64 " rings", extra[i],
			      made_on[ncycle + i]);
		CHECK(rl.made == extra_made, "%" PRIu64 " rings made for other CPUs",
		      rl.made - extra_made);
	}
	CHECK(lost == 0 && rx.gaps == 0 && arrived == res.inserted && rx.got == sent,
	      "%" PRId64 " lost: arrived %" PRIu64 " of %" PRIu64, lost, (uint64_t)rx.got,
	      (uint64_t)res.inserted);
out:
	if (dyndbg)
		dyndbg_rings(0);
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
