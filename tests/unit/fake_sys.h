/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fake_sys.h - fake send/receive system calls for libcn unit tests.
 *
 * Tests linked with -Wl,--wrap=recvmsg,--wrap=recvmmsg,--wrap=recvfrom,
 * --wrap=sendmsg,--wrap=sendmmsg,--wrap=send,--wrap=poll,--wrap=setsockopt,
 * --wrap=calloc,--wrap=getsockopt
 * see libcn's calls land here:
 *   - recvmsg/recvmmsg/recvfrom pop datagrams (or errors) queued with
 *     fake_dgram() / fake_error(); an empty queue gives EAGAIN (a test never
 *     blocks);
 *   - sendmsg, sendmmsg and send record the bytes handed to them
 *     (fake_sent(); send has no address: has_name 0, dst_port 0, the peer
 *     cn_open connects to) and may call a responder hook that queues the
 *     kernel's answer;
 *   - poll reports readable when the queue holds something, else moves one
 *     "later" datagram into the queue (a reply that arrives while waiting),
 *     else times out at once;
 *   - setsockopt of SOL_NETLINK group membership is recorded and succeeds;
 *     NETLINK_PKTINFO is recorded and makes recvmsg/recvmmsg add the
 *     kernel's cmsg (struct nl_pktinfo, the datagram's group) when given a
 *     control buffer; everything else goes to the real call;
 *   - getsockopt SO_MEMINFO is counted, and answered by fake_meminfo once
 *     set; everything else goes to the real call.
 */
#ifndef FAKE_SYS_H
#define FAKE_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include <libcn.h>

#define FAKE_DGRAM_MAX 20000
#define FAKE_QUEUE     64
#define FAKE_SENT_MAX  64   /* full copies kept of the last sends */
#define FAKE_SENT_HDRS 4096 /* cn_msg headers kept of all sends */

struct fake_dgram {
	uint8_t data[FAKE_DGRAM_MAX] __attribute__((aligned(8)));
	size_t len;
	uint32_t port;	 /* sender's nl_pid */
	uint32_t groups; /* nl_groups bit mask (0: from `group`, as the kernel) */
	uint32_t group;	 /* multicast group number (0: unicast): in nl_groups as
			    a bit for 1..32 only, and in the NETLINK_PKTINFO
			    cmsg once the socket turned it on */
	int msg_flags;	 /* extra msg_flags reported (MSG_TRUNC: the datagram is
			    longer than the buffer; recvfrom with MSG_TRUNC
			    returns a length beyond it) */
	int err;	 /* != 0: the receive call fails with this errno */
};

struct fake_sent {
	uint8_t data[FAKE_DGRAM_MAX] __attribute__((aligned(8)));
	size_t len;
	uint32_t dst_port;
	int has_name;
};

struct fake_counts {
	unsigned recvmsg, recvmmsg, recvfrom, sendmsg, sendmmsg, send, poll, join, leave;
	unsigned pktinfo;     /* setsockopt NETLINK_PKTINFO on */
	unsigned pktinfo_off; /* setsockopt NETLINK_PKTINFO off */
	uint32_t last_join;
	unsigned recv_at_leave; /* receive calls made before the last leave */
	unsigned meminfo;	/* getsockopt SO_MEMINFO */
};

extern struct fake_counts fake_calls;

/* Forget every queued datagram, sent message, hook and counter. */
void fake_reset(void);

/* Queue a new, empty datagram from `port` (0: kernel) and return it. */
struct fake_dgram *fake_dgram(uint32_t port);
/* The same, but held back until libcn polls (a reply arriving later). */
struct fake_dgram *fake_dgram_later(uint32_t port);
/* Queue a failing receive (recvmsg/recvmmsg return -1 with errno err). */
void fake_error(int err);
/* Datagrams and errors still queued (not counting "later" ones). */
unsigned fake_queued(void);

/* Append a netlink message of `type` carrying `len` bytes of payload,
 * padded to NLMSG_ALIGN. Returns a pointer to its nlmsghdr. */
struct nlmsghdr *fake_add_nl(struct fake_dgram *d, uint16_t type, const void *payload, size_t len);
/* Append a connector message (NLMSG_DONE + cn_msg + payload). Returns the
 * cn_msg inside the datagram. */
struct cn_msg *fake_add_cn(struct fake_dgram *d, uint32_t idx, uint32_t val, uint32_t seq,
			   uint32_t ack, const void *payload, size_t len);
/* Append an NLMSG_ERROR carrying `error` (0: an ack). */
void fake_add_nlerr(struct fake_dgram *d, int error);
/* Append the kernel's answer to a request sent with NLM_F_ACK (netlink_ack):
 * an NLMSG_ERROR carrying `error` that echoes the request's header `req`
 * (nlmsg_seq, nlmsg_pid) outside and inside. */
void fake_add_answer(struct fake_dgram *d, int error, const struct nlmsghdr *req);

/* Messages handed to sendmsg/sendmmsg/send, oldest first. fake_sent(i) holds
 * the full bytes of the last FAKE_SENT_MAX only (NULL for older ones);
 * fake_sent_hdr(i) the cn_msg header of any of the first FAKE_SENT_HDRS. */
unsigned fake_sent_count(void);
const struct fake_sent *fake_sent(unsigned i);
const struct cn_msg *fake_sent_hdr(unsigned i);
/* Make the next n sendmsg/sendmmsg/send calls fail with errno err. */
void fake_send_fail(int err, unsigned n);
/* Make each sendmmsg call accept at most n messages (0: no limit). */
void fake_sendmmsg_limit(unsigned n);

/* Called after each message sent (sendmsg, sendmmsg, send) with the cn_msg
 * it carried. */
typedef void (*fake_send_hook)(const struct cn_msg *sent, uint32_t dst_port, void *arg);
void fake_on_send(fake_send_hook fn, void *arg);

/* Make the next NETLINK_ADD_MEMBERSHIP fail with errno err (a group the
 * unit does not have: EINVAL). */
void fake_join_fail(int err);
/* Answer getsockopt(SOL_SOCKET, SO_MEMINFO) from now on (until
 * fake_reset; before, the real call answers): fail with errno err (err !=
 * 0), or give at most len bytes of a meminfo whose SK_MEMINFO_DROPS is
 * drops. */
void fake_meminfo(int err, uint32_t drops, socklen_t len);
/* Make the nth calloc from now (1: the next) return NULL with ENOMEM
 * (calloc is wrapped too: --wrap=calloc). */
void fake_calloc_fail(unsigned nth);

/* Open a socket on NETLINK_CONNECTOR with the given flags and backlog
 * (0: default). Returns NULL (and the test should skip) if the machine has
 * no netlink at all. */
struct cn_sock *fake_open(uint32_t flags, uint32_t backlog);

/* CMocka fixtures shared by the tests: the socket a setup put in *state
 * (skips the test when fake_open found no netlink), and its teardown. */
struct cn_sock *fake_sock(void **state);
int fake_teardown(void **state);

/* The cn_msg of sent message i (after its nlmsghdr). */
const struct cn_msg *fake_sent_cn(unsigned i);

#endif
