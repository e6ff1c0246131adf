// SPDX-License-Identifier: GPL-2.0
/*
 * cnbus_genl.c - generic netlink family "cnbus": introspection.
 *
 * CNBUS_CMD_GET answers with the unit, the version, the callbacks and all
 * counters (see include/libcn/kmod_genl.h), so userspace finds the bus
 * without hard-coding its unit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/cpumask.h>
#include <linux/rculist.h>
#include <net/genetlink.h>

#include "cnbus_internal.h"

static struct genl_family cnbus_genl_family;

static int cnbus_genl_put_callbacks(struct sk_buff *skb)
{
	struct cnbus_callback *cb;
	struct nlattr *all, *one;
	int err = 0;

	all = nla_nest_start(skb, CNBUS_A_CALLBACKS);
	if (!all)
		return -EMSGSIZE;
	rcu_read_lock();
	list_for_each_entry_rcu(cb, &cnbus_callbacks, list) {
		one = nla_nest_start(skb, CNBUS_A_CALLBACK);
		if (!one || nla_put_u32(skb, CNBUS_CB_A_IDX, cb->id.idx) ||
		    nla_put_u32(skb, CNBUS_CB_A_VAL, cb->id.val) ||
		    nla_put_string(skb, CNBUS_CB_A_NAME, cb->name)) {
			err = -EMSGSIZE;
			break;
		}
		nla_nest_end(skb, one);
	}
	rcu_read_unlock();
	if (err)
		return err;
	nla_nest_end(skb, all);
	return 0;
}

static int cnbus_genl_put_cpus(struct sk_buff *skb)
{
	struct cnbus_cpu_stats st;
	struct nlattr *all, *one;
	unsigned int cpu;

	all = nla_nest_start(skb, CNBUS_A_CPUS);
	if (!all)
		return -EMSGSIZE;
	for_each_possible_cpu(cpu) {
		cnbus_cbus_read(cpu, &st);
		one = nla_nest_start(skb, CNBUS_A_CPU);
		if (!one || nla_put_u32(skb, CNBUS_CPU_A_ID, cpu) ||
		    nla_put_u64_64bit(skb, CNBUS_CPU_A_INSERTED, st.inserted, CNBUS_CPU_A_PAD) ||
		    nla_put_u64_64bit(skb, CNBUS_CPU_A_SENT, st.sent, CNBUS_CPU_A_PAD) ||
		    nla_put_u64_64bit(skb, CNBUS_CPU_A_SENT_DIRECT, st.sent_direct,
				      CNBUS_CPU_A_PAD) ||
		    nla_put_u64_64bit(skb, CNBUS_CPU_A_DROPPED, st.dropped, CNBUS_CPU_A_PAD) ||
		    nla_put_u32(skb, CNBUS_CPU_A_QUEUED, st.queued))
			return -EMSGSIZE;
		nla_nest_end(skb, one);
	}
	nla_nest_end(skb, all);
	return 0;
}

static int cnbus_genl_put_refused(struct sk_buff *skb)
{
	struct nlattr *nest;
	int i;

	nest = nla_nest_start(skb, CNBUS_A_REFUSED);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < CNBUS_REFUSED_NR; i++)
		if (nla_put_u64_64bit(skb, CNBUS_REFUSED_A_FIRST + i,
				      atomic64_read(&cnbus_stats.refused[i]), CNBUS_REFUSED_A_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int cnbus_genl_fill(struct sk_buff *skb, struct genl_info *info)
{
	void *hdr;

	hdr = genlmsg_put_reply(skb, info, &cnbus_genl_family, 0, CNBUS_CMD_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, CNBUS_A_UNIT, cnbus_unit) ||
	    nla_put_string(skb, CNBUS_A_VERSION, CNBUS_VERSION) ||
	    nla_put_u32(skb, CNBUS_A_GROUPS, cnbus_groups) ||
	    nla_put_u32(skb, CNBUS_A_MAX_NOTIFY, cnbus_max_notify) ||
	    nla_put_u32(skb, CNBUS_A_NOTIFY_COUNT, cnbus_notify_count()) ||
	    nla_put_u32(skb, CNBUS_A_CBUS_QLEN, cnbus_cbus_qlen) ||
	    nla_put_u64_64bit(skb, CNBUS_A_RECEIVED, atomic64_read(&cnbus_stats.received),
			      CNBUS_A_PAD) ||
	    nla_put_u64_64bit(skb, CNBUS_A_DISPATCHED, atomic64_read(&cnbus_stats.dispatched),
			      CNBUS_A_PAD) ||
	    nla_put_u64_64bit(skb, CNBUS_A_REPLY_DROPPED, atomic64_read(&cnbus_stats.reply_dropped),
			      CNBUS_A_PAD) ||
	    cnbus_genl_put_callbacks(skb) || cnbus_genl_put_cpus(skb) ||
	    cnbus_genl_put_refused(skb)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int cnbus_genl_get(struct sk_buff *skb, struct genl_info *info)
{
	size_t size = NLMSG_GOODSIZE;
	struct sk_buff *msg;
	int err;

	for (;;) {
		msg = genlmsg_new(size, GFP_KERNEL);
		if (!msg)
			return -ENOMEM;
		err = cnbus_genl_fill(msg, info);
		if (!err)
			return genlmsg_reply(msg, info);
		nlmsg_free(msg);
		if (err != -EMSGSIZE || size >= 1024 * 1024)
			return err;
		size *= 2;
	}
}

static const struct genl_small_ops cnbus_genl_ops[] = {
	{
	    .cmd = CNBUS_CMD_GET,
	    .doit = cnbus_genl_get,
	},
};

static struct genl_family cnbus_genl_family = {
	.name = CNBUS_GENL_NAME,
	.version = CNBUS_GENL_VERSION,
	.maxattr = 0,
	.module = THIS_MODULE,
	.small_ops = cnbus_genl_ops,
	.n_small_ops = ARRAY_SIZE(cnbus_genl_ops),
};

int cnbus_genl_init(void)
{
	return genl_register_family(&cnbus_genl_family);
}

void cnbus_genl_exit(void)
{
	genl_unregister_family(&cnbus_genl_family);
}
