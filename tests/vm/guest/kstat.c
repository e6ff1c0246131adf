// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kstat.c - read cnbus.ko's generic netlink report with libnl-genl-3.
 */
#include <errno.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "kstat.h"

static void parse_cb_entry(struct kstat *ks, struct nlattr *a)
{
	struct nlattr *tb[CNBUS_CB_A_MAX + 1];
	struct kstat_cb *cb;

	if (ks->ncbs >= KSTAT_MAX_CBS || nla_parse_nested(tb, CNBUS_CB_A_MAX, a, NULL))
		return;
	cb = &ks->cb[ks->ncbs++];
	if (tb[CNBUS_CB_A_IDX])
		cb->idx = nla_get_u32(tb[CNBUS_CB_A_IDX]);
	if (tb[CNBUS_CB_A_VAL])
		cb->val = nla_get_u32(tb[CNBUS_CB_A_VAL]);
	if (tb[CNBUS_CB_A_NAME])
		nla_strlcpy(cb->name, tb[CNBUS_CB_A_NAME], sizeof(cb->name));
}

static void parse_cpu_entry(struct kstat *ks, struct nlattr *a)
{
	struct nlattr *tb[CNBUS_CPU_A_MAX + 1];
	struct kstat_cpu *c;

	if (ks->ncpus >= KSTAT_MAX_CPUS || nla_parse_nested(tb, CNBUS_CPU_A_MAX, a, NULL))
		return;
	c = &ks->cpu[ks->ncpus++];
	if (tb[CNBUS_CPU_A_ID])
		c->id = nla_get_u32(tb[CNBUS_CPU_A_ID]);
	if (tb[CNBUS_CPU_A_INSERTED])
		c->inserted = nla_get_u64(tb[CNBUS_CPU_A_INSERTED]);
	if (tb[CNBUS_CPU_A_SENT])
		c->sent = nla_get_u64(tb[CNBUS_CPU_A_SENT]);
	if (tb[CNBUS_CPU_A_SENT_DIRECT])
		c->sent_direct = nla_get_u64(tb[CNBUS_CPU_A_SENT_DIRECT]);
	if (tb[CNBUS_CPU_A_DROPPED])
		c->dropped = nla_get_u64(tb[CNBUS_CPU_A_DROPPED]);
	if (tb[CNBUS_CPU_A_QUEUED])
		c->queued = nla_get_u32(tb[CNBUS_CPU_A_QUEUED]);
	ks->inserted += c->inserted;
	ks->sent += c->sent;
	ks->sent_direct += c->sent_direct;
	ks->dropped += c->dropped;
	ks->queued += c->queued;
}

static int parse_reply(struct nl_msg *msg, void *arg)
{
	struct kstat *ks = arg;
	struct nlattr *tb[CNBUS_A_MAX + 1];
	struct nlattr *a;
	int rem, i;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, CNBUS_A_MAX, NULL))
		return NL_SKIP;
	if (tb[CNBUS_A_UNIT])
		ks->unit = nla_get_u32(tb[CNBUS_A_UNIT]);
	if (tb[CNBUS_A_VERSION])
		nla_strlcpy(ks->version, tb[CNBUS_A_VERSION], sizeof(ks->version));
	if (tb[CNBUS_A_GROUPS])
		ks->groups = nla_get_u32(tb[CNBUS_A_GROUPS]);
	if (tb[CNBUS_A_MAX_NOTIFY])
		ks->max_notify = nla_get_u32(tb[CNBUS_A_MAX_NOTIFY]);
	if (tb[CNBUS_A_NOTIFY_COUNT])
		ks->notify_count = nla_get_u32(tb[CNBUS_A_NOTIFY_COUNT]);
	if (tb[CNBUS_A_CBUS_QLEN])
		ks->cbus_qlen = nla_get_u32(tb[CNBUS_A_CBUS_QLEN]);
	if (tb[CNBUS_A_RECEIVED])
		ks->received = nla_get_u64(tb[CNBUS_A_RECEIVED]);
	if (tb[CNBUS_A_DISPATCHED])
		ks->dispatched = nla_get_u64(tb[CNBUS_A_DISPATCHED]);
	if (tb[CNBUS_A_CALLBACKS])
		nla_for_each_nested(a, tb[CNBUS_A_CALLBACKS], rem)
			parse_cb_entry(ks, a);
	if (tb[CNBUS_A_CPUS])
		nla_for_each_nested(a, tb[CNBUS_A_CPUS], rem)
			parse_cpu_entry(ks, a);
	if (tb[CNBUS_A_REFUSED]) {
		struct nlattr *rt[CNBUS_REFUSED_A_MAX + 1];

		if (!nla_parse_nested(rt, CNBUS_REFUSED_A_MAX, tb[CNBUS_A_REFUSED], NULL))
			for (i = 0; i <= CNBUS_REFUSED_A_MAX; i++)
				if (i != CNBUS_REFUSED_A_PAD && rt[i])
					ks->refused[i] = nla_get_u64(rt[i]);
	}
	return NL_OK;
}

int kstat_get(struct kstat *ks)
{
	struct nl_sock *sk;
	struct nl_msg *msg = NULL;
	int family, err;

	memset(ks, 0, sizeof(*ks));
	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	err = genl_connect(sk);
	if (err)
		goto out;
	family = genl_ctrl_resolve(sk, CNBUS_GENL_NAME);
	if (family < 0) {
		err = family;
		goto out;
	}
	msg = nlmsg_alloc();
	if (!msg) {
		err = -NLE_NOMEM;
		goto out;
	}
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0, CNBUS_CMD_GET,
			 CNBUS_GENL_VERSION)) {
		err = -NLE_NOMEM;
		goto out;
	}
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, parse_reply, ks);
	err = nl_send_auto(sk, msg);
	if (err < 0)
		goto out;
	err = nl_recvmsgs_default(sk);
	if (err < 0)
		goto out;
	err = nl_wait_for_ack(sk);
out:
	nlmsg_free(msg);
	nl_socket_free(sk);
	if (err < 0)
		return -EIO;
	return 0;
}

uint64_t kstat_refused_total(const struct kstat *ks)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i <= CNBUS_REFUSED_A_MAX; i++)
		t += ks->refused[i];
	return t;
}
