/* tests/unit/compile/test_amdgpu_mock.c: AMD kernels that use the GPU's structure, run on the device DEV
 * (MOCKPCI+AMD in the suite: the emulated RDNA3 shader core executes them) and checked against the same
 * AST compiled with no_opt on the same device: work-group reduces through LDS (bg_kopts.group) for sum
 * and max in float32 and int32, row reduces, a matmul with few outputs, two dependent reduces, with the
 * heuristics and with explicit group sizes (with and without unroll). Floats agree within a tolerance
 * (the group reorders the sums), integers exactly. The render must hold an LDS array and a barrier and
 * the code object a group segment. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "compile/kernel.h"
#include "compile/krender_llvm.h"
#include "compile/ktc.h"
#include "platform/mock_plugin.h"
#include "util/half.h"
#include "ast_build.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

static bg_dev *dev;

static void setup(void) {
  const char *name = getenv("DEV");
  OK(bg_dev_open(name ? name : "MOCKPCI+AMD", &dev));
  ck_assert_ptr_nonnull(C = ir_new());
}
static void teardown(void) {
  ir_free(C);
  C = NULL;
  bg_dev_close(dev);
}

typedef struct gk {
  const char *what;
  N sink;
  enum ir_scalar sc;
  size_t out_n, in_n;     /* elements of the output and of each input */
  unsigned nin;           /* inputs (slots 1..) */
  unsigned red;           /* terms per output (tolerance) */
  bool want_group;        /* the heuristics must choose a group */
  enum ir_scalar in_sc;   /* inputs' scalar (0: sc) */
  unsigned want_tile;     /* the heuristics must choose this tile */
} gk;

enum { NGK = 7, NTK = 3 };

static N fmax_(N a, N b) { return ir_alu2(C, IR_MAX, a, b); }

static gk kernel(int i) {
  enum ir_scalar f = IR_DT_FLOAT32, s = IR_DT_INT32;
  switch (i) {
  case 0: {   /* out[0] = sum a[k], 4096 */
    N k = red_r(0, 4096);
    return (gk){"sum f32", sink1(st(buf(0, f), ki(0), reduce(IR_ADD, ld(buf(1, f), k), k, NULL))), f, 1, 4096, 1, 4096, true, 0, 0};
  }
  case 1: {   /* out[i] = max_k a[i*1024+k], 4 rows */
    N r = out_r(0, 4), k = red_r(1, 1024);
    return (gk){"max rows f32", sink1(st(buf(0, f), r, reduce(IR_MAX, ld(buf(1, f), add(mul(r, ki(1024)), k)), k, NULL))), f,
                4, 4096, 1, 1024, true, 0, 0};
  }
  case 2: {   /* out[0] = sum a[k], int32 */
    N k = red_r(0, 2048);
    return (gk){"sum i32", sink1(st(buf(0, s), ki(0), reduce(IR_ADD, ld(buf(1, s), k), k, NULL))), s, 1, 2048, 1, 2048, true, 0, 0};
  }
  case 3: {   /* out[i] = max_k a[i*512+k], int32, 2 rows */
    N r = out_r(0, 2), k = red_r(1, 512);
    return (gk){"max rows i32", sink1(st(buf(0, s), r, reduce(IR_MAX, ld(buf(1, s), add(mul(r, ki(512)), k)), k, NULL))), s,
                2, 1024, 1, 512, true, 0, 0};
  }
  case 4: {   /* out[i*4+j] = sum_k a[i*512+k] * b[k*4+j]: 2x4 outputs, 512 deep */
    N r = out_r(0, 2), c = out_r(1, 4), k = red_r(2, 512);
    N v = mul(ld(buf(1, f), add(mul(r, ki(512)), k)), ld(buf(2, f), add(mul(k, ki(4)), c)));
    return (gk){"matmul 2x4x512 f32", sink1(st(buf(0, f), add(mul(r, ki(4)), c), reduce(IR_ADD, v, k, NULL))), f, 8, 2048, 2,
                512, true, 0, 0};
  }
  case 5: {   /* out[i] = sum_k (a[i,k] - max_j a[i,j]): a reduce reading another, 2 rows of 256 */
    N r = out_r(0, 2), k = red_r(1, 256), j = red_r(2, 256);
    N mx = reduce(IR_MAX, ld(buf(1, f), add(mul(r, ki(256)), j)), j, NULL);
    N v = ir_alu2(C, IR_SUB, ld(buf(1, f), add(mul(r, ki(256)), k)), mx);
    return (gk){"sum minus max f32", sink1(st(buf(0, f), r, reduce(IR_ADD, v, k, NULL))), f, 2, 512, 1, 512, true, 0, 0};
  }
  default: {  /* out[0] = sum over 2 reduce axes 64 x 32 of max(a, 0) */
    N k = red_r(0, 64), l = red_r(1, 32);
    N v = fmax_(ld(buf(1, f), add(mul(k, ki(32)), l)), kf(0));
    return (gk){"sum 2 axes f32", sink1(st(buf(0, f), ki(0), reduce(IR_ADD, v, k, l))), f, 1, 2048, 1, 2048, true, 0, 0};
  }
  }
}

/* Matmul-shaped kernels for local tiles: out[i*n+j] = sum_k a[i*kd+k] * b[k*n+j]. */
static gk tile_kernel(int i) {
  enum ir_scalar f = IR_DT_FLOAT32, h = IR_DT_FLOAT16;
  int64_t m = i == 0 ? 32 : 16, n = i == 0 ? 48 : 32, kd = i == 0 ? 64 : 48;
  N r = out_r(0, m), c = out_r(1, n), k = red_r(2, kd);
  enum ir_scalar in = i == 0 ? f : h, out = i == 1 ? f : in;
  N a = ld(buf(1, in), add(mul(r, ki(kd)), k)), b = ld(buf(2, in), add(mul(k, ki(n)), c));
  if (i == 1) a = ir_cast(C, f, a), b = ir_cast(C, f, b);   /* float16 inputs, float32 sums */
  N v = reduce(IR_ADD, mul(a, b), k, NULL);
  static const char *const what[] = {"tiled matmul f32", "tiled matmul f16->f32", "tiled matmul f16"};
  return (gk){what[i], sink1(st(buf(0, out), add(mul(r, ki(n)), c), v)), out, (size_t)(m * n), (size_t)(kd * (m > n ? m : n)),
              2, (unsigned)kd, false, in, 16};
}

static size_t esize(enum ir_scalar sc) { return sc == IR_DT_FLOAT16 ? 2 : 4; }

/* Deterministic inputs: floats in [-1, 1), int32 in [-1000, 1000), float16 multiples of 1/64 in [-2, 2). */
static void fill(void *p, size_t n, enum ir_scalar sc, unsigned slot) {
  uint32_t x = 0x9e3779b9u * (slot + 1);
  for (size_t i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    if (sc == IR_DT_FLOAT32) ((float *)p)[i] = (float)(x >> 8) / 8388608.0f - 1.0f;
    else if (sc == IR_DT_BFLOAT16) ((uint16_t *)p)[i] = (uint16_t)(((x >> 20) & 1 ? 0xbf80u : 0x3f80u) - 0x0080u * ((x >> 21) % 3) + ((x >> 9) & 0x7fu));
    else if (sc == IR_DT_FLOAT16) ((uint16_t *)p)[i] = (uint16_t)(((x >> 20) & 1 ? 0xbc00u : 0x3c00u) - 0x0400u * ((x >> 21) % 3) + ((x >> 9) & 0x3ffu));
    else ((int32_t *)p)[i] = (int32_t)(x >> 8) % 1000;
  }
}

/* The emulated core's counters (platform/mock_plugin.h, ABI 5) of the MOCKPCI device. */
static bg_mock_shader_stats core_stats(void) {
  bg_mock_shader_stats counters;
  OK(bg_mock_plugin_shader_stats("MOCKPCI", 0, &counters));
  return counters;
}

/* Runs t with opts on dev; out gets the output elements. *applied = what the compiler chose. The core must
 * have executed LDS instructions exactly when the kernel uses LDS (group, tile) and WMMA exactly for tc. */
static void run(const gk *t, const bg_kopts *opts, void *out, bg_kopts *applied, uint32_t *lds) {
  bg_kernel k;
  bg_program *p;
  int rc = bg_kernel_build(dev, C, t->sink, opts, &k, &p);
  ck_assert_msg(rc == 0, "%s: build: %s", t->what, bg_last_error());
  if (applied) *applied = k.opts;
  if (k.opts.group > 1) {   /* render checks: an LDS array, a barrier, the group in lsz x */
    ck_assert_msg(strstr(k.src, "addrspace(3) global"), "%s: no LDS array in\n%s", t->what, k.src);
    ck_assert_msg(strstr(k.src, "call void @llvm.amdgcn.s.barrier()"), "%s: no barrier", t->what);
    ck_assert_uint_eq(k.lsz[0], k.opts.group);
  }
  if (k.opts.tile > 1) {   /* two LDS tiles, barriers, T x T threads */
    ck_assert_msg(strstr(k.src, "@lds1 = internal addrspace(3) global"), "%s: no LDS tiles in\n%s", t->what, k.src);
    ck_assert_msg(strstr(k.src, "call void @llvm.amdgcn.s.barrier()"), "%s: no barrier", t->what);
    ck_assert_uint_eq(k.lsz[0], k.opts.tile);
    ck_assert_uint_eq(k.lsz[1], k.opts.tile);
  }
  bg_buf *b[3] = {0};
  enum ir_scalar in_sc = t->in_sc ? t->in_sc : t->sc;
  size_t esz = esize(t->sc), isz = esize(in_sc);
  void *data = malloc((t->in_n > t->out_n ? t->in_n : t->out_n) * 4);
  ck_assert_ptr_nonnull(data);
  OK(bg_buf_alloc(dev, t->out_n * esz, 0, &b[0]));
  memset(data, 0x5a, t->out_n * esz);   /* not a result: every output must be written */
  OK(bg_buf_write(b[0], 0, data, t->out_n * esz));
  for (unsigned s = 1; s <= t->nin; s++) {
    fill(data, t->in_n, in_sc, s);
    OK(bg_buf_alloc(dev, t->in_n * isz, 0, &b[s]));
    OK(bg_buf_write(b[s], 0, data, t->in_n * isz));
  }
  bg_mock_shader_stats before = core_stats();
  OK(bg_program_run(p, b, t->nin + 1, NULL, 0, k.gsz, k.lsz, true, NULL));
  bg_mock_shader_stats after = core_stats();
  uint64_t lds_insts = after.lds_insts - before.lds_insts, wmma = after.wmma_insts - before.wmma_insts;
  bool uses_lds = k.opts.group > 1 || k.opts.tile > 1;
  ck_assert_uint_eq(after.dispatches - before.dispatches, 1);
  ck_assert_msg(uses_lds ? lds_insts > 0 && after.lds_load_bytes > before.lds_load_bytes : lds_insts == 0,
                "%s (%s): %llu LDS instructions executed", t->what, k.name, (unsigned long long)lds_insts);
  ck_assert_msg(k.opts.tc ? wmma >= k.gsz[0] * k.gsz[1] : wmma == 0, "%s (%s): %llu WMMA instructions executed", t->what,
                k.name, (unsigned long long)wmma);
  if (lds) *lds = (uint32_t)lds_insts;
  OK(bg_buf_read(b[0], 0, out, t->out_n * esz));
  for (unsigned s = 0; s <= t->nin; s++) bg_buf_free(b[s]);
  free(data);
  bg_program_free(p);
  bg_kernel_free(&k);
}

static void compare(const gk *t, const void *want, const void *got, const char *how) {
  for (size_t i = 0; i < t->out_n; i++) {
    if (t->sc == IR_DT_INT32) {
      ck_assert_msg(((const int32_t *)want)[i] == ((const int32_t *)got)[i], "%s (%s): out[%zu] = %d, no_opt %d", t->what, how,
                    i, ((const int32_t *)got)[i], ((const int32_t *)want)[i]);
    } else {
      double w = ((const float *)want)[i], g = ((const float *)got)[i];
      /* reordered float32 sums of terms |x| <= 1 (matmul: products): error bound ~ terms * eps */
      double tol = 1e-6 * t->red + 1e-6 * fabs(w);
      ck_assert_msg(fabs(w - g) <= tol, "%s (%s): out[%zu] = %.9g, no_opt %.9g (tolerance %.3g)", t->what, how, i, g, w, tol);
    }
  }
}

/* Heuristics (a group chosen where the outputs are few) and explicit groups, each against no_opt. */
START_TEST(group_reduce_matches_no_opt) {
  gk t = kernel(_i);
  float want[16], got[16];
  bg_kopts none = {.no_opt = true}, applied;
  run(&t, &none, want, NULL, NULL);
  run(&t, NULL, got, &applied, NULL);
  compare(&t, want, got, "heuristics");
  if (t.want_group) ck_assert_msg(applied.group > 1, "%s: the heuristics chose no group", t.what);
  static const struct { uint16_t g; uint8_t unroll; } tries[] = {{8, 0}, {32, 4}, {64, 0}, {256, 0}, {16, 2}};
  for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
    bg_kopts o = {.group = tries[i].g, .unroll = tries[i].unroll};
    char how[48];
    snprintf(how, sizeof how, "group %u unroll %u", tries[i].g, tries[i].unroll);
    bg_kernel k;
    void *elf = NULL;
    size_t n = 0;
    if (bg_kernel_compile_amdgpu(C, t.sink, &o, "gfx1100", &k, &elf, &n)) continue;   /* not valid for this kernel */
    free(elf);
    bg_kernel_free(&k);
    memset(got, 0, sizeof got);
    run(&t, &o, got, &applied, NULL);
    ck_assert_uint_eq(applied.group, tries[i].g);
    compare(&t, want, got, how);
  }
}
END_TEST

/* Local tiles (heuristics: 16; explicit 8 and 4) write exactly what no_opt writes: each thread sums its
 * output in reduce order, from LDS instead of global memory. */
START_TEST(tiled_matmul_matches_no_opt) {
  gk t = tile_kernel(_i);
  size_t bytes = t.out_n * esize(t.sc);
  uint8_t *want = malloc(bytes), *got = malloc(bytes);
  ck_assert_ptr_nonnull(want);
  ck_assert_ptr_nonnull(got);
  bg_kopts none = {.no_opt = true}, applied;
  run(&t, &none, want, NULL, NULL);
  run(&t, NULL, got, &applied, NULL);
  /* float16 inputs: the heuristics use the tensor cores where the processor's form says so (compile/ktc.h) */
  const ktc_shape *tc = ktc_shape_of(ktc_form_of(bg_dev_arch(dev)));
  bool want_tc = tc && tc->by_default && (t.in_sc == IR_DT_FLOAT16 || t.sc == IR_DT_FLOAT16);
  if (want_tc) {
    ck_assert_msg(applied.tc, "%s: the heuristics chose no tc on %s", t.what, bg_dev_arch(dev));
  } else {
    ck_assert_msg(applied.tile == t.want_tile, "%s: the heuristics chose tile %u", t.what, applied.tile);
    ck_assert_msg(!memcmp(want, got, bytes), "%s: tile %u writes other bytes than no_opt", t.what, applied.tile);
  }
  static const uint8_t tiles[] = {8, 4};
  for (size_t i = 0; i < sizeof tiles; i++) {
    bg_kopts o = {.tile = tiles[i]};
    memset(got, 0, bytes);
    run(&t, &o, got, &applied, NULL);
    ck_assert_uint_eq(applied.tile, tiles[i]);
    ck_assert_msg(!memcmp(want, got, bytes), "%s: tile %u writes other bytes than no_opt", t.what, tiles[i]);
  }
  free(want);
  free(got);
}
END_TEST

/* A bfloat16 matmul with float32 sums: out[i*32+j] = sum_k float(a[i*64+k]) * float(b[k*32+j]), 32x32x64. */
static gk bf16_kernel(void) {
  enum ir_scalar f = IR_DT_FLOAT32, b = IR_DT_BFLOAT16;
  N r = out_r(0, 32), c = out_r(1, 32), k = red_r(2, 64);
  N x = ir_cast(C, f, ld(buf(1, b), add(mul(r, ki(64)), k))), y = ir_cast(C, f, ld(buf(2, b), add(mul(k, ki(32)), c)));
  return (gk){"wmma matmul bf16->f32", sink1(st(buf(0, f), add(mul(r, ki(32)), c), reduce(IR_ADD, mul(x, y), k, NULL))), f,
              32 * 32, 64 * 32, 2, 64, false, b, 0};
}

/* WMMA (tc) on the emulated RDNA3 core: float16 -> float32, float16 -> float16 and bfloat16 -> float32
 * matmuls against no_opt on the same device. Inputs have 11 (bfloat16: 8) significant bits, so the
 * products are exact in float32 and only the order of the sums differs (float16 output: no_opt also
 * rounds each product to float16: within K half-ulps of the products). */
START_TEST(wmma_matches_no_opt) {
  gk t = _i == 2 ? bf16_kernel() : tile_kernel(_i + 1);
  size_t bytes = t.out_n * esize(t.sc);
  uint8_t *want = malloc(bytes), *got = malloc(bytes);
  ck_assert_ptr_nonnull(want);
  ck_assert_ptr_nonnull(got);
  bg_kopts none = {.no_opt = true}, o = {.tc = true}, applied;
  run(&t, &none, want, NULL, NULL);
  run(&t, &o, got, &applied, NULL);
  ck_assert(applied.tc);
  for (size_t i = 0; i < t.out_n; i++) {
    double w, g;
    if (t.sc == IR_DT_FLOAT16) {
      w = bg_f16_to_f32(((uint16_t *)want)[i]);
      g = bg_f16_to_f32(((uint16_t *)got)[i]);
    } else {
      float fw, fg;
      memcpy(&fw, want + 4 * i, 4);
      memcpy(&fg, got + 4 * i, 4);
      w = fw;
      g = fg;
    }
    double tol = t.sc == IR_DT_FLOAT16 ? 2e-3 * t.red + 2e-3 * fabs(w) : 1e-6 * t.red + 1e-6 * fabs(w);
    ck_assert_msg(fabs(w - g) <= tol, "%s (tc): out[%zu] = %.9g, no_opt %.9g (tolerance %.3g)", t.what, i, g, w, tol);
  }
  free(want);
  free(got);
}
END_TEST

/* Options a group cannot take name what is wrong. */
START_TEST(group_errors) {
  gk t = kernel(0);
  bg_kernel k;
  void *elf = NULL;
  size_t n = 0;
  bg_kopts o = {.group = 24};
  ck_assert_int_eq(bg_kernel_compile_amdgpu(C, t.sink, &o, "gfx1100", &k, &elf, &n), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "group 24 does not divide"), "%s", bg_last_error());
  o.group = 512;
  ck_assert_int_eq(bg_kernel_compile_amdgpu(C, t.sink, &o, "gfx1100", &k, &elf, &n), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "exceeds"), "%s", bg_last_error());
  o.group = 8;   /* the C renderer has no LDS */
  ck_assert_int_eq(bg_kernel_render(C, t.sink, &o, &k), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "needs an AMD GPU"), "%s", bg_last_error());
  N i = out_r(0, 64);   /* elementwise: nothing to group */
  N e = sink1(st(buf(0, IR_DT_FLOAT32), i, ld(buf(1, IR_DT_FLOAT32), i)));
  ck_assert_int_eq(bg_kernel_compile_amdgpu(C, e, &o, "gfx1100", &k, &elf, &n), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "without a reduce"), "%s", bg_last_error());
  bg_kopts tl = {.tile = 16};   /* a sum is not a matmul; 32 x 48 x 64 is not divisible by 5 */
  ck_assert_int_eq(bg_kernel_compile_amdgpu(C, t.sink, &tl, "gfx1100", &k, &elf, &n), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "tile 16: needs exactly 2 output axes"), "%s", bg_last_error());
  tl.tile = 5;
  ck_assert_int_eq(bg_kernel_compile_amdgpu(C, tile_kernel(0).sink, &tl, "gfx1100", &k, &elf, &n), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "T must divide every extent"), "%s", bg_last_error());
  tl.tile = 8;
  tl.upcast[0] = 2;
  ck_assert_int_eq(bg_kernel_compile_amdgpu(C, tile_kernel(0).sink, &tl, "gfx1100", &k, &elf, &n), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "excludes upcast"), "%s", bg_last_error());
}
END_TEST

int main(void) {
  Suite *s = suite_create("amdgpu-mock");
  TCase *tc = tcase_create("gpu-kernels");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, group_reduce_matches_no_opt, 0, NGK);
  tcase_add_loop_test(tc, tiled_matmul_matches_no_opt, 0, NTK);
  tcase_add_loop_test(tc, wmma_matches_no_opt, 0, 3);
  tcase_add_test(tc, group_errors);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
