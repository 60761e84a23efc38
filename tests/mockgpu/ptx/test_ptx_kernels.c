/* tests/mockgpu/ptx/test_ptx_kernels.c: kernels as LLVM IR, compiled to PTX by LLVM's NVPTX backend and
 * run by the interpreter; every result is compared with the same computation in C on the host. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_ptx_harness.h"

#define SREGS                                                                                                  \
  "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"                                                            \
  "declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n"                                                          \
  "declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()\n"
#define GID                                                                                                    \
  "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"                                                        \
  "  %ct = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n"                                                     \
  "  %nt = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()\n"                                                      \
  "  %m = mul i32 %ct, %nt\n"                                                                                 \
  "  %i = add i32 %m, %t\n"                                                                                   \
  "  %ie = sext i32 %i to i64\n"

static uint64_t A(size_t off) { return ARENA_BASE + off; }
static uint32_t rng_state = 12345;
static uint32_t rnd(void) { rng_state = rng_state * 1664525u + 1013904223u; return rng_state >> 8; }
static float rndf(void) { return ((float)rnd() / (float)(1u << 24)) * 8.0f - 4.0f; }

/* c[i] = a[i] + b[i] for i < n over 3 CTAs of 64 (the last partly out of range). */
static const char *ir_add =
  "target triple = \"nvptx64-nvidia-cuda\"\n"
  "define ptx_kernel void @add(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) {\n" GID
  "  %in = icmp slt i32 %i, %n\n  br i1 %in, label %do, label %end\ndo:\n"
  "  %pa = getelementptr float, ptr addrspace(1) %a, i64 %ie\n"
  "  %pb = getelementptr float, ptr addrspace(1) %b, i64 %ie\n"
  "  %pc = getelementptr float, ptr addrspace(1) %c, i64 %ie\n"
  "  %va = load float, ptr addrspace(1) %pa\n  %vb = load float, ptr addrspace(1) %pb\n"
  "  %s = fadd float %va, %vb\n  store float %s, ptr addrspace(1) %pc\n  br label %end\n"
  "end:\n  ret void\n}\n" SREGS;

START_TEST(elementwise_add_f32) {
  enum { N = 150 };
  float *a = (float *)(void *)arena, *b = a + 256, *c = b + 256;
  for (int i = 0; i < 256; i++) { a[i] = rndf(); b[i] = rndf() * 1e-3f; c[i] = -1.0f; }
  ptx_report rep;
  uint64_t args[] = {A(0), A(1024), A(2048), N};
  ck_assert_msg(run_ir(ir_add, 3, 64, args, 4, &rep, "sm_90") == 0, "%s", rep.msg);
  for (int i = 0; i < 256; i++) {
    float want = i < N ? a[i] + b[i] : -1.0f;
    ck_assert_msg(memcmp(&c[i], &want, 4) == 0, "c[%d] = %a, want %a", i, (double)c[i], (double)want);
  }
}
END_TEST

/* Signed and unsigned division and remainder, shifts, min/max, mul.hi, 64-bit multiply. */
static const char *ir_int =
  "target triple = \"nvptx64-nvidia-cuda\"\n"
  "define ptx_kernel void @ints(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %o) {\n" GID
  "  %pa = getelementptr i32, ptr addrspace(1) %a, i64 %ie\n"
  "  %pb = getelementptr i32, ptr addrspace(1) %b, i64 %ie\n"
  "  %x = load i32, ptr addrspace(1) %pa\n  %y = load i32, ptr addrspace(1) %pb\n"
  "  %sd = sdiv i32 %x, %y\n  %sr = srem i32 %x, %y\n  %ud = udiv i32 %x, %y\n  %ur = urem i32 %x, %y\n"
  "  %sh = ashr i32 %x, 3\n  %lh = lshr i32 %x, 5\n  %sl = shl i32 %y, 7\n"
  "  %mn = call i32 @llvm.smin.i32(i32 %x, i32 %y)\n  %mx = call i32 @llvm.umax.i32(i32 %x, i32 %y)\n"
  "  %x6 = sext i32 %x to i64\n  %y6 = sext i32 %y to i64\n  %p6 = mul i64 %x6, %y6\n"
  "  %hi6 = ashr i64 %p6, 32\n  %hi = trunc i64 %hi6 to i32\n"
  "  %x8 = trunc i32 %x to i8\n  %x8s = sext i8 %x8 to i32\n"
  "  %base = mul i64 %ie, 11\n"
  "  %q0 = getelementptr i32, ptr addrspace(1) %o, i64 %base\n  store i32 %sd, ptr addrspace(1) %q0\n"
  "  %b1 = add i64 %base, 1\n  %q1 = getelementptr i32, ptr addrspace(1) %o, i64 %b1\n  store i32 %sr, ptr addrspace(1) %q1\n"
  "  %b2 = add i64 %base, 2\n  %q2 = getelementptr i32, ptr addrspace(1) %o, i64 %b2\n  store i32 %ud, ptr addrspace(1) %q2\n"
  "  %b3 = add i64 %base, 3\n  %q3 = getelementptr i32, ptr addrspace(1) %o, i64 %b3\n  store i32 %ur, ptr addrspace(1) %q3\n"
  "  %b4 = add i64 %base, 4\n  %q4 = getelementptr i32, ptr addrspace(1) %o, i64 %b4\n  store i32 %sh, ptr addrspace(1) %q4\n"
  "  %b5 = add i64 %base, 5\n  %q5 = getelementptr i32, ptr addrspace(1) %o, i64 %b5\n  store i32 %lh, ptr addrspace(1) %q5\n"
  "  %b6 = add i64 %base, 6\n  %q6 = getelementptr i32, ptr addrspace(1) %o, i64 %b6\n  store i32 %sl, ptr addrspace(1) %q6\n"
  "  %b7 = add i64 %base, 7\n  %q7 = getelementptr i32, ptr addrspace(1) %o, i64 %b7\n  store i32 %mn, ptr addrspace(1) %q7\n"
  "  %b8 = add i64 %base, 8\n  %q8 = getelementptr i32, ptr addrspace(1) %o, i64 %b8\n  store i32 %mx, ptr addrspace(1) %q8\n"
  "  %b9 = add i64 %base, 9\n  %q9 = getelementptr i32, ptr addrspace(1) %o, i64 %b9\n  store i32 %hi, ptr addrspace(1) %q9\n"
  "  %b10 = add i64 %base, 10\n  %q10 = getelementptr i32, ptr addrspace(1) %o, i64 %b10\n  store i32 %x8s, ptr addrspace(1) %q10\n"
  "  ret void\n}\n" SREGS
  "declare i32 @llvm.smin.i32(i32, i32)\ndeclare i32 @llvm.umax.i32(i32, i32)\n";

START_TEST(int_div_rem) {
  enum { N = 128 };
  int32_t *a = (int32_t *)(void *)arena, *b = a + N, *o = b + N;
  for (int i = 0; i < N; i++) {
    a[i] = (int32_t)(rnd() * 257u) * (i % 3 ? 1 : -1);
    b[i] = (int32_t)(rnd() % 1000 + 1) * (i % 5 ? 1 : -1);
  }
  a[0] = INT32_MIN; b[0] = 7;
  ptx_report rep;
  uint64_t args[] = {A(0), A(N * 4), A(N * 8)};
  ck_assert_msg(run_ir(ir_int, 2, 64, args, 3, &rep, "sm_90") == 0, "%s", rep.msg);
  for (int i = 0; i < N; i++) {
    int32_t x = a[i], y = b[i];
    uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
    int32_t want[11] = {x / y, x % y, (int32_t)(ux / uy), (int32_t)(ux % uy), x >> 3, (int32_t)(ux >> 5),
                        (int32_t)(uy << 7), x < y ? x : y, (int32_t)(ux > uy ? ux : uy),
                        (int32_t)(((int64_t)x * y) >> 32), (int8_t)x};
    for (int k = 0; k < 11; k++)
      ck_assert_msg(o[i * 11 + k] == want[k], "thread %d result %d: %d, want %d (x=%d y=%d)", i, k, o[i * 11 + k],
                    want[k], x, y);
  }
}
END_TEST

/* Tree reduction of 256 floats per CTA in shared memory with a barrier after every level. */
static const char *ir_reduce =
  "target triple = \"nvptx64-nvidia-cuda\"\n"
  "@s = internal addrspace(3) global [256 x float] undef, align 4\n"
  "define ptx_kernel void @reduce(ptr addrspace(1) %a, ptr addrspace(1) %out) {\nentry:\n"
  "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %ct = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n"
  "  %base = mul i32 %ct, 256\n  %i = add i32 %base, %t\n  %ie = zext i32 %i to i64\n"
  "  %pa = getelementptr float, ptr addrspace(1) %a, i64 %ie\n  %v = load float, ptr addrspace(1) %pa\n"
  "  %te = zext i32 %t to i64\n  %ps = getelementptr [256 x float], ptr addrspace(3) @s, i64 0, i64 %te\n"
  "  store float %v, ptr addrspace(3) %ps\n  call void @llvm.nvvm.barrier0()\n  br label %loop\n"
  "loop:\n  %st = phi i32 [128, %entry], [%st2, %next]\n  %lt = icmp ult i32 %t, %st\n"
  "  br i1 %lt, label %add, label %next\n"
  "add:\n  %o = add i32 %t, %st\n  %oe = zext i32 %o to i64\n"
  "  %po = getelementptr [256 x float], ptr addrspace(3) @s, i64 0, i64 %oe\n"
  "  %x = load float, ptr addrspace(3) %ps\n  %y = load float, ptr addrspace(3) %po\n  %z = fadd float %x, %y\n"
  "  store float %z, ptr addrspace(3) %ps\n  br label %next\n"
  "next:\n  call void @llvm.nvvm.barrier0()\n  %st2 = lshr i32 %st, 1\n  %more = icmp ne i32 %st2, 0\n"
  "  br i1 %more, label %loop, label %done\n"
  "done:\n  %t0 = icmp eq i32 %t, 0\n  br i1 %t0, label %w, label %end\n"
  "w:\n  %r = load float, ptr addrspace(3) @s\n  %cte = zext i32 %ct to i64\n"
  "  %pout = getelementptr float, ptr addrspace(1) %out, i64 %cte\n  store float %r, ptr addrspace(1) %pout\n"
  "  br label %end\nend:\n  ret void\n}\n"
  "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\ndeclare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n"
  "declare void @llvm.nvvm.barrier0()\n";

START_TEST(shared_tree_reduction) {
  enum { CTAS = 3 };
  float *a = (float *)(void *)arena, *out = a + CTAS * 256;
  for (int i = 0; i < CTAS * 256; i++) a[i] = rndf();
  ptx_report rep;
  uint64_t args[] = {A(0), A(CTAS * 256 * 4)};
  ck_assert_msg(run_ir(ir_reduce, CTAS, 256, args, 2, &rep, "sm_90") == 0, "%s", rep.msg);
  for (int c = 0; c < CTAS; c++) {
    float s[256];
    memcpy(s, a + c * 256, sizeof s);
    for (int st = 128; st > 0; st >>= 1)
      for (int t = 0; t < st; t++) s[t] += s[t + st];
    ck_assert_msg(memcmp(&out[c], &s[0], 4) == 0, "CTA %d: %a, want %a", c, (double)out[c], (double)s[0]);
  }
}
END_TEST

/* half: c[i] = (a[i] * b[i] + 1.5) as f16, and its f32 widening. */
static const char *ir_half =
  "target triple = \"nvptx64-nvidia-cuda\"\n"
  "define ptx_kernel void @hk(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %f) {\n" GID
  "  %pa = getelementptr half, ptr addrspace(1) %a, i64 %ie\n  %pb = getelementptr half, ptr addrspace(1) %b, i64 %ie\n"
  "  %x = load half, ptr addrspace(1) %pa\n  %y = load half, ptr addrspace(1) %pb\n"
  "  %p = fmul half %x, %y\n  %s = fadd half %p, 0xH3E00\n  %d = fdiv half %s, %y\n"
  "  %pc = getelementptr half, ptr addrspace(1) %c, i64 %ie\n  store half %d, ptr addrspace(1) %pc\n"
  "  %w = fpext half %s to float\n  %w2 = fmul float %w, 3.0\n  %n = fptrunc float %w2 to half\n"
  "  %wn = fpext half %n to float\n"
  "  %pf = getelementptr float, ptr addrspace(1) %f, i64 %ie\n  store float %wn, ptr addrspace(1) %pf\n"
  "  ret void\n}\n" SREGS;

START_TEST(float16_kernel) {
  enum { N = 128 };
  _Float16 *a = (_Float16 *)(void *)arena, *b = a + N, *c = b + N;
  float *f = (float *)(void *)(arena + 4096);
  for (int i = 0; i < N; i++) { a[i] = (_Float16)rndf(); b[i] = (_Float16)(rndf() + 0.1f); }
  ptx_report rep;
  uint64_t args[] = {A(0), A(N * 2), A(N * 4), A(4096)};
  ck_assert_msg(run_ir(ir_half, 2, 64, args, 4, &rep, "sm_90") == 0, "%s", rep.msg);
  for (int i = 0; i < N; i++) {
    _Float16 p = (_Float16)((float)a[i] * (float)b[i]);
    _Float16 s = (_Float16)((float)p + 1.5f);
    _Float16 d = (_Float16)((float)s / (float)b[i]);
    float wn = (float)(_Float16)((float)s * 3.0f);
    ck_assert_msg(memcmp(&c[i], &d, 2) == 0, "c[%d] = %a, want %a", i, (double)c[i], (double)d);
    ck_assert_msg(memcmp(&f[i], &wn, 4) == 0, "f[%d] = %a, want %a", i, (double)f[i], (double)wn);
  }
}
END_TEST

/* A loop with predicates: o[i] = sum over k < n of fma(a[i*n+k], b[k], acc), skipping negative
 * products (select), then clamped; n is a kernel argument so the loop is not unrolled away. */
static const char *ir_loop =
  "target triple = \"nvptx64-nvidia-cuda\"\n"
  "define ptx_kernel void @mv(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %o, i32 %n) {\nentry:\n" GID
  "  %row = mul i32 %i, %n\n  br label %loop\n"
  "loop:\n  %k = phi i32 [0, %entry], [%k2, %loop]\n  %acc = phi float [0.0, %entry], [%acc2, %loop]\n"
  "  %idx = add i32 %row, %k\n  %idxe = sext i32 %idx to i64\n  %ke = sext i32 %k to i64\n"
  "  %pa = getelementptr float, ptr addrspace(1) %a, i64 %idxe\n  %pb = getelementptr float, ptr addrspace(1) %b, i64 %ke\n"
  "  %x = load float, ptr addrspace(1) %pa\n  %y = load float, ptr addrspace(1) %pb\n"
  "  %f = call float @llvm.fma.f32(float %x, float %y, float %acc)\n"
  "  %neg = fcmp ult float %x, 0.0\n  %acc2 = select i1 %neg, float %acc, float %f\n"
  "  %k2 = add i32 %k, 1\n  %more = icmp slt i32 %k2, %n\n  br i1 %more, label %loop, label %done\n"
  "done:\n  %big = fcmp ogt float %acc2, 10.0\n  %r = select i1 %big, float 10.0, float %acc2\n"
  "  %po = getelementptr float, ptr addrspace(1) %o, i64 %ie\n  store float %r, ptr addrspace(1) %po\n"
  "  ret void\n}\n" SREGS "declare float @llvm.fma.f32(float, float, float)\n";

START_TEST(loop_with_predicates) {
  enum { ROWS = 64, N = 37 };
  float *a = (float *)(void *)arena, *b = a + ROWS * N, *o = b + 64;
  for (int i = 0; i < ROWS * N; i++) a[i] = rndf();
  for (int i = 0; i < N; i++) b[i] = rndf();
  ptx_report rep;
  uint64_t args[] = {A(0), A(ROWS * N * 4), A(ROWS * N * 4 + 256), N};
  ck_assert_msg(run_ir(ir_loop, 2, 32, args, 4, &rep, "sm_90") == 0, "%s", rep.msg);
  for (int i = 0; i < ROWS; i++) {
    float acc = 0.0f;
    for (int k = 0; k < N; k++)
      if (!(a[i * N + k] < 0.0f)) acc = fmaf(a[i * N + k], b[k], acc);
    float want = acc > 10.0f ? 10.0f : acc;
    ck_assert_msg(memcmp(&o[i], &want, 4) == 0, "o[%d] = %a, want %a", i, (double)o[i], (double)want);
  }
}
END_TEST

TCase *kernel_tests(void) {
  TCase *tc = tcase_create("kernels");
  tcase_add_test(tc, elementwise_add_f32);
  tcase_add_test(tc, int_div_rem);
  tcase_add_test(tc, shared_tree_reduction);
  tcase_add_test(tc, float16_kernel);
  tcase_add_test(tc, loop_with_predicates);
  return tc;
}
