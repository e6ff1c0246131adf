/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_tracker.c - the process tracker (cn_proc_tracker_*) fed with
 * captured events, over a fake procfs tree in a temporary directory (the
 * tracker's proc_root), so every name, parent and start time is known.
 * clock_gettime is wrapped (-Wl,--wrap) so that a test can hold
 * CLOCK_MONOTONIC still and move it by exact steps. The caller's data in
 * entries (cn_proc_tracker_data) is tagged with the task it was written
 * for and followed through moves, new tasks, execs, syncs and its end.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <libcn.h>

static char root[64];

/* While fake_clock is set, CLOCK_MONOTONIC reads fake_now_ns. */
static int fake_clock;
static uint64_t fake_now_ns;

int __real_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_gettime(clockid_t id, struct timespec *ts);

int __wrap_clock_gettime(clockid_t id, struct timespec *ts)
{
	if (fake_clock && id == CLOCK_MONOTONIC) {
		ts->tv_sec = (time_t)(fake_now_ns / 1000000000u);
		ts->tv_nsec = (long)(fake_now_ns % 1000000000u);
		return 0;
	}
	return __real_clock_gettime(id, ts);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A task in the fake tree: DIR/stat and DIR/comm, DIR is PID or TGID/task/TID;
 * its state, and its process's live threads. */
static void fake_task_in(pid_t tgid, pid_t pid, pid_t ppid, const char *comm,
			 unsigned long long start_ticks, char state, int threads)
{
	char dir[160], path[200], stat[256];

	snprintf(dir, sizeof(dir), "%s/%d", root, (int)tgid);
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/task", dir);
	mkdir(path, 0755);
	if (pid != tgid) {
		snprintf(dir, sizeof(dir), "%s/%d/task/%d", root, (int)tgid, (int)pid);
		mkdir(dir, 0755);
		/* The kernel shows threads at /proc/TID too (not listed). */
	}
	snprintf(stat, sizeof(stat),
		 "%d (%s) %c %d %d %d 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 %d 0 %llu 1000 100\n",
		 (int)pid, comm, state, (int)ppid, (int)ppid, (int)ppid, threads, start_ticks);
	snprintf(path, sizeof(path), "%s/stat", dir);
	write_file(path, stat);
	snprintf(path, sizeof(path), "%s/comm", dir);
	write_file(path, comm);
	if (pid != tgid) {
		/* /proc/TID/comm for the exec path's reads */
		snprintf(dir, sizeof(dir), "%s/%d", root, (int)pid);
		mkdir(dir, 0755);
	}
}

static void fake_task(pid_t tgid, pid_t pid, pid_t ppid, const char *comm,
		      unsigned long long start_ticks)
{
	fake_task_in(tgid, pid, ppid, comm, start_ticks, 'S', 1);
}

static void fake_zombie(pid_t tgid, pid_t pid, pid_t ppid, const char *comm,
			unsigned long long start_ticks, int threads)
{
	fake_task_in(tgid, pid, ppid, comm, start_ticks, 'Z', threads);
}

static void rm_task(pid_t pid)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%d'", root, (int)pid);
	assert_int_equal(system(cmd), 0);
}

static void set_comm(pid_t pid, const char *comm)
{
	char path[200];

	snprintf(path, sizeof(path), "%s/%d", root, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/comm", root, (int)pid);
	write_file(path, comm);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/cn-tracker.XXXXXX");
	assert_non_null(mkdtemp(root));
	fake_task(1, 1, 0, "init", 1);
	fake_task(100, 100, 1, "bash", 500);
	fake_task(100, 101, 1, "bash-worker", 600);
	return 0;
}

static int teardown(void **state)
{
	char cmd[100];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static struct cn_proc_tracker *new_tracker(uint32_t max)
{
	struct cn_proc_tracker_opts o = { .sz = sizeof(o), .max_entries = max, .proc_root = root };
	struct cn_proc_tracker *t = cn_proc_tracker_new(&o);

	assert_non_null(t);
	return t;
}

static struct cn_proc_event ev_fork(pid_t ppid, pid_t ptgid, pid_t pid, pid_t tgid, uint64_t ts)
{
	struct cn_proc_event e = { .what = CN_PROC_FORK, .pid = pid, .tgid = tgid };

	e.parent_pid = ppid;
	e.parent_tgid = ptgid;
	e.timestamp_ns = ts;
	return e;
}

/* CLOCK_MONOTONIC in ns: the clock of cn_proc_event.timestamp_ns and of
 * the tracker's record of when it synced. */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct cn_proc_event ev_simple(uint32_t what, pid_t pid, pid_t tgid, uint64_t ts)
{
	struct cn_proc_event e = { .what = what, .pid = pid, .tgid = tgid, .timestamp_ns = ts };

	return e;
}

/* The first sync fills the table without reporting "appeared". */
static void test_initial_sync(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	struct cn_proc_tracker_stats st;
	const struct cn_proc_entry *e;

	(void)state;
	assert_true(cn_proc_tracker_sync_timeout(t) >= 0);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	assert_int_equal(cn_proc_tracker_sync_timeout(t), -1);
	assert_int_equal(cn_proc_tracker_stats(t, &st), 0);
	assert_int_equal(st.entries, 3);
	e = cn_proc_tracker_find(t, 100);
	assert_non_null(e);
	assert_string_equal(e->comm, "bash");
	assert_int_equal(e->ppid, 1);
	assert_int_equal(e->flags, CN_PROC_ENTRY_SCANNED);
	e = cn_proc_tracker_find(t, 101);
	assert_non_null(e);
	assert_int_equal(e->tgid, 100);
	assert_int_equal(e->flags, CN_PROC_ENTRY_SCANNED | CN_PROC_ENTRY_THREAD);
	assert_string_equal(e->comm, "bash-worker");
	cn_proc_tracker_free(t);
}

/* fork -> exec -> exit: names and times follow the events. */
static void test_fork_exec_exit(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	struct cn_proc_event ev;
	const struct cn_proc_entry *e;

	(void)state;
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	ev = ev_fork(100, 100, 200, 200, 1000);
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_string_equal(e->comm, "bash"); /* inherited */
	assert_int_equal(e->ppid, 100);
	assert_int_equal(e->start_ns, 1000);
	assert_int_equal(e->flags, CN_PROC_ENTRY_FORK);

	set_comm(200, "ls\n");
	ev = ev_simple(CN_PROC_EXEC, 200, 200, 1500);
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_string_equal(e->comm, "ls");
	assert_int_equal(e->exec_ns, 1500);
	assert_int_equal(e->flags, CN_PROC_ENTRY_FORK | CN_PROC_ENTRY_EXEC);

	ev = ev_simple(CN_PROC_EXIT, 200, 200, 9000);
	ev.parent_pid = ev.parent_tgid = 1; /* reparented before it ended */
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_string_equal(e->comm, "ls");
	assert_int_equal(e->start_ns, 1000);
	assert_int_equal(e->ppid, 1);
	assert_null(cn_proc_tracker_find(t, 200));
	assert_int_equal(errno, ENOENT);

	/* An exit of a task never seen: NULL, ENOENT. */
	ev = ev_simple(CN_PROC_EXIT, 4242, 4242, 9100);
	assert_null(cn_proc_tracker_event(t, &ev));
	assert_int_equal(errno, ENOENT);
	cn_proc_tracker_free(t);
}

/* A thread is marked as one, named after its process; comm renames. */
static void test_thread_and_comm(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	struct cn_proc_event ev;
	const struct cn_proc_entry *e;

	(void)state;
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	/* The kernel names the process's parent (1) as a thread's parent. */
	ev = ev_fork(1, 1, 102, 100, 2000);
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_int_equal(e->flags, CN_PROC_ENTRY_FORK | CN_PROC_ENTRY_THREAD);
	assert_string_equal(e->comm, "bash");
	assert_int_equal(e->ppid, 1);

	ev = ev_simple(CN_PROC_COMM, 102, 100, 2100);
	strcpy(ev.comm, "worker-3");
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_string_equal(e->comm, "worker-3");
	cn_proc_tracker_free(t);

	/* NO_THREADS: thread events are ignored, scans skip threads. */
	{
		struct cn_proc_tracker_opts o = { .sz = sizeof(o),
						  .flags = CN_PROC_TRACKER_NO_THREADS,
						  .proc_root = root };
		struct cn_proc_tracker_stats st;

		t = cn_proc_tracker_new(&o);
		assert_non_null(t);
		assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
		assert_int_equal(cn_proc_tracker_stats(t, &st), 0);
		assert_int_equal(st.entries, 2);
		ev = ev_fork(1, 1, 102, 100, 2000);
		assert_null(cn_proc_tracker_event(t, &ev));
		assert_null(cn_proc_tracker_find(t, 102));
		cn_proc_tracker_free(t);
	}
}

/* An exec whose task is gone before its name is read keeps the old name,
 * marked stale. */
static void test_exec_gone(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	struct cn_proc_event ev;
	const struct cn_proc_entry *e;

	(void)state;
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	ev = ev_fork(100, 100, 210, 210, 1000);
	assert_non_null(cn_proc_tracker_event(t, &ev));
	ev = ev_simple(CN_PROC_EXEC, 210, 210, 1100); /* no /proc/210 */
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_string_equal(e->comm, "bash");
	assert_true(e->flags & CN_PROC_ENTRY_STALE_COMM);
	cn_proc_tracker_free(t);
}

struct changes {
	int appeared, vanished;
	pid_t app[8], van[8];
};

static void on_change(const struct cn_proc_entry *e, enum cn_proc_change ch, void *arg)
{
	struct changes *c = arg;

	if (ch == CN_PROC_APPEARED && c->appeared < 8)
		c->app[c->appeared++] = e->pid;
	else if (ch == CN_PROC_VANISHED && c->vanished < 8)
		c->van[c->vanished++] = e->pid;
}

/* Loss: the sync reports what changed while blind and the table equals
 * the tree again, pid reuse included. */
static void test_resync_after_loss(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	struct cn_proc_tracker_stats st;
	struct changes c = { 0 };
	struct cn_proc_event ev;
	const struct cn_proc_entry *e;
	int n = 0;

	(void)state;
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	ev = ev_fork(100, 100, 220, 220, 1000);
	assert_non_null(cn_proc_tracker_event(t, &ev));
	/* Blind: 101 and 220 ended, 300 started, 100 ended and its pid was
	 * reused by "vim" (another start time). */
	ev = ev_simple(CN_PROC_UID, 1, 1, mono_ns() + 5000); /* after the sync */
	ev.lost_before = 7;
	cn_proc_tracker_event(t, &ev);
	assert_true(cn_proc_tracker_sync_timeout(t) >= 0);
	rm_task(100);
	fake_task(100, 100, 1, "vim", 90000);
	fake_task(300, 300, 1, "cron", 80000);
	assert_int_equal(cn_proc_tracker_sync(t, on_change, &c), 5);
	assert_int_equal(c.appeared, 2); /* 300 and the new 100 */
	assert_int_equal(c.vanished, 3); /* 101, 220 and the old 100 */
	assert_int_equal(cn_proc_tracker_sync_timeout(t), -1);
	e = cn_proc_tracker_find(t, 100);
	assert_non_null(e);
	assert_string_equal(e->comm, "vim");
	assert_null(cn_proc_tracker_find(t, 101));
	assert_null(cn_proc_tracker_find(t, 220));
	assert_non_null(cn_proc_tracker_find(t, 300));
	for (e = cn_proc_tracker_next(t, NULL); e; e = cn_proc_tracker_next(t, e))
		n++;
	assert_int_equal(n, 3); /* 1, 100, 300 */
	assert_int_equal(cn_proc_tracker_stats(t, &st), 0);
	assert_int_equal(st.appeared, 2);
	assert_int_equal(st.vanished, 3);
	assert_int_equal(st.syncs, 2);

	/* -ENOBUFS without a trace: the caller says so. */
	cn_proc_tracker_lost(t);
	assert_true(cn_proc_tracker_sync_timeout(t) >= 0);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	cn_proc_tracker_free(t);
}

/* A task that ends while /proc is read is reported vanished; when its exit
 * event arrives after all it still gets its name, flagged; one that never
 * sends one is dropped silently by the next sync (no second report). */
static void test_exit_during_scan(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	struct cn_proc_tracker_stats st;
	struct changes c = { 0 };
	struct cn_proc_event ev;
	const struct cn_proc_entry *e;

	(void)state;
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	ev = ev_fork(100, 100, 150, 150, 1000);
	assert_non_null(cn_proc_tracker_event(t, &ev));
	ev = ev_fork(100, 100, 151, 151, 1000);
	assert_non_null(cn_proc_tracker_event(t, &ev));
	cn_proc_tracker_lost(t);
	assert_int_equal(cn_proc_tracker_sync(t, on_change, &c), 2);
	assert_int_equal(c.vanished, 2);
	assert_null(cn_proc_tracker_find(t, 150));
	assert_int_equal(cn_proc_tracker_stats(t, &st), 0);
	assert_int_equal(st.entries, 3);
	ev = ev_simple(CN_PROC_EXIT, 150, 150, 5000);
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_string_equal(e->comm, "bash");
	assert_true(e->flags & CN_PROC_ENTRY_VANISHED);
	assert_int_equal(e->start_ns, 1000);
	/* 151's exit never comes: the next sync forgets it without a report;
	 * a fork reusing a vanished pid is a new task. */
	memset(&c, 0, sizeof(c));
	assert_int_equal(cn_proc_tracker_sync(t, on_change, &c), 0);
	ev = ev_fork(100, 100, 151, 151, 6000);
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_false(e->flags & CN_PROC_ENTRY_VANISHED);
	assert_int_equal(cn_proc_tracker_stats(t, &st), 0);
	assert_int_equal(st.entries, 4);
	assert_int_equal(st.vanished, 2);
	cn_proc_tracker_free(t);
}

/* Many tasks in a small table: every removal keeps the others findable
 * (backward-shift deletion), and the bound holds. */
static void test_table_churn_and_bound(void **state)
{
	struct cn_proc_tracker *t = new_tracker(4096);
	struct cn_proc_tracker_stats st;
	struct cn_proc_event ev;

	(void)state;
	for (pid_t p = 1000; p < 1000 + 4096; p++) {
		ev = ev_fork(1, 1, p, p, 1);
		assert_non_null(cn_proc_tracker_event(t, &ev));
	}
	ev = ev_fork(1, 1, 99999, 99999, 1);
	assert_null(cn_proc_tracker_event(t, &ev)); /* full */
	for (pid_t p = 1000; p < 1000 + 4096; p += 3) {
		ev = ev_simple(CN_PROC_EXIT, p, p, 2);
		assert_non_null(cn_proc_tracker_event(t, &ev));
	}
	for (pid_t p = 1000; p < 1000 + 4096; p++) {
		const struct cn_proc_entry *e = cn_proc_tracker_find(t, p);

		if ((p - 1000) % 3 == 0)
			assert_null(e);
		else
			assert_true(e && e->pid == p);
	}
	assert_int_equal(cn_proc_tracker_stats(t, &st), 0);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.entries, 4096 - (4096 + 2) / 3);
	cn_proc_tracker_free(t);
}

/* Options: the size rule shared with cn_open. */
static void test_opts(void **state)
{
	struct {
		struct cn_proc_tracker_opts o;
		uint64_t newer;
	} big = { .o = { .sz = sizeof(big), .proc_root = root } };
	struct cn_proc_tracker_opts zero = { 0 };
	struct cn_proc_tracker *t;

	(void)state;
	t = cn_proc_tracker_new(&big.o);
	assert_non_null(t); /* larger, unknown bytes zero */
	cn_proc_tracker_free(t);
	big.newer = 1;
	assert_null(cn_proc_tracker_new(&big.o));
	assert_int_equal(errno, E2BIG);
	assert_null(cn_proc_tracker_new(&zero));
	assert_int_equal(errno, EINVAL);
	big.o.sz = sizeof(big.o);
	big.o.proc_root = "/nonexistent-cn";
	assert_null(cn_proc_tracker_new(&big.o));
	assert_int_equal(errno, ENOENT);
	cn_proc_tracker_free(NULL);
}

/* One loss, one rescan: after an overrun (cn_proc_tracker_lost) and the
 * sync it asks for, the per-CPU gap the same loss leaves (lost_before on the
 * CPU's next event, which happened before the sync) asks for none; a gap
 * after the sync does. */
static void test_gap_of_a_synced_overrun_needs_no_rescan(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	struct cn_proc_event ev;
	uint64_t before;

	(void)state;
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	before = mono_ns(); /* the first event after the gap, queued before the sync */
	cn_proc_tracker_lost(t);
	assert_true(cn_proc_tracker_sync_timeout(t) >= 0);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	ev = ev_simple(CN_PROC_UID, 1, 1, before);
	ev.lost_before = 7389;
	cn_proc_tracker_event(t, &ev);
	assert_int_equal(cn_proc_tracker_sync_timeout(t), -1);
	/* a gap whose event came after the sync: events may have been lost
	 * after /proc was read */
	ev = ev_simple(CN_PROC_UID, 1, 1, mono_ns() + 1);
	ev.lost_before = 3;
	cn_proc_tracker_event(t, &ev);
	assert_true(cn_proc_tracker_sync_timeout(t) >= 0);
	cn_proc_tracker_free(t);
}

/* A parent's exit gives its children (and their threads) the parent /proc
 * shows then: the kernel sends no event for reparenting. */
static void test_reparent_on_parent_exit(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	struct cn_proc_event ev;
	const struct cn_proc_entry *e;

	(void)state;
	fake_task(50, 50, 1, "reaper", 700);
	fake_task(300, 300, 50, "parent", 800);
	fake_task(301, 301, 300, "child", 900);
	fake_task(301, 302, 300, "child-thread", 910);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	ev = ev_fork(300, 300, 303, 303, mono_ns());
	assert_non_null(cn_proc_tracker_event(t, &ev));
	assert_int_equal(cn_proc_tracker_find(t, 303)->ppid, 300);

	/* The parent exits; the kernel has made the subreaper (50) their
	 * parent by the time it sends the exit event. */
	rm_task(300);
	fake_task(301, 301, 50, "child", 900);
	fake_task(301, 302, 50, "child-thread", 910);
	fake_task(303, 303, 50, "parent", 1000);
	ev = ev_simple(CN_PROC_EXIT, 300, 300, mono_ns());
	ev.parent_pid = ev.parent_tgid = 50;
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_int_equal(e->pid, 300);
	for (pid_t pid = 301; pid <= 303; pid++) {
		e = cn_proc_tracker_find(t, pid);
		assert_non_null(e);
		assert_int_equal(e->ppid, 50);
	}
	/* Their new parent's exit: to init, as /proc says. */
	rm_task(50);
	fake_task(301, 301, 1, "child", 900);
	fake_task(301, 302, 1, "child-thread", 910);
	fake_task(303, 303, 1, "parent", 1000);
	ev = ev_simple(CN_PROC_EXIT, 50, 50, mono_ns());
	assert_non_null(cn_proc_tracker_event(t, &ev));
	for (pid_t pid = 301; pid <= 303; pid++)
		assert_int_equal(cn_proc_tracker_find(t, pid)->ppid, 1);
	/* A thread's exit reparents nothing (its process lives on). */
	fake_task(301, 301, 100, "child", 900);
	ev = ev_simple(CN_PROC_EXIT, 302, 301, mono_ns());
	assert_non_null(cn_proc_tracker_event(t, &ev));
	assert_int_equal(cn_proc_tracker_find(t, 301)->ppid, 1);
	cn_proc_tracker_free(t);
}

/* A child whose parent process's main thread exits while another thread
 * of it lives keeps that process as its parent (the kernel gives it to
 * the live thread) until the last thread's exit, a thread's event, gives it
 * the reaper: the table follows, through a sync between the two. */
static void test_reparent_at_last_thread_exit(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	struct cn_proc_tracker_stats st;
	struct cn_proc_event ev;
	const struct cn_proc_entry *e;
	uint64_t entries;
	int n = 0;

	(void)state;
	fake_task(400, 400, 1, "daemon", 800);
	fake_task(400, 401, 1, "daemon-worker", 810);
	fake_task(402, 402, 400, "child", 900);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	assert_int_equal(cn_proc_tracker_stats(t, &st), 0);
	entries = st.entries;

	/* The main thread exits (a zombie in /proc while 401 runs): the
	 * process lives on, with its child. */
	ev = ev_simple(CN_PROC_EXIT, 400, 400, mono_ns());
	ev.parent_pid = ev.parent_tgid = 1;
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_int_equal(e->pid, 400);
	assert_int_equal(e->flags & (CN_PROC_ENTRY_EXITED | CN_PROC_ENTRY_MAIN_EXITED),
			 CN_PROC_ENTRY_MAIN_EXITED);
	assert_non_null(cn_proc_tracker_find(t, 400));
	assert_int_equal(cn_proc_tracker_find(t, 402)->ppid, 400);
	assert_int_equal(cn_proc_tracker_stats(t, &st), 0);
	assert_int_equal(st.entries, entries);
	for (e = cn_proc_tracker_next(t, NULL); e; e = cn_proc_tracker_next(t, e))
		n++;
	assert_int_equal(n, entries);
	/* A sync sees the zombie main thread of a live process: no change. */
	fake_zombie(400, 400, 1, "daemon", 800, 2);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	assert_true(cn_proc_tracker_find(t, 400)->flags & CN_PROC_ENTRY_MAIN_EXITED);

	/* The last thread exits (exit_group(3)): the process is gone, with
	 * its status, and the child is init's now. */
	rm_task(400);
	fake_task(402, 402, 1, "child", 900);
	ev = ev_simple(CN_PROC_EXIT, 401, 400, mono_ns());
	ev.exit_code = 3 << 8;
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_int_equal(e->pid, 400);
	assert_int_equal(e->ppid, 1);
	assert_true(e->flags & CN_PROC_ENTRY_EXITED);
	assert_int_equal(e->status, 3 << 8);
	assert_int_equal(cn_proc_tracker_find(t, 402)->ppid, 1);
	assert_int_equal(cn_proc_tracker_stats(t, &st), 0);
	assert_int_equal(st.entries, entries - 2);
	/* Nothing of 400 is left: a sync finds nothing to change. */
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	assert_int_equal(cn_proc_tracker_find(t, 402)->ppid, 1);
	cn_proc_tracker_free(t);
}

/* An exec by a thread that is not the main thread (de_thread): the main
 * thread's exit (code 0) and the other threads' come before or after the
 * exec's event, the exec'ing thread sends none; the process lives on,
 * one thread, with its parent, and ends at its own exit. */
static void test_exec_from_a_thread(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	const struct cn_proc_entry *e;
	struct cn_proc_event ev;
	uint64_t now = mono_ns();

	(void)state;
	fake_task(700, 700, 100, "go", 800);
	fake_task(700, 701, 100, "go", 810);
	fake_task(700, 702, 100, "go", 820);
	fake_task(700, 703, 100, "go", 830);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);

	/* 702 execs: 701 ends first, then the main thread. */
	ev = ev_simple(CN_PROC_EXIT, 701, 700, now + 1);
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_false(e->flags & CN_PROC_ENTRY_EXITED);
	ev = ev_simple(CN_PROC_EXIT, 700, 700, now + 2);
	ev.parent_pid = ev.parent_tgid = 100;
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_false(e->flags & CN_PROC_ENTRY_EXITED);
	ev = ev_simple(CN_PROC_EXEC, 700, 700, now + 4);
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_int_equal(e->ppid, 100);
	assert_false(e->flags & CN_PROC_ENTRY_MAIN_EXITED);
	assert_null(cn_proc_tracker_find(t, 702));
	assert_null(cn_proc_tracker_find(t, 703));
	/* After the exec's event: 703's exit, and the main thread's read
	 * under the old pid before the swap (earlier than the exec) or
	 * under the exec'ing thread's after it: none ends the process. */
	ev = ev_simple(CN_PROC_EXIT, 703, 700, now + 3);
	assert_null(cn_proc_tracker_event(t, &ev));
	ev = ev_simple(CN_PROC_EXIT, 700, 700, now + 3);
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e); /* the live process */
	assert_false(e->flags & (CN_PROC_ENTRY_EXITED | CN_PROC_ENTRY_MAIN_EXITED));
	ev = ev_simple(CN_PROC_EXIT, 702, 700, now + 5);
	assert_null(cn_proc_tracker_event(t, &ev));
	assert_non_null(cn_proc_tracker_find(t, 700));
	/* Its own exit, one thread: the process's. */
	ev = ev_simple(CN_PROC_EXIT, 700, 700, now + 6);
	ev.exit_code = 4 << 8;
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_true(e->flags & CN_PROC_ENTRY_EXITED);
	assert_int_equal(e->status, 4 << 8);
	assert_null(cn_proc_tracker_find(t, 700));
	cn_proc_tracker_free(t);
}

/* The last thread of a process whose main thread has exited ends while a
 * sync reads /proc: both reported vanished, then the thread's exit event is
 * the process's after all (EXITED, VANISHED). */
static void test_last_thread_ends_during_a_sync(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	const struct cn_proc_entry *e;
	struct cn_proc_event ev;

	(void)state;
	fake_zombie(900, 900, 100, "server", 800, 2);
	fake_task(900, 901, 100, "server", 810);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	assert_true(cn_proc_tracker_find(t, 900)->flags & CN_PROC_ENTRY_MAIN_EXITED);
	/* 901 gone, its event on its way: the process too (a zombie main
	 * thread without threads). */
	rm_task(900);
	fake_zombie(900, 900, 100, "server", 800, 1);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 2);
	assert_null(cn_proc_tracker_find(t, 900));
	ev = ev_simple(CN_PROC_EXIT, 901, 900, mono_ns());
	ev.exit_code = 2 << 8;
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_int_equal(e->pid, 900);
	assert_int_equal(e->flags & (CN_PROC_ENTRY_EXITED | CN_PROC_ENTRY_VANISHED),
			 CN_PROC_ENTRY_EXITED | CN_PROC_ENTRY_VANISHED);
	assert_int_equal(e->status, 2 << 8);
	/* Gone for good: a second exit finds nothing. */
	assert_null(cn_proc_tracker_event(t, &ev));
	cn_proc_tracker_free(t);
}

/* A core dump of a threaded process: only the dumping thread's exit
 * carries the core bit, the last exit may be another thread's. Under
 * NO_THREADS the threads are counted (num_threads), not kept. */
static void test_core_dump_of_threads(void **state)
{
	struct cn_proc_tracker_opts o = { .sz = sizeof(o),
					  .flags = CN_PROC_TRACKER_NO_THREADS,
					  .proc_root = root };
	struct cn_proc_tracker *t = cn_proc_tracker_new(&o);
	const struct cn_proc_entry *e;
	struct cn_proc_event ev;

	(void)state;
	assert_non_null(t);
	fake_task_in(800, 800, 100, "crash", 800, 'S', 3);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	ev = ev_simple(CN_PROC_EXIT, 801, 800, mono_ns());
	ev.exit_code = SIGSEGV | 0x80;
	assert_null(cn_proc_tracker_event(t, &ev));
	ev = ev_simple(CN_PROC_EXIT, 800, 800, mono_ns());
	ev.exit_code = SIGSEGV;
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_false(e->flags & CN_PROC_ENTRY_EXITED);
	ev = ev_simple(CN_PROC_EXIT, 802, 800, mono_ns());
	ev.exit_code = SIGSEGV;
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_int_equal(e->pid, 800);
	assert_true(e->flags & CN_PROC_ENTRY_EXITED);
	assert_int_equal(e->status, SIGSEGV | 0x80);
	cn_proc_tracker_free(t);
}

/* A zombie has exited (its exit event is sent before its parent can reap
 * it): a sync does not add one, and reports one in the table vanished;
 * the main thread of a process that runs on in other threads stays. */
static void test_zombies_are_gone(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);
	struct changes c = { 0 };
	struct cn_proc_event ev;

	(void)state;
	fake_task(600, 600, 100, "exiting", 1000);
	fake_task(610, 610, 1, "daemon", 1100);
	fake_task(610, 611, 1, "daemon-worker", 1110);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	assert_non_null(cn_proc_tracker_find(t, 600));

	/* 600 exits (its event lost), 620 starts and exits unseen: both
	 * zombies; 610's main thread leaves, its worker runs on. */
	fake_zombie(600, 600, 100, "exiting", 1000, 1);
	fake_zombie(620, 620, 100, "brief", 1200, 1);
	fake_zombie(610, 610, 1, "daemon", 1100, 2);
	ev = ev_simple(CN_PROC_UID, 1, 1, mono_ns());
	ev.lost_before = 2;
	cn_proc_tracker_event(t, &ev);
	assert_int_equal(cn_proc_tracker_sync(t, on_change, &c), 1);
	assert_int_equal(c.vanished, 1);
	assert_int_equal(c.van[0], 600);
	assert_int_equal(c.appeared, 0);
	assert_null(cn_proc_tracker_find(t, 600));
	assert_null(cn_proc_tracker_find(t, 620));
	assert_non_null(cn_proc_tracker_find(t, 610));
	assert_non_null(cn_proc_tracker_find(t, 611));
	cn_proc_tracker_free(t);
}

#define MS 1000000ull

/* Milliseconds until a rescan is due: 0 at once for a tracker never
 * synced, -1 when nothing was lost, and after a loss 100 after the last
 * loss (rounded up), but no later than 1000 after the first: a burst of
 * overruns asks for one rescan. The clock is held still and moved. */
static void test_sync_timeout(void **state)
{
	struct cn_proc_tracker *t = new_tracker(0);

	(void)state;
	fake_clock = 1;
	fake_now_ns = 5000 * MS;
	assert_int_equal(cn_proc_tracker_sync_timeout(NULL), -1);
	assert_int_equal(cn_proc_tracker_sync_timeout(t), 0);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	assert_int_equal(cn_proc_tracker_sync_timeout(t), -1);

	/* A burst of 50 losses at one moment: due 100 ms later. */
	for (int i = 0; i < 50; i++)
		cn_proc_tracker_lost(t);
	assert_true(cn_proc_tracker_sync_timeout(t) >= 0);
	assert_int_equal(cn_proc_tracker_sync_timeout(t), 100);
	fake_now_ns += 40 * MS;
	assert_int_equal(cn_proc_tracker_sync_timeout(t), 60);
	fake_now_ns += 59 * MS + 1;
	assert_int_equal(cn_proc_tracker_sync_timeout(t), 1); /* 0.999999 ms, rounded up */
	fake_now_ns += MS - 1;
	assert_int_equal(cn_proc_tracker_sync_timeout(t), 0);
	fake_now_ns += 5000 * MS;
	assert_int_equal(cn_proc_tracker_sync_timeout(t), 0); /* still due, however late */
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	assert_int_equal(cn_proc_tracker_sync_timeout(t), -1);

	/* A later loss puts it off again: 100 ms after the last one... */
	cn_proc_tracker_lost(t);
	fake_now_ns += 50 * MS;
	cn_proc_tracker_lost(t);
	assert_int_equal(cn_proc_tracker_sync_timeout(t), 100);
	/* ... but losses that go on every 50 ms are rescanned 1 s after the
	 * first: at 950 ms the last loss would say 100 more, the first 50. */
	for (int i = 2; i <= 19; i++) {
		fake_now_ns += 50 * MS;
		cn_proc_tracker_lost(t);
	}
	assert_int_equal(cn_proc_tracker_sync_timeout(t), 50);
	fake_now_ns += 50 * MS;
	cn_proc_tracker_lost(t);
	assert_int_equal(cn_proc_tracker_sync_timeout(t), 0);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	assert_int_equal(cn_proc_tracker_sync_timeout(t), -1);
	fake_clock = 0;
	cn_proc_tracker_free(t);
}

/* The caller's data in each entry (cn_proc_tracker_data): a tag naming the
 * task it was written for, and what data_end was told. */
struct tag {
	int32_t pid;
	uint32_t seq; /* which of the pid's tasks */
	char more[40];
};

struct ends {
	int n;
	struct tag got[64];
	pid_t entry_pid[64]; /* the entry each was told with */
};

static void on_end(const struct cn_proc_entry *e, void *data, void *arg)
{
	struct ends *c = arg;

	assert_true(c->n < 64);
	memcpy(&c->got[c->n], data, sizeof(struct tag));
	c->entry_pid[c->n++] = e->pid;
}

static struct cn_proc_tracker *data_tracker(uint32_t max, struct ends *c)
{
	struct cn_proc_tracker_opts o = { .sz = sizeof(o),
					  .max_entries = max,
					  .proc_root = root,
					  .data_size = sizeof(struct tag),
					  .data_end = on_end,
					  .data_arg = c };
	struct cn_proc_tracker *t = cn_proc_tracker_new(&o);

	assert_non_null(t);
	return t;
}

static struct tag *data_of(struct cn_proc_tracker *t, const struct cn_proc_entry *e)
{
	struct tag *d;

	assert_non_null(e);
	d = cn_proc_tracker_data(t, e);
	assert_non_null(d);
	assert_int_equal((uintptr_t)d % _Alignof(max_align_t), 0);
	return d;
}

/* A fork of pid by init, its data tagged: (pid, seq). */
static void fork_tagged(struct cn_proc_tracker *t, pid_t pid, uint32_t seq)
{
	struct cn_proc_event ev = ev_fork(1, 1, pid, pid, 1000 + seq);
	struct tag *d = data_of(t, cn_proc_tracker_event(t, &ev));
	static const char zero[sizeof(struct tag)];

	assert_memory_equal(d, zero, sizeof(zero)); /* a new task's: zeroed */
	d->pid = pid;
	d->seq = seq;
}

static void assert_tagged(struct cn_proc_tracker *t, pid_t pid, uint32_t seq)
{
	struct tag *d = data_of(t, cn_proc_tracker_find(t, pid));

	assert_int_equal(d->pid, pid);
	assert_int_equal(d->seq, seq);
}

/* Options: data_size bounded, data_end only with data; data refused for a
 * tracker without it and for a pointer that is no entry; a program built
 * before data_size (a smaller sz) gets none. */
static void test_data_opts(void **state)
{
	struct cn_proc_tracker_opts o = { .sz = sizeof(o), .proc_root = root };
	struct cn_proc_tracker *t;
	struct ends c = { 0 };
	const struct cn_proc_entry *e;
	struct cn_proc_entry other = { 0 };

	(void)state;
	o.data_size = CN_PROC_TRACKER_DATA_MAX + 1;
	assert_null(cn_proc_tracker_new(&o));
	assert_int_equal(errno, EINVAL);
	o.data_size = 0;
	o.data_end = on_end;
	assert_null(cn_proc_tracker_new(&o));
	assert_int_equal(errno, EINVAL);
	o.data_end = NULL;
	o.data_size = CN_PROC_TRACKER_DATA_MAX;
	t = cn_proc_tracker_new(&o);
	assert_non_null(t);
	cn_proc_tracker_free(t);

	o.sz = offsetof(struct cn_proc_tracker_opts, data_size);
	o.data_size = 64; /* past the old sz: not read */
	t = cn_proc_tracker_new(&o);
	assert_non_null(t);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	e = cn_proc_tracker_find(t, 100);
	assert_non_null(e);
	assert_null(cn_proc_tracker_data(t, e));
	assert_int_equal(errno, EINVAL);
	cn_proc_tracker_free(t);

	t = data_tracker(0, &c);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	e = cn_proc_tracker_find(t, 100);
	assert_non_null(cn_proc_tracker_data(t, e));
	assert_null(cn_proc_tracker_data(t, &other));
	assert_int_equal(errno, EINVAL);
	assert_null(cn_proc_tracker_data(t, (const struct cn_proc_entry *)((const char *)e + 8)));
	assert_int_equal(errno, EINVAL);
	assert_null(cn_proc_tracker_data(NULL, e));
	assert_null(cn_proc_tracker_data(t, NULL));
	cn_proc_tracker_free(t);
	assert_int_equal(c.n, 3); /* init, bash, bash-worker */
}

/* Deleting an entry moves the later ones of its probe run back, across the
 * end of the table: their data moves with them. Pids that are 15 modulo 16
 * share the last of a 16-slot table's slots as home, pids that are 0
 * modulo 16 the first: 31, 47, 63 fill slots 15, 0, 1 and 32, 48 slots 2,
 * 3; 31's exit moves every one of them back. */
static void test_data_moves_with_its_entry(void **state)
{
	static const pid_t pids[] = { 31, 47, 63, 32, 48 };
	struct ends c = { 0 };
	struct cn_proc_tracker *t = data_tracker(8, &c);
	const struct cn_proc_entry *e;
	struct cn_proc_event ev;
	struct tag *d;

	(void)state;
	for (size_t i = 0; i < 5; i++)
		fork_tagged(t, pids[i], 1);
	ev = ev_simple(CN_PROC_EXIT, 31, 31, 2000);
	e = cn_proc_tracker_event(t, &ev);
	assert_non_null(e);
	assert_true(e->flags & CN_PROC_ENTRY_EXITED);
	/* The exit's entry keeps its data until the next change. */
	d = data_of(t, e);
	assert_int_equal(d->pid, 31);
	assert_int_equal(c.n, 0);
	for (size_t i = 1; i < 5; i++)
		assert_tagged(t, pids[i], 1);
	ev = ev_simple(CN_PROC_COMM, 47, 47, 2001);
	assert_non_null(cn_proc_tracker_event(t, &ev));
	assert_int_equal(c.n, 1); /* 31's, at the next event */
	assert_int_equal(c.got[0].pid, 31);
	assert_int_equal(c.entry_pid[0], 31);
	ev = ev_simple(CN_PROC_EXIT, 48, 48, 2002);
	e = cn_proc_tracker_event(t, &ev);
	assert_int_equal(c.n, 1);
	assert_int_equal(data_of(t, e)->pid, 48);
	for (size_t i = 1; i < 4; i++)
		assert_tagged(t, pids[i], 1);
	cn_proc_tracker_free(t);
	assert_int_equal(c.n, 5); /* 48's and the three left, at the free */
}

/* A pid's entry taken by a new task (its exit was lost) ends the old
 * task's data and starts the new one's zeroed; an exec keeps it; the
 * threads an exec ends end at once. */
static void test_data_of_a_new_task_and_exec(void **state)
{
	struct ends c = { 0 };
	struct cn_proc_tracker *t = data_tracker(0, &c);
	struct cn_proc_event ev;

	(void)state;
	fork_tagged(t, 500, 1);
	fork_tagged(t, 500, 2); /* checks the new data is zeroed */
	assert_int_equal(c.n, 1);
	assert_int_equal(c.got[0].pid, 500);
	assert_int_equal(c.got[0].seq, 1);
	assert_tagged(t, 500, 2);

	set_comm(500, "ls\n");
	ev = ev_simple(CN_PROC_EXEC, 500, 500, 3000);
	assert_non_null(cn_proc_tracker_event(t, &ev));
	assert_tagged(t, 500, 2);

	/* A thread of 500, then an exec by the process: the thread ends. */
	ev = ev_fork(500, 500, 501, 500, 3100);
	data_of(t, cn_proc_tracker_event(t, &ev))->pid = 501;
	ev = ev_simple(CN_PROC_EXEC, 500, 500, 3200);
	assert_non_null(cn_proc_tracker_event(t, &ev));
	assert_int_equal(c.n, 2);
	assert_int_equal(c.got[1].pid, 501);
	assert_null(cn_proc_tracker_find(t, 501));
	assert_tagged(t, 500, 2);
	cn_proc_tracker_free(t);
	assert_int_equal(c.n, 3);
}

static void check_vanished_data(const struct cn_proc_entry *e, enum cn_proc_change ch, void *arg)
{
	struct cn_proc_tracker *t = arg;
	struct tag *d = cn_proc_tracker_data(t, e);

	assert_non_null(d);
	if (ch == CN_PROC_VANISHED)
		assert_int_equal(d->pid, e->pid); /* still the task's */
	else
		assert_int_equal(d->pid, 0); /* a new task's: zeroed */
}

/* A sync: a vanished task's data is there in its report and until the next
 * sync forgets it (then it ends); a pid reused while blind is reported
 * vanished with the old data, then appeared with zeroed data. */
static void test_data_through_syncs(void **state)
{
	struct ends c = { 0 };
	struct cn_proc_tracker *t = data_tracker(0, &c);

	(void)state;
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	data_of(t, cn_proc_tracker_find(t, 100))->pid = 100;
	data_of(t, cn_proc_tracker_find(t, 101))->pid = 101;
	fork_tagged(t, 600, 1);
	rm_task(100);
	fake_task(100, 100, 1, "vim", 90000); /* 100 reused */
	cn_proc_tracker_lost(t);
	/* Vanished: 600, 101, the old 100; appeared: the new 100. */
	assert_int_equal(cn_proc_tracker_sync(t, check_vanished_data, t), 4);
	assert_int_equal(c.n, 1); /* the old 100's */
	assert_int_equal(c.got[0].pid, 100);
	assert_int_equal(data_of(t, cn_proc_tracker_find(t, 100))->pid, 0);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	assert_int_equal(c.n, 3); /* 600's and 101's, gone for good */
	assert_true(c.got[1].pid == 600 || c.got[2].pid == 600);
	cn_proc_tracker_free(t);
	assert_int_equal(c.n, 5); /* init and 100 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reparent_on_parent_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reparent_at_last_thread_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_from_a_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_core_dump_of_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_thread_ends_during_a_sync, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_zombies_are_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_initial_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_exec_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_and_comm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resync_after_loss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_during_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_churn_and_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gap_of_a_synced_overrun_needs_no_rescan, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_data_opts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_data_moves_with_its_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_data_of_a_new_task_and_exec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_data_through_syncs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
