/* tests/unit/tensor/test_mjit.c: the multi-device JIT (baregpu/tensor.h bg_mjit) on meshes of 2 and 3 devices
 * (SHARD_DEVS): a function of map2 + matmul + sums that end in all-reduces, called five times on new inputs. Calls 3..5
 * replay without running the function, and every replay's outputs equal the function called directly (no JIT) on
 * the same inputs and the same ops on one device; the stats count the function calls, the replays, the launches
 * captured per device and the transfers (two all-reduces of 2 * (n-1) * n chunk transfers each). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/tensor.h"
#include "shard_fixture.h"
#include "tensor/shard.h" /* t_mjit_set_per_launch */
#include "tensor/tensor_internal.h" /* the contexts' devices: whether they reach each other */

enum { R = 6, K = 6, N = 6 };

/* in[0] x (R, K) split along rows, in[1] bias (K) replicated, in[2] w (K, N) replicated, in[3] y (R, K) split along
 * K, in[4] v (K, N) split along rows.
 * out[0] = sum over rows of relu(x + bias) @ w   (a sum over the sharded axis: all-reduce)
 * out[1] = y @ v                                 (k-split matmul: all-reduce)
 * out[2] = (x * 2) @ w                           (per shard, split along rows) */
static int model(void *user, bg_sharded *const *in, unsigned nin, bg_sharded **out, unsigned nout) {
  (void)nin, (void)nout;
  if (user) (*(int *)user)++;
  bg_sharded *h = bg_sh_map(bg_tn_relu, bg_sh_map2(bg_tn_add, in[0], in[1]));
  out[0] = bg_sh_sum(bg_sh_matmul(h, in[2]), 1u << 0, false);
  out[1] = bg_sh_matmul(in[3], in[4]);
  out[2] = bg_sh_matmul(bg_sh_map(bg_tn_relu, in[0]), in[2]);
  return 0;
}

/* The same on one device. */
static void model_single(bg_tensor *const *in, bg_tensor **out) {
  out[0] = bg_tn_sum(bg_tn_matmul(bg_tn_relu(bg_tn_add(in[0], in[1])), in[2]), 1u << 0, false);
  out[1] = bg_tn_matmul(in[3], in[4]);
  out[2] = bg_tn_matmul(bg_tn_relu(in[0]), in[2]);
}

static void inputs(bg_mesh *m, unsigned seed, bg_tensor **t, bg_sharded **s) {
  static const int64_t sx[2] = {R, K}, sb[1] = {K}, sw[2] = {K, N};
  static const int64_t *shapes[5] = {sx, sb, sw, sx, sw};
  static const unsigned nd[5] = {2, 1, 2, 2, 2};
  static const int axes[5] = {0, BG_SHARD_REPLICATED, BG_SHARD_REPLICATED, 1, 0};
  for (int k = 0; k < 5; k++) {
    float v[R * K];
    fill(v, R * K, seed * 10 + (unsigned)k);
    t[k] = bg_tn_from(bg_mesh_ctx(m, 0), BG_FLOAT32, nd[k], shapes[k], v);
    s[k] = bg_tn_shard(m, t[k], axes[k]);
  }
}

static void read_all(bg_sharded *s, float *v, size_t n, unsigned ndev) {
  /* every device's part: a replicated output must be whole everywhere */
  if (bg_sh_axis(s) == BG_SHARD_REPLICATED) {
    float first[R * N];
    for (unsigned i = 0; i < ndev; i++) {
      ck_assert_msg(bg_tn_read(bg_sh_part(s, i), i ? v : first, n * sizeof *v) == 0, "read: %s", bg_last_error());
      if (i) expect_close(v, first, n, "replicas agree");
    }
    memcpy(v, first, n * sizeof *v);
    return;
  }
  ck_assert_msg(bg_sh_read(s, v, n * sizeof *v) == 0, "sh_read: %s", bg_last_error());
}

static void check_mjit(unsigned n, bool per_launch) {
  bg_mesh *m = mesh_of(n);
  if (!m) return;
  int fn_runs = 0;
  bg_mjit *j;
  OK(bg_mjit_new(m, model, &fn_runs, 3, &j));
  t_mjit_set_per_launch(j, per_launch);
  static const size_t sizes[3] = {N, R * N, R * N};
  for (unsigned call = 0; call < 5; call++) {
    bg_tensor *t[5];
    bg_sharded *in[5], *out[3], *direct[3];
    inputs(m, call, t, in);
    OK(bg_mjit_call(j, in, 5, out));
    ck_assert_int_eq(fn_runs, call < 2 ? (int)call + 1 : 2);
    float got[3][R * N], want[3][R * N], single[3][R * N];
    for (int o = 0; o < 3; o++) read_all(out[o], got[o], sizes[o], n); /* before anything else runs */
    int rc = model(NULL, in, 5, direct, 3);
    ck_assert_int_eq(rc, 0);
    bg_tensor *ref[3];
    model_single(t, ref);
    for (int o = 0; o < 3; o++) {
      read_all(direct[o], want[o], sizes[o], n);
      OK(bg_tn_read(ref[o], single[o], sizes[o] * sizeof(float)));
      char what[80];
      snprintf(what, sizeof what, "call %u output %d vs direct", call + 1, o);
      expect_close(got[o], want[o], sizes[o], what);
      snprintf(what, sizeof what, "call %u output %d vs one device", call + 1, o);
      expect_close(got[o], single[o], sizes[o], what);
    }
    ck_assert_msg(!bg_mesh_error(m), "%s", bg_mesh_error(m));
  }
  bg_mjit_stats st;
  bg_mjit_get_stats(j, &st);
  bool peers = true; /* every device reaches every other's memory and has a copy queue: the queue programs */
  for (unsigned a = 0; a < n; a++)
    for (unsigned b = 0; b < n; b++)
      peers &= bg_dev_can_p2p(bg_mesh_ctx(m, a)->dev, bg_mesh_ctx(m, b)->dev, NULL, 0) &&
               bg_dev_has_copy_queue(bg_mesh_ctx(m, a)->dev);
  ck_assert_uint_eq(st.calls, 5);
  ck_assert_uint_eq(st.fn_calls, 2);
  ck_assert_uint_eq(st.replays, 3);
  ck_assert_uint_eq(st.ndevices, n);
  ck_assert_uint_eq(st.ntransfers, n > 1 ? 2 * 2 * (n - 1) * n : 0);
  for (unsigned i = 0; i < n; i++) {
    ck_assert_uint_ge(st.nkernels[i], 3); /* at least the three outputs' kernels on every device */
    /* launch by launch: a program run per launch; else one compute program and, with transfers, one copy program */
    if (per_launch) ck_assert_uint_eq(st.nprograms[i], st.nkernels[i]);
    else if (peers) ck_assert_uint_eq(st.nprograms[i], n > 1 ? 2u : 1u);
    else ck_assert_uint_eq(st.nprograms[i], st.nkernels[i]);
  }
  /* an input of another shape is an error naming it */
  bg_tensor *t[5];
  bg_sharded *in[5], *out[3];
  inputs(m, 9, t, in);
  static const int64_t other[2] = {R, R};
  float z[R * R] = {0};
  in[0] = bg_tn_shard(m, bg_tn_from(bg_mesh_ctx(m, 0), BG_FLOAT32, 2, other, z), 1);
  ck_assert_int_eq(bg_mjit_call(j, in, 5, out), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "input 0"), "%s", bg_last_error());
  bg_mjit_free(j);
  bg_mesh_close(m);
}

START_TEST(mjit_2) { check_mjit(2, false); }
END_TEST
START_TEST(mjit_3) { check_mjit(3, false); }
END_TEST
START_TEST(mjit_2_per_launch) { check_mjit(2, true); }
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("mjit");
  TCase *t = tcase_create("mjit");
  tcase_set_timeout(t, 600);
  tcase_add_test(t, mjit_2);
  tcase_add_test(t, mjit_3);
  tcase_add_test(t, mjit_2_per_launch);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
