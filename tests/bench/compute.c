/* tests/bench/compute.c: the compute layer's figures, side by side, all measured in this run.
 * (a) wall time to schedule, compile and run the kernels of the tiny tests on the CPU device with an empty kernel
 *     cache (cold) and again with the cache filled (warm: a new context, the on-disk cache only);
 * (b) the BLAS it compares with: OpenBLAS's core type, build configuration and thread count. Debian's 0.3.21 does not
 *     know every AVX-512 CPU model and then falls back to kernels without AVX-512 (several times slower); on an
 *     AVX-512 host whose OpenBLAS picked another core and with OPENBLAS_CORETYPE unset, the bench says so and runs
 *     itself again with OPENBLAS_CORETYPE=SkylakeX (OpenBLAS reads it when it loads, so only a new process can);
 * (c) float32 matmul N x N x N (default 512 and 1024) through the tensor layer on DEV (default CPU): GFLOPS of the
 *     generated kernel beside OpenBLAS sgemm with 1 thread and with every core, the ratios ours / OpenBLAS, and the
 *     largest difference from OpenBLAS's result. On an emulated GPU (MOCK*) speed means nothing, so instead of GFLOPS
 *     it prints per kernel the shader core's deterministic counters (wave instructions, global and LDS bytes, LDS bank
 *     conflict cycles; contract C3: bg_mock_plugin_shader_stats, the difference of two reads around one run) for a
 *     matmul and a row sum as the compiler optimizes them, beside the same AST compiled naive (no_opt), and checks
 *     the two results agree (default N 64); and a float16 matmul (float32 sums) with the tensor cores (tc: WMMA on
 *     gfx11/gfx12, MFMA on gfx942) beside the same without them (local tiles of 16) and naive, where the processor has a
 *     tensor-core form (compile/ktc.h) and N is a multiple of 16.
 * Usage: bench-compute [DEV] [N...]   (BG_CACHE_DIR is set to a fresh temporary folder for (a)) */
#include <cblas.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/compile.h"
#include "baregpu/hcq.h"
#include "baregpu/tensor.h"
#include "compile/kernel.h"
#include "compile/ktc.h"
#include "util/clock.h"
#include "util/half.h"
#if BENCH_HAVE_SHADER_STATS
#include "platform/mock_plugin.h"
#endif
#include "tests/unit/compile/ast_build.h"

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb; (void)flag; (void)ftw;
  return remove(path);
}

static double now_s(void) { return (double)bg_now_ns() * 1e-9; }

#define TRY(x) do { if ((x) < 0) { fprintf(stderr, "bench-compute: %s: %s\n", #x, bg_last_error()); exit(1); } } while (0)

/* The tiny tests' computations (tests/unit and bg-tiny check their results; here only time). tests/bench/tinygrad/
 * tiny.py writes the same ones in tinygrad for vs-tinygrad.sh: change both together. */
static unsigned long tiny_kernels(void) {
  bg_tctx *c;
  TRY(bg_tctx_open("CPU", &c));
  int64_t s3[] = {3}, s22[] = {2, 2}, s16[] = {16}, s8[] = {8}, s256[] = {256}, s64[] = {64, 64}, s1x64[] = {1, 64}, s10[] = {10};
  float f3a[] = {1, 2, 3}, f3b[] = {4, 5, 6}, f22[] = {1, 2, 3, 4};
  int32_t i3a[] = {1, 2, 3}, i3b[] = {4, 5, 6};
  double v;
  float out[64 * 64];
  TRY(bg_tn_item(bg_tn_scalar(c, BG_FLOAT32, 2.0), &v));
  TRY(bg_tn_read(bg_tn_elu(bg_tn_sum(bg_tn_from(c, BG_FLOAT32, 2, s22, f22), 1u << 1, false), 1.0), out, sizeof(out)));
  TRY(bg_tn_read(bg_tn_add(bg_tn_from(c, BG_FLOAT32, 1, s3, f3a), bg_tn_from(c, BG_FLOAT32, 1, s3, f3b)), out, sizeof(out)));
  TRY(bg_tn_read(bg_tn_add(bg_tn_from(c, BG_INT32, 1, s3, i3a), bg_tn_from(c, BG_INT32, 1, s3, i3b)), out, sizeof(out)));
  TRY(bg_tn_read(bg_tn_add(bg_tn_contiguous(bg_tn_ones(c, BG_FLOAT32, 1, s16)), bg_tn_contiguous(bg_tn_ones(c, BG_FLOAT32, 1, s16))), out, sizeof(out)));
  bg_tensor *cat[2] = {bg_tn_contiguous(bg_tn_ones(c, BG_FLOAT32, 1, s8)), bg_tn_contiguous(bg_tn_zeros(c, BG_FLOAT32, 1, s8))};
  TRY(bg_tn_read(bg_tn_cat(cat, 2, 0), out, sizeof(out)));
  TRY(bg_tn_item(bg_tn_sum(bg_tn_contiguous(bg_tn_ones(c, BG_FLOAT32, 1, s256)), BG_ALL_AXES, false), &v));
  TRY(bg_tn_read(bg_tn_eye(c, BG_FLOAT32, 3), out, sizeof(out)));
  TRY(bg_tn_read(bg_tn_matmul(bg_tn_contiguous(bg_tn_ones(c, BG_FLOAT32, 2, s64)), bg_tn_contiguous(bg_tn_eye(c, BG_FLOAT32, 64))), out, sizeof(out)));
  TRY(bg_tn_read(bg_tn_matmul(bg_tn_contiguous(bg_tn_ones(c, BG_FLOAT16, 2, s64)), bg_tn_contiguous(bg_tn_eye(c, BG_FLOAT16, 64))), out, sizeof(out)));
  TRY(bg_tn_read(bg_tn_matmul(bg_tn_contiguous(bg_tn_ones(c, BG_FLOAT32, 2, s1x64)), bg_tn_contiguous(bg_tn_eye(c, BG_FLOAT32, 64))), out, sizeof(out)));
  TRY(bg_tn_read(bg_tn_rand(c, 1, s10), out, sizeof(out)));
  bg_tstats ts;
  bg_tctx_stats(c, &ts);
  bg_tctx_close(c);
  return ts.kernels_run;
}

/* ---------------- (b) OpenBLAS ---------------- */

static bool avx512_core(const char *core) {
  return strstr(core, "SkylakeX") || strstr(core, "Cooperlake") || strstr(core, "SapphireRapids");
}

/* Runs this program again with OPENBLAS_CORETYPE=SkylakeX when OpenBLAS picked a core without AVX-512 on a host that
 * has it and nobody chose the core. Returns only when no re-run is needed. */
static void blas_core_check(char **argv) {
  const char *core = openblas_get_corename();
  if (getenv("OPENBLAS_CORETYPE") || !__builtin_cpu_supports("avx512f") || avx512_core(core)) return;
  printf("OpenBLAS picked core %s on an AVX-512 host with OPENBLAS_CORETYPE unset (Debian's 0.3.21 does not know every "
         "AVX-512 model and falls back to kernels without AVX-512): running again with OPENBLAS_CORETYPE=SkylakeX\n", core);
  fflush(stdout);
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  execv("/proc/self/exe", argv);
  perror("bench-compute: re-running itself with OPENBLAS_CORETYPE=SkylakeX");
  exit(1);
}

struct blas { const float *a, *b; float *c; int n; };
static double run_blas(const struct blas *bl) {
  double t0 = now_s();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bl->n, bl->n, bl->n, 1.0f, bl->a, bl->n, bl->b, bl->n, 0.0f, bl->c, bl->n);
  return now_s() - t0;
}
static double best_blas(int reps, const struct blas *bl) {
  double best = 1e30;
  for (int i = 0; i < reps; i++) {
    double t = run_blas(bl);
    if (t < best) best = t;
  }
  return best;
}

/* ---------------- (c) matmul through the tensor layer ---------------- */

/* Each repetition multiplies fresh random inputs: realizing the same node twice runs nothing. */
struct mm { bg_tctx *c; bg_tensor *a, *b; int64_t n; };

static double run_generated(struct mm *m) {
  int64_t shape[2] = {m->n, m->n};
  m->a = bg_tn_rand(m->c, 2, shape);
  m->b = bg_tn_rand(m->c, 2, shape);
  bg_tensor *ab[2] = {m->a, m->b};
  TRY(bg_tn_realize(ab, 2));
  TRY(bg_tctx_sync(m->c));
  bg_tensor *r = bg_tn_matmul(m->a, m->b);
  double t0 = now_s();
  TRY(bg_tn_realize(&r, 1));
  TRY(bg_tctx_sync(m->c));
  return now_s() - t0;
}

/* Largest |ours - ref| / (1 + |ref|). */
static double rel_err(const float *x, const float *ref, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)x[i] - (double)ref[i]) / (1.0 + fabs((double)ref[i]));
    if (e > m || e != e) m = e != e ? INFINITY : e;
  }
  return m;
}

/* GFLOPS of the generated matmul on dev beside OpenBLAS (1 thread, every core). false when the results differ. */
static bool matmul_gflops(const char *dev, int64_t n, int cores) {
  bg_tctx *c;
  TRY(bg_tctx_open(dev, &c));
  struct mm m = {c, NULL, NULL, n};
  run_generated(&m); /* compile outside the timing */
  double tg = 1e30;
  for (int i = 0; i < 3; i++) {
    double t = run_generated(&m);
    if (t < tg) tg = t;
  }
  bg_tstats ts;
  bg_tctx_stats(c, &ts);
  char kname[64];
  snprintf(kname, sizeof kname, "%s", ts.last_nkernels ? ts.last_kernels[0] : "?");
  size_t cnt = (size_t)(n * n), bytes = cnt * sizeof(float);
  float *ha = malloc(bytes), *hb = malloc(bytes), *hc = malloc(bytes), *ref = malloc(bytes);
  if (!ha || !hb || !hc || !ref) { fprintf(stderr, "bench-compute: out of memory\n"); exit(1); }
  TRY(bg_tn_read(m.a, ha, bytes));
  TRY(bg_tn_read(m.b, hb, bytes));
  TRY(bg_tn_read(bg_tn_matmul(m.a, m.b), hc, bytes));
  bg_tctx_close(c);
  struct blas bl = {ha, hb, ref, (int)n};
  openblas_set_num_threads(1);
  double t1 = best_blas(3, &bl);
  openblas_set_num_threads(cores);
  double tn = best_blas(3, &bl);
  double err = rel_err(hc, ref, cnt), flop = 2.0 * (double)n * (double)n * (double)n;
  double g = flop / tg * 1e-9, g1 = flop / t1 * 1e-9, gn = flop / tn * 1e-9;
  printf("  float32 matmul %lldx%lldx%lld on %s (kernel %s)\n", (long long)n, (long long)n, (long long)n, dev, kname);
  printf("  %-40s %9.2f GFLOPS\n", "generated (baregpu)", g);
  printf("  %-40s %9.2f GFLOPS   (ours / OpenBLAS %.2fx)\n", "OpenBLAS sgemm, 1 thread", g1, g / g1);
  printf("  %-40s %9.2f GFLOPS   (ours / OpenBLAS %.2fx)\n", cores > 1 ? "OpenBLAS sgemm, all cores" : "OpenBLAS sgemm, all cores (1)", gn, g / gn);
  printf("  %-40s %9.2g\n", "max |ours - OpenBLAS| / (1 + |OpenBLAS|)", err);
  printf("figures: matmul n=%lld ours_gflops=%.2f blas1_gflops=%.2f blasn_gflops=%.2f blas_threads=%d\n", (long long)n, g, g1,
         gn, cores);
  free(ha); free(hb); free(hc); free(ref);
  return err <= 1e-3;
}

/* ---------------- (c') an emulated GPU: shader-core counters, optimized beside naive ---------------- */

typedef struct proxy {
  char name[64];
  bool have;                 /* counters read (the stats API is in this build) */
  unsigned long long waves, insts, gbytes, lbytes, conflicts;
} proxy;

#if BENCH_HAVE_SHADER_STATS
static void proxy_of(const bg_mock_shader_stats *a, const bg_mock_shader_stats *b, proxy *p) {
  p->have = true;
  p->waves = b->waves - a->waves;
  p->insts = b->wave_insts - a->wave_insts;
  p->gbytes = (b->global_load_bytes - a->global_load_bytes) + (b->global_store_bytes - a->global_store_bytes);
  p->lbytes = (b->lds_load_bytes - a->lds_load_bytes) + (b->lds_store_bytes - a->lds_store_bytes);
  p->conflicts = b->lds_bank_conflict_cycles - a->lds_bank_conflict_cycles;
}
#endif

/* Compiles sink with opts (NULL: the heuristics) on d, runs it once on bufs and reads the counters around the run. */
static void run_counted(bg_dev *d, const bg_target *t, N sink, const bg_kopts *opts, bg_buf **bufs, unsigned nbufs,
                        proxy *p) {
  bg_kernel k;
  bg_program *prg;
  TRY(bg_kernel_build(d, C, sink, opts, &k, &prg));
  snprintf(p->name, sizeof p->name, "%s", k.name);
  for (int i = 0; i < 3; i++) {
    if (!k.gsz[i]) k.gsz[i] = 1;
    if (!k.lsz[i]) k.lsz[i] = 1;
  }
  TRY(bg_dev_synchronize(d, 0));
#if BENCH_HAVE_SHADER_STATS
  bg_mock_shader_stats s0, s1;
  TRY(bg_mock_plugin_shader_stats(t->iface, t->index, &s0));
#else
  (void)t;
#endif
  TRY(bg_program_run(prg, bufs, nbufs, NULL, 0, k.gsz, k.lsz, true, NULL));
#if BENCH_HAVE_SHADER_STATS
  TRY(bg_mock_plugin_shader_stats(t->iface, t->index, &s1));
  proxy_of(&s0, &s1, p);
#else
  p->have = false;
#endif
  bg_program_free(prg);
  bg_kernel_free(&k);
}

static void print_proxy(const char *what, const proxy *p) {
  if (!p->have) {
    printf("    %-10s %-28s (no shader statistics in this build)\n", what, p->name);
    return;
  }
  printf("    %-10s %-28s %10llu %12llu %12llu %10llu %10llu\n", what, p->name, p->waves, p->insts, p->gbytes, p->lbytes,
         p->conflicts);
}

static bg_buf *dev_buf(bg_dev *d, const float *data, size_t n) {
  bg_buf *b;
  TRY(bg_buf_alloc(d, n * sizeof(float), BG_BUF_ZERO, &b));
  if (data) TRY(bg_buf_write(b, 0, data, n * sizeof(float)));
  return b;
}

/* One kernel AST run optimized and naive on the same inputs: counters side by side, results compared. */
static bool compare_kernel(bg_dev *d, const bg_target *t, const char *what, N sink, const float *const *in,
                           const size_t *insz, unsigned nin, size_t outn) {
  static const bg_kopts no_opt = {.no_opt = true};
  float *out[2];
  proxy px[2];
  for (int naive = 0; naive < 2; naive++) {
    bg_buf *bufs[4] = {dev_buf(d, NULL, outn)};
    for (unsigned i = 0; i < nin; i++) bufs[i + 1] = dev_buf(d, in[i], insz[i]);
    run_counted(d, t, sink, naive ? &no_opt : NULL, bufs, nin + 1, &px[naive]);
    out[naive] = malloc(outn * sizeof(float));
    if (!out[naive]) { fprintf(stderr, "bench-compute: out of memory\n"); exit(1); }
    TRY(bg_buf_read(bufs[0], 0, out[naive], outn * sizeof(float)));
    for (unsigned i = 0; i <= nin; i++) bg_buf_free(bufs[i]);
  }
  double err = rel_err(out[0], out[1], outn);
  printf("  %s: max |optimized - naive| / (1 + |naive|) = %.2g\n", what, err);
  print_proxy("optimized", &px[0]);
  print_proxy("naive", &px[1]);
  if (px[0].have && px[1].have && px[0].insts)
    printf("    %-10s %-28s %9.2fx %11.2fx %11.2fx\n", "naive/opt", "", (double)px[1].waves / (double)(px[0].waves ? px[0].waves : 1),
           (double)px[1].insts / (double)px[0].insts, (double)px[1].gbytes / (double)(px[0].gbytes ? px[0].gbytes : 1));
  free(out[0]);
  free(out[1]);
  return err <= 1e-3;
}

/* A float16 matmul (float32 sums) with and without the tensor cores: out[i, j] = sum_k float(a[i, k]) * float(b[k, j]).
 * The tc result only differs from the others by the order of exact float32 products' sums. */
static bool half_matmul_tc(bg_dev *d, const bg_target *t, int64_t n, const float *a, const float *b) {
  if (n % 16 || ktc_form_of(bg_dev_arch(d)) == KTC_NONE) return true;
  size_t cnt = (size_t)(n * n);
  uint16_t *h[2] = {malloc(cnt * 2), malloc(cnt * 2)};
  if (!h[0] || !h[1]) { fprintf(stderr, "bench-compute: out of memory\n"); exit(1); }
  for (size_t i = 0; i < cnt; i++) h[0][i] = bg_f32_to_f16(a[i]), h[1][i] = bg_f32_to_f16(b[i]);
  const enum ir_scalar F = IR_DT_FLOAT32, H = IR_DT_FLOAT16;
  N i = out_r(0, n), j = out_r(1, n), k = red_r(2, n);
  N x = ir_cast(C, F, ld(buf(1, H), add(mul(i, ki(n)), k))), y = ir_cast(C, F, ld(buf(2, H), add(mul(k, ki(n)), j)));
  N mm = sink1(st(buf(0, F), add(mul(i, ki(n)), j), reduce(IR_ADD, mul(x, y), k, NULL)));
  static const bg_kopts opts[3] = {{.tc = true}, {.tile = 16}, {.no_opt = true}};
  static const char *const label[3] = {"tc", "no tc", "naive"};
  proxy px[3];
  float *out[3];
  for (int v = 0; v < 3; v++) {
    bg_buf *bufs[3] = {dev_buf(d, NULL, cnt)};
    for (int s = 0; s < 2; s++) {
      TRY(bg_buf_alloc(d, cnt * 2, 0, &bufs[s + 1]));
      TRY(bg_buf_write(bufs[s + 1], 0, h[s], cnt * 2));
    }
    run_counted(d, t, mm, &opts[v], bufs, 3, &px[v]);
    if (!(out[v] = malloc(cnt * sizeof(float)))) { fprintf(stderr, "bench-compute: out of memory\n"); exit(1); }
    TRY(bg_buf_read(bufs[0], 0, out[v], cnt * sizeof(float)));
    for (int s = 0; s < 3; s++) bg_buf_free(bufs[s]);
  }
  double err = rel_err(out[0], out[2], cnt), err1 = rel_err(out[1], out[2], cnt);
  printf("  float16 matmul %lldx%lldx%lld (float32 sums) on %s: max |x - naive| / (1 + |naive|): tc %.2g, no tc %.2g\n",
         (long long)n, (long long)n, (long long)n, bg_dev_arch(d), err, err1);
  for (int v = 0; v < 3; v++) print_proxy(label[v], &px[v]);
  if (px[0].have && px[1].have && px[0].insts)
    printf("    %-10s %-28s %10s %11.2fx\n", "no tc/tc", "", "", (double)px[1].insts / (double)px[0].insts);
  for (int v = 0; v < 3; v++) free(out[v]);
  free(h[0]);
  free(h[1]);
  return err <= 1e-3 && err1 <= 1e-3;
}

static bool emulated_proxies(const char *dev, int64_t n) {
  bg_target t;
  TRY(bg_target_parse(dev, &t));
  bg_dev *d;
  TRY(bg_dev_open(dev, &d));
  if (!(C = ir_new())) { fprintf(stderr, "bench-compute: out of memory\n"); exit(1); }
  size_t cnt = (size_t)(n * n);
  float *a = malloc(cnt * sizeof(float)), *b = malloc(cnt * sizeof(float));
  if (!a || !b) { fprintf(stderr, "bench-compute: out of memory\n"); exit(1); }
  uint32_t s = 12345;
  for (size_t i = 0; i < cnt; i++) {
    s = s * 1664525u + 1013904223u;
    a[i] = (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f;
    s = s * 1664525u + 1013904223u;
    b[i] = (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
  printf("  %s: the emulator shows no GPU speed; shader-core counters of one run per kernel (contract C3)\n", bg_dev_name(d));
  printf("    %-10s %-28s %10s %12s %12s %10s %10s\n", "", "kernel", "waves", "wave insts", "global B", "LDS B",
         "LDS confl");
  /* matmul: out[i, j] = sum_k a[i, k] * b[k, j] */
  N o = buf(0, IR_DT_FLOAT32), ba = buf(1, IR_DT_FLOAT32), bb = buf(2, IR_DT_FLOAT32);
  N i = out_r(0, n), j = out_r(1, n), k = red_r(2, n);
  N mm = sink1(st(o, add(mul(i, ki(n)), j),
                  reduce(IR_ADD, mul(ld(ba, add(mul(i, ki(n)), k)), ld(bb, add(mul(k, ki(n)), j))), k, NULL)));
  const float *mm_in[2] = {a, b};
  size_t mm_sz[2] = {cnt, cnt};
  char what[96];
  snprintf(what, sizeof what, "float32 matmul %lldx%lldx%lld", (long long)n, (long long)n, (long long)n);
  bool ok = compare_kernel(d, &t, what, mm, mm_in, mm_sz, 2, cnt);
  /* row sum: out[i] = sum_k a[i, k] */
  N o2 = buf(0, IR_DT_FLOAT32), a2 = buf(1, IR_DT_FLOAT32), i2 = out_r(0, n), k2 = red_r(1, n);
  N rs = sink1(st(o2, i2, reduce(IR_ADD, ld(a2, add(mul(i2, ki(n)), k2)), k2, NULL)));
  const float *rs_in[1] = {a};
  size_t rs_sz[1] = {cnt};
  snprintf(what, sizeof what, "float32 row sum %lldx%lld", (long long)n, (long long)n);
  ok = compare_kernel(d, &t, what, rs, rs_in, rs_sz, 1, (size_t)n) && ok;
  ok = half_matmul_tc(d, &t, n, a, b) && ok;
  free(a);
  free(b);
  ir_free(C);
  C = NULL;
  bg_dev_close(d);
  return ok;
}

int main(int argc, char **argv) {
  blas_core_check(argv);
  const char *dev = "CPU";
  int argi = 1;
  if (argc > 1 && (argv[1][0] < '0' || argv[1][0] > '9')) dev = argv[argi++];
  int64_t sizes[8];
  int nsz = 0;
  bool emulated = strncmp(dev, "MOCK", 4) == 0;
  for (; argi < argc; argi++) {
    char *end;
    long long v = strtoll(argv[argi], &end, 10);
    if (*end || v < 1 || v > 8192 || nsz == 8) {
      fprintf(stderr, "usage: bench-compute [DEV] [N...]   (N: 1..8192, at most 8 sizes; default 512 1024, "
              "on an emulated GPU 64)\n");
      return 2;
    }
    sizes[nsz++] = v;
  }
  if (!nsz) {
    if (emulated) sizes[nsz++] = 64;
    else {
      sizes[nsz++] = 512;
      sizes[nsz++] = 1024;
    }
  }
  char dir[] = "/tmp/bg-bench-cache-XXXXXX";
  if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
  setenv("BG_CACHE_DIR", dir, 1);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;

  /* (a) cold and warm */
  double t0 = now_s();
  unsigned long nk = tiny_kernels();
  double cold = now_s() - t0;
  t0 = now_s();
  tiny_kernels();
  double warm = now_s() - t0;
  bg_compile_stats cs;
  bg_compile_get_stats(&cs);
  const char *ct = getenv("BG_COMPILE_THREADS");
  printf("compute bench\n");
  printf("  tiny-test kernels on CPU: %lu launches per pass; compiler cache %lu misses, %lu hits; BG_COMPILE_THREADS=%s\n",
         nk, cs.misses, cs.hits, ct && *ct ? ct : "(unset: the online CPUs)");
  printf("  %-40s %9.3f s\n", "schedule+compile+run, cold cache", cold);
  printf("  %-40s %9.3f s   (cold/warm %.1fx)\n", "schedule+compile+run, warm cache", warm, cold / warm);
  printf("figures: tiny cold_s=%.3f warm_s=%.3f launches=%lu\n", cold, warm, nk);

  /* (b) the BLAS */
  const char *env_core = getenv("OPENBLAS_CORETYPE");
  printf("  OpenBLAS: core %s, %s, %d threads by default; OPENBLAS_CORETYPE=%s\n", openblas_get_corename(),
         openblas_get_config(), openblas_get_num_threads(), env_core ? env_core : "(unset)");

  /* (c) matmul */
  bool ok = true;
  for (int s = 0; s < nsz; s++)
    ok = (emulated ? emulated_proxies(dev, sizes[s]) : matmul_gflops(dev, sizes[s], (int)cores)) && ok;
  if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) fprintf(stderr, "bench-compute: could not remove %s\n", dir);
  if (!ok) fprintf(stderr, "bench-compute: a result differs from its reference (see above)\n");
  return ok ? 0 : 1;
}
