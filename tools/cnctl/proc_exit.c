/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_exit.c - what an exit event's raw wait status says, in the terms
 * every output uses: the exit code as a shell and the log conventions
 * (ECS process.exit_code, OpenTelemetry process.exit.code) give it, and the
 * signal that killed the task. Derived from the status alone, so it holds
 * for whichever exit (a thread's, a process's last) the event reports.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "proc.h"

void proc_exit_decode(uint32_t wait_status, struct proc_exit *x)
{
	int status = (int)wait_status;

	memset(x, 0, sizeof(*x));
	if (WIFEXITED(status)) {
		x->how = PROC_EXIT_EXITED;
		x->code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		x->how = PROC_EXIT_KILLED;
		x->signal = WTERMSIG(status);
		x->code = 128 + x->signal; /* as a shell's $? says it */
		x->core_dumped = WCOREDUMP(status) ? 1 : 0;
	} else {
		x->how = PROC_EXIT_UNKNOWN;
		x->code = -1;
	}
}

const char *proc_signal_name(int sig, char *buf, size_t size)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, size, "SIG%s", abbrev);
	else
		snprintf(buf, size, "%d", sig);
	return buf;
}
