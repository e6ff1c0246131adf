/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kmod.c - finding the connector bus (cnbus.ko, kmod/) and reading its
 * counters through its generic netlink family (libcn/kmod_genl.h), with
 * libnl-genl-3. This is a control path: libnl's message objects and one
 * allocation per query (struct cn_bus_info, sized to the reply) are fine.
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

#define NESTED_MAX (CNBUS_CB_A_MAX > CNBUS_CPU_A_MAX ? CNBUS_CB_A_MAX : CNBUS_CPU_A_MAX)

/* Entries of type `type` in `nest` that parse: the array length to allocate. */
static uint32_t count_nested(struct nlattr *nest, int type, int maxtype)
{
	struct nlattr *tb[NESTED_MAX + 1];
	struct nlattr *a;
	uint32_t n = 0;
	int rem;

	if (!nest)
		return 0;
	nla_for_each_nested(a, nest, rem)
	{
		if (nla_type(a) == type && nla_parse_nested(tb, maxtype, a, NULL) == 0)
			n++;
	}
	return n;
}

static void parse_callbacks(struct nlattr *nest, struct cn_bus_info *info, uint32_t max)
{
	struct nlattr *cb;
	int rem;

	nla_for_each_nested(cb, nest, rem)
	{
		struct nlattr *tb[CNBUS_CB_A_MAX + 1];
		struct cn_bus_callback *c;

		if (nla_type(cb) != CNBUS_A_CALLBACK ||
		    nla_parse_nested(tb, CNBUS_CB_A_MAX, cb, NULL) < 0 || info->ncallbacks == max)
			continue;
		c = &info->callbacks[info->ncallbacks++];
		c->idx = get_u32(tb[CNBUS_CB_A_IDX]);
		c->val = get_u32(tb[CNBUS_CB_A_VAL]);
		get_str(tb[CNBUS_CB_A_NAME], c->name, sizeof(c->name));
	}
}

static void parse_cpus(struct nlattr *nest, struct cn_bus_info *info, uint32_t max)
{
	struct nlattr *cpu;
	int rem;

	nla_for_each_nested(cpu, nest, rem)
	{
		struct nlattr *tb[CNBUS_CPU_A_MAX + 1];
		struct cn_bus_cpu *c;

		if (nla_type(cpu) != CNBUS_A_CPU ||
		    nla_parse_nested(tb, CNBUS_CPU_A_MAX, cpu, NULL) < 0 || info->ncpus == max)
			continue;
		c = &info->cpus[info->ncpus++];
		c->cpu = get_u32(tb[CNBUS_CPU_A_ID]);
		c->inserted = get_u64(tb[CNBUS_CPU_A_INSERTED]);
		c->sent = get_u64(tb[CNBUS_CPU_A_SENT]);
		c->sent_direct = get_u64(tb[CNBUS_CPU_A_SENT_DIRECT]);
		c->dropped = get_u64(tb[CNBUS_CPU_A_DROPPED]);
		c->queued = get_u32(tb[CNBUS_CPU_A_QUEUED]);
	}
}

/* One block: the struct, then the CPU array (8-byte members first), then
 * the callbacks. A reply is at most a few pages, so the counts are small. */
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
	struct nlattr *tb[CNBUS_A_MAX + 1];
	struct nlattr *ref[CNBUS_REFUSED_A_MAX + 1];
	const struct nlmsghdr *nlh = buf;
	const struct genlmsghdr *gh;
	struct cn_bus_info *info;
	uint32_t ncallbacks, ncpus;
	int alen;

	if (!out)
		return cn_fail(EINVAL);
	*out = NULL;
	if (!buf)
		return cn_fail(EINVAL);
	if (len < NLMSG_HDRLEN + GENL_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN ||
	    nlh->nlmsg_len > len)
		return cn_fail(EBADMSG);
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr e;

		memcpy(&e.error, NLMSG_DATA(nlh), sizeof(e.error));
		return cn_fail(e.error < 0 && e.error > -4096 ? -e.error : EBADMSG);
	}
	gh = NLMSG_DATA(nlh);
	if (gh->cmd != CNBUS_CMD_GET)
		return cn_fail(EBADMSG);
	alen = (int)(nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN);
	/* nla_parse only reads; its prototype is not const-correct. */
	if (nla_parse(tb, CNBUS_A_MAX, (struct nlattr *)((const char *)gh + GENL_HDRLEN), alen,
		      NULL) < 0)
		return cn_fail(EBADMSG);
	if (!tb[CNBUS_A_UNIT])
		return cn_fail(EBADMSG);
	ncallbacks = count_nested(tb[CNBUS_A_CALLBACKS], CNBUS_A_CALLBACK, CNBUS_CB_A_MAX);
	ncpus = count_nested(tb[CNBUS_A_CPUS], CNBUS_A_CPU, CNBUS_CPU_A_MAX);
	info = alloc_info(ncallbacks, ncpus);
	if (!info)
		return cn_fail(ENOMEM);
	info->unit = get_u32(tb[CNBUS_A_UNIT]);
	get_str(tb[CNBUS_A_VERSION], info->version, sizeof(info->version));
	info->groups = get_u32(tb[CNBUS_A_GROUPS]);
	info->max_notify = get_u32(tb[CNBUS_A_MAX_NOTIFY]);
	info->notify_count = get_u32(tb[CNBUS_A_NOTIFY_COUNT]);
	info->cbus_qlen = get_u32(tb[CNBUS_A_CBUS_QLEN]);
	info->received = get_u64(tb[CNBUS_A_RECEIVED]);
	info->dispatched = get_u64(tb[CNBUS_A_DISPATCHED]);
	info->reply_dropped = get_u64(tb[CNBUS_A_REPLY_DROPPED]);
	if (ncallbacks)
		parse_callbacks(tb[CNBUS_A_CALLBACKS], info, ncallbacks);
	if (ncpus)
		parse_cpus(tb[CNBUS_A_CPUS], info, ncpus);
	if (tb[CNBUS_A_REFUSED] &&
	    nla_parse_nested(ref, CNBUS_REFUSED_A_MAX, tb[CNBUS_A_REFUSED], NULL) == 0) {
		for (int i = 0; i < CN_BUS_REFUSED_COUNT; i++)
			info->refused[i] = get_u64(ref[CNBUS_REFUSED_A_FIRST + i]);
	}
	*out = info;
	return 0;
}

struct query {
	struct cn_bus_info *info;
	int err;
	int got;
};

static int on_reply(struct nl_msg *msg, void *arg)
{
	struct query *q = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	int r;

	cn_bus_info_free(q->info); /* a second reply replaces the first */
	r = cn_bus_parse_reply(nlh, nlh->nlmsg_len, &q->info);
	q->err = r < 0 ? r : 0;
	q->got = 1;
	return NL_OK;
}

int cn_bus_query(struct cn_bus_info **info)
{
	struct query q = { 0 };
	struct nl_sock *nl;
	struct nl_msg *msg = NULL;
	int family, r;

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
	msg = nlmsg_alloc();
	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0, CNBUS_CMD_GET,
				 CNBUS_GENL_VERSION)) {
		r = -ENOMEM;
		goto free_msg;
	}
	nl_socket_modify_cb(nl, NL_CB_VALID, NL_CB_CUSTOM, on_reply, &q);
	r = nl_send_auto(nl, msg);
	if (r < 0) {
		r = -EIO;
		goto free_msg;
	}
	r = nl_recvmsgs_default(nl);
	if (r < 0)
		r = r == -NLE_PERM ? -EPERM : -EIO;
	else if (!q.got)
		r = -ENODATA;
	else
		r = q.err;
free_msg:
	nlmsg_free(msg);
free_sock:
	nl_socket_free(nl);
	if (r == 0)
		*info = q.info;
	else
		cn_bus_info_free(q.info);
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
