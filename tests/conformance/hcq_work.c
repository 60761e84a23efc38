/* tests/conformance/hcq_work.c: kernels, copies, timestamps, cross-queue waits and memory barriers
 * (test_hcq.py: test_exec*, test_copy*, test_update_copy*, test_small_copies*, test_memory_barrier,
 * test_speed_exec_time). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

#define LONG_COPY (64u << 20)

/* exec add1(out, in, n) over a 1-D grid. */
static void exec_add1(cf_ctx *c, bg_queue *q, bg_val out, bg_val in, uint32_t n, bg_val g0, bg_val l0) {
  bg_val args[3] = {out, in, bg_const(n)};
  bg_val g[3] = {g0, bg_const(1), bg_const(1)}, l[3] = {l0, bg_const(1), bg_const(1)};
  bg_queue_exec(q, c->add1, args, 3, g, l);
}

static int expect_f32(cf_ctx *c, int line, const char *what, const bg_buf *b, float e0, float e1) {
  float v[2];
  int r = cf_read_f32(b, v, 2);
  if (r < 0) return cf_fail(c, line, "reading %s: %s", what, bg_last_error());
  if (v[0] != e0 || v[1] != e1)
    return cf_fail(c, line, "%s = [%g, %g], expected [%g, %g]", what, (double)v[0], (double)v[1], (double)e0, (double)e1);
  return CF_PASS;
}
#define EXPECT_F32(what, b, e0, e1)                                       \
  do {                                                                    \
    if (expect_f32(c, __LINE__, what, b, e0, e1) != CF_PASS) return CF_FAIL; \
  } while (0)

static uint64_t xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* ---------------- kernels ---------------- */

static int test_exec_one_kernel(cf_ctx *c) {
  bg_queue *q;
  CF_OK(cf_queue(c, BG_QUEUE_COMPUTE, &q));
  cf_tl_wait(q);
  exec_add1(c, q, bg_addr(c->b, 0), bg_addr(c->a, 0), 2, bg_const(2), bg_const(1));
  cf_tl_signal(q);
  CF_OK(cf_submit_wait(c, q, NULL, 0));
  EXPECT_F32("b", c->b, 1.0f, 2.0f);
  EXPECT_F32("a", c->a, 0.0f, 1.0f);
  return CF_PASS;
}

/* One recorded queue resubmitted 100 times: b = a + 1, a = b + 1; the template is lowered once and
 * later submits only patch what changed (the timeline value and the kernel-argument block). */
static int test_exec_2_kernels_100_times(cf_ctx *c) {
  bg_queue *q;
  CF_OK(cf_queue(c, BG_QUEUE_COMPUTE, &q));
  cf_tl_wait(q);
  exec_add1(c, q, bg_addr(c->b, 0), bg_addr(c->a, 0), 2, bg_const(1), bg_const(2));
  exec_add1(c, q, bg_addr(c->a, 0), bg_addr(c->b, 0), 2, bg_const(1), bg_const(2));
  cf_tl_signal(q);
  bg_queue_stats first = {0}, st;
  uint64_t last = 0;
  for (int i = 0; i < 100; i++) {
    last = bg_dev_timeline_value(c->d);
    CF_OK(bg_queue_submit(q, NULL, 0));
    bg_queue_get_stats(q, &st);
    if (i == 0) first = st;
    CF_EXPECT(st.template_bytes == first.template_bytes && st.npatches == first.npatches,
              "submit %d changed the template (%zu -> %zu bytes, %zu -> %zu patches)", i, first.template_bytes,
              st.template_bytes, first.npatches, st.npatches);
    if (i > 0)
      CF_EXPECT(st.patches_applied_last < st.npatches,
                "submit %d re-applied all %zu patches (only those whose values changed should be)", i, st.npatches);
  }
  CF_EXPECT(bg_dev_timeline_value(c->d) == last + 1, "100 submits moved the timeline to %" PRIu64 ", expected %" PRIu64,
            bg_dev_timeline_value(c->d), last + 1);
  CF_OK(bg_signal_wait(bg_dev_timeline(c->d), last, CF_TIMEOUT_MS));
  bg_queue_get_stats(q, &st);
  CF_EXPECT(st.ncmds == 4 && st.submits == 100, "stats: %zu commands, %zu submits (expected 4 and 100: lowered once)",
            st.ncmds, st.submits);
  CF_EXPECT(st.npatches > 0, "the program has symbolic timeline operands but no patch records");
  EXPECT_F32("a", c->a, 200.0f, 201.0f);
  EXPECT_F32("b", c->b, 199.0f, 200.0f);
  return CF_PASS;
}

/* Kernel arguments and dimensions through variables: buffers swapped between submits, global and
 * local size changed (global = local = 1 covers only b[0]). */
static int test_exec_update(cf_ctx *c) {
  bg_queue *q;
  CF_OK(cf_queue(c, BG_QUEUE_COMPUTE, &q));
  cf_tl_wait(q);
  exec_add1(c, q, bg_var(q, 0, "out", 0, UINT64_MAX), bg_var(q, 1, "in", 0, UINT64_MAX), 2,
            bg_var(q, 2, "gx", 1, 1024), bg_var(q, 3, "lx", 1, 1024));
  cf_tl_signal(q);
  uint64_t a = bg_buf_va(c->a), b = bg_buf_va(c->b);
  uint64_t v1[4] = {b, a, 1, 1}, v2[4] = {a, b, 2, 1}, v3[4] = {b, a, 1, 2};
  CF_OK(cf_submit_wait(c, q, v1, 4));
  EXPECT_F32("b after b = a + 1 with global 1, local 1", c->b, 1.0f, 0.0f);
  CF_OK(cf_submit_wait(c, q, v2, 4));
  EXPECT_F32("a after a = b + 1 with global 2, local 1", c->a, 2.0f, 1.0f);
  CF_OK(cf_submit_wait(c, q, v3, 4));
  EXPECT_F32("b after b = a + 1 with global 1, local 2", c->b, 3.0f, 2.0f);
  bg_queue_stats st;
  bg_queue_get_stats(q, &st);
  CF_EXPECT(st.submits == 3, "stats: %zu submits since lowering, expected 3", st.submits);
  return CF_PASS;
}

/* Symbolic global and local sizes (test_exec_update_fuzz): count work-items for every x, y, z in 1..3. */
static int test_exec_update_vars(cf_ctx *c) {
  bg_buf *cnt;
  bg_queue *q;
  CF_OK(cf_buf(c, 7 * sizeof(int32_t), BG_BUF_CPU_ACCESS | BG_BUF_ZERO, &cnt));
  CF_OK(cf_queue(c, BG_QUEUE_COMPUTE, &q));
  bg_val arg = bg_addr(cnt, 0), g[3], l[3];
  static const char *const names[6] = {"gx", "gy", "gz", "lx", "ly", "lz"};
  for (unsigned k = 0; k < 3; k++) {
    g[k] = bg_var(q, k, names[k], 1, 64);
    l[k] = bg_var(q, 3 + k, names[3 + k], 1, 64);
  }
  cf_tl_wait(q);
  bg_queue_memory_barrier(q);
  bg_queue_exec(q, c->count, &arg, 1, g, l);
  cf_tl_signal(q);
  size_t n = 0;
  for (int variant = 0; variant < 3; variant++)
    for (uint32_t x = 1; x <= 3; x++)
      for (uint32_t y = 1; y <= 3; y++)
        for (uint32_t z = 1; z <= 3; z++) {
          uint32_t gs[3] = {x, y, z}, ls[3] = {1, 1, 1};
          if (variant == 1) {
            gs[0] = gs[1] = gs[2] = 1;
            ls[0] = x, ls[1] = y, ls[2] = z;
          } else if (variant == 2) {
            ls[0] = z, ls[1] = y, ls[2] = x;
          }
          uint64_t vars[6] = {gs[0], gs[1], gs[2], ls[0], ls[1], ls[2]};
          int32_t zero[7] = {0}, out[7];
          CF_OK(bg_buf_write(cnt, 0, zero, sizeof zero));
          CF_OK(cf_submit_wait(c, q, vars, 6));
          n++;
          CF_OK(bg_buf_read(cnt, 0, out, sizeof out));
          int32_t expect = (int32_t)(gs[0] * gs[1] * gs[2] * ls[0] * ls[1] * ls[2]);
          CF_EXPECT(out[0] == expect, "global (%u,%u,%u) local (%u,%u,%u): %d work-items ran, expected %d", gs[0],
                    gs[1], gs[2], ls[0], ls[1], ls[2], out[0], expect);
          for (int k = 0; k < 3; k++)
            CF_EXPECT(out[1 + k] == (int32_t)gs[k] && out[4 + k] == (int32_t)ls[k],
                      "global (%u,%u,%u) local (%u,%u,%u): the kernel saw global[%d] = %d, local[%d] = %d", gs[0], gs[1],
                      gs[2], ls[0], ls[1], ls[2], k, out[1 + k], k, out[4 + k]);
        }
  bg_queue_stats st;
  bg_queue_get_stats(q, &st);
  CF_EXPECT(st.submits == n, "stats: %zu submits since lowering, expected %zu (lowered once)", st.submits, n);
  return CF_PASS;
}

/* ---------------- copies ---------------- */

static int test_copy(cf_ctx *c) {
  bg_queue *q;
  CF_OK(cf_queue(c, BG_QUEUE_COPY, &q));
  cf_tl_wait(q);
  bg_queue_copy(q, bg_addr(c->b, 0), bg_addr(c->a, 0), 8);
  cf_tl_signal(q);
  CF_OK(cf_submit_wait(c, q, NULL, 0));
  EXPECT_F32("b", c->b, 0.0f, 1.0f);
  return CF_PASS;
}

/* Fill a host buffer of LONG_COPY bytes (pattern: 0 = pseudo-random, else that byte), copy it to a
 * device buffer through the copy queue (symbolic addresses when sym) and compare. */
static int long_copy(cf_ctx *c, bool sym, int fill) {
  bg_buf *src, *dst;
  bg_queue *q;
  CF_OK(cf_buf(c, LONG_COPY, BG_BUF_HOST | BG_BUF_CPU_ACCESS, &src));
  CF_OK(cf_buf(c, LONG_COPY, 0, &dst));
  uint8_t *pat = cf_malloc(c, LONG_COPY), *out = cf_malloc(c, LONG_COPY);
  CF_EXPECT(pat && out, "out of host memory");
  if (fill) {
    memset(pat, fill, LONG_COPY);
  } else {
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < LONG_COPY; i += 8) {
      uint64_t v = xorshift(&s);
      memcpy(pat + i, &v, 8);
    }
  }
  CF_OK(bg_buf_write(src, 0, pat, LONG_COPY));
  CF_OK(cf_queue(c, BG_QUEUE_COPY, &q));
  cf_tl_wait(q);
  if (sym) bg_queue_copy(q, bg_var(q, 0, "dst", 0, UINT64_MAX), bg_var(q, 1, "src", 0, UINT64_MAX), LONG_COPY);
  else bg_queue_copy(q, bg_addr(dst, 0), bg_addr(src, 0), LONG_COPY);
  cf_tl_signal(q);
  uint64_t vars[2] = {bg_buf_va(dst), bg_buf_va(src)};
  CF_OK(cf_submit_wait(c, q, vars, sym ? 2 : 0));
  memset(out, 0xee, LONG_COPY);
  CF_OK(bg_buf_read(dst, 0, out, LONG_COPY));
  if (memcmp(out, pat, LONG_COPY) != 0) {
    size_t i = 0;
    while (out[i] == pat[i]) i++;
    return cf_fail(c, __LINE__, "64 MiB copy differs first at byte 0x%zx: 0x%02x, expected 0x%02x", i, out[i], pat[i]);
  }
  if (fill == 1) {
    for (size_t i = 0; i < LONG_COPY; i += 8) {
      uint64_t v;
      memcpy(&v, out + i, 8);
      CF_EXPECT(v == 0x0101010101010101ull, "qword at 0x%zx is 0x%016" PRIx64, i, v);
    }
  }
  return CF_PASS;
}

static int test_copy_long(cf_ctx *c) { return long_copy(c, false, 0); }
static int test_update_copy_long(cf_ctx *c) { return long_copy(c, true, 1); }

static int test_update_copy(cf_ctx *c) {
  bg_queue *q;
  CF_OK(cf_queue(c, BG_QUEUE_COPY, &q));
  cf_tl_wait(q);
  bg_queue_copy(q, bg_var(q, 0, "dst", 0, UINT64_MAX), bg_var(q, 1, "src", 0, UINT64_MAX), 8);
  cf_tl_signal(q);
  uint64_t v1[2] = {bg_buf_va(c->b), bg_buf_va(c->a)}, v2[2] = {bg_buf_va(c->a), bg_buf_va(c->b)};
  CF_OK(cf_submit_wait(c, q, v1, 2));
  EXPECT_F32("b", c->b, 0.0f, 1.0f);
  static const float five_six[2] = {5.0f, 6.0f};
  CF_OK(cf_write_f32(c->b, five_six, 2));
  CF_OK(cf_submit_wait(c, q, v2, 2));
  EXPECT_F32("a", c->a, 5.0f, 6.0f);
  return CF_PASS;
}

/* 256 one-byte copies from a host buffer, to a symbolic destination address (base + variable). */
static int test_small_copies_from_host_buf(cf_ctx *c) {
  bg_buf *host, *dst;
  bg_queue *q;
  CF_OK(cf_buf(c, 256, BG_BUF_HOST | BG_BUF_CPU_ACCESS, &host));
  CF_OK(cf_buf(c, 256, BG_BUF_ZERO, &dst));
  CF_OK(cf_queue(c, BG_QUEUE_COPY, &q));
  cf_tl_wait(q);
  bg_queue_copy(q, bg_add(q, bg_addr(dst, 0), bg_var(q, 0, "off", 0, 255)), bg_addr(host, 0), 1);
  cf_tl_signal(q);
  uint8_t *hp = bg_buf_cpu(host);
  for (unsigned i = 0; i < 256; i++) {
    uint8_t v = (uint8_t)i, got = 0xee;
    if (hp) hp[0] = v;
    else CF_OK(bg_buf_write(host, 0, &v, 1));
    uint64_t off = i;
    CF_OK(cf_submit_wait(c, q, &off, 1));
    CF_OK(bg_buf_read(dst, i, &got, 1));
    CF_EXPECT(got == v, "copy %u: byte %u is %u", i, got, v);
  }
  uint8_t all[256];
  CF_OK(bg_buf_read(dst, 0, all, 256));
  for (unsigned i = 0; i < 256; i++) CF_EXPECT(all[i] == i, "byte %u is %u after all copies", i, all[i]);
  return CF_PASS;
}

/* host -> buf1 -> buf2 in one submit: copies on one queue run in order. */
static int test_small_copies_intercopy(cf_ctx *c) {
  bg_buf *host, *b1, *b2;
  bg_queue *q;
  CF_OK(cf_buf(c, 64, BG_BUF_HOST | BG_BUF_CPU_ACCESS, &host));
  CF_OK(cf_buf(c, 64, BG_BUF_ZERO, &b1));
  CF_OK(cf_buf(c, 64, BG_BUF_ZERO, &b2));
  CF_OK(cf_queue(c, BG_QUEUE_COPY, &q));
  cf_tl_wait(q);
  bg_queue_copy(q, bg_addr(b1, 0), bg_addr(host, 0), 1);
  bg_queue_copy(q, bg_addr(b2, 0), bg_addr(b1, 0), 1);
  cf_tl_signal(q);
  uint8_t *hp = bg_buf_cpu(host);
  for (unsigned i = 0; i < 256; i++) {
    uint8_t v = (uint8_t)i, got = 0xee;
    if (hp) hp[0] = v;
    else CF_OK(bg_buf_write(host, 0, &v, 1));
    CF_OK(cf_submit_wait(c, q, NULL, 0));
    CF_OK(bg_buf_read(b2, 0, &got, 1));
    CF_EXPECT(got == v, "copy %u: buf2 holds %u", i, got);
  }
  return CF_PASS;
}

/* ---------------- timestamps, cross-queue, barriers ---------------- */

/* A byte pattern that depends on the offset and the salt: never zero, never a constant run. */
static uint8_t pattern_byte(uint64_t off, unsigned salt) { return (uint8_t)((off * 131u + salt) | 1u); }

static int put_pattern(bg_buf *b, uint64_t off, size_t n, unsigned salt, uint8_t *tmp) {
  for (size_t i = 0; i < n; i++) tmp[i] = pattern_byte(off + i, salt);
  return bg_buf_write(b, off, tmp, n);
}

/* The timed copy's three checked windows (start, middle, end of TS_COPY bytes). */
#define TS_COPY (16u << 20)
#define TS_WIN 65536u
static const uint64_t ts_win[3] = {0, TS_COPY / 2, TS_COPY - TS_WIN};

/* Two timestamps around work: the second is not before the first, and the device-measured time is
 * within the host-measured time of the whole submit. The timed work must have happened: on the copy
 * queue the source windows hold a pattern and the destination a sentinel, so a copy that did nothing
 * (or only part of the range) leaves the sentinel behind. */
static int test_timestamp(cf_ctx *c) {
  bg_signal *st, *en;
  bg_queue *q;
  bg_buf *src = NULL, *dst = NULL;
  uint8_t *want = cf_malloc(c, TS_WIN), *got = cf_malloc(c, TS_WIN);
  CF_EXPECT(want && got, "out of host memory");
  CF_OK(cf_signal(c, 0, &st));
  CF_OK(cf_signal(c, 0, &en));
  CF_OK(cf_queue(c, c->qk, &q));
  if (c->qk == BG_QUEUE_COPY) {
    CF_OK(cf_buf(c, TS_COPY, BG_BUF_ZERO, &src));
    CF_OK(cf_buf(c, TS_COPY, 0, &dst));
    memset(got, 0xee, TS_WIN);
    for (int k = 0; k < 3; k++) {
      CF_OK(put_pattern(src, ts_win[k], TS_WIN, (unsigned)k, want));
      CF_OK(bg_buf_write(dst, ts_win[k], got, TS_WIN)); /* the sentinel */
    }
  }
  cf_tl_wait(q);
  bg_queue_timestamp(q, bg_sig(st));
  if (c->qk == BG_QUEUE_COPY) bg_queue_copy(q, bg_addr(dst, 0), bg_addr(src, 0), TS_COPY);
  else if (c->kernels) exec_add1(c, q, bg_addr(c->b, 0), bg_addr(c->a, 0), 2, bg_const(2), bg_const(1));
  bg_queue_timestamp(q, bg_sig(en));
  cf_tl_signal(q);
  uint64_t t0 = cf_now_us();
  CF_OK(cf_submit_wait(c, q, NULL, 0));
  uint64_t host_us = cf_now_us() - t0;
  uint64_t s, e;
  CF_OK(bg_signal_timestamp_raw(st, &s));
  CF_OK(bg_signal_timestamp_raw(en, &e));
  CF_EXPECT(s != 0 && e != 0, "timestamps were not written: %" PRIu64 ", %" PRIu64, s, e);
  CF_EXPECT(e >= s, "second timestamp %" PRIu64 " is before the first %" PRIu64, e, s);
  double st_us, en_us;
  CF_OK(bg_signal_timestamp_us(st, &st_us));
  CF_OK(bg_signal_timestamp_us(en, &en_us));
  double et = en_us - st_us;
  CF_EXPECT(et <= (double)host_us + 1.0, "device time %.3f us exceeds the host-measured %" PRIu64 " us", et, host_us);
  CF_EXPECT(et * bg_dev_ticks_per_us(c->d) + 0.5 >= (double)(e - s) - 1.0 &&
                et * bg_dev_ticks_per_us(c->d) - 0.5 <= (double)(e - s) + 1.0,
            "bg_signal_timestamp_us disagrees with raw ticks / ticks_per_us");
  if (c->qk == BG_QUEUE_COPY) {
    for (int k = 0; k < 3; k++) {
      for (size_t i = 0; i < TS_WIN; i++) want[i] = pattern_byte(ts_win[k] + i, (unsigned)k);
      CF_OK(bg_buf_read(dst, ts_win[k], got, TS_WIN));
      size_t i = 0;
      while (i < TS_WIN && got[i] == want[i]) i++;
      CF_EXPECT(i == TS_WIN, "the timed copy: destination byte 0x%" PRIx64 " is 0x%02x, expected 0x%02x from the source",
                ts_win[k] + i, got[i], want[i]);
    }
  } else if (c->kernels) {
    EXPECT_F32("b", c->b, 1.0f, 2.0f);
  }
  return CF_PASS;
}

/* The copy queue waits on a signal the compute queue sets and vice versa. The waiting queue is
 * submitted first, so it really has to wait. */
static int test_cross_queue(cf_ctx *c) {
  bg_buf *cbuf;
  bg_signal *s1, *s2;
  bg_queue *cq, *kq, *cq2, *kq2;
  CF_OK(cf_buf(c, 2 * sizeof(float), BG_BUF_ZERO, &cbuf));
  CF_OK(cf_signal(c, 0, &s1));
  CF_OK(cf_signal(c, 0, &s2));
  bg_signal *tl = bg_dev_timeline(c->d);

  /* compute: b = a + 1, then s1 = 1; copy: wait s1, c = b, then the timeline. */
  uint64_t prev = bg_dev_timeline_value(c->d) - 1, next = bg_dev_next_timeline(c->d);
  CF_OK(cf_queue(c, BG_QUEUE_COPY, &cq));
  bg_queue_wait(cq, bg_sig(s1), bg_const(1));
  bg_queue_copy(cq, bg_addr(cbuf, 0), bg_addr(c->b, 0), 8);
  bg_queue_signal(cq, bg_sig(tl), bg_const(next));
  CF_OK(cf_queue(c, BG_QUEUE_COMPUTE, &kq));
  bg_queue_wait(kq, bg_sig(tl), bg_const(prev));
  exec_add1(c, kq, bg_addr(c->b, 0), bg_addr(c->a, 0), 2, bg_const(2), bg_const(1));
  bg_queue_signal(kq, bg_sig(s1), bg_const(1));
  CF_OK(bg_queue_submit(cq, NULL, 0));
  uint64_t seen;
  CF_OK(bg_signal_value(tl, &seen));
  CF_EXPECT(seen == prev, "the copy queue went past its wait on the compute queue's signal");
  CF_OK(bg_queue_submit(kq, NULL, 0));
  CF_OK(bg_signal_wait(tl, next, CF_TIMEOUT_MS));
  EXPECT_F32("c (copied from b after the kernel)", cbuf, 1.0f, 2.0f);

  /* copy: b = c, then s2 = 1; compute: wait s2, a = b + 1, then the timeline. */
  static const float ten[2] = {10.0f, 20.0f};
  CF_OK(cf_write_f32(cbuf, ten, 2));  /* synchronizes: before taking a timeline value */
  tl = bg_dev_timeline(c->d);
  prev = bg_dev_timeline_value(c->d) - 1;
  next = bg_dev_next_timeline(c->d);
  CF_OK(cf_queue(c, BG_QUEUE_COMPUTE, &kq2));
  bg_queue_wait(kq2, bg_sig(s2), bg_const(1));
  exec_add1(c, kq2, bg_addr(c->a, 0), bg_addr(c->b, 0), 2, bg_const(2), bg_const(1));
  bg_queue_signal(kq2, bg_sig(tl), bg_const(next));
  CF_OK(cf_queue(c, BG_QUEUE_COPY, &cq2));
  bg_queue_wait(cq2, bg_sig(tl), bg_const(prev));
  bg_queue_copy(cq2, bg_addr(c->b, 0), bg_addr(cbuf, 0), 8);
  bg_queue_signal(cq2, bg_sig(s2), bg_const(1));
  CF_OK(bg_queue_submit(kq2, NULL, 0));
  CF_OK(bg_signal_value(tl, &seen));
  CF_EXPECT(seen == prev, "the compute queue went past its wait on the copy queue's signal");
  CF_OK(bg_queue_submit(cq2, NULL, 0));
  CF_OK(bg_signal_wait(tl, next, CF_TIMEOUT_MS));
  EXPECT_F32("a (kernel on b after the copy)", c->a, 11.0f, 21.0f);
  return CF_PASS;
}

/* Whether q's lowered stream has the barrier before its exec (1/0), or no reader for this kind (-1). */
static int barrier_in(cf_ctx *c, bg_queue *q, char *why, size_t n) {
  uint8_t *cmd;
  size_t len;
  int r = cf_capture_submit(c, q, &cmd, &len);
  if (r < 0) {
    cf_fail(c, __LINE__, "capturing a submit: %s: %s", bg_strerror(r), bg_last_error());
    return -2;
  }
  r = cf_stream_has_barrier(c->d, cmd, len, why, n);
  free(cmd);
  return r;
}

/* 255 times: the host writes a CPU-visible device buffer, then memory_barrier + exec must see it (tinygrad's test).
 * The host writes through its CPU view after the submit, while the queue waits on a gate signal the host sets next:
 * only the barrier (an HDP flush on AMD, tests/mockgpu/amd_hdp.h) can bring the write to the kernel, as the submit's
 * own flush came before it. The emulated AMD GPU keeps host BAR writes from its engines until an HDP flush, so there the loop fails
 * without the barrier; the CPU device and a USB-attached GPU (its bridge's writes are coherent) have nothing to
 * flush, so the lowered stream is checked too (cf_stream.c): it must hold the barrier before the dispatch, and the
 * same program without memory_barrier must not (else the check could not tell them apart). */
static int test_memory_barrier(cf_ctx *c) {
  bg_buf *b1, *b2;
  bg_signal *gate;
  bg_queue *q, *nob;
  CF_OK(cf_buf(c, sizeof(float), BG_BUF_CPU_ACCESS, &b1));
  CF_OK(cf_buf(c, sizeof(float), BG_BUF_CPU_ACCESS | BG_BUF_ZERO, &b2));
  CF_OK(cf_signal(c, 0, &gate));
  CF_OK(cf_queue(c, BG_QUEUE_COMPUTE, &q));
  cf_tl_wait(q);
  bg_queue_wait(q, bg_sig(gate), bg_const(1));
  bg_queue_memory_barrier(q);
  exec_add1(c, q, bg_addr(b2, 0), bg_addr(b1, 0), 1, bg_const(1), bg_const(1));
  cf_tl_signal(q);
  volatile float *p = bg_buf_cpu(b1);
  for (int i = 0; i < 255; i++) {
    float v = (float)i, got = -1.0f;
    CF_OK(bg_signal_set(gate, 0));
    if (!p) CF_OK(bg_buf_write(b1, 0, &v, sizeof v)); /* no CPU view (USB): it synchronizes, so before the submit */
    uint64_t tv = bg_dev_timeline_value(c->d);
    CF_OK(bg_queue_submit(q, NULL, 0));
    if (p) *p = v; /* a direct write after the submit: only the barrier flushes it */
    CF_OK(bg_signal_set(gate, 1));
    CF_OK(bg_signal_wait(bg_dev_timeline(c->d), tv, CF_TIMEOUT_MS));
    CF_OK(bg_buf_read(b2, 0, &got, sizeof got));
    CF_EXPECT(got == v + 1.0f, "iteration %d: the kernel saw %g, expected %g", i, (double)(got - 1.0f), (double)v);
  }
  char why[256];
  int r = barrier_in(c, q, why, sizeof why);
  if (r == -2) return CF_FAIL;
  if (r < 0) return cf_skip(c, "the kernels saw the host's writes; %s", why);
  CF_EXPECT(r == 1, "memory_barrier is not in the lowered program: %s", why);
  CF_OK(cf_queue(c, BG_QUEUE_COMPUTE, &nob));
  cf_tl_wait(nob);
  exec_add1(c, nob, bg_addr(b2, 0), bg_addr(b1, 0), 1, bg_const(1), bg_const(1));
  cf_tl_signal(nob);
  r = barrier_in(c, nob, why, sizeof why);
  if (r == -2) return CF_FAIL;
  CF_EXPECT(r == 0, "a program without memory_barrier also looks as if it had one, so the check proves nothing: %s", why);
  return CF_PASS;
}

const cf_test cf_work_tests[] = {
  {"exec_one_kernel", test_exec_one_kernel, CF_NEEDS_KERNELS},
  {"exec_2_kernels_100_times", test_exec_2_kernels_100_times, CF_NEEDS_KERNELS},
  {"exec_update", test_exec_update, CF_NEEDS_KERNELS},
  {"exec_update_vars", test_exec_update_vars, CF_NEEDS_KERNELS},
  {"copy", test_copy, CF_NEEDS_COPY},
  {"copy_long", test_copy_long, CF_NEEDS_COPY},
  {"update_copy", test_update_copy, CF_NEEDS_COPY},
  {"update_copy_long", test_update_copy_long, CF_NEEDS_COPY},
  {"small_copies_from_host_buf", test_small_copies_from_host_buf, CF_NEEDS_COPY},
  {"small_copies_intercopy", test_small_copies_intercopy, CF_NEEDS_COPY},
  {"timestamp", test_timestamp, CF_PER_QUEUE},
  {"cross_queue_waits", test_cross_queue, CF_NEEDS_COPY | CF_NEEDS_KERNELS},
  {"memory_barrier", test_memory_barrier, CF_NEEDS_KERNELS},
};
const size_t cf_nwork_tests = sizeof cf_work_tests / sizeof cf_work_tests[0];
