/* tests/unit/tensor/test_ops_math.c: the elementwise math of tensor/tunary.c and the reductions of
 * tensor/treduce.c on the device DEV names (CPU by default; the emulated AMD GPU in the -mockpci-amd twin).
 *
 * Every op runs on seeded random data (and on edge values: +-0, +-inf, NaN, half-way values) and is compared
 * with an independent double-precision C reference computed from the bytes that were uploaded (libm's tanh,
 * erf, pow, fmod, nearbyint under FE_TONEAREST for round, plain loops for reductions, argmax, cumsum and
 * softmax); integer results are exact, including wrap-around. NaN matches NaN and infinities match exactly.
 * Gradients of tanh, sigmoid, erf, pow, softmax, prod, min and cumsum through autograd are compared with their
 * analytic derivatives evaluated in double. The harness (host arrays, failure log, one assertion per test)
 * is a copy of test_ops.c's.
 *
 * Tolerances |got - want| <= abs + rel * scale (scale = |want|, or the sum of the absolute terms of a sum):
 *   float32: exact ops 0; tan/cos 2e-6 + 1e-5 (cos(x) = sin(pi/2 - x) rounds pi/2 - x: ~ulp(x)); tanh,
 *   sigmoid, erf 1e-6 absolute (erf is Abramowitz-Stegun 7.1.26, |error| <= 1.5e-7); pow 1e-5 relative
 *   (exp2(e*log2|b|) loses |e log2 b| ulps); sums 1e-5 * sum|x|; products n * 1.2e-7 relative (one rounding
 *   per factor); float16: 4e-3 (a rounding to half after each step of the composition).
 * Planted defects each test caught (CPU): round's tie rule (unary_ops, unary_edges), erf's coefficients, sign of
 * NaN, isinf of -inf, pow's sign for a negative base, python mod's adjustment, idiv by zero, float fmod by floor,
 * '<' as shr, min of ints by negation (minimum_clip, reduce_bitmask), the negative-axis mapping and repeated axes
 * (reduce_signed_axes, errors), mean's count, argmax's first index and NaN rule, cumsum's exclusive flag,
 * softmax's axis, the prod gradient rule (gradients). On MOCKPCI+AMD: the emulator's swapped not0/not1 saveexec
 * (int_division int64) and missing 16-bit min3/max3 (reduce_signed_axes int8). */
#include <check.h>
#include <fenv.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "baregpu/tensor.h"

static bg_tctx *ctx;

/* ---------------- per-test bookkeeping (as test_ops.c) ---------------- */

static void **arena;
static size_t arena_n, arena_cap;

static void *talloc(size_t n) {
  if (arena_n == arena_cap) {
    size_t cap = arena_cap ? arena_cap * 2 : 256;
    void **na = realloc(arena, cap * sizeof(*na));
    if (!na) abort();
    arena = na;
    arena_cap = cap;
  }
  void *p = calloc(1, n ? n : 1);
  if (!p) abort();
  arena[arena_n++] = p;
  return p;
}

static void arena_free(void) {
  for (size_t i = 0; i < arena_n; i++) free(arena[i]);
  free(arena);
  arena = NULL;
  arena_n = arena_cap = 0;
}

static char fail_log[6000]; /* below Check's 8192-byte message limit (CK_MAX_MSG_SIZE) */
static size_t fail_len;
static unsigned fail_count, case_count;

static void case_fail(const char *what, const char *why) {
  fail_count++;
  fprintf(stderr, "FAILED CASE: %s: %s\n", what, why);
  if (fail_len < sizeof(fail_log) - 1) {
    int w = snprintf(fail_log + fail_len, sizeof(fail_log) - fail_len, "  %s: %s\n", what, why);
    if (w > 0) fail_len += (size_t)w;
    if (fail_len >= sizeof(fail_log)) fail_len = sizeof(fail_log) - 1;
  }
}

static void finish(void) {
  ck_assert_msg(fail_count == 0, "%u of %u cases failed:\n%s", fail_count, case_count, fail_log);
}

/* ---------------- seeded PRNG (splitmix64) ---------------- */

static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s; }
static uint64_t rnd(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double urand(void) { return (double)(rnd() >> 11) * 0x1.0p-53; }
static int64_t irand(int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  uint64_t r = span == UINT64_MAX ? rnd() : rnd() % (span + 1u);
  return (int64_t)((uint64_t)lo + r);
}

/* ---------------- float16 ---------------- */

static double h2d(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

static uint16_t d2h(double d) {
  uint16_t sign = signbit(d) ? 0x8000 : 0;
  double a = fabs(d);
  if (isnan(d)) return 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < 0x1.0p-14) return sign | (uint16_t)lrint(a * 0x1.0p24);
  int e;
  double fr = frexp(a, &e);
  long m = lrint(fr * 2048.0);
  int E = e - 1 + 15;
  if (m == 2048) {
    m = 1024;
    E++;
  }
  if (E >= 31) return sign | 0x7c00;
  return (uint16_t)(sign | (unsigned)(E << 10) | (unsigned)(m - 1024));
}

/* ---------------- host arrays ---------------- */

enum kind { K_F, K_I, K_U, K_B };
typedef union sval {
  double f;
  int64_t i;
  uint64_t u;
} sval;

static enum kind kind_of(enum bg_dtype t) {
  switch (t) {
    case BG_FLOAT16: case BG_FLOAT32: return K_F;
    case BG_INT8: case BG_INT16: case BG_INT32: case BG_INT64: return K_I;
    case BG_BOOL: return K_B;
    default: return K_U;
  }
}

static size_t dsz(enum bg_dtype t) {
  switch (t) {
    case BG_BOOL: case BG_INT8: case BG_UINT8: return 1;
    case BG_INT16: case BG_UINT16: case BG_FLOAT16: return 2;
    case BG_INT32: case BG_UINT32: case BG_FLOAT32: return 4;
    default: return 8;
  }
}

static const char *dn(enum bg_dtype t) {
  static const char *const names[] = {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                      "int64", "uint64", "float16", "float32"};
  return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

typedef struct harr {
  enum bg_dtype t;
  unsigned nd;
  int64_t sh[BG_MAX_DIMS];
  int64_t n;
  unsigned char *p;
} harr;

static harr *ha_new(enum bg_dtype t, unsigned nd, const int64_t *sh) {
  harr *a = talloc(sizeof(*a));
  a->t = t;
  a->nd = nd;
  a->n = 1;
  for (unsigned i = 0; i < nd; i++) {
    a->sh[i] = sh[i];
    a->n *= sh[i];
  }
  a->p = talloc((size_t)a->n * dsz(t) + 8);
  return a;
}

static sval raw_get(enum bg_dtype t, const unsigned char *p) {
  sval v = {0};
  switch (t) {
    case BG_FLOAT32: { float f; memcpy(&f, p, 4); v.f = f; break; }
    case BG_FLOAT16: { uint16_t h; memcpy(&h, p, 2); v.f = h2d(h); break; }
    case BG_INT8: v.i = (int8_t)p[0]; break;
    case BG_UINT8: v.u = p[0]; break;
    case BG_INT16: { int16_t x; memcpy(&x, p, 2); v.i = x; break; }
    case BG_UINT16: { uint16_t x; memcpy(&x, p, 2); v.u = x; break; }
    case BG_INT32: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
    case BG_INT64: memcpy(&v.i, p, 8); break;
    case BG_UINT32: { uint32_t x; memcpy(&x, p, 4); v.u = x; break; }
    case BG_UINT64: memcpy(&v.u, p, 8); break;
    case BG_BOOL: v.u = p[0] != 0; break;
    default: abort();
  }
  return v;
}

static sval ha_get(const harr *a, int64_t i) { return raw_get(a->t, a->p + (size_t)i * dsz(a->t)); }

/* Store v (in the kind of a's dtype); narrowing is modular for integers, rounding for floats. */
static void ha_set(harr *a, int64_t i, sval v) {
  unsigned char *p = a->p + (size_t)i * dsz(a->t);
  switch (a->t) {
    case BG_FLOAT32: { float f = (float)v.f; memcpy(p, &f, 4); break; }
    case BG_FLOAT16: { uint16_t h = d2h(v.f); memcpy(p, &h, 2); break; }
    case BG_INT8: case BG_UINT8: p[0] = (unsigned char)v.u; break;
    case BG_INT16: case BG_UINT16: { uint16_t x = (uint16_t)v.u; memcpy(p, &x, 2); break; }
    case BG_INT32: case BG_UINT32: { uint32_t x = (uint32_t)v.u; memcpy(p, &x, 4); break; }
    case BG_INT64: case BG_UINT64: memcpy(p, &v.u, 8); break;
    case BG_BOOL: p[0] = v.u != 0; break;
    default: abort();
  }
}

static sval svf(double f) { sval v; v.f = f; return v; }
static sval svi(int64_t i) { sval v; v.i = i; return v; }
static sval svu(uint64_t u) { sval v; v.u = u; return v; }

/* An element as a double (integers small enough to be exact where it is used). */
static double ha_d(const harr *a, int64_t i) {
  sval v = ha_get(a, i);
  switch (kind_of(a->t)) {
    case K_F: return v.f;
    case K_I: return (double)v.i;
    default: return (double)v.u;
  }
}
/* Store a double in any dtype (integers: the value is integral and in range). */
static void ha_setd(harr *a, int64_t i, double d) {
  switch (kind_of(a->t)) {
    case K_F: ha_set(a, i, svf(d)); break;
    case K_I: ha_set(a, i, svi((int64_t)d)); break;
    default: ha_set(a, i, svu(d < 0 ? (uint64_t)(int64_t)d : (uint64_t)d)); break;
  }
}

static const char *shs(unsigned nd, const int64_t *sh) {
  static char ring[16][128];
  static unsigned k;
  char *b = ring[k++ % 16];
  size_t o = (size_t)snprintf(b, 128, "(");
  for (unsigned i = 0; i < nd && o < 128; i++) o += (size_t)snprintf(b + o, 128 - o, "%s%lld", i ? "," : "", (long long)sh[i]);
  if (o < 128) snprintf(b + o, 128 - o, ")");
  return b;
}
static const char *hs(const harr *a) { return shs(a->nd, a->sh); }

static void unravel(int64_t i, unsigned nd, const int64_t *sh, int64_t *c) {
  for (unsigned d = nd; d-- > 0;) {
    c[d] = i % sh[d];
    i /= sh[d];
  }
}
static int64_t ravel(const int64_t *c, unsigned nd, const int64_t *sh) {
  int64_t i = 0;
  for (unsigned d = 0; d < nd; d++) i = i * sh[d] + c[d];
  return i;
}

/* Floats uniform in [lo, hi]; integers uniform in [ceil(lo), floor(hi)] (unsigned from max(lo, 0)); bools half true. */
static void fill(harr *a, double lo, double hi) {
  for (int64_t i = 0; i < a->n; i++) {
    switch (kind_of(a->t)) {
      case K_F: ha_set(a, i, svf(lo + (hi - lo) * urand())); break;
      case K_I: ha_set(a, i, svi(irand((int64_t)ceil(lo), (int64_t)floor(hi)))); break;
      case K_U: ha_set(a, i, svu((uint64_t)irand((int64_t)ceil(lo < 0 ? 0 : lo), (int64_t)floor(hi)))); break;
      case K_B: ha_set(a, i, svu(rnd() >> 63)); break;
    }
  }
}

static harr *ha_rand(enum bg_dtype t, unsigned nd, const int64_t *sh, double lo, double hi) {
  harr *a = ha_new(t, nd, sh);
  fill(a, lo, hi);
  return a;
}

static harr *ha_vals(enum bg_dtype t, unsigned n, const double *v) {
  int64_t sh[1] = {n};
  harr *a = ha_new(t, 1, sh);
  for (unsigned i = 0; i < n; i++) ha_setd(a, i, v[i]);
  return a;
}

/* ---------------- shape pool (as test_ops.c: ranks 0-4, sizes 1-17, the rank-4 one at most 13) ---------------- */

#define NPOOL 5
static int64_t pool[NPOOL][4];
static uint64_t base_seed = 0x5eedf00dull;

static void make_pool(void) {
  uint64_t saved = rng_state;
  rng_seed(base_seed ^ 0x3a7bull);
  for (unsigned r = 0; r < NPOOL; r++)
    for (unsigned d = 0; d < 4; d++) pool[r][d] = d < r ? irand(1, 17) : 1;
  for (unsigned d = 0; d < 4; d++) {
    if (pool[4][d] > 11) pool[4][d] = 11;
    if (pool[4][d] < 2) pool[4][d] = 2;
    if (d < 3 && pool[3][d] < 2) pool[3][d] = 2;
    if (d < 2 && pool[2][d] < 2) pool[2][d] = 2;
  }
  rng_state = saved;
}

/* ---------------- tensors and checking ---------------- */

static bg_tensor *mk(const harr *a) { return bg_tn_from(ctx, a->t, a->nd, a->sh, a->p); }

static const char *ctx_why(void) {
  const char *e = bg_tctx_error(ctx);
  if (e && *e) return e;
  e = bg_last_error();
  return e && *e ? e : "(no message)";
}

/* NaN matches NaN, an infinity matches itself, other floats |got - want| <= abs + rel * scale. */
static bool check_tensor(bg_tensor *t, const harr *want, double abs, double rel, const double *scale, char *why,
                         size_t cap) {
  if (!t) {
    snprintf(why, cap, "op returned NULL");
    return false;
  }
  const char *e = bg_tctx_error(ctx);
  if (e) {
    snprintf(why, cap, "context error latched: %s", e);
    bg_tctx_clear_error(ctx);
    return false;
  }
  if (bg_tn_dtype(t) != want->t) {
    snprintf(why, cap, "result dtype %s, want %s", dn(bg_tn_dtype(t)), dn(want->t));
    return false;
  }
  const int64_t *sh = bg_tn_shape(t);
  bool same = bg_tn_ndim(t) == want->nd;
  for (unsigned i = 0; same && i < want->nd; i++) same = sh[i] == want->sh[i];
  if (!same || bg_tn_numel(t) != want->n) {
    snprintf(why, cap, "result shape %s, want %s", shs(bg_tn_ndim(t), sh), hs(want));
    return false;
  }
  size_t esz = dsz(want->t);
  unsigned char *got = talloc((size_t)want->n * esz + 8);
  int rc = bg_tn_read(t, got, (size_t)want->n * esz);
  if (rc < 0) {
    snprintf(why, cap, "read: %s: %s", bg_strerror(rc), ctx_why());
    bg_tctx_clear_error(ctx);
    return false;
  }
  int64_t bad = 0, first = -1;
  double ftol = 0;
  for (int64_t i = 0; i < want->n; i++) {
    sval g = raw_get(want->t, got + (size_t)i * esz), w = ha_get(want, i);
    bool ok;
    double tol = 0;
    switch (kind_of(want->t)) {
      case K_F:
        if (isnan(w.f)) ok = isnan(g.f);
        else if (isinf(w.f)) ok = g.f == w.f;
        else {
          tol = abs + rel * (scale ? scale[i] : fabs(w.f));
          ok = fabs(g.f - w.f) <= tol;
        }
        break;
      case K_B: ok = got[i] == w.u; break; /* bools are stored as bytes 0 and 1 */
      default: ok = g.u == w.u; break;
    }
    if (!ok) {
      if (first < 0) first = i, ftol = tol;
      bad++;
    }
  }
  if (!bad) return true;
  int64_t c[BG_MAX_DIMS];
  unravel(first, want->nd, want->sh, c);
  sval g = raw_get(want->t, got + (size_t)first * esz), w = ha_get(want, first);
  switch (kind_of(want->t)) {
    case K_F:
      snprintf(why, cap, "%lld of %lld elements differ; first at %s: got %.9g want %.9g (tol %.3g)", (long long)bad,
               (long long)want->n, shs(want->nd, c), g.f, w.f, ftol);
      break;
    case K_I:
      snprintf(why, cap, "%lld of %lld elements differ; first at %s: got %lld want %lld", (long long)bad,
               (long long)want->n, shs(want->nd, c), (long long)g.i, (long long)w.i);
      break;
    default:
      snprintf(why, cap, "%lld of %lld elements differ; first at %s: got %llu want %llu", (long long)bad,
               (long long)want->n, shs(want->nd, c), (unsigned long long)g.u, (unsigned long long)w.u);
      break;
  }
  return false;
}

static bool expect(bg_tensor *t, const harr *want, double abs, double rel, const double *scale, const char *fmt, ...)
  __attribute__((format(printf, 6, 7)));
static bool expect(bg_tensor *t, const harr *want, double abs, double rel, const double *scale, const char *fmt, ...) {
  char what[512], why[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  case_count++;
  bool ok = check_tensor(t, want, abs, rel, scale, why, sizeof(why));
  if (ok) ck_assert_msg(ok, "%s", what);
  else case_fail(what, why);
  return ok;
}

static void expect_true(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void expect_true(bool ok, const char *fmt, ...) {
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  case_count++;
  if (ok) ck_assert_msg(ok, "%s", what);
  else case_fail(what, bg_tctx_error(ctx) ? bg_tctx_error(ctx) : "condition false");
}

static bool is_f16(enum bg_dtype t) { return t == BG_FLOAT16; }

/* ---------------- unary math ---------------- */

static double r_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double r_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }
static double r_round(double x) { return nearbyint(x); } /* FE_TONEAREST (set in setup): half to even */

enum ukind { U_TRANS, U_EXACT }; /* transcendental: ints -> float32; exact: ints keep their dtype */
static const struct uop {
  const char *name;
  bg_tensor *(*fn)(bg_tensor *);
  double (*ref)(double);
  enum ukind kind;
  double lo, hi, abs32, rel32;
} uops[] = {
  {"cos", bg_tn_cos, cos, U_TRANS, -4, 4, 2e-6, 1e-5},
  {"tan", bg_tn_tan, tan, U_TRANS, -1.3, 1.3, 2e-6, 1e-5},
  {"tanh", bg_tn_tanh, tanh, U_TRANS, -6, 6, 1e-6, 0},
  {"sigmoid", bg_tn_sigmoid, r_sigmoid, U_TRANS, -12, 12, 1e-6, 1e-6},
  {"erf", bg_tn_erf, erf, U_TRANS, -4, 4, 1e-6, 0},
  {"abs", bg_tn_abs, fabs, U_EXACT, -10, 10, 0, 0},
  {"sign", bg_tn_sign, r_sign, U_EXACT, -10, 10, 0, 0},
  {"floor", bg_tn_floor, floor, U_EXACT, -10, 10, 0, 0},
  {"ceil", bg_tn_ceil, ceil, U_EXACT, -10, 10, 0, 0},
  {"round", bg_tn_round, r_round, U_EXACT, -10, 10, 0, 0},
  {"trunc", bg_tn_trunc, trunc, U_EXACT, -10, 10, 0, 0},
};
#define NUOPS (int)(sizeof(uops) / sizeof(uops[0]))

/* Half of the elements exact multiples of 1/2 (ties for round, integers for floor/ceil), the rest uniform. */
static void fill_halves(harr *a, double lo, double hi) {
  fill(a, lo, hi);
  if (kind_of(a->t) != K_F) return;
  for (int64_t i = 0; i < a->n; i++)
    if (rnd() & 1) ha_set(a, i, svf(0.5 * (double)irand((int64_t)(2 * lo), (int64_t)(2 * hi))));
}

static harr *ref_unary(const struct uop *op, const harr *x, enum bg_dtype out) {
  harr *w = ha_new(out, x->nd, x->sh);
  for (int64_t i = 0; i < x->n; i++) ha_setd(w, i, op->ref(ha_d(x, i)));
  return w;
}

START_TEST(unary_ops) {
  const struct uop *op = &uops[_i];
  static const enum bg_dtype fdts[] = {BG_FLOAT32, BG_FLOAT16};
  for (unsigned k = 0; k < 2; k++)
    for (unsigned r = 1; r <= 4; r += 2) {
      enum bg_dtype t = fdts[k];
      harr *x = ha_new(t, r, pool[r]);
      fill_halves(x, op->lo, op->hi);
      harr *w = ref_unary(op, x, t);
      double a = is_f16(t) ? 4e-3 : op->abs32, rl = is_f16(t) ? 4e-3 : op->rel32;
      if (op->kind == U_EXACT) a = rl = 0;
      expect(op->fn(mk(x)), w, a, rl, NULL, "%s %s %s", op->name, dn(t), hs(x));
    }
  /* integer inputs: the transcendental ones compute in float32, the exact ones keep the dtype */
  static const enum bg_dtype idts[] = {BG_INT32, BG_INT64, BG_UINT32, BG_INT8, BG_BOOL};
  for (unsigned k = 0; k < 5; k++) {
    enum bg_dtype t = idts[k];
    if (op->kind == U_TRANS && k > 1) break;
    harr *x = ha_rand(t, 2, pool[2], op->kind == U_TRANS ? -3 : -100, op->kind == U_TRANS ? 3 : 100);
    enum bg_dtype out = op->kind == U_TRANS ? BG_FLOAT32 : t;
    expect(op->fn(mk(x)), ref_unary(op, x, out), op->abs32, op->rel32, NULL, "%s %s %s", op->name, dn(t), hs(x));
  }
  finish();
}
END_TEST

static double r_not(double x) { return x == 0; }
static double r_isnan(double x) { return isnan(x); }
static double r_isinf(double x) { return isinf(x); }

/* +-0, +-inf, NaN, ties, values next to ties and past 2^23 where every float32 is an integer. */
START_TEST(unary_edges) {
  static const double e32[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5,
                               0.49999997, -0.49999997, 1.5000001, 2.4999998, -2.5000002, 4194304.5, -4194305.5,
                               8388607.5, 8388609.0, -8388609.0, 16777216.0, 1e30, -1e30, 1.0, -1.0, 100.5, 101.5,
                               0.1, -0.7, 1e-30, -1e-30};
  static const double e16[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1022.5,
                               1023.5, -1023.5, 2049.0, 65504.0, -65504.0, 0.4998, 1.0, 6.5, -7.5};
  static const struct {
    const char *name;
    bg_tensor *(*fn)(bg_tensor *);
    double (*ref)(double);
    bool to_bool;
    double abs;
  } ops[] = {
    {"abs", bg_tn_abs, fabs, false, 0},       {"sign", bg_tn_sign, r_sign, false, 0},
    {"floor", bg_tn_floor, floor, false, 0},  {"ceil", bg_tn_ceil, ceil, false, 0},
    {"round", bg_tn_round, r_round, false, 0}, {"trunc", bg_tn_trunc, trunc, false, 0},
    {"isnan", bg_tn_isnan, r_isnan, true, 0}, {"isinf", bg_tn_isinf, r_isinf, true, 0},
    {"logical_not", bg_tn_logical_not, r_not, true, 0},
    {"sigmoid", bg_tn_sigmoid, r_sigmoid, false, 1e-6}, {"tanh", bg_tn_tanh, tanh, false, 1e-6},
    {"erf", bg_tn_erf, erf, false, 1e-6},
  };
  for (unsigned k = 0; k < 2; k++) {
    enum bg_dtype t = k ? BG_FLOAT16 : BG_FLOAT32;
    harr *x = k ? ha_vals(t, sizeof e16 / sizeof e16[0], e16) : ha_vals(t, sizeof e32 / sizeof e32[0], e32);
    for (unsigned j = 0; j < sizeof ops / sizeof ops[0]; j++) {
      harr *w = ha_new(ops[j].to_bool ? BG_BOOL : t, 1, x->sh);
      for (int64_t i = 0; i < x->n; i++) {
        double v = ops[j].ref(ha_d(x, i));
        if (ops[j].to_bool) ha_set(w, i, svu(v != 0));
        else ha_set(w, i, svf(v));
      }
      double a = ops[j].abs ? (k ? 2e-3 : ops[j].abs) : 0;
      expect(ops[j].fn(mk(x)), w, a, 0, NULL, "%s of the %s edge values", ops[j].name, dn(t));
    }
  }
  /* exact zero results keep the sign where C does: round(-0.3) = -0, abs(-0) = +0 */
  float in[4] = {-0.3f, -0.0f, 0.3f, -0.0f}, out[4];
  int64_t n4 = 4;
  bg_tensor *x = bg_tn_from(ctx, BG_FLOAT32, 1, &n4, in);
  int rc = bg_tn_read(bg_tn_round(x), out, sizeof out);
  expect_true(rc == 0 && signbit(out[0]) && signbit(out[1]) && !signbit(out[2]), "round keeps the sign of -0.3 and -0");
  rc = bg_tn_read(bg_tn_abs(x), out, sizeof out);
  expect_true(rc == 0 && !signbit(out[1]) && !signbit(out[3]), "abs(-0) is +0");
  finish();
}
END_TEST

/* ---------------- pow, minimum, clip ---------------- */

/* b^e wrapping modulo 2^64 (then narrowed by ha_set); a negative e truncates 1/b^|e|. */
static uint64_t ipow(int64_t b, int64_t e) {
  if (e < 0) return b == 1 ? 1u : b == -1 ? ((e & 1) ? (uint64_t)-1 : 1u) : 0u;
  uint64_t r = 1, p = (uint64_t)b;
  for (; e; e >>= 1, p *= p)
    if (e & 1) r *= p;
  return r;
}

START_TEST(pow_op) {
  /* float32: positive bases with any exponent, negative bases with integral ones (and some non-integral: NaN) */
  harr *b = ha_rand(BG_FLOAT32, 3, pool[3], 0.05, 3), *e = ha_rand(BG_FLOAT32, 3, pool[3], -3, 3);
  for (int64_t i = 0; i < b->n; i++) {
    uint64_t r = rnd() % 4;
    if (r == 0) ha_set(b, i, svf(-ha_d(b, i)));
    if (r == 1) ha_set(b, i, svf(-ha_d(b, i))), ha_set(e, i, svf((double)irand(-4, 5)));
    if (r == 2) ha_set(e, i, svf((double)irand(-4, 5)));
  }
  harr *w = ha_new(BG_FLOAT32, 3, b->sh);
  for (int64_t i = 0; i < b->n; i++) ha_set(w, i, svf(pow(ha_d(b, i), ha_d(e, i))));
  expect(bg_tn_pow(mk(b), mk(e)), w, 1e-6, 1e-5, NULL, "pow float32 %s", hs(b));
  /* broadcasting a (1,n) exponent row and float16 */
  int64_t row[2] = {1, pool[2][1]};
  harr *bh = ha_rand(BG_FLOAT16, 2, pool[2], 0.25, 2), *eh = ha_rand(BG_FLOAT16, 2, row, -2, 2);
  harr *wh = ha_new(BG_FLOAT16, 2, pool[2]);
  for (int64_t i = 0; i < bh->n; i++) ha_set(wh, i, svf(pow(ha_d(bh, i), ha_d(eh, i % row[1]))));
  expect(bg_tn_pow(mk(bh), mk(eh)), wh, 4e-3, 4e-3, NULL, "pow float16 %s ^ %s", hs(bh), hs(eh));
  /* edges: 0^0 = 1, NaN^0 = 1, 1^NaN = 1, 0^-1 = inf, (-2)^3 = -8, (-2)^0.5 = NaN, (-8)^-1 = -0.125, 2^inf = inf */
  static const double eb[] = {0, NAN, 1, 0, -2, -2, -8, 2, 0.5, -3, 0, 10};
  static const double ee[] = {0, 0, NAN, -1, 3, 0.5, -1, INFINITY, -INFINITY, 2, 2, -2};
  unsigned ne = sizeof eb / sizeof eb[0];
  harr *xb = ha_vals(BG_FLOAT32, ne, eb), *xe = ha_vals(BG_FLOAT32, ne, ee), *we = ha_new(BG_FLOAT32, 1, xb->sh);
  for (unsigned i = 0; i < ne; i++) ha_set(we, i, svf(pow(eb[i], ee[i])));
  expect(bg_tn_pow(mk(xb), mk(xe)), we, 1e-7, 1e-6, NULL, "pow edge values");
  /* integers stay integers, exact with wrap-around (int32 squares past 2^24 and int64 past 2^53) */
  static const enum bg_dtype idt[] = {BG_INT32, BG_INT64, BG_UINT32, BG_INT8};
  for (unsigned k = 0; k < 4; k++) {
    enum bg_dtype t = idt[k];
    bool u = kind_of(t) == K_U;
    harr *ib = ha_rand(t, 2, pool[2], u ? 0 : -40, 40), *ie = ha_rand(t, 2, pool[2], u ? 0 : -3, 25);
    harr *iw = ha_new(t, 2, pool[2]);
    for (int64_t i = 0; i < ib->n; i++)
      ha_set(iw, i, svu(ipow(u ? (int64_t)ha_get(ib, i).u : ha_get(ib, i).i, u ? (int64_t)ha_get(ie, i).u : ha_get(ie, i).i)));
    expect(bg_tn_pow(mk(ib), mk(ie)), iw, 0, 0, NULL, "pow %s %s", dn(t), hs(ib));
  }
  /* int base, float exponent: float32 */
  harr *mb = ha_rand(BG_INT32, 1, pool[1], 1, 9), *me = ha_rand(BG_FLOAT32, 1, pool[1], -2, 2);
  harr *mw = ha_new(BG_FLOAT32, 1, pool[1]);
  for (int64_t i = 0; i < mb->n; i++) ha_set(mw, i, svf(pow(ha_d(mb, i), ha_d(me, i))));
  expect(bg_tn_pow(mk(mb), mk(me)), mw, 1e-6, 1e-5, NULL, "pow int32 ^ float32");
  finish();
}
END_TEST

START_TEST(minimum_clip) {
  static const enum bg_dtype dts[] = {BG_FLOAT32, BG_FLOAT16, BG_INT32, BG_INT64, BG_UINT32, BG_UINT64, BG_BOOL, BG_INT8};
  int64_t bsh[3] = {pool[3][0], 1, pool[3][2]};
  for (unsigned k = 0; k < 8; k++) {
    enum bg_dtype t = dts[k];
    harr *a = ha_new(t, 3, pool[3]), *b = ha_new(t, 3, bsh);
    for (int64_t i = 0; i < a->n; i++) ha_set(a, i, svu(rnd())); /* integers: the whole range (min of extremes) */
    for (int64_t i = 0; i < b->n; i++) ha_set(b, i, svu(rnd()));
    if (kind_of(t) == K_F) fill(a, -5, 5), fill(b, -5, 5);
    if (t == BG_BOOL) fill(a, 0, 1), fill(b, 0, 1);
    harr *w = ha_new(t, 3, pool[3]);
    int64_t c[3];
    for (int64_t i = 0; i < a->n; i++) {
      unravel(i, 3, pool[3], c);
      c[1] = 0;
      sval x = ha_get(a, i), y = ha_get(b, ravel(c, 3, bsh));
      bool lt = kind_of(t) == K_F ? y.f < x.f : kind_of(t) == K_I ? y.i < x.i : y.u < x.u;
      ha_set(w, i, lt ? y : x);
    }
    expect(bg_tn_minimum(mk(a), mk(b)), w, 0, 0, NULL, "minimum %s %s, %s", dn(t), hs(a), hs(b));
  }
  /* clip with tensor bounds (broadcast), one side only, and ints */
  harr *x = ha_rand(BG_FLOAT32, 2, pool[2], -4, 4), *lo = ha_rand(BG_FLOAT32, 1, &pool[2][1], -2, 0);
  harr *hi = ha_rand(BG_FLOAT32, 1, &pool[2][1], 0, 2);
  harr *w = ha_new(BG_FLOAT32, 2, pool[2]), *wl = ha_new(BG_FLOAT32, 2, pool[2]), *wh = ha_new(BG_FLOAT32, 2, pool[2]);
  for (int64_t i = 0; i < x->n; i++) {
    double v = ha_d(x, i), l = ha_d(lo, i % pool[2][1]), h = ha_d(hi, i % pool[2][1]);
    ha_set(w, i, svf(v < l ? l : v > h ? h : v));
    ha_set(wl, i, svf(v < l ? l : v));
    ha_set(wh, i, svf(v > h ? h : v));
  }
  expect(bg_tn_clip(mk(x), mk(lo), mk(hi)), w, 0, 0, NULL, "clip float32 %s", hs(x));
  expect(bg_tn_clip(mk(x), mk(lo), NULL), wl, 0, 0, NULL, "clip float32 lower only");
  expect(bg_tn_clip(mk(x), NULL, mk(hi)), wh, 0, 0, NULL, "clip float32 upper only");
  harr *xi = ha_rand(BG_INT32, 2, pool[2], -50, 50), *wi = ha_new(BG_INT32, 2, pool[2]);
  for (int64_t i = 0; i < xi->n; i++) {
    int64_t v = ha_get(xi, i).i;
    ha_set(wi, i, svi(v < -7 ? -7 : v > 9 ? 9 : v));
  }
  expect(bg_tn_clip(mk(xi), bg_tn_scalar(ctx, BG_INT32, -7), bg_tn_scalar(ctx, BG_INT32, 9)), wi, 0, 0, NULL,
         "clip int32 to [-7, 9]");
  finish();
}
END_TEST

/* ---------------- integer division, remainders, bit ops ---------------- */

enum dop { D_IDIV, D_FMOD, D_MOD };

/* The C / and % (0 for a zero divisor, MIN / -1 wraps) and python's %, in int64 or uint64. */
static sval ref_div(enum dop op, sval a, sval b, bool is_signed, unsigned bits) {
  if (!is_signed) {
    if (!b.u) return svu(0);
    return svu(op == D_IDIV ? a.u / b.u : a.u % b.u);
  }
  if (!b.i) return svi(0);
  int64_t min = bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
  if (b.i == -1 && a.i == min) return op == D_IDIV ? a : svi(0);
  int64_t q = a.i / b.i, r = a.i % b.i;
  if (op == D_IDIV) return svi(q);
  if (op == D_MOD && r && ((r < 0) != (b.i < 0))) r += b.i;
  return svi(r);
}

START_TEST(int_division) {
  static bg_tensor *(*const fns[3])(bg_tensor *, bg_tensor *) = {bg_tn_idiv, bg_tn_fmod, bg_tn_mod};
  static const char *const names[3] = {"idiv", "fmod", "mod"};
  static const enum bg_dtype dts[] = {BG_INT32, BG_INT64, BG_UINT32, BG_INT8, BG_UINT64};
  for (unsigned k = 0; k < 5; k++) {
    enum bg_dtype t = dts[k];
    bool sg = kind_of(t) == K_I;
    unsigned bits = (unsigned)dsz(t) * 8;
    harr *a = ha_rand(t, 2, pool[2], -1000, 1000), *b = ha_rand(t, 2, pool[2], -12, 12);
    if (bits == 8) fill(a, -128, 127);
    /* extremes: MIN / -1, MIN % -1, a zero divisor, exact multiples */
    ha_set(a, 0, sg ? svi(bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1))) : svu(~0ull));
    ha_set(b, 0, sg ? svi(-1) : svu(3));
    ha_set(b, 1, svi(0));
    ha_set(a, 2, svi(-12)), ha_set(b, 2, svi(4));
    ha_set(a, 3, svi(7)), ha_set(b, 3, sg ? svi(-7) : svu(7));
    for (unsigned op = 0; op < 3; op++) {
      harr *w = ha_new(t, 2, pool[2]);
      for (int64_t i = 0; i < a->n; i++) ha_set(w, i, ref_div((enum dop)op, ha_get(a, i), ha_get(b, i), sg, bits));
      expect(fns[op](mk(a), mk(b)), w, 0, 0, NULL, "%s %s %s", names[op], dn(t), hs(a));
    }
  }
  /* floats: C fmod and python mod (divisors away from 0; quotients up to ~20) */
  for (unsigned k = 0; k < 2; k++) {
    enum bg_dtype t = k ? BG_FLOAT16 : BG_FLOAT32;
    harr *a = ha_rand(t, 3, pool[3], -10, 10), *b = ha_rand(t, 3, pool[3], 0.5, 3);
    for (int64_t i = 0; i < b->n; i++)
      if (rnd() & 1) ha_set(b, i, svf(-ha_d(b, i)));
    harr *wf = ha_new(t, 3, pool[3]), *wm = ha_new(t, 3, pool[3]);
    double *scale = talloc((size_t)a->n * sizeof(double));
    for (int64_t i = 0; i < a->n; i++) {
      double x = ha_d(a, i), y = ha_d(b, i), r = fmod(x, y);
      ha_set(wf, i, svf(r));
      ha_set(wm, i, svf(r != 0 && (r < 0) != (y < 0) ? r + y : r));
      scale[i] = fabs(x) + fabs(y);
    }
    double tol = k ? 2e-3 : 2e-7;
    expect(bg_tn_fmod(mk(a), mk(b)), wf, 0, tol, scale, "fmod %s %s", dn(t), hs(a));
    expect(bg_tn_mod(mk(a), mk(b)), wm, 0, tol, scale, "mod %s %s", dn(t), hs(a));
  }
  finish();
}
END_TEST

START_TEST(bitwise_ops) {
  static const char ops[] = {'&', '|', '^', '<', '>'};
  static const enum bg_dtype dts[] = {BG_INT32, BG_UINT32, BG_INT64, BG_UINT64, BG_INT16, BG_BOOL};
  for (unsigned k = 0; k < 6; k++) {
    enum bg_dtype t = dts[k];
    unsigned bits = (unsigned)dsz(t) * 8;
    harr *a = ha_new(t, 2, pool[2]), *b = ha_new(t, 2, pool[2]), *sh = ha_new(t, 2, pool[2]);
    for (int64_t i = 0; i < a->n; i++) {
      ha_set(a, i, svu(t == BG_BOOL ? rnd() >> 63 : rnd()));
      ha_set(b, i, svu(t == BG_BOOL ? rnd() >> 63 : rnd()));
      ha_set(sh, i, svu((uint64_t)irand(0, bits - 1)));
    }
    for (unsigned j = 0; j < 5; j++) {
      bool shift = ops[j] == '<' || ops[j] == '>';
      if (shift && t == BG_BOOL) continue;
      harr *w = ha_new(t, 2, pool[2]), *rhs = shift ? sh : b;
      for (int64_t i = 0; i < a->n; i++) {
        sval x = ha_get(a, i), y = ha_get(rhs, i);
        uint64_t r = ops[j] == '&' ? x.u & y.u : ops[j] == '|' ? x.u | y.u : ops[j] == '^' ? x.u ^ y.u
                   : ops[j] == '<' ? x.u << y.u
                   : kind_of(t) == K_I ? (uint64_t)(x.i >> y.u) /* arithmetic (sign-extended value) */
                                       : x.u >> y.u;
        ha_set(w, i, svu(r));
      }
      expect(bg_tn_bitwise(mk(a), mk(rhs), ops[j]), w, 0, 0, NULL, "bitwise '%c' %s %s", ops[j], dn(t), hs(a));
    }
  }
  finish();
}
END_TEST

START_TEST(predicates) {
  static const enum bg_dtype dts[] = {BG_FLOAT32, BG_FLOAT16, BG_INT32, BG_UINT64, BG_BOOL};
  for (unsigned k = 0; k < 5; k++) {
    enum bg_dtype t = dts[k];
    harr *x = ha_rand(t, 3, pool[3], -3, 3);
    for (int64_t i = 0; i < x->n; i++) {
      uint64_t r = rnd() % 6;
      if (r == 0) ha_setd(x, i, 0);
      if (kind_of(t) == K_F && r == 1) ha_set(x, i, svf(NAN));
      if (kind_of(t) == K_F && r == 2) ha_set(x, i, svf(rnd() & 1 ? INFINITY : -INFINITY));
    }
    harr *wn = ha_new(BG_BOOL, 3, pool[3]), *wi = ha_new(BG_BOOL, 3, pool[3]), *wz = ha_new(BG_BOOL, 3, pool[3]);
    for (int64_t i = 0; i < x->n; i++) {
      double v = ha_d(x, i);
      ha_set(wn, i, svu(isnan(v)));
      ha_set(wi, i, svu(isinf(v)));
      ha_set(wz, i, svu(v == 0));
    }
    expect(bg_tn_isnan(mk(x)), wn, 0, 0, NULL, "isnan %s", dn(t));
    expect(bg_tn_isinf(mk(x)), wi, 0, 0, NULL, "isinf %s", dn(t));
    expect(bg_tn_logical_not(mk(x)), wz, 0, 0, NULL, "logical_not %s", dn(t));
  }
  finish();
}
END_TEST

/* ---------------- reductions over signed axes ---------------- */

static const char *const rnames[] = {"sum", "max", "min", "prod", "mean"};

static enum bg_dtype acc_of(enum bg_dtype t) {
  switch (t) {
    case BG_BOOL: case BG_INT8: case BG_INT16: return BG_INT32;
    case BG_UINT8: case BG_UINT16: return BG_UINT32;
    default: return t;
  }
}

/* Reference reduction of x over mask; *scale gets the tolerance scale of each output. */
static harr *ref_reduce(const harr *x, enum bg_reduce_op op, uint32_t mask, bool keepdim, double **scale) {
  int64_t osh[BG_MAX_DIMS], ksh[BG_MAX_DIMS];
  unsigned ond = 0;
  for (unsigned d = 0; d < x->nd; d++) {
    ksh[d] = (mask >> d) & 1u ? 1 : x->sh[d];
    if (!((mask >> d) & 1u) || keepdim) osh[ond++] = ksh[d];
  }
  enum kind k = kind_of(x->t);
  enum bg_dtype ot = op == BG_REDUCE_MAX || op == BG_REDUCE_MIN ? x->t
                     : op == BG_REDUCE_MEAN ? (k == K_F ? x->t : BG_FLOAT32) : acc_of(x->t);
  harr *w = ha_new(ot, ond, osh);
  double *sc = talloc((size_t)w->n * sizeof(double) + 8);
  int64_t *cnt = talloc((size_t)w->n * sizeof(int64_t) + 8);
  double *fv = talloc((size_t)w->n * sizeof(double) + 8);
  uint64_t *uv = talloc((size_t)w->n * sizeof(uint64_t) + 8);
  int64_t *iv = talloc((size_t)w->n * sizeof(int64_t) + 8);
  for (int64_t o = 0; o < w->n; o++) {
    fv[o] = op == BG_REDUCE_PROD ? 1 : op == BG_REDUCE_MAX ? -INFINITY : op == BG_REDUCE_MIN ? INFINITY : 0;
    uv[o] = op == BG_REDUCE_PROD ? 1 : op == BG_REDUCE_MIN ? UINT64_MAX : 0;
    iv[o] = op == BG_REDUCE_MAX ? INT64_MIN : op == BG_REDUCE_MIN ? INT64_MAX : 0;
    sc[o] = op == BG_REDUCE_PROD ? 1 : 0;
  }
  int64_t c[BG_MAX_DIMS];
  for (int64_t i = 0; i < x->n; i++) {
    unravel(i, x->nd, x->sh, c);
    for (unsigned d = 0; d < x->nd; d++)
      if ((mask >> d) & 1u) c[d] = 0;
    int64_t o = ravel(c, x->nd, ksh);
    sval v = ha_get(x, i);
    cnt[o]++;
    double f = ha_d(x, i);
    switch (op) {
      case BG_REDUCE_SUM: case BG_REDUCE_MEAN: fv[o] += f; uv[o] += v.u; sc[o] += fabs(f); break;
      case BG_REDUCE_PROD: fv[o] *= f; uv[o] *= v.u; break;
      case BG_REDUCE_MAX:
        if (f > fv[o]) fv[o] = f;
        if (v.u > uv[o]) uv[o] = v.u;
        if (v.i > iv[o]) iv[o] = v.i;
        break;
      case BG_REDUCE_MIN:
        if (f < fv[o]) fv[o] = f;
        if (v.u < uv[o]) uv[o] = v.u;
        if (v.i < iv[o]) iv[o] = v.i;
        break;
    }
  }
  for (int64_t o = 0; o < w->n; o++) {
    if (op == BG_REDUCE_MEAN) {
      ha_set(w, o, svf(fv[o] / (double)cnt[o]));
      sc[o] /= (double)cnt[o];
    } else if (op == BG_REDUCE_PROD && k == K_F) {
      ha_set(w, o, svf(fv[o]));
      sc[o] = fabs(fv[o]) * (double)cnt[o]; /* one rounding per factor */
    } else if (k == K_F) {
      ha_set(w, o, svf(fv[o]));
    } else if (k == K_I && (op == BG_REDUCE_MAX || op == BG_REDUCE_MIN)) {
      ha_set(w, o, svi(iv[o]));
    } else {
      ha_set(w, o, svu(uv[o])); /* sums and products wrap in the accumulator's width */
    }
  }
  *scale = sc;
  return w;
}

static void run_reduce(const harr *x, enum bg_reduce_op op, uint32_t mask, bool keepdim) {
  int axes[BG_MAX_DIMS];
  unsigned na = 0;
  char axs[64] = "";
  size_t o = 0;
  for (unsigned d = 0; d < x->nd; d++)
    if ((mask >> d) & 1u) {
      axes[na] = rnd() & 1 ? (int)d - (int)x->nd : (int)d; /* signed: either spelling of the axis */
      o += (size_t)snprintf(axs + o, sizeof axs - o, "%s%d", na ? "," : "", axes[na]);
      na++;
    }
  bool all = mask == (x->nd ? (1u << x->nd) - 1u : 0u) && (rnd() & 1);
  double *scale;
  harr *w = ref_reduce(x, op, mask, keepdim, &scale);
  bool f16 = is_f16(x->t), fl = kind_of(x->t) == K_F;
  double abs = !fl && op != BG_REDUCE_MEAN ? 0 : f16 ? 1e-3 : 1e-6, rel = 0;
  if (op == BG_REDUCE_SUM || op == BG_REDUCE_MEAN) rel = f16 ? 2e-3 : 1e-5;
  if (op == BG_REDUCE_PROD && fl) rel = f16 ? 2e-3 : 1.2e-7;
  if ((op == BG_REDUCE_MAX || op == BG_REDUCE_MIN)) abs = 0;
  expect(bg_tn_reduce(mk(x), op, all ? NULL : axes, all ? 0 : na, keepdim), w, abs, rel,
         (op == BG_REDUCE_SUM || op == BG_REDUCE_MEAN || op == BG_REDUCE_PROD) && fl ? scale : NULL,
         "reduce %s %s %s axes (%s)%s%s", rnames[op], dn(x->t), hs(x), all ? "all" : axs, keepdim ? " keepdim" : "",
         all ? " (naxes 0)" : "");
}

static harr *reduce_input(enum bg_dtype t, unsigned r, enum bg_reduce_op op) {
  harr *x = ha_new(t, r, pool[r]);
  if (op == BG_REDUCE_PROD) { /* factors near 1 (floats) or odd (ints: wrap-around without collapsing to 0) */
    if (kind_of(t) == K_F) fill(x, 0.9, 1.1);
    else fill(x, -2, 2);
    for (int64_t i = 0; i < x->n && kind_of(t) != K_B; i++) {
      if (kind_of(t) == K_F) ha_set(x, i, svf(rnd() & 1 ? ha_d(x, i) : -ha_d(x, i)));
      else ha_setd(x, i, kind_of(t) == K_U ? (double)(2 * irand(0, 2) + 1) : (double)(2 * irand(-2, 2) + 1));
    }
  } else {
    fill(x, -50, 50);
  }
  return x;
}

/* Every subset of axes of the pool's rank-r shape, every op in float32 (keepdim alternating), int32 on
 * every other subset, the other dtypes on the full set. */
START_TEST(reduce_signed_axes) {
  unsigned r = (unsigned)_i;
  for (uint32_t mask = r ? 1 : 0; mask < (1u << r); mask++) /* no empty list: naxes 0 means every axis */
    for (unsigned op = 0; op <= BG_REDUCE_MEAN; op++) {
      run_reduce(reduce_input(BG_FLOAT32, r, op), op, mask, (mask + op) & 1);
      if ((mask & 1) || r == 0) run_reduce(reduce_input(BG_INT32, r, op), op, mask, (mask + op + 1) & 1);
    }
  static const enum bg_dtype more[] = {BG_FLOAT16, BG_UINT32, BG_INT64, BG_BOOL, BG_INT8};
  if (r == 2 || r == 3)
    for (unsigned k = 0; k < 5; k++)
      for (unsigned op = 0; op <= BG_REDUCE_MEAN; op++) {
        uint32_t mask = (uint32_t)irand(1, (1 << r) - 1);
        run_reduce(reduce_input(more[k], r, op), op, mask, op & 1);
      }
  finish();
}
END_TEST

/* The bit-mask forms: bg_tn_min as bg_tn_max, BG_ALL_AXES, and sum/max through the same path. */
START_TEST(reduce_bitmask) {
  harr *x = reduce_input(BG_FLOAT32, 3, BG_REDUCE_MIN);
  static const uint32_t masks[] = {1u, 4u, 5u, 6u, BG_ALL_AXES};
  for (unsigned j = 0; j < 5; j++) {
    uint32_t m = masks[j] == BG_ALL_AXES ? 7u : masks[j];
    double *sc;
    harr *w = ref_reduce(x, BG_REDUCE_MIN, m, j & 1, &sc);
    expect(bg_tn_min(mk(x), masks[j], j & 1), w, 0, 0, NULL, "min mask 0x%x %s", masks[j], hs(x));
    w = ref_reduce(x, BG_REDUCE_MAX, m, j & 1, &sc);
    expect(bg_tn_max(mk(x), masks[j], j & 1), w, 0, 0, NULL, "max mask 0x%x %s", masks[j], hs(x));
    w = ref_reduce(x, BG_REDUCE_SUM, m, j & 1, &sc);
    expect(bg_tn_sum(mk(x), masks[j], j & 1), w, 1e-6, 1e-5, sc, "sum mask 0x%x %s", masks[j], hs(x));
  }
  /* ints: min over the whole range including the extremes (no overflow in the inverse) */
  static const enum bg_dtype idt[] = {BG_INT32, BG_UINT32, BG_INT64, BG_UINT64, BG_BOOL};
  for (unsigned k = 0; k < 5; k++) {
    harr *xi = ha_new(idt[k], 2, pool[2]);
    for (int64_t i = 0; i < xi->n; i++) ha_set(xi, i, svu(rnd()));
    ha_set(xi, 0, svu(kind_of(idt[k]) == K_I ? (uint64_t)1 << (dsz(idt[k]) * 8 - 1) : 0)); /* MIN, 0 */
    double *sc;
    harr *w = ref_reduce(xi, BG_REDUCE_MIN, 2u, false, &sc);
    expect(bg_tn_min(mk(xi), 2u, false), w, 0, 0, NULL, "min %s %s over axis 1", dn(idt[k]), hs(xi));
    w = ref_reduce(xi, BG_REDUCE_MIN, 3u, true, &sc);
    expect(bg_tn_min(mk(xi), BG_ALL_AXES, true), w, 0, 0, NULL, "min %s %s over all, keepdim", dn(idt[k]), hs(xi));
  }
  finish();
}
END_TEST

/* ---------------- argmax / argmin ---------------- */

static harr *ref_arg(const harr *x, unsigned ax, bool keepdim, bool is_min) {
  int64_t osh[BG_MAX_DIMS];
  unsigned ond = 0;
  for (unsigned d = 0; d < x->nd; d++)
    if (d != ax || keepdim) osh[ond++] = d == ax ? 1 : x->sh[d];
  harr *w = ha_new(BG_INT32, ond, osh);
  int64_t c[BG_MAX_DIMS];
  for (int64_t o = 0; o < w->n; o++) {
    /* the row of output o: coordinates with axis ax at 0 */
    int64_t oc[BG_MAX_DIMS];
    unravel(o, ond, osh, oc);
    for (unsigned d = 0, j = 0; d < x->nd; d++) {
      if (d != ax) c[d] = oc[j++];
      else c[d] = 0, j += keepdim;
    }
    int64_t best = -1;
    sval bv = {0};
    bool bnan = false;
    for (int64_t i = 0; i < x->sh[ax]; i++) {
      c[ax] = i;
      sval v = ha_get(x, ravel(c, x->nd, x->sh));
      bool better;
      switch (kind_of(x->t)) {
        case K_F:
          if (bnan) better = false;
          else if (isnan(v.f)) better = true, bnan = true; /* the first NaN wins (numpy) */
          else better = best < 0 || (is_min ? v.f < bv.f : v.f > bv.f);
          break;
        case K_I: better = best < 0 || (is_min ? v.i < bv.i : v.i > bv.i); break;
        default: better = best < 0 || (is_min ? v.u < bv.u : v.u > bv.u); break;
      }
      if (better) best = i, bv = v;
    }
    ha_set(w, o, svi(best));
  }
  return w;
}

START_TEST(argmax_argmin) {
  static const enum bg_dtype dts[] = {BG_FLOAT32, BG_INT32, BG_UINT32, BG_FLOAT16, BG_BOOL, BG_INT64};
  for (unsigned k = 0; k < 6; k++)
    for (unsigned r = 1; r <= 4; r++) {
      if (k >= 3 && r != 3) continue;
      enum bg_dtype t = dts[k];
      harr *x = ha_rand(t, r, pool[r], -2, 3); /* few distinct values: ties everywhere */
      for (unsigned ax = 0; ax < r; ax++) {
        int axis = (ax + k) & 1 ? (int)ax - (int)r : (int)ax;
        bool keep = (ax + r) & 1;
        expect(bg_tn_argmax(mk(x), axis, keep), ref_arg(x, ax, keep, false), 0, 0, NULL, "argmax %s %s axis %d%s", dn(t),
               hs(x), axis, keep ? " keepdim" : "");
        expect(bg_tn_argmin(mk(x), axis, keep), ref_arg(x, ax, keep, true), 0, 0, NULL, "argmin %s %s axis %d%s", dn(t),
               hs(x), axis, keep ? " keepdim" : "");
      }
    }
  /* NaN: the first NaN is the answer of both (numpy); -inf/inf compete with finite values */
  static const double v[] = {1, NAN, 3, NAN, -INFINITY, 2, INFINITY, 0, 5, 5, -1, 5};
  int64_t sh[2] = {3, 4};
  harr *x = ha_new(BG_FLOAT32, 2, sh);
  for (unsigned i = 0; i < 12; i++) ha_set(x, i, svf(v[i]));
  expect(bg_tn_argmax(mk(x), -1, false), ref_arg(x, 1, false, false), 0, 0, NULL, "argmax with NaN and inf");
  expect(bg_tn_argmin(mk(x), 1, true), ref_arg(x, 1, true, true), 0, 0, NULL, "argmin with NaN and inf");
  expect(bg_tn_argmax(mk(x), 0, false), ref_arg(x, 0, false, false), 0, 0, NULL, "argmax with NaN, axis 0");
  finish();
}
END_TEST

/* ---------------- cumsum ---------------- */

START_TEST(cumsum_op) {
  static const enum bg_dtype dts[] = {BG_FLOAT32, BG_INT32, BG_FLOAT16, BG_BOOL, BG_UINT32};
  for (unsigned k = 0; k < 5; k++)
    for (unsigned r = 1; r <= 4; r++) {
      if (k >= 2 && r != 2) continue;
      enum bg_dtype t = dts[k];
      harr *x = ha_rand(t, r, pool[r], -10, 10);
      for (unsigned ax = 0; ax < r; ax++)
        for (unsigned m = 0; m < 4; m++) {
          bool excl = m & 1, rev = m & 2;
          int axis = (ax + m) & 1 ? (int)ax - (int)r : (int)ax;
          harr *w = ha_new(acc_of(t), r, pool[r]);
          double *scale = talloc((size_t)x->n * sizeof(double) + 8);
          int64_t c[BG_MAX_DIMS];
          for (int64_t i = 0; i < x->n; i++) {
            unravel(i, r, pool[r], c);
            int64_t at = c[ax], n = pool[r][ax];
            double s = 0, sa = 0;
            uint64_t su = 0;
            for (int64_t j = 0; j < n; j++) {
              bool in = rev ? (excl ? j > at : j >= at) : (excl ? j < at : j <= at);
              if (!in) continue;
              c[ax] = j;
              int64_t src = ravel(c, r, pool[r]);
              s += ha_d(x, src);
              sa += fabs(ha_d(x, src));
              su += ha_get(x, src).u;
            }
            scale[i] = sa;
            if (kind_of(t) == K_F) ha_set(w, i, svf(s));
            else ha_set(w, i, svu(su));
          }
          bool fl = kind_of(t) == K_F;
          expect(bg_tn_cumsum(mk(x), axis, excl, rev), w, fl ? (is_f16(t) ? 1e-3 : 1e-6) : 0,
                 fl ? (is_f16(t) ? 2e-3 : 1e-5) : 0, fl ? scale : NULL, "cumsum %s %s axis %d%s%s", dn(t), hs(x), axis,
                 excl ? " exclusive" : "", rev ? " reverse" : "");
        }
    }
  finish();
}
END_TEST

/* ---------------- softmax ---------------- */

static harr *ref_softmax(const harr *x, unsigned ax, enum bg_dtype out) {
  harr *w = ha_new(out, x->nd, x->sh);
  int64_t c[BG_MAX_DIMS];
  for (int64_t i = 0; i < x->n; i++) {
    unravel(i, x->nd, x->sh, c);
    double xi = ha_d(x, i), m = -INFINITY, s = 0;
    for (int64_t j = 0; j < x->sh[ax]; j++) {
      c[ax] = j;
      double v = ha_d(x, ravel(c, x->nd, x->sh));
      if (v > m) m = v;
    }
    for (int64_t j = 0; j < x->sh[ax]; j++) {
      c[ax] = j;
      s += exp(ha_d(x, ravel(c, x->nd, x->sh)) - m);
    }
    ha_set(w, i, svf(exp(xi - m) / s));
  }
  return w;
}

START_TEST(softmax_op) {
  for (unsigned r = 1; r <= 4; r++) {
    harr *x = ha_rand(BG_FLOAT32, r, pool[r], -8, 8);
    for (unsigned ax = 0; ax < r; ax++)
      for (int neg = 0; neg < 2; neg++) {
        int axis = neg ? (int)ax - (int)r : (int)ax;
        expect(bg_tn_softmax(mk(x), axis), ref_softmax(x, ax, BG_FLOAT32), 1e-6, 1e-5, NULL, "softmax float32 %s axis %d",
               hs(x), axis);
      }
  }
  /* large logits (the max shift keeps exp finite), float16, and ints through float32 */
  harr *big = ha_rand(BG_FLOAT32, 2, pool[2], 80, 120);
  expect(bg_tn_softmax(mk(big), -1), ref_softmax(big, 1, BG_FLOAT32), 1e-6, 1e-5, NULL, "softmax of logits 80..120");
  harr *h = ha_rand(BG_FLOAT16, 2, pool[2], -4, 4);
  expect(bg_tn_softmax(mk(h), 0), ref_softmax(h, 0, BG_FLOAT16), 2e-3, 4e-3, NULL, "softmax float16 %s axis 0", hs(h));
  harr *xi = ha_rand(BG_INT32, 2, pool[2], -5, 5);
  expect(bg_tn_softmax(mk(xi), -2), ref_softmax(xi, 0, BG_FLOAT32), 1e-6, 1e-5, NULL, "softmax int32 %s axis -2", hs(xi));
  finish();
}
END_TEST

/* ---------------- errors ---------------- */

/* The latched message contains each of the strings; then the error is cleared and the context works again. */
static void expect_error(bg_tensor *e, const char *what, const char *const *parts) {
  const char *msg = bg_tctx_error(ctx);
  bool ok = msg != NULL;
  for (unsigned i = 0; ok && parts[i]; i++) ok = strstr(msg, parts[i]) != NULL;
  expect_true(ok, "%s: the message names the op and the cause (message: %s)", what, msg ? msg : "(none)");
  char buf[64];
  int rc = e ? bg_tn_read(e, buf, sizeof buf) : -BG_EINVAL;
  expect_true(rc == -BG_EINVAL, "%s: reading the result returns -BG_EINVAL (got %d)", what, rc);
  bg_tctx_clear_error(ctx);
}

START_TEST(errors) {
  int64_t s23[2] = {2, 3};
  bg_tensor *f = bg_tn_ones(ctx, BG_FLOAT32, 2, s23), *i32 = bg_tn_ones(ctx, BG_INT32, 2, s23);
  int a2[1] = {2}, am3[1] = {-3}, rep[2] = {1, -1};
  expect_error(bg_tn_reduce(f, BG_REDUCE_SUM, a2, 1, false), "reduce sum axis 2 of (2,3)",
               (const char *const[]){"sum", "axis 2", "out of range", "(2,3)", NULL});
  expect_error(bg_tn_reduce(f, BG_REDUCE_PROD, am3, 1, false), "reduce prod axis -3 of (2,3)",
               (const char *const[]){"prod", "axis -3", "out of range", "(2,3)", NULL});
  expect_error(bg_tn_reduce(i32, BG_REDUCE_MIN, rep, 2, true), "reduce min axes (1,-1) of (2,3)",
               (const char *const[]){"min", "axis -1", "repeated", "(2,3)", NULL});
  expect_error(bg_tn_reduce(f, (enum bg_reduce_op)9, a2, 1, false), "reduce op 9",
               (const char *const[]){"reduce", "op 9", NULL});
  expect_error(bg_tn_min(f, 1u << 4, false), "min bit mask axis 4", (const char *const[]){"min", "axis 4", NULL});
  expect_error(bg_tn_argmax(f, 2, false), "argmax axis 2", (const char *const[]){"argmax", "axis 2", "(2,3)", NULL});
  expect_error(bg_tn_argmin(f, -3, false), "argmin axis -3", (const char *const[]){"argmin", "axis -3", NULL});
  expect_error(bg_tn_cumsum(f, 5, false, false), "cumsum axis 5", (const char *const[]){"cumsum", "axis 5", NULL});
  expect_error(bg_tn_softmax(f, -4), "softmax axis -4", (const char *const[]){"softmax", "axis -4", NULL});
  expect_error(bg_tn_idiv(f, f), "idiv of float32", (const char *const[]){"idiv", "float32", "integer", NULL});
  expect_error(bg_tn_idiv(i32, f), "idiv of int32 by float32 (promotes to float32)",
               (const char *const[]){"idiv", "float32", NULL});
  bg_tensor *b = bg_tn_cast(i32, BG_BOOL);
  expect_error(bg_tn_mod(b, b), "mod of bool", (const char *const[]){"mod", "bool", NULL});
  expect_error(bg_tn_bitwise(f, f, '&'), "bitwise & of float32", (const char *const[]){"bitwise '&'", "float32", NULL});
  expect_error(bg_tn_bitwise(b, b, '<'), "shift of bool", (const char *const[]){"bitwise '<'", "bool", NULL});
  expect_error(bg_tn_bitwise(i32, i32, '+'), "bitwise op '+'", (const char *const[]){"bitwise", "'+'", NULL});
  int64_t s4[1] = {4};
  expect_error(bg_tn_minimum(f, bg_tn_ones(ctx, BG_FLOAT32, 1, s4)), "minimum (2,3) and (4)",
               (const char *const[]){"minimum", "(2,3)", "(4)", NULL});
  finish();
}
END_TEST

/* ---------------- gradients against analytic derivatives ---------------- */

/* loss = sum(f(x...) * R); the gradient of input k must be want_k (evaluated in double from the same data). */
static void grad_case(const char *name, unsigned nin, harr *const *in, bg_tensor *(*f)(bg_tensor **), const harr *R,
                      harr *const *want, double tol) {
  bg_tensor *x[2];
  for (unsigned k = 0; k < nin; k++) x[k] = bg_tn_requires_grad(mk(in[k]), true);
  bg_tensor *y = f(x);
  bg_tensor *loss = bg_tn_sum(bg_tn_mul(y, mk(R)), BG_ALL_AXES, false);
  int rc = bg_tn_backward(loss);
  expect_true(rc == 0, "%s: backward (%s)", name, rc ? ctx_why() : "");
  for (unsigned k = 0; k < nin && rc == 0; k++) {
    bg_tensor *g = NULL;
    expect_true(bg_tn_grad(x[k], &g) == 0 && g, "%s: input %u has a gradient", name, k);
    if (g) expect(g, want[k], tol, tol, NULL, "%s: gradient of input %u", name, k);
  }
}

static bg_tensor *g_tanh(bg_tensor **x) { return bg_tn_tanh(x[0]); }
static bg_tensor *g_sigmoid(bg_tensor **x) { return bg_tn_sigmoid(x[0]); }
static bg_tensor *g_erf(bg_tensor **x) { return bg_tn_erf(x[0]); }
static bg_tensor *g_pow(bg_tensor **x) { return bg_tn_pow(x[0], x[1]); }
static bg_tensor *g_softmax(bg_tensor **x) { return bg_tn_softmax(x[0], -1); }
static int ax1[1] = {-1};
static bg_tensor *g_prod(bg_tensor **x) { return bg_tn_reduce(x[0], BG_REDUCE_PROD, ax1, 1, false); }
static bg_tensor *g_min(bg_tensor **x) { return bg_tn_reduce(x[0], BG_REDUCE_MIN, ax1, 1, true); }
static bg_tensor *g_cumsum(bg_tensor **x) { return bg_tn_cumsum(x[0], 0, false, true); }

START_TEST(gradients) {
  int64_t sh[2] = {5, 7}, sr[1] = {5}, sk[2] = {5, 1};
  harr *x = ha_rand(BG_FLOAT32, 2, sh, -2, 2), *R = ha_rand(BG_FLOAT32, 2, sh, -1, 1);
  harr *w = ha_new(BG_FLOAT32, 2, sh);
  for (int64_t i = 0; i < x->n; i++) ha_set(w, i, svf(ha_d(R, i) * (1 - tanh(ha_d(x, i)) * tanh(ha_d(x, i)))));
  grad_case("tanh", 1, &x, g_tanh, R, &w, 1e-5);
  for (int64_t i = 0; i < x->n; i++) {
    double s = r_sigmoid(ha_d(x, i));
    ha_set(w, i, svf(ha_d(R, i) * s * (1 - s)));
  }
  grad_case("sigmoid", 1, &x, g_sigmoid, R, &w, 1e-5);
  for (int64_t i = 0; i < x->n; i++) ha_set(w, i, svf(ha_d(R, i) * 1.12837916709551257390 /* 2/sqrt(pi) */ * exp(-ha_d(x, i) * ha_d(x, i))));
  grad_case("erf", 1, &x, g_erf, R, &w, 1e-5); /* A-S 7.1.26's derivative is within ~1e-6 of erf' */
  /* pow: d/db = e b^(e-1), d/de = b^e ln b (positive bases) */
  harr *pb = ha_rand(BG_FLOAT32, 2, sh, 0.5, 2), *pe = ha_rand(BG_FLOAT32, 2, sh, -2, 2);
  harr *in[2] = {pb, pe}, *wp[2] = {ha_new(BG_FLOAT32, 2, sh), ha_new(BG_FLOAT32, 2, sh)};
  for (int64_t i = 0; i < pb->n; i++) {
    double b = ha_d(pb, i), e = ha_d(pe, i), r = ha_d(R, i);
    ha_set(wp[0], i, svf(r * e * pow(b, e - 1)));
    ha_set(wp[1], i, svf(r * pow(b, e) * log(b)));
  }
  grad_case("pow", 2, in, g_pow, R, wp, 1e-4);
  /* softmax over the last axis: g_i = s_i (R_i - sum_j s_j R_j) */
  harr *s = ref_softmax(x, 1, BG_FLOAT32);
  for (int64_t row = 0; row < sh[0]; row++) {
    double dot = 0;
    for (int64_t j = 0; j < sh[1]; j++) dot += ha_d(s, row * sh[1] + j) * ha_d(R, row * sh[1] + j);
    for (int64_t j = 0; j < sh[1]; j++) {
      int64_t i = row * sh[1] + j;
      ha_set(w, i, svf(ha_d(s, i) * (ha_d(R, i) - dot)));
    }
  }
  grad_case("softmax", 1, &x, g_softmax, R, &w, 1e-5);
  /* prod over the last axis: d/dx_i = R_row * prod_{j != i} x_j; min keepdim: R_row to the minimum */
  harr *Rr = ha_rand(BG_FLOAT32, 1, sr, -1, 1), *Rk = ha_rand(BG_FLOAT32, 2, sk, -1, 1);
  harr *px = ha_rand(BG_FLOAT32, 2, sh, 0.5, 1.5);
  harr *wm = ha_new(BG_FLOAT32, 2, sh);
  for (int64_t row = 0; row < sh[0]; row++) {
    int64_t am = 0;
    for (int64_t j = 0; j < sh[1]; j++) {
      double p = 1;
      for (int64_t k = 0; k < sh[1]; k++)
        if (k != j) p *= ha_d(px, row * sh[1] + k);
      ha_set(w, row * sh[1] + j, svf(ha_d(Rr, row) * p));
      if (ha_d(px, row * sh[1] + j) < ha_d(px, row * sh[1] + am)) am = j;
    }
    for (int64_t j = 0; j < sh[1]; j++) ha_set(wm, row * sh[1] + j, svf(j == am ? ha_d(Rk, row) : 0));
  }
  grad_case("prod", 1, &px, g_prod, Rr, &w, 1e-5);
  grad_case("min", 1, &px, g_min, Rk, &wm, 1e-6);
  /* reverse cumsum over axis 0: d/dx_(i,j) = sum_{k <= i} R_(k,j) */
  for (int64_t i = 0; i < x->n; i++) {
    double g = 0;
    for (int64_t k = 0; k <= i / sh[1]; k++) g += ha_d(R, k * sh[1] + i % sh[1]);
    ha_set(w, i, svf(g));
  }
  grad_case("cumsum reverse", 1, &x, g_cumsum, R, &w, 1e-5);
  finish();
}
END_TEST

/* ---------------- fixture and suite ---------------- */

static void setup(void) {
  fail_len = 0;
  fail_log[0] = '\0';
  fail_count = case_count = 0;
  fesetround(FE_TONEAREST);
  rng_seed(base_seed ^ 0x4d417448ull);
  make_pool();
  ctx = NULL;
  const char *dev = getenv("DEV") ? getenv("DEV") : "CPU";
  ck_assert_msg(bg_tctx_open(dev, &ctx) == 0 && ctx, "bg_tctx_open(%s): %s", dev, bg_last_error());
}

static void teardown(void) {
  if (ctx) bg_tctx_close(ctx);
  ctx = NULL;
  arena_free();
}

static TCase *tcase(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 900);
  suite_add_tcase(s, tc);
  return tc;
}

static Suite *math_suite(void) {
  Suite *s = suite_create("tensor-ops-math");
  TCase *tc = tcase(s, "elementwise");
  tcase_add_loop_test(tc, unary_ops, 0, NUOPS);
  tcase_add_test(tc, unary_edges);
  tcase_add_test(tc, pow_op);
  tcase_add_test(tc, minimum_clip);
  tcase_add_test(tc, int_division);
  tcase_add_test(tc, bitwise_ops);
  tcase_add_test(tc, predicates);
  tc = tcase(s, "reduce");
  tcase_add_loop_test(tc, reduce_signed_axes, 0, NPOOL);
  tcase_add_test(tc, reduce_bitmask);
  tcase_add_test(tc, argmax_argmin);
  tcase_add_test(tc, cumsum_op);
  tcase_add_test(tc, softmax_op);
  tc = tcase(s, "errors");
  tcase_add_test(tc, errors);
  tc = tcase(s, "gradients");
  tcase_add_test(tc, gradients);
  return s;
}

int main(void) {
  const char *seed = getenv("BG_TEST_SEED");
  if (seed && *seed) base_seed = strtoull(seed, NULL, 0);
  make_pool();
  printf("seed 0x%llx, shape pool:", (unsigned long long)base_seed);
  for (unsigned r = 0; r < NPOOL; r++) printf(" %s", shs(r, pool[r]));
  printf("\n");
  SRunner *sr = srunner_create(math_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
