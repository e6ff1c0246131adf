// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kproc_ring.c - guest test of the loss cnbus_proc.ko's records meet inside
 * CBUS: cnbus.ko reloaded with a ring of one small message and no overflow
 * budget (cbus_qlen=1 cbus_budget=0), so every exec record (its filename
 * and argv make it larger than 128 bytes) is refused by cnbus_insert().
 * The producer numbers a record before it inserts it, so a refused record
 * is a gap in its CPU's numbers: libcn reports it as lost_before of the
 * next record received from that CPU, the loss cnctl's summary counts too.
 * cnbus.ko is loaded again afterwards with the parameters it had.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libcn.h>
#include <libcn/cnbus_proc.h>
#include <libcn/kmod.h>

#include "vmtest.h"

#define RING_CPUS     64
#define RING_EXECS    40
#define RING_SELF     "/bin/cnbus_vmtest"
#define RING_TRIES    20
#define RING_PARAMS_N 6

/* cnbus.ko's parameters as loaded, to load it again with them. */
static const char *const ring_param[RING_PARAMS_N] = { "unit",	      "groups",
						       "max_notify",  "cbus_qlen",
						       "cbus_budget", "cbus_worker_delay_us" };

static void params_now(char *out, size_t size, int small)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < RING_PARAMS_N; i++) {
		char path[128], v[32] = "";
		FILE *f;

		if (small &&
		    (!strcmp(ring_param[i], "cbus_qlen") || !strcmp(ring_param[i], "cbus_budget")))
			continue;
		snprintf(path, sizeof(path), "/sys/module/cnbus/parameters/%s", ring_param[i]);
		f = fopen(path, "r");
		if (!f)
			continue; /* cbus_worker_delay_us: test builds only */
		if (fgets(v, sizeof(v), f))
			v[strcspn(v, "\n")] = '\0';
		fclose(f);
		n += (size_t)snprintf(out + n, size - n, "%s%s=%s", n ? " " : "", ring_param[i], v);
		if (n >= size)
			break;
	}
	if (small)
		snprintf(out + n, size > n ? size - n : 0, "%scbus_qlen=1 cbus_budget=0",
			 n ? " " : "");
}

/* A child pinned to cpu that waits 200 ms (the worker empties the
 * one-slot ring of its fork record meanwhile) and exits: its exit record
 * is numbered on that CPU. Reaped; its pid. */
static pid_t ring_sentinel(int cpu)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(1);
		nanosleep(&ts, NULL);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return pid;
}

struct ring_win {
	int64_t first[RING_CPUS], last[RING_CPUS]; /* the sentinels' seqs, -1: none */
	uint64_t received[RING_CPUS], lost[RING_CPUS];
};

/* Sentinels on every CPU until each one's exit record came (a sentinel
 * whose record the ring refused is lost like any other: one more is sent),
 * reading everything meanwhile: the records from a CPU between its first
 * and last sentinel are counted with the loss reported before them. */
static int ring_bracket(struct cn_sock *s, struct ring_win *w, int is_first)
{
	int64_t *mark = is_first ? w->first : w->last;

	for (int t = 0; t < RING_TRIES; t++) {
		pid_t pid[RING_CPUS];
		int left = 0;

		for (int c = 0; c < ncpus; c++) {
			pid[c] = mark[c] < 0 ? ring_sentinel(c) : 0;
			left += mark[c] < 0;
		}
		if (!left)
			return 0;
		for (;;) {
			struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };
			struct cn_bus_proc_event ev;
			int r = cn_bus_proc_recv(s, &ev, CN_RECV_DONTWAIT);
			unsigned int c;

			if (r == -EAGAIN) {
				if (poll(&p, 1, 2000) == 0)
					break; /* try the missing sentinels again */
				continue;
			}
			if (r)
				return r;
			c = ev.cpu;
			if (c >= RING_CPUS)
				return -ERANGE;
			if (w->first[c] >= 0 && w->last[c] < 0) {
				w->received[c]++;
				w->lost[c] += ev.lost_before;
			}
			if (ev.what == CN_PROC_EXIT && (int)c < ncpus && mark[c] < 0 &&
			    ev.pid == pid[c]) {
				mark[c] = ev.seq;
				if (is_first)
					w->received[c] = 1, w->lost[c] = 0;
			}
		}
	}
	return -ETIMEDOUT;
}

/*
 * kproc_ring_refused: cnbus.ko reloaded with a one-message ring and no
 * budget; RING_EXECS children exec cnbus_vmtest and exit between a
 * sentinel's exit on every CPU before and after. Every exec record is
 * refused by CBUS (the module's refused count grows by at least
 * RING_EXECS), and on each CPU received + lost_before = the records
 * numbered between the sentinels, exactly; the loss is not 0.
 */
int t_kproc_ring_refused(void)
{
	static struct ring_win w;
	char saved[512], small[512];
	struct cn_bus_proc_totals t0, t1;
	struct cn_sock *s = NULL;
	uint64_t made = 0, got = 0, lost = 0;
	int test_loaded = module_loaded("cnbus_test"), rc = 0, r;

	CHECK(ncpus <= RING_CPUS, "%d CPUs", ncpus);
	for (int c = 0; c < RING_CPUS; c++)
		w.first[c] = w.last[c] = -1, w.received[c] = w.lost[c] = 0;
	params_now(saved, sizeof(saved), 0);
	params_now(small, sizeof(small), 1);
	if (module_loaded("cnbus_proc"))
		CHECK(mod_unload("cnbus_proc") == 0, "unload cnbus_proc");
	if (test_loaded)
		CHECK(mod_unload("cnbus_test") == 0, "unload cnbus_test");
	CHECK(mod_unload("cnbus") == 0, "unload cnbus");
	r = mod_load_beside("cnbus", small);
	CHECK(r == 0, "load cnbus.ko %s: %s", small, strerror(-r));
	r = mod_load_beside("cnbus_proc", "");
	CHECK(r == 0, "load cnbus_proc.ko: %s", strerror(-r));
	s = open_sock(0, 8 << 20);
	CHECK(s && cn_bus_proc_listen(s) == 0, "open and listen: %s", strerror(errno));
	r = ring_bracket(s, &w, 1);
	CHECK(r == 0, "first sentinels: %s", strerror(-r));
	CHECK(cn_bus_proc_totals(s, &t0, 5000) == 0, "totals before");
	for (int i = 0; i < RING_EXECS; i++) {
		pid_t p = fork();

		if (p == 0) {
			char *argv[] = { RING_SELF, KPROC_CHILD, "ring-refused", NULL };
			char *envp[] = { KPROC_CHILD_ENV "=1", NULL };

			execve(RING_SELF, argv, envp);
			_exit(KPROC_EXEC_FAILED);
		}
		CHECK(p > 0, "fork");
		waitpid(p, NULL, 0);
	}
	r = ring_bracket(s, &w, 0);
	CHECK(r == 0, "last sentinels: %s", strerror(-r));
	CHECK(cn_bus_proc_totals(s, &t1, 5000) == 0, "totals after");
	for (int c = 0; c < ncpus; c++) {
		uint64_t window = (uint64_t)(w.last[c] - w.first[c] + 1);

		CHECK(w.received[c] + w.lost[c] == window,
		      "CPU %d: %" PRIu64 " received + %" PRIu64 " lost != %" PRIu64 " numbered", c,
		      w.received[c], w.lost[c], window);
		made += window;
		got += w.received[c];
		lost += w.lost[c];
	}
	CHECK(t1.refused - t0.refused >= RING_EXECS, "the module refused %" PRIu64 ", want >= %d",
	      t1.refused - t0.refused, RING_EXECS);
	CHECK(lost >= RING_EXECS, "%" PRIu64 " reported lost, want >= %d", lost, RING_EXECS);
	info("ring of one message: %" PRIu64 " records numbered between the sentinels = %" PRIu64
	     " received + %" PRIu64 " reported lost; CBUS refused %" PRIu64,
	     made, got, lost, t1.refused - t0.refused);
out:
	cn_close(s);
	if (module_loaded("cnbus_proc") && mod_unload("cnbus_proc"))
		rc = 1;
	if (module_loaded("cnbus") && mod_unload("cnbus"))
		rc = 1;
	r = mod_load_beside("cnbus", saved);
	if (r) {
		printf("#   FAILED: cannot load cnbus.ko %s again: %d\n", saved, r);
		return 1;
	}
	if (test_loaded && reload_test_module("period_ms=0"))
		rc = 1;
	return rc;
}
