/* tests/mockgpu/rdna3/rdna3_valu_lane.c: what one lane of each VALU opcode computes (RDNA3 ISA
 * guide pseudocode). Float math uses the host's IEEE arithmetic (round to nearest even, denormals
 * kept, as gfx11 kernels run by default); transcendentals use the C library with the hardware's
 * conventions: v_exp is 2^x, v_log is log2, v_sin/v_cos take turns (x * 2pi radians). */
#include "rdna3_float.h"
#include "rdna3_ops.h"
#include "rdna3_valu.h"

#define F32(x) rdna3_f((uint32_t)(x))
#define F16(x) ((double)rdna3_h2f((uint16_t)(x)))  /* exact; sums and products of two stay exact */
#define F64(x) rdna3_d(x)
#define U32(x) rdna3_u(x)
#define U16(x) rdna3_d2h(x)

static uint32_t cvt_u32(double f) { return isnan(f) || f <= 0 ? 0 : f >= 4294967295.0 ? 0xffffffffu : (uint32_t)f; }
static int32_t cvt_i32(double f) {
  return isnan(f) ? 0 : f <= -2147483648.0 ? INT32_MIN : f >= 2147483647.0 ? INT32_MAX : (int32_t)f;
}
/* f32_to_i16 / f32_to_u16 of the ISA guide (V_CVT_PK_I16/U16_F32): truncate, saturate, NaN -> 0. */
static uint16_t cvt_i16(double f) { return (uint16_t)(isnan(f) ? 0 : f <= -32768.0 ? -32768 : f >= 32767.0 ? 32767 : (int)f); }
static uint16_t cvt_u16(double f) { return isnan(f) || f <= 0 ? 0 : f >= 65535.0 ? 0xffff : (uint16_t)f; }
static uint32_t bfe(uint32_t v, uint32_t off, uint32_t width, bool sign) {
  off &= 31, width &= 31;
  if (!width) return 0;
  uint32_t r = (v >> off) & ((1u << width) - 1);
  if (sign && (r >> (width - 1)) & 1) r |= ~0u << width;
  return r;
}
static float fract32(float x) {
  if (isinf(x)) return NAN;
  float r = x - floorf(x);
  return r >= 0x1.fffffep-1f ? 0x1.fffffep-1f : r;   /* a NaN stays NaN */
}
static float med3f(float a, float b, float c) { return fmaxf(fminf(a, b), fminf(fmaxf(a, b), c)); }
static int32_t sext24(uint32_t v) { return (int32_t)(v << 8) >> 8; }
static int exp32(float x) { return (int)((rdna3_u(x) >> 23) & 0xff); }
static int exp64(double x) { return (int)((rdna3_ud(x) >> 52) & 0x7ff); }
static float frexp_mant32(float x) { int e; return isinf(x) || isnan(x) ? x : frexpf(x, &e); }
static int frexp_exp32(float x) { int e = 0; if (isinf(x) || isnan(x)) return 0; frexpf(x, &e); return e; }
static double frexp_mant64(double x) { int e; return isinf(x) || isnan(x) ? x : frexp(x, &e); }
static int frexp_exp64(double x) { int e = 0; if (isinf(x) || isnan(x)) return 0; frexp(x, &e); return e; }

/* V_DIV_SCALE: scale operands of a division out of ranges where the reciprocal loses precision;
 * cout (VCC) tells V_DIV_FMAS to undo it. s0 is the value to scale (numerator or denominator). */
static double div_scale(double s0, double den, double num, bool *vcc, bool f64) {
  int bias = f64 ? 1023 : 127, mant = f64 ? 52 : 23, big = f64 ? 768 : 96, scale = f64 ? 128 : 64;
  int denorm_exp = 1 - bias;
  *vcc = false;
  if (num == 0 || den == 0) return NAN;
  if (!isfinite(num) || !isfinite(den)) return s0;  /* NaN and inf: V_DIV_FIXUP decides */
  int en = ilogb(num), ed = ilogb(den);
  double r = s0;
  bool inv_denorm = ilogb(1.0 / den) < denorm_exp, q_denorm = ilogb(num / den) < denorm_exp;
  if (en - ed >= big) {
    *vcc = true;
    if (s0 == den) r = ldexp(s0, scale);
  } else if (ed < denorm_exp) {
    r = ldexp(s0, scale);
  } else if (inv_denorm && q_denorm) {
    *vcc = true;  /* huge denominator, tiny quotient: scale the denominator down */
    if (s0 == den) r = ldexp(s0, -scale);
  } else if (inv_denorm) {
    r = ldexp(s0, -scale);
  } else if (q_denorm) {
    *vcc = true;
    if (s0 == num) r = ldexp(s0, scale);
  } else if (en <= mant - bias) {
    r = ldexp(s0, scale);
  }
  return r;
}

/* a*b + c scaled by 2^scale and rounded to float once (V_DIV_FMAS with VCC: the scaled result may
 * be a float denormal). The product is exact in double; TwoSum gives the sum's rounding error,
 * which sets the sticky low bit (round to odd) so that the final conversion rounds correctly. */
static float fma_scaled(float a, float b, float c, int scale) {
  double p = (double)a * b, s = p + c, bb = s - p, e = (p - (s - bb)) + (c - bb);
  if (e != 0 && isfinite(s)) {
    if ((e < 0) != (s < 0)) s = nextafter(s, 0.0);  /* |exact| < |s|: truncate toward zero */
    s = rdna3_d(rdna3_ud(s) | 1);
  }
  return (float)ldexp(s, scale);
}

/* V_DIV_FIXUP: special cases of num / den given the computed quotient q. */
static double div_fixup(double q, double den, double num) {
  bool sign = signbit(den) != signbit(num);
  if (isnan(num)) return num;
  if (isnan(den)) return den;
  if (den == 0 && num == 0) return NAN;
  if (isinf(den) && isinf(num)) return NAN;
  if (den == 0 || isinf(num)) return sign ? -INFINITY : INFINITY;
  if (isinf(den) || num == 0) return sign ? -0.0 : 0.0;
  if (isnan(q)) return sign ? -INFINITY : INFINITY;  /* the scaled quotient overflowed */
  return sign ? -fabs(q) : fabs(q);
}

static uint32_t perm_byte(uint64_t pair, unsigned sel) {
  if (sel < 8) return (uint32_t)(pair >> (8 * sel)) & 0xff;
  if (sel < 12) return (pair >> (16 * (sel - 8) + 15)) & 1 ? 0xff : 0;
  return sel == 12 ? 0 : 0xff;
}

int rdna3_lane_op(unsigned op, rdna3_lane *l) {
  uint64_t a = l->s[0], b = l->s[1], c = l->s[2];
  uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b, c32 = (uint32_t)c;
  uint64_t d = 0;
  switch (op) {
  /* moves and bit operations */
  case V_MOV_B32: case V_MOV_B16: d = a; break;
  case V_CNDMASK_B32: case V_CNDMASK_B16: d = l->cin ? b : a; break;
  case V_NOT_B32: d = ~a32; break;
  case V_NOT_B16: d = ~a & 0xffff; break;
  case V_BFREV_B32: for (int i = 0; i < 32; i++) d |= (uint64_t)((a32 >> i) & 1) << (31 - i); break;
  case V_CLZ_I32_U32: d = a32 ? (uint32_t)__builtin_clz(a32) : ~0u; break;
  case V_CTZ_I32_B32: d = a32 ? (uint32_t)__builtin_ctz(a32) : ~0u; break;
  case V_CLS_I32: d = rdna3_cls32(a32); break;
  case V_AND_B32: d = a32 & b32; break;
  case V_OR_B32: d = a32 | b32; break;
  case V_XOR_B32: d = a32 ^ b32; break;
  case V_XNOR_B32: d = ~(a32 ^ b32); break;
  case V_AND_B16: d = (a & b) & 0xffff; break;
  case V_OR_B16: d = (a | b) & 0xffff; break;
  case V_XOR_B16: d = (a ^ b) & 0xffff; break;
  case V_LSHLREV_B32: d = b32 << (a32 & 31); break;
  case V_LSHRREV_B32: d = b32 >> (a32 & 31); break;
  case V_ASHRREV_I32: d = (uint32_t)((int32_t)b32 >> (a32 & 31)); break;
  case V_LSHLREV_B64: d = b << (a32 & 63); break;
  case V_LSHRREV_B64: d = b >> (a32 & 63); break;
  case V_ASHRREV_I64: d = (uint64_t)((int64_t)b >> (a32 & 63)); break;
  case V_LSHLREV_B16: d = (b << (a & 15)) & 0xffff; break;
  case V_LSHRREV_B16: d = (b & 0xffff) >> (a & 15); break;
  case V_ASHRREV_I16: d = (uint16_t)((int16_t)b >> (a & 15)); break;
  case V_BFE_U32: d = bfe(a32, b32, c32, false); break;
  case V_BFE_I32: d = bfe(a32, b32, c32, true); break;
  case V_BFI_B32: d = (a32 & b32) | (~a32 & c32); break;
  case V_BFM_B32: d = (uint32_t)(((1ull << (a32 & 31)) - 1) << (b32 & 31)); break;
  case V_ALIGNBIT_B32: d = (uint32_t)((((uint64_t)a32 << 32) | b32) >> (c32 & 31)); break;
  case V_ALIGNBYTE_B32: d = (uint32_t)((((uint64_t)a32 << 32) | b32) >> (8 * (c32 & 3))); break;
  case V_PERM_B32: {
    uint64_t pair = (uint64_t)a32 << 32 | b32;
    for (int i = 0; i < 4; i++) d |= (uint64_t)perm_byte(pair, (c32 >> (8 * i)) & 0xff) << (8 * i);
    break;
  }
  case V_XOR3_B32: d = a32 ^ b32 ^ c32; break;
  case V_OR3_B32: d = a32 | b32 | c32; break;
  case V_AND_OR_B32: d = (a32 & b32) | c32; break;
  case V_LSHL_OR_B32: d = (a32 << (b32 & 31)) | c32; break;
  case V_LSHL_ADD_U32: d = (uint32_t)((a32 << (b32 & 31)) + c32); break;
  case V_ADD_LSHL_U32: d = (uint32_t)((a32 + b32) << (c32 & 31)); break;
  case V_XAD_U32: d = (uint32_t)((a32 ^ b32) + c32); break;
  case V_ADD3_U32: d = (uint32_t)(a32 + b32 + c32); break;
  case V_BCNT_U32_B32: d = (uint32_t)__builtin_popcount(a32) + b32; break;
  case V_MBCNT_LO_U32_B32: d = (uint32_t)__builtin_popcount(a32 & ((1u << l->lane) - 1)) + b32; break;
  case V_MBCNT_HI_U32_B32: d = b32; break;  /* wave32: no lanes 32..63 below this one */
  case V_PACK_B32_F16: d = (a & 0xffff) | (b & 0xffff) << 16; break;
  /* integer arithmetic */
  case V_ADD_NC_U32: case V_ADD_NC_I32: d = (uint32_t)(a32 + b32); break;
  case V_SUB_NC_U32: case V_SUB_NC_I32: d = (uint32_t)(a32 - b32); break;
  case V_SUBREV_NC_U32: d = (uint32_t)(b32 - a32); break;
  case V_ADD_CO_U32: d = (uint32_t)(a32 + b32); l->cout = (uint64_t)a32 + b32 > 0xffffffffu; break;
  case V_SUB_CO_U32: d = (uint32_t)(a32 - b32); l->cout = b32 > a32; break;
  case V_SUBREV_CO_U32: d = (uint32_t)(b32 - a32); l->cout = a32 > b32; break;
  case V_ADD_CO_CI_U32: {
    uint64_t t = (uint64_t)a32 + b32 + l->cin;
    d = (uint32_t)t;
    l->cout = t >> 32;
    break;
  }
  case V_SUB_CO_CI_U32: d = (uint32_t)(a32 - b32 - l->cin); l->cout = (uint64_t)b32 + l->cin > a32; break;
  case V_SUBREV_CO_CI_U32: d = (uint32_t)(b32 - a32 - l->cin); l->cout = (uint64_t)a32 + l->cin > b32; break;
  case V_ADD_NC_U16: case V_ADD_NC_I16: d = (a + b) & 0xffff; break;
  case V_SUB_NC_U16: case V_SUB_NC_I16: d = (a - b) & 0xffff; break;
  case V_MUL_LO_U16: d = (a * b) & 0xffff; break;
  case V_MAD_U16: d = (a * b + c) & 0xffff; break;
  case V_MAX_U16: d = a > b ? a : b; break;
  case V_MIN_U16: d = a < b ? a : b; break;
  case V_MAX_I16: d = (int16_t)a > (int16_t)b ? a : b; break;
  case V_MIN_I16: d = (int16_t)a < (int16_t)b ? a : b; break;
  /* 16-bit min3/max3 (LLVM folds two i8/i16 min/max into one: tensor min/max reductions of int8) */
  case V_MIN3_I16: { uint64_t m = (int16_t)a < (int16_t)b ? a : b; d = (int16_t)m < (int16_t)c ? m : c; break; }
  case V_MAX3_I16: { uint64_t m = (int16_t)a > (int16_t)b ? a : b; d = (int16_t)m > (int16_t)c ? m : c; break; }
  case V_MIN3_U16: { uint64_t m = (a & 0xffff) < (b & 0xffff) ? a : b; d = (m & 0xffff) < (c & 0xffff) ? m : c; break; }
  case V_MAX3_U16: { uint64_t m = (a & 0xffff) > (b & 0xffff) ? a : b; d = (m & 0xffff) > (c & 0xffff) ? m : c; break; }
  case V_MUL_LO_U32: d = (uint32_t)(a32 * b32); break;
  case V_MUL_HI_U32: d = (uint32_t)(((uint64_t)a32 * b32) >> 32); break;
  case V_MUL_HI_I32: d = (uint32_t)((uint64_t)((int64_t)(int32_t)a32 * (int32_t)b32) >> 32); break;
  case V_MUL_U32_U24: d = (uint32_t)((a32 & 0xffffff) * (b32 & 0xffffff)); break;
  case V_MUL_HI_U32_U24: d = (uint32_t)(((uint64_t)(a32 & 0xffffff) * (b32 & 0xffffff)) >> 32); break;
  case V_MUL_I32_I24: d = (uint32_t)((int64_t)sext24(a32) * sext24(b32)); break;
  case V_MUL_HI_I32_I24: d = (uint32_t)((uint64_t)((int64_t)sext24(a32) * sext24(b32)) >> 32); break;
  case V_MAD_U32_U24: d = (uint32_t)((a32 & 0xffffff) * (b32 & 0xffffff) + c32); break;
  case V_MAD_I32_I24: d = (uint32_t)((int64_t)sext24(a32) * sext24(b32) + (int32_t)c32); break;
  case V_MAD_U32_U16: d = (uint32_t)((a & 0xffff) * (b & 0xffff) + c32); break;
  case V_MAD_I32_I16: d = (uint32_t)((int64_t)(int16_t)a * (int16_t)b + (int32_t)c32); break;
  case V_MAD_U64_U32: {
    unsigned __int128 t = (unsigned __int128)((uint64_t)a32 * b32) + c;
    d = (uint64_t)t;
    l->cout = (t >> 64) != 0;
    break;
  }
  case V_MAD_I64_I32: {
    __int128 t = (__int128)((int64_t)(int32_t)a32 * (int32_t)b32) + (int64_t)c;
    d = (uint64_t)t;
    l->cout = t != (__int128)(int64_t)d;
    break;
  }
  case V_MIN_I32: d = (int32_t)a32 < (int32_t)b32 ? a32 : b32; break;
  case V_MAX_I32: d = (int32_t)a32 > (int32_t)b32 ? a32 : b32; break;
  case V_MIN_U32: d = a32 < b32 ? a32 : b32; break;
  case V_MAX_U32: d = a32 > b32 ? a32 : b32; break;
  case V_MIN3_I32: { int32_t m = (int32_t)a32 < (int32_t)b32 ? (int32_t)a32 : (int32_t)b32; d = (uint32_t)(m < (int32_t)c32 ? m : (int32_t)c32); break; }
  case V_MAX3_I32: { int32_t m = (int32_t)a32 > (int32_t)b32 ? (int32_t)a32 : (int32_t)b32; d = (uint32_t)(m > (int32_t)c32 ? m : (int32_t)c32); break; }
  case V_MIN3_U32: { uint32_t m = a32 < b32 ? a32 : b32; d = m < c32 ? m : c32; break; }
  case V_MAX3_U32: { uint32_t m = a32 > b32 ? a32 : b32; d = m > c32 ? m : c32; break; }
  case V_MED3_I32: {
    int32_t x = (int32_t)a32, y = (int32_t)b32, z = (int32_t)c32;
    int32_t lo = x < y ? x : y, hi = x < y ? y : x, m = hi < z ? hi : z;
    d = (uint32_t)(lo > m ? lo : m);
    break;
  }
  case V_MED3_U32: {
    uint32_t lo = a32 < b32 ? a32 : b32, hi = a32 < b32 ? b32 : a32, m = hi < c32 ? hi : c32;
    d = lo > m ? lo : m;
    break;
  }
  case V_MAXMIN_U32: { uint32_t m = a32 > b32 ? a32 : b32; d = m < c32 ? m : c32; break; }
  case V_MINMAX_U32: { uint32_t m = a32 < b32 ? a32 : b32; d = m > c32 ? m : c32; break; }
  case V_MAXMIN_I32: { int32_t m = (int32_t)a32 > (int32_t)b32 ? (int32_t)a32 : (int32_t)b32; d = (uint32_t)(m < (int32_t)c32 ? m : (int32_t)c32); break; }
  case V_MINMAX_I32: { int32_t m = (int32_t)a32 < (int32_t)b32 ? (int32_t)a32 : (int32_t)b32; d = (uint32_t)(m > (int32_t)c32 ? m : (int32_t)c32); break; }
  /* conversions */
  case V_CVT_F32_I32: d = U32((float)(int32_t)a32); break;
  case V_CVT_F32_U32: d = U32((float)a32); break;
  case V_CVT_U32_F32: d = cvt_u32(F32(a)); break;
  case V_CVT_I32_F32: d = (uint32_t)cvt_i32(F32(a)); break;
  case V_CVT_NEAREST_I32_F32: d = (uint32_t)cvt_i32(floor(F32(a) + 0.5)); break;
  case V_CVT_FLOOR_I32_F32: d = (uint32_t)cvt_i32(floor(F32(a))); break;
  case V_CVT_F16_F32: d = U16(F32(a)); break;
  case V_CVT_F32_F16: d = U32((float)F16(a)); break;
  case V_CVT_PK_I16_F32: d = cvt_i16(F32(a)) | (uint32_t)cvt_i16(F32(b)) << 16; break;
  case V_CVT_PK_U16_F32: d = cvt_u16(F32(a)) | (uint32_t)cvt_u16(F32(b)) << 16; break;
  case V_CVT_PK_RTZ_F16_F32: d = rdna3_f2h_mode(F32(a), true) | (uint32_t)rdna3_f2h_mode(F32(b), true) << 16; break;
  case V_CVT_F32_F64: d = U32((float)F64(a)); break;
  case V_CVT_F64_F32: d = rdna3_ud((double)F32(a)); break;
  case V_CVT_I32_F64: d = (uint32_t)cvt_i32(F64(a)); break;
  case V_CVT_U32_F64: d = cvt_u32(F64(a)); break;
  case V_CVT_F64_I32: d = rdna3_ud((double)(int32_t)a32); break;
  case V_CVT_F64_U32: d = rdna3_ud((double)a32); break;
  case V_CVT_F32_UBYTE0: case V_CVT_F32_UBYTE0 + 1: case V_CVT_F32_UBYTE0 + 2: case V_CVT_F32_UBYTE3:
    d = U32((float)((a32 >> (8 * (op - V_CVT_F32_UBYTE0))) & 0xff));
    break;
  case V_CVT_F16_U16: d = U16((float)(uint16_t)a); break;
  case V_CVT_F16_I16: d = U16((float)(int16_t)a); break;
  case V_CVT_U16_F16: { float f = F16(a); d = isnan(f) || f <= 0 ? 0 : f >= 65535.0f ? 0xffff : (uint16_t)f; break; }
  case V_CVT_I16_F16: { float f = F16(a); d = (uint16_t)(isnan(f) ? 0 : f <= -32768.0f ? -32768 : f >= 32767.0f ? 32767 : (int16_t)f); break; }
  case V_CVT_I32_I16: d = (uint32_t)(int32_t)(int16_t)a; break;
  case V_CVT_U32_U16: d = a & 0xffff; break;
  /* float32 */
  case V_ADD_F32: d = U32(F32(a) + F32(b)); break;
  case V_SUB_F32: d = U32(F32(a) - F32(b)); break;
  case V_SUBREV_F32: d = U32(F32(b) - F32(a)); break;
  case V_MUL_F32: d = U32(F32(a) * F32(b)); break;
  case V_MUL_DX9_ZERO_F32: d = F32(a) == 0 || F32(b) == 0 ? 0 : U32(F32(a) * F32(b)); break;
  case V_FMAC_DX9_ZERO_F32: d = F32(a) == 0 || F32(b) == 0 ? c32 : U32(fmaf(F32(a), F32(b), F32(c))); break;
  case V_FMA_F32: d = U32(fmaf(F32(a), F32(b), F32(c))); break;
  case V_MIN_F32: d = U32(fminf(F32(a), F32(b))); break;
  case V_MAX_F32: d = U32(fmaxf(F32(a), F32(b))); break;
  case V_MIN3_F32: d = U32(fminf(fminf(F32(a), F32(b)), F32(c))); break;
  case V_MAX3_F32: d = U32(fmaxf(fmaxf(F32(a), F32(b)), F32(c))); break;
  case V_MED3_F32: d = U32(med3f(F32(a), F32(b), F32(c))); break;
  case V_MAXMIN_F32: d = U32(fminf(fmaxf(F32(a), F32(b)), F32(c))); break;
  case V_MINMAX_F32: d = U32(fmaxf(fminf(F32(a), F32(b)), F32(c))); break;
  case V_LDEXP_F32: d = U32(ldexpf(F32(a), (int32_t)b32 < -1000 ? -1000 : (int32_t)b32 > 1000 ? 1000 : (int32_t)b32)); break;
  case V_FRACT_F32: d = U32(fract32(F32(a))); break;
  case V_TRUNC_F32: d = U32(truncf(F32(a))); break;
  case V_CEIL_F32: d = U32(ceilf(F32(a))); break;
  case V_RNDNE_F32: d = U32(nearbyintf(F32(a))); break;
  case V_FLOOR_F32: d = U32(floorf(F32(a))); break;
  case V_EXP_F32: d = U32(exp2f(F32(a))); break;
  case V_LOG_F32: d = U32(log2f(F32(a))); break;
  case V_RCP_F32: case V_RCP_IFLAG_F32: d = U32(1.0f / F32(a)); break;
  case V_RSQ_F32: d = U32((float)(1.0 / sqrt((double)F32(a)))); break;
  case V_SQRT_F32: d = U32(sqrtf(F32(a))); break;
  case V_SIN_F32: d = U32((float)sin((double)F32(a) * 2.0 * M_PI)); break;
  case V_COS_F32: d = U32((float)cos((double)F32(a) * 2.0 * M_PI)); break;
  case V_FREXP_MANT_F32: d = U32(frexp_mant32(F32(a))); break;
  case V_FREXP_EXP_I32_F32: d = (uint32_t)frexp_exp32(F32(a)); break;
  case V_DIV_SCALE_F32: d = U32((float)div_scale(F32(a), F32(b), F32(c), &l->cout, false)); break;
  case V_DIV_FMAS_F32:
    d = U32(l->cin ? fma_scaled(F32(a), F32(b), F32(c), exp32(F32(c)) > 127 ? 64 : -64) : fmaf(F32(a), F32(b), F32(c)));
    break;
  case V_DIV_FIXUP_F32: d = U32((float)div_fixup(F32(a), F32(b), F32(c))); break;
  /* float16: computed in double (exact for a sum or product of two halves), rounded once */
  case V_ADD_F16: d = U16(F16(a) + F16(b)); break;
  case V_SUB_F16: d = U16(F16(a) - F16(b)); break;
  case V_SUBREV_F16: d = U16(F16(b) - F16(a)); break;
  case V_MUL_F16: d = U16(F16(a) * F16(b)); break;
  case V_FMA_F16: d = U16(F16(a) * F16(b) + F16(c)); break;
  case V_MAX_F16: d = U16(fmaxf(F16(a), F16(b))); break;
  case V_MIN_F16: d = U16(fminf(F16(a), F16(b))); break;
  case V_MAX3_F16: d = U16(fmaxf(fmaxf(F16(a), F16(b)), F16(c))); break;
  case V_MIN3_F16: d = U16(fminf(fminf(F16(a), F16(b)), F16(c))); break;
  case V_MED3_F16: d = U16(med3f(F16(a), F16(b), F16(c))); break;
  case V_MAXMIN_F16: d = U16(fminf(fmaxf(F16(a), F16(b)), F16(c))); break;
  case V_MINMAX_F16: d = U16(fmaxf(fminf(F16(a), F16(b)), F16(c))); break;
  case V_LDEXP_F16: d = U16(ldexpf(F16(a), (int16_t)b)); break;
  case V_RCP_F16: d = U16(1.0f / F16(a)); break;
  case V_SQRT_F16: d = U16(sqrtf(F16(a))); break;
  case V_RSQ_F16: d = U16(1.0f / sqrtf(F16(a))); break;
  case V_LOG_F16: d = U16(log2f(F16(a))); break;
  case V_EXP_F16: d = U16(exp2f(F16(a))); break;
  case V_SIN_F16: d = U16((float)sin((double)F16(a) * 2.0 * M_PI)); break;
  case V_COS_F16: d = U16((float)cos((double)F16(a) * 2.0 * M_PI)); break;
  case V_FLOOR_F16: d = U16(floorf(F16(a))); break;
  case V_CEIL_F16: d = U16(ceilf(F16(a))); break;
  case V_TRUNC_F16: d = U16(truncf(F16(a))); break;
  case V_RNDNE_F16: d = U16(nearbyintf(F16(a))); break;
  case V_FRACT_F16: { float x = F16(a), r = x - floorf(x); d = isinf(x) ? 0x7e00 : U16(r >= 0.99951171875f ? 0.99951171875f : r); break; }
  case V_FREXP_MANT_F16: d = U16(frexp_mant32(F16(a))); break;
  case V_FREXP_EXP_I16_F16: d = (uint16_t)frexp_exp32(F16(a)); break;
  case V_DIV_FIXUP_F16: d = U16((float)div_fixup(F16(a), F16(b), F16(c))); break;
  /* float64 */
  case V_ADD_F64: d = rdna3_ud(F64(a) + F64(b)); break;
  case V_MUL_F64: d = rdna3_ud(F64(a) * F64(b)); break;
  case V_FMA_F64: d = rdna3_ud(fma(F64(a), F64(b), F64(c))); break;
  case V_MIN_F64: d = rdna3_ud(fmin(F64(a), F64(b))); break;
  case V_MAX_F64: d = rdna3_ud(fmax(F64(a), F64(b))); break;
  case V_LDEXP_F64: d = rdna3_ud(ldexp(F64(a), (int32_t)b32 < -3000 ? -3000 : (int32_t)b32 > 3000 ? 3000 : (int32_t)b32)); break;
  case V_RCP_F64: d = rdna3_ud(1.0 / F64(a)); break;
  case V_RSQ_F64: d = rdna3_ud(1.0 / sqrt(F64(a))); break;
  case V_SQRT_F64: d = rdna3_ud(sqrt(F64(a))); break;
  case V_TRUNC_F64: d = rdna3_ud(trunc(F64(a))); break;
  case V_CEIL_F64: d = rdna3_ud(ceil(F64(a))); break;
  case V_RNDNE_F64: d = rdna3_ud(nearbyint(F64(a))); break;
  case V_FLOOR_F64: d = rdna3_ud(floor(F64(a))); break;
  case V_FRACT_F64: { double x = F64(a), r = x - floor(x); d = rdna3_ud(isinf(x) ? NAN : r >= 0x1.fffffffffffffp-1 ? 0x1.fffffffffffffp-1 : r); break; }
  case V_FREXP_MANT_F64: d = rdna3_ud(frexp_mant64(F64(a))); break;
  case V_FREXP_EXP_I32_F64: d = (uint32_t)frexp_exp64(F64(a)); break;
  case V_DIV_SCALE_F64: d = rdna3_ud(div_scale(F64(a), F64(b), F64(c), &l->cout, true)); break;
  case V_DIV_FMAS_F64: {
    double r = fma(F64(a), F64(b), F64(c));
    if (l->cin) r = ldexp(r, exp64(F64(c)) > 1023 ? 128 : -128);
    d = rdna3_ud(r);
    break;
  }
  case V_DIV_FIXUP_F64: d = rdna3_ud(div_fixup(F64(a), F64(b), F64(c))); break;
  default: return -1;
  }
  l->d = d;
  return 0;
}
