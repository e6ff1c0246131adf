/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workload.c - the known workload the proc examples are checked against:
 * one child after another, each reaped before the next starts,
 *
 *   exit3    exits with status 3
 *   sigkill  killed by SIGKILL
 *   segv     killed by SIGSEGV with a core dump: RLIMIT_CORE raised, run in
 *            CORE_DIR (where a relative core_pattern puts the core; the
 *            caller empties and removes it)
 *   threads  a process of 3 threads: the main thread starts 2 that block,
 *            then exits with status 4 (exit_group ends all three)
 *
 * and prints, for each, what its parent's waitpid saw:
 *
 *   child NAME PID STATUS [TID TID]    (STATUS: the raw wait status, decimal)
 *
 * after a first line "workload PID", then "done". Usage: workload CORE_DIR [segv]  (without "segv": no core
 * dump is made; the caller says why).
 *
 * workload orphans: leaves two orphans behind, each blocked until killed,
 * and prints their pids: a child subreaper S (PR_SET_CHILD_SUBREAPER) whose
 * child forked C1 and exited, so that S is C1's parent now; and C2, whose
 * parent exited with no subreaper above it but whatever this workload's
 * caller has (init, or a service manager's subreaper):
 *
 *   subreaper S
 *   orphan-of-subreaper C1 P1
 *   orphan C2 P2
 *
 * (P1, P2: the exited parents).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int tid_pipe[2];
static pthread_barrier_t started;

static void die(const char *what)
{
	fprintf(stderr, "workload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *blocked_thread(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	(void)arg;
	if (write(tid_pipe[1], &tid, sizeof(tid)) != sizeof(tid))
		_exit(100);
	pthread_barrier_wait(&started);
	for (;;)
		pause();
	return NULL;
}

static void threads_child(void)
{
	pthread_t th;

	pthread_barrier_init(&started, NULL, 3);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th, NULL, blocked_thread, NULL) != 0)
			_exit(101);
	/* Both threads run (their tids are in the pipe): end all three. */
	pthread_barrier_wait(&started);
	exit(4);
}

static void segv_child(const char *core_dir)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_CORE, &rl) < 0 || chdir(core_dir) < 0)
		_exit(102);
	/* The default action (a core dump), not a sanitizer's handler: ASan's
	 * would turn it into an abort. */
	signal(SIGSEGV, SIG_DFL);
	raise(SIGSEGV);
	_exit(103);
}

static void run(const char *name, const char *core_dir)
{
	pid_t tids[2] = { 0, 0 };
	int status;
	pid_t p;

	if (!strcmp(name, "threads") && pipe(tid_pipe) < 0)
		die("pipe");
	fflush(stdout);
	p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {
		if (!strcmp(name, "exit3"))
			_exit(3);
		if (!strcmp(name, "sigkill"))
			raise(SIGKILL);
		if (!strcmp(name, "segv"))
			segv_child(core_dir);
		if (!strcmp(name, "threads"))
			threads_child();
		_exit(104);
	}
	if (!strcmp(name, "threads")) {
		close(tid_pipe[1]);
		for (int i = 0; i < 2; i++)
			if (read(tid_pipe[0], &tids[i], sizeof(tids[i])) != sizeof(tids[i]))
				die("reading the threads' ids");
		close(tid_pipe[0]);
	}
	if (waitpid(p, &status, 0) != p)
		die("waitpid");
	printf("child %s %d %d", name, (int)p, status);
	if (tids[0])
		printf(" %d %d", (int)tids[0], (int)tids[1]);
	printf("\n");
}

/* Fork a child that blocks until killed; its pid. */
static pid_t blocked_child(void)
{
	pid_t p = fork();

	if (p < 0)
		die("fork");
	if (p == 0) {
		for (;;)
			pause();
	}
	return p;
}

/* Fork a child that forks a blocked grandchild, prints "LABEL GRANDCHILD
 * CHILD" and exits; reap the child. The grandchild is an orphan then. */
static void orphan(const char *label)
{
	int status;
	pid_t p;

	fflush(stdout);
	p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {
		printf("%s %d %d\n", label, (int)blocked_child(), (int)getpid());
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(p, &status, 0) != p)
		die("waitpid");
}

static int orphans(void)
{
	int ready[2];
	pid_t s;
	char c;

	if (pipe(ready) < 0)
		die("pipe");
	fflush(stdout);
	s = fork();
	if (s < 0)
		die("fork");
	if (s == 0) {
		close(ready[0]);
		if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
			die("prctl(PR_SET_CHILD_SUBREAPER)");
		printf("subreaper %d\n", (int)getpid());
		orphan("orphan-of-subreaper");
		/* A byte, not end of file: the orphan holds the pipe open too. */
		if (write(ready[1], "", 1) != 1)
			die("write");
		fclose(stdout);
		for (;;)
			pause(); /* its orphan is never reaped: it blocks too */
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) /* the subreaper's orphan is made */
		die("the subreaper's pipe");
	orphan("orphan");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "orphans"))
		return orphans();
	if (argc < 2) {
		fprintf(stderr, "usage: workload CORE_DIR [segv]\n");
		return 2;
	}
	printf("workload %d\n", (int)getpid());
	run("exit3", argv[1]);
	run("sigkill", argv[1]);
	if (argc > 2 && !strcmp(argv[2], "segv"))
		run("segv", argv[1]);
	run("threads", argv[1]);
	printf("done\n");
	return 0;
}
