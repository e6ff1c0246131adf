/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_names.c - names of proc event types (printing and parsing masks),
 * and the words for an exit's wait status. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "proc_internal.h"

static const struct {
	uint32_t what;
	const char *name;
} names[] = {
	{ CN_PROC_NONE, "none" },
	{ CN_PROC_FORK, "fork" },
	{ CN_PROC_EXEC, "exec" },
	{ CN_PROC_UID, "uid" },
	{ CN_PROC_GID, "gid" },
	{ CN_PROC_SID, "sid" },
	{ CN_PROC_PTRACE, "ptrace" },
	{ CN_PROC_COMM, "comm" },
	{ CN_PROC_COREDUMP, "coredump" },
	{ CN_PROC_EXIT, "exit" },
	{ CN_PROC_NONZERO_EXIT, "nonzero_exit" },
};

const char *cn_proc_what_name(uint32_t what)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].what == (uint32_t)what)
			return names[i].name;
	return "unknown";
}

int cn_proc_parse_mask(const char *list, uint32_t *mask)
{
	uint32_t m = 0;
	const char *p = list;

	if (!list || !mask)
		return cn_fail(EINVAL);
	while (*p) {
		size_t n = strcspn(p, ",");
		int found = 0;

		if (n == 3 && strncmp(p, "all", 3) == 0) {
			m |= CN_PROC_ALL;
			found = 1;
		}
		for (size_t i = 1; !found && i < sizeof(names) / sizeof(names[0]); i++) {
			if (strlen(names[i].name) == n && strncmp(p, names[i].name, n) == 0) {
				m |= names[i].what;
				found = 1;
			}
		}
		if (!found)
			return cn_fail(EINVAL);
		p += n;
		if (*p == ',' && *++p == '\0')
			return cn_fail(EINVAL); /* trailing comma */
	}
	if (m == 0)
		return cn_fail(EINVAL);
	*mask = m;
	return 0;
}

int cn_proc_status_text(uint32_t status, char *buf, size_t size)
{
	int st = (int)status;

	if (!buf && size)
		return cn_fail(EINVAL);
	if (WIFEXITED(st))
		return snprintf(buf, size, "exited with status %d", WEXITSTATUS(st));
	if (WIFSIGNALED(st))
		return snprintf(buf, size, "killed by signal %d%s", WTERMSIG(st),
				WCOREDUMP(st) ? " (core dumped)" : "");
	return snprintf(buf, size, "status 0x%x", (unsigned int)status);
}
