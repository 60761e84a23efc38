/* tests/unit/tensor/test_optim.c: in-place assignment and the optimizers (baregpu/tensor.h, tensor/tassign.c,
 * tensor/optim.c). Assign keeps dst's handle and buffer (a view made before the assign reads the new values),
 * casts to dst's dtype, rejects a shape mismatch, and reads of dst at another index see the old values; kernels
 * reading the old contents in the same realize run first. SGD, SGD with momentum and Adam follow a
 * double-precision C reference of their update equations over several steps; a training step replayed by a JIT
 * gives the plain step's parameters bit for bit without scheduling or compiling. DEV picks the device. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/tensor.h"
#include "tctx_fixture.h"

static const int64_t SH23[2] = {2, 3}, SH32[2] = {3, 2}, SH6[1] = {6}, SH8[1] = {8};

static void read_f(bg_tensor *t, float *v, size_t n) { OK(bg_tn_read(t, v, n * sizeof *v)); }

/* The handle stays, and a view of dst made before the assign (it reads dst's buffer) sees the new values: the
 * assign wrote dst's own buffer, in one kernel. */
START_TEST(assign_same_handle_and_buffer) {
  const float x0[6] = {1, 2, 3, 4, 5, 6};
  bg_tensor *x = bg_tn_from(c, BG_FLOAT32, 2, SH23, x0);
  bg_tensor *alias = bg_tn_reshape(x, 1, SH6);
  OK(bg_tn_realize(&alias, 1));
  bg_tensor *r = bg_tn_assign(x, bg_tn_addc(bg_tn_mulc(x, 2.0), 1.0));
  ck_assert_ptr_eq(r, x);
  ck_assert_int_eq(bg_tn_dtype(x), BG_FLOAT32);
  ck_assert_int_eq(bg_tn_ndim(x), 2);
  OK(bg_tn_realize(&x, 1));
  ck_assert_uint_eq(stats().last_nkernels, 1);
  float got[6], via[6];
  read_f(x, got, 6);
  read_f(alias, via, 6);
  for (int i = 0; i < 6; i++) {
    ck_assert_float_eq(got[i], x0[i] * 2 + 1);
    ck_assert_msg(via[i] == got[i], "element %d: the earlier view reads %g, dst %g: the assign wrote another buffer", i,
                  (double)via[i], (double)got[i]);
  }
  /* twice more, reading the handle each time: the values follow (no stale realized node is reused) */
  for (int k = 0; k < 2; k++) {
    bg_tn_assign(x, bg_tn_mulc(x, 2.0));
    read_f(x, got, 6);
    ck_assert_float_eq(got[5], (x0[5] * 2 + 1) * (float)(2 << k));
  }
  read_f(alias, via, 6);
  ck_assert_float_eq(via[5], (x0[5] * 2 + 1) * 4);
  ck_assert_ptr_null(bg_tctx_error(c));
}
END_TEST

START_TEST(assign_casts_to_dst_dtype) {
  const int32_t xi[6] = {0, 0, 0, 0, 0, 0};
  const float f[6] = {1.75f, -2.5f, 3.25f, 7.9f, -0.5f, 100.0f};
  bg_tensor *x = bg_tn_from(c, BG_INT32, 1, SH6, xi);
  bg_tn_assign(x, bg_tn_from(c, BG_FLOAT32, 1, SH6, f));
  ck_assert_int_eq(bg_tn_dtype(x), BG_INT32);
  int32_t got[6];
  OK(bg_tn_read(x, got, sizeof got));
  for (int i = 0; i < 6; i++) ck_assert_int_eq(got[i], (int32_t)f[i]);
  /* int into float */
  bg_tensor *y = bg_tn_zeros(c, BG_FLOAT32, 1, SH6);
  OK(bg_tn_realize(&y, 1));
  bg_tn_assign(y, bg_tn_addc(x, 1));
  float fy[6];
  read_f(y, fy, 6);
  for (int i = 0; i < 6; i++) ck_assert_float_eq(fy[i], (float)((int32_t)f[i] + 1));
}
END_TEST

START_TEST(assign_shape_mismatch_is_an_error) {
  bg_tensor *x = bg_tn_zeros(c, BG_FLOAT32, 2, SH23);
  OK(bg_tn_realize(&x, 1));
  bg_tensor *r = bg_tn_assign(x, bg_tn_ones(c, BG_FLOAT32, 2, SH32));
  ck_assert_ptr_ne(r, x);
  const char *e = bg_tctx_error(c);
  ck_assert_ptr_nonnull(e);
  ck_assert_msg(strstr(e, "assign") && strstr(e, "(3,2)") && strstr(e, "(2,3)"), "message: %s", e);
  float v[6];
  ck_assert_int_eq(bg_tn_read(x, v, sizeof v), -BG_EINVAL); /* latched */
  bg_tctx_clear_error(c);
  read_f(x, v, 6); /* dst untouched */
  for (int i = 0; i < 6; i++) ck_assert_float_eq(v[i], 0);
  ck_assert_ptr_nonnull(bg_tn_assign(NULL, x));
  ck_assert_ptr_nonnull(strstr(bg_tctx_error(c), "dst"));
}
END_TEST

/* An update that reads dst elsewhere than the element it writes: flip and a sum over dst must see the old values
 * (a copy first), x <- x - lr*x elementwise stays one kernel. */
START_TEST(assign_expression_reading_dst) {
  float x0[8];
  for (int i = 0; i < 8; i++) x0[i] = (float)i;
  bg_tensor *x = bg_tn_from(c, BG_FLOAT32, 1, SH8, x0);
  bg_tn_assign(x, bg_tn_flip(x, 1u));
  float got[8];
  read_f(x, got, 8);
  for (int i = 0; i < 8; i++) ck_assert_msg(got[i] == (float)(7 - i), "flip: element %d is %g, expected %d", i, (double)got[i], 7 - i);
  /* x <- x - sum(x) (28) */
  bg_tn_assign(x, bg_tn_sub(x, bg_tn_sum(x, BG_ALL_AXES, false)));
  read_f(x, got, 8);
  for (int i = 0; i < 8; i++) ck_assert_float_eq(got[i], (float)(7 - i) - 28.0f);
  /* on a bigger buffer (many elements per thread, vectorized): flip, and a shift right by one (x[i] <- x[i-1]) */
  enum { N = 4096 };
  static float big[N], out[N];
  const int64_t nsh[1] = {N}, pads[1][2] = {{1, 0}}, bounds[1][2] = {{0, N - 1}};
  for (int i = 0; i < N; i++) big[i] = (float)i;
  bg_tensor *y = bg_tn_from(c, BG_FLOAT32, 1, nsh, big);
  bg_tn_assign(y, bg_tn_flip(y, 1u));
  read_f(y, out, N);
  for (int i = 0; i < N; i++) ck_assert_msg(out[i] == (float)(N - 1 - i), "flip of %d: element %d is %g", N, i, (double)out[i]);
  bg_tn_assign(y, bg_tn_pad(bg_tn_shrink(y, bounds), pads));
  read_f(y, out, N);
  ck_assert_float_eq(out[0], 0);
  for (int i = 1; i < N; i++) ck_assert_msg(out[i] == (float)(N - i), "shift: element %d is %g, expected %d", i, (double)out[i], N - i);
  /* elementwise: one kernel */
  bg_tn_assign(x, bg_tn_sub(x, bg_tn_mulc(x, 0.5)));
  OK(bg_tn_realize(&x, 1));
  ck_assert_uint_eq(stats().last_nkernels, 1);
  read_f(x, got, 8);
  for (int i = 0; i < 8; i++) ck_assert_float_eq(got[i], ((float)(7 - i) - 28.0f) * 0.5f);
}
END_TEST

/* y reads x's old contents and is realized in the same schedule as x's assignment, listed after it: y's kernel runs
 * first. */
START_TEST(readers_run_before_the_assign) {
  float x0[8];
  for (int i = 0; i < 8; i++) x0[i] = (float)i;
  bg_tensor *x = bg_tn_from(c, BG_FLOAT32, 1, SH8, x0);
  bg_tensor *y = bg_tn_sum(bg_tn_mulc(x, 3.0), BG_ALL_AXES, false); /* 84 with the old x */
  bg_tn_assign(x, bg_tn_mulc(x, 10.0));
  bg_tensor *both[2] = {x, y};
  OK(bg_tn_realize(both, 2));
  double s;
  OK(bg_tn_item(y, &s));
  ck_assert_double_eq_tol(s, 84.0, 1e-9);
  float got[8];
  read_f(x, got, 8);
  ck_assert_float_eq(got[7], 70.0f);
}
END_TEST

/* ---- optimizers against a double-precision reference ----
 * loss = sum(s * (w - a)^2) over two parameters (a matrix and a vector), gradient 2 s (w - a). */
enum { NW = 12, NB = 4, STEPS = 5 };
static const int64_t WSH[2] = {3, 4}, BSH[1] = {NB};

typedef struct problem {
  float w0[NW], b0[NB], aw[NW], ab[NB];
  double s;
} problem;

static void problem_init(problem *p) {
  for (int i = 0; i < NW; i++) {
    p->w0[i] = 0.1f * (float)i - 0.5f;
    p->aw[i] = 0.3f * (float)((i * 7) % 5) - 0.6f;
  }
  for (int i = 0; i < NB; i++) {
    p->b0[i] = 0.25f * (float)i;
    p->ab[i] = -0.4f + 0.1f * (float)i;
  }
  p->s = 0.75;
}

static bg_tensor *quad_loss(bg_tensor *w, bg_tensor *a, double s) {
  bg_tensor *d = bg_tn_sub(w, a);
  return bg_tn_mulc(bg_tn_sum(bg_tn_mul(d, d), BG_ALL_AXES, false), s);
}

/* The reference: kind 0 SGD, 1 SGD with momentum, 2 Adam, on the flattened parameters x (gradients at
 * float32-rounded values, as the device sees them). */
static void reference(int kind, const float *x0, const float *a, int n, double s, double lr, double mom, double b1,
                      double b2, double eps, double *x) {
  double m[NW] = {0}, v[NW] = {0}, b1t = 1, b2t = 1;
  for (int i = 0; i < n; i++) x[i] = x0[i];
  for (int t = 0; t < STEPS; t++) {
    b1t *= b1;
    b2t *= b2;
    for (int i = 0; i < n; i++) {
      double g = 2 * s * (x[i] - a[i]);
      if (kind == 0) {
        x[i] -= lr * g;
      } else if (kind == 1) {
        m[i] = mom * m[i] + g;
        x[i] -= lr * m[i];
      } else {
        m[i] = b1 * m[i] + (1 - b1) * g;
        v[i] = b2 * v[i] + (1 - b2) * g * g;
        x[i] -= lr * (m[i] / (1 - b1t)) / (sqrt(v[i] / (1 - b2t)) + eps);
      }
    }
  }
}

static void run_optimizer(int kind) {
  problem p;
  problem_init(&p);
  bg_tensor *w = bg_tn_requires_grad(bg_tn_from(c, BG_FLOAT32, 2, WSH, p.w0), true);
  bg_tensor *b = bg_tn_requires_grad(bg_tn_from(c, BG_FLOAT32, 1, BSH, p.b0), true);
  bg_tensor *aw = bg_tn_from(c, BG_FLOAT32, 2, WSH, p.aw), *ab = bg_tn_from(c, BG_FLOAT32, 1, BSH, p.ab);
  bg_tensor *params[2] = {w, b};
  const double lr = kind == 2 ? 0.05 : 0.1, mom = 0.9, b1 = 0.8, b2 = 0.95, eps = 1e-3;
  bg_optim *o;
  if (kind == 2) OK(bg_optim_adam(c, params, 2, lr, b1, b2, eps, &o));
  else OK(bg_optim_sgd(c, params, 2, lr, kind == 1 ? mom : 0, &o));
  for (int t = 0; t < STEPS; t++) {
    bg_tensor *loss = bg_tn_add(quad_loss(w, aw, p.s), quad_loss(b, ab, p.s));
    OK(bg_tn_backward(loss));
    OK(bg_optim_step(o));
    ck_assert_ptr_eq(params[0], w); /* the same handles, still requiring grad, gradients dropped */
    ck_assert(bg_tn_requires_grad_get(w) && bg_tn_requires_grad_get(b));
    bg_tensor *g = (bg_tensor *)1;
    OK(bg_tn_grad(w, &g));
    ck_assert_ptr_null(g);
  }
  double rw[NW], rb[NB];
  reference(kind, p.w0, p.aw, NW, p.s, lr, mom, b1, b2, eps, rw);
  reference(kind, p.b0, p.ab, NB, p.s, lr, mom, b1, b2, eps, rb);
  float gw[NW], gb[NB];
  read_f(w, gw, NW);
  read_f(b, gb, NB);
  for (int i = 0; i < NW; i++)
    ck_assert_msg(fabs(gw[i] - rw[i]) <= 1e-5 + 1e-5 * fabs(rw[i]), "kind %d w[%d] = %.8g, reference %.8g", kind, i,
                  (double)gw[i], rw[i]);
  for (int i = 0; i < NB; i++)
    ck_assert_msg(fabs(gb[i] - rb[i]) <= 1e-5 + 1e-5 * fabs(rb[i]), "kind %d b[%d] = %.8g, reference %.8g", kind, i,
                  (double)gb[i], rb[i]);
  /* the parameters moved from where they started */
  ck_assert(fabs(gw[0] - p.w0[0]) > 1e-3);
  bg_optim_free(o);
}

START_TEST(sgd_matches_reference) { run_optimizer(0); }
END_TEST
START_TEST(sgd_momentum_matches_reference) { run_optimizer(1); }
END_TEST
START_TEST(adam_matches_reference) { run_optimizer(2); }
END_TEST

START_TEST(optimizer_errors) {
  bg_tensor *w = bg_tn_zeros(c, BG_FLOAT32, 1, SH6);
  bg_optim *o = (bg_optim *)1;
  ck_assert_int_eq(bg_optim_sgd(c, &w, 1, 0.1, 0, &o), -BG_EINVAL);
  ck_assert_ptr_null(o);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "does not require grad"));
  bg_tn_requires_grad(w, true);
  bg_tensor *two[2] = {w, w};
  ck_assert_int_eq(bg_optim_adam(c, two, 2, 0.1, 0, 0, 0, &o), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "one buffer"));
  ck_assert_int_eq(bg_optim_adam(c, &w, 1, 0.1, 1.5, 0, 0, &o), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "b1"));
  ck_assert_int_eq(bg_optim_sgd(c, &w, 1, -1, 0, &o), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "lr"));
  ck_assert_int_eq(bg_optim_sgd(c, &w, 1, 0.1, -0.5, &o), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "momentum"));
  ck_assert_int_eq(bg_optim_step(NULL), -BG_EINVAL);
  /* a step without gradients changes nothing */
  OK(bg_optim_sgd(c, &w, 1, 0.1, 0.9, &o));
  OK(bg_optim_step(o));
  float v[6];
  read_f(w, v, 6);
  ck_assert_float_eq(v[0], 0);
  bg_optim_free(o);
  bg_optim_free(NULL);
}
END_TEST

/* ---- a training step through the JIT: a 2-layer MLP with cross-entropy, Adam or SGD+momentum ---- */
enum { BATCH = 8, IN = 5, HID = 7, OUT = 3 };
typedef struct net {
  bg_tensor *p[4]; /* w1 (HID,IN), b1 (HID), w2 (OUT,HID), b2 (OUT) */
  bg_optim *o;
} net;

static void net_init(net *n, int adam) {
  static const int64_t sh[4][2] = {{HID, IN}, {HID, 0}, {OUT, HID}, {OUT, 0}};
  for (int k = 0; k < 4; k++) {
    float v[HID * IN];
    int64_t numel = sh[k][0] * (sh[k][1] ? sh[k][1] : 1);
    for (int64_t i = 0; i < numel; i++) v[i] = 0.3f * sinf((float)(i * 3 + k + 1));
    n->p[k] = bg_tn_requires_grad(bg_tn_from(c, BG_FLOAT32, sh[k][1] ? 2 : 1, sh[k], v), true);
  }
  if (adam) OK(bg_optim_adam(c, n->p, 4, 0.01, 0, 0, 0, &n->o));
  else OK(bg_optim_sgd(c, n->p, 4, 0.05, 0.9, &n->o));
}

static int train_step(void *user, bg_tensor *const *in, unsigned nin, bg_tensor **out, unsigned nout) {
  (void)nin;
  (void)nout;
  net *n = user;
  bg_tensor *h = bg_tn_relu(bg_tn_linear(in[0], n->p[0], n->p[1]));
  bg_tensor *loss = bg_tn_sparse_cross_entropy(bg_tn_linear(h, n->p[2], n->p[3]), in[1]);
  int rc = bg_tn_backward(loss);
  if (!rc) rc = bg_tn_realize(&loss, 1); /* the loss of the parameters before the update */
  if (!rc) rc = bg_optim_step(n->o);
  out[0] = loss;
  return rc;
}

static void batch(unsigned step, bg_tensor **in) {
  float x[BATCH * IN];
  int32_t y[BATCH];
  for (int i = 0; i < BATCH * IN; i++) x[i] = cosf((float)(i + 1) * 0.7f + (float)step * 1.3f);
  for (int i = 0; i < BATCH; i++) y[i] = (int32_t)((i + step) % OUT);
  const int64_t xs[2] = {BATCH, IN}, ys[1] = {BATCH};
  in[0] = bg_tn_from(c, BG_FLOAT32, 2, xs, x);
  in[1] = bg_tn_from(c, BG_INT32, 1, ys, y);
}

static void jit_training_step(int adam) {
  net plain, jitted;
  net_init(&plain, adam);
  net_init(&jitted, adam);
  bg_tensor *w1 = jitted.p[0];
  bg_jit *j;
  OK(bg_jit_new(c, train_step, &jitted, 1, &j));
  enum { N = 8 };
  float first_loss = 0, last_loss = 0;
  bg_tstats before = {0};
  for (unsigned s = 0; s < N; s++) {
    bg_tensor *in[2], *out[1], *ref[1];
    batch(s, in);
    if (s == 2) before = stats();
    OK(bg_jit_call(j, in, 2, out));
    float lj, lp;
    OK(bg_tn_read(out[0], &lj, sizeof lj));
    if (s == 2) { /* a replay scheduled and compiled nothing */
      bg_tstats after = stats();
      ck_assert_uint_eq(after.schedules, before.schedules);
      ck_assert_uint_eq(after.kernels_compiled, before.kernels_compiled);
      before = after;
    }
    OK(train_step(&plain, in, 2, ref, 1));
    OK(bg_tn_read(ref[0], &lp, sizeof lp));
    ck_assert_msg(!memcmp(&lj, &lp, sizeof lj), "step %u: loss %.9g through the jit, %.9g plain", s, (double)lj, (double)lp);
    if (!s) first_loss = lp;
    last_loss = lp;
    for (int k = 0; k < 4; k++) {
      float a[HID * IN], b[HID * IN];
      size_t bytes = (size_t)bg_tn_numel(plain.p[k]) * sizeof(float);
      OK(bg_tn_read(jitted.p[k], a, bytes));
      OK(bg_tn_read(plain.p[k], b, bytes));
      ck_assert_msg(!memcmp(a, b, bytes), "step %u: parameter %d differs between the jit and the plain step", s, k);
    }
  }
  ck_assert_ptr_eq(jitted.p[0], w1);
  ck_assert_msg(last_loss < first_loss, "loss %g -> %g did not fall", (double)first_loss, (double)last_loss);
  bg_jit_stats js;
  bg_jit_get_stats(j, &js);
  ck_assert_uint_eq(js.fn_calls, 2);
  ck_assert_uint_eq(js.replays, N - 2);
  ck_assert_uint_gt(js.nkernels, 4);
  bg_jit_free(j);
  bg_optim_free(plain.o);
  bg_optim_free(jitted.o);
}

START_TEST(jit_step_adam_bit_identical) { jit_training_step(1); }
END_TEST
START_TEST(jit_step_sgd_bit_identical) { jit_training_step(0); }
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("optim");
  TCase *t = tcase_create("optim");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 600);
  tcase_add_test(t, assign_same_handle_and_buffer);
  tcase_add_test(t, assign_casts_to_dst_dtype);
  tcase_add_test(t, assign_shape_mismatch_is_an_error);
  tcase_add_test(t, assign_expression_reading_dst);
  tcase_add_test(t, readers_run_before_the_assign);
  tcase_add_test(t, sgd_matches_reference);
  tcase_add_test(t, sgd_momentum_matches_reference);
  tcase_add_test(t, adam_matches_reference);
  tcase_add_test(t, optimizer_errors);
  tcase_add_test(t, jit_step_adam_bit_identical);
  tcase_add_test(t, jit_step_sgd_bit_identical);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
