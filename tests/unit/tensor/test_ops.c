/* tests/unit/tensor/test_ops.c: per-op numerical tests of the tensor layer on the device DEV names
 * (CPU by default).
 *
 * Every op is run on seeded random data and compared with a plain C reference loop over host arrays
 * (struct harr) holding the exact bytes that were uploaded; the reference reads the stored inputs
 * back, so float16 rounding of the inputs is not an error source. Shapes come from a small seeded
 * pool (ranks 0-4, sizes 1-17 per axis) that the tests share, which keeps the number of distinct
 * kernels (each compiled through the host C compiler, cached under BG_CACHE_DIR) in the low hundreds.
 *
 * A failing case does not stop its test: it is logged to stderr with op, shapes, dtypes, the first
 * differing element (coordinates, got, want, tolerance) and the count of differing elements, and the
 * test asserts once at the end (finish()). A passing array is one Check record. */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "baregpu/tensor.h"

/* ---------------- tolerances ----------------
 * |got - want| <= abs + rel * scale, with scale = |want| for elementwise results and the sum of the
 * absolute values of the accumulated terms for sums and matmuls. Integer and bool results are exact.
 *   arith: + - * / maximum reciprocal neg relu, casts, movement (float16: two roundings = 2 ulp)
 *   trans: exp2 log2 exp log sin sqrt elu (tinygrad-style polynomial decompositions)
 *   acc:   sum, matmul (float32 accumulation of up to 17^4 terms; float16 results accumulate in
 *          float32 as tinygrad does, so one final rounding plus rounded products) */
enum tolclass { TC_ARITH, TC_TRANS, TC_ACC, NTOLCLASS };
static const struct tolrow {
  enum bg_dtype t;
  double rel[NTOLCLASS], abs[NTOLCLASS];
} tolerances[] = {
  /*                arith  trans  acc          arith  trans  acc */
  {BG_FLOAT32, {1e-6, 1e-5, 1e-5}, {1e-7, 1e-6, 1e-6}},
  {BG_FLOAT16, {2e-3, 4e-3, 2e-3}, {1e-5, 2e-3, 1e-3}},
};

static const enum bg_dtype ALL7[] = {BG_FLOAT32, BG_FLOAT16, BG_INT32, BG_UINT32, BG_INT64, BG_UINT64, BG_BOOL};
#define NALL7 7
#define NNUM6 6 /* ALL7 without bool */

static bg_tctx *ctx;

/* ---------------- per-test bookkeeping ---------------- */

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

static char fail_log[12000];
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

/* The single failure assertion of a test: every case that failed, listed. */
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
/* Uniform integer in [lo, hi] (hi - lo may span most of int64). */
static int64_t irand(int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo; /* number of values - 1 */
  uint64_t r = span == UINT64_MAX ? rnd() : rnd() % (span + 1u);
  return (int64_t)((uint64_t)lo + r);
}

/* ---------------- float16 ---------------- */

static double h2d(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

/* Round to nearest even, straight from double (no double rounding through float). */
static uint16_t d2h(double d) {
  uint16_t sign = signbit(d) ? 0x8000 : 0;
  double a = fabs(d);
  if (isnan(d)) return 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < 0x1.0p-14) return sign | (uint16_t)lrint(a * 0x1.0p24); /* subnormal; 1024 = smallest normal */
  int e;
  double fr = frexp(a, &e); /* a = fr * 2^e, fr in [0.5, 1) */
  long m = lrint(fr * 2048.0);
  int E = e - 1 + 15;
  if (m == 2048) {
    m = 1024;
    E++;
  }
  if (E >= 31) return sign | 0x7c00;
  return (uint16_t)(sign | (unsigned)(E << 10) | (unsigned)(m - 1024));
}

/* ---------------- host arrays and scalar values ---------------- */

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
    case BG_INT32: { int32_t x = (int32_t)(uint32_t)(uint64_t)v.i; memcpy(p, &x, 4); break; }
    case BG_INT64: memcpy(p, &v.i, 8); break;
    case BG_UINT32: { uint32_t x = (uint32_t)v.u; memcpy(p, &x, 4); break; }
    case BG_UINT64: memcpy(p, &v.u, 8); break;
    case BG_BOOL: p[0] = v.u != 0; break;
    default: abort();
  }
}

static sval svf(double f) { sval v; v.f = f; return v; }
static sval svi(int64_t i) { sval v; v.i = i; return v; }
static sval svu(uint64_t u) { sval v; v.u = u; return v; }

/* C conversion semantics between dtypes (callers keep float->int in range). */
static sval conv(sval v, enum bg_dtype from, enum bg_dtype to) {
  enum kind kf = kind_of(from), kt = kind_of(to);
  if (kf == K_B) kf = K_U;
  switch (kt) {
    case K_F: return svf(kf == K_F ? v.f : kf == K_I ? (double)v.i : (double)v.u);
    case K_I: return svi(kf == K_F ? (int64_t)v.f : kf == K_I ? v.i : (int64_t)v.u);
    case K_U: return svu(kf == K_F ? (uint64_t)v.f : kf == K_I ? (uint64_t)v.i : v.u);
    case K_B: return svu(kf == K_F ? v.f != 0 : kf == K_I ? v.i != 0 : v.u != 0);
  }
  return v;
}

/* Shapes as "(3,5)", from a ring of buffers so several fit in one printf. */
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

/* ---------------- fills ---------------- */

/* Floats uniform in [lo, hi]; integers uniform in [ceil(lo), floor(hi)] (unsigned from max(lo, 0));
 * bools half true. */
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

/* Full-width values where the ops stay defined: int32 [-2^30, 2^30), int64 [-2^62, 2^62), unsigned the
 * whole range (wrap-around is defined), floats [-4, 4]. Sums and differences of two never overflow. */
static void fill_wide(harr *a) {
  for (int64_t i = 0; i < a->n; i++) {
    switch (a->t) {
      case BG_INT32: ha_set(a, i, svi(irand(-(1LL << 30), (1LL << 30) - 1))); break;
      case BG_INT64: ha_set(a, i, svi(irand(-(1LL << 62), (1LL << 62) - 1))); break;
      case BG_UINT32: case BG_UINT64: ha_set(a, i, svu(rnd())); break;
      default: fill(a, -4, 4); return;
    }
  }
}

/* Magnitudes in [lo, hi] with a random sign (unsigned: positive). */
static void fill_nonzero(harr *a, double lo, double hi) {
  fill(a, lo, hi);
  if (kind_of(a->t) == K_U || kind_of(a->t) == K_B) return;
  for (int64_t i = 0; i < a->n; i++) {
    if (rnd() & 1) continue;
    sval v = ha_get(a, i);
    if (kind_of(a->t) == K_F) v.f = -v.f;
    else v.i = -v.i;
    ha_set(a, i, v);
  }
}

static harr *ha_rand(enum bg_dtype t, unsigned nd, const int64_t *sh, double lo, double hi) {
  harr *a = ha_new(t, nd, sh);
  fill(a, lo, hi);
  return a;
}

/* ---------------- shape pool ---------------- */

#define NPOOL 5
static int64_t pool[NPOOL][4]; /* pool[r] has rank r */
/* BG_TEST_SEED=N replaces the fixed seed of the shape pool and the data (to fuzz; new shapes compile
 * new kernels). */
static uint64_t base_seed = 0x5eedf00dull;

static void make_pool(void) {
  uint64_t saved = rng_state;
  rng_seed(base_seed);
  for (unsigned r = 0; r < NPOOL; r++)
    for (unsigned d = 0; d < 4; d++) pool[r][d] = d < r ? irand(1, 17) : 1;
  /* Keep the rank-4 shape moderate (each case runs over it) and make sure no axis of the rank-3/4
   * shapes is 1 everywhere, so broadcasting and padding see real sizes. */
  for (unsigned d = 0; d < 4; d++) {
    if (pool[4][d] > 13) pool[4][d] = 13;
    if (pool[4][d] < 2) pool[4][d] = 2;
    if (d < 3 && pool[3][d] < 2) pool[3][d] = 2;
  }
  rng_state = saved;
}

/* ---------------- tensors and checking ---------------- */

static bg_tensor *mk(const harr *a) { return bg_tn_from(ctx, a->t, a->nd, a->sh, a->p); }

static const struct tolrow *tol_of(enum bg_dtype t) {
  for (size_t i = 0; i < sizeof(tolerances) / sizeof(tolerances[0]); i++)
    if (tolerances[i].t == t) return &tolerances[i];
  return NULL;
}

static const char *ctx_why(void) {
  const char *e = bg_tctx_error(ctx);
  if (e && *e) return e;
  e = bg_last_error();
  return e && *e ? e : "(no message)";
}

/* Compare t with want; on mismatch describe it into why. */
static bool check_tensor(bg_tensor *t, const harr *want, enum tolclass tc, const double *scale, char *why,
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
    snprintf(why, cap, "result shape %s (numel %lld), want %s", shs(bg_tn_ndim(t), sh), (long long)bg_tn_numel(t),
             hs(want));
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
  const struct tolrow *tr = tol_of(want->t);
  int64_t bad = 0, first = -1;
  double fg = 0, fw = 0, ftol = 0;
  for (int64_t i = 0; i < want->n; i++) {
    sval g = raw_get(want->t, got + (size_t)i * esz), w = ha_get(want, i);
    bool ok;
    double tol = 0;
    switch (kind_of(want->t)) {
      case K_F:
        tol = tr->abs[tc] + tr->rel[tc] * (scale ? scale[i] : fabs(w.f));
        ok = fabs(g.f - w.f) <= tol;
        if (!ok && first < 0) fg = g.f, fw = w.f, ftol = tol;
        break;
      case K_I:
        ok = g.i == w.i;
        if (!ok && first < 0) fg = (double)g.i, fw = (double)w.i;
        break;
      case K_B:
        ok = got[i] == w.u; /* bools are stored as bytes 0 and 1 */
        if (!ok && first < 0) fg = got[i], fw = (double)w.u;
        break;
      default:
        ok = g.u == w.u;
        if (!ok && first < 0) fg = (double)g.u, fw = (double)w.u;
        break;
    }
    if (!ok) {
      if (first < 0) first = i;
      bad++;
    }
  }
  if (!bad) return true;
  int64_t c[BG_MAX_DIMS];
  unravel(first, want->nd, want->sh, c);
  if (kind_of(want->t) == K_I || kind_of(want->t) == K_U) {
    sval g = raw_get(want->t, got + (size_t)first * esz), w = ha_get(want, first);
    if (kind_of(want->t) == K_I)
      snprintf(why, cap, "%lld of %lld elements differ; first at %s: got %lld want %lld", (long long)bad,
               (long long)want->n, shs(want->nd, c), (long long)g.i, (long long)w.i);
    else
      snprintf(why, cap, "%lld of %lld elements differ; first at %s: got %llu want %llu", (long long)bad,
               (long long)want->n, shs(want->nd, c), (unsigned long long)g.u, (unsigned long long)w.u);
  } else {
    snprintf(why, cap, "%lld of %lld elements differ; first at %s: got %.9g want %.9g (tol %.3g)", (long long)bad,
             (long long)want->n, shs(want->nd, c), fg, fw, ftol);
  }
  return false;
}

/* Check t against want: one Check record when it matches, a logged failure otherwise. */
static bool expect(bg_tensor *t, const harr *want, enum tolclass tc, const double *scale, const char *fmt, ...)
  __attribute__((format(printf, 5, 6)));
static bool expect(bg_tensor *t, const harr *want, enum tolclass tc, const double *scale, const char *fmt, ...) {
  char what[512], why[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  case_count++;
  bool ok = check_tensor(t, want, tc, scale, why, sizeof(why));
  if (ok) ck_assert_msg(ok, "%s", what);
  else case_fail(what, why);
  return ok;
}

/* A failed expectation that is not an array comparison. */
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

/* Read a tensor into a new host array (dtype and shape taken from the tensor); NULL on failure. */
static harr *fetch(bg_tensor *t) {
  if (!t || bg_tctx_error(ctx)) return NULL;
  harr *a = ha_new(bg_tn_dtype(t), bg_tn_ndim(t), bg_tn_shape(t));
  if (bg_tn_read(t, a->p, (size_t)a->n * dsz(a->t)) < 0) return NULL;
  return a;
}

/* ---------------- references: broadcasting and movement ---------------- */

static bool bcast_shape(unsigned na, const int64_t *sa, unsigned nb, const int64_t *sb, unsigned *no, int64_t *so) {
  unsigned n = na > nb ? na : nb;
  for (unsigned i = 0; i < n; i++) {
    int64_t x = i < n - na ? 1 : sa[i - (n - na)];
    int64_t y = i < n - nb ? 1 : sb[i - (n - nb)];
    if (x != y && x != 1 && y != 1) return false;
    so[i] = x == 1 ? y : x;
  }
  *no = n;
  return true;
}

/* Linear index into a source of shape ss (aligned right, size-1 axes broadcast) for output element oi. */
static int64_t bcast_index(int64_t oi, unsigned no, const int64_t *so, unsigned ns, const int64_t *ss) {
  int64_t c[BG_MAX_DIMS], idx = 0;
  unravel(oi, no, so, c);
  for (unsigned d = 0; d < ns; d++) {
    int64_t x = c[d + (no - ns)];
    idx = idx * ss[d] + (ss[d] == 1 ? 0 : x);
  }
  return idx;
}

static void copy_el(harr *dst, int64_t di, const harr *src, int64_t si) {
  size_t e = dsz(src->t);
  memcpy(dst->p + (size_t)di * e, src->p + (size_t)si * e, e);
}

static harr *ref_expand(const harr *a, unsigned nd, const int64_t *sh) {
  harr *o = ha_new(a->t, nd, sh);
  for (int64_t i = 0; i < o->n; i++) copy_el(o, i, a, bcast_index(i, nd, sh, a->nd, a->sh));
  return o;
}

static harr *ref_reshape(const harr *a, unsigned nd, const int64_t *sh) {
  int64_t rs[BG_MAX_DIMS], known = 1;
  int neg = -1;
  for (unsigned i = 0; i < nd; i++) {
    rs[i] = sh[i];
    if (sh[i] == -1) neg = (int)i;
    else known *= sh[i];
  }
  if (neg >= 0) rs[neg] = a->n / known;
  harr *o = ha_new(a->t, nd, rs);
  memcpy(o->p, a->p, (size_t)a->n * dsz(a->t));
  return o;
}

static harr *ref_permute(const harr *a, const unsigned *order) {
  int64_t sh[BG_MAX_DIMS], oc[BG_MAX_DIMS], ic[BG_MAX_DIMS];
  for (unsigned j = 0; j < a->nd; j++) sh[j] = a->sh[order[j]];
  harr *o = ha_new(a->t, a->nd, sh);
  for (int64_t i = 0; i < o->n; i++) {
    unravel(i, o->nd, o->sh, oc);
    for (unsigned j = 0; j < a->nd; j++) ic[order[j]] = oc[j];
    copy_el(o, i, a, ravel(ic, a->nd, a->sh));
  }
  return o;
}

static harr *ref_pad(const harr *a, const int64_t (*pads)[2]) {
  int64_t sh[BG_MAX_DIMS], c[BG_MAX_DIMS];
  for (unsigned d = 0; d < a->nd; d++) sh[d] = a->sh[d] + pads[d][0] + pads[d][1];
  harr *o = ha_new(a->t, a->nd, sh); /* zero bytes: 0, 0.0, false */
  for (int64_t i = 0; i < o->n; i++) {
    unravel(i, o->nd, o->sh, c);
    bool in = true;
    for (unsigned d = 0; d < a->nd; d++) {
      c[d] -= pads[d][0];
      in = in && c[d] >= 0 && c[d] < a->sh[d];
    }
    if (in) copy_el(o, i, a, ravel(c, a->nd, a->sh));
  }
  return o;
}

static harr *ref_shrink(const harr *a, const int64_t (*b)[2]) {
  int64_t sh[BG_MAX_DIMS], c[BG_MAX_DIMS];
  for (unsigned d = 0; d < a->nd; d++) sh[d] = b[d][1] - b[d][0];
  harr *o = ha_new(a->t, a->nd, sh);
  for (int64_t i = 0; i < o->n; i++) {
    unravel(i, o->nd, o->sh, c);
    for (unsigned d = 0; d < a->nd; d++) c[d] += b[d][0];
    copy_el(o, i, a, ravel(c, a->nd, a->sh));
  }
  return o;
}

static harr *ref_flip(const harr *a, uint32_t mask) {
  int64_t c[BG_MAX_DIMS];
  harr *o = ha_new(a->t, a->nd, a->sh);
  for (int64_t i = 0; i < o->n; i++) {
    unravel(i, o->nd, o->sh, c);
    for (unsigned d = 0; d < a->nd; d++)
      if (mask & (1u << d)) c[d] = a->sh[d] - 1 - c[d];
    copy_el(o, i, a, ravel(c, a->nd, a->sh));
  }
  return o;
}

static harr *ref_cat(harr *const *a, unsigned n, unsigned axis) {
  int64_t sh[BG_MAX_DIMS], c[BG_MAX_DIMS];
  memcpy(sh, a[0]->sh, sizeof(sh));
  sh[axis] = 0;
  for (unsigned k = 0; k < n; k++) sh[axis] += a[k]->sh[axis];
  harr *o = ha_new(a[0]->t, a[0]->nd, sh);
  for (int64_t i = 0; i < o->n; i++) {
    unravel(i, o->nd, o->sh, c);
    unsigned k = 0;
    while (c[axis] >= a[k]->sh[axis]) c[axis] -= a[k++]->sh[axis];
    copy_el(o, i, a[k], ravel(c, a[k]->nd, a[k]->sh));
  }
  return o;
}

/* ---------------- elementwise ---------------- */

enum binop { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_LT, B_EQ, B_NE, NBINOPS };
static const char *const binop_name[] = {"add", "sub", "mul", "div", "maximum", "lt", "eq", "ne"};

static bg_tensor *apply_bin(enum binop op, bg_tensor *a, bg_tensor *b) {
  switch (op) {
    case B_ADD: return bg_tn_add(a, b);
    case B_SUB: return bg_tn_sub(a, b);
    case B_MUL: return bg_tn_mul(a, b);
    case B_DIV: return bg_tn_div(a, b);
    case B_MAX: return bg_tn_maximum(a, b);
    case B_LT: return bg_tn_lt(a, b);
    case B_EQ: return bg_tn_eq(a, b);
    default: return bg_tn_ne(a, b);
  }
}

static enum bg_dtype bin_out(enum binop op, enum bg_dtype t) {
  if (op == B_LT || op == B_EQ || op == B_NE) return BG_BOOL;
  if (op == B_DIV && kind_of(t) != K_F) return BG_FLOAT32;
  return t;
}

/* a op b for inputs of dtype t, as a value of the output dtype's kind. */
static sval ref_bin(enum binop op, enum bg_dtype t, sval a, sval b) {
  switch (kind_of(t)) {
    case K_F:
      switch (op) {
        case B_ADD: return svf(a.f + b.f);
        case B_SUB: return svf(a.f - b.f);
        case B_MUL: return svf(a.f * b.f);
        case B_DIV: return svf(a.f / b.f);
        case B_MAX: return svf(a.f > b.f ? a.f : b.f);
        case B_LT: return svu(a.f < b.f);
        case B_EQ: return svu(a.f == b.f);
        default: return svu(a.f != b.f);
      }
    case K_I:
      switch (op) {
        case B_ADD: return svi((int64_t)((uint64_t)a.i + (uint64_t)b.i));
        case B_SUB: return svi((int64_t)((uint64_t)a.i - (uint64_t)b.i));
        case B_MUL: return svi((int64_t)((uint64_t)a.i * (uint64_t)b.i));
        case B_DIV: return svf((double)(float)a.i / (double)(float)b.i);
        case B_MAX: return svi(a.i > b.i ? a.i : b.i);
        case B_LT: return svu(a.i < b.i);
        case B_EQ: return svu(a.i == b.i);
        default: return svu(a.i != b.i);
      }
    default: /* unsigned and bool */
      switch (op) {
        case B_ADD: return svu(a.u + b.u);
        case B_SUB: return svu(a.u - b.u);
        case B_MUL: return svu(a.u * b.u);
        case B_DIV: return svf((double)(float)a.u / (double)(float)b.u);
        case B_MAX: return svu(a.u > b.u ? a.u : b.u);
        case B_LT: return svu(a.u < b.u);
        case B_EQ: return svu(a.u == b.u);
        default: return svu(a.u != b.u);
      }
  }
}

static void fill_for(enum binop op, harr *a, bool denominator) {
  switch (op) {
    case B_MUL:
      if (a->t == BG_INT32) fill(a, -1000, 1000);
      else if (a->t == BG_INT64) fill(a, -2147483648.0, 2147483648.0);
      else fill_wide(a);
      break;
    case B_DIV:
      if (kind_of(a->t) == K_F) denominator ? fill_nonzero(a, 0.5, 4) : fill(a, -8, 8);
      else denominator ? fill_nonzero(a, 1, 1000) : fill(a, -1000, 1000);
      break;
    default: fill_wide(a); break;
  }
}

/* One binary case; shapes may differ (broadcasting). Returns false when the case failed. */
static bool bin_case(enum binop op, enum bg_dtype t, unsigned na, const int64_t *sa, unsigned nb, const int64_t *sb) {
  unsigned no;
  int64_t so[BG_MAX_DIMS];
  ck_assert(bcast_shape(na, sa, nb, sb, &no, so));
  harr *a = ha_new(t, na, sa), *b = ha_new(t, nb, sb);
  fill_for(op, a, false);
  fill_for(op, b, true);
  if ((op == B_EQ || op == B_NE || op == B_LT || op == B_MAX) && a->n == b->n)
    for (int64_t i = 0; i < a->n; i++)
      if (rnd() % 3 == 0) copy_el(b, i, a, i); /* equal pairs */
  harr *w = ha_new(bin_out(op, t), no, so);
  for (int64_t i = 0; i < w->n; i++)
    ha_set(w, i, ref_bin(op, t, ha_get(a, bcast_index(i, no, so, na, sa)), ha_get(b, bcast_index(i, no, so, nb, sb))));
  return expect(apply_bin(op, mk(a), mk(b)), w, TC_ARITH, NULL, "%s %s %s, %s", binop_name[op], dn(t), hs(a), hs(b));
}

static bool bin_supports(enum binop op, enum bg_dtype t) {
  if (t == BG_BOOL) return op == B_EQ || op == B_NE;
  if (op == B_DIV) return t == BG_FLOAT32 || t == BG_FLOAT16 || t == BG_INT32 || t == BG_UINT32;
  return true;
}

START_TEST(binary_ops) {
  enum binop op = (enum binop)_i;
  for (unsigned j = 0; j < NALL7; j++) {
    enum bg_dtype t = ALL7[j];
    if (!bin_supports(op, t)) continue;
    const int64_t *sh = pool[(op * 2 + j) % NPOOL];
    unsigned r = (unsigned)((op * 2 + j) % NPOOL);
    bin_case(op, t, r, sh, r, sh);
    if (t == BG_FLOAT32 && r != 4) bin_case(op, t, 4, pool[4], 4, pool[4]);
  }
  finish();
}
END_TEST

enum unop { U_NEG, U_EXP2, U_LOG2, U_EXP, U_LOG, U_SIN, U_SQRT, U_RECIP, U_RELU, U_ELU, NUNOPS };
static const struct unop_info {
  const char *name;
  bool ints;                  /* also on int32 and int64 */
  double lo32, hi32, lo16, hi16; /* input range for float32 / float16 */
  bool nonzero;               /* magnitudes in [lo, hi] with random signs */
  enum tolclass tc;
} unops[NUNOPS] = {
  {"neg", true, -4, 4, -4, 4, false, TC_ARITH},
  {"exp2", false, -10, 10, -6, 6, false, TC_TRANS},
  {"log2", false, 0.05, 50, 0.05, 50, false, TC_TRANS},
  {"exp", false, -8, 8, -3, 3, false, TC_TRANS},
  {"log", false, 0.05, 50, 0.05, 50, false, TC_TRANS},
  {"sin", false, -6, 6, -3, 3, false, TC_TRANS},
  {"sqrt", false, 0, 50, 0, 50, false, TC_TRANS},
  {"reciprocal", false, 0.25, 8, 0.25, 8, true, TC_ARITH},
  {"relu", true, -4, 4, -4, 4, false, TC_ARITH},
  {"elu", false, -4, 4, -4, 4, false, TC_TRANS},
};

static bg_tensor *apply_un(enum unop op, bg_tensor *a, double alpha) {
  switch (op) {
    case U_NEG: return bg_tn_neg(a);
    case U_EXP2: return bg_tn_exp2(a);
    case U_LOG2: return bg_tn_log2(a);
    case U_EXP: return bg_tn_exp(a);
    case U_LOG: return bg_tn_log(a);
    case U_SIN: return bg_tn_sin(a);
    case U_SQRT: return bg_tn_sqrt(a);
    case U_RECIP: return bg_tn_reciprocal(a);
    case U_RELU: return bg_tn_relu(a);
    default: return bg_tn_elu(a, alpha);
  }
}

static sval ref_un(enum unop op, enum bg_dtype t, sval a, double alpha) {
  if (kind_of(t) == K_I) return svi(op == U_NEG ? (int64_t)(0u - (uint64_t)a.i) : a.i > 0 ? a.i : 0);
  double x = a.f;
  switch (op) {
    case U_NEG: return svf(-x);
    case U_EXP2: return svf(exp2(x));
    case U_LOG2: return svf(log2(x));
    case U_EXP: return svf(exp(x));
    case U_LOG: return svf(log(x));
    case U_SIN: return svf(sin(x));
    case U_SQRT: return svf(sqrt(x));
    case U_RECIP: return svf(1.0 / x);
    case U_RELU: return svf(x > 0 ? x : 0);
    default: return svf(x > 0 ? x : alpha * expm1(x));
  }
}

static void un_case(enum unop op, enum bg_dtype t, unsigned r, double alpha) {
  const struct unop_info *u = &unops[op];
  harr *a = ha_new(t, r, pool[r]);
  if (kind_of(t) == K_I) fill_wide(a);
  else if (u->nonzero) fill_nonzero(a, t == BG_FLOAT16 ? u->lo16 : u->lo32, t == BG_FLOAT16 ? u->hi16 : u->hi32);
  else fill(a, t == BG_FLOAT16 ? u->lo16 : u->lo32, t == BG_FLOAT16 ? u->hi16 : u->hi32);
  harr *w = ha_new(t, r, pool[r]);
  for (int64_t i = 0; i < a->n; i++) ha_set(w, i, ref_un(op, t, ha_get(a, i), alpha));
  if (op == U_ELU)
    expect(apply_un(op, mk(a), alpha), w, u->tc, NULL, "elu(alpha=%g) %s %s", alpha, dn(t), hs(a));
  else
    expect(apply_un(op, mk(a), alpha), w, u->tc, NULL, "%s %s %s", u->name, dn(t), hs(a));
}

START_TEST(unary_ops) {
  enum unop op = (enum unop)_i;
  static const enum bg_dtype dts[] = {BG_FLOAT32, BG_FLOAT16, BG_INT32, BG_INT64};
  for (unsigned j = 0; j < 4; j++) {
    if (j >= 2 && !unops[op].ints) continue;
    unsigned r = (unsigned)((op + 2 * j) % NPOOL);
    un_case(op, dts[j], r, 1.0);
    if (j == 0 && r != 4) un_case(op, dts[j], 4, 1.0);
  }
  if (op == U_ELU) un_case(op, BG_FLOAT32, 3, 0.5);
  finish();
}
END_TEST

/* addc / mulc: a (op) scalar in a's dtype. */
START_TEST(const_ops) {
  static const double addv[NNUM6] = {2.25, 0.5, 7, 7, 1e12, 7}, mulv[NNUM6] = {-1.5, -1.5, -3, 3, -3, 3};
  for (unsigned j = 0; j < NNUM6; j++) {
    enum bg_dtype t = ALL7[j];
    for (int m = 0; m < 2; m++) {
      unsigned r = (unsigned)((j + 3 * (unsigned)m) % NPOOL);
      harr *a = ha_new(t, r, pool[r]);
      double v = m ? mulv[j] : addv[j];
      if (m && t == BG_INT32) fill(a, -1000000, 1000000);
      else if (m && t == BG_INT64) fill(a, -(double)(1LL << 40), (double)(1LL << 40));
      else fill_wide(a);
      harr *w = ha_new(t, r, pool[r]);
      sval c = conv(svf(v), BG_FLOAT32, t);
      for (int64_t i = 0; i < a->n; i++) ha_set(w, i, ref_bin(m ? B_MUL : B_ADD, t, ha_get(a, i), c));
      bg_tensor *res = m ? bg_tn_mulc(mk(a), v) : bg_tn_addc(mk(a), v);
      expect(res, w, TC_ARITH, NULL, "%s(%g) %s %s", m ? "mulc" : "addc", v, dn(t), hs(a));
    }
  }
  finish();
}
END_TEST

START_TEST(where_op) {
  for (unsigned j = 0; j < NALL7; j++) {
    enum bg_dtype t = ALL7[j];
    unsigned r = (j + 1) % NPOOL;
    harr *cnd = ha_rand(BG_BOOL, r, pool[r], 0, 1), *x = ha_new(t, r, pool[r]), *y = ha_new(t, r, pool[r]);
    fill_wide(x);
    fill_wide(y);
    harr *w = ha_new(t, r, pool[r]);
    for (int64_t i = 0; i < w->n; i++) copy_el(w, i, ha_get(cnd, i).u ? x : y, i);
    expect(bg_tn_where(mk(cnd), mk(x), mk(y)), w, TC_ARITH, NULL, "where %s %s", dn(t), hs(x));
  }
  /* cond (3,1), x (1,4), y () -> (3,4) */
  const int64_t sc[] = {3, 1}, sx[] = {1, 4}, so[] = {3, 4};
  harr *cnd = ha_rand(BG_BOOL, 2, sc, 0, 1), *x = ha_rand(BG_FLOAT32, 2, sx, -4, 4), *y = ha_rand(BG_FLOAT32, 0, NULL, -4, 4);
  harr *w = ha_new(BG_FLOAT32, 2, so);
  for (int64_t i = 0; i < w->n; i++)
    ha_set(w, i, ha_get(cnd, bcast_index(i, 2, so, 2, sc)).u ? ha_get(x, bcast_index(i, 2, so, 2, sx)) : ha_get(y, 0));
  expect(bg_tn_where(mk(cnd), mk(x), mk(y)), w, TC_ARITH, NULL, "where float32 broadcast cond (3,1) x (1,4) y ()");
  finish();
}
END_TEST

/* Cast from ALL7[_i] to every dtype, with values for which C defines the conversion. */
START_TEST(cast_ops) {
  enum bg_dtype from = ALL7[_i];
  for (unsigned j = 0; j < NALL7; j++) {
    enum bg_dtype to = ALL7[j];
    unsigned r = (unsigned)((_i + j) % NPOOL);
    harr *a = ha_new(from, r, pool[r]);
    switch (kind_of(from)) {
      case K_F:
        if (kind_of(to) == K_U) fill(a, 0, 999.9);
        else if (kind_of(to) == K_I) fill(a, -999.9, 999.9);
        else if (kind_of(to) == K_B) fill(a, -2, 2);
        else fill(a, -1000, 1000);
        break;
      case K_I: fill(a, -30000, 30000); break;
      case K_U: fill(a, 0, 60000); break;
      case K_B: fill(a, 0, 1); break;
    }
    if (kind_of(from) != K_B)
      for (int64_t i = 0; i < a->n; i++)
        if (rnd() % 4 == 0) ha_set(a, i, conv(svi(0), BG_INT64, from)); /* zeros, for bool targets */
    harr *w = ha_new(to, r, pool[r]);
    for (int64_t i = 0; i < a->n; i++) ha_set(w, i, conv(ha_get(a, i), from, to));
    expect(bg_tn_cast(mk(a), to), w, TC_ARITH, NULL, "cast %s -> %s %s", dn(from), dn(to), hs(a));
  }
  /* Sign extension and wrap-around: negative int32/int64 to the unsigned types. */
  if (from == BG_INT32 || from == BG_INT64) {
    const int64_t sh[] = {6};
    harr *a = ha_new(from, 1, sh);
    const int64_t vals[] = {-1, -2, -2147483647 - 1, 2147483647, 0, -123456};
    for (int i = 0; i < 6; i++) ha_set(a, i, svi(vals[i]));
    static const enum bg_dtype uns[] = {BG_UINT32, BG_UINT64};
    for (int k = 0; k < 2; k++) {
      harr *w = ha_new(uns[k], 1, sh);
      for (int i = 0; i < 6; i++) ha_set(w, i, conv(ha_get(a, i), from, uns[k]));
      expect(bg_tn_cast(mk(a), uns[k]), w, TC_ARITH, NULL, "cast %s -> %s of negative values", dn(from), dn(uns[k]));
    }
  }
  finish();
}
END_TEST

/* Broadcasting of mismatched ranks and size-1 axes on both sides. */
START_TEST(broadcasting) {
  const int64_t s315[] = {3, 1, 5}, s41[] = {4, 1}, s23[] = {2, 3}, s1[] = {1}, s711[] = {7, 1, 1}, s214[] = {2, 1, 4},
                s31[] = {3, 1}, s5112[] = {5, 1, 1, 2}, s16[] = {1, 6};
  bin_case(B_ADD, BG_FLOAT32, 3, s315, 2, s41);
  bin_case(B_MUL, BG_INT32, 0, NULL, 2, s23);
  bin_case(B_SUB, BG_FLOAT32, 1, s1, 3, s711);
  bin_case(B_LT, BG_FLOAT32, 3, s214, 2, s31);
  bin_case(B_MAX, BG_INT64, 4, s5112, 2, s31);
  bin_case(B_EQ, BG_UINT32, 2, s41, 2, s16);
  bin_case(B_DIV, BG_FLOAT16, 2, s31, 1, s1);
  bin_case(B_ADD, BG_FLOAT32, 4, pool[4], 1, &pool[4][3]);
  finish();
}
END_TEST

/* Mixed dtypes promote as tinygrad's lattice. */
START_TEST(promotion) {
  static const struct { enum bg_dtype a, b, out; } cases[] = {
    {BG_INT32, BG_FLOAT32, BG_FLOAT32}, {BG_BOOL, BG_INT32, BG_INT32}, {BG_UINT32, BG_INT32, BG_INT64},
    {BG_FLOAT16, BG_FLOAT32, BG_FLOAT32}, {BG_INT32, BG_FLOAT16, BG_FLOAT16}, {BG_INT64, BG_FLOAT32, BG_FLOAT32},
  };
  const int64_t sh[] = {3, 4};
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    harr *a = ha_rand(cases[k].a, 2, sh, -20, 20), *b = ha_rand(cases[k].b, 2, sh, -20, 20);
    harr *w = ha_new(cases[k].out, 2, sh);
    for (int64_t i = 0; i < w->n; i++)
      ha_set(w, i, ref_bin(B_ADD, cases[k].out, conv(ha_get(a, i), a->t, w->t), conv(ha_get(b, i), b->t, w->t)));
    expect(bg_tn_add(mk(a), mk(b)), w, TC_ARITH, NULL, "add %s + %s (promotes to %s)", dn(a->t), dn(b->t), dn(w->t));
  }
  finish();
}
END_TEST

/* ---------------- reductions ---------------- */

static harr *ref_reduce(const harr *a, uint32_t mask, bool keepdim, bool is_max, double **scale) {
  unsigned nd = a->nd, ond = 0;
  int64_t ksh[BG_MAX_DIMS], osh[BG_MAX_DIMS], c[BG_MAX_DIMS];
  for (unsigned d = 0; d < nd; d++) {
    bool red = mask & (1u << d);
    ksh[d] = red ? 1 : a->sh[d];
    if (keepdim || !red) osh[ond++] = ksh[d];
  }
  enum bg_dtype ot = (!is_max && a->t == BG_BOOL) ? BG_INT32 : a->t;
  harr *o = ha_new(ot, ond, osh);
  double *accf = talloc((size_t)o->n * sizeof(double)), *sabs = talloc((size_t)o->n * sizeof(double));
  uint64_t *accu = talloc((size_t)o->n * sizeof(uint64_t));
  bool *seen = talloc((size_t)o->n);
  enum kind k = kind_of(a->t);
  for (int64_t i = 0; i < a->n; i++) {
    unravel(i, nd, a->sh, c);
    for (unsigned d = 0; d < nd; d++)
      if (mask & (1u << d)) c[d] = 0;
    int64_t oi = ravel(c, nd, ksh);
    sval v = ha_get(a, i);
    if (k == K_F) {
      if (is_max) accf[oi] = !seen[oi] || v.f > accf[oi] ? v.f : accf[oi];
      else accf[oi] += v.f;
      sabs[oi] += fabs(v.f);
    } else if (k == K_I) {
      if (is_max) accu[oi] = !seen[oi] || v.i > (int64_t)accu[oi] ? (uint64_t)v.i : accu[oi];
      else accu[oi] += (uint64_t)v.i;
    } else {
      if (is_max) accu[oi] = !seen[oi] || v.u > accu[oi] ? v.u : accu[oi];
      else accu[oi] += v.u;
    }
    seen[oi] = true;
  }
  for (int64_t i = 0; i < o->n; i++) {
    if (k == K_F) ha_set(o, i, svf(accf[i]));
    else if (kind_of(ot) == K_I) ha_set(o, i, svi((int64_t)accu[i]));
    else ha_set(o, i, svu(accu[i]));
  }
  if (scale) *scale = sabs;
  return o;
}

static void reduce_case(bool is_max, harr *a, uint32_t mask, bool keepdim) {
  double *scale;
  harr *w = ref_reduce(a, mask == BG_ALL_AXES ? (1u << a->nd) - 1 : mask, keepdim, is_max, &scale);
  bg_tensor *t = is_max ? bg_tn_max(mk(a), mask, keepdim) : bg_tn_sum(mk(a), mask, keepdim);
  expect(t, w, is_max ? TC_ARITH : TC_ACC, is_max ? NULL : scale, "%s %s %s axes 0x%x keepdim %d",
         is_max ? "max" : "sum", dn(a->t), hs(a), mask, keepdim);
}

/* float32 sum and max over every axis subset of the pool shape of rank _i, keepdim both ways. */
START_TEST(reduce_subsets) {
  unsigned r = (unsigned)_i;
  harr *a = ha_rand(BG_FLOAT32, r, pool[r], -4, 4);
  for (uint32_t m = 0; m < (1u << r); m++)
    for (int keep = 0; keep < 2; keep++) {
      reduce_case(false, a, m, keep);
      reduce_case(true, a, m, keep);
    }
  reduce_case(false, a, BG_ALL_AXES, false);
  reduce_case(true, a, BG_ALL_AXES, true);
  finish();
}
END_TEST

START_TEST(reduce_dtypes) {
  for (unsigned j = 0; j < NALL7; j++) {
    enum bg_dtype t = ALL7[j];
    if (t == BG_FLOAT32) continue;
    harr *a = ha_new(t, 3, pool[3]);
    if (t == BG_INT32) fill(a, -1000, 1000);
    else if (t == BG_INT64) fill(a, -(double)(1LL << 40), (double)(1LL << 40));
    else fill_wide(a); /* unsigned sums wrap around */
    static const uint32_t masks[] = {BG_ALL_AXES, 1u << 1, (1u << 0) | (1u << 2)};
    for (unsigned k = 0; k < 3; k++) {
      reduce_case(false, a, masks[k], k == 1);
      if (t != BG_BOOL) reduce_case(true, a, masks[k], k != 1);
    }
  }
  finish();
}
END_TEST

/* float16 sums accumulate in float32 (tinygrad's sum_acc_dtype): 4096 ones sum to 4096, where a
 * float16 accumulator would stop at 2048. */
START_TEST(sum_half_accumulator) {
  const int64_t sh[] = {4096};
  harr *w = ha_new(BG_FLOAT16, 0, NULL);
  ha_set(w, 0, svf(4096));
  expect(bg_tn_sum(bg_tn_ones(ctx, BG_FLOAT16, 1, sh), BG_ALL_AXES, false), w, TC_ARITH, NULL, "sum of 4096 float16 ones");
  const int64_t sh2[] = {2, 3000};
  harr *a = ha_new(BG_FLOAT16, 2, sh2);
  fill(a, 0.9, 1.1);
  double *scale;
  harr *w2 = ref_reduce(a, 2, false, false, &scale);
  expect(bg_tn_sum(mk(a), 2, false), w2, TC_ACC, scale, "sum float16 (2,3000) axis 1");
  finish();
}
END_TEST

/* Reductions over views: permuted, padded, flipped and expanded inputs. */
START_TEST(reduce_views) {
  harr *a = ha_rand(BG_FLOAT32, 4, pool[4], -4, 4);
  static const unsigned order[] = {2, 0, 3, 1};
  double *scale;
  harr *p = ref_permute(a, order);
  harr *w = ref_reduce(p, 0x5, false, false, &scale);
  expect(bg_tn_sum(bg_tn_permute(mk(a), order), 0x5, false), w, TC_ACC, scale, "sum(permute %s by (2,0,3,1)) axes 0x5",
         hs(a));
  w = ref_reduce(p, 0x2, true, true, NULL);
  expect(bg_tn_max(bg_tn_permute(mk(a), order), 0x2, true), w, TC_ARITH, NULL,
         "max(permute %s by (2,0,3,1)) axes 0x2 keepdim", hs(a));
  const int64_t pads[4][2] = {{1, 0}, {0, 2}, {3, 1}, {0, 0}};
  w = ref_reduce(ref_pad(a, pads), 0xa, false, false, &scale);
  expect(bg_tn_sum(bg_tn_pad(mk(a), pads), 0xa, false), w, TC_ACC, scale, "sum(pad %s) axes 0xa", hs(a));
  w = ref_reduce(ref_flip(a, 0x9), 0x8, true, false, &scale);
  expect(bg_tn_sum(bg_tn_flip(mk(a), 0x9), 0x8, true), w, TC_ACC, scale, "sum(flip %s axes 0x9) axis 3 keepdim", hs(a));
  const int64_t s1[] = {5, 1}, se[] = {5, 7};
  harr *b = ha_rand(BG_INT32, 2, s1, -100, 100);
  w = ref_reduce(ref_expand(b, 2, se), 0x2, false, false, NULL);
  expect(bg_tn_sum(bg_tn_expand(mk(b), 2, se), 0x2, false), w, TC_ACC, NULL, "sum(expand int32 (5,1) to (5,7)) axis 1");
  finish();
}
END_TEST

/* ---------------- movement ---------------- */

START_TEST(reshape_op) {
  static const enum bg_dtype dts[] = {BG_FLOAT32, BG_INT64, BG_FLOAT16};
  const int64_t *s = pool[4];
  int64_t n = s[0] * s[1] * s[2] * s[3];
  for (unsigned j = 0; j < 3; j++) {
    harr *a = ha_rand(dts[j], 4, s, -100, 100);
    const int64_t t1[] = {n}, t2[] = {-1, s[3]}, t3[] = {s[0] * s[1], -1, 1}, t4[] = {s[3], s[2], s[1], s[0]};
    const struct { unsigned nd; const int64_t *sh; } targets[] = {{1, t1}, {2, t2}, {3, t3}, {4, t4}};
    for (unsigned k = 0; k < 4; k++) {
      if (j && k != j) continue; /* the other dtypes: one target each */
      expect(bg_tn_reshape(mk(a), targets[k].nd, targets[k].sh), ref_reshape(a, targets[k].nd, targets[k].sh), TC_ARITH,
             NULL, "reshape %s %s to %s", dn(a->t), hs(a), shs(targets[k].nd, targets[k].sh));
    }
  }
  /* reshape of a non-contiguous view: permute then flatten */
  harr *a = ha_rand(BG_FLOAT32, 3, pool[3], -4, 4);
  static const unsigned order[] = {2, 0, 1};
  const int64_t flat[] = {-1};
  expect(bg_tn_reshape(bg_tn_permute(mk(a), order), 1, flat), ref_reshape(ref_permute(a, order), 1, flat), TC_ARITH, NULL,
         "reshape(permute %s by (2,0,1)) to (-1)", hs(a));
  /* rank 0 <-> (1,1,1) */
  harr *sc = ha_rand(BG_INT32, 0, NULL, -100, 100);
  const int64_t ones[] = {1, 1, 1};
  expect(bg_tn_reshape(mk(sc), 3, ones), ref_reshape(sc, 3, ones), TC_ARITH, NULL, "reshape int32 () to (1,1,1)");
  harr *o3 = ha_rand(BG_INT32, 3, ones, -100, 100);
  expect(bg_tn_reshape(mk(o3), 0, NULL), ref_reshape(o3, 0, NULL), TC_ARITH, NULL, "reshape int32 (1,1,1) to ()");
  finish();
}
END_TEST

START_TEST(permute_op) {
  /* every permutation of rank 4 (float32), rank 3 (int32), rank 2 (float16) */
  static const enum bg_dtype dts[] = {BG_FLOAT32, BG_INT32, BG_FLOAT16};
  for (unsigned r = 4; r >= 2; r--) {
    harr *a = ha_rand(dts[4 - r], r, pool[r], -100, 100);
    unsigned order[4];
    unsigned total = r == 4 ? 24 : r == 3 ? 6 : 2;
    for (unsigned p = 0; p < total; p++) {
      /* p-th permutation in factorial numbering */
      unsigned avail[4] = {0, 1, 2, 3}, na = r, q = p;
      for (unsigned d = 0; d < r; d++) {
        unsigned f = 1;
        for (unsigned k = 2; k < r - d; k++) f *= k;
        unsigned pick = q / f;
        q %= f;
        order[d] = avail[pick];
        for (unsigned k = pick; k + 1 < na; k++) avail[k] = avail[k + 1];
        na--;
      }
      expect(bg_tn_permute(mk(a), order), ref_permute(a, order), TC_ARITH, NULL, "permute %s %s by (%u,%u,%u,%u)",
             dn(a->t), hs(a), order[0], order[1], r > 2 ? order[2] : 9, r > 3 ? order[3] : 9);
    }
  }
  finish();
}
END_TEST

START_TEST(expand_op) {
  const int64_t s1[] = {3, 1, 5, 1}, o1[] = {3, 4, 5, 2}, s2[] = {1, 1}, o2[] = {7, 9}, s3[] = {1, 5}, o3[] = {2, 3, 5},
                o4[] = {4, 3}, s5[] = {2, 1, 3}, o5[] = {2, 6, 3};
  const struct { enum bg_dtype t; unsigned n, on; const int64_t *s, *o; } cases[] = {
    {BG_FLOAT32, 4, 4, s1, o1}, {BG_INT32, 2, 2, s2, o2}, {BG_FLOAT32, 2, 3, s3, o3},
    {BG_UINT64, 0, 2, NULL, o4}, {BG_FLOAT16, 3, 3, s5, o5}, {BG_BOOL, 2, 3, s3, o3},
  };
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    harr *a = ha_new(cases[k].t, cases[k].n, cases[k].s);
    fill_wide(a);
    expect(bg_tn_expand(mk(a), cases[k].on, cases[k].o), ref_expand(a, cases[k].on, cases[k].o), TC_ARITH, NULL,
           "expand %s %s to %s", dn(a->t), hs(a), shs(cases[k].on, cases[k].o));
  }
  finish();
}
END_TEST

static void random_pads(unsigned nd, int64_t (*pads)[2]) {
  for (unsigned d = 0; d < nd; d++) {
    pads[d][0] = irand(0, 3);
    pads[d][1] = irand(0, 3);
  }
}

START_TEST(pad_op) {
  static const enum bg_dtype dts[] = {BG_FLOAT32, BG_INT32, BG_FLOAT16, BG_UINT64, BG_BOOL};
  int64_t pads[BG_MAX_DIMS][2];
  for (unsigned j = 0; j < 5; j++) {
    harr *a = ha_new(dts[j], 3, pool[3]);
    fill_wide(a);
    random_pads(3, pads);
    expect(bg_tn_pad(mk(a), (const int64_t(*)[2])pads), ref_pad(a, (const int64_t(*)[2])pads), TC_ARITH, NULL,
           "pad %s %s by ((%lld,%lld),(%lld,%lld),(%lld,%lld))", dn(a->t), hs(a), (long long)pads[0][0],
           (long long)pads[0][1], (long long)pads[1][0], (long long)pads[1][1], (long long)pads[2][0], (long long)pads[2][1]);
  }
  for (unsigned r = 1; r <= 4; r += 3) {
    harr *a = ha_rand(BG_FLOAT32, r, pool[r], -4, 4);
    random_pads(r, pads);
    expect(bg_tn_pad(mk(a), (const int64_t(*)[2])pads), ref_pad(a, (const int64_t(*)[2])pads), TC_ARITH, NULL,
           "pad float32 %s (random pads, axis 0 by %lld,%lld)", hs(a), (long long)pads[0][0], (long long)pads[0][1]);
  }
  finish();
}
END_TEST

static void random_bounds(const harr *a, int64_t (*b)[2]) {
  for (unsigned d = 0; d < a->nd; d++) {
    b[d][0] = irand(0, a->sh[d] - 1);
    b[d][1] = irand(b[d][0] + 1, a->sh[d]);
  }
}

START_TEST(shrink_op) {
  int64_t b[BG_MAX_DIMS][2];
  static const struct { enum bg_dtype t; unsigned r; } cases[] = {{BG_FLOAT32, 4}, {BG_INT32, 4}, {BG_FLOAT16, 2}, {BG_INT64, 3}};
  for (size_t k = 0; k < 4; k++) {
    harr *a = ha_new(cases[k].t, cases[k].r, pool[cases[k].r]);
    fill_wide(a);
    random_bounds(a, b);
    expect(bg_tn_shrink(mk(a), (const int64_t(*)[2])b), ref_shrink(a, (const int64_t(*)[2])b), TC_ARITH, NULL,
           "shrink %s %s to [%lld,%lld) on axis 0, [%lld,%lld) on axis %u", dn(a->t), hs(a), (long long)b[0][0],
           (long long)b[0][1], (long long)b[a->nd - 1][0], (long long)b[a->nd - 1][1], a->nd - 1);
  }
  finish();
}
END_TEST

START_TEST(flip_op) {
  harr *a = ha_rand(BG_FLOAT32, 3, pool[3], -4, 4);
  for (uint32_t m = 0; m < 8; m++)
    expect(bg_tn_flip(mk(a), m), ref_flip(a, m), TC_ARITH, NULL, "flip float32 %s axes 0x%x", hs(a), m);
  harr *b = ha_new(BG_INT64, 4, pool[4]);
  fill_wide(b);
  expect(bg_tn_flip(mk(b), 0xa), ref_flip(b, 0xa), TC_ARITH, NULL, "flip int64 %s axes 0xa", hs(b));
  harr *c = ha_rand(BG_FLOAT16, 1, pool[1], -4, 4);
  expect(bg_tn_flip(mk(c), 1), ref_flip(c, 1), TC_ARITH, NULL, "flip float16 %s axis 0", hs(c));
  finish();
}
END_TEST

START_TEST(cat_op) {
  /* three rank-3 tensors differing along each axis in turn */
  static const enum bg_dtype dts[] = {BG_FLOAT32, BG_INT32, BG_FLOAT16};
  for (unsigned axis = 0; axis < 3; axis++) {
    for (unsigned j = 0; j < 3; j++) {
      if (j && j != axis) continue;
      harr *parts[3] = {NULL, NULL, NULL};
      bg_tensor *ts[3] = {NULL, NULL, NULL};
      unsigned n = j == 2 ? 2 : 3;
      for (unsigned k = 0; k < n; k++) {
        int64_t sh[3] = {pool[3][0], pool[3][1], pool[3][2]};
        sh[axis] = 1 + (int64_t)((k * 2 + axis) % 5);
        parts[k] = ha_new(dts[j], 3, sh);
        fill_wide(parts[k]);
        ts[k] = mk(parts[k]);
      }
      expect(bg_tn_cat(ts, n, axis), ref_cat(parts, n, axis), TC_ARITH, NULL, "cat %u %s tensors %s %s ... along axis %u",
             n, dn(dts[j]), hs(parts[0]), hs(parts[1]), axis);
    }
  }
  /* rank 1: four pieces; a single piece */
  harr *parts[4] = {NULL, NULL, NULL, NULL};
  bg_tensor *ts[4] = {NULL, NULL, NULL, NULL};
  for (unsigned k = 0; k < 4; k++) {
    const int64_t sh[] = {(int64_t)k * 3 + 1};
    parts[k] = ha_rand(BG_UINT32, 1, sh, 0, 1e9);
    ts[k] = mk(parts[k]);
  }
  expect(bg_tn_cat(ts, 4, 0), ref_cat(parts, 4, 0), TC_ARITH, NULL, "cat uint32 (1) (4) (7) (10) along axis 0");
  expect(bg_tn_cat(ts + 2, 1, 0), ref_cat(parts + 2, 1, 0), TC_ARITH, NULL, "cat of one uint32 (7)");
  finish();
}
END_TEST

START_TEST(contiguous_op) {
  harr *a = ha_rand(BG_FLOAT32, 4, pool[4], -4, 4);
  expect(bg_tn_contiguous(mk(a)), a, TC_ARITH, NULL, "contiguous float32 %s", hs(a));
  static const unsigned order[] = {3, 1, 0, 2};
  expect(bg_tn_contiguous(bg_tn_permute(mk(a), order)), ref_permute(a, order), TC_ARITH, NULL,
         "contiguous(permute float32 %s by (3,1,0,2))", hs(a));
  const int64_t s[] = {1, 6}, o[] = {4, 6};
  harr *b = ha_rand(BG_INT32, 2, s, -9, 9);
  harr *be = ref_expand(b, 2, o);
  bg_tensor *c = bg_tn_contiguous(bg_tn_expand(mk(b), 2, o));
  expect(c, be, TC_ARITH, NULL, "contiguous(expand int32 (1,6) to (4,6))");
  /* the realized contiguous tensor used twice */
  harr *w = ha_new(BG_INT32, 2, o);
  for (int64_t i = 0; i < w->n; i++) ha_set(w, i, svi(2 * ha_get(be, i).i));
  expect(bg_tn_add(c, c), w, TC_ARITH, NULL, "add(c, c) for c = contiguous(expand int32 (1,6) to (4,6))");
  finish();
}
END_TEST

/* A chain of movement ops: permute, shrink, pad, flip, reshape, then an elementwise op. */
START_TEST(movement_chain) {
  harr *a = ha_rand(BG_FLOAT32, 4, pool[4], -4, 4);
  static const unsigned order[] = {1, 3, 0, 2};
  harr *p = ref_permute(a, order);
  int64_t b[BG_MAX_DIMS][2], pads[BG_MAX_DIMS][2];
  random_bounds(p, b);
  harr *s = ref_shrink(p, (const int64_t(*)[2])b);
  random_pads(4, pads);
  harr *pd = ref_pad(s, (const int64_t(*)[2])pads);
  harr *f = ref_flip(pd, 0x6);
  const int64_t flat[] = {f->sh[0] * f->sh[1], -1};
  harr *r = ref_reshape(f, 2, flat);
  harr *w = ha_new(BG_FLOAT32, r->nd, r->sh);
  for (int64_t i = 0; i < w->n; i++) ha_set(w, i, svf(ha_get(r, i).f * 2.0));
  bg_tensor *t = bg_tn_permute(mk(a), order);
  t = bg_tn_shrink(t, (const int64_t(*)[2])b);
  t = bg_tn_pad(t, (const int64_t(*)[2])pads);
  t = bg_tn_flip(t, 0x6);
  t = bg_tn_reshape(t, 2, flat);
  expect(bg_tn_mulc(t, 2.0), w, TC_ARITH, NULL, "mulc(reshape(flip(pad(shrink(permute %s)))))", hs(a));
  finish();
}
END_TEST

/* Scheduling patterns: a reduce consumed through an expand (x - max(x), softmax), two different views
 * of one buffer in one kernel, and several outputs sharing a subgraph realized together. */
START_TEST(fusion_patterns) {
  harr *a = ha_rand(BG_FLOAT32, 3, pool[3], -4, 4);
  const int64_t *sh = a->sh;
  harr *mx = ref_reduce(a, 0x4, true, true, NULL);
  harr *y = ha_new(BG_FLOAT32, 3, sh), *sm = ha_new(BG_FLOAT32, 3, sh);
  for (int64_t i = 0; i < a->n; i++) ha_set(y, i, svf(ha_get(a, i).f - ha_get(mx, i / sh[2]).f));
  for (int64_t r = 0; r < a->n / sh[2]; r++) {
    double den = 0;
    for (int64_t k = 0; k < sh[2]; k++) den += exp(ha_get(y, r * sh[2] + k).f);
    for (int64_t k = 0; k < sh[2]; k++) ha_set(sm, r * sh[2] + k, svf(exp(ha_get(y, r * sh[2] + k).f) / den));
  }
  bg_tensor *x = mk(a);
  bg_tensor *ty = bg_tn_sub(x, bg_tn_max(x, 0x4, true));
  expect(ty, y, TC_ARITH, NULL, "x - max(x, axis 2, keepdim) float32 %s", hs(a));
  bg_tensor *e = bg_tn_exp(bg_tn_sub(x, bg_tn_max(x, 0x4, true)));
  expect(bg_tn_div(e, bg_tn_sum(e, 0x4, true)), sm, TC_TRANS, NULL, "softmax(x, axis 2) float32 %s", hs(a));

  /* permute(b) + flip(b) for a square b: two views of one buffer */
  const int64_t sq[] = {9, 9};
  harr *b = ha_rand(BG_INT32, 2, sq, -1000, 1000);
  static const unsigned tr[] = {1, 0};
  harr *bp = ref_permute(b, tr), *bf = ref_flip(b, 0x1), *w = ha_new(BG_INT32, 2, sq);
  for (int64_t i = 0; i < w->n; i++) ha_set(w, i, svi(ha_get(bp, i).i + ha_get(bf, i).i));
  bg_tensor *tb = mk(b);
  expect(bg_tn_add(bg_tn_permute(tb, tr), bg_tn_flip(tb, 0x1)), w, TC_ARITH, NULL, "permute(b) + flip(b) int32 (9,9)");

  /* two outputs of one subgraph, realized together, then read (and read again) */
  harr *c = ha_rand(BG_FLOAT32, 2, pool[2], -4, 4);
  bg_tensor *tc = bg_tn_mulc(mk(c), 3.0);
  bg_tensor *outs[2] = {bg_tn_addc(tc, 1.0), bg_tn_sum(tc, BG_ALL_AXES, false)};
  int rc = bg_tn_realize(outs, 2);
  expect_true(rc == 0, "realize of two outputs sharing mulc(c, 3): rc %d", rc);
  harr *w1 = ha_new(BG_FLOAT32, 2, c->sh), *c3 = ha_new(BG_FLOAT32, 2, c->sh);
  for (int64_t i = 0; i < c->n; i++) {
    ha_set(c3, i, svf(ha_get(c, i).f * 3.0));
    ha_set(w1, i, svf(ha_get(c3, i).f + 1.0));
  }
  double *scale;
  harr *w2 = ref_reduce(c3, 0x3, false, false, &scale);
  for (int pass = 0; pass < 2; pass++) {
    expect(outs[0], w1, TC_ARITH, NULL, "mulc(c, 3) + 1 after a joint realize (read %d)", pass + 1);
    expect(outs[1], w2, TC_ACC, scale, "sum(mulc(c, 3)) after a joint realize (read %d)", pass + 1);
  }
  finish();
}
END_TEST

/* ---------------- matmul ---------------- */

static harr *ref_matmul(const harr *a, const harr *b, double **scale) {
  int64_t n = a->nd == 1 ? 1 : a->sh[a->nd - 2], k = a->sh[a->nd - 1], m = b->nd == 1 ? 1 : b->sh[1], batch = 1;
  int64_t osh[BG_MAX_DIMS];
  unsigned ond = 0;
  for (unsigned d = 0; d + 2 < a->nd; d++) {
    batch *= a->sh[d];
    osh[ond++] = a->sh[d];
  }
  if (a->nd >= 2) osh[ond++] = n;
  if (b->nd == 2) osh[ond++] = m;
  harr *o = ha_new(a->t, ond, osh);
  double *sabs = talloc((size_t)o->n * sizeof(double));
  enum kind kk = kind_of(a->t);
  for (int64_t bt = 0; bt < batch; bt++)
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < m; j++) {
        double acc = 0, sa = 0;
        uint64_t acci = 0;
        for (int64_t p = 0; p < k; p++) {
          sval x = ha_get(a, (bt * n + i) * k + p), y = ha_get(b, p * m + j);
          if (kk == K_F) {
            double prod = x.f * y.f;
            if (a->t == BG_FLOAT16) prod = h2d(d2h(prod)); /* the product is a float16 op */
            acc += prod;
            sa += fabs(prod);
          } else {
            acci += kk == K_I ? (uint64_t)x.i * (uint64_t)y.i : x.u * y.u;
          }
        }
        int64_t oi = (bt * n + i) * m + j;
        sabs[oi] = sa;
        ha_set(o, oi, kk == K_F ? svf(acc) : svu(acci));
      }
  if (scale) *scale = sabs;
  return o;
}

static void mm_case(enum bg_dtype t, unsigned na, const int64_t *sa, unsigned nb, const int64_t *sb) {
  harr *a = ha_rand(t, na, sa, -2, 2), *b = ha_rand(t, nb, sb, -2, 2);
  if (kind_of(t) != K_F) {
    fill(a, -20, 20);
    fill(b, -20, 20);
  }
  double *scale;
  harr *w = ref_matmul(a, b, &scale);
  expect(bg_tn_matmul(mk(a), mk(b)), w, TC_ACC, scale, "matmul %s %s @ %s", dn(t), hs(a), hs(b));
}

START_TEST(matmul_op) {
  const int64_t s57[] = {5, 7}, s73[] = {7, 3}, s7[] = {7}, s1_17[] = {1, 17}, s17_1[] = {17, 1}, s257[] = {2, 5, 7},
                s3246[] = {3, 2, 4, 6}, s65[] = {6, 5}, s16[] = {16, 16}, s17_16[] = {17, 16}, s16_9[] = {16, 9},
                s46[] = {4, 6}, s63[] = {6, 3};
  mm_case(BG_FLOAT32, 2, s57, 2, s73);
  mm_case(BG_FLOAT32, 2, s1_17, 2, s17_1);
  mm_case(BG_FLOAT32, 2, s17_1, 2, s1_17);
  mm_case(BG_FLOAT32, 2, s16, 2, s16);
  mm_case(BG_FLOAT32, 1, s7, 2, s73);
  mm_case(BG_FLOAT32, 2, s57, 1, s7);
  mm_case(BG_FLOAT32, 1, s7, 1, s7);
  mm_case(BG_FLOAT32, 3, s257, 2, s73);
  mm_case(BG_FLOAT32, 4, s3246, 2, s65);
  mm_case(BG_FLOAT16, 2, s57, 2, s73);
  mm_case(BG_FLOAT16, 2, s17_16, 2, s16_9);
  mm_case(BG_FLOAT16, 1, s7, 2, s73);
  mm_case(BG_INT32, 2, s46, 2, s63);
  /* a non-contiguous right operand: b = permute(bt) */
  const int64_t s37[] = {3, 7};
  harr *a = ha_rand(BG_FLOAT32, 2, s57, -2, 2), *bt = ha_rand(BG_FLOAT32, 2, s37, -2, 2);
  static const unsigned tr[] = {1, 0};
  double *scale;
  harr *w = ref_matmul(a, ref_permute(bt, tr), &scale);
  expect(bg_tn_matmul(mk(a), bg_tn_permute(mk(bt), tr)), w, TC_ACC, scale, "matmul float32 (5,7) @ permute((3,7))");
  finish();
}
END_TEST

/* ---------------- creation ---------------- */

START_TEST(arange_op) {
  static const struct { enum bg_dtype t; double start, stop, step; } cases[] = {
    {BG_FLOAT32, 0, 10, 1}, {BG_FLOAT32, 2, -3, -0.5}, {BG_FLOAT32, 0.5, 3, 0.25},
    {BG_INT32, 3, 20, 4}, {BG_INT64, -5, 5, 1}, {BG_FLOAT16, 0, 8, 0.5},
  };
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    int64_t n = (int64_t)ceil((cases[k].stop - cases[k].start) / cases[k].step);
    harr *w = ha_new(cases[k].t, 1, &n);
    for (int64_t i = 0; i < n; i++)
      ha_set(w, i, conv(svf(cases[k].start + (double)i * cases[k].step), BG_FLOAT32, cases[k].t));
    expect(bg_tn_arange(ctx, cases[k].t, cases[k].start, cases[k].stop, cases[k].step), w, TC_ARITH, NULL,
           "arange %s (%g, %g, %g)", dn(cases[k].t), cases[k].start, cases[k].stop, cases[k].step);
  }
  finish();
}
END_TEST

START_TEST(eye_op) {
  static const struct { enum bg_dtype t; int64_t n; } cases[] = {{BG_FLOAT32, 5}, {BG_INT32, 1}, {BG_FLOAT16, 4}, {BG_FLOAT32, 17}};
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    const int64_t sh[] = {cases[k].n, cases[k].n};
    harr *w = ha_new(cases[k].t, 2, sh);
    for (int64_t i = 0; i < cases[k].n; i++) ha_set(w, i * cases[k].n + i, conv(svi(1), BG_INT64, cases[k].t));
    expect(bg_tn_eye(ctx, cases[k].t, cases[k].n), w, TC_ARITH, NULL, "eye %s %lld", dn(cases[k].t), (long long)cases[k].n);
  }
  finish();
}
END_TEST

START_TEST(full_zeros_ones) {
  static const double vals[NALL7] = {2.5, -1.5, -7, 7, -1099511627776.0, 1099511627779.0, 1};
  for (unsigned j = 0; j < NALL7; j++) {
    enum bg_dtype t = ALL7[j];
    unsigned r = j % 2 ? 0 : 3;
    for (int which = 0; which < 3; which++) {
      double v = which == 0 ? vals[j] : which == 1 ? 0 : 1;
      harr *w = ha_new(t, r, pool[r]);
      for (int64_t i = 0; i < w->n; i++) ha_set(w, i, conv(svf(v), BG_FLOAT32, t));
      bg_tensor *x = which == 0 ? bg_tn_full(ctx, t, r, pool[r], v)
                   : which == 1 ? bg_tn_zeros(ctx, t, r, pool[r])
                                : bg_tn_ones(ctx, t, r, pool[r]);
      expect(x, w, TC_ARITH, NULL, "%s %s %s%s%.17g", which == 0 ? "full" : which == 1 ? "zeros" : "ones", dn(t), hs(w),
             which == 0 ? " value " : " = ", v);
    }
  }
  finish();
}
END_TEST

START_TEST(scalar_and_item) {
  static const struct { enum bg_dtype t; double v; } cases[] = {
    {BG_FLOAT32, 2.0}, {BG_FLOAT32, -0.375}, {BG_INT32, -7}, {BG_UINT64, 1099511627776.0}, {BG_FLOAT16, 0.5}, {BG_BOOL, 1},
  };
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    bg_tensor *t = bg_tn_scalar(ctx, cases[k].t, cases[k].v);
    harr *w = ha_new(cases[k].t, 0, NULL);
    ha_set(w, 0, conv(svf(cases[k].v), BG_FLOAT32, cases[k].t));
    expect(t, w, TC_ARITH, NULL, "scalar %s %g", dn(cases[k].t), cases[k].v);
    double got = -12345;
    int rc = bg_tn_item(t, &got);
    expect_true(rc == 0 && got == cases[k].v, "item() of scalar %s %g: rc %d, got %.17g", dn(cases[k].t), cases[k].v, rc,
                got);
  }
  /* item() of a one-element computed tensor of rank 3 */
  const int64_t sh[] = {1, 1, 1};
  double got = 0;
  int rc = bg_tn_item(bg_tn_addc(bg_tn_full(ctx, BG_FLOAT32, 3, sh, 1.25), 2.0), &got);
  expect_true(rc == 0 && got == 3.25, "item() of full((1,1,1), 1.25) + 2: rc %d, got %.17g", rc, got);
  finish();
}
END_TEST

START_TEST(rand_range_shape) {
  const int64_t sh[] = {3, 17, 5}, big[] = {4096};
  bg_tensor *t = bg_tn_rand(ctx, 3, sh);
  harr *a = fetch(t);
  expect_true(a != NULL && a->t == BG_FLOAT32 && a->nd == 3 && a->n == 255, "rand (3,17,5): float32 of that shape");
  if (a) {
    int64_t out = -1;
    for (int64_t i = 0; i < a->n && out < 0; i++) {
      double v = ha_get(a, i).f;
      if (!(v >= 0.0 && v < 1.0)) out = i;
    }
    expect_true(out < 0, "rand (3,17,5): every value in [0, 1) (first outside: %lld)", (long long)out);
  }
  harr *b = fetch(bg_tn_rand(ctx, 1, big));
  expect_true(b != NULL, "rand (4096) read");
  if (b) {
    double sum = 0, mn = 1, mx = 0;
    for (int64_t i = 0; i < b->n; i++) {
      double v = ha_get(b, i).f;
      sum += v;
      mn = v < mn ? v : mn;
      mx = v > mx ? v : mx;
    }
    expect_true(fabs(sum / 4096 - 0.5) < 0.03 && mn < 0.01 && mx > 0.99 && mx < 1.0,
                "rand (4096): mean %.4f, min %.4f, max %.4f look uniform on [0,1)", sum / 4096, mn, mx);
  }
  harr *c = fetch(bg_tn_rand(ctx, 0, NULL));
  expect_true(c != NULL && c->nd == 0 && ha_get(c, 0).f >= 0 && ha_get(c, 0).f < 1, "rand () is one value in [0,1)");
  finish();
}
END_TEST

static bool same_bytes(const harr *a, const harr *b) {
  return a && b && a->n == b->n && memcmp(a->p, b->p, (size_t)a->n * dsz(a->t)) == 0;
}

START_TEST(rand_seed_determinism) {
  const int64_t sh[] = {7, 9};
  bg_tctx_seed(ctx, 1234);
  harr *a = fetch(bg_tn_rand(ctx, 2, sh));
  harr *a2 = fetch(bg_tn_rand(ctx, 2, sh)); /* the counter advanced: different values */
  bg_tctx_seed(ctx, 1234);
  harr *b = fetch(bg_tn_rand(ctx, 2, sh));
  bg_tctx_seed(ctx, 99);
  harr *c = fetch(bg_tn_rand(ctx, 2, sh));
  expect_true(a && a2 && b && c, "rand reads");
  expect_true(same_bytes(a, b), "seed 1234 twice gives the same rand (7,9)");
  expect_true(a && a2 && !same_bytes(a, a2), "a second rand without reseeding differs");
  expect_true(a && c && !same_bytes(a, c), "seed 99 differs from seed 1234");
  /* another context with the same seed */
  bg_tctx *c2 = NULL;
  int rc = bg_tctx_open(getenv("DEV") ? getenv("DEV") : "CPU", &c2);
  expect_true(rc == 0, "second context opens: %s", rc ? bg_last_error() : "");
  if (rc == 0) {
    bg_tctx_seed(c2, 1234);
    bg_tensor *t = bg_tn_rand(c2, 2, sh);
    harr *d = ha_new(BG_FLOAT32, 2, sh);
    rc = bg_tn_read(t, d->p, (size_t)d->n * 4);
    expect_true(rc >= 0 && same_bytes(a, d), "seed 1234 in another context gives the same rand (7,9)");
    bg_tctx_close(c2);
  }
  finish();
}
END_TEST

/* ---------------- errors ---------------- */

/* The latched error names `op` and mentions each of the numbers. */
static void expect_error(bg_tensor *e, const char *op, const char *what, const char *const *numbers) {
  const char *msg = bg_tctx_error(ctx);
  bool ok = msg && strstr(msg, op);
  for (unsigned i = 0; ok && numbers && numbers[i]; i++) ok = strstr(msg, numbers[i]) != NULL;
  expect_true(ok, "%s: latched error names '%s' and the shapes (message: %s)", what, op, msg ? msg : "(none)");
  char buf[64 * 8];
  int rc = e ? bg_tn_read(e, buf, sizeof(buf)) : -BG_EINVAL;
  expect_true(e != NULL && rc == -BG_EINVAL, "%s: reading the error tensor returns -BG_EINVAL (got %d)", what, rc);
  rc = e ? bg_tn_read(bg_tn_neg(e), buf, sizeof(buf)) : -BG_EINVAL;
  expect_true(rc == -BG_EINVAL, "%s: a later op on it passes the error through (read %d)", what, rc);
  expect_true(bg_tn_realize(&e, 1) == -BG_EINVAL, "%s: realize returns -BG_EINVAL", what);
  bg_tctx_clear_error(ctx);
  expect_true(bg_tctx_error(ctx) == NULL, "%s: clear_error clears it", what);
  /* the context works again */
  const int64_t sh[] = {3};
  const float x[] = {1, 2, 3};
  float y[3] = {0};
  rc = bg_tn_read(bg_tn_addc(bg_tn_from(ctx, BG_FLOAT32, 1, sh, x), 1.0), y, sizeof(y));
  expect_true(rc >= 0 && y[0] == 2 && y[1] == 3 && y[2] == 4, "%s: after clear_error a new computation runs (rc %d)", what, rc);
}

static bg_tensor *t711(void) { const int64_t s[] = {7, 11}; return bg_tn_ones(ctx, BG_FLOAT32, 2, s); }

START_TEST(error_shape_mismatch) {
  const int64_t s[] = {13, 5};
  bg_tensor *good = t711();
  bg_tensor *e = bg_tn_add(good, bg_tn_ones(ctx, BG_FLOAT32, 2, s));
  static const char *const nums[] = {"7", "11", "13", "5", NULL};
  /* A second error keeps the first message, and returns the same error tensor. */
  const int64_t bad[] = {5, 5};
  bg_tensor *e2 = bg_tn_reshape(t711(), 2, bad);
  expect_true(e2 == e, "a second failing op returns the context's error tensor");
  expect_true(bg_tn_mul(e, good) == e, "an op on the error tensor returns the error tensor");
  expect_error(e, "add", "add (7,11) + (13,5)", nums);
  float buf[77];
  expect_true(bg_tn_read(good, buf, sizeof(buf)) >= 0 && buf[76] == 1.0f,
              "a valid tensor made before the error reads after clear_error");
  e = bg_tn_matmul(t711(), t711());
  static const char *const mm[] = {"7", "11", NULL};
  expect_error(e, "matmul", "matmul (7,11) @ (7,11)", mm);
  finish();
}
END_TEST

START_TEST(error_bad_axis) {
  bg_tensor *e = bg_tn_sum(t711(), 1u << 5, false);
  expect_error(e, "sum", "sum (7,11) over axis 5", NULL);
  e = bg_tn_max(t711(), 1u << 2, true);
  expect_error(e, "max", "max (7,11) over axis 2", NULL);
  e = bg_tn_flip(t711(), 1u << 3);
  expect_error(e, "flip", "flip (7,11) axis 3", NULL);
  finish();
}
END_TEST

START_TEST(error_bad_reshape) {
  const int64_t s1[] = {5, 13}, s2[] = {-1, -1}, s3[] = {-1, 5};
  static const char *const n1[] = {"7", "11", "5", "13", NULL};
  expect_error(bg_tn_reshape(t711(), 2, s1), "reshape", "reshape (7,11) to (5,13)", n1);
  expect_error(bg_tn_reshape(t711(), 2, s2), "reshape", "reshape (7,11) to (-1,-1)", NULL);
  expect_error(bg_tn_reshape(t711(), 2, s3), "reshape", "reshape (7,11) to (-1,5)", NULL);
  const int64_t s4[] = {7, 12};
  expect_error(bg_tn_expand(t711(), 2, s4), "expand", "expand (7,11) to (7,12)", NULL);
  const int64_t b[2][2] = {{0, 7}, {3, 20}};
  expect_error(bg_tn_shrink(t711(), b), "shrink", "shrink (7,11) to [3,20) on axis 1", NULL);
  finish();
}
END_TEST

START_TEST(error_bad_permute) {
  static const unsigned dup[] = {0, 0}, oob[] = {2, 0};
  expect_error(bg_tn_permute(t711(), dup), "permute", "permute (7,11) by (0,0)", NULL);
  expect_error(bg_tn_permute(t711(), oob), "permute", "permute (7,11) by (2,0)", NULL);
  finish();
}
END_TEST

START_TEST(error_cat_mismatch) {
  const int64_t s[] = {7, 13}, s1[] = {7};
  bg_tensor *ts[2] = {t711(), bg_tn_ones(ctx, BG_FLOAT32, 2, s)};
  static const char *const nums[] = {"11", "13", NULL};
  expect_error(bg_tn_cat(ts, 2, 0), "cat", "cat (7,11), (7,13) along axis 0", nums);
  bg_tensor *ts2[2] = {t711(), bg_tn_ones(ctx, BG_FLOAT32, 1, s1)};
  expect_error(bg_tn_cat(ts2, 2, 0), "cat", "cat (7,11), (7) (rank mismatch)", NULL);
  bg_tensor *ts3[2] = {t711(), t711()};
  expect_error(bg_tn_cat(ts3, 2, 2), "cat", "cat (7,11) x2 along axis 2", NULL);
  finish();
}
END_TEST

START_TEST(dtype_table) {
  for (unsigned j = 0; j < NALL7; j++) {
    expect_true(bg_dtype_size(ALL7[j]) == dsz(ALL7[j]), "bg_dtype_size(%s) == %zu", dn(ALL7[j]), dsz(ALL7[j]));
    const char *nm = bg_dtype_name(ALL7[j]);
    bool distinct = nm && *nm;
    for (unsigned k = 0; distinct && k < j; k++) distinct = strcmp(nm, bg_dtype_name(ALL7[k])) != 0;
    expect_true(distinct, "bg_dtype_name(%s) is a non-empty name of its own (got %s)", dn(ALL7[j]), nm ? nm : "NULL");
  }
  /* The context names the device it was opened on: DEV's canonical form (the suite runs on any DEV). */
  const char *dev = getenv("DEV") ? getenv("DEV") : "CPU";
  bg_target t;
  char want[64] = "?";
  if (bg_target_parse(dev, &t) == 0) bg_target_format(&t, want, sizeof(want));
  expect_true(strcmp(bg_tctx_device(ctx), want) == 0, "device name %s (got %s)", want, bg_tctx_device(ctx));
  finish();
}
END_TEST

/* ---------------- fixture and suite ---------------- */

static void setup(void) {
  fail_len = 0;
  fail_log[0] = '\0';
  fail_count = case_count = 0;
  rng_seed(base_seed ^ 0x7e57000ull);
  make_pool();
  ctx = NULL;
  /* DEV picks the device (the suite also runs on the emulated AMD GPU); CPU by default. */
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
  tcase_set_timeout(tc, 600);
  suite_add_tcase(s, tc);
  return tc;
}

static Suite *ops_suite(void) {
  Suite *s = suite_create("tensor-ops");
  TCase *tc = tcase(s, "elementwise");
  tcase_add_loop_test(tc, binary_ops, 0, NBINOPS);
  tcase_add_loop_test(tc, unary_ops, 0, NUNOPS);
  tcase_add_test(tc, const_ops);
  tcase_add_test(tc, where_op);
  tcase_add_loop_test(tc, cast_ops, 0, NALL7);
  tcase_add_test(tc, broadcasting);
  tcase_add_test(tc, promotion);
  tc = tcase(s, "reduce");
  tcase_add_loop_test(tc, reduce_subsets, 0, NPOOL);
  tcase_add_test(tc, reduce_dtypes);
  tcase_add_test(tc, sum_half_accumulator);
  tcase_add_test(tc, reduce_views);
  tc = tcase(s, "movement");
  tcase_add_test(tc, reshape_op);
  tcase_add_test(tc, permute_op);
  tcase_add_test(tc, expand_op);
  tcase_add_test(tc, pad_op);
  tcase_add_test(tc, shrink_op);
  tcase_add_test(tc, flip_op);
  tcase_add_test(tc, cat_op);
  tcase_add_test(tc, contiguous_op);
  tcase_add_test(tc, movement_chain);
  tcase_add_test(tc, fusion_patterns);
  tc = tcase(s, "matmul");
  tcase_add_test(tc, matmul_op);
  tc = tcase(s, "creation");
  tcase_add_test(tc, arange_op);
  tcase_add_test(tc, eye_op);
  tcase_add_test(tc, full_zeros_ones);
  tcase_add_test(tc, scalar_and_item);
  tcase_add_test(tc, rand_range_shape);
  tcase_add_test(tc, rand_seed_determinism);
  tcase_add_test(tc, dtype_table);
  tc = tcase(s, "errors");
  tcase_add_test(tc, error_shape_mismatch);
  tcase_add_test(tc, error_bad_axis);
  tcase_add_test(tc, error_bad_reshape);
  tcase_add_test(tc, error_bad_permute);
  tcase_add_test(tc, error_cat_mismatch);
  return s;
}

int main(void) {
  const char *seed = getenv("BG_TEST_SEED");
  if (seed && *seed) base_seed = strtoull(seed, NULL, 0);
  make_pool();
  printf("seed 0x%llx, shape pool:", (unsigned long long)base_seed);
  for (unsigned r = 0; r < NPOOL; r++) printf(" %s", shs(r, pool[r]));
  printf("\n");
  SRunner *sr = srunner_create(ops_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
