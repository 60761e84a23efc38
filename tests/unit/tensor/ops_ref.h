/* tests/unit/tensor/ops_ref.h: helpers shared by test_ops_index.c and test_ops_nn.c: a seeded PRNG,
 * uploads of float32 and integer data, reads, comparisons against double-precision reference arrays, index
 * (un)raveling for the reference loops, and the latched-error check. Included once by a suite's .c file (the
 * definitions are static); uses the fixture's context `c`. */
#ifndef BAREGPU_TESTS_TENSOR_OPS_REF_H
#define BAREGPU_TESTS_TENSOR_OPS_REF_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tctx_fixture.h"

static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s; }
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double urand(void) { return (double)(rnd() >> 11) * 0x1.0p-53; }
static int64_t irand(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static int64_t numel_of(unsigned nd, const int64_t *sh) {
  int64_t n = 1;
  for (unsigned i = 0; i < nd; i++) n *= sh[i];
  return n;
}

/* n floats uniform in [-1, 1) (caller frees). */
static float *rand_f(int64_t n) {
  float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  ck_assert(v);
  for (int64_t i = 0; i < n; i++) v[i] = (float)(2 * urand() - 1);
  return v;
}

static bg_tensor *up_f(unsigned nd, const int64_t *sh, const float *v) { return bg_tn_from(c, BG_FLOAT32, nd, sh, v); }

/* Integer data v (as int64) uploaded as dtype t. */
static bg_tensor *up_i(enum bg_dtype t, unsigned nd, const int64_t *sh, const int64_t *v) {
  int64_t n = numel_of(nd, sh);
  unsigned sz = bg_dtype_size(t);
  unsigned char *buf = calloc((size_t)(n ? n : 1), sz);
  ck_assert(buf);
  for (int64_t i = 0; i < n; i++) {
    int8_t a8 = (int8_t)v[i];
    int16_t a16 = (int16_t)v[i];
    int32_t a32 = (int32_t)v[i];
    const void *src = sz == 1 ? (const void *)&a8 : sz == 2 ? (const void *)&a16 : sz == 4 ? (const void *)&a32 : (const void *)&v[i];
    memcpy(buf + (size_t)i * sz, src, sz);
  }
  bg_tensor *r = bg_tn_from(c, t, nd, sh, buf);
  free(buf);
  return r;
}

static void expect_shape(bg_tensor *t, unsigned nd, const int64_t *sh, const char *what) {
  ck_assert_msg(bg_tn_ndim(t) == nd, "%s: rank %u, expected %u (%s)", what, bg_tn_ndim(t), nd,
                bg_tctx_error(c) ? bg_tctx_error(c) : "");
  for (unsigned i = 0; i < nd; i++)
    ck_assert_msg(bg_tn_shape(t)[i] == sh[i], "%s: axis %u is %lld, expected %lld", what, i, (long long)bg_tn_shape(t)[i],
                  (long long)sh[i]);
}

/* t (float32 or cast to it) read into a new array of its numel. */
static float *read_f(bg_tensor *t) {
  if (bg_tn_dtype(t) != BG_FLOAT32) t = bg_tn_cast(t, BG_FLOAT32);
  int64_t n = bg_tn_numel(t);
  float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  ck_assert(v);
  int rc = bg_tn_read(t, v, (size_t)n * sizeof *v);
  ck_assert_msg(rc == 0, "read: %s (%s)", bg_last_error(), bg_tctx_error(c) ? bg_tctx_error(c) : "");
  return v;
}

/* |got - want| <= tol * (1 + |want|) elementwise (NaN never passes); the first miss is reported. */
static void check_close(const char *what, bg_tensor *t, const double *want, int64_t n, double tol) {
  ck_assert_msg(bg_tn_numel(t) == n, "%s: %lld elements, expected %lld (%s)", what, (long long)bg_tn_numel(t), (long long)n,
                bg_tctx_error(c) ? bg_tctx_error(c) : "");
  float *got = read_f(t);
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++)
    if (!(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])))) {
      if (first < 0) first = i;
      bad++;
    }
  double g = first >= 0 ? got[first] : 0;
  free(got);
  ck_assert_msg(!bad, "%s: %lld of %lld elements differ, first at %lld: got %.7g, want %.7g", what, (long long)bad,
                (long long)n, (long long)first, g, first >= 0 ? want[first] : 0);
}

static void unravel(int64_t f, unsigned nd, const int64_t *sh, int64_t *co) {
  for (unsigned i = nd; i-- > 0;) {
    co[i] = f % sh[i];
    f /= sh[i];
  }
}
static int64_t ravel(const int64_t *co, unsigned nd, const int64_t *sh) {
  int64_t f = 0;
  for (unsigned i = 0; i < nd; i++) f = f * sh[i] + co[i];
  return f;
}

/* The context latched an error whose message holds every string of want; cleared afterwards. */
static void expect_error(const char *what, const char *const *want) {
  const char *e = bg_tctx_error(c);
  ck_assert_msg(e != NULL, "%s: no error latched", what);
  for (unsigned i = 0; want[i]; i++) ck_assert_msg(strstr(e, want[i]) != NULL, "%s: error \"%s\" lacks \"%s\"", what, e, want[i]);
  bg_tctx_clear_error(c);
}

#endif
