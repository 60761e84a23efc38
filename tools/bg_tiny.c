/* tools/bg_tiny.c: bg-tiny, the C port of tinygrad's test/test_tiny.py. Every test opens its own tensor context, so one failure cannot leak into the next; a failing
 * test reports what differed and the context's latched error. The last line of output is always
 * "N passed, N failed, N skipped". */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/compile.h"
#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "baregpu/tensor.h"
#include "tools/tiny_mnist.h"
#include "util/half.h"

enum { EXIT_PASS = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

typedef struct tiny_run {
  bg_tctx *c;
  char err[1024];
  bg_tstats ran; /* stats right after the last read that ran kernels (a later item() runs none) */
} tiny_run;

typedef int (*tiny_fn)(tiny_run *r);

/* ---------------- helpers ---------------- */

static int fail(tiny_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(tiny_run *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err, sizeof(r->err), fmt, ap);
  va_end(ap);
  return -1;
}

/* Why the last call failed: the context's latched error, else the thread's last error. */
static const char *why(const tiny_run *r) {
  const char *e = r->c ? bg_tctx_error(r->c) : NULL;
  if (e && *e) return e;
  e = bg_last_error();
  return e && *e ? e : "(no message)";
}

static void fmt_shape(char *buf, size_t cap, unsigned ndim, const int64_t *shape) {
  size_t o = (size_t)snprintf(buf, cap, "(");
  for (unsigned i = 0; i < ndim && o < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? "," : "", (long long)shape[i]);
  if (o < cap) snprintf(buf + o, cap - o, ")");
}

/* Check dtype and shape of t, realize it and read its n elements as doubles into out (allocated). */
static int read_vals(tiny_run *r, bg_tensor *t, enum bg_dtype want, unsigned ndim, const int64_t *shape,
                     double **out) {
  *out = NULL;
  const char *e = bg_tctx_error(r->c);
  if (e) return fail(r, "an op failed: %s", e);
  if (bg_tn_dtype(t) != want)
    return fail(r, "result dtype %s, expected %s", bg_dtype_name(bg_tn_dtype(t)), bg_dtype_name(want));
  const int64_t *sh = bg_tn_shape(t);
  bool same = bg_tn_ndim(t) == ndim;
  for (unsigned i = 0; same && i < ndim; i++) same = sh[i] == shape[i];
  if (!same) {
    char g[128], w[128];
    fmt_shape(g, sizeof(g), bg_tn_ndim(t), sh);
    fmt_shape(w, sizeof(w), ndim, shape);
    return fail(r, "result shape %s, expected %s", g, w);
  }
  int64_t n = 1;
  for (unsigned i = 0; i < ndim; i++) n *= shape[i];
  if (bg_tn_numel(t) != n) return fail(r, "numel %lld, expected %lld", (long long)bg_tn_numel(t), (long long)n);
  size_t esz = bg_dtype_size(want);
  void *raw = malloc((size_t)n * esz + 1);
  double *v = malloc((size_t)n * sizeof(double) + 1);
  if (!raw || !v) {
    free(raw);
    free(v);
    return fail(r, "out of host memory");
  }
  int rc = bg_tn_read(t, raw, (size_t)n * esz);
  if (rc < 0) {
    fail(r, "read: %s: %s", bg_strerror(rc), why(r));
    free(raw);
    free(v);
    return -1;
  }
  bg_tstats st;
  memset(&st, 0, sizeof(st));
  bg_tctx_stats(r->c, &st);
  if (st.last_nkernels) r->ran = st;
  for (int64_t i = 0; i < n; i++) {
    switch (want) {
      case BG_FLOAT32: { float f; memcpy(&f, (char *)raw + i * 4, 4); v[i] = f; break; }
      case BG_FLOAT16: { uint16_t h; memcpy(&h, (char *)raw + i * 2, 2); v[i] = bg_f16_to_f32(h); break; }
      case BG_INT32: { int32_t x; memcpy(&x, (char *)raw + i * 4, 4); v[i] = x; break; }
      default: free(raw); free(v); return fail(r, "internal: no reader for %s", bg_dtype_name(want));
    }
  }
  free(raw);
  *out = v;
  return 0;
}

/* Compare a row-major result against expected values; names the first mismatch with its coordinates. */
static int expect_vals(tiny_run *r, bg_tensor *t, enum bg_dtype dt, unsigned ndim, const int64_t *shape,
                       const double *want) {
  double *got;
  if (read_vals(r, t, dt, ndim, shape, &got) < 0) return -1;
  int64_t n = bg_tn_numel(t);
  for (int64_t i = 0; i < n; i++) {
    if (got[i] == want[i]) continue;
    char at[160];
    size_t o = (size_t)snprintf(at, sizeof(at), "(");
    int64_t rem = i;
    int64_t coord[BG_MAX_DIMS] = {0};
    for (unsigned d = ndim; d-- > 0;) {
      coord[d] = rem % shape[d];
      rem /= shape[d];
    }
    for (unsigned d = 0; d < ndim && o < sizeof(at); d++)
      o += (size_t)snprintf(at + o, sizeof(at) - o, "%s%lld", d ? "," : "", (long long)coord[d]);
    if (o < sizeof(at)) snprintf(at + o, sizeof(at) - o, ")");
    fail(r, "mismatch at %s: %.9g != %.9g", at, got[i], want[i]);
    free(got);
    return -1;
  }
  free(got);
  return 0;
}

static int env_size(const char *name, long dflt, long *out) {
  const char *s = getenv(name);
  *out = dflt;
  if (!s || !*s) return 0;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < 1 || v > (1L << 20)) return -1;
  *out = v;
  return 0;
}

/* ---------------- the tests (test/test_tiny.py) ---------------- */

static int t_const(tiny_run *r) {
  bg_tensor *t = bg_tn_scalar(r->c, BG_FLOAT32, 2.0);
  const double want[] = {2.0};
  if (expect_vals(r, t, BG_FLOAT32, 0, NULL, want) < 0) return -1;
  double v = 0;
  int rc = bg_tn_item(t, &v);
  if (rc < 0) return fail(r, "item: %s: %s", bg_strerror(rc), why(r));
  if (v != 2.0) return fail(r, "item() = %.9g, expected 2", v);
  return 0;
}

static int t_copy(tiny_run *r) {
  const float data[] = {1, 2, 3};
  const int64_t sh[] = {3};
  const double want[] = {1, 2, 3};
  return expect_vals(r, bg_tn_from(r->c, BG_FLOAT32, 1, sh, data), BG_FLOAT32, 1, sh, want);
}

static int t_elu(tiny_run *r) {
  const float data[] = {1, 2, 3, 4};
  const int64_t sh[] = {2, 2}, osh[] = {2};
  const double want[] = {3, 7};
  bg_tensor *t = bg_tn_elu(bg_tn_sum(bg_tn_from(r->c, BG_FLOAT32, 2, sh, data), 1u << 1, false), 1.0);
  return expect_vals(r, t, BG_FLOAT32, 1, osh, want);
}

static int t_plus(tiny_run *r) {
  const float a[] = {1, 2, 3}, b[] = {4, 5, 6};
  const int64_t sh[] = {3};
  const double want[] = {5, 7, 9};
  bg_tensor *t = bg_tn_add(bg_tn_from(r->c, BG_FLOAT32, 1, sh, a), bg_tn_from(r->c, BG_FLOAT32, 1, sh, b));
  return expect_vals(r, t, BG_FLOAT32, 1, sh, want);
}

static int t_plus_int(tiny_run *r) {
  const int32_t a[] = {1, 2, 3}, b[] = {4, 5, 6};
  const int64_t sh[] = {3};
  const double want[] = {5, 7, 9};
  bg_tensor *t = bg_tn_add(bg_tn_from(r->c, BG_INT32, 1, sh, a), bg_tn_from(r->c, BG_INT32, 1, sh, b));
  return expect_vals(r, t, BG_INT32, 1, sh, want);
}

static int t_plus_big(tiny_run *r) {
  const int64_t sh[] = {16};
  double want[16];
  for (int i = 0; i < 16; i++) want[i] = 2;
  bg_tensor *a = bg_tn_contiguous(bg_tn_ones(r->c, BG_FLOAT32, 1, sh));
  bg_tensor *b = bg_tn_contiguous(bg_tn_ones(r->c, BG_FLOAT32, 1, sh));
  return expect_vals(r, bg_tn_add(a, b), BG_FLOAT32, 1, sh, want);
}

static int t_cat(tiny_run *r) {
  const int64_t sh[] = {8}, osh[] = {16};
  double want[16];
  for (int i = 0; i < 16; i++) want[i] = i < 8 ? 1 : 0;
  bg_tensor *parts[2] = {bg_tn_contiguous(bg_tn_ones(r->c, BG_FLOAT32, 1, sh)),
                         bg_tn_contiguous(bg_tn_zeros(r->c, BG_FLOAT32, 1, sh))};
  return expect_vals(r, bg_tn_cat(parts, 2, 0), BG_FLOAT32, 1, osh, want);
}

static int t_sum(tiny_run *r) {
  long n;
  env_size("SUM_N", 256, &n);   /* validated in main */
  const int64_t sh[] = {n};
  bg_tensor *t = bg_tn_sum(bg_tn_contiguous(bg_tn_ones(r->c, BG_FLOAT32, 1, sh)), BG_ALL_AXES, false);
  double want = (double)n;
  if (expect_vals(r, t, BG_FLOAT32, 0, NULL, &want) < 0) return -1;
  double v = 0;
  int rc = bg_tn_item(t, &v);
  if (rc < 0) return fail(r, "item: %s: %s", bg_strerror(rc), why(r));
  if (v != want) return fail(r, "item() = %.9g, expected %ld", v, n);
  return 0;
}

static int t_eye(tiny_run *r) {
  const int64_t sh[] = {3, 3};
  const double want[] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  return expect_vals(r, bg_tn_eye(r->c, BG_FLOAT32, 3), BG_FLOAT32, 2, sh, want);
}

/* A deterministic non-symmetric matrix of small integers in [-4, 4] (exact in float16 and float32). */
static void fill_ints(float *v, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((int)((seed >> 16) % 9u) - 4);
  }
}

/* a(rows, n) @ b(n, m) in dtype dt with non-symmetric integer inputs, against a C reference with double accumulation
 * (tinygrad multiplies ones by eye, which a transposed or swapped operand index also passes). Integer products and
 * their sums are exact at the default sizes, so the result must be too; only a GEMM_N large enough for partial sums
 * to round gets the usual (n+1) u sum|a||b| bound. */
static int matmul_check(tiny_run *r, enum bg_dtype dt, int64_t rows, int64_t n, int64_t m) {
  const int64_t ash[] = {rows, n}, bsh[] = {n, m}, osh[] = {rows, m};
  float *a = malloc((size_t)(rows * n) * sizeof(float)), *b = malloc((size_t)(n * m) * sizeof(float));
  uint16_t *ah = malloc((size_t)(rows * n) * 2), *bh = malloc((size_t)(n * m) * 2);
  double *want = malloc((size_t)(rows * m) * sizeof(double)), *bound = malloc((size_t)(rows * m) * sizeof(double));
  double *got = NULL;
  int rc = -1;
  if (!a || !b || !ah || !bh || !want || !bound) {
    fail(r, "out of host memory");
    goto out;
  }
  fill_ints(a, rows * n, 0x1234u);
  fill_ints(b, n * m, 0xBEEFu);
  double u = dt == BG_FLOAT16 ? ldexp(1, -11) : ldexp(1, -24); /* unit roundoff */
  double exact = dt == BG_FLOAT16 ? 2048.0 : 16777216.0;        /* integers up to here are exact */
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < m; j++) {
      double s = 0, sa = 0;
      for (int64_t k = 0; k < n; k++) {
        s += (double)a[i * n + k] * b[k * m + j];
        sa += fabs((double)a[i * n + k] * b[k * m + j]);
      }
      want[i * m + j] = s;
      /* every partial sum is an integer of magnitude <= sa: exact while sa fits the significand */
      bound[i * m + j] = sa <= exact ? 0.0 : (double)(n + 1) * u * sa;
    }
  const void *ad = a, *bd = b;
  if (dt == BG_FLOAT16) {
    for (int64_t i = 0; i < rows * n; i++) ah[i] = bg_f32_to_f16(a[i]);
    for (int64_t i = 0; i < n * m; i++) bh[i] = bg_f32_to_f16(b[i]);
    ad = ah, bd = bh;
  }
  bg_tensor *ta = bg_tn_from(r->c, dt, 2, ash, ad), *tb = bg_tn_from(r->c, dt, 2, bsh, bd);
  if (read_vals(r, bg_tn_matmul(ta, tb), dt, 2, osh, &got) < 0) goto out;
  rc = 0;
  for (int64_t i = 0; i < rows * m && rc == 0; i++)
    if (!(fabs(got[i] - want[i]) <= bound[i]))
      rc = fail(r, "mismatch at (%lld,%lld): %.9g != %.9g (reference with double accumulation, bound %.3g)",
                (long long)(i / m), (long long)(i % m), got[i], want[i], bound[i]);
out:
  free(a);
  free(b);
  free(ah);
  free(bh);
  free(want);
  free(bound);
  free(got);
  return rc;
}

static int t_gemm(tiny_run *r) {
  long n;
  env_size("GEMM_N", 64, &n);
  return matmul_check(r, BG_FLOAT32, n, n, n);
}

static int t_hgemm(tiny_run *r) {
  long n;
  env_size("GEMM_N", 64, &n);
  return matmul_check(r, BG_FLOAT16, n, n, n);
}

static int t_gemv(tiny_run *r) {
  long n;
  env_size("GEMV_N", 64, &n);
  return matmul_check(r, BG_FLOAT32, 1, n, n);
}

/* n uniform floats from a fresh bg_tn_rand of the context (seeded when seed != 0). */
static int rand_vals(tiny_run *r, uint64_t seed, int64_t n, double **v) {
  if (seed) bg_tctx_seed(r->c, seed);
  const int64_t sh[] = {n};
  return read_vals(r, bg_tn_rand(r->c, 1, sh), BG_FLOAT32, 1, sh, v);
}

/* How many of a[0..n) equal b at the same index. */
static int64_t same_at(const double *a, const double *b, int64_t n) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) k += a[i] == b[i];
  return k;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Distribution checks on n = 4096 samples of U[0,1): every bound is more than 5 standard deviations wide, so a
 * correct generator passes (the seeds are fixed, so the outcome is also deterministic), while constant, all-zero,
 * half-range, repeating or correlated output fails. sd of the mean sqrt(1/12/n) = 0.0045; of the variance
 * sqrt((1/80 - 1/144)/n) = 0.0012; of a 16-bin count sqrt(n/16 * 15/16) = 15.5; of the mean lag-1 product
 * sqrt((1/9 - 1/16 + 2 (1/12 - 1/16))/n) = 0.0047 (neighbouring products share a factor). */
static int rand_distribution(tiny_run *r, const double *v, int64_t n) {
  double mean = 0, var = 0, lag = 0;
  int64_t bins[16] = {0};
  for (int64_t i = 0; i < n; i++) {
    if (!(v[i] >= 0.0 && v[i] < 1.0)) return fail(r, "value %lld is %.9g, not in [0, 1)", (long long)i, v[i]);
    mean += v[i];
    bins[(int)(v[i] * 16)]++;
    if (i + 1 < n) lag += v[i] * v[i + 1];
  }
  mean /= (double)n;
  lag /= (double)(n - 1);
  for (int64_t i = 0; i < n; i++) var += (v[i] - mean) * (v[i] - mean);
  var /= (double)(n - 1);
  if (fabs(mean - 0.5) > 0.025) return fail(r, "mean of %lld values %.5f, expected 0.5 +- 0.025", (long long)n, mean);
  if (fabs(var - 1.0 / 12) > 0.008)
    return fail(r, "variance of %lld values %.5f, expected 1/12 = 0.08333 +- 0.008", (long long)n, var);
  for (int k = 0; k < 16; k++)
    if (llabs(bins[k] - n / 16) > 90)
      return fail(r, "%lld of %lld values in [%g, %g), expected %lld +- 90", (long long)bins[k], (long long)n, k / 16.0,
                  (k + 1) / 16.0, (long long)(n / 16));
  if (fabs(lag - 0.25) > 0.025)
    return fail(r, "mean of v[i] * v[i+1] %.5f, expected 0.25 +- 0.025 (independent values)", lag);
  double *s = malloc((size_t)n * sizeof(double));
  if (!s) return fail(r, "out of host memory");
  memcpy(s, v, (size_t)n * sizeof(double));
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  int64_t dup = 0;
  for (int64_t i = 1; i < n; i++) dup += s[i] == s[i - 1];
  free(s);
  /* float32 in [0,1) from 23+ random bits: about n^2 / 2^24 = 1 repeat expected */
  if (dup > 16) return fail(r, "%lld of %lld values repeat an earlier one, expected about 1", (long long)dup, (long long)n);
  return 0;
}

/* tinygrad's test: rand(10) in [0, 1). Then the generator itself: the distribution of 4096 values, a second draw that
 * differs, a different seed that differs, and the same seed that repeats the values exactly. */
static int t_random(tiny_run *r) {
  enum { N = 4096 };
  double *v = NULL, *w = NULL, *x = NULL, *y = NULL;
  int rc = rand_vals(r, 0, 10, &v);
  for (int i = 0; rc == 0 && i < 10; i++)
    if (!(v[i] >= 0.0 && v[i] < 1.0)) rc = fail(r, "value %d is %.9g, not in [0, 1)", i, v[i]);
  free(v);
  v = NULL;
  if (rc == 0) rc = rand_vals(r, 1234, N, &v);
  if (rc == 0) rc = rand_distribution(r, v, N);
  if (rc == 0) rc = rand_vals(r, 0, N, &w); /* the next draw continues the counter */
  if (rc == 0 && same_at(v, w, N) > 16)
    rc = fail(r, "two draws after one seed agree at %lld of %d indices", (long long)same_at(v, w, N), N);
  if (rc == 0) rc = rand_vals(r, 4321, N, &x);
  if (rc == 0 && same_at(v, x, N) > 16)
    rc = fail(r, "seeds 1234 and 4321 agree at %lld of %d indices", (long long)same_at(v, x, N), N);
  if (rc == 0) rc = rand_vals(r, 1234, N, &y);
  if (rc == 0 && same_at(v, y, N) != N)
    rc = fail(r, "seed 1234 twice: the draws differ at %lld of %d indices", (long long)(N - same_at(v, y, N)), N);
  free(v);
  free(w);
  free(x);
  free(y);
  return rc;
}

/* tinygrad's TinyJit test: fxn(a, b) = a + b on fresh random int lists, three calls; the function
 * runs twice (plain call, capture) and the third call replays. */
static int jit_add(void *user, bg_tensor *const *in, unsigned nin, bg_tensor **out, unsigned nout) {
  (void)nin;
  (void)nout;
  (*(int *)user)++;
  out[0] = bg_tn_add(in[0], in[1]);
  return 0;
}

static int t_jit(tiny_run *r) {
  int cnt = 0, rc = 0;
  bg_jit *j;
  if (bg_jit_new(r->c, jit_add, &cnt, 1, &j) < 0) return fail(r, "jit: %s", why(r));
  uint32_t seed = 0;
  const int64_t sh[] = {10};
  for (int call = 0; call < 3 && !rc; call++) {
    int32_t la[10], lb[10];
    double want[10];
    for (int i = 0; i < 10; i++) {
      seed = seed * 1664525u + 1013904223u;
      la[i] = (int32_t)((seed >> 8) % 100001u);
      seed = seed * 1664525u + 1013904223u;
      lb[i] = (int32_t)((seed >> 8) % 100001u);
      want[i] = (double)la[i] + lb[i];
    }
    bg_tensor *in[2] = {bg_tn_from(r->c, BG_INT32, 1, sh, la), bg_tn_from(r->c, BG_INT32, 1, sh, lb)}, *out = NULL;
    if (bg_jit_call(j, in, 2, &out) < 0) rc = fail(r, "jit call %d: %s", call + 1, why(r));
    else if (expect_vals(r, out, BG_INT32, 1, sh, want) < 0) rc = -1;
  }
  bg_jit_stats js;
  bg_jit_get_stats(j, &js);
  bg_jit_free(j);
  if (rc) return rc;
  if (cnt != 2) return fail(r, "the function ran %d times, expected 2 (call, capture)", cnt);
  if (js.replays != 1 || js.nkernels != 1)
    return fail(r, "jit: %lu replays of %u kernels, expected 1 of 1", js.replays, js.nkernels);
  return 0;
}

/* tinygrad's test_beam: test_plus with BEAM=1 and IGNORE_BEAM_CACHE=1 (a fresh search); then once more
 * in a new context without IGNORE_BEAM_CACHE: the cached choice is used, no candidate is compiled. */
static int t_beam(tiny_run *r) {
  char *old_beam = getenv("BEAM") ? strdup(getenv("BEAM")) : NULL;
  char *old_ign = getenv("IGNORE_BEAM_CACHE") ? strdup(getenv("IGNORE_BEAM_CACHE")) : NULL;
  bg_beam_stats b0, b1, b2;
  bg_beam_get_stats(&b0);
  setenv("BEAM", "1", 1);
  setenv("IGNORE_BEAM_CACHE", "1", 1);
  int rc = t_plus(r);
  bg_beam_get_stats(&b1);
  unsetenv("IGNORE_BEAM_CACHE");
  bg_tctx *c2 = NULL;
  if (!rc && bg_tctx_open(bg_tctx_device(r->c), &c2) < 0) rc = fail(r, "open a second context: %s", bg_last_error());
  if (!rc) {
    tiny_run r2 = *r;
    r2.c = c2;
    if (t_plus(&r2) < 0) rc = fail(r, "second run: %s", r2.err);
  }
  bg_beam_get_stats(&b2);
  bg_tctx_close(c2);
  if (old_beam) setenv("BEAM", old_beam, 1);
  else unsetenv("BEAM");
  if (old_ign) setenv("IGNORE_BEAM_CACHE", old_ign, 1);
  free(old_beam);
  free(old_ign);
  if (rc) return rc;
  if (b1.searches != b0.searches + 1 || b1.compiles <= b0.compiles)
    return fail(r, "BEAM=1: %lu searches, %lu candidate compiles, expected 1 and some", b1.searches - b0.searches,
                b1.compiles - b0.compiles);
  if (b1.rejected != b0.rejected) return fail(r, "BEAM=1: %lu candidates differed from the unoptimized kernel", b1.rejected - b0.rejected);
  if (b2.cache_hits != b1.cache_hits + 1 || b2.compiles != b1.compiles || b2.searches != b1.searches)
    return fail(r, "second BEAM=1 run: %lu cache hits, %lu searches, %lu candidate compiles; expected 1, 0, 0",
                b2.cache_hits - b1.cache_hits, b2.searches - b1.searches, b2.compiles - b1.compiles);
  return 0;
}

/* ones(10).contiguous()[:i] + 1 for i bound to 2 and 5: one kernel (E_i) compiled for both bindings. */
static int t_symbolic(tiny_run *r) {
  int i = bg_tvar_new(r->c, "i", 1, 10);
  if (i < 0) return fail(r, "variable: %s", why(r));
  const int64_t sh[] = {10};
  bg_tensor *ones = bg_tn_contiguous(bg_tn_ones(r->c, BG_FLOAT32, 1, sh));
  const int64_t sizes[] = {2, 5};
  for (int k = 0; k < 2; k++) {
    int64_t s = sizes[k], tok;
    if (bg_tvar_bind(r->c, i, s, &tok) < 0) return fail(r, "bind: %s", why(r));
    const int64_t b[1][2] = {{0, tok}}, cb[1][2] = {{0, s}}, osh[] = {s};
    bg_tensor *ret = bg_tn_addc(bg_tn_shrink(ones, b), 1);
    const double want[5] = {2, 2, 2, 2, 2};
    if (expect_vals(r, bg_tn_shrink(bg_tn_contiguous(ret), cb), BG_FLOAT32, 1, osh, want) < 0) return -1;
  }
  bg_tstats st;
  bg_tctx_stats(r->c, &st);
  if (st.kernels_run != 5 || st.kernels_compiled != 4)
    return fail(r, "%lu kernels run, %lu compiled; expected 5 and 4 (E_10, E_i twice, E_2, E_5)", st.kernels_run,
                st.kernels_compiled);
  return 0;
}

/* ones(10).contiguous()[:i].sum() for i bound to 2 and 5: one reduce kernel (r_i) for both. */
static int t_symbolic_reduce(tiny_run *r) {
  int i = bg_tvar_new(r->c, "i", 1, 10);
  if (i < 0) return fail(r, "variable: %s", why(r));
  const int64_t sh[] = {10};
  bg_tensor *ones = bg_tn_contiguous(bg_tn_ones(r->c, BG_FLOAT32, 1, sh));
  const int64_t sizes[] = {2, 5};
  for (int k = 0; k < 2; k++) {
    int64_t tok;
    if (bg_tvar_bind(r->c, i, sizes[k], &tok) < 0) return fail(r, "bind: %s", why(r));
    const int64_t b[1][2] = {{0, tok}};
    double v = 0;
    int rc = bg_tn_item(bg_tn_sum(bg_tn_shrink(ones, b), BG_ALL_AXES, false), &v);
    if (rc < 0) return fail(r, "item: %s: %s", bg_strerror(rc), why(r));
    if (v != (double)sizes[k]) return fail(r, "sum of ones[:%lld] = %.9g, expected %lld", (long long)sizes[k], v, (long long)sizes[k]);
  }
  bg_tstats st;
  bg_tctx_stats(r->c, &st);
  if (st.kernels_run != 3 || st.kernels_compiled != 2)
    return fail(r, "%lu kernels run, %lu compiled; expected 3 and 2 (E_10, r_i twice)", st.kernels_run, st.kernels_compiled);
  return 0;
}

/* The model tests live in tiny_mnist.c (model, checks and the C reference layers). */
static int t_mnist(tiny_run *r) { return tiny_mnist(r->c, r->err, sizeof(r->err)); }
static int t_mnist_backward(tiny_run *r) { return tiny_mnist_backward(r->c, r->err, sizeof(r->err)); }

/* In tinygrad's order. A test with `skip` set is reported as skipped with that reason. */
static const struct tiny_test {
  const char *name;
  tiny_fn fn;
  const char *skip;
} tests[] = {
  {"const", t_const, NULL},
  {"copy", t_copy, NULL},
  {"elu", t_elu, NULL},
  {"plus", t_plus, NULL},
  {"plus_int", t_plus_int, NULL},
  {"plus_big", t_plus_big, NULL},
  {"cat", t_cat, NULL},
  {"sum", t_sum, NULL},
  {"eye", t_eye, NULL},
  {"gemm", t_gemm, NULL},
  {"hgemm", t_hgemm, NULL},
  {"gemv", t_gemv, NULL},
  {"random", t_random, NULL},
  {"jit", t_jit, NULL},
  {"beam", t_beam, NULL},
  {"symbolic", t_symbolic, NULL},
  {"symbolic_reduce", t_symbolic_reduce, NULL},
  {"mnist", t_mnist, NULL},
  {"mnist_backward", t_mnist_backward, NULL},
  {"image", NULL, "image dtypes need the CL device (skipped in tinygrad too)"},
  {"beam_image", NULL, "image dtypes need the CL device (skipped in tinygrad too)"},
};
#define NTESTS (sizeof(tests) / sizeof(tests[0]))

static const struct tiny_test *find_test(const char *name) {
  if (strncmp(name, "test_", 5) == 0) name += 5;
  for (size_t i = 0; i < NTESTS; i++)
    if (strcmp(tests[i].name, name) == 0) return &tests[i];
  return NULL;
}

static void test_names(FILE *f) {
  for (size_t i = 0; i < NTESTS; i++) fprintf(f, "%s%s", i ? " " : "", tests[i].name);
}

/* -v: "  kernels: E_4_4 E_4_4 (3 run, 1 compiled, 2 copies in, 1 out)": the names of the last realize
 * that ran kernels (`ran`), the counters of the whole test (`st`). */
static void print_stats(const bg_tstats *st, const bg_tstats *ran) {
  const bg_tstats *k = ran->last_nkernels ? ran : st;
  unsigned n = k->last_nkernels;
  if (n > 32) n = 32;
  printf("  kernels:");
  for (unsigned i = 0; i < n; i++) printf(" %.64s", k->last_kernels[i]);
  if (k->last_nkernels > n) printf(" (+%u more)", k->last_nkernels - n);
  if (k->last_nkernels == 0) printf(" (none)");
  printf(" (%lu run, %lu compiled, %lu copies in, %lu out)\n", st->kernels_run, st->kernels_compiled, st->copies_in,
         st->copies_out);
}

/* Run one test in a fresh context. Returns 0 pass, 1 fail. */
static int run_one(const struct tiny_test *t, const char *dev, bool verbose) {
  tiny_run r;
  memset(&r, 0, sizeof(r));
  int rc = bg_tctx_open(dev, &r.c);
  if (rc < 0 || !r.c) {
    printf("FAIL %s: open %s: %s: %s\n", t->name, dev ? dev : "(default device)", bg_strerror(rc),
           bg_last_error());
    fflush(stdout);
    return 1;
  }
  bool ok = t->fn(&r) == 0;
  bg_tstats st;
  memset(&st, 0, sizeof(st));
  bg_tctx_stats(r.c, &st);
  if (ok) {
    printf("PASS %s (%lu kernel%s)\n", t->name, st.kernels_run, st.kernels_run == 1 ? "" : "s");
  } else {
    const char *ce = bg_tctx_error(r.c);
    if (ce && *ce && !strstr(r.err, ce)) printf("FAIL %s: %s; context error: %s\n", t->name, r.err, ce);
    else printf("FAIL %s: %s\n", t->name, r.err);
  }
  if (verbose) print_stats(&st, &r.ran);
  fflush(stdout);
  bg_tctx_close(r.c);
  return ok ? 0 : 1;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: bg-tiny [--dev DEV] [-v] [TEST...]\n"
          "\nRuns the C port of tinygrad's test/test_tiny.py (all tests when none is named), one\n"
          "tensor context per test, and ends with one line \"N passed, N failed, N skipped\".\n"
          "\noptions:\n"
          "  --dev DEV   device, DEV=[IFACE[:INDICES]+]KIND[:INDEX] (default: the DEV variable, else\n"
          "              the first GPU, else CPU)\n"
          "  -v          print the kernel statistics and the kernel names of each test's last realize\n"
          "  -h, --help  show this help\n"
          "\ntests: ");
  test_names(f);
  fprintf(f,
          "\n\nenvironment:\n"
          "  SUM_N (256), GEMM_N (64), GEMV_N (64)  sizes of the sum, gemm/hgemm and gemv tests\n"
          "  BG_CACHE_DIR  kernel cache directory; BG_DEBUG 0..4 logs to stderr\n"
          "\nexit status: 0 all ran tests passed, 1 a test failed or the device did not open, 2 usage error\n"
          "(including a --dev or DEV that does not parse or names a driver this build lacks)\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("bg-tiny: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("; see bg-tiny --help\n", stderr);
  return EXIT_USAGE;
}

/* Open the device once before any test: a DEV that does not parse or names a kind or interface this build lacks
 * (bg_dev_open: -BG_EINVAL) is a usage error, any other failure to open it one failure; either way one message
 * instead of a FAIL per test. -1 when the device opened. */
static int check_device(const char *dev) {
  const char *d = dev ? dev : getenv("DEV");
  bg_dev *probe;
  int r = bg_dev_open(dev, &probe);
  if (r == 0) {
    bg_dev_close(probe);
    return -1;
  }
  if (r == -BG_EINVAL) {
    fprintf(stderr, "bg-tiny: %s%s\n", dev ? "--dev: " : "", bg_last_error()); /* the message names DEV=value */
    return EXIT_USAGE;
  }
  fprintf(stderr, "bg-tiny: cannot open %s: %s: %s\n", d && *d ? d : "the default device", bg_strerror(r),
          bg_last_error());
  return EXIT_FAIL;
}

int main(int argc, char **argv) {
  const char *dev = NULL;
  bool verbose = false;
  const struct tiny_test **sel = calloc((size_t)argc + NTESTS, sizeof(*sel)); /* names or all */
  size_t nsel = 0;
  if (!sel) return EXIT_FAIL;
  int rc = -1;
  for (int i = 1; i < argc && rc < 0; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      rc = EXIT_PASS;
    } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
      verbose = true;
    } else if (strcmp(a, "--dev") == 0 || strncmp(a, "--dev=", 6) == 0) {
      if (dev) rc = usage_error("--dev given twice ('%s' and '%s')", dev, a);
      else if (a[5] == '=') dev = a + 6;
      else if (i + 1 < argc) dev = argv[++i];
      else rc = usage_error("--dev needs a value");
    } else if (a[0] == '-' && a[1] != '\0') {
      rc = usage_error("unknown option '%s'", a);
    } else {
      const struct tiny_test *t = find_test(a);
      if (!t) {
        fprintf(stderr, "bg-tiny: unknown test '%s'; valid tests: ", a);
        test_names(stderr);
        fputc('\n', stderr);
        rc = EXIT_USAGE;
      } else {
        sel[nsel++] = t;
      }
    }
  }
  if (rc < 0) {
    static const char *const sizes[] = {"SUM_N", "GEMM_N", "GEMV_N"};
    for (size_t i = 0; i < 3 && rc < 0; i++) {
      long v;
      if (env_size(sizes[i], 1, &v) < 0)
        rc = usage_error("%s='%s' is not a size (an integer from 1 to %ld)", sizes[i], getenv(sizes[i]), 1L << 20);
    }
  }
  if (rc < 0) rc = check_device(dev);
  if (rc >= 0) {
    free(sel);
    return rc;
  }
  if (nsel == 0)
    for (size_t i = 0; i < NTESTS; i++) sel[nsel++] = &tests[i];
  unsigned passed = 0, failed = 0, skipped = 0;
  for (size_t i = 0; i < nsel; i++) {
    const struct tiny_test *t = sel[i];
    if (t->skip) {
      printf("SKIP %s: %s\n", t->name, t->skip);
      fflush(stdout);
      skipped++;
    } else if (run_one(t, dev, verbose) == 0) {
      passed++;
    } else {
      failed++;
    }
  }
  free(sel);
  printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);
  return failed ? EXIT_FAIL : EXIT_PASS;
}
