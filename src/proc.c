/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.c - the kernel's process events connector (CN_IDX_PROC).
 *
 * Facts this file relies on (DESIGN.md section 2, checked on Linux 6.18):
 *  - an event's cn_msg.seq is a per-CPU counter and proc_event.cpu names the
 *    CPU, so loss shows as a gap in one CPU's sequence;
 *  - the ack to LISTEN/IGNORE keeps ack + 1 but gets a per-CPU seq too and
 *    is multicast to every listener: it is matched on ack only;
 *  - kernels >= 6.6 take an 8-byte struct proc_input {mcast_op, event_type}
 *    and filter per socket; they also filter the ack of a filtered LISTEN
 *    and of an IGNORE, so those are never awaited. Older kernels ignore
 *    8-byte input silently.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/cn_proc.h>

#include "internal.h"

/* struct proc_input as in Linux >= 6.6 (<linux/cn_proc.h> here may be older). */
struct cn_proc_input {
	uint32_t mcast_op;
	uint32_t event_type;
};

#define PROC_MSG_TIMEOUT_DEFAULT 1000

/* The event types proper, without the NONZERO_EXIT qualifier. */
#define PROC_TYPES (CN_PROC_ALL & ~(uint32_t)CN_PROC_NONZERO_EXIT)

/* Process-wide result of the filter probe: -1 unknown, 0 no, 1 yes.
 * Sockets used from different threads may probe at once: the value is
 * read and written atomically (relaxed: every probe finds the same). */
static int kernel_filters = -1;

static const struct {
	uint32_t what;
	const char *name;
} names[] = {
	{ CN_PROC_NONE, "none" },
	{ CN_PROC_FORK, "fork" },
	{ CN_PROC_EXEC, "exec" },
	{ CN_PROC_UID, "uid" },
	{ CN_PROC_GID, "gid" },
	{ CN_PROC_SID, "sid" },
	{ CN_PROC_PTRACE, "ptrace" },
	{ CN_PROC_COMM, "comm" },
	{ CN_PROC_COREDUMP, "coredump" },
	{ CN_PROC_EXIT, "exit" },
	{ CN_PROC_NONZERO_EXIT, "nonzero_exit" },
};

const char *cn_proc_what_name(enum cn_proc_what what)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].what == (uint32_t)what)
			return names[i].name;
	return "unknown";
}

int cn_proc_parse_mask(const char *list, uint32_t *mask)
{
	uint32_t m = 0;
	const char *p = list;

	if (!list || !mask)
		return cn_fail(EINVAL);
	while (*p) {
		size_t n = strcspn(p, ",");
		int found = 0;

		if (n == 3 && strncmp(p, "all", 3) == 0) {
			m |= CN_PROC_ALL;
			found = 1;
		}
		for (size_t i = 1; !found && i < sizeof(names) / sizeof(names[0]); i++) {
			if (strlen(names[i].name) == n && strncmp(p, names[i].name, n) == 0) {
				m |= names[i].what;
				found = 1;
			}
		}
		if (!found)
			return cn_fail(EINVAL);
		p += n;
		if (*p == ',' && *++p == '\0')
			return cn_fail(EINVAL); /* trailing comma */
	}
	if (m == 0)
		return cn_fail(EINVAL);
	*mask = m;
	return 0;
}

/* A field of the proc_event at p. In a received datagram the payload is only
 * 4-byte aligned and proc_event has a 64-bit field, so it is not read
 * through a struct proc_event pointer; memcpy compiles to one load. */
#define PE(p, field)                                                                               \
	pe_get((const uint8_t *)(p) + offsetof(struct proc_event, field),                          \
	       sizeof(((struct proc_event *)0)->field))

static inline uint64_t pe_get(const uint8_t *p, size_t size)
{
	uint32_t v32;
	uint64_t v64;

	if (size == sizeof(v64)) {
		memcpy(&v64, p, sizeof(v64));
		return v64;
	}
	memcpy(&v32, p, sizeof(v32));
	return v32;
}

/* Two adjacent 32-bit fields of the proc_event at p, copied to two adjacent
 * fields of a cn_proc_event with one 8-byte move. */
#define PE_PAIR(dst, p, field)                                                                     \
	memcpy(dst, (const uint8_t *)(p) + offsetof(struct proc_event, field), 2 * sizeof(uint32_t))

#define CN_ADJACENT(type, a, b) (offsetof(type, b) == offsetof(type, a) + sizeof(uint32_t))
_Static_assert(CN_ADJACENT(struct cn_proc_event, what, cpu) &&
		   CN_ADJACENT(struct cn_proc_event, pid, tgid) &&
		   CN_ADJACENT(struct cn_proc_event, parent_pid, parent_tgid) &&
		   CN_ADJACENT(struct cn_proc_event, exit_code, exit_signal),
	       "cn_proc_event pairs");
_Static_assert(
    CN_ADJACENT(struct proc_event, what, cpu) &&
	CN_ADJACENT(struct proc_event, event_data.fork.child_pid, event_data.fork.child_tgid) &&
	CN_ADJACENT(struct proc_event, event_data.exec.process_pid, event_data.exec.process_tgid) &&
	CN_ADJACENT(struct proc_event, event_data.fork.parent_pid, event_data.fork.parent_tgid) &&
	CN_ADJACENT(struct proc_event, event_data.exit.process_pid, event_data.exit.process_tgid) &&
	CN_ADJACENT(struct proc_event, event_data.exit.exit_code, event_data.exit.exit_signal) &&
	CN_ADJACENT(struct proc_event, event_data.exit.parent_pid, event_data.exit.parent_tgid),
    "proc_event pairs");

/*
 * Fill *ev, all but lost_before (which the callers set), from msg, whose
 * payload the caller checked holds a whole struct proc_event. Fields the
 * event type does not use are 0, but the struct is not cleared as a whole
 * first: a 96-byte memset compiles to rep stos here, 28 instructions per
 * event, more than the raw loop spends decoding. The fields from tracer_pid
 * on (fork uses none of them) are cleared with a few vector stores, the
 * others per type; fork, exit and exec (what a storm is made of) are tested
 * first, pairs of fields copied at once.
 */
static inline __attribute__((always_inline)) void decode_event(const struct cn_msg *msg,
							       struct cn_proc_event *ev)
{
	const uint8_t *pe = msg->data;
	uint32_t what = (uint32_t)PE(pe, what);

	memset(&ev->tracer_pid, 0,
	       offsetof(struct cn_proc_event, lost_before) -
		   offsetof(struct cn_proc_event, tracer_pid));
	PE_PAIR(&ev->what, pe, what); /* and cpu */
	ev->seq = msg->seq;
	ev->timestamp_ns = PE(pe, timestamp_ns);
	ev->ack = msg->ack;
	if (what == PROC_EVENT_FORK) {
		PE_PAIR(&ev->pid, pe, event_data.fork.child_pid);
		PE_PAIR(&ev->parent_pid, pe, event_data.fork.parent_pid);
		return;
	}
	if (what == PROC_EVENT_EXIT) {
		PE_PAIR(&ev->pid, pe, event_data.exit.process_pid);
		PE_PAIR(&ev->parent_pid, pe, event_data.exit.parent_pid);
		PE_PAIR(&ev->exit_code, pe, event_data.exit.exit_code);
		return;
	}
	ev->parent_pid = ev->parent_tgid = 0;
	if (what == PROC_EVENT_EXEC) {
		PE_PAIR(&ev->pid, pe, event_data.exec.process_pid);
		return;
	}
	ev->pid = ev->tgid = 0;
	switch (what) {
	case PROC_EVENT_NONE:
		ev->ack_err = (uint32_t)PE(pe, event_data.ack.err);
		break;
	case PROC_EVENT_UID:
	case PROC_EVENT_GID:
		ev->pid = (pid_t)PE(pe, event_data.id.process_pid);
		ev->tgid = (pid_t)PE(pe, event_data.id.process_tgid);
		ev->ruid = (uint32_t)PE(pe, event_data.id.r.ruid);
		ev->euid = (uint32_t)PE(pe, event_data.id.e.euid);
		break;
	case PROC_EVENT_SID:
		ev->pid = (pid_t)PE(pe, event_data.sid.process_pid);
		ev->tgid = (pid_t)PE(pe, event_data.sid.process_tgid);
		break;
	case PROC_EVENT_PTRACE:
		ev->pid = (pid_t)PE(pe, event_data.ptrace.process_pid);
		ev->tgid = (pid_t)PE(pe, event_data.ptrace.process_tgid);
		ev->tracer_pid = (pid_t)PE(pe, event_data.ptrace.tracer_pid);
		ev->tracer_tgid = (pid_t)PE(pe, event_data.ptrace.tracer_tgid);
		break;
	case PROC_EVENT_COMM:
		ev->pid = (pid_t)PE(pe, event_data.comm.process_pid);
		ev->tgid = (pid_t)PE(pe, event_data.comm.process_tgid);
		memcpy(ev->comm, pe + offsetof(struct proc_event, event_data.comm.comm),
		       sizeof(((struct proc_event *)0)->event_data.comm.comm));
		break; /* comm[16], the terminating NUL, was cleared above */
	case PROC_EVENT_COREDUMP:
		ev->pid = (pid_t)PE(pe, event_data.coredump.process_pid);
		ev->tgid = (pid_t)PE(pe, event_data.coredump.process_tgid);
		ev->parent_pid = (pid_t)PE(pe, event_data.coredump.parent_pid);
		ev->parent_tgid = (pid_t)PE(pe, event_data.coredump.parent_tgid);
		break;
	default:
		break; /* a newer kernel's type: header fields only */
	}
}

int cn_proc_decode(const struct cn_msg *msg, struct cn_proc_event *ev)
{
	if (!msg || !ev)
		return cn_fail(EINVAL);
	if (msg->id.idx != CN_IDX_PROC || msg->id.val != CN_VAL_PROC)
		return cn_fail(EPROTO);
	/* The header is fixed; the union may grow, so only the part up to
	 * the largest member we know of must be there. */
	if (msg->len < sizeof(struct proc_event))
		return cn_fail(EBADMSG);
	decode_event(msg, ev);
	ev->lost_before = 0;
	return 0;
}

/*
 * Is the event one the caller asked for? The kernel's cn_filter, applied in
 * userspace whether or not the kernel filters too: a filtering kernel still
 * delivers what a socket queued before its filtered LISTEN took effect
 * (cn_proc_listen's unfiltered LISTEN comes first). `skip` is the types
 * not wanted (~mask; 0 when every type is, so a zeroed socket delivers all).
 * Acks (CN_PROC_NONE) never pass. For the events a socket usually wants it
 * costs one AND.
 */
static inline int passes(uint32_t skip, const struct cn_proc_event *ev)
{
	uint32_t what = (uint32_t)ev->what;

	if (what == CN_PROC_NONE)
		return 0;
	if (!(skip & what))
		return 1;
	/* CN_PROC_NONZERO_EXIT without CN_PROC_EXIT: exits with a status. */
	return what == CN_PROC_EXIT && !(skip & CN_PROC_NONZERO_EXIT) && ev->exit_code != 0;
}

/* Start tracking afresh; `mask` as cn_proc_listen's (0: every type). */
static int track_reset(struct cn_sock *s, uint32_t mask, int kernel_filter)
{
	struct cn_proc_track *t = &s->proc;
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (n < 1)
		n = 1;
	if (!t->cpu || t->ncpu < (uint32_t)n) {
		struct cn_proc_cpu *c = realloc(t->cpu, (size_t)n * sizeof(*c));

		if (!c)
			return -ENOMEM;
		t->cpu = c;
		t->ncpu = (uint32_t)n;
	}
	memset(t->cpu, 0, t->ncpu * sizeof(*t->cpu));
	t->user_skip = mask == 0 || (mask & PROC_TYPES) == PROC_TYPES ? 0 : ~mask;
	t->kernel_filter = kernel_filter;
	/* With the kernel filtering, skipped events advance the per-CPU
	 * counters too: gaps are not loss, and no CPU is tracked. */
	t->ntrack = kernel_filter ? 0 : t->ncpu;
	return 0;
}

/* Count the events a CPU's counter skipped before the event (cpu, seq). */
static inline uint32_t track(struct cn_proc_track *t, uint32_t cpu, uint32_t seq)
{
	struct cn_proc_cpu *c;
	uint32_t gap;

	t->st.events++;
	if (cpu >= t->ntrack)
		return 0; /* not tracking (see track_reset), or an unknown CPU */
	c = &t->cpu[cpu];
	gap = seq - c->next_seq;
	c->next_seq = seq + 1;
	/* A gap "backwards" is a counter we cannot explain (e.g. a restart of
	 * our own tracking): resynchronise, count nothing. Nor is there a gap
	 * before a CPU's first event (seen_mask 0; branch-free). */
	if (gap >= 0x80000000u)
		gap = 0;
	gap &= c->seen_mask;
	c->seen_mask = UINT32_MAX;
	t->st.lost += gap;
	return gap;
}

/* Decode and track a proc message; 1: an event for the caller, 0: an ack
 * (ours or other listeners', control traffic) or not of a wanted type. */
static inline __attribute__((always_inline)) int
handle_event(struct cn_sock *s, const struct cn_msg *msg, struct cn_proc_event *ev)
{
	decode_event(msg, ev);
	ev->lost_before = track(&s->proc, ev->cpu, ev->seq);
	return passes(s->proc.user_skip, ev);
}

int cn_proc_handle(struct cn_sock *s, const struct cn_message *m, struct cn_proc_event *ev)
{
	const struct cn_msg *msg;
	uint64_t id;

	/* The batch path calls this once per message: the tests are written
	 * to compile to few instructions (one branch for the three pointers,
	 * one 8-byte compare for the id). */
	if (__builtin_expect(!s | !m | !ev, 0))
		return cn_fail(EINVAL);
	msg = m->msg;
	if (__builtin_expect(!msg, 0))
		return cn_fail(EINVAL);
	memcpy(&id, &msg->id, sizeof(id));
	if (id != ((uint64_t)CN_VAL_PROC << 32 | CN_IDX_PROC))
		return 0;
	if (msg->len < sizeof(struct proc_event))
		return cn_fail(EBADMSG);
	return handle_event(s, msg, ev);
}

/* proc_recv_fast: the datagram is not a lone proc event; take the generic path. */
#define FALLBACK 2

/* What the proc connector sends: one event per datagram, this long. */
#define PROC_DGRAM_LEN (NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(struct proc_event))

/* The first 8 bytes of its netlink header (len, type, flags), and its id. */
static const struct {
	uint32_t len;
	uint16_t type, flags;
} proc_nlh = { PROC_DGRAM_LEN, NLMSG_DONE, 0 };
static const struct cb_id proc_id = { CN_IDX_PROC, CN_VAL_PROC };

/*
 * cn_proc_recv's common case, fused: nothing kept by cn_request, no error
 * put off, no datagram partly walked, no NETLINK_PKTINFO (its recvfrom
 * cannot read the group of what it leaves to the generic path; the caller
 * checked all of these), and the next
 * datagram is one proc event from the kernel. It is read into slot 0 and
 * decoded and tracked in place, without the generic layers (cn_recv's
 * backlog and argument checks, cn__walk, cn_parse_next, cn_proc_handle):
 * together they cost more than the raw loop's whole receive
 * (docs/PERFORMANCE.md). The datagram is checked as strictly as cn__walk
 * would: sender, exact lengths (a truncated datagram has another length),
 * type and id; anything else is left to the generic path.
 * Returns 1 or 0 as handle_event, -errno, or FALLBACK with the datagram left
 * in slot 0 for cn__walk.
 */
static inline __attribute__((always_inline)) int
proc_recv_fast(struct cn_sock *s, struct cn_proc_event *ev, unsigned int flags)
{
	const struct nlmsghdr *nlh;
	const struct cn_msg *m;
	struct sockaddr_nl from;
	/* A CN_OPEN_NONBLOCK socket's fd is O_NONBLOCK already (cn_open,
	 * cn_set_nonblocking): only the per-call flag needs MSG_DONTWAIT. */
	ssize_t n = cn__recv_one(s, (flags & CN_RECV_DONTWAIT) ? MSG_DONTWAIT : 0, &from);

	if (n < 0)
		return (int)n;
	nlh = (const struct nlmsghdr *)s->slots;
	m = NLMSG_DATA(nlh);
	if (n != PROC_DGRAM_LEN || memcmp(nlh, &proc_nlh, sizeof(proc_nlh)) ||
	    m->len != sizeof(struct proc_event) || memcmp(&m->id, &proc_id, sizeof(proc_id)) ||
	    from.nl_pid != 0) {
		s->addrs[0] = from;
		cn__slot0_filled(s, n);
		return FALLBACK;
	}
	s->st.messages++;
	return handle_event(s, m, ev);
}

/* Until an event for the caller: the generic path, and the fast one when
 * it applies. lost: gaps before messages already skipped. */
static int proc_recv_loop(struct cn_sock *s, struct cn_proc_event *ev, unsigned int flags,
			  uint32_t lost)
{
	for (;;) {
		struct cn_message m;
		int r = FALLBACK;

		if (!s->backlog.count && !s->backlog.lost && !s->backlog.err && !s->deferred_err &&
		    !s->pktinfo && !cn__rx_pending(s))
			r = proc_recv_fast(s, ev, flags);
		if (r == FALLBACK) {
			r = cn_recv(s, &m, flags);
			if (r < 0)
				return r;
			ev->lost_before = 0; /* untouched for messages of other ids */
			r = cn_proc_handle(s, &m, ev);
		}
		if (r < 0)
			return cn_ret(r);
		lost += ev->lost_before;
		if (r == 1) {
			/* Gaps before events the filter skipped still count. */
			ev->lost_before = lost;
			return 0;
		}
	}
}

int cn_proc_recv(struct cn_sock *s, struct cn_proc_event *ev, unsigned int flags)
{
	int r;

	if (!s || !ev)
		return cn_fail(EINVAL);
	if (flags & ~CN_RECV_DONTWAIT)
		return cn_fail(EINVAL);
	/* The first try inline, the rest (acks, filtered events, anything
	 * the fast path leaves) in the loop: a proc listener's usual call
	 * is one datagram holding one event it wants. */
	if (s->backlog.count || s->backlog.lost || s->backlog.err || s->deferred_err ||
	    s->pktinfo || cn__rx_pending(s))
		return proc_recv_loop(s, ev, flags, 0);
	r = proc_recv_fast(s, ev, flags);
	if (r == 1)
		return 0;
	if (r < 0)
		return cn_ret(r);
	return proc_recv_loop(s, ev, flags, r == 0 ? ev->lost_before : 0);
}

int cn_proc_stats(const struct cn_sock *s, struct cn_proc_stats *st)
{
	if (!s || !st)
		return cn_fail(EINVAL);
	*st = s->proc.st;
	return 0;
}

/* Send a mcast op (4 bytes) or a proc_input (8 bytes); wait for the ack
 * when timeout_ms != 0. Returns 0, the ack's error as -errno, or -errno. */
static int proc_op(struct cn_sock *s, const void *payload, size_t len, int timeout_ms)
{
	union {
		struct cn_msg m;
		uint8_t b[CN_MSG_SIZE(sizeof(struct cn_proc_input))];
	} u;
	struct cn_msg *req = cn_msg_init(&u, sizeof(u), CN_IDX_PROC, CN_VAL_PROC, payload, len);
	struct cn_message reply;
	struct cn_proc_event ack;
	uint32_t op;
	int r;

	if (!req)
		return -errno;
	/* Kernels before 6.6 count every 4-byte LISTEN (later ones count a
	 * socket once); an 8-byte one counts only where it is understood,
	 * which its ack proves. cn_proc_ignore undoes each. */
	memcpy(&op, payload, sizeof(op));
	if (timeout_ms == 0) {
		r = cn_send(s, req, 0);
		if (r == 0 && op == PROC_CN_MCAST_LISTEN && len == sizeof(op))
			s->proc.listens++;
		return r;
	}
	for (;;) {
		r = cn_request(s, req, 0, CN_MATCH_ACK_ONLY, timeout_ms, &reply);
		if (r < 0)
			return r;
		if (cn_proc_decode(reply.msg, &ack) < 0)
			return cn_fail(EBADMSG);
		/* The ack consumed a seq on its CPU: put it back in the
		 * stream, in order, so per-CPU tracking sees no false gap. */
		cn__keep(s, &reply);
		if (ack.what != CN_PROC_NONE)
			continue; /* an event that matched by chance: ask again */
		if (ack.ack_err)
			return cn_fail((int)ack.ack_err);
		if (op == PROC_CN_MCAST_LISTEN)
			s->proc.listens++;
		return 0;
	}
}

static int listen_all(struct cn_sock *s, int proc_input, int timeout_ms)
{
	struct cn_proc_input in = { PROC_CN_MCAST_LISTEN, CN_PROC_ALL };

	return proc_op(s, &in, proc_input ? sizeof(in) : sizeof(in.mcast_op), timeout_ms);
}

int cn_proc_kernel_filters(struct cn_sock *s, int timeout_ms)
{
	int r;

	if (!s)
		return cn_fail(EINVAL);
	r = __atomic_load_n(&kernel_filters, __ATOMIC_RELAXED);
	if (r >= 0)
		return r;
	if (timeout_ms <= 0)
		timeout_ms = PROC_MSG_TIMEOUT_DEFAULT;
	r = cn_join(s, CN_IDX_PROC);
	if (r < 0)
		return r;
	/* Only a kernel that reads struct proc_input answers an 8-byte
	 * LISTEN; with event_type ALL its filter lets the ack through. */
	r = listen_all(s, 1, timeout_ms);
	if (r == -ETIMEDOUT) {
		/* Confirm the connector answers at all before concluding. */
		r = listen_all(s, 0, timeout_ms);
		if (r < 0)
			return r;
		__atomic_store_n(&kernel_filters, 0, __ATOMIC_RELAXED);
		return 0;
	}
	if (r < 0)
		return r;
	__atomic_store_n(&kernel_filters, 1, __ATOMIC_RELAXED);
	return 1;
}

int cn_proc_listen(struct cn_sock *s, uint32_t mask, int timeout_ms)
{
	int partial, kf = 0, r;

	if (!s || (mask & ~(uint32_t)CN_PROC_ALL))
		return cn_fail(EINVAL);
	if (timeout_ms <= 0)
		timeout_ms = PROC_MSG_TIMEOUT_DEFAULT;
	partial = mask != 0 && (mask & PROC_TYPES) != PROC_TYPES;
	r = track_reset(s, 0, 0);
	if (r < 0)
		return cn_fail(-r);
	r = cn_join(s, CN_IDX_PROC);
	if (r < 0)
		return r;
	if (partial) {
		kf = cn_proc_kernel_filters(s, timeout_ms);
		if (kf < 0)
			return kf;
	}
	if (kf) {
		/* The probe (or this LISTEN ALL) proved the connector answers
		 * this socket; the filtered LISTEN that follows gets no ack. */
		r = listen_all(s, 1, timeout_ms);
		if (r < 0)
			return r;
		struct cn_proc_input in = { PROC_CN_MCAST_LISTEN, mask };

		r = proc_op(s, &in, sizeof(in), 0);
	} else {
		r = listen_all(s, 0, timeout_ms);
	}
	if (r < 0)
		return r;
	/* The mask is applied in userspace even when the kernel filters:
	 * events of every type may have been queued between the unfiltered
	 * LISTEN and the filtered one. */
	r = track_reset(s, mask, kf);
	if (r < 0)
		return cn_fail(-r);
	return kf;
}

int cn_proc_ignore(struct cn_sock *s)
{
	uint32_t op = PROC_CN_MCAST_IGNORE;
	int r;

	if (!s)
		return cn_fail(EINVAL);
	/* One IGNORE per counted LISTEN (extra ones are harmless on kernels
	 * that count a socket once), and at least one. */
	do {
		r = proc_op(s, &op, sizeof(op), 0);
		if (r < 0)
			return r;
	} while (s->proc.listens > 0 && --s->proc.listens > 0);
	return cn_leave(s, CN_IDX_PROC);
}
