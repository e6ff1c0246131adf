/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * exits_workload.c - processes whose exits and execs the kernel reports in
 * ways a reader of proc events gets wrong (docs/DESIGN.md, "Process
 * exits"), one after another, each reaped before the next starts:
 *
 *   leader-first  the main thread leaves (pthread_exit), a worker then
 *                 exits 7: the main thread's exit event (0) comes first
 *   thread-exec   a worker execs sh -c 'exit 5' while two threads run:
 *                 their exits (0) and no exit of the exec'ing thread
 *   worker-exit   a worker calls exit(6) (exit_group) while the main
 *                 thread and another block
 *   vfork         a vfork child exits 8, its parent then 9
 *   clone-vm      a clone sharing the memory, not a thread (CLONE_VM
 *                 without CLONE_THREAD), exits 10, its parent then 11
 *   zombie        a child exits 12 and is reaped only once it is a zombie
 *                 (its parent exits 13 after)
 *   subreaper     a child subreaper (PR_SET_CHILD_SUBREAPER, exits 16)
 *                 whose child exits 14 leaving a grandchild, which exits
 *                 15 as the subreaper's and is reaped by it
 *   init-orphan   a child exits 17 leaving a grandchild that exits 18 as
 *                 the child of whatever reaps orphans above (init, or a
 *                 service manager's subreaper)
 *   thread-segv   with CORE_DIR only: a worker dies of SIGSEGV with a core
 *                 dump (RLIMIT_CORE raised, run in CORE_DIR, where a
 *                 relative core_pattern puts the core; the caller empties
 *                 and removes it) while two threads run: only the dumping
 *                 thread's exit carries the core bit
 *
 * Output, after a first line "workload PID", one line per process:
 *
 *   process NAME PID STATUS PPID
 *
 * STATUS: the raw wait status its parent's waitpid saw (for init-orphan's
 * grandchild, whose reaper is not ours to ask, the status it exits with);
 * PPID: its parent when it ended. Then "done", once every process has
 * ended. Each orphan, once it has its new parent, reads a byte from stdin
 * before it exits (end of file will do): a caller can look at it first.
 * Usage: exits_workload [CORE_DIR]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_barrier_t started;

static void die(const char *what)
{
	fprintf(stderr, "exits_workload: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One line, one write: processes of the workload share stdout. */
static void report(const char *name, pid_t pid, int status, pid_t ppid)
{
	dprintf(STDOUT_FILENO, "process %s %d %d %d\n", name, (int)pid, status, (int)ppid);
}

static pid_t reap(pid_t pid, const char *name)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	report(name, pid, status, getpid());
	return pid;
}

/* Task `tid` of this process is a zombie (its exit is sent): 1, else 0. */
static int task_is_zombie(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *close;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 1; /* reaped */
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	close = strrchr(buf, ')');
	return close && close[1] == ' ' && close[2] == 'Z';
}

static void *blocked(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	for (;;)
		pause();
	return NULL;
}

static void *exit_after_main(void *arg)
{
	pid_t main_tid = getpid();

	(void)arg;
	pthread_barrier_wait(&started);
	while (!task_is_zombie(main_tid, main_tid))
		usleep(1000);
	exit(7);
}

static void *exec_sh(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	execl("/bin/sh", "sh", "-c", "exit 5", (char *)NULL);
	_exit(120);
}

static void *segv(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	/* The default action (a core dump), not a sanitizer's handler. */
	signal(SIGSEGV, SIG_DFL);
	raise(SIGSEGV);
	_exit(120);
}

static void *exit_group_6(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	exit(6);
}

/* Start a thread running fn and blocked_ones blocked threads, and wait
 * until all run (fn waits on the barrier too). */
static void start_threads(void *(*fn)(void *), int blocked_ones)
{
	pthread_t th;

	pthread_barrier_init(&started, NULL, (unsigned)blocked_ones + 2);
	if (pthread_create(&th, NULL, fn, NULL) != 0)
		_exit(121);
	for (int i = 0; i < blocked_ones; i++)
		if (pthread_create(&th, NULL, blocked, NULL) != 0)
			_exit(121);
	pthread_barrier_wait(&started);
}

static int clone_fn(void *arg)
{
	(void)arg;
	return 10;
}

static void vfork_child(void)
{
	pid_t c = vfork();

	if (c < 0)
		_exit(122);
	if (c == 0)
		_exit(8);
	reap(c, "vfork-child");
	_exit(9);
}

static void clone_vm_child(void)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	pid_t c = clone(clone_fn, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL);

	if (c < 0)
		_exit(123);
	reap(c, "clone-vm-child");
	_exit(11);
}

static void zombie_child(void)
{
	pid_t c = fork();

	if (c < 0)
		_exit(124);
	if (c == 0)
		_exit(12);
	while (!task_is_zombie(c, c))
		usleep(1000);
	reap(c, "zombie-child");
	_exit(13);
}

/* Fork a child that forks a grandchild and exits `code`; the grandchild
 * waits until it has a new parent, then exits grand_code (reporting it
 * under grand_name, if not NULL). Returns the child's pid. */
static pid_t orphan_maker(int code, int grand_code, const char *grand_name)
{
	pid_t m = fork();

	if (m < 0)
		die("fork");
	if (m == 0) {
		pid_t g = fork();

		if (g < 0)
			_exit(125);
		if (g == 0) {
			char c;

			while (getppid() == m)
				usleep(1000);
			/* Its caller may want to see it alive with its new
			 * parent first: it says so with a byte on stdin. */
			if (read(STDIN_FILENO, &c, 1) < 0)
				_exit(126);
			if (grand_name)
				report(grand_name, getpid(), grand_code << 8, getppid());
			_exit(grand_code);
		}
		_exit(code);
	}
	return m;
}

static void subreaper_child(void)
{
	pid_t m, g;
	int status;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		_exit(126);
	m = orphan_maker(14, 15, NULL);
	reap(m, "subreaper-middle");
	/* The grandchild, ours now. */
	g = waitpid(-1, &status, 0);
	if (g < 0)
		_exit(127);
	report("subreaper-orphan", g, status, getpid());
	_exit(16);
}

static void thread_segv_child(const char *core_dir)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_CORE, &rl) < 0 || chdir(core_dir) < 0)
		_exit(128);
	start_threads(segv, 2);
	for (;;)
		pause();
}

static void run(const char *name, const char *core_dir)
{
	pid_t p;

	p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {
		if (!strcmp(name, "leader-first")) {
			start_threads(exit_after_main, 0);
			pthread_exit(NULL);
		}
		if (!strcmp(name, "thread-exec")) {
			start_threads(exec_sh, 2);
			for (;;)
				pause();
		}
		if (!strcmp(name, "worker-exit")) {
			start_threads(exit_group_6, 1);
			for (;;)
				pause();
		}
		if (!strcmp(name, "vfork"))
			vfork_child();
		if (!strcmp(name, "clone-vm"))
			clone_vm_child();
		if (!strcmp(name, "zombie"))
			zombie_child();
		if (!strcmp(name, "subreaper"))
			subreaper_child();
		if (!strcmp(name, "thread-segv"))
			thread_segv_child(core_dir);
		_exit(119);
	}
	reap(p, name);
}

/* init-orphan: the grandchild's end is known by the end of the pipe it
 * holds (inherited). */
static void init_orphan(void)
{
	int done[2];
	char c;
	pid_t m;

	if (pipe(done) < 0)
		die("pipe");
	m = orphan_maker(17, 18, "init-orphan-child");
	close(done[1]);
	reap(m, "init-orphan");
	if (read(done[0], &c, 1) != 0)
		die("the orphan's pipe");
	close(done[0]);
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "leader-first", "thread-exec", "worker-exit", "vfork",
					     "clone-vm",     "zombie",	    "subreaper" };

	setvbuf(stdout, NULL, _IONBF, 0);
	printf("workload %d\n", (int)getpid());
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		run(names[i], NULL);
	init_orphan();
	if (argc > 1)
		run("thread-segv", argv[1]);
	printf("done\n");
	return 0;
}
