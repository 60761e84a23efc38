/* tests/mockgpu/ptx/test_ptx_more.c: more kernels LLVM's NVPTX backend compiles (sm_80 and sm_90): global
 * atomics, a private array in .local memory, 64-bit division and remainder, float<->int conversions and
 * math, half2 vectors; each compared with the same computation in C. */
#include <math.h>
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

static uint32_t rng = 777;
static uint32_t rnd(void) { rng = rng * 1664525u + 1013904223u; return rng >> 8; }
static float rndf(void) { return ((float)rnd() / (float)(1u << 24)) * 200.0f - 100.0f; }

/* Every thread adds a[i] to sum (float atomic) and 1 to count, and keeps the old count. */
static const char *ir_atomic =
  "target triple = \"nvptx64-nvidia-cuda\"\n"
  "define ptx_kernel void @at(ptr addrspace(1) %a, ptr addrspace(1) %sum, ptr addrspace(1) %cnt, ptr addrspace(1) %old) {\n" GID
  "  %pa = getelementptr float, ptr addrspace(1) %a, i64 %ie\n  %x = load float, ptr addrspace(1) %pa\n"
  "  %r = atomicrmw fadd ptr addrspace(1) %sum, float %x monotonic\n"
  "  %o = atomicrmw add ptr addrspace(1) %cnt, i32 1 monotonic\n"
  "  %mx = atomicrmw max ptr addrspace(1) %cnt, i32 0 monotonic\n"
  "  %po = getelementptr i32, ptr addrspace(1) %old, i64 %ie\n  store i32 %o, ptr addrspace(1) %po\n"
  "  ret void\n}\n" SREGS;

START_TEST(global_atomics) {
  enum { N = 96 };
  float *a = (float *)(void *)arena, *sum = a + N;
  uint32_t *cnt = (uint32_t *)(void *)(sum + 1), *old = cnt + 1;
  for (int i = 0; i < N; i++) a[i] = rndf();
  *sum = 0.5f; *cnt = 0;
  ptx_report rep;
  uint64_t args[] = {ARENA_BASE, ARENA_BASE + N * 4, ARENA_BASE + N * 4 + 4, ARENA_BASE + N * 4 + 8};
  ck_assert_msg(run_ir(ir_atomic, 3, 32, args, 4, &rep, _i % 2 ? "sm_80" : "sm_90") == 0, "%s", rep.msg);
  /* The interpreter runs CTAs and threads in order: the sum is the left fold. */
  float want = 0.5f;
  for (int i = 0; i < N; i++) want += a[i];
  ck_assert_msg(memcmp(sum, &want, 4) == 0, "sum %a, want %a", (double)*sum, (double)want);
  ck_assert_uint_eq(*cnt, N);
  for (int i = 0; i < N; i++) ck_assert_uint_eq(old[i], (uint32_t)i);
}
END_TEST

/* A private array indexed by a runtime value lives in .local (LLVM: __local_depot, %SP, cvta.local); the
 * barrier between filling and reading makes every thread's array live at once (one per thread). */
static const char *ir_private =
  "target triple = \"nvptx64-nvidia-cuda\"\n"
  "define ptx_kernel void @pv(ptr addrspace(1) %a, ptr addrspace(1) %o, i32 %k) {\nentry:\n" GID
  "  %arr = alloca [16 x i32], align 4\n  br label %fill\n"
  "fill:\n  %j = phi i32 [0, %entry], [%j2, %fill]\n  %v = mul i32 %j, %i\n  %je = sext i32 %j to i64\n"
  "  %pj = getelementptr [16 x i32], ptr %arr, i64 0, i64 %je\n  store volatile i32 %v, ptr %pj\n"
  "  %j2 = add i32 %j, 1\n  %more = icmp slt i32 %j2, 16\n  br i1 %more, label %fill, label %read\n"
  "read:\n  call void @llvm.nvvm.barrier0()\n  %kk = add i32 %k, %t\n  %km = and i32 %kk, 15\n  %kme = sext i32 %km to i64\n"
  "  %pk = getelementptr [16 x i32], ptr %arr, i64 0, i64 %kme\n  %r = load volatile i32, ptr %pk\n"
  "  %po = getelementptr i32, ptr addrspace(1) %o, i64 %ie\n  store i32 %r, ptr addrspace(1) %po\n"
  "  ret void\n}\n" SREGS "declare void @llvm.nvvm.barrier0()\n";

START_TEST(private_array_local_memory) {
  enum { N = 64 };
  int32_t *o = (int32_t *)(void *)arena;
  memset(o, 0xff, N * 4);
  ptx_report rep;
  uint64_t args[] = {ARENA_BASE + 4096, ARENA_BASE, 5};
  ck_assert_msg(run_ir(ir_private, 2, 32, args, 3, &rep, _i % 2 ? "sm_80" : "sm_90") == 0, "%s", rep.msg);
  for (int i = 0; i < N; i++) ck_assert_int_eq(o[i], ((5 + i % 32) & 15) * i);
}
END_TEST

/* 64-bit signed/unsigned division and remainder, float<->int conversions, sqrt, minnum, floor, fabs. */
static const char *ir_conv =
  "target triple = \"nvptx64-nvidia-cuda\"\n"
  "define ptx_kernel void @cv(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %o) {\n" GID
  "  %pa = getelementptr i64, ptr addrspace(1) %a, i64 %ie\n  %pb = getelementptr float, ptr addrspace(1) %b, i64 %ie\n"
  "  %x = load i64, ptr addrspace(1) %pa\n  %y = load float, ptr addrspace(1) %pb\n"
  "  %q = sdiv i64 %x, 1000003\n  %r = urem i64 %x, 77\n  %yi = fptosi float %y to i32\n  %yu = fptoui float %y to i8\n"
  "  %xf = sitofp i64 %x to float\n  %s = call float @llvm.sqrt.f32(float %y)\n"
  "  %mn = call float @llvm.minnum.f32(float %y, float %s)\n  %fl = call float @llvm.floor.f32(float %y)\n"
  "  %ab = call float @llvm.fabs.f32(float %y)\n  %yd = fpext float %y to double\n  %dd = fmul double %yd, 0x3FB999999999999A\n"
  "  %df = fptrunc double %dd to float\n"
  "  %base = mul i64 %ie, 10\n  %o0 = getelementptr i64, ptr addrspace(1) %o, i64 %base\n"
  "  store i64 %q, ptr addrspace(1) %o0\n  %o1 = getelementptr i64, ptr addrspace(1) %o0, i64 1\n  store i64 %r, ptr addrspace(1) %o1\n"
  "  %o2 = getelementptr i32, ptr addrspace(1) %o0, i64 4\n  store i32 %yi, ptr addrspace(1) %o2\n"
  "  %yu32 = zext i8 %yu to i32\n  %o3 = getelementptr i32, ptr addrspace(1) %o0, i64 5\n  store i32 %yu32, ptr addrspace(1) %o3\n"
  "  %o4 = getelementptr float, ptr addrspace(1) %o0, i64 6\n  store float %xf, ptr addrspace(1) %o4\n"
  "  %o5 = getelementptr float, ptr addrspace(1) %o0, i64 7\n  store float %mn, ptr addrspace(1) %o5\n"
  "  %o6 = getelementptr float, ptr addrspace(1) %o0, i64 8\n  store float %fl, ptr addrspace(1) %o6\n"
  "  %o7 = getelementptr float, ptr addrspace(1) %o0, i64 9\n  store float %ab, ptr addrspace(1) %o7\n"
  "  %o8 = getelementptr float, ptr addrspace(1) %o0, i64 10\n  store float %df, ptr addrspace(1) %o8\n"
  "  %o9 = getelementptr float, ptr addrspace(1) %o0, i64 11\n  store float %s, ptr addrspace(1) %o9\n"
  "  ret void\n}\n" SREGS
  "declare float @llvm.sqrt.f32(float)\ndeclare float @llvm.minnum.f32(float, float)\n"
  "declare float @llvm.floor.f32(float)\ndeclare float @llvm.fabs.f32(float)\n";

START_TEST(int64_and_conversions) {
  enum { N = 64 };
  int64_t *a = (int64_t *)(void *)arena;
  float *b = (float *)(void *)(arena + N * 8);
  uint8_t *o = arena + N * 12;
  for (int i = 0; i < N; i++) {
    a[i] = (int64_t)(((uint64_t)rnd() << 40) ^ ((uint64_t)rnd() << 16) ^ rnd()) * (i % 2 ? -1 : 1);
    b[i] = i % 4 == 3 ? rndf() * 1e-3f : fabsf(rndf()) * 2.0f;
  }
  ptx_report rep;
  uint64_t args[] = {ARENA_BASE, ARENA_BASE + N * 8, ARENA_BASE + N * 12};
  ck_assert_msg(run_ir(ir_conv, 2, 32, args, 3, &rep, _i % 2 ? "sm_80" : "sm_90") == 0, "%s", rep.msg);
  for (int i = 0; i < N; i++) {
    const uint8_t *s = o + i * 80;
    int64_t q, r;
    int32_t yi, yu;
    float f[6];
    memcpy(&q, s, 8); memcpy(&r, s + 8, 8); memcpy(&yi, s + 16, 4); memcpy(&yu, s + 20, 4); memcpy(f, s + 24, 24);
    float y = b[i], sq = sqrtf(y);
    ck_assert_msg(q == a[i] / 1000003 && (uint64_t)r == (uint64_t)a[i] % 77, "thread %d: div/rem %lld %lld", i,
                  (long long)q, (long long)r);
    ck_assert_int_eq(yi, (int32_t)y);
    if (y >= 0 && y < 256) ck_assert_int_eq(yu, (uint8_t)y);
    float want[6] = {(float)a[i], isnan(sq) ? y : fminf(y, sq), floorf(y), fabsf(y), (float)((double)y * 0.1), sq};
    for (int k = 0; k < 6; k++)
      ck_assert_msg(memcmp(&f[k], &want[k], 4) == 0, "thread %d float %d: %a, want %a", i, k, (double)f[k],
                    (double)want[k]);
  }
}
END_TEST

/* <2 x half> arithmetic: LLVM emits mul/fma/max/neg .f16x2 on 32-bit registers and unpacks halves with
 * "{ .reg .b16 tmp; mov.b32 {%rs1, tmp}, %r7; }" blocks. */
static const char *ir_half2 =
  "target triple = \"nvptx64-nvidia-cuda\"\n"
  "define ptx_kernel void @h2(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c) {\n" GID
  "  %pa = getelementptr <2 x half>, ptr addrspace(1) %a, i64 %ie\n  %pb = getelementptr <2 x half>, ptr addrspace(1) %b, i64 %ie\n"
  "  %x = load <2 x half>, ptr addrspace(1) %pa\n  %y = load <2 x half>, ptr addrspace(1) %pb\n"
  "  %p = fmul <2 x half> %x, %y\n  %s = call <2 x half> @llvm.fma.v2f16(<2 x half> %x, <2 x half> %y, <2 x half> %p)\n"
  "  %mx = call <2 x half> @llvm.maxnum.v2f16(<2 x half> %s, <2 x half> %x)\n  %n = fneg <2 x half> %mx\n"
  "  %e0 = extractelement <2 x half> %n, i32 0\n  %e1 = extractelement <2 x half> %p, i32 1\n  %q = fadd half %e0, %e1\n"
  "  %r = insertelement <2 x half> %n, half %q, i32 1\n"
  "  %pc = getelementptr <2 x half>, ptr addrspace(1) %c, i64 %ie\n  store <2 x half> %r, ptr addrspace(1) %pc\n"
  "  ret void\n}\n" SREGS
  "declare <2 x half> @llvm.fma.v2f16(<2 x half>, <2 x half>, <2 x half>)\n"
  "declare <2 x half> @llvm.maxnum.v2f16(<2 x half>, <2 x half>)\n";

static _Float16 h(float f) { return (_Float16)f; }

START_TEST(half2_vectors) {
  enum { N = 64 };
  _Float16 *a = (_Float16 *)(void *)arena, *b = a + 2 * N, *c = b + 2 * N;
  for (int i = 0; i < 2 * N; i++) { a[i] = h(rndf() / 16.0f); b[i] = h(rndf() / 16.0f); }
  ptx_report rep;
  uint64_t args[] = {ARENA_BASE, ARENA_BASE + N * 4, ARENA_BASE + N * 8};
  ck_assert_msg(run_ir(ir_half2, 2, 32, args, 3, &rep, _i % 2 ? "sm_80" : "sm_90") == 0, "%s", rep.msg);
  for (int i = 0; i < N; i++) {
    _Float16 p[2], n[2];
    for (int k = 0; k < 2; k++) {
      float x = (float)a[2 * i + k], y = (float)b[2 * i + k];
      p[k] = h(x * y);
      _Float16 s = (_Float16)((double)x * (double)y + (double)p[k]); /* fma.rn.f16x2: one rounding */
      n[k] = h(-fmaxf((float)s, x));
    }
    _Float16 want[2] = {n[0], h((float)n[0] + (float)p[1])};
    ck_assert_msg(memcmp(&c[2 * i], want, 4) == 0, "c[%d] = {%a, %a}, want {%a, %a}", i, (double)c[2 * i],
                  (double)c[2 * i + 1], (double)want[0], (double)want[1]);
  }
}
END_TEST

/* Tiled matmul C = A B (n x n, 8x8 tiles in shared memory, two barriers per tile step; 64 threads per CTA
 * as 8x8), the inner loop an fma chain; also compiled after LLVM's O3 pipeline (unrolled, vector loads). */
static const char *ir_matmul =
  "target triple = \"nvptx64-nvidia-cuda\"\n"
  "@As = internal addrspace(3) global [64 x float] undef, align 16\n"
  "@Bs = internal addrspace(3) global [64 x float] undef, align 16\n"
  "define ptx_kernel void @mm(ptr addrspace(1) noalias %A, ptr addrspace(1) noalias %B, ptr addrspace(1) noalias %C, i32 %n) {\n"
  "entry:\n  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %ct = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n"
  "  %tx = and i32 %t, 7\n  %ty = lshr i32 %t, 3\n  %nb = lshr i32 %n, 3\n  %bx = urem i32 %ct, %nb\n  %by = udiv i32 %ct, %nb\n"
  "  %by8 = shl i32 %by, 3\n  %row = add i32 %by8, %ty\n  %bx8 = shl i32 %bx, 3\n  %col = add i32 %bx8, %tx\n"
  "  %ty8 = shl i32 %ty, 3\n  %sidx = add i32 %ty8, %tx\n  %sidxe = zext i32 %sidx to i64\n"
  "  %pas = getelementptr [64 x float], ptr addrspace(3) @As, i64 0, i64 %sidxe\n"
  "  %pbs = getelementptr [64 x float], ptr addrspace(3) @Bs, i64 0, i64 %sidxe\n  %ra = mul i32 %row, %n\n  br label %loop\n"
  "loop:\n  %kt = phi i32 [0, %entry], [%kt2, %idone]\n  %acc = phi float [0.0, %entry], [%acc3, %idone]\n"
  "  %ca = add i32 %kt, %tx\n  %ia = add i32 %ra, %ca\n  %iae = zext i32 %ia to i64\n"
  "  %pa = getelementptr float, ptr addrspace(1) %A, i64 %iae\n  %va = load float, ptr addrspace(1) %pa\n"
  "  store float %va, ptr addrspace(3) %pas\n"
  "  %rb = add i32 %kt, %ty\n  %rbn = mul i32 %rb, %n\n  %ib = add i32 %rbn, %col\n  %ibe = zext i32 %ib to i64\n"
  "  %pb = getelementptr float, ptr addrspace(1) %B, i64 %ibe\n  %vb = load float, ptr addrspace(1) %pb\n"
  "  store float %vb, ptr addrspace(3) %pbs\n  call void @llvm.nvvm.barrier0()\n  br label %inner\n"
  "inner:\n  %k = phi i32 [0, %loop], [%k2, %inner]\n  %acc2 = phi float [%acc, %loop], [%acc3, %inner]\n"
  "  %ai = add i32 %ty8, %k\n  %aie = zext i32 %ai to i64\n  %pai = getelementptr [64 x float], ptr addrspace(3) @As, i64 0, i64 %aie\n"
  "  %k8 = shl i32 %k, 3\n  %bi = add i32 %k8, %tx\n  %bie = zext i32 %bi to i64\n"
  "  %pbi = getelementptr [64 x float], ptr addrspace(3) @Bs, i64 0, i64 %bie\n"
  "  %x = load float, ptr addrspace(3) %pai\n  %y = load float, ptr addrspace(3) %pbi\n"
  "  %acc3 = call float @llvm.fma.f32(float %x, float %y, float %acc2)\n"
  "  %k2 = add i32 %k, 1\n  %kd = icmp ult i32 %k2, 8\n  br i1 %kd, label %inner, label %idone\n"
  "idone:\n  call void @llvm.nvvm.barrier0()\n  %kt2 = add i32 %kt, 8\n  %more = icmp ult i32 %kt2, %n\n"
  "  br i1 %more, label %loop, label %exit\n"
  "exit:\n  %ic = add i32 %ra, %col\n  %ice = zext i32 %ic to i64\n  %pc = getelementptr float, ptr addrspace(1) %C, i64 %ice\n"
  "  store float %acc3, ptr addrspace(1) %pc\n  ret void\n}\n"
  "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\ndeclare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n"
  "declare void @llvm.nvvm.barrier0()\ndeclare float @llvm.fma.f32(float, float, float)\n";

START_TEST(tiled_matmul_shared) {
  enum { N = 32 };
  float *a = (float *)(void *)arena, *b = a + N * N, *c = b + N * N;
  for (int i = 0; i < N * N; i++) { a[i] = rndf() / 10.0f; b[i] = rndf() / 10.0f; c[i] = 0.0f; }
  static const char *const cpus[] = {"sm_80", "sm_90+O3", "sm_80+O3"};
  ptx_report rep;
  uint64_t args[] = {ARENA_BASE, ARENA_BASE + N * N * 4, ARENA_BASE + N * N * 8, N};
  ck_assert_msg(run_ir(ir_matmul, (N / 8) * (N / 8), 64, args, 4, &rep, cpus[_i]) == 0, "%s", rep.msg);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      float acc = 0.0f;
      for (int k = 0; k < N; k++) acc = fmaf(a[i * N + k], b[k * N + j], acc);
      ck_assert_msg(memcmp(&c[i * N + j], &acc, 4) == 0, "%s: C[%d][%d] = %a, want %a", cpus[_i], i, j,
                    (double)c[i * N + j], (double)acc);
    }
}
END_TEST

TCase *more_tests(void) {
  TCase *tc = tcase_create("more");
  tcase_add_loop_test(tc, global_atomics, 0, 2);
  tcase_add_loop_test(tc, private_array_local_memory, 0, 2);
  tcase_add_loop_test(tc, int64_and_conversions, 0, 2);
  tcase_add_loop_test(tc, half2_vectors, 0, 2);
  tcase_add_loop_test(tc, tiled_matmul_shared, 0, 3);
  return tc;
}
