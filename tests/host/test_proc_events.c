/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_proc_events.c - proc connector events from real children, against the
 * running kernel: every expected event arrives with the right ids and codes.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "host_util.h"

#define WAIT_MS 5000

static int exit_with(void *arg)
{
	return (int)(intptr_t)arg;
}

static int exec_true(void *arg)
{
	(void)arg;
	execl("/bin/true", "true", (char *)NULL);
	return 127;
}

static int rename_self(void *arg)
{
	prctl(PR_SET_NAME, (unsigned long)arg, 0, 0, 0);
	return 0;
}

static int change_ids(void *arg)
{
	(void)arg;
	if (setgid(65534) < 0 || setuid(65534) < 0)
		return 1;
	return 0;
}

static int new_session(void *arg)
{
	(void)arg;
	return setsid() < 0;
}

static int wait_for_signal(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static void test_fork_and_exit_codes(void **state)
{
	struct cn_sock *s = host_open(1 << 20);
	struct cn_proc_event ev;
	pid_t child;

	(void)state;
	assert_int_equal(cn_proc_listen(s, 0, WAIT_MS), 0);
	child = host_spawn(exit_with, (void *)(intptr_t)42);
	assert_true(child > 0);
	assert_int_equal(host_reap(child), 42 << 8);

	assert_int_equal(host_wait_event(s, CN_PROC_FORK, child, WAIT_MS, &ev), 0);
	assert_int_equal(ev.pid, child);
	assert_int_equal(ev.parent_tgid, getpid());
	assert_int_equal(ev.parent_pid, getpid());

	assert_int_equal(host_wait_event(s, CN_PROC_EXIT, child, WAIT_MS, &ev), 0);
	assert_int_equal(ev.pid, child);
	assert_true(WIFEXITED((int)ev.exit_code));
	assert_int_equal(WEXITSTATUS((int)ev.exit_code), 42);
	assert_int_equal(ev.exit_signal, SIGCHLD);
	assert_int_equal(ev.parent_tgid, getpid());
	assert_true(ev.timestamp_ns > 0);
	cn_close(s);
}

static void test_killed_child_reports_signal(void **state)
{
	struct cn_sock *s = host_open(1 << 20);
	struct cn_proc_event ev;
	pid_t child;

	(void)state;
	assert_int_equal(cn_proc_listen(s, 0, WAIT_MS), 0);
	child = host_spawn(wait_for_signal, NULL);
	assert_int_equal(kill(child, SIGKILL), 0);
	host_reap(child);
	assert_int_equal(host_wait_event(s, CN_PROC_EXIT, child, WAIT_MS, &ev), 0);
	assert_true(WIFSIGNALED((int)ev.exit_code));
	assert_int_equal(WTERMSIG((int)ev.exit_code), SIGKILL);
	cn_close(s);
}

static void test_exec_comm_ids_sid(void **state)
{
	struct cn_sock *s = host_open(1 << 20);
	struct cn_proc_event ev;
	pid_t child;

	(void)state;
	assert_int_equal(cn_proc_listen(s, 0, WAIT_MS), 0);

	child = host_spawn(exec_true, NULL);
	assert_int_equal(host_reap(child), 0);
	assert_int_equal(host_wait_event(s, CN_PROC_EXEC, child, WAIT_MS, &ev), 0);
	assert_int_equal(ev.pid, child);

	child = host_spawn(rename_self, "libcn-renamed");
	assert_int_equal(host_reap(child), 0);
	assert_int_equal(host_wait_event(s, CN_PROC_COMM, child, WAIT_MS, &ev), 0);
	assert_string_equal(ev.comm, "libcn-renamed");

	child = host_spawn(change_ids, NULL);
	assert_int_equal(host_reap(child), 0);
	assert_int_equal(host_wait_event(s, CN_PROC_GID, child, WAIT_MS, &ev), 0);
	assert_int_equal(ev.ruid, 65534); /* rgid, in the shared field */
	assert_int_equal(ev.euid, 65534);
	assert_int_equal(host_wait_event(s, CN_PROC_UID, child, WAIT_MS, &ev), 0);
	assert_int_equal(ev.ruid, 65534);
	assert_int_equal(ev.euid, 65534);

	child = host_spawn(new_session, NULL);
	assert_int_equal(host_reap(child), 0);
	assert_int_equal(host_wait_event(s, CN_PROC_SID, child, WAIT_MS, &ev), 0);
	assert_int_equal(ev.pid, child);
	cn_close(s);
}

static void test_ptrace_attach_detach(void **state)
{
	struct cn_sock *s = host_open(1 << 20);
	struct cn_proc_event ev;
	pid_t child;
	int status;

	(void)state;
	assert_int_equal(cn_proc_listen(s, 0, WAIT_MS), 0);
	child = host_spawn(wait_for_signal, NULL);
	assert_int_equal(ptrace(PTRACE_ATTACH, child, NULL, NULL), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(host_wait_event(s, CN_PROC_PTRACE, child, WAIT_MS, &ev), 0);
	assert_int_equal(ev.tracer_tgid, getpid());
	assert_int_equal(ptrace(PTRACE_DETACH, child, NULL, NULL), 0);
	assert_int_equal(host_wait_event(s, CN_PROC_PTRACE, child, WAIT_MS, &ev), 0);
	assert_int_equal(ev.tracer_tgid, 0);
	kill(child, SIGKILL);
	host_reap(child);
	cn_close(s);
}

static void test_two_sockets_see_the_same_child(void **state)
{
	struct cn_sock *a = host_open(1 << 20), *b = host_open(1 << 20);
	struct cn_proc_event ea, eb;
	pid_t child;

	(void)state;
	assert_int_equal(cn_proc_listen(a, 0, WAIT_MS), 0);
	assert_int_equal(cn_proc_listen(b, 0, WAIT_MS), 0);
	child = host_spawn(exit_with, (void *)7);
	host_reap(child);
	assert_int_equal(host_wait_event(a, CN_PROC_EXIT, child, WAIT_MS, &ea), 0);
	assert_int_equal(host_wait_event(b, CN_PROC_EXIT, child, WAIT_MS, &eb), 0);
	assert_int_equal(ea.seq, eb.seq);
	assert_int_equal(ea.cpu, eb.cpu);
	assert_int_equal(WEXITSTATUS((int)eb.exit_code), 7);
	cn_close(a);
	cn_close(b);
}

/* Events queued while nobody reads come out of cn_proc_recv_batch several
 * per call, each child's fork and exit whole, nothing lost. */
static void test_batch_reads_queued_events(void **state)
{
	enum { CHILDREN = 20 };
	struct cn_sock *s = host_open(1 << 20);
	struct cn_proc_event ev[64];
	pid_t child[CHILDREN];
	int forks = 0, exits = 0, most = 0, r;
	uint64_t gaps = 0;
	struct cn_proc_stats st;

	(void)state;
	assert_int_equal(cn_proc_listen(s, 0, WAIT_MS), 0);
	for (int i = 0; i < CHILDREN; i++) {
		child[i] = host_spawn(exit_with, (void *)(intptr_t)(i + 1));
		assert_true(child[i] > 0);
		assert_int_equal(host_reap(child[i]), (i + 1) << 8);
	}
	/* A child's exit event is sent after its parent could reap it
	 * (do_exit: exit_notify, then proc_exit_connector): wait for the
	 * last ones, as an event loop would. */
	while (exits < CHILDREN) {
		r = cn_proc_recv_batch(s, ev, 64, CN_RECV_DONTWAIT);
		if (r == -EAGAIN) {
			struct pollfd p = { .fd = cn_fd(s), .events = POLLIN };

			assert_int_equal(cn_pending(s), 0);
			assert_int_equal(poll(&p, 1, WAIT_MS), 1);
			continue;
		}
		assert_true(r >= 1 && r <= 64);
		most = r > most ? r : most;
		for (int k = 0; k < r; k++) {
			gaps += ev[k].lost_before;
			for (int i = 0; i < CHILDREN; i++) {
				if (ev[k].tgid != child[i])
					continue;
				if (ev[k].what == CN_PROC_FORK) {
					assert_int_equal(ev[k].parent_tgid, getpid());
					forks++;
				} else if (ev[k].what == CN_PROC_EXIT) {
					assert_int_equal(WEXITSTATUS((int)ev[k].exit_code), i + 1);
					exits++;
				}
			}
		}
	}
	assert_int_equal(forks, CHILDREN);
	assert_int_equal(exits, CHILDREN);
	assert_true(most > 1); /* 40 events queued: read several at a time */
	assert_int_equal(cn_proc_stats(s, &st), 0);
	assert_int_equal(st.lost, gaps);
	assert_int_equal(st.lost, 0);
	cn_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_and_exit_codes),
		cmocka_unit_test(test_killed_child_reports_signal),
		cmocka_unit_test(test_exec_comm_ids_sid),
		cmocka_unit_test(test_ptrace_attach_detach),
		cmocka_unit_test(test_two_sockets_see_the_same_child),
		cmocka_unit_test(test_batch_reads_queued_events),
	};

	host_require_proc_connector();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
