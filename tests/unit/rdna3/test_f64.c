/* tests/unit/rdna3/test_f64.c: the float64 VALU instructions that LLVM's AMDGPU backend emits for
 * float64 tensor kernels (asm_snippets.s f64_unary / f64_binary / f64_div), one wave, expected values
 * from host C with the RDNA3 ISA guide's special cases (V_FRACT_F64 below 1, V_FREXP_* of inf/NaN,
 * V_CVT_*_F64 clamping, V_CMP_CLASS_F64's ten class bits). The division test runs the backend's whole
 * V_DIV_SCALE / V_RCP / Newton / V_DIV_FMAS / V_DIV_FIXUP sequence on quotients that overflow, underflow
 * to denormals, divide by denormals and zeros, and checks the correctly rounded IEEE quotient. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

static gpu g;
static wave_run r;  /* large: static, and each test runs in its own process */

#define V(reg, lane) r.w.v[reg][lane]

static uint32_t seed = 4242;
static uint32_t rnd(void) {
  seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
  return seed;
}
/* A double with a random 53-bit significand and sign, exponent in [lo, hi]. */
static double rnd_d(int lo, int hi) {
  uint64_t m = ((uint64_t)rnd() << 21 ^ rnd()) & ((1ull << 52) - 1);
  double x = ldexp(1.0 + ldexp((double)m, -52), lo + (int)(rnd() % (unsigned)(hi - lo + 1)));
  return rnd() & 1 ? -x : x;
}

static void set_d(unsigned reg, unsigned lane, double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  V(reg, lane) = (uint32_t)u, V(reg + 1, lane) = (uint32_t)(u >> 32);
}
static double get_d(unsigned reg, unsigned lane) {
  uint64_t u = V(reg, lane) | (uint64_t)V(reg + 1, lane) << 32;
  double x;
  memcpy(&x, &u, 8);
  return x;
}

/* Bitwise equality (so -0 differs from +0), except that any NaN matches any NaN. */
static void ck_d(double got, double want, const char *what, unsigned lane, double in) {
  uint64_t a, b;
  memcpy(&a, &got, 8);
  memcpy(&b, &want, 8);
  if (isnan(got) && isnan(want)) return;
  ck_assert_msg(a == b, "%s lane %u (input %a): got %a, want %a", what, lane, in, got, want);
}

static void run(const char *snippet) {
  int rc = wave_go(&r);
  ck_assert_msg(rc == 0, "%s: %s", snippet, r.rep.msg);
}

static const double SPECIAL[] = {0.0,    -0.0,  INFINITY, -INFINITY, NAN,    0x1p-1074, -0x1.8p-1040, 2.5,
                                 -2.5,   3.5,   -0.5,     0x1p52 + 1, 4294967296.0, -3e9, 0x1.fffffffffffffp-1,
                                 1e300};
enum { NSPECIAL = sizeof SPECIAL / sizeof SPECIAL[0] };

static int class_bits(double x) {   /* V_CMP_CLASS: bit 1 qNaN, 2 -inf, 3 -normal, 4 -denorm, 5 -0, 6 +0, ... */
  int c = isnan(x) ? 1 : isinf(x) ? (x < 0 ? 2 : 9) : x == 0 ? (signbit(x) ? 5 : 6)
        : fpclassify(x) == FP_SUBNORMAL ? (x < 0 ? 4 : 7) : (x < 0 ? 3 : 8);
  return c;
}

START_TEST(f64_unary) {
  gpu_init(&g);
  wave_setup(&r, &g, "f64_unary");
  double in[32];
  int32_t iv[32];
  for (unsigned l = 0; l < 32; l++) {
    in[l] = l < NSPECIAL ? SPECIAL[l] : rnd_d(-20, 40);
    iv[l] = (int32_t)(rnd() % 4000) - 2000;
    if (l == 30) iv[l] = INT32_MIN;
    set_d(0, l, in[l]);
    V(20, l) = (uint32_t)iv[l];
  }
  run("f64_unary");
  for (unsigned l = 0; l < 32; l++) {
    double x = in[l];
    ck_d(get_d(4, l), 1.0 / x, "v_rcp_f64", l, x);
    ck_d(get_d(6, l), 1.0 / sqrt(x), "v_rsq_f64", l, x);
    ck_d(get_d(8, l), sqrt(x), "v_sqrt_f64", l, x);
    ck_d(get_d(10, l), trunc(x), "v_trunc_f64", l, x);
    ck_d(get_d(12, l), floor(x), "v_floor_f64", l, x);
    ck_d(get_d(14, l), ceil(x), "v_ceil_f64", l, x);
    ck_d(get_d(16, l), nearbyint(x), "v_rndne_f64", l, x);
    /* ISA: S0 + -floor(S0) below 1: NaN for NaN and +-inf (inf - inf), +0 for -0 (-0 + +0) */
    double fr = isnan(x) || isinf(x) ? NAN : fmin(x - floor(x), 0x1.fffffffffffffp-1);
    ck_d(get_d(18, l), fr, "v_fract_f64", l, x);
    int e = 0;
    double m = isinf(x) || isnan(x) ? x : frexp(x, &e);
    ck_d(get_d(22, l), m, "v_frexp_mant_f64", l, x);
    ck_assert_msg((int32_t)V(24, l) == e, "v_frexp_exp_i32_f64 lane %u (%a): got %d want %d", l, x, (int32_t)V(24, l), e);
    uint32_t u = isnan(x) || x <= 0 ? 0 : x >= 4294967295.0 ? 0xffffffffu : (uint32_t)x;
    ck_assert_msg(V(25, l) == u, "v_cvt_u32_f64 lane %u (%a): got %u want %u", l, x, V(25, l), u);
    int32_t i = isnan(x) ? 0 : x <= -2147483648.0 ? INT32_MIN : x >= 2147483647.0 ? INT32_MAX : (int32_t)x;
    ck_assert_msg((int32_t)V(26, l) == i, "v_cvt_i32_f64 lane %u (%a): got %d want %d", l, x, (int32_t)V(26, l), i);
    ck_d(get_d(28, l), (double)(uint32_t)iv[l], "v_cvt_f64_u32", l, x);
    ck_d(get_d(30, l), (double)iv[l], "v_cvt_f64_i32", l, x);
    ck_d(get_d(32, l), ldexp(x, iv[l]), "v_ldexp_f64", l, x);
    float f = (float)x;
    uint32_t fb;
    memcpy(&fb, &f, 4);
    ck_assert_msg(V(34, l) == fb || (isnan(f) && (V(34, l) & 0x7fffffffu) > 0x7f800000u),
                  "v_cvt_f32_f64 lane %u (%a): got 0x%08x want 0x%08x", l, x, V(34, l), fb);
  }
  gpu_free(&g);
}
END_TEST

START_TEST(f64_binary) {
  gpu_init(&g);
  wave_setup(&r, &g, "f64_binary");
  double a[32], b[32];
  uint32_t mask[32];
  for (unsigned l = 0; l < 32; l++) {
    a[l] = l < NSPECIAL ? SPECIAL[l] : rnd_d(-10, 10);
    b[l] = l < NSPECIAL ? SPECIAL[(l * 7 + 3) % NSPECIAL] : rnd_d(-10, 10);
    if (l == 20) b[l] = a[l];   /* equal operands */
    mask[l] = l < 10 ? 1u << class_bits(a[l]) : rnd() & 0x3ff;
    set_d(0, l, a[l]);
    set_d(2, l, b[l]);
    V(20, l) = mask[l];
  }
  run("f64_binary");
  for (unsigned l = 0; l < 32; l++) {
    double x = a[l], y = b[l];
    if (!(x == 0 && y == 0)) {   /* max/min of +-0 pairs: either zero */
      ck_d(get_d(4, l), fmax(x, y), "v_max_f64", l, x);
      ck_d(get_d(6, l), fmin(x, y), "v_min_f64", l, x);
    }
    ck_d(get_d(8, l), -x * fabs(y), "v_mul_f64 -a |b|", l, x);
    ck_d(get_d(10, l), x + -y, "v_add_f64 a -b", l, x);
    ck_d(get_d(12, l), fma(x, y, 0.5), "v_fma_f64 inline 0.5", l, x);
    ck_assert_msg(V(14, l) == (x < y), "v_cmp_lt_f64 lane %u: %a < %a", l, x, y);
    ck_assert_msg(V(15, l) == !(x == y), "v_cmp_neq_f64 lane %u: %a %a", l, x, y);
    ck_assert_msg(V(16, l) == (isnan(x) || isnan(y)), "v_cmp_u_f64 lane %u: %a %a", l, x, y);
    ck_assert_msg(V(17, l) == !(x > y), "v_cmp_ngt_f64 lane %u: %a %a", l, x, y);
    ck_assert_msg(V(18, l) == ((mask[l] >> class_bits(x)) & 1u), "v_cmp_class_f64 lane %u: %a mask %#x", l, x,
                  mask[l]);
  }
  gpu_free(&g);
}
END_TEST

/* The backend's float64 division sequence gives the correctly rounded quotient everywhere. */
START_TEST(f64_division_sequence) {
  static const double pairs[][2] = {
      {1, 0},         {0, 0},          {-1, 0},           {INFINITY, INFINITY}, {INFINITY, 2},     {2, -INFINITY},
      {NAN, 1},       {1, NAN},        {0, 5},            {-0.0, 5},            {1e308, 1e-10},    {1e-300, 1e300},
      {0x1.8p-1073, 3}, {1, 0x1p-1070}, {0x1p-1070, 0x1p-1070}, {3e-310, 7},   {1e300, 1e-5},     {0x1p1000, 0x1p-23},
      {0x1p-1000, 0x1p40}, {1, 3},      {-2, 3},           {0x1.fffffffffffffp1023, 0.5}, {0x1p-1022, 0x1.0000000000001p1},
      {5, 0x1p1023},  {0x1.5p-1060, 0x1.3p9},
  };
  enum { NP = sizeof pairs / sizeof pairs[0] };
  for (int round = 0; round < 6; round++) {
    gpu_init(&g);
    wave_setup(&r, &g, "f64_div");
    double a[32], b[32];
    for (unsigned l = 0; l < 32; l++) {
      unsigned k = round * 32 + l;
      if (k < NP) a[l] = pairs[k][0], b[l] = pairs[k][1];
      else a[l] = rnd_d(-1070, 1020), b[l] = rnd_d(-1070, 1020);
      set_d(0, l, a[l]);
      set_d(2, l, b[l]);
    }
    run("f64_div");
    for (unsigned l = 0; l < 32; l++) {
      double q = a[l] / b[l], got = get_d(12, l);
      uint64_t gq, wq;
      memcpy(&gq, &got, 8);
      memcpy(&wq, &q, 8);
      ck_assert_msg(gq == wq || (isnan(got) && isnan(q)), "division %a / %a: got %a, want %a", a[l], b[l], got, q);
    }
    gpu_free(&g);
  }
}
END_TEST

/* V_CVT_PK_I16_F32 / V_CVT_PK_U16_F32: S0 in the low half, S1 in the high half, truncated and saturated. */
START_TEST(cvt_pk_16) {
  gpu_init(&g);
  wave_setup(&r, &g, "cvt_pk16");
  static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.5f, 1.5f, 32767.9f, -32768.5f, 65535.5f, 70000.0f,
                             -0.99f, 123.75f, -40000.0f, 1e-40f, 40000.0f};
  float a[32], b[32];
  for (unsigned l = 0; l < 32; l++) {
    a[l] = l < 16 ? sp[l] : (float)((int)(rnd() % 140000) - 70000) / 1.5f;
    b[l] = l < 16 ? sp[15 - l] : (float)((int)(rnd() % 140000) - 70000) / 1.5f;
    memcpy(&V(0, l), &a[l], 4);
    memcpy(&V(1, l), &b[l], 4);
  }
  run("cvt_pk16");
  for (unsigned l = 0; l < 32; l++) {
    uint16_t i16[2], u16[2];
    const float x[2] = {a[l], b[l]};
    for (int k = 0; k < 2; k++) {
      double f = x[k];
      i16[k] = (uint16_t)(isnan(f) ? 0 : f <= -32768 ? -32768 : f >= 32767 ? 32767 : (int)trunc(f));
      u16[k] = isnan(f) || f <= 0 ? 0 : f >= 65535 ? 65535 : (uint16_t)trunc(f);
    }
    ck_assert_msg(V(4, l) == (i16[0] | (uint32_t)i16[1] << 16), "v_cvt_pk_i16_f32 lane %u (%g, %g): 0x%08x", l,
                  (double)a[l], (double)b[l], V(4, l));
    ck_assert_msg(V(5, l) == (u16[0] | (uint32_t)u16[1] << 16), "v_cvt_pk_u16_f32 lane %u (%g, %g): 0x%08x", l,
                  (double)a[l], (double)b[l], V(5, l));
  }
  gpu_free(&g);
}
END_TEST

TCase *f64_tests(void) {
  TCase *tc = tcase_create("f64");
  tcase_add_test(tc, f64_unary);
  tcase_add_test(tc, f64_binary);
  tcase_add_test(tc, f64_division_sequence);
  tcase_add_test(tc, cvt_pk_16);
  return tc;
}
