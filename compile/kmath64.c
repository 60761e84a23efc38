/* compile/kmath64.c: float64 exp2, log2 and sin as LLVM IR functions for targets whose backend has no
 * lowering for them. LLVM's AMDGPU backend expands llvm.exp2.f64 / llvm.log2.f64 to libcalls it does
 * not have ("no libcall available for fexp2") and aborts in instruction selection on llvm.sin.f64, so
 * the AMDGPU flavour of krender_llvm.c calls these instead. They use only what gfx11 has for float64
 * (fma, rint, ldexp, frexp, fdiv, compares): V_FMA_F64, V_RNDNE_F64, V_LDEXP_F64, V_FREXP_*_F64 and
 * the V_DIV_SCALE/FMAS/FIXUP_F64 division sequence.
 *
 * The decompositions are the textbook ones (as tinygrad's codegen/transcendental.py does for dtypes
 * without a native instruction, here with Taylor series long enough for double precision):
 *   exp2(x) = 2^n * P(f), n = rint(x), f = x - n in [-1/2, 1/2], P the Taylor series of e^(f ln 2) to
 *             degree 14 (the next term is below 2^-58);
 *   log2(x) = e + ln(m) / ln 2, x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln(m) = 2 atanh(s),
 *             s = (m - 1) / (m + 1), |s| < 0.172, the atanh series to s^23;
 *   sin(x)  = +-sin(r) or +-cos(r) by the quadrant k mod 4, k = rint(x 2/pi), r = x - k pi/2 with pi/2
 *             in three parts (Cody-Waite, with fma), the series of sin and cos on |r| <= pi/4 to r^19 / r^18.
 * Accuracy: a few ulp for exp2 and log2 over the whole range; sin loses absolute accuracy as |x| grows
 * (about |x| 2^-53 from the reduction), fine for |x| below 2^20. Special values as C99 Annex F: NaN in,
 * NaN out; exp2(+-inf) = inf / 0; log2(0) = -inf, log2(x < 0) = NaN, log2(inf) = inf; sin(+-inf) = NaN. */
#include <stdint.h>
#include <string.h>

#include "compile/kmath64.h"

/* LLVM IR double literals in hex: exact, and the one spelling LLVM accepts for every value. */
static void lit(char *b, size_t n, double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  snprintf(b, n, "0x%016llX", (unsigned long long)u);
}

/* %<out> = sum c[k] y^k by Horner with fma; temporaries are <out>.k. */
static void horner(kstr *s, const char *out, const char *y, const double *c, int n) {
  char a[32], b[32];
  lit(a, sizeof a, c[n]);
  for (int k = n - 1; k >= 0; k--) {
    lit(b, sizeof b, c[k]);
    if (k) kstr_printf(s, "  %%%s.%d = call double @llvm.fma.f64(double %s, double %%%s, double %s)\n", out, k, a, y, b);
    else kstr_printf(s, "  %%%s = call double @llvm.fma.f64(double %s, double %%%s, double %s)\n", out, a, y, b);
    snprintf(a, sizeof a, "%%%s.%d", out, k);
  }
}

static const double LN2 = 0.693147180559945309417232121458176568;
#define INF "0x7FF0000000000000"
#define NINF "0xFFF0000000000000"
#define QNAN "0x7FF8000000000000"

static void emit_exp2(kstr *s) {
  double c[15];
  c[0] = 1;
  for (int k = 1; k <= 14; k++) c[k] = c[k - 1] * LN2 / k;
  kstr_puts(s, "\ndefine internal double @bg_exp2_f64(double %x) #1 {\nentry:\n"
               "  %nan = fcmp uno double %x, 0.0\n"
               "  %lo = fcmp olt double %x, -1.100000e+03\n  %xa = select i1 %lo, double -1.100000e+03, double %x\n"
               "  %hi = fcmp ogt double %xa, 1.100000e+03\n  %xb = select i1 %hi, double 1.100000e+03, double %xa\n"
               "  %xc = select i1 %nan, double 0.0, double %xb\n"
               "  %n = call double @llvm.rint.f64(double %xc)\n  %f = fsub double %xc, %n\n");
  horner(s, "p", "f", c, 14);
  kstr_puts(s, "  %ni = fptosi double %n to i32\n  %r = call double @llvm.ldexp.f64.i32(double %p, i32 %ni)\n"
               "  %res = select i1 %nan, double %x, double %r\n  ret double %res\n}\n");
}

static void emit_log2(kstr *s) {
  double c[12];
  for (int k = 0; k <= 11; k++) c[k] = 1.0 / (2 * k + 1);
  char log2e[32];
  lit(log2e, sizeof log2e, 1.0 / LN2);
  kstr_puts(s, "\ndefine internal double @bg_log2_f64(double %x) #1 {\nentry:\n"
               "  %fr = call { double, i32 } @llvm.frexp.f64.i32(double %x)\n"
               "  %m0 = extractvalue { double, i32 } %fr, 0\n  %e0 = extractvalue { double, i32 } %fr, 1\n"
               "  %small = fcmp olt double %m0, 0x3FE6A09E667F3BCD\n  %m2 = fmul double %m0, 2.0\n"
               "  %m = select i1 %small, double %m2, double %m0\n  %e1 = sub i32 %e0, 1\n"
               "  %e = select i1 %small, i32 %e1, i32 %e0\n"
               "  %num = fsub double %m, 1.0\n  %den = fadd double %m, 1.0\n  %sq = fdiv double %num, %den\n"
               "  %z = fmul double %sq, %sq\n");
  horner(s, "q", "z", c, 11);
  kstr_printf(s, "  %%s2 = fmul double %%sq, 2.0\n  %%ln = fmul double %%s2, %%q\n  %%ef = sitofp i32 %%e to double\n"
                 "  %%r = call double @llvm.fma.f64(double %%ln, double %s, double %%ef)\n"
                 "  %%isz = fcmp oeq double %%x, 0.0\n  %%r1 = select i1 %%isz, double " NINF ", double %%r\n"
                 "  %%isneg = fcmp olt double %%x, 0.0\n  %%r2 = select i1 %%isneg, double " QNAN ", double %%r1\n"
                 "  %%isinf = fcmp oeq double %%x, " INF "\n  %%r3 = select i1 %%isinf, double " INF ", double %%r2\n"
                 "  %%nan = fcmp uno double %%x, 0.0\n  %%res = select i1 %%nan, double %%x, double %%r3\n"
                 "  ret double %%res\n}\n", log2e);
}

static void emit_sin(kstr *s) {
  double cs[10], cc[10];
  cs[0] = 1, cc[0] = 1;
  for (int k = 1; k < 10; k++) {
    cs[k] = -cs[k - 1] / ((2 * k) * (2 * k + 1));   /* (-1)^k / (2k+1)! */
    cc[k] = -cc[k - 1] / ((2 * k - 1) * (2 * k));   /* (-1)^k / (2k)! */
  }
  /* pi/2 = P1 + P2 + P3, each the double nearest the rest (computed from 110 digits of pi) */
  kstr_puts(s, "\ndefine internal double @bg_sin_f64(double %x) #1 {\nentry:\n"
               "  %ax = call double @llvm.fabs.f64(double %x)\n  %fin = fcmp olt double %ax, " INF "\n"
               "  %xs = select i1 %fin, double %x, double 0.0\n"
               "  %t = fmul double %xs, 0x3FE45F306DC9C883\n  %k = call double @llvm.rint.f64(double %t)\n"
               "  %nk = fneg double %k\n"
               "  %r1 = call double @llvm.fma.f64(double %nk, double 0x3FF921FB54442D18, double %xs)\n"
               "  %r2 = call double @llvm.fma.f64(double %nk, double 0x3C91A62633145C07, double %r1)\n"
               "  %r = call double @llvm.fma.f64(double %nk, double 0xB91F1976B7ED8FBC, double %r2)\n"
               "  %z = fmul double %r, %r\n");
  horner(s, "ps", "z", cs, 9);
  horner(s, "pc", "z", cc, 9);
  /* k mod 4 in double, exact for every k: beyond 2^54 every double integer is a multiple of 4 */
  kstr_puts(s, "  %sn = fmul double %r, %ps\n"
               "  %k4 = fmul double %k, 0.25\n  %fl = call double @llvm.floor.f64(double %k4)\n"
               "  %q = call double @llvm.fma.f64(double %fl, double -4.0, double %k)\n"
               "  %odd = fcmp oeq double %q, 1.0\n  %odd3 = fcmp oeq double %q, 3.0\n  %o = or i1 %odd, %odd3\n"
               "  %v = select i1 %o, double %pc, double %sn\n  %neg = fcmp oge double %q, 2.0\n"
               "  %nv = fneg double %v\n  %w = select i1 %neg, double %nv, double %v\n"
               "  %res = select i1 %fin, double %w, double " QNAN "\n  %nan = fcmp uno double %x, 0.0\n"
               "  %zero = fcmp oeq double %x, 0.0\n  %keep = or i1 %nan, %zero\n"   /* sin(-0) = -0 */
               "  %out = select i1 %keep, double %x, double %res\n  ret double %out\n}\n");
}

const char *kmath64_name(unsigned which) {
  static const char *const names[KM64_COUNT] = {"bg_exp2_f64", "bg_log2_f64", "bg_sin_f64"};
  return which < KM64_COUNT ? names[which] : NULL;
}

void kmath64_emit(kstr *s, unsigned mask, bool fma_declared) {
  if (!mask) return;
  if (mask & (1u << KM64_EXP2)) emit_exp2(s);
  if (mask & (1u << KM64_LOG2)) emit_log2(s);
  if (mask & (1u << KM64_SIN)) emit_sin(s);
  kstr_puts(s, "\n");
  if (!fma_declared) kstr_puts(s, "declare double @llvm.fma.f64(double, double, double)\n");
  if (mask & ((1u << KM64_EXP2) | (1u << KM64_SIN))) kstr_puts(s, "declare double @llvm.rint.f64(double)\n");
  if (mask & (1u << KM64_EXP2)) kstr_puts(s, "declare double @llvm.ldexp.f64.i32(double, i32)\n");
  if (mask & (1u << KM64_LOG2)) kstr_puts(s, "declare { double, i32 } @llvm.frexp.f64.i32(double)\n");
  if (mask & (1u << KM64_SIN))
    kstr_puts(s, "declare double @llvm.fabs.f64(double)\ndeclare double @llvm.floor.f64(double)\n");
}
