/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * common.h - what cnctl's subcommands share: the command table entry, exit
 * codes, error printing, argument parsing, shared options, message helpers,
 * the receive loop and JSON output helpers.
 */
#ifndef CNCTL_COMMON_H
#define CNCTL_COMMON_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>

#include <libcn.h>
#include <libcn/kmod.h>

/* Exit codes (documented in `cnctl --help`). */
#define CNCTL_EXIT_OK	   0 /* success, or stopped by SIGINT/SIGTERM or --count */
#define CNCTL_EXIT_ERROR   1 /* runtime error */
#define CNCTL_EXIT_USAGE   2 /* bad command line */
#define CNCTL_EXIT_PERM	   3 /* permission denied by the kernel */
#define CNCTL_EXIT_NOCONN  4 /* the kernel has no (such) connector, or kmod is not loaded */
#define CNCTL_EXIT_TIMEOUT 5 /* no reply (request) or not enough messages (--count) in time */

/* One subcommand: `cnctl NAME ARGS...` runs fn(argc, argv) with argv[0] == NAME. */
struct cnctl_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help; /* one line for `cnctl --help` */
};

/* Subcommands (one file each). */
int cnctl_proc(int argc, char **argv);
int cnctl_send(int argc, char **argv);
int cnctl_listen(int argc, char **argv);
int cnctl_request(int argc, char **argv);
int cnctl_notify(int argc, char **argv);
int cnctl_kmod(int argc, char **argv);

/* Print "cnctl: MESSAGE\n" to stderr. */
void cnctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "cnctl CMD: MESSAGE (try 'cnctl CMD --help')\n" and return CNCTL_EXIT_USAGE. */
int cnctl_usage_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Report a failure of connector setup (`what` says which step, e.g. "open",
 * err is a positive errno) in one line that says whether it was permission
 * or a missing connector; returns the matching exit code. */
int cnctl_connector_err(const char *what, int err);

/* The same for a socket on netlink unit `unit` (cn_unit): a missing unit or
 * one with no kernel receiver is named by its number, not as the kernel's
 * connector unless it is NETLINK_CONNECTOR. */
int cnctl_unit_err(const char *what, int unit, int err);

/* Parse a decimal unsigned integer in [min, max] (no sign, no spaces).
 * Returns 0, or -1 if s is not one. */
int cnctl_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* As cnctl_parse_uint, with an optional binary suffix K, M or G (KiB, ...). */
int cnctl_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Durations (--timeout of every subcommand): a decimal number, optionally
 * with a fraction, and a unit ms, s, m, h or d; a bare number is seconds
 * (as forkstat's -D, sleep(1) and timeout(1)). From 1 ms to 24 days (poll's
 * int milliseconds reach 24.8 days). No sign, exponent or spaces. */
#define CNCTL_DURATION_MIN_MS 1
#define CNCTL_DURATION_MAX_MS (24 * 86400000ll)

/* Parse a duration into milliseconds (rounded to the nearest one). Returns 0,
 * or -1 if s is not one or is outside the bounds. */
int cnctl_parse_duration(const char *s, int64_t *ms);

/* Before anything opens a file: put /dev/null on each of the standard
 * descriptors 0, 1, 2 that is closed, so that no socket takes its number
 * (`cnctl proc >&-` wrote its lines into its own netlink socket). Opened
 * against its use (stdout read-only), so that output to a closed stream
 * still fails with EBADF. */
void cnctl_reserve_stdio(void);

/* Flush stdout at the end of a command that prints once (--help and
 * --version too): a write that failed then or before (a closed stdout,
 * EBADF; a full disk) is told. Returns CNCTL_EXIT_OK, or CNCTL_EXIT_ERROR
 * after a one-line error. */
int cnctl_finish_output(void);

/* Write `n` bytes of `s` (stopping early at a NUL) as a JSON string with its
 * quotes: '"', '\\' and control characters are escaped, valid UTF-8 passes
 * through and every byte of invalid UTF-8 becomes U+FFFD, so the output is
 * always valid JSON (and safe on a terminal). */
void json_string(FILE *f, const char *s, size_t n);
/* The same without the quotes: a part of a longer string. */
void json_string_body(FILE *f, const char *s, size_t n);

/* ---- option_table.c: the one table of every subcommand's options ---- */

/* The subcommands, for option_table.c's table (which takes which option). */
enum cnctl_cmd_id {
	CNCTL_CMD_PROC,
	CNCTL_CMD_SEND,
	CNCTL_CMD_LISTEN,
	CNCTL_CMD_REQUEST,
	CNCTL_CMD_NOTIFY,
	CNCTL_CMD_KMOD,
};

#define CNCTL_MAX_OPTIONS 48

/* getopt_long's value for options without a short letter (above any char). */
#define CNCTL_OPT_VERSION 0x100
#define CNCTL_OPT_JOURNAL 0x101 /* proc --journal */
#define CNCTL_OPT_METRICS 0x102 /* proc --metrics FILE */
#define CNCTL_OPT_ECS	  0x103 /* cnctl proc --ecs */

/* One subcommand's getopt_long tables, derived from option_table.c's table. */
struct cnctl_getopt {
	char shortopts[2 * CNCTL_MAX_OPTIONS + 2];
	struct option longopts[CNCTL_MAX_OPTIONS + 1];
};

/* Fill g with the options cmd takes and reset getopt (optind = 1, its own
 * messages off: cnctl_common_opt prints them). */
void cnctl_getopt_init(struct cnctl_getopt *g, enum cnctl_cmd_id cmd);

/* getopt_long over g's tables: an option's letter, ':' (missing value),
 * '?' (unknown option) or -1 at the end of the options. */
int cnctl_getopt(struct cnctl_getopt *g, int argc, char **argv);

/* ---- common_opts.c: the options several subcommands share ---- */

/* --unit/-u, --kmod/-k, --json/-j, --quiet/-q, --count/-n, --timeout/-t,
 * --rcvbuf/-r, --help/-h and --version mean the same (and fail with the same message)
 * in every subcommand that takes them. A subcommand fills cmd, usage and the
 * defaults, reads its options with cnctl_getopt, handles its own letters and passes every other result to cnctl_common_opt. */
struct cnctl_opts {
	const char *cmd;	/* the subcommand's name, for messages */
	void (*usage)(FILE *f); /* prints the subcommand's --help */
	int unit;		/* --unit; -1: not given */
	int kmod;		/* --kmod */
	int json;		/* --json */
	int quiet;		/* --quiet */
	uint64_t count;		/* --count; 0: no limit */
	int timeout;		/* --timeout in ms (< 0: none); the subcommand sets the default */
	int rcvbuf;		/* --rcvbuf in bytes; 0: libcn's default */
};

/* What cnctl_common_opt returns after printing --help or --version: the subcommand
 * returns it from its option parsing and exits with cnctl_finish_output()'s
 * status (a closed stdout fails it, as any command that prints once). */
#define CNCTL_HELP_SHOWN (-1)

/* Handle getopt_long's result c: a shared option (optarg is its value), or
 * getopt_long's error (':' or '?'). Returns 0, CNCTL_HELP_SHOWN, or
 * CNCTL_EXIT_USAGE after a one-line error. */
int cnctl_common_opt(int c, char **argv, struct cnctl_opts *o);

/* Parse --timeout's value for cmd into *ms (cnctl_parse_duration). Returns
 * 0, or CNCTL_EXIT_USAGE after the one usage error every subcommand gives. */
int cnctl_parse_timeout(const char *cmd, const char *arg, int64_t *ms);

/* Print "cnctl (libcn) VERSION" (`cnctl --version`, `cnctl CMD --version`). */
void cnctl_print_version(FILE *f);

/* Refuse --unit together with --kmod: 0, or a usage error's exit code. */
int cnctl_check_unit_kmod(const struct cnctl_opts *o);

/* ---- msg_args.c: the arguments send, listen, request and notify share ---- */

/* Parse a 32-bit unsigned integer, decimal or hex with 0x. 0 or -1. */
int cnctl_parse_u32(const char *s, uint32_t *out);

/* Parse a connector id "IDX.VAL" (each decimal or 0x hex). 0 or -1. */
int cnctl_parse_id(const char *s, uint32_t *idx, uint32_t *val);

/* Parse FIRST[:RANGE] (RANGE defaults to 1, must be >= 1 and not wrap
 * past 2^32). 0 or -1. */
int cnctl_parse_range(const char *s, uint32_t *first, uint32_t *range);

/* The message send and request build: `ID [DATA]` and the options
 * --hex/-x HEX, --file/-f PATH (the payload: DATA, HEX or PATH, at most
 * one), --seq/-s N and --ack/-a N. */
struct cnctl_msg_args {
	uint32_t idx, val;
	const char *text, *hex, *file;
	uint32_t seq, ack;
	unsigned int flags; /* CN_SEND_KEEP_SEQ / CN_SEND_KEEP_ACK for --seq / --ack */
};

/* Handle getopt_long's result c as a message option, else as
 * cnctl_common_opt does. Same returns. */
int cnctl_msg_opt(int c, char **argv, struct cnctl_msg_args *m, struct cnctl_opts *o);

/* After the options: ID and the optional DATA from argv[optind...], then
 * the --unit/--kmod check. 0, or a usage error's exit code. */
int cnctl_msg_positional(int argc, char **argv, struct cnctl_msg_args *m,
			 const struct cnctl_opts *o);

/* Build the message in buf (room for CONNECTOR_MAX_MSG_SIZE payload bytes,
 * aligned for struct cn_msg): id, payload, seq and ack. Returns 0 with *out
 * pointing into buf, or an exit code after printing a one-line error. */
int cnctl_msg_build(const char *cmd, const struct cnctl_msg_args *m, void *buf, size_t size,
		    struct cn_msg **out);

/* ---- msg_sock.c: their socket ---- */

/* Open a socket for o->cmd on o->unit (>= 0), or when it is < 0 on the
 * kernel's connector (NETLINK_CONNECTOR) or, with o->kmod, on the unit kmod
 * reports (cn_bus_query); with o->rcvbuf the receive buffer is set as
 * cnctl_set_rcvbuf does. batch: cn_open_opts.batch (0: libcn's default).
 * Returns 0 with *out set, or an exit code after printing a one-line error. */
int cnctl_open(const struct cnctl_opts *o, uint32_t batch, struct cn_sock **out);

/* Ask for a receive buffer of `bytes` (0: leave it), warning on stderr when
 * net.core.rmem_max caps it. */
void cnctl_set_rcvbuf(struct cn_sock *s, int bytes);

/* Report a failure of cn_bus_query (r < 0) and return the exit code. */
int cnctl_kmod_err(int r);

/* ---- msg_print.c: printing what they receive ---- */

/* Print a received message: a line "ID seq=.. ack=.. len=.. flags=..
 * port=.. group=.. data" (data as a quoted string when it is text, else as
 * hex; always hex with force_hex), or a JSON object with idx, val, seq, ack,
 * len, flags, port, group, hex (the payload bytes) and text (when the
 * payload is text). `extra` (may be NULL) is appended inside the JSON
 * object (starting with a comma) or to the line. Ends the line. */
void cnctl_print_message(FILE *f, const struct cn_message *m, int json, int force_hex,
			 const char *extra);

/* ---- receive_loop.c: receiving until stopped (proc, listen, request, notify) ---- */

/* SIGINT/SIGTERM set cnctl_stop (no SA_RESTART); SIGPIPE is ignored, so a
 * closed pipe shows as EPIPE. Returns 0, or CNCTL_EXIT_ERROR after a
 * one-line error. */
extern volatile sig_atomic_t cnctl_stop;
int cnctl_install_signals(void);

/* Wait until fd is readable, a stop signal arrives or timeout_ms passes
 * (< 0: no limit). Returns 1 readable, 0 stop signal or timeout, -errno. */
int cnctl_wait_readable(int fd, int timeout_ms);

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t cnctl_now_ms(void);

/* Messages per cn_recv_batch call in cnctl_recv_loop (and the batch its
 * sockets are opened with). */
#define CNCTL_RECV_BATCH 32

/* A cn_recv_batch error other than -EAGAIN in a loop that reads until it is
 * stopped. An overrun (-ENOBUFS) is counted in *overruns and reported as
 * "cnctl: receive buffer overrun, LOST lost"; a signal (-EINTR) and a
 * malformed datagram (reported) are passed over: these return 0. Anything
 * else returns CNCTL_EXIT_ERROR after a one-line error. */
int cnctl_recv_error(int err, const char *lost, uint64_t *overruns);

/* The receive loop of listen and notify. */
struct cnctl_recv_loop {
	struct cn_sock *s;
	const struct cnctl_opts *o; /* count and timeout (< 0: none) */
	const char *lost;	    /* what an overrun loses, e.g. "messages" */
	/* Print m unless the command filters it out: 1 printed, 0 not. */
	int (*print)(const struct cn_message *m, void *ctx);
	void *ctx;
	uint64_t printed, overruns; /* counted by cnctl_recv_loop */
};

/* Receive and print until a stop signal, o->count messages printed,
 * o->timeout ms passed or stdout closed (EPIPE), flushing stdout whenever
 * the socket runs dry. Returns CNCTL_EXIT_OK; CNCTL_EXIT_TIMEOUT (nothing
 * printed) when the timeout ran out before o->count messages; or
 * CNCTL_EXIT_ERROR after a one-line error. */
int cnctl_recv_loop(struct cnctl_recv_loop *rl);

#endif /* CNCTL_COMMON_H */
