/* tests/unit/tensor/tctx_fixture.h: the Check fixture of the tensor suites: a tensor context `c` on the default
 * device (DEV) opened before each test and closed after it, OK() for calls returning 0, and the context's stats.
 * Included once by a suite's .c file (the definitions are static). */
#ifndef BAREGPU_TESTS_TENSOR_TCTX_FIXTURE_H
#define BAREGPU_TESTS_TENSOR_TCTX_FIXTURE_H

#include <check.h>

#include "baregpu/error.h"
#include "baregpu/tensor.h"

static bg_tctx *c;

static inline void setup(void) { ck_assert_msg(bg_tctx_open(NULL, &c) == 0, "open: %s", bg_last_error()); }
static inline void teardown(void) {
  bg_tctx_close(c);
  c = NULL;
}

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

static inline bg_tstats stats(void) {
  bg_tstats st;
  bg_tctx_stats(c, &st);
  return st;
}

#endif
