/* tests/unit/tensor/shard_fixture.h: meshes for the sharded-tensor suites. SHARD_DEVS lists the devices (comma
 * separated, e.g. "CPU,CPU,CPU" or "MOCKPCI+AMD:0,MOCKPCI+AMD:1"); mesh_of(n) opens a mesh of the first n of them
 * (NULL when fewer are listed: the caller skips that size). Values are compared element by element with the same op
 * on one device. Included once by a suite's .c file. */
#ifndef BAREGPU_TESTS_TENSOR_SHARD_FIXTURE_H
#define BAREGPU_TESTS_TENSOR_SHARD_FIXTURE_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "baregpu/tensor.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

static char devs[8][48];
static unsigned ndevs;

static inline void load_devs(void) {
  const char *s = getenv("SHARD_DEVS");
  if (!s || !*s) s = "CPU,CPU,CPU,CPU";
  ndevs = 0;
  while (*s && ndevs < 8) {
    size_t k = strcspn(s, ",");
    snprintf(devs[ndevs++], sizeof devs[0], "%.*s", (int)k, s);
    s += k + (s[k] == ',');
  }
}

static inline bg_mesh *mesh_of(unsigned n) {
  if (!ndevs) load_devs();
  if (n > ndevs) return NULL;
  const char *names[8];
  for (unsigned i = 0; i < n; i++) names[i] = devs[i];
  bg_mesh *m = NULL;
  ck_assert_msg(bg_mesh_open(names, n, &m) == 0, "mesh of %u: %s", n, bg_last_error());
  return m;
}

static inline void fill(float *v, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
  }
}

/* Element-by-element closeness (different reduction orders: a relative tolerance). */
static inline void expect_close(const float *got, const float *want, size_t n, const char *what) {
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(fabsf(got[i] - want[i]) <= 1e-4f + 1e-4f * fabsf(want[i]), "%s: element %zu is %g, expected %g", what, i,
                  (double)got[i], (double)want[i]);
}

/* Read sharded s and single-device t (same shape) and compare them. */
static inline void expect_same(bg_sharded *s, bg_tensor *t, const char *what) {
  size_t n = (size_t)bg_tn_numel(t);
  float *a = calloc(n ? n : 1, sizeof *a), *b = calloc(n ? n : 1, sizeof *b);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  ck_assert_uint_eq(bg_sh_ndim(s), bg_tn_ndim(t));
  for (unsigned d = 0; d < bg_tn_ndim(t); d++) ck_assert_int_eq(bg_sh_shape(s)[d], bg_tn_shape(t)[d]);
  ck_assert_msg(bg_sh_read(s, a, n * sizeof *a) == 0, "%s: sh_read: %s", what, bg_last_error());
  ck_assert_msg(bg_tn_read(t, b, n * sizeof *b) == 0, "%s: read: %s", what, bg_last_error());
  expect_close(a, b, n, what);
  free(a);
  free(b);
}

#endif
