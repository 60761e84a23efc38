/* tests/unit/tensor/test_dtypes.c: float64 and bfloat16 through the tensor layer on the device DEV names
 * (CPU by default; MOCKPCI+AMD runs the LLVM AMDGPU kernels on the emulated RDNA3 core), tinygrad's
 * promotion lattice, casts between every pair of dtypes, bfloat16 bit patterns across the API, and the
 * float64 error of a device that cannot run it (DEV=MOCKNVK+NV: PTX has no float64 exp2/log2/sin).
 *
 * References are double-precision C on the values the device holds: float64 inputs as they are,
 * bfloat16 inputs after rounding to bfloat16 with this file's own converter (not util/half.h).
 * Tolerances: float64 arithmetic a few ulp (rel 4e-16: + - * / sqrt are correctly rounded, the AMD
 * division and square-root sequences within an ulp), float64 transcendentals rel 1e-14 (exp and log
 * carry the rounding of x/ln2); bfloat16 one rounding of an 8-bit significand (rel 2^-8), two for
 * transcendentals computed in float32 from a rounded product. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "baregpu/tensor.h"
#include "tctx_fixture.h"

/* ---- host bfloat16, written from the format's definition: the top 16 bits of a float32, rounded to
 * nearest even on the 16 dropped bits; NaN stays NaN (quiet). ---- */
static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  uint32_t low = u & 0xffffu, keep = u >> 16;
  if (low > 0x8000u || (low == 0x8000u && (keep & 1u))) keep++;
  return (uint16_t)keep;
}
static double from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
/* IEEE binary16 -> double, for the float16 casts. */
static double from_f16(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return h & 0x8000 ? -v : v;
}
static uint16_t to_f16_exact(double v) {   /* only for values float16 holds exactly (the cast tests) */
  if (v == 0) return signbit(v) ? 0x8000 : 0;
  int e;
  double m = frexp(fabs(v), &e);   /* v = m 2^e, m in [0.5, 1) */
  uint16_t bits = (uint16_t)(((e + 14) << 10) | ((unsigned)(m * 2048) - 1024));
  return v < 0 ? (uint16_t)(bits | 0x8000) : bits;
}

/* ---- tensors from doubles and back ---- */

static const enum bg_dtype ALL[] = {BG_BOOL,   BG_INT8,    BG_UINT8,   BG_INT16,  BG_UINT16,  BG_INT32,   BG_UINT32,
                                    BG_INT64, BG_UINT64, BG_FLOAT16, BG_FLOAT32, BG_FLOAT64, BG_BFLOAT16};
enum { NALL = sizeof ALL / sizeof ALL[0], MAXN = 512 };

/* v[i] stored as dtype t into buf (values representable in t, or rounded for bfloat16). */
static void pack(enum bg_dtype t, const double *v, int64_t n, void *buf) {
  for (int64_t i = 0; i < n; i++) {
    char *p = (char *)buf + i * bg_dtype_size(t);
    switch (t) {
    case BG_BOOL: *(uint8_t *)p = v[i] != 0; break;
    case BG_INT8: *(int8_t *)p = (int8_t)v[i]; break;
    case BG_UINT8: *(uint8_t *)p = (uint8_t)v[i]; break;
    case BG_INT16: { int16_t x = (int16_t)v[i]; memcpy(p, &x, 2); break; }
    case BG_UINT16: { uint16_t x = (uint16_t)v[i]; memcpy(p, &x, 2); break; }
    case BG_INT32: { int32_t x = (int32_t)v[i]; memcpy(p, &x, 4); break; }
    case BG_UINT32: { uint32_t x = (uint32_t)v[i]; memcpy(p, &x, 4); break; }
    case BG_INT64: { int64_t x = (int64_t)v[i]; memcpy(p, &x, 8); break; }
    case BG_UINT64: { uint64_t x = (uint64_t)v[i]; memcpy(p, &x, 8); break; }
    case BG_FLOAT16: { uint16_t x = to_f16_exact(v[i]); memcpy(p, &x, 2); break; }
    case BG_FLOAT32: { float x = (float)v[i]; memcpy(p, &x, 4); break; }
    case BG_FLOAT64: memcpy(p, &v[i], 8); break;
    case BG_BFLOAT16: { uint16_t x = to_bf16((float)v[i]); memcpy(p, &x, 2); break; }
    }
  }
}

static double unpack1(enum bg_dtype t, const void *p) {
  switch (t) {
  case BG_BOOL: return *(const uint8_t *)p;
  case BG_INT8: return *(const int8_t *)p;
  case BG_UINT8: return *(const uint8_t *)p;
  case BG_INT16: { int16_t x; memcpy(&x, p, 2); return x; }
  case BG_UINT16: { uint16_t x; memcpy(&x, p, 2); return x; }
  case BG_INT32: { int32_t x; memcpy(&x, p, 4); return x; }
  case BG_UINT32: { uint32_t x; memcpy(&x, p, 4); return x; }
  case BG_INT64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
  case BG_UINT64: { uint64_t x; memcpy(&x, p, 8); return (double)x; }
  case BG_FLOAT16: { uint16_t x; memcpy(&x, p, 2); return from_f16(x); }
  case BG_FLOAT32: { float x; memcpy(&x, p, 4); return x; }
  case BG_FLOAT64: { double x; memcpy(&x, p, 8); return x; }
  case BG_BFLOAT16: { uint16_t x; memcpy(&x, p, 2); return from_bf16(x); }
  }
  return NAN;
}

/* A tensor of dtype t from v (rounded in place to what t holds, so references use the stored values). */
static bg_tensor *mk(enum bg_dtype t, unsigned ndim, const int64_t *shape, double *v) {
  int64_t n = 1;
  for (unsigned i = 0; i < ndim; i++) n *= shape[i];
  static unsigned char buf[MAXN * 8];
  ck_assert(n <= MAXN);
  pack(t, v, n, buf);
  for (int64_t i = 0; i < n; i++) v[i] = unpack1(t, buf + i * bg_dtype_size(t));
  bg_tensor *x = bg_tn_from(c, t, ndim, shape, buf);
  ck_assert_msg(bg_tn_dtype(x) == t, "from %s: %s", bg_dtype_name(t), bg_tctx_error(c));
  return x;
}

/* Realize x, check its dtype and element count, read it into out as doubles. */
static void rd(bg_tensor *x, enum bg_dtype want, int64_t n, double *out) {
  ck_assert_msg(!bg_tctx_error(c), "op: %s", bg_tctx_error(c));
  ck_assert_msg(bg_tn_dtype(x) == want, "dtype %s, want %s", bg_dtype_name(bg_tn_dtype(x)), bg_dtype_name(want));
  ck_assert_int_eq(bg_tn_numel(x), n);
  static unsigned char buf[MAXN * 8];
  OK(bg_tn_read(x, buf, sizeof buf));
  for (int64_t i = 0; i < n; i++) out[i] = unpack1(want, buf + i * bg_dtype_size(want));
}

static unsigned rng = 12345;
static double urand(double lo, double hi) {
  rng = rng * 1103515245u + 12345u;
  return lo + (hi - lo) * ((rng >> 8) & 0xffffff) / 16777216.0;
}
static void fill(double *v, int64_t n, double lo, double hi) {
  for (int64_t i = 0; i < n; i++) v[i] = urand(lo, hi);
  if (lo < 0 && hi > 0) v[0] = 0.0;
}

/* |got - want| <= abs + rel * scale; NaNs must match; infinities must be equal. */
static void close_(const char *what, const double *got, const double *want, const double *scale, int64_t n,
                   double rel, double abs_) {
  for (int64_t i = 0; i < n; i++) {
    double g = got[i], w = want[i], s = scale ? scale[i] : fabs(w);
    if (isnan(w) || isnan(g)) {
      ck_assert_msg(isnan(w) && isnan(g), "%s[%lld]: got %.17g want %.17g", what, (long long)i, g, w);
      continue;
    }
    if (isinf(w) || isinf(g)) {
      ck_assert_msg(g == w, "%s[%lld]: got %.17g want %.17g", what, (long long)i, g, w);
      continue;
    }
    ck_assert_msg(fabs(g - w) <= abs_ + rel * s, "%s[%lld]: got %.17g want %.17g (diff %.3g, tol %.3g)", what,
                  (long long)i, g, w, fabs(g - w), abs_ + rel * s);
  }
}

/* ---- names, sizes, promotion ---- */

START_TEST(test_names_sizes) {
  ck_assert_str_eq(bg_dtype_name(BG_FLOAT64), "float64");
  ck_assert_str_eq(bg_dtype_name(BG_BFLOAT16), "bfloat16");
  ck_assert_uint_eq(bg_dtype_size(BG_FLOAT64), 8);
  ck_assert_uint_eq(bg_dtype_size(BG_BFLOAT16), 2);
  ck_assert_str_eq(bg_dtype_name((enum bg_dtype)(BG_BFLOAT16 + 1)), "invalid");
  ck_assert_uint_eq(bg_dtype_size((enum bg_dtype)(BG_BFLOAT16 + 1)), 0);
  bg_tensor *bad = bg_tn_zeros(c, (enum bg_dtype)(BG_BFLOAT16 + 1), 0, NULL);
  ck_assert_ptr_nonnull(bad);
  ck_assert_msg(bg_tctx_error(c) && strstr(bg_tctx_error(c), "unknown dtype 13"), "%s", bg_tctx_error(c));
}
END_TEST

/* tinygrad (dtype.py least_upper_dtype over promo_lattice): expected results written out by hand. */
static const struct { enum bg_dtype a, b, r; } PROMO[] = {
    {BG_FLOAT64, BG_FLOAT32, BG_FLOAT64},  {BG_FLOAT32, BG_FLOAT64, BG_FLOAT64},  {BG_BFLOAT16, BG_FLOAT16, BG_FLOAT32},
    {BG_FLOAT16, BG_BFLOAT16, BG_FLOAT32}, {BG_BFLOAT16, BG_BFLOAT16, BG_BFLOAT16}, {BG_BFLOAT16, BG_FLOAT32, BG_FLOAT32},
    {BG_BFLOAT16, BG_FLOAT64, BG_FLOAT64}, {BG_FLOAT16, BG_FLOAT64, BG_FLOAT64},   {BG_INT32, BG_BFLOAT16, BG_BFLOAT16},
    {BG_INT64, BG_BFLOAT16, BG_BFLOAT16},  {BG_UINT64, BG_BFLOAT16, BG_BFLOAT16}, {BG_BOOL, BG_BFLOAT16, BG_BFLOAT16},
    {BG_UINT8, BG_BFLOAT16, BG_BFLOAT16},  {BG_INT64, BG_FLOAT64, BG_FLOAT64},    {BG_UINT64, BG_FLOAT64, BG_FLOAT64},
    {BG_INT8, BG_FLOAT64, BG_FLOAT64},     {BG_BOOL, BG_FLOAT64, BG_FLOAT64},     {BG_INT64, BG_FLOAT16, BG_FLOAT16},
    {BG_INT32, BG_FLOAT32, BG_FLOAT32},    {BG_INT64, BG_UINT64, BG_FLOAT16},     {BG_UINT32, BG_INT32, BG_INT64},
};

START_TEST(test_promotion) {
  for (unsigned i = 0; i < sizeof PROMO / sizeof PROMO[0]; i++) {
    bg_tensor *x = bg_tn_zeros(c, PROMO[i].a, 0, NULL), *y = bg_tn_ones(c, PROMO[i].b, 0, NULL);
    enum bg_dtype r = bg_tn_dtype(bg_tn_add(x, y));
    ck_assert_msg(r == PROMO[i].r, "%s + %s -> %s, want %s", bg_dtype_name(PROMO[i].a), bg_dtype_name(PROMO[i].b),
                  bg_dtype_name(r), bg_dtype_name(PROMO[i].r));
    ck_assert_int_eq(bg_tn_dtype(bg_tn_where(bg_tn_lt(x, y), x, y)), PROMO[i].r);
  }
  /* the value of a mixed op is computed in the promoted dtype: 1 + 2^-40 needs float64 */
  double a = 1.0, b = 0x1p-40, got;
  OK(bg_tn_item(bg_tn_add(bg_tn_scalar(c, BG_FLOAT32, a), bg_tn_scalar(c, BG_FLOAT64, b)), &got));
  ck_assert_msg(got == 1.0 + 0x1p-40, "float32 1 + float64 2^-40 = %.17g", got);
  /* bfloat16 + float16 in float32: 1 + 2^-10 holds in float16 and float32, not in bfloat16 */
  OK(bg_tn_item(bg_tn_add(bg_tn_scalar(c, BG_BFLOAT16, 1.0), bg_tn_scalar(c, BG_FLOAT16, 0x1p-10)), &got));
  ck_assert_msg(got == 1.0 + 0x1p-10, "bfloat16 1 + float16 2^-10 = %.17g", got);
  /* int / int is float32; float64 / int stays float64 */
  ck_assert_int_eq(bg_tn_dtype(bg_tn_div(bg_tn_ones(c, BG_INT64, 0, NULL), bg_tn_ones(c, BG_INT32, 0, NULL))), BG_FLOAT32);
  ck_assert_int_eq(bg_tn_dtype(bg_tn_div(bg_tn_ones(c, BG_FLOAT64, 0, NULL), bg_tn_ones(c, BG_INT32, 0, NULL))), BG_FLOAT64);
  /* transcendentals keep float64 and bfloat16 */
  ck_assert_int_eq(bg_tn_dtype(bg_tn_exp(bg_tn_ones(c, BG_FLOAT64, 0, NULL))), BG_FLOAT64);
  ck_assert_int_eq(bg_tn_dtype(bg_tn_sin(bg_tn_ones(c, BG_BFLOAT16, 0, NULL))), BG_BFLOAT16);
  ck_assert_msg(!bg_tctx_error(c), "%s", bg_tctx_error(c));
}
END_TEST

/* ---- float64 ---- */

enum { R = 6, C = 20, N = R * C };
static const int64_t SH2[2] = {R, C}, SHROW[1] = {C};

typedef bg_tensor *(*binop)(bg_tensor *, bg_tensor *);
typedef bg_tensor *(*unop)(bg_tensor *);
static double d_add(double x, double y) { return x + y; }
static double d_sub(double x, double y) { return x - y; }
static double d_mul(double x, double y) { return x * y; }
static double d_div(double x, double y) { return x / y; }
static double d_max(double x, double y) { return x > y ? x : y; }
static double d_lt(double x, double y) { return x < y; }
static double d_eq(double x, double y) { return x == y; }
static double d_ne(double x, double y) { return x != y; }
static double d_neg(double x) { return -x; }
static double d_recip(double x) { return 1.0 / x; }

static const struct bin { const char *name; binop f; double (*ref)(double, double); bool cmp; } BIN[] = {
    {"add", bg_tn_add, d_add, false}, {"sub", bg_tn_sub, d_sub, false},   {"mul", bg_tn_mul, d_mul, false},
    {"div", bg_tn_div, d_div, false}, {"maximum", bg_tn_maximum, d_max, false}, {"lt", bg_tn_lt, d_lt, true},
    {"eq", bg_tn_eq, d_eq, true},     {"ne", bg_tn_ne, d_ne, true},
};
/* bfloat16 exp and log are exp2(x * (1/ln 2)) and log2(x) * ln 2 with the constant and the intermediate
 * in bfloat16, as tinygrad's Tensor.exp/log: the reference rounds where the op does (rb). */
static double rb(double v) { return from_bf16(to_bf16((float)v)); }
static double exp_bf(double x) { return exp2(rb(x * rb(1.0 / log(2.0)))); }
static double log_bf(double x) { return rb(log2(x)) * rb(log(2.0)); }
/* domain: 0 any, 1 positive */
static const struct un {
  const char *name;
  unop f;
  double (*ref)(double), (*ref_bf)(double);
  int domain;
  bool trans;
} UN[] = {
    {"neg", bg_tn_neg, d_neg, NULL, 0, false},   {"reciprocal", bg_tn_reciprocal, d_recip, NULL, 0, false},
    {"sqrt", bg_tn_sqrt, sqrt, NULL, 1, false},  {"exp", bg_tn_exp, exp, exp_bf, 0, true},
    {"log", bg_tn_log, log, log_bf, 1, true},    {"exp2", bg_tn_exp2, exp2, NULL, 0, true},
    {"log2", bg_tn_log2, log2, NULL, 1, true},   {"sin", bg_tn_sin, sin, NULL, 0, true},
};
static double (*unref(const struct un *u, enum bg_dtype t))(double) {
  return t == BG_BFLOAT16 && u->ref_bf ? u->ref_bf : u->ref;
}

struct tol { double arith, trans, acc, abs; };
static const struct tol TOL64 = {4.5e-16, 1e-14, 1e-14, 1e-300};
static const struct tol TOLBF = {0x1p-8, 0x1p-7, 0x1p-7, 1e-30};

/* The elementwise op set in dtype t against double C on the stored inputs; b broadcasts along rows.
 * For bfloat16 the reference is rounded to bfloat16 too when the op is exact in float32. */
static void elementwise(enum bg_dtype t, const struct tol *tol) {
  double a[N], b[C], bn[N], got[N], want[N];
  char what[64];
  for (unsigned k = 0; k < sizeof BIN / sizeof BIN[0]; k++) {
    fill(a, N, -8, 8);
    fill(b, C, -8, 8);
    b[1] = 0.25, b[2] = -0.5;   /* no zero divisor in row 0, and some exact values */
    b[0] = 3;
    a[3] = b[3];                 /* equal operands for eq/ne */
    bg_tensor *x = mk(t, 2, SH2, a), *y = mk(t, 1, SHROW, b);
    for (int i = 0; i < N; i++) bn[i] = b[i % C];
    rd(BIN[k].f(x, y), BIN[k].cmp ? BG_BOOL : t, N, got);
    for (int i = 0; i < N; i++) want[i] = BIN[k].ref(a[i], bn[i]);
    snprintf(what, sizeof what, "%s %s", bg_dtype_name(t), BIN[k].name);
    close_(what, got, want, NULL, N, BIN[k].cmp ? 0 : tol->arith, BIN[k].cmp ? 0 : tol->abs);
  }
  for (unsigned k = 0; k < sizeof UN / sizeof UN[0]; k++) {
    if (UN[k].domain) fill(a, N, 1e-3, 40);
    else fill(a, N, -10, 10);
    if (!strcmp(UN[k].name, "reciprocal")) a[0] = 3.0;
    bg_tensor *x = mk(t, 2, SH2, a);
    rd(UN[k].f(x), t, N, got);
    for (int i = 0; i < N; i++) want[i] = unref(&UN[k], t)(a[i]);
    snprintf(what, sizeof what, "%s %s", bg_dtype_name(t), UN[k].name);
    /* sin near its zeros: the error is absolute (the argument's own rounding times cos) */
    close_(what, got, want, NULL, N, UN[k].trans ? tol->trans : tol->arith,
           !strcmp(UN[k].name, "sin") ? tol->trans : tol->abs);
  }
  /* where with a float condition, and special values through the transcendentals */
  fill(a, N, -4, 4);
  fill(b, C, -4, 4);
  bg_tensor *x = mk(t, 2, SH2, a), *y = mk(t, 1, SHROW, b);
  rd(bg_tn_where(bg_tn_lt(x, y), x, bg_tn_neg(y)), t, N, got);
  for (int i = 0; i < N; i++) want[i] = a[i] < b[i % C] ? a[i] : -b[i % C];
  snprintf(what, sizeof what, "%s where", bg_dtype_name(t));
  close_(what, got, want, NULL, N, 0, 0);
  double sp[8] = {INFINITY, -INFINITY, NAN, 0.0, -0.0, 1.0, 2.0, 0.5};
  const int64_t s8 = 8;
  for (unsigned k = 0; k < sizeof UN / sizeof UN[0]; k++) {
    if (!UN[k].trans && strcmp(UN[k].name, "sqrt")) continue;
    double v[8], g8[8], w8[8];
    memcpy(v, sp, sizeof v);
    rd(UN[k].f(mk(t, 1, &s8, v)), t, 8, g8);
    for (int i = 0; i < 8; i++) w8[i] = unref(&UN[k], t)(v[i]);
    snprintf(what, sizeof what, "%s %s specials", bg_dtype_name(t), UN[k].name);
    close_(what, g8, w8, NULL, 8, tol->trans, 1e-300);
  }
}

START_TEST(test_float64_elementwise) { elementwise(BG_FLOAT64, &TOL64); }
END_TEST
START_TEST(test_bfloat16_elementwise) { elementwise(BG_BFLOAT16, &TOLBF); }
END_TEST

/* sum / max over each axis and all, matmul, in dtype t; scale = sum of |terms|. */
static void reductions(enum bg_dtype t, const struct tol *tol) {
  double a[N], got[N], want[N], scale[N];
  char what[64];
  fill(a, N, -5, 5);
  bg_tensor *x = mk(t, 2, SH2, a);
  for (int ax = 0; ax < 3; ax++) {
    uint32_t mask = ax == 2 ? BG_ALL_AXES : 1u << ax;
    int64_t n = ax == 0 ? C : ax == 1 ? R : 1;
    for (int i = 0; i < n; i++) want[i] = 0, scale[i] = 0;
    double mx[C] = {0};
    for (int i = 0; i < n; i++) mx[i] = -INFINITY;
    for (int r = 0; r < R; r++)
      for (int k = 0; k < C; k++) {
        int o = ax == 0 ? k : ax == 1 ? r : 0;
        want[o] += a[r * C + k], scale[o] += fabs(a[r * C + k]);
        if (a[r * C + k] > mx[o]) mx[o] = a[r * C + k];
      }
    rd(bg_tn_sum(x, mask, false), t, n, got);
    snprintf(what, sizeof what, "%s sum axes %#x", bg_dtype_name(t), mask);
    close_(what, got, want, scale, n, tol->acc, tol->abs);
    rd(bg_tn_max(x, mask, false), t, n, got);
    snprintf(what, sizeof what, "%s max axes %#x", bg_dtype_name(t), mask);
    close_(what, got, mx, NULL, n, 0, 0);
  }
  /* matmul (R, C) @ (C, 5) */
  double w[C * 5];
  fill(w, C * 5, -2, 2);
  const int64_t sw[2] = {C, 5};
  bg_tensor *m = mk(t, 2, sw, w);
  rd(bg_tn_matmul(x, m), t, R * 5, got);
  for (int i = 0; i < R; i++)
    for (int j = 0; j < 5; j++) {
      double s = 0, sc = 0;
      for (int k = 0; k < C; k++) s += a[i * C + k] * w[k * 5 + j], sc += fabs(a[i * C + k] * w[k * 5 + j]);
      want[i * 5 + j] = s, scale[i * 5 + j] = sc;
    }
  snprintf(what, sizeof what, "%s matmul", bg_dtype_name(t));
  close_(what, got, want, scale, R * 5, tol->acc, tol->abs);
}

START_TEST(test_float64_reductions) { reductions(BG_FLOAT64, &TOL64); }
END_TEST
START_TEST(test_bfloat16_reductions) { reductions(BG_BFLOAT16, &TOLBF); }
END_TEST

/* Accumulator dtypes (tinygrad sum_acc_dtype): bfloat16 sums in float32 and rounds once at the end;
 * float64 sums in float64. Either in its own dtype would lose the small terms. */
START_TEST(test_sum_accumulators) {
  double v[65], got;
  const int64_t n65 = 65, n11 = 11;
  v[0] = 256;
  for (int i = 1; i < 65; i++) v[i] = 1;   /* bfloat16 accumulation: 256 + 1 = 256, stuck */
  OK(bg_tn_item(bg_tn_sum(mk(BG_BFLOAT16, 1, &n65, v), BG_ALL_AXES, false), &got));
  ck_assert_msg(got == 320, "bfloat16 sum 256 + 64 x 1 = %g (want 320, accumulated in float32)", got);
  v[0] = 1;
  for (int i = 1; i < 11; i++) v[i] = 1e-10;   /* float32 accumulation would give 1 */
  OK(bg_tn_item(bg_tn_sum(mk(BG_FLOAT64, 1, &n11, v), BG_ALL_AXES, false), &got));
  ck_assert_msg(fabs(got - (1 + 1e-9)) < 1e-15, "float64 sum 1 + 10 x 1e-10 = %.17g", got);
  ck_assert_int_eq(bg_tn_dtype(bg_tn_sum(bg_tn_ones(c, BG_BFLOAT16, 1, &n11), BG_ALL_AXES, false)), BG_BFLOAT16);
  ck_assert_int_eq(bg_tn_dtype(bg_tn_sum(bg_tn_ones(c, BG_FLOAT64, 1, &n11), BG_ALL_AXES, false)), BG_FLOAT64);
}
END_TEST

/* ---- casts between every pair: integers 0..100 every dtype holds exactly, then the roundings ---- */

START_TEST(test_casts_all_pairs) {
  enum { M = 12 };
  const int64_t m = M;
  const double base[M] = {0, 1, 2, 3, 7, 8, 15, 31, 64, 100, 127, 1};
  for (unsigned i = 0; i < NALL; i++)
    for (unsigned j = 0; j < NALL; j++) {
      double v[M], got[M], want[M];
      memcpy(v, base, sizeof v);
      bg_tensor *x = mk(ALL[i], 1, &m, v);   /* bool holds 0/1 */
      rd(bg_tn_cast(x, ALL[j]), ALL[j], M, got);
      for (int k = 0; k < M; k++) want[k] = ALL[j] == BG_BOOL ? v[k] != 0 : v[k];
      char what[64];
      snprintf(what, sizeof what, "cast %s -> %s", bg_dtype_name(ALL[i]), bg_dtype_name(ALL[j]));
      close_(what, got, want, NULL, M, 0, 0);
    }
  /* negative values and fractions between the float types and to the signed ints (truncation) */
  const enum bg_dtype FL[] = {BG_FLOAT16, BG_FLOAT32, BG_FLOAT64, BG_BFLOAT16};
  const enum bg_dtype SI[] = {BG_INT8, BG_INT16, BG_INT32, BG_INT64};
  for (unsigned i = 0; i < 4; i++) {
    double v[M] = {-1.5, -0.75, 2.5, -96, 0.125, 3.25, -3.25, 120, -0.0, 0.5, 48.5, -112};
    bg_tensor *x = mk(FL[i], 1, &m, v);
    for (unsigned j = 0; j < 4; j++) {
      double got[M], want[M];
      rd(bg_tn_cast(x, FL[j]), FL[j], M, got);
      char what[64];
      snprintf(what, sizeof what, "cast %s -> %s", bg_dtype_name(FL[i]), bg_dtype_name(FL[j]));
      close_(what, got, v, NULL, M, 0, 0);
      rd(bg_tn_cast(x, SI[j]), SI[j], M, got);
      for (int k = 0; k < M; k++) want[k] = trunc(v[k]);
      snprintf(what, sizeof what, "cast %s -> %s", bg_dtype_name(FL[i]), bg_dtype_name(SI[j]));
      close_(what, got, want, NULL, M, 0, 0);
    }
  }
}
END_TEST

/* The bfloat16 nearest to v (ties to even) in one rounding: 8 significant bits, or the 2^-133 quantum of
 * bfloat16's denormals; 2^128 and beyond is inf. nearbyint rounds half to even in the default mode. */
static double bf16_of_double(double v) {
  int e;
  frexp(v, &e);
  int q = e - 8 < -133 ? -133 : e - 8;
  double r = ldexp(nearbyint(ldexp(v, -q)), q);
  return fabs(r) >= 0x1p128 ? copysign(INFINITY, v) : r;
}

/* Roundings into bfloat16: round to nearest even from float32 and float64 (one rounding: float64 values
 * just off a float32 tie must not round twice), float16 <-> bfloat16 through float32 (exact widening). */
START_TEST(test_casts_rounding) {
  enum { M = 10 };
  const int64_t m = M;
  const double v64[M] = {1 + 0x1p-8,           1 + 0x1p-8 + 0x1p-40, 1 + 0x1p-8 - 0x1p-40, 1 + 3 * 0x1p-8,
                         -(1 + 3 * 0x1p-8),    0x1.fffffffp127,      3.0e38,                1e-40,
                         65504,                0.1};
  double v[M], got[M];
  memcpy(v, v64, sizeof v);
  bg_tensor *x = mk(BG_FLOAT64, 1, &m, v);
  rd(bg_tn_cast(x, BG_BFLOAT16), BG_BFLOAT16, M, got);
  for (int k = 0; k < M; k++) {
    double want = bf16_of_double(v64[k]);
    ck_assert_msg(got[k] == want, "float64 %.17g -> bfloat16 %.17g, want %.17g", v64[k], got[k], want);
  }
  ck_assert_msg(got[0] == 1.0 && got[1] == 1 + 0x1p-7 && got[2] == 1.0 && got[3] == 1 + 0x1p-6, "ties");
  /* float32 -> bfloat16: the same ties from float32 */
  float f[M];
  for (int k = 0; k < M; k++) f[k] = (float)v64[k];
  bg_tensor *xf = bg_tn_from(c, BG_FLOAT32, 1, &m, f);
  rd(bg_tn_cast(xf, BG_BFLOAT16), BG_BFLOAT16, M, got);
  for (int k = 0; k < M; k++)
    ck_assert_msg(got[k] == from_bf16(to_bf16(f[k])), "float32 %.9g -> bfloat16 %.9g", (double)f[k], got[k]);
  /* float16 -> bfloat16 rounds (11 -> 8 significant bits); bfloat16 -> float16 overflows past 65504 */
  const int64_t three = 3;
  double h[3] = {1 + 0x1p-10, 1 + 3 * 0x1p-9, 2056};
  rd(bg_tn_cast(mk(BG_FLOAT16, 1, &three, h), BG_BFLOAT16), BG_BFLOAT16, 3, got);
  ck_assert_msg(got[0] == 1.0 && got[1] == 1 + 0x1p-7 && got[2] == 2048, "float16 -> bfloat16: %g %g %g", got[0],
                got[1], got[2]);
  double bb[3] = {65536, -131072, 1 + 0x1p-7};
  rd(bg_tn_cast(mk(BG_BFLOAT16, 1, &three, bb), BG_FLOAT16), BG_FLOAT16, 3, got);
  ck_assert_msg(isinf(got[0]) && got[0] > 0 && isinf(got[1]) && got[1] < 0 && got[2] == 1 + 0x1p-7,
                "bfloat16 -> float16: %g %g %g", got[0], got[1], got[2]);
}
END_TEST

/* ---- bfloat16 bit patterns across the API ---- */

START_TEST(test_bfloat16_bits) {
  /* bg_tn_from keeps every pattern (NaN payloads, infinities, -0, denormals), read returns it */
  const uint16_t bits[8] = {0x7fc0, 0x7f80, 0xff80, 0x8000, 0x0001, 0x7f7f, 0x3f80, 0xc2f7};
  const int64_t n8 = 8;
  bg_tensor *x = bg_tn_from(c, BG_BFLOAT16, 1, &n8, bits);
  uint16_t back[8];
  OK(bg_tn_read(x, back, sizeof back));
  ck_assert_mem_eq(back, bits, sizeof bits);
  /* through a kernel (a copy made contiguous after a flip twice) the patterns survive too */
  uint16_t back2[8];
  OK(bg_tn_read(bg_tn_contiguous(bg_tn_flip(bg_tn_contiguous(bg_tn_flip(x, 1)), 1)), back2, sizeof back2));
  ck_assert_mem_eq(back2, bits, sizeof bits);
  /* item: value of each pattern */
  const int64_t one = 1;
  for (int i = 0; i < 8; i++) {
    double v;
    OK(bg_tn_item(bg_tn_shrink(x, (const int64_t[][2]){{i, i + 1}}), &v));
    double want = from_bf16(bits[i]);
    ck_assert_msg(isnan(want) ? isnan(v) : v == want && signbit(v) == signbit(want), "item %#x = %g, want %g",
                  bits[i], v, want);
  }
  (void)one;
  /* full/scalar constants round to nearest even like the data path: 1 + 2^-8 -> 1, 1 + 3 2^-8 -> 1 + 2^-6 */
  double v;
  OK(bg_tn_item(bg_tn_scalar(c, BG_BFLOAT16, 1 + 0x1p-8), &v));
  ck_assert_msg(v == 1.0, "scalar bfloat16 1 + 2^-8 = %.9g", v);
  OK(bg_tn_item(bg_tn_full(c, BG_BFLOAT16, 1, &one, 1 + 3 * 0x1p-8), &v));
  ck_assert_msg(v == 1 + 0x1p-6, "full bfloat16 1 + 3 2^-8 = %.9g", v);
  OK(bg_tn_item(bg_tn_addc(bg_tn_scalar(c, BG_BFLOAT16, 256), 1), &v));
  ck_assert_msg(v == 256, "bfloat16 256 + 1 = %g (257 rounds to even)", v);
  /* arithmetic producing NaN and inf gives the bfloat16 patterns */
  const int64_t n3 = 3;
  const uint16_t in3[3] = {0x7f7f, 0x0000, 0xff80};   /* max, 0, -inf */
  bg_tensor *y = bg_tn_from(c, BG_BFLOAT16, 1, &n3, in3);
  uint16_t o3[3];
  OK(bg_tn_read(bg_tn_mulc(y, 2.0), o3, sizeof o3));
  ck_assert_msg(o3[0] == 0x7f80 && o3[1] == 0 && o3[2] == 0xff80, "bfloat16 x2: %#x %#x %#x", o3[0], o3[1], o3[2]);
  OK(bg_tn_read(bg_tn_mul(y, bg_tn_scalar(c, BG_BFLOAT16, 0)), o3, sizeof o3));
  ck_assert_msg((o3[2] & 0x7f80) == 0x7f80 && (o3[2] & 0x7f), "bfloat16 -inf * 0 = %#x, want a NaN", o3[2]);
}
END_TEST

/* float64 bits survive the device: denormals, -0, the extremes */
START_TEST(test_float64_bits) {
  const double v[6] = {0x1p-1074, -0.0, 0x1.fffffffffffffp1023, 0.1, -0x1.8p-1030, 1.0 / 3};
  const int64_t n6 = 6;
  bg_tensor *x = bg_tn_from(c, BG_FLOAT64, 1, &n6, v);
  double back[6];
  OK(bg_tn_read(bg_tn_add(x, bg_tn_zeros(c, BG_FLOAT64, 1, &n6)), back, sizeof back));
  for (int i = 0; i < 6; i++)
    ck_assert_msg(memcmp(&back[i], &v[i], 8) == 0 || (v[i] == 0 && back[i] == 0), "x + 0 [%d] = %a, want %a", i,
                  back[i], v[i]);
  OK(bg_tn_read(bg_tn_mulc(x, 2.0), back, sizeof back));
  for (int i = 0; i < 6; i++) ck_assert_msg(back[i] == v[i] * 2.0, "x * 2 [%d] = %a, want %a", i, back[i], v[i] * 2);
  double item;
  OK(bg_tn_item(bg_tn_shrink(x, (const int64_t[][2]){{3, 4}}), &item));
  ck_assert_msg(item == 0.1, "item = %.17g", item);
}
END_TEST

/* ---- movement ops in both dtypes: permute, pad, shrink, flip, expand, cat ---- */

static void movement(enum bg_dtype t) {
  double a[N], got[4 * N];
  fill(a, N, -3, 3);
  bg_tensor *x = mk(t, 2, SH2, a);
  const unsigned perm[2] = {1, 0};
  rd(bg_tn_contiguous(bg_tn_permute(x, perm)), t, N, got);
  for (int r = 0; r < R; r++)
    for (int k = 0; k < C; k++) ck_assert(got[k * R + r] == a[r * C + k]);
  const int64_t pads[2][2] = {{1, 0}, {0, 2}};
  rd(bg_tn_pad(x, pads), t, (R + 1) * (C + 2), got);
  for (int r = 0; r < R + 1; r++)
    for (int k = 0; k < C + 2; k++)
      ck_assert(got[r * (C + 2) + k] == (r == 0 || k >= C ? 0.0 : a[(r - 1) * C + k]));
  rd(bg_tn_flip(bg_tn_shrink(x, (const int64_t[][2]){{1, 3}, {2, 9}}), 3), t, 2 * 7, got);
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 7; k++) ck_assert(got[r * 7 + k] == a[(2 - r) * C + (8 - k)]);
  const int64_t ex[3] = {2, R, C};
  rd(bg_tn_expand(bg_tn_reshape(x, 3, (const int64_t[]){1, R, C}), 3, ex), t, 2 * N, got);
  for (int i = 0; i < 2 * N; i++) ck_assert(got[i] == a[i % N]);
  bg_tensor *two[2] = {x, bg_tn_neg(x)};
  rd(bg_tn_cat(two, 2, -1), t, 2 * N, got);
  for (int r = 0; r < R; r++)
    for (int k = 0; k < 2 * C; k++) ck_assert(got[r * 2 * C + k] == (k < C ? a[r * C + k] : -a[r * C + k - C]));
}

START_TEST(test_movement) {
  movement(BG_FLOAT64);
  movement(BG_BFLOAT16);
}
END_TEST

/* ---- a device without float64 transcendentals: the realize fails naming the device, op and dtype ---- */

START_TEST(test_float64_unsupported) {
  const char *dev = bg_tctx_device(c);
  const int64_t n4 = 4;
  double v[4] = {0.5, 1, 2, 3}, got[4];
  /* float64 arithmetic runs */
  bg_tensor *x = mk(BG_FLOAT64, 1, &n4, v);
  rd(bg_tn_mul(x, x), BG_FLOAT64, 4, got);
  for (int i = 0; i < 4; i++) ck_assert(got[i] == v[i] * v[i]);
  const char *ops[3] = {"exp2", "log2", "sin"};
  for (int k = 0; k < 3; k++) {
    bg_tctx_clear_error(c);
    bg_tensor *y = k == 0 ? bg_tn_exp2(x) : k == 1 ? bg_tn_log2(x) : bg_tn_sin(x);
    ck_assert_int_lt(bg_tn_read(y, got, sizeof got), 0);
    const char *m = bg_last_error();
    ck_assert_msg(m && strstr(m, dev) && strstr(m, ops[k]) && strstr(m, "float64") && strstr(m, "not supported"),
                  "float64 %s on %s: message '%s'", ops[k], dev, m ? m : "(none)");
  }
  /* float32 of the same ops still runs on the device */
  bg_tctx_clear_error(c);
  double e;
  OK(bg_tn_item(bg_tn_exp2(bg_tn_scalar(c, BG_FLOAT32, 3)), &e));
  ck_assert_msg(fabs(e - 8) < 1e-5, "float32 exp2(3) = %g", e);
}
END_TEST

static bool dev_is_nv(void) {
  const char *d = getenv("DEV");
  return d && strstr(d, "NV") != NULL;
}

int main(void) {
  Suite *s = suite_create("tensor-dtypes");
  TCase *t = tcase_create("dtypes");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 600);
  if (dev_is_nv()) {
    tcase_add_test(t, test_float64_unsupported);
  } else {
    tcase_add_test(t, test_names_sizes);
    tcase_add_test(t, test_promotion);
    tcase_add_test(t, test_float64_elementwise);
    tcase_add_test(t, test_bfloat16_elementwise);
    tcase_add_test(t, test_float64_reductions);
    tcase_add_test(t, test_bfloat16_reductions);
    tcase_add_test(t, test_sum_accumulators);
    tcase_add_test(t, test_casts_all_pairs);
    tcase_add_test(t, test_casts_rounding);
    tcase_add_test(t, test_bfloat16_bits);
    tcase_add_test(t, test_float64_bits);
    tcase_add_test(t, test_movement);
  }
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
