/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kmod.c - finding the connector bus (cnbus.ko, kmod/) and reading its
 * counters through its generic netlink family (libcn/kmod_genl.h), with
 * libnl-genl-3: one dump (NLM_F_DUMP), whose messages are copied into one
 * buffer as they arrive and then parsed by cn_bus_parse_reply, so a query
 * and a test or fuzzer feeding bytes take the same path. This is a control
 * path: libnl's message objects and a few allocations per query are fine.
 */
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <libcn/kmod.h>
#include <libcn/kmod_genl.h>

#include "internal.h"

/*
 * kmod's refusal attributes and cn_bus_info.refused[] are in the same
 * order (parse below indexes by attribute - CNBUS_REFUSED_A_FIRST): a
 * reason added on one side only must not compile.
 */
#define SAME_REFUSAL(r)                                                                            \
	_Static_assert(CN_BUS_REFUSED_##r == CNBUS_REFUSED_A_##r - CNBUS_REFUSED_A_FIRST, #r)
SAME_REFUSAL(SHORT);
SAME_REFUSAL(TRUNCATED);
SAME_REFUSAL(BAD_LEN);
SAME_REFUSAL(OVERSIZE);
SAME_REFUSAL(NO_CALLBACK);
SAME_REFUSAL(NOTIFY_INVAL);
SAME_REFUSAL(NOTIFY_PERM);
SAME_REFUSAL(NOTIFY_FULL);
SAME_REFUSAL(CBUS_SHUTDOWN);
SAME_REFUSAL(NOTIFY_EXISTS);
SAME_REFUSAL(NOTIFY_NOENT);
SAME_REFUSAL(NOMEM);
_Static_assert(CN_BUS_REFUSED_COUNT == CNBUS_REFUSED_NR, "refusal reasons differ from kmod's");
_Static_assert(CN_BUS_NAME_MAX == CNBUS_NAME_MAX, "callback name length differs from kmod's");
_Static_assert(sizeof(((struct cn_bus_info *)0)->version) == CNBUS_VERSION_MAX,
	       "version length differs from kmod's");

static uint32_t get_u32(struct nlattr *a)
{
	return a && nla_len(a) >= (int)sizeof(uint32_t) ? nla_get_u32(a) : 0;
}

static uint64_t get_u64(struct nlattr *a)
{
	uint64_t v = 0;

	if (a && nla_len(a) >= (int)sizeof(v))
		memcpy(&v, nla_data(a), sizeof(v)); /* attributes are only 4-byte aligned */
	return v;
}

static void get_str(struct nlattr *a, char *dst, size_t size)
{
	size_t n;

	dst[0] = '\0';
	if (!a || nla_len(a) <= 0)
		return;
	n = strnlen(nla_data(a), (size_t)nla_len(a));
	if (n >= size)
		n = size - 1;
	memcpy(dst, nla_data(a), n);
	dst[n] = '\0';
}

/* The object of one dump message, and its attributes. */
enum dump_kind { DUMP_OTHER, DUMP_BUS, DUMP_CALLBACK, DUMP_CPU };

struct dump_msg {
	enum dump_kind kind;
	struct nlattr *tb[CNBUS_A_MAX + 1];
};

/* Parse one message of the dump; 0 or -EBADMSG. */
static int parse_msg(const struct nlmsghdr *nlh, struct dump_msg *m)
{
	const struct genlmsghdr *gh = NLMSG_DATA(nlh);
	int alen;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN || gh->cmd != CNBUS_CMD_DUMP)
		return -EBADMSG;
	alen = (int)(nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN);
	/* nla_parse only reads; its prototype is not const-correct. */
	if (nla_parse(m->tb, CNBUS_A_MAX, (struct nlattr *)((const char *)gh + GENL_HDRLEN), alen,
		      NULL) < 0)
		return -EBADMSG;
	if (m->tb[CNBUS_A_UNIT])
		m->kind = DUMP_BUS;
	else if (m->tb[CNBUS_A_CALLBACK])
		m->kind = DUMP_CALLBACK;
	else if (m->tb[CNBUS_A_CPU])
		m->kind = DUMP_CPU;
	else
		m->kind = DUMP_OTHER; /* from a newer kmod: skipped */
	return 0;
}

static void parse_bus(struct nlattr **tb, struct cn_bus_info *info)
{
	struct nlattr *ref[CNBUS_REFUSED_A_MAX + 1];

	info->unit = get_u32(tb[CNBUS_A_UNIT]);
	get_str(tb[CNBUS_A_VERSION], info->version, sizeof(info->version));
	info->groups = get_u32(tb[CNBUS_A_GROUPS]);
	info->max_notify = get_u32(tb[CNBUS_A_MAX_NOTIFY]);
	info->notify_count = get_u32(tb[CNBUS_A_NOTIFY_COUNT]);
	info->cbus_qlen = get_u32(tb[CNBUS_A_CBUS_QLEN]);
	info->cbus_budget = get_u32(tb[CNBUS_A_CBUS_BUDGET]);
	info->possible_cpus = get_u32(tb[CNBUS_A_POSSIBLE_CPUS]);
	info->received = get_u64(tb[CNBUS_A_RECEIVED]);
	info->dispatched = get_u64(tb[CNBUS_A_DISPATCHED]);
	info->reply_dropped = get_u64(tb[CNBUS_A_REPLY_DROPPED]);
	if (tb[CNBUS_A_REFUSED] &&
	    nla_parse_nested(ref, CNBUS_REFUSED_A_MAX, tb[CNBUS_A_REFUSED], NULL) == 0) {
		for (int i = 0; i < CN_BUS_REFUSED_COUNT; i++)
			info->refused[i] = get_u64(ref[CNBUS_REFUSED_A_FIRST + i]);
	}
}

static int parse_callback(struct nlattr *nest, struct cn_bus_callback *c)
{
	struct nlattr *tb[CNBUS_CB_A_MAX + 1];

	if (nla_parse_nested(tb, CNBUS_CB_A_MAX, nest, NULL) < 0)
		return -EBADMSG;
	c->idx = get_u32(tb[CNBUS_CB_A_IDX]);
	c->val = get_u32(tb[CNBUS_CB_A_VAL]);
	get_str(tb[CNBUS_CB_A_NAME], c->name, sizeof(c->name));
	return 0;
}

static int parse_cpu(struct nlattr *nest, struct cn_bus_cpu *c)
{
	struct nlattr *tb[CNBUS_CPU_A_MAX + 1];

	if (nla_parse_nested(tb, CNBUS_CPU_A_MAX, nest, NULL) < 0)
		return -EBADMSG;
	c->cpu = get_u32(tb[CNBUS_CPU_A_ID]);
	c->inserted = get_u64(tb[CNBUS_CPU_A_INSERTED]);
	c->sent = get_u64(tb[CNBUS_CPU_A_SENT]);
	c->dropped = get_u64(tb[CNBUS_CPU_A_DROPPED]);
	c->queued = get_u32(tb[CNBUS_CPU_A_QUEUED]);
	c->refused = get_u64(tb[CNBUS_CPU_A_REFUSED]);
	c->overflowed = get_u64(tb[CNBUS_CPU_A_OVERFLOWED]);
	return 0;
}

/*
 * One walk over the dump in buf. Without info it counts the callbacks and
 * CPUs (*ncallbacks, *ncpus) and checks every message; with info it fills
 * it in. Returns 0 or -errno (EBADMSG, EAGAIN for NLM_F_DUMP_INTR, or the
 * error of an NLMSG_ERROR).
 */
static int walk_dump(const void *buf, size_t len, struct cn_bus_info *info, uint32_t *ncallbacks,
		     uint32_t *ncpus)
{
	struct cn_bus_callback scratch_cb; /* what the counting walk parses into */
	struct cn_bus_cpu scratch_cpu;
	const struct nlmsghdr *nlh = buf;
	size_t rem = len, step;
	int buses = 0;

	*ncallbacks = 0;
	*ncpus = 0;
	while (rem >= NLMSG_HDRLEN) {
		struct dump_msg m;

		if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > rem)
			return -EBADMSG;
		if (nlh->nlmsg_type == NLMSG_DONE)
			break;
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr e;

			if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(e.error)))
				return -EBADMSG;
			memcpy(&e.error, NLMSG_DATA(nlh), sizeof(e.error));
			return e.error < 0 && e.error > -4096 ? e.error : -EBADMSG;
		}
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
			return -EAGAIN; /* the callbacks changed during the dump */
		if (parse_msg(nlh, &m) < 0)
			return -EBADMSG;
		switch (m.kind) {
		case DUMP_BUS:
			if (buses++)
				return -EBADMSG;
			if (info)
				parse_bus(m.tb, info);
			break;
		case DUMP_CALLBACK:
			if (parse_callback(m.tb[CNBUS_A_CALLBACK],
					   info ? &info->callbacks[*ncallbacks] : &scratch_cb) < 0)
				return -EBADMSG;
			++*ncallbacks;
			break;
		case DUMP_CPU:
			if (parse_cpu(m.tb[CNBUS_A_CPU],
				      info ? &info->cpus[*ncpus] : &scratch_cpu) < 0)
				return -EBADMSG;
			++*ncpus;
			break;
		case DUMP_OTHER:
			break;
		}
		/* Not NLMSG_NEXT: its rem -= NLMSG_ALIGN(len) wraps around after a
		 * last message whose length is not aligned. */
		step = NLMSG_ALIGN(nlh->nlmsg_len);
		if (step >= rem)
			break;
		rem -= step;
		nlh = (const struct nlmsghdr *)((const char *)nlh + step);
	}
	return buses ? 0 : -EBADMSG;
}

/* One block: the struct, then the CPU array (8-byte members first), then
 * the callbacks. */
static struct cn_bus_info *alloc_info(uint32_t ncallbacks, uint32_t ncpus)
{
	size_t size = sizeof(struct cn_bus_info) + (size_t)ncpus * sizeof(struct cn_bus_cpu) +
		      (size_t)ncallbacks * sizeof(struct cn_bus_callback);
	struct cn_bus_info *info = calloc(1, size);

	if (!info)
		return NULL;
	info->cpus = (struct cn_bus_cpu *)(info + 1);
	info->callbacks = (struct cn_bus_callback *)(info->cpus + ncpus);
	return info;
}

void cn_bus_info_free(struct cn_bus_info *info)
{
	free(info);
}

int cn_bus_parse_reply(const void *buf, size_t len, struct cn_bus_info **out)
{
	struct cn_bus_info *info;
	uint32_t ncallbacks, ncpus;
	int r;

	if (!out)
		return cn_fail(EINVAL);
	*out = NULL;
	if (!buf)
		return cn_fail(EINVAL);
	/* Count (and check) first, so the block is allocated once. */
	r = walk_dump(buf, len, NULL, &ncallbacks, &ncpus);
	if (r < 0)
		return cn_fail(-r);
	info = alloc_info(ncallbacks, ncpus);
	if (!info)
		return cn_fail(ENOMEM);
	r = walk_dump(buf, len, info, &info->ncallbacks, &info->ncpus);
	if (r < 0) {
		free(info);
		return cn_fail(-r);
	}
	*out = info;
	return 0;
}

/* The dump's messages, copied one after the other as they arrive. */
struct dump_buf {
	char *data;
	size_t len, cap;
	int err;
};

static int on_message(struct nl_msg *msg, void *arg)
{
	struct dump_buf *d = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	size_t n = NLMSG_ALIGN(nlh->nlmsg_len);

	if (d->err)
		return NL_SKIP;
	if (d->len + n > d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16384;
		char *p;

		while (cap < d->len + n)
			cap *= 2;
		p = realloc(d->data, cap);
		if (!p) {
			d->err = -ENOMEM;
			return NL_SKIP;
		}
		d->data = p;
		d->cap = cap;
	}
	memset(d->data + d->len, 0, n);
	memcpy(d->data + d->len, nlh, nlh->nlmsg_len);
	d->len += n;
	return NL_OK;
}

/* How many times a dump the callbacks changed under is asked again. */
#define DUMP_TRIES 5

/* One dump into d; 0 or -errno (-EAGAIN: interrupted by a change). */
static int dump_once(struct nl_sock *nl, int family, struct dump_buf *d)
{
	struct nl_msg *msg;
	int r;

	d->len = 0;
	d->err = 0;
	msg = nlmsg_alloc();
	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_DUMP,
				 CNBUS_CMD_DUMP, CNBUS_GENL_VERSION)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	r = nl_send_auto(nl, msg);
	nlmsg_free(msg);
	if (r < 0)
		return -EIO;
	r = nl_recvmsgs_default(nl);
	if (r == -NLE_DUMP_INTR)
		return -EAGAIN;
	if (r == -NLE_PERM)
		return -EPERM;
	if (r == -NLE_OPNOTSUPP)
		return -EOPNOTSUPP; /* a kmod of genl version 1 */
	if (r < 0)
		return -EIO;
	return d->err;
}

int cn_bus_query(struct cn_bus_info **info)
{
	struct dump_buf d = { 0 };
	struct nl_sock *nl;
	int family, r, tries = 0;

	if (!info)
		return cn_fail(EINVAL);
	*info = NULL;
	nl = nl_socket_alloc();
	if (!nl)
		return cn_fail(ENOMEM);
	errno = 0;
	r = genl_connect(nl);
	if (r < 0) {
		r = -(errno ? errno : EPROTONOSUPPORT);
		goto free_sock;
	}
	family = genl_ctrl_resolve(nl, CNBUS_GENL_NAME);
	if (family < 0) {
		/* The family exists only while cnbus.ko is loaded. */
		r = family == -NLE_OBJ_NOTFOUND ? -ENOENT : -EIO;
		goto free_sock;
	}
	nl_socket_modify_cb(nl, NL_CB_VALID, NL_CB_CUSTOM, on_message, &d);
	do
		r = dump_once(nl, family, &d);
	while (r == -EAGAIN && ++tries < DUMP_TRIES);
	if (r == 0)
		r = cn_bus_parse_reply(d.data, d.len, info) < 0 ? -errno : 0;
free_sock:
	free(d.data);
	nl_socket_free(nl);
	return cn_ret(r);
}

struct cn_sock *cn_bus_open(const struct cn_open_opts *opts)
{
	struct cn_bus_info *info;
	uint32_t unit;

	if (cn_bus_query(&info) < 0)
		return NULL;
	unit = info->unit;
	cn_bus_info_free(info);
	return cn_open((int)unit, opts);
}
