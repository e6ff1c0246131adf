/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * storm.c - cnb-storm: a bounded fork/exec/exit storm with a known number of
 * events, bracketed by COMM events that listeners recognise (bench.h).
 *
 *   cnb-storm -n CHILDREN [-e EXEC_EVERY] [-p IN_FLIGHT] [-x PROGRAM] [-r RATE]
 *
 * Forks CHILDREN children, keeping up to IN_FLIGHT alive at once so they run
 * on every CPU; every EXEC_EVERY-th child execs this program again (whose
 * comm stays "cnb-storm") before exiting, or with -x PROGRAM execs PROGRAM
 * with one argument naming it, "cnb-x-I" (I: the child's number), which a
 * listener's exec line shows if it read the command line in time (e.g.
 * /bin/true, as a build's short commands). -r: at most RATE children a
 * second (a storm slowed for the slowest listener). Prints what it generated:
 * forks, execs and exits of its children (2 or 3 proc events each).
 * Its own exit is not counted (it comes after the end marker).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "bench.h"

static void set_comm(const char *name)
{
	if (prctl(PR_SET_NAME, name, 0, 0, 0) < 0)
		cnb_die("prctl(PR_SET_NAME)");
}

int main(int argc, char **argv)
{
	long children = 1000, exec_every = 0, inflight = 0, alive = 0, execs = 0, failed = 0;
	const char *program = NULL;
	double rate = 0;
	int opt;
	double t0;

	if (argc == 2 && !strcmp(argv[1], "--exec-child"))
		return 0;
	while ((opt = getopt(argc, argv, "n:e:p:x:r:")) != -1) {
		switch (opt) {
		case 'n':
			children = atol(optarg);
			break;
		case 'e':
			exec_every = atol(optarg);
			break;
		case 'p':
			inflight = atol(optarg);
			break;
		case 'x':
			program = optarg;
			break;
		case 'r':
			rate = atof(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: cnb-storm -n children [-e exec_every] [-p in_flight] "
				"[-x program] [-r children_per_s]\n");
			return 2;
		}
	}
	if (children < 1 || children > 1000000)
		children = 1000;
	if (inflight < 1)
		inflight = 2 * sysconf(_SC_NPROCESSORS_ONLN);

	set_comm(CNB_START);
	t0 = cnb_now();
	for (long i = 0; i < children; i++) {
		int do_exec = exec_every > 0 && i % exec_every == 0;
		pid_t p;

		while (alive >= inflight) {
			int st;

			if (wait(&st) > 0)
				alive--;
			else
				cnb_die("wait");
		}
		if (rate > 0) {
			double due = t0 + (double)i / rate - cnb_now();

			if (due > 0)
				usleep((useconds_t)(due * 1e6));
		}
		p = fork();
		if (p < 0)
			cnb_die("fork");
		if (p == 0) {
			if (do_exec && program) {
				char mark[32];

				snprintf(mark, sizeof(mark), "cnb-x-%ld", i);
				execl(program, program, mark, (char *)NULL);
				_exit(127);
			}
			if (do_exec) {
				execl("/proc/self/exe", CNB_START, "--exec-child", (char *)NULL);
				_exit(127);
			}
			_exit(0);
		}
		alive++;
		execs += do_exec;
	}
	while (alive > 0) {
		int st;

		if (wait(&st) < 0)
			cnb_die("wait");
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
		alive--;
	}
	double secs = cnb_now() - t0;

	/* The kernel sends a child's exit event after the child became
	 * reapable (do_exit calls proc_exit_connector after exit_notify), so
	 * the last exits may still be on their way: give them 200 ms before
	 * the end marker. */
	usleep(200 * 1000);
	set_comm(CNB_END);
	printf("storm children=%ld forks=%ld execs=%ld exits=%ld failed=%ld secs=%.3f "
	       "events_per_s=%.0f\n",
	       children, children, execs, children, failed, secs,
	       (double)(2 * children + execs) / secs);
	return 0;
}
