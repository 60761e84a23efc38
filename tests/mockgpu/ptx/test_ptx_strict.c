/* tests/mockgpu/ptx/test_ptx_strict.c: what the interpreter refuses, each named with its PTX line
 * (unknown instruction, unknown state space, out-of-bounds global/shared access, the instruction
 * budget), and hand-written PTX in LLVM's style for rounding modes and conversions. */
#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_ptx_harness.h"

#define HEAD ".version 7.8\n.target sm_90\n.address_size 64\n"

/* Line 10 holds `op`; the kernel stores %r3 to *out. */
static char *kernel_with(const char *decls, const char *op) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           HEAD                                                        /* lines 1-3 */
           "%s\n"                                                      /* 4 */
           ".visible .entry k(\n\t.param .u64 .ptr .global .align 1 k_param_0\n)\n{\n" /* 5-8 */
           "\t.reg .b32 %%r<8>;\n"                                     /* 9: line 9 */
           "\t%s\n"                                                    /* 10 */
           "\t.reg .b64 %%rd<4>;\n"
           "\tld.param.b64 %%rd1, [k_param_0];\n"
           "\tst.global.b32 [%%rd1], %%r3;\n"
           "\tret;\n}\n",
           decls, op);
  return buf;
}

START_TEST(unknown_instruction_names_line) {
  ptx_report rep;
  ck_assert_int_eq(run_ptx(kernel_with("", "frobnicate.b32 %r3, %r1;"), 1, 1, (uint64_t[]){ARENA_BASE}, 1, &rep), -2);
  ck_assert_msg(strstr(rep.msg, "ptx line 10") && strstr(rep.msg, "unknown instruction frobnicate") &&
                strstr(rep.msg, "frobnicate.b32 %r3, %r1"), "%s", rep.msg);
}
END_TEST

START_TEST(unknown_modifier_and_type) {
  ptx_report rep;
  ck_assert_int_eq(run_ptx(kernel_with("", "add.rx.f32 %r3, %r1, %r2;"), 1, 1, (uint64_t[]){ARENA_BASE}, 1, &rep), -2);
  ck_assert_msg(strstr(rep.msg, "ptx line 10") && strstr(rep.msg, "rx"), "%s", rep.msg);
  ck_assert_int_eq(run_ptx(kernel_with("", "add.q32 %r3, %r1, %r2;"), 1, 1, (uint64_t[]){ARENA_BASE}, 1, &rep), -2);
  ck_assert_msg(strstr(rep.msg, "ptx line 10") && strstr(rep.msg, "q32"), "%s", rep.msg);
  ck_assert_int_eq(run_ptx(kernel_with("", "add.s32 %r3, %r1, %q2;"), 1, 1, (uint64_t[]){ARENA_BASE}, 1, &rep), -2);
  ck_assert_msg(strstr(rep.msg, "ptx line 10") && strstr(rep.msg, "undeclared register %q2"), "%s", rep.msg);
  /* shf needs a direction and a mode; an immediate cannot be a destination element */
  ck_assert_int_eq(run_ptx(kernel_with("", "shf.l.b32 %r3, %r1, %r1, 3;"), 1, 1, (uint64_t[]){ARENA_BASE}, 1, &rep), -2);
  ck_assert_msg(strstr(rep.msg, "ptx line 10") && strstr(rep.msg, ".wrap/.clamp"), "%s", rep.msg);
  ck_assert_int_eq(run_ptx(kernel_with("", "mov.b64 {%r3, 7}, 5;"), 1, 1, (uint64_t[]){ARENA_BASE}, 1, &rep), -2);
  ck_assert_msg(strstr(rep.msg, "ptx line 10") && strstr(rep.msg, "immediate in a destination vector"), "%s", rep.msg);
}
END_TEST

START_TEST(unknown_state_space_names_line) {
  ptx_report rep;
  ck_assert_int_eq(run_ptx(kernel_with("", "ld.const.b32 %r3, [%rd1];"), 1, 1, (uint64_t[]){ARENA_BASE}, 1, &rep), -2);
  ck_assert_msg(strstr(rep.msg, "ptx line 10") && strstr(rep.msg, "const"), "%s", rep.msg);
  /* A module-scope variable in a state space the interpreter does not model. */
  ck_assert_int_eq(run_ptx(kernel_with(".const .align 4 .b8 tab[16];", "mov.b32 %r3, 1;"), 1, 1,
                           (uint64_t[]){ARENA_BASE}, 1, &rep), -2);
  ck_assert_msg(strstr(rep.msg, "ptx line 4") && strstr(rep.msg, "state space"), "%s", rep.msg);
}
END_TEST

START_TEST(global_fault_names_address_and_line) {
  ptx_report rep;
  /* Thread 5 of CTA 1 stores outside the arena. */
  const char *ptx = HEAD ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
                    "\tld.param.b64 %rd1, [k_param_0];\n"        /* 10 */
                    "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n"
                    "\tmad.lo.s32 %r3, %r2, 8, %r1;\n"           /* 13 */
                    "\tmul.wide.u32 %rd2, %r3, 65536;\n"         /* 14 */
                    "\tadd.s64 %rd3, %rd1, %rd2;\n"
                    "\tst.global.b32 [%rd3], %r3;\n"             /* 16 */
                    "\tret;\n}\n";
  ck_assert_int_eq(run_ptx(ptx, 2, 8, (uint64_t[]){ARENA_BASE + 3 * 65536}, 1, &rep), -1);
  /* (3 + 1 * 8 + 5) * 64 KiB = 1 MiB: the first address past the arena, thread 5 of CTA 1. */
  ck_assert_msg(strstr(rep.msg, "ptx line 16") && strstr(rep.msg, "st.global.b32 [%rd3], %r3") &&
                strstr(rep.msg, "0x100100000") && strstr(rep.msg, "CTA 1,0,0 thread 5,0,0"), "%s", rep.msg);
  ck_assert_int_eq(rep.line, 16);
}
END_TEST

START_TEST(shared_out_of_bounds) {
  ptx_report rep;
  const char *ptx = HEAD ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .b32 %r<4>;\n"
                    "\t.shared .align 4 .b8 s[64];\n"
                    "\tmov.u32 %r1, %tid.x;\n"
                    "\tshl.b32 %r2, %r1, 2;\n"
                    "\tst.shared.b32 [%r2+s], %r1;\n"  /* not an address form LLVM emits: an error at parse */
                    "\tret;\n}\n";
  ck_assert_int_eq(run_ptx(ptx, 1, 32, (uint64_t[]){ARENA_BASE}, 1, &rep), -2);
  const char *ptx2 = HEAD ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
                     "\t.shared .align 4 .b8 s[64];\n"
                     "\tmov.u32 %r1, %tid.x;\n"                  /* 11 */
                     "\tmul.wide.u32 %rd1, %r1, 4;\n"
                     "\tmov.b64 %rd2, s;\n"
                     "\tadd.s64 %rd3, %rd2, %rd1;\n"
                     "\tst.shared.b32 [%rd3], %r1;\n"            /* 15 */
                     "\tret;\n}\n";
  ck_assert_int_eq(run_ptx(ptx2, 1, 16, (uint64_t[]){ARENA_BASE}, 1, &rep), 0);
  ck_assert_int_eq(run_ptx(ptx2, 1, 32, (uint64_t[]){ARENA_BASE}, 1, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "ptx line 15") && strstr(rep.msg, "shared access out of bounds at 0x40") &&
                strstr(rep.msg, "thread 16,0,0"), "%s", rep.msg);
}
END_TEST

START_TEST(instruction_budget) {
  ptx_report rep;
  const char *ptx = HEAD ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .b32 %r<4>;\n"
                    "$L__BB0_1:\n\tadd.s32 %r1, %r1, 1;\n\tbra.uni $L__BB0_1;\n\tret;\n}\n";
  test_max_insts = 100000;
  int rc = run_ptx(ptx, 1, 4, (uint64_t[]){ARENA_BASE}, 1, &rep);
  test_max_insts = 50000000;
  ck_assert_int_eq(rc, -1);
  ck_assert_msg(strstr(rep.msg, "instruction budget") && strstr(rep.msg, "ptx line 10 `add.s32 %r1, %r1, 1`") &&
                rep.insts == 100001, "%s (%llu)", rep.msg,
                (unsigned long long)rep.insts);
}
END_TEST

/* Rounding modifiers on f32 arithmetic and on cvt, and unordered comparisons, against the host's fenv. */
START_TEST(rounding_and_conversions) {
  ptx_report rep;
  uint32_t *o = (uint32_t *)(void *)arena;
  char ptx[4096];
  static const char *const ops[] = {
    "add.rz.f32 %r3, %r1, %r2;", "add.rm.f32 %r3, %r1, %r2;", "add.rp.f32 %r3, %r1, %r2;", "mul.rz.f32 %r3, %r1, %r2;",
    "div.rn.f32 %r3, %r1, %r2;", "cvt.rzi.s32.f32 %r3, %r1;", "cvt.rni.s32.f32 %r3, %r2;", "cvt.rmi.s32.f32 %r3, %r2;",
    "cvt.rn.f32.s32 %r3, %r4;", "cvt.rz.f32.s32 %r3, %r4;", "cvt.sat.s8.s32 %r3, %r4;", "cvt.u16.u32 %r3, %r4;",
    "fma.rn.f32 %r3, %r1, %r2, %r2;", "setp.ltu.f32 %p1, %r5, %r1;\n\tselp.b32 %r3, 1, 2, %p1;",
    "setp.lt.f32 %p1, %r5, %r1;\n\tselp.b32 %r3, 1, 2, %p1;", "min.f32 %r3, %r5, %r1;",
  };
  float x = 1.0f / 3.0f, y = -2.5f;
  volatile int32_t big = 16777217 * 2 + 1; /* not a float: rounding of int->float shows (volatile: no folding) */
  float want_f[16];
  volatile float vx = x, vy = y;
  fesetround(FE_TOWARDZERO); want_f[0] = vx + vy; want_f[3] = vx * vy;
  fesetround(FE_DOWNWARD); want_f[1] = vx + vy;
  fesetround(FE_UPWARD); want_f[2] = vx + vy;
  fesetround(FE_TOWARDZERO); volatile float bz = (float)big; want_f[9] = bz;
  fesetround(FE_TONEAREST);
  want_f[4] = vx / vy; want_f[8] = (float)big; want_f[12] = fmaf(vx, vy, vy); want_f[15] = vx;
  uint32_t want[16];
  for (int i = 0; i < 16; i++) memcpy(&want[i], &want_f[i], 4);
  want[5] = 0; want[6] = (uint32_t)-2; want[7] = (uint32_t)-3; want[10] = 127; want[11] = (uint32_t)big & 0xffff;
  want[13] = 1; want[14] = 2;
  uint32_t xb, yb;
  memcpy(&xb, &x, 4); memcpy(&yb, &y, 4);
  for (int i = 0; i < 16; i++) {
    snprintf(ptx, sizeof ptx,
             HEAD ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .pred %%p<2>;\n\t.reg .b32 %%r<8>;\n\t.reg .b64 %%rd<2>;\n"
             "\tmov.b32 %%r1, 0f%08X;\n\tmov.b32 %%r2, 0f%08X;\n\tmov.b32 %%r4, %d;\n\tmov.b32 %%r5, 0f7FC00000;\n"
             "\tmov.b32 %%r3, 0;\n\t%s\n\tld.param.b64 %%rd1, [k_param_0];\n\tst.global.b32 [%%rd1], %%r3;\n\tret;\n}\n",
             xb, yb, big, ops[i]);
    o[0] = 0xdeadbeef;
    ck_assert_msg(run_ptx(ptx, 1, 1, (uint64_t[]){ARENA_BASE}, 1, &rep) == 0, "%s: %s", ops[i], rep.msg);
    ck_assert_msg(o[0] == want[i], "%s: 0x%08x, want 0x%08x", ops[i], o[0], want[i]);
  }
}
END_TEST

/* fma rounds once: a*b+c = 1 + 2^-23 + 2^-24 - 2^-70 is just below a float tie, so fma gives 1 + 2^-23;
 * rounding the exact product-sum to double first lands on the tie, which goes to even 1 + 2^-22. */
START_TEST(fma_rounds_once) {
  uint32_t ab = 0x3F800001u /* 1 + 2^-23 */, bb = 0x337FFFFEu /* 2^-24 (1 - 2^-23) */, cb = 0x3F800001u;
  float a, b, c;
  memcpy(&a, &ab, 4); memcpy(&b, &bb, 4); memcpy(&c, &cb, 4);
  volatile float va = a, vb = b, vc = c;
  float want = fmaf(va, vb, vc), dbl = (float)((double)va * (double)vb + (double)vc);
  ck_assert_msg(memcmp(&want, &dbl, 4) != 0, "the operands must tell single from double rounding");
  char ptx[1024];
  snprintf(ptx, sizeof ptx,
           HEAD ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .b32 %%r<8>;\n\t.reg .b64 %%rd<2>;\n"
           "\tmov.b32 %%r1, 0f%08X;\n\tmov.b32 %%r2, 0f%08X;\n\tmov.b32 %%r4, 0f%08X;\n"
           "\tfma.rn.f32 %%r3, %%r1, %%r2, %%r4;\n\tld.param.b64 %%rd1, [k_param_0];\n\tst.global.b32 [%%rd1], %%r3;\n"
           "\tret;\n}\n", ab, bb, cb);
  ptx_report rep;
  ck_assert_msg(run_ptx(ptx, 1, 1, (uint64_t[]){ARENA_BASE}, 1, &rep) == 0, "%s", rep.msg);
  ck_assert_msg(memcmp(arena, &want, 4) == 0, "fma: %a, want %a", (double)*(float *)(void *)arena, (double)want);
}
END_TEST

static int arena_rd(void *ctx, uint64_t a, void *d, size_t n) {
  (void)ctx;
  if (a < ARENA_BASE || a - ARENA_BASE > ARENA_SIZE - n) return -1;
  memcpy(d, arena + (a - ARENA_BASE), n);
  return 0;
}
static int arena_wr(void *ctx, uint64_t a, const void *src, size_t n) {
  (void)ctx;
  if (a < ARENA_BASE || a - ARENA_BASE > ARENA_SIZE - n) return -1;
  memcpy(arena + (a - ARENA_BASE), src, n);
  return 0;
}

/* Guards @%p / @!%p and the special registers in a 2-D block of a 2-D grid: each thread writes
 * {tid.x, tid.y, ntid.x, ntid.y, ctaid.x, ctaid.y, nctaid.x, laneid, guard} to its slot. */
START_TEST(guards_and_special_registers) {
  const char *ptx = HEAD ".visible .entry k(\n\t.param .u64 .ptr .global .align 1 k_param_0\n)\n{\n"
    "\t.reg .pred %p<2>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<4>;\n"
    "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %tid.y;\n\tmov.u32 %r3, %ntid.x;\n\tmov.u32 %r4, %ntid.y;\n"
    "\tmov.u32 %r5, %ctaid.x;\n\tmov.u32 %r6, %ctaid.y;\n\tmov.u32 %r7, %nctaid.x;\n\tmov.u32 %r8, %laneid;\n"
    "\tsetp.lt.u32 %p1, %r1, 3;\n\tmov.b32 %r9, 0;\n\t@!%p1 add.s32 %r9, %r9, 7;\n\t@%p1 add.s32 %r9, %r9, 100;\n"
    "\tmad.lo.s32 %r10, %r6, %r7, %r5;\n"                      /* CTA index */
    "\tmul.lo.s32 %r11, %r3, %r4;\n\tmad.lo.s32 %r12, %r2, %r3, %r1;\n\tmad.lo.s32 %r13, %r10, %r11, %r12;\n"
    "\tmul.wide.u32 %rd1, %r13, 36;\n\tld.param.b64 %rd2, [k_param_0];\n\tadd.s64 %rd3, %rd2, %rd1;\n"
    "\tst.global.v4.b32 [%rd3], {%r1, %r2, %r3, %r4};\n\tst.global.v4.b32 [%rd3+16], {%r5, %r6, %r7, %r8};\n"
    "\tst.global.b32 [%rd3+32], %r9;\n\tret;\n}\n";
  ptx_module *m;
  char err[256];
  ck_assert_msg(ptx_parse(ptx, &m, err, sizeof err) == 0, "%s", err);
  uint64_t arg = ARENA_BASE;
  ptx_launch l = {.grid = {2, 3, 1}, .block = {5, 4, 1}, .params = &arg, .params_size = 8,
                  .mem = {.read = arena_rd, .write = arena_wr}};
  ptx_report rep;
  /* v4 stores need 16-byte alignment: 36-byte slots are only 4-aligned, so the first one that is not faults. */
  ck_assert_int_eq(ptx_run(m, &l, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "misaligned 16-byte global access at 0x100000024") && strstr(rep.msg, "thread 1,0,0"),
                "%s", rep.msg);
  ptx_free(m);
  char fixed[2048];
  snprintf(fixed, sizeof fixed, "%s", ptx);
  char *p = strstr(fixed, ", 36;");
  memcpy(p, ", 48;", 5);
  ck_assert_msg(ptx_parse(fixed, &m, err, sizeof err) == 0, "%s", err);
  ck_assert_msg(ptx_run(m, &l, &rep) == 0, "%s", rep.msg);
  ptx_free(m);
  const uint32_t *o = (const uint32_t *)(const void *)arena;
  for (uint32_t cy = 0; cy < 3; cy++)
    for (uint32_t cx = 0; cx < 2; cx++)
      for (uint32_t ty = 0; ty < 4; ty++)
        for (uint32_t tx = 0; tx < 5; tx++) {
          uint32_t lin = ty * 5 + tx, slot = (cy * 2 + cx) * 20 + lin;
          uint32_t want[9] = {tx, ty, 5, 4, cx, cy, 2, lin % 32, tx < 3 ? 100u : 7u};
          for (int k = 0; k < 9; k++)
            ck_assert_msg(o[slot * 12 + k] == want[k], "CTA %u,%u thread %u,%u value %d: %u, want %u", cx, cy, tx, ty,
                          k, o[slot * 12 + k], want[k]);
        }
}
END_TEST

/* Launch errors: threads on different barriers, a kernel without ret, a short param buffer, a wrong entry. */
START_TEST(launch_errors) {
  ptx_report rep;
  const char *diverge = HEAD ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n"
                        "\tmov.u32 %r1, %tid.x;\n\tsetp.eq.s32 %p1, %r1, 0;\n\t@%p1 bra $L__BB0_2;\n"
                        "\tbar.sync 0;\n\tret;\n$L__BB0_2:\n\tbar.sync 0;\n\tret;\n}\n"; /* bar.sync lines 13, 16 */
  ck_assert_int_eq(run_ptx(diverge, 1, 4, (uint64_t[]){ARENA_BASE}, 1, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "different barriers") && strstr(rep.msg, "ptx line 13"), "%s", rep.msg);
  const char *noret = HEAD ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .b32 %r<4>;\n\tmov.u32 %r1, %tid.x;\n}\n";
  ck_assert_int_eq(run_ptx(noret, 1, 1, (uint64_t[]){ARENA_BASE}, 1, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "without ret"), "%s", rep.msg);
  ptx_module *m;
  char err[256];
  ck_assert_int_eq(ptx_parse(noret, &m, err, sizeof err), 0);
  uint32_t small = 0;
  ptx_launch l = {.grid = {1, 1, 1}, .block = {1, 1, 1}, .params = &small, .params_size = 4,
                  .mem = {.read = arena_rd, .write = arena_wr}};
  ck_assert_int_eq(ptx_run(m, &l, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "params_size 4") && strstr(rep.msg, "needs 8 bytes"), "%s", rep.msg);
  l.entry = "other";
  ck_assert_int_eq(ptx_run(m, &l, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "no .entry named other"), "%s", rep.msg);
  ptx_free(m);
  /* An undefined branch target and a .func are parse errors with their line. */
  const char *nolabel = HEAD ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\tbra.uni $L__BB0_9;\n\tret;\n}\n";
  ck_assert_int_eq(ptx_parse(nolabel, &m, err, sizeof err), -1);
  ck_assert_msg(strstr(err, "ptx line 8: undefined label: bra.uni $L__BB0_9"), "%s", err);
  const char *func = HEAD ".func f()\n{\n\tret;\n}\n";
  ck_assert_int_eq(ptx_parse(func, &m, err, sizeof err), -1);
  ck_assert_msg(strstr(err, "ptx line 4") && strstr(err, ".func"), "%s", err);
}
END_TEST

/* Generic addresses: cvta.shared/.local make generic pointers that plain ld/st/atom resolve back to the CTA's
 * shared memory and the thread's local memory; cvta.to.* goes the other way; global pointers pass through. */
START_TEST(generic_addresses) {
  const char *ptx = HEAD ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<12>;\n"
    "\t.shared .align 8 .b8 s[64];\n\t.local .align 8 .b8 __local_depot0[16];\n"
    "\tmov.u32 %r1, %tid.x;\n\tmov.b64 %rd1, s;\n\tcvta.shared.u64 %rd2, %rd1;\n"
    "\tmov.b64 %rd3, __local_depot0;\n\tcvta.local.u64 %rd4, %rd3;\n"
    "\tadd.s32 %r2, %r1, 10;\n\tst.u32 [%rd4+4], %r2;\n"                 /* local[4] = tid + 10 (generic) */
    "\tatom.add.u32 %r3, [%rd2+8], %r1;\n"                                 /* shared[8] += tid (generic atom) */
    "\tbar.sync 0;\n\tcvta.to.local.u64 %rd5, %rd4;\n\tld.local.u32 %r4, [%rd5+4];\n"
    "\tcvta.to.shared.u64 %rd6, %rd2;\n\tld.shared.u32 %r5, [%rd6+8];\n"
    "\tld.param.b64 %rd7, [k_param_0];\n\tcvta.to.global.u64 %rd8, %rd7;\n\tmul.wide.u32 %rd9, %r1, 8;\n"
    "\tadd.s64 %rd10, %rd8, %rd9;\n\tst.v2.u32 [%rd10], {%r4, %r5};\n\tret;\n}\n";
  ptx_report rep;
  ck_assert_msg(run_ptx(ptx, 1, 8, (uint64_t[]){ARENA_BASE}, 1, &rep) == 0, "%s", rep.msg);
  const uint32_t *o = (const uint32_t *)(const void *)arena;
  for (uint32_t t = 0; t < 8; t++) {
    ck_assert_uint_eq(o[2 * t], t + 10);
    ck_assert_uint_eq(o[2 * t + 1], 0 + 1 + 2 + 3 + 4 + 5 + 6 + 7);
  }
}
END_TEST

TCase *strict_tests(void) {
  TCase *tc = tcase_create("strict");
  tcase_add_test(tc, unknown_instruction_names_line);
  tcase_add_test(tc, unknown_modifier_and_type);
  tcase_add_test(tc, unknown_state_space_names_line);
  tcase_add_test(tc, global_fault_names_address_and_line);
  tcase_add_test(tc, shared_out_of_bounds);
  tcase_add_test(tc, instruction_budget);
  tcase_add_test(tc, rounding_and_conversions);
  tcase_add_test(tc, fma_rounds_once);
  tcase_add_test(tc, guards_and_special_registers);
  tcase_add_test(tc, launch_errors);
  tcase_add_test(tc, generic_addresses);
  return tc;
}
