/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * thread_exits.c - a process whose threads end after it: the main thread
 * starts two threads and, 100 ms later (time for a reader to take its
 * command line from /proc, which a main thread gone takes along), leaves
 * (pthread_exit), so its exit event comes first; the threads end 100 and
 * 200 ms after that, the last one ending the process. Prints "tids T1 T2"
 * first (stdout, flushed).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_barrier_t started;
static pid_t tids[2];

static void *worker(void *arg)
{
	long i = (long)arg;

	tids[i] = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	usleep((useconds_t)(100000 * (i + 2)));
	return NULL;
}

int main(void)
{
	pthread_t th;

	pthread_barrier_init(&started, NULL, 3);
	for (long i = 0; i < 2; i++)
		if (pthread_create(&th, NULL, worker, (void *)i) != 0)
			return 1;
	pthread_barrier_wait(&started);
	printf("tids %d %d\n", (int)tids[0], (int)tids[1]);
	fflush(stdout);
	usleep(100000);
	pthread_exit(NULL);
}
