/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host_util.h - helpers for tests against the running kernel's connector. */
#ifndef HOST_UTIL_H
#define HOST_UTIL_H

#include <stdint.h>
#include <sys/types.h>

#include "libcn.h"

/* The exit code CTest reports as "skipped". */
#define SKIP_EXIT 77

/* Exit 77 with a reason unless we are root and the kernel has a proc
 * connector that answers a LISTEN. In CI (CI=true) a skip is a failure. */
void host_require_proc_connector(void);

/* Open a NETLINK_CONNECTOR socket with rcvbuf bytes (0: default), failing
 * the test on error. */
struct cn_sock *host_open(int rcvbuf);

/* Keep p reachable while a forked child runs, so that valgrind's leak check
 * in the child (CI's memcheck stage) does not count it as lost and turn the
 * child's exit status into 1. host_open() keeps its sockets itself. */
void host_keep(const void *p);

/* Wait up to timeout_ms for an event matching (what, tgid) on s; events of
 * other processes are skipped. Returns 0 with *ev, or -ETIMEDOUT / -errno. */
int host_wait_event(struct cn_sock *s, uint32_t what, pid_t tgid, int timeout_ms,
		    struct cn_proc_event *ev);

/* Build a proc connector control message (PROC_CN_MCAST_LISTEN or _IGNORE)
 * in buf: cn_msg_init's result. */
struct cn_msg *host_mcast_op(void *buf, size_t size, uint32_t op);

/*
 * What the running kernel does when a process without capabilities (uid and
 * gid 65534, no supplementary groups) joins group CN_IDX_PROC: 1 it may, 0
 * refused with EPERM. Found by a raw socket in a child, not through libcn:
 * NETLINK_ADD_MEMBERSHIP of group 1, and bind() with that group's bit, which
 * must agree. Anything else (another error, disagreement) aborts the test.
 * The first call prints the answer as a "# " line.
 */
int host_nobody_may_join_proc(void);

/* In a child process: become uid and gid 65534 without supplementary
 * groups, keeping only the capabilities in caps (a mask of 1 << CAP_*; 0:
 * none) as permitted and effective, none inheritable or ambient. Returns 0
 * or -errno (the sets read back differ from what was asked: -EPERM). */
int host_become_nobody(uint64_t caps);

/* Fork a child that runs fn(arg) and _exits with its return value. */
pid_t host_spawn(int (*fn)(void *), void *arg);

/* waitpid and return the raw status. */
int host_reap(pid_t pid);

#endif
