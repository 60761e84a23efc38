/* tests/unit/ir/test_symbolic.c: constant folding, identities, canonical forms, vmin/vmax and the
 * div/mod rules of ir_symbolic_rules, checked structurally and (for the div/mod cases) by value. */
#include <string.h>

#include "test_ir.h"

#define IDX ((ir_dtype)IR_DT_INDEX)
#define I32 ((ir_dtype)IR_DT_INT32)

static ir_ctx *c;
static void setup(void) { c = ir_new(); }
static void teardown(void) { ir_free(c); }

static const ir_node *K(int64_t v) { return ir_const_int(c, IDX, v); }
static const ir_node *B(enum ir_op op, const ir_node *a, const ir_node *b) { return ir_alu2(c, op, a, b); }
static const ir_node *S(const ir_node *e) {
  const ir_node *r = ir_simplify(c, e);
  ck_assert_msg(r != NULL, "simplify failed: %s", ir_error(c));
  return r;
}

/* Asserts simplify(e) renders as want. */
static void expect(const ir_node *e, const char *want) {
  char got[256], before[256];
  ir_render_expr(S(e), got, sizeof got);
  ir_render_expr(e, before, sizeof before);
  ck_assert_msg(strcmp(got, want) == 0, "simplify(%s) = %s, expected %s", before, got, want);
}

/* Asserts e and simplify(e) agree for every value of vars x, y in their bounds. */
static void same_values(const ir_node *e, const ir_node *x, const ir_node *y) {
  const ir_node *s = S(e), *vars[2] = {x, y};
  const ir_var_info *vx = ir_var_get(x), *vy = ir_var_get(y);
  for (int64_t a = vx->min; a <= vx->max; a++)
    for (int64_t b = vy->min; b <= vy->max; b++) {
      int64_t vals[2] = {a, b}, v0, v1;
      test_env env = {vars, vals, 2};
      ck_assert_int_eq(ir_eval(c, e, test_lookup, &env, &v0), 0);
      ck_assert_int_eq(ir_eval(c, s, test_lookup, &env, &v1), 0);
      ck_assert_int_eq(v0, v1);
    }
}

START_TEST(test_fold) {
  ck_assert_ptr_eq(S(B(IR_ADD, K(12), K(4))), K(16));
  const ir_node *m = ir_alu2(c, IR_ADD, ir_const_int(c, I32, INT32_MAX), ir_const_int(c, I32, 1));
  ck_assert_ptr_eq(S(m), ir_const_int(c, I32, INT32_MIN));
  ck_assert_ptr_eq(S(B(IR_IDIV, K(-7), K(2))), K(-3));
  ck_assert_ptr_eq(S(B(IR_MOD, K(-7), K(2))), K(-1));
  ck_assert_ptr_eq(S(B(IR_CMPLT, K(3), K(4))), ir_const_bool(c, true));
  ck_assert_ptr_eq(S(ir_cast(c, IR_DT_INT8, ir_const_int(c, I32, 300))), ir_const_int(c, IR_DT_INT8, 44));
  ck_assert_ptr_eq(S(B(IR_MUL, B(IR_ADD, K(2), K(3)), B(IR_SUB, K(10), K(4)))), K(30));
  /* division by zero is not folded */
  const ir_node *dz = B(IR_IDIV, K(1), K(0));
  ck_assert_ptr_eq(S(dz), dz);
  /* floats are left alone */
  const ir_node *f = ir_alu2(c, IR_ADD, ir_const_float(c, IR_DT_FLOAT32, 1), ir_const_float(c, IR_DT_FLOAT32, 0));
  ck_assert_ptr_eq(S(f), f);
}
END_TEST

START_TEST(test_identities) {
  const ir_node *x = ir_var(c, IDX, "x", -10, 10), *y = ir_var(c, IDX, "y", -10, 10);
  ck_assert_ptr_eq(S(B(IR_MUL, x, K(1))), x);
  ck_assert_ptr_eq(S(B(IR_MUL, K(1), x)), x);
  ck_assert_ptr_eq(S(B(IR_ADD, x, K(0))), x);
  ck_assert_ptr_eq(S(B(IR_ADD, K(0), x)), x);
  ck_assert_ptr_eq(S(B(IR_SUB, x, K(0))), x);
  ck_assert_ptr_eq(S(B(IR_MUL, x, K(0))), K(0));
  ck_assert_ptr_eq(S(B(IR_SUB, x, x)), K(0));
  ck_assert_ptr_eq(S(B(IR_IDIV, x, K(1))), x);
  ck_assert_ptr_eq(S(B(IR_MOD, x, K(1))), K(0));
  ck_assert_ptr_eq(S(B(IR_MAX, x, x)), x);
  const ir_node *cond = B(IR_CMPLT, x, y);
  ck_assert_ptr_eq(S(ir_alu3(c, IR_WHERE, cond, x, x)), x);
  ck_assert_ptr_eq(S(ir_alu3(c, IR_WHERE, ir_const_bool(c, true), x, y)), x);
  ck_assert_ptr_eq(S(ir_alu3(c, IR_WHERE, ir_const_bool(c, false), x, y)), y);
  ck_assert_ptr_eq(S(ir_alu3(c, IR_WHERE, B(IR_CMPLT, K(1), K(2)), x, y)), x);
  ck_assert_ptr_eq(S(B(IR_CMPNE, x, x)), ir_const_bool(c, false));
  ck_assert_ptr_eq(S(B(IR_CMPEQ, x, x)), ir_const_bool(c, true));
  ck_assert_ptr_eq(S(B(IR_XOR, x, x)), K(0));
  ck_assert_ptr_eq(S(B(IR_AND, x, K(-1))), x);
  ck_assert_ptr_eq(S(ir_cast(c, IDX, x)), x);
  const ir_node *x8 = ir_var(c, IR_DT_INT8, "b", -100, 100);
  ck_assert_ptr_eq(S(ir_cast(c, IR_DT_INT8, ir_cast(c, I32, x8))), x8);
  /* nested: (x*1 + 0) * (y - 0) -> x*y */
  ck_assert_ptr_eq(S(B(IR_MUL, B(IR_ADD, B(IR_MUL, x, K(1)), K(0)), B(IR_SUB, y, K(0)))), S(B(IR_MUL, x, y)));
}
END_TEST

START_TEST(test_canonical) {
  const ir_node *x = ir_var(c, IDX, "x", -10, 10), *y = ir_var(c, IDX, "y", -10, 10);
  expect(B(IR_ADD, K(3), x), "x+3");
  expect(B(IR_ADD, B(IR_ADD, x, K(3)), K(4)), "x+7");
  expect(B(IR_ADD, B(IR_ADD, x, K(3)), K(-3)), "x");
  expect(B(IR_MUL, B(IR_MUL, x, K(2)), K(3)), "x*6");
  expect(B(IR_ADD, B(IR_MUL, x, K(2)), B(IR_MUL, x, K(3))), "x*5");
  expect(B(IR_ADD, x, x), "x*2");
  expect(B(IR_SUB, B(IR_ADD, x, K(5)), K(2)), "x+3");
  expect(B(IR_SUB, B(IR_ADD, x, y), y), "x");
  expect(B(IR_MUL, B(IR_ADD, x, K(2)), K(3)), "(x*3)+6");
  ck_assert_ptr_eq(S(B(IR_ADD, x, y)), S(B(IR_ADD, y, x)));
  ck_assert_ptr_eq(S(B(IR_ADD, B(IR_ADD, x, K(1)), y)), S(B(IR_ADD, B(IR_ADD, y, x), K(1))));
  /* (x//4)*4 + x%4 -> x */
  ck_assert_ptr_eq(S(B(IR_ADD, B(IR_MUL, B(IR_IDIV, x, K(4)), K(4)), B(IR_MOD, x, K(4)))), x);
  /* a simplified expression is a fixed point */
  const ir_node *e = S(B(IR_ADD, B(IR_MUL, B(IR_ADD, x, K(2)), K(3)), B(IR_SUB, y, x)));
  ck_assert_ptr_eq(S(e), e);
}
END_TEST

#define RANGE(e, lo, hi)                                  \
  do {                                                    \
    const ir_node *e_ = (e);                              \
    ck_assert_int_eq(ir_vmin(c, e_), (lo));               \
    ck_assert_int_eq(ir_vmax(c, e_), (hi));               \
  } while (0)

START_TEST(test_bounds) {
  const ir_node *x = ir_var(c, IDX, "x", -3, 4), *y = ir_var(c, IDX, "y", 2, 5);
  RANGE(K(7), 7, 7);
  RANGE(x, -3, 4);
  RANGE(B(IR_ADD, x, y), -1, 9);
  RANGE(B(IR_SUB, x, y), -8, 2);
  RANGE(B(IR_MUL, x, K(-2)), -8, 6);
  RANGE(B(IR_MUL, x, y), -15, 20);
  RANGE(B(IR_MUL, x, x), -12, 16); /* corners; x*x is not known to be a square */
  RANGE(B(IR_IDIV, x, K(2)), -1, 2);
  RANGE(B(IR_IDIV, x, K(-2)), -2, 1);
  RANGE(B(IR_IDIV, x, y), -1, 2);
  RANGE(B(IR_IDIV, B(IR_ADD, x, K(10)), K(4)), 1, 3);
  RANGE(B(IR_MOD, x, K(3)), -2, 2);
  RANGE(B(IR_MOD, x, K(-3)), -2, 2);
  RANGE(B(IR_MOD, x, K(10)), -3, 4);
  RANGE(B(IR_MOD, B(IR_ADD, x, K(10)), K(3)), 0, 2);
  RANGE(B(IR_MOD, y, x), 0, 3); /* |y % x| < max|x|, sign of y */
  RANGE(B(IR_MAX, x, K(0)), 0, 4);
  RANGE(B(IR_MAX, x, y), 2, 5);
  RANGE(B(IR_AND, x, K(3)), 0, 3);
  RANGE(B(IR_AND, y, K(6)), 0, 5);
  RANGE(B(IR_OR, y, K(8)), 8, 15);
  RANGE(B(IR_SHR, x, K(1)), -2, 2);
  RANGE(B(IR_SHL, x, K(2)), -12, 16);
  RANGE(B(IR_CMPLT, x, K(5)), 1, 1);
  RANGE(B(IR_CMPLT, x, K(-3)), 0, 0);
  RANGE(B(IR_CMPLT, x, K(0)), 0, 1);
  RANGE(B(IR_CMPNE, y, K(0)), 1, 1);
  RANGE(B(IR_CMPEQ, y, K(0)), 0, 0);
  RANGE(ir_alu3(c, IR_WHERE, B(IR_CMPLT, x, K(0)), y, K(-7)), -7, 5);
  RANGE(ir_cast(c, IR_DT_INT8, x), -3, 4);
  RANGE(ir_cast(c, IR_DT_UINT8, x), 0, 255);     /* negative values wrap */
  RANGE(ir_cast(c, IR_DT_BOOL, y), 1, 1);
  /* overflow of the dtype falls back to its range */
  const ir_node *b = ir_var(c, IR_DT_INT8, "b", 0, 100), *u = ir_var(c, IR_DT_UINT8, "u", 0, 5);
  RANGE(B(IR_MUL, b, ir_const_int(c, IR_DT_INT8, 2)), -128, 127);
  RANGE(B(IR_ADD, b, ir_const_int(c, IR_DT_INT8, 27)), 27, 127);
  RANGE(B(IR_SUB, u, ir_const_int(c, IR_DT_UINT8, 1)), 0, 255);
  RANGE(B(IR_SUB, u, ir_const_int(c, IR_DT_UINT8, 0)), 0, 5);
  const ir_node *big = ir_var(c, IDX, "big", INT64_MAX - 5, INT64_MAX);
  RANGE(B(IR_ADD, big, K(1)), INT64_MIN, INT64_MAX);
  RANGE(B(IR_MUL, big, K(-1)), -INT64_MAX, -(INT64_MAX - 5));
  const ir_node *q = ir_var(c, IR_DT_UINT64, "q", 0, 10);
  RANGE(q, INT64_MIN, INT64_MAX); /* uint64 is not ordered as int64: unknown */
  RANGE(ir_var(c, I32, "clamped", -10, (int64_t)1 << 40), -10, INT32_MAX);
  /* loop and thread indices run over 0 .. extent-1 */
  ir_arg axis = {.i = 0};
  const ir_node *ext = K(16), *r = ir_intern(c, IR_RANGE, IDX, axis, 1, &ext);
  RANGE(r, 0, 15);
  ck_assert_ptr_eq(S(B(IR_MOD, r, K(16))), r);
  ir_arg gname = {.b = ir_blob_intern(c, "gidx0", 5)};
  const ir_node *ey = B(IR_ADD, y, K(1));
  RANGE(ir_intern(c, IR_SPECIAL, IDX, gname, 1, &ey), 0, 5);
}
END_TEST

START_TEST(test_divmod) {
  const ir_node *i = ir_var(c, IDX, "i", 0, 15), *j = ir_var(c, IDX, "j", 0, 3);
  const ir_node *flat = B(IR_ADD, B(IR_MUL, i, K(4)), j);
  ck_assert_ptr_eq(S(B(IR_MOD, B(IR_IDIV, flat, K(4)), K(16))), i);
  ck_assert_ptr_eq(S(B(IR_IDIV, flat, K(4))), i);
  ck_assert_ptr_eq(S(B(IR_MOD, flat, K(4))), j);
  ck_assert_ptr_eq(S(B(IR_MOD, i, K(16))), i);
  ck_assert_ptr_eq(S(B(IR_IDIV, j, K(4))), K(0));
  ck_assert_ptr_eq(S(B(IR_CMPLT, i, K(16))), ir_const_bool(c, true));
  ck_assert_ptr_eq(S(B(IR_CMPLT, flat, K(0))), ir_const_bool(c, false));
  expect(B(IR_IDIV, B(IR_ADD, B(IR_ADD, B(IR_MUL, i, K(16)), B(IR_MUL, j, K(4))), K(3)), K(4)), "j+(i*4)"); /* non-constant operands ordered by id */
  expect(B(IR_MOD, B(IR_ADD, B(IR_ADD, B(IR_MUL, i, K(16)), B(IR_MUL, j, K(4))), K(3)), K(4)), "3");
  expect(B(IR_IDIV, B(IR_IDIV, i, K(2)), K(3)), "i//6");
  expect(B(IR_MOD, B(IR_MOD, i, K(12)), K(4)), "i%4");
  expect(B(IR_IDIV, B(IR_MUL, i, K(6)), K(3)), "i*2");
  expect(B(IR_IDIV, B(IR_MUL, i, K(2)), K(6)), "i//3");
  expect(B(IR_MOD, B(IR_MUL, i, K(2)), K(6)), "(i%3)*2");
  expect(B(IR_MOD, B(IR_ADD, i, K(16)), K(16)), "i");
  expect(B(IR_IDIV, B(IR_ADD, i, K(16)), K(16)), "1");
  /* negative divisors become positive ones */
  expect(B(IR_MOD, i, K(-4)), "i%4");
  expect(B(IR_IDIV, i, K(-4)), "(i//4)*-1");
  /* all non-positive: C truncation still distributes */
  const ir_node *n = ir_var(c, IDX, "n", -15, 0), *m = ir_var(c, IDX, "m", -3, 0);
  ck_assert_ptr_eq(S(B(IR_IDIV, B(IR_ADD, B(IR_MUL, n, K(4)), m), K(4))), n);
  ck_assert_ptr_eq(S(B(IR_MOD, B(IR_ADD, B(IR_MUL, n, K(4)), m), K(4))), m);
  /* mixed signs must not be split: (-1*4 + 1)//4 == 0, not -1 */
  const ir_node *s = ir_var(c, IDX, "s", -2, 2);
  const ir_node *mixed = B(IR_ADD, B(IR_MUL, s, K(4)), j);
  same_values(B(IR_IDIV, mixed, K(4)), s, j);
  same_values(B(IR_MOD, mixed, K(4)), s, j);
  ck_assert_ptr_ne(S(B(IR_IDIV, mixed, K(4))), s);
  same_values(B(IR_IDIV, B(IR_IDIV, B(IR_ADD, s, K(-7)), K(2)), K(3)), s, j);
  same_values(B(IR_MOD, B(IR_MOD, B(IR_MUL, s, K(7)), K(6)), K(3)), s, j);
  /* wrapping dtypes: (b*4 + j)//4 on int8 must not become b when b*4 can wrap */
  const ir_node *b = ir_var(c, IR_DT_INT8, "b", 0, 100), *j8 = ir_var(c, IR_DT_INT8, "j8", 0, 3);
  const ir_node *k4 = ir_const_int(c, IR_DT_INT8, 4);
  const ir_node *w = B(IR_IDIV, B(IR_ADD, B(IR_MUL, b, k4), j8), k4);
  ck_assert_ptr_ne(S(w), b);
  same_values(w, b, j8);
  /* the divisor -128 has no positive int8 counterpart */
  const ir_node *full = ir_var(c, IR_DT_INT8, "full", -128, 127), *m128 = ir_const_int(c, IR_DT_INT8, -128);
  same_values(B(IR_IDIV, full, m128), full, j8);
  same_values(B(IR_MOD, full, m128), full, j8);
  const ir_node *b2 = ir_var(c, IR_DT_INT8, "b2", 0, 30);
  ck_assert_ptr_eq(S(B(IR_IDIV, B(IR_ADD, B(IR_MUL, b2, k4), j8), k4)), b2);
}
END_TEST

TCase *tcase_symbolic(void) {
  TCase *tc = tcase_create("symbolic");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_fold);
  tcase_add_test(tc, test_identities);
  tcase_add_test(tc, test_canonical);
  tcase_add_test(tc, test_bounds);
  tcase_add_test(tc, test_divmod);
  return tc;
}
