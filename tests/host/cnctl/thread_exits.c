/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * thread_exits.c - a process whose threads end after it: the main thread
 * starts two threads and, 100 ms later (time for a reader to take its
 * command line from /proc, which a main thread gone takes along), leaves
 * (pthread_exit), so its exit event comes first, a thread's; the threads
 * end 100 and 200 ms after that, the last one ending the process (its
 * exit, told as the process's). Prints "tids T1 T2"
 * first (stdout, flushed). Usage: thread_exits [GATE]: with GATE (a FIFO),
 * the 100 ms start once a line was read from it, so a reader can start
 * following the process first.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_barrier_t started, go;
static pid_t tids[2];

static void *worker(void *arg)
{
	long i = (long)arg;

	tids[i] = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	pthread_barrier_wait(&go);
	usleep((useconds_t)(100000 * (i + 2)));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;

	pthread_barrier_init(&started, NULL, 3);
	pthread_barrier_init(&go, NULL, 3);
	for (long i = 0; i < 2; i++)
		if (pthread_create(&th, NULL, worker, (void *)i) != 0)
			return 1;
	pthread_barrier_wait(&started);
	printf("tids %d %d\n", (int)tids[0], (int)tids[1]);
	fflush(stdout);
	if (argc > 1) {
		char line[16];
		FILE *gate = fopen(argv[1], "r");

		if (!gate || !fgets(line, sizeof(line), gate))
			return 1;
		fclose(gate);
	}
	pthread_barrier_wait(&go);
	usleep(100000);
	pthread_exit(NULL);
}
