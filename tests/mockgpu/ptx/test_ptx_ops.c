/* tests/mockgpu/ptx/test_ptx_ops.c: single instructions in PTX as LLVM writes it, one kernel each:
 * %r1/%r2/%r4 (b32) and %rd1/%rd2/%rd4 (b64) hold the inputs, the instruction writes %rd3 (64-bit ops) or
 * %r3, which is stored. Expected values worked out by hand or by C on the host. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_ptx_harness.h"

typedef struct { const char *ins; uint64_t a, b, c, want; } op_case;

static uint32_t fb(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static uint64_t run_op(const char *ins, uint64_t a, uint64_t b, uint64_t c) {
  char ptx[2048];
  snprintf(ptx, sizeof ptx,
           ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
           "\t.reg .pred %%p<3>;\n\t.reg .b16 %%rs<4>;\n\t.reg .b32 %%r<8>;\n\t.reg .b64 %%rd<8>;\n"
           "\tmov.b32 %%r1, %u;\n\tmov.b32 %%r2, %u;\n\tmov.b32 %%r4, %u;\n"
           "\tmov.b64 %%rd1, %llu;\n\tmov.b64 %%rd2, %llu;\n\tmov.b64 %%rd4, %llu;\n"
           "\tmov.b64 %%rd3, 0;\n\tmov.b32 %%r3, 0;\n\t%s\n\tcvt.u64.u32 %%rd5, %%r3;\n\tor.b64 %%rd3, %%rd3, %%rd5;\n"
           "\tld.param.b64 %%rd6, [k_param_0];\n\tst.global.b64 [%%rd6], %%rd3;\n\tret;\n}\n",
           (uint32_t)a, (uint32_t)b, (uint32_t)c, (unsigned long long)a, (unsigned long long)b, (unsigned long long)c, ins);
  ptx_report rep;
  int rc = run_ptx(ptx, 1, 1, (uint64_t[]){ARENA_BASE}, 1, &rep);
  ck_assert_msg(rc == 0, "%s: %s", ins, rep.msg);
  uint64_t v;
  memcpy(&v, arena, 8);
  return v;
}

static const op_case int_cases[] = {
  {"rem.s32 %r3, %r1, %r2;", (uint32_t)-17, 5, 0, (uint32_t)-2},
  {"rem.u32 %r3, %r1, %r2;", (uint32_t)-17, 5, 0, 4294967279u % 5},
  {"div.s64 %rd3, %rd1, %rd2;", (uint64_t)-100000000000ll, 7, 0, (uint64_t)(-100000000000ll / 7)},
  {"rem.s64 %rd3, %rd1, %rd2;", (uint64_t)-100000000000ll, 7, 0, (uint64_t)(-100000000000ll % 7)},
  {"mad.wide.s32 %rd3, %r1, %r2, %rd4;", (uint32_t)-3, 1000000000, 5, (uint64_t)(-3000000000ll + 5)},
  {"mad.wide.u32 %rd3, %r1, %r2, %rd4;", 4000000000u, 3, 5, 12000000005ull},
  {"mul.wide.s16 %r3, %r1, %r2;", 0xffff, 300, 0, (uint32_t)-300},
  {"mad.hi.u32 %r3, %r1, %r2, %r4;", 0x80000000u, 6, 1, 4},
  {"mul.hi.u64 %rd3, %rd1, %rd2;", ~0ull, ~0ull, 0, ~0ull - 1},
  {"neg.s32 %r3, %r1;", 5, 0, 0, (uint32_t)-5},
  {"abs.s32 %r3, %r1;", (uint32_t)-7, 0, 0, 7},
  {"add.sat.s32 %r3, %r1, %r2;", 0x7ffffff0u, 100, 0, 0x7fffffffu},
  {"sub.sat.s32 %r3, %r1, %r2;", 0x80000010u, 100, 0, 0x80000000u},
  {"shr.s32 %r3, %r1, %r2;", 0x80000000u, 40, 0, 0xffffffffu},
  {"shr.u32 %r3, %r1, %r2;", 0x80000000u, 40, 0, 0},
  {"shl.b64 %rd3, %rd1, %r2;", 1, 63, 0, 1ull << 63},
  {"shr.u16 %rs1, %r1, 4;\n\tcvt.u32.u16 %r3, %rs1;", 0xfff0abcdu, 0, 0, 0xabc},
  {"min.u32 %r3, %r1, %r2;", (uint32_t)-1, 3, 0, 3},
  {"max.s64 %rd3, %rd1, %rd2;", (uint64_t)-1, 3, 0, 3},
  {"not.b32 %r3, %r1;", 0x0f0f0f0fu, 0, 0, 0xf0f0f0f0u},
  {"xor.b32 %r3, %r1, %r2;", 0xff00ff00u, 0x0ff00ff0u, 0, 0xf0f0f0f0u},
  {"cvt.sat.u8.s32 %r3, %r1;", (uint32_t)-5, 0, 0, 0},
  {"cvt.s64.s16 %rd3, %r1;", 0x8001, 0, 0, (uint64_t)(int64_t)(int16_t)0x8001},
  {"cvt.u32.u64 %r3, %rd1;", 0x123456789ull, 0, 0, 0x23456789u},
  {"setp.hi.u32 %p1, %r1, %r2;\n\tselp.b32 %r3, 1, 0, %p1;", (uint32_t)-1, 1, 0, 1},
  {"setp.gt.s32 %p1, %r1, %r2;\n\tselp.b32 %r3, 1, 0, %p1;", (uint32_t)-1, 1, 0, 0},
  {"setp.ne.s32 %p1, %r1, %r2;\n\tsetp.eq.s32 %p2, %r1, %r4;\n\tand.pred %p1, %p1, %p2;\n\tselp.b32 %r3, 1, 0, %p1;", 3, 4, 3, 1},
  {"setp.eq.s32 %p1, %r1, %r2;\n\tnot.pred %p1, %p1;\n\t@%p1 mov.b32 %r3, 9;", 3, 4, 0, 9},
  /* funnel shifts (LLVM's rotates): b:a with b the high word */
  {"shf.l.wrap.b32 %r3, %r1, %r1, 13;", 0x80000001u, 0, 0, 0x3000u},
  {"shf.l.wrap.b32 %r3, %r1, %r2, %r4;", 0x12345678u, 0x9abcdef0u, 36, 0xabcdef01u},
  {"shf.r.wrap.b32 %r3, %r1, %r2, 8;", 0x12345678u, 0x9abcdef0u, 0, 0xf0123456u},
  {"shf.r.clamp.b32 %r3, %r1, %r2, %r4;", 0x12345678u, 0x9abcdef0u, 40, 0x9abcdef0u},
  {"shf.l.clamp.b32 %r3, %r1, %r2, %r4;", 0x12345678u, 0x9abcdef0u, 33, 0x12345678u},
  /* a vector of immediates (LLVM stores constants so): packed first element low */
  /* two f32 packed into f16x2: a in the upper half (1.0 -> 0x3c00), b in the lower (-2.0009765625 rounds to -2.0) */
  {"cvt.rn.f16x2.f32 %r3, %r1, %r2;", 0x3f800000u, 0xc0001000u, 0, 0x3c00c000u},
  {"cvt.rz.f16x2.f32 %r3, %r1, %r2;", 0x3f800000u, 0xc0003000u, 0, 0x3c00c001u}, /* -2.0029296875: .rn gives c002 */
  /* sm_100 .f32x2 on b64 (low lane first): (2, 3) * (4, -0.5) = (8, -1.5); fma + (1, 1) = (9, -0.5) */
  {"mul.rn.f32x2 %rd3, %rd1, %rd2;", 0x4040000040000000ull, 0xbf00000040800000ull, 0, 0xbfc0000041000000ull},
  {"fma.rn.f32x2 %rd3, %rd1, %rd2, %rd4;", 0x4040000040000000ull, 0xbf00000040800000ull, 0x3f8000003f800000ull,
   0xbf00000041100000ull},
  /* sm_100 mixed precision: f16 1.5 (low half of %r1) +/- f32 0.25 */
  {"mov.b32 {%rs1, %rs2}, %r1; add.rn.f32.f16 %r3, %rs1, %r2;", 0x3e00, 0x3e800000u, 0, 0x3fe00000u},
  {"mov.b32 {%rs1, %rs2}, %r1; sub.rn.f32.f16 %r3, %rs1, %r2;", 0x3e00, 0x3e800000u, 0, 0x3fa00000u},
  {"mov.b32 {%rs1, %rs2}, %r1; fma.rn.f32.f16 %r3, %rs1, %rs1, %r2;", 0x3e00, 0x3e800000u, 0, 0x40200000u},
  {"mov.b64 %rd3, {0f3F800000, 7};", 0, 0, 0, 0x000000073f800000ull},
  {"ld.param.b64 %rd6, [k_param_0];\n\tst.global.v2.b32 [%rd6+8], {0f3F800000, 9};\n\tld.global.b64 %rd3, [%rd6+8];", 0, 0, 0,
   0x000000093f800000ull},
  {"mov.b64 {%r5, %r6}, %rd1;\n\tadd.s32 %r3, %r5, %r6;", 0x500000003ull, 0, 0, 8},
  {"mov.b64 %rd3, {%r1, %r2};", 7, 9, 0, 0x900000007ull},
  {"mov.b32 {%rs1, %rs2}, %r1;\n\tmov.b32 %r3, {%rs2, %rs1};", 0x11112222u, 0, 0, 0x22221111u},
};

START_TEST(integer_instructions) {
  const op_case *k = &int_cases[_i];
  uint64_t got = run_op(k->ins, k->a, k->b, k->c);
  ck_assert_msg(got == k->want, "%s (a=0x%llx b=0x%llx c=0x%llx): 0x%llx, want 0x%llx", k->ins, (unsigned long long)k->a,
                (unsigned long long)k->b, (unsigned long long)k->c, (unsigned long long)got, (unsigned long long)k->want);
}
END_TEST

/* .approx math: the hardware is within a few ulp of the exact value; check 2^-20 relative. */
typedef struct { const char *ins; float x; double want; } approx_case;
static const approx_case approx_cases[] = {
  {"ex2.approx.f32 %r3, %r1;", 3.5f, 11.313708498984761}, {"lg2.approx.f32 %r3, %r1;", 10.0f, 3.321928094887362},
  {"sin.approx.f32 %r3, %r1;", 1.0f, 0.8414709848078965}, {"cos.approx.f32 %r3, %r1;", 1.0f, 0.5403023058681398},
  {"rsqrt.approx.f32 %r3, %r1;", 2.0f, 0.7071067811865476}, {"rcp.approx.ftz.f32 %r3, %r1;", 3.0f, 1.0 / 3.0},
  {"sqrt.approx.f32 %r3, %r1;", 2.0f, 1.4142135623730951}, {"div.approx.f32 %r3, %r1, %r1;", 7.0f, 1.0},
  {"ex2.approx.ftz.f32 %r3, %r1;", -1.0f, 0.5},
};

START_TEST(approx_math) {
  const approx_case *k = &approx_cases[_i];
  uint64_t got = run_op(k->ins, fb(k->x), 0, 0);
  float f;
  uint32_t u = (uint32_t)got;
  memcpy(&f, &u, 4);
  double w = k->want;
  ck_assert_msg(fabs(f - w) <= fabs(w) * 0x1p-20, "%s(%g) = %.9g, want %.9g", k->ins, (double)k->x, (double)f, w);
}
END_TEST

/* Float edge cases: .ftz flushes subnormal inputs, .sat clamps, min/max ignore one NaN, neg/abs flip bits. */
static const op_case float_cases[] = {
  {"add.ftz.f32 %r3, %r1, %r2;", 0x00000001u, 0x00000001u, 0, 0},
  {"add.f32 %r3, %r1, %r2;", 0x00000001u, 0x00000001u, 0, 2},
  {"mul.rn.sat.f32 %r3, %r1, %r2;", 0x40000000u /* 2 */, 0x40400000u /* 3 */, 0, 0x3f800000u},
  {"add.rn.sat.f32 %r3, %r1, %r2;", 0x7fc00000u, 0, 0, 0},
  {"max.f32 %r3, %r1, %r2;", 0x7fc00000u, 0x40000000u, 0, 0x40000000u},
  {"neg.f32 %r3, %r1;", 0, 0, 0, 0x80000000u},
  {"abs.f32 %r3, %r1;", 0xbf800000u, 0, 0, 0x3f800000u},
  {"sub.rn.f64 %rd3, %rd1, %rd2;", 0x3ff0000000000000ull, 0x3cb0000000000000ull /* 2^-52 */, 0, 0x3feffffffffffffeull},
  {"cvt.rn.f16.f32 %rs1, %r1;\n\tcvt.u32.u16 %r3, %rs1;", 0x3f801000u /* 1 + 2^-11: a tie */, 0, 0, 0x3c00},
  {"cvt.rn.f16.f32 %rs1, %r1;\n\tcvt.u32.u16 %r3, %rs1;", 0x3f803000u /* 1 + 3 * 2^-11: a tie */, 0, 0, 0x3c02},
  {"cvt.f32.f16 %r3, %rs1;", 0, 0, 0, 0}, /* %rs1 is 0 */
  {"cvt.rzi.s32.f32 %r3, %r1;", 0x7fc00000u, 0, 0, 0},
  {"cvt.rni.s32.f32 %r3, %r1;", 0x4f800000u /* 2^32 */, 0, 0, 0x7fffffffu},
  {"cvt.rni.f32.f32 %r3, %r1;", 0x40200000u /* 2.5 */, 0, 0, 0x40000000u},
  {"cvt.rpi.u32.f32 %r3, %r1;", 0xbf000000u /* -0.5 */, 0, 0, 0},
  {"cvt.rn.f32.u64 %r3, %rd1;", ~0ull, 0, 0, 0x5f800000u},
  {"cvt.rn.f64.s32 %rd3, %r1;", (uint32_t)-3, 0, 0, 0xc008000000000000ull},
  {"setp.nan.f32 %p1, %r1, %r2;\n\tselp.b32 %r3, 1, 0, %p1;", 0x7fc00000u, 0, 0, 1},
  {"setp.num.f32 %p1, %r1, %r2;\n\tselp.b32 %r3, 1, 0, %p1;", 0x7fc00000u, 0, 0, 0},
  {"setp.neu.f32 %p1, %r1, %r2;\n\tselp.b32 %r3, 1, 0, %p1;", 0x7fc00000u, 0x7fc00000u, 0, 1},
  {"setp.ne.f32 %p1, %r1, %r2;\n\tselp.b32 %r3, 1, 0, %p1;", 0x7fc00000u, 0x7fc00000u, 0, 0},
  {"setp.geu.f64 %p1, %rd1, %rd2;\n\tselp.b32 %r3, 1, 0, %p1;", 0x3ff0000000000000ull, 0x4000000000000000ull, 0, 0},
};

START_TEST(float_instructions) {
  const op_case *k = &float_cases[_i];
  uint64_t got = run_op(k->ins, k->a, k->b, k->c);
  ck_assert_msg(got == k->want, "%s (a=0x%llx b=0x%llx): 0x%llx, want 0x%llx", k->ins, (unsigned long long)k->a,
                (unsigned long long)k->b, (unsigned long long)got, (unsigned long long)k->want);
}
END_TEST

TCase *ops_tests(void) {
  TCase *tc = tcase_create("ops");
  tcase_add_loop_test(tc, integer_instructions, 0, (int)(sizeof int_cases / sizeof int_cases[0]));
  tcase_add_loop_test(tc, approx_math, 0, (int)(sizeof approx_cases / sizeof approx_cases[0]));
  tcase_add_loop_test(tc, float_instructions, 0, (int)(sizeof float_cases / sizeof float_cases[0]));
  return tc;
}
