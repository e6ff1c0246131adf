/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * raw_reader.c - an independent proc connector reader for the cnctl storm
 * check: plain socket/bind/NETLINK_ADD_MEMBERSHIP/send/recv and hand parsing,
 * no libcn. It counts the children of one process (--parent PID): fork
 * events with parent_tgid == PID, and the exit events of those children,
 * matched by pid (not by the exit event's parent fields: the kernel sends the
 * exit event after exit_notify(), so when the parent reaps the child first,
 * the event carries parent_pid = parent_tgid = 0). It stops once it has seen
 * PID's own exit event and an exit for every child it saw fork (or, after a
 * detected loss, at PID's exit), or at SIGINT/SIGTERM, and prints on stdout:
 *   forks=N exits=N exit_status_sum=N lost=N overruns=N orphan_exits=N
 * lost is the sum of per-CPU sequence gaps, overruns the ENOBUFS errors,
 * orphan_exits the children's exit events that carried parent 0.
 * "ready" goes to stderr once the kernel acknowledged the LISTEN.
 * Exit: 0 done, 1 error, 77 no connector or no permission (a test skip).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#define MAX_CPUS 4096
#define MAX_PID	 (1 << 22) /* PID_MAX_LIMIT on 64-bit */

/* Children seen forking and not yet seen exiting, one bit per pid. */
static uint8_t pending[MAX_PID / 8];
static unsigned long long npending;

static int pid_ok(int pid)
{
	return pid > 0 && pid < MAX_PID;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int send_op(int fd, uint32_t op, uint32_t ack)
{
	/* nlmsghdr + cn_msg + op, built in place (cn_msg ends in a flexible array). */
	uint32_t words[(NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(op)) / 4] = { 0 };
	struct nlmsghdr *nl = (struct nlmsghdr *)words;
	struct cn_msg *cn = NLMSG_DATA(nl);
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	nl->nlmsg_len = sizeof(words);
	nl->nlmsg_type = NLMSG_DONE;
	cn->id.idx = CN_IDX_PROC;
	cn->id.val = CN_VAL_PROC;
	cn->seq = 1;
	cn->ack = ack;
	cn->len = sizeof(op);
	memcpy(cn->data, &op, sizeof(op));
	if (sendto(fd, words, sizeof(words), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	static uint32_t next_seq[MAX_CPUS];
	static uint8_t seen[MAX_CPUS];
	static char buf[1 << 16] __attribute__((aligned(8)));
	unsigned long long forks = 0, exits = 0, sum = 0, lost = 0, overruns = 0, orphans = 0;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct sigaction sig;
	int rcvbuf = 8 << 20, fd, group = CN_IDX_PROC, ready = 0, parent_exited = 0, err;
	uint32_t ack = 0;
	pid_t parent = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--parent") == 0 && i + 1 < argc)
			parent = (pid_t)atoi(argv[++i]);
		else if (strcmp(argv[i], "--rcvbuf") == 0 && i + 1 < argc)
			rcvbuf = atoi(argv[++i]);
		else
			parent = 0, i = argc;
	}
	if (parent <= 0 || rcvbuf <= 0) {
		fprintf(stderr, "usage: raw_reader --parent PID [--rcvbuf BYTES]\n");
		return 1;
	}

	memset(&sig, 0, sizeof(sig));
	sig.sa_handler = on_signal; /* no SA_RESTART: recv returns EINTR */
	sigaction(SIGINT, &sig, NULL);
	sigaction(SIGTERM, &sig, NULL);

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (fd < 0) {
		perror("raw_reader: socket(NETLINK_CONNECTOR)");
		return errno == EPROTONOSUPPORT || errno == EPERM || errno == EACCES ? 77 : 1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0)
		perror("raw_reader: SO_RCVBUF");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("raw_reader: bind");
		return 1;
	}
	if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0) {
		perror("raw_reader: NETLINK_ADD_MEMBERSHIP");
		return errno == EPERM || errno == EACCES ? 77 : 1;
	}
	if (getrandom(&ack, sizeof(ack), 0) != sizeof(ack))
		ack = (uint32_t)getpid();
	err = -send_op(fd, PROC_CN_MCAST_LISTEN, ack);
	if (err) {
		fprintf(stderr, "raw_reader: send LISTEN: %s\n", strerror(err));
		/* ECONNREFUSED: no connector in this network namespace. */
		return err == EPERM || err == EACCES || err == ECONNREFUSED ? 77 : 1;
	}

	/* Done: the parent is gone and every child's exit is in (after a
	 * detected loss some may never come: then the parent's exit ends it). */
	while (!stop && !(parent_exited && (npending == 0 || lost || overruns))) {
		struct sockaddr_nl from;
		socklen_t fromlen = sizeof(from);
		ssize_t n;

		if (!ready) {
			/* The ack must come promptly; no ack: no proc connector. */
			struct pollfd p = { .fd = fd, .events = POLLIN };

			if (poll(&p, 1, 5000) == 0) {
				fprintf(stderr, "raw_reader: no ack to PROC_CN_MCAST_LISTEN\n");
				return 77;
			}
		}
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fromlen);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				overruns++;
				fprintf(stderr, "raw_reader: overrun (ENOBUFS)\n");
				continue;
			}
			perror("raw_reader: recv");
			return 1;
		}
		if (from.nl_pid != 0)
			continue; /* only the kernel speaks for the proc connector */
		for (struct nlmsghdr *nl = (struct nlmsghdr *)buf; NLMSG_OK(nl, (size_t)n);
		     nl = NLMSG_NEXT(nl, n)) {
			struct cn_msg *cn = NLMSG_DATA(nl);
			struct proc_event ev;

			if (nl->nlmsg_type == NLMSG_OVERRUN) {
				overruns++;
				continue;
			}
			if (nl->nlmsg_type != NLMSG_DONE ||
			    nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn)) ||
			    nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn) + cn->len) ||
			    cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC)
				continue;
			memset(&ev, 0, sizeof(ev));
			memcpy(&ev, cn->data, cn->len < sizeof(ev) ? cn->len : sizeof(ev));

			if (ev.cpu < MAX_CPUS) {
				if (seen[ev.cpu] && cn->seq != next_seq[ev.cpu] &&
				    cn->seq - next_seq[ev.cpu] < 0x80000000u) {
					lost += cn->seq - next_seq[ev.cpu];
					fprintf(stderr, "raw_reader: lost %u events on cpu %u\n",
						cn->seq - next_seq[ev.cpu], ev.cpu);
				}
				seen[ev.cpu] = 1;
				next_seq[ev.cpu] = cn->seq + 1;
			}

			switch (ev.what) {
			case PROC_EVENT_NONE:
				if (!ready && cn->ack == ack + 1) {
					if (ev.event_data.ack.err) {
						fprintf(stderr, "raw_reader: LISTEN refused: %s\n",
							strerror((int)ev.event_data.ack.err));
						return 77;
					}
					ready = 1;
					fputs("ready\n", stderr);
				}
				break;
			case PROC_EVENT_FORK: {
				int child = ev.event_data.fork.child_pid;

				if (ev.event_data.fork.parent_tgid != parent || !pid_ok(child) ||
				    ev.event_data.fork.child_tgid != child)
					break;
				forks++;
				if (!(pending[child / 8] & (1u << (child % 8))))
					npending++;
				pending[child / 8] |= (uint8_t)(1u << (child % 8));
				break;
			}
			case PROC_EVENT_EXIT: {
				int pid = ev.event_data.exit.process_pid;
				int st = (int)ev.event_data.exit.exit_code;

				if (pid == parent && ev.event_data.exit.process_tgid == parent)
					parent_exited = 1;
				if (!pid_ok(pid) || ev.event_data.exit.process_tgid != pid ||
				    !(pending[pid / 8] & (1u << (pid % 8))))
					break;
				pending[pid / 8] &= (uint8_t) ~(1u << (pid % 8));
				npending--;
				exits++;
				if (ev.event_data.exit.parent_tgid == 0)
					orphans++;
				if (WIFEXITED(st))
					sum += (unsigned int)WEXITSTATUS(st);
				break;
			}
			default:
				break;
			}
		}
	}
	send_op(fd, PROC_CN_MCAST_IGNORE, ack + 2);
	close(fd);
	printf("forks=%llu exits=%llu exit_status_sum=%llu lost=%llu overruns=%llu "
	       "orphan_exits=%llu\n",
	       forks, exits, sum, lost, overruns, orphans);
	return 0;
}
