/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_cnctl_proc_exit.c - what `cnctl proc` derives from an exit event's
 * raw wait status (tools/cnctl/proc_exit.c): the exit code a shell's $?
 * and ECS's process.exit_code give (3 for `exit 3`, 128 + the signal for a
 * killed task), the killing signal (not the signal sent to the parent),
 * and a core dump.
 */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proc.h"

static void exited(void **state)
{
	struct proc_exit x;

	(void)state;
	proc_exit_decode(3 << 8, &x); /* exit 3: the status waitpid gives is 768 */
	assert_int_equal(x.how, PROC_EXIT_EXITED);
	assert_int_equal(x.code, 3);
	assert_int_equal(x.signal, 0);
	proc_exit_decode(0, &x);
	assert_int_equal(x.how, PROC_EXIT_EXITED);
	assert_int_equal(x.code, 0);
}

static void killed(void **state)
{
	struct proc_exit x;
	char buf[24];

	(void)state;
	proc_exit_decode(SIGKILL, &x);
	assert_int_equal(x.how, PROC_EXIT_KILLED);
	assert_int_equal(x.code, 137);
	assert_int_equal(x.signal, SIGKILL);
	assert_false(x.core_dumped);
	assert_string_equal(proc_signal_name(x.signal, buf, sizeof(buf)), "SIGKILL");
	proc_exit_decode(0x80 | SIGSEGV, &x); /* killed, core dumped */
	assert_int_equal(x.how, PROC_EXIT_KILLED);
	assert_int_equal(x.code, 128 + SIGSEGV);
	assert_true(x.core_dumped);
}

/* Neither exited nor killed (a stop status): no exit code is made up. */
static void unknown(void **state)
{
	struct proc_exit x;
	char buf[24];

	(void)state;
	proc_exit_decode(0x7f | (SIGSTOP << 8), &x);
	assert_int_equal(x.how, PROC_EXIT_UNKNOWN);
	assert_int_equal(x.code, -1);
	assert_string_equal(proc_signal_name(100, buf, sizeof(buf)), "100");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exited),
		cmocka_unit_test(killed),
		cmocka_unit_test(unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
