/* tests/unit/tensor/test_shard.c: tensors over several devices (baregpu/tensor.h "several devices"): bg_tn_to both
 * ways, meshes, splitting (even, uneven, negative axis, replicated), per-shard elementwise ops, the three matmul
 * layouts, sums over the sharded and other axes, the ring all-reduce for 1..4 devices and sizes 1, 7, 1000, and the
 * errors (axes that differ, another mesh, an empty chunk). Every sharded result is compared element by element with
 * the same op on one device (context 0 of the mesh). Devices: SHARD_DEVS (shard_fixture.h). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/hcq.h"
#include "baregpu/tensor.h"
#include "shard_fixture.h"
#include "tensor/tensor_internal.h" /* a context's bg_dev, to stage a write of another device that has not finished */

static bg_tensor *from(bg_tctx *c, unsigned ndim, const int64_t *shape, unsigned seed) {
  int64_t n = 1;
  for (unsigned i = 0; i < ndim; i++) n *= shape[i];
  float *v = malloc((size_t)n * sizeof *v);
  ck_assert_ptr_nonnull(v);
  fill(v, (size_t)n, seed);
  bg_tensor *t = bg_tn_from(c, BG_FLOAT32, ndim, shape, v);
  free(v);
  return t;
}

static bg_tensor *add1(bg_tensor *a) { return bg_tn_addc(bg_tn_relu(a), 1.0); }

/* bg_tn_to into another device and back: same values, each step one transfer of the tensor's bytes, and a kernel of
 * the destination reading the transferred buffer. */
START_TEST(to_both_directions) {
  bg_mesh *m = mesh_of(2);
  bg_tctx *c0 = bg_mesh_ctx(m, 0), *c1 = bg_mesh_ctx(m, 1);
  ck_assert_ptr_ne(c0, c1);
  static const int64_t sh[2] = {3, 5};
  float src[15], got[15], want[15];
  fill(src, 15, 4);
  bg_tensor *a = bg_tn_from(c0, BG_FLOAT32, 2, sh, src);
  bg_tensor *b = bg_tn_to(bg_tn_mulc(a, 2.0), c1); /* a lazy tensor: realized on device 0 first */
  ck_assert_ptr_eq(bg_tn_ctx(b), c1);
  bg_transfer_info ti;
  bg_transfer_last(&ti);
  ck_assert_uint_eq(ti.bytes, sizeof src);
  bg_tensor *r = bg_tn_to(add1(b), c0); /* computed on device 1, back to device 0 */
  ck_assert_ptr_eq(bg_tn_ctx(r), c0);
  OK(bg_tn_read(r, got, sizeof got));
  for (int i = 0; i < 15; i++) want[i] = (src[i] * 2 > 0 ? src[i] * 2 : 0) + 1;
  expect_close(got, want, 15, "to and back");
  bg_tstats st;
  bg_tctx_stats(c1, &st);
  ck_assert_uint_ge(st.kernels_run, 1); /* add1 ran on device 1 */
  ck_assert_ptr_eq(bg_tn_to(r, c0), r); /* its own context: itself */
  bg_mesh_close(m);
}
END_TEST

/* A kernel reading a buffer whose last recorded write is another device's unfinished work waits for exactly that
 * write (bg_dev_wait_bufs in the launch path): device 0 holds a program stuck on a gate signal and is recorded as the
 * writer of device 1's input. With the host wait of hcq/peer.c the launch gives up after BG_WAIT_TIMEOUT_MS naming the
 * wait; with a GPU-side wait the kernel is submitted behind it and cannot have finished before the gate opens. Then
 * the gate opens and the result is right. */
START_TEST(launch_waits_for_foreign_write) {
  bg_mesh *m = mesh_of(2);
  bg_tctx *c0 = bg_mesh_ctx(m, 0), *c1 = bg_mesh_ctx(m, 1);
  static const int64_t sh[1] = {8};
  float v[8], got[8], want[8];
  fill(v, 8, 3);
  bg_tensor *x = bg_tn_from(c1, BG_FLOAT32, 1, sh, v);
  bg_buf *xb = c1->bufs[((const tbuf_arg *)(const void *)t_view_buffer(t_node(x))->arg.b->data)->uid].b;
  bg_signal *gate;
  bg_queue *q;
  OK(bg_signal_new(c0->dev, 0, &gate));
  OK(bg_queue_new(c0->dev, BG_QUEUE_COMPUTE, &q));
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_wait(q, bg_sig(gate), bg_const(1));
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  OK(bg_queue_submit(q, NULL, 0));
  bg_buf_mark_written(xb, c0->dev); /* device 0's stuck program "writes" x */
  char *old = getenv("BG_WAIT_TIMEOUT_MS") ? strdup(getenv("BG_WAIT_TIMEOUT_MS")) : NULL;
  setenv("BG_WAIT_TIMEOUT_MS", "300", 1);
  bg_tensor *y = bg_tn_relu(x);
  int rc = bg_tn_realize(&y, 1);
  if (old) setenv("BG_WAIT_TIMEOUT_MS", old, 1);
  else unsetenv("BG_WAIT_TIMEOUT_MS");
  free(old);
  if (rc < 0) {
    ck_assert_msg(strstr(bg_last_error(), "waiting"), "%s", bg_last_error());
  } else {
    uint64_t done = 0;
    OK(bg_signal_value(bg_dev_timeline(c1->dev), &done));
    ck_assert_uint_lt(done, bg_dev_timeline_value(c1->dev) - 1); /* the kernel waits behind device 0 */
  }
  OK(bg_signal_set(gate, 1));
  OK(bg_tn_read(bg_tn_relu(x), got, sizeof got));
  for (int i = 0; i < 8; i++) want[i] = v[i] > 0 ? v[i] : 0;
  expect_close(got, want, 8, "after the gate");
  OK(bg_tctx_sync(c0));
  bg_queue_free(q);
  bg_signal_free(gate);
  bg_mesh_close(m);
}
END_TEST

static void check_split(unsigned n, int axis, const int64_t *sh, const int64_t *want_chunks) {
  bg_mesh *m = mesh_of(n);
  if (!m) return;
  bg_tensor *t = from(bg_mesh_ctx(m, 0), 2, sh, 11);
  bg_sharded *s = bg_tn_shard(m, t, axis);
  ck_assert_msg(bg_mesh_error(m) == NULL, "%s", bg_mesh_error(m));
  int ax = axis < 0 ? axis + 2 : axis;
  ck_assert_int_eq(bg_sh_axis(s), ax);
  for (unsigned i = 0; i < n; i++) {
    bg_tensor *p = bg_sh_part(s, i);
    ck_assert_ptr_eq(bg_tn_ctx(p), bg_mesh_ctx(m, i));
    ck_assert_int_eq(bg_tn_shape(p)[ax], want_chunks[i]);
    ck_assert_int_eq(bg_tn_shape(p)[1 - ax], sh[1 - ax]);
    /* the part's values are the chunk's */
    int64_t start = 0, b[2][2] = {{0, sh[0]}, {0, sh[1]}};
    for (unsigned k = 0; k < i; k++) start += want_chunks[k];
    b[ax][0] = start, b[ax][1] = start + want_chunks[i];
    bg_tensor *want = bg_tn_shrink(t, b);
    size_t ne = (size_t)bg_tn_numel(p);
    float g[64], w[64];
    OK(bg_tn_read(p, g, sizeof g));
    OK(bg_tn_read(want, w, sizeof w));
    expect_close(g, w, ne, "part");
  }
  expect_same(s, t, "gather");
  bg_tensor *g1 = bg_sh_gather(s, bg_mesh_ctx(m, n - 1)); /* gathered on the last device */
  expect_same(bg_tn_shard(m, g1, BG_SHARD_REPLICATED), t, "gather on the last device, replicated again");
  bg_mesh_close(m);
}

/* ceil chunks: 5 rows over 2 devices are 3 + 2, over 3 devices 2 + 2 + 1; a negative axis; 6 columns over 3 */
START_TEST(split_even_and_uneven) {
  static const int64_t sh[2] = {5, 6};
  check_split(2, 0, sh, (const int64_t[]){3, 2});
  check_split(3, 0, sh, (const int64_t[]){2, 2, 1});
  check_split(3, -1, sh, (const int64_t[]){2, 2, 2});
  check_split(2, 1, sh, (const int64_t[]){3, 3});
  check_split(1, 0, sh, (const int64_t[]){5});
}
END_TEST

START_TEST(replicated_and_from) {
  bg_mesh *m = mesh_of(2);
  static const int64_t sh[2] = {4, 3};
  bg_tensor *t = from(bg_mesh_ctx(m, 1), 2, sh, 5); /* a tensor of device 1 */
  bg_sharded *r = bg_tn_shard(m, t, BG_SHARD_REPLICATED);
  ck_assert_int_eq(bg_sh_axis(r), BG_SHARD_REPLICATED);
  for (unsigned i = 0; i < 2; i++) {
    float g[12], w[12];
    OK(bg_tn_read(bg_sh_part(r, i), g, sizeof g));
    OK(bg_tn_read(t, w, sizeof w));
    expect_close(g, w, 12, "replica");
  }
  /* uneven parts wrapped as they are: 1 + 3 rows */
  static const int64_t s1[2] = {1, 3}, s3[2] = {3, 3};
  bg_tensor *parts[2] = {from(bg_mesh_ctx(m, 0), 2, s1, 1), from(bg_mesh_ctx(m, 1), 2, s3, 2)};
  bg_sharded *u = bg_sh_from(m, parts, -2);
  ck_assert_msg(!bg_mesh_error(m), "%s", bg_mesh_error(m));
  ck_assert_int_eq(bg_sh_axis(u), 0);
  ck_assert_int_eq(bg_sh_shape(u)[0], 4);
  bg_tensor *whole[2] = {bg_tn_to(parts[0], bg_mesh_ctx(m, 0)), bg_tn_to(parts[1], bg_mesh_ctx(m, 0))};
  bg_tensor *cat = bg_tn_cat(whole, 2, 0);
  expect_same(u, cat, "sh_from uneven");
  /* ops on uneven parts against a replicated operand slice it to those chunks */
  bg_tensor *b = from(bg_mesh_ctx(m, 0), 2, sh, 9);
  expect_same(bg_sh_map2(bg_tn_sub, u, bg_tn_shard(m, b, BG_SHARD_REPLICATED)), bg_tn_sub(cat, b), "uneven - replicated");
  bg_mesh_close(m);
}
END_TEST

static void check_elementwise(unsigned n) {
  bg_mesh *m = mesh_of(n);
  if (!m) return;
  bg_tctx *c = bg_mesh_ctx(m, 0);
  static const int64_t sh[2] = {7, 4}, row[1] = {4}, col[2] = {7, 1};
  bg_tensor *a = from(c, 2, sh, 1), *b = from(c, 2, sh, 2), *r = from(c, 1, row, 3), *k = from(c, 2, col, 4);
  for (int axis = 0; axis < 2; axis++) {
    if (axis == 1 && n > 2) continue; /* 4 columns over 3 devices leave a chunk empty */
    bg_sharded *sa = bg_tn_shard(m, a, axis), *sb = bg_tn_shard(m, b, axis);
    expect_same(bg_sh_map(bg_tn_exp, sa), bg_tn_exp(a), "exp");
    expect_same(bg_sh_map(add1, sa), add1(a), "relu + 1");
    expect_same(bg_sh_map2(bg_tn_add, sa, sb), bg_tn_add(a, b), "add");
    expect_same(bg_sh_map2(bg_tn_mul, sb, sa), bg_tn_mul(b, a), "mul");
    /* one side replicated: sliced to the other's chunks (or broadcast where its axis is 1 or missing) */
    bg_sharded *rb = bg_tn_shard(m, b, BG_SHARD_REPLICATED);
    expect_same(bg_sh_map2(bg_tn_sub, sa, rb), bg_tn_sub(a, b), "sharded - replicated");
    expect_same(bg_sh_map2(bg_tn_sub, rb, sa), bg_tn_sub(b, a), "replicated - sharded");
    expect_same(bg_sh_map2(bg_tn_mul, sa, bg_tn_shard(m, r, BG_SHARD_REPLICATED)), bg_tn_mul(a, r), "* row");
    expect_same(bg_sh_map2(bg_tn_add, bg_tn_shard(m, k, BG_SHARD_REPLICATED), sa), bg_tn_add(k, a), "column +");
  }
  ck_assert_msg(!bg_mesh_error(m), "%s", bg_mesh_error(m));
  bg_mesh_close(m);
}

START_TEST(elementwise_2) { check_elementwise(2); }
END_TEST
START_TEST(elementwise_3) { check_elementwise(3); }
END_TEST

static void check_matmul(unsigned n) {
  bg_mesh *m = mesh_of(n);
  if (!m) return;
  bg_tctx *c = bg_mesh_ctx(m, 0);
  static const int64_t sa[2] = {7, 9}, sb[2] = {9, 5}, s3[3] = {3, 4, 9};
  bg_tensor *a = from(c, 2, sa, 1), *b = from(c, 2, sb, 2), *a3 = from(c, 3, s3, 3);
  bg_sharded *rb = bg_tn_shard(m, b, BG_SHARD_REPLICATED), *ra = bg_tn_shard(m, a, BG_SHARD_REPLICATED);
  /* a split along rows, b replicated */
  bg_sharded *r1 = bg_sh_matmul(bg_tn_shard(m, a, 0), rb);
  ck_assert_int_eq(bg_sh_axis(r1), 0);
  expect_same(r1, bg_tn_matmul(a, b), "rows @ replicated");
  bg_sharded *r1b = bg_sh_matmul(bg_tn_shard(m, a3, 0), rb); /* a batch axis */
  expect_same(r1b, bg_tn_matmul(a3, b), "batch @ replicated");
  /* a split along k, b along its rows: partial products all-reduced */
  bg_sharded *r2 = bg_sh_matmul(bg_tn_shard(m, a, 1), bg_tn_shard(m, b, 0));
  ck_assert_int_eq(bg_sh_axis(r2), BG_SHARD_REPLICATED);
  expect_same(r2, bg_tn_matmul(a, b), "k-split");
  float want[35], got[35];
  OK(bg_tn_read(bg_tn_matmul(a, b), want, sizeof want));
  for (unsigned i = 0; i < n; i++) { /* every device holds the whole sum */
    OK(bg_tn_read(bg_sh_part(r2, i), got, sizeof got));
    expect_close(got, want, 35, "k-split replica");
  }
  /* a replicated, b split along n */
  if (n <= 3) {
    bg_sharded *r3 = bg_sh_matmul(ra, bg_tn_shard(m, b, 1));
    ck_assert_int_eq(bg_sh_axis(r3), 1);
    expect_same(r3, bg_tn_matmul(a, b), "replicated @ columns");
  }
  ck_assert_msg(!bg_mesh_error(m), "%s", bg_mesh_error(m));
  /* another layout: a split along rows with b split along its rows */
  bg_sharded *bad = bg_sh_matmul(bg_tn_shard(m, a, 0), bg_tn_shard(m, b, 0));
  ck_assert_int_eq(bg_sh_ndim(bad), 0);
  ck_assert_msg(bg_mesh_error(m) && strstr(bg_mesh_error(m), "sh_matmul") && strstr(bg_mesh_error(m), "unsupported layout"),
                "%s", bg_mesh_error(m));
  bg_mesh_close(m);
}

START_TEST(matmul_2) { check_matmul(2); }
END_TEST
START_TEST(matmul_3) { check_matmul(3); }
END_TEST

static void check_sum(unsigned n) {
  bg_mesh *m = mesh_of(n);
  if (!m) return;
  static const int64_t sh[3] = {5, 5, 3};
  bg_tensor *a = from(bg_mesh_ctx(m, 0), 3, sh, 6);
  bg_sharded *s = bg_tn_shard(m, a, 0);
  for (int keep = 0; keep < 2; keep++) {
    bg_sharded *over = bg_sh_sum(s, 1u << 0, keep); /* over the sharded axis: all-reduced */
    ck_assert_int_eq(bg_sh_axis(over), BG_SHARD_REPLICATED);
    expect_same(over, bg_tn_sum(a, 1u << 0, keep), "sum over the sharded axis");
    bg_sharded *other = bg_sh_sum(s, 1u << 2, keep); /* per shard */
    ck_assert_int_eq(bg_sh_axis(other), 0);
    expect_same(other, bg_tn_sum(a, 1u << 2, keep), "sum over another axis");
    expect_same(bg_sh_sum(s, BG_ALL_AXES, keep), bg_tn_sum(a, BG_ALL_AXES, keep), "sum of everything");
  }
  bg_sharded *s1 = bg_tn_shard(m, a, 1); /* split along the middle axis, axis 0 summed away: the split moves to 0 */
  bg_sharded *o1 = bg_sh_sum(s1, 1u << 0, false);
  ck_assert_int_eq(bg_sh_axis(o1), 0);
  expect_same(o1, bg_tn_sum(a, 1u << 0, false), "sum before the split axis");
  ck_assert_msg(!bg_mesh_error(m), "%s", bg_mesh_error(m));
  bg_mesh_close(m);
}

START_TEST(sum_2) { check_sum(2); }
END_TEST
START_TEST(sum_3) { check_sum(3); }
END_TEST

/* The ring on 1..4 devices and sizes 1, 7, 1000: every device ends with the sum of all devices' tensors. */
START_TEST(allreduce_sizes) {
  static const int64_t sizes[3] = {1, 7, 1000};
  for (unsigned n = 1; n <= 4; n++) {
    bg_mesh *m = mesh_of(n);
    if (!m) continue;
    for (int z = 0; z < 3; z++) {
      int64_t sz = sizes[z];
      float *want = calloc((size_t)sz, sizeof *want), *v = malloc((size_t)sz * sizeof *v), *got = malloc((size_t)sz * sizeof *got);
      bg_tensor *parts[8];
      for (unsigned i = 0; i < n; i++) {
        fill(v, (size_t)sz, 100 * i + (unsigned)z);
        for (int64_t e = 0; e < sz; e++) want[e] += v[e];
        parts[i] = bg_tn_from(bg_mesh_ctx(m, i), BG_FLOAT32, 1, &sz, v);
      }
      bg_sharded *r = bg_sh_allreduce(bg_sh_from(m, parts, BG_SHARD_REPLICATED));
      ck_assert_msg(!bg_mesh_error(m), "%u devices, %lld: %s", n, (long long)sz, bg_mesh_error(m));
      for (unsigned i = 0; i < n; i++) {
        char what[64];
        snprintf(what, sizeof what, "all-reduce of %lld on %u devices, device %u", (long long)sz, n, i);
        ck_assert_msg(bg_tn_read(bg_sh_part(r, i), got, (size_t)sz * sizeof *got) == 0, "%s: %s", what, bg_last_error());
        expect_close(got, want, (size_t)sz, what);
      }
      free(want);
      free(v);
      free(got);
    }
    bg_mesh_close(m);
  }
}
END_TEST

START_TEST(errors) {
  bg_mesh *m = mesh_of(2), *m2 = mesh_of(2);
  bg_tctx *c = bg_mesh_ctx(m, 0);
  static const int64_t sh[2] = {4, 6};
  bg_tensor *a = from(c, 2, sh, 1);
  bg_sharded *s0 = bg_tn_shard(m, a, 0), *s1 = bg_tn_shard(m, a, 1);
  /* shards along different axes */
  bg_sharded *d = bg_sh_map2(bg_tn_add, s0, s1);
  ck_assert_int_eq(bg_sh_ndim(d), 0);
  ck_assert_ptr_null(bg_sh_part(d, 0));
  const char *e = bg_mesh_error(m);
  ck_assert_msg(e && strstr(e, "sh_map2") && strstr(e, "axis 0") && strstr(e, "axis 1") && strstr(e, "(4,6)"), "%s", e);
  ck_assert_str_eq(bg_last_error(), e);
  /* the dead tensor propagates; realize and read fail with the message */
  bg_sharded *d2 = bg_sh_map(bg_tn_exp, d);
  ck_assert_int_eq(bg_sh_ndim(d2), 0);
  float buf[24];
  ck_assert_int_eq(bg_sh_read(d2, buf, sizeof buf), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "different axes"));
  /* an operand of another mesh: named, latched on the first operand's mesh */
  bg_sharded *o = bg_tn_shard(m2, bg_tn_to(a, bg_mesh_ctx(m2, 0)), 0);
  ck_assert_msg(!bg_mesh_error(m2), "%s", bg_mesh_error(m2));
  bg_mesh *m3 = mesh_of(2);
  bg_sharded *s3 = bg_tn_shard(m3, bg_tn_to(a, bg_mesh_ctx(m3, 0)), 0);
  bg_sharded *x = bg_sh_map2(bg_tn_add, s3, o);
  ck_assert_int_eq(bg_sh_ndim(x), 0);
  ck_assert_msg(bg_mesh_error(m3) && strstr(bg_mesh_error(m3), "another mesh"), "%s", bg_mesh_error(m3));
  /* a chunk would be empty: 2 rows over 3 devices; an axis out of range */
  bg_mesh *m4 = mesh_of(3);
  if (m4) {
    static const int64_t s2[2] = {2, 3};
    bg_sharded *z = bg_tn_shard(m4, from(bg_mesh_ctx(m4, 0), 2, s2, 3), 0);
    ck_assert_int_eq(bg_sh_ndim(z), 0);
    ck_assert_msg(strstr(bg_mesh_error(m4), "shard") && strstr(bg_mesh_error(m4), "(2,3)") && strstr(bg_mesh_error(m4), "empty"), "%s",
                  bg_mesh_error(m4));
    bg_mesh_close(m4);
  }
  bg_sharded *ax = bg_tn_shard(m2, bg_tn_to(a, bg_mesh_ctx(m2, 0)), 2);
  ck_assert_int_eq(bg_sh_ndim(ax), 0);
  ck_assert_msg(strstr(bg_mesh_error(m2), "axis 2 out of range for shape (4,6)"), "%s", bg_mesh_error(m2));
  /* a part of the wrong context */
  bg_tensor *wrong[2] = {a, a};
  ck_assert_int_eq(bg_sh_ndim(bg_sh_from(m3, wrong, 0)), 0);
  ck_assert_ptr_null(bg_tn_shard(NULL, a, 0));
  ck_assert_int_eq(bg_mesh_open(NULL, 0, &m4), -BG_EINVAL);
  bg_mesh_close(m3);
  bg_mesh_close(m2);
  bg_mesh_close(m);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("shard");
  TCase *t = tcase_create("shard");
  tcase_set_timeout(t, 600);
  tcase_add_test(t, to_both_directions);
  tcase_add_test(t, launch_waits_for_foreign_write);
  tcase_add_test(t, split_even_and_uneven);
  tcase_add_test(t, replicated_and_from);
  tcase_add_test(t, elementwise_2);
  tcase_add_test(t, elementwise_3);
  tcase_add_test(t, matmul_2);
  tcase_add_test(t, matmul_3);
  tcase_add_test(t, sum_2);
  tcase_add_test(t, sum_3);
  tcase_add_test(t, allreduce_sizes);
  tcase_add_test(t, errors);
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
