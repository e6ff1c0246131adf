/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysforms.c - cnb-sysforms: what the system call forms alone cost in a
 * request/reply round trip against the proc connector's LISTEN ack.
 *
 * The same raw loop (send a LISTEN, receive until its ack) with the send
 * and receive calls in different forms, interleaved round by round; rates
 * per second of the thread's CPU time (bench.h), relative to the cheapest
 * form (send + recv). cn_request used sendmsg with
 * a destination address and three iovecs, and recvmsg with a source address
 * into a 16.5 KiB slot with MSG_DONTWAIT ("libcn before"); it now sends with
 * send() on a socket connected to the kernel and receives with recvfrom (a
 * source address, MSG_DONTWAIT | MSG_TRUNC): the gap between the first and
 * the "libcn's forms" line is the kernel's share of the rtt_ratio gap.
 *
 *   cnb-sysforms [-r rounds] [-n requests]
 */
#include <getopt.h>
#include <sys/uio.h>

#include "bench.h"

enum { SEND, SENDMSG1, SENDMSG3 };
enum { RECV, RECVMSG, RECVMSG_BIG, RECVMSG_BIG_DW, RECVFROM_BIG_DW };

static const struct {
	const char *name;
	int snd, rcv;
} forms[] = {
	{ "send + recv (the raw loop)", SEND, RECV },
	{ "sendmsg(addr, 1 iov) + recv", SENDMSG1, RECV },
	{ "sendmsg(addr, 3 iov) + recv", SENDMSG3, RECV },
	{ "send + recvmsg(addr)", SEND, RECVMSG },
	{ "send + recvmsg(addr, 16.5K, DONTWAIT)", SEND, RECVMSG_BIG_DW },
	{ "sendmsg(addr, 3 iov) + recvmsg(addr, 16.5K)", SENDMSG3, RECVMSG_BIG },
	{ "sendmsg3 + recvmsg 16.5K DONTWAIT (libcn before)", SENDMSG3, RECVMSG_BIG_DW },
	{ "libcn's forms: send + recvfrom(addr, 16.5K, DONTWAIT|TRUNC)", SEND, RECVFROM_BIG_DW },
};
#define NFORMS (sizeof(forms) / sizeof(forms[0]))

static uint8_t buf[16500] __attribute__((aligned(64)));

static double run(int fd, unsigned int f, unsigned long n, uint32_t *rng)
{
	static uint32_t seq;
	double t0 = cnb_thread_cpu();

	for (unsigned long i = 0; i < n; i++) {
		uint32_t ack = cnb_rand(rng);
		struct cnb_proc_req r;
		struct sockaddr_nl to = { .nl_family = AF_NETLINK };
		struct iovec iov3[3] = { { &r.nlh, sizeof(r.nlh) },
					 { &r.cn, sizeof(r.cn) },
					 { &r.op, sizeof(r.op) } };
		struct iovec iov1 = { &r, sizeof(r) };
		struct msghdr mh = { .msg_name = &to, .msg_namelen = sizeof(to) };
		ssize_t k;

		cnb_proc_req_init(&r, PROC_CN_MCAST_LISTEN, ++seq, ack);
		if (forms[f].snd == SEND) {
			k = send(fd, &r, sizeof(r), 0);
		} else {
			mh.msg_iov = forms[f].snd == SENDMSG1 ? &iov1 : iov3;
			mh.msg_iovlen = forms[f].snd == SENDMSG1 ? 1 : 3;
			k = sendmsg(fd, &mh, 0);
		}
		if (k < 0)
			cnb_die("send");
		for (int tries = 0; tries < 1000000; tries++) {
			struct sockaddr_nl from;
			struct iovec ri = { buf, forms[f].rcv >= RECVMSG_BIG ? sizeof(buf) : 4096 };
			struct msghdr rm = { .msg_name = &from,
					     .msg_namelen = sizeof(from),
					     .msg_iov = &ri,
					     .msg_iovlen = 1 };
			const struct cn_msg *m = NLMSG_DATA((struct nlmsghdr *)buf);

			if (forms[f].rcv == RECV)
				k = recv(fd, buf, 4096, 0);
			else if (forms[f].rcv == RECVFROM_BIG_DW)
				k = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
					     (struct sockaddr *)&from, &rm.msg_namelen);
			else
				k = recvmsg(fd, &rm,
					    forms[f].rcv == RECVMSG_BIG_DW ? MSG_DONTWAIT : 0);
			if (k < 0) {
				if (errno == EAGAIN && forms[f].rcv >= RECVMSG_BIG_DW)
					continue;
				if (errno == ENOBUFS)
					continue;
				cnb_die("recv");
			}
			if (k >= (ssize_t)NLMSG_LENGTH(sizeof(*m)) && m->id.idx == CN_IDX_PROC &&
			    m->ack == ack + 1)
				break;
		}
	}
	return (double)n / (cnb_thread_cpu() - t0);
}

int main(int argc, char **argv)
{
	unsigned long rounds = 10, n = 5000;
	double sum[NFORMS] = { 0 };
	uint32_t rng = 0x2468ace1;
	struct timeval tv = { .tv_sec = 1 };
	int opt, fd;

	while ((opt = getopt(argc, argv, "r:n:")) != -1) {
		if (opt == 'r')
			rounds = strtoul(optarg, NULL, 0);
		else if (opt == 'n')
			n = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	fd = cnb_raw_open(4 << 20, CN_IDX_PROC);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		cnb_die("SO_RCVTIMEO");
	for (unsigned long r = 0; r < rounds; r++)
		for (unsigned int k = 0; k < NFORMS; k++) {
			unsigned int f = (unsigned int)((r + k) % NFORMS);

			sum[f] += run(fd, f, n, &rng);
		}
	for (unsigned int f = 0; f < NFORMS; f++)
		printf("sysform %.0f %.2f %s\n", sum[f] / (double)rounds, sum[f] / sum[0],
		       forms[f].name);
	cnb_raw_proc_op(fd, PROC_CN_MCAST_IGNORE);
	close(fd);
	return 0;
}
