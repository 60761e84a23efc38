/* util/env.h: the environment variables baregpu reads, parsed in one place with range checks.
 * A variable that is set to a value outside its range is an error naming it (never silently
 * ignored); unset or empty means the default. */
#ifndef BG_HCQ_ENV_H
#define BG_HCQ_ENV_H

#include <stdbool.h>

/* Integer variables: BG_DEBUG (0..4), BG_WAIT_TIMEOUT_MS (1..2^31-1, default 30000), BG_HANG_CHECK_MS (1..2^31-1,
 * default 10000: a queue whose read pointer stands still that long with work pending, not at a wait, is hung), BEAM (0..64),
 * AM_RESET (0..1), IGNORE_BEAM_CACHE (0..1), AM_POWER_LIMIT (0..100000 W, 0 = highest DPM level), BG_COMPILE_THREADS
 * (0..1024, default 0 = the online CPUs: threads compiling one schedule, tensor/tcompile.c), BG_CPU_THREADS
 * (1..256 threads running one CPU launch's grid; unset: 0, read by cpu/cpu_pool.c as the CPUs the process may run on),
 * BG_PROGRESS (0..1, default 1: progress bars on stderr when it is a terminal, util/progress.c).
 * Returns 0 with *out set, or -BG_EINVAL naming the variable, its value and the expected range. */
int bg_env_int(const char *name, long *out);

/* Checks every variable above; the first bad one's error (bg_dev_open calls it, then checks DEV's form). */
int bg_env_check(void);

/* BG_WAIT_TIMEOUT_MS, the default wait of signals and queues (ms). */
int bg_env_wait_timeout_ms(int *out);

#endif
