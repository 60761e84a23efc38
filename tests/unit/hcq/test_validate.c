/* tests/unit/hcq/test_validate.c: queue programs are checked before anything runs, on CPU, MOCKPCI+AMD and
 * MOCKUSB+AMD alike (the checks live in the HCQ core): a copy that overruns its destination or source buffer, or
 * touches no live allocation (constant operands at record time, symbolic ones at submit); a work-group larger than
 * the device's or the kernel's limit, or of size 0; an unknown queue kind or buffer flag. Each is an error naming
 * what is wrong, and the neighbouring buffer, the signal after the bad command, and the device stay untouched.
 * Also: a fault on a CPU queue that does not signal the timeline is reported by bg_dev_synchronize, and
 * bg_dev_recover makes the same device run a copy and a kernel again. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baregpu/compile.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#include "cpu/cpu.h"
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
#define HAS(s) ck_assert_msg(strstr(bg_last_error(), (s)) != NULL, "expected '%s' in: %s", (s), bg_last_error())

static const char *const DEVS[] = {"CPU", "MOCKPCI+AMD", "MOCKUSB+AMD"};
static bg_dev *D;

static void setup(int i) {
  D = NULL;
  if (bg_dev_open(DEVS[i], &D) < 0) {
    ck_assert_msg(i > 0, "CPU: %s", bg_last_error());
    fprintf(stderr, "skipping %s: %s\n", DEVS[i], bg_last_error()); /* no emulated GPU module in this build */
    D = NULL;
  }
}

/* add1(out, in, n): out[i] = in[i] + 1 for i < n, i = work-group id * lsz + local id. The AMD kernel declares at
 * most 64 threads per work-group (below the device's 1024). */
static const char add1_c[] =
    "#include <stdint.h>\n"
    "void add1(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]);\n"
    "void add1(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
    "  float *out; const float *in; int32_t n; const unsigned char *p = ka; (void)gsz;\n"
    "  __builtin_memcpy(&out, p, 8); __builtin_memcpy(&in, p + 8, 8); __builtin_memcpy(&n, p + 16, 4);\n"
    "  for (uint32_t l = 0; l < lsz[0]; l++) { int64_t i = (int64_t)gid[0] * lsz[0] + l; if (i < n) out[i] = in[i] + 1.0f; }\n"
    "}\n";
#if BG_HAVE_LLVM
static const char add1_ir[] =
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "declare i32 @llvm.amdgcn.workgroup.id.x()\n"
    "define amdgpu_kernel void @add1(ptr addrspace(1) %out, ptr addrspace(1) %in, i32 %n) #0 {\n"
    "  %l = call i32 @llvm.amdgcn.workitem.id.x()\n"
    "  %g = call i32 @llvm.amdgcn.workgroup.id.x()\n"
    "  %gs = mul i32 %g, 32\n"
    "  %i = add i32 %gs, %l\n"
    "  %ok = icmp slt i32 %i, %n\n"
    "  br i1 %ok, label %do, label %end\n"
    "do:\n"
    "  %pi = getelementptr float, ptr addrspace(1) %in, i32 %i\n"
    "  %v = load float, ptr addrspace(1) %pi\n"
    "  %r = fadd float %v, 1.0\n"
    "  %po = getelementptr float, ptr addrspace(1) %out, i32 %i\n"
    "  store float %r, ptr addrspace(1) %po\n"
    "  br label %end\n"
    "end:\n"
    "  ret void\n"
    "}\n"
    "attributes #0 = { \"amdgpu-flat-work-group-size\"=\"1,64\" }\n";
#endif
static const uint8_t add1_sizes[3] = {8, 8, 4};

/* NULL when this build cannot compile for the device (no LLVM): the kernel checks are skipped there. */
static bg_program *load_add1(void) {
  void *bin = NULL;
  size_t n = 0;
  if (strcmp(bg_dev_arch(D), "host") == 0) {
    OK(bg_compile_c(add1_c, NULL, &bin, &n));
  } else {
#if BG_HAVE_LLVM
    OK(bg_llvm_amdgpu_compile(add1_ir, bg_dev_arch(D), &bin, &n));
#else
    return NULL;
#endif
  }
  bg_program_info info = {"add1", 3, add1_sizes};
  bg_program *p = NULL;
  OK(bg_program_load(D, bin, n, &info, &p));
  free(bin);
  return p;
}

static void fill(bg_buf *b, uint8_t v) {
  uint8_t tmp[4096];
  memset(tmp, v, sizeof(tmp));
  OK(bg_buf_write(b, 0, tmp, sizeof(tmp)));
}

static void expect_fill(const bg_buf *b, uint8_t v) {
  uint8_t tmp[4096];
  OK(bg_buf_read(b, 0, tmp, sizeof(tmp)));
  for (size_t i = 0; i < sizeof(tmp); i++) ck_assert_msg(tmp[i] == v, "byte %zu is 0x%x, expected 0x%x", i, tmp[i], v);
}

/* A copy of twice the destination's size used to overwrite the buffer after it and return 0. */
START_TEST(copy_bounds) {
  if (!D) return;
  bg_buf *src, *dst, *next;
  OK(bg_buf_alloc(D, 8192, 0, &src));
  OK(bg_buf_alloc(D, 4096, 0, &dst));
  OK(bg_buf_alloc(D, 4096, 0, &next));
  fill(src, 0xab);
  fill(dst, 0x11);
  fill(next, 0x22);
  bg_signal *s;
  OK(bg_signal_new(D, 0, &s));
  bg_queue *q;
  OK(bg_queue_new(D, BG_QUEUE_COPY, &q));
  /* constant operands: refused when recorded, reported by submit, nothing runs */
  bg_queue_copy(q, bg_addr(dst, 0), bg_addr(src, 0), 8192);
  bg_queue_signal(q, bg_sig(s), bg_const(1));
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL);
  HAS("command 0 (copy): destination");
  HAS("4096 bytes past the end");
  OK(bg_dev_synchronize(D, 0));
  ck_assert_uint_eq(sigval(s), 0);
  expect_fill(next, 0x22);
  expect_fill(dst, 0x11);
  /* the source too, and an address in no allocation */
  bg_queue_reset(q);
  bg_queue_copy(q, bg_addr(dst, 0), bg_addr(dst, 2048), 4096);
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL);
  HAS("source");
  bg_queue_reset(q);
  bg_queue_copy(q, bg_const(8), bg_addr(src, 0), 16);
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL);
  HAS("no live allocation");
  /* symbolic operands: checked at the submit that binds them; a refused submit leaves nothing behind, and the next
   * good one runs with its own values */
  bg_queue_reset(q);
  bg_val off = bg_var(q, 0, "off", 0, 1u << 20);
  bg_queue_copy(q, bg_add(q, bg_addr(dst, 0), off), bg_addr(src, 0), 1024);
  bg_queue_signal(q, bg_sig(s), bg_const(2));
  uint64_t v = 0;
  OK(bg_queue_submit(q, &v, 1));
  OK(bg_signal_wait(s, 2, 0));
  SIGSET(s, 0);
  v = 3584; /* 1024 bytes at dst + 3584 run 512 bytes into `next` */
  ck_assert_int_eq(bg_queue_submit(q, &v, 1), -BG_EINVAL);
  HAS("512 bytes past the end");
  ck_assert_int_eq(bg_queue_submit(q, &v, 1), -BG_EINVAL); /* same values again: still refused */
  OK(bg_dev_synchronize(D, 0));
  ck_assert_uint_eq(sigval(s), 0);
  expect_fill(next, 0x22);
  v = 3072;
  OK(bg_queue_submit(q, &v, 1));
  OK(bg_signal_wait(s, 2, 0));
  uint8_t tail[1024];
  OK(bg_buf_read(dst, 3072, tail, sizeof(tail)));
  for (size_t i = 0; i < sizeof(tail); i++) ck_assert_uint_eq(tail[i], 0xab);
  expect_fill(next, 0x22);
  /* a freed buffer is no copy target */
  bg_buf *gone;
  OK(bg_buf_alloc(D, 4096, 0, &gone));
  uint64_t gone_va = bg_buf_va(gone);
  bg_buf_free(gone);
  bg_queue_reset(q);
  bg_queue_copy(q, bg_const(gone_va), bg_addr(src, 0), 4096);
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL);
  HAS("no live allocation");
  bg_queue_free(q);
  bg_signal_free(s);
  bg_buf_free(src);
  bg_buf_free(dst);
  bg_buf_free(next);
}
END_TEST

/* A work-group of 100000 threads used to hang the emulated command processor. */
START_TEST(workgroup_limits) {
  if (!D) return;
  bg_program *p = load_add1();
  if (!p) return;
  bool amd = strcmp(bg_dev_arch(D), "host") != 0;
  bg_buf *in, *out;
  OK(bg_buf_alloc(D, 4096, 0, &in));
  OK(bg_buf_alloc(D, 4096, 0, &out));
  fill(in, 0);
  fill(out, 0x5a);
  bg_signal *s;
  OK(bg_signal_new(D, 0, &s));
  bg_queue *q;
  OK(bg_queue_new(D, BG_QUEUE_COMPUTE, &q));
  const bg_val args[3] = {bg_addr(out, 0), bg_addr(in, 0), bg_const(1024)};
  const bg_val g1[3] = {bg_const(1), bg_const(1), bg_const(1)};
  const bg_val big[3] = {bg_const(100000), bg_const(1), bg_const(1)};
  bg_queue_exec(q, p, args, 3, g1, big);
  bg_queue_signal(q, bg_sig(s), bg_const(1));
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL);
  HAS("work-group size 100000x1x1");
  HAS("add1");
  HAS(amd ? "kernel: 64" : "device");
  bg_queue_reset(q);
  const bg_val zero[3] = {bg_const(32), bg_const(0), bg_const(1)};
  bg_queue_exec(q, p, args, 3, g1, zero);
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL);
  HAS("work-group size y is 0");
  /* symbolic sizes (bg_program_run binds them as variables): checked at submit */
  bg_buf *bufs[2] = {out, in};
  uint64_t n = 1024;
  const uint32_t g[3] = {32, 1, 1}, l_dev[3] = {2048, 1, 1}, l_kernel[3] = {128, 1, 1}, l_ok[3] = {32, 1, 1};
  ck_assert_int_eq(bg_program_run(p, bufs, 2, &n, 1, g, l_dev, true, NULL), -BG_EINVAL);
  HAS("1024");
  int r = bg_program_run(p, bufs, 2, &n, 1, g, l_kernel, true, NULL);
  if (amd) { /* within the device's limit, beyond the kernel's declared 64 */
    ck_assert_int_eq(r, -BG_EINVAL);
    HAS("kernel: 64");
  } else {
    OK(r);
  }
  OK(bg_dev_synchronize(D, 0));
  ck_assert_uint_eq(sigval(s), 0);
  if (amd) expect_fill(out, 0x5a); /* nothing ran */
  OK(bg_program_run(p, bufs, 2, &n, 1, g, l_ok, true, NULL));
  float f[1024];
  OK(bg_buf_read(out, 0, f, sizeof(f)));
  for (int i = 0; i < 1024; i++) ck_assert_float_eq(f[i], 1.0f);
  bg_queue_free(q);
  bg_signal_free(s);
  bg_program_free(p);
  bg_buf_free(in);
  bg_buf_free(out);
}
END_TEST

START_TEST(unknown_kind_and_flags) {
  if (!D) return;
  bg_queue *q = (bg_queue *)1;
  ck_assert_int_eq(bg_queue_new(D, (enum bg_queue_kind)7, &q), -BG_EINVAL);
  ck_assert_ptr_null(q);
  HAS("unknown queue kind 7");
  bg_buf *b = (bg_buf *)1;
  ck_assert_int_eq(bg_buf_alloc(D, 4096, BG_BUF_ZERO | 0x100u, &b), -BG_EINVAL);
  ck_assert_ptr_null(b);
  HAS("unknown flag bits 0x100");
  OK(bg_dev_synchronize(D, 0));
}
END_TEST

/* CPU: a queue that faults without signalling the timeline is reported by synchronize; recover runs work again. */
START_TEST(cpu_fault_and_recover) {
  if (strcmp(bg_dev_arch(D), "host") != 0) return;
  bg_signal *s;
  OK(bg_signal_new(D, 0, &s));
  bg_queue *q;
  OK(bg_queue_new(D, BG_QUEUE_COPY, &q));
  bg_queue_wait(q, bg_const(8), bg_const(1)); /* a signal outside device memory: the worker faults */
  bg_queue_signal(q, bg_sig(s), bg_const(1));
  OK(bg_queue_submit(q, NULL, 0));
  const cpu_dev *cd = D->priv;
  for (int i = 0; i < 100000 && !atomic_load(&cd->faulted); i++) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  ck_assert_int_eq(bg_dev_synchronize(D, 0), -BG_EHANG);
  HAS("wait on signal 0x8");
  ck_assert_int_eq(bg_dev_synchronize(D, 0), -BG_EHANG); /* latched */
  OK(bg_dev_recover(D));
  OK(bg_dev_synchronize(D, 0));
  bg_queue_free(q);
  /* the same device copies and runs a kernel */
  bg_buf *a, *b;
  OK(bg_buf_alloc(D, 4096, 0, &a));
  OK(bg_buf_alloc(D, 4096, 0, &b));
  float f[1024];
  for (int i = 0; i < 1024; i++) f[i] = (float)i;
  OK(bg_buf_write(a, 0, f, sizeof(f)));
  OK(bg_queue_new(D, BG_QUEUE_COPY, &q));
  bg_queue_copy(q, bg_addr(b, 0), bg_addr(a, 0), 4096);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  OK(bg_queue_submit(q, NULL, 0));
  OK(bg_dev_synchronize(D, 0));
  bg_program *p = load_add1();
  bg_buf *bufs[2] = {a, b};
  uint64_t n = 1024;
  const uint32_t g[3] = {32, 1, 1}, l[3] = {32, 1, 1};
  OK(bg_program_run(p, bufs, 2, &n, 1, g, l, true, NULL));
  OK(bg_buf_read(a, 0, f, sizeof(f)));
  for (int i = 0; i < 1024; i++) ck_assert_float_eq(f[i], (float)i + 1.0f);
  bg_program_free(p);
  bg_queue_free(q);
  bg_buf_free(a);
  bg_buf_free(b);
  bg_signal_free(s);
}
END_TEST

static void setup_cpu(void) { setup(0); }
static void setup_mockpci(void) { setup(1); }
static void setup_mockusb(void) { setup(2); }
static void teardown(void) {
  bg_dev_close(D);
  D = NULL;
}

static Suite *suite(void) {
  Suite *s = suite_create("hcq-validate");
  void (*const setups[3])(void) = {setup_cpu, setup_mockpci, setup_mockusb};
  for (int i = 0; i < 3; i++) {
    TCase *tc = tcase_create(DEVS[i]);
    tcase_add_checked_fixture(tc, setups[i], teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, copy_bounds);
    tcase_add_test(tc, workgroup_limits);
    tcase_add_test(tc, unknown_kind_and_flags);
    if (i == 0) tcase_add_test(tc, cpu_fault_and_recover);
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
