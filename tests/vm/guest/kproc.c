// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kproc.c - guest tests of cnbus_proc.ko, the process-event producer:
 * fork, exec (with argv) and exit records through CBUS on kmod's unit,
 * read through libcn.
 *
 * The programs the tests exec are cnbus_vmtest itself with argv[1]
 * KPROC_CHILD: it exits at once with KPROC_CHILD_EXIT (cnbus_vmtest.c's
 * main), so each lives for a few microseconds after its exec and is gone
 * long before anyone could read /proc/PID/cmdline.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <libcn.h>
#include <libcn/cnbus_proc.h>
#include <libcn/kmod.h>

#include "kproc_window.h"
#include "kstat.h"
#include "vmtest.h"

#define KPROC_STORM	 200 /* children in the storm: fork, exec, exit each */
#define KPROC_RCVBUF	 (8 << 20)
#define KPROC_TIMEOUT_MS 60000

/* Loss seen by a listener: lost_before of the records received. */
struct kseq {
	uint64_t lost, records;
};

/* A socket on kmod's unit listening to the records (libcn), or NULL. */
static struct cn_sock *kproc_open(void)
{
	struct cn_sock *s = open_sock(0, KPROC_RCVBUF);

	if (s && cn_bus_proc_listen(s)) {
		cn_close(s);
		return NULL;
	}
	return s;
}

/* The next record through libcn, its loss counted in @k; 0, -ETIMEDOUT or
 * the receive call's error. */
static int kev_next(struct cn_sock *s, struct kseq *k, int timeout_ms, struct cn_bus_proc_event *ev)
{
	double end = now_s() + timeout_ms / 1000.0;
	struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };
	int r, left;

	for (;;) {
		r = cn_bus_proc_recv(s, ev, CN_RECV_DONTWAIT);
		if (r == 0) {
			k->records++;
			k->lost += ev->lost_before;
			return 0;
		}
		if (r != -EAGAIN)
			return r;
		left = (int)((end - now_s()) * 1000);
		if (left <= 0 || poll(&p, 1, left) == 0)
			return -ETIMEDOUT;
	}
}

pid_t kproc_spawn(const char *path, char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		char *envp[] = { KPROC_CHILD_ENV "=1", NULL };

		execve(path, argv, envp);
		_exit(KPROC_EXEC_FAILED);
	}
	return pid;
}

int kproc_children(int n, const char *tag)
{
	char *argv[] = { KPROC_SELF, KPROC_CHILD, (char *)tag, NULL };

	for (int i = 0; i < n; i++) {
		pid_t p = kproc_spawn(KPROC_SELF, argv);

		if (p <= 0)
			return -1;
		waitpid(p, NULL, 0);
	}
	return 0;
}

/* What a child of the storm is told: its index in argv[2], bytes that are
 * not UTF-8 and a space in argv[3]. */
static size_t storm_argv(int i, char *buf, size_t len, char *argv[5], char *num)
{
	size_t n;

	snprintf(num, 16, "%d", i);
	argv[0] = KPROC_SELF;
	argv[1] = KPROC_CHILD;
	argv[2] = num;
	argv[3] = "a b\xff\xfe\x80";
	argv[4] = NULL;
	n = 0;
	for (int a = 0; argv[a]; a++) {
		size_t l = strlen(argv[a]) + 1;

		if (n + l > len)
			break;
		memcpy(buf + n, argv[a], l);
		n += l;
	}
	return n;
}

struct storm_child {
	pid_t pid;
	int fork_seen, exec_seen, exit_seen;
	uint64_t ts[3]; /* of the fork, exec and exit records */
};

static struct storm_child *find_child(struct storm_child *c, int n, pid_t pid)
{
	for (int i = 0; i < n; i++)
		if (c[i].pid == pid)
			return &c[i];
	return NULL;
}

/*
 * kproc_storm: KPROC_STORM children, each forked, exec'd and gone at
 * once; every one has its fork, its exec named with the exact argv (bytes
 * that are not UTF-8 included) and filename, and its exit with its status,
 * and no CPU's sequence has a gap. The producer's totals (the stats id)
 * say records = inserted, nothing refused.
 */
int t_kproc_storm(void)
{
	static struct storm_child kids[KPROC_STORM];
	struct cn_bus_proc_totals t;
	struct cn_sock *s = NULL;
	struct kseq k;
	int rc = 0, r, left, named = 0;

	r = mod_load_beside("cnbus_proc", "");
	CHECK(r == 0 || r == -EEXIST, "load cnbus_proc.ko: %s", strerror(-r));
	s = kproc_open();
	CHECK(s, "open and join group %u: %s", CNBUS_PROC_IDX, strerror(errno));
	memset(&k, 0, sizeof(k));
	for (int i = 0; i < KPROC_STORM; i++) {
		char *argv[5], num[16], want[256];

		storm_argv(i, want, sizeof(want), argv, num);
		kids[i].pid = kproc_spawn(KPROC_SELF, argv);
		CHECK(kids[i].pid > 0, "fork: %s", strerror(errno));
		kids[i].fork_seen = kids[i].exec_seen = kids[i].exit_seen = 0;
		memset(kids[i].ts, 0, sizeof(kids[i].ts));
	}
	for (int i = 0; i < KPROC_STORM; i++) {
		int status;

		CHECK(waitpid(kids[i].pid, &status, 0) == kids[i].pid, "waitpid");
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == KPROC_CHILD_EXIT,
		      "child %d status %#x", i, status);
	}
	left = 3 * KPROC_STORM;
	while (left > 0) {
		struct storm_child *c;
		struct cn_bus_proc_event x;

		r = kev_next(s, &k, KPROC_TIMEOUT_MS, &x);
		CHECK(r == 0, "record: %s (%d of %d records of the storm missing)", strerror(-r),
		      left, 3 * KPROC_STORM);
		c = find_child(kids, KPROC_STORM, x.pid);
		if (!c)
			continue;
		CHECK(x.pid == x.tgid, "pid %d tgid %d", x.pid, x.tgid);
		CHECK(x.ruid == 0 && x.euid == 0 && x.rgid == 0 && x.egid == 0, "ids %u %u %u %u",
		      x.ruid, x.euid, x.rgid, x.egid);
		if (x.what == CN_PROC_FORK) {
			CHECK(!c->fork_seen++, "two forks of %d", c->pid);
			c->ts[0] = x.timestamp_ns;
			CHECK(x.parent_tgid == getpid(), "fork parent %d", x.parent_tgid);
		} else if (x.what == CN_PROC_EXEC) {
			char *argv[5], num[16], want[256];
			size_t n = storm_argv((int)(c - kids), want, sizeof(want), argv, num);

			CHECK(!c->exec_seen++, "two execs of %d", c->pid);
			c->ts[1] = x.timestamp_ns;
			CHECK(x.filename_len == strlen(KPROC_SELF) &&
				  !memcmp(x.filename, KPROC_SELF, x.filename_len),
			      "filename \"%.*s\"", (int)x.filename_len, x.filename);
			CHECK(x.argv_len == n && x.argv_total == n && !memcmp(x.argv, want, n) &&
				  x.flags == 0,
			      "argv of %d: %zu bytes of %zu, flags %#x", c->pid, x.argv_len,
			      x.argv_total, x.flags);
			named++;
		} else if (x.what == CN_PROC_EXIT) {
			CHECK(!c->exit_seen++, "two exits of %d", c->pid);
			c->ts[2] = x.timestamp_ns;
			CHECK(x.exit_code == (KPROC_CHILD_EXIT << 8) && x.exit_signal == 17,
			      "exit of %d: code %#x signal %d", c->pid, x.exit_code, x.exit_signal);
			CHECK(x.parent_tgid == getpid(), "exit parent %d", x.parent_tgid);
		} else {
			CHECK(0, "record type %#x", x.what);
		}
		left--;
	}
	CHECK(k.lost == 0, "%" PRIu64 " records lost (per-CPU gaps)", k.lost);
	/* Order holds per CPU only (a child may run elsewhere than its
	 * parent): across CPUs the timestamps, one clock, tell it. */
	for (int i = 0; i < KPROC_STORM; i++)
		CHECK(kids[i].ts[0] <= kids[i].ts[1] && kids[i].ts[1] <= kids[i].ts[2],
		      "child %d: fork at %" PRIu64 ", exec at %" PRIu64 ", exit at %" PRIu64, i,
		      kids[i].ts[0], kids[i].ts[1], kids[i].ts[2]);
	r = cn_bus_proc_totals(s, &t, 5000);
	CHECK(r == 0, "cn_bus_proc_totals: %s", strerror(-r));
	CHECK(t.refused == 0 && t.inserted == t.records && t.records >= k.records,
	      "module: %" PRIu64 " records, %" PRIu64 " inserted, %" PRIu64 " refused", t.records,
	      t.inserted, t.refused);
	info("%d execs of %d named with their argv; %" PRIu64 " records read, 0 lost;"
	     " the module made %" PRIu64 ", refused 0",
	     named, KPROC_STORM, k.records, t.records);
out:
	cn_close(s);
	mod_unload("cnbus_proc");
	return rc;
}

/*
 * kproc_unprivileged_join: as nobody (uid 65534, no capability), joining
 * the records' group is refused with EPERM, through setsockopt
 * (NETLINK_ADD_MEMBERSHIP, what cn_join does) and through bind() with its
 * bit in nl_groups; joining another group of the unit works.
 */
int t_kproc_unprivileged_join(void)
{
	int rc = 0, status;
	pid_t pid;

	pid = fork_as_nobody();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct sockaddr_nl a = { .nl_family = AF_NETLINK };
		struct cn_sock *s;
		int fd, r;

		s = open_sock(0, 0);
		if (!s)
			_exit(11);
		r = cn_join(s, CNBUS_PROC_IDX);
		if (r != -EPERM)
			_exit(12);
		if (cn_join(s, CNBUS_PROC_IDX + 1))
			_exit(13);
		cn_close(s);
		fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, unit);
		if (fd < 0)
			_exit(14);
		a.nl_groups = 1u << (CNBUS_PROC_IDX - 1);
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 || errno != EPERM)
			_exit(15);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child as nobody: exit %d (12: cn_join not refused with EPERM, 15: bind not refused)",
	      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
out:
	return rc;
}

/* Collects the records of up to 4 children until each has exited. */
struct edge_child {
	pid_t pid;
	int fork_seen, exec_seen, exit_seen;
	uint32_t exit_code, flags;
	size_t argv_len, argv_total;
	char argv[64]; /* the first bytes of its argv */
};

static int collect(struct cn_sock *s, struct kseq *k, struct edge_child *c, int n)
{
	int exited = 0, r;

	while (exited < n) {
		struct cn_bus_proc_event x;
		struct edge_child *e = NULL;

		r = kev_next(s, k, KPROC_TIMEOUT_MS, &x);
		if (r)
			return r;
		for (int i = 0; i < n; i++)
			if (c[i].pid == x.pid)
				e = &c[i];
		if (!e)
			continue;
		if (x.what == CN_PROC_FORK)
			e->fork_seen++;
		if (x.what == CN_PROC_EXIT) {
			e->exit_seen++;
			e->exit_code = x.exit_code;
			exited++;
		}
		if (x.what == CN_PROC_EXEC) {
			e->exec_seen++;
			e->flags = x.flags;
			e->argv_len = x.argv_len;
			e->argv_total = x.argv_total;
			memcpy(e->argv, x.argv,
			       x.argv_len < sizeof(e->argv) ? x.argv_len : sizeof(e->argv));
		}
	}
	return 0;
}

/*
 * kproc_argv_edges: an exec with an empty argv (the kernel gives it one
 * empty argument: 1 byte, a NUL), one with a 100 KiB argument (cut at the
 * default argv_max, flagged, its whole length given), and an exec that
 * fails (a fork and an exit, no exec record). Bytes that are not UTF-8
 * are in kproc_storm's argv.
 */
int t_kproc_argv_edges(void)
{
	static char big[100 * 1024 + 1];
	struct edge_child c[3];
	struct cn_sock *s = NULL;
	struct kseq k = { 0 };
	char *empty[] = { NULL };
	char *longv[] = { KPROC_SELF, big, NULL };
	char *failv[] = { "/nonexistent/kproc", "x", NULL };
	size_t long_total = sizeof(KPROC_SELF) + sizeof(big);
	int rc = 0, r, status;

	memset(big, 'y', sizeof(big) - 1);
	memset(c, 0, sizeof(c));
	r = mod_load_beside("cnbus_proc", "");
	CHECK(r == 0 || r == -EEXIST, "load cnbus_proc.ko: %s", strerror(-r));
	s = kproc_open();
	CHECK(s, "open and listen: %s", strerror(errno));
	c[0].pid = kproc_spawn(KPROC_SELF, empty);
	c[1].pid = kproc_spawn(KPROC_SELF, longv);
	c[2].pid = kproc_spawn(failv[0], failv);
	for (int i = 0; i < 3; i++) {
		CHECK(c[i].pid > 0 && waitpid(c[i].pid, &status, 0) == c[i].pid, "child %d", i);
		CHECK(WIFEXITED(status) &&
			  WEXITSTATUS(status) == (i == 2 ? KPROC_EXEC_FAILED : KPROC_CHILD_EXIT),
		      "child %d status %#x", i, status);
	}
	r = collect(s, &k, c, 3);
	CHECK(r == 0, "records: %s", strerror(-r));
	CHECK(k.lost == 0, "%" PRIu64 " lost", k.lost);
	CHECK(c[0].fork_seen == 1 && c[0].exec_seen == 1 && c[0].argv_len == 1 &&
		  c[0].argv_total == 1 && c[0].argv[0] == 0 && c[0].flags == 0,
	      "empty argv: exec %d, %zu bytes of %zu, flags %#x", c[0].exec_seen, c[0].argv_len,
	      c[0].argv_total, c[0].flags);
	CHECK(c[1].exec_seen == 1 && c[1].argv_len == CNBUS_PROC_ARGV_DEFAULT &&
		  c[1].argv_total == long_total && c[1].flags == CN_BUS_PROC_ARGV_CUT &&
		  !memcmp(c[1].argv, KPROC_SELF, sizeof(KPROC_SELF)) &&
		  c[1].argv[sizeof(KPROC_SELF)] == 'y',
	      "100 KiB argv: %zu bytes of %zu (%zu), flags %#x", c[1].argv_len, c[1].argv_total,
	      long_total, c[1].flags);
	CHECK(c[2].fork_seen == 1 && c[2].exec_seen == 0 &&
		  c[2].exit_code == (KPROC_EXEC_FAILED << 8),
	      "failed exec: fork %d exec %d exit code %#x", c[2].fork_seen, c[2].exec_seen,
	      c[2].exit_code);
	info("empty argv: 1 byte; 100 KiB argv: %zu of %zu bytes, cut flagged; failed exec: no"
	     " exec record",
	     c[1].argv_len, c[1].argv_total);
out:
	cn_close(s);
	mod_unload("cnbus_proc");
	return rc;
}

/* Fork children that exec and exit at once, until killed. */
static pid_t stormer(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		char *argv[] = { KPROC_SELF, KPROC_CHILD, "storm", NULL };

		for (;;) {
			pid_t c = kproc_spawn(KPROC_SELF, argv);

			if (c > 0)
				waitpid(c, NULL, 0);
		}
	}
	return pid;
}

/* Two stormers into st[]; 0, or -1 when a fork failed (st[] holds what
 * started, for storm_stop). */
static int storm_start(pid_t st[2])
{
	for (int i = 0; i < 2; i++) {
		st[i] = stormer();
		if (st[i] <= 0)
			return -1;
	}
	return 0;
}

/* Kill and reap the stormers in st[] (-1: none). */
static void storm_stop(pid_t st[2])
{
	for (int i = 0; i < 2; i++)
		if (st[i] > 0) {
			kill(st[i], SIGKILL);
			waitpid(st[i], NULL, 0);
			st[i] = -1;
		}
}

/*
 * kproc_unload_storm: cnbus_proc.ko unloaded while two processes fork and
 * exec as fast as they can, three times: the unload returns, records stop
 * once CBUS has drained (nothing arrives for a second while the storm
 * goes on: no probe ran after the unload), and a load in the middle of the
 * storm works again. The kernel log (KASAN, lockdep, kmemleak on the debug
 * kernel) is judged by the host.
 */
int t_kproc_unload_storm(void)
{
	struct cn_sock *s = NULL;
	struct kseq k = { 0 };
	pid_t st[2] = { -1, -1 };
	struct kstat ks;
	int rc = 0, r;

	s = kproc_open();
	CHECK(s, "open and listen: %s", strerror(errno));
	CHECK(storm_start(st) == 0, "fork");
	for (int round = 0; round < 3; round++) {
		struct cn_bus_proc_event ev;
		uint64_t before;

		r = mod_load_beside("cnbus_proc", "");
		CHECK(r == 0, "load cnbus_proc.ko (round %d): %s", round, strerror(-r));
		before = k.records;
		while (k.records < before + 200) {
			r = kev_next(s, &k, KPROC_TIMEOUT_MS, &ev);
			CHECK(r == 0 || r == -ENOBUFS, "records in the storm: %s", strerror(-r));
		}
		r = mod_unload("cnbus_proc");
		CHECK(r == 0, "unload in the storm (round %d): %s", round, strerror(-r));
		CHECK(!module_loaded("cnbus_proc"), "still loaded");
		CHECK(kstat_wait_drained(&ks, 30) == 0, "CBUS not drained");
		while ((r = kev_next(s, &k, 0, &ev)) == 0 || r == -ENOBUFS)
			;
		r = kev_next(s, &k, 1000, &ev);
		CHECK(r == -ETIMEDOUT, "a record after the unload: %d (pid %d)", r, ev.pid);
	}
	info("3 unloads in a storm; %" PRIu64 " records read, none after an unload", k.records);
out:
	storm_stop(st);
	cn_close(s);
	if (module_loaded("cnbus_proc"))
		mod_unload("cnbus_proc");
	return rc;
}

/* Read (through libcn) until the sentinel of every online CPU has come
 * (pid NULL: until nothing comes for 200 ms), counting the records in w
 * (kwin_count; first: the sentinels open the windows). */
static int ovr_read(struct cn_sock *s, struct kseq *k, struct kwin *w, const pid_t *pid, int first)
{
	int left = pid ? ncpus : 1, r;

	while (left > 0) {
		struct cn_bus_proc_event ev;

		r = kev_next(s, k, pid ? KPROC_TIMEOUT_MS : 200, &ev);
		if (r == -ENOBUFS)
			continue;
		if (!pid && r == -ETIMEDOUT)
			return 0;
		if (r)
			return r;
		r = kwin_count(w, &ev, pid, ncpus, first);
		if (r < 0)
			return r;
		left -= r;
	}
	return 0;
}

/*
 * kproc_overrun_exact: a storm of 300 processes read through a receive
 * buffer too small for it, so the socket overruns. Between a pinned
 * child's exit on every CPU before the storm and another after it, each
 * CPU's records received plus the loss libcn reported before them equal
 * the records the module numbered there, exactly; and the loss is not 0
 * (the check can fail).
 */
int t_kproc_overrun_exact(void)
{
	static struct kwin w;
	struct kwin_sum sum;
	struct cn_proc_stats ps;
	struct cn_sock *s = NULL;
	struct kseq k = { 0 };
	pid_t pid[KWIN_CPUS];
	int rc = 0, r;

	CHECK(ncpus <= KWIN_CPUS, "%d CPUs", ncpus);
	kwin_init(&w);
	r = mod_load_beside("cnbus_proc", "");
	CHECK(r == 0 || r == -EEXIST, "load cnbus_proc.ko: %s", strerror(-r));
	s = kproc_open();
	CHECK(s, "open and listen: %s", strerror(errno));
	for (int c = 0; c < ncpus; c++)
		pid[c] = kwin_sentinel(c, 0);
	CHECK(ovr_read(s, &k, &w, pid, 1) == 0, "first sentinels");
	CHECK(cn_set_rcvbuf(s, 4096) >= 0, "small rcvbuf");
	CHECK(kproc_children(300, "overrun") == 0, "fork");
	CHECK(cn_set_rcvbuf(s, KPROC_RCVBUF) >= 0, "rcvbuf");
	/* An overrun socket takes nothing more until it has been read
	 * empty (netlink's congestion flag): drain it before the sentinels. */
	r = ovr_read(s, &k, &w, NULL, 0);
	CHECK(r == 0, "after the storm: %s", strerror(-r));
	for (int c = 0; c < ncpus; c++)
		pid[c] = kwin_sentinel(c, 0);
	r = ovr_read(s, &k, &w, pid, 0);
	CHECK(r == 0, "last sentinels: %s", strerror(-r));
	kwin_sum(&w, ncpus, &sum);
	CHECK(sum.silent == 0,
	      "CPU %d first: %" PRIu64 " received + %" PRIu64 " lost != %" PRIu64 " numbered",
	      sum.bad_cpu, sum.received, sum.lost, sum.numbered);
	CHECK(cn_proc_stats(s, &ps) == 0 && ps.overruns > 0, "no overrun");
	CHECK(sum.lost > 0, "nothing lost: the check proves nothing");
	info("%" PRIu64 " records numbered between the sentinels = %" PRIu64 " received + %" PRIu64
	     " reported lost (%" PRIu64 " overruns)",
	     sum.numbered, sum.received, sum.lost, ps.overruns);
out:
	cn_close(s);
	mod_unload("cnbus_proc");
	return rc;
}

/* Read records until n more have come; 0 or the error. */
static int read_more(struct cn_sock *s, struct kseq *k, uint64_t n)
{
	uint64_t until = k->records + n;
	struct cn_bus_proc_event ev;
	int r;

	while (k->records < until) {
		r = kev_next(s, k, KPROC_TIMEOUT_MS, &ev);
		if (r)
			return r;
	}
	return 0;
}

/*
 * kproc_cpu_offline: CPU 1 taken offline and online again, 5 times, while
 * two processes fork and exec without pause: records keep coming, none is
 * lost (no gap in any CPU's numbers, no overrun), the module refused none
 * (what CPU 1 had queued when it died was sent), and the kernel log stays
 * clean.
 */
int t_kproc_cpu_offline(void)
{
	struct cn_bus_proc_event ev;
	struct cn_bus_proc_totals t;
	struct cn_proc_stats ps;
	struct cn_sock *s = NULL;
	struct kseq k = { 0 };
	pid_t st[2] = { -1, -1 };
	struct kstat ks;
	int rc = 0, r;

	if (cpu_online(1) != 1) {
		info("CPU 1 is not online and hotpluggable");
		return 77;
	}
	r = mod_load_beside("cnbus_proc", "");
	CHECK(r == 0 || r == -EEXIST, "load cnbus_proc.ko: %s", strerror(-r));
	s = kproc_open();
	CHECK(s, "open and listen: %s", strerror(errno));
	CHECK(storm_start(st) == 0, "fork");
	for (int round = 0; round < 5; round++) {
		r = cpu_set_online(1, 0);
		CHECK(r == 0, "CPU 1 offline: %s", strerror(-r));
		r = read_more(s, &k, 100);
		CHECK(r == 0, "records with CPU 1 offline: %s", strerror(-r));
		r = cpu_set_online(1, 1);
		CHECK(r == 0, "CPU 1 online: %s", strerror(-r));
		r = read_more(s, &k, 100);
		CHECK(r == 0, "records with CPU 1 online: %s", strerror(-r));
	}
	storm_stop(st);
	CHECK(kstat_wait_drained(&ks, 30) == 0, "CBUS not drained");
	while ((r = kev_next(s, &k, 500, &ev)) == 0)
		;
	CHECK(r == -ETIMEDOUT, "reading the rest: %s", strerror(-r));
	r = cn_bus_proc_totals(s, &t, 5000);
	CHECK(r == 0, "totals: %s", strerror(-r));
	CHECK(cn_proc_stats(s, &ps) == 0 && ps.overruns == 0, "overruns");
	CHECK(k.lost == 0 && t.refused == 0, "%" PRIu64 " lost (gaps), the module refused %" PRIu64,
	      k.lost, t.refused);
	info("CPU 1 offline and online 5 times in a storm: %" PRIu64 " records read, 0 lost,"
	     " 0 refused",
	     k.records);
out:
	storm_stop(st);
	if (cpu_online(1) == 0)
		cpu_set_online(1, 1);
	cn_close(s);
	mod_unload("cnbus_proc");
	return rc;
}
