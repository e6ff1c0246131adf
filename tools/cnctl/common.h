/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * common.h - what cnctl's subcommands share: the command table entry, exit
 * codes, error printing, argument parsing and JSON output helpers.
 */
#ifndef CNCTL_COMMON_H
#define CNCTL_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>

#include <libcn.h>

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

/* Parse a decimal unsigned integer in [min, max] (no sign, no spaces).
 * Returns 0, or -1 if s is not one. */
int cnctl_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* As cnctl_parse_uint, with an optional binary suffix K, M or G (KiB, ...). */
int cnctl_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Write `n` bytes of `s` (stopping early at a NUL) as a JSON string with its
 * quotes: '"', '\\' and control characters are escaped, valid UTF-8 passes
 * through and every byte of invalid UTF-8 becomes U+FFFD, so the output is
 * always valid JSON (and safe on a terminal). */
void json_string(FILE *f, const char *s, size_t n);

/* ---- msg.c: what send, listen, request and notify share ---- */

/* Parse a 32-bit unsigned integer, decimal or hex with 0x. 0 or -1. */
int cnctl_parse_u32(const char *s, uint32_t *out);

/* Parse a connector id "IDX.VAL" (each decimal or 0x hex). 0 or -1. */
int cnctl_parse_id(const char *s, uint32_t *idx, uint32_t *val);

/* Parse FIRST[:RANGE] (RANGE defaults to 1, must be >= 1 and not wrap
 * past 2^32). 0 or -1. */
int cnctl_parse_range(const char *s, uint32_t *first, uint32_t *range);

/* Payload of send/request: at most one of text (positional DATA), hex
 * (--hex) and file (--file). Fills buf (CONNECTOR_MAX_MSG_SIZE bytes) and
 * *len. Returns 0, or an exit code after printing a one-line error. */
int cnctl_load_data(const char *cmd, const char *text, const char *hex, const char *file, void *buf,
		    size_t size, size_t *len);

/* Open a socket for subcommand `cmd` on `unit` (>= 0), or when unit < 0 on
 * the kernel's connector (NETLINK_CONNECTOR) or, with kmod set, on the unit
 * kmod reports (cn_kmod_query). Returns 0 with *out set, or an exit code
 * after printing a one-line error. */
int cnctl_open(const char *cmd, int unit, int kmod, const struct cn_open_opts *opts,
	       struct cn_sock **out);

/* Report a failure of cn_kmod_query (r < 0) and return the exit code. */
int cnctl_kmod_err(int r);

/* Print a received message: a line "ID seq=.. ack=.. len=.. flags=..
 * port=.. group=.. data" (data as a quoted string when it is text, else as
 * hex; always hex with force_hex), or a JSON object with idx, val, seq, ack,
 * len, flags, port, group, hex (the payload bytes) and text (when the
 * payload is text). `extra` (may be NULL) is appended inside the JSON
 * object (starting with a comma) or to the line. Ends the line. */
void cnctl_print_message(FILE *f, const struct cn_message *m, int json, int force_hex,
			 const char *extra);

/* SIGINT/SIGTERM set *cnctl_stop (no SA_RESTART); SIGPIPE is ignored.
 * Returns 0 or -errno. */
extern volatile sig_atomic_t cnctl_stop;
int cnctl_install_signals(void);

/* Wait until fd is readable, a stop signal arrives or timeout_ms passes
 * (< 0: no limit). Returns 1 readable, 0 stop signal or timeout, -errno. */
int cnctl_wait_readable(int fd, int timeout_ms);

/* A getopt_long error (c is ':' or '?'): print it, return CNCTL_EXIT_USAGE. */
int cnctl_opt_err(const char *cmd, int c, char **argv);

/* --unit and --timeout values: 0, or a usage error's exit code. */
int cnctl_parse_unit(const char *cmd, const char *s, int *unit);
int cnctl_parse_timeout(const char *cmd, const char *s, int *ms);

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t cnctl_now_ms(void);

#endif /* CNCTL_COMMON_H */
