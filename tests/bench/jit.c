/* tests/bench/jit.c: host nanoseconds per kernel launch of a chain of N small kernels
 * (x = contiguous(x * 0.5 + 1), N times, 256 floats):
 *   (a) plain call: build the graph, schedule, look up programs, bg_program_run per kernel;
 *   (b) JIT replay launch by launch: bg_program_run per captured kernel (bg_jit_set_per_launch);
 *   (c) JIT replay: bind the input address and submit the one recorded queue program.
 * Printed side by side with the ratio; both results are compared bit for bit.
 * Usage: bench-jit [DEV] [calls] [kernels] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/tensor.h"
#include "util/clock.h"

#define TRY(x) do { if ((x) < 0) { fprintf(stderr, "bench-jit: %s: %s\n", #x, bg_last_error()); exit(1); } } while (0)

static int chain(void *user, bg_tensor *const *in, unsigned nin, bg_tensor **out, unsigned nout) {
  (void)nin;
  (void)nout;
  int n = *(const int *)user;
  bg_tensor *x = in[0];
  for (int k = 0; k < n; k++) x = bg_tn_contiguous(bg_tn_addc(bg_tn_mulc(x, 0.5), 1.0));
  out[0] = x;
  return 0;
}

int main(int argc, char **argv) {
  const char *dev = argc > 1 ? argv[1] : NULL;
  int calls = argc > 2 ? atoi(argv[2]) : 2000, nk = argc > 3 ? atoi(argv[3]) : 16;
  if (calls < 4 || nk < 1 || nk > 256) {
    fprintf(stderr, "usage: bench-jit [DEV] [calls >= 4] [kernels 1..256]\n");
    return 2;
  }
  const int batch = 50; /* synchronize between batches, outside the timed region */
  bg_tctx *c;
  TRY(bg_tctx_open(dev, &c));
  const int64_t sh[1] = {256};
  float a[256], b[256], ra[256] = {0}, rb[256] = {0}, rl[256] = {0}; /* results: plain, queue program, per launch */
  for (int i = 0; i < 256; i++) {
    a[i] = (float)i / 256.0f;
    b[i] = 1.0f - a[i];
  }
  bg_tensor *in[2] = {bg_tn_from(c, BG_FLOAT32, 1, sh, a), bg_tn_from(c, BG_FLOAT32, 1, sh, b)}, *out;
  TRY(bg_tn_realize(in, 2));

  /* (a) plain calls */
  uint64_t plain_ns = 0;
  for (int i = 0; i < calls; i += batch) {
    uint64_t t0 = bg_now_ns();
    for (int k = 0; k < batch; k++) {
      TRY(chain(&nk, &in[k & 1], 1, &out, 1));
      TRY(bg_tn_realize(&out, 1));
    }
    plain_ns += bg_now_ns() - t0;
    TRY(bg_tctx_sync(c));
  }
  TRY(chain(&nk, &in[0], 1, &out, 1));
  TRY(bg_tn_read(out, ra, sizeof ra));

  /* (b), (c) JIT replays (the first two calls run the function and capture it, untimed) */
  bg_jit *j;
  TRY(bg_jit_new(c, chain, &nk, 1, &j));
  TRY(bg_jit_call(j, &in[0], 1, &out));
  TRY(bg_jit_call(j, &in[1], 1, &out));
  TRY(bg_tctx_sync(c));
  uint64_t replay_ns[2] = {0, 0};
  for (int mode = 0; mode < 2; mode++) {
    bg_jit_set_per_launch(j, mode == 0);
    for (int i = 0; i < calls; i += batch) {
      uint64_t t0 = bg_now_ns();
      for (int k = 0; k < batch; k++) TRY(bg_jit_call(j, &in[k & 1], 1, &out));
      replay_ns[mode] += bg_now_ns() - t0;
      TRY(bg_tctx_sync(c));
    }
    TRY(bg_jit_call(j, &in[0], 1, &out));
    float *dst = mode ? rb : rl;
    TRY(bg_tn_read(out, dst, sizeof rb));
  }
  bg_jit_stats js;
  bg_jit_get_stats(j, &js);

  int ncalls = (calls + batch - 1) / batch * batch;
  double per = (double)ncalls * nk, plain = (double)plain_ns / per, launch = (double)replay_ns[0] / per,
         replay = (double)replay_ns[1] / per;
  bool same = !memcmp(ra, rb, sizeof ra) && !memcmp(ra, rl, sizeof ra);
  printf("jit bench on %s, %d calls of a chain of %d kernels (256 floats each; host time only)\n", bg_tctx_device(c),
         ncalls, nk);
  printf("  %-46s %10.0f ns/launch\n", "plain call: schedule + bg_program_run per kernel", plain);
  printf("  %-46s %10.0f ns/launch\n", "JIT replay, bg_program_run per kernel", launch);
  printf("  %-46s %10.0f ns/launch  (%zu commands, %zu patches, %zu applied per replay)\n", "JIT replay: bind + submit one queue program",
         replay, js.ncmds, js.npatches, js.patches_applied_last);
  printf("  %-46s %10.2fx\n", "plain / queue program", plain / replay);
  printf("  %-46s %10.2fx\n", "per-launch / queue program", launch / replay);
  printf("  %-46s %10s\n", "results bit-identical (all three)", same ? "yes" : "NO");
  int rc = same ? 0 : 1;
  bg_jit_free(j);
  bg_tctx_close(c);
  return rc;
}
