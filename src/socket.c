/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* socket.c - opening, configuring and closing connector sockets. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "internal.h"
#include "opts.h"

/* libnl returns its own -NLE_* codes; errno still holds the system's reason
 * when a system call failed, which is what our callers need. */
static int errno_from_nl(int nlerr, int fallback)
{
	(void)nlerr;
	return errno ? errno : fallback;
}

/* net.core.rmem_default, asked for when the caller asks for no size: libnl's
 * nl_connect shrinks the buffer to 32 KiB, which overruns in a fork storm,
 * so a size is set either way. Asked for, it is doubled like any request:
 * twice what a plain socket gets (cn_open_opts.rcvbuf says so). */
static int default_rcvbuf(void)
{
	FILE *f = fopen("/proc/sys/net/core/rmem_default", "re");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v > 0 ? v : 212992;
}

static void seed_genealogy(struct cn_sock *s)
{
	uint64_t seed = 0;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
		seed = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)s;
	s->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
	s->next_seq = cn__random_u32(s);
}

struct cn_sock *cn_open(int unit, const struct cn_open_opts *opts)
{
	struct cn_open_opts o = { 0 };
	struct cn_sock *s;
	int err;

	if (opts) {
		/* sz 0 is a caller that forgot it (see CN_OPTS): refused, since
		 * its size cannot be known. A larger struct is a newer caller:
		 * accepted when it asks for nothing this version lacks. */
		if (opts->sz < offsetof(struct cn_open_opts, flags) + sizeof(opts->flags)) {
			errno = EINVAL;
			return NULL;
		}
		if (cn__opts_tail_nonzero(opts, opts->sz, sizeof(o))) {
			errno = E2BIG;
			return NULL;
		}
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	}
	if (unit < 0 || unit >= MAX_LINKS ||
	    (o.flags & ~(CN_OPEN_NONBLOCK | CN_OPEN_ANY_SENDER | CN_OPEN_PKTINFO)) ||
	    o.rcvbuf < 0 || o.batch > 1024 || (o.backlog && o.backlog < CN_SLOT_SIZE)) {
		errno = EINVAL;
		return NULL;
	}

	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->fd = -1;
	s->unit = unit;
	s->flags = o.flags;
	err = -cn__rx_init(s, o.batch ? o.batch : CN_DEFAULT_BATCH);
	if (!err)
		err = -cn__backlog_init(&s->backlog, o.backlog ? o.backlog : CN_DEFAULT_BACKLOG);
	if (err)
		goto fail;

	s->nl = nl_socket_alloc();
	if (!s->nl) {
		err = ENOMEM;
		goto fail;
	}
	/* libnl's own sequence checks and auto-acks are for its request API,
	 * which connector framing (NLMSG_DONE) does not fit. */
	nl_socket_disable_seq_check(s->nl);
	nl_socket_disable_auto_ack(s->nl);
	errno = 0;
	err = nl_connect(s->nl, unit);
	if (err < 0) {
		err = errno_from_nl(err, EPROTONOSUPPORT);
		goto fail;
	}
	s->fd = nl_socket_get_fd(s->nl);
	s->port = nl_socket_get_local_port(s->nl);
	if (!(o.flags & CN_OPEN_ANY_SENDER)) {
		/* Connected to the kernel's port 0, the socket takes unicast
		 * from no other port (the kernel refuses the sender with
		 * ECONNREFUSED), and sends to the kernel need no address:
		 * send() instead of sendmsg() (see send_parts). Multicast is
		 * not affected; cn__walk still skips datagrams from other
		 * ports. Without it (it cannot fail for a bound socket) sends
		 * carry the address as before. */
		struct sockaddr_nl k = { .nl_family = AF_NETLINK };

		s->connected = connect(s->fd, (struct sockaddr *)&k, sizeof(k)) == 0;
	}
	seed_genealogy(s);

	err = -cn_set_rcvbuf(s, o.rcvbuf ? o.rcvbuf : default_rcvbuf());
	if (err > 0)
		goto fail;
	err = 0;
	if (o.flags & CN_OPEN_NONBLOCK) {
		err = -cn_set_nonblocking(s, 1);
		if (err)
			goto fail;
	}
	if (o.flags & CN_OPEN_PKTINFO) {
		err = -cn__rx_pktinfo(s, 1);
		if (err)
			goto fail;
	}
	return s;

fail:
	cn__socket_free(s);
	errno = err;
	return NULL;
}

void cn__socket_free(struct cn_sock *s)
{
	if (s->nl)
		nl_socket_free(s->nl); /* closes the fd */
	cn__rx_free(s);
	cn__backlog_free(&s->backlog);
	free(s);
}

int cn_fd(const struct cn_sock *s)
{
	if (!s)
		return cn_fail(EINVAL);
	return s->fd;
}

int cn_unit(const struct cn_sock *s)
{
	if (!s)
		return cn_fail(EINVAL);
	return s->unit;
}

uint32_t cn_port(const struct cn_sock *s)
{
	return s ? s->port : 0;
}

int cn_set_nonblocking(struct cn_sock *s, int on)
{
	int fl;

	if (!s)
		return cn_fail(EINVAL);
	fl = fcntl(s->fd, F_GETFL);
	if (fl < 0)
		return cn_fail(errno);
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	if (fcntl(s->fd, F_SETFL, fl) < 0)
		return cn_fail(errno);
	if (on)
		s->flags |= CN_OPEN_NONBLOCK;
	else
		s->flags &= ~CN_OPEN_NONBLOCK;
	return 0;
}

int cn_set_rcvbuf(struct cn_sock *s, int bytes)
{
	socklen_t len = sizeof(int);
	int got = 0;

	if (!s || bytes <= 0)
		return cn_fail(EINVAL);
	/* SO_RCVBUFFORCE needs CAP_NET_ADMIN; without it the plain option
	 * applies, capped by net.core.rmem_max. */
	if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) < 0 &&
	    setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)) < 0)
		return cn_fail(errno);
	if (getsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &got, &len) < 0)
		return cn_fail(errno);
	/* The kernel stores twice the request (room for its bookkeeping,
	 * socket(7)) and reports that: half of it is the request's terms. */
	return got / 2;
}

int cn_rcvbuf(const struct cn_sock *s)
{
	socklen_t len = sizeof(int);
	int got = 0;

	if (!s)
		return cn_fail(EINVAL);
	if (getsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &got, &len) < 0)
		return cn_fail(errno);
	return got / 2; /* in the request's terms, as cn_set_rcvbuf */
}

static int membership(struct cn_sock *s, uint32_t group, int join)
{
	int opt = join ? NETLINK_ADD_MEMBERSHIP : NETLINK_DROP_MEMBERSHIP;
	unsigned int g = group;

	if (!s || group == 0)
		return cn_fail(EINVAL);
	/* The kernel reports groups 1..32 as a bit in nl_groups and any
	 * other as 0, like a unicast: a group above 32 needs the group
	 * number of NETLINK_PKTINFO (turned on first, so that no message of
	 * the group comes without it). */
	int turned_on = join && group > 32 && !s->rx.pktinfo;

	if (turned_on) {
		int r = cn__rx_pktinfo(s, 1);

		if (r < 0)
			return cn_fail(-r);
	}
	/* Groups are numbers: this is NETLINK_ADD_MEMBERSHIP, never a bind mask.
	 * Called on the fd directly: libnl's membership calls take int and
	 * report -NLE_* codes, which would lose errno. */
	if (setsockopt(s->fd, SOL_NETLINK, opt, &g, sizeof(g)) < 0) {
		int err = errno;

		/* A group the unit does not have: leave the receive paths as
		 * they were (without PKTINFO, one datagram is read with
		 * recvfrom, and groups come from nl_groups). */
		if (turned_on)
			(void)cn__rx_pktinfo(s, 0);
		return cn_fail(err);
	}
	if (group <= 32) {
		uint32_t bit = (uint32_t)1 << (group - 1);

		s->joined = join ? s->joined | bit : s->joined & ~bit;
	}
	return 0;
}

int cn_join(struct cn_sock *s, uint32_t group)
{
	return membership(s, group, 1);
}

int cn_leave(struct cn_sock *s, uint32_t group)
{
	return membership(s, group, 0);
}

int cn_stats(const struct cn_sock *s, struct cn_stats *st)
{
	if (!s || !st)
		return cn_fail(EINVAL);
	*st = s->st;
	return 0;
}

size_t cn_pending(const struct cn_sock *s)
{
	return s ? cn__backlog_count(&s->backlog) + cn__rx_count_left(s) : 0;
}
