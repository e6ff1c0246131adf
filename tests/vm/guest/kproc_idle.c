// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kproc_idle.c - guest test that cnbus_proc.ko makes no record while no
 * socket is in its group (kmod/cnbus_proc_main.c): a storm then leaves the
 * producer's records counter where it was, and the same storm with one
 * listener makes it grow by at least a fork and an exit per child.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libcn.h>
#include <libcn/kmod.h>

#include "vmtest.h"

#define IDLE_STORM 100

/* IDLE_STORM children, each forked and reaped; 0, or -1 when one failed. */
static int idle_storm(void)
{
	for (int i = 0; i < IDLE_STORM; i++) {
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		if (p < 0 || waitpid(p, NULL, 0) != p)
			return -1;
	}
	return 0;
}

int t_kproc_idle(void)
{
	struct cn_sock *ask = open_sock(0, 0), *listener = open_sock(0, 1 << 22);
	struct cn_bus_proc_totals t0, t1, t2;
	int r, rc = 0;

	CHECK(ask && listener, "open");
	r = mod_load_beside("cnbus_proc", "");
	CHECK(r == 0 || r == -EEXIST, "load cnbus_proc: %s", strerror(-r));
	r = cn_bus_proc_totals(ask, &t0, 5000);
	CHECK(r == 0, "totals: %s", strerror(-r));
	CHECK(idle_storm() == 0, "fork");
	r = cn_bus_proc_totals(ask, &t1, 5000);
	CHECK(r == 0, "totals: %s", strerror(-r));
	CHECK(t1.records == t0.records && t1.refused == t0.refused,
	      "no listener: records %" PRIu64 " -> %" PRIu64 ", refused %" PRIu64 " -> %" PRIu64,
	      t0.records, t1.records, t0.refused, t1.refused);
	r = cn_bus_proc_listen(listener);
	CHECK(r == 0, "listen: %s", strerror(-r));
	CHECK(idle_storm() == 0, "fork");
	r = cn_bus_proc_totals(ask, &t2, 5000);
	CHECK(r == 0, "totals: %s", strerror(-r));
	CHECK(t2.records >= t1.records + 2 * IDLE_STORM,
	      "one listener: records %" PRIu64 " -> %" PRIu64 " for %d children", t1.records,
	      t2.records, IDLE_STORM);
	info("%d children: 0 records with no listener, %" PRIu64 " with one", IDLE_STORM,
	     t2.records - t1.records);
out:
	mod_unload("cnbus_proc");
	if (ask)
		cn_close(ask);
	if (listener)
		cn_close(listener);
	return rc;
}
