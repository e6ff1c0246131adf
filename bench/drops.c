/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/drops.c - cn_drops against the way it read the counter before:
 * the socket's line in /proc/net/netlink, found by inode, the
 * baseline here. Side by side in one run, with 0 to 8,000 other netlink
 * sockets open in this process and, for the last size, a child closing and
 * opening 1,000 more all the time. Prints per size the median ns per call
 * of each (rounds of calls), their ratio, and how many baseline calls did
 * not find the socket (-ENOENT) while others churned. docs/PERFORMANCE.md,
 * "cn_drops".
 *
 *   cc -O2 -I include -o /tmp/cnb-drops bench/drops.c -L build -lcn
 *   LD_LIBRARY_PATH=build /tmp/cnb-drops [ROUNDS]      (root not needed)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/netlink.h>

#include <libcn.h>

#define MAX_OTHERS 8000
#define CHURNERS   1000

static int open_bound(void)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_USERSOCK);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The baseline: cn_drops as it was (src/drops.c before SO_MEMINFO). */
static int drops_from_proc(int fd, uint64_t *drops)
{
	char line[256];
	struct stat st;
	FILE *f;
	int r = -ENOENT;

	if (fstat(fd, &st) < 0)
		return -errno;
	f = fopen("/proc/net/netlink", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long d, ino;

		if (sscanf(line, "%*s %*d %*u %*x %*d %*d %*d %*d %llu %llu", &d, &ino) == 2 &&
		    ino == (unsigned long long)st.st_ino) {
			*drops = d;
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Median ns per call over rounds of n calls; *missed: baseline -ENOENTs. */
static int64_t measure(struct cn_sock *s, int baseline, int rounds, int n, int *missed)
{
	int64_t t[64];

	for (int k = 0; k < rounds; k++) {
		int64_t t0 = now_ns();

		for (int i = 0; i < n; i++) {
			uint64_t d;
			int r = baseline ? drops_from_proc(cn_fd(s), &d) : cn_drops(s, &d);

			if (r == -ENOENT)
				(*missed)++;
			else if (r < 0) {
				fprintf(stderr, "drops: %s\n", strerror(-r));
				exit(1);
			}
		}
		t[k] = (now_ns() - t0) / n;
	}
	qsort(t, (size_t)rounds, sizeof(t[0]), cmp64);
	return t[rounds / 2];
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 0, 1000, 4000, 8000 };
	static int fd[MAX_OTHERS];
	int rounds = argc > 1 ? atoi(argv[1]) : 5, open_now = 0;
	struct cn_sock *s = cn_open(NETLINK_CONNECTOR, NULL);
	struct rlimit rl;

	if (!s || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: cnb-drops [ROUNDS (1..64)]; cn_open: %s\n",
			strerror(errno));
		return 1;
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max < MAX_OTHERS + 64 ? rl.rlim_max : MAX_OTHERS + 64;
	setrlimit(RLIMIT_NOFILE, &rl);
	printf("%-8s %-9s %14s %14s %10s %s\n", "others", "churning", "cn_drops ns", "/proc ns",
	       "ratio", "/proc misses");
	for (unsigned int k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		int churn = k + 1 == sizeof(sizes) / sizeof(sizes[0]), missed = 0, unused = 0;
		int n = sizes[k] >= 4000 ? 5 : 50;
		pid_t child = -1;
		int64_t lib, base;

		while (open_now < sizes[k] && (fd[open_now] = open_bound()) >= 0)
			open_now++;
		if (churn) {
			child = fork();
			if (child == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				for (int i = 0; i < CHURNERS; i++)
					fd[i] = open_bound();
				for (unsigned int i = 0;; i = (i + 1) % CHURNERS) {
					if (fd[i] >= 0)
						close(fd[i]);
					fd[i] = open_bound();
				}
			}
			usleep(200000);
		}
		/* Interleaved: library, baseline, library. */
		lib = measure(s, 0, rounds, 1000, &unused);
		base = measure(s, 1, rounds, n, &missed);
		lib = (lib + measure(s, 0, rounds, 1000, &unused)) / 2;
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		printf("%-8d %-9d %14lld %14lld %10.0f %d of %d\n", open_now, churn ? CHURNERS : 0,
		       (long long)lib, (long long)base, (double)base / (double)lib, missed,
		       rounds * n);
		fflush(stdout);
	}
	cn_close(s);
	return 0;
}
