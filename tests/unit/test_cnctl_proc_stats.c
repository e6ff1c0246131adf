/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_cnctl_proc_stats.c - what `cnctl proc` says a resync found
 * (tools/cnctl/proc_stats.c): the tasks that appeared and vanished during
 * that resync, counted from the moment it began, never a count from before
 * it, nor a wrapped-around one when an exit takes back a task an earlier
 * resync reported vanished; and the per-command table (--stats): a row per
 * command, found by its name, up to the bound, the rest as "(other)".
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proc.h"

/* proc_json.c's and receive_loop.c's (with what they need), which the
 * calls tested here do not reach: no --json, no loss report. */
void proc_record_head(FILE *f, struct proc_state *st, const char *type, const char *message)
{
	(void)st;
	(void)message;
	fprintf(f, "{\"type\":\"%s\"", type);
}

void proc_record_end(FILE *f, const struct proc_state *st)
{
	(void)st;
	fputs("}\n", f);
}

int64_t cnctl_now_ms(void)
{
	return 0;
}

static const struct proc_opts opts;

/* Run a resync in which `appeared` tasks appear and `vanished` vanish;
 * returns the message it printed on stderr (static). */
static const char *resync(struct proc_state *st, int appeared, int vanished)
{
	static char msg[512];
	struct cn_proc_entry e = { .pid = 42, .tgid = 42, .comm = "sleep" };
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	assert_non_null(f);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fileno(f), STDERR_FILENO), STDERR_FILENO);
	proc_loss_resyncing(st);
	for (int i = 0; i < appeared; i++)
		proc_stats_appeared(st);
	for (int i = 0; i < vanished; i++)
		proc_stats_vanished(st, &e, 1);
	proc_loss_resynced(st);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(msg, 1, sizeof(msg) - 1, f);
	msg[n] = '\0';
	fclose(f);
	return msg;
}

static void test_counts_per_resync(void **state)
{
	struct proc_state st = { .o = &opts };
	struct cn_proc_entry e = { .pid = 42, .tgid = 42, .comm = "sleep" };

	(void)state;
	assert_int_equal(proc_stats_init(&st), 0);
	assert_string_equal(resync(&st, 2, 3),
			    "cnctl: resynchronized with /proc after lost events: 2 tasks appeared, "
			    "3 vanished unseen\n");
	/* Two of the vanished tasks' exits come after all (they ended during
	 * the scan): the next resync found nothing, and says so. */
	proc_stats_unvanished(&st, &e, 1);
	proc_stats_unvanished(&st, &e, 1);
	assert_string_equal(resync(&st, 0, 0),
			    "cnctl: resynchronized with /proc after lost events: 0 tasks appeared, "
			    "0 vanished unseen\n");
	/* Between resyncs: an appearance counted outside a resync is not the
	 * next one's. */
	proc_stats_appeared(&st);
	assert_string_equal(resync(&st, 1, 1),
			    "cnctl: resynchronized with /proc after lost events: 1 tasks appeared, "
			    "1 vanished unseen (further resyncs: in the summary)\n");
	assert_int_equal(st.loss.resyncs, 3);
	assert_int_equal(st.loss.appeared, 4);
	assert_int_equal(st.loss.vanished, 2);
	proc_stats_free(&st);
}

static void count(struct proc_state *st, uint32_t what, const char *comm, uint32_t code)
{
	struct cn_proc_event ev = { .what = what, .pid = 7, .tgid = 7, .exit_code = code };
	struct cn_proc_entry e = { .pid = 7, .tgid = 7, .flags = CN_PROC_ENTRY_EXITED };

	snprintf(e.comm, sizeof(e.comm), "%s", comm);
	proc_stats_event(st, &ev, &e);
}

static void test_rows_by_command(void **state)
{
	struct proc_state st = { .o = &opts };
	char *out = NULL, name[16];
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(proc_stats_init(&st), 0);
	count(&st, CN_PROC_FORK, "sh", 0);
	count(&st, CN_PROC_EXEC, "ls", 0);
	count(&st, CN_PROC_EXEC, "sh", 0);
	count(&st, CN_PROC_EXIT, "sh", 1 << 8);
	count(&st, CN_PROC_EXIT, "ls", 0);
	/* 4094 more commands fill the table's 4096 rows; two beyond it. */
	for (int i = 0; i < 4094; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		count(&st, CN_PROC_EXEC, name, 0);
	}
	count(&st, CN_PROC_EXEC, "beyond1", 0);
	count(&st, CN_PROC_EXEC, "beyond2", 0);
	count(&st, CN_PROC_EXEC, "c17", 0); /* has its row */
	f = open_memstream(&out, &len);
	assert_non_null(f);
	proc_stats_print(f, &st);
	fclose(f);
	assert_non_null(
	    strstr(out, "\n       1        0        1        1        1        0  sh\n"));
	assert_non_null(
	    strstr(out, "\n       0        0        1        1        0        0  ls\n"));
	assert_non_null(
	    strstr(out, "\n       0        0        2        0        0        0  c17\n"));
	assert_non_null(
	    strstr(out, "\n       0        0        2        0        0        0  (other)\n"));
	assert_null(strstr(out, "beyond"));
	assert_non_null(
	    strstr(out, "\n       1        0     4099        2        1        0  (total)\n"));
	free(out);
	proc_stats_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_per_resync),
		cmocka_unit_test(test_rows_by_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
