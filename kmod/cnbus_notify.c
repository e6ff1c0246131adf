// SPDX-License-Identifier: GPL-2.0
/*
 * Notification requests at id {-1,-1}.
 *
 * A control message (struct cn_ctl_msg + ranges, see libcn/proto.h) with a
 * group adds a request; with group 0 it removes the requests whose ranges
 * equal its ranges. When a callback whose idx and val both fall in the
 * ranges of a request is added or removed, a message with that id and
 * ack CN_NOTIFY_ADDED / CN_NOTIFY_REMOVED goes to the request's group.
 *
 * Unlike the 2005 code (CVE-2010-0410) the list is bounded by max_notify
 * and changing it requires CAP_NET_ADMIN.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/capability.h>
#include <net/netlink.h>

#include <libcn/proto.h>

#include "cnbus_internal.h"

struct cnbus_notify_entry {
	struct list_head list;
	u32 group;
	u32 idx_num;
	u32 val_num;
	struct cn_notify_req ranges[]; /* idx_num idx ranges, then val ranges */
};

static LIST_HEAD(cnbus_notify_list);
static DEFINE_MUTEX(cnbus_notify_lock);
static unsigned int cnbus_notify_nr;

static bool cnbus_in_ranges(u32 v, const struct cn_notify_req *r, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (v >= r[i].first && v - r[i].first < r[i].range)
			return true;
	return false;
}

static bool cnbus_entry_matches(const struct cnbus_notify_entry *e, const struct cb_id *id)
{
	return cnbus_in_ranges(id->idx, e->ranges, e->idx_num) &&
	       cnbus_in_ranges(id->val, e->ranges + e->idx_num, e->val_num);
}

static bool cnbus_entry_same(const struct cnbus_notify_entry *e, const struct cn_ctl_msg *ctl)
{
	return e->idx_num == ctl->idx_notify_num && e->val_num == ctl->val_notify_num &&
	       !memcmp(e->ranges, ctl->data, ctl->len);
}

/*
 * Called with the callback list locked, in process context. Every request's
 * group was checked when it was added.
 */
void cnbus_notify_event(const struct cb_id *id, u32 ack)
{
	struct cn_msg msg = { .id = *id, .ack = ack };
	struct cnbus_notify_entry *e;
	struct sk_buff *skb;

	mutex_lock(&cnbus_notify_lock);
	list_for_each_entry(e, &cnbus_notify_list, list) {
		if (!cnbus_entry_matches(e, id))
			continue;
		if (!netlink_has_listeners(cnbus_dev.nls, e->group))
			continue;
		skb = cnbus_msg_skb(&msg, e->group, GFP_KERNEL);
		if (!skb)
			break;
		cnbus_broadcast(skb, e->group, GFP_KERNEL);
	}
	mutex_unlock(&cnbus_notify_lock);
}

/*
 * Handle a control message; process context (netlink input path). The
 * message is counted once: dispatched when it took effect, else refused.
 */
int cnbus_notify_ctl(struct sk_buff *skb, const struct cn_msg *msg)
{
	const struct cn_ctl_msg *ctl = (const struct cn_ctl_msg *)msg->data;
	struct cnbus_notify_entry *e, *tmp;
	size_t nranges;
	bool found = false;
	int err;

	if (!cn_ctl_msg_valid(msg->data, msg->len) || ctl->group > cnbus_dev.groups) {
		cnbus_refuse(CNBUS_REFUSED_A_NOTIFY_INVAL);
		return -EINVAL;
	}
	nranges = ctl->idx_notify_num + ctl->val_notify_num;

	if (!netlink_capable(skb, CAP_NET_ADMIN)) {
		cnbus_refuse(CNBUS_REFUSED_A_NOTIFY_PERM);
		return -EPERM;
	}

	mutex_lock(&cnbus_notify_lock);
	if (!ctl->group) {
		list_for_each_entry_safe(e, tmp, &cnbus_notify_list, list) {
			if (!cnbus_entry_same(e, ctl))
				continue;
			list_del(&e->list);
			kfree(e);
			cnbus_notify_nr--;
			found = true;
		}
		if (!found) {
			cnbus_refuse(CNBUS_REFUSED_A_NOTIFY_NOENT);
			err = -ENOENT;
			goto out_unlock;
		}
		goto out_done;
	}

	list_for_each_entry(e, &cnbus_notify_list, list) {
		if (e->group == ctl->group && cnbus_entry_same(e, ctl)) {
			cnbus_refuse(CNBUS_REFUSED_A_NOTIFY_EXISTS);
			err = -EEXIST;
			goto out_unlock;
		}
	}
	if (cnbus_notify_nr >= cnbus_dev.max_notify) {
		cnbus_refuse(CNBUS_REFUSED_A_NOTIFY_FULL);
		err = -ENOSPC;
		goto out_unlock;
	}
	e = kmalloc(struct_size(e, ranges, nranges), GFP_KERNEL);
	if (!e) {
		cnbus_refuse(CNBUS_REFUSED_A_NOMEM);
		err = -ENOMEM;
		goto out_unlock;
	}
	e->group = ctl->group;
	e->idx_num = ctl->idx_notify_num;
	e->val_num = ctl->val_notify_num;
	memcpy(e->ranges, ctl->data, ctl->len);
	list_add_tail(&e->list, &cnbus_notify_list);
	cnbus_notify_nr++;
out_done:
	atomic64_inc(&cnbus_dev.stats.dispatched);
	err = 0;
out_unlock:
	mutex_unlock(&cnbus_notify_lock);
	return err;
}

unsigned int cnbus_notify_count(void)
{
	return READ_ONCE(cnbus_notify_nr);
}

void cnbus_notify_exit(void)
{
	struct cnbus_notify_entry *e, *tmp;

	mutex_lock(&cnbus_notify_lock);
	list_for_each_entry_safe(e, tmp, &cnbus_notify_list, list) {
		list_del(&e->list);
		kfree(e);
	}
	cnbus_notify_nr = 0;
	mutex_unlock(&cnbus_notify_lock);
}
