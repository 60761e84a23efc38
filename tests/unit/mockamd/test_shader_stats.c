/* tests/unit/mockamd/test_shader_stats.c: the emulated GPU's shader statistics through the mock plugin (ABI 5,
 * platform/mock_plugin.h bg_mock_plugin_shader_stats) on MOCKPCI+AMD: kernels compiled by the library's LLVM backend
 * and launched through bg_program_run; the counters move by exactly what the kernel does (bytes of active lanes,
 * ceil(threads / 32) waves per work-group, one WMMA per wave, LDS bytes and bank conflicts) and the same launch moves
 * them by the same amounts every time; on gfx942 (AQL over 8 XCCs, the wave64 CDNA3 core) too. Skipped (77) without
 * LLVM. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#include "platform/mock_plugin.h"
#if BG_HAVE_LLVM
#include "amd_test_kernels.h"
#include "compile/llvm_amdgpu.h"
#endif

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

#if BG_HAVE_LLVM
static bg_dev *D;

/* lds_stride(out): each lane stores its id to lds[lane * 32] and reads it back after a barrier: every access of a
 * wave lands in one LDS bank (32 dwords apart), 31 extra cycles each for the store and the load. */
static const char LDS_STRIDE_IR[] =
    "@t = internal addrspace(3) global [1024 x i32] poison, align 4\n"
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "declare void @llvm.amdgcn.s.barrier()\n"
    "define amdgpu_kernel void @lds_stride(ptr addrspace(1) %out) #0 {\n"
    "  %l = call i32 @llvm.amdgcn.workitem.id.x()\n"
    "  %o = mul i32 %l, 32\n"
    "  %p = getelementptr i32, ptr addrspace(3) @t, i32 %o\n"
    "  store volatile i32 %l, ptr addrspace(3) %p\n"
    "  call void @llvm.amdgcn.s.barrier()\n"
    "  %v = load volatile i32, ptr addrspace(3) %p\n"
    "  %q = getelementptr i32, ptr addrspace(1) %out, i32 %l\n"
    "  store i32 %v, ptr addrspace(1) %q\n"
    "  ret void\n"
    "}\n"
    "attributes #0 = { \"amdgpu-flat-work-group-size\"=\"32,32\" }\n";

/* wmma(d, a, c): D = A x A + C through llvm.amdgcn.wmma.f32.16x16x16.f16, one wave; A and C in the per-lane layout. */
static const char WMMA_IR[] =
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16(<16 x half>, <16 x half>, <8 x float>)\n"
    "define amdgpu_kernel void @wmma(ptr addrspace(1) %d, ptr addrspace(1) %a, ptr addrspace(1) %c) #0 {\n"
    "  %l = call i32 @llvm.amdgcn.workitem.id.x()\n"
    "  %r = and i32 %l, 15\n"
    "  %ao = shl i32 %r, 4\n"
    "  %pa = getelementptr half, ptr addrspace(1) %a, i32 %ao\n"
    "  %va = load <16 x half>, ptr addrspace(1) %pa, align 32\n"
    "  %co = shl i32 %l, 3\n"
    "  %pc = getelementptr float, ptr addrspace(1) %c, i32 %co\n"
    "  %vc = load <8 x float>, ptr addrspace(1) %pc, align 32\n"
    "  %vd = call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16(<16 x half> %va, <16 x half> %va, <8 x float> %vc)\n"
    "  %pd = getelementptr float, ptr addrspace(1) %d, i32 %co\n"
    "  store <8 x float> %vd, ptr addrspace(1) %pd, align 32\n"
    "  ret void\n"
    "}\n"
    "attributes #0 = { \"amdgpu-flat-work-group-size\"=\"32,32\" }\n";

static bg_program *load(const char *ir, const char *name, uint8_t nargs) {
  void *obj;
  size_t n;
  OK(bg_llvm_amdgpu_compile(ir, bg_dev_arch(D), &obj, &n));
  static const uint8_t sizes[4] = {8, 8, 8, 8};
  bg_program_info info = {name, nargs, sizes};
  bg_program *p;
  OK(bg_program_load(D, obj, n, &info, &p));
  free(obj);
  return p;
}

static bg_mock_shader_stats stats(void) {
  bg_mock_shader_stats s;
  OK(bg_mock_plugin_shader_stats("MOCKPCI", 0, &s));
  return s;
}

/* after - before, field by field */
static bg_mock_shader_stats delta(bg_mock_shader_stats a, bg_mock_shader_stats b) {
  uint64_t *pa = (uint64_t *)&a;
  const uint64_t *pb = (const uint64_t *)&b;
  for (size_t i = 0; i < sizeof a / sizeof(uint64_t); i++) pa[i] = pb[i] - pa[i];
  return a;
}

static void setup(void) {
  setenv("BG_WAIT_TIMEOUT_MS", "20000", 1);
  OK(bg_dev_open("MOCKPCI+AMD", &D));
}

static void teardown(void) {
  bg_dev_close(D);
  D = NULL;
}

/* add1 over 3 work-groups of 40 work-items (out[g*32 + l] = in[g*32 + l] + 1), launched runs times: d[run] is each
 * launch's counter deltas; the result is checked after the last. */
static void add1_deltas(bg_mock_shader_stats *d, int runs) {
  bg_program *p = load(AMD_TEST_ADD1_IR, "add1", 2);
  bg_buf *b[2];
  OK(bg_buf_alloc(D, 256 * 4, 0, &b[0]));
  OK(bg_buf_alloc(D, 256 * 4, 0, &b[1]));
  float in[256];
  for (int i = 0; i < 256; i++) in[i] = (float)i;
  OK(bg_buf_write(b[1], 0, in, sizeof in));
  const uint32_t g[3] = {3, 1, 1}, l[3] = {40, 1, 1};
  for (int run = 0; run < runs; run++) {
    bg_mock_shader_stats s0 = stats();
    OK(bg_program_run(p, b, 2, NULL, 0, g, l, true, NULL));
    d[run] = delta(s0, stats());
  }
  float out[256];
  OK(bg_buf_read(b[0], 0, out, sizeof out));
  for (int i = 0; i < 2 * 32 + 40; i++) ck_assert_float_eq(out[i], in[i] + 1.0f);
  bg_buf_free(b[0]);
  bg_buf_free(b[1]);
  bg_program_free(p);
}

/* add1 on RDNA3: 2 waves per work-group, the second with 8 live lanes; 120 floats loaded and stored; twice, the same
 * deltas. */
START_TEST(add1_counts) {
  bg_mock_shader_stats d[2];
  add1_deltas(d, 2);
  ck_assert_uint_eq(d[0].dispatches, 1);
  ck_assert_uint_eq(d[0].waves, 3 * 2);
  ck_assert_uint_eq(d[0].global_store_bytes, 3 * 40 * 4);
  ck_assert_uint_eq(d[0].global_load_bytes, 3 * 40 * 4);
  ck_assert_uint_eq(d[0].lds_load_bytes + d[0].lds_store_bytes + d[0].lds_insts + d[0].wmma_insts, 0);
  ck_assert_uint_eq(d[0].vmem_insts, 3 * 2 * 2); /* a load and a store in each wave */
  ck_assert_uint_ge(d[0].wave_insts, d[0].valu_insts + d[0].salu_insts + d[0].vmem_insts);
  ck_assert_uint_gt(d[0].valu_insts, 0);
  ck_assert_msg(memcmp(&d[0], &d[1], sizeof d[0]) == 0, "the same launch moved the counters differently");
}
END_TEST

/* The same add1 on gfx942 (MI300X: an AQL dispatch over 8 XCCs, the wave64 CDNA3 core): 1 wave per work-group of
 * 40, the same bytes; the counters of every XCC's share reach the device's. */
START_TEST(add1_counts_gfx942) {
  ck_assert_str_eq(bg_dev_arch(D), "gfx942");
  bg_mock_shader_stats d;
  add1_deltas(&d, 1);
  ck_assert_uint_eq(d.dispatches, 1);
  ck_assert_uint_eq(d.waves, 3);
  ck_assert_uint_eq(d.global_store_bytes, 3 * 40 * 4);
  ck_assert_uint_eq(d.global_load_bytes, 3 * 40 * 4);
  ck_assert_uint_eq(d.vmem_insts, 3 * 2);
  ck_assert_uint_ge(d.wave_insts, d.valu_insts + d.salu_insts + d.vmem_insts);
}
END_TEST

static void setup_gfx942(void) {
  setenv("MOCKGPU_CHIP", "gfx942", 1);
  setup();
}

START_TEST(lds_conflicts) {
  bg_program *p = load(LDS_STRIDE_IR, "lds_stride", 1);
  bg_buf *b;
  OK(bg_buf_alloc(D, 64 * 4, 0, &b));
  const uint32_t g[3] = {2, 1, 1}, l[3] = {32, 1, 1};
  bg_mock_shader_stats s0 = stats();
  OK(bg_program_run(p, &b, 1, NULL, 0, g, l, true, NULL));
  bg_mock_shader_stats d = delta(s0, stats());
  uint32_t out[32];
  OK(bg_buf_read(b, 0, out, sizeof out));
  for (uint32_t i = 0; i < 32; i++) ck_assert_uint_eq(out[i], i);
  ck_assert_uint_eq(d.lds_insts, 2 * 2);
  ck_assert_uint_eq(d.lds_store_bytes, 2 * 32 * 4);
  ck_assert_uint_eq(d.lds_load_bytes, 2 * 32 * 4);
  ck_assert_uint_eq(d.lds_bank_conflict_cycles, 2 * 2 * 31);
  ck_assert_uint_eq(d.global_store_bytes, 2 * 32 * 4);
  bg_buf_free(b);
  bg_program_free(p);
}
END_TEST

START_TEST(wmma_counts) {
  bg_program *p = load(WMMA_IR, "wmma", 3);
  bg_buf *b[3];
  for (int i = 0; i < 3; i++) OK(bg_buf_alloc(D, 1024, 0, &b[i]));
  _Float16 a[256];
  float c[256];
  for (int i = 0; i < 256; i++) a[i] = (_Float16)(i % 7 - 3), c[i] = (float)i;
  OK(bg_buf_write(b[1], 0, a, sizeof a));
  OK(bg_buf_write(b[2], 0, c, sizeof c));
  const uint32_t g[3] = {1, 1, 1}, l[3] = {32, 1, 1};
  bg_mock_shader_stats s0 = stats();
  OK(bg_program_run(p, b, 3, NULL, 0, g, l, true, NULL));
  bg_mock_shader_stats d = delta(s0, stats());
  float out[256];
  OK(bg_buf_read(b[0], 0, out, sizeof out));
  for (unsigned lane = 0; lane < 32; lane++)
    for (unsigned v = 0; v < 8; v++) {
      unsigned m = 2 * v + lane / 16, n = lane % 16;
      float want = c[lane * 8 + v];
      for (unsigned k = 0; k < 16; k++) want += (float)a[m * 16 + k] * (float)a[n * 16 + k];
      ck_assert_msg(out[lane * 8 + v] == want, "D[%u][%u] = %g, want %g", m, n, (double)out[lane * 8 + v], (double)want);
    }
  ck_assert_uint_eq(d.wmma_insts, 1);
  ck_assert_uint_eq(d.waves, 1);
  ck_assert_uint_eq(d.global_store_bytes, 32 * 8 * 4);
  ck_assert_uint_eq(d.global_load_bytes, 32 * 16 * 2 + 32 * 8 * 4);
  for (int i = 0; i < 3; i++) bg_buf_free(b[i]);
  bg_program_free(p);
}
END_TEST

/* Bad arguments are named. */
START_TEST(bad_requests) {
  bg_mock_shader_stats s;
  ck_assert_int_eq(bg_mock_plugin_shader_stats("MOCKPCI", 7, &s), -BG_ENODEV);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "no such device"));
  ck_assert_int_eq(bg_mock_plugin_shader_stats("PCI", 0, &s), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "MOCKPCI or MOCKUSB"));
}
END_TEST
#endif

int main(void) {
#if !BG_HAVE_LLVM
  printf("mockamd-shader-stats: built without LLVM: skipped\n");
  return 77;
#else
  Suite *s = suite_create("mockamd-shader-stats");
  TCase *tc = tcase_create("stats");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, add1_counts);
  tcase_add_test(tc, lds_conflicts);
  tcase_add_test(tc, wmma_counts);
  tcase_add_test(tc, bad_requests);
  suite_add_tcase(s, tc);
  TCase *cdna = tcase_create("gfx942");
  tcase_add_checked_fixture(cdna, setup_gfx942, teardown);
  tcase_set_timeout(cdna, 120);
  tcase_add_test(cdna, add1_counts_gfx942);
  suite_add_tcase(s, cdna);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
#endif
}
