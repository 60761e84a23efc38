/* tests/unit/rdna3/test_bits.c: sign-bit and leading-zero counts (v_cls_i32, s_cls_i32,
 * s_cls_i32_i64, s_clz_i32_u64). LLVM lowers int64 -> float conversions through v_cls_i32 (ctls);
 * the expected values follow the ISA guide's pseudo-code literally, bit by bit. */
#include <check.h>
#include <stdint.h>

#include "harness.h"
#include "tests.h"

static gpu g;
static wave_run r;

/* ISA guide, V_CLS_I32: D = -1; for i in 1..N-1: if S0[N-1-i] != S0[N-1] { D = i; break }. */
static uint32_t cls_ref(uint64_t v, unsigned bits) {
  unsigned sign = (unsigned)(v >> (bits - 1)) & 1;
  for (unsigned i = 1; i < bits; i++)
    if (((v >> (bits - 1 - i)) & 1) != sign) return i;
  return 0xffffffffu;
}

/* S_CLZ_I32_U64: D = -1; for i in 0..63: if S0[63-i] == 1 { D = i; break }. */
static uint32_t clz64_ref(uint64_t v) {
  for (unsigned i = 0; i < 64; i++)
    if ((v >> (63 - i)) & 1) return i;
  return 0xffffffffu;
}

static const uint64_t cases[] = {0, ~0ull, 1, 0x8000000000000000ull, 0x7fffffffffffffffull, 0x40000000ull,
                                 0xc0000000ull, 0x80000000ull, 0xffffffff7fffffffull, 0x00000001fffffff0ull,
                                 0xfffffffe00000000ull, 0x123456789abcdefull, 0xfedcba9876543210ull};
#define NCASES (sizeof cases / sizeof cases[0])

START_TEST(sign_bit_counts) {
  uint64_t s = cases[_i];
  gpu_init(&g);
  wave_setup(&r, &g, "sign_counts");
  r.w.s[0] = (uint32_t)s, r.w.s[1] = (uint32_t)(s >> 32);
  uint32_t x = 0x9e3779b9u;
  for (unsigned l = 0; l < 32; l++) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    /* the first lanes take the 32-bit halves of every case, the rest shifted random values */
    r.w.v[0][l] = l < 2 * NCASES ? (uint32_t)(cases[l / 2] >> (l % 2 * 32)) : x >> (l % 31);
  }
  ck_assert_msg(wave_go(&r) == 0, "%s", r.rep.msg);
  for (unsigned l = 0; l < 32; l++) {
    uint32_t v = r.w.v[0][l];
    ck_assert_msg(r.w.v[3][l] == cls_ref(v, 32), "v_cls_i32(0x%08x) lane %u: got 0x%x, want 0x%x", v, l,
                  r.w.v[3][l], cls_ref(v, 32));
    ck_assert_uint_eq(r.w.v[4][l], cls_ref((uint32_t)s, 32));
  }
  ck_assert_uint_eq(r.w.s[4], cls_ref((uint32_t)s, 32));
  ck_assert_msg(r.w.s[5] == cls_ref(s, 64), "s_cls_i32_i64(0x%016llx): got 0x%x, want 0x%x", (unsigned long long)s,
                r.w.s[5], cls_ref(s, 64));
  ck_assert_uint_eq(r.w.s[6], clz64_ref(s));
  gpu_free(&g);
}
END_TEST

TCase *bits_tests(void) {
  TCase *tc = tcase_create("bits");
  tcase_add_loop_test(tc, sign_bit_counts, 0, (int)NCASES);
  return tc;
}
