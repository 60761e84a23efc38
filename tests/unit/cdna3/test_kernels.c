/* tests/unit/cdna3/test_kernels.c: the RDNA3 suite's LLVM IR kernels (tests/unit/rdna3/kernels/NAME.ll: written the
 * way a kernel renderer writes them, target-independent), compiled by llc -O3 for gfx942 wave64 at build time, run
 * on the CDNA3 core over a grid and compared with results computed here in C (the same references as the RDNA3
 * suite's test_kernels.c; wave counts are those of wave64). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "tests.h"

static uint32_t rng_state = 12345;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 17, rng_state ^= rng_state << 5;
  return rng_state;
}
static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() >> 8) / 16777216.0f; }

static void ck_close(float got, double want, double rel, double abs_tol, const char *what, unsigned i) {
  double err = fabs((double)got - want);
  ck_assert_msg(err <= abs_tol + rel * fabs(want), "%s[%u]: got %.9g, want %.9g", what, i, (double)got, want);
}

/* Kernel arguments packed as LLVM lays them out: each at its natural alignment. */
typedef struct kargs {
  uint8_t b[128];
  size_t n;
} kargs;
static void karg(kargs *k, const void *v, size_t size) {
  k->n = (k->n + size - 1) / size * size;
  memcpy(k->b + k->n, v, size);
  k->n += size;
}
static void karg64(kargs *k, uint64_t v) { karg(k, &v, 8); }
static void karg32(kargs *k, uint32_t v) { karg(k, &v, 4); }

static uint64_t upload(gpu *g, const void *src, size_t n) {
  uint64_t va = gpu_alloc(g, n, 256);
  memcpy(gpu_ptr(g, va), src, n);
  return va;
}

static void run_ok(gpu *g, const kernel *k, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz,
                   const void *args, size_t nargs, rdna3_report *rep) {
  const uint32_t grid[3] = {gx, gy, gz}, local[3] = {lx, ly, lz};
  int rc = kernel_run(g, k, grid, local, args, nargs, rep);
  ck_assert_msg(rc == 0, "%s", rep->msg);
}

START_TEST(ew_f32) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "ew_f32", &k);
  enum { N = 200 };
  float a[N], b[N], c = 0.75f;
  for (int i = 0; i < N; i++) a[i] = rndf(-4, 4), b[i] = rndf(-4, 4);
  uint64_t out = gpu_alloc(&g, 256 * 4, 256);
  float *o = gpu_ptr(&g, out);
  for (int i = 0; i < 256; i++) o[i] = -99.0f;  /* the tail past n must stay untouched */
  kargs args = {.n = 0};
  karg64(&args, out);
  karg64(&args, upload(&g, a, sizeof a));
  karg64(&args, upload(&g, b, sizeof b));
  karg(&args, &c, 4);
  karg32(&args, (uint32_t)N);
  rdna3_report rep;
  run_ok(&g, &k, 4, 1, 1, 64, 1, 1, args.b, args.n, &rep);
  for (int i = 0; i < N; i++) {
    float want = a[i] * b[i];
    want += c;
    ck_assert_msg(o[i] == want, "out[%d] = %.9g, want %.9g", i, (double)o[i], (double)want);
  }
  for (int i = N; i < 256; i++) ck_assert_float_eq(o[i], -99.0f);
  ck_assert_uint_eq(rep.waves, 4);  /* 4 workgroups of 64: one wave64 each */
  gpu_free(&g);
}
END_TEST

/* The same kernel with its s_waitcnt vmcnt(0) deleted: the multiply reads the load destinations before the loads
 * land, so every element is wrong (the registers' old values), as on hardware. */
START_TEST(ew_f32_missing_waitcnt) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "ew_f32_nowait", &k);
  enum { N = 64 };
  float a[N], b[N], c = 0.75f;
  for (int i = 0; i < N; i++) a[i] = rndf(1, 4), b[i] = rndf(1, 4);
  uint64_t out = gpu_alloc(&g, N * 4, 256);
  kargs args = {.n = 0};
  karg64(&args, out);
  karg64(&args, upload(&g, a, sizeof a));
  karg64(&args, upload(&g, b, sizeof b));
  karg(&args, &c, 4);
  karg32(&args, (uint32_t)N);
  rdna3_report rep;
  run_ok(&g, &k, 1, 1, 1, 64, 1, 1, args.b, args.n, &rep);
  const float *o = gpu_ptr(&g, out);
  for (int i = 0; i < N; i++) ck_assert_msg(o[i] != a[i] * b[i] + c, "out[%d] is right without the waitcnt", i);
  gpu_free(&g);
}
END_TEST

START_TEST(math_f32) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "math_f32", &k);
  enum { N = 96 };
  float a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = rndf(-6, 6), b[i] = rndf(-6, 6);
  a[0] = 0.0f, b[0] = 1e-30f, a[1] = 100.0f, b[1] = 3.0f, a[2] = -1.5f, b[2] = -0.0f;
  uint64_t out = gpu_alloc(&g, N * 8 * 4, 256);
  kargs args = {.n = 0};
  karg64(&args, out);
  karg64(&args, upload(&g, a, sizeof a));
  karg64(&args, upload(&g, b, sizeof b));
  rdna3_report rep;
  run_ok(&g, &k, N / 32, 1, 1, 32, 1, 1, args.b, args.n, &rep);
  const float *o = gpu_ptr(&g, out);
  for (unsigned i = 0; i < N; i++) {
    double x = a[i], y = b[i], e = exp2(x);
    ck_close(o[i * 8 + 0], e, 2e-7, 0, "exp2", i);
    ck_close(o[i * 8 + 1], log2(fabs(y) + 1.0), 2e-7, 1e-7, "log2", i);
    ck_close(o[i * 8 + 2], sqrt(fabs(y)), 2e-7, 0, "sqrt", i);
    /* sin(x) is v_sin_f32(x * (1/2pi) rounded to float): an absolute error growing with |x| */
    ck_close(o[i * 8 + 3], sin(x), 0, 1e-6 * (1 + fabs(x)), "sin", i);
    if (y != 0) ck_close(o[i * 8 + 4], x / y, 2e-7, 0, "div", i);
    else ck_assert(isinf(o[i * 8 + 4]) || isnan(o[i * 8 + 4]) || (x == 0 && isnan(o[i * 8 + 4])));
    ck_close(o[i * 8 + 5], fmax(x, y), 0, 0, "max", i);
    if (y != 0) ck_close(o[i * 8 + 6], floor((float)(x / y)), 0, 0, "floor", i);
    ck_close(o[i * 8 + 7], x < y ? x : e, 2e-7, 0, "select", i);
  }
  gpu_free(&g);
}
END_TEST

START_TEST(ew_half) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "ew_half", &k);
  enum { N = 64 };
  _Float16 a[2 * N], b[2 * N];
  for (int i = 0; i < 2 * N; i++) a[i] = (_Float16)rndf(-3, 3), b[i] = (_Float16)rndf(0.25f, 3);
  uint64_t out = gpu_alloc(&g, sizeof a, 256), outf = gpu_alloc(&g, N * 16, 256);
  kargs args = {.n = 0};
  karg64(&args, out);
  karg64(&args, outf);
  karg64(&args, upload(&g, a, sizeof a));
  karg64(&args, upload(&g, b, sizeof b));
  rdna3_report rep;
  run_ok(&g, &k, N / 32, 1, 1, 32, 1, 1, args.b, args.n, &rep);
  const _Float16 *o = gpu_ptr(&g, out);
  const float *of = gpu_ptr(&g, outf);
  for (unsigned i = 0; i < N; i++) {
    _Float16 a0 = a[2 * i], a1 = a[2 * i + 1], b0 = b[2 * i], b1 = b[2 * i + 1];
    _Float16 m0 = (_Float16)((float)a0 * (float)b0), m1 = (_Float16)((float)a1 * (float)b1);
    _Float16 s0 = (_Float16)((double)m0 + 1.0), s1 = (_Float16)((double)m1 - 0.5);
    ck_assert_msg((float)o[2 * i] == (float)s0, "half out[%u].x = %g want %g", i, (double)o[2 * i], (double)s0);
    ck_assert_msg((float)o[2 * i + 1] == (float)s1, "half out[%u].y = %g want %g", i, (double)o[2 * i + 1], (double)s1);
    ck_close(of[4 * i + 0], (double)(float)a0 * (float)b1, 0, 0, "f32 product", i);
    ck_close(of[4 * i + 1], exp2((double)a0), 1e-3, 0, "exp2 half", i);
    float mx = fmaxf((float)a0, (float)b1);
    ck_close(of[4 * i + 2], sqrt((double)mx), 1e-3, 0, "sqrt half", i);
    ck_close(of[4 * i + 3], (double)a0 / (double)b1, 1e-3, 1e-3, "div half", i);
  }
  gpu_free(&g);
}
END_TEST

START_TEST(ew_int) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "ew_int", &k);
  enum { N = 64 };
  int32_t a[N], b[N];
  int8_t c8[N];
  uint16_t d16[N];
  for (int i = 0; i < N; i++) {
    a[i] = (int32_t)rnd() >> (rnd() % 31);
    do b[i] = (int32_t)rnd() >> (rnd() % 31); while (b[i] == 0 || b[i] == -1);
    c8[i] = (int8_t)(rnd() % 31);
    d16[i] = (uint16_t)rnd();
  }
  a[0] = 7, b[0] = -2, a[1] = -7, b[1] = 2, a[2] = INT32_MIN, b[2] = 3;
  uint64_t out = gpu_alloc(&g, N * 32, 256), out64 = gpu_alloc(&g, N * 8, 256), outb = gpu_alloc(&g, N, 256);
  kargs args = {.n = 0};
  karg64(&args, out);
  karg64(&args, out64);
  karg64(&args, outb);
  karg64(&args, upload(&g, a, sizeof a));
  karg64(&args, upload(&g, b, sizeof b));
  karg64(&args, upload(&g, c8, sizeof c8));
  karg64(&args, upload(&g, d16, sizeof d16));
  rdna3_report rep;
  run_ok(&g, &k, N / 32, 1, 1, 32, 1, 1, args.b, args.n, &rep);
  const int32_t *o = gpu_ptr(&g, out);
  const int64_t *o64 = gpu_ptr(&g, out64);
  const uint8_t *ob = gpu_ptr(&g, outb);
  for (unsigned i = 0; i < N; i++) {
    int32_t x = a[i], y = b[i];
    uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
    ck_assert_int_eq(o[8 * i + 0], x / y);
    ck_assert_int_eq(o[8 * i + 1], x % y);
    ck_assert_uint_eq((uint32_t)o[8 * i + 2], ux / uy);
    ck_assert_uint_eq((uint32_t)o[8 * i + 3], ux % uy);
    uint32_t xo = (ux * uy) ^ (ux << 3);
    ck_assert_uint_eq((uint32_t)o[8 * i + 4], xo + (uint32_t)(int32_t)c8[i]);
    ck_assert_int_eq(o[8 * i + 5], x >> c8[i]);
    ck_assert_int_eq(o[8 * i + 6], x < y ? x : y);
    uint32_t um = ux > d16[i] ? ux : d16[i];
    ck_assert_uint_eq((uint32_t)o[8 * i + 7], x > y ? uy >> 5 : um);
    int64_t s64 = (int64_t)x * (int64_t)(uint64_t)uy + 1234567890123ll;
    ck_assert_int_eq(o64[i], s64 ^ (s64 / 1000));
    ck_assert_uint_eq(ob[i], ux < uy);
  }
  gpu_free(&g);
}
END_TEST

START_TEST(reduce_lds) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "reduce_lds", &k);
  ck_assert_uint_eq(k.group_segment, 512);
  enum { WG = 5, PER = 512 };
  static float in[WG * PER];
  for (int i = 0; i < WG * PER; i++) in[i] = rndf(-1, 1);
  uint64_t out = gpu_alloc(&g, WG * 4, 256);
  kargs args = {.n = 0};
  karg64(&args, out);
  karg64(&args, upload(&g, in, sizeof in));
  rdna3_report rep;
  run_ok(&g, &k, WG, 1, 1, 128, 1, 1, args.b, args.n, &rep);
  const float *o = gpu_ptr(&g, out);
  for (unsigned w = 0; w < WG; w++) {
    double want = 0;
    for (int i = 0; i < PER; i++) want += in[w * PER + i];
    ck_close(o[w], want, 1e-5, 1e-5, "workgroup sum", w);
  }
  ck_assert_uint_eq(rep.waves, WG * 2);  /* 128 work-items: two wave64s */
  gpu_free(&g);
}
END_TEST

/* 64x64x64 float matmul: correctness, and the emulator's speed in instructions per second. */
START_TEST(matmul) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "matmul", &k);
  enum { N = 64 };
  static float a[N * N], b[N * N];
  for (int i = 0; i < N * N; i++) a[i] = rndf(-1, 1), b[i] = rndf(-1, 1);
  uint64_t c = gpu_alloc(&g, sizeof a, 256);
  kargs args = {.n = 0};
  karg64(&args, c);
  karg64(&args, upload(&g, a, sizeof a));
  karg64(&args, upload(&g, b, sizeof b));
  karg32(&args, (uint32_t)N);
  rdna3_report rep;
  struct timespec t0, t1;  /* CPU time: the build machine is shared */
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  run_ok(&g, &k, N / 8, N / 8, 1, 8, 8, 1, args.b, args.n, &rep);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  const float *o = gpu_ptr(&g, c);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double want = 0;
      for (int kk = 0; kk < N; kk++) want += (double)a[i * N + kk] * b[kk * N + j];
      ck_close(o[i * N + j], want, 1e-5, 1e-5, "matmul", (unsigned)(i * N + j));
    }
  printf("cdna3 matmul 64x64x64: %llu wave instructions, %llu waves, %.3f s CPU, %.2f M wave-instructions/s\n",
         (unsigned long long)rep.insts, (unsigned long long)rep.waves, secs, (double)rep.insts / secs / 1e6);
  gpu_free(&g);
}
END_TEST

START_TEST(grid3d) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "grid3d", &k);
  enum { X = 12, Y = 4, Z = 4 };
  uint64_t out = gpu_alloc(&g, X * Y * Z * 4, 256);
  kargs args = {.n = 0};
  karg64(&args, out);
  rdna3_report rep;
  run_ok(&g, &k, 3, 2, 2, 4, 2, 2, args.b, args.n, &rep);
  const uint32_t *o = gpu_ptr(&g, out);
  for (uint32_t z = 0; z < Z; z++)
    for (uint32_t y = 0; y < Y; y++)
      for (uint32_t x = 0; x < X; x++) {
        uint32_t want = (z / 2) << 24 | (y / 2) << 20 | (x / 4) << 16 | (z % 2) << 8 | (y % 2) << 4 | (x % 4);
        ck_assert_msg(o[(z * 4 + y) * 12 + x] == want, "(%u,%u,%u): 0x%x want 0x%x", x, y, z, o[(z * 4 + y) * 12 + x], want);
      }
  gpu_free(&g);
}
END_TEST

/* Register-indexed (s_set_gpr_idx_on + M0) and scratch-backed private arrays (architected flat scratch). */
START_TEST(private_array) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "private_array", &k);
  ck_assert_uint_ge(k.private_segment, 1024);
  ck_assert_uint_eq(k.rsrc2 & 1, 1);  /* SCRATCH_EN */
  enum { WG = 3 };
  float in[256];
  for (int i = 0; i < 256; i++) in[i] = rndf(-10, 10);
  uint64_t out = gpu_alloc(&g, WG * 64 * 4, 256);
  kargs args = {.n = 0};
  karg64(&args, out);
  karg64(&args, upload(&g, in, sizeof in));
  rdna3_report rep;
  run_ok(&g, &k, WG, 1, 1, 64, 1, 1, args.b, args.n, &rep);
  const float *o = gpu_ptr(&g, out);
  for (unsigned w = 0; w < WG; w++)
    for (unsigned t = 0; t < 64; t++) {
      float big = in[t] + (float)w, want = big + in[240 + (t & 15)];
      ck_assert_msg(o[w * 64 + t] == want, "out[%u][%u] = %g, want %g", w, t, (double)o[w * 64 + t], (double)want);
    }
  gpu_free(&g);
}
END_TEST

/* Threefry-2x32 (20 rounds) written as straight-line IR: rotates, xors, 64-bit packing. */
static uint64_t threefry_ref(uint64_t x, uint64_t key) {
  static const unsigned rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {(uint32_t)key, (uint32_t)(key >> 32), 0};
  ks[2] = ks[0] ^ ks[1] ^ 0x1BD11BDAu;
  uint32_t a = (uint32_t)x + ks[0], b = (uint32_t)(x >> 32) + ks[1];
  for (unsigned i = 0; i < 5; i++) {
    for (unsigned j = 0; j < 4; j++) {
      unsigned r = rot[(i & 1) * 4 + j];
      a += b;
      b = ((b << r) | (b >> (32 - r))) ^ a;
    }
    a += ks[(i + 1) % 3];
    b += ks[(i + 2) % 3] + i + 1;
  }
  return (uint64_t)b << 32 | a;
}

START_TEST(threefry) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "threefry", &k);
  enum { N = 128 };
  uint64_t key = 0x0123456789abcdefull, out = gpu_alloc(&g, N * 8, 256);
  kargs args = {.n = 0};
  karg64(&args, out);
  karg64(&args, key);
  rdna3_report rep;
  run_ok(&g, &k, N / 64, 1, 1, 64, 1, 1, args.b, args.n, &rep);
  const uint64_t *o = gpu_ptr(&g, out);
  for (uint32_t i = 0; i < N; i++) {
    uint64_t want = threefry_ref((uint64_t)(i * 7u) << 32 | i, key);
    ck_assert_msg(o[i] == want, "threefry[%u] = 0x%016llx, want 0x%016llx", i, (unsigned long long)o[i],
                  (unsigned long long)want);
  }
  gpu_free(&g);
}
END_TEST

/* float16 GEMM with float accumulation (fpext + fma = v_fma_mix_f32) and a bool output. */
START_TEST(hgemm) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "hgemm", &k);
  enum { N = 32 };
  static _Float16 a[N * N], b[N * N];
  for (int i = 0; i < N * N; i++) a[i] = (_Float16)rndf(-2, 2), b[i] = (_Float16)rndf(-2, 2);
  uint64_t c = gpu_alloc(&g, sizeof a, 256), pos = gpu_alloc(&g, N * N, 256);
  kargs args = {.n = 0};
  karg64(&args, c);
  karg64(&args, pos);
  karg64(&args, upload(&g, a, sizeof a));
  karg64(&args, upload(&g, b, sizeof b));
  karg32(&args, N);
  rdna3_report rep;
  run_ok(&g, &k, N / 8, N / 4, 1, 8, 4, 1, args.b, args.n, &rep);
  const _Float16 *o = gpu_ptr(&g, c);
  const uint8_t *op = gpu_ptr(&g, pos);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      float acc = 0;
      for (int kk = 0; kk < N; kk++) acc = fmaf((float)a[i * N + kk], (float)b[kk * N + j], acc);
      _Float16 want = (_Float16)acc;
      ck_assert_msg((float)o[i * N + j] == (float)want, "C[%d][%d] = %g, want %g", i, j, (double)o[i * N + j], (double)want);
      ck_assert_uint_eq(op[i * N + j], (float)want > 0);
    }
  gpu_free(&g);
}
END_TEST

START_TEST(logsoftmax) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "logsoftmax", &k);
  enum { ROWS = 64, LEN = 37 };
  static float in[ROWS * LEN];
  for (int i = 0; i < ROWS * LEN; i++) in[i] = rndf(-20, 20);
  uint64_t out = gpu_alloc(&g, sizeof in, 256);
  kargs args = {.n = 0};
  karg64(&args, out);
  karg64(&args, upload(&g, in, sizeof in));
  karg32(&args, LEN);
  rdna3_report rep;
  run_ok(&g, &k, ROWS / 32, 1, 1, 32, 1, 1, args.b, args.n, &rep);
  const float *o = gpu_ptr(&g, out);
  for (unsigned r = 0; r < ROWS; r++) {
    double m = -INFINITY, s = 0;
    for (int i = 0; i < LEN; i++) m = fmax(m, in[r * LEN + i]);
    for (int i = 0; i < LEN; i++) s += exp(in[r * LEN + i] - m);
    for (unsigned i = 0; i < LEN; i++) ck_close(o[r * LEN + i], in[r * LEN + i] - m - log(s), 1e-5, 1e-5, "logsoftmax", r * LEN + i);
  }
  gpu_free(&g);
}
END_TEST

START_TEST(math_f64) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "math_f64", &k);
  enum { N = 64 };
  double a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = rndf(-1000, 1000) / 7.0, b[i] = rndf(-30, 30) / 3.0;
  a[0] = 1e300, b[0] = 1e-300, a[1] = 1e-310, b[1] = 3.0, a[2] = 1.0, b[2] = 1e308, a[3] = 5.0, b[3] = 0.0;
  uint64_t out = gpu_alloc(&g, N * 7 * 8, 256);
  kargs args = {.n = 0};
  karg64(&args, out);
  karg64(&args, upload(&g, a, sizeof a));
  karg64(&args, upload(&g, b, sizeof b));
  rdna3_report rep;
  run_ok(&g, &k, N / 32, 1, 1, 32, 1, 1, args.b, args.n, &rep);
  const double *o = gpu_ptr(&g, out);
  for (unsigned i = 0; i < N; i++) {
    double x = a[i], y = b[i], q = x / y;
    ck_assert_msg(o[7 * i] == q, "div[%u]: %a / %a = %a, want %a", i, x, y, o[7 * i], q);
    double s = sqrt(fabs(y));
    ck_assert_msg(fabs(o[7 * i + 1] - s) <= 2.3e-16 * s, "sqrt[%u] = %a, want %a", i, o[7 * i + 1], s);
    ck_assert_msg(o[7 * i + 2] == fma(x, y, q), "fma[%u]", i);
    ck_assert_msg(o[7 * i + 3] == floor(q), "floor[%u]", i);
    ck_assert_msg(o[7 * i + 4] == (double)(float)x, "f32 round trip[%u]", i);
    if (i >= 4) ck_assert_msg(o[7 * i + 5] == (double)(int32_t)q, "int round trip[%u]", i);
    double sel = x < y ? x : o[7 * i + 1];
    ck_assert_msg(o[7 * i + 6] == sel, "select[%u]", i);
  }
  gpu_free(&g);
}
END_TEST

/* bfloat16 <-> float by the bits (round to nearest even, NaN kept quiet) and uchar4 arithmetic. */
static uint16_t bf16_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (isnan(f)) return (uint16_t)((u | 0x400000u) >> 16);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

START_TEST(bf16_bytes) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "bf16_bytes", &k);
  enum { N = 64 };
  uint16_t in[N];
  uint8_t bytes[N][4], orig[N][4];
  for (int i = 0; i < N; i++) {
    in[i] = bf16_of(rndf(-100, 100));
    for (int j = 0; j < 4; j++) bytes[i][j] = (uint8_t)rnd();
  }
  in[0] = 0x7fc1;  /* a NaN */
  memcpy(orig, bytes, sizeof bytes);
  uint64_t out = gpu_alloc(&g, sizeof in, 256), pb = upload(&g, bytes, sizeof bytes);
  kargs args = {.n = 0};
  karg64(&args, out);
  karg64(&args, upload(&g, in, sizeof in));
  karg64(&args, pb);
  rdna3_report rep;
  run_ok(&g, &k, N / 32, 1, 1, 32, 1, 1, args.b, args.n, &rep);
  const uint16_t *o = gpu_ptr(&g, out);
  const uint8_t(*ob)[4] = gpu_ptr(&g, pb);
  for (int i = 0; i < N; i++) {
    uint32_t u = (uint32_t)in[i] << 16;
    float f;
    memcpy(&f, &u, 4);
    ck_assert_msg(o[i] == bf16_of(f * 3.0f), "bf16[%d] = 0x%04x, want 0x%04x", i, o[i], bf16_of(f * 3.0f));
    static const int perm[4] = {3, 1, 2, 0};
    for (int j = 0; j < 4; j++)
      ck_assert_msg(ob[i][j] == (uint8_t)(orig[i][perm[j]] + j + 1), "bytes[%d][%d] = %u, want %u", i, j, ob[i][j],
                    (uint8_t)(orig[i][perm[j]] + j + 1));
  }
  gpu_free(&g);
}
END_TEST

/* kernels/atomics.ll: workgroups of 96 (a full wave64 and one of 32 lanes). The returned old values must be the
 * running totals of some order of the additions: sorted by value, each is the previous plus the previous adder. */
static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

START_TEST(atomics) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "atomics", &k);
  enum { WG = 3, N = WG * 96 };
  uint64_t counter = gpu_alloc(&g, 4, 64), fsum = gpu_alloc(&g, 4, 64), olds = gpu_alloc(&g, N * 4, 256);
  *(uint32_t *)gpu_ptr(&g, counter) = 1000;
  kargs args = {.n = 0};
  karg64(&args, counter);
  karg64(&args, fsum);
  karg64(&args, olds);
  rdna3_report rep;
  run_ok(&g, &k, WG, 1, 1, 96, 1, 1, args.b, args.n, &rep);
  ck_assert_uint_eq(*(uint32_t *)gpu_ptr(&g, counter), 1000 + N * (N + 1) / 2);
  float f;
  memcpy(&f, gpu_ptr(&g, fsum), 4);
  ck_assert_float_eq(f, 0.5f * N);
  const uint32_t *o = gpu_ptr(&g, olds);
  static uint64_t pairs[N];  /* old value << 32 | the adder (id + 1) */
  for (uint32_t i = 0; i < N; i++) pairs[i] = (uint64_t)o[i] << 32 | (i + 1);
  qsort(pairs, N, sizeof pairs[0], cmp_u64);
  uint64_t want = 1000;
  for (uint32_t i = 0; i < N; i++) {
    ck_assert_msg(pairs[i] >> 32 == want, "old value #%u = %llu, want %llu", i, (unsigned long long)(pairs[i] >> 32),
                  (unsigned long long)want);
    want += (uint32_t)pairs[i];
  }
  gpu_free(&g);
}
END_TEST

TCase *kernel_tests(void) {
  TCase *tc = tcase_create("kernels");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, ew_f32);
  tcase_add_test(tc, ew_f32_missing_waitcnt);
  tcase_add_test(tc, math_f32);
  tcase_add_test(tc, ew_half);
  tcase_add_test(tc, ew_int);
  tcase_add_test(tc, reduce_lds);
  tcase_add_test(tc, matmul);
  tcase_add_test(tc, grid3d);
  tcase_add_test(tc, private_array);
  tcase_add_test(tc, threefry);
  tcase_add_test(tc, hgemm);
  tcase_add_test(tc, logsoftmax);
  tcase_add_test(tc, math_f64);
  tcase_add_test(tc, bf16_bytes);
  tcase_add_test(tc, atomics);
  return tc;
}
