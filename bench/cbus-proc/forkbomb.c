/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * forkbomb.c - cbp-forkbomb: the seeds' CBUS benchmark, a fork bomb on
 * every CPU (bench/cbus-proc/run). WORKERS processes each fork a child
 * that exits at once and reap it, again and again, for SECONDS; every fork
 * makes a fork and an exit event (no exec: the producer's and the proc
 * connector's cost per event is what is measured, not exec's).
 *
 *   cbp-forkbomb WORKERS SECONDS
 *
 * Prints "forkbomb workers=W forks=N secs=S forks_per_s=R": forks of all
 * workers over the wall clock from the start to the last worker's end.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int workers = argc > 1 ? atoi(argv[1]) : 2;
	double secs = argc > 2 ? atof(argv[2]) : 5, t0, t1;
	/* Each worker's count, shared (the workers are processes: a fork bomb
	 * forks from many processes, not from the threads of one). */
	long *forks = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long total = 0;

	if (workers < 1 || workers > 64 || secs <= 0 || forks == MAP_FAILED) {
		fprintf(stderr, "usage: cbp-forkbomb WORKERS(1-64) SECONDS\n");
		return 2;
	}
	t0 = now_s();
	for (int w = 0; w < workers; w++) {
		pid_t p = fork();

		if (p < 0) {
			perror("fork");
			return 1;
		}
		if (p == 0) {
			long n = 0;

			while (now_s() - t0 < secs) {
				pid_t c = fork();

				if (c == 0)
					_exit(0);
				if (c < 0 || waitpid(c, NULL, 0) != c)
					_exit(1);
				n++;
			}
			forks[w] = n;
			_exit(0);
		}
	}
	for (int w = 0; w < workers; w++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "cbp-forkbomb: a worker failed\n");
			return 1;
		}
	}
	t1 = now_s();
	for (int w = 0; w < workers; w++)
		total += forks[w];
	printf("forkbomb workers=%d forks=%ld secs=%.3f forks_per_s=%.1f\n", workers, total,
	       t1 - t0, (double)total / (t1 - t0));
	return 0;
}
