/* tests/unit/rdna3/test_gfx12.c: the gfx12 (RDNA4) variant of the core (rdna3_isa.c): the kernels of
 * test_kernels.c compiled by llc for gfx1200, the split wait counters (a missing s_wait_loadcnt / _kmcnt / _dscnt
 * leaves the old value, and one counter's wait does not land another's loads), the gfx12 memory and SMEM
 * encodings, renumbered VALU and new SALU float ops, the split barrier, the gfx12 WMMA operand layout through
 * LLVM's intrinsic, and that each generation refuses the other's encodings. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

TCase *kernel_tests_named(const char *name);

static void use_gfx12(void) { harness_gen = RDNA3_GEN_GFX12; }

static gpu g;
static wave_run r;

static uint32_t fu(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float uf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint64_t du(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static double ud(uint32_t lo, uint32_t hi) { uint64_t u = lo | (uint64_t)hi << 32; double d; memcpy(&d, &u, 8); return d; }

/* A buffer of n words, word i = 1000 + i, in s[0:1]; v0 = lane * 4. */
static uint32_t *buffer_setup(const char *snippet, unsigned n, uint64_t *va) {
  gpu_init(&g);
  *va = gpu_alloc(&g, 4ull * n, 256);
  uint32_t *b = gpu_ptr(&g, *va);
  for (unsigned i = 0; i < n; i++) b[i] = 1000 + i;
  wave_setup(&r, &g, snippet);
  r.w.s[0] = (uint32_t)*va, r.w.s[1] = (uint32_t)(*va >> 32);
  for (unsigned l = 0; l < 32; l++) r.w.v[0][l] = 4 * l;
  return b;
}

START_TEST(wait_loadcnt) {
  uint64_t va;
  buffer_setup("wait_loadcnt", 64, &va);
  for (unsigned l = 0; l < 32; l++) r.w.v[1][l] = 7;
  r.w.s[8] = 9;
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  for (unsigned l = 0; l < 32; l++) {
    ck_assert_uint_eq(r.w.v[2][l], 7);          /* read before s_wait_loadcnt: the old value */
    ck_assert_uint_eq(r.w.v[4][l], 7);          /* s_wait_kmcnt does not land a vector load */
    ck_assert_uint_eq(r.w.v[3][l], 1000 + l);
  }
  ck_assert_uint_eq(r.w.s[10], 1001);
  gpu_free(&g);
}
END_TEST

START_TEST(wait_kmcnt) {
  uint64_t va;
  buffer_setup("wait_kmcnt", 64, &va);
  r.w.s[8] = 9;
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  ck_assert_uint_eq(r.w.s[9], 9);   /* before s_wait_kmcnt */
  ck_assert_uint_eq(r.w.s[11], 9);  /* s_wait_loadcnt_dscnt does not land a scalar load */
  ck_assert_uint_eq(r.w.s[10], 1001);
  gpu_free(&g);
}
END_TEST

START_TEST(wait_dscnt) {
  uint64_t va;
  buffer_setup("wait_dscnt", 64, &va);
  for (unsigned l = 0; l < 32; l++) r.w.v[1][l] = 100 + l, r.w.v[2][l] = 0xdead;
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  for (unsigned l = 0; l < 32; l++) {
    ck_assert_uint_eq(r.w.v[3][l], 0xdead);
    ck_assert_uint_eq(r.w.v[4][l], 100 + l);
  }
  gpu_free(&g);
}
END_TEST

START_TEST(wait_loadcnt_order) {
  uint64_t va;
  buffer_setup("wait_loadcnt_1", 64, &va);
  for (unsigned l = 0; l < 32; l++) r.w.v[1][l] = 1, r.w.v[2][l] = 2;
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  for (unsigned l = 0; l < 32; l++) {
    ck_assert_uint_eq(r.w.v[3][l], 1000 + l);   /* the older load landed at s_wait_loadcnt 1 */
    ck_assert_uint_eq(r.w.v[4][l], 2);          /* the younger one not yet */
    ck_assert_uint_eq(r.w.v[5][l], 2);          /* s_wait_storecnt_dscnt lands no load */
    ck_assert_uint_eq(r.w.v[2][l], 1001 + l);   /* s_endpgm: landed */
  }
  gpu_free(&g);
}
END_TEST

START_TEST(global_encodings) {
  uint64_t va;
  uint32_t *b = buffer_setup("global12", (0x200000 + 0x1000) / 4, &va);
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  for (unsigned l = 0; l < 32; l++) {
    uint32_t v1 = 1000 + 0x40 + l, v2 = 1000 + 0x42 + l, v3 = 1000 + 0x43 + l;
    ck_assert_uint_eq(r.w.v[1][l], v1);
    ck_assert_uint_eq(r.w.v[2][l], v2);
    ck_assert_uint_eq(r.w.v[4][l], 1000 + l);               /* a negative 24-bit offset */
    ck_assert_uint_eq(b[0x100 + l], v1 + v2);                /* global_store_b32 offset:0x400 */
    ck_assert_uint_eq(b[0x140 + l], (1000 + 0x140 + l) >> 16 << 16 | (v3 >> 16));  /* d16_hi: the low 2 bytes */
    ck_assert_uint_eq(r.w.v[6][l], 1000 + 0x180 + l);        /* the atomic returned the old value */
    ck_assert_uint_eq(b[0x180 + l], 1000 + 0x180 + l + v1);
  }
  ck_assert_uint_eq(r.w.s[8], 1004);                         /* SMEM offset -0x1ffff0 */
  gpu_free(&g);
}
END_TEST

START_TEST(smem_sub_dword) {
  uint64_t va;
  uint8_t *b = (uint8_t *)buffer_setup("smem_small", 64, &va);
  for (unsigned i = 0; i < 16; i++) b[i] = (uint8_t)(0x80 + i);
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  ck_assert_uint_eq(r.w.s[4], 0xffffff81u);   /* sign-extended */
  ck_assert_uint_eq(r.w.s[5], 0x81u);
  ck_assert_uint_eq(r.w.s[6], 0xffff8382u);
  ck_assert_uint_eq(r.w.s[7], 0x8382u);
  gpu_free(&g);
}
END_TEST

START_TEST(scratch_encodings) {
  uint64_t va;
  buffer_setup("scratch12", 64, &va);
  r.c.scratch_base = gpu_alloc(&g, 32 * 256, 256);
  r.c.scratch_lane_bytes = 256;
  r.w.s[4] = 200;  /* beyond every lane's v0 + 8 */
  for (unsigned l = 0; l < 32; l++) r.w.v[1][l] = 50 + l, r.w.v[2][l] = 90 + l;
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  for (unsigned l = 0; l < 32; l++) {
    ck_assert_uint_eq(r.w.v[3][l], 50 + l);
    ck_assert_uint_eq(r.w.v[4][l], 90 + l);
  }
  gpu_free(&g);
}
END_TEST

START_TEST(valu_renumbered) {
  gpu_init(&g);
  wave_setup(&r, &g, "valu12");
  for (unsigned l = 0; l < 32; l++) {
    float a = (float)l - 10.5f, c = 3.25f;
    double x = 1.5 + l, y = -0.25 * l;
    r.w.v[1][l] = fu(a), r.w.v[2][l] = fu(c);
    r.w.v[4][l] = (uint32_t)du(x), r.w.v[5][l] = (uint32_t)(du(x) >> 32);
    r.w.v[6][l] = (uint32_t)du(y), r.w.v[7][l] = (uint32_t)(du(y) >> 32);
  }
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  for (unsigned l = 0; l < 32; l++) {
    float a = (float)l - 10.5f, c = 3.25f;
    double x = 1.5 + l, y = -0.25 * l;
    ck_assert_float_eq(uf(r.w.v[10][l]), fmaxf(a, c));
    ck_assert_float_eq(uf(r.w.v[11][l]), fminf(a, -c));
    ck_assert_float_eq(uf(r.w.v[12][l]), fminf(fminf(a, c), 1.0f));
    float lo = fminf(a, c), hi = fmaxf(a, c);
    ck_assert_float_eq(uf(r.w.v[13][l]), fmaxf(lo, fminf(hi, 0.0f)));
    ck_assert_double_eq(ud(r.w.v[14][l], r.w.v[15][l]), x + y);
    ck_assert_double_eq(ud(r.w.v[16][l], r.w.v[17][l]), x * y);
    ck_assert_double_eq(ud(r.w.v[18][l], r.w.v[19][l]), fmax(x, y));
    ck_assert_uint_eq(r.w.v[20][l] | (uint64_t)r.w.v[21][l] << 32, du(x) << 4);
    ck_assert_float_eq(uf(r.w.v[22][l]), fminf(fmaxf(a, c), 0.5f));
  }
  gpu_free(&g);
}
END_TEST

START_TEST(salu_float) {
  gpu_init(&g);
  wave_setup(&r, &g, "salu12");
  r.w.s[4] = fu(2.5f), r.w.s[5] = fu(-1.25f), r.w.s[6] = 7;
  r.w.s[20] = 0xffffffffu, r.w.s[21] = 1, r.w.s[22] = 1, r.w.s[23] = 2;
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  ck_assert_float_eq(uf(r.w.s[10]), 1.25f);
  ck_assert_float_eq(uf(r.w.s[11]), -3.125f);
  ck_assert_float_eq(uf(r.w.s[12]), 7.0f);
  ck_assert_uint_eq(r.w.s[13], 2);
  ck_assert_float_eq(uf(r.w.s[14]), 2.5f * -1.25f + 2.0f);
  ck_assert_float_eq(uf(r.w.s[15]), 2.5f);
  ck_assert_uint_eq(r.w.s[16], 2);               /* 2.5 < -1.25 is false */
  ck_assert_uint_eq(r.w.s[18], 0);  /* 0x1ffffffff + 0x200000001 */
  ck_assert_uint_eq(r.w.s[19], 4);
  ck_assert_uint_eq(r.w.s[17], 0x4100);          /* 2.5 as f16, zero-extended */
  gpu_free(&g);
}
END_TEST

START_TEST(pseudo_scalar) {
  gpu_init(&g);
  wave_setup(&r, &g, "pseudo_scalar");
  r.w.s[4] = fu(4.0f), r.w.s[5] = 0xabcd4000u;   /* 2.0 as f16 in the low half */
  r.w.s[RDNA3_EXEC_LO] = 0;                       /* EXEC does not mask them */
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  ck_assert_float_eq(uf(r.w.s[10]), 2.0f);
  ck_assert_float_eq(uf(r.w.s[11]), 0.25f);
  ck_assert_float_eq(uf(r.w.s[12]), 4.0f);        /* 2^2 */
  ck_assert(isnan(uf(r.w.s[13])));               /* log2(-4) */
  ck_assert_uint_eq(r.w.s[14], 0x3da8);           /* sqrt(2) as f16, zero-extended */
  gpu_free(&g);
}
END_TEST

START_TEST(split_barrier) {
  gpu_init(&g);
  wave_setup(&r, &g, "barrier12");
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  ck_assert_uint_eq(r.w.v[1][0], 5);
  wave_setup(&r, &g, "barrier12_nosignal");
  ck_assert_int_eq(wave_go(&r), -1);
  ck_assert_msg(strstr(r.rep.msg, "s_barrier_wait without s_barrier_signal"), "%s", r.rep.msg);
  gpu_free(&g);
}
END_TEST

/* Each generation refuses the other's encodings: gfx11's s_waitcnt on gfx12, gfx12's s_wait_loadcnt on gfx11. */
START_TEST(cross_generation) {
  gpu_init(&g);
  wave_setup(&r, &g, "old_waitcnt");
  ck_assert_int_eq(wave_go(&r), -1);
  ck_assert_msg(strstr(r.rep.msg, "unimplemented SOPP opcode 9 (gfx12 has no such instruction)"), "%s", r.rep.msg);
  gpu_free(&g);  /* buffer_setup starts a fresh GPU */
  uint64_t va;
  buffer_setup("wait_loadcnt", 64, &va);
  r.c.isa = &rdna3_isa_gfx11;
  ck_assert_int_eq(wave_go(&r), -1);
  ck_assert_msg(strstr(r.rep.msg, "rdna3: unknown encoding at"), "%s", r.rep.msg);  /* the 96-bit VGLOBAL */
  gpu_free(&g);
}
END_TEST

/* llvm.amdgcn.wmma.f32.16x16x16.f16 with <8 x half> operands compiled by llc for gfx1200 (kernels/wmma_gfx12.ll):
 * LLVM's operand order must meet the RDNA4 layout the emulator implements. */
START_TEST(wmma_llvm_gfx12) {
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "wmma_gfx12", &k);
  static _Float16 a[256], bt[256];
  static float c[256], A[16][16], B[16][16], C[16][16];
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      A[i][j] = (float)((i * 7 + j * 3) % 11) - 5, B[i][j] = (float)((i * 5 + j) % 9) * 0.5f - 2;
      C[i][j] = (float)(i - j) * 0.25f;
      a[i * 16 + j] = (_Float16)A[i][j], bt[j * 16 + i] = (_Float16)B[i][j];
    }
  for (unsigned l = 0; l < 32; l++)
    for (unsigned v = 0; v < 8; v++) c[l * 8 + v] = C[8 * (l / 16) + v][l % 16];
  uint64_t pa = gpu_alloc(&g, sizeof a, 256), pb = gpu_alloc(&g, sizeof bt, 256), pc = gpu_alloc(&g, sizeof c, 256);
  uint64_t pd = gpu_alloc(&g, sizeof c, 256);
  memcpy(gpu_ptr(&g, pa), a, sizeof a);
  memcpy(gpu_ptr(&g, pb), bt, sizeof bt);
  memcpy(gpu_ptr(&g, pc), c, sizeof c);
  uint64_t args[4] = {pd, pa, pb, pc};
  rdna3_report rep;
  int rc = kernel_run(&g, &k, (uint32_t[3]){1, 1, 1}, (uint32_t[3]){32, 1, 1}, args, sizeof args, &rep);
  ck_assert_msg(rc == 0, "%s", rep.msg);
  ck_assert_uint_eq(rep.stats.wmma_insts, 1);
  const float *d = gpu_ptr(&g, pd);
  for (unsigned l = 0; l < 32; l++)
    for (unsigned v = 0; v < 8; v++) {
      unsigned m = 8 * (l / 16) + v, n = l % 16;
      float want = C[m][n];
      for (unsigned kk = 0; kk < 16; kk++) want += A[m][kk] * B[kk][n];  /* small integers: exact */
      ck_assert_msg(d[l * 8 + v] == want, "D[%u][%u] = %g, want %g", m, n, (double)d[l * 8 + v], (double)want);
    }
  gpu_free(&g);
}
END_TEST

TCase *gfx12_kernel_tests(void) {
  TCase *tc = kernel_tests_named("kernels_gfx12");
  tcase_add_checked_fixture(tc, use_gfx12, NULL);
  return tc;
}

TCase *gfx12_tests(void) {
  TCase *tc = tcase_create("gfx12");
  tcase_add_checked_fixture(tc, use_gfx12, NULL);
  tcase_add_test(tc, wait_loadcnt);
  tcase_add_test(tc, wait_kmcnt);
  tcase_add_test(tc, wait_dscnt);
  tcase_add_test(tc, wait_loadcnt_order);
  tcase_add_test(tc, global_encodings);
  tcase_add_test(tc, smem_sub_dword);
  tcase_add_test(tc, scratch_encodings);
  tcase_add_test(tc, valu_renumbered);
  tcase_add_test(tc, salu_float);
  tcase_add_test(tc, pseudo_scalar);
  tcase_add_test(tc, split_barrier);
  tcase_add_test(tc, cross_generation);
  tcase_add_test(tc, wmma_llvm_gfx12);
  return tc;
}
