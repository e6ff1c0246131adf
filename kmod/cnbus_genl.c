// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "cnbus": introspection, so userspace finds the bus
 * without hard-coding its unit and reads its counters.
 *
 * CNBUS_CMD_DUMP is a dump (NLM_F_DUMP, dumpit), as the kernel's own
 * families list their objects: one message with the bus's settings and
 * counters, then one message per registered callback, then one per
 * possible CPU (include/libcn/kmod_genl.h). Netlink calls the dump again
 * for as long as it returns more, each time with a fresh skb, so any
 * number of callbacks and CPUs fits, and no attribute nests more than one
 * object (nla_len is 16 bits: a nest cannot exceed 64 KiB).
 */
#include <linux/module.h>
#include <linux/cpumask.h>
#include <linux/rculist.h>
#include <net/genetlink.h>

#include "cnbus_internal.h"

/* Where a dump is: cb->args[] (zeroed by netlink when the dump starts). */
enum cnbus_genl_dump_step {
	CNBUS_DUMP_BUS,	      /* the bus's own message */
	CNBUS_DUMP_CALLBACKS, /* args[CNBUS_DUMP_POS]: callbacks already sent */
	CNBUS_DUMP_CPUS,      /* args[CNBUS_DUMP_POS]: the next CPU number */
	CNBUS_DUMP_DONE,
};

#define CNBUS_DUMP_STEP 0
#define CNBUS_DUMP_POS	1

static struct genl_family cnbus_genl_family;

static int cnbus_genl_put_refused(struct sk_buff *skb)
{
	const atomic64_t *refused = cnbus_dev.stats.refused;
	struct nlattr *nest;
	int i;

	nest = nla_nest_start(skb, CNBUS_A_REFUSED);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < CNBUS_REFUSED_NR; i++)
		if (nla_put_u64_64bit(skb, CNBUS_REFUSED_A_FIRST + i, atomic64_read(&refused[i]),
				      CNBUS_REFUSED_A_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int cnbus_genl_put_bus(struct sk_buff *skb)
{
	const struct cnbus_stats *st = &cnbus_dev.stats;

	if (nla_put_u32(skb, CNBUS_A_UNIT, cnbus_dev.unit) ||
	    nla_put_string(skb, CNBUS_A_VERSION, CNBUS_VERSION) ||
	    nla_put_u32(skb, CNBUS_A_GROUPS, cnbus_dev.groups) ||
	    nla_put_u32(skb, CNBUS_A_MAX_NOTIFY, cnbus_dev.max_notify) ||
	    nla_put_u32(skb, CNBUS_A_NOTIFY_COUNT, cnbus_notify_count()) ||
	    nla_put_u32(skb, CNBUS_A_CBUS_QLEN, cnbus_dev.cbus_qlen) ||
	    nla_put_u32(skb, CNBUS_A_CBUS_BUDGET, cnbus_dev.cbus_budget) ||
	    nla_put_u32(skb, CNBUS_A_POSSIBLE_CPUS, num_possible_cpus()) ||
	    nla_put_u64_64bit(skb, CNBUS_A_RECEIVED, atomic64_read(&st->received), CNBUS_A_PAD) ||
	    nla_put_u64_64bit(skb, CNBUS_A_DISPATCHED, atomic64_read(&st->dispatched),
			      CNBUS_A_PAD) ||
	    nla_put_u64_64bit(skb, CNBUS_A_REPLY_DROPPED, atomic64_read(&st->reply_dropped),
			      CNBUS_A_PAD))
		return -EMSGSIZE;
	return cnbus_genl_put_refused(skb);
}

static int cnbus_genl_put_callback(struct sk_buff *skb, const struct cnbus_callback *cb)
{
	struct nlattr *nest;

	nest = nla_nest_start(skb, CNBUS_A_CALLBACK);
	if (!nest || nla_put_u32(skb, CNBUS_CB_A_IDX, cb->id.idx) ||
	    nla_put_u32(skb, CNBUS_CB_A_VAL, cb->id.val) ||
	    nla_put_string(skb, CNBUS_CB_A_NAME, cb->name))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int cnbus_genl_put_cpu(struct sk_buff *skb, unsigned int cpu)
{
	struct cnbus_cbus_stats st;
	struct nlattr *nest;
	u32 queued;

	queued = cnbus_cbus_read(cpu, &st);
	nest = nla_nest_start(skb, CNBUS_A_CPU);
	if (!nest || nla_put_u32(skb, CNBUS_CPU_A_ID, cpu) ||
	    nla_put_u32(skb, CNBUS_CPU_A_QUEUED, queued) ||
	    nla_put_u64_64bit(skb, CNBUS_CPU_A_INSERTED, st.inserted, CNBUS_CPU_A_PAD) ||
	    nla_put_u64_64bit(skb, CNBUS_CPU_A_SENT, st.sent, CNBUS_CPU_A_PAD) ||
	    nla_put_u64_64bit(skb, CNBUS_CPU_A_DROPPED, st.dropped, CNBUS_CPU_A_PAD) ||
	    nla_put_u64_64bit(skb, CNBUS_CPU_A_REFUSED, st.refused, CNBUS_CPU_A_PAD) ||
	    nla_put_u64_64bit(skb, CNBUS_CPU_A_OVERFLOWED, st.overflowed, CNBUS_CPU_A_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * One message of the dump: the header, the object (@cb for a callback, @cpu
 * for a CPU, neither for the bus). Nothing is left in @skb on -EMSGSIZE.
 */
static int cnbus_genl_put_msg(struct sk_buff *skb, struct netlink_callback *ncb,
			      const struct cnbus_callback *cb, int cpu)
{
	void *hdr;
	int err;

	hdr = genlmsg_put(skb, NETLINK_CB(ncb->skb).portid, ncb->nlh->nlmsg_seq, &cnbus_genl_family,
			  NLM_F_MULTI, CNBUS_CMD_DUMP);
	if (!hdr)
		return -EMSGSIZE;
	/* NLM_F_DUMP_INTR when the callbacks changed since the dump began. */
	genl_dump_check_consistent(ncb, hdr);
	if (cb)
		err = cnbus_genl_put_callback(skb, cb);
	else if (cpu >= 0)
		err = cnbus_genl_put_cpu(skb, cpu);
	else
		err = cnbus_genl_put_bus(skb);
	if (err) {
		genlmsg_cancel(skb, hdr);
		return err;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * Callbacks from the one after the args[POS] already sent. Skipping by
 * count (the list has no stable cursor) may skip or repeat one when the
 * list changes between two rounds: those messages carry NLM_F_DUMP_INTR.
 */
static int cnbus_genl_dump_callbacks(struct sk_buff *skb, struct netlink_callback *ncb)
{
	long skip = ncb->args[CNBUS_DUMP_POS];
	struct cnbus_callback *cb;
	int err = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(cb, &cnbus_dev.callbacks, list) {
		if (skip-- > 0)
			continue;
		err = cnbus_genl_put_msg(skb, ncb, cb, -1);
		if (err)
			break;
		ncb->args[CNBUS_DUMP_POS]++;
	}
	rcu_read_unlock();
	return err;
}

static int cnbus_genl_dump_cpus(struct sk_buff *skb, struct netlink_callback *ncb)
{
	unsigned int cpu;
	int err;

	for (cpu = ncb->args[CNBUS_DUMP_POS]; cpu < nr_cpu_ids; cpu++) {
		if (!cpu_possible(cpu))
			continue;
		err = cnbus_genl_put_msg(skb, ncb, NULL, cpu);
		if (err) {
			ncb->args[CNBUS_DUMP_POS] = cpu;
			return err;
		}
	}
	return 0;
}

/* Returns skb->len while there is more to send, 0 when done. */
static int cnbus_genl_dump(struct sk_buff *skb, struct netlink_callback *ncb)
{
	long *step = &ncb->args[CNBUS_DUMP_STEP];
	int err = 0;

	ncb->seq = READ_ONCE(cnbus_dev.callbacks_gen);
	while (*step != CNBUS_DUMP_DONE) {
		switch (*step) {
		case CNBUS_DUMP_BUS:
			err = cnbus_genl_put_msg(skb, ncb, NULL, -1);
			break;
		case CNBUS_DUMP_CALLBACKS:
			err = cnbus_genl_dump_callbacks(skb, ncb);
			break;
		case CNBUS_DUMP_CPUS:
			err = cnbus_genl_dump_cpus(skb, ncb);
			break;
		}
		if (err)
			break;
		(*step)++;
		ncb->args[CNBUS_DUMP_POS] = 0;
	}
	/* A full skb is sent and the dump called again; one message always fits. */
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ? err : skb->len;
}

static const struct genl_small_ops cnbus_genl_ops[] = {
	{
	    .cmd = CNBUS_CMD_DUMP,
	    .dumpit = cnbus_genl_dump,
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
