// SPDX-License-Identifier: GPL-2.0
/*
 * The bus: its one struct cnbus_dev, the callback lookup, the framing of a
 * message (one struct nlmsghdr of type NLMSG_DONE, struct cn_msg, payload)
 * and multicast. The bottom layer: it calls no other file of cnbus.ko.
 */
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/netlink.h>

#include "cnbus_internal.h"

struct cnbus_dev cnbus_dev = {
	.unit = 5, /* NETLINK_NFLOG, unused since Linux 3.17 */
	.groups = 1024,
	.max_notify = 64,
	.cbus_qlen = 1024,
	.cbus_budget = 256 * 1024,
	.cbus_batch = 64,
	.cbus_defer_us = 1000,
	.callbacks = LIST_HEAD_INIT(cnbus_dev.callbacks),
	.callbacks_lock = __MUTEX_INITIALIZER(cnbus_dev.callbacks_lock),
	.callbacks_gen = 1, /* never 0: a dump's sequence number must not be */
};

static bool cnbus_id_eq(const struct cb_id *a, const struct cb_id *b)
{
	return a->idx == b->idx && a->val == b->val;
}

/* Caller holds rcu_read_lock() or cnbus_dev.callbacks_lock. */
struct cnbus_callback *cnbus_find(const struct cb_id *id)
{
	struct cnbus_callback *cb;

	list_for_each_entry_rcu(cb, &cnbus_dev.callbacks, list,
				lockdep_is_held(&cnbus_dev.callbacks_lock)) {
		if (cnbus_id_eq(&cb->id, id))
			return cb;
	}
	return NULL;
}

/* The callback of @id with a reference held, or NULL. */
struct cnbus_callback *cnbus_get(const struct cb_id *id)
{
	struct cnbus_callback *cb;

	rcu_read_lock();
	cb = cnbus_find(id);
	if (cb && !refcount_inc_not_zero(&cb->refcnt))
		cb = NULL;
	rcu_read_unlock();
	return cb;
}

void cnbus_put(struct cnbus_callback *cb)
{
	if (refcount_dec_and_test(&cb->refcnt))
		complete(&cb->released);
}

/*
 * The multicast group a message for @id goes to: @group, or when it is 0
 * the group of the callback registered for @id (its idx). The one place a
 * group is checked against the unit's groups: every multicast of a
 * caller's message resolves its group here first.
 *
 * Return: 0 with *dest set, -ENODEV (group 0 and no callback for @id),
 * -EINVAL (the group is 0 or beyond the unit's groups).
 */
int cnbus_dest_group(const struct cb_id *id, u32 group, u32 *dest)
{
	struct cnbus_callback *cb;

	if (!group) {
		rcu_read_lock();
		cb = cnbus_find(id);
		if (cb)
			group = cb->id.idx;
		rcu_read_unlock();
		if (!cb)
			return -ENODEV;
	}
	if (!group || group > cnbus_dev.groups)
		return -EINVAL;
	*dest = group;
	return 0;
}

/*
 * Append @msg to @skb as one netlink message: the framing every message of
 * the bus has, alone in a datagram or packed with others (CBUS).
 *
 * Return: 0, or -EMSGSIZE when @skb has no room.
 */
int cnbus_msg_put(struct sk_buff *skb, const struct cn_msg *msg)
{
	size_t size = sizeof(*msg) + msg->len;
	struct nlmsghdr *nlh;

	nlh = nlmsg_put(skb, 0, msg->seq, NLMSG_DONE, size, 0);
	if (!nlh)
		return -EMSGSIZE;
	memcpy(nlmsg_data(nlh), msg, size);
	return 0;
}

/* A new datagram holding @msg alone, for @group (0: unicast); NULL without memory. */
struct sk_buff *cnbus_msg_skb(const struct cn_msg *msg, u32 group, gfp_t gfp)
{
	struct sk_buff *skb;

	skb = nlmsg_new(sizeof(*msg) + msg->len, gfp);
	if (!skb)
		return NULL;
	if (WARN_ON_ONCE(cnbus_msg_put(skb, msg))) {
		kfree_skb(skb);
		return NULL;
	}
	NETLINK_CB(skb).dst_group = group;
	return skb;
}

/* Multicast @skb (consumed) to @group, which the caller has resolved. */
int cnbus_broadcast(struct sk_buff *skb, u32 group, gfp_t gfp)
{
	return netlink_broadcast(cnbus_dev.nls, skb, 0, group, gfp);
}
