// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters. Each one sets a field of cnbus_dev (cnbus_dev.c has
 * the defaults) through cnbus_param_ops, which refuses a value outside the
 * parameter's range with -EINVAL and a line in the kernel log naming the
 * range: at load (modprobe, insmod), where it fails the load, and for the
 * writable cbus_batch and cbus_defer_us at every write to their sysfs
 * files, where the old value stays. The ranges are those of
 * kmod/README.md's table. Values are decimal (leading zeros allowed, no
 * octal or hex).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netlink.h>

#include "cnbus_internal.h"

struct cnbus_param_range {
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

static int cnbus_param_set(const char *arg, const struct kernel_param *kp)
{
	const struct cnbus_param_range *r = kp->arg;
	unsigned int v;

	/* Decimal only: "010" is 10, as a reader of the table expects; "0x10" is refused. */
	if (kstrtouint(arg, 10, &v) || v < r->min || v > r->max) {
		pr_err("%s must be a number in [%u, %u]\n", kp->name, r->min, r->max);
		return -EINVAL;
	}
	/* cbus_batch and cbus_defer_us are read by CBUS while they may be written. */
	WRITE_ONCE(*r->val, v);
	return 0;
}

static int cnbus_param_get(char *buf, const struct kernel_param *kp)
{
	const struct cnbus_param_range *r = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(*r->val));
}

static const struct kernel_param_ops cnbus_param_ops = {
	.set = cnbus_param_set,
	.get = cnbus_param_get,
};

static struct cnbus_param_range cnbus_param_unit = { &cnbus_dev.unit, 0, MAX_LINKS - 1 };
module_param_cb(unit, &cnbus_param_ops, &cnbus_param_unit, 0444);
MODULE_PARM_DESC(unit, "netlink unit (protocol) of the bus, 0..31 and free (default 5)");

static struct cnbus_param_range cnbus_param_groups = { &cnbus_dev.groups, 32, 65536 };
module_param_cb(groups, &cnbus_param_ops, &cnbus_param_groups, 0444);
MODULE_PARM_DESC(groups, "multicast groups, i.e. the highest usable idx, 32..65536 (default 1024)");

static struct cnbus_param_range cnbus_param_max_notify = { &cnbus_dev.max_notify, 0, 65536 };
module_param_cb(max_notify, &cnbus_param_ops, &cnbus_param_max_notify, 0444);
MODULE_PARM_DESC(max_notify, "maximum number of notification requests, 0..65536 (default 64)");

static struct cnbus_param_range cnbus_param_cbus_qlen = { &cnbus_dev.cbus_qlen, 1, 65536 };
module_param_cb(cbus_qlen, &cnbus_param_ops, &cnbus_param_cbus_qlen, 0444);
MODULE_PARM_DESC(cbus_qlen,
		 "per-CPU CBUS ring in small messages (128 bytes each), 1..65536 (default 1024)");

static struct cnbus_param_range cnbus_param_cbus_budget = { &cnbus_dev.cbus_budget, 0, 64 << 20 };
module_param_cb(cbus_budget, &cnbus_param_ops, &cnbus_param_cbus_budget, 0444);
MODULE_PARM_DESC(cbus_budget,
		 "per-CPU CBUS overflow bytes beyond the ring, 0..67108864 (default 262144)");

static struct cnbus_param_range cnbus_param_cbus_batch = { &cnbus_dev.cbus_batch, 1, 1024 };
module_param_cb(cbus_batch, &cnbus_param_ops, &cnbus_param_cbus_batch, 0644);
MODULE_PARM_DESC(cbus_batch,
		 "messages per CBUS datagram, 1..1024 (default 64; 1: one datagram per message)");

static struct cnbus_param_range cnbus_param_cbus_defer_us = { &cnbus_dev.cbus_defer_us, 0, 100000 };
module_param_cb(cbus_defer_us, &cnbus_param_ops, &cnbus_param_cbus_defer_us, 0644);
MODULE_PARM_DESC(cbus_defer_us,
		 "kick's wait under load, us to jiffies, 0..100000 (default 1000; 0: none)");

#ifdef CNBUS_TESTING
/* Test builds only (Kbuild: CNBUS_TESTING=y); dkms.conf never sets it. */
static struct cnbus_param_range cnbus_param_cbus_worker_delay_us = {
	&cnbus_dev.cbus_worker_delay_us, 0, 1000000
};
module_param_cb(cbus_worker_delay_us, &cnbus_param_ops, &cnbus_param_cbus_worker_delay_us, 0444);
MODULE_PARM_DESC(cbus_worker_delay_us,
		 "test builds: the CBUS worker sleeps this long before each datagram, 0..1000000");
#endif
