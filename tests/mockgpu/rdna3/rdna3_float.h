/* tests/mockgpu/rdna3/rdna3_float.h: bit-exact float helpers for the VALU: IEEE half conversions
 * (round to nearest even, or toward zero for v_cvt_pk_rtz_f16_f32), bit casts, class tests. */
#ifndef BG_MOCKGPU_RDNA3_FLOAT_H
#define BG_MOCKGPU_RDNA3_FLOAT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline float rdna3_f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t rdna3_u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline double rdna3_d(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
static inline uint64_t rdna3_ud(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }

/* IEEE binary16 -> binary32 (exact). */
static inline float rdna3_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return rdna3_f(sign | 0x7f800000 | man << 13);
  if (exp == 0) {
    float m = ldexpf((float)man, -24);
    return sign ? -m : m;
  }
  return rdna3_f(sign | (exp + 112) << 23 | man << 13);
}

/* binary32 -> binary16, round to nearest even (rtz: toward zero). NaN stays quiet NaN. */
static inline uint16_t rdna3_f2h_mode(float f, bool rtz) {
  uint32_t u = rdna3_u(f), sign = (u >> 16) & 0x8000, abs = u & 0x7fffffff;
  if (abs > 0x7f800000) return (uint16_t)(sign | 0x7e00 | ((abs >> 13) & 0x3ff));
  if (abs == 0x7f800000) return (uint16_t)(sign | 0x7c00);
  int exp = (int)(abs >> 23) - 127;
  uint32_t man = (abs & 0x7fffff) | 0x800000;  /* 24 significant bits */
  if (exp > 15) return (uint16_t)(sign | (rtz ? 0x7bff : 0x7c00));
  if (abs == 0) return (uint16_t)sign;
  int shift = exp >= -14 ? 13 : 13 + (-14 - exp);  /* bits dropped from the 24-bit significand */
  if (shift > 25) return (uint16_t)sign;
  uint32_t kept = man >> shift, rest = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (!rtz && (rest > halfway || (rest == halfway && (kept & 1)))) kept++;
  uint32_t r;
  if (exp >= -14) r = ((uint32_t)(exp + 15) << 10) + (kept - 0x400);  /* a rounding carry bumps exp */
  else r = kept;  /* subnormal; a carry into bit 10 makes it the smallest normal, as it should */
  if (r >= 0x7c00) r = rtz ? 0x7bff : 0x7c00;
  return (uint16_t)(sign | r);
}
static inline uint16_t rdna3_f2h(float f) { return rdna3_f2h_mode(f, false); }

/* binary64 -> binary16 with one rounding: go through float rounded to odd (truncate, then set
 * the sticky low bit when inexact), which keeps enough bits for the final nearest-even step. */
static inline uint16_t rdna3_d2h(double d) {
  float f = (float)d;
  if (isfinite(f) && (double)f != d) {
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    f = rdna3_f(rdna3_u(f) | 1);
  }
  return rdna3_f2h(f);
}

/* V_CMP_CLASS mask bit of a value of `bits` width (16, 32, 64): 0 sNaN, 1 qNaN, 2 -inf,
 * 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf. */
static inline unsigned rdna3_class(uint64_t v, unsigned bits) {
  unsigned mbits = bits == 16 ? 10 : bits == 32 ? 23 : 52, ebits = bits - 1 - mbits;
  bool neg = (v >> (bits - 1)) & 1;
  uint64_t exp = (v >> mbits) & ((1ull << ebits) - 1), man = v & ((1ull << mbits) - 1);
  if (exp == (1ull << ebits) - 1) {
    if (!man) return neg ? 2 : 9;
    return (man >> (mbits - 1)) & 1 ? 1 : 0;
  }
  if (exp) return neg ? 3 : 8;
  if (man) return neg ? 4 : 7;
  return neg ? 5 : 6;
}

#endif
