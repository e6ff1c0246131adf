/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcn - talk to the Linux kernel connector from userspace.
 *
 * Conventions
 *   - Functions returning int return >= 0 on success or -errno on failure,
 *     and leave errno set to the same (positive) value. Functions returning
 *     pointers return NULL with errno set.
 *   - Success is 0, or, for calls that may store fewer results than asked
 *     for, the number stored (cn_recv_batch, cn_async_complete,
 *     cn_proc_handle: 1 or 0), and cn_proc_missed's CN_PROC_MISSED_AT_LEAST
 *     (a count that is a lower bound). Flags and yes/no answers have calls
 *     of their own (cn_proc_filter_mode, cn_proc_probe_filter, cn_is_reply).
 *   - Timeouts in milliseconds mean the same everywhere: < 0 no limit, 0 do
 *     not wait (use only what has arrived already), > 0 wait that long.
 *   - -ENOBUFS always means "the socket overran and messages were lost".
 *     No other failure is reported as -ENOBUFS.
 *   - Messages live in caller buffers or in the socket's own receive buffer;
 *     the socket handle (struct cn_sock) is the only heap object, and nothing
 *     is allocated per message on the send and receive paths.
 *
 * Thread safety
 *   - A struct cn_sock has no internal locking: use one from one thread at a
 *     time (or serialise the calls yourself). Distinct sockets are
 *     independent and may be used from different threads at once.
 *   - Messages returned by a receive call point into the socket's buffer and
 *     stay valid until the next receive, request or close on that socket.
 *   - Functions that take neither a struct cn_sock nor a struct
 *     cn_proc_tracker (builders such as cn_msg_init and cn_notify_build,
 *     decoders such as cn_proc_decode, cn_is_reply, cn_proc_what_name,
 *     cn_version) keep no state and are thread-safe.
 *   - A struct cn_proc_tracker has no internal locking either: its calls,
 *     the ones that only read it (cn_proc_tracker_find, _next, _stats)
 *     included, are for one thread at a time. Distinct trackers are
 *     independent.
 */
#ifndef LIBCN_H
#define LIBCN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include <libcn/proto.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CN_EXPORT __attribute__((visibility("default")))
#else
#define CN_EXPORT
#endif

/* The version of this header. LIBCN_VERSION compares as a number:
 * #if LIBCN_VERSION >= LIBCN_VERSION_NUM(0, 2, 0). */
#define LIBCN_VERSION_MAJOR	   0
#define LIBCN_VERSION_MINOR	   1
#define LIBCN_VERSION_PATCH	   0
#define LIBCN_VERSION_NUM(a, b, c) (((a) << 16) | ((b) << 8) | (c))
#define LIBCN_VERSION                                                                              \
	LIBCN_VERSION_NUM(LIBCN_VERSION_MAJOR, LIBCN_VERSION_MINOR, LIBCN_VERSION_PATCH)
#define LIBCN_VERSION_STRING "0.1.0"

/* The version of the library running (LIBCN_VERSION of the header it was
 * built from), which may be newer than the header a program was built with. */
CN_EXPORT unsigned int cn_version(void);

/* Declare an options struct `name` of type `struct type` with its size set
 * and the given fields, e.g. CN_OPTS(cn_open_opts, o, .flags = CN_OPEN_NONBLOCK);
 * (the other fields are zero, which means their default). */
#define CN_OPTS(type, name, ...) struct type name = { .sz = sizeof(struct type), __VA_ARGS__ }

/* ------------------------------------------------------------------------ */
/* Sockets                                                                  */
/* ------------------------------------------------------------------------ */

/* An open connector socket. Opaque; created by cn_open, freed by cn_close. */
struct cn_sock;

/* cn_open_opts.flags. CN_OPEN_ANY_SENDER: accept messages from any port,
 * not only the kernel's (0); without it the socket is connected to the
 * kernel (see cn_open). CN_OPEN_PKTINFO: take every message's group from
 * NETLINK_PKTINFO control data from the start (cn_join turns it on by
 * itself for a group above 32; see struct cn_message). */
#define CN_OPEN_NONBLOCK   0x1u /* receive calls return -EAGAIN instead of waiting */
#define CN_OPEN_ANY_SENDER 0x2u /* accept messages from any port */
#define CN_OPEN_PKTINFO	   0x4u /* groups from NETLINK_PKTINFO (any group number) */

/*
 * Options for cn_open. Zero-initialise, set .sz = sizeof(struct cn_open_opts)
 * (or declare it with CN_OPTS), then set what you need; fields left at 0 take
 * the default. The size comes first so the struct can grow: a program built
 * with an older, smaller struct passes its smaller sz; one built with a newer,
 * larger struct is accepted by an older library when the bytes it does not
 * know are all zero, refused with E2BIG otherwise. sz 0 (forgotten) is EINVAL.
 */
struct cn_open_opts {
	size_t sz;	/* sizeof(struct cn_open_opts) */
	uint32_t flags; /* CN_OPEN_* */
	/* Receive buffer bytes, asked for as cn_set_rcvbuf does (cn_rcvbuf
	 * tells what was granted). 0: net.core.rmem_default asked for, which
	 * the kernel doubles like any request, so the buffer is twice a plain
	 * socket's (libnl's connect shrinks it to 32 KiB: a size is always
	 * set). */
	int rcvbuf;
	uint32_t batch;	  /* max datagrams per cn_recv_batch call; 0: 32 */
	uint32_t backlog; /* bytes kept for messages that arrive during cn_request; 0: 256 KiB */
};

/*
 * Open a connector socket on netlink unit `unit` (NETLINK_CONNECTOR for the
 * kernel's own connector, or the unit kmod reports) and bind it to a local
 * port chosen by the kernel. `opts` may be NULL for defaults. Unless
 * CN_OPEN_ANY_SENDER is set, the socket is also connected to the kernel
 * (port 0): the kernel refuses unicast to it from any other port (the sender
 * gets ECONNREFUSED), and small messages to the kernel are sent with send().
 * Returns the socket, or NULL with errno set (EINVAL for bad options,
 * including opts->sz 0 or too small to hold .flags; E2BIG for a larger
 * opts->sz with nonzero bytes beyond this version's struct;
 * EPROTONOSUPPORT when the kernel has no such netlink unit, ENOMEM, ...).
 * The caller owns the socket and frees it with cn_close.
 */
CN_EXPORT struct cn_sock *cn_open(int unit, const struct cn_open_opts *opts);

/* Close the socket and free everything it owns. NULL is accepted. */
CN_EXPORT void cn_close(struct cn_sock *s);

/* The socket's file descriptor, for poll/epoll (readable: cn_recv has work,
 * but see cn_pending: messages libcn already holds do not make it readable).
 * The fd stays owned by the socket: do not close it. */
CN_EXPORT int cn_fd(const struct cn_sock *s);

/* The netlink unit and local port id the socket is bound to. */
CN_EXPORT int cn_unit(const struct cn_sock *s);
CN_EXPORT uint32_t cn_port(const struct cn_sock *s);

/* Switch non-blocking mode on (on != 0) or off. Returns 0 or -errno. */
CN_EXPORT int cn_set_nonblocking(struct cn_sock *s, int on);

/*
 * Set the receive buffer to `bytes`. With CAP_NET_ADMIN the size is forced
 * (SO_RCVBUFFORCE, above net.core.rmem_max); without it the kernel caps it.
 * Returns the size granted in the request's terms, or -errno: `bytes` when
 * granted in full, less when net.core.rmem_max capped it, more when the
 * kernel raised it to its minimum (a request of 1 gives 1152 on 6.x). The
 * kernel doubles the size for its bookkeeping (socket(7)) and getsockopt
 * SO_RCVBUF reports the doubled value; this returns half of that.
 */
CN_EXPORT int cn_set_rcvbuf(struct cn_sock *s, int bytes);

/* The receive buffer's size now, in cn_set_rcvbuf's terms (half of what
 * getsockopt SO_RCVBUF reports): what cn_open_opts.rcvbuf or the last
 * cn_set_rcvbuf was granted. Returns it or -errno (-EINVAL for NULL). */
CN_EXPORT int cn_rcvbuf(const struct cn_sock *s);

/* Join / leave multicast group `group` (a group NUMBER, e.g. CN_IDX_PROC,
 * not a bit mask). Joining a group above 32 also turns NETLINK_PKTINFO on
 * for good (the kernel names only groups 1..32 in a sender's address), so
 * that cn_message.group reports it: receive calls on this socket then use
 * recvmsg with control data, a little more work per datagram than without.
 * Returns 0 or -errno (-EINVAL for group 0 or a group the unit does not
 * have, -ENOMEM). */
CN_EXPORT int cn_join(struct cn_sock *s, uint32_t group);
CN_EXPORT int cn_leave(struct cn_sock *s, uint32_t group);

/* ------------------------------------------------------------------------ */
/* Building and sending                                                      */
/* ------------------------------------------------------------------------ */

/* Bytes needed for a cn_msg carrying `len` payload bytes. */
#define CN_MSG_SIZE(len) (sizeof(struct cn_msg) + (size_t)(len))

/*
 * The largest payload (cn_msg.len) the kernel's connector takes: it drops,
 * silently, a message whose len + sizeof(struct cn_msg) is over
 * CONNECTOR_MAX_MSG_SIZE (drivers/connector/connector.c, cn_rx_skb), so
 * 16364 bytes. Every send call refuses a longer message to the kernel on
 * NETLINK_CONNECTOR with -EMSGSIZE. To another port, or on kmod's unit
 * (which takes CONNECTOR_MAX_MSG_SIZE and refuses more itself), the limit
 * is CONNECTOR_MAX_MSG_SIZE (16384).
 */
#define CN_MSG_MAX_LEN ((size_t)CONNECTOR_MAX_MSG_SIZE - sizeof(struct cn_msg))

/*
 * Build a message in `buf` (at least CN_MSG_SIZE(len) bytes, aligned for
 * struct cn_msg): id, seq = ack = flags = 0, and a copy of `len` bytes of
 * `data` (data may be NULL when len is 0, or to leave the payload for the
 * caller to fill). Returns the message (pointing into buf), or NULL with
 * errno EINVAL (NULL buf) or EMSGSIZE (len > CONNECTOR_MAX_MSG_SIZE or
 * bufsize too small).
 */
CN_EXPORT struct cn_msg *cn_msg_init(void *buf, size_t bufsize, uint32_t idx, uint32_t val,
				     const void *data, size_t len);

/* cn_send flags */
#define CN_SEND_KEEP_SEQ	0x1u /* send msg->seq as it is (default: the socket's next seq) */
#define CN_SEND_KEEP_ACK	0x2u /* send msg->ack as it is (default: a fresh random ack) */
/* Ask the kernel side for its verdict (NLM_F_ACK) and return it: see cn_send. */
#define CN_SEND_ACK		0x4u
/* cn_request only: keep waiting through socket overruns (see cn_request). */
#define CN_REQUEST_OVERRUN_WAIT 0x8u

/*
 * Send `msg` (header plus msg->len payload bytes) to the kernel.
 * Genealogy: unless told to keep them, the socket writes its next sequence
 * number (incrementing from a random start) into msg->seq and a random
 * number into msg->ack before sending, so after the call msg holds exactly
 * what went out. Returns 0, or -errno (-EMSGSIZE if msg->len is more than
 * the receiver takes: CN_MSG_MAX_LEN to the kernel on NETLINK_CONNECTOR,
 * CONNECTOR_MAX_MSG_SIZE otherwise; -EAGAIN on a full non-blocking socket,
 * ...).
 *
 * CN_SEND_ACK: the datagram carries NLM_F_ACK (nlmsg_seq = msg->seq) and
 * the call returns the receiver's answer, the NLMSG_ERROR echoing that seq
 * and this socket's port: 0 when the message was taken, or its refusal as
 * -errno (kmod, cnbus.ko: -EPERM without CAP_NET_ADMIN, -ENOSPC when its
 * notification table is full, -ENODEV when no callback has the id,
 * -EINVAL/-EMSGSIZE for malformed messages, ...). Kernel netlink input runs
 * during the send, so the answer is read without waiting; 1 means none
 * came: the receiver does not answer NLM_F_ACK (the built-in connector,
 * NETLINK_CONNECTOR, does not; the message was sent). -ENOBUFS: the socket
 * overran before the answer was read (it may have been lost; the message
 * was sent; counted in cn_stats.overruns). Messages that arrive before the
 * answer are kept for cn_recv (or go to the handler) as during cn_request.
 * Other answers and errors met meanwhile are kept for cn_recv too. The call
 * reads the socket: like a receive call, it ends the validity of messages
 * returned before (see top).
 */
CN_EXPORT int cn_send(struct cn_sock *s, struct cn_msg *msg, unsigned int flags);

/* Like cn_send, but to netlink port `port` (0: the kernel). CN_SEND_ACK
 * needs port 0 (-EINVAL otherwise): only the kernel answers. */
CN_EXPORT int cn_sendto(struct cn_sock *s, struct cn_msg *msg, uint32_t port, unsigned int flags);

/* ------------------------------------------------------------------------ */
/* Receiving                                                                 */
/* ------------------------------------------------------------------------ */

/* One received message. msg points into the socket's buffer (see top). */
struct cn_message {
	const struct cn_msg *msg; /* header + msg->len payload bytes, validated */
	uint32_t port;		  /* sender's netlink port id; 0 is the kernel */
	uint32_t group;		  /* multicast group it came through, 0: unicast. Groups
				     above 32 are reported once the socket joined one
				     (cn_join) or has CN_OPEN_PKTINFO; before, they
				     show as 0 (the kernel's address has 32 bits). */
};

/* receive flags */
#define CN_RECV_DONTWAIT 0x1u /* do not wait, even on a blocking socket */

/*
 * Receive one message. One datagram may hold several messages: they are
 * returned one per call. Messages kept during cn_request come first.
 * Returns 0 with *out filled, or one of the receive errors, which every
 * receive call (cn_recv_batch, cn_proc_recv, cn_proc_recv_batch) shares.
 * After each of them the socket stays usable and the next call goes on
 * with what follows; only -EINVAL (bad arguments) and -EBADF, -ENOTSOCK or
 * -EFAULT (a closed or broken socket or buffer: the caller's bug) do not
 * come from the traffic:
 *   -EAGAIN    nothing to read (non-blocking socket or CN_RECV_DONTWAIT)
 *   -ENOBUFS   the socket overran (or the request backlog overflowed):
 *              messages were lost (see cn_drops).
 *   -EBADMSG   a malformed datagram (truncated header, cn_msg.len that
 *              disagrees with the netlink length): the rest of it is dropped
 *              and counted in cn_stats.malformed.
 *   -EMSGSIZE  a datagram larger than the receive buffer: it was cut short
 *              and is dropped.
 *   -EINTR     interrupted by a signal.
 *   -ENOMEM    no memory to align a record of a bundle: it is skipped.
 *   any other  an NLMSG_ERROR the kernel sent, as -error (out->port is set).
 * Datagrams from ports other than 0 are skipped (counted in
 * cn_stats.foreign) unless the socket was opened with CN_OPEN_ANY_SENDER.
 */
CN_EXPORT int cn_recv(struct cn_sock *s, struct cn_message *out, unsigned int flags);

/*
 * Receive up to `max` messages with as few system calls as possible
 * (recvmmsg of up to opts.batch datagrams). Waits for the first message
 * unless the socket is non-blocking or CN_RECV_DONTWAIT is given; never waits
 * for more. Returns the number of messages stored in out[] (>= 1), or a
 * negative error as cn_recv. An overrun found after some messages were read
 * is returned by the next call, so nothing is hidden.
 */
CN_EXPORT int cn_recv_batch(struct cn_sock *s, struct cn_message *out, unsigned int max,
			    unsigned int flags);

/* Counters kept by a socket since it was opened. */
struct cn_stats {
	/* cn_msg records taken out of the datagrams read, whatever became of
	 * them: returned, skipped by a proc call (another id, an ack, a type
	 * outside the mask), kept or dropped by a request's wait. */
	uint64_t messages;
	uint64_t datagrams;   /* datagrams read from the kernel */
	uint64_t overruns;    /* ENOBUFS / NLMSG_OVERRUN reports */
	uint64_t malformed;   /* datagrams or messages refused as malformed */
	uint64_t foreign;     /* datagrams skipped: sent by a non-kernel port */
	uint64_t kept;	      /* messages kept in the backlog during cn_request */
	uint64_t kept_lost;   /* messages lost because the backlog was full */
	uint64_t syscalls;    /* receive system calls made */
	uint64_t reserved[8]; /* 0: room for counters a later version adds
				 without changing the struct's size */
};

/* Copy the socket's counters into *st. Returns 0 or -EINVAL. */
CN_EXPORT int cn_stats(const struct cn_sock *s, struct cn_stats *st);

/*
 * How many datagrams the kernel dropped for this socket because its receive
 * buffer was full: the socket's own counter (sk_drops, as /proc/net/netlink
 * shows it), into *drops. Netlink reports an overrun once (-ENOBUFS, one in
 * cn_stats.overruns) and drops everything until the queue is read empty;
 * this counts each datagram dropped. Under a kernel filter (proc events, 6.6
 * on) only what the filter let through can be dropped, so it is the number
 * of events lost, which no sequence gap shows there. One system call
 * (getsockopt SO_MEMINFO, SK_MEMINFO_DROPS) whatever else is open; a
 * kernel without SO_MEMINFO (before 4.12) is read from /proc/net/netlink
 * (-ENOENT if it does not list the socket). Returns 0 or -errno.
 */
CN_EXPORT int cn_drops(const struct cn_sock *s, uint64_t *drops);

/*
 * Number of messages and reports libcn holds that a receive call returns
 * without reading the socket, so that poll cannot see them: messages kept
 * during cn_request, the records of a datagram already read and not all
 * returned yet (a w1 bundle holds several; so does a read that filled a
 * smaller cn_recv_batch), and each report to make after messages already
 * returned (one each): a loss (-ENOBUFS: the request backlog overflowed, or
 * the socket overran while messages were kept) and an error put off. Before
 * waiting on cn_fd, receive until this is 0 (or until a CN_RECV_DONTWAIT
 * call returns -EAGAIN).
 */
CN_EXPORT size_t cn_pending(const struct cn_sock *s);

/* ------------------------------------------------------------------------ */
/* Genealogy: requests and replies                                           */
/* ------------------------------------------------------------------------ */

/* How a reply is recognised. */
enum cn_match {
	CN_MATCH_STRICT = 0,   /* same id, same seq, ack == request ack + 1 */
	CN_MATCH_ACK_ONLY = 1, /* same id, ack == request ack + 1 (the proc connector
				  overwrites seq, see docs/DESIGN.md) */
};

/* Does `msg` answer `req` under `policy`? Returns 1 yes, 0 no. */
CN_EXPORT int cn_is_reply(const struct cn_msg *req, const struct cn_msg *msg, enum cn_match policy);

/*
 * Called for each message that arrives during cn_request and is not the
 * reply, when set with cn_set_handler. The message is only valid during the
 * call.
 */
typedef void (*cn_handler_fn)(const struct cn_message *m, void *arg);

/* Hand messages that arrive during cn_request to `fn` instead of keeping
 * them for cn_recv. fn NULL restores keeping. */
CN_EXPORT void cn_set_handler(struct cn_sock *s, cn_handler_fn fn, void *arg);

/*
 * Send `req` (as cn_send with `flags`) and wait up to `timeout_ms`
 * milliseconds (< 0: forever; 0: take only a reply that is there already)
 * for its reply under `policy`. A request to the proc connector
 * ({CN_IDX_PROC, CN_VAL_PROC} on NETLINK_CONNECTOR), which answers through
 * its multicast group only, joins group CN_IDX_PROC first if the socket has
 * not, and leaves it again right after the send (the answer is queued by
 * then), dropping the proc events that came through it: a socket never
 * collects proc events it did not subscribe to (see cn_request(3)). The
 * time counts
 * from the moment nothing more is queued: messages already waiting on the
 * socket (and the handler's time for each) come first, so a call can last
 * that long plus `timeout_ms`.
 * Messages that arrive meanwhile are not lost: they go to the handler (see
 * cn_set_handler) or are kept for the next cn_recv (up to opts.backlog bytes;
 * beyond it they are counted in kept_lost and the next cn_recv returns
 * -ENOBUFS).
 * Returns 0 with *reply filled (valid until the next receive call),
 * -ETIMEDOUT, -ENOBUFS if the socket overran while waiting (the reply may
 * have been lost; the request can be retried), or another -errno.
 * Flags besides cn_send's:
 *   CN_SEND_ACK    a refusal answered by the kernel side (see cn_send) ends
 *                  the wait and is returned as -errno (e.g. -ENODEV from
 *                  kmod for an id without callback, instead of
 *                  -ETIMEDOUT); its success answer does not end it.
 *   CN_REQUEST_OVERRUN_WAIT  for daemons that must not drop a request
 *                  over a burst of other traffic: an overrun does not end
 *                  the wait. It is counted in cn_stats.overruns (and
 *                  cn_proc_stats.overruns), and the next cn_recv returns
 *                  -ENOBUFS after the messages kept before it. The reply
 *                  itself may have been lost: give a timeout.
 */
CN_EXPORT int cn_request(struct cn_sock *s, struct cn_msg *req, unsigned int flags,
			 enum cn_match policy, int timeout_ms, struct cn_message *reply);

/*
 * Answer received message `to` in libcn's genealogy: sends a message with
 * the same id and seq, ack + 1, and `len` bytes of `data`, to the port it
 * came from. It is cn_reply_as(s, to, CN_REPLY_GENEALOGY, 0, data, len).
 * Returns 0 or -errno (-EMSGSIZE for a len the receiver does not take: as
 * cn_send, CN_MSG_MAX_LEN to the kernel on NETLINK_CONNECTOR).
 */
CN_EXPORT int cn_reply(struct cn_sock *s, const struct cn_message *to, const void *data,
		       size_t len);

/*
 * Reply conventions: how each in-tree kernel user of the connector tells a
 * request's answers from other messages (cn_reply_as(3) cites the kernel
 * file and line of each). One convention says both directions: some kernel
 * users ask and wait for an answer from userspace (cn_reply_as builds the
 * answer they match), w1 is asked and answers (cn_request_all collects its
 * answers), libcn's own genealogy goes both ways. A call given a convention
 * of the other direction refuses it with -EINVAL.
 */
enum cn_reply_conv {
	CN_REPLY_GENEALOGY = 0, /* both ways: seq copied, ack + 1 (cn_reply; the reply
				   cn_request takes under CN_MATCH_STRICT) */
	CN_REPLY_DM_ULOG = 1,	/* dm-log-userspace asks: seq copied, ack = the error as a
				   positive errno (0: success); the kernel matches a
				   bare reply (len 0) on seq, and a reply with data on
				   the payload's dm_ulog_request.seq: see cn_dm_ulog_reply */
	CN_REPLY_UVESAFB = 2,	/* uvesafb asks its helper (v86d): seq and ack copied */
	CN_REPLY_W1 = 3,	/* w1 answers: data with seq copied and ack = seq + 1,
				   then a status per command with the request's ack
				   (libcn/w1.h, cn_request_all) */
	CN_REPLY_HV = 4,	/* hv_utils asks: seq = ack = 0 (matched by id and payload) */
};

/*
 * Fill `out` with the header of a reply to `req` under `conv`, carrying
 * `len` payload bytes (id copied, flags 0). `error` is 0 or a negative
 * errno, and only CN_REPLY_DM_ULOG carries one (in ack, as -error). Pure.
 * Returns 0, -EINVAL (NULL pointers, an unknown conv, CN_REPLY_W1: w1
 * waits for no answer from userspace, it treats every message it is sent
 * as a new request; error > 0 or below -4095, or an error under a
 * convention that has no room for it),
 * -EMSGSIZE (len > CONNECTOR_MAX_MSG_SIZE; cn_reply_as refuses more: what
 * its receiver drops, see CN_MSG_MAX_LEN).
 */
CN_EXPORT int cn_reply_header(struct cn_msg *out, const struct cn_msg *req, enum cn_reply_conv conv,
			      int error, size_t len);

/*
 * Answer received message `to` under `conv` (header as cn_reply_header),
 * with `len` bytes of `data`, to the port it came from. Seq and ack are
 * sent as the convention says, never rewritten. Returns 0 or -errno (as
 * cn_reply_header; -EMSGSIZE for len over CN_MSG_MAX_LEN to the kernel,
 * which would drop the answer and wait for it; or the send's).
 */
CN_EXPORT int cn_reply_as(struct cn_sock *s, const struct cn_message *to, enum cn_reply_conv conv,
			  int error, const void *data, size_t len);

/* What an answer collected by cn_request_all is (struct cn_answer.kind). */
#define CN_ANSWER_DATA	  0 /* data: the reply of CN_REPLY_GENEALOGY; w1's data */
#define CN_ANSWER_STATUS  1 /* w1: the result of one command, or of a whole w1 message */
/* cn_answer.part of an answer to none of the request's parts. */
#define CN_ANSWER_NO_PART 0xffffffffu

/* One answer to a request, handed to a cn_answer_fn by cn_request_all. */
struct cn_answer {
	struct cn_message m; /* the record it came in (valid during the call only) */
	int kind;	     /* CN_ANSWER_DATA or CN_ANSWER_STATUS */
	int status;	     /* a status: 0 or -errno (the command failed); data: 0 */
	/* w1: which w1 message of the request (0 the first, in the order of
	 * the payload) and which command of it (0 the first) the answer is
	 * for. A status for a whole w1 message (-ENODEV: no such slave or
	 * master; -EPROTO: a message without commands) names the first
	 * command it ends. 0 and 0 under CN_REPLY_GENEALOGY. */
	uint32_t part;
	uint32_t cmd;
	/* The answer's data, unaligned (read it with memcpy): w1, what the
	 * command answered (READ, TOUCH: the bytes read; SEARCH,
	 * ALARM_SEARCH, LIST_SLAVES: 8-byte ROM ids; LIST_MASTERS: 4-byte
	 * master ids), NULL and 0 for a status; genealogy, the payload. */
	const void *data;
	size_t len;
};

/* Called by cn_request_all for each answer, in the order they arrive. It
 * must not receive or send on the socket: the answer lives in the socket's
 * buffer, which the request is still walking. The calls that send or
 * request (cn_send, cn_sendto, cn_reply, cn_reply_as, cn_dm_ulog_reply and
 * _ack, cn_request, cn_request_all, cn_async_send and _complete,
 * cn_proc_listen, cn_proc_ignore, cn_proc_probe_filter's probe) return
 * -EBUSY there; the receive calls are not checked. */
typedef void (*cn_answer_fn)(const struct cn_answer *a, void *arg);

/*
 * Send `req` (genealogy and flags as cn_request) and collect every answer
 * its kernel user sends under convention `conv`, handing each to fn (may
 * be NULL) as it arrives, until the last one; other messages are kept for
 * cn_recv or go to the handler, as during cn_request.
 *   CN_REPLY_GENEALOGY  one reply, same id and seq, ack + 1 (kmod, peers;
 *                       not the proc connector, which puts its own seq
 *                       and answers through its group: -EINVAL, use
 *                       cn_request with CN_MATCH_ACK_ONLY).
 *   CN_REPLY_W1         req is a w1 request (libcn/w1.h): answers are
 *                       matched on id and seq, data told from statuses by
 *                       ack (data: seq + 1; status: the request's ack,
 *                       which libcn never makes equal to seq + 1); each
 *                       command gets its data (several messages for a
 *                       long search), then one status; the request ends
 *                       when every command's status came, a
 *                       CN_W1_LIST_MASTERS with its ids (it has no status
 *                       when it succeeds). A w1 message the kernel refuses
 *                       whole gets one status, which ends it, and but for
 *                       -ENODEV every later one (the kernel stops there).
 * The time counts as in cn_request: timeout_ms from the moment nothing
 * more is queued, for the whole collection (give a w1 search time: the
 * kernel runs it on the bus).
 * Returns 0 once every answer came and every status was 0; the first
 * failed status (-errno, e.g. -ENODEV: no such slave) once every answer
 * came; -ETIMEDOUT (the answers so far were handed to fn); -ENOBUFS (the
 * socket overran: answers may be lost); -EINVAL (NULL s or req, unknown
 * flags, a convention whose kernel user asks instead of answering,
 * CN_REPLY_GENEALOGY to the proc connector, a w1
 * request that is not one: another id, no w1 message, a message or
 * command longer than what holds it, KEEP_ACK with ack = seq + 1);
 * -EMSGSIZE (as cn_send); -EBUSY (from an answer's fn on s); -ENOMEM; or
 * the send's error.
 */
CN_EXPORT int cn_request_all(struct cn_sock *s, struct cn_msg *req, unsigned int flags,
			     enum cn_reply_conv conv, int timeout_ms, cn_answer_fn fn, void *arg);

/* dm-log-userspace (<linux/dm-log-userspace.h>, CN_IDX_DM / CN_VAL_DM_USERSPACE_LOG). */
struct dm_ulog_request;

/*
 * Decode the dm-log-userspace request carried by `msg`, checked as the kernel
 * builds it (len = sizeof(struct dm_ulog_request) + data_size): its fixed
 * part is copied to *req (the payload is not aligned for the struct's
 * __u64 in the message), and the return value points to its req->data_size
 * bytes of data inside msg (no alignment: read them with memcpy). The
 * request's version and type are the caller's to check. NULL with errno
 * EINVAL (a NULL pointer), ENOMSG (another id), EBADMSG (too short, or
 * data_size disagrees with len).
 */
CN_EXPORT const void *cn_dm_ulog_decode(const struct cn_msg *msg, struct dm_ulog_request *req);

/*
 * Answer dm-log-userspace request `to` with a result: the request's struct
 * dm_ulog_request echoed (its seq is what the kernel matches) with error
 * set to `error` (0 or -errno) and data_size to `len`, followed by `len`
 * bytes of `data`. A failure without data (error != 0, len 0) is sent as
 * cn_dm_ulog_ack sends it, the one form after which the kernel keeps its
 * room for the data of a resend: -EAGAIN makes it resend the request at
 * once, and -EAGAIN with data is refused (-EINVAL). A failure with data
 * sets the kernel's room to len: for -ESRCH (the log is unknown: the kernel
 * reconnects and retries) send as many bytes (zeros) as the answer will
 * carry, or the retry fails with -ENOSPC (examples/dm-ulog). Returns 0 or -errno
 * (EBADMSG/ENOMSG as cn_dm_ulog_decode, EMSGSIZE when the request's echo
 * and len bytes are more than CN_MSG_MAX_LEN, the send's). A reply
 * longer than the kernel's room for it is refused there with -ENOSPC.
 */
CN_EXPORT int cn_dm_ulog_reply(struct cn_sock *s, const struct cn_message *to, int error,
			       const void *data, size_t len);

/*
 * Answer dm-log-userspace request `to` with a bare status (len 0, seq
 * copied, ack = -error): what the kernel takes for "done, no data"
 * (error 0) or for the failure -error. Same as cn_reply_as with
 * CN_REPLY_DM_ULOG and no data.
 */
CN_EXPORT int cn_dm_ulog_ack(struct cn_sock *s, const struct cn_message *to, int error);

/* ------------------------------------------------------------------------ */
/* Asynchronous requests: many in flight on one socket                       */
/* ------------------------------------------------------------------------ */

/*
 * A request completes with one reply, matched by the ack libcn chose: w1,
 * whose answers are many and whose data carry seq + 1, is asked with
 * cn_request_all (one w1 request carries any number of commands for any
 * number of devices).
 *
 * Prepare the socket for up to `capacity` (1..65536) requests in flight,
 * matched under `policy`; each request not answered within `timeout_ms`
 * (< 0: never) completes with -ETIMEDOUT. Allocates the in-flight table
 * once (freed by cn_close). Returns 0, -EINVAL, -EBUSY (requests are in
 * flight), -ENOMEM.
 */
CN_EXPORT int cn_async_init(struct cn_sock *s, unsigned int capacity, enum cn_match policy,
			    int timeout_ms);

/*
 * Send n requests (genealogy as cn_send with `flags`) with as few system
 * calls as possible (sendmmsg), recording each as in flight with its
 * cookie (cookies may be NULL: the index in reqs is used). An ack it
 * generates is random above its low bits: the low bits of ack + 1 name the
 * request's entry (as many bits as capacity - 1 needs), so that its reply
 * is found without a search. Sends no more than the free capacity.
 * Returns the number sent (>= 1), or -EBUSY when the table is full,
 * -EINVAL (no cn_async_init), -EMSGSIZE (a request longer than cn_send
 * takes; nothing is sent), -EAGAIN, ...
 */
CN_EXPORT int cn_async_send(struct cn_sock *s, struct cn_msg *const *reqs, const uint64_t *cookies,
			    unsigned int n, unsigned int flags);

/* One finished request. */
struct cn_completion {
	uint64_t cookie;	 /* as given to cn_async_send */
	int status;		 /* 0: answered; -ETIMEDOUT: no reply in time */
	struct cn_message reply; /* status 0: the reply (valid until the next receive) */
};

/*
 * Collect up to `max` completions: replies matched by genealogy as they
 * arrive (other messages are kept for cn_recv or go to the handler, as in
 * cn_request), and requests past their deadline. Waits up to `timeout_ms`
 * (< 0: until something completes; 0: never waits) for the first one.
 * Returns the number stored (0: nothing completed in time, or nothing in
 * flight), or -errno (-ENOBUFS: the socket overran; replies may be lost and
 * their requests will time out).
 */
CN_EXPORT int cn_async_complete(struct cn_sock *s, struct cn_completion *out, unsigned int max,
				int timeout_ms);

/* Number of requests in flight. */
CN_EXPORT unsigned int cn_async_inflight(const struct cn_sock *s);

/* ------------------------------------------------------------------------ */
/* Datagram parsing (what cn_recv uses; exposed for tests and custom loops)  */
/* ------------------------------------------------------------------------ */

/*
 * Where cn_parse_next is in a datagram: the next netlink message, or, inside
 * a netlink message that bundles several cn_msg records, the next record and
 * the end of that message. Zero it before the first call; do not change it
 * between calls.
 */
struct cn_parse_pos {
	size_t offset;	/* next netlink message, or next record when msg_end != 0 */
	size_t msg_end; /* end of the bundling netlink message; 0: none */
};

/*
 * Walk a datagram of `len` bytes holding netlink messages, one cn_msg
 * record per call. A netlink message usually holds one record; w1
 * (drivers/w1/w1_netlink.c) bundles several back to back, unaligned, each
 * bounded by its own len, all inside the netlink message's nlmsg_len. Up to
 * 3 bytes of padding after the last record of a message are tolerated.
 * Returns:
 *   1  *out points to a valid cn_msg record (inside buf; the records after
 *      the first of a bundle may be unaligned: copy a record to an aligned
 *      place before reading its fields, which C does not allow through an
 *      unaligned pointer. The receive calls deliver such records aligned.)
 *   0  end of datagram
 *  -EBADMSG    truncated or inconsistent data: a record that runs past its
 *              netlink message, or a netlink message past the datagram
 *              (the records before it were returned; stop walking)
 *  -ENOBUFS    an NLMSG_OVERRUN message
 *  -ENODATA    a message that carries nothing for the caller (NLMSG_NOOP,
 *              an NLMSG_ERROR with error 0): continue walking
 *  other < 0   an NLMSG_ERROR carrying that -errno
 * -EINVAL for a NULL argument.
 */
CN_EXPORT int cn_parse_next(const void *buf, size_t len, struct cn_parse_pos *pos,
			    const struct cn_msg **out);

/* ------------------------------------------------------------------------ */
/* Proc connector (CN_IDX_PROC): process events                              */
/* ------------------------------------------------------------------------ */

/* Event types, equal to the kernel's PROC_EVENT_* values (usable as a mask).
 * Unsigned 32-bit constants, not an enum: PROC_EVENT_EXIT is 0x80000000,
 * which ISO C (C99, C11) does not allow as an enum value (-pedantic says so
 * about the kernel's own enum). cn_proc_event.what is a uint32_t. */
#define CN_PROC_NONE	     0x00000000u /* an ack to LISTEN/IGNORE */
#define CN_PROC_FORK	     0x00000001u
#define CN_PROC_EXEC	     0x00000002u
#define CN_PROC_UID	     0x00000004u
#define CN_PROC_GID	     0x00000040u
#define CN_PROC_SID	     0x00000080u
#define CN_PROC_PTRACE	     0x00000100u
#define CN_PROC_COMM	     0x00000200u
#define CN_PROC_NONZERO_EXIT 0x20000000u /* filter only: exits with status != 0 */
#define CN_PROC_COREDUMP     0x40000000u
#define CN_PROC_EXIT	     0x80000000u

/* Every event type: the kernel's PROC_EVENT_ALL, which includes the
 * CN_PROC_NONZERO_EXIT flag (the kernel compares filters to it exactly). */
#define CN_PROC_ALL                                                                                \
	(CN_PROC_FORK | CN_PROC_EXEC | CN_PROC_UID | CN_PROC_GID | CN_PROC_SID | CN_PROC_PTRACE |  \
	 CN_PROC_COMM | CN_PROC_NONZERO_EXIT | CN_PROC_COREDUMP | CN_PROC_EXIT)

/* A decoded proc event. Fields not used by an event type are 0 (padding
 * and reserved bytes are not written). See cn_proc_listen(3) for each
 * field. */
struct cn_proc_event {
	uint32_t what;	       /* one CN_PROC_* event type */
	uint32_t cpu;	       /* CPU that sent it */
	uint32_t seq;	       /* that CPU's event counter (cn_msg.seq) */
	uint32_t ack;	       /* cn_msg.ack (for matching LISTEN acks; 0 in events) */
	uint64_t timestamp_ns; /* CLOCK_MONOTONIC ns (ktime_get_ns): cn_proc_realtime_ns */
	pid_t pid;	       /* thread the event is about (fork: the child) */
	pid_t tgid;	       /* its process (thread group) id */
	pid_t parent_pid;      /* fork, exit, coredump: the parent */
	pid_t parent_tgid;
	pid_t tracer_pid; /* ptrace: the tracer (0: detach) */
	pid_t tracer_tgid;
	uint32_t ruid, euid;  /* uid: real/effective uid; gid: real/effective gid */
	uint32_t exit_code;   /* exit: wait(2) status (WIFEXITED etc. apply) */
	int32_t exit_signal;  /* exit: signal the parent gets (SIGCHLD for a process
				forked plainly, a clone's own signal), -1 for a
				thread (it signals nobody) */
	uint32_t ack_err;     /* none: error of the LISTEN/IGNORE ack (0 = ok) */
	char comm[16];	      /* comm: new name, NUL-terminated (as in cn_proc_entry);
				 a source that knows the name of other events may
				 fill it (empty: unknown; the tracker then reads
				 /proc) */
	uint32_t lost_before; /* events lost just before it (see cn_proc_recv) */
	/* Room for fields a later version adds without changing the struct's
	 * size (callers allocate it): not written, do not read. */
	uint64_t reserved[4];
};

/*
 * Decode a proc connector message into *ev (no loss tracking).
 * Returns 0, -EPROTO if msg is not {CN_IDX_PROC, CN_VAL_PROC}, -EBADMSG if
 * its payload is too short for a proc_event.
 */
CN_EXPORT int cn_proc_decode(const struct cn_msg *msg, struct cn_proc_event *ev);

/*
 * The wall-clock time of an event: timestamp_ns (CLOCK_MONOTONIC, as the
 * kernel stamps events) as CLOCK_REALTIME nanoseconds since the epoch,
 * with the offset between the two clocks at this call. A step of the wall
 * clock (settimeofday, an NTP step) between the event and the call moves
 * the answer with it; a reader that wants its times to stay in order
 * across one takes the offset once, cn_proc_realtime_ns(0). 0 for a time
 * before the epoch. Keeps no state: thread-safe.
 */
CN_EXPORT uint64_t cn_proc_realtime_ns(uint64_t timestamp_ns);

/* Short lower-case name of an event type ("fork", "exit", ...; "none" for
 * acks, "unknown" for anything else). Never NULL. */
CN_EXPORT const char *cn_proc_what_name(uint32_t what);

/*
 * Put a wait(2) status (cn_proc_entry.status of a process's exit, or an exit
 * event's exit_code) in words into buf (size bytes, NUL-terminated, cut to
 * fit): "exited with status N", "killed by signal N", with " (core dumped)"
 * when it dumped core, or "status 0xN" for anything else. Returns the length
 * of the whole text (as snprintf: a result >= size was cut), or -EINVAL for
 * a NULL buf with size > 0.
 */
CN_EXPORT int cn_proc_status_text(uint32_t status, char *buf, size_t size);

/*
 * Parse a comma-separated list of event names as printed by
 * cn_proc_what_name ("fork,exec,exit"; also "all" and "nonzero_exit", the
 * latter meaning exits with a non-zero status) into a CN_PROC_* mask.
 * Returns 0 with *mask set, or -EINVAL for an empty list, an empty item or
 * an unknown name ("none" is not an event type).
 */
CN_EXPORT int cn_proc_parse_mask(const char *list, uint32_t *mask);

/*
 * Subscribe the socket (opened on NETLINK_CONNECTOR) to proc events: joins
 * group CN_IDX_PROC and sends PROC_CN_MCAST_LISTEN.
 * `mask` selects event types (CN_PROC_* bits); 0 or CN_PROC_ALL means all.
 * With a partial mask, the kernel's filter (8-byte struct proc_input, Linux
 * >= 6.6) is used when the running kernel has it: this is detected once per
 * process by a probe listen whose ack only such a kernel sends. libcn also
 * filters in userspace, with or without it: cn_proc_recv and cn_proc_handle
 * never return an event outside `mask` (a filtering kernel still delivers
 * events queued before the filtered LISTEN, which follows an unfiltered
 * one that is acked; CN_PROC_NONZERO_EXIT without CN_PROC_EXIT means exits
 * with a non-zero status only). cn_recv returns messages unfiltered.
 * `timeout_ms` bounds each wait for an ack (< 0: no limit, but the filter
 * probe waits 1000 ms at most; 0: send the LISTEN and wait for nothing, so
 * neither the connector's presence nor an error is known, and the kernel
 * filter is used only if an earlier probe found it).
 * On a socket not subscribed yet, what arrived while the acks were awaited
 * (acks, events from before the subscription) is dropped: nothing is left
 * pending that poll cannot see, and per-CPU loss tracking starts at the ack.
 * On a socket already subscribed (a second cn_proc_listen to change the
 * mask) events that arrived meanwhile are kept for the next receive call
 * (cn_pending counts them; they do not make the fd readable).
 * Returns 0, or -errno (-ETIMEDOUT: no ack to a plain listen, e.g. the
 * kernel has no proc connector; the kernel's ack error, e.g. -EPERM; -EPERM
 * too when the kernel refuses this process the join of CN_IDX_PROC: who may
 * listen is the kernel's decision, see cn_proc_listen(3), PRIVILEGES).
 * cn_proc_filter_mode tells how the mask is applied. Per-CPU sequence tracking
 * starts afresh.
 */
CN_EXPORT int cn_proc_listen(struct cn_sock *s, uint32_t mask, int timeout_ms);

/*
 * Stop proc events for this socket (and leave the group, see below): one
 * PROC_CN_MCAST_IGNORE for each LISTEN that cn_proc_listen (or the filter
 * probe) sent on it and the kernel may have counted, and none on a socket
 * that never listened: kernels before 6.6 keep one listener count for the
 * whole machine, so an IGNORE without its LISTEN would stop events for
 * every other listener. A LISTEN the caller sent itself (cn_send) is the
 * caller's to undo. Kernels with filtering do not send the ack to the
 * ignoring socket, so this does not wait for one. On those kernels (6.6
 * on) a socket that sent an IGNORE stays in the group, where the IGNORE
 * filters every event out: the kernel frees a socket's proc state at close
 * only while it is in the group (connector.c, cn_release). Returns 0 or
 * -errno.
 */
CN_EXPORT int cn_proc_ignore(struct cn_sock *s);

/* cn_proc_filter_mode flags */
#define CN_PROC_FILTER_USER 0x1 /* libcn drops events outside the mask */
#define CN_PROC_FILTER_KERNEL                                                                      \
	0x2 /* the kernel filters too: its filtered events leave
				     gaps in the per-CPU sequences, so lost_before and
				     cn_proc_stats.lost count nothing (overruns still do) */

/* How the mask of the last cn_proc_listen is applied: 0 (every event type
 * asked, no filter) or CN_PROC_FILTER_* flags; -EINVAL for a NULL socket. */
CN_EXPORT int cn_proc_filter_mode(const struct cn_sock *s);

/* Probe whether the running kernel filters proc events per socket: the
 * first call of a process joins CN_IDX_PROC on s (on NETLINK_CONNECTOR)
 * and sends a LISTEN that only such a kernel answers, then waits for acks;
 * later calls return the result at once (see cn_proc_listen). 1 yes, 0 no,
 * -errno if the probe could not run. timeout_ms bounds each wait for an ack
 * (< 0: 1000 ms, since a kernel without filters never answers the probe;
 * 0: no probe, -EAGAIN if none ran yet). Acks kept meanwhile are dropped
 * on a socket that has not subscribed (see cn_proc_listen). */
CN_EXPORT int cn_proc_probe_filter(struct cn_sock *s, int timeout_ms);

/*
 * Receive the next proc event, decode it and track loss: ev->lost_before is
 * how many events this CPU's counter skipped since the last event seen from
 * it (exact when no kernel filter is active, since filtered events also
 * advance the counter; with a kernel filter only overruns are reported).
 * A gap is seen between two events of one CPU: losses on a CPU before the
 * first event received from it after cn_proc_listen are reported only as
 * the overrun (-ENOBUFS) that caused them.
 * Messages of other ids are skipped. Events outside cn_proc_listen's mask
 * (and acks) are skipped after being tracked: a gap found before one of
 * them is added to the lost_before of the next event returned (by this
 * call, or by a later one when this one returns none), so it may count
 * events of another CPU than ev->cpu. Nothing lost is left out.
 * Returns 0 with *ev filled (it always stores one event, like cn_recv), or
 * a negative error as cn_recv (-EAGAIN with CN_RECV_DONTWAIT or a
 * non-blocking socket; -ENOBUFS: overrun, call again).
 * A datagram holding one proc event from the kernel (what the proc connector
 * sends) is decoded where it was read.
 */
CN_EXPORT int cn_proc_recv(struct cn_sock *s, struct cn_proc_event *ev, unsigned int flags);

/*
 * Receive up to max proc events with one receive call and decode them into
 * ev[0..n): cn_proc_recv for a storm, what a cn_recv_batch loop calling
 * cn_proc_handle does, without a call per message (docs/PERFORMANCE.md: the
 * cheapest way libcn reads a storm of proc events). Waits for the first event (unless
 * CN_RECV_DONTWAIT or a non-blocking socket), then takes what is queued: at
 * most max datagrams, and at most the socket's batch (cn_open_opts.batch)
 * per call. Once a read found the queue empty (fewer than asked, or
 * -EAGAIN), the next reads take one datagram each, as cn_proc_recv does,
 * until two in a row found one: a reader woken for each event that reads
 * until -EAGAIN before it waits then makes no empty second read inside
 * recvmmsg (one that waits inside the call, one read in three), and
 * either call suits it. lost_before, skipped messages and types outside the mask are as
 * in cn_proc_recv; a gap found before a message skipped after the last
 * event of a call goes with the first event of the next. A datagram that is
 * not one proc event from the kernel (a bundle, another sender, one cut
 * short) is taken apart by the receive funnel's walk in the same call;
 * messages kept during cn_request come one event per call. Returns n >= 1, or a negative error as cn_proc_recv (-EINVAL for a NULL
 * socket or ev, a max of 0, unknown flags); an error met after events were
 * stored is returned by the next receive call.
 */
CN_EXPORT int cn_proc_recv_batch(struct cn_sock *s, struct cn_proc_event *ev, unsigned int max,
				 unsigned int flags);

/*
 * Decode and track one already received message (for cn_recv_batch loops).
 * Returns the number of events stored for the caller: 1 (*ev is one), 0 (the
 * message is to be skipped: another id, an ack, or a type outside
 * cn_proc_listen's mask; *ev may still carry lost_before), or -errno as
 * cn_proc_decode.
 */
CN_EXPORT int cn_proc_handle(struct cn_sock *s, const struct cn_message *m,
			     struct cn_proc_event *ev);

/* Loss accounting of a proc listener. lost counts events (from sequence
 * gaps), overruns counts reports (each of an unknown number of events); one
 * overrun usually shows in both (its gap appears on each CPU's next event):
 * never add them up (cn_proc_listen(3)). */
struct cn_proc_stats {
	uint64_t events; /* events decoded and tracked */
	uint64_t lost;	 /* events missing from per-CPU sequences */
	/* Losses without a per-CPU trace, counted where they are met on any
	 * receive path of the socket (cn_proc_recv, cn_recv, cn_recv_batch,
	 * cn_request, cn_async_complete): socket overruns (ENOBUFS or
	 * NLMSG_OVERRUN, as cn_stats.overruns) and overflows of the request
	 * backlog (one per -ENOBUFS it causes). Each is reported as -ENOBUFS
	 * by a receive call; losses met before that report is made (e.g. a
	 * backlog overflow and a socket overrun during one cn_request) share
	 * it, so overruns may exceed the -ENOBUFS returns. */
	uint64_t overruns;
	uint64_t reserved[4]; /* 0: room for counters a later version adds */
};

/* Copy the proc counters. Returns 0 or -EINVAL. */
CN_EXPORT int cn_proc_stats(const struct cn_sock *s, struct cn_proc_stats *st);

/* cn_proc_missed's return when its count is a lower bound. */
#define CN_PROC_MISSED_AT_LEAST 1

/*
 * How many proc events did this socket miss since cn_proc_listen subscribed
 * it (the last time it was not subscribed already)? One answer where
 * lost_before, cn_proc_stats, cn_stats.overruns and cn_drops each tell a
 * part: events of any type the kernel sent or meant to send this socket
 * that no receive call will return, into *missed. It counts what the
 * socket lost (datagrams the kernel dropped at its full buffer, as
 * cn_drops counts them, and messages a request's wait could not keep,
 * cn_stats.kept_lost) at once, and the per-CPU gaps, which also show an
 * event the kernel could send to nobody, once each CPU sent its next one.
 * Returns 0 when the count is exact: no kernel filter, and the gaps
 * account for every loss of the socket. CN_PROC_MISSED_AT_LEAST when it
 * is a lower bound: a kernel filter is active (filtered events skip
 * sequence numbers, so only the socket's own losses are counted, and an
 * event the kernel sent to nobody shows nowhere), the gap of a loss has not
 * shown yet, or the kernel has no drop counter for the socket. Datagrams
 * of other ids dropped at the socket count too. -EINVAL for NULL
 * arguments or a socket cn_proc_listen never subscribed. One system call
 * (cn_drops).
 */
CN_EXPORT int cn_proc_missed(const struct cn_sock *s, uint64_t *missed);

/* ------------------------------------------------------------------------ */
/* Process tracker: a table of live processes kept from proc events          */
/* ------------------------------------------------------------------------ */

/*
 * Netlink cannot deliver reliably: after an overrun (-ENOBUFS) or a per-CPU
 * gap (cn_proc_event.lost_before) some forks, execs and exits were never
 * seen. The tracker keeps the set of live tasks (processes and, unless told
 * not to, their threads) from the events it is given, and resynchronizes by
 * rescanning /proc when the caller says events were lost, reporting what
 * changed while it was blind. Its memory is allocated once (opts.max_entries);
 * applying an event allocates nothing. An entry may carry the caller's own
 * data (opts.data_size, cn_proc_tracker_data), which follows its task. Not
 * thread-safe: one thread at a time.
 *
 * Typical loop (see cn_proc_tracker(3); a non-blocking socket):
 *   t = cn_proc_tracker_new(NULL);  cn_proc_listen(s, 0, 1000);
 *   cn_proc_tracker_sync(t, NULL, NULL);        (the initial table)
 *   for (;;) {
 *           r = cn_proc_recv(s, &ev, 0);
 *           if (r == -ENOBUFS) cn_proc_tracker_lost(t);
 *           else if (r == 0) e = cn_proc_tracker_event(t, &ev);
 *           else if (r == -EAGAIN) {                    (drained)
 *                   due = cn_proc_tracker_sync_timeout(t);
 *                   if (due == 0) cn_proc_tracker_sync(t, fn, arg);
 *                   else poll(fd, due);                  (due < 0: no limit)
 *           }
 *   }
 */
struct cn_proc_tracker;

/*
 * cn_proc_entry.flags:
 *   THREAD      a thread, not its process's main thread (pid != tgid)
 *   FORK        its fork (or clone) was seen: start_ns is that event's time
 *   EXEC        an exec was seen: exec_ns is the last one's time
 *   SCANNED     found in /proc, not by an event: start_ns comes from its
 *               /proc start time (clock-tick resolution)
 *   STALE_COMM  an exec was seen, but the task was gone before its new name
 *               could be read: comm is the name from before the exec
 *   VANISHED    only on an exit's entry: the last sync reported the task
 *               vanished (it ended while /proc was read) and its exit event
 *               came after all
 *   MAIN_EXITED a process whose main thread has exited (pthread_exit) while
 *               it runs on in its other threads: still a live process
 *   EXITED      only on an exit's entry: the process is gone, this was the
 *               exit of its last thread, and status is what its parent's
 *               waitpid sees; an exit's entry without it is a thread's (the
 *               main thread's too, while other threads run on)
 */
#define CN_PROC_ENTRY_THREAD	  0x1u
#define CN_PROC_ENTRY_FORK	  0x2u
#define CN_PROC_ENTRY_EXEC	  0x4u
#define CN_PROC_ENTRY_SCANNED	  0x8u
#define CN_PROC_ENTRY_STALE_COMM  0x10u
#define CN_PROC_ENTRY_VANISHED	  0x20u
#define CN_PROC_ENTRY_MAIN_EXITED 0x40u
#define CN_PROC_ENTRY_EXITED	  0x80u

/* One live task. Owned by the tracker (the struct may grow at its end). */
struct cn_proc_entry {
	pid_t pid;	   /* thread id (the process id for a main thread) */
	pid_t tgid;	   /* process (thread group) id */
	pid_t ppid;	   /* parent process id; for a thread, its process's parent */
	uint32_t flags;	   /* CN_PROC_ENTRY_* */
	uint64_t start_ns; /* CLOCK_MONOTONIC ns (as cn_proc_event.timestamp_ns) it started */
	uint64_t exec_ns;  /* CLOCK_MONOTONIC ns of its last exec; 0: none seen */
	char comm[16];	   /* task name (comm), NUL-terminated */
	uint32_t status;   /* with CN_PROC_ENTRY_EXITED: the process's wait(2) status
			      (WIFEXITED, WEXITSTATUS, WTERMSIG, WCOREDUMP apply);
			      else 0 */
};

/* cn_proc_tracker_opts.flags */
#define CN_PROC_TRACKER_NO_THREADS 0x1u /* track processes only (fewer entries, faster scans) */

/* The most bytes of caller data an entry may carry (data_size). */
#define CN_PROC_TRACKER_DATA_MAX 1024u

/* Told that entry e's data (cn_proc_tracker_data) ends: free what it points
 * to. e and data are valid during the call only; the call must not call the
 * tracker's functions. See cn_proc_tracker_opts.data_end. */
typedef void (*cn_proc_data_end_fn)(const struct cn_proc_entry *e, void *data, void *arg);

/* Options for cn_proc_tracker_new: zero them, set .sz (see cn_open_opts). */
struct cn_proc_tracker_opts {
	size_t sz;	       /* sizeof(struct cn_proc_tracker_opts) */
	uint32_t flags;	       /* CN_PROC_TRACKER_* */
	uint32_t max_entries;  /* tasks kept at most; 0: 65536. Beyond it tasks are
				 not stored and counted in stats.dropped */
	const char *proc_root; /* procfs to scan; NULL: "/proc" */
	/* Bytes of the caller's own data in every entry (cn_proc_tracker_data),
	 * zeroed when the entry is made; 0: none; at most
	 * CN_PROC_TRACKER_DATA_MAX. */
	uint32_t data_size;
	/* Called once for each entry's data when it ends (the entry leaves
	 * the table, its pid's entry is taken by a new task, or the tracker
	 * is freed); NULL: not told. Needs data_size. */
	cn_proc_data_end_fn data_end;
	void *data_arg; /* data_end's arg */
};

/*
 * Create an empty tracker (fill it with cn_proc_tracker_sync). Allocates its
 * whole table now: a power of two of slots, at least twice max_entries,
 * each of 80 bytes plus data_size rounded up to 16 (160 to 320 bytes per
 * max_entries without data). Returns NULL with errno EINVAL (bad options,
 * data_size above CN_PROC_TRACKER_DATA_MAX, data_end without data_size),
 * E2BIG (see cn_open_opts), ENOENT (no proc_root), ENOMEM. Free with
 * cn_proc_tracker_free.
 */
CN_EXPORT struct cn_proc_tracker *cn_proc_tracker_new(const struct cn_proc_tracker_opts *opts);

/* Free the tracker and what it owns, ending every entry's data first
 * (data_end). NULL is accepted. */
CN_EXPORT void cn_proc_tracker_free(struct cn_proc_tracker *t);

/*
 * The caller's data of entry e (opts.data_size bytes, aligned as malloc's
 * memory is): e as a tracker call returned it (an event's, find's, next's,
 * or the entry a sync's change callback is given). The data belongs to the
 * task, not to the pointer: it moves with the entry when the table moves
 * entries, is zeroed when the tracker makes an entry for a new task (a
 * fork, a task first seen at an exec or in /proc, a reused pid), stays
 * through execs and renames, and ends (opts.data_end) when the task's entry
 * does: at once for an entry removed unseen (a thread an exec ended, an
 * entry two syncs found gone, a pid whose entry a new task takes, the
 * tracker freed), and for the entry an exit returned at the next call that
 * changes the tracker, so an exit's entry keeps its data as long as the
 * entry pointer is valid. Like the entry, the pointer is valid until the
 * next call that changes the tracker. NULL with errno EINVAL: t or e NULL,
 * e not an entry of t, or no data_size.
 */
CN_EXPORT void *cn_proc_tracker_data(struct cn_proc_tracker *t, const struct cn_proc_entry *e);

/*
 * Apply one event: fork adds the child (comm and start from the event and
 * its parent), exec renames it (reading /proc/PID/comm at once), comm
 * renames, exit removes a thread; uid, gid, sid, ptrace and coredump change
 * nothing. A process lives until its last thread has exited, which need
 * not be its main thread: the main thread's exit while other threads run
 * marks it CN_PROC_ENTRY_MAIN_EXITED, and the exit that leaves no thread
 * removes it, returned flagged CN_PROC_ENTRY_EXITED with the wait status
 * its parent's waitpid sees (status); its children (orphans now) get their
 * new parent, the child subreaper or init, read from /proc (the kernel
 * sends no event for that). An exec by any thread is the process's: the
 * kernel ended its other threads, whose exits (and its old main thread's,
 * which may come after the exec's event) count for nothing. Under
 * CN_PROC_TRACKER_NO_THREADS threads are counted, not kept: a thread that
 * ends while a sync reads /proc, or the old main thread of an exec whose
 * exit event the kernel fills after the exec, may be counted out twice,
 * and the process then ends at its last thread but one if its main thread
 * has exited (cn_proc_tracker(3)). An event with lost_before != 0 marks
 * a sync as pending (it still applies the event), unless its
 * timestamp_ns is before the start of the last sync, which then repaired
 * that loss already (an overrun's gap shows on each CPU's next event, after
 * the sync the overrun asked for).
 * Returns the entry the event is about, after the change; for exit, the
 * entry as it was when it was removed (with CN_PROC_ENTRY_VANISHED if the
 * last sync had reported it vanished: a task that ended during the scan,
 * whose exit was not lost after all), the process's (EXITED) when the exit
 * ended it, or the live process's for a main thread that left it running
 * (or one an exec by another thread ended). The pointer stays valid until
 * the next call that changes the tracker. NULL: the event is about no task
 * (an ack), or the task is unknown (not seen since the last sync: an exit,
 * a thread's that an exec ended, or a fork whose entry did not fit), with
 * errno ENOENT. So an exit's entry is the process's exit if and only if it
 * has CN_PROC_ENTRY_EXITED.
 */
CN_EXPORT const struct cn_proc_entry *cn_proc_tracker_event(struct cn_proc_tracker *t,
							    const struct cn_proc_event *ev);

/* The entry of task `pid`, or NULL (errno ENOENT). Valid until the next call
 * that changes the tracker. */
CN_EXPORT const struct cn_proc_entry *cn_proc_tracker_find(const struct cn_proc_tracker *t,
							   pid_t pid);

/* Iterate: the entry after `prev` (NULL: the first), or NULL at the end.
 * The order is unspecified; do not change the tracker while iterating. */
CN_EXPORT const struct cn_proc_entry *cn_proc_tracker_next(const struct cn_proc_tracker *t,
							   const struct cn_proc_entry *prev);

/* Tell the tracker that events were lost without a per-CPU trace (a receive
 * call returned -ENOBUFS): a sync becomes pending (see
 * cn_proc_tracker_sync_timeout). */
CN_EXPORT void cn_proc_tracker_lost(struct cn_proc_tracker *t);

/*
 * Is a sync needed, and when: milliseconds until the next
 * cn_proc_tracker_sync is due, as a poll timeout. -1 none is pending
 * (nothing was lost since the last sync; also for NULL), 0 due now (call it
 * once the socket is drained; also for a tracker never synced), > 0 due in
 * that many (rounded up: ask again then,
 * or when events arrive). A sync is due when no loss was told for 100 ms
 * (the burst of overruns is over) or 1 s after the first loss since the
 * last sync (losses that never stop), so a burst that overruns the socket
 * again and again costs one /proc scan, not one per overrun.
 */
CN_EXPORT int cn_proc_tracker_sync_timeout(const struct cn_proc_tracker *t);

/* What a sync found changed while the tracker was blind. */
enum cn_proc_change {
	CN_PROC_APPEARED = 1, /* in /proc, not in the table: its fork was missed */
	CN_PROC_VANISHED = 2, /* in the table, not in /proc: its exit was missed */
};

/* Called by cn_proc_tracker_sync for each change; `e` is valid during the
 * call only. A task whose pid was reused while blind shows as VANISHED
 * (the old one) then APPEARED (the new one). */
typedef void (*cn_proc_change_fn)(const struct cn_proc_entry *e, enum cn_proc_change change,
				  void *arg);

/*
 * Rescan /proc and make the table equal to it: tasks not in the table are
 * added (APPEARED), entries whose task is gone are removed (VANISHED), names
 * and parents of the others are refreshed. A zombie counts as gone (its
 * exit event is sent before its parent can reap it), unless it is the main
 * thread of a process that runs on in other threads. A vanished entry is
 * kept aside until the next sync, in case its exit event arrives after all
 * (see cn_proc_tracker_event); it is not found or iterated. fn may be
 * NULL. Events received after the sync may predate it; applying them
 * afterwards is still right (an exit removes, a fork of a task already
 * gone is removed by its exit that follows). Best called once the socket
 * is drained and cn_proc_tracker_sync_timeout says 0, not on every loss.
 * Returns the number of changes reported (>= 0) or -errno (the table is
 * then unchanged, and the sync stays pending).
 */
CN_EXPORT int cn_proc_tracker_sync(struct cn_proc_tracker *t, cn_proc_change_fn fn, void *arg);

/* Counters of a tracker. */
struct cn_proc_tracker_stats {
	uint64_t entries;     /* tasks in the table now */
	uint64_t events;      /* events applied */
	uint64_t syncs;	      /* cn_proc_tracker_sync calls that completed */
	uint64_t appeared;    /* tasks reported APPEARED, over all syncs but the first */
	uint64_t vanished;    /* tasks reported VANISHED, over all syncs */
	uint64_t dropped;     /* tasks not stored: the table was full */
	uint64_t reserved[4]; /* 0; room for counters a later version adds */
};

/* Copy the counters. Returns 0 or -EINVAL. */
CN_EXPORT int cn_proc_tracker_stats(const struct cn_proc_tracker *t,
				    struct cn_proc_tracker_stats *st);

/* ------------------------------------------------------------------------ */
/* Notification requests (kmod's {-1,-1} control protocol, libcn/proto.h)    */
/* ------------------------------------------------------------------------ */

/* One range [first, first + range). */
struct cn_range {
	uint32_t first;
	uint32_t range;
};

/*
 * Build, in `buf` (bufsize bytes), the control message asking for add/remove
 * notifications of callbacks whose idx lies in one of idx[0..nidx) and val
 * in one of val[0..nval), delivered to `group` (!= 0). The message has id
 * {CN_NOTIFY_IDX, CN_NOTIFY_VAL}; send it with cn_send.
 * Returns the message, or NULL with errno EINVAL (group 0, no ranges, NULL
 * arrays, more than CN_NOTIFY_MAX_RANGES ranges) or EMSGSIZE (buf too small).
 */
CN_EXPORT struct cn_msg *cn_notify_build(void *buf, size_t bufsize, const struct cn_range *idx,
					 unsigned int nidx, const struct cn_range *val,
					 unsigned int nval, uint32_t group);

/* Bytes cn_notify_build needs for nidx + nval ranges. */
#define CN_NOTIFY_SIZE(nidx, nval)                                                                 \
	(CN_MSG_SIZE(sizeof(struct cn_ctl_msg) +                                                   \
		     ((size_t)(nidx) + (nval)) * sizeof(struct cn_notify_req)))

/* Build the removal of a request with the same ranges (group 0). Same
 * returns as cn_notify_build. */
CN_EXPORT struct cn_msg *cn_notify_build_remove(void *buf, size_t bufsize,
						const struct cn_range *idx, unsigned int nidx,
						const struct cn_range *val, unsigned int nval);

/* A decoded notification. */
struct cn_notification {
	uint32_t idx, val; /* the callback's id */
	int added;	   /* 1: registered, 0: removed */
};

/* Decode a notification message. Returns 0, or -EBADMSG if msg is not one
 * (payload not empty, ack not CN_NOTIFY_ADDED/REMOVED). */
CN_EXPORT int cn_notify_decode(const struct cn_msg *msg, struct cn_notification *n);

/* Check a control message payload with kmod's own check (cn_ctl_msg_valid in
 * libcn/proto.h): returns 0 if `data`/`len` is a well-formed struct
 * cn_ctl_msg, -EBADMSG otherwise. */
CN_EXPORT int cn_notify_validate(const void *data, size_t len);

/* cnbus.ko (kmod/): discovery and counters are in <libcn/kmod.h>. */

#ifdef __cplusplus
}
#endif

#endif /* LIBCN_H */
