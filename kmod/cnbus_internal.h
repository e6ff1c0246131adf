/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of cnbus.ko share: one struct cnbus_dev (the bus, as
 * connector.c has struct cn_dev) and each layer's calls. The files form
 * layers, each calling only those listed before it:
 *
 *   cnbus_params.c  module parameters: the tunables of cnbus_dev, range-checked
 *   cnbus_dev.c     the bus: callback lookup, message framing, broadcast
 *   cnbus_notify.c  notification requests at {-1,-1}
 *   cnbus_core.c    callback registration, send/reply, netlink input, /proc
 *   cnbus_cbus.c    CBUS: per-CPU queues drained by workers
 *   cnbus_genl.c    generic netlink family "cnbus": the introspection dump
 *   cnbus_main.c    module init and exit
 */
#ifndef CNBUS_INTERNAL_H
#define CNBUS_INTERNAL_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/completion.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>

#include <libcn/kmod_genl.h>

#include "cnbus.h"
#include "cnbus_compat.h"

#define CNBUS_VERSION "0.1.0"

struct cnbus_callback {
	struct list_head list; /* in cnbus_dev.callbacks, RCU */
	struct cb_id id;
	char name[CNBUS_NAME_MAX];
	cnbus_callback_t callback;
	refcount_t refcnt;	    /* list reference + one per call */
	struct completion released; /* refcnt reached zero */
	struct rcu_head rcu;	    /* freed after lookups that may still see it */
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

/*
 * The bus. There is one, cnbus_dev. Every tunable is a field here, set by
 * its module parameter (cnbus_params.c, which checks its range); all but
 * cbus_batch and cbus_defer_us are read-only after load.
 */
struct cnbus_dev {
	struct sock *nls;	    /* the netlink unit's kernel socket */
	unsigned int unit;	    /* netlink unit (protocol number) */
	unsigned int groups;	    /* multicast groups 1..groups */
	unsigned int max_notify;    /* bound on notification requests */
	unsigned int cbus_qlen;	    /* per-CPU CBUS ring, in small messages */
	unsigned int cbus_budget;   /* per-CPU CBUS overflow bytes */
	unsigned int cbus_batch;    /* messages per CBUS datagram; writable */
	unsigned int cbus_defer_us; /* CBUS kick's wait under load; writable */
#ifdef CNBUS_TESTING
	unsigned int cbus_worker_delay_us; /* test builds: worker sleeps per datagram */
#endif
	struct list_head callbacks;  /* struct cnbus_callback, RCU */
	struct mutex callbacks_lock; /* writers of callbacks */
	unsigned int callbacks_gen;  /* bumped at each change: dumps see it */
	struct cnbus_stats stats;
};

extern struct cnbus_dev cnbus_dev;

/* CBUS counters of one CPU (cnbus_cbus.c says what each counts). */
struct cnbus_cbus_stats {
	u64 inserted;
	u64 sent;
	u64 dropped;
	u64 refused;
	u64 overflowed;
};

static inline void cnbus_refuse(enum cnbus_genl_refused_attr why)
{
	atomic64_inc(&cnbus_dev.stats.refused[why - CNBUS_REFUSED_A_FIRST]);
}

/* dev */
struct cnbus_callback *cnbus_find(const struct cb_id *id);
struct cnbus_callback *cnbus_get(const struct cb_id *id);
void cnbus_put(struct cnbus_callback *cb);
int cnbus_dest_group(const struct cb_id *id, u32 group, u32 *dest);
int cnbus_msg_put(struct sk_buff *skb, const struct cn_msg *msg);
struct sk_buff *cnbus_msg_skb(const struct cn_msg *msg, u32 group, gfp_t gfp);
int cnbus_broadcast(struct sk_buff *skb, u32 group, gfp_t gfp);

/* notify */
int cnbus_notify_ctl(struct sk_buff *skb, const struct cn_msg *msg);
void cnbus_notify_event(const struct cb_id *id, u32 ack);
unsigned int cnbus_notify_count(void);
void cnbus_notify_exit(void);

/* core */
void cnbus_core_rx(struct sk_buff *skb);
int cnbus_core_init(void);
void cnbus_core_exit(void);

/* cbus */
int cnbus_cbus_init(void);
void cnbus_cbus_exit(void);
u32 cnbus_cbus_read(unsigned int cpu, struct cnbus_cbus_stats *st);

/* genl */
int cnbus_genl_init(void);
void cnbus_genl_exit(void);

#endif /* CNBUS_INTERNAL_H */
