/* SPDX-License-Identifier: LGPL-2.1-or-later WITH Linux-syscall-note */
/*
 * libcn/cnbus_test.h - protocol of kmod's test module cnbus_test.ko: its
 * ids and request structs, shared by the module (kmod/cnbus_test.c), the
 * VM tests (tests/vm/guest) and the CBUS benchmark (bench/cbus).
 * Installed with the other <libcn/...> headers, for programs that drive
 * cnbus_test.ko; the module itself is built only on request (kmod's
 * CNBUS_TEST, or CNBUS_DKMS_TEST=1 with DKMS, kmod/README.md) and is no part
 * of cnbus.ko.
 *
 * Only <linux/types.h> style types: the header compiles in the kernel and
 * in userspace. All fields are in host byte order.
 */
#ifndef LIBCN_CNBUS_TEST_H
#define LIBCN_CNBUS_TEST_H

#include <linux/types.h>

/* 64-bit fields: uint64_t in userspace so that PRIu64 prints them. */
#ifdef __KERNEL__
typedef __u64 cnbus_test_u64;
#else
#include <stdint.h>
typedef uint64_t cnbus_test_u64;
#endif

/* Every id of the test module has idx CNBUS_TEST_IDX (also its group). */
#define CNBUS_TEST_IDX	   0x123
#define CNBUS_TEST_ECHO_A  0x456 /* echo: same seq, ack + 1, same payload */
#define CNBUS_TEST_ECHO_B  0x457 /* the same */
#define CNBUS_TEST_BURST   0x458 /* struct cnbus_test_burst */
#define CNBUS_TEST_MCAST   0x459 /* sent on to the id's group; reply: two __s32 */
#define CNBUS_TEST_BENCH   0x45a /* struct cnbus_test_bench */
#define CNBUS_TEST_STREAM  0x45b /* struct cnbus_test_stream */
#define CNBUS_TEST_UNKNOWN 0x999 /* no callback: what 0x459 also sends to */

/* Burst flags. */
#define CNBUS_TEST_BURST_HARDIRQ 0x1U /* insert from hard IRQ (irq_work), 64 per interrupt */
#define CNBUS_TEST_BURST_ONEIRQ	 0x2U /* with HARDIRQ: all of a CPU's inserts in one interrupt */
#define CNBUS_TEST_BURST_FLAGS	 (CNBUS_TEST_BURST_HARDIRQ | CNBUS_TEST_BURST_ONEIRQ)

/* Bounds on what a request may ask for (larger: status -EINVAL). */
#define CNBUS_TEST_BURST_MAX  (1U << 20) /* inserts per CPU */
#define CNBUS_TEST_ONEIRQ_MAX 4096	 /* inserts per CPU with CNBUS_TEST_BURST_ONEIRQ */
#define CNBUS_TEST_PAD_MAX    2048	 /* burst payload bytes (len) */
#define CNBUS_TEST_BENCH_MAX  (1U << 20) /* bench messages per CPU */
#define CNBUS_TEST_BATCH_MAX  4096	 /* bench messages per batch */
#define CNBUS_TEST_BENCH_CPUS 16	 /* CPUs a bench reports */
#define CNBUS_TEST_STREAM_MAX 256	 /* stream inserts per CPU, kind and round */

/*
 * Burst request (payload of CNBUS_TEST_BURST), or just its first __u32.
 * Needs CAP_NET_ADMIN. Every online CPU inserts count CBUS messages;
 * messages with an odd seq carry len payload bytes when len is not 0. The
 * answer (seq, ack + 1) is the struct with the reply fields filled in; a
 * refused request is answered with status < 0 and nothing inserted.
 */
struct cnbus_test_burst {
	__u32 count;		 /* inserts per CPU, at most CNBUS_TEST_BURST_MAX */
	__u32 flags;		 /* CNBUS_TEST_BURST_* */
	__u32 cpus;		 /* reply: CPUs that took part */
	__u32 len;		 /* payload bytes of odd-seq messages, 0: text only */
	cnbus_test_u64 inserted; /* reply: inserts accepted */
	cnbus_test_u64 refused;	 /* reply: inserts refused */
	__s32 status;		 /* reply: 0, -EPERM (no CAP_NET_ADMIN), -EINVAL (bounds) */
	__u32 pad;
	cnbus_test_u64 enobufs; /* reply: refusals that were -ENOBUFS (CBUS queue full) */
};

/* Per-CPU result of a bench. */
struct cnbus_test_bench_cpu {
	__u32 cpu;
	__u32 pad;
	cnbus_test_u64 direct_ns; /* time in cnbus_send() batches */
	cnbus_test_u64 direct_n;
	cnbus_test_u64 direct_err; /* cnbus_send() errors (-ENOBUFS: a listener overran) */
	cnbus_test_u64 insert_ns;  /* time in cnbus_insert() batches */
	cnbus_test_u64 insert_n;
	cnbus_test_u64 insert_err;
	cnbus_test_u64 drain_ns; /* last insert of a batch to cnbus_flush() return */
	cnbus_test_u64 drain_n;
};

/*
 * Bench request (payload of CNBUS_TEST_BENCH), or just its first four
 * __u32. Needs CAP_NET_ADMIN. count is clamped to CNBUS_TEST_BENCH_MAX,
 * batch to 1..CNBUS_TEST_BATCH_MAX, len to CONNECTOR_MAX_MSG_SIZE. The
 * answer is the whole struct; refused: status < 0 and cpus 0.
 */
struct cnbus_test_bench {
	__u32 count;  /* messages per CPU, for each of send and insert */
	__u32 batch;  /* messages per timed batch */
	__u32 len;    /* payload bytes */
	__u32 cpus;   /* reply: CPUs measured */
	__s32 status; /* reply: 0 or -EPERM */
	__u32 pad;
	struct cnbus_test_bench_cpu cpu[CNBUS_TEST_BENCH_CPUS]; /* reply */
};

/* Stream operations and the kinds of its messages (ack = cpu * 2 + kind). */
#define CNBUS_TEST_STREAM_START 1
#define CNBUS_TEST_STREAM_STOP	2
#define CNBUS_TEST_STREAM_TASK	0 /* inserted by a work item, preemption off */
#define CNBUS_TEST_STREAM_IRQ	1 /* inserted in hard IRQ (irq_work) */

/*
 * Stream request (payload of CNBUS_TEST_STREAM). Needs CAP_NET_ADMIN.
 * START: until STOP, every tick a round runs: each online CPU inserts
 * per_round CBUS messages from a work item bound to it, which then raises
 * an irq_work that inserts per_round more from hard IRQ; nothing holds off
 * CPU hotplug between rounds, so CPUs may go offline and online while it
 * runs. Messages: id
 * 0x123.CNBUS_TEST_STREAM, ack = cpu * 2 + kind (the CPU that inserted
 * it), seq = the number of earlier accepted inserts of that CPU and kind
 * since START, text "cpu=C stream=N". A CPU going offline meanwhile
 * inserts CNBUS_TEST_STREAM_MAX more of the first kind in its hotplug
 * teardown. STOP waits for the last inserts and answers with the counts;
 * START answers at once (counts 0).
 */
struct cnbus_test_stream {
	__u32 op;		     /* CNBUS_TEST_STREAM_START or _STOP */
	__u32 per_round;	     /* START: 1..CNBUS_TEST_STREAM_MAX */
	cnbus_test_u64 rounds;	     /* reply (STOP): rounds run */
	cnbus_test_u64 inserted;     /* reply (STOP): inserts accepted, both kinds */
	cnbus_test_u64 inserted_irq; /* reply (STOP): of them in hard IRQ */
	cnbus_test_u64 refused;	     /* reply (STOP): inserts refused */
	cnbus_test_u64 enobufs;	     /* reply (STOP): refusals that were -ENOBUFS */
	__s32 status; /* reply: 0, -EPERM, -EINVAL (op, bounds), -EALREADY (running or not) */
	__u32 pad;
};

#endif /* LIBCN_CNBUS_TEST_H */
