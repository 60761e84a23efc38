/* tests/unit/am/test_queue_faults.c: faults on the AMD HCQ device (emulated GPU of tests/mockgpu, in process, as
 * test_queue_mock.c) are reported and recovered from without closing the device:
 *   - an SDMA page fault on a copy queue that signals only its own signal (not the device timeline) is returned by
 *     bg_dev_synchronize, and keeps being returned (latched); also when an earlier synchronize ran while the copy
 *     still waited;
 *   - bg_dev_recover resets the SDMA ring and the compute HQD: a correct copy and a kernel then run on the same
 *     open device, and a second fault is reported again (the latched VM fault status was cleared);
 *   - after a timeout (a wait never satisfied) on either queue, bg_dev_recover makes the device run work again;
 *   - the emulated command processor refuses a dispatch whose COMPUTE_NUM_THREAD_X exceeds a work-group (it used to
 *     run a work-group of 100000 threads for ever), and the HQD recovers from it;
 *   - hangs found by the progress check (BG_HANG_CHECK_MS, 100 ms here): a kernel that never ends (the compute queue's
 *     read pointer stands at its DISPATCH_DIRECT) and a lost doorbell (a met WAIT_REG_MEM the queue never passes)
 *     are -BG_EHANG naming the queue and packet; bg_dev_recover dequeues the HQD, which stops the endless waves, and
 *     the device runs a kernel again; a kernel storing to an unmapped address is a page fault naming the address. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_hcq.h"
#include "amd_engine.h"
#include "amd_gpu.h"
#include "amd_pm4.h"
#include "amd_sdma_exec.h"
#include "amd_test_kernels.h"
#include "amd_testbed.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#include "hcq/memmap.h"
#include "hcq/tmpl.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"

/* Signal reads and writes that must succeed: they return 0 or a negative BG_E* (baregpu/error.h). */
static uint64_t sigval(const bg_signal *s) {
  uint64_t v = 0;
  ck_assert_msg(bg_signal_value(s, &v) == 0, "bg_signal_value: %s", bg_last_error());
  return v;
}
#define SIGSET(s, v) ck_assert_msg(bg_signal_set((s), (v)) == 0, "bg_signal_set: %s", bg_last_error())
#endif

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

static amd_testbed TB;
static mock_amd *G;
static bg_dev *D;

static void setup_chip(mock_amd_chip chip) {
  mock_amd_cfg cfg = {.chip = chip};
  OK(amd_testbed_new(&TB, &cfg, "bg_qfault"));
  G = TB.gpu;
  amd_testbed_export_fw_dir(&TB);
  setenv("BG_WAIT_TIMEOUT_MS", "5000", 1);
  setenv("BG_HANG_CHECK_MS", "100", 1);
  D = NULL;
  OK(bg_dev_open("PCI+AMD", &D));
}
static void setup11(void) { setup_chip(MOCK_AMD_GFX11); }
static void setup12(void) { setup_chip(MOCK_AMD_MOCK); }

static void teardown(void) {
  if (D) bg_dev_close(D);
  char msg[4096];
  unsigned nfail = amd_testbed_failures(&TB, msg, sizeof(msg));
  amd_testbed_free(&TB);
  ck_assert_msg(nfail == 0, "unexpected model failures:\n%s", msg);
}

/* Record a copy from a buffer, free the buffer (its pages are unmapped), re-submit: the SDMA read faults. The
 * queue signals `s` only. Returns once the engine has stopped on the fault. */
static void sdma_fault(bg_buf *dst, bg_signal *s, bg_queue **qp) {
  bg_buf *victim;
  OK(bg_buf_alloc(D, 1u << 16, 0, &victim));
  bg_queue *q;
  OK(bg_queue_new(D, BG_QUEUE_COPY, &q));
  bg_queue_copy(q, bg_addr(dst, 0), bg_addr(victim, 0), 1u << 16);
  bg_queue_signal(q, bg_sig(s), bg_const(7));
  OK(bg_queue_submit(q, NULL, 0)); /* checked when recorded: a live buffer */
  OK(bg_signal_wait(s, 7, 0));
  SIGSET(s, 0);
  const uint64_t va = bg_buf_va(victim);
  bg_buf_free(victim); /* its work retired: released at once, the page is gone */
  /* The same program again is refused: copies are re-checked after a free. Put the stale range back in the
   * live-allocation map so the copy reaches the engine and its read faults on the unmapped page. */
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL);
  OK(bg_memmap_add(D, va, 1u << 16));
  OK(bg_queue_submit(q, NULL, 0));
  bg_memmap_remove(D, va);
  ck_assert_int_eq(mock_amd_engines_wait_idle(G, 10000), 0);
  mock_amd_sdma_stats ss;
  ck_assert(mock_amd_sdma_stats_get(G, &ss) && ss.hung);
  ck_assert_msg(strstr(mock_amd_failures(G), "VM fault"), "%s", mock_amd_failures(G));
  mock_amd_clear_failures(G);
  *qp = q;
}

static void copy_and_check(bg_buf *a, bg_buf *b) {
  uint8_t src[4096], back[4096];
  for (size_t i = 0; i < sizeof(src); i++) src[i] = (uint8_t)(i * 7 + 3);
  OK(bg_buf_write(a, 0, src, sizeof(src)));
  bg_queue *q;
  OK(bg_queue_new(D, BG_QUEUE_COPY, &q));
  bg_queue_copy(q, bg_addr(b, 0), bg_addr(a, 0), sizeof(src));
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  OK(bg_queue_submit(q, NULL, 0));
  OK(bg_dev_synchronize(D, 0));
  OK(bg_buf_read(b, 0, back, sizeof(back)));
  ck_assert_mem_eq(back, src, sizeof(src));
  bg_queue_free(q);
}

#if BG_HAVE_LLVM
static bg_program *load_add1(void) {
  static const uint8_t sizes[2] = {8, 8};
  void *obj;
  size_t n;
  OK(bg_llvm_amdgpu_compile(AMD_TEST_ADD1_IR, bg_dev_arch(D), &obj, &n));
  bg_program_info info = {"add1", 2, sizes};
  bg_program *p;
  OK(bg_program_load(D, obj, n, &info, &p));
  free(obj);
  return p;
}

static void kernel_and_check(void) {
  bg_program *p = load_add1();
  bg_buf *in, *out;
  OK(bg_buf_alloc(D, 256, 0, &in));
  OK(bg_buf_alloc(D, 256, 0, &out));
  float f[64];
  for (int i = 0; i < 64; i++) f[i] = (float)i;
  OK(bg_buf_write(in, 0, f, sizeof(f)));
  bg_buf *bufs[2] = {out, in};
  const uint32_t g[3] = {2, 1, 1}, l[3] = {32, 1, 1};
  int r = bg_program_run(p, bufs, 2, NULL, 0, g, l, true, NULL);
  ck_assert_msg(r == 0, "run: %s\n%s", bg_last_error(), mock_amd_failures(G));
  OK(bg_buf_read(out, 0, f, sizeof(f)));
  for (int i = 0; i < 64; i++) ck_assert_float_eq(f[i], (float)i + 1.0f);
  bg_program_free(p);
  bg_buf_free(in);
  bg_buf_free(out);
}
#endif

/* bg_dev_synchronize returned 0 here: the faulting copy queue does not signal the timeline. */
START_TEST(test_sdma_fault_reported_and_recovered) {
  bg_buf *a, *b;
  OK(bg_buf_alloc(D, 1u << 16, 0, &a));
  OK(bg_buf_alloc(D, 1u << 16, 0, &b));
  bg_signal *s;
  OK(bg_signal_new(D, 0, &s));
  bg_queue *q;
  sdma_fault(a, s, &q);
  ck_assert_int_eq(bg_dev_synchronize(D, 0), -BG_EHANG);
  ck_assert_msg(strstr(bg_last_error(), "page fault") && strstr(bg_last_error(), "copy queue"), "%s", bg_last_error());
  ck_assert_int_eq(bg_dev_synchronize(D, 0), -BG_EHANG); /* latched until recovered */
  bg_queue *other;
  ck_assert_int_eq(bg_queue_new(D, BG_QUEUE_COMPUTE, &other), -BG_EHANG);
  ck_assert_uint_eq(sigval(s), 0);

  OK(bg_dev_recover(D));
  OK(bg_dev_synchronize(D, 0));
  copy_and_check(a, b);
#if BG_HAVE_LLVM
  if (mock_amd_chip_id(G) == MOCK_AMD_GFX11) kernel_and_check();
#endif
  /* A second fault is reported again: the recovery cleared the latched VM fault status. */
  bg_queue_free(q);
  sdma_fault(a, s, &q);
  ck_assert_int_eq(bg_dev_synchronize(D, 0), -BG_EHANG);
  OK(bg_dev_recover(D));
  copy_and_check(a, b);
  bg_queue_free(q);
  /* A synchronize while the faulting copy still waits for a host signal finds nothing yet, and does not use up the
   * check: the next synchronize reports the fault. */
  bg_signal *gate;
  bg_buf *victim;
  OK(bg_signal_new(D, 0, &gate));
  OK(bg_buf_alloc(D, 1u << 16, 0, &victim));
  OK(bg_queue_new(D, BG_QUEUE_COPY, &q));
  bg_queue_wait(q, bg_sig(gate), bg_const(1));
  bg_queue_copy(q, bg_addr(a, 0), bg_addr(victim, 0), 1u << 16);
  bg_queue_signal(q, bg_sig(s), bg_const(9));
  const uint64_t victim_va = bg_buf_va(victim);
  bg_buf_free(victim); /* after recording: the constant operands were checked against a live buffer */
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL); /* and are again at the submit after a free */
  OK(bg_memmap_add(D, victim_va, 1u << 16)); /* the stale range, so the copy reaches the engine (see sdma_fault) */
  OK(bg_queue_submit(q, NULL, 0));
  bg_memmap_remove(D, victim_va);
  OK(bg_dev_synchronize(D, 0));
  SIGSET(gate, 1);
  ck_assert_int_eq(mock_amd_engines_wait_idle(G, 10000), 0);
  ck_assert_int_eq(bg_dev_synchronize(D, 0), -BG_EHANG);
  ck_assert_msg(strstr(bg_last_error(), "page fault"), "%s", bg_last_error());
  mock_amd_clear_failures(G);
  OK(bg_dev_recover(D));
  copy_and_check(a, b);
  bg_queue_free(q);
  bg_signal_free(gate);
  bg_signal_free(s);
  bg_buf_free(a);
  bg_buf_free(b);
}
END_TEST

/* After a timeout (a wait that is never satisfied, on each queue kind), bg_dev_recover drops the stuck work and the
 * same device copies and runs a kernel. */
START_TEST(test_timeout_recovered) {
  bg_signal *never;
  OK(bg_signal_new(D, 0, &never));
  for (int kind = 0; kind < 2; kind++) {
    bg_queue *q;
    OK(bg_queue_new(D, (enum bg_queue_kind)kind, &q));
    bg_queue_wait(q, bg_sig(never), bg_const(1));
    bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
    OK(bg_queue_submit(q, NULL, 0));
    ck_assert_int_eq(bg_dev_synchronize(D, 300), -BG_ETIMEDOUT);
    ck_assert_int_eq(bg_dev_synchronize(D, 300), -BG_ETIMEDOUT); /* latched */
    OK(bg_dev_recover(D));
    OK(bg_dev_synchronize(D, 0));
    bg_queue_free(q);
  }
  bg_buf *a, *b;
  OK(bg_buf_alloc(D, 1u << 16, 0, &a));
  OK(bg_buf_alloc(D, 1u << 16, 0, &b));
  copy_and_check(a, b);
#if BG_HAVE_LLVM
  if (mock_amd_chip_id(G) == MOCK_AMD_GFX11) kernel_and_check();
#endif
  ck_assert_uint_eq(sigval(never), 0);
  bg_buf_free(a);
  bg_buf_free(b);
  bg_signal_free(never);
}
END_TEST

#if BG_HAVE_LLVM
/* A dispatch of 100000 x 1 x 1 threads reaches the emulated CP only past the core's checks: lower one exec through the
 * backend and submit its bytes to the compute ring directly. The CP refuses it naming COMPUTE_NUM_THREAD_X. */
START_TEST(test_cp_refuses_oversized_workgroup) {
  if (mock_amd_chip_id(G) != MOCK_AMD_GFX11) return;
  bg_program *p = load_add1();
  bg_buf *in, *out, *kargs;
  OK(bg_buf_alloc(D, 1u << 20, 0, &in));
  OK(bg_buf_alloc(D, 1u << 20, 0, &out));
  bg_queue *q;
  OK(bg_queue_new(D, BG_QUEUE_COMPUTE, &q)); /* creates the hardware ring */
  ir_ctx *ir = ir_new();
  ck_assert_ptr_nonnull(ir);
  const ir_node *args[2] = {ir_const_int(ir, IR_DT_UINT64, (int64_t)bg_buf_va(out)),
                            ir_const_int(ir, IR_DT_UINT64, (int64_t)bg_buf_va(in))};
  bg_cmd c;
  memset(&c, 0, sizeof(c));
  c.op = BG_CMD_EXEC;
  c.prg = p;
  c.args = args;
  for (int k = 0; k < 3; k++) {
    c.gsz[k] = ir_const_int(ir, IR_DT_UINT64, 1);
    c.lsz[k] = ir_const_int(ir, IR_DT_UINT64, k ? 1 : 100000);
  }
  bg_tmpl t;
  memset(&t, 0, sizeof(t));
  t.ir = ir;
  OK(D->ops->lower(D, D->hwq[BG_QUEUE_COMPUTE], &c, 1, &t));
  OK(bg_buf_alloc(D, t.kargs_len, 0, &kargs));
  uint64_t slots[BG_NSLOTS] = {0};
  slots[BG_SLOT_KARGS_BASE] = bg_buf_va(kargs);
  const uint64_t all[2] = {~0ull, ~0ull};
  bg_tmpl_apply(&t, slots, all, true);
  OK(bg_buf_write(kargs, 0, t.kargs, t.kargs_len));
  OK(D->ops->submit(D, D->hwq[BG_QUEUE_COMPUTE], t.cmd, t.cmd_len));
  ck_assert_msg(mock_amd_engines_wait_idle(G, 10000) == 0, "the CP still runs the dispatch");
  mock_amd_pm4_stats ps;
  ck_assert(mock_amd_pm4_stats_get(G, &ps) && ps.hung);
  ck_assert_msg(strstr(mock_amd_failures(G), "COMPUTE_NUM_THREAD_X 0x186a0"), "%s", mock_amd_failures(G));
  mock_amd_clear_failures(G);
  /* the driver hears of it at once (the submit bypassed the core, so ask the backend's check directly) */
  ck_assert_int_eq(D->ops->fault_check(D), -BG_EHANG);
  ck_assert_msg(strstr(bg_last_error(), "SQ interrupt"), "%s", bg_last_error());
  bg_tmpl_free(&t);
  ir_free(ir);
  /* The HQD is reset and runs a correct kernel on the same device. */
  OK(bg_dev_recover(D));
  kernel_and_check();
  bg_queue_free(q);
  bg_program_free(p);
  bg_buf_free(kargs);
  bg_buf_free(in);
  bg_buf_free(out);
}
END_TEST
#endif

#if BG_HAVE_LLVM
static const char SPIN_IR[] = /* loops while *flag == 0: never ends */
    "define amdgpu_kernel void @spin(ptr addrspace(1) %flag) {\n"
    "entry:\n  br label %loop\n"
    "loop:\n  %v = load volatile i32, ptr addrspace(1) %flag\n  %z = icmp eq i32 %v, 0\n"
    "  br i1 %z, label %loop, label %done\n"
    "done:\n  ret void\n}\n";
static const char WILD_IR[] = /* stores 1 TiB past out */
    "define amdgpu_kernel void @wild(ptr addrspace(1) %out) {\n"
    "  %p = getelementptr i8, ptr addrspace(1) %out, i64 1099511627776\n"
    "  store volatile i32 1, ptr addrspace(1) %p\n  ret void\n}\n";

static bg_program *load_one(const char *ir, const char *name) {
  static const uint8_t sizes[1] = {8};
  void *obj;
  size_t n;
  OK(bg_llvm_amdgpu_compile(ir, bg_dev_arch(D), &obj, &n));
  bg_program_info info = {name, 1, sizes};
  bg_program *p;
  OK(bg_program_load(D, obj, n, &info, &p));
  free(obj);
  return p;
}

/* A kernel that never ends: the progress check reports the compute queue standing at its dispatch; recovery's
 * dequeue request stops the waves (the model's shader core polls for it), and the device runs add1 again. Twice, so
 * the second hang is found on a recovered queue. Without the dequeue the model refuses the HQD's re-activation. */
START_TEST(test_endless_kernel_recovered) {
  if (mock_amd_chip_id(G) != MOCK_AMD_GFX11) return;
  bg_program *spin = load_one(SPIN_IR, "spin");
  bg_buf *flag;
  OK(bg_buf_alloc(D, 4096, BG_BUF_ZERO, &flag));
  for (int round = 0; round < 2; round++) {
    const uint32_t g[3] = {1, 1, 1}, l[3] = {32, 1, 1};
    OK(bg_program_run(spin, &flag, 1, NULL, 0, g, l, false, NULL));
    ck_assert_int_eq(bg_dev_synchronize(D, 0), -BG_EHANG);
    ck_assert_msg(strstr(bg_last_error(), "compute queue") && strstr(bg_last_error(), "hung") &&
                  strstr(bg_last_error(), "PACKET3_DISPATCH_DIRECT"), "%s", bg_last_error());
    OK(bg_dev_recover(D));
    kernel_and_check();
  }
  mock_amd_pm4_stats ps;
  ck_assert(mock_amd_pm4_stats_get(G, &ps) && !ps.hung);
  bg_buf_free(flag);
  bg_program_free(spin);
}
END_TEST

/* The GPU loses a doorbell: the queue has work and a met wait (the timeline's) at its read pointer, which it never
 * passes. Reported as a hang of the compute queue at PACKET3_WAIT_REG_MEM; recovery makes the device run again. */
START_TEST(test_lost_doorbell_recovered) {
  if (mock_amd_chip_id(G) != MOCK_AMD_GFX11) return;
  bg_program *p = load_add1();
  bg_buf *in, *out;
  OK(bg_buf_alloc(D, 256, 0, &in));
  OK(bg_buf_alloc(D, 256, 0, &out));
  bg_buf *bufs[2] = {out, in};
  const uint32_t g[3] = {2, 1, 1}, l[3] = {32, 1, 1};
  OK(bg_program_run(p, bufs, 2, NULL, 0, g, l, true, NULL)); /* the ring is set up and has run */
  ck_assert_int_eq(mock_amd_inject_doorbell_drop(G, 1), 0);
  OK(bg_program_run(p, bufs, 2, NULL, 0, g, l, false, NULL));
  ck_assert_int_eq(bg_dev_synchronize(D, 0), -BG_EHANG);
  ck_assert_msg(strstr(bg_last_error(), "compute queue") && strstr(bg_last_error(), "PACKET3_WAIT_REG_MEM"), "%s",
                bg_last_error());
  ck_assert_uint_eq(mock_amd_doorbells_dropped(G), 1);
  OK(bg_dev_recover(D));
  kernel_and_check();
  bg_program_free(p);
  bg_buf_free(in);
  bg_buf_free(out);
}
END_TEST

/* A kernel storing to an unmapped address: the page fault interrupt is -BG_EHANG with the address; recovery. */
START_TEST(test_wild_store_recovered) {
  if (mock_amd_chip_id(G) != MOCK_AMD_GFX11) return;
  bg_program *wild = load_one(WILD_IR, "wild");
  bg_buf *out;
  OK(bg_buf_alloc(D, 4096, 0, &out));
  const uint32_t g[3] = {1, 1, 1}, l[3] = {32, 1, 1};
  OK(bg_program_run(wild, &out, 1, NULL, 0, g, l, false, NULL));
  ck_assert_int_eq(bg_dev_synchronize(D, 0), -BG_EHANG);
  char want[64];
  snprintf(want, sizeof(want), "0x%" PRIx64, (uint64_t)((bg_buf_va(out) + ((uint64_t)1 << 40)) & ~(uint64_t)0xfff));
  ck_assert_msg(strstr(bg_last_error(), "page fault") && strstr(bg_last_error(), want), "%s (want %s)", bg_last_error(),
                want);
  OK(bg_dev_recover(D)); /* returns once the CP has left the faulting dispatch (CP_HQD_ACTIVE 0) */
  ck_assert_msg(strstr(mock_amd_failures(G), "VM fault") && strstr(mock_amd_failures(G), "rdna3: write fault"), "%s",
                mock_amd_failures(G));
  mock_amd_clear_failures(G);
  kernel_and_check();
  bg_buf_free(out);
  bg_program_free(wild);
}
END_TEST
#endif

static Suite *suite(void) {
  Suite *s = suite_create("am-queue-faults");
  for (int chip = 0; chip < 2; chip++) {
    TCase *tc = tcase_create(chip ? "gfx12" : "gfx11");
    tcase_add_checked_fixture(tc, chip ? setup12 : setup11, teardown);
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_sdma_fault_reported_and_recovered);
    tcase_add_test(tc, test_timeout_recovered);
#if BG_HAVE_LLVM
    tcase_add_test(tc, test_cp_refuses_oversized_workgroup);
    tcase_add_test(tc, test_endless_kernel_recovered);
    tcase_add_test(tc, test_lost_doorbell_recovered);
    tcase_add_test(tc, test_wild_store_recovered);
#endif
    suite_add_tcase(s, tc);
  }
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
