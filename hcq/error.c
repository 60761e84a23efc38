/* hcq/error.c: thread-local error messages and BG_DEBUG logging (baregpu/error.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"

static _Thread_local char last_msg[2048];

const char *bg_last_error(void) { return last_msg; }

void bg_clear_error(void) { last_msg[0] = '\0'; }

const char *bg_strerror(int code) {
  static const char *const names[] = {
    "BG_OK", "BG_EINVAL", "BG_ENODEV", "BG_EPERM", "BG_EIO", "BG_ETIMEDOUT", "BG_ENOMEM",
    "BG_ENOTSUP", "BG_EHANG", "BG_EBUSY", "BG_ECOMPILE", "BG_EFORMAT", "BG_EEXIST", "BG_ENOENT",
  };
  if (code < 0) code = -code;
  if ((size_t)code < sizeof(names) / sizeof(names[0])) return names[code];
  return "BG_E(unknown)";
}

int bg_verror(int code, const char *fmt, va_list ap) {
  vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
  BG_LOG(2, "error %s: %s", bg_strerror(code), last_msg);
  return code > 0 ? -code : code;
}

int bg_error(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = bg_verror(code, fmt, ap);
  va_end(ap);
  return r;
}

int bg_error_context(int err, const char *fmt, ...) {
  char prefix[512], old[sizeof(last_msg)];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof(prefix), fmt, ap);
  va_end(ap);
  memcpy(old, last_msg, sizeof(old));
  size_t n = strlen(prefix);
  if (n >= sizeof(last_msg)) n = sizeof(last_msg) - 1;
  memcpy(last_msg, prefix, n);
  size_t rest = strlen(old);
  if (rest > sizeof(last_msg) - 1 - n) rest = sizeof(last_msg) - 1 - n;
  memcpy(last_msg + n, old, rest);
  last_msg[n + rest] = '\0';
  return err;
}

int bg_debug_level(void) {
  static int level = -1;
  if (level < 0) {
    /* A bad BG_DEBUG is reported by bg_env_check (every device open); logging stays off. */
    const char *s = getenv("BG_DEBUG");
    char *end = NULL;
    long v = s ? strtol(s, &end, 10) : 0;
    level = (s && (end == s || *end || v < 0 || v > 4)) ? 0 : (int)v;
  }
  return level;
}

void bg_log(int level, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  fprintf(stderr, "bg[%d] %s\n", level, line);
}
