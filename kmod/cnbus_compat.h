/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel APIs that differ between the kernels kmod builds on
 * (Debian's 6.1 and 6.12, their -rt flavours, 6.18, 7.0; see README.md).
 * One source for all of them: each entry names the version that changed the
 * API, so it can go when that version is the oldest supported. Kbuild
 * probes the kernel's headers for each (CNBUS_HAVE_*): a version number
 * cannot tell which stable kernels have a backport.
 */
#ifndef CNBUS_COMPAT_H
#define CNBUS_COMPAT_H

#include <linux/timer.h>
#include <linux/workqueue.h>

/* timer_delete_sync(): 6.2, backported to 6.1.84; del_timer_sync() is gone in 6.15. */
#ifndef CNBUS_HAVE_TIMER_DELETE_SYNC
#define timer_delete_sync(t) del_timer_sync(t)
#endif

/*
 * WQ_PERCPU: 6.17 (and stable backports such as Debian's 6.12.111); the
 * workqueue core is moving to unbound by default, so a queue whose work
 * items must run on the CPU they were queued on says so.
 */
#ifdef CNBUS_HAVE_WQ_PERCPU
#define CNBUS_WQ_PERCPU WQ_PERCPU
#else
#define CNBUS_WQ_PERCPU 0
#endif

#endif /* CNBUS_COMPAT_H */
