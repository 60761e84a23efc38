/* tests/unit/hcq/test_core.c: the HCQ core below any backend: DEV= parsing and the visibility
 * filter, command templates and patch records, recorded queue programs (lowered once, re-submits
 * apply only changed patches), sticky recording errors, the timeline, signal waits. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/hcq.h"
#include "hcq/backend.h"
#include "hcq/env.h"
#include "hcq/target.h"
#include "hcq/tmpl.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

/* ---------------- DEV= ---------------- */

/* Indices are range-checked: a filter up to 2^31-1 used to loop that far (atoi and an int loop). */
START_TEST(target_index_ranges) {
  bg_target t;
  int map[8];
  ck_assert_int_eq(bg_target_parse("PCI:0-2147483647+AMD", &t), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "0..255"));
  ck_assert_int_eq(bg_target_parse("PCI:99999999999+AMD", &t), -BG_EINVAL);
  ck_assert_int_eq(bg_target_parse("AMD:256", &t), -BG_EINVAL);
  ck_assert_int_eq(bg_target_parse("PCI:0,+AMD", &t), -BG_EINVAL);
  OK(bg_target_parse("PCI:0-255+AMD:255", &t));
  ck_assert_int_eq(bg_visible_filter("0-255", 3, map, 8), 3);
  ck_assert_int_eq(bg_visible_filter("0-2147483647", 3, map, 8), -BG_EINVAL);
  ck_assert_int_eq(bg_visible_filter("x", 3, map, 8), -BG_EINVAL);
}
END_TEST

/* DEV="" and bg_dev_open("") agree: both are the default device (CPU here, no GPU is scanned in tests). */
START_TEST(empty_dev_is_default) {
  bg_dev *a = NULL, *b = NULL;
  setenv("DEV", "", 1);
  OK(bg_dev_open(NULL, &a));
  OK(bg_dev_open("", &b));
  ck_assert_str_eq(bg_dev_name(a), bg_dev_name(b));
  bg_dev_close(a);
  bg_dev_close(b);
  unsetenv("DEV");
}
END_TEST

/* A variable with a bad value is an error naming it, on every open; the messages offer only built drivers. */
START_TEST(bad_environment_is_an_error) {
  bg_dev *d = NULL;
  setenv("BG_WAIT_TIMEOUT_MS", "abc", 1);
  ck_assert_int_eq(bg_dev_open("CPU", &d), -BG_EINVAL);
  ck_assert_ptr_null(d);
  ck_assert_msg(strstr(bg_last_error(), "BG_WAIT_TIMEOUT_MS=abc") != NULL, "%s", bg_last_error());
  int ms = 0;
  ck_assert_int_eq(bg_env_wait_timeout_ms(&ms), -BG_EINVAL);
  setenv("BG_WAIT_TIMEOUT_MS", "0", 1);
  ck_assert_int_eq(bg_env_wait_timeout_ms(&ms), -BG_EINVAL);
  unsetenv("BG_WAIT_TIMEOUT_MS");
  OK(bg_env_wait_timeout_ms(&ms));
  ck_assert_int_eq(ms, 30000);
  setenv("BG_DEBUG", "9", 1);
  ck_assert_int_eq(bg_dev_open("CPU", &d), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "BG_DEBUG=9") != NULL, "%s", bg_last_error());
  unsetenv("BG_DEBUG");
  setenv("DEV", "BOGUS", 1);
  ck_assert_int_eq(bg_dev_open("CPU", &d), -BG_EINVAL); /* a bad DEV is reported even when a device is named */
  unsetenv("DEV");
  ck_assert_int_eq(bg_dev_open("MOCKNVK+NV", &d), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "no MOCKNVK+NV driver") != NULL, "%s", bg_last_error());
  ck_assert_msg(strstr(bg_last_error(), "NVK") == strstr(bg_last_error(), "MOCKNVK") + 4, "NV interfaces offered: %s",
                bg_last_error());
  ck_assert_msg(strstr(strstr(bg_last_error(), "valid forms"), "NV") == NULL, "forms offer NV: %s", bg_last_error());
}
END_TEST

START_TEST(target_valid_forms) {
  bg_target t;
  char s[64];
  OK(bg_target_parse("CPU", &t));
  ck_assert_str_eq(t.kind, "CPU");
  ck_assert_str_eq(t.iface, "");
  ck_assert_int_eq(t.index, 0);
  OK(bg_target_parse("amd:1", &t));
  ck_assert_str_eq(t.kind, "AMD");
  ck_assert_int_eq(t.index, 1);
  OK(bg_target_parse("USB+AMD", &t));
  ck_assert_str_eq(t.iface, "USB");
  OK(bg_target_parse("PCI:0-3+AMD:2", &t));
  ck_assert_str_eq(t.iface, "PCI");
  ck_assert_str_eq(t.indices, "0-3");
  ck_assert_int_eq(t.index, 2);
  bg_target_format(&t, s, sizeof(s));
  ck_assert_str_eq(s, "PCI:0-3+AMD:2");
  OK(bg_target_parse("MOCKNVK+NV", &t));
  OK(bg_target_parse("PCI:0,2+NV", &t));
  ck_assert_str_eq(t.indices, "0,2");
}
END_TEST

static void expect_bad(const char *s, const char *needle) {
  bg_target t;
  int r = bg_target_parse(s, &t);
  ck_assert_msg(r == -BG_EINVAL, "DEV=%s parsed (r=%d)", s, r);
  ck_assert_msg(strstr(bg_last_error(), needle) != NULL, "DEV=%s: message '%s' lacks '%s'", s, bg_last_error(), needle);
  ck_assert_msg(strstr(bg_last_error(), "valid forms") != NULL, "DEV=%s: message lacks the valid forms", s);
}

START_TEST(target_invalid_forms) {
  expect_bad("BOGUS", "unknown device kind 'BOGUS'");
  expect_bad("PCI+", "no device kind");
  expect_bad("AMD:x", "must be a decimal number");
  bg_target def;
  ck_assert_int_eq(bg_target_parse("", &def), 0); /* the default device, as bg_dev_open("") */
  ck_assert_str_eq(def.kind, "");
  expect_bad("+AMD", "interface");
  expect_bad("NVK+AMD", "interface 'NVK' does not exist for AMD");
  expect_bad("PCI+USB+AMD", "more than one");
  expect_bad("PCI:3-1+AMD", "visibility filter");
  expect_bad("PCI:+AMD", "visibility filter");
  expect_bad("AMD:", "decimal");
  expect_bad("A-MD", "not a name");
}
END_TEST

START_TEST(visible_filter) {
  int map[8];
  ck_assert_int_eq(bg_visible_filter("", 3, map, 8), 3);
  ck_assert_int_eq(bg_visible_filter("0,2", 3, map, 8), 2);
  ck_assert_int_eq(map[1], 2);
  ck_assert_int_eq(bg_visible_filter("1-3", 3, map, 8), 2); /* device 3 does not exist */
  ck_assert_int_eq(map[0], 1);
  ck_assert_int_eq(map[1], 2);
}
END_TEST

START_TEST(open_errors) {
  bg_dev *d = NULL;
  ck_assert_int_eq(bg_dev_open("CPU:3", &d), -BG_ENODEV);
  ck_assert_ptr_null(d);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "out of range"));
  ck_assert_int_lt(bg_dev_open("BOGUS", &d), 0);
  ck_assert_int_lt(bg_dev_open("MOCKPCI+NV", &d), 0); /* named but not built (no nv/ yet): says so */
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "MOCKPCI+NV"));
  char names[8][48];
  ck_assert_int_ge(bg_dev_list(false, names, 8), 1);
  ck_assert_str_eq(names[0], "CPU");
}
END_TEST

/* ---------------- templates ---------------- */

START_TEST(tmpl_constants_and_patches) {
  bg_tmpl t;
  memset(&t, 0, sizeof(t));
  t.ir = ir_new();
  const ir_node *x = t.slot_var[3] = ir_var(t.ir, IR_DT_UINT64, "x", 0, 1000);
  long off = bg_tmpl_reserve(&t, BG_SEC_CMD, 24, 8);
  ck_assert_int_eq(off, 0);
  OK(bg_tmpl_put(&t, BG_SEC_CMD, 0, 4, ir_const_int(t.ir, IR_DT_UINT64, 0x12345678)));
  ck_assert_int_eq(bg_tmpl_put(&t, BG_SEC_CMD, 4, 2, ir_const_int(t.ir, IR_DT_UINT64, 0x10000)), -BG_EINVAL);
  ck_assert_int_eq(bg_tmpl_put(&t, BG_SEC_CMD, 20, 8, x), -BG_EINVAL); /* outside the section */
  OK(bg_tmpl_put(&t, BG_SEC_CMD, 8, 8, ir_alu2(t.ir, IR_ADD, ir_alu2(t.ir, IR_MUL, x, ir_const_int(t.ir, IR_DT_UINT64, 4)),
                                                ir_const_int(t.ir, IR_DT_UINT64, 3))));
  OK(bg_tmpl_put(&t, BG_SEC_CMD, 16, 4, x));
  ck_assert_uint_eq(t.npatches, 2);
  uint64_t slots[BG_NSLOTS] = {0}, changed[2] = {1ull << 3, 0};
  slots[3] = 10;
  ck_assert_uint_eq(bg_tmpl_apply(&t, slots, changed, true), 2);
  uint32_t w32;
  uint64_t w64;
  memcpy(&w32, t.cmd, 4);
  ck_assert_uint_eq(w32, 0x12345678);
  memcpy(&w64, t.cmd + 8, 8);
  ck_assert_uint_eq(w64, 43);
  memcpy(&w32, t.cmd + 16, 4);
  ck_assert_uint_eq(w32, 10);
  changed[0] = 0; /* nothing changed: nothing evaluated */
  ck_assert_uint_eq(bg_tmpl_apply(&t, slots, changed, false), 0);
  slots[3] = 11;
  changed[0] = 1ull << 3;
  ck_assert_uint_eq(bg_tmpl_apply(&t, slots, changed, false), 2);
  memcpy(&w64, t.cmd + 8, 8);
  ck_assert_uint_eq(w64, 47);
  /* A variable with no slot is refused at lowering with its name. */
  const ir_node *stray = ir_var(t.ir, IR_DT_UINT64, "stray", 0, 9);
  ck_assert_int_eq(bg_tmpl_put(&t, BG_SEC_CMD, 16, 4, stray), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "stray"));
  ir_ctx *ir = t.ir;
  bg_tmpl_free(&t);
  ir_free(ir);
}
END_TEST

/* ---------------- queues on the CPU device ---------------- */

static bg_dev *dev;
static void open_dev(void) { ck_assert_msg(bg_dev_open("CPU", &dev) == 0, "%s", bg_last_error()); }
static void close_dev(void) { bg_dev_close(dev); }

START_TEST(resubmit_applies_only_changed_patches) {
  bg_signal *s;
  OK(bg_signal_new(dev, 0, &s));
  bg_queue *q;
  OK(bg_queue_new(dev, BG_QUEUE_COMPUTE, &q));
  bg_val v = bg_var(q, 0, "v", 0, UINT32_MAX);
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_signal(q, bg_sig(s), v);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  for (uint64_t i = 1; i <= 50; i++) {
    uint64_t tv = bg_dev_timeline_value(dev);
    OK(bg_queue_submit(q, &i, 1));
    ck_assert_uint_eq(bg_dev_timeline_value(dev), tv + 1); /* the program claims the timeline */
    OK(bg_dev_synchronize(dev, 5000));
    ck_assert_uint_eq(bg_signal_value(s), i);
  }
  bg_queue_stats st;
  bg_queue_get_stats(q, &st);
  ck_assert_uint_eq(st.ncmds, 3);
  ck_assert_uint_eq(st.submits, 50);
  /* v and the two timeline-value operands (wait tv-1, signal tv) changed; the address did not. */
  ck_assert_uint_eq(st.patches_applied_last, 3);
  uint64_t same = 50;
  OK(bg_queue_submit(q, &same, 1));
  bg_queue_get_stats(q, &st);
  ck_assert_uint_eq(st.patches_applied_last, 2); /* only the timeline value */
  OK(bg_dev_synchronize(dev, 5000));
  /* Too few variables bound: the message names the variable. */
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "'v'"));
  bg_queue_free(q);
  bg_signal_free(s);
}
END_TEST

START_TEST(sticky_recording_errors) {
  bg_queue *q;
  OK(bg_queue_new(dev, BG_QUEUE_COPY, &q));
  bg_queue_memory_barrier(q); /* compute only */
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "memory_barrier"));
  bg_queue_reset(q);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  OK(bg_queue_submit(q, NULL, 0));
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0)); /* after submit: needs a reset */
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "reset"));
  OK(bg_dev_synchronize(dev, 5000));
  bg_queue_free(q);
}
END_TEST

START_TEST(timeline_wraps_after_2_31) {
  bg_signal *before = bg_dev_timeline(dev);
  bg_dev_set_timeline(dev, (1ull << 31) + 5);
  bg_queue *q;
  OK(bg_queue_new(dev, BG_QUEUE_COMPUTE, &q));
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  OK(bg_queue_submit(q, NULL, 0));
  OK(bg_dev_synchronize(dev, 5000));
  ck_assert_ptr_ne(bg_dev_timeline(dev), before); /* swapped to the shadow signal */
  ck_assert_uint_eq(bg_dev_timeline_value(dev), 1);
  ck_assert_uint_eq(bg_signal_value(bg_dev_timeline(dev)), 0);
  for (int i = 0; i < 5; i++) OK(bg_queue_submit(q, NULL, 0)); /* same program, new signal address */
  OK(bg_dev_synchronize(dev, 5000));
  ck_assert_uint_eq(bg_signal_value(bg_dev_timeline(dev)), 5);
  bg_queue_free(q);
}
END_TEST

START_TEST(wait_timeout_names_signal_and_values) {
  bg_signal *s;
  OK(bg_signal_new(dev, 3, &s));
  ck_assert_int_eq(bg_signal_wait(s, 4, 100), -BG_ETIMEDOUT);
  char want[64];
  snprintf(want, sizeof(want), "signal 0x%llx", (unsigned long long)bg_signal_va(s));
  ck_assert_msg(strstr(bg_last_error(), want) != NULL, "%s", bg_last_error());
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "expected >= 4, saw 3"));
  OK(bg_signal_wait(s, 3, 100));
  bg_signal_free(s);
}
END_TEST

START_TEST(failed_sync_latches_error) {
  bg_signal *never;
  OK(bg_signal_new(dev, 0, &never));
  bg_queue *q;
  OK(bg_queue_new(dev, BG_QUEUE_COMPUTE, &q));
  bg_queue_wait(q, bg_sig(never), bg_const(1));
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  OK(bg_queue_submit(q, NULL, 0));
  ck_assert_int_eq(bg_dev_synchronize(dev, 100), -BG_ETIMEDOUT);
  ck_assert_int_eq(bg_dev_synchronize(dev, 100), -BG_ETIMEDOUT); /* latched */
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "error state"));
  ck_assert_int_lt(bg_queue_submit(q, NULL, 0), 0);
  bg_signal_set(never, 1); /* let the worker finish so close is clean */
  bg_queue_free(q);
  bg_signal_free(never);
}
END_TEST

static Suite *core_suite(void) {
  Suite *s = suite_create("hcq core");
  TCase *t = tcase_create("target");
  tcase_add_test(t, target_valid_forms);
  tcase_add_test(t, target_invalid_forms);
  tcase_add_test(t, visible_filter);
  tcase_add_test(t, target_index_ranges);
  tcase_add_test(t, empty_dev_is_default);
  tcase_add_test(t, bad_environment_is_an_error);
  tcase_add_test(t, open_errors);
  tcase_add_test(t, tmpl_constants_and_patches);
  suite_add_tcase(s, t);
  TCase *q = tcase_create("queues");
  tcase_add_checked_fixture(q, open_dev, close_dev);
  tcase_add_test(q, resubmit_applies_only_changed_patches);
  tcase_add_test(q, sticky_recording_errors);
  tcase_add_test(q, timeline_wraps_after_2_31);
  tcase_add_test(q, wait_timeout_names_signal_and_values);
  tcase_add_test(q, failed_sync_latches_error);
  tcase_set_timeout(q, 60);
  suite_add_tcase(s, q);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(core_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
