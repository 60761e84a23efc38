/* tests/unit/tensor/test_autograd.c: autograd and the nn layers on the device DEV names (CPU by default).
 *
 * Every op's gradient is compared with central finite differences of the same float32 graph:
 * loss = sum(op(inputs) * R) for a fixed random R, so every output element has its own weight and a
 * wrong index in a gradient shows. Inputs that meet a kink (max, relu, where, max_pool) are drawn
 * as distinct multiples of 0.1 (plus 0.05), farther from each other and from 0 than the step h, so
 * the finite difference never crosses one. Matmul, conv2d, max_pool2d and batch norm backward are
 * also compared with plain C reference loops, gradient shapes of broadcasting, reductions and
 * movement ops are checked, and so are the error cases.
 *
 * Tolerances: |analytic - fd| <= abs + rel * |fd| (float32 forward, h = 1e-2 central differences:
 * rounding noise ~1e-7 * |loss| / h, truncation ~h^2 * f''').  Reference comparisons are
 * float32 sums against double loops: |got - want| <= 1e-4 * (1 + |want|). */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "baregpu/tensor.h"

enum tol { T_SMOOTH, T_TRANS, T_NN, NTOL };
static const struct {
  double abs, rel;
} tol[NTOL] = {
  [T_SMOOTH] = {2e-3, 5e-3}, /* + - * / maximum, movement, reductions */
  [T_TRANS] = {5e-3, 2e-2},  /* exp/log/sqrt/sin/elu: curvature of the function in the fd error */
  [T_NN] = {1e-2, 2e-2},     /* layers: long sums in the loss */
};
static const float FD_STEP = 1e-2f;

static bg_tctx *ctx;

/* t's gradient: bg_tn_grad must succeed (NULL: no backward reached t). */
static bg_tensor *grad_of(bg_tensor *t) {
  bg_tensor *g = NULL;
  ck_assert_msg(bg_tn_grad(t, &g) == 0, "grad: %s", bg_last_error());
  return g;
}
static uint64_t rng_state;

static double rnd(void) { /* xorshift64*, [0,1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static int64_t numel(unsigned nd, const int64_t *sh) {
  int64_t n = 1;
  for (unsigned i = 0; i < nd; i++) n *= sh[i];
  return n;
}

/* ---------------- inputs ---------------- */

enum gen { G_UNIFORM, G_SPACED, G_POSITIVE };
typedef struct input {
  unsigned nd;
  int64_t sh[4];
  enum gen gen;
} input;

static float *make_data(const input *in) {
  int64_t n = numel(in->nd, in->sh);
  float *v = malloc((size_t)n * sizeof *v + 4);
  ck_assert(v);
  for (int64_t i = 0; i < n; i++) v[i] = (float)(in->gen == G_POSITIVE ? 0.5 + 1.5 * rnd() : 2 * rnd() - 1);
  if (in->gen == G_SPACED) { /* a shuffled ladder of distinct values 0.1 apart, none near 0 */
    for (int64_t i = 0; i < n; i++) v[i] = (float)(0.1 * (double)(i - n / 2) + 0.05);
    for (int64_t i = n - 1; i > 0; i--) {
      int64_t j = (int64_t)(rnd() * (double)(i + 1));
      float t = v[i];
      v[i] = v[j];
      v[j] = t;
    }
  }
  return v;
}

static bg_tensor *from(const input *in, const float *v) { return bg_tn_from(ctx, BG_FLOAT32, in->nd, in->sh, v); }

static float *read_all(bg_tensor *t) {
  int64_t n = bg_tn_numel(t);
  float *v = malloc((size_t)n * sizeof *v + 4);
  ck_assert(v);
  int rc = bg_tn_read(t, v, (size_t)n * sizeof *v);
  ck_assert_msg(rc == 0, "read: %s (%s)", bg_last_error(), bg_tctx_error(ctx) ? bg_tctx_error(ctx) : "");
  return v;
}

static double read_scalar(bg_tensor *t) {
  double v = 0;
  ck_assert_msg(bg_tn_item(t, &v) == 0, "item: %s", bg_last_error());
  return v;
}

static void expect_shape(bg_tensor *t, unsigned nd, const int64_t *sh, const char *what) {
  ck_assert_msg(t != NULL, "%s: no gradient", what);
  ck_assert_msg(bg_tn_ndim(t) == nd, "%s: rank %u, expected %u", what, bg_tn_ndim(t), nd);
  for (unsigned i = 0; i < nd; i++)
    ck_assert_msg(bg_tn_shape(t)[i] == sh[i], "%s: axis %u is %lld, expected %lld", what, i, (long long)bg_tn_shape(t)[i],
                  (long long)sh[i]);
}

static void expect_close(const float *got, const double *want, int64_t n, double abs, double rel, const char *what) {
  int bad = 0;
  int64_t first = -1;
  for (int64_t i = 0; i < n; i++)
    if (!(fabs(got[i] - want[i]) <= abs + rel * fabs(want[i]))) {
      if (first < 0) first = i;
      bad++;
    }
  ck_assert_msg(bad == 0, "%s: %d of %lld elements differ, first [%lld]: got %.7g, want %.7g (tolerance %g + %g*|want|)", what,
                bad, (long long)n, (long long)first, first >= 0 ? got[first] : 0.0, first >= 0 ? want[first] : 0.0, abs, rel);
}

/* ---------------- finite differences ---------------- */

typedef bg_tensor *(*op_fn)(bg_tensor **in);
typedef struct gcase {
  const char *name;
  op_fn f;
  unsigned nin;
  input in[3];
  enum tol tol;
} gcase;

/* sum(f(in) * R) with the inputs built from host data; R is drawn once per case (rseed). */
static bg_tensor *loss_of(const gcase *gc, float *const *data, bool grad, bg_tensor **ins, uint64_t rseed) {
  for (unsigned i = 0; i < gc->nin; i++) {
    ins[i] = from(&gc->in[i], data[i]);
    if (grad) bg_tn_requires_grad(ins[i], true);
  }
  bg_tensor *out = gc->f(ins);
  ck_assert_msg(!bg_tctx_error(ctx), "%s: %s", gc->name, bg_tctx_error(ctx));
  uint64_t saved = rng_state;
  rng_state = rseed;
  int64_t n = bg_tn_numel(out);
  float *r = malloc((size_t)n * sizeof *r + 4);
  ck_assert(r);
  for (int64_t i = 0; i < n; i++) r[i] = (float)(0.5 + rnd());
  rng_state = saved;
  bg_tensor *w = bg_tn_from(ctx, bg_tn_dtype(out), bg_tn_ndim(out), bg_tn_shape(out), r);
  free(r);
  return bg_tn_sum(bg_tn_mul(out, w), BG_ALL_AXES, false);
}

static void check_fd(const gcase *gc) {
  float *data[3];
  bg_tensor *ins[3];
  for (unsigned i = 0; i < gc->nin; i++) data[i] = make_data(&gc->in[i]);
  uint64_t rseed = rng_state | 1;
  bg_tensor *loss = loss_of(gc, data, true, ins, rseed);
  ck_assert_msg(bg_tn_backward(loss) == 0, "%s: backward: %s", gc->name, bg_last_error());
  for (unsigned i = 0; i < gc->nin; i++) {
    bg_tensor *g = grad_of(ins[i]);
    char what[96];
    snprintf(what, sizeof what, "%s: grad of input %u", gc->name, i);
    expect_shape(g, gc->in[i].nd, gc->in[i].sh, what);
    float *got = read_all(g);
    int64_t n = numel(gc->in[i].nd, gc->in[i].sh);
    double *fd = malloc((size_t)n * sizeof *fd + 8);
    ck_assert(fd);
    bg_tensor *tmp[3];
    for (int64_t j = 0; j < n; j++) {
      float keep = data[i][j];
      data[i][j] = keep + FD_STEP;
      double lp = read_scalar(loss_of(gc, data, false, tmp, rseed));
      data[i][j] = keep - FD_STEP;
      double lm = read_scalar(loss_of(gc, data, false, tmp, rseed));
      data[i][j] = keep;
      fd[j] = (lp - lm) / (2.0 * (double)FD_STEP);
    }
    expect_close(got, fd, n, tol[gc->tol].abs, tol[gc->tol].rel, what);
    free(fd);
    free(got);
  }
  for (unsigned i = 0; i < gc->nin; i++) free(data[i]);
}

/* ---------------- the ops ---------------- */

static bg_tensor *f_add(bg_tensor **a) { return bg_tn_add(a[0], a[1]); }
static bg_tensor *f_sub(bg_tensor **a) { return bg_tn_sub(a[0], a[1]); }
static bg_tensor *f_mul(bg_tensor **a) { return bg_tn_mul(a[0], a[1]); }
static bg_tensor *f_div(bg_tensor **a) { return bg_tn_div(a[0], a[1]); }
static bg_tensor *f_maximum(bg_tensor **a) { return bg_tn_maximum(a[0], a[1]); }
static bg_tensor *f_neg(bg_tensor **a) { return bg_tn_neg(a[0]); }
static bg_tensor *f_addc(bg_tensor **a) { return bg_tn_mulc(bg_tn_addc(a[0], 3.0), -2.5); }
static bg_tensor *f_exp(bg_tensor **a) { return bg_tn_exp(a[0]); }
static bg_tensor *f_log(bg_tensor **a) { return bg_tn_log(a[0]); }
static bg_tensor *f_exp2(bg_tensor **a) { return bg_tn_exp2(a[0]); }
static bg_tensor *f_log2(bg_tensor **a) { return bg_tn_log2(a[0]); }
static bg_tensor *f_sqrt(bg_tensor **a) { return bg_tn_sqrt(a[0]); }
static bg_tensor *f_recip(bg_tensor **a) { return bg_tn_reciprocal(a[0]); }
static bg_tensor *f_sin(bg_tensor **a) { return bg_tn_sin(a[0]); }
static bg_tensor *f_relu(bg_tensor **a) { return bg_tn_relu(a[0]); }
static bg_tensor *f_elu(bg_tensor **a) { return bg_tn_elu(a[0], 0.7); }
static bg_tensor *f_where(bg_tensor **a) { return bg_tn_where(bg_tn_lt(a[0], a[1]), bg_tn_mul(a[0], a[0]), bg_tn_mulc(a[1], 3)); }
static bg_tensor *f_sum1(bg_tensor **a) { return bg_tn_sum(a[0], 1u << 1, false); }
static bg_tensor *f_sum_keep(bg_tensor **a) { return bg_tn_sum(a[0], 5u, true); }
static bg_tensor *f_max1(bg_tensor **a) { return bg_tn_max(a[0], 1u << 1, false); }
static bg_tensor *f_max_all(bg_tensor **a) { return bg_tn_max(a[0], BG_ALL_AXES, false); }
static bg_tensor *f_mean(bg_tensor **a) { return bg_tn_mean(a[0], 1u, false); }
static bg_tensor *f_reshape(bg_tensor **a) {
  const int64_t s[] = {3, -1};
  return bg_tn_mul(bg_tn_reshape(a[0], 2, s), bg_tn_reshape(a[0], 2, s));
}
static bg_tensor *f_permute(bg_tensor **a) {
  static const unsigned o[] = {2, 0, 1};
  return bg_tn_mul(bg_tn_permute(a[0], o), bg_tn_permute(a[0], o));
}
static bg_tensor *f_expand(bg_tensor **a) {
  const int64_t s[] = {4, 3, 5};
  return bg_tn_mul(bg_tn_expand(a[0], 3, s), bg_tn_expand(a[0], 3, s));
}
static bg_tensor *f_pad(bg_tensor **a) {
  const int64_t p[2][2] = {{1, 2}, {0, 3}};
  return bg_tn_exp(bg_tn_pad(a[0], p));
}
static bg_tensor *f_shrink(bg_tensor **a) {
  const int64_t b[2][2] = {{1, 3}, {2, 5}};
  return bg_tn_exp(bg_tn_shrink(a[0], b));
}
static bg_tensor *f_flip(bg_tensor **a) { return bg_tn_mul(bg_tn_flip(a[0], 1u), a[0]); }
static bg_tensor *f_cat(bg_tensor **a) {
  bg_tensor *p[2] = {a[0], bg_tn_exp(a[1])};
  return bg_tn_cat(p, 2, 1);
}
static bg_tensor *f_contiguous(bg_tensor **a) { return bg_tn_mul(bg_tn_contiguous(bg_tn_exp(a[0])), a[0]); }
static bg_tensor *f_matmul(bg_tensor **a) { return bg_tn_matmul(a[0], a[1]); }
static bg_tensor *f_log_softmax(bg_tensor **a) { return bg_tn_log_softmax(a[0], 1); }
static bg_tensor *f_conv(bg_tensor **a) { return bg_tn_conv2d(a[0], a[1], a[2], 1, 0); }
static bg_tensor *f_conv_s2p1(bg_tensor **a) { return bg_tn_conv2d(a[0], a[1], a[2], 2, 1); }
static bg_tensor *f_pool(bg_tensor **a) { return bg_tn_max_pool2d(a[0], 2, 0); }
static bg_tensor *f_pool_overlap(bg_tensor **a) { return bg_tn_max_pool2d(a[0], 3, 1); }
static bg_tensor *f_bn(bg_tensor **a) {
  const int64_t s[] = {3};
  bg_tensor *var = bg_tn_addc(bg_tn_mul(a[2], a[2]), 0.5);
  return bg_tn_batchnorm(a[0], a[1], bg_tn_ones(ctx, BG_FLOAT32, 1, s), bg_tn_mulc(a[2], 0.3), var, 1e-5);
}
static bg_tensor *f_linear(bg_tensor **a) { return bg_tn_linear(a[0], a[1], a[2]); }

#define IN1(n0, gen) {1, {n0}, gen}
#define IN2(n0, n1, gen) {2, {n0, n1}, gen}
#define IN3(n0, n1, n2, gen) {3, {n0, n1, n2}, gen}
#define IN4(n0, n1, n2, n3, gen) {4, {n0, n1, n2, n3}, gen}

static const gcase elementwise[] = {
  {"add", f_add, 2, {IN2(2, 3, G_UNIFORM), IN2(2, 3, G_UNIFORM)}, T_SMOOTH},
  {"add broadcast", f_add, 2, {IN2(3, 1, G_UNIFORM), IN2(1, 4, G_UNIFORM)}, T_SMOOTH},
  {"sub broadcast", f_sub, 2, {IN2(2, 3, G_UNIFORM), IN1(3, G_UNIFORM)}, T_SMOOTH},
  {"mul", f_mul, 2, {IN2(2, 3, G_UNIFORM), IN2(2, 3, G_UNIFORM)}, T_SMOOTH},
  {"div", f_div, 2, {IN2(2, 3, G_UNIFORM), IN2(2, 3, G_POSITIVE)}, T_TRANS},
  {"maximum", f_maximum, 2, {IN2(2, 3, G_SPACED), IN2(2, 3, G_SPACED)}, T_SMOOTH},
  {"neg", f_neg, 1, {IN2(2, 3, G_UNIFORM)}, T_SMOOTH},
  {"addc mulc", f_addc, 1, {IN2(2, 3, G_UNIFORM)}, T_SMOOTH},
  {"exp", f_exp, 1, {IN2(2, 3, G_UNIFORM)}, T_TRANS},
  {"log", f_log, 1, {IN2(2, 3, G_POSITIVE)}, T_TRANS},
  {"exp2", f_exp2, 1, {IN2(2, 3, G_UNIFORM)}, T_TRANS},
  {"log2", f_log2, 1, {IN2(2, 3, G_POSITIVE)}, T_TRANS},
  {"sqrt", f_sqrt, 1, {IN2(2, 3, G_POSITIVE)}, T_TRANS},
  {"reciprocal", f_recip, 1, {IN2(2, 3, G_POSITIVE)}, T_TRANS},
  {"sin", f_sin, 1, {IN2(2, 3, G_UNIFORM)}, T_TRANS},
  {"relu", f_relu, 1, {IN2(3, 4, G_SPACED)}, T_SMOOTH},
  {"elu", f_elu, 1, {IN2(3, 4, G_SPACED)}, T_TRANS},
  {"where", f_where, 2, {IN2(2, 3, G_SPACED), IN2(2, 3, G_SPACED)}, T_SMOOTH},
};

static const gcase reductions[] = {
  {"sum axis 1", f_sum1, 1, {IN3(2, 3, 4, G_UNIFORM)}, T_SMOOTH},
  {"sum axes 0,2 keepdim", f_sum_keep, 1, {IN3(2, 3, 4, G_UNIFORM)}, T_SMOOTH},
  {"max axis 1", f_max1, 1, {IN3(2, 3, 4, G_SPACED)}, T_SMOOTH},
  {"max all", f_max_all, 1, {IN2(3, 4, G_SPACED)}, T_SMOOTH},
  {"mean axis 0", f_mean, 1, {IN2(3, 4, G_UNIFORM)}, T_SMOOTH},
  {"log_softmax", f_log_softmax, 1, {IN2(2, 5, G_UNIFORM)}, T_TRANS},
};

static const gcase movement[] = {
  {"reshape", f_reshape, 1, {IN2(2, 6, G_UNIFORM)}, T_SMOOTH},
  {"permute", f_permute, 1, {IN3(2, 3, 4, G_UNIFORM)}, T_SMOOTH},
  {"expand", f_expand, 1, {IN3(4, 1, 5, G_UNIFORM)}, T_SMOOTH},
  {"pad", f_pad, 1, {IN2(2, 3, G_UNIFORM)}, T_TRANS},
  {"shrink", f_shrink, 1, {IN2(4, 5, G_UNIFORM)}, T_TRANS},
  {"flip", f_flip, 1, {IN2(3, 4, G_UNIFORM)}, T_SMOOTH},
  {"cat", f_cat, 2, {IN2(2, 3, G_UNIFORM), IN2(2, 2, G_UNIFORM)}, T_TRANS},
  {"contiguous", f_contiguous, 1, {IN2(2, 3, G_UNIFORM)}, T_TRANS},
  {"matmul", f_matmul, 2, {IN2(3, 4, G_UNIFORM), IN2(4, 2, G_UNIFORM)}, T_SMOOTH},
  {"matmul vector", f_matmul, 2, {IN1(4, G_UNIFORM), IN2(4, 3, G_UNIFORM)}, T_SMOOTH},
};

static const gcase layers[] = {
  {"conv2d", f_conv, 3, {IN4(2, 2, 5, 5, G_UNIFORM), IN4(3, 2, 3, 3, G_UNIFORM), IN1(3, G_UNIFORM)}, T_NN},
  {"conv2d stride 2 pad 1", f_conv_s2p1, 3, {IN4(1, 2, 5, 5, G_UNIFORM), IN4(2, 2, 3, 3, G_UNIFORM), IN1(2, G_UNIFORM)}, T_NN},
  {"max_pool2d", f_pool, 1, {IN4(1, 2, 4, 5, G_SPACED)}, T_SMOOTH},
  {"max_pool2d 3x3 stride 1", f_pool_overlap, 1, {IN4(1, 1, 5, 4, G_SPACED)}, T_SMOOTH},
  {"batchnorm", f_bn, 3, {IN4(2, 3, 2, 2, G_UNIFORM), IN1(3, G_UNIFORM), IN1(3, G_UNIFORM)}, T_NN},
  {"linear", f_linear, 3, {IN2(3, 4, G_UNIFORM), IN2(2, 4, G_UNIFORM), IN1(2, G_UNIFORM)}, T_SMOOTH},
};

#define RUN_TABLE(tbl)                                         \
  for (size_t i = 0; i < sizeof(tbl) / sizeof((tbl)[0]); i++) \
  check_fd(&(tbl)[i])

START_TEST(fd_elementwise) { RUN_TABLE(elementwise); }
END_TEST
START_TEST(fd_reductions) { RUN_TABLE(reductions); }
END_TEST
START_TEST(fd_movement) { RUN_TABLE(movement); }
END_TEST
START_TEST(fd_layers) { RUN_TABLE(layers); }
END_TEST

/* ---------------- references, shapes, ties, bookkeeping, errors ---------------- */

static const int32_t ce_labels[3] = {4, 0, 2};
static bg_tensor *f_cross_entropy(bg_tensor **a) {
  const int64_t s[] = {3};
  return bg_tn_sparse_cross_entropy(a[0], bg_tn_from(ctx, BG_INT32, 1, s, ce_labels));
}
static const gcase cross_entropy_case = {"sparse_cross_entropy", f_cross_entropy, 1, {IN2(3, 5, G_UNIFORM)}, T_TRANS};

START_TEST(fd_cross_entropy) {
  check_fd(&cross_entropy_case);
  /* the value against log-softmax in double */
  float x[15];
  for (int i = 0; i < 15; i++) x[i] = (float)(4 * rnd() - 2);
  const int64_t sh[] = {3, 5};
  bg_tensor *in = bg_tn_from(ctx, BG_FLOAT32, 2, sh, x);
  double want = 0;
  for (int r = 0; r < 3; r++) {
    double m = -INFINITY, z = 0;
    for (int j = 0; j < 5; j++) m = fmax(m, x[r * 5 + j]);
    for (int j = 0; j < 5; j++) z += exp(x[r * 5 + j] - m);
    want -= (x[r * 5 + ce_labels[r]] - m - log(z)) / 3.0;
  }
  double got = read_scalar(f_cross_entropy(&in));
  ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "cross entropy %.7g, reference %.7g", got, want);
}
END_TEST

/* A parameter from host data. */
static bg_tensor *param(unsigned nd, const int64_t *sh, const float *v) {
  return bg_tn_requires_grad(bg_tn_from(ctx, BG_FLOAT32, nd, sh, v), true);
}

static float *uniform(int64_t n, double lo, double hi) {
  float *v = malloc((size_t)n * sizeof *v + 4);
  ck_assert(v);
  for (int64_t i = 0; i < n; i++) v[i] = (float)(lo + (hi - lo) * rnd());
  return v;
}

/* sum(y * R) for a random R (returned in *r, host copy). */
static bg_tensor *weighted_sum(bg_tensor *y, float **r) {
  *r = uniform(bg_tn_numel(y), 0.5, 1.5);
  return bg_tn_sum(bg_tn_mul(y, bg_tn_from(ctx, BG_FLOAT32, bg_tn_ndim(y), bg_tn_shape(y), *r)), BG_ALL_AXES, false);
}

static void expect_grad(bg_tensor *p, const double *want, double abs, double rel, const char *what) {
  bg_tensor *g = grad_of(p);
  ck_assert_msg(g != NULL, "%s: no gradient reached the parameter", what);
  expect_shape(g, bg_tn_ndim(p), bg_tn_shape(p), what);
  float *got = read_all(g);
  expect_close(got, want, bg_tn_numel(p), abs, rel, what);
  free(got);
}

START_TEST(cast_gradient) {
  const int64_t sh[] = {2, 3};
  float *x = uniform(6, -1, 1), *r;
  bg_tensor *p = param(2, sh, x);
  bg_tensor *y = bg_tn_cast(bg_tn_mulc(bg_tn_cast(p, BG_FLOAT16), 2), BG_FLOAT32);
  ck_assert(bg_tn_backward(weighted_sum(y, &r)) == 0);
  double want[6];
  for (int i = 0; i < 6; i++) want[i] = 2.0 * r[i];
  expect_grad(p, want, 1e-6, 2e-3, "float32 -> float16 -> float32 cast"); /* half rounding of the gradient */
  free(x), free(r);
}
END_TEST

START_TEST(broadcast_gradient_shapes) {
  const int64_t sx[] = {3, 1}, sz[] = {4};
  float *x = uniform(3, -1, 1), *z = uniform(4, -1, 1), *r;
  bg_tensor *px = param(2, sx, x), *pz = param(1, sz, z);
  ck_assert(bg_tn_backward(weighted_sum(bg_tn_add(px, pz), &r)) == 0);
  double gx[3] = {0}, gz[4] = {0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) gx[i] += r[i * 4 + j], gz[j] += r[i * 4 + j];
  expect_grad(px, gx, 1e-5, 1e-6, "grad of the (3,1) operand");
  expect_grad(pz, gz, 1e-5, 1e-6, "grad of the (4) operand");
  free(x), free(z), free(r);
}
END_TEST

/* tinygrad's tie rules: a reduce max shares the gradient evenly among equal maxima, a binary max
 * gives each side half on a tie. */
START_TEST(max_ties) {
  const int64_t s4[] = {4}, s23[] = {2, 3}, s3[] = {3};
  const float x[] = {1, 3, 3, 2}, y[] = {2, 2, 2, 1, 5, 0}, a[] = {1, 2, 3}, b[] = {1, 3, 2};
  bg_tensor *px = param(1, s4, x), *py = param(2, s23, y), *pa = param(1, s3, a), *pb = param(1, s3, b);
  bg_tensor *loss = bg_tn_add(bg_tn_max(px, BG_ALL_AXES, false), bg_tn_sum(bg_tn_max(py, 2u, false), BG_ALL_AXES, false));
  loss = bg_tn_add(loss, bg_tn_sum(bg_tn_maximum(pa, pb), BG_ALL_AXES, false));
  ck_assert_msg(bg_tn_backward(loss) == 0, "backward: %s", bg_last_error());
  const double gx[] = {0, 0.5, 0.5, 0}, gy[] = {1.0 / 3, 1.0 / 3, 1.0 / 3, 0, 1, 0}, ga[] = {0.5, 0, 1}, gb[] = {0.5, 1, 0};
  expect_grad(px, gx, 1e-6, 1e-6, "max of (1,3,3,2)");
  expect_grad(py, gy, 1e-6, 1e-6, "max over axis 1 of ((2,2,2),(1,5,0))");
  expect_grad(pa, ga, 1e-6, 1e-6, "maximum: first operand");
  expect_grad(pb, gb, 1e-6, 1e-6, "maximum: second operand");
}
END_TEST

START_TEST(matmul_reference) {
  enum { N = 5, K = 7, M = 3 };
  const int64_t sa[] = {N, K}, sb[] = {K, M};
  float *a = uniform(N * K, -1, 1), *b = uniform(K * M, -1, 1), *r;
  bg_tensor *pa = param(2, sa, a), *pb = param(2, sb, b);
  ck_assert(bg_tn_backward(weighted_sum(bg_tn_matmul(pa, pb), &r)) == 0);
  double ga[N * K] = {0}, gb[K * M] = {0};
  for (int i = 0; i < N; i++)
    for (int k = 0; k < K; k++)
      for (int j = 0; j < M; j++) {
        ga[i * K + k] += (double)r[i * M + j] * b[k * M + j]; /* R @ B^T */
        gb[k * M + j] += (double)a[i * K + k] * r[i * M + j]; /* A^T @ R */
      }
  expect_grad(pa, ga, 1e-5, 1e-4, "matmul: grad of A");
  expect_grad(pb, gb, 1e-5, 1e-4, "matmul: grad of B");
  free(a), free(b), free(r);
}
END_TEST

START_TEST(conv2d_reference) {
  enum { N = 2, CI = 3, H = 7, W = 6, CO = 4, KH = 3, KW = 2, S = 2, P = 1 };
  enum { OH = (H + 2 * P - KH) / S + 1, OW = (W + 2 * P - KW) / S + 1 };
  const int64_t sx[] = {N, CI, H, W}, sw[] = {CO, CI, KH, KW}, sb[] = {CO};
  float *x = uniform(N * CI * H * W, -1, 1), *w = uniform(CO * CI * KH * KW, -1, 1), *b = uniform(CO, -1, 1), *r;
  bg_tensor *px = param(4, sx, x), *pw = param(4, sw, w), *pb = param(1, sb, b);
  bg_tensor *y = bg_tn_conv2d(px, pw, pb, S, P);
  const int64_t so[] = {N, CO, OH, OW};
  expect_shape(y, 4, so, "conv2d output");
  ck_assert(bg_tn_backward(weighted_sum(y, &r)) == 0);
  static double out[N * CO * OH * OW], gx[N * CI * H * W], gw[CO * CI * KH * KW], gb[CO];
  memset(gx, 0, sizeof gx), memset(gw, 0, sizeof gw), memset(gb, 0, sizeof gb);
  for (int n = 0; n < N; n++)
    for (int o = 0; o < CO; o++)
      for (int oy = 0; oy < OH; oy++)
        for (int ox = 0; ox < OW; ox++) {
          int oi = ((n * CO + o) * OH + oy) * OW + ox;
          double g = r[oi], acc = b[o];
          gb[o] += g;
          for (int c = 0; c < CI; c++)
            for (int ky = 0; ky < KH; ky++)
              for (int kx = 0; kx < KW; kx++) {
                int iy = oy * S + ky - P, ix = ox * S + kx - P;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                int xi = ((n * CI + c) * H + iy) * W + ix, wi = ((o * CI + c) * KH + ky) * KW + kx;
                acc += (double)x[xi] * w[wi];
                gw[wi] += g * x[xi];
                gx[xi] += g * w[wi];
              }
          out[oi] = acc;
        }
  float *got = read_all(y);
  expect_close(got, out, N * CO * OH * OW, 1e-5, 1e-4, "conv2d stride 2 padding 1: output");
  free(got);
  expect_grad(px, gx, 1e-5, 1e-4, "conv2d: grad of the input");
  expect_grad(pw, gw, 1e-5, 1e-4, "conv2d: grad of the weight");
  expect_grad(pb, gb, 1e-5, 1e-4, "conv2d: grad of the bias");
  free(x), free(w), free(b), free(r);
}
END_TEST

START_TEST(max_pool2d_reference) {
  enum { N = 2, C = 3, H = 6, W = 7, OH = 3, OW = 3 };
  const input in = IN4(N, C, H, W, G_SPACED);
  float *x = make_data(&in), *r;
  bg_tensor *px = param(4, in.sh, x);
  bg_tensor *y = bg_tn_max_pool2d(px, 2, 0);
  const int64_t so[] = {N, C, OH, OW};
  expect_shape(y, 4, so, "max_pool2d output (odd width cropped)");
  ck_assert(bg_tn_backward(weighted_sum(y, &r)) == 0);
  static double out[N * C * OH * OW], gx[N * C * H * W];
  memset(gx, 0, sizeof gx);
  for (int p = 0; p < N * C; p++)
    for (int oy = 0; oy < OH; oy++)
      for (int ox = 0; ox < OW; ox++) {
        int best = -1;
        for (int ky = 0; ky < 2; ky++)
          for (int kx = 0; kx < 2; kx++) {
            int i = (p * H + 2 * oy + ky) * W + 2 * ox + kx;
            if (best < 0 || x[i] > x[best]) best = i;
          }
        out[(p * OH + oy) * OW + ox] = x[best];
        gx[best] += r[(p * OH + oy) * OW + ox];
      }
  float *got = read_all(y);
  expect_close(got, out, N * C * OH * OW, 0, 0, "max_pool2d output");
  free(got);
  expect_grad(px, gx, 1e-6, 1e-6, "max_pool2d: grad of the input");
  free(x), free(r);
}
END_TEST

START_TEST(batchnorm_reference) {
  enum { N = 2, C = 3, HW = 4 };
  const double eps = 1e-5;
  const int64_t sx[] = {N, C, 2, 2}, sc[] = {C};
  float *x = uniform(N * C * HW, -1, 1), *w = uniform(C, 0.5, 1.5), *b = uniform(C, -1, 1), *m = uniform(C, -0.5, 0.5);
  float *v = uniform(C, 0.5, 1.5), *r;
  bg_tensor *px = param(4, sx, x), *pw = param(1, sc, w), *pb = param(1, sc, b), *pm = param(1, sc, m), *pv = param(1, sc, v);
  ck_assert(bg_tn_backward(weighted_sum(bg_tn_batchnorm(px, pw, pb, pm, pv, eps), &r)) == 0);
  double gx[N * C * HW], gw[C] = {0}, gb[C] = {0}, gm[C] = {0}, gv[C] = {0};
  for (int n = 0; n < N; n++)
    for (int c = 0; c < C; c++) {
      double inv = 1.0 / sqrt(v[c] + eps);
      for (int i = 0; i < HW; i++) {
        int k = (n * C + c) * HW + i;
        double g = r[k], d = x[k] - m[c];
        gx[k] = g * w[c] * inv;
        gw[c] += g * d * inv;
        gb[c] += g;
        gm[c] -= g * w[c] * inv;
        gv[c] += g * d * w[c] * -0.5 * inv * inv * inv;
      }
    }
  expect_grad(px, gx, 1e-5, 1e-4, "batchnorm: grad of the input");
  expect_grad(pw, gw, 1e-5, 1e-4, "batchnorm: grad of the weight");
  expect_grad(pb, gb, 1e-5, 1e-4, "batchnorm: grad of the bias");
  expect_grad(pm, gm, 1e-5, 1e-4, "batchnorm: grad of the mean");
  expect_grad(pv, gv, 1e-5, 1e-4, "batchnorm: grad of the variance");
  free(x), free(w), free(b), free(m), free(v), free(r);
}
END_TEST

/* As tinygrad, a second backward adds to the gradient; zero_grad starts over. */
START_TEST(accumulation) {
  const int64_t sh[] = {5};
  float *x = uniform(5, -1, 1);
  bg_tensor *p = param(1, sh, x);
  bg_tensor *loss = bg_tn_sum(bg_tn_mul(p, p), BG_ALL_AXES, false);
  ck_assert(bg_tn_backward(loss) == 0);
  ck_assert(bg_tn_backward(loss) == 0);
  double want[5];
  for (int i = 0; i < 5; i++) want[i] = 4.0 * x[i];
  expect_grad(p, want, 1e-6, 1e-6, "two backward calls");
  bg_tn_zero_grad(p);
  ck_assert_msg(grad_of(p) == NULL, "zero_grad leaves no gradient");
  ck_assert(bg_tn_backward(loss) == 0);
  for (int i = 0; i < 5; i++) want[i] = 2.0 * x[i];
  expect_grad(p, want, 1e-6, 1e-6, "backward after zero_grad");
  free(x);
}
END_TEST

/* The loss may be read before backward, and a lazy (contiguous) parameter realized by that read is
 * still found: the walk follows the graph the loss was built from, parameters match by buffer. */
START_TEST(realized_loss_and_params) {
  const int64_t sh[] = {2, 3};
  bg_tensor *p = bg_tn_requires_grad(bg_tn_contiguous(bg_tn_mulc(bg_tn_rand(ctx, 2, sh), 2)), true);
  bg_tensor *loss = bg_tn_sum(bg_tn_exp(p), BG_ALL_AXES, false);
  double l = read_scalar(loss);
  ck_assert_msg(bg_tn_backward(loss) == 0, "backward after reading the loss: %s", bg_last_error());
  float *pv = read_all(p);
  double want[6], sum = 0;
  for (int i = 0; i < 6; i++) sum += want[i] = exp(pv[i]);
  ck_assert_msg(fabs(l - sum) <= 1e-5 * sum, "loss %.7g, reference %.7g", l, sum);
  expect_grad(p, want, 1e-6, 1e-5, "grad of exp after the loss was realized");
  free(pv);
}
END_TEST

/* Gradients are lazy: realized with the forward, they share its scheduler (exp(x) is computed for
 * the loss and for the gradient inside the fused kernels, no extra kernel per op). */
START_TEST(grads_fuse_with_forward) {
  const int64_t sh[] = {4, 4};
  float *x = uniform(16, -1, 1);
  bg_tensor *p = param(2, sh, x);
  bg_tensor *loss = bg_tn_sum(bg_tn_exp(p), BG_ALL_AXES, false);
  ck_assert(bg_tn_backward(loss) == 0);
  bg_tensor *both[2] = {loss, grad_of(p)};
  ck_assert_msg(bg_tn_realize(both, 2) == 0, "realize: %s", bg_last_error());
  bg_tstats st;
  bg_tctx_stats(ctx, &st);
  ck_assert_msg(st.last_nkernels <= 2, "loss and gradient of sum(exp(x)) took %u kernels, expected at most 2", st.last_nkernels);
  double want[16];
  for (int i = 0; i < 16; i++) want[i] = exp(x[i]);
  expect_grad(p, want, 1e-6, 1e-5, "grad of sum(exp(x))");
  free(x);
}
END_TEST

START_TEST(sgd_step) {
  const int64_t sh[] = {5};
  float *w = uniform(5, -1, 1), *t = uniform(5, -1, 1);
  bg_tensor *p = param(1, sh, w), *old = p;
  bg_tensor *d = bg_tn_sub(p, bg_tn_from(ctx, BG_FLOAT32, 1, sh, t));
  ck_assert(bg_tn_backward(bg_tn_sum(bg_tn_mul(d, d), BG_ALL_AXES, false)) == 0);
  ck_assert_msg(bg_tn_sgd_step(&p, 1, 0.1) == 0, "sgd_step: %s", bg_last_error());
  ck_assert_msg(p != old && bg_tn_requires_grad_get(p) && !bg_tn_requires_grad_get(old),
                "the step hands back a new parameter that requires grad; the old one stops");
  float *got = read_all(p);
  double want[5];
  for (int i = 0; i < 5; i++) want[i] = w[i] - 0.1 * 2.0 * (w[i] - t[i]);
  expect_close(got, want, 5, 1e-6, 1e-6, "w - lr * 2 (w - t)");
  free(got), free(w), free(t);
}
END_TEST

static void expect_error_msg(const char *what, const char *const *parts) {
  const char *e = bg_tctx_error(ctx);
  ck_assert_msg(e != NULL, "%s: no error latched", what);
  for (unsigned i = 0; parts[i]; i++) ck_assert_msg(strstr(e, parts[i]) != NULL, "%s: error '%s' does not name '%s'", what, e, parts[i]);
  bg_tctx_clear_error(ctx);
}

START_TEST(errors) {
  const int64_t sh[] = {2, 3};
  float *x = uniform(6, -1, 1);
  bg_tensor *plain = bg_tn_from(ctx, BG_FLOAT32, 2, sh, x);
  ck_assert(bg_tn_backward(bg_tn_sum(plain, BG_ALL_AXES, false)) == -BG_EINVAL);
  expect_error_msg("backward without parameters", (const char *const[]){"backward", "requires grad", NULL});

  bg_tensor *g = plain;
  ck_assert_int_eq(bg_tn_grad(plain, &g), -BG_EINVAL);
  ck_assert_msg(g == plain, "a failed grad left its output alone");
  ck_assert_msg(strstr(bg_last_error(), "does not require grad") != NULL, "grad: bg_last_error() is '%s'",
                bg_last_error());
  expect_error_msg("grad without requires_grad", (const char *const[]){"grad", "(2,3)", "does not require grad", NULL});

  const int32_t iv[6] = {1, 2, 3, 4, 5, 6};
  bg_tn_requires_grad(bg_tn_from(ctx, BG_INT32, 2, sh, iv), true);
  expect_error_msg("requires_grad on int32", (const char *const[]){"requires_grad", "(2,3)", "int32", NULL});

  bg_tensor *p = param(2, sh, x);
  ck_assert(bg_tn_backward(bg_tn_mulc(p, 2)) == -BG_EINVAL);
  expect_error_msg("backward of a non-scalar", (const char *const[]){"backward", "(2,3)", "scalar", NULL});

  ck_assert(bg_tn_backward(bg_tn_sum(plain, BG_ALL_AXES, false)) == -BG_EINVAL);
  expect_error_msg("loss without the parameter", (const char *const[]){"backward", "does not depend", NULL});
  ck_assert_msg(grad_of(p) == NULL, "no gradient before a backward reached the parameter");

  bg_tensor *bad = bg_tn_conv2d(p, p, NULL, 1, 0);
  ck_assert(bg_tn_ndim(bad) == 0);
  expect_error_msg("conv2d of 2-D tensors", (const char *const[]){"conv2d", "(2,3)", "(N,Cin,H,W)", NULL});
  const int64_t s4[] = {1, 1, 2, 2};
  bg_tn_max_pool2d(bg_tn_ones(ctx, BG_FLOAT32, 4, s4), 3, 0);
  expect_error_msg("max_pool2d larger than the input", (const char *const[]){"max_pool2d", "kernel 3x3", NULL});
  free(x);
}
END_TEST

/* ---------------- fixture and suite ---------------- */

static void setup(void) {
  rng_state = 0x9e3779b97f4a7c15ull;
  ctx = NULL;
  /* DEV picks the device (the suite also runs on the emulated AMD GPU); CPU by default. */
  const char *dev = getenv("DEV") ? getenv("DEV") : "CPU";
  ck_assert_msg(bg_tctx_open(dev, &ctx) == 0 && ctx, "bg_tctx_open(%s): %s", dev, bg_last_error());
}

static void teardown(void) {
  if (ctx) bg_tctx_close(ctx);
  ctx = NULL;
}

static TCase *tcase(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  suite_add_tcase(s, tc);
  return tc;
}

int main(void) {
  Suite *s = suite_create("tensor-autograd");
  tcase_add_test(tcase(s, "fd_elementwise"), fd_elementwise);
  tcase_add_test(tcase(s, "fd_reductions"), fd_reductions);
  tcase_add_test(tcase(s, "fd_movement"), fd_movement);
  tcase_add_test(tcase(s, "fd_layers"), fd_layers);
  tcase_add_test(tcase(s, "fd_cross_entropy"), fd_cross_entropy);
  tcase_add_test(tcase(s, "cast_gradient"), cast_gradient);
  tcase_add_test(tcase(s, "broadcast_gradient_shapes"), broadcast_gradient_shapes);
  tcase_add_test(tcase(s, "max_ties"), max_ties);
  tcase_add_test(tcase(s, "matmul_reference"), matmul_reference);
  tcase_add_test(tcase(s, "conv2d_reference"), conv2d_reference);
  tcase_add_test(tcase(s, "max_pool2d_reference"), max_pool2d_reference);
  tcase_add_test(tcase(s, "batchnorm_reference"), batchnorm_reference);
  tcase_add_test(tcase(s, "accumulation"), accumulation);
  tcase_add_test(tcase(s, "realized_loss_and_params"), realized_loss_and_params);
  tcase_add_test(tcase(s, "grads_fuse_with_forward"), grads_fuse_with_forward);
  tcase_add_test(tcase(s, "sgd_step"), sgd_step);
  tcase_add_test(tcase(s, "errors"), errors);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
