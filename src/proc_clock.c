/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc_clock.c - proc event times on the wall clock: the kernel stamps
 * events with CLOCK_MONOTONIC (ktime_get_ns), which a reader that prints
 * or stores times converts with the clocks' offset. */
#include <time.h>

#include "internal.h"

uint64_t cn_proc_realtime_ns(uint64_t timestamp_ns)
{
	struct timespec rt, mono;
	int64_t offset;

	/* Monotonic first: a monotonic time read before this call then maps
	 * to a wall time no earlier than the wall clock was when it was read
	 * and no later than now (both clocks run at the same rate). */
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &rt);
	offset = ((int64_t)rt.tv_sec - (int64_t)mono.tv_sec) * 1000000000 +
		 ((int64_t)rt.tv_nsec - (int64_t)mono.tv_nsec);
	if (offset < 0 && (uint64_t)-offset > timestamp_ns)
		return 0;
	return timestamp_ns + (uint64_t)offset;
}
