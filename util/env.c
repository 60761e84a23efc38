/* util/env.c: one table of the integer environment variables and their ranges (util/env.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "util/env.h"

static const struct env_var {
  const char *name;
  long lo, hi, def;
  const char *what;
} vars[] = {
  {"BG_DEBUG", 0, 4, 0, "a debug level"},
  {"BG_WAIT_TIMEOUT_MS", 1, 2147483647L, 30000, "a timeout in milliseconds"},
  {"BG_HANG_CHECK_MS", 1, 2147483647L, 10000, "a time in milliseconds"},
  {"BEAM", 0, 64, 0, "a beam width"},
  {"BG_COMPILE_THREADS", 0, 1024, 0, "a thread count (0: the online CPUs)"},
  {"AM_RESET", 0, 1, 0, "0 or 1"},
  {"IGNORE_BEAM_CACHE", 0, 1, 0, "0 or 1"},
  {"AM_POWER_LIMIT", 0, 100000, 0, "a power limit in watts"},
  {"BG_CPU_THREADS", 1, 256, 0, "a thread count (unset: every online CPU)"},
  {"BG_PROGRESS", 0, 1, 1, "0 or 1 (progress bars on a terminal)"},
};

static const struct env_var *find(const char *name) {
  for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
    if (strcmp(vars[i].name, name) == 0) return &vars[i];
  return NULL;
}

int bg_env_int(const char *name, long *out) {
  const struct env_var *v = find(name);
  if (!v) return bg_error(BG_EINVAL, "env: %s is not a variable baregpu knows", name);
  *out = v->def;
  const char *s = getenv(name);
  if (!s || !*s) return 0;
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (errno || end == s || *end || x < v->lo || x > v->hi)
    return bg_error(BG_EINVAL, "%s=%s: expected %s, an integer from %ld to %ld", name, s, v->what, v->lo, v->hi);
  *out = x;
  return 0;
}

int bg_env_check(void) {
  long x;
  for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
    int r = bg_env_int(vars[i].name, &x);
    if (r < 0) return r;
  }
  return 0;
}

int bg_env_wait_timeout_ms(int *out) {
  long x;
  int r = bg_env_int("BG_WAIT_TIMEOUT_MS", &x);
  *out = (int)x;
  return r;
}
