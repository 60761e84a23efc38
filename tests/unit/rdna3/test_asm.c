/* tests/unit/rdna3/test_asm.c: single instructions from asm_snippets.s (assembled by llvm-mc for
 * gfx1100) on one wave with preset registers; expected values computed here in C. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rdna3_ops.h"
#include "rdna3_valu.h"
#include "tests.h"

static gpu g;
static wave_run r;  /* large: static, and each test runs in its own process */

#define V(reg, lane) r.w.v[reg][lane]
#define S(reg) r.w.s[reg]

static uint32_t seed = 99;
static uint32_t rnd(void) {
  seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
  return seed;
}
static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() >> 8) / 16777216.0f; }
static uint32_t fu(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float uf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint16_t hu(_Float16 h) { uint16_t u; memcpy(&u, &h, 2); return u; }
static _Float16 uh(uint16_t u) { _Float16 h; memcpy(&h, &u, 2); return h; }

static void start(const char *snippet) {
  gpu_init(&g);
  wave_setup(&r, &g, snippet);
}

static void go(void) {
  int rc = wave_go(&r);
  ck_assert_msg(rc == 0, "%s", r.rep.msg);
}

static void finish(void) { gpu_free(&g); }

/* Bitwise equality, except that any NaN matches any NaN. */
static void ck_f32(uint32_t got, float want, const char *what, unsigned lane) {
  if (isnan(want) && isnan(uf(got))) return;
  ck_assert_msg(got == fu(want), "%s lane %u: got %a (0x%08x), want %a (0x%08x)", what, lane, (double)uf(got), got,
                (double)want, fu(want));
}

static void ck_near(uint32_t got, double want, double rel, const char *what, unsigned lane) {
  double x = uf(got);
  if (isnan(want) && isnan(x)) return;
  if (isinf(want) && x == want) return;
  ck_assert_msg(fabs(x - want) <= rel * fabs(want) + 1e-30, "%s lane %u: got %.9g, want %.9g", what, lane, x, want);
}

/* Lane inputs: random, with specials in the first lanes. */
static void fill_f32(unsigned reg, float lo, float hi) {
  static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -3.5f, 0.5f};
  for (unsigned l = 0; l < 32; l++) V(reg, l) = fu(l < 8 ? special[(l + reg) % 8] : rndf(lo, hi));
}

START_TEST(f32_binary) {
  static const char *names[] = {"f32_add", "f32_sub", "f32_subrev", "f32_mul", "f32_max", "f32_min", "f32_fma", "f32_fmac",
                                "f32_fmaak", "f32_fmamk", "f32_mods"};
  const char *name = names[_i];
  start(name);
  fill_f32(0, -100, 100);
  fill_f32(1, -100, 100);
  fill_f32(2, -100, 100);
  uint32_t in[3][32];
  memcpy(in, r.w.v, sizeof in);
  go();
  for (unsigned l = 0; l < 32; l++) {
    float a = uf(in[0][l]), b = uf(in[1][l]), c = uf(in[2][l]), want;
    switch (_i) {
    case 0: want = a + b; break;
    case 1: want = a - b; break;
    case 2: want = b - a; break;
    case 3: want = a * b; break;
    case 4: want = fmaxf(a, b); break;
    case 5: want = fminf(a, b); break;
    case 6: case 7: want = fmaf(a, b, c); break;
    case 8: want = fmaf(a, b, 3.0f); break;
    case 9: want = fmaf(a, 3.0f, b); break;
    default: want = fmaf(-fabsf(a), b, -c); break;
    }
    if ((_i == 4 || _i == 5) && a == 0 && b == 0) continue;  /* max(+0,-0): either zero */
    ck_f32(V(3, l), want, name, l);
  }
  finish();
}
END_TEST

START_TEST(f32_output_modifiers) {
  start("f32_clamp");
  fill_f32(0, -2, 2);
  fill_f32(1, -2, 2);
  uint32_t a[32], b[32];
  memcpy(a, r.w.v[0], sizeof a);
  memcpy(b, r.w.v[1], sizeof b);
  go();
  for (unsigned l = 0; l < 32; l++) {
    float m = uf(a[l]) * uf(b[l]);
    ck_f32(V(3, l), isnan(m) ? 0.0f : fminf(fmaxf(m, 0.0f), 1.0f), "clamp", l);
  }
  finish();
  start("f32_omod");
  fill_f32(0, -2, 2);
  fill_f32(1, -2, 2);
  memcpy(a, r.w.v[0], sizeof a);
  memcpy(b, r.w.v[1], sizeof b);
  go();
  for (unsigned l = 0; l < 32; l++) ck_f32(V(3, l), (uf(a[l]) + uf(b[l])) * 2.0f, "omod mul:2", l);
  finish();
}
END_TEST

START_TEST(f32_constants) {
  start("f32_inline");
  fill_f32(0, -10, 10);
  uint32_t a[32];
  memcpy(a, r.w.v[0], sizeof a);
  go();
  for (unsigned l = 0; l < 32; l++) {
    float x = uf(a[l]);
    ck_f32(V(3, l), 0.5f + x, "inline 0.5", l);
    ck_f32(V(4, l), -4.0f * x, "inline -4.0", l);
    ck_f32(V(5, l), uf(0x40490fdb) + x, "literal", l);
    ck_f32(V(6, l), uf(0x3e22f983) * x, "inline 1/(2pi)", l);
  }
  finish();
}
END_TEST

START_TEST(f32_unary) {
  start("f32_unary");
  fill_f32(0, -20, 20);
  uint32_t a[32];
  memcpy(a, r.w.v[0], sizeof a);
  go();
  for (unsigned l = 0; l < 32; l++) {
    float x = uf(a[l]);
    ck_f32(V(3, l), floorf(x), "floor", l);
    ck_f32(V(4, l), ceilf(x), "ceil", l);
    ck_f32(V(5, l), truncf(x), "trunc", l);
    ck_f32(V(6, l), rintf(x), "rndne", l);
    if (isfinite(x)) ck_f32(V(7, l), x - floorf(x) < 1.0f ? x - floorf(x) : 0x1.fffffep-1f, "fract", l);
    ck_near(V(8, l), exp2((double)x), 1e-6, "exp", l);
    ck_near(V(9, l), (double)(1.0f / x), 1e-6, "rcp", l);
    int32_t wi = isnan(x) ? 0 : x >= 2147483647.0f ? INT32_MAX : x <= -2147483648.0f ? INT32_MIN : (int32_t)x;
    ck_assert_int_eq((int32_t)V(10, l), wi);
    uint32_t wu = isnan(x) || x <= 0 ? 0 : x >= 4294967295.0f ? 0xffffffffu : (uint32_t)x;
    ck_assert_uint_eq(V(11, l), wu);
    if (isfinite(x)) {
      int e;
      float m = frexpf(x, &e);
      ck_f32(V(12, l), m, "frexp_mant", l);
      ck_assert_int_eq((int32_t)V(13, l), e);
      ck_near(V(14, l), sin((double)x * 2 * M_PI), 1e-5, "sin (turns)", l);
      ck_near(V(15, l), cos((double)x * 2 * M_PI), 1e-5, "cos (turns)", l);
    }
  }
  finish();
  start("f32_unary_pos");
  for (unsigned l = 0; l < 32; l++) V(0, l) = fu(l == 0 ? 0.0f : l == 1 ? 1e-40f : rndf(0.001f, 1000));
  memcpy(a, r.w.v[0], sizeof a);
  go();
  for (unsigned l = 0; l < 32; l++) {
    double x = uf(a[l]);
    ck_near(V(3, l), sqrt(x), 1e-7, "sqrt", l);
    ck_near(V(4, l), log2(x), 1e-6, "log2", l);
    ck_near(V(5, l), 1.0 / sqrt(x), 1e-6, "rsq", l);
  }
  finish();
}
END_TEST

START_TEST(f32_convert_ldexp_med3) {
  start("f32_ldexp");
  fill_f32(0, -10, 10);
  uint32_t a[32], b[32], c[32];
  for (unsigned l = 0; l < 32; l++) V(1, l) = (uint32_t)((int)(rnd() % 61) - 30);
  memcpy(a, r.w.v[0], sizeof a);
  memcpy(b, r.w.v[1], sizeof b);
  go();
  for (unsigned l = 0; l < 32; l++) ck_f32(V(3, l), ldexpf(uf(a[l]), (int32_t)b[l]), "ldexp", l);
  finish();
  start("f32_cvt");
  for (unsigned l = 0; l < 32; l++) V(0, l) = rnd();
  memcpy(a, r.w.v[0], sizeof a);
  go();
  for (unsigned l = 0; l < 32; l++) {
    ck_f32(V(3, l), (float)(int32_t)a[l], "cvt_f32_i32", l);
    ck_f32(V(4, l), (float)a[l], "cvt_f32_u32", l);
    ck_f32(V(5, l), (float)((a[l] >> 8) & 0xff), "cvt_f32_ubyte1", l);
  }
  finish();
  start("f32_med3");
  for (unsigned i = 0; i < 3; i++)
    for (unsigned l = 0; l < 32; l++) V(i, l) = fu(rndf(-5, 5));
  memcpy(a, r.w.v[0], sizeof a);
  memcpy(b, r.w.v[1], sizeof b);
  memcpy(c, r.w.v[2], sizeof c);
  go();
  for (unsigned l = 0; l < 32; l++) {
    float x = uf(a[l]), y = uf(b[l]), z = uf(c[l]);
    float v[3] = {x, y, z};
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2 - i; j++)
        if (v[j] > v[j + 1]) { float t = v[j]; v[j] = v[j + 1]; v[j + 1] = t; }
    float mn = v[0], mx = v[2];
    ck_f32(V(3, l), v[1], "med3", l);
    ck_f32(V(4, l), mn, "min3", l);
    ck_f32(V(5, l), mx, "max3", l);
  }
  finish();
}
END_TEST

START_TEST(f32_division_sequence) {
  start("f32_div");
  /* hard cases first: denormal operands and quotients, ratios near the float range limits */
  static const float num[] = {1.0f, 0.0f, 1e30f, 1e-40f, 3.0f, 1e38f, 1e-38f, 1.0f, -7e-39f, 3.4e38f, 1e-45f, 2e-38f, 5.0f, INFINITY, NAN};
  static const float den[] = {3.0f, 5.0f, 1e-10f, 3.0f, 1e-40f, 1e-5f, 1e5f, 3e38f, 1e-39f, 0.5f, 1e-45f, 3.0f, 0.0f, 2.0f, 1.0f};
  for (unsigned l = 0; l < 32; l++) {
    bool hard = l < sizeof num / sizeof num[0];
    V(0, l) = fu(hard ? num[l] : rndf(-1000, 1000));
    V(1, l) = fu(hard ? den[l] : rndf(-50, 50));
  }
  uint32_t a[32], b[32];
  memcpy(a, r.w.v[0], sizeof a);
  memcpy(b, r.w.v[1], sizeof b);
  go();
  for (unsigned l = 0; l < 32; l++) ck_f32(V(3, l), uf(a[l]) / uf(b[l]), "fdiv sequence", l);
  finish();
}
END_TEST

/* LLVM's fdiv sequence over random bit patterns of every magnitude, against C's division. */
START_TEST(f32_division_fuzz) {
  start("f32_div");
  for (unsigned round = 0; round < 300; round++) {
    r.w.pc = snippet_va(&g, "f32_div");
    r.w.done = false;
    uint32_t a[32], b[32];
    for (unsigned l = 0; l < 32; l++) V(0, l) = a[l] = rnd(), V(1, l) = b[l] = rnd();
    go();
    for (unsigned l = 0; l < 32; l++)
      ck_assert_msg(fu(uf(a[l]) / uf(b[l])) == V(3, l) || (isnan(uf(a[l]) / uf(b[l])) && isnan(uf(V(3, l)))),
                    "%a / %a: got %a, want %a", (double)uf(a[l]), (double)uf(b[l]), (double)uf(V(3, l)),
                    (double)(uf(a[l]) / uf(b[l])));
  }
  finish();
}
END_TEST

START_TEST(int32_ops) {
  start("i32_ops");
  for (unsigned l = 0; l < 32; l++) V(0, l) = rnd(), V(1, l) = l < 4 ? l * 9 : rnd(), V(2, l) = rnd();
  V(0, 5) = 0;
  uint32_t a[32], b[32], c[32];
  memcpy(a, r.w.v[0], sizeof a);
  memcpy(b, r.w.v[1], sizeof b);
  memcpy(c, r.w.v[2], sizeof c);
  go();
  for (unsigned l = 0; l < 32; l++) {
    uint32_t x = a[l], y = b[l], z = c[l], sh = y & 31;
    ck_assert_uint_eq(V(3, l), x + y);
    ck_assert_uint_eq(V(4, l), x - y);
    ck_assert_uint_eq(V(5, l), x * y);
    ck_assert_uint_eq(V(6, l), (uint32_t)(((uint64_t)x * y) >> 32));
    ck_assert_uint_eq(V(7, l), (uint32_t)((uint64_t)((int64_t)(int32_t)x * (int32_t)y) >> 32));
    ck_assert_uint_eq(V(8, l), x << sh);
    ck_assert_uint_eq(V(9, l), x >> sh);
    ck_assert_uint_eq(V(10, l), (uint32_t)((int32_t)x >> sh));
    ck_assert_uint_eq(V(11, l), (int32_t)x < (int32_t)y ? x : y);
    ck_assert_uint_eq(V(12, l), x > y ? x : y);
    ck_assert_uint_eq(V(13, l), x ^ y);
    ck_assert_uint_eq(V(14, l), (x >> sh) & 31);
    uint32_t f = (x >> sh) & 127;
    ck_assert_uint_eq(V(15, l), f & 64 ? f | ~127u : f);
    ck_assert_uint_eq(V(16, l), (x & y) | (~x & z));
    ck_assert_uint_eq(V(17, l), (uint32_t)((((uint64_t)x << 32) | y) >> (z & 31)));
    ck_assert_uint_eq(V(18, l), (x << 3) | z);
    ck_assert_uint_eq(V(19, l), x + y + z);
    /* v_perm_b32 selector 0x0c070501: bytes [y.1, y.5->x.1, x.3, zero] */
    uint64_t pair = (uint64_t)x << 32 | y;
    uint32_t want = (uint32_t)((pair >> 8) & 0xff) | (uint32_t)((pair >> 40) & 0xff) << 8 |
                    (uint32_t)((pair >> 56) & 0xff) << 16;
    ck_assert_uint_eq(V(20, l), want);
    ck_assert_uint_eq(V(21, l), ~x);
    uint32_t rev = 0;
    for (int i = 0; i < 32; i++) rev |= ((x >> i) & 1) << (31 - i);
    ck_assert_uint_eq(V(22, l), rev);
    ck_assert_uint_eq(V(23, l), x ? (uint32_t)__builtin_clz(x) : ~0u);
    ck_assert_uint_eq(V(24, l), x ? (uint32_t)__builtin_ctz(x) : ~0u);
    ck_assert_uint_eq(V(25, l), (x & 0xffffff) * (y & 0xffffff) + z);
    ck_assert_uint_eq(V(26, l), (x ^ y) + z);
    ck_assert_uint_eq(V(27, l), (x << 2) + y);
    ck_assert_uint_eq(V(28, l), (x & y) | z);
    ck_assert_uint_eq(V(29, l), (uint32_t)__builtin_popcount(x) + 3);
    ck_assert_uint_eq(V(30, l), l);
  }
  finish();
}
END_TEST

START_TEST(int64_ops) {
  start("i64_add");
  for (unsigned l = 0; l < 32; l++) V(0, l) = rnd(), V(1, l) = rnd(), V(2, l) = rnd(), V(3, l) = rnd();
  V(0, 1) = 0xffffffffu, V(2, 1) = 1;
  uint32_t in[4][32];
  memcpy(in, r.w.v, sizeof in);
  go();
  uint32_t borrow = 0;
  for (unsigned l = 0; l < 32; l++) {
    uint64_t x = in[0][l] | (uint64_t)in[1][l] << 32, y = in[2][l] | (uint64_t)in[3][l] << 32;
    ck_assert_uint_eq(V(4, l) | (uint64_t)V(5, l) << 32, x + y);
    ck_assert_uint_eq(V(6, l) | (uint64_t)V(7, l) << 32, x - y);
    borrow |= (uint32_t)(y > x) << l;
  }
  ck_assert_uint_eq(S(5), borrow);
  finish();
  start("i64_ops");
  for (unsigned l = 0; l < 32; l++) V(0, l) = rnd() % 64 + (l & 1 ? 0x80000000u : 0), V(1, l) = rnd(), V(2, l) = rnd(), V(3, l) = rnd();
  memcpy(in, r.w.v, sizeof in);
  go();
  for (unsigned l = 0; l < 32; l++) {
    uint32_t x = in[0][l], y = in[1][l];
    uint64_t z = in[2][l] | (uint64_t)in[3][l] << 32;
    ck_assert_uint_eq(V(4, l) | (uint64_t)V(5, l) << 32, (uint64_t)x * y + z);
    ck_assert_uint_eq(V(6, l) | (uint64_t)V(7, l) << 32, (uint64_t)((int64_t)(int32_t)x * (int32_t)y) + z);
    ck_assert_uint_eq(V(8, l) | (uint64_t)V(9, l) << 32, z << 5);
    ck_assert_uint_eq(V(10, l) | (uint64_t)V(11, l) << 32, (uint64_t)((int64_t)z >> (x & 63)));
    ck_assert_uint_eq(V(12, l) | (uint64_t)V(13, l) << 32, z >> (x & 63));
  }
  finish();
}
END_TEST

START_TEST(compares_and_cndmask) {
  start("cndmask");
  for (unsigned l = 0; l < 32; l++) V(0, l) = rnd() % 100 - 50, V(1, l) = rnd() % 100 - 50;
  uint32_t a[32], b[32];
  memcpy(a, r.w.v[0], sizeof a);
  memcpy(b, r.w.v[1], sizeof b);
  go();
  uint32_t vcc = 0, s6 = 0;
  for (unsigned l = 0; l < 32; l++) {
    bool lt = (int32_t)a[l] < (int32_t)b[l], gt = a[l] > b[l];
    vcc |= (uint32_t)lt << l, s6 |= (uint32_t)gt << l;
    ck_assert_uint_eq(V(3, l), lt ? b[l] : a[l]);
    ck_assert_uint_eq(V(4, l), gt ? (uint32_t)-5 : 7u);
  }
  ck_assert_uint_eq(S(RDNA3_VCC_LO), vcc);
  ck_assert_uint_eq(S(6), s6);
  finish();

  start("cmp_f32");
  fill_f32(0, -3, 3);
  fill_f32(1, -3, 3);
  memcpy(a, r.w.v[0], sizeof a);
  memcpy(b, r.w.v[1], sizeof b);
  r.w.s[RDNA3_EXEC_LO] = 0x7fffffffu;  /* lane 31 inactive: its compare bits read 0 */
  go();
  uint32_t lt = 0, neq = 0, un = 0, nge = 0, cls = 0, eq64 = 0, neg64 = 0;
  for (unsigned l = 0; l < 31; l++) {
    float x = uf(a[l]), y = uf(b[l]);
    lt |= (uint32_t)(x < y) << l;
    neq |= (uint32_t)!(x == y) << l;
    un |= (uint32_t)(isnan(x) || isnan(y)) << l;
    nge |= (uint32_t)!(x >= y) << l;
    /* 0x260: -denormal? no: bits 5 (-0), 6 (+0), 9 (+inf) */
    cls |= (uint32_t)((x == 0) || (isinf(x) && x > 0)) << l;
    eq64 |= 1u << l;
    neg64 |= (uint32_t)((int32_t)b[l] < 0) << l;
  }
  ck_assert_uint_eq(S(RDNA3_VCC_LO), lt);
  ck_assert_uint_eq(S(4), neq);
  ck_assert_uint_eq(S(5), un);
  ck_assert_uint_eq(S(6), nge);
  ck_assert_uint_eq(S(7), cls);
  ck_assert_uint_eq(S(8), eq64);
  ck_assert_uint_eq(S(9), neg64);
  finish();

  start("cmpx");
  for (unsigned l = 0; l < 32; l++) V(0, l) = rnd() % 10, V(1, l) = rnd() % 10, V(3, l) = 0;
  memcpy(a, r.w.v[0], sizeof a);
  memcpy(b, r.w.v[1], sizeof b);
  uint32_t vcc_before = S(RDNA3_VCC_LO) = 0x1234;
  go();
  uint32_t ex = 0;
  for (unsigned l = 0; l < 32; l++) {
    ex |= (uint32_t)((int32_t)a[l] > (int32_t)b[l]) << l;
    ck_assert_uint_eq(V(3, l), (int32_t)a[l] > (int32_t)b[l] ? 1u : 0u);
  }
  ck_assert_uint_eq(S(RDNA3_EXEC_LO), ex);
  ck_assert_uint_eq(S(RDNA3_VCC_LO), vcc_before);  /* gfx11 v_cmpx writes only EXEC */
  finish();
}
END_TEST

START_TEST(vopd_dual_issue) {
  start("vopd_swap");
  for (unsigned l = 0; l < 32; l++) V(0, l) = l, V(1, l) = 100 + l;
  go();
  for (unsigned l = 0; l < 32; l++) {
    ck_assert_uint_eq(V(0, l), 100 + l);
    ck_assert_uint_eq(V(1, l), l);
  }
  finish();
  start("vopd_math");
  for (unsigned l = 0; l < 32; l++) {
    V(0, l) = V(2, l) = fu(rndf(-4, 4));
    V(1, l) = V(3, l) = fu(rndf(-4, 4));
    V(6, l) = fu(1.5f);
  }
  S(RDNA3_VCC_LO) = 0xf0f0f0f0u;
  uint32_t a[32], b[32];
  memcpy(a, r.w.v[0], sizeof a);
  memcpy(b, r.w.v[1], sizeof b);
  go();
  for (unsigned l = 0; l < 32; l++) {
    float x = uf(a[l]), y = uf(b[l]);
    ck_f32(V(4, l), x * y, "dual_mul", l);
    ck_f32(V(5, l), x + y, "dual_add", l);
    ck_f32(V(6, l), fmaf(x, y, 1.5f), "dual_fmac", l);
    ck_assert_uint_eq(V(7, l), (0xf0f0f0f0u >> l) & 1 ? b[l] : a[l]);
    ck_f32(V(8, l), fmaxf(x, y), "dual_max", l);
    ck_assert_uint_eq(V(9, l), b[l] << 2);
    ck_f32(V(10, l), fmaf(x, y, 1.0f), "dual_fmaak", l);
    ck_assert_uint_eq(V(11, l), a[l] & b[l]);
  }
  finish();
}
END_TEST

START_TEST(half_true16) {
  start("f16_t16");
  for (unsigned l = 0; l < 32; l++) {
    V(0, l) = hu((_Float16)rndf(-8, 8)) | (uint32_t)hu((_Float16)rndf(-8, 8)) << 16;
    V(1, l) = hu((_Float16)rndf(-8, 8)) | (uint32_t)hu((_Float16)rndf(-8, 8)) << 16;
    V(2, l) = fu(rndf(-70000, 70000));
    V(3, l) = 0x11112222u;
  }
  uint32_t a[32], b[32], c[32];
  memcpy(a, r.w.v[0], sizeof a);
  memcpy(b, r.w.v[1], sizeof b);
  memcpy(c, r.w.v[2], sizeof c);
  go();
  for (unsigned l = 0; l < 32; l++) {
    _Float16 al = uh((uint16_t)a[l]), ah = uh((uint16_t)(a[l] >> 16)), bl = uh((uint16_t)b[l]), bh = uh((uint16_t)(b[l] >> 16));
    _Float16 sum = (_Float16)((double)al + (double)bh), prod = (_Float16)((double)ah * (double)bl);
    ck_assert_uint_eq(V(3, l), (uint32_t)hu(sum) << 16 | hu(prod));
    ck_f32(V(4, l), (float)ah, "cvt_f32_f16 .h", l);
    ck_assert_uint_eq(V(5, l), hu((_Float16)uf(c[l])) | (uint32_t)hu((_Float16)uf(b[l])) << 16);
    ck_assert_uint_eq(V(6, l), hu(al) | (uint32_t)hu(bh) << 16);
    _Float16 fused = (_Float16)fma((double)al, (double)bl, 1.0);
    _Float16 mx = (float)ah > (float)bh ? ah : bh;
    ck_assert_uint_eq(V(7, l), hu(fused) | (uint32_t)hu(mx) << 16);
  }
  finish();
}
END_TEST

START_TEST(packed_and_mix) {
  start("pk_f16");
  for (unsigned l = 0; l < 32; l++)
    for (unsigned i = 0; i < 3; i++)
      V(i, l) = hu((_Float16)rndf(-4, 4)) | (uint32_t)hu((_Float16)rndf(-4, 4)) << 16;
  uint32_t in[3][32];
  memcpy(in, r.w.v, sizeof in);
  go();
  for (unsigned l = 0; l < 32; l++) {
    _Float16 x[2] = {uh((uint16_t)in[0][l]), uh((uint16_t)(in[0][l] >> 16))};
    _Float16 y[2] = {uh((uint16_t)in[1][l]), uh((uint16_t)(in[1][l] >> 16))};
    _Float16 z[2] = {uh((uint16_t)in[2][l]), uh((uint16_t)(in[2][l] >> 16))};
    _Float16 add0 = (_Float16)((double)x[0] + (double)y[0]), add1 = (_Float16)((double)x[1] + (double)y[1]);
    ck_assert_uint_eq(V(3, l), hu(add0) | (uint32_t)hu(add1) << 16);
    /* op_sel:[1,0] op_sel_hi:[0,1]: low = x.hi * y.lo, high = x.lo * y.hi */
    _Float16 m0 = (_Float16)((double)x[1] * (double)y[0]), m1 = (_Float16)((double)x[0] * (double)y[1]);
    ck_assert_uint_eq(V(4, l), hu(m0) | (uint32_t)hu(m1) << 16);
    _Float16 f0 = (_Float16)fma(-(double)x[0], (double)y[0], (double)z[0]);
    _Float16 f1 = (_Float16)fma((double)x[1], (double)y[1], (double)z[1]);
    ck_assert_uint_eq(V(5, l), hu(f0) | (uint32_t)hu(f1) << 16);
    _Float16 k0 = (_Float16)(1.0 + (double)x[0]), k1 = (_Float16)(-0.5 + (double)x[1]);
    ck_assert_uint_eq(V(6, l), hu(k0) | (uint32_t)hu(k1) << 16);
    ck_f32(V(7, l), fmaf((float)x[0], (float)y[0], uf(in[2][l])), "fma_mix f16 lo, f16 lo, f32", l);
    ck_f32(V(8, l), fmaf((float)x[1], uf(in[1][l]), uf(in[2][l])), "fma_mix f16 hi, f32, f32", l);
  }
  finish();
}
END_TEST

START_TEST(f64_ops) {
  start("f64_ops");
  double da[32], db[32];
  for (unsigned l = 0; l < 32; l++) {
    da[l] = rndf(-100, 100) * 1.000001, db[l] = rndf(-1e6f, 1e6f) / 3.0;
    memcpy(&r.w.v[0][l], (uint8_t *)&da[l], 4), memcpy(&r.w.v[1][l], (uint8_t *)&da[l] + 4, 4);
    memcpy(&r.w.v[2][l], (uint8_t *)&db[l], 4), memcpy(&r.w.v[3][l], (uint8_t *)&db[l] + 4, 4);
  }
  uint32_t lo[32];
  memcpy(lo, r.w.v[0], sizeof lo);
  go();
  for (unsigned l = 0; l < 32; l++) {
    double got;
    uint64_t bits;
#define D(reg) (bits = V(reg, l) | (uint64_t)V(reg + 1, l) << 32, memcpy(&got, &bits, 8), got)
    ck_assert_double_eq(D(4), da[l] + db[l]);
    ck_assert_double_eq(D(6), da[l]);
    ck_assert_double_eq(D(8), fma(da[l], db[l], -da[l]));
    if (!isnan(uf(lo[l]))) ck_assert_double_eq(D(10), (double)uf(lo[l]));
#undef D
    ck_f32(V(12, l), (float)db[l], "cvt_f32_f64", l);
    ck_assert_int_eq((int32_t)V(13, l), (int32_t)db[l]);
  }
  finish();
}
END_TEST

START_TEST(cross_lane) {
  start("lanes");
  for (unsigned l = 0; l < 32; l++) V(0, l) = 1000 + l, V(1, l) = l;
  S(6) = 777;
  r.w.s[RDNA3_EXEC_LO] = 0xfffffff0u;
  go();
  ck_assert_uint_eq(S(4), 1004);  /* first active lane */
  ck_assert_uint_eq(S(5), 1007);
  for (unsigned l = 0; l < 32; l++) ck_assert_uint_eq(V(1, l), l == 3 ? 777 : l);  /* writelane ignores EXEC */
  finish();
}
END_TEST

START_TEST(scalar_alu) {
  start("salu");
  S(0) = 0xfffffff5u, S(1) = 0x12345678u, S(2) = 0x20u, S(3) = 0x0abcdef0u;
  go();
  uint64_t x = 0x12345678fffffff5ull, y = 0x0abcdef000000020ull;
  ck_assert_uint_eq(S(4) | (uint64_t)S(5) << 32, x + y);
  ck_assert_uint_eq(S(6) | (uint64_t)S(7) << 32, x << 7);
  ck_assert_uint_eq(S(8), (0xfffffff5u >> 4) & 0xff);
  ck_assert_uint_eq(S(9), 0);
  ck_assert_uint_eq(S(10), 30);
  ck_assert_uint_eq(S(11), 11);  /* -11 < 32 */
  ck_assert_uint_eq(S(12), 0xfffffff5u * 0x20u);
  ck_assert_uint_eq(S(13), (uint32_t)((0xfffffff5ull * 0x20) >> 32));
  ck_assert_uint_eq(S(14), 0xfffffffeu);  /* -11 >> 3, arithmetic: -2 */
  ck_assert_uint_eq(S(15), 0xfffffff5u & ~0x20u);
  ck_assert_uint_eq(S(16), 0x20);
  ck_assert_uint_eq(S(17), 0xfffffff5u);
  ck_assert_uint_eq(S(18), 0xffff8001u);
  ck_assert_uint_eq(S(19), 0x12345678u);
  ck_assert_uint_eq(S(20), 0x0020fff5u);
  ck_assert_uint_eq(S(21), (0xfffffff5u << 2) + 0x20);
  ck_assert_uint_eq(S(22) | (uint64_t)S(23) << 32, x ^ y);
  ck_assert_uint_eq(S(24) | (uint64_t)S(25) << 32, x);  /* 0xfffffff5 > 0x10 */
  finish();

  start("loop");
  S(0) = 10;
  go();
  ck_assert_uint_eq(S(4), 10);
  ck_assert_uint_eq(S(5), 45);
  finish();

  start("getpc");
  go();
  ck_assert_uint_eq(S(8), 0);  /* s_setpc jumped over the s_mov_b32 s8, 1 */
  ck_assert_uint_eq(S(4) | (uint64_t)S(5) << 32, snippet_va(&g, "getpc") + 4);
  finish();
}
END_TEST

START_TEST(exec_masking) {
  start("saveexec");
  for (unsigned l = 0; l < 32; l++) V(0, l) = l;
  go();
  for (unsigned l = 0; l < 32; l++) ck_assert_uint_eq(V(3, l), l < 10 ? 6u : 105u);
  ck_assert_uint_eq(S(RDNA3_EXEC_LO), 0xffffffffu);
  ck_assert_uint_eq(S(4), 0xffffffffu);
  finish();
}
END_TEST

START_TEST(scalar_memory) {
  start("smem");
  uint64_t buf = gpu_alloc(&g, 64, 64);
  uint32_t *p = gpu_ptr(&g, buf);
  for (unsigned i = 0; i < 16; i++) p[i] = 0xa0000000u + i;
  S(0) = (uint32_t)buf, S(1) = (uint32_t)(buf >> 32);
  go();
  for (unsigned i = 0; i < 4; i++) ck_assert_uint_eq(S(4 + i), p[4 + i]);
  ck_assert_uint_eq(S(8), p[1]);
  ck_assert_uint_eq(S(9), 8);
  ck_assert_uint_eq(S(10), p[4]);  /* 0x8 + s9 (8) */
  ck_assert_uint_eq(S(11), p[5]);
  for (unsigned i = 0; i < 8; i++) ck_assert_uint_eq(S(12 + i), p[i]);
  finish();
}
END_TEST

START_TEST(global_memory) {
  start("global");
  uint64_t in = gpu_alloc(&g, 32 * 64 + 2048 + 64, 256) + 16, out = gpu_alloc(&g, 32 * 64 + 4096, 256);
  uint8_t *pi = gpu_ptr(&g, in), *po = gpu_ptr(&g, out);
  for (int i = -16; i < 32 * 64 + 48; i++) pi[i] = (uint8_t)(i * 37 + 11);
  S(0) = (uint32_t)in, S(1) = (uint32_t)(in >> 32), S(2) = (uint32_t)out, S(3) = (uint32_t)(out >> 32);
  for (unsigned l = 0; l < 32; l++) V(0, l) = l * 64;
  go();
  for (unsigned l = 0; l < 32; l++) {
    const uint8_t *b = pi + l * 64;
    uint32_t w[8];
    memcpy(w, b, 4);
    ck_assert_uint_eq(V(4, l), w[0]);
    memcpy(w, b + 16, 8);
    ck_assert_uint_eq(V(5, l), w[0]);
    ck_assert_uint_eq(V(6, l), w[1]);
    memcpy(w, b + 32, 16);
    for (int i = 0; i < 4; i++) ck_assert_uint_eq(V(7 + i, l), w[i]);
    memcpy(w, b - 16, 12);
    for (int i = 0; i < 3; i++) ck_assert_uint_eq(V(11 + i, l), w[i]);
    ck_assert_uint_eq(V(14, l), b[3]);
    ck_assert_uint_eq(V(15, l), (uint32_t)(int32_t)(int8_t)b[3]);
    uint16_t h, h0;
    memcpy(&h, b + 2, 2);
    memcpy(&h0, b, 2);
    ck_assert_uint_eq(V(16, l), h);
    ck_assert_uint_eq(V(17, l), (uint32_t)(int32_t)(int16_t)h);
    ck_assert_uint_eq(V(18, l), 0x55550000u | h0);
    ck_assert_uint_eq(V(19, l), 0x8888u | (uint32_t)h0 << 16);
    const uint8_t *o = po + l * 64;
    uint32_t st;
    memcpy(&st, o, 4);
    ck_assert_uint_eq(st, 0xdeadbeefu);
    memcpy(&h, o + 4, 2);
    ck_assert_uint_eq(h, 0xbeef);
    ck_assert_uint_eq(o[6], 0xef);
    ck_assert_uint_eq(o[7], 0);
    memcpy(&h, o + 8, 2);
    ck_assert_uint_eq(h, 0xdead);
    memcpy(w, pi + l * 64 + 2048, 16);  /* the b128 store went to in + lane*64 + 2048 */
    memcpy(w + 4, b + 32, 16);
    ck_assert_mem_eq(w, w + 4, 16);
  }
  finish();
}
END_TEST

START_TEST(global_atomics) {
  start("atomic");
  uint64_t buf = gpu_alloc(&g, 64, 64);
  uint32_t *p = gpu_ptr(&g, buf);
  p[0] = 1000, p[1] = (uint32_t)-50;
  S(0) = (uint32_t)buf, S(1) = (uint32_t)(buf >> 32);
  for (unsigned l = 0; l < 32; l++) V(0, l) = 0, V(2, l) = l + 1;
  V(2, 7) = (uint32_t)-3;
  go();
  uint32_t sum = 1000;
  for (unsigned l = 0; l < 32; l++) {
    ck_assert_uint_eq(V(1, l), sum);  /* lanes apply in order: each returns the value before it */
    sum += V(2, l);
  }
  ck_assert_uint_eq(p[0], sum);
  ck_assert_int_eq((int32_t)p[1], 32);
  finish();
}
END_TEST

START_TEST(lds) {
  start("lds");
  for (unsigned l = 0; l < 32; l++) V(0, l) = l * 4, V(10, l) = 4096, V(11, l) = l;
  go();
  uint32_t total = 0;
  for (unsigned l = 0; l < 32; l++) {
    ck_assert_uint_eq(V(2, l), l * 4);
    ck_assert_uint_eq(V(3, l), l * 4);                   /* offset0:64 -> +256 bytes: the v0 copy */
    ck_assert_uint_eq(V(4, l), 0x01020304u);             /* offset1:96 -> +384 bytes */
    ck_assert_uint_eq(V(5, l), 0x03);                    /* byte 1 of 0x01020304 stored at +128 */
    /* +2: the high half of lane l's word l*4 */
    ck_assert_uint_eq(V(6, l), (uint32_t)(int32_t)(int16_t)((l * 4) >> 16));
    /* b64 at l*4+124: the word at l*4+124 is lane (l+31)'s v0 if l+31 < 32, else lane (l-1)'s v1 */
    uint32_t w0 = l == 0 ? 124 : 0x01020304u;
    uint32_t w1 = 0x01020304u;
    ck_assert_uint_eq(V(7, l), w0);
    ck_assert_uint_eq(V(8, l), w1);
    ck_assert_uint_eq(V(9, l), total);
    total += l;
  }
  uint32_t at;
  memcpy(&at, r.lds + 4096, 4);
  ck_assert_uint_eq(at, total);
  finish();
}
END_TEST

START_TEST(flat_apertures) {
  start("flat");
  uint64_t buf = gpu_alloc(&g, 32 * 8 + 8, 256);
  S(0) = (uint32_t)buf, S(1) = (uint32_t)(buf >> 32);
  for (unsigned l = 0; l < 32; l++) V(0, l) = l * 8, V(3, l) = 0x1000 + l;
  r.w.s[RDNA3_EXEC_LO] = 0x0f0f0f0fu;  /* inactive lanes neither load nor store */
  go();
  const uint32_t *mem = gpu_ptr(&g, buf);
  for (unsigned l = 0; l < 32; l++) {
    bool on = (0x0f0f0f0fu >> l) & 1;
    uint32_t lds_word;
    memcpy(&lds_word, r.lds + l * 8, 4);
    ck_assert_uint_eq(lds_word, on ? 0x1000 + l : 0);
    ck_assert_uint_eq(mem[l * 2 + 1], on ? 0x1000 + l : 0);
    ck_assert_uint_eq(V(6, l), on ? 0x1000 + l : 0);
    ck_assert_uint_eq(V(7, l), on ? 0x1000 + l : 0);
  }
  finish();
}
END_TEST

START_TEST(scratch_swizzle) {
  start("scratch");
  uint64_t base = gpu_alloc(&g, 64 * 32, 256);
  r.c.scratch_base = base;
  r.c.scratch_lane_bytes = 64;
  S(4) = 16;
  for (unsigned l = 0; l < 32; l++) V(0, l) = 4 * (l % 4), V(1, l) = 100 + l, V(2, l) = 200 + l, V(3, l) = 300 + l;
  go();
  const uint32_t *mem = gpu_ptr(&g, base);
  for (unsigned l = 0; l < 32; l++) {
    ck_assert_uint_eq(V(5, l), 100 + l);
    ck_assert_uint_eq(V(6, l), 200 + l);
    ck_assert_uint_eq(V(7, l), 300 + l);
    /* dword i of lane l at i*128 + l*4 */
    ck_assert_uint_eq(mem[(l % 4) * 32 + l], 100 + l);
    ck_assert_uint_eq(mem[6 * 32 + l], 200 + l);
    ck_assert_uint_eq(mem[7 * 32 + l], 300 + l);
  }
  finish();
  start("scratch");  /* no scratch set up: a report, not a wild access */
  ck_assert_int_eq(wave_go(&r), -1);
  ck_assert_ptr_nonnull(strstr(r.rep.msg, "no scratch"));
  finish();
}
END_TEST

/* Every f16 to f32, and f32 to f16 rounding (ties, subnormals, overflow) against the compiler's
 * _Float16 conversions. */
START_TEST(half_conversions_exhaustive) {
  start("cvt16");
  for (uint32_t base = 0; base < 65536; base += 32) {
    r.w.pc = snippet_va(&g, "cvt16");
    r.w.done = false;
    uint32_t f[32], f2[32];
    for (unsigned l = 0; l < 32; l++) {
      V(0, l) = base + l;
      uint32_t h = base + l;  /* f32 values near half boundaries: h's f32 value with low bits set */
      f[l] = fu((float)uh((uint16_t)h)) + (l & 1 ? 0x1000 : 0xfff);
      f2[l] = rnd();
      V(3, l) = f[l], V(4, l) = f2[l];
    }
    go();
    for (unsigned l = 0; l < 32; l++) {
      float want = (float)uh((uint16_t)(base + l));
      if (!isnan(want)) ck_assert_uint_eq(V(1, l), fu(want));
      else ck_assert(isnan(uf(V(1, l))));
      uint16_t lo = (uint16_t)V(2, l), hi = (uint16_t)(V(2, l) >> 16);
      if (!isnan(uf(f[l]))) ck_assert_msg(lo == hu((_Float16)uf(f[l])), "f16(%a) = 0x%04x want 0x%04x", (double)uf(f[l]), lo, hu((_Float16)uf(f[l])));
      if (!isnan(uf(f2[l]))) ck_assert_uint_eq(hi, hu((_Float16)uf(f2[l])));
    }
  }
  finish();
}
END_TEST

/* The whole-wave fast path agrees with the per-lane semantics, bit for bit, on every opcode it
 * takes (random operands with float specials and shift counts past 31). */
START_TEST(fast_path_matches_lanes) {
  static const unsigned ops[] = {V_MOV_B32, V_ADD_NC_U32, V_SUB_NC_U32, V_SUBREV_NC_U32, V_AND_B32, V_OR_B32,
                                 V_XOR_B32, V_LSHLREV_B32, V_LSHRREV_B32, V_ASHRREV_I32, V_MUL_LO_U32,
                                 V_MUL_HI_U32, V_MAX_U32, V_MIN_U32, V_MAX_I32, V_MIN_I32, V_LSHL_OR_B32,
                                 V_LSHL_ADD_U32, V_ADD_LSHL_U32, V_ADD3_U32, V_OR3_B32, V_XAD_U32, V_AND_OR_B32,
                                 V_ADD_F32, V_SUB_F32, V_SUBREV_F32, V_MUL_F32, V_FMA_F32, V_MAX_F32, V_MIN_F32,
                                 V_CNDMASK_B32, V_ADD_CO_U32, V_SUB_CO_U32, V_SUBREV_CO_U32, V_ADD_CO_CI_U32,
                                 V_SUB_CO_CI_U32};
  static const uint32_t special[] = {0, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 1, 0xffffffffu, 31, 32, 0x3f800000u};
  for (unsigned round = 0; round < 50; round++) {
    uint32_t a[32], b[32], c[32], d[32], cin = rnd(), cout = 0;
    for (unsigned l = 0; l < 32; l++) {
      a[l] = l < 10 ? special[(l + round) % 10] : rnd();
      b[l] = l >= 10 && l < 20 ? special[(l + round) % 10] : rnd();
      c[l] = rnd();
    }
    for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++) {
      unsigned op = ops[i];
      bool carry = op == V_CNDMASK_B32 || (op >= V_ADD_CO_U32 && op <= V_SUBREV_CO_U32) || op == V_ADD_CO_CI_U32 ||
                   op == V_SUB_CO_CI_U32;
      ck_assert(carry ? rdna3_valu_fast_carry(op, a, b, cin, d, &cout) : rdna3_valu_fast(op, a, b, c, d));
      for (unsigned l = 0; l < 32; l++) {
        rdna3_lane x = {.s = {a[l], b[l], c[l]}, .cin = (cin >> l) & 1, .lane = l};
        ck_assert_int_eq(rdna3_lane_op(op, &x), 0);
        ck_assert_msg((uint32_t)x.d == d[l], "op 0x%x lane %u: fast 0x%08x, lane 0x%08x", op, l, d[l],
                      (uint32_t)x.d);
        if (carry && op != V_CNDMASK_B32) ck_assert_uint_eq((cout >> l) & 1, x.cout);
      }
    }
  }
}
END_TEST

TCase *asm_tests(void) {
  TCase *tc = tcase_create("asm");
  tcase_add_loop_test(tc, f32_binary, 0, 11);
  tcase_add_test(tc, f32_output_modifiers);
  tcase_add_test(tc, f32_constants);
  tcase_add_test(tc, f32_unary);
  tcase_add_test(tc, f32_convert_ldexp_med3);
  tcase_add_test(tc, f32_division_sequence);
  tcase_add_test(tc, f32_division_fuzz);
  tcase_add_test(tc, int32_ops);
  tcase_add_test(tc, int64_ops);
  tcase_add_test(tc, compares_and_cndmask);
  tcase_add_test(tc, vopd_dual_issue);
  tcase_add_test(tc, half_true16);
  tcase_add_test(tc, packed_and_mix);
  tcase_add_test(tc, f64_ops);
  tcase_add_test(tc, cross_lane);
  tcase_add_test(tc, scalar_alu);
  tcase_add_test(tc, exec_masking);
  tcase_add_test(tc, scalar_memory);
  tcase_add_test(tc, global_memory);
  tcase_add_test(tc, global_atomics);
  tcase_add_test(tc, lds);
  tcase_add_test(tc, flat_apertures);
  tcase_add_test(tc, scratch_swizzle);
  tcase_add_test(tc, half_conversions_exhaustive);
  tcase_add_test(tc, fast_path_matches_lanes);
  return tc;
}
