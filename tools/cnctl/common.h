/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * common.h - what cnctl's subcommands share: the command table entry, exit
 * codes, error printing, argument parsing and JSON output helpers.
 */
#ifndef CNCTL_COMMON_H
#define CNCTL_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes (documented in `cnctl --help`). */
#define CNCTL_EXIT_OK	  0 /* success, or stopped by SIGINT/SIGTERM or --count */
#define CNCTL_EXIT_ERROR  1 /* runtime error */
#define CNCTL_EXIT_USAGE  2 /* bad command line */
#define CNCTL_EXIT_PERM	  3 /* permission denied by the kernel */
#define CNCTL_EXIT_NOCONN 4 /* the kernel has no (such) connector */

/* One subcommand: `cnctl NAME ARGS...` runs fn(argc, argv) with argv[0] == NAME. */
struct cnctl_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help; /* one line for `cnctl --help` */
};

/* Subcommands (one file each). */
int cnctl_proc(int argc, char **argv);

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

#endif /* CNCTL_COMMON_H */
