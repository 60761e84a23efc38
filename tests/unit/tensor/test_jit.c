/* tests/unit/tensor/test_jit.c: JIT capture and replay (baregpu/tensor.h) and symbolic sizes.
 * Replayed results are bit-identical to plain calls of the function on the same inputs; a replay
 * runs the function, the scheduler, the compiler and the queue recorder zero times (tensor,
 * compile and queue statistics); wrong input shapes/dtypes/counts are clear errors; a symbolic
 * input size replays with each binding through one kernel; variables' bounds and bindings. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/compile.h"
#include "baregpu/tensor.h"
#include "tctx_fixture.h"

static const int64_t A_SH[2] = {4, 8}, B_SH[2] = {8, 6};

/* The token of variable v bound to value (a bind that must succeed). */
static int64_t bind(int v, int64_t value) {
  int64_t t = 0;
  ck_assert_msg(bg_tvar_bind(c, v, value, &t) == 0, "bind: %s", bg_last_error());
  return t;
}

/* Several fused and unfused kernels: relu(a @ b + 1) and (a * 2 - 1).sum(axis 1).exp() */
static int model(void *user, bg_tensor *const *in, unsigned nin, bg_tensor **out, unsigned nout) {
  (void)nin;
  (void)nout;
  if (user) (*(int *)user)++;
  out[0] = bg_tn_relu(bg_tn_addc(bg_tn_matmul(in[0], in[1]), 1.0));
  out[1] = bg_tn_exp(bg_tn_sum(bg_tn_addc(bg_tn_mulc(in[0], 2.0), -1.0), 1u << 1, false));
  return 0;
}

static void fill(float *v, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
  }
}

static void inputs(unsigned seed, bg_tensor **in) {
  float a[32], b[48];
  fill(a, 32, seed);
  fill(b, 48, seed * 7 + 3);
  in[0] = bg_tn_from(c, BG_FLOAT32, 2, A_SH, a);
  in[1] = bg_tn_from(c, BG_FLOAT32, 2, B_SH, b);
}

/* A JIT of model past its capture: two calls (plain, then captured) on inputs of seeds 0 and 1. */
static bg_jit *captured_jit(bg_tensor **in, bg_tensor **out) {
  bg_jit *j;
  OK(bg_jit_new(c, model, NULL, 2, &j));
  for (unsigned call = 0; call < 2; call++) {
    inputs(call, in);
    OK(bg_jit_call(j, in, 2, out));
  }
  return j;
}

START_TEST(replay_bit_identical) {
  int calls = 0;
  bg_jit *j;
  OK(bg_jit_new(c, model, &calls, 2, &j));
  for (unsigned call = 0; call < 6; call++) {
    bg_tensor *in[2], *out[2], *ref[2];
    inputs(call + 1, in);
    OK(bg_jit_call(j, in, 2, out));
    uint32_t got0[24], got1[4], want0[24], want1[4];
    OK(bg_tn_read(out[0], got0, sizeof got0)); /* before the next replay overwrites it */
    OK(bg_tn_read(out[1], got1, sizeof got1));
    ck_assert_int_eq(bg_tn_ndim(out[0]), 2);
    ck_assert_int_eq(bg_tn_shape(out[0])[1], 6);
    OK(model(NULL, in, 2, ref, 2));
    OK(bg_tn_read(ref[0], want0, sizeof want0));
    OK(bg_tn_read(ref[1], want1, sizeof want1));
    ck_assert_msg(!memcmp(got0, want0, sizeof got0), "call %u: output 0 differs from a plain call", call + 1);
    ck_assert_msg(!memcmp(got1, want1, sizeof got1), "call %u: output 1 differs from a plain call", call + 1);
  }
  ck_assert_int_eq(calls, 2);
  /* launch by launch (bg_program_run per kernel) gives the same bytes as the queue program */
  for (unsigned call = 0; call < 2; call++) {
    bg_tensor *in[2], *out[2];
    uint32_t q0[24], l0[24];
    inputs(20 + call, in);
    bg_jit_set_per_launch(j, false);
    OK(bg_jit_call(j, in, 2, out));
    OK(bg_tn_read(out[0], q0, sizeof q0));
    bg_jit_set_per_launch(j, true);
    OK(bg_jit_call(j, in, 2, out));
    OK(bg_tn_read(out[0], l0, sizeof l0));
    ck_assert(!memcmp(q0, l0, sizeof q0));
  }
  bg_jit_set_per_launch(j, false);
  bg_jit_stats js;
  bg_jit_get_stats(j, &js);
  ck_assert_uint_eq(js.calls, 10);
  ck_assert_uint_eq(js.replays, 8);
  ck_assert_uint_eq(js.nkernels, 2); /* relu(a@b+1) and exp(sum(a*2-1)) */
  ck_assert_uint_eq(js.nslots, 4);
  bg_jit_free(j);
}
END_TEST

/* Calls 1 and 2 on the same inputs (call 1 realized everything the capture would compute), then
 * replays on new ones, and a capture where one input repeats while the other changes: the
 * capture recomputes what depends on its inputs, so replays follow new inputs. */
START_TEST(capture_after_same_inputs) {
  for (int variant = 0; variant < 2; variant++) {
    bg_jit *j;
    OK(bg_jit_new(c, model, NULL, 2, &j));
    bg_tensor *in[2], *in2[2], *out[2], *ref[2];
    inputs(40 + (unsigned)variant, in);
    OK(bg_jit_call(j, in, 2, out));
    inputs(50 + (unsigned)variant, in2);
    if (variant) in2[0] = in[0]; /* a repeats, b is new */
    OK(bg_jit_call(j, variant ? in2 : in, 2, out));
    for (unsigned call = 0; call < 3; call++) {
      inputs(60 + call, in);
      OK(bg_jit_call(j, in, 2, out));
      uint32_t got[24], want[24];
      OK(bg_tn_read(out[0], got, sizeof got));
      OK(model(NULL, in, 2, ref, 2));
      OK(bg_tn_read(ref[0], want, sizeof want));
      ck_assert_msg(!memcmp(got, want, sizeof got), "variant %d replay %u differs from a plain call", variant, call);
    }
    bg_jit_stats js;
    bg_jit_get_stats(j, &js);
    ck_assert_uint_eq(js.nkernels, 2);
    bg_jit_free(j);
  }
}
END_TEST

START_TEST(replay_records_and_compiles_nothing) {
  bg_tensor *in[2], *out[2];
  bg_jit *j = captured_jit(in, out);
  bg_tstats t0 = stats();
  bg_compile_stats c0, c1;
  bg_compile_get_stats(&c0);
  bg_jit_stats j0, j1;
  bg_jit_get_stats(j, &j0);
  ck_assert_uint_eq(j0.submits, 0);
  for (unsigned call = 0; call < 5; call++) {
    inputs(100 + call, in);
    OK(bg_jit_call(j, in, 2, out));
    bg_jit_get_stats(j, &j1);
    ck_assert_uint_gt(j1.patches_applied_last, 0);  /* new input addresses patched in */
  }
  OK(bg_tctx_sync(c));
  bg_tstats t1 = stats();
  bg_compile_get_stats(&c1);
  ck_assert_uint_eq(t1.schedules, t0.schedules);
  ck_assert_uint_eq(t1.kernels_compiled, t0.kernels_compiled);
  ck_assert_uint_eq(t1.kernels_run, t0.kernels_run + 5 * j0.nkernels);
  ck_assert_uint_eq(c1.hits + c1.misses, c0.hits + c0.misses);
  ck_assert_uint_eq(j1.ncmds, j0.ncmds);         /* the program was recorded once */
  ck_assert_uint_eq(j1.submits, 5);
  ck_assert_uint_eq(j1.fn_calls, 2);
  /* the same inputs again: fewer patches (the input addresses did not change) */
  size_t with_new_inputs = j1.patches_applied_last;
  OK(bg_jit_call(j, in, 2, out));
  bg_jit_get_stats(j, &j1);
  ck_assert_uint_lt(j1.patches_applied_last, with_new_inputs);
  bg_jit_free(j);
}
END_TEST

START_TEST(wrong_inputs_are_errors) {
  bg_tensor *in[2], *out[2];
  bg_jit *j = captured_jit(in, out);
  const int64_t bad_sh[2] = {4, 7};
  float z[28] = {0};
  bg_tensor *bad[2] = {in[0], bg_tn_from(c, BG_FLOAT32, 2, bad_sh, z)};
  ck_assert_int_eq(bg_jit_call(j, bad, 2, out), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "input 1 is (4,7) float32, the capture had (8,6) float32"), "%s", bg_last_error());
  int32_t zi[48] = {0};
  bad[1] = bg_tn_from(c, BG_INT32, 2, B_SH, zi);
  ck_assert_int_eq(bg_jit_call(j, bad, 2, out), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "int32"), "%s", bg_last_error());
  ck_assert_int_eq(bg_jit_call(j, in, 1, out), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "1 inputs, the first call had 2"), "%s", bg_last_error());
  bad[1] = in[0];
  ck_assert_int_eq(bg_jit_call(j, bad, 2, out), -BG_EINVAL); /* a (4,8) where (8,6) was captured */
  /* still replays fine afterwards */
  inputs(9, in);
  OK(bg_jit_call(j, in, 2, out));
  bg_jit_free(j);
}
END_TEST

/* a[:i] + 1 captured with i = 3, replayed with i = 2..7: one kernel compiled, bound sizes out */
static int plus_one(void *user, bg_tensor *const *in, unsigned nin, bg_tensor **out, unsigned nout) {
  (void)user;
  (void)nin;
  (void)nout;
  out[0] = bg_tn_mulc(bg_tn_addc(in[0], 1.0), 3.0);
  return 0;
}

START_TEST(symbolic_input_replays) {
  int i = bg_tvar_new(c, "i", 1, 10);
  ck_assert_int_ge(i, 0);
  float base[10];
  for (int k = 0; k < 10; k++) base[k] = (float)k;
  const int64_t sh[1] = {10};
  bg_tensor *buf = bg_tn_from(c, BG_FLOAT32, 1, sh, base);
  bg_jit *j;
  OK(bg_jit_new(c, plus_one, NULL, 1, &j));
  const int64_t sizes[] = {3, 3, 2, 7, 5, 10};
  for (int k = 0; k < 6; k++) {
    int64_t b[1][2] = {{0, bind(i, sizes[k])}};
    bg_tensor *in = bg_tn_contiguous(bg_tn_shrink(buf, b)), *out;
    OK(bg_jit_call(j, &in, 1, &out));
    ck_assert(BG_DIM_IS_VAR(bg_tn_shape(out)[0]));
    ck_assert_int_eq(BG_DIM_VALUE(bg_tn_shape(out)[0]), sizes[k]);
    ck_assert_int_eq(bg_tn_numel(out), sizes[k]);
    float got[10];
    OK(bg_tn_read(out, got, sizeof got));
    for (int x = 0; x < sizes[k]; x++) ck_assert_float_eq(got[x], ((float)x + 1.0f) * 3.0f);
  }
  bg_jit_stats js;
  bg_jit_get_stats(j, &js);
  ck_assert_uint_eq(js.replays, 4);
  ck_assert_uint_eq(js.nslots, 3); /* input, output, i */
  ck_assert_uint_eq(js.nkernels, 1);
  /* the inputs' contiguous() kernel and the function's kernel: each compiled once */
  ck_assert_uint_eq(stats().kernels_compiled, 2);
  /* a concrete size where the capture had a variable */
  const int64_t four[1] = {4};
  bg_tensor *in = bg_tn_from(c, BG_FLOAT32, 1, four, base), *out;
  ck_assert_int_eq(bg_jit_call(j, &in, 1, &out), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "input 0 is (4) float32, the capture had (i=3) float32"), "%s", bg_last_error());
  bg_jit_free(j);
}
END_TEST

/* tinygrad's test_symbolic_jit shape: f(a[:, :i]) on a (3,10) tensor, the sum over the symbolic
 * axis and a broadcast back: symbolic strides in the input, output and the kernels between. */
static int row_norm(void *user, bg_tensor *const *in, unsigned nin, bg_tensor **out, unsigned nout) {
  (void)user;
  (void)nin;
  (void)nout;
  out[0] = bg_tn_sub(in[0], bg_tn_sum(in[0], 1u << 1, true));
  return 0;
}

START_TEST(symbolic_2d_input) {
  int i = bg_tvar_new(c, "w", 1, 10);
  float base[30];
  for (int k = 0; k < 30; k++) base[k] = (float)((k * 7) % 11);
  const int64_t sh[2] = {3, 10};
  bg_tensor *x = bg_tn_from(c, BG_FLOAT32, 2, sh, base);
  bg_jit *j;
  OK(bg_jit_new(c, row_norm, NULL, 1, &j));
  const int64_t sizes[] = {4, 6, 1, 10, 3};
  for (int k = 0; k < 5; k++) {
    int64_t s = sizes[k], b[2][2] = {{0, 3}, {0, bind(i, s)}};
    bg_tensor *in = bg_tn_contiguous(bg_tn_shrink(x, b)), *out;
    OK(bg_jit_call(j, &in, 1, &out));
    float got[30];
    ck_assert_int_eq(bg_tn_numel(out), 3 * s);
    OK(bg_tn_read(out, got, sizeof got));
    for (int r = 0; r < 3; r++) {
      float sum = 0;
      for (int q = 0; q < s; q++) sum += base[r * 10 + q];
      for (int q = 0; q < s; q++) ck_assert_float_eq(got[r * s + q], base[r * 10 + q] - sum);
    }
  }
  bg_jit_stats js;
  bg_jit_get_stats(j, &js);
  ck_assert_uint_eq(js.replays, 3);
  bg_jit_free(j);
}
END_TEST

START_TEST(variables) {
  int i = bg_tvar_new(c, "i", 1, 10);
  ck_assert_int_eq(bg_tvar_new(c, "i", 1, 10), i);
  ck_assert_int_eq(bg_tvar_new(c, "i", 1, 11), -BG_EINVAL);
  ck_assert_int_eq(bg_tvar_new(c, "j", 5, 4), -BG_EINVAL);
  ck_assert_str_eq(bg_tvar_name(c, i), "i");
  int64_t t = 0;
  OK(bg_tvar_bind(c, i, 4, &t));
  ck_assert(BG_DIM_IS_VAR(t));
  ck_assert_int_eq(BG_DIM_VAR(t), i);
  ck_assert_int_eq(BG_DIM_VALUE(t), 4);
  ck_assert(!BG_DIM_IS_VAR(-1) && !BG_DIM_IS_VAR(7));
  /* Out of bounds: -BG_EINVAL, the same message in bg_last_error() and latched, the token untouched. */
  int64_t bad = 12345;
  ck_assert_int_eq(bg_tvar_bind(c, i, 11, &bad), -BG_EINVAL);
  ck_assert_int_eq(bad, 12345);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "i = 11 is outside its bounds [1, 10]"));
  ck_assert_ptr_nonnull(strstr(bg_tctx_error(c), "i = 11 is outside its bounds [1, 10]"));
  ck_assert_int_eq(bg_tvar_bind(c, i + 1, 1, &bad), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "does not exist"));
}
END_TEST

/* sum over a symbolic axis of a 2-D tensor and a reshape keeping the symbolic axis */
START_TEST(symbolic_sum_reshape) {
  int n = bg_tvar_new(c, "n", 1, 8);
  float v[24];
  for (int k = 0; k < 24; k++) v[k] = (float)(k % 7);
  const int64_t sh[2] = {3, 8};
  bg_tensor *x = bg_tn_contiguous(bg_tn_from(c, BG_FLOAT32, 2, sh, v));
  for (int64_t s = 1; s <= 8; s += 3) {
    int64_t b[2][2] = {{0, 3}, {0, bind(n, s)}};
    bg_tensor *sub = bg_tn_shrink(x, b);
    const int64_t rs[3] = {3, bind(n, s), 1};
    bg_tensor *r = bg_tn_sum(bg_tn_reshape(sub, 3, rs), 1u << 1, false);
    float got[3];
    OK(bg_tn_read(r, got, sizeof got));
    for (int row = 0; row < 3; row++) {
      float want = 0;
      for (int k = 0; k < s; k++) want += v[row * 8 + k];
      ck_assert_float_eq(got[row], want);
    }
  }
  ck_assert_uint_eq(stats().kernels_compiled, 1); /* one r_3_n for every binding */
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("jit");
  TCase *t = tcase_create("jit");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 300);
  tcase_add_test(t, replay_bit_identical);
  tcase_add_test(t, capture_after_same_inputs);
  tcase_add_test(t, replay_records_and_compiles_nothing);
  tcase_add_test(t, wrong_inputs_are_errors);
  tcase_add_test(t, symbolic_input_replays);
  tcase_add_test(t, symbolic_2d_input);
  tcase_add_test(t, variables);
  tcase_add_test(t, symbolic_sum_reshape);
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
