/* tests/bench/compute.c: the compute layer's figures, side by side.
 * (a) wall time to schedule, compile and run the kernels of the tiny tests with an empty kernel
 *     cache (cold) and again with the cache filled (warm, new context, on-disk cache only);
 * (b) GFLOPS of the generated float32 matmul at N x N x N (default 512) beside a naive C triple
 *     loop compiled with the same compiler and flags, and OpenBLAS's sgemm when built with it.
 * Usage: bench-compute [N] (BG_CACHE_DIR is set to a fresh temporary folder for (a)). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ftw.h>
#include <unistd.h>

#include "baregpu/compile.h"
#include "baregpu/hcq.h"
#include "baregpu/tensor.h"
#include "util/clock.h"
#if BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb; (void)flag; (void)ftw;
  return remove(path);
}

static double now_s(void) { return (double)bg_now_ns() * 1e-9; }

#define TRY(x) do { if ((x) < 0) { fprintf(stderr, "bench-compute: %s: %s\n", #x, bg_last_error()); exit(1); } } while (0)

/* The tiny tests' computations (tests/unit and bg-tiny check their results; here only time). */
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
  bg_tstats st;
  bg_tctx_stats(c, &st);
  bg_tctx_close(c);
  return st.kernels_run;
}

static const char *naive_src =
    "#include <stdint.h>\n"
    "void naive(const void *args, const uint32_t g[3], const uint32_t s[3], const uint32_t l[3]) {\n"
    "  const uint64_t *a = args; (void)g; (void)s; (void)l;\n"
    "  float *c = (float *)(uintptr_t)a[0]; const float *x = (const float *)(uintptr_t)a[1];\n"
    "  const float *y = (const float *)(uintptr_t)a[2]; int n = (int)a[3];\n"
    "  for (int i = 0; i < n; i++)\n"
    "    for (int j = 0; j < n; j++) {\n"
    "      float acc = 0.0f;\n"
    "      for (int k = 0; k < n; k++) acc += x[i * n + k] * y[k * n + j];\n"
    "      c[i * n + j] = acc;\n"
    "    }\n"
    "}\n";

static double best_of(int reps, double (*fn)(void *), void *arg) {
  double best = 1e30;
  for (int i = 0; i < reps; i++) {
    double t = fn(arg);
    if (t < best) best = t;
  }
  return best;
}

/* Each repetition multiplies fresh random inputs: realizing the same node twice runs nothing. */
struct mm { bg_tctx *c; bg_tensor *a, *b; int64_t n; };

static double run_generated(void *p) {
  struct mm *m = p;
  int64_t shape[2] = {m->n, m->n};
  m->a = bg_tn_rand(m->c, 2, shape);
  m->b = bg_tn_rand(m->c, 2, shape);
  bg_tensor *ab[2] = {m->a, m->b};
  TRY(bg_tn_realize(ab, 2));
  bg_tensor *r = bg_tn_matmul(m->a, m->b);
  double t0 = now_s();
  TRY(bg_tn_realize(&r, 1));
  TRY(bg_tctx_sync(m->c));
  return now_s() - t0;
}

struct naive { bg_program *prg; bg_buf *bufs[3]; uint64_t n; };

static double run_naive(void *p) {
  struct naive *nv = p;
  uint32_t one[3] = {1, 1, 1};
  double t0 = now_s();
  TRY(bg_program_run(nv->prg, nv->bufs, 3, &nv->n, 1, one, one, true, NULL));
  return now_s() - t0;
}

#if BENCH_HAVE_OPENBLAS
struct blas { const float *a, *b; float *c; int n; };
static double run_blas(void *p) {
  struct blas *bl = p;
  double t0 = now_s();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bl->n, bl->n, bl->n, 1.0f, bl->a, bl->n, bl->b, bl->n, 0.0f, bl->c, bl->n);
  return now_s() - t0;
}
#endif

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 512;
  char dir[] = "/tmp/bg-bench-cache-XXXXXX";
  if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
  setenv("BG_CACHE_DIR", dir, 1);

  /* (a) cold and warm */
  double t0 = now_s();
  unsigned long nk = tiny_kernels();
  double cold = now_s() - t0;
  t0 = now_s();
  tiny_kernels();
  double warm = now_s() - t0;
  bg_compile_stats cs;
  bg_compile_get_stats(&cs);
  printf("compute bench (CPU device)\n");
  printf("  tiny-test kernels: %lu launches per pass; compiler cache %lu misses, %lu hits\n", nk, cs.misses, cs.hits);
  printf("  %-40s %9.3f s\n", "schedule+compile+run, cold cache", cold);
  printf("  %-40s %9.3f s   (cold/warm %.1fx)\n", "schedule+compile+run, warm cache", warm, cold / warm);

  /* (b) matmul */
  bg_tctx *c;
  TRY(bg_tctx_open("CPU", &c));
  struct mm m = {c, NULL, NULL, n};
  run_generated(&m); /* compile outside the timing */
  double tg = best_of(3, run_generated, &m);
  bg_tstats st;
  bg_tctx_stats(c, &st);
  size_t bytes = (size_t)(n * n) * sizeof(float);
  float *ha = malloc(bytes), *hb = malloc(bytes), *hc = malloc(bytes), *ref = malloc(bytes);
  if (!ha || !hb || !hc || !ref) return 1;
  TRY(bg_tn_read(m.a, ha, bytes));
  TRY(bg_tn_read(m.b, hb, bytes));
  TRY(bg_tn_read(bg_tn_matmul(m.a, m.b), hc, bytes));

  bg_dev *d;
  TRY(bg_dev_open("CPU", &d));
  void *so;
  size_t so_size;
  TRY(bg_compile_c(naive_src, "", &so, &so_size));
  static const uint8_t sizes[] = {8, 8, 8, 8};
  bg_program_info info = {"naive", 4, sizes};
  struct naive nv = {NULL, {NULL, NULL, NULL}, (uint64_t)n};
  TRY(bg_program_load(d, so, so_size, &info, &nv.prg));
  free(so);
  for (int i = 0; i < 3; i++) TRY(bg_buf_alloc(d, bytes, 0, &nv.bufs[i]));
  TRY(bg_buf_write(nv.bufs[1], 0, ha, bytes));
  TRY(bg_buf_write(nv.bufs[2], 0, hb, bytes));
  double tn = best_of(3, run_naive, &nv);
  TRY(bg_buf_read(nv.bufs[0], 0, ref, bytes));
  double maxerr = 0;
  for (int64_t i = 0; i < n * n; i++) {
    double e = (double)hc[i] - (double)ref[i];
    if (e < 0) e = -e;
    if (e > maxerr) maxerr = e;
  }
  double flop = 2.0 * (double)n * (double)n * (double)n;
  printf("  float32 matmul %lldx%lldx%lld (generated kernel %s)\n", (long long)n, (long long)n, (long long)n,
         st.last_nkernels ? st.last_kernels[0] : "?");
  printf("  %-40s %9.2f GFLOPS\n", "generated (baregpu)", flop / tg * 1e-9);
  printf("  %-40s %9.2f GFLOPS   (generated/naive %.2fx)\n", "naive C triple loop, same flags", flop / tn * 1e-9, tn / tg);
#if BENCH_HAVE_OPENBLAS
  struct blas bl = {ha, hb, ref, (int)n};
  double tb = best_of(3, run_blas, &bl);
  printf("  %-40s %9.2f GFLOPS   (generated/OpenBLAS %.2fx)\n", "OpenBLAS sgemm", flop / tb * 1e-9, tb / tg);
#else
  printf("  %-40s %9s          (install libopenblas-dev and rebuild)\n", "OpenBLAS sgemm", "n/a");
#endif
  printf("  max |generated - naive| = %.3g\n", maxerr);
  for (int i = 0; i < 3; i++) bg_buf_free(nv.bufs[i]);
  bg_program_free(nv.prg);
  bg_dev_close(d);
  bg_tctx_close(c);
  free(ha); free(hb); free(hc); free(ref);
  if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) fprintf(stderr, "bench-compute: could not remove %s\n", dir);
  return maxerr > 1e-2 * (double)n ? 1 : 0;
}
