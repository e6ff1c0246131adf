/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_cnctl_proc_info.c - `cnctl proc` reads the command lines of a
 * batch's execs before it handles the batch's events
 * (tools/cnctl/proc_info.c, proc_info_prefetch): an exec is named by what
 * /proc said when the batch came in, even when the process is gone by the
 * time its event is handled; an exec that a later exec or the exit of the
 * same process follows in the batch is named by nothing rather than by
 * another program's command line. What is known of a process lives in its
 * tracker entry (cn_proc_tracker_data): a fork's child shares its parent's
 * command line, and lets it go when the tracker ends its entry. The
 * processes are real children, their command lines read from the real
 * /proc.
 */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proc.h"

static const struct proc_opts opts;

/* A child running `sleep 60 TAG` (TAG: a fraction of a second more, telling the
 * children apart), its command line in /proc once this returns. */
static pid_t start_sleeper(const char *tag)
{
	char path[64], buf[128];
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("sleep", "sleep", "60", tag, (char *)NULL);
		_exit(127);
	}
	/* Until the exec, /proc shows this test's command line. */
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	for (int i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "re");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = '\0';
		if (n > 0 && strcmp(buf, "sleep") == 0)
			return pid;
		usleep(1000);
	}
	fail_msg("child %d did not exec sleep", (int)pid);
	return -1;
}

/* End pid and reap it: /proc/pid is gone. */
static void end(pid_t pid)
{
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static struct cn_proc_event exec_of(pid_t pid)
{
	return (struct cn_proc_event){ .what = CN_PROC_EXEC, .pid = pid, .tgid = pid };
}

static struct cn_proc_event exit_of(pid_t pid, pid_t tid)
{
	return (struct cn_proc_event){ .what = CN_PROC_EXIT, .pid = tid, .tgid = pid };
}

static void setup_state(struct proc_state *st)
{
	*st = (struct proc_state){ .o = &opts };
	assert_int_equal(proc_info_init(st, 0), 0);
	assert_non_null(st->t);
}

/* The command line a handled exec left in the table ("" for none). */
static const char *cmdline_after(struct proc_state *st, const struct cn_proc_event *ev)
{
	struct proc_info *p = proc_info_event(st, ev, cn_proc_tracker_event(st->t, ev));

	assert_non_null(p);
	assert_true(p->flags & PROC_INFO_CMD_TRIED);
	return p->cmd ? p->cmd->text : "";
}

static void exec_named_though_gone_when_handled(void **state)
{
	struct proc_state st;
	pid_t pid = start_sleeper("0.1");
	struct cn_proc_event ev[2] = { { .what = CN_PROC_FORK }, exec_of(pid) };

	(void)state;
	setup_state(&st);
	proc_info_prefetch(&st, ev, 2);
	end(pid); /* gone before the batch's exec is handled */
	assert_memory_equal(cmdline_after(&st, &ev[1]),
			    "sleep\0"
			    "60\0"
			    "0.1",
			    13);
	proc_info_free(&st);
}

static void exec_outside_the_batch_read_when_handled(void **state)
{
	struct proc_state st;
	pid_t pid = start_sleeper("0.2");
	struct cn_proc_event batch[1] = { { .what = CN_PROC_FORK } }, ev = exec_of(pid);

	(void)state;
	setup_state(&st);
	proc_info_prefetch(&st, batch, 1);
	/* Not one of the batch's events: read now, while it lives. */
	assert_memory_equal(cmdline_after(&st, &ev),
			    "sleep\0"
			    "60\0"
			    "0.2",
			    13);
	end(pid);
	proc_info_free(&st);
}

static void exec_followed_by_another_exec_unnamed(void **state)
{
	struct proc_state st;
	pid_t pid = start_sleeper("0.3");
	struct cn_proc_event ev[2] = { exec_of(pid), exec_of(pid) };

	(void)state;
	setup_state(&st);
	proc_info_prefetch(&st, ev, 2);
	end(pid);
	/* /proc shows the second program: the first exec is not given it. */
	assert_string_equal(cmdline_after(&st, &ev[0]), "");
	assert_memory_equal(cmdline_after(&st, &ev[1]),
			    "sleep\0"
			    "60\0"
			    "0.3",
			    13);
	proc_info_free(&st);
}

static void exec_followed_by_its_exit_unnamed(void **state)
{
	struct proc_state st;
	pid_t pid = start_sleeper("0.4");
	/* A thread's exit does not end the process; its main thread's does. */
	struct cn_proc_event ev[4] = { exec_of(pid), exit_of(pid, pid + 1), exec_of(pid),
				       exit_of(pid, pid) };

	(void)state;
	setup_state(&st);
	proc_info_prefetch(&st, ev, 4);
	end(pid);
	assert_string_equal(cmdline_after(&st, &ev[0]), "");
	assert_string_equal(cmdline_after(&st, &ev[2]), "");
	proc_info_free(&st);
}

/* What a batch read and no exec took is released by the next batch and at
 * the end: the test holds a reference of its own to each batch's command
 * line and sees the batch's reference go. */
static void unused_prefetch_released(void **state)
{
	struct proc_state st;
	pid_t pid = start_sleeper("0.5");
	struct cn_proc_event ev[1] = { exec_of(pid) };
	struct proc_cmdline *first, *second;

	(void)state;
	setup_state(&st);
	proc_info_prefetch(&st, ev, 1);
	first = st.info.pre.cmd[0];
	assert_non_null(first);
	first->refs++;
	proc_info_prefetch(&st, ev, 1);
	assert_int_equal(first->refs, 1);
	second = st.info.pre.cmd[0];
	assert_non_null(second);
	second->refs++;
	end(pid);
	proc_info_free(&st);
	assert_int_equal(second->refs, 1);
	free(first);
	free(second);
}

/* A fork's child runs its parent's command line: shared (one more
 * reference), and let go when the tracker ends the child's entry, at the
 * tracker's next change after the exit that ended it. */
static void child_shares_and_ends_with_its_entry(void **state)
{
	struct proc_state st;
	pid_t pid = start_sleeper("0.6");
	/* A child pid no task has (above any pid_max). */
	pid_t child = 4194304 + 1;
	struct cn_proc_event ev = exec_of(pid);
	struct proc_cmdline *cmd;
	struct proc_info *p;

	(void)state;
	setup_state(&st);
	assert_memory_equal(cmdline_after(&st, &ev),
			    "sleep\0"
			    "60\0"
			    "0.6",
			    13);
	cmd = proc_info_find(&st, pid)->cmd;
	assert_non_null(cmd);
	assert_int_equal(cmd->refs, 1);
	ev = (struct cn_proc_event){ .what = CN_PROC_FORK,
				     .pid = child,
				     .tgid = child,
				     .parent_pid = pid,
				     .parent_tgid = pid };
	p = proc_info_event(&st, &ev, cn_proc_tracker_event(st.t, &ev));
	assert_non_null(p);
	assert_ptr_equal(p->cmd, cmd);
	assert_int_equal(cmd->refs, 2);
	ev = exit_of(child, child);
	p = proc_info_event(&st, &ev, cn_proc_tracker_event(st.t, &ev));
	assert_non_null(p); /* the exit's: still there while it is printed */
	assert_ptr_equal(p->cmd, cmd);
	assert_ptr_equal(proc_info_find(&st, child), p);
	proc_info_exited(&st, p);
	assert_null(proc_info_find(&st, child));
	assert_int_equal(cmd->refs, 2);
	ev = (struct cn_proc_event){ .what = CN_PROC_UID, .pid = pid, .tgid = pid };
	proc_info_event(&st, &ev, cn_proc_tracker_event(st.t, &ev));
	assert_int_equal(cmd->refs, 1); /* the child's entry ended */
	end(pid);
	proc_info_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exec_named_though_gone_when_handled),
		cmocka_unit_test(exec_outside_the_batch_read_when_handled),
		cmocka_unit_test(exec_followed_by_another_exec_unnamed),
		cmocka_unit_test(exec_followed_by_its_exit_unnamed),
		cmocka_unit_test(unused_prefetch_released),
		cmocka_unit_test(child_shares_and_ends_with_its_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
