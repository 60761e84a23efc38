/* tests/unit/compile/test_beam.c: BEAM search (compile/beam.h) on the CPU device: every candidate
 * the search may try (one and two actions deep) writes the same bytes as the unoptimized kernel
 * (a matmul-shaped reduce, a 2-D elementwise kernel, a symbolic-size reduce), the action list
 * (valid factors only, none on symbolic extents), a search picks a candidate and caches it (the
 * second call compiles nothing), a damaged cache entry or IGNORE_BEAM_CACHE searches again, and
 * BEAM parsing. The cache lives in a fresh temporary directory. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/compile.h"
#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "compile/beam.h"
#include "compile/kcache.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

typedef const ir_node *N;
static bg_dev *dev;
static ir_ctx *C;
static char cache_dir[] = "/tmp/bg-beam-test-XXXXXX";

static void setup(void) {
  OK(bg_dev_open("CPU", &dev));
  ck_assert_ptr_nonnull(C = ir_new());
}
static void teardown(void) {
  ir_free(C);
  bg_dev_close(dev);
}

static N ki(int64_t v) { return ir_const_int(C, IR_DT_INDEX, v); }
static N buf(int slot) {
  ir_arg a = {.i = slot};
  return ir_intern(C, IR_DEFINE_GLOBAL, IR_DT_PTR(IR_DT_FLOAT32, IR_AS_GLOBAL), a, 0, NULL);
}
static N rng(int axis, int kind, N extent) {
  ir_arg a = {.i = (int64_t)axis << 8 | kind};
  return ir_intern(C, IR_RANGE, IR_DT_INDEX, a, 1, &extent);
}
static N idx(N b, N i) {
  N s[2] = {b, i};
  ir_arg a = {.i = 0};
  return ir_intern(C, IR_INDEX, b->dt, a, 2, s);
}
static N ld(N b, N i) {
  N x = idx(b, i);
  ir_arg a = {.i = 0};
  return ir_intern(C, IR_LOAD, IR_DT_FLOAT32, a, 1, &x);
}
static N sink_store(N i, N v) {
  N s[2] = {idx(buf(0), i), v};
  ir_arg a = {.i = 0};
  N st = ir_intern(C, IR_STORE, IR_DT_VOID, a, 2, s);
  a.b = NULL;
  return ir_intern(C, IR_SINK, IR_DT_VOID, a, 1, &st);
}
static N add(N a, N b) { return ir_alu2(C, IR_ADD, a, b); }
static N mul(N a, N b) { return ir_alu2(C, IR_MUL, a, b); }
static N sum_over(N v, N r) {
  N s[2] = {v, r};
  ir_arg a = {.i = IR_ADD};
  return ir_intern(C, IR_REDUCE, v->dt, a, 2, s);
}

/* out[i*16+j] = sum_k a[i*24+k] * b[k*16+j]: 8x16 outputs, 24 reduce. */
static N matmul(void) {
  N i = rng(0, 0, ki(8)), j = rng(1, 0, ki(16)), k = rng(2, 1, ki(24));
  N v = sum_over(mul(ld(buf(1), add(mul(i, ki(24)), k)), ld(buf(2), add(mul(k, ki(16)), j))), k);
  return sink_store(add(mul(i, ki(16)), j), v);
}
/* out[i*12+j] = a[i*12+j] * 3 + b[j]: 6x12. */
static N elementwise(void) {
  N i = rng(0, 0, ki(6)), j = rng(1, 0, ki(12));
  N lin = add(mul(i, ki(12)), j);
  return sink_store(lin, add(mul(ld(buf(1), lin), ir_const_float(C, IR_DT_FLOAT32, 3)), ld(buf(2), j)));
}
/* out[i] = sum_k a[i*n+k] over a symbolic n, 8 outputs. */
static N symbolic_reduce(void) {
  N n = ir_var(C, IR_DT_INDEX, "n", 1, 32);
  N i = rng(0, 0, ki(8)), k = rng(1, 1, n);
  return sink_store(i, sum_over(ld(buf(1), add(mul(i, n), k)), k));
}

/* Output bytes of sink compiled with opts, on inputs of n floats each (deterministic values). */
static void run_bytes(N sink, const bg_kopts *opts, unsigned nbufs, size_t n, const uint64_t *vars, unsigned nvars,
                      float *out) {
  bg_kernel k;
  bg_program *p;
  OK(bg_kernel_build(dev, C, sink, opts, &k, &p));
  bg_buf *b[3];
  float *data = malloc(n * sizeof *data);
  ck_assert_ptr_nonnull(data);
  for (unsigned s = 0; s < nbufs; s++) {
    for (size_t x = 0; x < n; x++) data[x] = s ? (float)((x * 37 + s * 11) % 19) * 0.37f - 3.1f : 0.0f;
    OK(bg_buf_alloc(dev, n * sizeof *data, 0, &b[s]));
    OK(bg_buf_write(b[s], 0, data, n * sizeof *data));
  }
  OK(bg_program_run(p, b, nbufs, vars, nvars, k.gsz, k.lsz, true, NULL));
  OK(bg_buf_read(b[0], 0, out, n * sizeof *out));
  for (unsigned s = 0; s < nbufs; s++) bg_buf_free(b[s]);
  free(data);
  bg_program_free(p);
  bg_kernel_free(&k);
}

/* Every candidate one and two actions deep equals no_opt, bit for bit; returns how many ran. */
static int check_candidates(N sink, unsigned nbufs, size_t n, const uint64_t *vars, unsigned nvars) {
  static const bg_kopts no_opt = {.no_opt = true};
  float *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
  ck_assert(want && got);
  run_bytes(sink, &no_opt, nbufs, n, vars, nvars, want);
  bg_kopts l1[64], l2[64];
  int n1 = bg_beam_actions(C, sink, NULL, l1, 64), tried = 0;
  ck_assert_msg(n1 >= 0, "%s", bg_last_error());
  for (int a = 0; a < n1; a++) {
    int n2 = bg_beam_actions(C, sink, &l1[a], l2, 64);
    ck_assert_msg(n2 >= 0, "%s", bg_last_error());
    for (int b = -1; b < n2; b++) {
      const bg_kopts *o = b < 0 ? &l1[a] : &l2[b];
      run_bytes(sink, o, nbufs, n, vars, nvars, got);
      ck_assert_msg(!memcmp(want, got, n * sizeof *got), "candidate upcast %u,%u unroll %u differs from no_opt",
                    o->upcast[0], o->upcast[1], o->unroll);
      tried++;
    }
  }
  free(want);
  free(got);
  return tried;
}

START_TEST(candidates_match_no_opt_matmul) { ck_assert_int_gt(check_candidates(matmul(), 3, 8 * 24 + 24 * 16, NULL, 0), 20); }
END_TEST

START_TEST(candidates_match_no_opt_elementwise) { ck_assert_int_gt(check_candidates(elementwise(), 3, 72, NULL, 0), 10); }
END_TEST

START_TEST(candidates_match_no_opt_symbolic) {
  const uint64_t n = 29;
  ck_assert_int_gt(check_candidates(symbolic_reduce(), 2, 8 * 32, &n, 1), 2);
}
END_TEST

START_TEST(actions_valid_factors) {
  bg_kopts a[64];
  int n = bg_beam_actions(C, elementwise(), NULL, a, 64);
  /* axis 0 (6): 2, 3; axis 1 (12): 2, 3, 4; no reduce */
  ck_assert_int_eq(n, 5);
  for (int i = 0; i < n; i++) {
    ck_assert_uint_eq(a[i].unroll, 0);
    ck_assert(a[i].upcast[0] <= 1 || 6 % a[i].upcast[0] == 0);
    ck_assert(a[i].upcast[1] <= 1 || 12 % a[i].upcast[1] == 0);
  }
  n = bg_beam_actions(C, symbolic_reduce(), NULL, a, 64);
  /* axis 0 (8): 2, 4, 8; the symbolic reduce axis gets no unroll */
  ck_assert_int_eq(n, 3);
  for (int i = 0; i < n; i++) ck_assert_uint_eq(a[i].unroll, 0);
}
END_TEST

static bool same(const bg_kopts *a, const bg_kopts *b) { return !memcmp(a->upcast, b->upcast, 8) && a->unroll == b->unroll; }

/* AMD actions: group sizes that divide the reduce, local tiles and (where the processor has a tensor-core form:
 * gfx11, gfx1201, gfx942; not gfx1030) tc from no options; the CPU
 * list has none of them; a tile takes no further action; the cache text round-trips them. */
START_TEST(gpu_actions_and_cache_text) {
  bg_kopts acts[64];
  N n = ir_const_int(C, IR_DT_INDEX, 256);
  N i = rng(0, 0, ki(8)), k = rng(1, 1, n);
  N sum = sink_store(i, sum_over(ld(buf(1), add(mul(i, n), k)), k));
  int na = bg_beam_actions_amdgpu(C, sum, "gfx1100", NULL, acts, 64), groups = 0;
  ck_assert_int_gt(na, 0);
  for (int a = 0; a < na; a++) {
    ck_assert_uint_eq(acts[a].tile, 0);
    if (acts[a].group > 1) {
      groups++;
      ck_assert_uint_eq(256 % acts[a].group, 0);
    }
  }
  ck_assert_int_eq(groups, 6);   /* 8, 16, ..., 256 */
  na = bg_beam_actions(C, sum, NULL, acts, 64);
  for (int a = 0; a < na; a++) ck_assert_uint_eq(acts[a].group, 0);
  static const char *const cpus[] = {"gfx1100", "gfx1201", "gfx942", "gfx1030"};
  for (int m = 0; m < 4; m++) {   /* matmul 8x16x24: tiles 4, 8, 16; tc where there is a form */
    na = bg_beam_actions_amdgpu(C, matmul(), cpus[m], NULL, acts, 64);
    int tiles = 0, tc = 0;
    for (int a = 0; a < na; a++) {
      tiles += acts[a].tile > 1;
      tc += acts[a].tc;
    }
    ck_assert_int_eq(tiles, 3);
    ck_assert_int_eq(tc, m == 3 ? 0 : 1);
  }
  bg_kopts tile = {.tile = 8};
  ck_assert_int_eq(bg_beam_actions_amdgpu(C, matmul(), "gfx1100", &tile, acts, 64), 0);
  bg_kopts o;
  static const char g64[] = "u 1 1 1 1 1 1 1 1 r 4 g 64 t 1\n", tc[] = "u 1 1 1 1 1 1 1 1 r 1 g 1 t 1 tc\n",
                    old[] = "u 2 1 1 1 1 1 1 1 r 4\n", bad[] = "u 1 1 1 1 1 1 1 1 r 1 g 512 t 1\n";
  ck_assert(bg_beam_cache_decode(g64, sizeof g64 - 1, &o));
  ck_assert_uint_eq(o.group, 64);
  ck_assert_uint_eq(o.unroll, 4);
  ck_assert(!o.tc);
  ck_assert(bg_beam_cache_decode(tc, sizeof tc - 1, &o));
  ck_assert(o.tc);
  ck_assert_uint_eq(o.group, 0);
  ck_assert(bg_beam_cache_decode(old, sizeof old - 1, &o));
  ck_assert_uint_eq(o.upcast[0], 2);
  ck_assert_uint_eq(o.group, 0);
  ck_assert(!bg_beam_cache_decode(bad, sizeof bad - 1, &o));
}
END_TEST

START_TEST(search_then_cache_hit) {
  unsetenv("IGNORE_BEAM_CACHE");
  N sink = matmul();
  bg_beam_stats s0, s1, s2, s3, s4;
  bg_kopts first, again, ignored, repaired;
  bg_beam_get_stats(&s0);
  OK(bg_beam_opts(dev, C, sink, 2, &first));
  bg_beam_get_stats(&s1);
  ck_assert_uint_eq(s1.searches, s0.searches + 1);
  ck_assert_uint_gt(s1.compiles, s0.compiles + 2);
  ck_assert_uint_eq(s1.rejected, s0.rejected); /* no candidate differed from the unoptimized kernel */
  ck_assert(s1.best_us <= s1.base_us);
  OK(bg_beam_opts(dev, C, sink, 2, &again));
  bg_beam_get_stats(&s2);
  ck_assert_uint_eq(s2.cache_hits, s1.cache_hits + 1);
  ck_assert_uint_eq(s2.compiles, s1.compiles);
  ck_assert(same(&first, &again));
  /* the chosen options compile and give the unoptimized result */
  static const bg_kopts no_opt = {.no_opt = true};
  float want[8 * 24 + 24 * 16], got[8 * 24 + 24 * 16];
  run_bytes(sink, &no_opt, 3, 8 * 24 + 24 * 16, NULL, 0, want);
  run_bytes(sink, &again, 3, 8 * 24 + 24 * 16, NULL, 0, got);
  ck_assert(!memcmp(want, got, sizeof got));
  /* IGNORE_BEAM_CACHE searches again */
  setenv("IGNORE_BEAM_CACHE", "1", 1);
  OK(bg_beam_opts(dev, C, sink, 2, &ignored));
  unsetenv("IGNORE_BEAM_CACHE");
  bg_beam_get_stats(&s3);
  ck_assert_uint_eq(s3.searches, s2.searches + 1);
  ck_assert_uint_eq(s3.cache_hits, s2.cache_hits);
  /* a damaged entry is searched again; other widths are other entries */
  char dir[4096];
  OK(bg_kcache_dir(dir, sizeof dir));
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "for f in '%s'/*.beam; do printf 'garbage' > \"$f\"; done", dir);
  ck_assert_int_eq(system(cmd), 0);
  OK(bg_beam_opts(dev, C, sink, 2, &repaired));
  bg_beam_get_stats(&s4);
  ck_assert_uint_eq(s4.searches, s3.searches + 1);
  ck_assert_uint_eq(s4.cache_hits, s3.cache_hits);
}
END_TEST

START_TEST(beam_env) {
  unsetenv("BEAM");
  ck_assert_int_eq(bg_beam_width(), 0);
  setenv("BEAM", "3", 1);
  ck_assert_int_eq(bg_beam_width(), 3);
  setenv("BEAM", "x2", 1);
  ck_assert_int_eq(bg_beam_width(), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "BEAM=x2"));
  unsetenv("BEAM");
  bg_kopts o;
  ck_assert_int_eq(bg_beam_opts(dev, C, matmul(), 0, &o), -BG_EINVAL);
}
END_TEST

int main(void) {
  if (!mkdtemp(cache_dir)) {
    perror("test_beam: mkdtemp");
    return EXIT_FAILURE;
  }
  setenv("BG_CACHE_DIR", cache_dir, 1);
  Suite *s = suite_create("beam");
  TCase *t = tcase_create("beam");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 300);
  tcase_add_test(t, candidates_match_no_opt_matmul);
  tcase_add_test(t, candidates_match_no_opt_elementwise);
  tcase_add_test(t, candidates_match_no_opt_symbolic);
  tcase_add_test(t, actions_valid_factors);
  tcase_add_test(t, gpu_actions_and_cache_text);
  tcase_add_test(t, search_then_cache_hit);
  tcase_add_test(t, beam_env);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  if (system(cmd) != 0) fprintf(stderr, "test_beam: could not remove %s\n", cache_dir);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
