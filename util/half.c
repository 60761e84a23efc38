/* util/half.c: float32 <-> float16/bfloat16 on the host, bit exact with the C renderer's prelude
 * (compile/kprelude.c); round to nearest even as IEEE 754-2008 section 4.3.1 asks. */
#include "util/half.h"

#include <string.h>

uint16_t bg_f32_to_f16(float f) {
  uint32_t x, s, a, h, rem;
  memcpy(&x, &f, sizeof x);
  s = (x >> 16) & 0x8000u;
  a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu));   /* nan stays nan (quiet) */
  if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00u);                         /* >= 65520: inf */
  if (a < 0x38800000u) {                                                         /* below 2^-14 */
    if (a <= 0x33000000u) return (uint16_t)s;                                   /* <= 2^-25: 0 */
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, sh = 126u - e;
    h = m >> sh;
    rem = m & ((1u << sh) - 1u);
    uint32_t half = 1u << (sh - 1u);
    h += rem > half || (rem == half && (h & 1u));
    return (uint16_t)(s | h);
  }
  h = (a - 0x38000000u) >> 13;
  rem = a & 0x1fffu;
  h += rem > 0x1000u || (rem == 0x1000u && (h & 1u));
  return (uint16_t)(s | h);
}

float bg_f16_to_f32(uint16_t v) {
  uint32_t s = (uint32_t)(v & 0x8000u) << 16, e = (v >> 10) & 0x1fu, m = v & 0x3ffu, bits;
  if (e == 0x1f) {
    bits = s | 0x7f800000u | (m << 13);
  } else if (e) {
    bits = s | ((e + 112u) << 23) | (m << 13);
  } else if (!m) {
    bits = s;
  } else { /* denormal: normalize */
    e = 113;
    while (!(m & 0x400u)) {
      m <<= 1;
      e--;
    }
    bits = s | (e << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t bg_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float bg_bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}
