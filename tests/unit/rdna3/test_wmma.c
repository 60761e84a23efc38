/* tests/unit/rdna3/test_wmma.c: V_WMMA_* (rdna3_wmma.c) against a C reference. Inputs are small
 * integers (and halves), distinct per element, so every product and every partial sum is exact in
 * f32 and the result does not depend on the order of the additions; a swapped row, column, lane
 * half or register shows as a wrong element. The lane layout is the RDNA3 ISA guide's (rdna3_wmma.c). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

static gpu g;
static wave_run r;

static uint32_t fu(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float uf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint16_t f16(float f) { _Float16 h = (_Float16)f; uint16_t u; memcpy(&u, &h, 2); return u; }
static float from_f16(uint16_t u) { _Float16 h; memcpy(&h, &u, 2); return (float)h; }
static uint16_t bf16(float f) { return (uint16_t)(fu(f) >> 16); }  /* exact for the values used here */
static float from_bf16(uint16_t u) { return uf((uint32_t)u << 16); }

/* A[m][k], B[k][n], C[m][n]. big: integers 0..255 / -128..127 (f32 results only); small: -3..3,
 * -2..2, so f16/bf16 results stay exact. */
static float A[16][16], B[16][16], C[16][16];

static void make(bool big) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      A[i][j] = big ? (float)(i * 16 + j) : (float)((i * 16 + j) % 7 - 3);
      B[i][j] = big ? (float)(i * 16 + j - 128) : (float)((i * 5 + j * 3) % 5 - 2);
      C[i][j] = big ? (float)(i * 16 + j) + 0.5f : (float)((i + 2 * j) % 9 - 4) + 0.5f;
    }
}

/* A into v[8:15], B into v[16:23] in the WMMA layout, both halves of the wave. */
static void load_ab(bool bf) {
  for (unsigned j = 0; j < 8; j++)
    for (unsigned l = 0; l < 32; l++) {
      unsigned i = l % 16;
      uint16_t alo = bf ? bf16(A[i][2 * j]) : f16(A[i][2 * j]), ahi = bf ? bf16(A[i][2 * j + 1]) : f16(A[i][2 * j + 1]);
      uint16_t blo = bf ? bf16(B[2 * j][i]) : f16(B[2 * j][i]), bhi = bf ? bf16(B[2 * j + 1][i]) : f16(B[2 * j + 1][i]);
      r.w.v[8 + j][l] = alo | (uint32_t)ahi << 16;
      r.w.v[16 + j][l] = blo | (uint32_t)bhi << 16;
    }
}

static float ref(unsigned m, unsigned n, bool with_c) {
  float acc = with_c ? C[m][n] : 0.0f;
  for (unsigned k = 0; k < 16; k++) acc += A[m][k] * B[k][n];
  return acc;
}

static void go(void) {
  int rc = wave_go(&r);
  ck_assert_msg(rc == 0, "%s", r.rep.msg);
}

/* _i: 0 f32 <- f16, 1 f32 <- bf16, 2 f32 <- f16 with C = inline 0 */
START_TEST(wmma_f32) {
  static const char *names[] = {"wmma_f32_f16", "wmma_f32_bf16", "wmma_f32_f16_c0"};
  gpu_init(&g);
  wave_setup(&r, &g, names[_i]);
  make(true);
  load_ab(_i == 1);
  for (unsigned v = 0; v < 8; v++)
    for (unsigned l = 0; l < 32; l++) r.w.v[24 + v][l] = fu(C[2 * v + l / 16][l % 16]);
  go();
  for (unsigned v = 0; v < 8; v++)
    for (unsigned l = 0; l < 32; l++) {
      unsigned m = 2 * v + l / 16, n = l % 16;
      float want = ref(m, n, _i != 2);
      ck_assert_msg(r.w.v[v][l] == fu(want), "%s D[%u][%u] (v%u lane %u) = %g, want %g", names[_i], m, n, v, l,
                    (double)uf(r.w.v[v][l]), (double)want);
    }
  gpu_free(&g);
}
END_TEST

/* _i: 0 f16, 1 f16 op_sel:[0,0,1], 2 bf16, 3 bf16 op_sel:[0,0,1]: C read from and D written to the
 * selected half; the other half of each D register keeps its value. */
START_TEST(wmma_half) {
  static const char *names[] = {"wmma_f16_f16", "wmma_f16_f16_hi", "wmma_bf16_bf16", "wmma_bf16_bf16_hi"};
  bool bf = _i >= 2, hi = _i & 1;
  unsigned sh = hi ? 16 : 0;
  gpu_init(&g);
  wave_setup(&r, &g, names[_i]);
  make(false);
  load_ab(bf);
  for (unsigned v = 0; v < 8; v++)
    for (unsigned l = 0; l < 32; l++) {
      float cv = C[2 * v + l / 16][l % 16];
      uint16_t h = bf ? bf16(cv) : f16(cv);
      r.w.v[24 + v][l] = (uint32_t)h << sh | (uint32_t)0x7777u << (16 - sh);  /* other half: noise */
      r.w.v[v][l] = 0xa5a5a5a5u ^ (v * 32 + l);                               /* D's old value */
    }
  go();
  for (unsigned v = 0; v < 8; v++)
    for (unsigned l = 0; l < 32; l++) {
      unsigned m = 2 * v + l / 16, n = l % 16;
      float want = ref(m, n, true);
      uint32_t got = r.w.v[v][l], old = 0xa5a5a5a5u ^ (v * 32 + l);
      uint16_t gh = (uint16_t)(got >> sh);
      float gf = bf ? from_bf16(gh) : from_f16(gh);
      ck_assert_msg(gf == want, "%s D[%u][%u] (v%u lane %u) = %g, want %g", names[_i], m, n, v, l, (double)gf,
                    (double)want);
      ck_assert_msg((got & (0xffffu << (16 - sh))) == (old & (0xffffu << (16 - sh))),
                    "%s v%u lane %u: the unselected half changed (0x%08x, was 0x%08x)", names[_i], v, l, got, old);
    }
  gpu_free(&g);
}
END_TEST

/* Undefined uses stop the wave with a report: EXEC not all ones, lanes 16-31 not a copy of 0-15,
 * NEG modifiers (not implemented). */
START_TEST(wmma_strict) {
  static const char *snip[] = {"wmma_f32_f16", "wmma_f32_f16", "wmma_f32_f16_neg"};
  static const char *want[] = {"EXEC 0x7fffffff", "lanes 16-31", "NEG"};
  gpu_init(&g);
  wave_setup(&r, &g, snip[_i]);
  make(true);
  load_ab(false);
  if (_i == 0) r.w.s[126] = 0x7fffffffu;
  if (_i == 1) r.w.v[17][20] ^= 1;
  ck_assert_int_eq(wave_go(&r), -1);
  ck_assert_msg(strstr(r.rep.msg, want[_i]), "report '%s' lacks '%s'", r.rep.msg, want[_i]);
  gpu_free(&g);
}
END_TEST

/* ISA guide 7.9.1: a WMMA reading as A or B the D of the WMMA right before it needs a VALU op between (v_nop);
 * an SALU op does not count. _i: 0 back to back, 1 s_nop between (both stop), 2 v_nop between (runs). A = B = all
 * ones and C by column only, so D is replicated across the lane halves and valid as the next A/B. */
START_TEST(wmma_hazard) {
  static const char *snip[] = {"wmma_chain_hazard", "wmma_chain_salu", "wmma_chain_nop"};
  gpu_init(&g);
  wave_setup(&r, &g, snip[_i]);
  for (unsigned v = 0; v < 8; v++)
    for (unsigned l = 0; l < 32; l++) {
      r.w.v[8 + v][l] = r.w.v[16 + v][l] = 0x3c003c00u;  /* f16 1.0 pairs */
      r.w.v[24 + v][l] = fu((float)(l % 16));
    }
  int rc = wave_go(&r);
  if (_i < 2) {
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(r.rep.msg, "overlaps the D"), "%s", r.rep.msg);
  } else {
    ck_assert_msg(rc == 0, "%s", r.rep.msg);
    ck_assert_uint_eq(r.c.st.wmma_insts, 2);
  }
  gpu_free(&g);
}
END_TEST

/* llvm.amdgcn.wmma.f32.16x16x16.f16 compiled by llc for gfx1100 (kernels/wmma.ll): LLVM's operand
 * order must meet the emulator's layout. */
START_TEST(wmma_llvm) {
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "wmma", &k);
  make(true);
  static _Float16 a[256], bt[256];
  static float c[256];
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) a[i * 16 + j] = (_Float16)A[i][j], bt[j * 16 + i] = (_Float16)B[i][j];
  for (unsigned l = 0; l < 32; l++)
    for (unsigned v = 0; v < 8; v++) c[l * 8 + v] = C[2 * v + l / 16][l % 16];
  uint64_t va = gpu_alloc(&g, sizeof a, 256), vb = gpu_alloc(&g, sizeof bt, 256), vc = gpu_alloc(&g, sizeof c, 256);
  uint64_t vd = gpu_alloc(&g, sizeof c, 256);
  memcpy(gpu_ptr(&g, va), a, sizeof a);
  memcpy(gpu_ptr(&g, vb), bt, sizeof bt);
  memcpy(gpu_ptr(&g, vc), c, sizeof c);
  uint64_t args[4] = {vd, va, vb, vc};
  rdna3_report rep;
  int rc = kernel_run(&g, &k, (uint32_t[3]){1, 1, 1}, (uint32_t[3]){32, 1, 1}, args, sizeof args, &rep);
  ck_assert_msg(rc == 0, "%s", rep.msg);
  const float *d = gpu_ptr(&g, vd);
  for (unsigned l = 0; l < 32; l++)
    for (unsigned v = 0; v < 8; v++) {
      unsigned m = 2 * v + l / 16, n = l % 16;
      ck_assert_msg(d[l * 8 + v] == ref(m, n, true), "D[%u][%u] = %g, want %g", m, n, (double)d[l * 8 + v],
                    (double)ref(m, n, true));
    }
  gpu_free(&g);
}
END_TEST

TCase *wmma_tests(void) {
  TCase *tc = tcase_create("wmma");
  tcase_add_loop_test(tc, wmma_f32, 0, 3);
  tcase_add_loop_test(tc, wmma_half, 0, 4);
  tcase_add_loop_test(tc, wmma_strict, 0, 3);
  tcase_add_loop_test(tc, wmma_hazard, 0, 3);
  tcase_add_test(tc, wmma_llvm);
  return tc;
}
