/* tests/unit/mockamd/test_kcache.c: the driver's exec prologue against the emulated shader core's scalar cache (K$,
 * tests/mockgpu/rdna3/rdna3.h). DEV=PCI+AMD over the emulated gfx11 (as tests/unit/am/test_queue_mock.c). One
 * recorded compute queue runs kread (out[0] = *in, a scalar load through the K$), kwrite (*in = 2, a vector store)
 * and kread again (out[1] = *in) with nothing between the dispatches but what the driver lowers each exec to: the
 * second kread sees 2 only because that lowering starts with ACQUIRE_MEM GLK_INV (am/am_hcq_lower.c pm4_exec, as
 * tinygrad's AMDComputeQueue exec). Skipped (77) without LLVM or the shader core. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amd_gpu.h"
#include "amd_pm4.h"
#include "amd_testbed.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"
#endif
#include "../check_helpers.h"

#if BG_HAVE_LLVM && defined(BG_MOCK_RDNA3)
static const char *ir =
    "define amdgpu_kernel void @kread(ptr addrspace(1) %out, ptr addrspace(4) %in) {\n"
    "  %v = load i32, ptr addrspace(4) %in, align 4\n"
    "  store i32 %v, ptr addrspace(1) %out, align 4\n"
    "  ret void\n"
    "}\n"
    "define amdgpu_kernel void @kwrite(ptr addrspace(1) %buf, i32 %v) {\n"
    "  store i32 %v, ptr addrspace(1) %buf, align 4\n"
    "  ret void\n"
    "}\n";

static amd_testbed TB;
static bg_dev *D;

static bg_program *load(const void *obj, size_t n, const char *name, const uint8_t *sizes) {
  bg_program_info info = {name, 2, sizes};
  bg_program *p;
  OK(bg_program_load(D, obj, n, &info, &p));
  return p;
}

START_TEST(exec_prologue_invalidates_kcache) {
  mock_amd_cfg cfg = {.chip = MOCK_AMD_GFX11};
  OK(amd_testbed_new(&TB, &cfg, "bg_kcache"));
  amd_testbed_export_fw_dir(&TB);
  setenv("BG_WAIT_TIMEOUT_MS", "5000", 1);
  OK(bg_dev_open("PCI+AMD", &D));
  void *obj;
  size_t n;
  OK(bg_llvm_amdgpu_compile(ir, bg_dev_arch(D), &obj, &n));
  static const uint8_t rsz[2] = {8, 8}, wsz[2] = {8, 4};
  bg_program *kread = load(obj, n, "kread", rsz), *kwrite = load(obj, n, "kwrite", wsz);
  free(obj);
  bg_buf *in, *out;
  OK(bg_buf_alloc(D, 256, BG_BUF_ZERO, &in));
  OK(bg_buf_alloc(D, 256, BG_BUF_ZERO, &out));
  uint32_t one = 1;
  OK(bg_buf_write(in, 0, &one, 4));
  bg_queue *q;
  OK(bg_queue_new(D, BG_QUEUE_COMPUTE, &q));
  const bg_val g[3] = {bg_const(1), bg_const(1), bg_const(1)};
  const bg_val r0[2] = {bg_addr(out, 0), bg_addr(in, 0)}, w[2] = {bg_addr(in, 0), bg_const(2)},
               r1[2] = {bg_addr(out, 4), bg_addr(in, 0)};
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_exec(q, kread, r0, 2, g, g);
  bg_queue_exec(q, kwrite, w, 2, g, g);
  bg_queue_exec(q, kread, r1, 2, g, g);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  OK(bg_queue_submit(q, NULL, 0));
  OK(bg_dev_synchronize(D, 5000));
  uint32_t got[2];
  OK(bg_buf_read(out, 0, got, sizeof(got)));
  ck_assert_uint_eq(got[0], 1);
  ck_assert_msg(got[1] == 2, "the second kread read %u: a stale K$ line (no ACQUIRE_MEM GLK_INV before the dispatch)",
                got[1]);
  mock_amd_pm4_stats st;
  ck_assert(mock_amd_pm4_stats_get(TB.gpu, &st) && st.dispatches >= 3 && st.acquires >= 3);
  bg_queue_free(q);
  bg_buf_free(in);
  bg_buf_free(out);
  bg_program_free(kread);
  bg_program_free(kwrite);
  bg_dev_close(D);
  char msg[4096];
  unsigned nfail = amd_testbed_failures(&TB, msg, sizeof(msg));
  amd_testbed_free(&TB);
  ck_assert_msg(nfail == 0, "unexpected model failures:\n%s", msg);
}
END_TEST

int main(void) {
  Suite *s = suite_create("mockamd-kcache");
  TCase *t = tcase_create("gfx11");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, exec_prologue_invalidates_kcache);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
#else
int main(void) {
  puts("mockamd-kcache: needs LLVM and the RDNA3 core: skipped");
  return 77;
}
#endif
