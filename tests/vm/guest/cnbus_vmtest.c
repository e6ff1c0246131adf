// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cnbus_vmtest.c - the guest's test program: the table of tests of kmod
 * (cnbus.ko, cnbus_test.ko) through libcn, run as root inside the VM
 * (tests/vm/run-vm-tests.sh), and main(). The tests are in files by what
 * they test (vmtest.h lists them); what they share is in vmtest.c.
 *
 * Expects cnbus.ko loaded; loads and unloads cnbus_test.ko itself (path in
 * argv[1]); the last test (unload_cnbus_in_flight) unloads cnbus.ko too.
 * Prints TAP-like lines ("ok N name", "not ok N name") and a final
 * "VMTEST-SUMMARY pass=P fail=F skip=S" line; exits 0 only if nothing failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libcn.h>

#include "kstat.h"
#include "vmtest.h"

const char *test_ko;
int unit;
int ncpus;
int ncpu_ids;
static int npass, nfail, nskip, ntest;
unsigned int burst_n = 50000;
unsigned int echo_n = 5000;
unsigned int fault_n = 20000;
unsigned int fault_seed = 20260703;

static void run(const char *name, int (*fn)(void), int argc, char **argv)
{
	double t0 = now_s();
	int i, r, selected = argc <= 2;

	for (i = 2; i < argc; i++)
		if (!strcmp(argv[i], name))
			selected = 1;
	if (!selected)
		return;
	ntest++;
	printf("# --- %s\n", name);
	fflush(stdout);
	r = fn();
	if (r == 77) {
		nskip++;
		printf("ok %d %s # SKIP\n", ntest, name);
	} else if (r) {
		nfail++;
		printf("not ok %d %s (%.1f s)\n", ntest, name, now_s() - t0);
	} else {
		npass++;
		printf("ok %d %s (%.1f s)\n", ntest, name, now_s() - t0);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct kstat ks;
	const char *e;
	int r;

	/* kproc.c's children: exec'd, gone at once. */
	if ((argc >= 2 && !strcmp(argv[1], KPROC_CHILD)) || getenv(KPROC_CHILD_ENV))
		return KPROC_CHILD_EXIT;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: %s /path/cnbus_test.ko [test...]\n", argv[0]);
		return 2;
	}
	test_ko = argv[1];
	if ((e = getenv("CNBUS_BURST")))
		burst_n = (unsigned int)strtoul(e, NULL, 0);
	if ((e = getenv("CNBUS_ECHO")))
		echo_n = (unsigned int)strtoul(e, NULL, 0);
	if ((e = getenv("CNBUS_FAULT")))
		fault_n = (unsigned int)strtoul(e, NULL, 0);
	if ((e = getenv("CNBUS_FAULT_SEED")))
		fault_seed = (unsigned int)strtoul(e, NULL, 0);
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	ncpu_ids = possible_cpu_ids();

	/* Discovery: the unit comes from the generic netlink family. */
	r = kstat_get(&ks);
	if (r) {
		printf("Bail out! cnbus generic netlink family not found (%d)\n", r);
		return 1;
	}
	unit = (int)ks.unit;
	r = reload_test_module("period_ms=10");
	if (r) {
		printf("Bail out! cannot load %s: %s\n", test_ko, strerror(-r));
		return 1;
	}

	run("kmod_info", t_kmod_info, argc, argv);
	run("echo", t_echo, argc, argv);
	run("example_module", t_example_module, argc, argv);
	run("group_two_subscribers", t_group_two_subscribers, argc, argv);
	run("unknown_id_refused", t_unknown_id_refused, argc, argv);
	run("echo_concurrent", t_echo_concurrent, argc, argv);
	run("send_ack", t_send_ack, argc, argv);
	run("multi_message_datagram", t_multi_message_datagram, argc, argv);
	run("malformed_blaster", t_malformed_blaster, argc, argv);
	run("cbus_timer_order", t_cbus_timer_order, argc, argv);
	run("notify_add_remove", t_notify_add_remove, argc, argv);
	run("notify_unprivileged", t_notify_unprivileged, argc, argv);
	run("notify_bound", t_notify_bound, argc, argv);
	if (!module_loaded("cnbus_test") || argc > 2)
		reload_test_module("period_ms=0");
	run("cbus_burst_process", t_cbus_burst_process, argc, argv);
	run("cbus_burst_hardirq", t_cbus_burst_hardirq, argc, argv);
	run("cbus_ring_overflow_order", t_cbus_ring_overflow_order, argc, argv);
	run("cbus_budget_refused", t_cbus_budget_refused, argc, argv);
	run("cbus_mixed_sizes", t_cbus_mixed_sizes, argc, argv);
	run("cbus_overrun_reported", t_cbus_overrun_reported, argc, argv);
	run("cbus_hotplug", t_cbus_hotplug, argc, argv);
	run("param_write_refused", t_param_write_refused, argc, argv);
	/* proc_listeners.c; proc_events last (it leaves a listener count
	 * behind on 6.1, see there) */
	run("proc_ignore_unlistened", t_proc_ignore_unlistened, argc, argv);
	run("proc_listener_exit", t_proc_listener_exit, argc, argv);
	run("proc_unprivileged", t_proc_unprivileged, argc, argv);
	run("proc_events", t_proc_events, argc, argv);
	/* kproc.c: cnbus_proc.ko, unloaded again by each test */
	run("kproc_storm", t_kproc_storm, argc, argv);
	run("kproc_idle", t_kproc_idle, argc, argv);
	run("kproc_unprivileged_join", t_kproc_unprivileged_join, argc, argv);
	run("kproc_join_then_drop", t_kproc_join_then_drop, argc, argv);
	run("kproc_argv_edges", t_kproc_argv_edges, argc, argv);
	run("kproc_unload_storm", t_kproc_unload_storm, argc, argv);
	run("kproc_overrun_exact", t_kproc_overrun_exact, argc, argv);
	run("kproc_cpu_offline", t_kproc_cpu_offline, argc, argv);
	run("kproc_ring_refused", t_kproc_ring_refused, argc, argv);
	run("fault_blaster", t_fault_blaster, argc, argv);
	run("fault_blaster_nobody", t_fault_blaster_nobody, argc, argv);
	/* hostile.c */
	run("counters_add_up", t_hostile_counters_add_up, argc, argv);
	run("notify_flood", t_hostile_notify_flood, argc, argv);
	run("stalled_receiver", t_hostile_stalled_receiver, argc, argv);
	run("unit_refused", t_hostile_unit_refused, argc, argv);
	run("burst_unbounded", t_hostile_burst_unbounded, argc, argv);
	run("unload_in_flight", t_unload_in_flight, argc, argv);
	run("unload_cnbus_in_flight", t_unload_cnbus_in_flight, argc, argv);

	printf("VMTEST-SUMMARY pass=%d fail=%d skip=%d\n", npass, nfail, nskip);
	return nfail ? 1 : 0;
}
