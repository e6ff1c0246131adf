/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz_recv.c - libFuzzer target: the whole receive path of a socket.
 *
 * Linked with -Wl,--wrap=recvmsg,--wrap=recvmmsg,--wrap=recvfrom,--wrap=sendmsg,
 * --wrap=sendmmsg,--wrap=send,--wrap=poll,--wrap=clock_gettime: the library's receive
 * calls return datagrams taken from the input instead of the kernel's, its
 * sends succeed without reaching the kernel, and its clock runs 1 ms
 * faster on every reading (so request timeouts expire at once). Input: records of
 *   u16 length (little-endian), u8 sender port (0: the kernel), u8 flags
 *   (bit 0: report MSG_TRUNC; for a receive with a control buffer, i.e. a
 *   socket with NETLINK_PKTINFO on: bit 1 set, no cmsg (MSG_CTRUNC), else a
 *   NETLINK_PKTINFO cmsg with group (flags >> 2) * 37), then `length`
 *   datagram bytes.
 * Each input is read through cn_recv, then again through cn_recv_batch +
 * cn_proc_handle, then through cn_proc_recv (its fast path), then while cn_request and cn_async_complete wait for
 * replies (so messages are kept in the backlog and popped again), then
 * through cn_recv, cn_recv_batch and cn_proc_recv of a socket with
 * CN_OPEN_PKTINFO (recvmsg/recvmmsg with control data).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include "libcn.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
ssize_t __wrap_recvmsg(int fd, struct msghdr *mh, int flags);
int __wrap_recvmmsg(int fd, struct mmsghdr *vec, unsigned int n, int flags, struct timespec *t);
ssize_t __wrap_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
			socklen_t *fromlen);
ssize_t __wrap_sendmsg(int fd, const struct msghdr *mh, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags);
int __wrap_sendmmsg(int fd, struct mmsghdr *vec, unsigned int n, int flags);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_clock_gettime(clockid_t clk, struct timespec *ts);
int __real_clock_gettime(clockid_t clk, struct timespec *ts);

static const uint8_t *in;
static size_t in_len, in_off;

/* Copy the next record into mh. 1: done, 0: no more records. */
static int next_record(struct msghdr *mh, unsigned int *len)
{
	size_t dlen, copy;
	uint8_t port, flags;
	struct sockaddr_nl *from = mh->msg_name;

	if (in_len - in_off < 4)
		return 0;
	dlen = (size_t)in[in_off] | (size_t)in[in_off + 1] << 8;
	port = in[in_off + 2];
	flags = in[in_off + 3];
	in_off += 4;
	if (dlen > in_len - in_off)
		dlen = in_len - in_off;
	copy = dlen < mh->msg_iov[0].iov_len ? dlen : mh->msg_iov[0].iov_len;
	memcpy(mh->msg_iov[0].iov_base, in + in_off, copy);
	in_off += dlen;
	if (from && mh->msg_namelen >= sizeof(*from)) {
		memset(from, 0, sizeof(*from));
		from->nl_family = AF_NETLINK;
		from->nl_pid = port;
		from->nl_groups = port ? 0 : 1;
		mh->msg_namelen = sizeof(*from);
	}
	mh->msg_flags = (flags & 1) || copy < dlen ? MSG_TRUNC : 0;
	if (mh->msg_control) {
		/* NETLINK_PKTINFO on: the kernel's cmsg, or none (cut short). */
		struct cmsghdr *c = CMSG_FIRSTHDR(mh);
		struct nl_pktinfo pi = { .group = (uint32_t)(flags >> 2) * 37 };

		if (!(flags & 2) && c && mh->msg_controllen >= CMSG_SPACE(sizeof(pi))) {
			c->cmsg_level = SOL_NETLINK;
			c->cmsg_type = NETLINK_PKTINFO;
			c->cmsg_len = CMSG_LEN(sizeof(pi));
			memcpy(CMSG_DATA(c), &pi, sizeof(pi));
			mh->msg_controllen = CMSG_SPACE(sizeof(pi));
		} else {
			mh->msg_controllen = 0;
			mh->msg_flags |= MSG_CTRUNC;
		}
	}
	*len = (unsigned int)copy;
	return 1;
}

ssize_t __wrap_recvmsg(int fd, struct msghdr *mh, int flags)
{
	unsigned int len;

	(void)fd;
	(void)flags;
	if (!next_record(mh, &len)) {
		errno = EAGAIN;
		return -1;
	}
	return len;
}

ssize_t __wrap_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
			socklen_t *fromlen)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = {
		.msg_name = from,
		.msg_namelen = from && fromlen ? *fromlen : 0,
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	unsigned int copied;

	(void)fd;
	if (!next_record(&mh, &copied)) {
		errno = EAGAIN;
		return -1;
	}
	if (fromlen)
		*fromlen = mh.msg_namelen;
	/* With MSG_TRUNC, as the kernel: a truncated datagram's real length
	 * (here: one more than the buffer when only flagged). */
	if ((flags & MSG_TRUNC) && (mh.msg_flags & MSG_TRUNC))
		return (ssize_t)len + 1;
	return copied;
}

int __wrap_recvmmsg(int fd, struct mmsghdr *vec, unsigned int n, int flags, struct timespec *t)
{
	unsigned int i;

	(void)fd;
	(void)flags;
	(void)t;
	for (i = 0; i < n && next_record(&vec[i].msg_hdr, &vec[i].msg_len); i++)
		;
	if (i == 0) {
		errno = EAGAIN;
		return -1;
	}
	return (int)i;
}

ssize_t __wrap_sendmsg(int fd, const struct msghdr *mh, int flags)
{
	size_t n = 0;

	(void)fd;
	(void)flags;
	for (size_t i = 0; i < mh->msg_iovlen; i++)
		n += mh->msg_iov[i].iov_len;
	return (ssize_t)n;
}

ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags)
{
	(void)fd;
	(void)buf;
	(void)flags;
	return (ssize_t)len;
}

int __wrap_sendmmsg(int fd, struct mmsghdr *vec, unsigned int n, int flags)
{
	for (unsigned int i = 0; i < n; i++)
		vec[i].msg_len = (unsigned int)__wrap_sendmsg(fd, &vec[i].msg_hdr, flags);
	return (int)n;
}

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	(void)fds;
	(void)n;
	(void)timeout;
	return 0; /* nothing more will come: the caller times out */
}

int __wrap_clock_gettime(clockid_t clk, struct timespec *ts)
{
	static int64_t skew_ns;
	int r = __real_clock_gettime(clk, ts);

	if (r == 0) {
		skew_ns += 1000000;
		ts->tv_sec += (time_t)(skew_ns / 1000000000);
		ts->tv_nsec += (long)(skew_ns % 1000000000);
		if (ts->tv_nsec >= 1000000000) {
			ts->tv_sec++;
			ts->tv_nsec -= 1000000000;
		}
	}
	return r;
}

static struct cn_sock *s, *any, *pk;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* batch 16 (until b5087d8, aligned_alloc(64, nslots * CN_SLOT_SIZE)
	 * was refused by ASan for nslots not a multiple of 16). */
	struct cn_open_opts o = { .sz = sizeof(o), .batch = 16, .backlog = 64 * 1024 };

	(void)argc;
	(void)argv;
	s = cn_open(NETLINK_CONNECTOR, &o);
	o.flags = CN_OPEN_ANY_SENDER;
	any = cn_open(NETLINK_CONNECTOR, &o);
	o.flags = CN_OPEN_ANY_SENDER | CN_OPEN_PKTINFO;
	pk = cn_open(NETLINK_CONNECTOR, &o);
	if (!s || !any || !pk) {
		perror("fuzz_recv: cn_open(NETLINK_CONNECTOR)");
		exit(1);
	}
	if (cn_async_init(any, 4, CN_MATCH_ACK_ONLY, 1) < 0) {
		perror("fuzz_recv: cn_async_init");
		exit(1);
	}
	return 0;
}

static void check(const struct cn_message *m)
{
	struct cn_proc_event ev;

	if (!m->msg)
		abort();
	/* The whole message must be readable (ASan checks the bytes). */
	volatile uint8_t sum = 0;

	for (size_t i = 0; i < sizeof(*m->msg) + m->msg->len; i++)
		sum += ((const uint8_t *)m->msg)[i];
	(void)sum;
	(void)cn_proc_handle(s, m, &ev);
}

static void rewind_input(void)
{
	in_off = 0;
}

/* Read everything the input holds from `sock`, one message per call. */
static void drain_one(struct cn_sock *sock)
{
	struct cn_message m;

	for (int i = 0; i < 4096; i++) {
		int r = cn_recv(sock, &m, CN_RECV_DONTWAIT);

		if (r == -EAGAIN)
			break;
		if (r == 0)
			check(&m);
	}
}

/* The same, in batches. */
static void drain_batch(struct cn_sock *sock)
{
	struct cn_message msgs[16];

	for (int i = 0; i < 4096; i++) {
		int r = cn_recv_batch(sock, msgs, 16, CN_RECV_DONTWAIT);

		if (r == -EAGAIN)
			break;
		for (int k = 0; k < r; k++)
			check(&msgs[k]);
	}
}

/* The same as proc events (a datagram of one proc event is decoded in
 * place, anything else the generic way). */
static void drain_proc(struct cn_sock *sock)
{
	struct cn_proc_event ev;

	for (int i = 0; i < 4096; i++)
		if (cn_proc_recv(sock, &ev, CN_RECV_DONTWAIT) == -EAGAIN)
			break;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cn_message m;
	union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(4)];
	} u;
	uint32_t op = 1;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), CN_IDX_PROC, CN_VAL_PROC, &op, sizeof(op));
	struct cn_completion c[4];
	int r;

	in = data;
	in_len = size;

	rewind_input();
	drain_one(s);
	rewind_input();
	drain_batch(s);
	rewind_input();
	drain_proc(s);

	/* A request that waits while the input arrives: messages are kept,
	 * then returned by cn_recv. */
	rewind_input();
	(void)cn_request(s, req, 0, CN_MATCH_ACK_ONLY, 0, &m);
	drain_one(s);

	/* Asynchronous requests on a socket that accepts any sender. */
	rewind_input();
	struct cn_msg *reqs[4] = { req, req, req, req };

	/* Requests time out after 1 ms of the wrapped clock, so each input
	 * starts with an empty table. Bounded. */
	(void)cn_async_send(any, reqs, NULL, 4, 0);
	for (int i = 0; i < 100000 && cn_async_inflight(any) > 0; i++) {
		r = cn_async_complete(any, c, 4, 1);
		for (int k = 0; k < r; k++)
			if (c[k].status == 0)
				check(&c[k].reply);
	}
	drain_one(any);

	/* A socket reading with control data (NETLINK_PKTINFO). */
	rewind_input();
	drain_one(pk);
	rewind_input();
	drain_batch(pk);
	rewind_input();
	drain_proc(pk);
	return 0;
}
