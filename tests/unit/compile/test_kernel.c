/* tests/unit/compile/test_kernel.c: the kernel compiler (compile/kernel.h) end to end on the CPU
 * device: kernel ASTs built by hand with the ir API, rendered to C, compiled, run, and compared
 * with plain C: elementwise (broadcast index math), gated loads, reduces, matmuls, float16,
 * casts, threefry known answers, transcendental functions, every upcast/unroll choice against
 * no_opt, symbolic sizes, warning-free generated C, contract errors, and a timing print of a
 * 512^3 matmul (heuristics vs no_opt). KTEST_DUMP=1 prints every generated source.
 *
 * Every test runs twice, once per CPU kernel compiler (BG_CPU_COMPILER, compile/kernel.c): "c" (C renderer +
 * the system C compiler, -ffp-contract=off) and, when built with LLVM, "llvm" (LLVM IR compiled in process for
 * this CPU; every float32/float64 multiply-add, a*b+c or a sum of products, is one FMA).
 *
 * Tolerance table: what a float result may differ by from the test's plain-C reference (rounding every
 * operation, in order). Against no_opt every optimization choice is bit-exact with either compiler (the LLVM
 * path fuses every multiply-add, whatever the upcast/unroll, so BEAM can compare candidates byte for byte).
 *   kernel kind                                    c               llvm
 *   integer, bool, casts, bitcasts, constants      bit-exact       bit-exact
 *   float loads/stores, add/sub/max/cmp/where,
 *     neg/recip/div/trunc, sums of values          bit-exact       bit-exact
 *   float multiply-add chain of K products         bit-exact       |d| <= 2 * K * eps * S, S = sum_k |a_k * b_k|
 *     (matmul, convolution, dot, MULACC a*b+c)                     (+ |c|), eps = 2^-23 (f32), 2^-52 (f64)
 *   float16/bfloat16 arithmetic (per-op rounding)  bit-exact       bit-exact (a rounded product never fuses)
 *   exp2/log2/sin/sqrt                             transcendental_accuracy's bounds, both
 * (FMA rounds a*b+c once where the plain C rounds twice: each of the K steps may differ by a rounding of its
 * product and of the sum, each within eps times the magnitudes summed so far, so within 2*K*eps*S in all.) */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baregpu/compile.h"
#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#include "compile/kernel.h"
#include "ast_build.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

static bg_dev *dev;
static bool use_llvm;   /* this test case's CPU kernel compiler is LLVM (the tolerance table's right column) */

static void setup(void) {
  OK(bg_dev_open("CPU", &dev));
  ck_assert_ptr_nonnull(C = ir_new());
}

static void setup_c(void) {
  setenv("BG_CPU_COMPILER", "c", 1);
  use_llvm = false;
  setup();
}

static void setup_llvm(void) {
  setenv("BG_CPU_COMPILER", "llvm", 1);
  use_llvm = true;
  setup();
}

/* The table's multiply-add row: may got differ from want, a chain of k products whose magnitudes sum to sum_abs? */
static bool mac_close(double got, double want, int k, double sum_abs, bool f64) {
  if (!use_llvm) return got == want || (isnan(got) && isnan(want));
  double eps = f64 ? 0x1p-52 : 0x1p-23;
  return fabs(got - want) <= 2.0 * (double)k * eps * sum_abs;
}

static void teardown(void) {
  ir_free(C);
  C = NULL;
  bg_dev_close(dev);
  dev = NULL;
}

/* ---------------- running ---------------- */

static bg_buf *mkbuf(const void *data, size_t n) {
  bg_buf *b;
  OK(bg_buf_alloc(dev, n ? n : 1, BG_BUF_ZERO, &b));
  if (data) OK(bg_buf_write(b, 0, data, n));
  return b;
}

static bool dump(void) {
  const char *e = getenv("KTEST_DUMP");
  return e && *e && *e != '0';
}

/* Builds and runs sink on bufs (and int32 vars); fills *k (caller frees); returns the kernel time. */
static double run_k(N sink, const bg_kopts *opts, bg_buf **bufs, size_t nbufs, const uint64_t *vars, size_t nvars,
                    bg_kernel *k) {
  bg_program *p = NULL;
  OK(bg_kernel_build(dev, C, sink, opts, k, &p));
  if (dump()) printf("---- %s\n%s", k->name, k->src);
  ck_assert_uint_eq(k->nbufs, nbufs);
  ck_assert_uint_eq(k->nvars, nvars);
  double us = 0;
  OK(bg_program_run(p, bufs, nbufs, vars, nvars, k->gsz, k->lsz, true, &us));
  bg_program_free(p);
  return us;
}

static void run_simple(N sink, const bg_kopts *opts, bg_buf **bufs, size_t nbufs, char *name, size_t n) {
  bg_kernel k;
  run_k(sink, opts, bufs, nbufs, NULL, 0, &k);
  if (name) snprintf(name, n, "%s", k.name);
  bg_kernel_free(&k);
}

/* ---------------- generated C is warning-free ---------------- */

static void check_warnings(const bg_kernel *k) {
  if (use_llvm) return;   /* k->src is LLVM IR, verified by LLVM when it was compiled */
  void *so = NULL;
  size_t n = 0;
  int rc = bg_compile_c(k->src, "-Wall -Wextra -Werror", &so, &n);
  ck_assert_msg(rc == 0, "%s does not compile cleanly with -Wall -Wextra -Werror: %s\n%s", k->name, bg_last_error(), k->src);
  free(so);
}

static void rd(bg_buf *b, void *dst, size_t n) { OK(bg_buf_read(b, 0, dst, n)); }

static uint32_t rng_state = 12345;
static float frand(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffff) / 65536.0f * 2.0f - 1.0f;
}

static const bg_kopts NO_OPT = {.no_opt = true};

/* ---------------- elementwise ---------------- */

/* out[i, j] = a[i, j] + b[j] over a 3x4 range (b broadcast along i), float32 and int32. */
START_TEST(elementwise_add_broadcast) {
  for (int t = 0; t < 2; t++) {
    enum ir_scalar s = t ? IR_DT_INT32 : IR_DT_FLOAT32;
    N o = buf(0, s), a = buf(1, s), b = buf(2, s), i = out_r(0, 3), j = out_r(1, 4);
    N flat = add(mul(i, ki(4)), j);
    N sk = sink1(st(o, flat, add(ld(a, flat), ld(b, j))));
    float af[12], bf[4], of[12] = {0};
    int32_t ai[12], bi[4], oi[12] = {0};
    for (int x = 0; x < 12; x++) {
      af[x] = frand();
      ai[x] = (int32_t)(frand() * 1e9f);
    }
    for (int x = 0; x < 4; x++) {
      bf[x] = frand();
      bi[x] = x == 0 ? INT32_MAX : (int32_t)(frand() * 1e9f);   /* wraps: two's complement */
    }
    for (int opt = 0; opt < 2; opt++) {
      bg_buf *bufs[3] = {mkbuf(NULL, 48), mkbuf(t ? (void *)ai : (void *)af, 48), mkbuf(t ? (void *)bi : (void *)bf, 16)};
      char name[64];
      run_simple(sk, opt ? &NO_OPT : NULL, bufs, 3, name, sizeof name);
      ck_assert_str_eq(name, "E_3_4");   /* no_opt: loops 3 x 4; heuristics: upcast 4, outer extent 1 */
      rd(bufs[0], t ? (void *)oi : (void *)of, 48);
      for (int x = 0; x < 12; x++) {
        if (t) ck_assert_int_eq(oi[x], (int32_t)((uint32_t)ai[x] + (uint32_t)bi[x % 4]));
        else ck_assert_msg(of[x] == af[x] + bf[x % 4], "elem %d: %g != %g", x, of[x], af[x] + bf[x % 4]);
      }
      for (int x = 0; x < 3; x++) bg_buf_free(bufs[x]);
    }
  }
}
END_TEST

/* The names of the brief's reference kernels. */
START_TEST(kernel_names) {
  char name[64];
  bg_kernel k;
  /* elementwise 3 */
  N o = buf(0, IR_DT_FLOAT32), a = buf(1, IR_DT_FLOAT32), r = out_r(0, 3);
  OK(bg_kernel_render(C, sink1(st(o, r, add(ld(a, r), kf(1)))), NULL, &k));
  ck_assert_str_eq(k.name, "E_3");
  bg_kernel_free(&k);
  /* 16-element add */
  N b = buf(2, IR_DT_FLOAT32);
  r = out_r(0, 16);
  OK(bg_kernel_render(C, sink1(st(o, r, add(ld(a, r), ld(b, r)))), NULL, &k));
  ck_assert_str_eq(k.name, "E_4_4");
  bg_kernel_free(&k);
  /* 2x2 reduce over axis 1 */
  N i = out_r(0, 2), j = red_r(1, 2);
  OK(bg_kernel_render(C, sink1(st(o, i, reduce(IR_ADD, ld(a, add(mul(i, ki(2)), j)), j, NULL))), NULL, &k));
  ck_assert_str_eq(k.name, "r_2_2");
  bg_kernel_free(&k);
  /* sum of 256 */
  N s = red_r(0, 256);
  OK(bg_kernel_render(C, sink1(st(o, ki(0), reduce(IR_ADD, ld(a, s), s, NULL))), NULL, &k));
  ck_assert_str_eq(k.name, "r_64_4");
  bg_kernel_free(&k);
  /* 64x64 matmul */
  N mi = out_r(0, 64), mj = out_r(1, 64), mk = red_r(2, 64);
  N v = mul(ld(a, add(mul(mi, ki(64)), mk)), ld(b, add(mul(mk, ki(64)), mj)));
  OK(bg_kernel_render(C, sink1(st(o, add(mul(mi, ki(64)), mj), reduce(IR_ADD, v, mk, NULL))), NULL, &k));
  snprintf(name, sizeof name, "%s", k.name);
  printf("kernel names: E_3 E_4_4 r_2_2 r_64_4 %s (64x64 matmul, %llu flops)\n", name, (unsigned long long)k.flops);
  ck_assert_str_eq(name, "r_16_8_4_8_16_4");
  ck_assert_uint_eq(k.opts.upcast[0], 4);
  ck_assert_uint_eq(k.opts.upcast[1], 8);
  ck_assert_uint_eq(k.opts.unroll, 4);
  ck_assert_uint_eq(k.flops, 2ull * 64 * 64 * 64);
  bg_kernel_free(&k);
}
END_TEST

/* ---------------- gated loads ---------------- */

/* Padding: out[i] = 1 <= i < n+1 ? a[i-1] : 0, out of n+2 elements (the gate written as
 * !(i < 1) & (i < n+1)), then * 2 + 1. */
START_TEST(gated_padded_load) {
  static const int sizes[] = {4, 6, 14};
  for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
    int n = sizes[t];
    N o = buf(0, IR_DT_FLOAT32), a = buf(1, IR_DT_FLOAT32), i = out_r(0, n + 2);
    N valid = and_(not_(lt(i, ki(1))), lt(i, ki(n + 1)));
    N v = ldg(a, add(i, ki(-1)), valid);
    N sk = sink1(st(o, i, add(mul(v, kf(2)), kf(1))));
    float in[16], out[16];
    for (int x = 0; x < n; x++) in[x] = frand();
    for (int opt = 0; opt < 3; opt++) {
      bg_kopts up2 = {.upcast = {2}};
      bg_buf *bufs[2] = {mkbuf(NULL, sizeof(float) * (size_t)(n + 2)), mkbuf(in, sizeof(float) * (size_t)n)};
      run_simple(sk, opt == 0 ? NULL : opt == 1 ? &NO_OPT : &up2, bufs, 2, NULL, 0);
      rd(bufs[0], out, sizeof(float) * (size_t)(n + 2));
      for (int x = 0; x < n + 2; x++) {
        float want = (x >= 1 && x <= n ? in[x - 1] * 2.0f : 0.0f) + 1.0f;
        ck_assert_msg(out[x] == want, "n %d opt %d elem %d: %g != %g", n, opt, x, out[x], want);
      }
      bg_buf_free(bufs[0]);
      bg_buf_free(bufs[1]);
    }
  }
}
END_TEST

/* A gated store (only even i written), a load whose gate is never true (0) and a store whose gate
 * is never true (dropped). */
START_TEST(gated_store_and_never_valid) {
  N o = buf(0, IR_DT_FLOAT32), o2 = buf(1, IR_DT_FLOAT32), a = buf(2, IR_DT_FLOAT32), i = out_r(0, 8);
  N even = ir_alu2(C, IR_CMPEQ, ir_alu2(C, IR_MOD, i, ki(2)), ki(0));
  N gs[2] = {index_of(o, i, even), add(ld(a, i), ldg(a, i, lt(i, ki(0))))};
  N never[2] = {index_of(o2, i, lt(ki(8), i)), ld(a, i)};
  ir_arg z = {.i = 0};
  N stores[2] = {ir_intern(C, IR_STORE, IR_DT_VOID, z, 2, gs), ir_intern(C, IR_STORE, IR_DT_VOID, z, 2, never)};
  float in[8], out[8], out2[8];
  for (int x = 0; x < 8; x++) in[x] = frand();
  for (int opt = 0; opt < 2; opt++) {
    bg_buf *bufs[3] = {mkbuf(NULL, sizeof out), mkbuf(NULL, sizeof out2), mkbuf(in, sizeof in)};
    bg_kernel k;
    run_k(sinkv(2, stores), opt ? &NO_OPT : NULL, bufs, 3, NULL, 0, &k);
    ck_assert_ptr_null(strstr(k.src, "data1["));   /* the never-valid store is gone */
    check_warnings(&k);
    bg_kernel_free(&k);
    rd(bufs[0], out, sizeof out);
    rd(bufs[1], out2, sizeof out2);
    for (int x = 0; x < 8; x++) {
      ck_assert_msg(out[x] == (x % 2 ? 0.0f : in[x]), "elem %d", x);
      ck_assert(out2[x] == 0.0f);
    }
    for (int x = 0; x < 3; x++) bg_buf_free(bufs[x]);
  }
}
END_TEST

/* NEG RECIP TRUNC FDIV MAX WHERE MULACC SUB and a comparison, float32 and float64, against C. */
START_TEST(float_ops) {
  enum { NX = 64 };
  for (int t = 0; t < 2; t++) {
    enum ir_scalar sc = t ? IR_DT_FLOAT64 : IR_DT_FLOAT32;
    size_t es = t ? 8 : 4;
    double av[NX], bv[NX];
    uint8_t ab[NX * 8], bb[NX * 8], outb[8][NX * 8];
    for (int x = 0; x < NX; x++) {
      av[x] = frand() * 100;
      bv[x] = x % 7 ? frand() * 10 : 0.5;
      if (t) {
        memcpy(ab + x * 8, &av[x], 8);
        memcpy(bb + x * 8, &bv[x], 8);
      } else {
        float fa = (float)av[x], fb = (float)bv[x];
        memcpy(ab + x * 4, &fa, 4);
        memcpy(bb + x * 4, &fb, 4);
      }
    }
    N i = out_r(0, NX), A = ld(buf(8, sc), i), B = ld(buf(9, sc), i);
    N vals[8] = {ir_alu1(C, IR_NEG, A), ir_alu1(C, IR_RECIP, B), ir_alu1(C, IR_TRUNC, A), ir_alu2(C, IR_FDIV, A, B),
                 ir_alu2(C, IR_MAX, A, B), ir_alu3(C, IR_WHERE, lt(A, B), A, B), ir_alu3(C, IR_MULACC, A, B, A),
                 ir_cast(C, sc, lt(B, ir_alu2(C, IR_SUB, A, B)))};
    N stores[8];
    bg_buf *bufs[10];
    for (int o = 0; o < 8; o++) {
      stores[o] = st(buf(o, sc), i, vals[o]);
      bufs[o] = mkbuf(NULL, NX * es);
    }
    bufs[8] = mkbuf(ab, NX * es);
    bufs[9] = mkbuf(bb, NX * es);
    bg_kernel k;
    run_k(sinkv(8, stores), NULL, bufs, 10, NULL, 0, &k);
    check_warnings(&k);
    bg_kernel_free(&k);
    for (int o = 0; o < 8; o++) rd(bufs[o], outb[o], NX * es);
    for (int x = 0; x < NX; x++) {
      for (int o = 0; o < 8; o++) {
        bool same;
        if (t) {
          double a = av[x], b = bv[x], g, w;
          w = o == 0 ? -a : o == 1 ? 1.0 / b : o == 2 ? trunc(a) : o == 3 ? a / b : o == 4 ? (a >= b ? a : b)
            : o == 5 ? (a < b ? a : b) : o == 6 ? a * b + a : (double)(b < a - b);
          memcpy(&g, outb[o] + x * 8, 8);
          same = o == 6 ? mac_close(g, w, 1, fabs(a * b) + fabs(a), true) : g == w;
        } else {
          float a = (float)av[x], b = (float)bv[x], g, w;
          w = o == 0 ? -a : o == 1 ? 1.0f / b : o == 2 ? truncf(a) : o == 3 ? a / b : o == 4 ? (a >= b ? a : b)
            : o == 5 ? (a < b ? a : b) : o == 6 ? (float)(a * b) + a : (float)(b < a - b);
          memcpy(&g, outb[o] + x * 4, 4);
          same = o == 6 ? mac_close(g, w, 1, fabsf(a * b) + fabsf(a), false) : g == w;
        }
        ck_assert_msg(same, "%s op #%d elem %d", ir_scalar_name(sc), o, x);
      }
    }
    for (int o = 0; o < 10; o++) bg_buf_free(bufs[o]);
  }
}
END_TEST

/* Index math beyond 32 bits is int64_t (rendered and compiled, not run). */
START_TEST(wide_index_math) {
  N i = out_r(0, 3000000000ll), j = out_r(1, 4);
  N sk = sink1(st(buf(0, IR_DT_FLOAT32), add(mul(i, ki(4)), j), kf(1)));
  bg_kernel k;
  OK(bg_kernel_render(C, sk, &NO_OPT, &k));
  ck_assert_ptr_nonnull(strstr(k.src, "int64_t ridx0"));
  ck_assert_ptr_nonnull(strstr(k.src, "(int64_t)"));
  ck_assert_str_eq(k.name, "E_3000000000_4");
  check_warnings(&k);
  bg_kernel_free(&k);
}
END_TEST

/* ---------------- reduces ---------------- */

/* Sum over axis 1 and max over axis 1 of a 5x8 matrix (two outputs of one kernel), and the sum of
 * 256 elements. */
START_TEST(reduce_sum_max) {
  float in[40], sum[5], mx[5];
  for (int x = 0; x < 40; x++) in[x] = frand();
  for (int opt = 0; opt < 3; opt++) {
    N o0 = buf(0, IR_DT_FLOAT32), o1 = buf(1, IR_DT_FLOAT32), a = buf(2, IR_DT_FLOAT32);
    N i = out_r(0, 5), j = red_r(1, 8), j2 = red_r(2, 8);
    N stores[2] = {st(o0, i, reduce(IR_ADD, ld(a, add(mul(i, ki(8)), j)), j, NULL)),
                   st(o1, i, reduce(IR_MAX, ld(a, add(mul(i, ki(8)), j2)), j2, NULL))};
    bg_kopts un4 = {.unroll = 4};
    bg_buf *bufs[3] = {mkbuf(NULL, 20), mkbuf(NULL, 20), mkbuf(in, sizeof in)};
    char name[64];
    run_simple(sinkv(2, stores), opt == 0 ? NULL : opt == 1 ? &NO_OPT : &un4, bufs, 3, name, sizeof name);
    ck_assert_str_eq(name, opt == 1 ? "r_5_8_8" : "r_5_8_2_4");
    rd(bufs[0], sum, sizeof sum);
    rd(bufs[1], mx, sizeof mx);
    for (int r = 0; r < 5; r++) {
      float s = 0, m = -INFINITY;
      for (int c = 0; c < 8; c++) {
        s += in[r * 8 + c];
        m = in[r * 8 + c] > m ? in[r * 8 + c] : m;
      }
      ck_assert_msg(sum[r] == s, "row %d sum %g != %g", r, sum[r], s);
      ck_assert_msg(mx[r] == m, "row %d max %g != %g", r, mx[r], m);
    }
    for (int x = 0; x < 3; x++) bg_buf_free(bufs[x]);
  }
  /* any(): MAX over bool rows */
  {
    uint8_t bits[4 * 8] = {0}, any[4];
    bits[3] = bits[8 + 7] = bits[24] = bits[25] = 1;
    N bi = out_r(0, 4), bj = red_r(1, 8);
    bg_buf *bb[2] = {mkbuf(NULL, 4), mkbuf(bits, sizeof bits)};
    run_simple(sink1(st(buf(0, IR_DT_BOOL), bi, reduce(IR_MAX, ld(buf(1, IR_DT_BOOL), add(mul(bi, ki(8)), bj)), bj, NULL))),
               NULL, bb, 2, NULL, 0);
    rd(bb[0], any, 4);
    ck_assert(any[0] == 1 && any[1] == 1 && any[2] == 0 && any[3] == 1);
    bg_buf_free(bb[0]);
    bg_buf_free(bb[1]);
  }
  /* sum of 256 int32 and float32 */
  int32_t vi[256], si = 0;
  float vf[256], sf = 0;
  for (int x = 0; x < 256; x++) {
    vi[x] = (int32_t)(frand() * 1000);
    vf[x] = frand();
    si += vi[x];
    sf += vf[x];
  }
  for (int t = 0; t < 2; t++) {
    enum ir_scalar sc = t ? IR_DT_INT32 : IR_DT_FLOAT32;
    N o = buf(0, sc), a = buf(1, sc), r = red_r(0, 256);
    bg_buf *bufs[2] = {mkbuf(NULL, 4), mkbuf(t ? (void *)vi : (void *)vf, 1024)};
    char name[64];
    run_simple(sink1(st(o, ki(0), reduce(IR_ADD, ld(a, r), r, NULL))), NULL, bufs, 2, name, sizeof name);
    ck_assert_str_eq(name, "r_64_4");
    if (t) {
      int32_t got;
      rd(bufs[0], &got, 4);
      ck_assert_int_eq(got, si);
    } else {
      float got;
      rd(bufs[0], &got, 4);
      ck_assert_msg(got == sf, "sum %g != %g", got, sf);
    }
    bg_buf_free(bufs[0]);
    bg_buf_free(bufs[1]);
  }
}
END_TEST

/* REDUCEs closing the same ranges share loops only when independent: M = sum_k a[k]*X with
 * X = sum_j b[j], M2 = sum_k c[k] (grouped with M), R = sum_j d[j]*M2 (same ranges as X, but it
 * needs M2 final, so it must not join X's loop that runs before M's). */
START_TEST(reduce_groups_respect_dependencies) {
  float a[4], b[4], cc[4], d[4];
  for (int x = 0; x < 4; x++) {
    a[x] = frand();
    b[x] = frand();
    cc[x] = frand();
    d[x] = frand();
  }
  N k = red_r(1, 4), j = red_r(2, 4);
  N X = reduce(IR_ADD, ld(buf(3, IR_DT_FLOAT32), j), j, NULL);
  N M = reduce(IR_ADD, mul(ld(buf(2, IR_DT_FLOAT32), k), X), k, NULL);
  N M2 = reduce(IR_ADD, ld(buf(4, IR_DT_FLOAT32), k), k, NULL);
  N R = reduce(IR_ADD, mul(ld(buf(5, IR_DT_FLOAT32), j), M2), j, NULL);
  N stores[2] = {st(buf(0, IR_DT_FLOAT32), ki(0), M), st(buf(1, IR_DT_FLOAT32), ki(0), R)};
  bg_buf *bufs[6] = {mkbuf(NULL, 4), mkbuf(NULL, 4), mkbuf(a, 16), mkbuf(b, 16), mkbuf(cc, 16), mkbuf(d, 16)};
  bg_kernel kn;
  run_k(sinkv(2, stores), &NO_OPT, bufs, 6, NULL, 0, &kn);
  bg_kernel_free(&kn);
  float gm, gr, xs = 0, ms = 0, m2 = 0, rs = 0;
  for (int x = 0; x < 4; x++) xs += b[x];
  for (int x = 0; x < 4; x++) ms += a[x] * xs;
  for (int x = 0; x < 4; x++) m2 += cc[x];
  for (int x = 0; x < 4; x++) rs += d[x] * m2;
  rd(bufs[0], &gm, 4);
  rd(bufs[1], &gr, 4);
  /* multiply-add chains of 4 products of values in [-1, 1] and sums of 4 of them: sum|a*b| <= 16 */
  ck_assert_msg(mac_close(gm, ms, 4, 16, false), "M %g != %g", gm, ms);
  ck_assert_msg(mac_close(gr, rs, 4, 16, false), "R %g != %g", gr, rs);
  for (int x = 0; x < 6; x++) bg_buf_free(bufs[x]);
}
END_TEST

/* ---------------- matmul ---------------- */

static N matmul_ast(int m, int n, int kk) {
  N o = buf(0, IR_DT_FLOAT32), a = buf(1, IR_DT_FLOAT32), b = buf(2, IR_DT_FLOAT32);
  N i = out_r(0, m), j = out_r(1, n), k = red_r(2, kk);
  N v = mul(ld(a, add(mul(i, ki(kk)), k)), ld(b, add(mul(k, ki(n)), j)));
  return sink1(st(o, add(mul(i, ki(n)), j), reduce(IR_ADD, v, k, NULL)));
}

static void matmul_ref(const float *a, const float *b, float *c, int m, int n, int kk, float *sum_abs) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float acc = 0, s = 0;
      for (int k = 0; k < kk; k++) {
        acc += a[i * kk + k] * b[k * n + j];
        s += fabsf(a[i * kk + k] * b[k * n + j]);
      }
      c[i * n + j] = acc;
      if (sum_abs) sum_abs[i * n + j] = s;
    }
}

/* Runs an m x n x kk matmul with opts; returns the kernel time in us. */
static double matmul_run(int m, int n, int kk, const bg_kopts *opts, const float *a, const float *b, float *c,
                         char *name, size_t nname) {
  bg_buf *bufs[3] = {mkbuf(NULL, sizeof(float) * (size_t)(m * n)), mkbuf(a, sizeof(float) * (size_t)(m * kk)),
                     mkbuf(b, sizeof(float) * (size_t)(kk * n))};
  bg_kernel k;
  double us = run_k(matmul_ast(m, n, kk), opts, bufs, 3, NULL, 0, &k);
  if (name) snprintf(name, nname, "%s", k.name);
  bg_kernel_free(&k);
  rd(bufs[0], c, sizeof(float) * (size_t)(m * n));
  for (int x = 0; x < 3; x++) bg_buf_free(bufs[x]);
  return us;
}

static void check_matmul(int m, int n, int kk) {
  float *a = malloc(sizeof(float) * (size_t)(m * kk)), *b = malloc(sizeof(float) * (size_t)(kk * n));
  float *c = malloc(sizeof(float) * (size_t)(m * n)), *ref = malloc(sizeof(float) * (size_t)(m * n));
  float *sabs = malloc(sizeof(float) * (size_t)(m * n));
  for (int x = 0; x < m * kk; x++) a[x] = frand();
  for (int x = 0; x < kk * n; x++) b[x] = frand();
  matmul_ref(a, b, ref, m, n, kk, sabs);
  for (int opt = 0; opt < 2; opt++) {
    char name[64];
    matmul_run(m, n, kk, opt ? &NO_OPT : NULL, a, b, c, name, sizeof name);
    int bad = -1;
    for (int x = 0; x < m * n && bad < 0; x++)
      if (!mac_close(c[x], ref[x], kk, sabs[x], false)) bad = x;
    ck_assert_msg(bad < 0, "%dx%dx%d %s elem %d: %g != %g", m, n, kk, name, bad, bad < 0 ? 0 : c[bad], bad < 0 ? 0 : ref[bad]);
  }
  free(a);
  free(b);
  free(c);
  free(ref);
  free(sabs);
}

START_TEST(matmul_64) { check_matmul(64, 64, 64); }
END_TEST

START_TEST(matmul_odd) {
  check_matmul(33, 17, 9);
  check_matmul(1, 1, 1);
  check_matmul(3, 12, 20);
}
END_TEST

/* 512^3: the heuristically optimized kernel against no_opt (times printed, not asserted). */
START_TEST(matmul_512_timing) {
  const int n = 512;
  size_t sz = (size_t)n * n;
  float *a = malloc(sizeof(float) * sz), *b = malloc(sizeof(float) * sz), *c0 = malloc(sizeof(float) * sz),
        *c1 = malloc(sizeof(float) * sz);
  for (size_t x = 0; x < sz; x++) {
    a[x] = frand();
    b[x] = frand();
  }
  char name[64], name0[64];
  double best[2] = {1e30, 1e30};
  for (int rep = 0; rep < 2; rep++) {
    double t0 = matmul_run(n, n, n, &NO_OPT, a, b, c0, name0, sizeof name0);
    double t1 = matmul_run(n, n, n, NULL, a, b, c1, name, sizeof name);
    if (t0 < best[0]) best[0] = t0;
    if (t1 < best[1]) best[1] = t1;
  }
  ck_assert_int_eq(memcmp(c0, c1, sizeof(float) * sz), 0);   /* upcast/unroll keep every result (either compiler) */
  printf("matmul 512x512x512: no_opt %s %.1f ms (%.2f GFLOPS), heuristic %s %.1f ms (%.2f GFLOPS), speedup %.1fx\n",
         name0, best[0] / 1e3, 2.0 * n * n * n / best[0] / 1e3, name, best[1] / 1e3, 2.0 * n * n * n / best[1] / 1e3,
         best[0] / best[1]);
  free(a);
  free(b);
  free(c0);
  free(c1);
}
END_TEST

/* ---------------- integer ops against ir_eval ---------------- */

static const enum ir_op int_ops[] = {IR_ADD, IR_SUB, IR_MUL, IR_IDIV, IR_MOD, IR_MAX, IR_CMPLT,
                                     IR_CMPNE, IR_CMPEQ, IR_AND, IR_OR, IR_XOR, IR_SHL, IR_SHR};
enum { NINT_OPS = sizeof int_ops / sizeof int_ops[0] };

static void put_int(void *p, size_t i, enum ir_scalar s, int64_t v) {
  switch (ir_scalar_size(s)) {
  case 1: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case 2: ((uint16_t *)p)[i] = (uint16_t)v; break;
  case 4: ((uint32_t *)p)[i] = (uint32_t)v; break;
  default: ((uint64_t *)p)[i] = (uint64_t)v; break;
  }
}

static int64_t get_int(const void *p, size_t i, enum ir_scalar s) {
  uint64_t u;
  switch (ir_scalar_size(s)) {
  case 1: u = ((const uint8_t *)p)[i]; break;
  case 2: u = ((const uint16_t *)p)[i]; break;
  case 4: u = ((const uint32_t *)p)[i]; break;
  default: u = ((const uint64_t *)p)[i]; break;
  }
  return ir_const_int(C, IR_DT_VEC(s, 1), (int64_t)u)->arg.i;   /* sign- or zero-extended like ir */
}

/* Every op of int_ops on every pair of edge values, in int8/uint16/int32/uint32/int64/uint64
 * (wrapping, C division incl. MIN / -1, shifts by >= the width), equal to ir_eval. */
START_TEST(integer_ops_match_ir_eval) {
  static const enum ir_scalar types[] = {IR_DT_INT8, IR_DT_UINT16, IR_DT_INT32, IR_DT_UINT32, IR_DT_INT64, IR_DT_UINT64};
  static const int64_t vals[] = {0, 1, -1, 2, 7, -7, 3, 31, 32, 33, 63, 64, -128, 127, 255, 100000, INT32_MIN,
                                 INT32_MAX, INT64_MIN, INT64_MAX, 0x5555555555555555ll};
  enum { NV = sizeof vals / sizeof vals[0], NP = NV * NV };
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    enum ir_scalar sc = types[t];
    ir_dtype dt = sc;
    size_t es = ir_scalar_size(sc);
    uint8_t *a = calloc(NP, es), *b = calloc(NP, es), *bd = calloc(NP, es), *out = calloc(NP, 8);
    for (int x = 0; x < NV; x++)
      for (int y = 0; y < NV; y++) {
        int64_t bv = ir_const_int(C, dt, vals[y])->arg.i;
        put_int(a, (size_t)(x * NV + y), sc, vals[x]);
        put_int(b, (size_t)(x * NV + y), sc, vals[y]);
        put_int(bd, (size_t)(x * NV + y), sc, bv == 0 ? 1 : vals[y]);
      }
    N in_a = buf(NINT_OPS, sc), in_b = buf(NINT_OPS + 1, sc), in_d = buf(NINT_OPS + 2, sc), i = out_r(0, NP);
    N stores[NINT_OPS];
    for (int o = 0; o < NINT_OPS; o++) {
      enum ir_op op = int_ops[o];
      bool cmp = op == IR_CMPLT || op == IR_CMPNE || op == IR_CMPEQ;
      N rhs = op == IR_IDIV || op == IR_MOD ? ld(in_d, i) : ld(in_b, i);
      stores[o] = st(buf(o, cmp ? IR_DT_BOOL : sc), i, ir_alu2(C, op, ld(in_a, i), rhs));
    }
    bg_buf *bufs[NINT_OPS + 3];
    for (int o = 0; o < NINT_OPS; o++) bufs[o] = mkbuf(NULL, NP * es);
    bufs[NINT_OPS] = mkbuf(a, NP * es);
    bufs[NINT_OPS + 1] = mkbuf(b, NP * es);
    bufs[NINT_OPS + 2] = mkbuf(bd, NP * es);
    bg_kernel k;
    run_k(sinkv(NINT_OPS, stores), NULL, bufs, NINT_OPS + 3, NULL, 0, &k);
    check_warnings(&k);
    bg_kernel_free(&k);
    for (int o = 0; o < NINT_OPS; o++) {
      enum ir_op op = int_ops[o];
      bool cmp = op == IR_CMPLT || op == IR_CMPNE || op == IR_CMPEQ;
      rd(bufs[o], out, NP * (cmp ? 1 : es));
      for (int p = 0; p < NP; p++) {
        int64_t av = get_int(a, (size_t)p, sc), bv = get_int(op == IR_IDIV || op == IR_MOD ? bd : b, (size_t)p, sc), want;
        N e = ir_alu2(C, op, ir_const_int(C, dt, av), ir_const_int(C, dt, bv));
        OK(ir_eval(C, e, NULL, NULL, &want) == 0 ? 0 : -1);
        int64_t got = cmp ? ((uint8_t *)out)[p] : get_int(out, (size_t)p, sc);
        ck_assert_msg(got == want, "%s %s(%lld, %lld) = %lld, ir_eval says %lld", ir_scalar_name(sc), ir_op_name(op),
                      (long long)av, (long long)bv, (long long)got, (long long)want);
      }
    }
    for (int o = 0; o < NINT_OPS + 3; o++) bg_buf_free(bufs[o]);
    free(a);
    free(b);
    free(bd);
    free(out);
  }
}
END_TEST

/* ---------------- float16 ---------------- */

/* Reference IEEE binary16 conversions in double arithmetic (independent of the kernel prelude's
 * bit manipulation): rint rounds half to even in the default rounding mode. */
static uint16_t ref_f2h(double v) {
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  double a = fabs(v);
  if (isnan(v)) return (uint16_t)(sign | 0x7e00);
  if (a >= 65520.0) return (uint16_t)(sign | 0x7c00);
  if (a < ldexp(1.0, -14)) return (uint16_t)(sign | (uint16_t)rint(ldexp(a, 24)));   /* 0x400: the smallest normal */
  int ex;
  frexp(a, &ex);   /* a in [2^(ex-1), 2^ex) */
  int e = ex - 1;
  double m = rint(ldexp(a, 10 - e)) - 1024.0;
  if (m >= 1024.0) {
    m = 0;
    e++;
  }
  return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | (uint16_t)m);
}

static double ref_h2f(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return h & 0x8000 ? -v : v;
}

static bool same_half(uint16_t x, uint16_t y) {
  bool nx = (x & 0x7c00) == 0x7c00 && (x & 0x3ff), ny = (y & 0x7c00) == 0x7c00 && (y & 0x3ff);
  return nx || ny ? nx == ny : x == y;
}

/* float16 in, (a*b + c) with IEEE half rounding per op, max(a, c), a as float32, and float32
 * values converted to float16 (ties, overflow, denormals, inf/nan), against the reference above. */
START_TEST(float16_load_compute_store) {
  static const uint16_t hv[] = {0x0000, 0x8000, 0x3c00, 0xc000, 0x7bff, 0xfbff, 0x0001, 0x03ff, 0x0400, 0x3555,
                                0x7c00, 0xfc00, 0x7e00, 0x3c01, 0x4900, 0x1234, 0x8001, 0x5640};
  static const float fv[] = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, 1e9f, -1e9f, 5.9604645e-8f, 2.9802322e-8f,
                             2.98023259e-8f, 1e-10f, 6.1035156e-5f, 6.0975552e-5f, 1.00048828125f, 1.00146484375f,
                             (float)INFINITY, -(float)INFINITY, (float)NAN, 3.14159265f, -2.7182818f, 1234.5678f};
  enum { NH = sizeof hv / sizeof hv[0], NF = sizeof fv / sizeof fv[0], NP = NH * NH };
  uint16_t a[NP], b[NP], c[NP], o0[NP], o1[NP], want0, want1;
  float o2[NP];
  for (int x = 0; x < NP; x++) {
    a[x] = hv[x / NH];
    b[x] = hv[x % NH];
    c[x] = hv[(x * 7 + 3) % NH];
  }
  const enum ir_scalar H = IR_DT_FLOAT16;
  N i = out_r(0, NP), A = ld(buf(3, H), i), B = ld(buf(4, H), i), Cc = ld(buf(5, H), i);
  N stores[3] = {st(buf(0, H), i, add(mul(A, B), Cc)), st(buf(1, H), i, ir_alu2(C, IR_MAX, A, Cc)),
                 st(buf(2, IR_DT_FLOAT32), i, ir_cast(C, IR_DT_FLOAT32, A))};
  for (int opt = 0; opt < 2; opt++) {
    bg_buf *bufs[6] = {mkbuf(NULL, sizeof o0), mkbuf(NULL, sizeof o1), mkbuf(NULL, sizeof o2), mkbuf(a, sizeof a),
                       mkbuf(b, sizeof b), mkbuf(c, sizeof c)};
    bg_kernel k;
    run_k(sinkv(3, stores), opt ? &NO_OPT : NULL, bufs, 6, NULL, 0, &k);
    check_warnings(&k);
    bg_kernel_free(&k);
    rd(bufs[0], o0, sizeof o0);
    rd(bufs[1], o1, sizeof o1);
    rd(bufs[2], o2, sizeof o2);
    for (int x = 0; x < NP; x++) {
      double prod = ref_h2f(ref_f2h(ref_h2f(a[x]) * ref_h2f(b[x])));   /* exact in double, rounded once */
      want0 = ref_f2h(prod + ref_h2f(c[x]));
      double fa = ref_h2f(a[x]), fc = ref_h2f(c[x]);
      want1 = ref_f2h(fa >= fc ? fa : fc);
      float fa32 = (float)fa;
      ck_assert_msg(same_half(o0[x], want0), "%04x*%04x+%04x = %04x, want %04x", a[x], b[x], c[x], o0[x], want0);
      ck_assert_msg(same_half(o1[x], want1), "max(%04x, %04x) = %04x, want %04x", a[x], c[x], o1[x], want1);
      ck_assert_msg((isnan(o2[x]) && isnan(fa)) || memcmp(&o2[x], &fa32, 4) == 0, "float(%04x) = %g, want %g", a[x], o2[x], fa);
    }
    for (int x = 0; x < 6; x++) bg_buf_free(bufs[x]);
  }
  /* a float16 sum accumulates in float32 and rounds once */
  {
    uint16_t hs[64], got;
    float acc = 0;   /* the accumulator is float32, added in order */
    for (int x = 0; x < 64; x++) {
      hs[x] = ref_f2h(frand() * 8);
      acc += (float)ref_h2f(hs[x]);
    }
    N r = red_r(0, 64);
    bg_buf *hb[2] = {mkbuf(NULL, 2), mkbuf(hs, sizeof hs)};
    run_simple(sink1(st(buf(0, H), ki(0), reduce(IR_ADD, ld(buf(1, H), r), r, NULL))), NULL, hb, 2, NULL, 0);
    rd(hb[0], &got, 2);
    ck_assert_msg(got == ref_f2h(acc), "half sum %04x, want %04x", got, ref_f2h(acc));
    bg_buf_free(hb[0]);
    bg_buf_free(hb[1]);
  }
  /* float32 -> float16 conversions */
  uint16_t h[NF];
  N j = out_r(0, NF);
  bg_buf *fb[2] = {mkbuf(NULL, sizeof h), mkbuf(fv, sizeof fv)};
  run_simple(sink1(st(buf(0, H), j, ir_cast(C, H, ld(buf(1, IR_DT_FLOAT32), j)))), NULL, fb, 2, NULL, 0);
  rd(fb[0], h, sizeof h);
  for (int x = 0; x < NF; x++) {
    uint16_t w = ref_f2h(fv[x]);
    ck_assert_msg(same_half(h[x], w), "half(%.9g) = %04x, want %04x", fv[x], h[x], w);
  }
  bg_buf_free(fb[0]);
  bg_buf_free(fb[1]);
}
END_TEST

/* ---------------- casts ---------------- */

enum { NCT = 7 };
static const enum ir_scalar cast_types[NCT] = {IR_DT_FLOAT32, IR_DT_INT32, IR_DT_UINT32, IR_DT_INT64,
                                              IR_DT_UINT64, IR_DT_BOOL, IR_DT_FLOAT16};

/* Value v (given as double, or bits for float16/integers) of type s, as the C reference of a cast to d. */
typedef union cval { float f; int32_t i32; uint32_t u32; int64_t i64; uint64_t u64; uint8_t b; uint16_t h; } cval;

static cval c_cast(enum ir_scalar from, cval v, enum ir_scalar to) {
  cval r;
  memset(&r, 0, sizeof r);
#define CAST_TO(expr)                                                             \
  switch (to) {                                                                   \
  case IR_DT_FLOAT32: r.f = (float)(expr); break;                                 \
  case IR_DT_INT32: r.i32 = (int32_t)(expr); break;                               \
  case IR_DT_UINT32: r.u32 = (uint32_t)(expr); break;                             \
  case IR_DT_INT64: r.i64 = (int64_t)(expr); break;                               \
  case IR_DT_UINT64: r.u64 = (uint64_t)(expr); break;                             \
  case IR_DT_BOOL: r.b = (expr) != 0; break;                                      \
  default: r.h = ref_f2h((double)(expr)); break;                                 \
  }
  switch (from) {
  case IR_DT_FLOAT32: CAST_TO(v.f); break;
  case IR_DT_INT32: CAST_TO(v.i32); break;
  case IR_DT_UINT32: CAST_TO(v.u32); break;
  case IR_DT_INT64: CAST_TO(v.i64); break;
  case IR_DT_UINT64: CAST_TO(v.u64); break;
  case IR_DT_BOOL: CAST_TO(v.b); break;
  default: CAST_TO(ref_h2f(v.h)); break;
  }
#undef CAST_TO
  return r;
}

/* Every pair of float32/int32/uint32/int64/uint64/bool/float16 on values every destination can
 * hold without undefined behaviour in C (no negative floats into unsigned types). */
START_TEST(casts_all_pairs) {
  cval v[NCT][8];
  int nv[NCT] = {8, 8, 8, 8, 6, 2, 8};
  static const float fv[8] = {0.0f, 1.5f, -0.0f, 3.0f, 100.75f, 65000.0f, 0.25f, 7.0f};
  static const int32_t iv[8] = {0, 1, -1, 123456, -7, INT32_MAX, INT32_MIN, 65519};
  static const uint32_t uv[8] = {0, 1, 0xffffffffu, 123456, 65504, 65520, 0x80000000u, 7};
  static const int64_t lv[8] = {0, -1, INT64_MIN, INT64_MAX, 1ll << 40, -12345, 65536, 3};
  static const uint64_t qv[6] = {0, 1, UINT64_MAX, 1ull << 63, 12345, 1ull << 33};
  static const uint16_t hv[8] = {0x3c00, 0x7bff, 0x0001, 0x3555, 0x0000, 0x4500, 0x4100, 0x5bd0};
  for (int x = 0; x < 8; x++) {
    v[0][x].f = fv[x];
    v[1][x].i32 = iv[x];
    v[2][x].u32 = uv[x];
    v[3][x].i64 = lv[x];
    if (x < 6) v[4][x].u64 = qv[x];
    if (x < 2) v[5][x].b = (uint8_t)x;
    v[6][x].h = hv[x];
  }
  for (int s = 0; s < NCT; s++) {
    enum ir_scalar from = cast_types[s];
    size_t fs = ir_scalar_size(from);
    uint8_t in[64];
    for (int x = 0; x < nv[s]; x++) memcpy(in + (size_t)x * fs, &v[s][x], fs);
    N i = out_r(0, nv[s]), x_in = ld(buf(NCT, from), i);
    N stores[NCT];
    bg_buf *bufs[NCT + 1];
    for (int d = 0; d < NCT; d++) {
      stores[d] = st(buf(d, cast_types[d]), i, ir_cast(C, cast_types[d], x_in));
      bufs[d] = mkbuf(NULL, 8 * 8);
    }
    bufs[NCT] = mkbuf(in, (size_t)nv[s] * fs);
    bg_kernel k;
    run_k(sinkv(NCT, stores), NULL, bufs, NCT + 1, NULL, 0, &k);
    check_warnings(&k);
    bg_kernel_free(&k);
    for (int d = 0; d < NCT; d++) {
      enum ir_scalar to = cast_types[d];
      size_t ts = ir_scalar_size(to);
      uint8_t out[64];
      rd(bufs[d], out, (size_t)nv[s] * ts);
      for (int x = 0; x < nv[s]; x++) {
        cval want = c_cast(from, v[s][x], to);
        ck_assert_msg(memcmp(out + (size_t)x * ts, &want, ts) == 0, "cast %s -> %s of value #%d wrong", ir_scalar_name(from),
                      ir_scalar_name(to), x);
      }
    }
    for (int d = 0; d <= NCT; d++) bg_buf_free(bufs[d]);
  }
}
END_TEST

/* Bit casts through memcpy: float32 <-> uint32/int32, float16 <-> int16/uint16, int64 <-> float64. */
START_TEST(bitcasts) {
  static const float fv[4] = {1.0f, -0.0f, 3.14159265f, (float)INFINITY};
  static const uint16_t hv[4] = {0x3c00, 0x8000, 0x7bff, 0x0001};
  static const int64_t lv[4] = {0, -1, 0x3ff0000000000000ll, INT64_MIN};
  N i = out_r(0, 4);
  N f = ld(buf(6, IR_DT_FLOAT32), i), h = ld(buf(7, IR_DT_FLOAT16), i), l = ld(buf(8, IR_DT_INT64), i);
  N hu = ir_intern(C, IR_BITCAST, IR_DT_UINT16, (ir_arg){.i = 0}, 1, &h);
  N stores[6] = {
      st(buf(0, IR_DT_UINT32), i, ir_intern(C, IR_BITCAST, IR_DT_UINT32, (ir_arg){.i = 0}, 1, &f)),
      st(buf(1, IR_DT_FLOAT32), i, ir_alu1(C, IR_BITCAST, f)),   /* same type: the value itself */
      st(buf(2, IR_DT_INT16), i, ir_intern(C, IR_BITCAST, IR_DT_INT16, (ir_arg){.i = 0}, 1, &h)),
      st(buf(3, IR_DT_FLOAT64), i, ir_intern(C, IR_BITCAST, IR_DT_FLOAT64, (ir_arg){.i = 0}, 1, &l)),
      st(buf(4, IR_DT_FLOAT16), i, ir_intern(C, IR_BITCAST, IR_DT_FLOAT16, (ir_arg){.i = 0}, 1, &hu)),
      st(buf(5, IR_DT_INT32), i, ir_intern(C, IR_BITCAST, IR_DT_INT32, (ir_arg){.i = 0}, 1, &f)),
  };
  bg_buf *bufs[9] = {mkbuf(NULL, 16), mkbuf(NULL, 16), mkbuf(NULL, 8), mkbuf(NULL, 32), mkbuf(NULL, 8), mkbuf(NULL, 16),
                     mkbuf(fv, sizeof fv), mkbuf(hv, sizeof hv), mkbuf(lv, sizeof lv)};
  bg_kernel k;
  run_k(sinkv(6, stores), NULL, bufs, 9, NULL, 0, &k);
  check_warnings(&k);
  bg_kernel_free(&k);
  uint8_t got[32];
  rd(bufs[0], got, 16);
  ck_assert_int_eq(memcmp(got, fv, 16), 0);
  rd(bufs[1], got, 16);
  ck_assert_int_eq(memcmp(got, fv, 16), 0);
  rd(bufs[2], got, 8);
  ck_assert_int_eq(memcmp(got, hv, 8), 0);
  rd(bufs[3], got, 32);
  ck_assert_int_eq(memcmp(got, lv, 32), 0);
  rd(bufs[4], got, 8);
  ck_assert_int_eq(memcmp(got, hv, 8), 0);
  rd(bufs[5], got, 16);
  ck_assert_int_eq(memcmp(got, fv, 16), 0);
  for (int x = 0; x < 9; x++) bg_buf_free(bufs[x]);
}
END_TEST

/* Constants keep every bit: float32 extremes, denormals, -0, inf, nan, float64, int64 extremes. */
START_TEST(constants_exact) {
  static const float fc[] = {0.1f, -0.0f, 1e-45f, 1.17549435e-38f, 3.40282347e38f, -3.40282347e38f, 16777217.0f,
                             0.333333343f, (float)INFINITY, -(float)INFINITY, 1.0f, -2.5f, 1e20f, 123456.789f};
  static const double dc[] = {0.1, -0.0, 4.9406564584124654e-324, 1.7976931348623157e308, 1.0 / 3.0, -INFINITY, 2.0};
  static const int64_t lc[] = {INT64_MIN, INT64_MAX, -1, 0, 1ll << 40, INT32_MIN, INT32_MAX, -2147483649ll};
  enum { NF = sizeof fc / sizeof fc[0], ND = sizeof dc / sizeof dc[0], NL = sizeof lc / sizeof lc[0] };
  N stores[NF + ND + NL + 1];
  int n = 0;
  N of = buf(0, IR_DT_FLOAT32), od = buf(1, IR_DT_FLOAT64), ol = buf(2, IR_DT_INT64);
  for (int x = 0; x < NF; x++) stores[n++] = st(of, ki(x), kf(fc[x]));
  stores[n++] = st(of, ki(NF), kf(NAN));
  for (int x = 0; x < ND; x++) stores[n++] = st(od, ki(x), ir_const_float(C, IR_DT_FLOAT64, dc[x]));
  for (int x = 0; x < NL; x++) stores[n++] = st(ol, ki(x), ir_const_int(C, IR_DT_INT64, lc[x]));
  bg_buf *bufs[3] = {mkbuf(NULL, sizeof fc + 4), mkbuf(NULL, sizeof dc), mkbuf(NULL, sizeof lc)};
  bg_kernel k;
  run_k(sinkv((unsigned)n, stores), NULL, bufs, 3, NULL, 0, &k);
  ck_assert_str_eq(k.name, "E_1");
  check_warnings(&k);
  bg_kernel_free(&k);
  float gf[NF + 1];
  double gd[ND];
  int64_t gl[NL];
  rd(bufs[0], gf, sizeof gf);
  rd(bufs[1], gd, sizeof gd);
  rd(bufs[2], gl, sizeof gl);
  ck_assert_int_eq(memcmp(gf, fc, sizeof fc), 0);
  ck_assert(isnan(gf[NF]));
  ck_assert_int_eq(memcmp(gd, dc, sizeof dc), 0);
  ck_assert_int_eq(memcmp(gl, lc, sizeof lc), 0);
  for (int x = 0; x < 3; x++) bg_buf_free(bufs[x]);
}
END_TEST

/* ---------------- threefry ---------------- */

/* Random123's known answers for Threefry-2x32-20. Packing (as tinygrad's threefry2x32): the
 * uint64 x holds counter word 0 in its low 32 bits and word 1 in its high 32 bits, the key
 * likewise, and the result has output word 0 low, word 1 high. */
START_TEST(threefry_known_answers) {
  static const uint32_t kat[3][6] = {
      /* ctr0, ctr1, key0, key1, out0, out1 */
      {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x6b200159, 0x99ba4efe},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xc4923a9c, 0x483df7a0},
  };
  uint64_t x[3], key[3], out[3];
  for (int t = 0; t < 3; t++) {
    x[t] = (uint64_t)kat[t][1] << 32 | kat[t][0];
    key[t] = (uint64_t)kat[t][3] << 32 | kat[t][2];
  }
  const enum ir_scalar U = IR_DT_UINT64;
  N i = out_r(0, 3);
  N sk = sink1(st(buf(0, U), i, ir_alu2(C, IR_THREEFRY, ld(buf(1, U), i), ld(buf(2, U), i))));
  bg_buf *bufs[3] = {mkbuf(NULL, sizeof out), mkbuf(x, sizeof x), mkbuf(key, sizeof key)};
  bg_kernel k;
  run_k(sk, NULL, bufs, 3, NULL, 0, &k);
  check_warnings(&k);
  bg_kernel_free(&k);
  rd(bufs[0], out, sizeof out);
  for (int t = 0; t < 3; t++) {
    ck_assert_msg((uint32_t)out[t] == kat[t][4] && (uint32_t)(out[t] >> 32) == kat[t][5], "threefry #%d: %08x %08x, want %08x %08x", t,
                  (uint32_t)out[t], (uint32_t)(out[t] >> 32), kat[t][4], kat[t][5]);
  }
  for (int t = 0; t < 3; t++) bg_buf_free(bufs[t]);
}
END_TEST

/* ---------------- transcendental functions ---------------- */

START_TEST(transcendental_accuracy) {
  enum { NX = 1000 };
  static const enum ir_op ops[4] = {IR_EXP2, IR_LOG2, IR_SIN, IR_SQRT};
  float in[4][NX], out[4][NX];
  for (int x = 0; x < NX; x++) {
    float t = (float)x / NX;
    in[0][x] = -20.0f + 40.0f * t;
    in[1][x] = 1e-3f + 1e4f * t * t;
    in[2][x] = -100.0f + 200.0f * t;
    in[3][x] = 1e6f * t * t;
  }
  N i = out_r(0, NX), stores[4];
  bg_buf *bufs[8];
  for (int o = 0; o < 4; o++) {
    stores[o] = st(buf(o, IR_DT_FLOAT32), i, ir_alu1(C, ops[o], ld(buf(4 + o, IR_DT_FLOAT32), i)));
    bufs[o] = mkbuf(NULL, sizeof out[o]);
    bufs[4 + o] = mkbuf(in[o], sizeof in[o]);
  }
  bg_kernel k;
  run_k(sinkv(4, stores), NULL, bufs, 8, NULL, 0, &k);
  check_warnings(&k);
  bg_kernel_free(&k);
  for (int o = 0; o < 4; o++) {
    rd(bufs[o], out[o], sizeof out[o]);
    for (int x = 0; x < NX; x++) {
      float xv = in[o][x];
      double want = o == 0 ? exp2f(xv) : o == 1 ? log2f(xv) : o == 2 ? sinf(xv) : sqrtf(xv);
      double err = fabs(out[o][x] - want), tol = 1e-6 * fabs(want) + 1e-30;
      ck_assert_msg(err <= tol, "%s(%.9g) = %.9g, libm %.9g", ir_op_name(ops[o]), xv, out[o][x], want);
    }
  }
  for (int o = 0; o < 8; o++) bg_buf_free(bufs[o]);
}
END_TEST

/* ---------------- every upcast/unroll choice equals no_opt ---------------- */

/* Runs sink with opts and with no_opt on the same inputs (slots 1..nin) and compares output slot
 * 0 byte for byte (either compiler). */
static void same_as_no_opt(N sink, const bg_kopts *opts, const void *const *in, const size_t *insz, int nin, size_t outsz) {
  void *ref = calloc(1, outsz), *got = calloc(1, outsz);
  char name[64] = "", name0[64] = "";
  for (int pass = 0; pass < 2; pass++) {
    bg_buf *bufs[8];
    bufs[0] = mkbuf(NULL, outsz);
    for (int x = 0; x < nin; x++) bufs[1 + x] = mkbuf(in[x], insz[x]);
    run_simple(sink, pass ? opts : &NO_OPT, bufs, (size_t)nin + 1, pass ? name : name0, sizeof name);
    rd(bufs[0], pass ? got : ref, outsz);
    for (int x = 0; x <= nin; x++) bg_buf_free(bufs[x]);
  }
  ck_assert_msg(memcmp(ref, got, outsz) == 0, "%s (upcast %u %u, unroll %u) differs from no_opt %s", name, opts->upcast[0],
                opts->upcast[1], opts->unroll, name0);
  free(ref);
  free(got);
}

START_TEST(upcast_unroll_all_factors) {
  /* matmul 8x12x16: every upcast of both output axes x every unroll of the reduce */
  static const uint8_t f0[] = {1, 2, 4, 8}, f1[] = {1, 2, 3, 4, 6, 12}, fu[] = {1, 2, 4, 8, 16};
  float a[8 * 16], b[16 * 12];
  for (int x = 0; x < 8 * 16; x++) a[x] = frand();
  for (int x = 0; x < 16 * 12; x++) b[x] = frand();
  const void *in[2] = {a, b};
  size_t insz[2] = {sizeof a, sizeof b};
  N mm = matmul_ast(8, 12, 16);
  int combos = 0;
  for (size_t x = 0; x < sizeof f0; x++)
    for (size_t y = 0; y < sizeof f1; y++)
      for (size_t z = 0; z < sizeof fu; z++, combos++) {
        bg_kopts o = {.upcast = {f0[x], f1[y]}, .unroll = fu[z]};
        same_as_no_opt(mm, &o, in, insz, 2, sizeof(float) * 8 * 12);
      }
  ck_assert_int_eq(combos, 120);
  /* 2-D padding: out[i, j] = (1 <= i < 5 and 2 <= j) ? a[i-1, j-2] : 0 over 6x8 */
  static const uint8_t g0[] = {1, 2, 3, 6}, g1[] = {1, 2, 4, 8};
  float p[4 * 6];
  for (int x = 0; x < 24; x++) p[x] = frand();
  N i = out_r(0, 6), j = out_r(1, 8);
  N valid = and_(and_(not_(lt(i, ki(1))), lt(i, ki(5))), not_(lt(j, ki(2))));
  N pad = sink1(st(buf(0, IR_DT_FLOAT32), add(mul(i, ki(8)), j),
                   ldg(buf(1, IR_DT_FLOAT32), add(add(mul(i, ki(6)), j), ki(-8)), valid)));
  const void *pin[1] = {p};
  size_t psz[1] = {sizeof p};
  for (size_t x = 0; x < sizeof g0; x++)
    for (size_t y = 0; y < sizeof g1; y++) {
      bg_kopts o = {.upcast = {g0[x], g1[y]}};
      same_as_no_opt(pad, &o, pin, psz, 1, sizeof(float) * 48);
    }
  /* 1-D convolution, 3 taps, padding 1: gates over an output and a reduce range */
  {
    float x[16], w[3];
    for (int t = 0; t < 16; t++) x[t] = frand();
    for (int t = 0; t < 3; t++) w[t] = frand();
    N ci = out_r(0, 16), ck = red_r(1, 3), pos = add(add(ci, ck), ki(-1));
    N cv = and_(not_(lt(pos, ki(0))), lt(pos, ki(16)));
    N conv = sink1(st(buf(0, IR_DT_FLOAT32), ci,
                      reduce(IR_ADD, mul(ld(buf(2, IR_DT_FLOAT32), ck), ldg(buf(1, IR_DT_FLOAT32), pos, cv)), ck, NULL)));
    const void *cin[2] = {x, w};
    size_t csz[2] = {sizeof x, sizeof w};
    static const uint8_t cu[] = {1, 2, 4, 8, 16}, cr[] = {1, 3};
    for (size_t a_ = 0; a_ < sizeof cu; a_++)
      for (size_t b_ = 0; b_ < sizeof cr; b_++) {
        bg_kopts o = {.upcast = {cu[a_]}, .unroll = cr[b_]};
        same_as_no_opt(conv, &o, cin, csz, 2, sizeof x);
      }
    float got[16];
    bg_buf *cb[3] = {mkbuf(NULL, sizeof got), mkbuf(x, sizeof x), mkbuf(w, sizeof w)};
    run_simple(conv, NULL, cb, 3, NULL, 0);
    rd(cb[0], got, sizeof got);
    for (int t = 0; t < 16; t++) {
      float acc = 0, sabs = 0;
      for (int q = 0; q < 3; q++) {
        float pr = w[q] * (t + q - 1 >= 0 && t + q - 1 < 16 ? x[t + q - 1] : 0.0f);
        acc += pr;
        sabs += fabsf(pr);
      }
      ck_assert_msg(mac_close(got[t], acc, 3, sabs, false), "conv %d: %g != %g", t, got[t], acc);
    }
    for (int t = 0; t < 3; t++) bg_buf_free(cb[t]);
  }
  /* max over two reduce axes, unrolling the inner one */
  static const uint8_t h0[] = {1, 2, 4}, hu[] = {1, 2, 3, 6};
  float m[4 * 24];
  for (int x = 0; x < 96; x++) m[x] = frand();
  N mi = out_r(0, 4), r1 = red_r(1, 4), r2 = red_r(2, 6);
  N mx = sink1(st(buf(0, IR_DT_FLOAT32), mi,
                  reduce(IR_MAX, ld(buf(1, IR_DT_FLOAT32), add(add(mul(mi, ki(24)), mul(r1, ki(6))), r2)), r1, r2)));
  const void *min_[1] = {m};
  size_t msz[1] = {sizeof m};
  for (size_t x = 0; x < sizeof h0; x++)
    for (size_t z = 0; z < sizeof hu; z++) {
      bg_kopts o = {.upcast = {h0[x]}, .unroll = hu[z]};
      same_as_no_opt(mx, &o, min_, msz, 1, sizeof(float) * 4);
    }
  /* nested reduces: out[i] = sum_j exp2(a[i, j] - max_k a[i, k]) */
  N si = out_r(0, 4), sj = red_r(1, 8), sk = red_r(2, 8);
  N A = buf(1, IR_DT_FLOAT32);
  N rowmax = reduce(IR_MAX, ld(A, add(mul(si, ki(8)), sk)), sk, NULL);
  N e = ir_alu1(C, IR_EXP2, ir_alu2(C, IR_SUB, ld(A, add(mul(si, ki(8)), sj)), rowmax));
  N soft = sink1(st(buf(0, IR_DT_FLOAT32), si, reduce(IR_ADD, e, sj, NULL)));
  float sm[32];
  for (int x = 0; x < 32; x++) sm[x] = frand() * 4;
  const void *sin_[1] = {sm};
  size_t ssz[1] = {sizeof sm};
  static const uint8_t su[] = {1, 2, 4, 8};
  for (size_t x = 0; x < sizeof h0; x++)
    for (size_t z = 0; z < sizeof su; z++) {
      bg_kopts o = {.upcast = {h0[x]}, .unroll = su[z]};
      same_as_no_opt(soft, &o, sin_, ssz, 1, sizeof(float) * 4);
    }
  /* and the softmax denominators are right */
  float got[4];
  bg_buf *bufs[2] = {mkbuf(NULL, sizeof got), mkbuf(sm, sizeof sm)};
  run_simple(soft, NULL, bufs, 2, NULL, 0);
  rd(bufs[0], got, sizeof got);
  for (int r = 0; r < 4; r++) {
    float mxv = -INFINITY, sum = 0;
    for (int c = 0; c < 8; c++) mxv = sm[r * 8 + c] > mxv ? sm[r * 8 + c] : mxv;
    for (int c = 0; c < 8; c++) sum += exp2f(sm[r * 8 + c] - mxv);
    ck_assert_msg(fabsf(got[r] - sum) <= 1e-6f * sum, "row %d: %g != %g", r, got[r], sum);
  }
  bg_buf_free(bufs[0]);
  bg_buf_free(bufs[1]);
}
END_TEST

/* ---------------- symbolic sizes ---------------- */

/* out[i] = a[i + off] * 2 for i < n, n (index) and off (int32, cast) passed as kernel variables. */
START_TEST(symbolic_variables) {
  N n = ir_var(C, IDX, "n", 1, 64), off = ir_var(C, IR_DT_INT32, "off", 0, 16);
  N i = rng(0, 0, n);
  N sk = sink1(st(buf(0, IR_DT_FLOAT32), i, mul(ld(buf(1, IR_DT_FLOAT32), add(i, ir_cast(C, IDX, off))), kf(2))));
  float in[80], out[64];
  for (int x = 0; x < 80; x++) in[x] = frand();
  for (int opt = 0; opt < 2; opt++) {
    bg_buf *bufs[2] = {mkbuf(NULL, sizeof out), mkbuf(in, sizeof in)};
    uint64_t vars[2] = {37, 5};
    bg_kernel k;
    run_k(sk, opt ? &NO_OPT : NULL, bufs, 2, vars, 2, &k);
    ck_assert_ptr_eq(k.vars[0], n);
    ck_assert_ptr_eq(k.vars[1], off);
    ck_assert_uint_eq(k.arg_sizes[0], 8);
    ck_assert_uint_eq(k.arg_sizes[2], 4);
    ck_assert_uint_eq(k.arg_sizes[3], 4);
    ck_assert_str_eq(k.name, "E_n");
    check_warnings(&k);
    bg_kernel_free(&k);
    rd(bufs[0], out, sizeof out);
    for (int x = 0; x < 64; x++) ck_assert_msg(out[x] == (x < 37 ? in[x + 5] * 2 : 0.0f), "elem %d", x);
    bg_buf_free(bufs[0]);
    bg_buf_free(bufs[1]);
  }
  /* a reduce over a symbolic extent: sum of the first n elements */
  N r = rng(1, 1, n);
  N rs = sink1(st(buf(0, IR_DT_FLOAT32), ki(0), reduce(IR_ADD, ld(buf(1, IR_DT_FLOAT32), r), r, NULL)));
  bg_buf *sb[2] = {mkbuf(NULL, 4), mkbuf(in, sizeof in)};
  uint64_t nv = 21;
  bg_kernel kr;
  run_k(rs, NULL, sb, 2, &nv, 1, &kr);
  ck_assert_str_eq(kr.name, "r_n");
  bg_kernel_free(&kr);
  float sum = 0, got;
  for (int x = 0; x < 21; x++) sum += in[x];
  rd(sb[0], &got, 4);
  ck_assert_msg(got == sum, "%g != %g", got, sum);
  bg_buf_free(sb[0]);
  bg_buf_free(sb[1]);
  /* an explicit upcast of a symbolic axis is refused */
  bg_kopts up = {.upcast = {4}};
  bg_kernel k;
  ck_assert_int_eq(bg_kernel_render(C, sk, &up, &k), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "symbolic"));
}
END_TEST

/* ---------------- contract errors ---------------- */

static void expect_error(N sink, const bg_kopts *opts, const char *const *needles) {
  bg_kernel k;
  memset(&k, 0x5a, sizeof k);
  ck_assert_int_eq(bg_kernel_render(C, sink, opts, &k), -BG_EINVAL);
  ck_assert_ptr_null(k.src);
  for (const char *const *s = needles; *s; s++)
    ck_assert_msg(strstr(bg_last_error(), *s), "'%s' not in error: %s", *s, bg_last_error());
}

START_TEST(malformed_ast_errors) {
  N o = buf(0, IR_DT_FLOAT32), a = buf(1, IR_DT_FLOAT32);
  /* a store whose index uses a reduce range */
  N r = red_r(3, 4);
  expect_error(sink1(st(o, r, ld(a, r))), NULL, (const char *const[]){"STORE", "reduce range r3", "r3", NULL});
  /* a RANGE of a non-index dtype */
  N e = ir_const_int(C, IR_DT_INT32, 4);
  ir_arg ra = {.i = 0};
  N bad = ir_intern(C, IR_RANGE, IR_DT_INT32, ra, 1, &e);
  expect_error(sink1(st(o, ki(0), ir_cast(C, IR_DT_FLOAT32, bad))), NULL, (const char *const[]){"RANGE", "not index", "int32", NULL});
  /* an op outside the kernel contract */
  N i = out_r(0, 4), lanes[2] = {ld(a, i), ld(a, i)};
  ir_arg none = {.i = 0};
  N vec = ir_intern(C, IR_VECTORIZE, IR_DT_VEC(IR_DT_FLOAT32, 2), none, 2, lanes);
  expect_error(sink1(st(o, i, vec)), NULL, (const char *const[]){"VECTORIZE", NULL});
  N perm = ir_intern(C, IR_CONTIGUOUS, IR_DT_FLOAT32, none, 1, &lanes[0]);
  expect_error(sink1(st(o, i, perm)), NULL, (const char *const[]){"CONTIGUOUS", "not part of a kernel AST", NULL});
  /* a REDUCE closing an output range */
  N rs[2] = {ld(a, i), i};
  ir_arg ao = {.i = IR_ADD};
  expect_error(sink1(st(o, ki(0), ir_intern(C, IR_REDUCE, IR_DT_FLOAT32, ao, 2, rs))), NULL,
               (const char *const[]){"REDUCE", "not a reduce RANGE", NULL});
  /* a stored value of the wrong dtype */
  expect_error(sink1(st(o, i, ir_cast(C, IR_DT_INT32, ld(a, i)))), NULL, (const char *const[]){"dtype", "float32", NULL});
  /* buffer slots with a hole */
  expect_error(sink1(st(o, i, ld(buf(2, IR_DT_FLOAT32), i))), NULL, (const char *const[]){"slot 1", NULL});
  /* a value depending on an output range its store's index does not use */
  expect_error(sink1(st(o, ki(0), ld(a, i))), NULL, (const char *const[]){"output range r0", NULL});
  /* the same range closed by a REDUCE inside another */
  N k2 = red_r(5, 4);
  N inner = reduce(IR_ADD, ld(a, k2), k2, NULL);
  expect_error(sink1(st(o, ki(0), reduce(IR_ADD, inner, k2, NULL))), NULL, (const char *const[]){"closed again", NULL});
  /* the SINK holding something else than stores, and no sink at all */
  N notstore = ld(a, i);
  expect_error(sinkv(1, &notstore), NULL, (const char *const[]){"not a STORE", NULL});
  expect_error(NULL, NULL, (const char *const[]){"NULL", NULL});
  /* ir_verify's own rules come first: an ADD of mixed dtypes */
  ir_arg z = {.i = 0};
  N mixed[2] = {ld(a, i), ir_const_int(C, IR_DT_INT32, 1)};
  expect_error(sink1(st(o, i, ir_intern(C, IR_ADD, IR_DT_FLOAT32, z, 2, mixed))), NULL, (const char *const[]){"ADD", NULL});
  /* impossible optimizations */
  N good = sink1(st(o, i, ld(a, i)));
  bg_kopts up3 = {.upcast = {3}}, up_axis = {.upcast = {0, 2}}, un = {.unroll = 2};
  expect_error(good, &up3, (const char *const[]){"does not divide", "4", NULL});
  expect_error(good, &up_axis, (const char *const[]){"output axis 1", NULL});
  expect_error(good, &un, (const char *const[]){"without a reduce", NULL});
  ck_assert_int_eq(bg_kernel_verify(C, good), 0);
  ck_assert_int_eq(bg_kernel_verify(C, sink1(st(o, r, ld(a, r)))), -BG_EINVAL);
}
END_TEST

static TCase *kernel_case(const char *name, void (*fixture)(void)) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, fixture, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, elementwise_add_broadcast);
  tcase_add_test(tc, kernel_names);
  tcase_add_test(tc, gated_padded_load);
  tcase_add_test(tc, gated_store_and_never_valid);
  tcase_add_test(tc, float_ops);
  tcase_add_test(tc, wide_index_math);
  tcase_add_test(tc, reduce_sum_max);
  tcase_add_test(tc, reduce_groups_respect_dependencies);
  tcase_add_test(tc, matmul_64);
  tcase_add_test(tc, matmul_odd);
  tcase_add_test(tc, integer_ops_match_ir_eval);
  tcase_add_test(tc, float16_load_compute_store);
  tcase_add_test(tc, casts_all_pairs);
  tcase_add_test(tc, bitcasts);
  tcase_add_test(tc, constants_exact);
  tcase_add_test(tc, threefry_known_answers);
  tcase_add_test(tc, transcendental_accuracy);
  tcase_add_test(tc, upcast_unroll_all_factors);
  tcase_add_test(tc, symbolic_variables);
  tcase_add_test(tc, malformed_ast_errors);
  tcase_add_test(tc, matmul_512_timing);
  return tc;
}

int main(void) {
  Suite *s = suite_create("kernel");
  suite_add_tcase(s, kernel_case("c", setup_c));
#if BG_HAVE_LLVM
  suite_add_tcase(s, kernel_case("llvm", setup_llvm));
#endif
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
