/* util/clock.h: the monotonic clock every layer measures waits and durations with. */
#ifndef BG_UTIL_CLOCK_H
#define BG_UTIL_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds (never steps back; see clock_gettime(2)). */
uint64_t bg_now_ns(void);

#endif
