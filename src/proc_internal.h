/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_internal.h - what libcn's proc connector files share: the wire
 * layout of a proc event and its decoder, the event filter and the per-CPU
 * sequence tracking, inline in each receive call that decodes events.
 *
 * Facts these files rely on (docs/DESIGN.md, "The proc connector"):
 *  - an event's cn_msg.seq is a per-CPU counter and proc_event.cpu names the
 *    CPU, so loss shows as a gap in one CPU's sequence;
 *  - the ack to LISTEN/IGNORE keeps ack + 1 but gets a per-CPU seq too and
 *    is multicast to every listener: it is matched on ack only;
 *  - kernels >= 6.6 take an 8-byte struct proc_input {mcast_op, event_type}
 *    and filter per socket; they also filter the ack of a filtered LISTEN
 *    and of an IGNORE, so those are never awaited. Older kernels ignore
 *    8-byte input silently.
 */
#ifndef LIBCN_PROC_INTERNAL_H
#define LIBCN_PROC_INTERNAL_H

#include <string.h>
#include <linux/cn_proc.h>

#include "internal.h"

/* struct proc_input as in Linux >= 6.6 (<linux/cn_proc.h> here may be older). */
struct cn_proc_input {
	uint32_t mcast_op;
	uint32_t event_type;
};

#define PROC_MSG_TIMEOUT_DEFAULT 1000

/* One CPU's proc event sequence: the seq its next event should carry, a
 * 32-bit value, or CN_PROC_UNSEEN (which no seq equals) until the CPU's
 * first event, so that an event in sequence is told by one test (the gap
 * and the first event go the other way: cn__proc_track_gap). */
struct cn_proc_cpu {
	uint64_t next_seq;
};
#define CN_PROC_UNSEEN ((uint64_t)1 << 32)

/* A socket's proc connector state (s->proc, allocated on first use by
 * cn__proc_state; proc_seq.c). */
struct cn_proc_state {
	uint32_t ncpu;	 /* entries in cpu[], 0 until cn_proc_listen */
	uint32_t ntrack; /* CPUs tracked: ncpu, or 0 when the kernel filters */
	struct cn_proc_cpu *cpu;
	uint32_t user_want; /* CN_PROC_* types wanted (all ones: every type) */
	int kernel_filter;  /* 1: the kernel filters this socket, gaps are not loss */
	uint32_t listens;   /* LISTENs a kernel may have counted; undone by IGNOREs */
	int subscribed;	    /* cn_proc_listen succeeded, no cn_proc_ignore since */
	/* Gaps found before skipped messages by a receive call that returned
	 * no event after them (-EAGAIN, an error, the end of what was read):
	 * the next event returned carries them. */
	uint32_t unreported;
	/* cn_proc_recv_batch's reads of one datagram left before it asks for
	 * many again: set when a read found the queue empty (see proc_recv). */
	uint32_t quiet;
	uint64_t events; /* cn_proc_stats.events */
	uint64_t lost;	 /* cn_proc_stats.lost */
	/* cn_proc_missed counts from the last fresh subscription: the
	 * counters then (drops0 valid when drops_known). */
	int listened;
	int drops_known;
	uint64_t drops0, kept_lost0, lost0;
};

/* proc_missed.c: start cn_proc_missed's count (a fresh subscription). */
void cn__proc_missed_start(struct cn_sock *s, struct cn_proc_state *t);

/* proc_seq.c: the socket's proc state, allocated on its first use (every
 * type wanted, nothing tracked); NULL with errno ENOMEM. */
struct cn_proc_state *cn__proc_state(struct cn_sock *s);

/* The event types proper, without the NONZERO_EXIT qualifier. */
#define PROC_TYPES (CN_PROC_ALL & ~(uint32_t)CN_PROC_NONZERO_EXIT)

/* A field of the proc_event at p. In a received datagram the payload is only
 * 4-byte aligned and proc_event has a 64-bit field, so it is not read
 * through a struct proc_event pointer, but copied. */
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
 * fields of a cn_proc_event at once (the asserts below check both pairs are
 * adjacent). */
#define PE_PAIR(dst, p, field)                                                                     \
	memcpy(dst, (const uint8_t *)(p) + offsetof(struct proc_event, field), 2 * sizeof(uint32_t))

#define CN_ADJACENT(type, a, b) (offsetof(type, b) == offsetof(type, a) + sizeof(uint32_t))
_Static_assert(CN_ADJACENT(struct cn_proc_event, what, cpu) &&
		   CN_ADJACENT(struct cn_proc_event, seq, ack) &&
		   CN_ADJACENT(struct cn_msg, seq, ack) &&
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
 * Decode msg into *ev if it is a whole proc event, the one test of one:
 * 1 decoded; 0 another id than the proc connector's; -EBADMSG a payload
 * shorter than a struct proc_event (the header is fixed; the union may
 * grow, so only the part up to the largest member known here must be
 * there). Fills every field but lost_before (the caller's: cn_proc_decode
 * clears it, the tracking writes it). Every field the event type does not
 * use is 0: those from tracer_pid to comm (no fork, exit or exec uses them)
 * are cleared together, the others in each type's branch. Fork, exit and
 * exec, what a storm is made of, are tested first (docs/PERFORMANCE.md).
 */
CN_INLINE int cn__proc_decode(const struct cn_msg *msg, struct cn_proc_event *ev)
{
	const uint8_t *pe = msg->data;
	uint32_t what;

	if (msg->id.idx != CN_IDX_PROC || msg->id.val != CN_VAL_PROC)
		return 0;
	if (unlikely(msg->len < sizeof(struct proc_event)))
		return -EBADMSG;
	memset(&ev->tracer_pid, 0,
	       offsetof(struct cn_proc_event, lost_before) -
		   offsetof(struct cn_proc_event, tracer_pid));
	PE_PAIR(&ev->what, pe, what);			   /* and cpu */
	memcpy(&ev->seq, &msg->seq, 2 * sizeof(uint32_t)); /* and ack */
	memcpy(&ev->timestamp_ns, pe + offsetof(struct proc_event, timestamp_ns),
	       sizeof(ev->timestamp_ns));
	what = ev->what;
	if (what == PROC_EVENT_FORK) {
		PE_PAIR(&ev->pid, pe, event_data.fork.child_pid);
		PE_PAIR(&ev->parent_pid, pe, event_data.fork.parent_pid);
		return 1;
	}
	if (what == PROC_EVENT_EXIT) {
		PE_PAIR(&ev->pid, pe, event_data.exit.process_pid);
		PE_PAIR(&ev->parent_pid, pe, event_data.exit.parent_pid);
		PE_PAIR(&ev->exit_code, pe, event_data.exit.exit_code);
		return 1;
	}
	ev->parent_pid = ev->parent_tgid = 0;
	if (what == PROC_EVENT_EXEC) {
		PE_PAIR(&ev->pid, pe, event_data.exec.process_pid);
		return 1;
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
		/* The kernel's name ends in a NUL within its 16 bytes
		 * (get_task_comm): the 15 before it are the whole name, and
		 * the last byte, cleared above, ends any datagram's. */
		memcpy(ev->comm, pe + offsetof(struct proc_event, event_data.comm.comm),
		       sizeof(ev->comm) - 1);
		break;
	case PROC_EVENT_COREDUMP:
		ev->pid = (pid_t)PE(pe, event_data.coredump.process_pid);
		ev->tgid = (pid_t)PE(pe, event_data.coredump.process_tgid);
		ev->parent_pid = (pid_t)PE(pe, event_data.coredump.parent_pid);
		ev->parent_tgid = (pid_t)PE(pe, event_data.coredump.parent_tgid);
		break;
	default:
		break; /* a newer kernel's type: header fields only */
	}
	return 1;
}

/* The way out of cn__proc_track: a gap, or the CPU's first event. */
static inline uint32_t cn__proc_track_gap(struct cn_proc_state *t, struct cn_proc_cpu *c,
					  uint32_t seq)
{
	uint32_t gap = seq - (uint32_t)c->next_seq;
	int seen = c->next_seq != CN_PROC_UNSEEN;

	c->next_seq = (uint32_t)(seq + 1);
	/* No gap before a CPU's first event. A gap "backwards" is a counter
	 * we cannot explain (e.g. a restart of our own tracking):
	 * resynchronise, count nothing. */
	if (!seen || gap >= 0x80000000u)
		return 0;
	t->lost += gap;
	return gap;
}

/* Count the events a CPU's counter skipped before the event (cpu, seq)
 * into *lost_before (0 when none, or when not tracking). */
CN_INLINE void cn__proc_track(struct cn_proc_state *t, uint32_t cpu, uint32_t seq,
			      uint32_t *lost_before)
{
	struct cn_proc_cpu *c;

	t->events++;
	*lost_before = 0;
	if (cpu >= t->ntrack)
		return; /* not tracking (see cn__proc_track_reset), or an unknown CPU */
	c = &t->cpu[cpu];
	if (likely(c->next_seq == seq)) {
		c->next_seq = (uint32_t)(seq + 1);
		return;
	}
	*lost_before = cn__proc_track_gap(t, c, seq);
}

/* proc_seq.c: start tracking afresh; `mask` as cn_proc_listen's (0: every
 * type), kernel_filter 1 when the kernel filters this socket. 0 or -ENOMEM. */
int cn__proc_track_reset(struct cn_proc_state *t, uint32_t mask, int kernel_filter);

/* proc_ops.c: send a mcast op (4 bytes) or a struct proc_input (8 bytes);
 * wait up to timeout_ms for its ack (0: do not wait). 0, the ack's error
 * as -errno, or -errno. */
int cn__proc_op(struct cn_sock *s, const void *payload, size_t len, int timeout_ms);

/* proc_ops.c: a LISTEN for every event type, as a 4-byte op (proc_input 0)
 * or an 8-byte struct proc_input, as cn__proc_op. */
int cn__proc_listen_all(struct cn_sock *s, int proc_input, int timeout_ms);

/* proc_ops.c: drop the proc messages kept in the backlog while a LISTEN
 * was awaited on a socket not subscribed yet (cn_proc_listen, the probe),
 * so that none waits where poll cannot see it; tracked CPUs' expected seqs
 * move past them. */
void cn__proc_drop_kept(struct cn_sock *s, struct cn_proc_state *t);

#endif /* LIBCN_PROC_INTERNAL_H */
