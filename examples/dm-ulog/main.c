/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dm-ulog - a mirror log server for the kernel's dm-log-userspace, on libcn.
 *
 * dm-mirror tables with the "userspace" log send every log call (CTR, DTR,
 * MARK_REGION, ...) as a request to connector group CN_IDX_DM and wait for
 * the answer (<linux/dm-log-userspace.h>). This server keeps each log in
 * memory with the core log's semantics (core_log.c), answers every request
 * through cn_dm_ulog_reply / cn_dm_ulog_ack, and reports every request it
 * refuses, and why, on stderr. Run it as root (the kernel takes answers
 * from CAP_SYS_ADMIN only). README.md says how to use it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/dm-log-userspace.h>

#include "core_log.h"

#define NTYPES	    (DM_ULOG_IS_REMOTE_RECOVERING + 1)
/* The log's status line in `dmsetup status` (with its NUL: a C string). */
#define STATUS_INFO "1 dm-ulog"

static const char *const type_name[NTYPES] = {
	[DM_ULOG_CTR] = "CTR",
	[DM_ULOG_DTR] = "DTR",
	[DM_ULOG_PRESUSPEND] = "PRESUSPEND",
	[DM_ULOG_POSTSUSPEND] = "POSTSUSPEND",
	[DM_ULOG_RESUME] = "RESUME",
	[DM_ULOG_GET_REGION_SIZE] = "GET_REGION_SIZE",
	[DM_ULOG_IS_CLEAN] = "IS_CLEAN",
	[DM_ULOG_IN_SYNC] = "IN_SYNC",
	[DM_ULOG_FLUSH] = "FLUSH",
	[DM_ULOG_MARK_REGION] = "MARK_REGION",
	[DM_ULOG_CLEAR_REGION] = "CLEAR_REGION",
	[DM_ULOG_GET_RESYNC_WORK] = "GET_RESYNC_WORK",
	[DM_ULOG_SET_REGION_SYNC] = "SET_REGION_SYNC",
	[DM_ULOG_GET_SYNC_COUNT] = "GET_SYNC_COUNT",
	[DM_ULOG_STATUS_INFO] = "STATUS_INFO",
	[DM_ULOG_STATUS_TABLE] = "STATUS_TABLE",
	[DM_ULOG_IS_REMOTE_RECOVERING] = "IS_REMOTE_RECOVERING",
};

/* The bytes of each successful answer that carries data. */
static const size_t answer_size[NTYPES] = {
	[DM_ULOG_GET_REGION_SIZE] = 8,
	[DM_ULOG_IS_CLEAN] = 8,
	[DM_ULOG_IN_SYNC] = 8,
	[DM_ULOG_GET_RESYNC_WORK] = 16,
	[DM_ULOG_GET_SYNC_COUNT] = 8,
	[DM_ULOG_STATUS_INFO] = sizeof(STATUS_INFO),
	[DM_ULOG_IS_REMOTE_RECOVERING] = 16,
};

/* What was refused, by reason; reported as it happens and at exit. */
static struct {
	unsigned long malformed, version, type, log, argument, eagain;
} refused;
static unsigned long answered;
static int verbose;
static unsigned int eagain_left[NTYPES]; /* --eagain: answer so many with -EAGAIN */
static volatile sig_atomic_t stop;

/* The answer to one request: an error and/or data (len bytes). */
struct answer {
	int error;
	const char *why; /* with an error: the reason reported */
	size_t len;
	union {
		int64_t i64[2];
		uint64_t u64;
		char text[256];
	} data;
};

static int fail(struct answer *a, unsigned long *counter, int error, const char *why)
{
	++*counter;
	a->why = why;
	return a->error = error;
}

static void put_u64(struct answer *a, int64_t first, uint64_t second, size_t n)
{
	a->data.i64[0] = first;
	a->data.i64[1] = (int64_t)second;
	a->len = n * sizeof(int64_t);
}

/* The region in a request's payload: 8 bytes, inside the log. */
static int region_arg(const struct dm_ulog_request *req, const char *data, const struct core_log *l,
		      size_t off, uint64_t *region)
{
	if (req->data_size < off + sizeof(*region))
		return 0;
	memcpy(region, data + off, sizeof(*region));
	return *region < l->region_count;
}

/* MARK_REGION, CLEAR_REGION, and FLUSH with integrated_flush: __u64[]. */
static int regions(const struct dm_ulog_request *req, const char *data, struct core_log *l,
		   struct answer *a, void (*op)(struct core_log *, uint64_t))
{
	uint64_t region;
	size_t off;

	if (req->data_size % sizeof(region))
		return fail(a, &refused.malformed, -EINVAL, "payload is not a __u64 array");
	for (off = 0; off < req->data_size; off += sizeof(region))
		if (!region_arg(req, data, l, off, &region))
			return fail(a, &refused.argument, -EINVAL, "region beyond the log");
	for (off = 0; off < req->data_size; off += sizeof(region)) {
		memcpy(&region, data + off, sizeof(region));
		op(l, region);
	}
	return 0;
}

static int construct(const struct dm_ulog_request *req, const char *data, struct answer *a)
{
	char args[512];
	const char *why = NULL;
	size_t n = req->data_size < sizeof(args) - 1 ? req->data_size : sizeof(args) - 1;
	int r;

	/* The first CTR sends the string without its NUL, the kernel's
	 * reconnection (userspace_do_request) with it. */
	memcpy(args, data, n);
	args[n] = '\0';
	r = log_create(req->uuid, req->luid, args, &why);
	if (r == -ENOMEM)
		return fail(a, &refused.argument, r, "out of memory");
	if (r < 0)
		return fail(a, &refused.argument, r, why);
	return 0; /* no log device: data_size 0 */
}

/* Serve one well-formed request of a supported version; its data (not
 * aligned) is req->data_size bytes at `data`. */
static int serve(const struct dm_ulog_request *req, const char *data, uint32_t type,
		 struct answer *a)
{
	struct core_log *l;
	uint64_t region;
	int64_t pkg[2];

	if (type == DM_ULOG_CTR)
		return construct(req, data, a);
	l = log_find(req->uuid, req->luid);
	if (!l && type == DM_ULOG_DTR)
		return 0; /* a resent DTR: already gone */
	if (!l) {
		/* -ESRCH makes the kernel reconnect: CTR, RESUME, then this
		 * request again (dm-log-userspace-base.c, userspace_do_request),
		 * with the room for its answer set to what this reply carries
		 * (transfer.c, fill_pkg): so it carries as many bytes as the
		 * answer will, zeros, or the retry fails with -ENOSPC. */
		a->len = answer_size[type];
		return fail(a, &refused.log, -ESRCH, "unknown log (server restarted?)");
	}
	switch (type) {
	case DM_ULOG_DTR:
		log_destroy(l);
		return 0;
	case DM_ULOG_PRESUSPEND:
	case DM_ULOG_POSTSUSPEND:
		return 0;
	case DM_ULOG_RESUME:
		log_resume(l);
		return 0;
	case DM_ULOG_GET_REGION_SIZE:
		put_u64(a, (int64_t)l->region_size, 0, 1);
		return 0;
	case DM_ULOG_IS_CLEAN:
	case DM_ULOG_IN_SYNC:
		if (!region_arg(req, data, l, 0, &region))
			return fail(a, &refused.argument, -EINVAL, "no region, or beyond the log");
		put_u64(a,
			type == DM_ULOG_IS_CLEAN ? log_is_clean(l, region) : log_in_sync(l, region),
			0, 1);
		return 0;
	case DM_ULOG_FLUSH: /* memory is the log: only integrated marks to apply */
	case DM_ULOG_MARK_REGION:
		return regions(req, data, l, a, log_mark);
	case DM_ULOG_CLEAR_REGION:
		return regions(req, data, l, a, log_clear);
	case DM_ULOG_GET_RESYNC_WORK:
		pkg[0] = log_resync_work(l, &region);
		put_u64(a, pkg[0], pkg[0] ? region : 0, 2);
		return 0;
	case DM_ULOG_SET_REGION_SYNC:
		if (req->data_size != 2 * sizeof(int64_t) || !region_arg(req, data, l, 0, &region))
			return fail(a, &refused.argument, -EINVAL, "expected {region, in_sync}");
		memcpy(pkg, data, sizeof(pkg));
		log_set_sync(l, region, pkg[1] != 0);
		return 0;
	case DM_ULOG_GET_SYNC_COUNT:
		put_u64(a, (int64_t)l->sync_count, 0, 1);
		return 0;
	case DM_ULOG_STATUS_INFO: /* the kernel wants the NUL: dm's status is a C string */
		memcpy(a->data.text, STATUS_INFO, sizeof(STATUS_INFO));
		a->len = sizeof(STATUS_INFO);
		return 0;
	case DM_ULOG_STATUS_TABLE:
		a->len = (size_t)snprintf(a->data.text, sizeof(a->data.text), "%s", l->table) + 1;
		return 0;
	case DM_ULOG_IS_REMOTE_RECOVERING: /* one machine: nobody else recovers */
		put_u64(a, 0, log_first_unsynced(l), 2);
		return 0;
	}
	return fail(a, &refused.type, -EINVAL, "unknown request type");
}

/* --eagain: is this request one to answer with -EAGAIN? */
static int take_eagain(uint32_t type)
{
	if (!eagain_left[type])
		return 0;
	eagain_left[type]--;
	return 1;
}

/* Check, serve and answer one message from group CN_IDX_DM. */
static void handle(struct cn_sock *s, const struct cn_message *m)
{
	struct dm_ulog_request request;
	const char *data = cn_dm_ulog_decode(m->msg, &request);
	const struct dm_ulog_request *req = data ? &request : NULL;
	struct answer a = { 0 };
	uint32_t type = req ? DM_ULOG_REQUEST_TYPE(req->request_type) : 0;
	char unknown[24];
	const char *name = type < NTYPES && type_name[type] ? type_name[type] : unknown;
	int r;

	snprintf(unknown, sizeof(unknown), req ? "type %u" : "request", type);
	if (!req)
		fail(&a, &refused.malformed, -EBADMSG, "not a dm_ulog_request");
	else if (req->version < 1 || req->version > DM_ULOG_REQUEST_VERSION)
		fail(&a, &refused.version, -EPROTONOSUPPORT, "request version not supported");
	else if (type >= NTYPES || !type_name[type])
		fail(&a, &refused.type, -EINVAL, "unknown request type");
	else if (take_eagain(type))
		fail(&a, &refused.eagain, -EAGAIN, "--eagain: asking the kernel to resend");
	else
		serve(req, data, type, &a);

	/* The kernel matches this answer on seq (cn_msg.seq for the bare
	 * form, dm_ulog_request.seq for the other): libcn sends both right. */
	if (req)
		r = cn_dm_ulog_reply(s, m, a.error, &a.data, a.len);
	else
		r = cn_dm_ulog_ack(s, m, a.error);
	if (a.error)
		fprintf(stderr, "dm-ulog: refused %s seq %u (log %.8s, %u bytes): %s: %s\n", name,
			m->msg->seq,
			req ? req->uuid + (strlen(req->uuid) > 8 ? strlen(req->uuid) - 8 : 0) : "?",
			m->msg->len, a.why, strerror(-a.error));
	else if (verbose)
		fprintf(stderr, "dm-ulog: %s seq %u: answered %zu bytes\n", name, m->msg->seq,
			a.len);
	if (r < 0)
		fprintf(stderr, "dm-ulog: answering %s seq %u: %s\n", name, m->msg->seq,
			strerror(-r));
	else
		answered++;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int parse_eagain(const char *arg)
{
	for (uint32_t t = 1; t < NTYPES; t++)
		if (!strcmp(arg, type_name[t])) {
			eagain_left[t]++;
			return 0;
		}
	fprintf(stderr, "dm-ulog: --eagain: no request type %s\n", arg);
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "eagain", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa = { .sa_handler =
				    on_signal }; /* no SA_RESTART: cn_recv returns -EINTR */
	struct cn_message m;
	struct cn_sock *s;
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "ve:h", opts, NULL)) != -1) {
		if (c == 'v')
			verbose = 1;
		else if (c != 'e' || parse_eagain(optarg) < 0) {
			fprintf(stderr, "usage: dm-ulog [--verbose] [--eagain TYPE]...\n");
			return c == 'h' ? 0 : 2;
		}
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	s = cn_open(NETLINK_CONNECTOR, NULL);
	if (!s || (r = cn_join(s, CN_IDX_DM)) < 0) {
		fprintf(stderr, "dm-ulog: connector socket: %s\n", strerror(s ? -r : errno));
		return 1;
	}
	cn_set_rcvbuf(s, 1 << 20);
	fprintf(stderr, "dm-ulog: serving dm-log-userspace requests (group %d)\n", CN_IDX_DM);
	while (!stop) {
		r = cn_recv(s, &m, 0);
		if (r == -EINTR)
			continue;
		if (r == -ENOBUFS) {
			fprintf(stderr, "dm-ulog: overrun: requests lost (the kernel resends "
					"each after 15 s)\n");
			continue;
		}
		if (r < 0) {
			fprintf(stderr, "dm-ulog: receive: %s\n", strerror(-r));
			break;
		}
		if (m.msg->id.idx == CN_IDX_DM && m.msg->id.val == CN_VAL_DM_USERSPACE_LOG)
			handle(s, &m);
	}
	fprintf(stderr,
		"dm-ulog: %lu answered; refused: %lu malformed, %lu version, %lu type, "
		"%lu unknown log, %lu argument, %lu eagain\n",
		answered, refused.malformed, refused.version, refused.type, refused.log,
		refused.argument, refused.eagain);
	cn_close(s);
	return r < 0 && r != -EINTR ? 1 : 0;
}
