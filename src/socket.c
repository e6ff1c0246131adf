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

/* The kernel default receive buffer (net.core.rmem_default): libnl's
 * nl_connect shrinks the buffer to 32 KiB, which overruns in a fork storm. */
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

static int alloc_rx(struct cn_sock *s, uint32_t nslots)
{
	s->nslots = nslots;
	/* aligned_alloc wants a size that is a multiple of the alignment. */
	s->slots = aligned_alloc(64, ((size_t)nslots * CN_SLOT_SIZE + 63) & ~(size_t)63);
	s->mmsg = calloc(nslots, sizeof(*s->mmsg));
	s->iov = calloc(nslots, sizeof(*s->iov));
	s->addrs = calloc(nslots, sizeof(*s->addrs));
	if (!s->slots || !s->mmsg || !s->iov || !s->addrs)
		return -ENOMEM;
	for (uint32_t i = 0; i < nslots; i++) {
		s->iov[i].iov_base = s->slots + (size_t)i * CN_SLOT_SIZE;
		s->iov[i].iov_len = CN_SLOT_SIZE;
		s->mmsg[i].msg_hdr.msg_iov = &s->iov[i];
		s->mmsg[i].msg_hdr.msg_iovlen = 1;
		s->mmsg[i].msg_hdr.msg_name = &s->addrs[i].nl;
		s->mmsg[i].msg_hdr.msg_namelen = sizeof(s->addrs[i].nl);
	}
	return 0;
}

static int pktinfo_on(struct cn_sock *s);

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
	s->proc.user_want = UINT32_MAX; /* every proc event type until cn_proc_listen */
	err = -alloc_rx(s, o.batch ? o.batch : CN_DEFAULT_BATCH);
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
		err = -pktinfo_on(s);
		if (err)
			goto fail;
	}
	return s;

fail:
	cn_close(s);
	errno = err;
	return NULL;
}

void cn_close(struct cn_sock *s)
{
	int saved = errno;

	if (!s)
		return;
	if (s->nl)
		nl_socket_free(s->nl); /* closes the fd */
	free(s->slots);
	free(s->mmsg);
	free(s->iov);
	free(s->addrs);
	free(s->ctrl);
	free(s->groups);
	cn__backlog_free(&s->backlog);
	cn__async_free(s);
	free(s->proc.cpu);
	free(s);
	errno = saved;
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
	return got;
}

/* Turn NETLINK_PKTINFO on (once; it stays on): control buffers per slot, the
 * groups of datagrams already read kept. Returns 0 or -errno. */
static int pktinfo_on(struct cn_sock *s)
{
	int one = 1;

	if (s->pktinfo)
		return 0;
	if (!s->ctrl) {
		/* Both or neither: the receive paths use them together. */
		uint8_t *ctrl = calloc(s->nslots, CN_CTRL_SIZE);
		uint32_t *groups = calloc(s->nslots, sizeof(*groups));

		if (!ctrl || !groups) {
			free(ctrl);
			free(groups);
			return -ENOMEM;
		}
		s->ctrl = ctrl;
		s->groups = groups;
		for (uint32_t i = 0; i < s->nslots; i++) {
			s->mmsg[i].msg_hdr.msg_control = s->ctrl + (size_t)i * CN_CTRL_SIZE;
			s->mmsg[i].msg_hdr.msg_controllen = CN_CTRL_SIZE;
		}
	}
	if (setsockopt(s->fd, SOL_NETLINK, NETLINK_PKTINFO, &one, sizeof(one)) < 0)
		return -errno;
	/* Datagrams read before, not yet walked, came without the cmsg:
	 * their groups as nl_groups gave them. */
	for (uint32_t i = s->rx.next; i < s->rx.count; i++)
		s->groups[i] = (uint32_t)ffs((int)s->addrs[i].nl.nl_groups);
	s->pktinfo = 1;
	return 0;
}

/* Undo pktinfo_on after a failed join (its buffers stay for a later
 * one). Datagrams already read are of groups 1..32 or unicast, which
 * nl_groups reports as well as the cmsg did. */
static void pktinfo_off(struct cn_sock *s)
{
	int zero = 0;

	if (setsockopt(s->fd, SOL_NETLINK, NETLINK_PKTINFO, &zero, sizeof(zero)) == 0)
		s->pktinfo = 0;
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
	int turned_on = join && group > 32 && !s->pktinfo;

	if (turned_on) {
		int r = pktinfo_on(s);

		if (r < 0)
			return cn_fail(-r);
	}
	/* Groups are numbers: this is NETLINK_ADD_MEMBERSHIP, never a bind mask.
	 * Called on the fd directly: libnl's membership calls take int and
	 * report -NLE_* codes, which would lose errno. */
	if (setsockopt(s->fd, SOL_NETLINK, opt, &g, sizeof(g)) < 0) {
		int err = errno;

		/* A group the unit does not have: leave the receive paths as
		 * they were (PKTINFO off keeps cn_proc_recv's fast path). */
		if (turned_on)
			pktinfo_off(s);
		return cn_fail(err);
	}
	/* cn_request to the proc connector joins for the caller when this is 0. */
	if (group == CN_IDX_PROC && s->unit == NETLINK_CONNECTOR)
		s->proc.joined = join;
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
	st->datagrams += s->simple;
	st->messages += s->simple;
	return 0;
}

size_t cn_pending(const struct cn_sock *s)
{
	return s ? s->backlog.count : 0;
}
