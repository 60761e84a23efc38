/* tests/unit/tensor/test_sched.c: the scheduler's fusion decisions (kernel counts per realize,
 * compared with tinygrad's test_tiny launches) and results of the tiny tests, error latching, the
 * program cache and "becomes" (reusing realized buffers). Runs on DEV (default CPU). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/tensor.h"
#include "tctx_fixture.h"

/* Kernels of the last realize, with their names in the failure message. */
static void expect_kernels(unsigned want) {
  bg_tstats st = stats();
  char names[512] = "";
  for (unsigned i = 0; i < st.last_nkernels && i < 32; i++) {
    strncat(names, " ", sizeof names - strlen(names) - 1);
    strncat(names, st.last_kernels[i], sizeof names - strlen(names) - 1);
  }
  ck_assert_msg(st.last_nkernels == want, "%u kernels (%s), expected %u", st.last_nkernels, names, want);
}

static void read_f32(bg_tensor *t, float *out, size_t n) { OK(bg_tn_read(t, out, n * sizeof(float))); }

static const int64_t S2[2] = {2, 2};

/* ---------------- tinygrad's test_tiny ---------------- */

START_TEST(tiny_const) {
  double v = 0;
  OK(bg_tn_item(bg_tn_scalar(c, BG_FLOAT32, 2.0), &v));
  ck_assert(v == 2.0);
  expect_kernels(1); /* tinygrad: 1 (E) */
}
END_TEST

START_TEST(tiny_copy) {
  const float in[3] = {1, 2, 3};
  int64_t n = 3;
  float out[3] = {0};
  read_f32(bg_tn_from(c, BG_FLOAT32, 1, &n, in), out, 3);
  ck_assert(memcmp(in, out, sizeof in) == 0);
  expect_kernels(0); /* tinygrad: copies only */
  bg_tstats st = stats();
  ck_assert_uint_eq(st.copies_in, 1);
  ck_assert_uint_eq(st.copies_out, 1);
}
END_TEST

START_TEST(tiny_elu) {
  const float in[4] = {1, 2, 3, 4};
  float out[2];
  bg_tensor *x = bg_tn_from(c, BG_FLOAT32, 2, S2, in);
  read_f32(bg_tn_elu(bg_tn_sum(x, 1u << 1, false), 1.0), out, 2);
  ck_assert_float_eq_tol(out[0], 3.0f, 1e-6f);
  ck_assert_float_eq_tol(out[1], 7.0f, 1e-6f);
  expect_kernels(1); /* tinygrad: r_2_2, the reduce and the elementwise fused */
  ck_assert_msg(stats().last_kernels[0][0] == 'r', "kernel %s is not a reduce", stats().last_kernels[0]);
}
END_TEST

START_TEST(tiny_elu_negative) {
  const float in[4] = {-1, -2, 3, -4};
  float out[2];
  bg_tensor *x = bg_tn_from(c, BG_FLOAT32, 2, S2, in);
  read_f32(bg_tn_elu(bg_tn_sum(x, 1u << 1, false), 0.5), out, 2);
  ck_assert_float_eq_tol(out[0], 0.5f * (expf(-3.0f) - 1.0f), 1e-6f);
  ck_assert_float_eq_tol(out[1], 0.5f * (expf(-1.0f) - 1.0f), 1e-6f);
  expect_kernels(1);
}
END_TEST

START_TEST(tiny_plus) {
  const float a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
  int64_t n = 3;
  float out[3];
  read_f32(bg_tn_add(bg_tn_from(c, BG_FLOAT32, 1, &n, a), bg_tn_from(c, BG_FLOAT32, 1, &n, b)), out, 3);
  ck_assert(out[0] == 5 && out[1] == 7 && out[2] == 9);
  expect_kernels(1); /* tinygrad: E_3 */
  ck_assert_msg(stats().last_kernels[0][0] == 'E', "kernel %s is not elementwise", stats().last_kernels[0]);
}
END_TEST

START_TEST(tiny_plus_int) {
  const int32_t a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
  int64_t n = 3;
  int32_t out[3];
  bg_tensor *r = bg_tn_add(bg_tn_from(c, BG_INT32, 1, &n, a), bg_tn_from(c, BG_INT32, 1, &n, b));
  ck_assert_int_eq(bg_tn_dtype(r), BG_INT32);
  OK(bg_tn_read(r, out, sizeof out));
  ck_assert(out[0] == 5 && out[1] == 7 && out[2] == 9);
  expect_kernels(1);
}
END_TEST

START_TEST(tiny_plus_big) {
  int64_t n = 16;
  float out[16];
  bg_tensor *a = bg_tn_contiguous(bg_tn_ones(c, BG_FLOAT32, 1, &n));
  bg_tensor *b = bg_tn_contiguous(bg_tn_ones(c, BG_FLOAT32, 1, &n));
  read_f32(bg_tn_add(a, b), out, 16);
  for (int i = 0; i < 16; i++) ck_assert(out[i] == 2.0f);
  expect_kernels(3); /* tinygrad: E_4_4 x3 */
}
END_TEST

START_TEST(tiny_cat) {
  int64_t n = 8;
  float out[16];
  bg_tensor *p[2] = {bg_tn_contiguous(bg_tn_ones(c, BG_FLOAT32, 1, &n)), bg_tn_contiguous(bg_tn_zeros(c, BG_FLOAT32, 1, &n))};
  bg_tensor *r = bg_tn_cat(p, 2, 0);
  ck_assert_int_eq(bg_tn_shape(r)[0], 16);
  read_f32(r, out, 16);
  for (int i = 0; i < 16; i++) ck_assert(out[i] == (i < 8 ? 1.0f : 0.0f));
  expect_kernels(3); /* tinygrad: E_2_4 x2, E_8_2 */
}
END_TEST

START_TEST(tiny_sum) {
  int64_t n = 256;
  double v;
  OK(bg_tn_item(bg_tn_sum(bg_tn_contiguous(bg_tn_ones(c, BG_FLOAT32, 1, &n)), BG_ALL_AXES, false), &v));
  ck_assert(v == 256.0);
  expect_kernels(2); /* tinygrad: E_64_4, r_64_4 */
}
END_TEST

START_TEST(tiny_eye) {
  float out[9];
  read_f32(bg_tn_eye(c, BG_FLOAT32, 3), out, 9);
  for (int i = 0; i < 9; i++) ck_assert(out[i] == (i % 4 == 0 ? 1.0f : 0.0f));
  expect_kernels(1); /* tinygrad: E_3_3 */
}
END_TEST

static void gemm(enum bg_dtype t, int64_t rows) {
  int64_t sa[2] = {rows, 64};
  bg_tensor *a = bg_tn_contiguous(bg_tn_ones(c, t, 2, sa));
  bg_tensor *e = bg_tn_contiguous(bg_tn_eye(c, t, 64));
  bg_tensor *r = bg_tn_matmul(a, e);
  ck_assert_int_eq(bg_tn_ndim(r), 2);
  ck_assert_int_eq(bg_tn_shape(r)[0], rows);
  ck_assert_int_eq(bg_tn_shape(r)[1], 64);
  ck_assert_int_eq(bg_tn_dtype(r), t);
  size_t n = (size_t)rows * 64;
  if (t == BG_FLOAT16) {
    uint16_t *out = malloc(n * 2);
    OK(bg_tn_read(r, out, n * 2));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += out[i] != 0x3c00;
    free(out);
    ck_assert_uint_eq(bad, 0);
  } else {
    float *out = malloc(n * 4);
    read_f32(r, out, n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += out[i] != 1.0f;
    free(out);
    ck_assert_uint_eq(bad, 0);
  }
  expect_kernels(3); /* tinygrad: two contiguous + the matmul reduce */
}

START_TEST(tiny_gemm) { gemm(BG_FLOAT32, 64); }
END_TEST
START_TEST(tiny_hgemm) { gemm(BG_FLOAT16, 64); }
END_TEST
START_TEST(tiny_gemv) { gemm(BG_FLOAT32, 1); }
END_TEST

START_TEST(tiny_random) {
  int64_t n = 10;
  float a[10], b[10];
  read_f32(bg_tn_rand(c, 1, &n), a, 10);
  expect_kernels(1); /* tinygrad: 2 kernels + 2 copies (device-side counter); ours: the counter is a copy-in */
  unsigned long compiled = stats().kernels_compiled;
  read_f32(bg_tn_rand(c, 1, &n), b, 10);
  ck_assert_uint_eq(stats().kernels_compiled, compiled); /* same kernel, new counter */
  int distinct = 0;
  for (int i = 0; i < 10; i++) {
    ck_assert(a[i] >= 0.0f && a[i] < 1.0f && b[i] >= 0.0f && b[i] < 1.0f);
    distinct += a[i] != b[i];
    for (int j = 0; j < i; j++) ck_assert(a[i] != a[j]);
  }
  ck_assert_int_ge(distinct, 9);
  /* the seed makes it reproducible */
  bg_tctx_seed(c, 42);
  read_f32(bg_tn_rand(c, 1, &n), a, 10);
  bg_tctx_seed(c, 42);
  read_f32(bg_tn_rand(c, 1, &n), b, 10);
  ck_assert(memcmp(a, b, sizeof a) == 0);
}
END_TEST

START_TEST(random_mean) {
  int64_t n = 4096;
  double m;
  OK(bg_tn_item(bg_tn_mulc(bg_tn_sum(bg_tn_rand(c, 1, &n), BG_ALL_AXES, false), 1.0 / 4096), &m));
  ck_assert_msg(m > 0.45 && m < 0.55, "mean %f", m);
}
END_TEST

/* ---------------- fusion rules ---------------- */

START_TEST(reduce_expanded_back) {
  const float in[6] = {1, 5, 2, 7, 3, 4};
  const int64_t sh[2] = {2, 3};
  float out[6];
  bg_tensor *x = bg_tn_from(c, BG_FLOAT32, 2, sh, in);
  read_f32(bg_tn_sub(x, bg_tn_max(x, 1u << 1, true)), out, 6);
  const float want[6] = {-4, 0, -3, 0, -4, -3};
  for (int i = 0; i < 6; i++) ck_assert(out[i] == want[i]);
  expect_kernels(2); /* the max is realized: its result is broadcast back ("ending ranges") */
}
END_TEST

START_TEST(softmax_three) {
  const float in[6] = {1, 2, 3, 1, 1, 1};
  const int64_t sh[2] = {2, 3};
  float out[6];
  bg_tensor *x = bg_tn_from(c, BG_FLOAT32, 2, sh, in);
  bg_tensor *e = bg_tn_exp(bg_tn_sub(x, bg_tn_max(x, 1u << 1, true)));
  read_f32(bg_tn_div(e, bg_tn_sum(e, 1u << 1, true)), out, 6);
  ck_assert_float_eq_tol(out[0] + out[1] + out[2], 1.0f, 1e-6f);
  ck_assert_float_eq_tol(out[4], 1.0f / 3, 1e-6f);
  expect_kernels(3); /* tinygrad: softmax is 3 */
}
END_TEST

START_TEST(same_expression_compiles_once) {
  const float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  float out[2];
  unsigned long before = stats().kernels_compiled;
  read_f32(bg_tn_sum(bg_tn_mulc(bg_tn_from(c, BG_FLOAT32, 2, S2, a), 2), 1u, false), out, 2);
  ck_assert(out[0] == 8 && out[1] == 12);
  ck_assert_uint_eq(stats().kernels_compiled, before + 1);
  read_f32(bg_tn_sum(bg_tn_mulc(bg_tn_from(c, BG_FLOAT32, 2, S2, b), 2), 1u, false), out, 2);
  ck_assert(out[0] == 80 && out[1] == 120);
  ck_assert_uint_eq(stats().kernels_compiled, before + 1);
  ck_assert_uint_eq(stats().kernels_run, 2);
  /* the very same value again (same inputs): it was realized, nothing runs */
  float o4[4];
  bg_tensor *x = bg_tn_from(c, BG_FLOAT32, 2, S2, a);
  read_f32(bg_tn_mulc(x, 5), o4, 4);
  expect_kernels(1);
  read_f32(bg_tn_mulc(x, 5), o4, 4);
  expect_kernels(0);
  ck_assert(o4[0] == 5 && o4[3] == 20);
}
END_TEST

START_TEST(read_after_more_ops) {
  const float in[4] = {1, 2, 3, 4};
  float out[4];
  bg_tensor *x = bg_tn_mulc(bg_tn_from(c, BG_FLOAT32, 2, S2, in), 3);
  OK(bg_tn_realize(&x, 1));
  expect_kernels(1);
  const unsigned perm[2] = {1, 0};
  bg_tensor *y = bg_tn_addc(bg_tn_permute(x, perm), 1); /* built on the realized buffer */
  read_f32(y, out, 4);
  expect_kernels(1);
  ck_assert(out[0] == 4 && out[1] == 10 && out[2] == 7 && out[3] == 13);
  read_f32(x, out, 4); /* x itself is still there, no new kernel */
  expect_kernels(0);
  ck_assert(out[0] == 3 && out[3] == 12);
  OK(bg_tn_realize(&y, 1));
  expect_kernels(0);
}
END_TEST

START_TEST(shared_intermediate) {
  /* a contiguous() read by two roots realizes once */
  int64_t n = 4;
  float o1[4], o2[4];
  bg_tensor *a = bg_tn_contiguous(bg_tn_arange(c, BG_FLOAT32, 0, 4, 1));
  bg_tensor *r[2] = {bg_tn_addc(a, 1), bg_tn_mulc(a, 2)};
  OK(bg_tn_realize(r, 2));
  expect_kernels(3);
  read_f32(r[0], o1, 4);
  read_f32(r[1], o2, 4);
  for (int i = 0; i < n; i++) ck_assert(o1[i] == i + 1 && o2[i] == 2 * i);
}
END_TEST

START_TEST(nested_reduce_fuses) {
  const float in[6] = {1, 2, 3, 4, 5, 6};
  const int64_t sh[2] = {2, 3};
  double v;
  bg_tensor *x = bg_tn_from(c, BG_FLOAT32, 2, sh, in);
  OK(bg_tn_item(bg_tn_sum(bg_tn_max(x, 1u << 1, false), BG_ALL_AXES, false), &v));
  ck_assert(v == 9);
  expect_kernels(1); /* the max sits inside the sum's loop: no range of it is lost */
  /* a keepdim sum broadcast inside another reduce would be recomputed per element: realized */
  OK(bg_tn_item(bg_tn_sum(bg_tn_mul(bg_tn_sum(x, 1u << 1, true), x), BG_ALL_AXES, false), &v));
  ck_assert(v == 6 * 6 + 15 * 15);
  expect_kernels(2);
}
END_TEST

START_TEST(disagreeing_consumers) {
  const float in[4] = {1, 2, 3, 4};
  int64_t n = 4;
  float out[4];
  bg_tensor *y = bg_tn_mulc(bg_tn_from(c, BG_FLOAT32, 1, &n, in), 2);
  read_f32(bg_tn_add(y, bg_tn_flip(y, 1)), out, 4); /* y is read at i and at 3-i */
  for (int i = 0; i < 4; i++) ck_assert(out[i] == 10);
  expect_kernels(2);
  bg_tensor *z = bg_tn_mulc(bg_tn_from(c, BG_FLOAT32, 1, &n, in), 3);
  read_f32(bg_tn_mul(z, bg_tn_exp2(z)), out, 4); /* the same index twice: fused */
  ck_assert(out[0] == 3 * 8);
  expect_kernels(1);
  /* movement-only sources recompute freely */
  bg_tensor *w = bg_tn_from(c, BG_FLOAT32, 1, &n, in);
  read_f32(bg_tn_add(w, bg_tn_flip(w, 1)), out, 4);
  for (int i = 0; i < 4; i++) ck_assert(out[i] == 5);
  expect_kernels(1);
}
END_TEST

/* ---------------- errors latch, never abort ---------------- */

START_TEST(error_reshape) {
  const int64_t sh[2] = {2, 3}, bad[2] = {4, 2};
  bg_tensor *x = bg_tn_ones(c, BG_FLOAT32, 2, sh);
  bg_tensor *r = bg_tn_reshape(x, 2, bad);
  ck_assert_ptr_nonnull(bg_tctx_error(c));
  ck_assert_str_eq(bg_tctx_error(c), "reshape: cannot reshape (2,3) to (4,2): 6 elements vs 8");
  bg_tensor *later = bg_tn_addc(bg_tn_sum(r, 1, false), 1); /* passes through */
  ck_assert_int_eq(bg_tn_realize(&later, 1), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "reshape"));
  float f;
  ck_assert_int_eq(bg_tn_read(later, &f, sizeof f), -BG_EINVAL);
  /* the first error stays */
  bg_tn_sum(x, 1u << 5, false);
  ck_assert_str_eq(bg_tctx_error(c), "reshape: cannot reshape (2,3) to (4,2): 6 elements vs 8");
  /* after clearing, valid tensors realize again; the error tensor does not */
  bg_tctx_clear_error(c);
  ck_assert_ptr_null(bg_tctx_error(c));
  double v;
  OK(bg_tn_item(bg_tn_sum(x, BG_ALL_AXES, false), &v));
  ck_assert(v == 6);
  ck_assert_int_eq(bg_tn_realize(&later, 1), -BG_EINVAL);
  /* -1 inference */
  const int64_t inf[2] = {3, -1}, inf_bad[2] = {4, -1};
  bg_tensor *ok = bg_tn_reshape(x, 2, inf);
  ck_assert_int_eq(bg_tn_shape(ok)[1], 2);
  bg_tn_reshape(x, 2, inf_bad);
  ck_assert_ptr_nonnull(strstr(bg_tctx_error(c), "(4,-1)"));
}
END_TEST

START_TEST(error_axis) {
  const int64_t sh[2] = {2, 3};
  bg_tensor *x = bg_tn_ones(c, BG_FLOAT32, 2, sh);
  bg_tensor *r = bg_tn_max(x, 1u << 2, false);
  ck_assert_str_eq(bg_tctx_error(c), "max: axis 2 out of range for shape (2,3)");
  ck_assert_int_eq(bg_tn_realize(&r, 1), -BG_EINVAL);
  bg_tctx_clear_error(c);
  const unsigned perm[2] = {0, 0};
  bg_tn_permute(x, perm);
  ck_assert_ptr_nonnull(strstr(bg_tctx_error(c), "permute"));
}
END_TEST

START_TEST(error_add_shapes) {
  const int64_t s1[2] = {2, 3}, s2[2] = {4, 3};
  bg_tensor *r = bg_tn_add(bg_tn_ones(c, BG_FLOAT32, 2, s1), bg_tn_ones(c, BG_FLOAT32, 2, s2));
  ck_assert_str_eq(bg_tctx_error(c), "add: shapes (2,3) and (4,3) do not broadcast");
  ck_assert_int_eq(bg_tn_ndim(r), 0);
  ck_assert_int_eq(bg_tn_realize(&r, 1), -BG_EINVAL);
}
END_TEST

START_TEST(error_cat) {
  const int64_t s1[2] = {2, 3}, s2[2] = {2, 4};
  bg_tensor *p[2] = {bg_tn_ones(c, BG_FLOAT32, 2, s1), bg_tn_ones(c, BG_FLOAT32, 2, s2)};
  bg_tensor *r = bg_tn_cat(p, 2, 0);
  ck_assert_str_eq(bg_tctx_error(c), "cat: shapes (2,3) and (2,4) differ outside axis 0");
  ck_assert_int_eq(bg_tn_realize(&r, 1), -BG_EINVAL);
  bg_tctx_clear_error(c);
  r = bg_tn_cat(p, 2, 1); /* fine along axis 1 */
  ck_assert_ptr_null(bg_tctx_error(c));
  ck_assert_int_eq(bg_tn_shape(r)[1], 7);
}
END_TEST

START_TEST(error_matmul) {
  const int64_t s1[2] = {2, 3}, s2[2] = {4, 5};
  bg_tn_matmul(bg_tn_ones(c, BG_FLOAT32, 2, s1), bg_tn_ones(c, BG_FLOAT32, 2, s2));
  ck_assert_ptr_nonnull(strstr(bg_tctx_error(c), "matmul: shapes (2,3) and (4,5)"));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("tensor-sched");
  TCase *t = tcase_create("tiny");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 120);
  tcase_add_test(t, tiny_const);
  tcase_add_test(t, tiny_copy);
  tcase_add_test(t, tiny_elu);
  tcase_add_test(t, tiny_elu_negative);
  tcase_add_test(t, tiny_plus);
  tcase_add_test(t, tiny_plus_int);
  tcase_add_test(t, tiny_plus_big);
  tcase_add_test(t, tiny_cat);
  tcase_add_test(t, tiny_sum);
  tcase_add_test(t, tiny_eye);
  tcase_add_test(t, tiny_gemm);
  tcase_add_test(t, tiny_hgemm);
  tcase_add_test(t, tiny_gemv);
  tcase_add_test(t, tiny_random);
  tcase_add_test(t, random_mean);
  suite_add_tcase(s, t);
  t = tcase_create("fusion");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 120);
  tcase_add_test(t, reduce_expanded_back);
  tcase_add_test(t, softmax_three);
  tcase_add_test(t, same_expression_compiles_once);
  tcase_add_test(t, read_after_more_ops);
  tcase_add_test(t, shared_intermediate);
  tcase_add_test(t, nested_reduce_fuses);
  tcase_add_test(t, disagreeing_consumers);
  suite_add_tcase(s, t);
  t = tcase_create("errors");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, error_reshape);
  tcase_add_test(t, error_axis);
  tcase_add_test(t, error_add_shapes);
  tcase_add_test(t, error_cat);
  tcase_add_test(t, error_matmul);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
