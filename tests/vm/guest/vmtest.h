/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vmtest.h - what the guest test files share (vmtest.c) and the tests each
 * file holds, by what they test; cnbus_vmtest.c has the test table and
 * main().
 */
#ifndef CNBUS_VMTEST_H
#define CNBUS_VMTEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <libcn.h>

/* Fail the current test (rc = 1, goto out) unless cond holds. */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("#   FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);               \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			fflush(stdout);                                                            \
			rc = 1;                                                                    \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

extern const char *test_ko; /* path of cnbus_test.ko; cnbus.ko is next to it */
extern int unit;	    /* kmod's netlink unit */
extern int ncpus;	    /* online CPUs */
extern int ncpu_ids;	    /* the highest possible CPU number + 1 */
/* Sizes of the runs, from the environment (CNBUS_BURST, CNBUS_ECHO,
 * CNBUS_FAULT, CNBUS_FAULT_SEED): the debug kernel's run is lighter. */
extern unsigned int burst_n, echo_n, fault_n, fault_seed;

__attribute__((format(printf, 1, 2))) void info(const char *fmt, ...);
double now_s(void);
int mod_load(const char *params); /* cnbus_test.ko */
/* NAME.ko from cnbus_test.ko's directory (cnbus, cnbus_proc); 0 or -errno. */
int mod_load_beside(const char *name, const char *params);
int mod_unload(const char *name);
int module_loaded(const char *name);
int reload_test_module(const char *params);
int possible_cpu_ids(void);
struct cn_sock *open_sock(int flags, int rcvbuf);
int recv_id(struct cn_sock *s, uint32_t idx, uint32_t val, int timeout_ms, struct cn_message *out);
int raw_open(void);
int raw_send(int fd, const void *buf, size_t len);
int raw_wait_ack(int fd, uint32_t seq);
size_t raw_build(void *buf, uint32_t idx, uint32_t val, uint16_t len_field, size_t plen,
		 uint16_t nlflags, uint32_t seq);
/* n echo requests to cnbus_test (id val) on s, each answered with its own
 * genealogy and payload, in sequence; 0, or 1 with the reason printed. */
int echo_round_trips(struct cn_sock *s, uint32_t val, unsigned int n);

#define NOBODY_ID	   65534 /* nobody's uid and gid */
#define FORK_NOBODY_FAILED 10	 /* fork_as_nobody's child status: not nobody */
int become_nobody(void);
pid_t fork_as_nobody(void);

/* callbacks.c */
int t_kmod_info(void);
int t_echo(void);
int t_example_module(void);
int t_unknown_id_refused(void);
int t_send_ack(void);
int t_multi_message_datagram(void);
int t_echo_concurrent(void);

/* groups.c */
int t_group_two_subscribers(void);

/* notify.c */
int t_notify_add_remove(void);
int t_notify_unprivileged(void);
int t_notify_bound(void);

/* cbus.c */
int t_cbus_timer_order(void);
int t_cbus_burst_process(void);
int t_cbus_burst_hardirq(void);
int t_cbus_ring_overflow_order(void);
int t_cbus_budget_refused(void);
int t_cbus_mixed_sizes(void);
int t_cbus_overrun_reported(void);

/* malformed.c */
int t_malformed_blaster(void);
int t_fault_blaster(void);
int t_fault_blaster_nobody(void);

/* unload.c */
int t_unload_in_flight(void);
int t_unload_cnbus_in_flight(void);

/* hostile.c */
int t_hostile_counters_add_up(void);
int t_hostile_notify_flood(void);
int t_hostile_stalled_receiver(void);
int t_hostile_unit_refused(void);
int t_hostile_burst_unbounded(void);

/* hotplug.c */
int t_cbus_hotplug(void);
/* 1 online, 0 offline, -1 not hotpluggable (no online file). */
int cpu_online(unsigned int cpu);
/* Take cpu offline (0) or online (1). Returns 0 or -errno. */
int cpu_set_online(unsigned int cpu, int on);

/* params.c */
int t_param_write_refused(void);

/* kproc.c: cnbus_proc.ko. The programs its tests exec are cnbus_vmtest
 * with argv[1] KPROC_CHILD, which exits at once with KPROC_CHILD_EXIT. */
#define KPROC_CHILD	  "kproc-child"
#define KPROC_CHILD_ENV	  "KPROC_CHILD" /* set for them too: argv may be empty */
#define KPROC_CHILD_EXIT  7
#define KPROC_EXEC_FAILED 9 /* a child whose execve failed */
#define KPROC_SELF	  "/bin/cnbus_vmtest"
/* fork, then exec path with argv (envp: KPROC_CHILD_ENV only); the
 * child's pid, or -1. */
pid_t kproc_spawn(const char *path, char *const argv[]);
/* n children, one after another, each KPROC_SELF KPROC_CHILD tag, reaped;
 * 0, or -1 when a fork failed. */
int kproc_children(int n, const char *tag);
int t_kproc_storm(void);
int t_kproc_unprivileged_join(void);
int t_kproc_argv_edges(void);
int t_kproc_unload_storm(void);
int t_kproc_overrun_exact(void);
int t_kproc_cpu_offline(void);
/* kproc_ring.c */
int t_kproc_ring_refused(void);
/* kproc_idle.c */
int t_kproc_idle(void);
/* kproc_bind.c */
int t_kproc_join_then_drop(void);

/* proc_listeners.c */
int t_proc_ignore_unlistened(void);
int t_proc_listener_exit(void);
int t_proc_unprivileged(void);
int t_proc_events(void);

#endif
