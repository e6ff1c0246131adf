/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fork_storm.c - the storm for the cnctl storm check: prints its pid, waits
 * for a line on stdin (the go signal, so listeners can subscribe first), then
 * forks N children, keeping up to P of them alive at once; child i exits at
 * once with status i % 7, and reaps them all before it exits. (A child's exit
 * event may still come after the reaping, even after the storm's own exit
 * event: the kernel sends it after notifying the parent.) Prints
 * "forks=N exit_status_sum=S" at the end.
 * Usage: fork_storm N [P]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int reap_one(unsigned long long *sum)
{
	int st;
	pid_t p = wait(&st);

	if (p < 0)
		return -1;
	if (!WIFEXITED(st)) {
		fprintf(stderr, "fork_storm: child %d did not exit normally\n", (int)p);
		exit(1);
	}
	*sum += (unsigned int)WEXITSTATUS(st);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
	long par = argc > 2 ? strtol(argv[2], NULL, 10) : 16;
	unsigned long long sum = 0;
	long alive = 0, forked = 0;
	char line[16];

	if (n <= 0 || par <= 0) {
		fprintf(stderr, "usage: fork_storm N [PARALLEL]\n");
		return 1;
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin)) {
		fprintf(stderr, "fork_storm: no go signal on stdin\n");
		return 1;
	}
	while (forked < n) {
		pid_t p;

		if (alive >= par) {
			if (reap_one(&sum) < 0) {
				perror("fork_storm: wait");
				return 1;
			}
			alive--;
		}
		p = fork();
		if (p == 0)
			_exit((int)(forked % 7));
		if (p < 0) {
			if (errno == EAGAIN && alive > 0) {
				if (reap_one(&sum) == 0)
					alive--;
				continue;
			}
			perror("fork_storm: fork");
			return 1;
		}
		forked++;
		alive++;
	}
	while (alive > 0 && reap_one(&sum) == 0)
		alive--;
	printf("forks=%ld exit_status_sum=%llu\n", forked, sum);
	return 0;
}
