/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fake_sys.c - fake send/receive system calls (see fake_sys.h). */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <cmocka.h>
#include <linux/sock_diag.h>

#include "fake_sys.h"

ssize_t __real_recvmsg(int fd, struct msghdr *msg, int flags);
ssize_t __wrap_recvmsg(int fd, struct msghdr *msg, int flags);
int __real_recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
		    struct timespec *timeout);
int __wrap_recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
		    struct timespec *timeout);
ssize_t __wrap_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
			socklen_t *fromlen);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags);
ssize_t __real_sendmsg(int fd, const struct msghdr *msg, int flags);
int __wrap_sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags);
ssize_t __wrap_sendmsg(int fd, const struct msghdr *msg, int flags);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
int __real_setsockopt(int fd, int level, int name, const void *val, socklen_t len);
int __real_getsockopt(int fd, int level, int name, void *val, socklen_t *len);
int __wrap_getsockopt(int fd, int level, int name, void *val, socklen_t *len);
int __wrap_setsockopt(int fd, int level, int name, const void *val, socklen_t len);

struct fake_counts fake_calls;

/*
 * socket(), in front of libc's for libnl's nl_connect too (a definition in
 * the program, not a --wrap: libnl is a shared library). qemu-user, which
 * runs these tests on the arch tier (s390x, armhf), opens netlink sockets of
 * NETLINK_ROUTE, NETLINK_KOBJECT_UEVENT and NETLINK_AUDIT only and answers
 * EPROTONOSUPPORT for the connector (linux-user/syscall.c, do_socket). A
 * unit test's socket is only a descriptor for cn_open's setup: every byte it
 * receives or sends goes through the fakes above. So where CTest says the
 * tests run under an emulator (CN_FAKE_EMULATOR, tests/unit/CMakeLists.txt)
 * and the connector is refused, a NETLINK_KOBJECT_UEVENT socket stands in.
 * Anywhere else the call is libc's, unchanged (an unknown unit still fails).
 */
int socket(int domain, int type, int protocol)
{
	static int (*real_socket)(int, int, int);
	int fd;

	if (!real_socket)
		*(void **)&real_socket = dlsym(RTLD_NEXT, "socket");
	fd = real_socket(domain, type, protocol);
	if (fd < 0 && errno == EPROTONOSUPPORT && domain == AF_NETLINK &&
	    protocol == NETLINK_CONNECTOR && getenv("CN_FAKE_EMULATOR"))
		fd = real_socket(domain, type, NETLINK_KOBJECT_UEVENT);
	return fd;
}

static struct fake_dgram queue[FAKE_QUEUE];
static unsigned q_head, q_tail; /* queue[q_head..q_tail) */
static struct fake_dgram later[FAKE_QUEUE];
static unsigned l_head, l_tail;
static struct fake_sent sent[FAKE_SENT_MAX]; /* ring */
static struct cn_msg sent_hdr[FAKE_SENT_HDRS];
static unsigned nsent;
static unsigned mmsg_limit;
static int send_err;
static unsigned send_err_n;
static fake_send_hook hook;
static void *hook_arg;
static int pktinfo_on;
/* fake_meminfo: SO_MEMINFO's answer (or error), when set. */
static int meminfo_on, meminfo_err;
static uint32_t meminfo_drops;
static socklen_t meminfo_len;
static int join_err;
static unsigned calloc_fail_in;

void fake_reset(void)
{
	q_head = q_tail = l_head = l_tail = 0;
	nsent = 0;
	mmsg_limit = 0;
	send_err = 0;
	send_err_n = 0;
	hook = NULL;
	hook_arg = NULL;
	pktinfo_on = 0;
	join_err = 0;
	calloc_fail_in = 0;
	meminfo_on = 0;
	memset(&fake_calls, 0, sizeof(fake_calls));
}

static struct fake_dgram *slot(struct fake_dgram *q, unsigned *tail, uint32_t port)
{
	struct fake_dgram *d;

	if (q == queue && q_head == q_tail)
		q_head = q_tail = 0; /* drained: start over */
	if (q == later && l_head == l_tail)
		l_head = l_tail = 0;
	if (*tail >= FAKE_QUEUE)
		abort(); /* a test queued too much */
	d = &q[(*tail)++];
	memset(d->data, 0, sizeof(d->data));
	d->len = 0;
	d->port = port;
	d->groups = 0;
	d->group = 0;
	d->msg_flags = 0;
	d->err = 0;
	return d;
}

struct fake_dgram *fake_dgram(uint32_t port)
{
	return slot(queue, &q_tail, port);
}

struct fake_dgram *fake_dgram_later(uint32_t port)
{
	return slot(later, &l_tail, port);
}

void fake_error(int err)
{
	fake_dgram(0)->err = err;
}

unsigned fake_queued(void)
{
	return q_tail - q_head;
}

struct nlmsghdr *fake_add_nl(struct fake_dgram *d, uint16_t type, const void *payload, size_t len)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)(d->data + d->len);

	if (d->len + NLMSG_SPACE(len) > sizeof(d->data))
		abort();
	memset(nlh, 0, NLMSG_SPACE(len));
	nlh->nlmsg_len = (uint32_t)NLMSG_LENGTH(len);
	nlh->nlmsg_type = type;
	if (len)
		memcpy(NLMSG_DATA(nlh), payload, len);
	d->len += NLMSG_SPACE(len);
	return nlh;
}

struct cn_msg *fake_add_cn(struct fake_dgram *d, uint32_t idx, uint32_t val, uint32_t seq,
			   uint32_t ack, const void *payload, size_t len)
{
	uint8_t buf[sizeof(struct cn_msg) + FAKE_DGRAM_MAX];
	struct cn_msg *m = (struct cn_msg *)buf;
	struct nlmsghdr *nlh;

	memset(m, 0, sizeof(*m));
	m->id.idx = idx;
	m->id.val = val;
	m->seq = seq;
	m->ack = ack;
	m->len = (uint16_t)len;
	if (len)
		memcpy(m->data, payload, len);
	nlh = fake_add_nl(d, NLMSG_DONE, m, sizeof(*m) + len);
	return NLMSG_DATA(nlh);
}

void fake_add_nlerr(struct fake_dgram *d, int error)
{
	struct nlmsgerr e;

	memset(&e, 0, sizeof(e));
	e.error = error;
	fake_add_nl(d, NLMSG_ERROR, &e, sizeof(e));
}

void fake_add_answer(struct fake_dgram *d, int error, const struct nlmsghdr *req)
{
	struct nlmsgerr e;
	struct nlmsghdr *nlh;

	memset(&e, 0, sizeof(e));
	e.error = error;
	e.msg = *req;
	nlh = fake_add_nl(d, NLMSG_ERROR, &e, sizeof(e));
	nlh->nlmsg_seq = req->nlmsg_seq;
	nlh->nlmsg_pid = req->nlmsg_pid;
}

unsigned fake_sent_count(void)
{
	return nsent;
}

const struct fake_sent *fake_sent(unsigned i)
{
	return i < nsent && i + FAKE_SENT_MAX >= nsent ? &sent[i % FAKE_SENT_MAX] : NULL;
}

const struct cn_msg *fake_sent_hdr(unsigned i)
{
	return i < nsent && i < FAKE_SENT_HDRS ? &sent_hdr[i] : NULL;
}

void fake_sendmmsg_limit(unsigned n)
{
	mmsg_limit = n;
}

const struct cn_msg *fake_sent_cn(unsigned i)
{
	const struct fake_sent *f = fake_sent(i);

	return f ? (const struct cn_msg *)(f->data + NLMSG_HDRLEN) : NULL;
}

void fake_send_fail(int err, unsigned n)
{
	send_err = err;
	send_err_n = n;
}

void fake_on_send(fake_send_hook fn, void *arg)
{
	hook = fn;
	hook_arg = arg;
}

/* Copy datagram d into a msghdr as the kernel would. Returns bytes copied. */
static size_t deliver(const struct fake_dgram *d, struct msghdr *msg)
{
	size_t room = msg->msg_iovlen ? msg->msg_iov[0].iov_len : 0;
	size_t n = d->len < room ? d->len : room;

	if (n)
		memcpy(msg->msg_iov[0].iov_base, d->data, n);
	msg->msg_flags = d->msg_flags | (d->len > room ? MSG_TRUNC : 0);
	if (msg->msg_name && msg->msg_namelen >= sizeof(struct sockaddr_nl)) {
		struct sockaddr_nl sa;

		memset(&sa, 0, sizeof(sa));
		sa.nl_family = AF_NETLINK;
		sa.nl_pid = d->port;
		sa.nl_groups = d->groups;
		if (!sa.nl_groups && d->group >= 1 && d->group <= 32)
			sa.nl_groups = 1u << (d->group - 1);
		memcpy(msg->msg_name, &sa, sizeof(sa));
		msg->msg_namelen = sizeof(sa);
	}
	if (msg->msg_control) {
		/* As the kernel: NETLINK_PKTINFO's cmsg when on, and the
		 * length of what was stored written back. */
		size_t used = 0;

		if (pktinfo_on) {
			struct nl_pktinfo pi = { .group = d->group };
			struct cmsghdr *c = CMSG_FIRSTHDR(msg);

			if (c && msg->msg_controllen >= CMSG_SPACE(sizeof(pi))) {
				c->cmsg_level = SOL_NETLINK;
				c->cmsg_type = NETLINK_PKTINFO;
				c->cmsg_len = CMSG_LEN(sizeof(pi));
				memcpy(CMSG_DATA(c), &pi, sizeof(pi));
				used = CMSG_SPACE(sizeof(pi));
			} else {
				msg->msg_flags |= MSG_CTRUNC;
			}
		}
		msg->msg_controllen = used;
	}
	return n;
}

/* The next queued datagram for a single-datagram receive, or NULL with
 * errno set: EAGAIN when the queue is empty, a queued error's errno. */
static const struct fake_dgram *pop_dgram(void)
{
	const struct fake_dgram *d;

	if (q_head == q_tail) {
		errno = EAGAIN;
		return NULL;
	}
	d = &queue[q_head++];
	if (d->err) {
		errno = d->err;
		return NULL;
	}
	return d;
}

ssize_t __wrap_recvmsg(int fd, struct msghdr *msg, int flags)
{
	const struct fake_dgram *d;

	(void)fd;
	(void)flags;
	fake_calls.recvmsg++;
	d = pop_dgram();
	return d ? (ssize_t)deliver(d, msg) : -1;
}

ssize_t __wrap_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
			socklen_t *fromlen)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct sockaddr_nl sa;
	struct msghdr mh = {
		.msg_name = from ? (void *)&sa : NULL,
		.msg_namelen = from ? sizeof(sa) : 0,
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	const struct fake_dgram *d;
	size_t n;

	(void)fd;
	fake_calls.recvfrom++;
	d = pop_dgram();
	if (!d)
		return -1;
	n = deliver(d, &mh);
	if (from) {
		if (!fromlen || *fromlen < sizeof(sa))
			abort(); /* libcn always passes room for a sockaddr_nl */
		memcpy(from, &sa, sizeof(sa));
		*fromlen = sizeof(sa);
	}
	/* As the kernel: with MSG_TRUNC, the datagram's real length. A
	 * datagram marked MSG_TRUNC is one longer than the buffer. */
	if ((flags & MSG_TRUNC) && (mh.msg_flags & MSG_TRUNC))
		return (ssize_t)(d->len > len ? d->len : len + 1);
	return (ssize_t)n;
}

int __wrap_recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
		    struct timespec *timeout)
{
	unsigned int n = 0;

	(void)fd;
	(void)flags;
	(void)timeout;
	fake_calls.recvmmsg++;
	if (q_head == q_tail) {
		errno = EAGAIN;
		return -1;
	}
	if (queue[q_head].err) {
		errno = queue[q_head++].err;
		return -1;
	}
	/* Like the kernel: an error after some datagrams waits for the next call. */
	while (n < vlen && q_head < q_tail && !queue[q_head].err) {
		vec[n].msg_len = (unsigned int)deliver(&queue[q_head++], &vec[n].msg_hdr);
		n++;
	}
	return (int)n;
}

/* Record one outgoing message; returns its length. */
static size_t record(const struct msghdr *msg)
{
	struct fake_sent *f = &sent[nsent % FAKE_SENT_MAX];
	size_t total = 0;

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < msg->msg_iovlen; i++) {
		if (total + msg->msg_iov[i].iov_len > sizeof(f->data))
			abort();
		if (msg->msg_iov[i].iov_len)
			memcpy(f->data + total, msg->msg_iov[i].iov_base, msg->msg_iov[i].iov_len);
		total += msg->msg_iov[i].iov_len;
	}
	f->len = total;
	if (msg->msg_name && msg->msg_namelen >= sizeof(struct sockaddr_nl)) {
		struct sockaddr_nl sa;

		memcpy(&sa, msg->msg_name, sizeof(sa));
		f->dst_port = sa.nl_pid;
		f->has_name = 1;
	}
	if (nsent < FAKE_SENT_HDRS && total >= NLMSG_HDRLEN + sizeof(struct cn_msg))
		memcpy(&sent_hdr[nsent], f->data + NLMSG_HDRLEN, sizeof(struct cn_msg));
	nsent++;
	if (hook && total >= NLMSG_HDRLEN + sizeof(struct cn_msg))
		hook((const struct cn_msg *)(f->data + NLMSG_HDRLEN), f->dst_port, hook_arg);
	return total;
}

ssize_t __wrap_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	(void)fd;
	(void)flags;
	fake_calls.sendmsg++;
	if (send_err_n) {
		send_err_n--;
		errno = send_err;
		return -1;
	}
	return (ssize_t)record(msg);
}

ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	(void)fd;
	(void)flags;
	fake_calls.send++;
	if (send_err_n) {
		send_err_n--;
		errno = send_err;
		return -1;
	}
	/* No address: the socket's peer, the kernel (cn_open connects to it). */
	return (ssize_t)record(&mh);
}

int __wrap_sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	unsigned int n = vlen;

	(void)fd;
	(void)flags;
	fake_calls.sendmmsg++;
	if (send_err_n) {
		send_err_n--;
		errno = send_err;
		return -1;
	}
	if (mmsg_limit && n > mmsg_limit)
		n = mmsg_limit;
	for (unsigned int i = 0; i < n; i++)
		vec[i].msg_len = (unsigned int)record(&vec[i].msg_hdr);
	return (int)n;
}

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	(void)timeout;
	fake_calls.poll++;
	for (nfds_t i = 0; i < n; i++)
		fds[i].revents = 0;
	if (q_head == q_tail && l_head < l_tail) {
		/* A datagram that arrives while libcn waits. */
		struct fake_dgram *d = fake_dgram(0);
		struct fake_dgram *l = &later[l_head++];

		memcpy(d, l, sizeof(*d));
	}
	if (q_head == q_tail)
		return 0; /* timed out */
	for (nfds_t i = 0; i < n; i++)
		fds[i].revents = fds[i].events & POLLIN;
	return 1;
}

int __wrap_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	if (level == SOL_NETLINK && name == NETLINK_ADD_MEMBERSHIP) {
		fake_calls.join++;
		if (len >= sizeof(uint32_t))
			memcpy(&fake_calls.last_join, val, sizeof(uint32_t));
		if (join_err) {
			errno = join_err;
			join_err = 0;
			return -1;
		}
		return 0;
	}
	if (level == SOL_NETLINK && name == NETLINK_PKTINFO) {
		int on = 0;

		if (len >= sizeof(on))
			memcpy(&on, val, sizeof(on));
		pktinfo_on = on != 0;
		fake_calls.pktinfo += pktinfo_on;
		fake_calls.pktinfo_off += !pktinfo_on;
		return 0;
	}
	if (level == SOL_NETLINK && name == NETLINK_DROP_MEMBERSHIP) {
		fake_calls.leave++;
		fake_calls.recv_at_leave =
		    fake_calls.recvmsg + fake_calls.recvmmsg + fake_calls.recvfrom;
		return 0;
	}
	return __real_setsockopt(fd, level, name, val, len);
}

void fake_meminfo(int err, uint32_t drops, socklen_t len)
{
	meminfo_on = 1;
	meminfo_err = err;
	meminfo_drops = drops;
	meminfo_len = len;
}

int __wrap_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	if (level == SOL_SOCKET && name == SO_MEMINFO) {
		uint32_t mem[SK_MEMINFO_VARS] = { 0 };

		fake_calls.meminfo++;
		if (!meminfo_on)
			return __real_getsockopt(fd, level, name, val, len);
		if (meminfo_err) {
			errno = meminfo_err;
			return -1;
		}
		mem[SK_MEMINFO_DROPS] = meminfo_drops;
		if (*len > meminfo_len)
			*len = meminfo_len;
		memcpy(val, mem, *len);
		return 0;
	}
	return __real_getsockopt(fd, level, name, val, len);
}

void fake_join_fail(int err)
{
	join_err = err;
}

void fake_calloc_fail(unsigned nth)
{
	calloc_fail_in = nth;
}

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

void *__wrap_calloc(size_t n, size_t size)
{
	if (calloc_fail_in && --calloc_fail_in == 0) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, size);
}

struct cn_sock *fake_open(uint32_t flags, uint32_t backlog)
{
	struct cn_open_opts o;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.flags = flags;
	o.backlog = backlog;
	fake_reset();
	return cn_open(NETLINK_CONNECTOR, &o);
}

struct cn_sock *fake_sock(void **state)
{
	if (!*state)
		skip(); /* no netlink socket here */
	return *state;
}

int fake_teardown(void **state)
{
	cn_close(*state);
	return 0;
}
