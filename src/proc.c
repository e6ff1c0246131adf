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

/* Process-wide result of the filter probe: -1 unknown, 0 no, 1 yes. */
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

int cn_proc_decode(const struct cn_msg *msg, struct cn_proc_event *ev)
{
	struct proc_event pe;

	if (!msg || !ev)
		return cn_fail(EINVAL);
	if (msg->id.idx != CN_IDX_PROC || msg->id.val != CN_VAL_PROC)
		return cn_fail(EPROTO);
	/* The header is fixed; the union may grow, so only the part up to
	 * the largest member we know of must be there. */
	if (msg->len < sizeof(pe))
		return cn_fail(EBADMSG);
	/* Copy out: in a received datagram the payload is only 4-byte aligned
	 * and proc_event has a 64-bit field. */
	memcpy(&pe, msg->data, sizeof(pe));

	memset(ev, 0, sizeof(*ev));
	ev->what = (enum cn_proc_what)pe.what;
	ev->cpu = pe.cpu;
	ev->seq = msg->seq;
	ev->ack = msg->ack;
	ev->timestamp_ns = pe.timestamp_ns;
	switch ((uint32_t)pe.what) {
	case PROC_EVENT_NONE:
		ev->ack_err = pe.event_data.ack.err;
		break;
	case PROC_EVENT_FORK:
		ev->parent_pid = pe.event_data.fork.parent_pid;
		ev->parent_tgid = pe.event_data.fork.parent_tgid;
		ev->pid = pe.event_data.fork.child_pid;
		ev->tgid = pe.event_data.fork.child_tgid;
		break;
	case PROC_EVENT_EXEC:
		ev->pid = pe.event_data.exec.process_pid;
		ev->tgid = pe.event_data.exec.process_tgid;
		break;
	case PROC_EVENT_UID:
	case PROC_EVENT_GID:
		ev->pid = pe.event_data.id.process_pid;
		ev->tgid = pe.event_data.id.process_tgid;
		ev->ruid = pe.event_data.id.r.ruid;
		ev->euid = pe.event_data.id.e.euid;
		break;
	case PROC_EVENT_SID:
		ev->pid = pe.event_data.sid.process_pid;
		ev->tgid = pe.event_data.sid.process_tgid;
		break;
	case PROC_EVENT_PTRACE:
		ev->pid = pe.event_data.ptrace.process_pid;
		ev->tgid = pe.event_data.ptrace.process_tgid;
		ev->tracer_pid = pe.event_data.ptrace.tracer_pid;
		ev->tracer_tgid = pe.event_data.ptrace.tracer_tgid;
		break;
	case PROC_EVENT_COMM:
		ev->pid = pe.event_data.comm.process_pid;
		ev->tgid = pe.event_data.comm.process_tgid;
		memcpy(ev->comm, pe.event_data.comm.comm, sizeof(pe.event_data.comm.comm));
		ev->comm[sizeof(ev->comm) - 1] = '\0';
		break;
	case PROC_EVENT_COREDUMP:
		ev->pid = pe.event_data.coredump.process_pid;
		ev->tgid = pe.event_data.coredump.process_tgid;
		ev->parent_pid = pe.event_data.coredump.parent_pid;
		ev->parent_tgid = pe.event_data.coredump.parent_tgid;
		break;
	case PROC_EVENT_EXIT:
		ev->pid = pe.event_data.exit.process_pid;
		ev->tgid = pe.event_data.exit.process_tgid;
		ev->exit_code = pe.event_data.exit.exit_code;
		ev->exit_signal = pe.event_data.exit.exit_signal;
		ev->parent_pid = pe.event_data.exit.parent_pid;
		ev->parent_tgid = pe.event_data.exit.parent_tgid;
		break;
	default:
		break; /* a newer kernel's type: header fields only */
	}
	return 0;
}

/* The kernel's cn_filter, for kernels that cannot filter themselves. */
static int passes(uint32_t mask, const struct cn_proc_event *ev)
{
	if (mask == 0 || (mask & PROC_TYPES) == PROC_TYPES)
		return 1;
	if ((mask & CN_PROC_NONZERO_EXIT) && ev->what == CN_PROC_EXIT && ev->exit_code)
		return 1;
	return (mask & (uint32_t)ev->what) != 0;
}

static int track_reset(struct cn_sock *s, uint32_t user_mask, int kernel_filter)
{
	struct cn_proc_track *t = &s->proc;
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (n < 1)
		n = 1;
	if (!t->next_seq || t->ncpu < (uint32_t)n) {
		uint32_t *ns = realloc(t->next_seq, (size_t)n * sizeof(*ns));
		uint8_t *seen;

		if (!ns)
			return -ENOMEM;
		t->next_seq = ns;
		seen = realloc(t->seen, (size_t)n);
		if (!seen)
			return -ENOMEM;
		t->seen = seen;
		t->ncpu = (uint32_t)n;
	}
	memset(t->seen, 0, t->ncpu);
	t->user_mask = user_mask;
	t->kernel_filter = kernel_filter;
	return 0;
}

/* Count the events a CPU's counter skipped before ev. */
static uint32_t track(struct cn_proc_track *t, const struct cn_proc_event *ev)
{
	uint32_t lost = 0;

	t->st.events++;
	if (!t->next_seq || ev->cpu >= t->ncpu)
		return 0; /* not listening through libcn, or an unknown CPU */
	if (t->seen[ev->cpu] && !t->kernel_filter) {
		uint32_t gap = ev->seq - t->next_seq[ev->cpu];

		/* A gap "backwards" is a counter we cannot explain (e.g. a
		 * restart of our own tracking): resynchronise, count nothing. */
		if (gap < 0x80000000u)
			lost = gap;
	}
	t->seen[ev->cpu] = 1;
	t->next_seq[ev->cpu] = ev->seq + 1;
	t->st.lost += lost;
	return lost;
}

int cn_proc_handle(struct cn_sock *s, const struct cn_message *m, struct cn_proc_event *ev)
{
	int r;

	if (!s || !m || !m->msg || !ev)
		return cn_fail(EINVAL);
	if (m->msg->id.idx != CN_IDX_PROC || m->msg->id.val != CN_VAL_PROC)
		return 0;
	r = cn_proc_decode(m->msg, ev);
	if (r < 0)
		return r;
	ev->lost_before = track(&s->proc, ev);
	/* Acks (ours or other listeners') are control traffic, not events. */
	if (ev->what == CN_PROC_NONE)
		return 0;
	return passes(s->proc.user_mask, ev) ? 1 : 0;
}

int cn_proc_recv(struct cn_sock *s, struct cn_proc_event *ev, unsigned int flags)
{
	struct cn_message m;
	uint32_t lost = 0;

	if (!s || !ev)
		return cn_fail(EINVAL);
	for (;;) {
		int r = cn_recv(s, &m, flags);

		if (r == -ENOBUFS)
			s->proc.st.overruns++;
		if (r < 0)
			return r;
		ev->lost_before = 0; /* untouched for messages of other ids */
		r = cn_proc_handle(s, &m, ev);
		if (r < 0)
			return r;
		lost += ev->lost_before;
		if (r == 1) {
			/* Gaps before events the filter skipped still count. */
			ev->lost_before = lost;
			return 0;
		}
	}
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
	if (kernel_filters >= 0)
		return kernel_filters;
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
		kernel_filters = 0;
		return 0;
	}
	if (r < 0)
		return r;
	kernel_filters = 1;
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
	r = track_reset(s, kf ? 0 : (partial ? mask : 0), kf);
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
