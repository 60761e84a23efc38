/* tests/unit/hcq/test_alloc.c: TLSF and bump allocators (hcq/tlsf.c, hcq/bump.c). */
#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "hcq/bump.h"
#include "hcq/tlsf.h"

/* ---------------- deterministic PRNG (xorshift64*) ---------------- */

static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s ? s : 0x853c49e6748fea9bull; }
static uint64_t rng(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1Dull;
}
static uint64_t rng_below(uint64_t n) { return rng() % n; }

static uint64_t seed_from_env(void) {
  const char *s = getenv("TLSF_SEED");
  return s && *s ? strtoull(s, NULL, 0) : 0x5eed1234abcdull;
}

/* Hot-loop check: Check records every passing ck_assert (a write to its message file), which would
 * dominate a 100,000-operation run; this only calls into Check on failure. */
#define REQUIRE(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* ---------------- TLSF ---------------- */

START_TEST(tlsf_alignment) {
  bg_tlsf *t;
  const uint64_t base = 0x100000, size = 16u << 20;
  ck_assert_int_eq(bg_tlsf_create(base, size, 256, &t), 0);
  ck_assert_uint_eq(bg_tlsf_free_bytes(t), size);
  ck_assert_uint_eq(bg_tlsf_largest_free(t), size);
  uint64_t a;
  /* Unaligned sizes are rounded up to min_align; small aligns are raised to min_align. */
  ck_assert_int_eq(bg_tlsf_alloc(t, 1, 1, &a), 0);
  ck_assert_uint_eq(a % 256, 0);
  ck_assert_uint_eq(bg_tlsf_free_bytes(t), size - 256);
  const uint64_t aligns[] = {256, 512, 4096, 65536, 1u << 20, 2u << 20};
  uint64_t got[6];
  for (int i = 0; i < 6; i++) {
    ck_assert_int_eq(bg_tlsf_alloc(t, 100 + (uint64_t)i * 1000, aligns[i], &got[i]), 0);
    ck_assert_msg(got[i] % aligns[i] == 0, "addr 0x%" PRIx64 " not aligned to %" PRIu64, got[i], aligns[i]);
    ck_assert(got[i] >= base && got[i] + 100 + (uint64_t)i * 1000 <= base + size);
  }
  /* Padding in front of aligned blocks went back to the free lists: a small block fits there. */
  uint64_t used = 256;
  for (int i = 0; i < 6; i++) used += round_up(100 + (uint64_t)i * 1000, 256);
  ck_assert_uint_eq(bg_tlsf_free_bytes(t), size - used);
  ck_assert_int_eq(bg_tlsf_alloc(t, 256, 256, &a), 0);
  ck_assert_uint_lt(a, got[5]);
  /* Invalid requests. */
  ck_assert_int_eq(bg_tlsf_alloc(t, 0, 256, &a), -BG_EINVAL);
  ck_assert_int_eq(bg_tlsf_alloc(t, 64, 3, &a), -BG_EINVAL);
  ck_assert_int_eq(bg_tlsf_alloc(t, 64, 0, &a), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "power of two"));
  bg_tlsf_destroy(t);
}
END_TEST

START_TEST(tlsf_create_invalid) {
  bg_tlsf *t = (bg_tlsf *)1;
  ck_assert_int_eq(bg_tlsf_create(0, 4096, 3, &t), -BG_EINVAL);
  ck_assert_ptr_null(t);
  ck_assert_int_eq(bg_tlsf_create(0x10, 4096, 256, &t), -BG_EINVAL);
  ck_assert_int_eq(bg_tlsf_create(0, 100, 256, &t), -BG_EINVAL);
  ck_assert_int_eq(bg_tlsf_create(UINT64_MAX - 4095, 8192, 4096, &t), -BG_EINVAL);
  /* A range that ends exactly at 2^64 is fine. */
  ck_assert_int_eq(bg_tlsf_create(UINT64_MAX - 4095, 4096, 4096, &t), 0);
  uint64_t a;
  ck_assert_int_eq(bg_tlsf_alloc(t, 4096, 4096, &a), 0);
  ck_assert_uint_eq(a, UINT64_MAX - 4095);
  ck_assert_int_eq(bg_tlsf_free(t, a), 0);
  bg_tlsf_destroy(t);
}
END_TEST

START_TEST(tlsf_exhaustion) {
  bg_tlsf *t;
  const uint64_t size = 1u << 20;
  ck_assert_int_eq(bg_tlsf_create(0x200000, size, 4096, &t), 0);
  uint64_t whole, a;
  /* The whole range fits exactly even though good-fit rounding alone would miss it. */
  ck_assert_int_eq(bg_tlsf_alloc(t, size, 4096, &whole), 0);
  ck_assert_uint_eq(whole, 0x200000);
  ck_assert_uint_eq(bg_tlsf_free_bytes(t), 0);
  ck_assert_uint_eq(bg_tlsf_largest_free(t), 0);
  ck_assert_int_eq(bg_tlsf_alloc(t, 1, 1, &a), -BG_ENOMEM);
  ck_assert_int_eq(bg_tlsf_free(t, whole), 0);

  ck_assert_int_eq(bg_tlsf_alloc(t, 3u << 18, 4096, &a), 0);  /* 768 KiB used, 256 KiB free */
  ck_assert_int_eq(bg_tlsf_alloc(t, 300000, 4096, &whole), -BG_ENOMEM);
  const char *msg = bg_last_error();
  ck_assert_msg(strstr(msg, "tlsf:") && strstr(msg, "300000") && strstr(msg, "262144"),
                "message should name the size and the free bytes: %s", msg);
  ck_assert_int_eq(bg_tlsf_alloc(t, size + 1, 1, &whole), -BG_ENOMEM);
  ck_assert_int_eq(bg_tlsf_alloc(t, UINT64_MAX, 1, &whole), -BG_ENOMEM);
  ck_assert_int_eq(bg_tlsf_alloc(t, 4096, 1ull << 63, &whole), -BG_ENOMEM);
  /* The remaining 256 KiB still fits exactly. */
  ck_assert_int_eq(bg_tlsf_alloc(t, 1u << 18, 4096, &whole), 0);
  ck_assert_uint_eq(bg_tlsf_free_bytes(t), 0);
  bg_tlsf_destroy(t);
}
END_TEST

START_TEST(tlsf_coalesce_random_order) {
  bg_tlsf *t;
  const uint64_t base = 1ull << 40, size = 64u << 20;
  ck_assert_int_eq(bg_tlsf_create(base, size, 64, &t), 0);
  rng_seed(seed_from_env() ^ 0x11);
  for (int round = 0; round < 20; round++) {
    uint64_t addrs[4096];
    size_t n = 0;
    while (n < 4096) {
      uint64_t a, sz = 1 + rng_below(1u << (6 + rng_below(12)));
      uint64_t al = 1ull << rng_below(14);
      if (bg_tlsf_alloc(t, sz, al, &a)) break;
      addrs[n++] = a;
    }
    ck_assert_uint_gt(n, 100);
    for (size_t i = n; i > 1; i--) {  /* Fisher-Yates */
      size_t j = (size_t)rng_below(i);
      uint64_t tmp = addrs[i - 1];
      addrs[i - 1] = addrs[j];
      addrs[j] = tmp;
    }
    for (size_t i = 0; i < n; i++) REQUIRE(bg_tlsf_free(t, addrs[i]) == 0, "free 0x%" PRIx64 ": %s", addrs[i], bg_last_error());
    ck_assert_uint_eq(bg_tlsf_free_bytes(t), size);
    ck_assert_uint_eq(bg_tlsf_largest_free(t), size);
  }
  uint64_t a;
  ck_assert_int_eq(bg_tlsf_alloc(t, size, 64, &a), 0);
  ck_assert_uint_eq(a, base);
  bg_tlsf_destroy(t);
}
END_TEST

START_TEST(tlsf_double_free) {
  bg_tlsf *t;
  ck_assert_int_eq(bg_tlsf_create(0x1000, 0x100000, 256, &t), 0);
  uint64_t a, b;
  ck_assert_int_eq(bg_tlsf_alloc(t, 1000, 256, &a), 0);
  ck_assert_int_eq(bg_tlsf_alloc(t, 1000, 256, &b), 0);
  ck_assert_int_eq(bg_tlsf_free(t, a), 0);
  ck_assert_int_eq(bg_tlsf_free(t, a), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "double free"), "message: %s", bg_last_error());
  ck_assert_int_eq(bg_tlsf_free(t, b + 256), -BG_EINVAL);    /* inside a live block */
  ck_assert_int_eq(bg_tlsf_free(t, 0x10), -BG_EINVAL);       /* outside the range */
  ck_assert_msg(strstr(bg_last_error(), "outside"), "message: %s", bg_last_error());
  ck_assert_uint_eq(bg_tlsf_free_bytes(t), 0x100000 - 1024);  /* nothing changed by the bad frees */
  ck_assert_int_eq(bg_tlsf_free(t, b), 0);
  ck_assert_int_eq(bg_tlsf_free(t, b), -BG_EINVAL);
  ck_assert_uint_eq(bg_tlsf_largest_free(t), 0x100000);
  bg_tlsf_destroy(t);
}
END_TEST

/* ---- randomized property test against a reference model ---- */

typedef struct live { uint64_t addr, size, rsize, align; } live;

static int cmp_live(const void *a, const void *b) {
  uint64_t x = ((const live *)a)->addr, y = ((const live *)b)->addr;
  return x < y ? -1 : x > y;
}

/* Free gaps of the reference model (live sorted by address): largest gap, and whether any gap
 * holds rsize bytes at align. */
static void ref_gaps(live *v, size_t n, uint64_t base, uint64_t size, uint64_t rsize, uint64_t align,
                     uint64_t *largest, int *fits) {
  qsort(v, n, sizeof *v, cmp_live);
  uint64_t cur = base, best = 0;
  *fits = 0;
  for (size_t i = 0; i <= n; i++) {
    uint64_t end = i < n ? v[i].addr : base + size;
    uint64_t gap = end - cur;
    if (gap > best) best = gap;
    uint64_t start = round_up(cur, align);
    if (start >= cur && start - cur <= gap && rsize <= gap - (start - cur)) *fits = 1;
    if (i < n) cur = v[i].addr + v[i].rsize;
  }
  *largest = best;
}

static void property_run(uint64_t base, uint64_t size, uint64_t min_align, uint64_t max_size_log, long nops,
                         size_t max_live) {
  bg_tlsf *t;
  ck_assert_int_eq(bg_tlsf_create(base, size, min_align, &t), 0);
  live *v = calloc(max_live, sizeof *v);
  ck_assert_ptr_nonnull(v);
  size_t n = 0;
  uint64_t used = 0;
  long allocs = 0, frees = 0, fails = 0;
  for (long op = 0; op < nops; op++) {
    bool do_alloc = n == 0 || (n < max_live && rng_below(100) < 55);
    if (do_alloc) {
      uint64_t sz = 1 + rng_below(1ull << rng_below(max_size_log + 1));
      uint64_t al = 1ull << rng_below(17);
      uint64_t a = 0;
      int rc = bg_tlsf_alloc(t, sz, al, &a);
      uint64_t eff_align = al < min_align ? min_align : al;
      uint64_t rsize = round_up(sz, min_align);
      if (rc == 0) {
        allocs++;
        REQUIRE(a % eff_align == 0, "op %ld: 0x%" PRIx64 " not aligned to %" PRIu64, op, a, eff_align);
        REQUIRE(a >= base && a - base <= size && rsize <= size - (a - base),
                      "op %ld: block 0x%" PRIx64 "+%" PRIu64 " outside the range", op, a, rsize);
        for (size_t i = 0; i < n; i++)
          REQUIRE(a + rsize <= v[i].addr || v[i].addr + v[i].rsize <= a,
                        "op %ld: block 0x%" PRIx64 "+%" PRIu64 " overlaps live 0x%" PRIx64 "+%" PRIu64, op, a, rsize,
                        v[i].addr, v[i].rsize);
        v[n++] = (live){a, sz, rsize, eff_align};
        used += rsize;
      } else {
        fails++;
        REQUIRE(rc == -BG_ENOMEM, "op %ld: alloc returned %d: %s", op, rc, bg_last_error());
        /* The allocator may refuse only when no free gap can hold the request. */
        uint64_t largest;
        int fits;
        ref_gaps(v, n, base, size, rsize, eff_align, &largest, &fits);
        REQUIRE(!fits, "op %ld: alloc of %" PRIu64 " align %" PRIu64 " failed but a gap fits it (%s)", op, sz,
                      eff_align, bg_last_error());
      }
    } else {
      size_t i = (size_t)rng_below(n);
      REQUIRE(bg_tlsf_free(t, v[i].addr) == 0, "op %ld: free of 0x%" PRIx64 ": %s", op, v[i].addr, bg_last_error());
      used -= v[i].rsize;
      v[i] = v[--n];
      frees++;
    }
    REQUIRE(bg_tlsf_free_bytes(t) == size - used, "op %ld: free bytes %" PRIu64 ", reference %" PRIu64, op,
            bg_tlsf_free_bytes(t), size - used);
    if (op % 997 == 0) {
      uint64_t largest;
      int fits;
      ref_gaps(v, n, base, size, 1, 1, &largest, &fits);
      REQUIRE(bg_tlsf_largest_free(t) == largest, "op %ld: largest free %" PRIu64 ", reference %" PRIu64, op,
                    bg_tlsf_largest_free(t), largest);
    }
  }
  ck_assert_uint_gt(allocs, nops / 4);
  ck_assert_uint_gt(fails, 0);  /* the run reached exhaustion at least once */
  while (n) {
    size_t i = (size_t)rng_below(n);
    REQUIRE(bg_tlsf_free(t, v[i].addr) == 0, "final free of 0x%" PRIx64 ": %s", v[i].addr, bg_last_error());
    v[i] = v[--n];
  }
  ck_assert_uint_eq(bg_tlsf_free_bytes(t), size);
  ck_assert_uint_eq(bg_tlsf_largest_free(t), size);
  fprintf(stderr, "tlsf property: range %" PRIu64 " bytes, min_align %" PRIu64 ": %ld ops, %ld allocs, %ld frees, %ld refused\n",
          size, min_align, nops, allocs, frees, fails);
  free(v);
  bg_tlsf_destroy(t);
}

START_TEST(tlsf_property_random) {
  uint64_t seed = seed_from_env();
  rng_seed(seed);
  fprintf(stderr, "tlsf property test seed 0x%" PRIx64 " (TLSF_SEED to override)\n", seed);
  /* Device-like: 32 MiB at a high base, 256-byte granularity, blocks up to 4 MiB. */
  property_run(0x7f0000000000ull, 32u << 20, 256, 22, 120000, 400);
  /* Byte granularity, small range: the first-level-0 classes and exhaustion. */
  property_run(0x10, 1u << 16, 1, 12, 60000, 200);
}
END_TEST

/* ---------------- bump ---------------- */

START_TEST(bump_alignment) {
  bg_bump b = {0x1004, 0x100, 0, false};
  uint64_t a;
  ck_assert_int_eq(bg_bump_alloc(&b, 3, 1, &a), 0);
  ck_assert_uint_eq(a, 0x1004);
  ck_assert_int_eq(bg_bump_alloc(&b, 8, 16, &a), 0);
  ck_assert_uint_eq(a, 0x1010);
  ck_assert_int_eq(bg_bump_alloc(&b, 1, 8, &a), 0);
  ck_assert_uint_eq(a, 0x1018);
  ck_assert_int_eq(bg_bump_alloc(&b, 8, 256, &a), -BG_EINVAL);  /* 0x1100+8 is past the end 0x1104: can never fit */
  ck_assert_int_eq(bg_bump_alloc(&b, 4, 3, &a), -BG_EINVAL);
  ck_assert_int_eq(bg_bump_alloc(&b, 4, 0, &a), -BG_EINVAL);
  ck_assert_int_eq(bg_bump_alloc(&b, 0x101, 1, &a), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "exceeds"), "message: %s", bg_last_error());
}
END_TEST

START_TEST(bump_wrap) {
  bg_bump b = {0x10000, 0x1000, 0, true};
  uint64_t a, prev = 0;
  for (int i = 0; i < 16; i++) {
    ck_assert_int_eq(bg_bump_alloc(&b, 0x100, 0x100, &a), 0);
    ck_assert_uint_eq(a, 0x10000 + (uint64_t)i * 0x100);
    prev = a;
  }
  ck_assert_uint_eq(prev, 0x10f00);
  ck_assert_int_eq(bg_bump_alloc(&b, 0x80, 8, &a), 0);  /* wraps to the start */
  ck_assert_uint_eq(a, 0x10000);
  ck_assert_int_eq(bg_bump_alloc(&b, 0xf00, 8, &a), 0);  /* 0x80 + 0xf00 fits */
  ck_assert_uint_eq(a, 0x10080);
  ck_assert_int_eq(bg_bump_alloc(&b, 0x100, 8, &a), 0);  /* does not fit in the last 0x80: wraps */
  ck_assert_uint_eq(a, 0x10000);
  ck_assert_int_eq(bg_bump_alloc(&b, 0x1000, 1, &a), 0);  /* the whole arena */
  ck_assert_uint_eq(a, 0x10000);
  ck_assert_int_eq(bg_bump_alloc(&b, 0x1001, 1, &a), -BG_EINVAL);
}
END_TEST

START_TEST(bump_nowrap_exhaustion) {
  bg_bump b = {0x2000, 0x400, 0, false};
  uint64_t a;
  ck_assert_int_eq(bg_bump_alloc(&b, 0x300, 16, &a), 0);
  ck_assert_uint_eq(a, 0x2000);
  ck_assert_int_eq(bg_bump_alloc(&b, 0x100, 16, &a), 0);
  ck_assert_uint_eq(a, 0x2300);
  ck_assert_int_eq(bg_bump_alloc(&b, 1, 1, &a), -BG_ENOMEM);
  ck_assert_msg(strstr(bg_last_error(), "exhausted"), "message: %s", bg_last_error());
  ck_assert_uint_eq(b.off, 0x400);  /* a failed allocation leaves the arena as it was */
  b.off = 0;
  ck_assert_int_eq(bg_bump_alloc(&b, 0x400, 16, &a), 0);
  ck_assert_uint_eq(a, 0x2000);
}
END_TEST

static Suite *alloc_suite(void) {
  Suite *s = suite_create("alloc");
  TCase *tt = tcase_create("tlsf");
  tcase_set_timeout(tt, 300);
  tcase_add_test(tt, tlsf_alignment);
  tcase_add_test(tt, tlsf_create_invalid);
  tcase_add_test(tt, tlsf_exhaustion);
  tcase_add_test(tt, tlsf_coalesce_random_order);
  tcase_add_test(tt, tlsf_double_free);
  tcase_add_test(tt, tlsf_property_random);
  suite_add_tcase(s, tt);
  TCase *tb = tcase_create("bump");
  tcase_add_test(tb, bump_alignment);
  tcase_add_test(tb, bump_wrap);
  tcase_add_test(tb, bump_nowrap_exhaustion);
  suite_add_tcase(s, tb);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(alloc_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
