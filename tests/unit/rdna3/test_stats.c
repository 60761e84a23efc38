/* tests/unit/rdna3/test_stats.c: the shader statistics (rdna3_stats) and the LDS bank model
 * (rdna3_lds.c: 32 banks a wave, dword d in bank d % 32, phases of 32 dword requests). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

static gpu g;
static wave_run r;

/* One DS access: the snippet, each lane's byte address (lane * stride, or the same for all when stride 0), EXEC,
 * the extra cycles the bank model must count and the LDS bytes it must count. */
static const struct bank_case {
  const char *snippet;
  unsigned stride;
  uint32_t exec;
  uint64_t extra, load_bytes, store_bytes;
} BANK[] = {
    {"lds_bank_load", 4, ~0u, 0, 128, 0},      /* stride-1 dwords: 32 banks, one each */
    {"lds_bank_load", 128, ~0u, 31, 128, 0},   /* stride of 32 dwords: all in bank 0, serialized */
    {"lds_bank_store", 128, ~0u, 31, 0, 128},
    {"lds_bank_load", 0, ~0u, 0, 128, 0},      /* one address: broadcast */
    {"lds_bank_load", 8, ~0u, 1, 128, 0},      /* stride 2 dwords: two per bank */
    {"lds_bank_load", 128, 0xffffu, 15, 64, 0}, /* inactive lanes do not count */
    {"lds_bank_load64", 8, ~0u, 0, 256, 0},    /* 8 bytes a lane: two phases of 16 lanes, conflict-free */
    {"lds_bank_load64", 128, ~0u, 30, 256, 0}, /* each phase: 16 lanes x 2 dwords over banks 0 and 1 */
    {"lds_bank_load2", 4, ~0u, 2, 256, 0},     /* addresses l and l + 32 dwords share a bank; 2 phases */
};

START_TEST(lds_banks) {
  const struct bank_case *t = &BANK[_i];
  gpu_init(&g);
  wave_setup(&r, &g, t->snippet);
  for (unsigned i = 0; i < sizeof r.lds / 4; i++) memcpy(r.lds + 4 * i, &(uint32_t){i * 7u + 1}, 4);
  for (unsigned l = 0; l < 32; l++) r.w.v[0][l] = l * t->stride, r.w.v[1][l] = 0xdead0000u + l;
  r.w.s[126] = t->exec;
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  ck_assert_msg(r.c.st.lds_bank_conflict_cycles == t->extra, "%s stride %u: %llu extra cycles, want %llu", t->snippet,
                t->stride, (unsigned long long)r.c.st.lds_bank_conflict_cycles, (unsigned long long)t->extra);
  ck_assert_uint_eq(r.c.st.lds_load_bytes, t->load_bytes);
  ck_assert_uint_eq(r.c.st.lds_store_bytes, t->store_bytes);
  ck_assert_uint_eq(r.c.st.lds_insts, 1);
  /* the model counts; the results stay those of the instruction */
  for (unsigned l = 0; l < 32; l++) {
    if (!((t->exec >> l) & 1)) continue;
    uint32_t d = l * t->stride / 4;
    if (!strcmp(t->snippet, "lds_bank_store")) {
      uint32_t got;
      memcpy(&got, r.lds + l * t->stride, 4);
      ck_assert_uint_eq(got, 0xdead0000u + l);
    } else {
      ck_assert_uint_eq(r.w.v[2][l], d * 7u + 1);
      if (strcmp(t->snippet, "lds_bank_load")) ck_assert_uint_eq(r.w.v[3][l], (d + (t->snippet[13] == '2' ? 32 : 1)) * 7u + 1);
    }
  }
  gpu_free(&g);
}
END_TEST

/* A compiled kernel's statistics: exact byte counts, waves per workgroup, classes summing to the total, and the
 * same figures on a second run. ew_f32 (kernels/ew_f32.ll): out[i] = a[i]*b[i] + c for i < n, 64 per workgroup. */
static rdna3_stats run_ew(void) {
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "ew_f32", &k);
  enum { N = 200 };
  static float a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = (float)i, b[i] = 0.5f;
  uint64_t out = gpu_alloc(&g, 256 * 4, 256), va = gpu_alloc(&g, sizeof a, 256), vb = gpu_alloc(&g, sizeof b, 256);
  memcpy(gpu_ptr(&g, va), a, sizeof a);
  memcpy(gpu_ptr(&g, vb), b, sizeof b);
  uint8_t args[32];  /* out, a, b, float c, i32 n */
  const float c = 1.0f;
  const uint32_t n = N;
  memcpy(args, &out, 8), memcpy(args + 8, &va, 8), memcpy(args + 16, &vb, 8);
  memcpy(args + 24, &c, 4), memcpy(args + 28, &n, 4);
  rdna3_report rep;
  int rc = kernel_run(&g, &k, (uint32_t[3]){4, 1, 1}, (uint32_t[3]){64, 1, 1}, args, sizeof args, &rep);
  ck_assert_msg(rc == 0, "%s", rep.msg);
  const float *o = gpu_ptr(&g, out);
  for (int i = 0; i < N; i++) ck_assert_float_eq(o[i], (float)i * 0.5f + 1.0f);
  gpu_free(&g);
  return rep.stats;
}

START_TEST(dispatch_stats) {
  rdna3_stats s = run_ew(), s2 = run_ew();
  ck_assert_uint_eq(s.waves, 4 * 2);                  /* ceil(64 / 32) per workgroup */
  ck_assert_uint_eq(s.global_store_bytes, 4 * 200);   /* one float per i < n */
  ck_assert_uint_eq(s.global_load_bytes, 2 * 4 * 200);
  ck_assert_uint_eq(s.lds_load_bytes + s.lds_store_bytes + s.lds_insts + s.wmma_insts, 0);
  ck_assert_uint_eq(s.wave_insts, s.valu_insts + s.salu_insts + s.smem_insts + s.vmem_insts + s.lds_insts);
  ck_assert_uint_ge(s.salu_insts, s.waves);           /* at least s_endpgm in each */
  ck_assert_uint_ge(s.vmem_insts, 3 * 7);             /* 7 waves have lanes below n: 2 loads + 1 store each */
  ck_assert_msg(memcmp(&s, &s2, sizeof s) == 0, "statistics differ between two identical runs");
}
END_TEST

TCase *stats_tests(void) {
  TCase *tc = tcase_create("stats");
  tcase_add_loop_test(tc, lds_banks, 0, (int)(sizeof BANK / sizeof BANK[0]));
  tcase_add_test(tc, dispatch_stats);
  return tc;
}
