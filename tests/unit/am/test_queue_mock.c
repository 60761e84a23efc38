/* tests/unit/am/test_queue_mock.c: AMD as an HCQ device on the emulated GPU of tests/mockgpu, in process: the fake
 * sysfs tree is the process's BG_SYSFS_ROOT, so DEV=PCI+AMD takes the real driver path (scan, open, boot, HCQ
 * backend) over it. Checks signals and waits on the compute (PM4) and copy (SDMA) queues, copies between VRAM and
 * host memory (split COPY_LINEAR, ring wrap with NOP padding), timestamps, re-submits with patched operands, the
 * warm start of a second open, and zero model failures. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "am/am_hcq.h"
#include "amd_gmc.h"
#include "amd_gpu.h"
#include "amd_pm4.h"
#include "amd_sdma_exec.h"
#include "amd_test_kernels.h"
#include "amd_testbed.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"
#include "../check_helpers.h"

/* Signal reads and writes that must succeed: they return 0 or a negative BG_E* (baregpu/error.h). */
#endif


static amd_testbed TB;
static mock_amd *G; /* TB.gpu */
static bg_dev *D;

static void setup_chip(mock_amd_chip chip) {
  mock_amd_cfg cfg = {.chip = chip};
  OK(amd_testbed_new(&TB, &cfg, "bg_queue"));
  G = TB.gpu;
  amd_testbed_export_fw_dir(&TB);
  setenv("BG_WAIT_TIMEOUT_MS", "5000", 1);
  D = NULL;
  OK(bg_dev_open("PCI+AMD", &D));
}

static void setup11(void) { setup_chip(MOCK_AMD_GFX11); }
static void setup12(void) { setup_chip(MOCK_AMD_MOCK); }

static void teardown(void) {
  if (D) bg_dev_close(D);
  mock_amd_pm4_stats ps;
  mock_amd_sdma_stats ss;
  ck_assert(mock_amd_pm4_stats_get(G, &ps) && !ps.hung);
  ck_assert(mock_amd_sdma_stats_get(G, &ss) && !ss.hung);
  char msg[4096];
  unsigned nfail = amd_testbed_failures(&TB, msg, sizeof(msg));
  amd_testbed_free(&TB);
  ck_assert_msg(nfail == 0, "unexpected model failures:\n%s", msg);
}

START_TEST(test_open) {
  ck_assert_str_eq(bg_dev_arch(D), mock_amd_chip_id(G) == MOCK_AMD_GFX11 ? "gfx1100" : "gfx1200");
  ck_assert(bg_dev_has_copy_queue(D));
  ck_assert_double_eq(bg_dev_ticks_per_us(D), 100.0);
  OK(bg_dev_synchronize(D, 0)); /* nothing submitted: the timeline is at 0 */
}
END_TEST

/* signal / wait on each queue kind, with a variable value re-submitted several times. */
static void signal_wait(enum bg_queue_kind kind) {
  bg_signal *s, *w;
  OK(bg_signal_new(D, 0, &s));
  OK(bg_signal_new(D, 0, &w));
  bg_queue *q;
  OK(bg_queue_new(D, kind, &q));
  bg_queue_wait(q, bg_sig(w), bg_var(q, 0, "v", 0, 1u << 30));
  bg_queue_signal(q, bg_sig(s), bg_var(q, 0, "v", 0, 1u << 30));
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  for (uint64_t v = 1; v <= 20; v++) {
    SIGSET(w, v);
    OK(bg_queue_submit(q, &v, 1));
    OK(bg_signal_wait(s, v, 0));
  }
  /* A wait that is not yet satisfied holds the queue until the host sets the signal. */
  uint64_t v = 30;
  OK(bg_queue_submit(q, &v, 1));
  usleep(20000);
  ck_assert_uint_eq(sigval(s), 20);
  SIGSET(w, 30);
  OK(bg_signal_wait(s, 30, 0));
  OK(bg_dev_synchronize(D, 0));
  bg_queue_stats st;
  bg_queue_get_stats(q, &st);
  ck_assert_uint_eq(st.submits, 21);
  bg_queue_free(q);
  bg_signal_free(s);
  bg_signal_free(w);
}

START_TEST(test_signal_wait_compute) { signal_wait(BG_QUEUE_COMPUTE); }
END_TEST
START_TEST(test_signal_wait_copy) { signal_wait(BG_QUEUE_COPY); }
END_TEST

START_TEST(test_copies) {
  const size_t n = 3u << 20;
  bg_buf *host, *vram, *back;
  OK(bg_buf_alloc(D, n, BG_BUF_HOST | BG_BUF_CPU_ACCESS, &host));
  OK(bg_buf_alloc(D, n, 0, &vram));
  OK(bg_buf_alloc(D, n, BG_BUF_HOST | BG_BUF_CPU_ACCESS | BG_BUF_ZERO, &back));
  uint8_t *h = bg_buf_cpu(host);
  ck_assert_ptr_nonnull(h);
  for (size_t i = 0; i < n; i++) h[i] = (uint8_t)(i * 131 + 7);
  bg_queue *q;
  OK(bg_queue_new(D, BG_QUEUE_COPY, &q));
  bg_queue_copy(q, bg_addr(vram, 0), bg_addr(host, 0), n);
  bg_queue_copy(q, bg_addr(back, 0), bg_addr(vram, 0), n);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  OK(bg_queue_submit(q, NULL, 0));
  OK(bg_dev_synchronize(D, 0));
  ck_assert_mem_eq(bg_buf_cpu(back), h, n);
  /* copyout of VRAM: a small read through the BAR, a large one through SDMA and the staging buffer */
  uint8_t *tmp = malloc(n);
  OK(bg_buf_read(vram, n - 4096, tmp, 4096));
  ck_assert_mem_eq(tmp, h + n - 4096, 4096);
  memset(tmp, 0, n);
  OK(bg_buf_read(vram, 0, tmp, n));
  ck_assert_mem_eq(tmp, h, n);
  /* copyin through the CPU view (+HDP flush), read back through SDMA */
  for (size_t i = 0; i < n; i++) tmp[i] = (uint8_t)(i * 7 + 1);
  OK(bg_buf_write(vram, 0, tmp, n));
  memset(bg_buf_cpu(back), 0, n);
  OK(bg_buf_read(vram, 0, bg_buf_cpu(back), n));
  ck_assert_mem_eq(bg_buf_cpu(back), tmp, n);
  free(tmp);
  bg_queue_free(q);
  /* Many small symbolic copies: ring wrap with NOP padding is exercised by a ring of 16 MiB only after
   * many submits, so count on bytes: each submit here is 7+4 dwords. */
  bg_queue *q2;
  OK(bg_queue_new(D, BG_QUEUE_COPY, &q2));
  bg_queue_copy(q2, bg_add(q2, bg_addr(back, 0), bg_var(q2, 0, "off", 0, 255)), bg_addr(host, 0), 1);
  bg_queue_signal(q2, bg_timeline_addr(q2), bg_timeline_value(q2, 0));
  for (uint64_t i = 0; i < 256; i++) OK(bg_queue_submit(q2, &i, 1));
  OK(bg_dev_synchronize(D, 0));
  for (size_t i = 0; i < 256; i++) ck_assert_uint_eq(((uint8_t *)bg_buf_cpu(back))[i], h[0]);
  bg_queue_free(q2);
  bg_buf_free(host);
  bg_buf_free(vram);
  bg_buf_free(back);
}
END_TEST

START_TEST(test_timestamps) {
  bg_signal *t0, *t1;
  OK(bg_signal_new(D, 0, &t0));
  OK(bg_signal_new(D, 0, &t1));
  for (int k = 0; k < 2; k++) {
    bg_queue *q;
    OK(bg_queue_new(D, k ? BG_QUEUE_COPY : BG_QUEUE_COMPUTE, &q));
    bg_queue_timestamp(q, bg_sig(t0));
    if (!k) bg_queue_memory_barrier(q);
    bg_queue_timestamp(q, bg_sig(t1));
    bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
    OK(bg_queue_submit(q, NULL, 0));
    OK(bg_dev_synchronize(D, 0));
    ck_assert_uint_ne(sigts(t0), 0);
    ck_assert_uint_ge(sigts(t1), sigts(t0));
    bg_queue_free(q);
  }
  bg_signal_free(t0);
  bg_signal_free(t1);
}
END_TEST

START_TEST(test_cross_queue) {
  /* compute signals s, the copy queue waits for it before signalling the timeline. */
  bg_signal *s;
  OK(bg_signal_new(D, 0, &s));
  bg_queue *c, *k;
  OK(bg_queue_new(D, BG_QUEUE_COMPUTE, &c));
  OK(bg_queue_new(D, BG_QUEUE_COPY, &k));
  bg_queue_signal(c, bg_sig(s), bg_var(c, 0, "v", 0, INT32_MAX));
  bg_queue_wait(k, bg_sig(s), bg_var(k, 0, "v", 0, INT32_MAX));
  bg_queue_signal(k, bg_timeline_addr(k), bg_timeline_value(k, 0));
  for (uint64_t v = 1; v <= 500; v++) {
    OK(bg_queue_submit(k, &v, 1));
    OK(bg_queue_submit(c, &v, 1));
  }
  OK(bg_dev_synchronize(D, 0));
  ck_assert_uint_eq(sigval(s), 500);
  bg_queue_free(c);
  bg_queue_free(k);
  bg_signal_free(s);
}
END_TEST

/* Programs of 2000 signals, submitted until both 16 MiB rings have wrapped (PM4: split copy; SDMA: NOP padding). */
START_TEST(test_ring_wrap) {
  bg_signal *s;
  OK(bg_signal_new(D, 0, &s));
  for (int kind = 0; kind < 2; kind++) {
    bg_queue *q;
    OK(bg_queue_new(D, kind ? BG_QUEUE_COPY : BG_QUEUE_COMPUTE, &q));
    for (int i = 0; i < 2000; i++) bg_queue_signal(q, bg_sig(s), bg_add(q, bg_var(q, 0, "v", 0, 1u << 20), bg_const((uint64_t)i)));
    bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
    bg_queue_stats st;
    uint64_t v = 0;
    OK(bg_queue_submit(q, &v, 1));
    bg_queue_get_stats(q, &st);
    uint64_t submits = (16u << 20) / st.template_bytes + 2;
    for (v = 1; v <= submits; v++) OK(bg_queue_submit(q, &v, 1));
    OK(bg_dev_synchronize(D, 0));
    ck_assert_uint_eq(sigval(s), submits + 1999);
    mock_amd_pm4_stats ps;
    mock_amd_sdma_stats ss;
    ck_assert(mock_amd_pm4_stats_get(G, &ps) && mock_amd_sdma_stats_get(G, &ss));
    if (kind) ck_assert_uint_gt(ss.rptr, 16u << 20);        /* bytes */
    else ck_assert_uint_gt(ps.rptr, (16u << 20) / 4);       /* dwords */
    bg_queue_free(q);
  }
  bg_signal_free(s);
}
END_TEST

/* A VM fault while a wait blocks: the host wait's fault check (after 200 ms without progress) reports a hang naming
 * the faulting address and where the compute queue stands; the device then recovers when the signal is set. */
START_TEST(test_fault_report) {
  bg_signal *w;
  OK(bg_signal_new(D, 0, &w));
  bg_queue *q;
  OK(bg_queue_new(D, BG_QUEUE_COMPUTE, &q));
  bg_queue_wait(q, bg_sig(w), bg_const(1));
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  OK(bg_queue_submit(q, NULL, 0));
  ck_assert_int_eq(mock_amd_vm_fault(G, 27, 0, 0x7f1234567000ull, 0x3ff), 0);
  int r = bg_signal_wait(bg_dev_timeline(D), bg_dev_timeline_value(D) - 1, 2000);
  ck_assert_int_eq(r, -BG_EHANG);
  ck_assert_msg(strstr(bg_last_error(), "0x7f1234567000") && strstr(bg_last_error(), "PACKET3_WAIT_REG_MEM") &&
                strstr(bg_last_error(), "compute queue"), "%s", bg_last_error());
  SIGSET(w, 1);
  OK(bg_dev_synchronize(D, 0));
  bg_queue_free(q);
  bg_signal_free(w);
  /* The fault marks the state untrusted: the next open boots cold (PSP commands again). */
  size_t n0 = mock_amd_psp_ncmds(G);
  bg_dev_close(D);
  D = NULL;
  OK(bg_dev_open("PCI+AMD", &D));
  ck_assert_uint_ne(mock_amd_psp_ncmds(G), n0);
  signal_wait(BG_QUEUE_COPY);
}
END_TEST

#if BG_HAVE_LLVM
/* Private memory: a volatile per-lane array forces scratch (flat scratch / buffer resource, TMPRING_SIZE). */
static const char *priv_ir =
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "define amdgpu_kernel void @priv(ptr addrspace(1) %out, i32 %k) {\n"
    "  %a = alloca [16 x i32], align 4, addrspace(5)\n"
    "  %l = call i32 @llvm.amdgcn.workitem.id.x()\n"
    "  %i = and i32 %k, 15\n"
    "  %p = getelementptr [16 x i32], ptr addrspace(5) %a, i32 0, i32 %i\n"
    "  %m = mul i32 %l, 3\n"
    "  store volatile i32 %m, ptr addrspace(5) %p\n"
    "  %v = load volatile i32, ptr addrspace(5) %p\n"
    "  %po = getelementptr i32, ptr addrspace(1) %out, i32 %l\n"
    "  store i32 %v, ptr addrspace(1) %po\n"
    "  ret void\n"
    "}\n";

/* LLVM IR compiled for the device's arch and loaded as a program of nargs arguments of these sizes. */
static bg_program *load_ir(const char *ir, const char *name, unsigned nargs, const uint8_t *sizes) {
  void *obj;
  size_t n;
  OK(bg_llvm_amdgpu_compile(ir, bg_dev_arch(D), &obj, &n));
  bg_program_info info = {name, nargs, sizes};
  bg_program *p;
  OK(bg_program_load(D, obj, n, &info, &p));
  free(obj);
  return p;
}

START_TEST(test_kernel_scratch) {
  if (mock_amd_chip_id(G) != MOCK_AMD_GFX11) return;
  static const uint8_t sizes[2] = {8, 4};
  bg_program *p = load_ir(priv_ir, "priv", 2, sizes);
  bg_buf *b;
  OK(bg_buf_alloc(D, 32 * 4, BG_BUF_ZERO, &b));
  const uint32_t g[3] = {1, 1, 1}, l[3] = {32, 1, 1};
  uint64_t k = 5;
  int r = bg_program_run(p, &b, 1, &k, 1, g, l, true, NULL);
  ck_assert_msg(r == 0, "run: %s\n%s", bg_last_error(), mock_amd_failures(G));
  uint32_t out[32];
  OK(bg_buf_read(b, 0, out, sizeof(out)));
  for (uint32_t i = 0; i < 32; i++) ck_assert_uint_eq(out[i], 3 * i);
  bg_program_free(p);
  bg_buf_free(b);
}
END_TEST

/* out[i] = in[i] + 1 over 4 work-groups of 32 (AMD_TEST_ADD1_IR): code object from LLVM, loaded, dispatched through
 * PM4, run by the emulated RDNA3 core (gfx11 only). Kernel arguments, grid and local size reach the CP as recorded. */
START_TEST(test_kernel) {
  if (mock_amd_chip_id(G) != MOCK_AMD_GFX11) return; /* the emulated shader core is RDNA3 */
  static const uint8_t sizes[2] = {8, 8};
  bg_program *p = load_ir(AMD_TEST_ADD1_IR, "add1", 2, sizes);
  bg_buf *b[2];
  OK(bg_buf_alloc(D, 128 * 4, 0, &b[0]));
  OK(bg_buf_alloc(D, 128 * 4, 0, &b[1]));
  float in[128], out[128];
  for (int i = 0; i < 128; i++) in[i] = (float)i * 0.5f;
  OK(bg_buf_write(b[1], 0, in, sizeof(in)));
  const uint32_t g[3] = {4, 1, 1}, l[3] = {32, 1, 1};
  double us = 0;
  int r = bg_program_run(p, b, 2, NULL, 0, g, l, true, &us);
  if (r < 0 && strstr(mock_amd_failures(G), "no shader core")) {
    fprintf(stderr, "test_kernel: the emulated GPU has no shader core in this build; dispatch not checked\n");
    mock_amd_clear_failures(G);
    bg_dev_close(D); /* latched error: reopen for the teardown */
    D = NULL;
    return;
  }
  ck_assert_msg(r == 0, "run: %s\n%s", bg_last_error(), mock_amd_failures(G));
  OK(bg_buf_read(b[0], 0, out, sizeof(out)));
  for (int i = 0; i < 128; i++) ck_assert_msg(out[i] == in[i] + 1.0f, "out[%d] = %g", i, (double)out[i]);
  ck_assert(us >= 0);
  /* The same recorded run again with the buffers swapped and half the grid: only patched fields change. */
  bg_buf *sw[2] = {b[1], b[0]};
  const uint32_t g2[3] = {2, 1, 1};
  r = bg_program_run(p, sw, 2, NULL, 0, g2, l, true, NULL);
  ck_assert_msg(r == 0, "second run: %s\n%s", bg_last_error(), mock_amd_failures(G));
  OK(bg_buf_read(b[1], 0, out, sizeof(out)));
  for (int i = 0; i < 128; i++)
    ck_assert_msg(out[i] == (i < 64 ? in[i] + 2.0f : in[i]), "second run: out[%d] = %g", i, (double)out[i]);
  bg_program_free(p);
  bg_buf_free(b[0]);
  bg_buf_free(b[1]);
}
END_TEST
/* A wave halting on an instruction the shader core rejects raises an SQ interrupt: the wait reports a hang naming it
 * within the 200 ms progress check instead of running into the timeout. The device is then reopened (cold boot). */
START_TEST(test_shader_error_report) {
  if (mock_amd_chip_id(G) != MOCK_AMD_GFX11) return;
  static const char *bad_ir = "define amdgpu_kernel void @bad(ptr addrspace(1) %out) {\n"
                              "  call void asm sideeffect \".long 0xbfc70000\", \"\"()\n" /* SOPP 71: not gfx11 */
                              "  ret void\n"
                              "}\n";
  static const uint8_t sizes[1] = {8};
  bg_program *p = load_ir(bad_ir, "bad", 1, sizes);
  bg_buf *b;
  OK(bg_buf_alloc(D, 256, 0, &b));
  const uint32_t g[3] = {1, 1, 1}, l[3] = {32, 1, 1};
  int r = bg_program_run(p, &b, 1, NULL, 0, g, l, true, NULL);
  ck_assert_int_eq(r, -BG_EHANG);
  ck_assert_msg(strstr(bg_last_error(), "SQ interrupt"), "%s", bg_last_error());
  ck_assert_msg(strstr(mock_amd_failures(G), "bfc70000"), "%s", mock_amd_failures(G));
  mock_amd_clear_failures(G);
  bg_program_free(p);
  bg_buf_free(b);
  bg_dev_close(D);
  D = NULL;
  OK(bg_dev_open("PCI+AMD", &D));
  signal_wait(BG_QUEUE_COMPUTE);
}
END_TEST

/* Code objects load on either chip (the shader core only executes gfx11, so gfx12 stops at the load): LLVM's object
 * for the device's own arch is relocated and uploaded; one for another arch (gfx942) is refused naming both. */
START_TEST(test_code_object_load) {
  static const uint8_t sizes[2] = {8, 8};
  bg_program *p = load_ir(AMD_TEST_ADD1_IR, "add1", 2, sizes);
  ck_assert_str_eq(bg_program_name(p), "add1");
  ck_assert_uint_eq(bg_program_kernargs_size(p), 16);
  bg_program_free(p);
  void *obj;
  size_t n;
  OK(bg_llvm_amdgpu_compile(AMD_TEST_ADD1_IR, "gfx942", &obj, &n));
  bg_program_info info = {"add1", 2, sizes};
  ck_assert_int_lt(bg_program_load(D, obj, n, &info, &p), 0);
  ck_assert_msg(strstr(bg_last_error(), "gfx942") && strstr(bg_last_error(), bg_dev_arch(D)), "%s", bg_last_error());
  free(obj);
}
END_TEST
#endif

/* A queue blocked in a wait: submits fill its ring up to (never over) what the engine has not read, then time out
 * naming the queue; after the host sets the signal everything submitted runs. */
START_TEST(test_ring_full) {
  setenv("BG_WAIT_TIMEOUT_MS", "300", 1);
  bg_signal *w, *s;
  OK(bg_signal_new(D, 0, &w));
  OK(bg_signal_new(D, 0, &s));
  for (int kind = 0; kind < 2; kind++) {
    enum bg_queue_kind qk = kind ? BG_QUEUE_COPY : BG_QUEUE_COMPUTE;
    bg_queue *blk, *q, *tl;
    OK(bg_queue_new(D, qk, &blk));
    OK(bg_queue_new(D, qk, &q));
    OK(bg_queue_new(D, qk, &tl));
    SIGSET(s, 0);
    bg_queue_wait(blk, bg_sig(w), bg_const((uint64_t)kind + 1));
    bg_queue_signal(tl, bg_timeline_addr(tl), bg_timeline_value(tl, 0));
    for (int i = 0; i < 2000; i++) bg_queue_signal(q, bg_sig(s), bg_var(q, 0, "v", 0, 1u << 30));
    OK(bg_queue_submit(blk, NULL, 0));
    uint64_t v = 0;
    int r = 0;
    while (r == 0 && v < 10000) {
      v++;
      r = bg_queue_submit(q, &v, 1);
    }
    ck_assert_int_eq(r, -BG_ETIMEDOUT);
    ck_assert_msg(strstr(bg_last_error(), "ring full") && strstr(bg_last_error(), kind ? "copy queue" : "compute queue"),
                  "%s", bg_last_error());
    bg_queue_stats st;
    bg_queue_get_stats(q, &st);
    ck_assert_uint_ge((st.submits + 1) * st.template_bytes, 16u << 20); /* it was full, not refused early */
    ck_assert_uint_eq(sigval(s), 0);                           /* nothing ran past the wait */
    SIGSET(w, (uint64_t)kind + 1);
    OK(bg_queue_submit(tl, NULL, 0));
    OK(bg_dev_synchronize(D, 0));
    ck_assert_uint_eq(sigval(s), v - 1); /* the last submit that fitted */
    bg_queue_free(blk);
    bg_queue_free(q);
    bg_queue_free(tl);
  }
  bg_signal_free(w);
  bg_signal_free(s);
  setenv("BG_WAIT_TIMEOUT_MS", "5000", 1);
}
END_TEST

/* A second open of the same function shares the GPU (one AM device per function and process, like tinygrad's
 * device singleton): one address space, one ring per engine, each bg_dev with its own timeline. */
START_TEST(test_shared_open) {
  bg_dev *d2 = NULL;
  OK(bg_dev_open("PCI+AMD", &d2));
  const size_t n = 1u << 20;
  bg_buf *host, *v2;
  OK(bg_buf_alloc(D, n, BG_BUF_HOST | BG_BUF_CPU_ACCESS, &host));
  OK(bg_buf_alloc(d2, n, 0, &v2));
  for (size_t i = 0; i < n; i++) ((uint8_t *)bg_buf_cpu(host))[i] = (uint8_t)(i ^ (i >> 8));
  bg_queue *q;
  OK(bg_queue_new(D, BG_QUEUE_COPY, &q)); /* D's queue writes d2's buffer: same VA space */
  bg_queue_copy(q, bg_addr(v2, 0), bg_addr(host, 0), n);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  OK(bg_queue_submit(q, NULL, 0));
  OK(bg_dev_synchronize(D, 0));
  uint8_t *back = malloc(n);
  OK(bg_buf_read(v2, 0, back, n)); /* SDMA through d2's staging buffer */
  ck_assert_mem_eq(back, bg_buf_cpu(host), n);
  bg_queue_free(q);
  bg_buf_free(host);
  /* The first opener leaves; the GPU stays up for the second. */
  bg_dev_close(D);
  D = d2;
  memset(back, 0, n);
  OK(bg_buf_read(v2, 0, back, n));
  ck_assert_uint_eq(back[n - 1], (uint8_t)((n - 1) ^ ((n - 1) >> 8)));
  free(back);
  bg_buf_free(v2);
  signal_wait(BG_QUEUE_COMPUTE);
  signal_wait(BG_QUEUE_COPY);
}
END_TEST

START_TEST(test_reopen_warm) {
  size_t n0 = mock_amd_psp_ncmds(G);
  bg_dev_close(D);
  D = NULL;
  OK(bg_dev_open("PCI+AMD", &D));
  ck_assert_uint_eq(mock_amd_psp_ncmds(G), n0); /* warm: no PSP command */
  signal_wait(BG_QUEUE_COMPUTE);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("am-queue-mock");
  for (int chip = 0; chip < 2; chip++) {
    TCase *tc = tcase_create(chip ? "gfx12" : "gfx11");
    tcase_add_checked_fixture(tc, chip ? setup12 : setup11, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_open);
    tcase_add_test(tc, test_signal_wait_compute);
    tcase_add_test(tc, test_signal_wait_copy);
    tcase_add_test(tc, test_copies);
    tcase_add_test(tc, test_timestamps);
    tcase_add_test(tc, test_cross_queue);
    tcase_add_test(tc, test_ring_wrap);
    tcase_add_test(tc, test_ring_full);
    tcase_add_test(tc, test_fault_report);
#if BG_HAVE_LLVM
    tcase_add_test(tc, test_kernel);
    tcase_add_test(tc, test_kernel_scratch);
    tcase_add_test(tc, test_code_object_load);
    tcase_add_test(tc, test_shader_error_report);
#endif
    tcase_add_test(tc, test_shared_open);
    tcase_add_test(tc, test_reopen_warm);
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
