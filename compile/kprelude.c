/* compile/kprelude.c: static inline helpers emitted ahead of a rendered C kernel, each only when
 * the kernel uses it.
 *
 * bg_h2f/bg_f2h: IEEE binary16 <-> float32, round to nearest even, infinities, NaNs (quieted) and
 * denormals handled (the host-side twins are bg_f16_to_f32/bg_f32_to_f16 in util/half.c).
 * bg_bf2f/bg_f2bf: bfloat16, round to nearest even.
 * bg_d2f_odd: double -> float rounded to odd (truncate, then set the lowest bit if anything was
 * dropped), so that the float -> float16/bfloat16 rounding after it is the one correct rounding of the
 * double (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
 * rounding to odd": valid when the float keeps at least 2 more bits than the target; it keeps 13).
 * bg_threefry2x32: Threefry-2x32 with 20 rounds (Salmon et al., Random123), as tinygrad's
 * threefry2x32: x and key are uint64 whose low 32 bits are word 0 and high 32 bits word 1;
 * the result packs output word 0 in the low and word 1 in the high half.
 * bg_bc_<from>_<to>: bit casts through memcpy. */
#include <string.h>

#include "compile/krender.h"

static const char h2f[] =
    "static inline float bg_h2f(uint16_t h) {\n"
    "  uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, b;\n"
    "  if (e == 0x1fu) b = s | 0x7f800000u | (m << 13);\n"
    "  else if (e) b = s | ((e + 112u) << 23) | (m << 13);\n"
    "  else if (!m) b = s;\n"
    "  else {\n"
    "    e = 113u;\n"
    "    while (!(m & 0x400u)) { m <<= 1; e--; }\n"
    "    b = s | (e << 23) | ((m & 0x3ffu) << 13);\n"
    "  }\n"
    "  float f;\n"
    "  memcpy(&f, &b, sizeof f);\n"
    "  return f;\n"
    "}\n";

static const char f2h[] =
    "static inline uint16_t bg_f2h(float f) {\n"
    "  uint32_t x, s, a, h, rem;\n"
    "  memcpy(&x, &f, sizeof x);\n"
    "  s = (x >> 16) & 0x8000u;\n"
    "  a = x & 0x7fffffffu;\n"
    "  if (a > 0x7f800000u) return (uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu));\n"
    "  if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00u);\n"
    "  if (a < 0x38800000u) {\n"
    "    if (a <= 0x33000000u) return (uint16_t)s;\n"
    "    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, sh = 126u - e, half = 1u << (sh - 1u);\n"
    "    h = m >> sh;\n"
    "    rem = m & ((1u << sh) - 1u);\n"
    "    h += rem > half || (rem == half && (h & 1u));\n"
    "    return (uint16_t)(s | h);\n"
    "  }\n"
    "  h = (a - 0x38000000u) >> 13;\n"
    "  rem = a & 0x1fffu;\n"
    "  h += rem > 0x1000u || (rem == 0x1000u && (h & 1u));\n"
    "  return (uint16_t)(s | h);\n"
    "}\n";

static const char bf2f[] =
    "static inline float bg_bf2f(uint16_t h) {\n"
    "  uint32_t b = (uint32_t)h << 16;\n"
    "  float f;\n"
    "  memcpy(&f, &b, sizeof f);\n"
    "  return f;\n"
    "}\n";

static const char f2bf[] =
    "static inline uint16_t bg_f2bf(float f) {\n"
    "  uint32_t x;\n"
    "  memcpy(&x, &f, sizeof x);\n"
    "  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);\n"
    "  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);\n"
    "}\n";

static const char d2f_odd[] =
    "static inline float bg_d2f_odd(double d) {\n"
    "  float f = (float)d;\n"
    "  if (d == d && (double)f != d && d - d == 0) {\n"
    "    uint32_t x;\n"
    "    memcpy(&x, &f, sizeof x);\n"
    "    if (fabs((double)f) > fabs(d)) x--;\n"
    "    x |= 1u;\n"
    "    memcpy(&f, &x, sizeof f);\n"
    "  }\n"
    "  return f;\n"
    "}\n";

static const char threefry[] =
    "static inline uint32_t bg_rotl32(uint32_t x, unsigned r) { return (x << r) | (x >> (32u - r)); }\n"
    "static inline uint64_t bg_threefry2x32(uint64_t x, uint64_t key) {\n"
    "  static const unsigned rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};\n"
    "  const uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);\n"
    "  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1bd11bdau};\n"
    "  uint32_t x0 = (uint32_t)x + ks[0], x1 = (uint32_t)(x >> 32) + ks[1];\n"
    "  for (unsigned i = 0; i < 5u; i++) {\n"
    "    for (unsigned j = 0; j < 4u; j++) {\n"
    "      x0 += x1;\n"
    "      x1 = bg_rotl32(x1, rot[(i & 1u) * 4u + j]) ^ x0;\n"
    "    }\n"
    "    x0 += ks[(i + 1u) % 3u];\n"
    "    x1 += ks[(i + 2u) % 3u] + i + 1u;\n"
    "  }\n"
    "  return (uint64_t)x1 << 32 | x0;\n"
    "}\n";

void kprelude_emit(kstr *s, const kprelude *p) {
  kstr_puts(s, "#include <stdint.h>\n#include <string.h>\n#include <math.h>\n");
  if (p->need & KP_H2F) kstr_puts(s, h2f);
  if (p->need & KP_F2H) kstr_puts(s, f2h);
  if (p->need & KP_BF2F) kstr_puts(s, bf2f);
  if (p->need & KP_F2BF) kstr_puts(s, f2bf);
  if (p->need & KP_D2F_ODD) kstr_puts(s, d2f_odd);
  if (p->need & KP_THREEFRY) kstr_puts(s, threefry);
  for (unsigned i = 0; i < p->nbitcasts; i++) {
    const char *from = p->bitcasts[i][0], *to = p->bitcasts[i][1];
    kstr_printf(s, "static inline %s bg_bc_%s_%s(%s x) { %s y; memcpy(&y, &x, sizeof y); return y; }\n", to,
                kprelude_tag(from), kprelude_tag(to), from, to);
  }
}

const char *kprelude_tag(const char *ctype) {
  if (!strcmp(ctype, "_Bool")) return "bool";
  if (!strcmp(ctype, "float")) return "f32";
  if (!strcmp(ctype, "double")) return "f64";
  if (!strcmp(ctype, "int")) return "i32";
  static const struct { const char *c, *t; } tags[] = {
      {"int8_t", "i8"}, {"uint8_t", "u8"}, {"int16_t", "i16"}, {"uint16_t", "u16"},
      {"int32_t", "i32"}, {"uint32_t", "u32"}, {"int64_t", "i64"}, {"uint64_t", "u64"},
  };
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
    if (!strcmp(ctype, tags[i].c)) return tags[i].t;
  return "x";
}

void kprelude_bitcast(kprelude *p, const char *from, const char *to) {
  if (!strcmp(from, "int")) from = "int32_t";
  if (!strcmp(to, "int")) to = "int32_t";
  for (unsigned i = 0; i < p->nbitcasts; i++)
    if (!strcmp(p->bitcasts[i][0], from) && !strcmp(p->bitcasts[i][1], to)) return;
  if (p->nbitcasts < KP_MAX_BITCASTS) {
    p->bitcasts[p->nbitcasts][0] = from;
    p->bitcasts[p->nbitcasts][1] = to;
    p->nbitcasts++;
  }
}
