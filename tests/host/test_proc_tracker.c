/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_tracker.c - the process tracker against the running kernel: an
 * overrun forced with a tiny receive buffer during a fork storm, tasks
 * started and ended while the listener was blind, then the table compared
 * with /proc.
 *
 * Other processes on the machine fork and exit meanwhile, so the equality
 * is checked where this test controls every task and the moment: the
 * children of this process, at a point where none of them changes (the
 * storm reaped, the others blocked). There the tracker's table (entries
 * whose parent is this process) must equal /proc's (tasks whose parent is
 * this process): the same pids, each with /proc's name.
 *
 * Reparenting (the kernel sends no event for it): a child orphaned by its
 * parent's exit, with and without a child subreaper above it, has the
 * parent /proc shows once that exit was applied. A child forked by a
 * thread that is not its process's main thread is passed, when the main
 * thread exits, to that live thread (same PPid), and to the reaper only at
 * the last thread's exit, whose event is a thread's: the table follows,
 * keeping the process until that exit.
 */
#define _GNU_SOURCE /* pipe2 */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "host_util.h"

/* Guards against a hang, not a timing goal: a wait ends with its answer.
 * Under valgrind beside the vm tier's TCG boots an orphan's exit event came
 * more than 2 s after it was asked for. */
#define WAIT_MS	   30000
#define STORM	   400 /* forks while blind: 1200 events, a 1 KiB buffer holds a few */
#define LONG_LIVED 6   /* sleepers started before the blind window */
#define MAX_KIDS   64

/* A child that execs `sleep 1000` (comm "sleep"). Returns once the exec
 * happened: a close-on-exec pipe reads end-of-file then. */
static pid_t sleeper(void)
{
	int fd[2];
	char c;
	pid_t p;

	assert_int_equal(pipe2(fd, O_CLOEXEC), 0);
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		close(fd[0]);
		execlp("sleep", "sleep", "1000", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], &c, 1), 0);
	close(fd[0]);
	return p;
}

static void kill_reap(pid_t p)
{
	kill(p, SIGKILL);
	host_reap(p);
}

/* The tasks in /proc whose parent is this process: pids[] with comm. */
struct kids {
	unsigned n;
	pid_t pid[MAX_KIDS];
	char comm[MAX_KIDS][16];
};

static void proc_kids(struct kids *k)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	assert_non_null(d);
	k->n = 0;
	while ((de = readdir(d))) {
		char path[300], buf[512], *open, *close;
		int ppid = 0;
		FILE *f;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(buf, sizeof(buf), f)) {
			fclose(f);
			continue;
		}
		fclose(f);
		open = strchr(buf, '(');
		close = strrchr(buf, ')');
		if (!open || !close || sscanf(close + 2, "%*c %d", &ppid) != 1 || ppid != getpid())
			continue;
		assert_true(k->n < MAX_KIDS);
		k->pid[k->n] = atoi(de->d_name);
		snprintf(k->comm[k->n], 16, "%.*s", (int)(close - open - 1), open + 1);
		k->n++;
	}
	closedir(d);
}

static void table_kids(struct cn_proc_tracker *t, struct kids *k)
{
	const struct cn_proc_entry *e;

	k->n = 0;
	for (e = cn_proc_tracker_next(t, NULL); e; e = cn_proc_tracker_next(t, e)) {
		if (e->ppid != getpid() || (e->flags & CN_PROC_ENTRY_THREAD))
			continue;
		assert_true(k->n < MAX_KIDS);
		k->pid[k->n] = e->pid;
		memcpy(k->comm[k->n], e->comm, 16);
		k->n++;
	}
}

static int has(const struct kids *k, pid_t p)
{
	for (unsigned i = 0; i < k->n; i++)
		if (k->pid[i] == p)
			return (int)i + 1;
	return 0;
}

struct changes {
	struct kids appeared, vanished;
};

static void on_change(const struct cn_proc_entry *e, enum cn_proc_change ch, void *arg)
{
	struct changes *c = arg;
	struct kids *k = ch == CN_PROC_APPEARED ? &c->appeared : &c->vanished;

	if (e->ppid == getpid() && k->n < MAX_KIDS)
		k->pid[k->n++] = e->pid;
}

/* Apply what the socket holds until it is empty; returns the overruns met. */
static unsigned drain(struct cn_sock *s, struct cn_proc_tracker *t)
{
	struct cn_proc_event ev;
	unsigned overruns = 0;
	int r;

	while ((r = cn_proc_recv(s, &ev, CN_RECV_DONTWAIT)) != -EAGAIN) {
		if (r == -ENOBUFS) {
			cn_proc_tracker_lost(t);
			overruns++;
			continue;
		}
		assert_int_equal(r, 0);
		cn_proc_tracker_event(t, &ev);
	}
	return overruns;
}

static void test_table_equals_proc_after_overrun(void **state)
{
	struct cn_sock *s = host_open(0);
	struct cn_proc_tracker *t = cn_proc_tracker_new(NULL);
	pid_t before[LONG_LIVED], during[LONG_LIVED / 2], ended[LONG_LIVED / 2];
	struct changes c = { 0 };
	struct kids in_proc, in_table;
	unsigned overruns;

	(void)state;
	assert_non_null(t);
	host_keep(t);
	assert_int_equal(cn_proc_listen(s, 0, WAIT_MS), 0);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);

	/* Seen: sleepers whose fork and exec the tracker gets. */
	for (int i = 0; i < LONG_LIVED; i++)
		before[i] = sleeper();
	assert_int_equal(drain(s, t), 0);
	for (int i = 0; i < LONG_LIVED; i++) {
		const struct cn_proc_entry *e = cn_proc_tracker_find(t, before[i]);

		assert_non_null(e);
		assert_string_equal(e->comm, "sleep");
		assert_true(e->flags & CN_PROC_ENTRY_FORK);
	}
	/* A buffer of a few events (forced: root). */
	assert_true(cn_set_rcvbuf(s, 1024) > 0);

	/* Blind: nothing read while a storm overruns the buffer; half the
	 * sleepers end, new ones start, all unseen. */
	for (int i = 0; i < STORM; i++) {
		pid_t p = fork();

		assert_true(p >= 0);
		if (p == 0)
			_exit(0);
		host_reap(p);
	}
	for (int i = 0; i < LONG_LIVED / 2; i++) {
		kill_reap(before[i]);
		ended[i] = before[i];
		before[i] = 0;
		during[i] = sleeper();
	}
	for (int i = 0; i < STORM / 4; i++) {
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		host_reap(p);
	}
	/* Quiescent for this process's children from here (sleeper() returns
	 * after the exec). */
	overruns = drain(s, t);
	assert_true(overruns >= 1); /* the loss this test is about happened */
	assert_true(cn_proc_tracker_sync_timeout(t) >= 0);
	assert_true(cn_set_rcvbuf(s, 1 << 20) > 0);
	/* Sync; events queued after the scan are applied on top, as a daemon
	 * would; other processes' events may overrun the buffer again before
	 * it grew: then sync again (bounded). */
	for (int round = 0; round < 5 && cn_proc_tracker_sync_timeout(t) >= 0; round++) {
		assert_true(cn_proc_tracker_sync(t, on_change, &c) >= 0);
		drain(s, t);
	}
	assert_int_equal(cn_proc_tracker_sync_timeout(t), -1);

	proc_kids(&in_proc);
	table_kids(t, &in_table);
	printf("# overruns %u; /proc: %u children, table: %u; appeared %u, vanished %u\n", overruns,
	       in_proc.n, in_table.n, c.appeared.n, c.vanished.n);
	assert_int_equal(in_proc.n, LONG_LIVED);
	assert_int_equal(in_table.n, in_proc.n);
	for (unsigned i = 0; i < in_proc.n; i++) {
		int j = has(&in_table, in_proc.pid[i]);

		assert_true(j);
		assert_string_equal(in_table.comm[j - 1], in_proc.comm[i]);
	}
	/* And what changed while blind was reported as such. */
	for (int i = 0; i < LONG_LIVED / 2; i++) {
		assert_true(has(&c.appeared, during[i]));
		assert_null(cn_proc_tracker_find(t, ended[i]));
		assert_true(has(&c.vanished, ended[i]));
	}
	assert_true(c.vanished.n >= LONG_LIVED / 2);

	for (int i = 0; i < LONG_LIVED; i++)
		if (before[i])
			kill_reap(before[i]);
	for (int i = 0; i < LONG_LIVED / 2; i++)
		kill_reap(during[i]);
	cn_proc_tracker_free(t);
	cn_close(s);
}

/* The parent (PPid) /proc shows for pid. */
static pid_t proc_ppid(pid_t pid)
{
	char path[64], buf[512], *close;
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	close = strrchr(buf, ')');
	assert_non_null(close);
	assert_int_equal(sscanf(close + 2, "%*c %d", &ppid), 1);
	return ppid;
}

/* Apply events to t until the exit of process pid was applied. */
static void apply_until_exit(struct cn_sock *s, struct cn_proc_tracker *t, pid_t pid)
{
	struct pollfd pfd = { .fd = cn_fd(s), .events = POLLIN };
	struct timespec now;
	int64_t deadline;

	clock_gettime(CLOCK_MONOTONIC, &now);
	deadline = now.tv_sec * 1000 + now.tv_nsec / 1000000 + WAIT_MS;
	for (;;) {
		struct cn_proc_event ev;
		int r = cn_proc_recv(s, &ev, CN_RECV_DONTWAIT);

		if (r == -EAGAIN) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec * 1000 + now.tv_nsec / 1000000 >= deadline)
				break;
			poll(&pfd, 1, 50);
			continue;
		}
		if (r == -ENOBUFS) {
			cn_proc_tracker_lost(t);
			continue;
		}
		assert_int_equal(r, 0);
		cn_proc_tracker_event(t, &ev);
		if (ev.what == CN_PROC_EXIT && ev.pid == pid)
			return;
	}
	fail_msg("no exit event of %d within %d ms", (int)pid, WAIT_MS);
}

/* The orphan a test made: killed by the test's teardown, whatever the test's
 * assertions said (a failed one ends the test early). */
static pid_t orphan_pid, orphan_parent_pid;

static int kill_orphan(void **state)
{
	(void)state;
	if (orphan_parent_pid > 0) {
		kill(orphan_parent_pid, SIGKILL);
		host_reap(orphan_parent_pid);
	}
	if (orphan_pid > 0)
		kill(orphan_pid, SIGKILL);
	orphan_parent_pid = orphan_pid = 0;
	while (waitpid(-1, NULL, WNOHANG) > 0) /* this process's, under its subreaper */
		;
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	return 0;
}

/* Fork a child that forks a blocked grandchild and exits; the child is
 * reaped. Returns the grandchild (an orphan now); *child: the child. */
static pid_t make_orphan(pid_t *child)
{
	int fd[2];
	pid_t c = 0;

	assert_int_equal(pipe2(fd, O_CLOEXEC), 0);
	*child = fork();
	assert_true(*child >= 0);
	if (*child == 0) {
		pid_t g = fork();

		if (g == 0) {
			for (;;)
				pause();
		}
		_exit(write(fd[1], &g, sizeof(g)) == sizeof(g) ? 0 : 1);
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], &c, sizeof(c)), sizeof(c));
	close(fd[0]);
	orphan_pid = c;
	assert_int_equal(host_reap(*child), 0);
	return c;
}

/* An orphan's parent in the table, once its parent's exit was applied, is
 * the one /proc shows; returns it. */
static pid_t orphan_parent(void)
{
	struct cn_sock *s = host_open(1 << 20);
	struct cn_proc_tracker *t = cn_proc_tracker_new(NULL);
	const struct cn_proc_entry *e;
	pid_t child, orphan, ppid;

	assert_non_null(t);
	host_keep(t);
	assert_int_equal(cn_proc_listen(s, 0, WAIT_MS), 0);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	orphan = make_orphan(&child);
	apply_until_exit(s, t, child);
	assert_int_equal(cn_proc_tracker_sync_timeout(t), -1); /* repaired by no rescan */
	e = cn_proc_tracker_find(t, orphan);
	assert_non_null(e);
	assert_true(e->flags & CN_PROC_ENTRY_FORK); /* known from its fork, by child */
	ppid = proc_ppid(orphan);
	printf("# orphan %d of %d: /proc's parent %d, the table's %d\n", (int)orphan, (int)child,
	       (int)ppid, (int)e->ppid);
	assert_int_not_equal(ppid, child);
	assert_int_equal(e->ppid, ppid);
	cn_proc_tracker_free(t);
	cn_close(s);
	return ppid;
}

static void test_orphan_gets_init_or_subreaper(void **state)
{
	(void)state;
	orphan_parent(); /* whoever /proc says: init, or a subreaper above this test */
}

static void test_orphan_gets_this_subreaper(void **state)
{
	pid_t ppid;

	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	ppid = orphan_parent();
	assert_int_equal(ppid, getpid());
	kill_orphan(state); /* this process's child now: killed and reaped */
}

/* The multi-threaded parent's side (see make_threaded_orphan). */
struct forker {
	int info;	 /* to the test: the child's pid, then this thread's id */
	int gate_thread; /* read end: end-of-file lets the forking thread exit */
};

static void *fork_and_wait(void *arg)
{
	struct forker *f = arg;
	pid_t ids[2];
	char c;

	ids[0] = fork();
	if (ids[0] == 0) {
		for (;;)
			pause();
	}
	ids[1] = (pid_t)syscall(SYS_gettid);
	if (write(f->info, ids, sizeof(ids)) != sizeof(ids))
		_exit(1);
	while (read(f->gate_thread, &c, 1) > 0)
		;
	/* The last thread: the process exits with status 0, without exit
	 * handlers (LeakSanitizer's would count CMocka's state, reachable only
	 * from the main thread's stack, as lost and change the status). */
	_exit(0);
}

/*
 * A child of this process whose second thread forks a blocked grandchild;
 * its main thread leaves by pthread_exit when gate_main[0] reads
 * end-of-file (this process closes gate_main[1]), its second thread when
 * gate_thread[0] does. Returns the grandchild; *parent: the child, *tid:
 * its second thread.
 */
static pid_t make_threaded_orphan(pid_t *parent, pid_t *tid, const int gate_main[2],
				  const int gate_thread[2])
{
	int info[2];
	pid_t ids[2];

	assert_int_equal(pipe2(info, O_CLOEXEC), 0);
	*parent = fork();
	assert_true(*parent >= 0);
	if (*parent == 0) {
		struct forker f = { .info = info[1], .gate_thread = gate_thread[0] };
		pthread_t th;
		char c;

		close(info[0]);
		close(gate_main[1]);
		close(gate_thread[1]);
		if (pthread_create(&th, NULL, fork_and_wait, &f) != 0)
			_exit(1);
		while (read(gate_main[0], &c, 1) > 0)
			;
		pthread_exit(NULL);
	}
	orphan_parent_pid = *parent;
	close(info[1]);
	assert_int_equal(read(info[0], ids, sizeof(ids)), sizeof(ids));
	close(info[0]);
	orphan_pid = ids[0];
	*tid = ids[1];
	return ids[0];
}

/* The table's parent of pid, which must be /proc's; returns it. */
static pid_t table_ppid(const struct cn_proc_tracker *t, pid_t pid)
{
	const struct cn_proc_entry *e = cn_proc_tracker_find(t, pid);
	pid_t ppid = proc_ppid(pid);

	assert_non_null(e);
	printf("# %d: /proc's parent %d, the table's %d\n", (int)pid, (int)ppid, (int)e->ppid);
	assert_int_equal(e->ppid, ppid);
	return ppid;
}

static void orphan_of_a_thread(unsigned flags)
{
	struct cn_sock *s = host_open(1 << 20);
	struct cn_proc_tracker_opts o = { .sz = sizeof(o), .flags = flags };
	struct cn_proc_tracker *t = cn_proc_tracker_new(&o);
	int gate_main[2], gate_thread[2];
	pid_t parent, tid, orphan;

	assert_non_null(t);
	host_keep(t);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	assert_int_equal(cn_proc_listen(s, 0, WAIT_MS), 0);
	assert_int_equal(cn_proc_tracker_sync(t, NULL, NULL), 0);
	assert_int_equal(pipe2(gate_main, O_CLOEXEC), 0);
	assert_int_equal(pipe2(gate_thread, O_CLOEXEC), 0);
	orphan = make_threaded_orphan(&parent, &tid, gate_main, gate_thread);
	close(gate_main[0]);
	close(gate_thread[0]);

	/* The main thread leaves: the second thread keeps the grandchild. */
	close(gate_main[1]);
	apply_until_exit(s, t, parent);
	assert_int_equal(table_ppid(t, orphan), parent);
	/* Its main thread's exit was applied: the process runs on. */
	assert_non_null(cn_proc_tracker_find(t, parent));
	assert_true(cn_proc_tracker_find(t, parent)->flags & CN_PROC_ENTRY_MAIN_EXITED);

	/* The last thread leaves: the grandchild goes to this subreaper. */
	close(gate_thread[1]);
	apply_until_exit(s, t, tid);
	assert_int_equal(host_reap(parent), 0);
	orphan_parent_pid = 0;
	assert_int_equal(cn_proc_tracker_sync_timeout(t), -1); /* repaired by no rescan */
	assert_int_equal(table_ppid(t, orphan), getpid());
	assert_null(cn_proc_tracker_find(t, parent)); /* gone with its last thread */
	cn_proc_tracker_free(t);
	cn_close(s);
}

static void test_orphan_of_a_thread_gets_this_subreaper(void **state)
{
	(void)state;
	orphan_of_a_thread(0);
}

static void test_orphan_of_a_thread_untracked_threads(void **state)
{
	(void)state;
	orphan_of_a_thread(CN_PROC_TRACKER_NO_THREADS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_equals_proc_after_overrun),
		cmocka_unit_test_teardown(test_orphan_gets_init_or_subreaper, kill_orphan),
		cmocka_unit_test_teardown(test_orphan_gets_this_subreaper, kill_orphan),
		cmocka_unit_test_teardown(test_orphan_of_a_thread_gets_this_subreaper, kill_orphan),
		cmocka_unit_test_teardown(test_orphan_of_a_thread_untracked_threads, kill_orphan),
	};

	host_require_proc_connector();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
