/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cnbus_internal.h - shared state between the files of cnbus.ko.
 */
#ifndef CNBUS_INTERNAL_H
#define CNBUS_INTERNAL_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/completion.h>
#include <linux/skbuff.h>

#include <libcn/kmod_genl.h>

#include "cnbus.h"
#include "cnbus_compat.h"

#define CNBUS_VERSION "0.1.0"

struct cnbus_callback {
	struct list_head list; /* in cnbus_callbacks, RCU */
	struct cb_id id;
	char name[CNBUS_NAME_MAX];
	cnbus_callback_t callback;
	refcount_t refcnt;	    /* list reference + one per call */
	struct completion released; /* refcnt reached zero */
};

/*
 * Every received message is counted once as dispatched or once under one
 * refusal reason (the generic netlink attribute ids, libcn/kmod_genl.h).
 */
struct cnbus_stats {
	atomic64_t received;
	atomic64_t dispatched;
	atomic64_t refused[CNBUS_REFUSED_NR]; /* [CNBUS_REFUSED_A_* - FIRST] */
	atomic64_t reply_dropped;	      /* cnbus_reply(): receiver full */
};

struct cnbus_cpu_stats {
	u64 inserted;
	u64 sent;
	u64 sent_direct;
	u64 dropped;
	u32 queued;
};

extern struct sock *cnbus_nls;
extern struct cnbus_stats cnbus_stats;
extern struct list_head cnbus_callbacks;
extern int cnbus_unit;
extern unsigned int cnbus_groups;
extern unsigned int cnbus_max_notify;
extern unsigned int cnbus_cbus_qlen;

static inline void cnbus_refuse(enum cnbus_genl_refused_attr why)
{
	atomic64_inc(&cnbus_stats.refused[why - CNBUS_REFUSED_A_FIRST]);
}

/* core */
int cnbus_group_of(const struct cb_id *id, u32 *group);
struct sk_buff *cnbus_msg_skb(const struct cn_msg *msg, u32 group, gfp_t gfp);
int cnbus_broadcast(struct sk_buff *skb, u32 group, gfp_t gfp);

/* notify */
int cnbus_notify_ctl(struct sk_buff *skb, const struct cn_msg *msg);
void cnbus_notify_event(const struct cb_id *id, u32 ack);
unsigned int cnbus_notify_count(void);
void cnbus_notify_exit(void);

/* cbus */
int cnbus_cbus_init(void);
void cnbus_cbus_exit(void);
void cnbus_cbus_read(unsigned int cpu, struct cnbus_cpu_stats *st);

/* genl */
int cnbus_genl_init(void);
void cnbus_genl_exit(void);

#endif /* CNBUS_INTERNAL_H */
