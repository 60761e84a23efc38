/* tests/unit/util/test_util.c: Check suite for util/ helpers: bg_now_ns and bg_grow here, the
 * half converters in test_half.c. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "util/clock.h"
#include "util/grow.h"

TCase *half_tcase(void);

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* bg_now_ns reads CLOCK_MONOTONIC: a direct reading lies between two of its readings. */
START_TEST(now_ns_is_monotonic_clock) {
  for (int i = 0; i < 1000; i++) {
    uint64_t a = bg_now_ns(), ref = mono_ns(), b = bg_now_ns();
    ck_assert_msg(a <= ref && ref <= b, "bg_now_ns %llu, %llu around CLOCK_MONOTONIC %llu", (unsigned long long)a,
                  (unsigned long long)b, (unsigned long long)ref);
  }
}
END_TEST

START_TEST(grow_keeps_and_zeroes) {
  uint32_t *p = NULL;
  size_t cap = 0;
  ck_assert(bg_grow((void **)&p, &cap, 3, sizeof *p));
  ck_assert_uint_ge(cap, 3);
  for (size_t i = 0; i < cap; i++) ck_assert_uint_eq(p[i], 0);
  for (size_t i = 0; i < cap; i++) p[i] = (uint32_t)i + 7;
  size_t old = cap;
  uint32_t *same = p;
  ck_assert(bg_grow((void **)&p, &cap, old, sizeof *p)); /* enough room: nothing moves */
  ck_assert_ptr_eq(p, same);
  ck_assert_uint_eq(cap, old);
  ck_assert(bg_grow((void **)&p, &cap, old * 5 + 1, sizeof *p));
  ck_assert_uint_ge(cap, old * 5 + 1);
  for (size_t i = 0; i < old; i++) ck_assert_uint_eq(p[i], i + 7);
  for (size_t i = old; i < cap; i++) ck_assert_msg(p[i] == 0, "new element %zu is %u, not zero", i, p[i]);
  free(p);
}
END_TEST

START_TEST(grow_doubles) {
  char *p = NULL;
  size_t cap = 0;
  ck_assert(bg_grow((void **)&p, &cap, 1, 1));
  ck_assert_uint_eq(cap, 16);
  ck_assert(bg_grow((void **)&p, &cap, 17, 1));
  ck_assert_uint_eq(cap, 32);
  ck_assert(bg_grow((void **)&p, &cap, 100, 1));
  ck_assert_uint_eq(cap, 128);
  free(p);
}
END_TEST

/* need * elem past SIZE_MAX is an error that leaves the array as it was (no wrapped, small realloc). */
START_TEST(grow_overflow_is_error) {
  uint64_t *p = NULL;
  size_t cap = 0;
  ck_assert(bg_grow((void **)&p, &cap, 4, sizeof *p));
  uint64_t *keep = p;
  size_t kcap = cap;
  ck_assert(!bg_grow((void **)&p, &cap, SIZE_MAX / sizeof *p + 1, sizeof *p));
  ck_assert(!bg_grow((void **)&p, &cap, SIZE_MAX, 2));
  ck_assert(!bg_grow((void **)&p, &cap, (SIZE_MAX >> 4) + 2, 16));
  ck_assert(!bg_grow((void **)&p, &cap, 100, 0)); /* zero-sized elements: nothing to grow */
  ck_assert_ptr_eq(p, keep);
  ck_assert_uint_eq(cap, kcap);
  free(p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("util");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, now_ns_is_monotonic_clock);
  tcase_add_test(tc, grow_keeps_and_zeroes);
  tcase_add_test(tc, grow_doubles);
  tcase_add_test(tc, grow_overflow_is_error);
  suite_add_tcase(s, tc);
  TCase *th = half_tcase();
  tcase_set_timeout(th, 60);
  suite_add_tcase(s, th);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
