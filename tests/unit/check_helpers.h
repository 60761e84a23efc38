/* tests/unit/check_helpers.h: assertions the Check suites share: a call that must succeed (OK), one that must fail
 * with a code and a message naming something (FAILS), and signal reads that must not fail (sigval, SIGSET, sigts). */
#ifndef BG_TESTS_CHECK_HELPERS_H
#define BG_TESTS_CHECK_HELPERS_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "baregpu/error.h"
#include "baregpu/hcq.h"

#define OK(x)                                                                     \
  do {                                                                            \
    int r_ = (x);                                                                 \
    ck_assert_msg(r_ == 0, "%s -> %d: %s", #x, r_, bg_last_error());              \
  } while (0)
#define FAILS(x, code, sub)                                                                           \
  do {                                                                                                \
    int r_ = (x);                                                                                     \
    ck_assert_msg(r_ == -(code), "%s -> %d (want %d): %s", #x, r_, -(code), bg_last_error());         \
    ck_assert_msg(strstr(bg_last_error(), (sub)) != NULL, "message '%s' lacks '%s'", bg_last_error(), (sub)); \
  } while (0)

static inline uint64_t sigval(const bg_signal *s) {
  uint64_t v = 0;
  ck_assert_msg(bg_signal_value(s, &v) == 0, "bg_signal_value: %s", bg_last_error());
  return v;
}
#define SIGSET(s, v) ck_assert_msg(bg_signal_set((s), (v)) == 0, "bg_signal_set: %s", bg_last_error())
static inline uint64_t sigts(const bg_signal *s) {
  uint64_t v = 0;
  ck_assert_msg(bg_signal_timestamp_raw(s, &v) == 0, "bg_signal_timestamp_raw: %s", bg_last_error());
  return v;
}

#endif
