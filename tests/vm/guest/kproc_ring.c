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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libcn.h>
#include <libcn/cnbus_proc.h>
#include <libcn/kmod.h>

#include "kproc_window.h"
#include "vmtest.h"

#define RING_EXECS    40
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

/* Sentinels on every CPU until each one's exit record came (a sentinel
 * whose record the ring refused is lost like any other: one more is sent),
 * reading everything meanwhile and counting it in w (kwin_count). A
 * sentinel waits 200 ms before it exits: the worker empties the one-slot
 * ring of its fork record meanwhile. */
static int ring_bracket(struct cn_sock *s, struct kwin *w, int is_first)
{
	int64_t *mark = is_first ? w->first : w->last;

	for (int t = 0; t < RING_TRIES; t++) {
		pid_t pid[KWIN_CPUS];
		int left = 0;

		for (int c = 0; c < ncpus; c++) {
			pid[c] = mark[c] < 0 ? kwin_sentinel(c, 200) : 0;
			left += mark[c] < 0;
		}
		if (!left)
			return 0;
		for (;;) {
			struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };
			struct cn_bus_proc_event ev;
			int r = cn_bus_proc_recv(s, &ev, CN_RECV_DONTWAIT);

			if (r == -EAGAIN) {
				if (poll(&p, 1, 2000) == 0)
					break; /* try the missing sentinels again */
				continue;
			}
			if (r)
				return r;
			r = kwin_count(w, &ev, pid, ncpus, is_first);
			if (r < 0)
				return r;
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
	static struct kwin w;
	char saved[512], small[512];
	struct cn_bus_proc_totals t0, t1;
	struct kwin_sum sum;
	struct cn_sock *s = NULL;
	int test_loaded = module_loaded("cnbus_test"), rc = 0, r;

	CHECK(ncpus <= KWIN_CPUS, "%d CPUs", ncpus);
	kwin_init(&w);
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
	CHECK(kproc_children(RING_EXECS, "ring-refused") == 0, "fork");
	r = ring_bracket(s, &w, 0);
	CHECK(r == 0, "last sentinels: %s", strerror(-r));
	CHECK(cn_bus_proc_totals(s, &t1, 5000) == 0, "totals after");
	kwin_sum(&w, ncpus, &sum);
	CHECK(sum.silent == 0,
	      "CPU %d first: %" PRIu64 " received + %" PRIu64 " lost != %" PRIu64 " numbered",
	      sum.bad_cpu, sum.received, sum.lost, sum.numbered);
	CHECK(t1.refused - t0.refused >= RING_EXECS, "the module refused %" PRIu64 ", want >= %d",
	      t1.refused - t0.refused, RING_EXECS);
	CHECK(sum.lost >= RING_EXECS, "%" PRIu64 " reported lost, want >= %d", sum.lost,
	      RING_EXECS);
	info("ring of one message: %" PRIu64 " records numbered between the sentinels = %" PRIu64
	     " received + %" PRIu64 " reported lost; CBUS refused %" PRIu64,
	     sum.numbered, sum.received, sum.lost, t1.refused - t0.refused);
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
