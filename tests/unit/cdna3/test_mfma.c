/* tests/unit/cdna3/test_mfma.c: the MFMA ops against a C reference with non-trivial matrices, in the CDNA3 ISA
 * guide's operand layout (AMD's matrix instruction calculator prints the same: for 16x16x16, A[i][k] in lane
 * i + 16 * (k / 4), item k % 4; B[k][j] in lane j + 16 * (k / 4); D[i][j] in lane j + 16 * (i / 4), item i % 4;
 * for 32x32x8, D[i][j] in lane j + 32 * ((i / 4) % 2), item 4 * (i / 8) + i % 4), AGPR operands, the strictness
 * on broadcasts, and GEMM kernels written with llvm.amdgcn.mfma.f32.16x16x16f16 / .16x16x16bf16.1k. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

static uint32_t seed = 777;
static float rnd(void) {
  seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
  return (float)(seed % 2001) / 250.0f - 4.0f;  /* -4..4 in steps exact as half */
}
static uint16_t h_of(float f) { _Float16 h = (_Float16)f; uint16_t u; memcpy(&u, &h, 2); return u; }
static uint16_t bf_of(float f) { uint32_t u; memcpy(&u, &f, 4); return (uint16_t)(u >> 16); }  /* exact: few bits */
static float f_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static float h_val(uint16_t u) { _Float16 h; memcpy(&h, &u, 2); return (float)h; }

/* Put A (m x k) and B (k x m) into registers ra/rb (two each) of physical file w per the layout; k = 256 / m. */
static void place(uint32_t (*v)[64], unsigned ra, unsigned rb, unsigned m, const uint16_t *a, const uint16_t *b) {
  unsigned kk = 256 / m;
  for (unsigned l = 0; l < 64; l++)
    for (unsigned j = 0; j < 4; j++) {
      unsigned k = 4 * (l / m) + j, sh = 16 * (j & 1);
      v[ra + j / 2][l] = (v[ra + j / 2][l] & ~(0xffffu << sh)) | (uint32_t)a[(l % m) * kk + k] << sh;
      v[rb + j / 2][l] = (v[rb + j / 2][l] & ~(0xffffu << sh)) | (uint32_t)b[k * m + l % m] << sh;
    }
}
static unsigned d_lane(unsigned m, unsigned i, unsigned j) { return m == 16 ? j + 16 * (i / 4) : j + 32 * ((i / 4) % 2); }
static unsigned d_item(unsigned m, unsigned i) { return m == 16 ? i % 4 : 4 * (i / 8) + i % 4; }

START_TEST(mfma16_agpr) {
  gpu g;
  gpu_init(&g);
  wave_run *r = wave_new(&g, "mfma16");
  uint16_t a[256], b[256];
  float fa[256], fb[256], c[16][16];
  for (int i = 0; i < 256; i++) fa[i] = rnd(), fb[i] = rnd(), a[i] = h_of(fa[i]), b[i] = h_of(fb[i]);
  place(r->w.v, 0, 2, 16, a, b);
  for (unsigned i = 0; i < 16; i++)
    for (unsigned j = 0; j < 16; j++) {
      c[i][j] = rnd();
      memcpy(&agpr(r, 4 + d_item(16, i))[d_lane(16, i, j)], &c[i][j], 4);
    }
  ck_assert_msg(wave_go(r) == 0, "%s", r->rep.msg);
  for (unsigned i = 0; i < 16; i++)
    for (unsigned j = 0; j < 16; j++) {
      double want = c[i][j];
      for (unsigned k = 0; k < 16; k++) want += (double)(float)(_Float16)fa[i * 16 + k] * (float)(_Float16)fb[k * 16 + j];
      float got = f_of(agpr(r, d_item(16, i))[d_lane(16, i, j)]);
      ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "D[%u][%u] = %g, want %g", i, j, (double)got, want);
    }
  ck_assert_uint_eq(r->c.st.wmma_insts, 1);
  free(r);
  gpu_free(&g);
}
END_TEST

START_TEST(mfma16_bf16) {
  gpu g;
  gpu_init(&g);
  wave_run *r = wave_new(&g, "mfma16_bf16");
  uint16_t a[256], b[256];
  for (int i = 0; i < 256; i++) a[i] = bf_of(rnd()), b[i] = bf_of(rnd());
  place(r->w.v, 0, 2, 16, a, b);
  ck_assert_msg(wave_go(r) == 0, "%s", r->rep.msg);
  for (unsigned i = 0; i < 16; i++)
    for (unsigned j = 0; j < 16; j++) {
      double want = 0;
      for (unsigned k = 0; k < 16; k++) want += (double)f_of((uint32_t)a[i * 16 + k] << 16) * f_of((uint32_t)b[k * 16 + j] << 16);
      float got = f_of(r->w.v[4 + d_item(16, i)][d_lane(16, i, j)]);
      ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "D[%u][%u] = %g, want %g", i, j, (double)got, want);
    }
  free(r);
  gpu_free(&g);
}
END_TEST

START_TEST(mfma32) {
  gpu g;
  gpu_init(&g);
  wave_run *r = wave_new(&g, "mfma32");
  uint16_t a[256], b[256];
  float fa[256], fb[256];
  for (int i = 0; i < 256; i++) fa[i] = rnd(), fb[i] = rnd(), a[i] = h_of(fa[i]), b[i] = h_of(fb[i]);
  place(r->w.v, 16, 18, 32, a, b);
  for (unsigned i = 0; i < 16; i++)
    for (unsigned l = 0; l < 64; l++) r->w.v[i][l] = 0x3f800000u;  /* C = 1 */
  ck_assert_msg(wave_go(r) == 0, "%s", r->rep.msg);
  for (unsigned i = 0; i < 32; i++)
    for (unsigned j = 0; j < 32; j++) {
      double want = 1;
      for (unsigned k = 0; k < 8; k++) want += (double)(float)(_Float16)fa[i * 8 + k] * (float)(_Float16)fb[k * 32 + j];
      float got = f_of(r->w.v[d_item(32, i)][d_lane(32, i, j)]);
      ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "D[%u][%u] = %g, want %g", i, j, (double)got, want);
    }
  free(r);
  gpu_free(&g);
}
END_TEST

START_TEST(mfma32_bf16) {
  gpu g;
  gpu_init(&g);
  wave_run *r = wave_new(&g, "mfma32_bf16");
  uint16_t a[256], b[256];
  for (int i = 0; i < 256; i++) a[i] = bf_of(rnd()), b[i] = bf_of(rnd());
  place(r->w.v, 16, 18, 32, a, b);
  ck_assert_msg(wave_go(r) == 0, "%s", r->rep.msg);
  for (unsigned i = 0; i < 32; i++)
    for (unsigned j = 0; j < 32; j++) {
      double want = 0;
      for (unsigned k = 0; k < 8; k++) want += (double)f_of((uint32_t)a[i * 8 + k] << 16) * f_of((uint32_t)b[k * 32 + j] << 16);
      float got = f_of(agpr(r, d_item(32, i))[d_lane(32, i, j)]);
      ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "D[%u][%u] = %g, want %g", i, j, (double)got, want);
    }
  free(r);
  gpu_free(&g);
}
END_TEST

START_TEST(mfma_broadcast_rejected) {
  gpu g;
  gpu_init(&g);
  wave_run *r = wave_new(&g, "mfma_broadcast");
  ck_assert_int_eq(wave_go(r), -1);
  ck_assert_msg(strstr(r->rep.msg, "cbsz:1") && strstr(r->rep.msg, "v_mfma_f32_16x16x16_f16"), "%s", r->rep.msg);
  free(r);
  gpu_free(&g);
}
END_TEST

static void gemm(const char *name, bool bf) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, name, &k);
  enum { N = 48 };
  static uint16_t a[N * N], b[N * N];
  static float fa[N * N], fb[N * N];
  for (int i = 0; i < N * N; i++) {
    a[i] = bf ? bf_of(rnd()) : h_of(rnd()), b[i] = bf ? bf_of(rnd()) : h_of(rnd());
    if (bf) fa[i] = f_of((uint32_t)a[i] << 16), fb[i] = f_of((uint32_t)b[i] << 16);
    else fa[i] = h_val(a[i]), fb[i] = h_val(b[i]);
  }
  uint64_t c = gpu_alloc(&g, N * N * 4, 256), pa = gpu_alloc(&g, sizeof a, 256), pb = gpu_alloc(&g, sizeof b, 256);
  memcpy(gpu_ptr(&g, pa), a, sizeof a);
  memcpy(gpu_ptr(&g, pb), b, sizeof b);
  uint8_t args[32];
  uint32_t n = N;
  memcpy(args, &c, 8), memcpy(args + 8, &pa, 8), memcpy(args + 16, &pb, 8), memcpy(args + 24, &n, 4);
  rdna3_report rep;
  const uint32_t grid[3] = {N / 16, N / 16, 1}, local[3] = {64, 1, 1};
  ck_assert_msg(kernel_run(&g, &k, grid, local, args, 28, &rep) == 0, "%s", rep.msg);
  const float *o = gpu_ptr(&g, c);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double want = 0;
      for (int kk = 0; kk < N; kk++) want += (double)fa[i * N + kk] * fb[kk * N + j];
      ck_assert_msg(fabs(o[i * N + j] - want) <= 1e-5 * (1 + fabs(want)), "%s C[%d][%d] = %g, want %g", name, i, j,
                    (double)o[i * N + j], want);
    }
  ck_assert_uint_eq(rep.stats.wmma_insts, (N / 16) * (N / 16) * (N / 16));
  gpu_free(&g);
}

START_TEST(gemm_f16) { gemm("mfma_f16", false); }
END_TEST
START_TEST(gemm_bf16) { gemm("mfma_bf16", true); }
END_TEST

TCase *mfma_tests(void) {
  TCase *tc = tcase_create("mfma");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, mfma16_agpr);
  tcase_add_test(tc, mfma16_bf16);
  tcase_add_test(tc, mfma32);
  tcase_add_test(tc, mfma32_bf16);
  tcase_add_test(tc, mfma_broadcast_rejected);
  tcase_add_test(tc, gemm_f16);
  tcase_add_test(tc, gemm_bf16);
  return tc;
}
