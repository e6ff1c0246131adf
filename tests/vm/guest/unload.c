// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * unload.c - unloading under traffic: cnbus_test while echo requests and a
 * burst run, then cnbus itself, which must drain every queue first.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
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
#include "vmtest.h"

/* Unload cnbus_test while echo requests and a burst are running. */
int t_unload_in_flight(void)
{
	int ready[2], rc = 0, r, status, i;
	pid_t kids[2];
	struct kstat k;
	char c;

	CHECK(pipe(ready) == 0, "pipe");
	for (i = 0; i < 2; i++) {
		kids[i] = fork();
		CHECK(kids[i] >= 0, "fork");
		if (kids[i])
			continue;
		close(ready[0]);
		struct cn_sock *s = open_sock(0, 0);
		unsigned char buf[CN_MSG_SIZE(sizeof(struct cnbus_test_burst))];
		struct cn_message rep;
		struct cn_msg *m;

		if (!s)
			_exit(1);
		if (i == 0) {
			unsigned int fails = 0, n;

			for (n = 0; n < 100000 && fails < 3; n++) {
				m = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_IDX, CNBUS_TEST_ECHO_A,
						"x", 2);
				if (cn_request(s, m, 0, CN_MATCH_STRICT, 300, &rep))
					fails++;
				if (n == 10 && write(ready[1], "e", 1) != 1)
					_exit(2);
			}
			_exit(n > 10 ? 0 : 3);
		} else {
			struct cnbus_test_burst req = { .count = 20000 };

			if (write(ready[1], "b", 1) != 1)
				_exit(2);
			m = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_IDX, CNBUS_TEST_BURST, &req,
					sizeof(req));
			cn_send(s, m, 0); /* runs the burst in this process */
			_exit(0);
		}
	}
	close(ready[1]);
	for (i = 0; i < 2; i++)
		CHECK(read(ready[0], &c, 1) == 1, "child not ready");
	close(ready[0]);
	r = mod_unload("cnbus_test");
	CHECK(r == 0, "unload while in flight: %d", r);
	for (i = 0; i < 2; i++) {
		CHECK(waitpid(kids[i], &status, 0) == kids[i], "waitpid");
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d status %#x", i,
		      status);
	}
	CHECK(kstat_wait_drained(&k, 120) == 0, "queues not drained");
	CHECK(k.ncbs == 0, "%u callbacks left", k.ncbs);
	info("after unload: inserted %" PRIu64 " sent %" PRIu64 " dropped %" PRIu64
	     " refused(shutdown) %" PRIu64,
	     k.inserted, k.sent, k.dropped, k.refused[CNBUS_REFUSED_A_CBUS_SHUTDOWN]);
out:
	return rc;
}

static int read_refcnt(const char *name)
{
	char path[128], buf[32];
	FILE *f;
	int n = -1;

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		n = atoi(buf);
	fclose(f);
	return n;
}

/*
 * Last test: a burst fills the CBUS queues (a subscriber slows delivery),
 * cnbus_test is unloaded while it runs, then cnbus itself is unloaded at
 * once: its exit must refuse new inserts and drain every queue (dmesg shows
 * how many were still queued). Afterwards cnbus is gone.
 */
int t_unload_cnbus_in_flight(void)
{
	int ready[2], rc = 0, r, status, refcnt;
	struct kstat k;
	pid_t kid;
	char c;

	r = reload_test_module("period_ms=1");
	CHECK(r == 0, "load cnbus_test: %d", r);
	CHECK(pipe(ready) == 0, "pipe");
	kid = fork();
	CHECK(kid >= 0, "fork");
	if (!kid) {
		struct cn_sock *s = open_sock(0, 0), *l = open_sock(CN_OPEN_NONBLOCK, 0);
		unsigned char buf[CN_MSG_SIZE(sizeof(struct cnbus_test_burst))];
		struct cnbus_test_burst req = { .count = 20000 };
		struct cn_msg *m;

		close(ready[0]);
		if (!s || !l || cn_set_rcvbuf(l, 64 << 20) < 0 || cn_join(l, CNBUS_TEST_IDX))
			_exit(1);
		if (write(ready[1], "b", 1) != 1)
			_exit(2);
		m = cn_msg_init(buf, sizeof(buf), CNBUS_TEST_IDX, CNBUS_TEST_BURST, &req,
				sizeof(req));
		cn_send(s, m, 0); /* the burst runs in this process */
		_exit(0);	  /* closes both sockets */
	}
	close(ready[1]);
	CHECK(read(ready[0], &c, 1) == 1, "child not ready");
	close(ready[0]);
	r = mod_unload("cnbus_test");
	CHECK(r == 0, "unload cnbus_test: %d", r);
	CHECK(waitpid(kid, &status, 0) == kid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	CHECK(kstat_get(&k) == 0, "kstat");
	refcnt = read_refcnt("cnbus");
	info("before unloading cnbus: %" PRIu64 " queued, refcnt %d", k.queued, refcnt);
	CHECK(refcnt == 0, "cnbus refcnt %d", refcnt);
	/* The harness may add a static cnctl: show what it reports now. */
	if (access("/bin/cnctl", X_OK) == 0) {
		printf("# cnctl kmod:\n");
		fflush(stdout);
		r = system("/bin/cnctl kmod >/tmp/cnctl.out 2>&1");
		if (system("sed 's/^/#   /' /tmp/cnctl.out"))
			info("cannot show cnctl output");
		CHECK(r == 0, "cnctl kmod status %#x", r);
	}
	r = mod_unload("cnbus");
	CHECK(r == 0, "unload cnbus: %d", r);
	CHECK(!module_loaded("cnbus"), "cnbus still loaded");
out:
	return rc;
}
