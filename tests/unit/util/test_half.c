/* tests/unit/util/test_half.c: util/half.h against references computed another way: the
 * float16/bfloat16 grid rounded with nearbyint() in double (round to nearest even, the default
 * mode, IEEE 754-2008 section 4.3.1), gcc's _Float16 where the compiler has it, and known
 * binary16 bit patterns (IEEE 754 section 3.6 table: 1.0 = 0x3c00, max 65504 = 0x7bff). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "util/half.h"

TCase *half_tcase(void);

static float from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static uint32_t bits_of(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* binary16 by value: denormal steps 2^-24, normals 10 fraction bits; >= 65520 rounds to inf. */
static uint16_t ref_f16(float f) {
  uint16_t s = signbit(f) ? 0x8000u : 0;
  double a = fabs((double)f);
  if (a >= 65520.0) return s | 0x7c00u;
  if (a < 0x1p-14) return (uint16_t)(s | (uint16_t)nearbyint(ldexp(a, 24))); /* 1024 is 0x0400, the smallest normal */
  int e = ilogb(a);
  uint32_t q = (uint32_t)nearbyint(ldexp(a, 10 - e)); /* 1024..2048; 2048 carries into the exponent */
  return (uint16_t)(s | (((uint32_t)(e + 15) << 10) + q - 1024u));
}

/* bfloat16 by value: float32's exponent range, 7 fraction bits, denormal step 2^-133. */
static uint16_t ref_bf16(float f) {
  uint16_t s = signbit(f) ? 0x8000u : 0;
  double a = fabs((double)f);
  if (isinf(a)) return s | 0x7f80u;
  if (a < 0x1p-126) return (uint16_t)(s | (uint16_t)nearbyint(ldexp(a, 133)));
  int e = ilogb(a);
  uint32_t q = (uint32_t)nearbyint(ldexp(a, 7 - e));
  uint32_t b = ((uint32_t)(e + 127) << 7) + q - 128u;
  return (uint16_t)(s | (b >= 0x7f80u ? 0x7f80u : b));
}

/* float16 -> double by the formula of its definition (exponent bias 15). */
static double ref_f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

START_TEST(f16_known_patterns) {
  static const struct { float f; uint16_t h; } k[] = {
      {0.0f, 0x0000},          {-0.0f, 0x8000},       {1.0f, 0x3c00},         {-2.0f, 0xc000},
      {65504.0f, 0x7bff},      {65519.0f, 0x7bff},    {65520.0f, 0x7c00},     {1e9f, 0x7c00},
      {-INFINITY, 0xfc00},     {INFINITY, 0x7c00},    {0x1p-14f, 0x0400},     {0x1p-24f, 0x0001},
      {0x1p-25f, 0x0000},      /* tie between 0 and the smallest denormal: even, 0 */
      {0x1.8p-24f, 0x0002},    /* tie between denormals 1 and 2: even, 2 */
      {0x1.000002p-25f, 0x0001}, {-0x1p-26f, 0x8000},
      {1.0f + 0x1p-11f, 0x3c00}, /* tie: 1.0 and 1+2^-10, 1.0 is even */
      {1.0f + 0x3p-11f, 0x3c02}, /* tie: 1+2^-10 and 1+2^-9, the latter is even */
      {0x1.ffcp-15f, 0x0400},  /* the largest denormal's neighbour rounds up to the smallest normal */
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    ck_assert_msg(bg_f32_to_f16(k[i].f) == k[i].h, "f32 %a: got 0x%04x, expected 0x%04x", (double)k[i].f,
                  bg_f32_to_f16(k[i].f), k[i].h);
  ck_assert_uint_eq(bg_f32_to_f16(from_bits(0x3f801001u)), 0x3c01); /* just above the tie after 1.0 */
  ck_assert_uint_eq(bg_f32_to_f16(from_bits(0x3f800fffu)), 0x3c00); /* just below it */
}
END_TEST

START_TEST(f16_nan_stays_quiet_nan) {
  static const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fa00000u, 0x7fffe000u};
  for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
    uint16_t h = bg_f32_to_f16(from_bits(nans[i]));
    ck_assert_msg((h & 0x7e00u) == 0x7e00u, "NaN 0x%08x -> 0x%04x is not a quiet NaN", nans[i], h);
    ck_assert_msg((h & 0x8000u) == ((nans[i] >> 16) & 0x8000u), "NaN 0x%08x -> 0x%04x lost its sign", nans[i], h);
    ck_assert(isnan(bg_f16_to_f32(h)));
  }
}
END_TEST

/* Every 16-bit pattern converts to its exact value; a NaN keeps its payload (shifted into float32). */
/* In the sweeps a passing ck_assert_msg still records a checkpoint through Check's pipe (millions here, over a
 * minute under the sanitizers): test first, fail with the same message only on a mismatch. */
#define SWEEP_CHECK(cond, ...)              \
  do {                                      \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

START_TEST(f16_to_f32_all_patterns) {
  for (uint32_t h = 0; h <= 0xffffu; h++) {
    float got = bg_f16_to_f32((uint16_t)h);
    double want = ref_f16_value((uint16_t)h);
    if (isnan(want)) {
      SWEEP_CHECK(isnan(got) && (bits_of(got) & 0x7fe000u) >> 13 == (h & 0x3ffu), "0x%04x: got %a", h, (double)got);
      continue;
    }
    SWEEP_CHECK((double)got == want && !signbit(got) == !signbit(want), "0x%04x: got %a, expected %a", h,
                  (double)got, want);
#ifdef __FLT16_MAX__
    _Float16 x;
    uint16_t hb = (uint16_t)h;
    memcpy(&x, &hb, sizeof x);
    SWEEP_CHECK((float)x == got, "0x%04x: got %a, _Float16 says %a", h, (double)got, (double)(float)x);
#endif
  }
}
END_TEST

/* A sweep through float32 (about 2^20 patterns of either sign, every exponent, with low
 * fraction bits that make ties and near-ties) against the nearbyint reference and _Float16. */
START_TEST(f32_to_f16_sweep) {
  for (uint64_t b = 0; b <= 0xffffffffu; b += 0x1001u) {
    uint32_t lo[] = {(uint32_t)b, ((uint32_t)b & ~0x1fffu) | 0x1000u, ((uint32_t)b & ~0xffffffu) | 0x800000u};
    for (size_t j = 0; j < 3; j++) {
      float f = from_bits(lo[j]);
      if (isnan(f)) continue;
      uint16_t got = bg_f32_to_f16(f);
      SWEEP_CHECK(got == ref_f16(f), "f32 0x%08x (%a): got 0x%04x, expected 0x%04x", lo[j], (double)f, got, ref_f16(f));
#ifdef __FLT16_MAX__
      _Float16 x = (_Float16)f;
      uint16_t xb;
      memcpy(&xb, &x, sizeof xb);
      SWEEP_CHECK(got == xb, "f32 0x%08x: got 0x%04x, _Float16 says 0x%04x", lo[j], got, xb);
#endif
    }
  }
}
END_TEST

START_TEST(bf16_known_and_sweep) {
  ck_assert_uint_eq(bg_f32_to_bf16(1.0f), 0x3f80);
  ck_assert_uint_eq(bg_f32_to_bf16(-INFINITY), 0xff80);
  ck_assert_uint_eq(bg_f32_to_bf16(from_bits(0x3f808000u)), 0x3f80); /* tie, 0x3f80 is even */
  ck_assert_uint_eq(bg_f32_to_bf16(from_bits(0x3f818000u)), 0x3f82); /* tie, 0x3f82 is even */
  ck_assert_uint_eq(bg_f32_to_bf16(from_bits(0x7f7fffffu)), 0x7f80); /* FLT_MAX rounds to inf */
  ck_assert_uint_eq(bg_f32_to_bf16(from_bits(0x00008000u)), 0x0000); /* denormal tie to even 0 */
  ck_assert_uint_eq(bg_f32_to_bf16(from_bits(0x00018000u)), 0x0002);
  uint16_t q = bg_f32_to_bf16(from_bits(0x7f800001u)); /* signalling NaN: must not become inf */
  ck_assert_msg((q & 0x7fc0u) == 0x7fc0u, "sNaN -> 0x%04x", q);
  for (uint64_t b = 0; b <= 0xffffffffu; b += 0x1001u) {
    uint32_t lo[] = {(uint32_t)b, ((uint32_t)b & ~0xffffu) | 0x8000u};
    for (size_t j = 0; j < 2; j++) {
      float f = from_bits(lo[j]);
      if (isnan(f)) continue;
      SWEEP_CHECK(bg_f32_to_bf16(f) == ref_bf16(f), "f32 0x%08x: got 0x%04x, expected 0x%04x", lo[j],
                    bg_f32_to_bf16(f), ref_bf16(f));
    }
  }
  for (uint32_t h = 0; h <= 0xffffu; h++) {
    float f = bg_bf16_to_f32((uint16_t)h);
    if (!isnan(f)) SWEEP_CHECK(bg_f32_to_bf16(f) == h, "bf16 0x%04x does not round-trip", h);
  }
}
END_TEST

TCase *half_tcase(void) {
  TCase *tc = tcase_create("half");
  tcase_add_test(tc, f16_known_patterns);
  tcase_add_test(tc, f16_nan_stays_quiet_nan);
  tcase_add_test(tc, f16_to_f32_all_patterns);
  tcase_add_test(tc, f32_to_f16_sweep);
  tcase_add_test(tc, bf16_known_and_sweep);
  return tc;
}
