/* tests/mockgpu/ptx/ptx_arith.c: integer, float and logic instructions, setp, selp and mov.
 * f32 arithmetic is done in float, f64 in double (IEEE, round to nearest unless .rz/.rm/.rp, which
 * switch the host rounding mode); f16 in float rounded once to half (exact for + - * / sqrt: float has
 * more than 2*11+2 bits). .approx functions use the host libm (more accurate than the hardware). */
#include "ptx_internal.h"

#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int unknown(ptx_cta *c, const char *what) {
  snprintf(c->err, c->errlen, "%s", what);
  return -1;
}

static float f32(uint64_t b) { float f; uint32_t u = (uint32_t)b; memcpy(&f, &u, 4); return f; }
static double f64(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
static uint64_t b32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static uint64_t b64(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static float ftz(float f, bool on) { return on && fpclassify(f) == FP_SUBNORMAL ? copysignf(0.0f, f) : f; }

static int set_round(int rnd) {
  int old = fegetround();
  fesetround(rnd == R_RZ ? FE_TOWARDZERO : rnd == R_RM ? FE_DOWNWARD : rnd == R_RP ? FE_UPWARD : FE_TONEAREST);
  return old;
}

static bool fcmp(int cmp, double a, double b) {
  bool un = isnan(a) || isnan(b);
  switch (cmp) {
  case C_EQ: return !un && a == b;   case C_NE: return !un && a != b;
  case C_LT: return !un && a < b;    case C_LE: return !un && a <= b;
  case C_GT: return !un && a > b;    case C_GE: return !un && a >= b;
  case C_EQU: return un || a == b;   case C_NEU: return un || a != b;
  case C_LTU: return un || a < b;    case C_LEU: return un || a <= b;
  case C_GTU: return un || a > b;    case C_GEU: return un || a >= b;
  case C_NUM: return !un;            case C_NAN: return un;
  default: return false;
  }
}
static bool icmp(int cmp, uint64_t a, uint64_t b, bool sgn) {
  int64_t sa = (int64_t)a, sb = (int64_t)b;
  switch (cmp) {
  case C_EQ: return a == b; case C_NE: return a != b;
  case C_LT: return sgn ? sa < sb : a < b;   case C_LE: return sgn ? sa <= sb : a <= b;
  case C_GT: return sgn ? sa > sb : a > b;   case C_GE: return sgn ? sa >= sb : a >= b;
  case C_LO: return a < b; case C_LS: return a <= b; case C_HI: return a > b; case C_HS: return a >= b;
  default: return false;
  }
}

/* One float operation in the precision of T (float for f32/f16, double for f64). */
#define FLOAT_OP(T, SQRT, FMA, FMIN, FMAX, FABS, EXP2, LOG2, SIN, COS)                                             \
  switch (in->op) {                                                                                               \
  case OP_ADD: r = a + b; break;                                                                                  \
  case OP_SUB: r = a - b; break;                                                                                  \
  case OP_MUL: r = a * b; break;                                                                                  \
  case OP_MAD: case OP_FMA: r = FMA(a, b, x); break;                                                             \
  case OP_DIV: r = a / b; break;                                                                                  \
  case OP_MIN: r = isnan(a) ? b : isnan(b) ? a : FMIN(a, b); break;                                               \
  case OP_MAX: r = isnan(a) ? b : isnan(b) ? a : FMAX(a, b); break;                                               \
  case OP_NEG: r = -a; break;                                                                                     \
  case OP_ABS: r = FABS(a); break;                                                                                \
  case OP_RCP: r = (T)1 / a; break;                                                                               \
  case OP_SQRT: r = SQRT(a); break;                                                                               \
  case OP_RSQRT: r = (T)1 / SQRT(a); break;                                                                       \
  case OP_EX2: r = EXP2(a); break;                                                                                \
  case OP_LG2: r = LOG2(a); break;                                                                                \
  case OP_SIN: r = SIN(a); break;                                                                                 \
  case OP_COS: r = COS(a); break;                                                                                 \
  default: return unknown(c, "float operation not implemented");                                                  \
  }

/* One f16 operation: computed in float, rounded once to half (to nearest). */
static int f16_lane(ptx_cta *c, const ptx_ins *in, uint16_t ha, uint16_t hb, uint16_t hx, uint16_t *out) {
  if (in->rnd > R_RN) return unknown(c, "f16 rounding other than .rn not implemented");
  float a = ptx_h2f(ha), b = ptx_h2f(hb), x = ptx_h2f(hx), r;
  if (in->op == OP_FMA || in->op == OP_MAD) { /* a*b exact in double: one rounding, double -> half */
    *out = ptx_d2h((double)a * (double)b + (double)x);
    if (!(in->flags & F_SAT)) return 0;
    r = ptx_h2f(*out);
  } else {
    FLOAT_OP(float, sqrtf, fmaf, fminf, fmaxf, fabsf, exp2f, log2f, sinf, cosf)
  }
  if (in->flags & F_SAT) r = isnan(r) ? 0.0f : r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
  int mode = fegetround();
  fesetround(FE_TONEAREST);
  *out = ptx_f2h(r);
  fesetround(mode);
  return 0;
}

static int float_alu(ptx_cta *c, ptx_thread *t, const ptx_ins *in, int ty) {
  uint64_t va = in->nops > 1 ? ptx_get(c, t, &in->ops[1], ty) : 0;
  uint64_t vb = in->nops > 2 ? ptx_get(c, t, &in->ops[2], ty) : 0;
  uint64_t vc = in->nops > 3 ? ptx_get(c, t, &in->ops[3], ty) : 0;
  bool z = in->flags & F_FTZ;
  bool approx_only = in->op == OP_EX2 || in->op == OP_LG2 || in->op == OP_SIN || in->op == OP_COS || in->op == OP_RSQRT;
  if (approx_only && !(in->flags & F_APPROX)) return unknown(c, "needs .approx");
  if ((in->op == OP_FMA) && !in->rnd) return unknown(c, "fma without a rounding modifier");
  int old = set_round(in->rnd);
  uint64_t out;
  if (ty == T_F64) {
    double a = f64(va), b = f64(vb), x = f64(vc), r;
    FLOAT_OP(double, sqrt, fma, fmin, fmax, fabs, exp2, log2, sin, cos)
    out = b64(r);
  } else if (ty == T_F32) {
    float a = ftz(f32(va), z), b = ftz(f32(vb), z), x = ftz(f32(vc), z), r;
    FLOAT_OP(float, sqrtf, fmaf, fminf, fmaxf, fabsf, exp2f, log2f, sinf, cosf)
    r = ftz(r, z);
    if (in->flags & F_SAT) r = isnan(r) ? 0.0f : r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
    out = b32(r);
  } else if (ty == T_F32X2) { /* sm_100+ add/sub/mul/fma .f32x2 on a .b64 register: two f32 lanes, low first */
    if (in->op != OP_ADD && in->op != OP_SUB && in->op != OP_MUL && in->op != OP_FMA) {
      fesetround(old);
      return unknown(c, ".f32x2 takes add, sub, mul and fma only");
    }
    out = 0;
    for (int k = 0; k < 2; k++) {
      float a = ftz(f32((uint32_t)(va >> 32 * k)), z), b = ftz(f32((uint32_t)(vb >> 32 * k)), z);
      float x = ftz(f32((uint32_t)(vc >> 32 * k)), z), r;
      FLOAT_OP(float, sqrtf, fmaf, fminf, fmaxf, fabsf, exp2f, log2f, sinf, cosf)
      r = ftz(r, z);
      if (in->flags & F_SAT) r = isnan(r) ? 0.0f : r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
      out |= (uint64_t)(uint32_t)b32(r) << 32 * k;
    }
  } else if (ty == T_F16 || ty == T_F16X2) { /* f16x2: the same on both halves, low half first */
    out = 0;
    for (int k = 0; k < (ty == T_F16X2 ? 2 : 1); k++) {
      uint16_t h;
      if (f16_lane(c, in, (uint16_t)(va >> 16 * k), (uint16_t)(vb >> 16 * k), (uint16_t)(vc >> 16 * k), &h)) {
        fesetround(old);
        return -1;
      }
      out |= (uint64_t)h << 16 * k;
    }
  } else {
    fesetround(old);
    return unknown(c, "float operation on this type not implemented");
  }
  fesetround(old);
  ptx_set(t, &in->ops[0], out, ty);
  return 0;
}

static uint64_t sat_int(__int128 v, int bits, bool sgn) {
  __int128 lo = sgn ? -((__int128)1 << (bits - 1)) : 0;
  __int128 hi = sgn ? ((__int128)1 << (bits - 1)) - 1 : ((__int128)1 << bits) - 1;
  return (uint64_t)(v < lo ? lo : v > hi ? hi : v);
}

static int int_alu(ptx_cta *c, ptx_thread *t, const ptx_ins *in, int ty) {
  int bits = ty == T_PRED ? 1 : ptx_type_size(ty) * 8;
  bool sgn = ptx_type_signed(ty);
  int sh_ty = in->op == OP_SHL || in->op == OP_SHR ? T_U32 : ty;
  uint64_t a = in->nops > 1 ? ptx_get(c, t, &in->ops[1], ty) : 0;
  uint64_t b = in->nops > 2 ? ptx_get(c, t, &in->ops[2], sh_ty) : 0;
  int wide_ty = ty;
  __int128 wa = sgn ? (__int128)(int64_t)a : (__int128)a, wb = sgn ? (__int128)(int64_t)b : (__int128)b;
  uint64_t r;
  switch (in->op) {
  case OP_ADD: r = in->flags & F_SAT ? sat_int(wa + wb, bits, sgn) : a + b; break;
  case OP_SUB: r = in->flags & F_SAT ? sat_int(wa - wb, bits, sgn) : a - b; break;
  case OP_MUL: case OP_MAD: {
    __int128 p = (__int128)((unsigned __int128)wa * (unsigned __int128)wb); /* no signed overflow for u64 */
    if (in->op == OP_MAD) {
      if (in->flags & F_WIDE) wide_ty = bits == 16 ? T_B32 : T_B64;
      uint64_t x = ptx_get(c, t, &in->ops[3], in->flags & F_WIDE ? (sgn ? (bits == 16 ? T_S32 : T_S64) : wide_ty) : ty);
      __int128 wx = sgn ? (__int128)(int64_t)x : (__int128)x;
      if (in->flags & F_HI) p = (p >> bits) + wx; else p += wx;
      r = (uint64_t)p;
    } else if (in->flags & F_HI) r = (uint64_t)(p >> bits);
    else r = (uint64_t)p;
    if (in->flags & F_WIDE) { if (bits == 64) return unknown(c, "no 64-bit .wide"); wide_ty = bits == 16 ? T_B32 : T_B64; }
    break;
  }
  case OP_DIV:
    if (b == 0) r = ~0ull; /* undefined in PTX; the hardware gives all ones */
    else if (sgn && wa == -((__int128)1 << (bits - 1)) && wb == -1) r = a;
    else r = sgn ? (uint64_t)((int64_t)a / (int64_t)b) : a / b;
    break;
  case OP_REM:
    if (b == 0) r = a;
    else if (sgn && wb == -1) r = 0;
    else r = sgn ? (uint64_t)((int64_t)a % (int64_t)b) : a % b;
    break;
  case OP_MIN: r = icmp(C_LT, a, b, sgn) ? a : b; break;
  case OP_MAX: r = icmp(C_GT, a, b, sgn) ? a : b; break;
  case OP_NEG: r = 0 - a; break;
  case OP_ABS: r = sgn && (int64_t)a < 0 ? 0 - a : a; break;
  case OP_AND: r = a & b; break;
  case OP_OR: r = a | b; break;
  case OP_XOR: r = a ^ b; break;
  case OP_NOT: r = ~a; break;
  case OP_SHL: r = b >= (uint64_t)bits ? 0 : a << b; break;
  case OP_SHR:
    if (sgn) r = (uint64_t)((int64_t)a >> (b >= (uint64_t)bits ? bits - 1 : (int)b));
    else r = b >= (uint64_t)bits ? 0 : (a & (bits == 64 ? ~0ull : (1ull << bits) - 1)) >> b;
    break;
  default: return unknown(c, "integer operation not implemented");
  }
  ptx_set(t, &in->ops[0], r, wide_ty);
  return 0;
}

static int mov(ptx_cta *c, ptx_thread *t, const ptx_ins *in, int ty) {
  const ptx_opnd *d = &in->ops[0], *s = &in->ops[1];
  if (s->kind == O_VEC) { /* pack: the first element in the low bits */
    int part = ptx_type_size(ty) * 8 / s->nv;
    uint64_t v = 0;
    for (int i = 0; i < s->nv; i++)
      v |= (ptx_vec_elem(t, s, i) & (part == 64 ? ~0ull : (1ull << part) - 1)) << (i * part);
    ptx_set(t, d, v, ty);
  } else if (d->kind == O_VEC) {
    int part = ptx_type_size(ty) * 8 / d->nv;
    uint64_t v = ptx_get(c, t, s, ty);
    for (int i = 0; i < d->nv; i++)
      if (d->vr[i] >= 0) t->r[d->vr[i]] = (v >> (i * part)) & (part == 64 ? ~0ull : (1ull << part) - 1);
  } else ptx_set(t, d, ptx_get(c, t, s, ty), ty);
  return 0;
}

/* Mixed precision (PTX ISA 8.6, sm_100+): add/sub.f32.f16 d, a, c and fma.f32.f16 d, a, b, c: the .f16 sources
 * widened exactly, one f32 rounding (a product of two halves is exact in float). */
static int mixed_f32(ptx_cta *c, ptx_thread *t, const ptx_ins *in) {
  bool fma_op = in->op == OP_FMA;
  if ((in->op != OP_ADD && in->op != OP_SUB && !fma_op) || in->type[0] != T_F32 || in->type[1] != T_F16 ||
      in->nops != (fma_op ? 4 : 3) || !in->rnd || (in->flags & ~F_SAT))
    return unknown(c, "two-type arithmetic other than add/sub/fma.rnd{.sat}.f32.f16");
  float a = ptx_h2f((uint16_t)ptx_get(c, t, &in->ops[1], T_F16));
  float b = fma_op ? ptx_h2f((uint16_t)ptx_get(c, t, &in->ops[2], T_F16)) : 0.0f;
  float x = f32(ptx_get(c, t, &in->ops[fma_op ? 3 : 2], T_F32)), r;
  int old = set_round(in->rnd);
  r = fma_op ? fmaf(a, b, x) : in->op == OP_ADD ? a + x : a - x;
  fesetround(old);
  if (in->flags & F_SAT) r = isnan(r) ? 0.0f : r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
  ptx_set(t, &in->ops[0], b32(r), T_F32);
  return 0;
}

int ptx_exec_alu(ptx_cta *c, ptx_thread *t, const ptx_ins *in) {
  int ty = in->type[0];
  if (in->nops < 2 && in->op != OP_BRA) return unknown(c, "missing operands");
  for (int i = 0; i < in->nops; i++)
    if (in->ops[i].kind == O_ADDR || in->ops[i].kind == O_LABEL || (in->ops[i].kind == O_VEC && in->op != OP_MOV))
      return unknown(c, "operand kind not allowed here");
  if (in->ntypes == 2) return mixed_f32(c, t, in);
  switch (in->op) {
  case OP_MOV: return mov(c, t, in, ty);
  case OP_SHF: { /* funnel shift of b:a (b the high word); .wrap: n & 31, .clamp: min(n, 32) (PTX ISA "shf") */
    uint64_t a = ptx_get(c, t, &in->ops[1], T_U32), b = ptx_get(c, t, &in->ops[2], T_U32);
    uint64_t n = ptx_get(c, t, &in->ops[3], T_U32), ab = b << 32 | a;
    n = in->flags & F_WRAP ? n & 31 : n > 32 ? 32 : n;
    ptx_set(t, &in->ops[0], in->flags & F_SHF_L ? (ab << n) >> 32 : ab >> n, T_B32);
    return 0;
  }
  case OP_SELP: {
    uint64_t p = ptx_get(c, t, &in->ops[3], T_PRED);
    ptx_set(t, &in->ops[0], ptx_get(c, t, &in->ops[p ? 1 : 2], ty), ty);
    return 0;
  }
  case OP_SETP: {
    uint64_t a = ptx_get(c, t, &in->ops[1], ty), b = ptx_get(c, t, &in->ops[2], ty);
    bool r;
    if (ty == T_F32) r = fcmp(in->cmp, ftz(f32(a), in->flags & F_FTZ), ftz(f32(b), in->flags & F_FTZ));
    else if (ty == T_F64) r = fcmp(in->cmp, f64(a), f64(b));
    else if (ty == T_F16) r = fcmp(in->cmp, ptx_h2f((uint16_t)a), ptx_h2f((uint16_t)b));
    else if (ty == T_F32X2) return unknown(c, "setp on .f32x2");
    else if (in->cmp >= C_EQU) return unknown(c, "unordered comparison of integers");
    else r = icmp(in->cmp, a, b, ptx_type_signed(ty));
    ptx_set(t, &in->ops[0], r, T_PRED);
    return 0;
  }
  default:
    if (ptx_type_float(ty)) return float_alu(c, t, in, ty);
    if (in->op >= OP_RCP && in->op <= OP_COS) return unknown(c, "integer type for a float operation");
    return int_alu(c, t, in, ty);
  }
}
