/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench.h - helpers shared by the libcn benchmarks in bench/: clocks, the
 * raw netlink connector socket used as a baseline, proc connector request
 * framing, and the storm markers every listener recognises.
 */
#ifndef CNB_BENCH_H
#define CNB_BENCH_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

/* The storm generator renames itself to this (a COMM event) before its
 * first child, and to CNB_END after its last one: listeners learn the storm's
 * tgid from the first and stop at the second. */
#define CNB_START "cnb-storm"
#define CNB_END	  "cnb-end"

#define CNB_NOINLINE __attribute__((noinline))

static inline double cnb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* This thread's CPU time (user + system), in seconds: a request to the proc
 * connector and its ack are handled inside the sender's system call, so a
 * request loop never waits, and its CPU time leaves out the time other
 * processes of a shared machine held the CPU. */
static inline double cnb_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void cnb_die(const char *what)
{
	perror(what);
	exit(2);
}

/* A raw NETLINK_CONNECTOR socket bound to a kernel-chosen port, with a
 * forced receive buffer, optionally joined to `group`. */
static inline int cnb_raw_open(int rcvbuf, unsigned int group)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);

	if (fd < 0)
		cnb_die("socket(NETLINK_CONNECTOR)");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		cnb_die("bind");
	if (rcvbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		cnb_die("SO_RCVBUFFORCE");
	if (group && setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0)
		cnb_die("NETLINK_ADD_MEMBERSHIP");
	return fd;
}

/* A proc connector request (LISTEN/IGNORE op) as one datagram. */
struct cnb_proc_req {
	struct nlmsghdr nlh;
	struct cn_msg cn;
	uint32_t op;
} __attribute__((packed));

static inline void cnb_proc_req_init(struct cnb_proc_req *r, uint32_t op, uint32_t seq,
				     uint32_t ack)
{
	memset(r, 0, sizeof(*r));
	r->nlh.nlmsg_len = sizeof(*r);
	r->nlh.nlmsg_type = NLMSG_DONE;
	r->nlh.nlmsg_seq = seq;
	r->cn.id.idx = CN_IDX_PROC;
	r->cn.id.val = CN_VAL_PROC;
	r->cn.seq = seq;
	r->cn.ack = ack;
	r->cn.len = sizeof(uint32_t);
	r->op = op;
}

/* Send LISTEN (or IGNORE) without waiting for the ack. */
static inline void cnb_raw_proc_op(int fd, uint32_t op)
{
	struct cnb_proc_req r;

	cnb_proc_req_init(&r, op, 1, 0x1234);
	if (send(fd, &r, sizeof(r), 0) < 0)
		cnb_die("send proc op");
}

/* xorshift32 for acks. */
static inline uint32_t cnb_rand(uint32_t *st)
{
	uint32_t x = *st;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *st = x;
}

#endif
