/* tests/mockgpu/ptx/ptx_cvt.c: cvt.{rnd}{.ftz}{.sat}.dtype.atype (PTX ISA "cvt"): int<->int (truncate or
 * extend by the source's signedness; .sat clamps), int->float (rounding .rn/.rz/.rm/.rp), float->int
 * (.rni/.rzi/.rmi/.rpi, always saturating, NaN -> 0), float<->float (f16/f32/f64; same type with an
 * integer rounding rounds to an integral value); two f32 into one f16x2. */
#include "ptx_internal.h"

#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static double to_double(uint64_t v, int ty) {
  if (ty == T_F16) return ptx_h2f((uint16_t)v);
  if (ty == T_F32) { float f; uint32_t u = (uint32_t)v; memcpy(&f, &u, 4); return f; }
  double d; memcpy(&d, &v, 8); return d;
}

/* Round a double (exact or, from int, rounded in the current mode) into ty. */
static uint64_t from_double(double d, int ty) {
  if (ty == T_F64) { uint64_t u; memcpy(&u, &d, 8); return u; }
  volatile float f = (float)d; /* in the current rounding mode */
  if (ty == T_F16) return ptx_f2h(f);
  uint32_t u; float g = f; memcpy(&u, &g, 4); return u;
}

static int fail(ptx_cta *c, const char *m) { snprintf(c->err, c->errlen, "%s", m); return -1; }

/* cvt.rn/.rz.f16x2.f32 d, a, b: a rounded to f16 in the upper half, b in the lower (PTX ISA "cvt", .frnd2). */
static int cvt_f16x2(ptx_cta *c, ptx_thread *t, const ptx_ins *in) {
  if (in->rnd != R_RN && in->rnd != R_RZ) return fail(c, "cvt.f16x2.f32 needs .rn or .rz");
  if (in->flags & (F_SAT | F_FTZ)) return fail(c, "cvt.f16x2.f32 modifier not implemented");
  int old = fegetround();
  fesetround(in->rnd == R_RZ ? FE_TOWARDZERO : FE_TONEAREST);
  uint64_t hi = from_double(to_double(ptx_get(c, t, &in->ops[1], T_F32), T_F32), T_F16);
  uint64_t lo = from_double(to_double(ptx_get(c, t, &in->ops[2], T_F32), T_F32), T_F16);
  fesetround(old);
  ptx_set(t, &in->ops[0], hi << 16 | lo, T_B32);
  return 0;
}

int ptx_exec_cvt(ptx_cta *c, ptx_thread *t, const ptx_ins *in) {
  if (in->ntypes == 2 && in->nops == 3 && in->type[0] == T_F16X2 && in->type[1] == T_F32) return cvt_f16x2(c, t, in);
  if (in->ntypes != 2 || in->nops != 2) return fail(c, "cvt needs two types and two operands");
  int dt = in->type[0], st = in->type[1];
  bool df = ptx_type_float(dt), sf = ptx_type_float(st);
  if (dt == T_F16X2 || st == T_F16X2 || dt == T_PRED || st == T_PRED) return fail(c, "cvt type not implemented");
  uint64_t v = ptx_get(c, t, &in->ops[1], st), r;
  int dbits = ptx_type_size(dt) * 8;
  int mode = in->rnd == R_RZ || in->rnd == R_RZI ? FE_TOWARDZERO : in->rnd == R_RM || in->rnd == R_RMI ? FE_DOWNWARD
           : in->rnd == R_RP || in->rnd == R_RPI ? FE_UPWARD : FE_TONEAREST;
  int old = fegetround();
  if (!df && !sf) {
    bool ss = ptx_type_signed(st), ds = ptx_type_signed(dt);
    if (in->flags & F_SAT) {
      __int128 x = ss ? (__int128)(int64_t)v : (__int128)v;
      __int128 lo = ds ? -((__int128)1 << (dbits - 1)) : 0;
      __int128 hi = ds ? ((__int128)1 << (dbits - 1)) - 1 : ((__int128)1 << dbits) - 1;
      r = (uint64_t)(x < lo ? lo : x > hi ? hi : x);
    } else r = v;
  } else if (!sf) {
    if (in->rnd < R_RN || in->rnd > R_RP) return fail(c, "int->float cvt needs .rn/.rz/.rm/.rp");
    fesetround(mode);
    volatile double d = ptx_type_signed(st) ? (double)(int64_t)v : (double)v;
    if (dt != T_F64 && fabs(d) >= 9007199254740992.0) { /* (double) rounded already: redo in float */
      volatile float f = ptx_type_signed(st) ? (float)(int64_t)v : (float)v;
      d = f;
    }
    r = from_double(d, dt);
    fesetround(old);
  } else if (!df) {
    if (in->rnd < R_RNI) return fail(c, "float->int cvt needs .rni/.rzi/.rmi/.rpi");
    double d = to_double(v, st);
    if ((in->flags & F_FTZ) && st == T_F32 && fpclassify(d) == FP_SUBNORMAL) d = 0;
    d = in->rnd == R_RNI ? nearbyint(d) : in->rnd == R_RZI ? trunc(d) : in->rnd == R_RMI ? floor(d) : ceil(d);
    bool ds = ptx_type_signed(dt);
    double lo = ds ? -ldexp(1, dbits - 1) : 0, hi = ds ? ldexp(1, dbits - 1) : ldexp(1, dbits);
    if (isnan(d)) r = 0;
    else if (d < lo) r = ds ? (uint64_t)1 << (dbits - 1) : 0;
    else if (d >= hi) r = ds ? ((uint64_t)1 << (dbits - 1)) - 1 : ~0ull;
    else r = ds ? (uint64_t)(int64_t)d : (uint64_t)d;
  } else {
    double d = to_double(v, st);
    if ((in->flags & F_FTZ) && st == T_F32 && fpclassify(d) == FP_SUBNORMAL) d = copysign(0, d);
    if (in->rnd >= R_RNI) d = in->rnd == R_RNI ? nearbyint(d) : in->rnd == R_RZI ? trunc(d) : in->rnd == R_RMI ? floor(d) : ceil(d);
    else if (ptx_type_size(dt) < ptx_type_size(st) && !in->rnd) return fail(c, "narrowing float cvt needs a rounding");
    if (in->flags & F_SAT) d = isnan(d) ? 0 : d < 0 ? 0 : d > 1 ? 1 : d;
    fesetround(in->rnd >= R_RNI ? FE_TONEAREST : mode);
    r = from_double(d, dt);
    fesetround(old);
    if ((in->flags & F_FTZ) && dt == T_F32 && fpclassify(to_double(r, dt)) == FP_SUBNORMAL) r &= 0x80000000u;
  }
  ptx_set(t, &in->ops[0], r, dt);
  return 0;
}
