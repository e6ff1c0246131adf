/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_exits.c - one exit per process, with the status its parent's
 * waitpid saw, against the running kernel: the processes of
 * examples/exits_workload.c (a main thread that leaves first, an exec by a
 * thread, exit_group from a worker, vfork, a clone sharing the memory, a
 * zombie reaped late, orphans of a subreaper and of init, a threaded
 * process's core dump where core_pattern keeps cores in the process's
 * directory, which this test empties and removes), with their
 * events given to two trackers, one keeping threads and one counting them
 * (CN_PROC_TRACKER_NO_THREADS).
 *
 * For every process the workload reports, each tracker must return exactly
 * one entry flagged CN_PROC_ENTRY_EXITED, with the workload's wait status
 * and the parent it had at the end; the exec of thread-exec must be the
 * process's, with its real parent. The workload runs exec'd (not a fork of
 * this test): under valgrind it runs natively, threads and clones as the
 * kernel makes them.
 *
 * Usage: test_proc_exits EXITS_WORKLOAD
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "host_util.h"

/* Guards against a hang, not a timing goal. */
#define WAIT_S	  30
#define MAX_PROCS 32
#define TRACKERS  2
#define MAX_SEEN  (1 << 16) /* exits and execs of the whole machine meanwhile */

static const char *workload;

/* A process the workload reported. */
struct proc {
	char name[32];
	pid_t pid, ppid;
	int status;
	int released; /* the byte its orphan waits for is written */
};

/* An EXITED or exec entry a tracker returned. */
struct seen {
	uint32_t what;
	int tracker;
	pid_t pid, ppid;
	int status;
};

static struct proc procs[MAX_PROCS];
static int nprocs, workload_done;
static struct seen seen[MAX_SEEN];
static int nseen;

static void note(int k, const struct cn_proc_event *ev, const struct cn_proc_entry *e)
{
	if (!e || (ev->what != CN_PROC_EXEC &&
		   (ev->what != CN_PROC_EXIT || !(e->flags & CN_PROC_ENTRY_EXITED))))
		return;
	assert_true(nseen < MAX_SEEN);
	seen[nseen++] = (struct seen){ ev->what, k, e->pid, e->ppid, (int)e->status };
}

/* How many entries of `what` tracker k returned for pid; the last in *last. */
static int count_seen(uint32_t what, int k, pid_t pid, const struct seen **last)
{
	int n = 0;

	for (int i = 0; i < nseen; i++)
		if (seen[i].what == what && seen[i].tracker == k && seen[i].pid == pid) {
			n++;
			*last = &seen[i];
		}
	return n;
}

static int exited_in_all(pid_t pid)
{
	const struct seen *last;

	for (int k = 0; k < TRACKERS; k++)
		if (!count_seen(CN_PROC_EXIT, k, pid, &last))
			return 0;
	return 1;
}

/* The orphan of a process that ended waits for a byte: written once both
 * trackers have applied that end (and re-read the orphan's parent). */
static void release_orphans(int go)
{
	for (int i = 0; i < nprocs; i++) {
		struct proc *p = &procs[i];

		if (p->released ||
		    (strcmp(p->name, "subreaper-middle") && strcmp(p->name, "init-orphan")))
			continue;
		if (!exited_in_all(p->pid))
			continue;
		assert_int_equal(write(go, "", 1), 1);
		p->released = 1;
	}
}

static void parse_line(const char *line)
{
	struct proc *p = &procs[nprocs];
	int pid, st, ppid;

	if (!strcmp(line, "done\n"))
		workload_done = 1;
	if (sscanf(line, "process %31s %d %d %d", p->name, &pid, &st, &ppid) != 4)
		return;
	assert_true(nprocs < MAX_PROCS);
	p->pid = pid;
	p->status = st;
	p->ppid = ppid;
	nprocs++;
}

static int all_seen(void)
{
	if (!workload_done)
		return 0;
	for (int i = 0; i < nprocs; i++)
		if (!exited_in_all(procs[i].pid))
			return 0;
	return 1;
}

/* Apply every event to both trackers and read the workload's lines (out,
 * -1 once read to its end), until done() says so. */
static void pump(struct cn_sock *s, struct cn_proc_tracker *t[TRACKERS], FILE *out, int go,
		 int (*done)(void))
{
	time_t end = time(NULL) + WAIT_S;
	struct cn_proc_event ev;
	char line[256];

	while (!done()) {
		struct pollfd pfd[2] = { { .fd = cn_fd(s), .events = POLLIN },
					 { .fd = out ? fileno(out) : -1, .events = POLLIN } };
		int r;

		assert_true(time(NULL) < end);
		if (poll(pfd, 2, 1000) <= 0)
			continue;
		if (pfd[1].revents && out && fgets(line, sizeof(line), out))
			parse_line(line);
		while ((r = cn_proc_recv(s, &ev, CN_RECV_DONTWAIT)) == 0) {
			/* A lost event could be one this test needs: say so. */
			assert_int_equal(ev.lost_before, 0);
			for (int k = 0; k < TRACKERS; k++)
				note(k, &ev, cn_proc_tracker_event(t[k], &ev));
		}
		assert_int_equal(r, -EAGAIN);
		if (go >= 0)
			release_orphans(go);
	}
}

static pid_t sentinel;

static int sentinel_done(void)
{
	return exited_in_all(sentinel);
}

/* A directory for the thread-segv case's core, or NULL (with the reason
 * said) where core_pattern sends cores elsewhere: to a helper that keeps
 * them, or to a directory of the system's. */
static char *core_dir(char *dir)
{
	char pattern[256] = "";
	FILE *f = fopen("/proc/sys/kernel/core_pattern", "r");

	if (f) {
		if (!fgets(pattern, sizeof(pattern), f))
			pattern[0] = 0;
		fclose(f);
	}
	if (!pattern[0] || pattern[0] == '|' || strchr(pattern, '/')) {
		print_message("# core_pattern '%.*s' keeps cores elsewhere: no thread-segv case\n",
			      (int)strcspn(pattern, "\n"), pattern);
		return NULL;
	}
	strcpy(dir, "/tmp/cn-exits.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static char cores_dir[32];

/* Teardown, also after a failed check: the core directory emptied and
 * removed. */
static int remove_cores(void **state)
{
	DIR *d = cores_dir[0] ? opendir(cores_dir) : NULL;
	struct dirent *e;
	int r = 0;

	(void)state;
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			r |= unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	r |= rmdir(cores_dir);
	cores_dir[0] = 0;
	return r;
}

/* Start the workload: its stdout into *out, its stdin from *go. */
static pid_t start_workload(const char *cores, FILE **out, int *go)
{
	int o[2], i[2];
	pid_t w;

	assert_int_equal(pipe(o), 0);
	assert_int_equal(pipe(i), 0);
	w = fork();
	assert_true(w >= 0);
	if (w == 0) {
		dup2(o[1], STDOUT_FILENO);
		dup2(i[0], STDIN_FILENO);
		close(o[0]);
		close(o[1]);
		close(i[0]);
		close(i[1]);
		execl(workload, workload, cores, (char *)NULL);
		_exit(127);
	}
	close(o[1]);
	close(i[0]);
	*go = i[1];
	*out = fdopen(o[0], "r");
	assert_non_null(*out);
	/* Unbuffered: what poll says is readable is all fgets has. */
	setvbuf(*out, NULL, _IONBF, 0);
	return w;
}

static void check(const struct proc *p, int k)
{
	const struct seen *last = NULL;
	int n = count_seen(CN_PROC_EXIT, k, p->pid, &last);

	print_message("# %s %d, tracker %d: %d exit(s), status %d (waitpid %d), parent %d (%d)\n",
		      p->name, (int)p->pid, k, n, last ? last->status : -1, p->status,
		      last ? (int)last->ppid : -1, (int)p->ppid);
	assert_int_equal(n, 1);
	assert_int_equal(last->status, p->status);
	assert_int_equal(last->ppid, p->ppid);
	if (!strcmp(p->name, "thread-exec")) {
		/* Its exec: the process's, with its real parent. */
		assert_int_equal(count_seen(CN_PROC_EXEC, k, p->pid, &last), 1);
		assert_int_equal(last->ppid, p->ppid);
	}
}

static void test_one_exit_per_process(void **state)
{
	struct cn_proc_tracker_opts counted = { .sz = sizeof(counted),
						.flags = CN_PROC_TRACKER_NO_THREADS };
	struct cn_proc_tracker *t[TRACKERS];
	struct cn_sock *s = host_open(16 << 20);
	char *cores = core_dir(cores_dir);
	FILE *out;
	pid_t w;
	int go, status;

	(void)state;
	t[0] = cn_proc_tracker_new(NULL);
	t[1] = cn_proc_tracker_new(&counted);
	assert_non_null(t[0]);
	assert_non_null(t[1]);
	assert_int_equal(cn_proc_listen(s, 0, 1000), 0);
	for (int k = 0; k < TRACKERS; k++)
		assert_true(cn_proc_tracker_sync(t[k], NULL, NULL) >= 0);
	w = start_workload(cores, &out, &go);
	pump(s, t, out, go, all_seen);
	fclose(out);
	close(go);
	assert_int_equal(waitpid(w, &status, 0), w);
	assert_int_equal(status, 0);
	assert_int_equal(nprocs, cores ? 15 : 14);
	/* A second exit of any of them would come before a process forked
	 * now has ended. */
	sentinel = fork();
	if (sentinel == 0)
		_exit(0);
	host_reap(sentinel);
	pump(s, t, NULL, -1, sentinel_done);

	for (int i = 0; i < nprocs; i++)
		for (int k = 0; k < TRACKERS; k++)
			check(&procs[i], k);
	for (int k = 0; k < TRACKERS; k++)
		cn_proc_tracker_free(t[k]);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_one_exit_per_process, remove_cores),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test_proc_exits EXITS_WORKLOAD\n");
		return 2;
	}
	workload = argv[1];
	host_require_proc_connector();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
