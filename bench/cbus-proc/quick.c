/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * quick.c - cbp-quick: the storm's child of bench/cbus-proc/run, a static
 * binary (no loader, no libraries) that exits at once: the process a
 * monitor reading /proc/PID/cmdline after the exec event misses (busybox
 * applets, static Go tools, small helpers live like this). Its argv
 * ("cnb-x-I" from bench/storm.c) is what a monitor must show.
 * With an argument starting with "cnb-end" it lives a second instead: the
 * end marker of a storm, named by every monitor that shows names at all.
 */
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc > 1 && !strncmp(argv[1], "cnb-end", 7)) {
		struct timespec ts = { 1, 0 };

		nanosleep(&ts, NULL);
	}
	return 0;
}
