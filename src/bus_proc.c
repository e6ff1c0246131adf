/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus_proc.c - process events from cnbus_proc.ko, kmod's producer
 * (<libcn/cnbus_proc.h>): decoding its records, joining their group,
 * receiving them with the proc connector's per-CPU loss tracking
 * (proc_internal.h: the records carry a CPU and that CPU's sequence
 * number as proc events do), and asking the module for its totals. */
#include <libcn/cnbus_proc.h>
#include <libcn/kmod.h>

#include "proc_internal.h"

_Static_assert(offsetof(struct cnbus_proc_record, comm) == CNBUS_PROC_RECORD_MIN,
	       "comm is appended to the record as first published");
_Static_assert(sizeof(((struct cn_bus_proc_event *)0)->comm) == CNBUS_PROC_COMM_LEN,
	       "a record's comm fits the decoded event's");

/* Messages per receive call: events point into them, so a call
 * that stored an event reads nothing more. */
#define BUS_PROC_BATCH 64

int cn_bus_proc_decode(const struct cn_msg *msg, struct cn_bus_proc_event *ev)
{
	struct cnbus_proc_record r;
	const char *data;

	if (!msg || !ev)
		return cn_fail(EINVAL);
	if (msg->id.idx != CNBUS_PROC_IDX || msg->id.val != CNBUS_PROC_VAL)
		return cn_fail(EPROTO);
	if (msg->len < CNBUS_PROC_RECORD_MIN)
		return cn_fail(EBADMSG);
	/* Copied: the payload is only 4-byte aligned. A record of a module
	 * older than comm ends before it: its comm stays empty. */
	memset(&r, 0, sizeof(r));
	memcpy(&r, msg->data, msg->len < sizeof(r) ? msg->len : sizeof(r));
	if (r.hdr_len < CNBUS_PROC_RECORD_MIN ||
	    (uint64_t)r.hdr_len + r.filename_len + r.argv_len > msg->len)
		return cn_fail(EBADMSG);
	if (r.hdr_len < sizeof(r))
		memset(r.comm, 0, sizeof(r.comm));
	memset(ev, 0, sizeof(*ev));
	switch (r.type) {
	case CNBUS_PROC_FORK:
		ev->what = CN_PROC_FORK;
		break;
	case CNBUS_PROC_EXEC:
		ev->what = CN_PROC_EXEC;
		break;
	case CNBUS_PROC_EXIT:
		ev->what = CN_PROC_EXIT;
		break;
	default:
		return cn_fail(ENOMSG);
	}
	ev->cpu = r.cpu;
	ev->seq = msg->seq;
	ev->flags = r.flags;
	ev->timestamp_ns = r.timestamp_ns;
	ev->pid = r.pid;
	ev->tgid = r.tgid;
	ev->parent_pid = r.parent_pid;
	ev->parent_tgid = r.parent_tgid;
	ev->ruid = r.ruid;
	ev->euid = r.euid;
	ev->rgid = r.rgid;
	ev->egid = r.egid;
	ev->exit_code = r.exit_code;
	ev->exit_signal = r.exit_signal;
	/* NUL-terminated whatever the record holds (the kernel's always is). */
	memcpy(ev->comm, r.comm, sizeof(ev->comm) - 1);
	data = (const char *)msg->data + r.hdr_len;
	if (r.filename_len)
		ev->filename = data;
	ev->filename_len = r.filename_len;
	if (r.argv_len)
		ev->argv = data + r.filename_len;
	ev->argv_len = r.argv_len;
	ev->argv_total = r.argv_total;
	return 0;
}

int cn_bus_proc_listen(struct cn_sock *s)
{
	struct cn_proc_state *t;
	int r;

	if (!s)
		return cn_fail(EINVAL);
	t = cn__proc_state(s);
	if (!t)
		return cn_fail(ENOMEM);
	r = cn_join(s, CNBUS_PROC_IDX);
	if (r)
		return r;
	r = cn__proc_track_reset(t, 0, 0);
	return r ? cn_fail(-r) : 0;
}

/*
 * Track and decode one message into *ev: 1 a record for the caller, 0 a
 * message to skip (another id, a record type unknown here; its gap is
 * still counted into *lost), -errno for a record that does not parse.
 */
static int bus_proc_handle(struct cn_proc_state *t, const struct cn_msg *msg,
			   struct cn_bus_proc_event *ev, uint32_t *lost)
{
	uint32_t gap = 0, cpu;
	int r;

	if (msg->id.idx != CNBUS_PROC_IDX || msg->id.val != CNBUS_PROC_VAL)
		return 0;
	if (msg->len < CNBUS_PROC_RECORD_MIN)
		return -EBADMSG;
	memcpy(&cpu, msg->data + offsetof(struct cnbus_proc_record, cpu), sizeof(cpu));
	cn__proc_track(t, cpu, msg->seq, &gap);
	*lost += gap;
	r = cn_bus_proc_decode(msg, ev);
	if (r == -ENOMSG)
		return 0;
	if (r)
		return r;
	ev->lost_before = *lost;
	*lost = 0;
	return 1;
}

int cn_bus_proc_recv_batch(struct cn_sock *s, struct cn_bus_proc_event *ev, unsigned int max,
			   unsigned int flags)
{
	struct cn_message m[BUS_PROC_BATCH];
	struct cn_proc_state *t;
	uint32_t lost;
	int n = 0, r = 0;

	if (!s || !ev || !max || (flags & ~CN_RECV_DONTWAIT))
		return cn_fail(EINVAL);
	t = cn__proc_state(s);
	if (!t)
		return cn_fail(ENOMEM);
	lost = t->unreported;
	t->unreported = 0;
	if (max > BUS_PROC_BATCH)
		max = BUS_PROC_BATCH;
	/* Until a call yields a record: the messages of one that yields
	 * none (other ids) are not pointed at. */
	while (n == 0) {
		r = cn_recv_batch(s, m, max, flags);
		if (r < 0)
			break;
		for (int i = 0; i < r; i++) {
			int h = bus_proc_handle(t, m[i].msg, &ev[n], &lost);

			/* A record that does not parse is an error
			 * only when it comes first: the events before
			 * it are returned, it is skipped. */
			if (h < 0 && n == 0) {
				r = h;
				break;
			}
			n += h > 0;
		}
		if (r < 0)
			break;
	}
	t->unreported = lost;
	if (n > 0)
		return n;
	return cn_fail(-r);
}

int cn_bus_proc_recv(struct cn_sock *s, struct cn_bus_proc_event *ev, unsigned int flags)
{
	int r = cn_bus_proc_recv_batch(s, ev, 1, flags);

	return r < 0 ? r : 0;
}

int cn_bus_proc_totals(struct cn_sock *s, struct cn_bus_proc_totals *out, int timeout_ms)
{
	struct cn_msg *req;
	struct cn_message reply;
	struct cnbus_proc_stats st;
	uint64_t buf[(sizeof(struct cn_msg) + 7) / 8];
	int r;

	if (!s || !out)
		return cn_fail(EINVAL);
	req = cn_msg_init(buf, sizeof(buf), CNBUS_PROC_IDX, CNBUS_PROC_VAL_STATS, NULL, 0);
	if (!req)
		return -errno;
	r = cn_request(s, req, CN_SEND_ACK, CN_MATCH_STRICT, timeout_ms, &reply);
	if (r)
		return r;
	if (reply.msg->len < sizeof(st))
		return cn_fail(EBADMSG);
	memcpy(&st, reply.msg->data, sizeof(st));
	memset(out, 0, sizeof(*out));
	out->records = st.records;
	out->inserted = st.inserted;
	out->refused = st.refused;
	out->argv_max = st.argv_max;
	return 0;
}
