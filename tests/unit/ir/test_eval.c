/* tests/unit/ir/test_eval.c: ir_eval semantics: C truncating division, wrapping, shifts, errors. */
#include <string.h>

#include "test_ir.h"

/* Evaluates op(a, b) on constants of dtype dt. */
static int64_t ev2(ir_ctx *c, enum ir_op op, ir_dtype dt, int64_t a, int64_t b) {
  int64_t out = 0x5a5a;
  const ir_node *e = ir_alu2(c, op, ir_const_int(c, dt, a), ir_const_int(c, dt, b));
  ck_assert_msg(ir_eval(c, e, NULL, NULL, &out) == 0, "%s", ir_error(c));
  return out;
}

START_TEST(test_eval_division) {
  ir_ctx *c = ir_new();
  const ir_dtype I = IR_DT_INT32, X = IR_DT_INDEX;
  ck_assert_int_eq(ev2(c, IR_IDIV, I, -7, 2), -3);
  ck_assert_int_eq(ev2(c, IR_MOD, I, -7, 2), -1);
  ck_assert_int_eq(ev2(c, IR_IDIV, I, 7, -2), -3);
  ck_assert_int_eq(ev2(c, IR_MOD, I, 7, -2), 1);
  ck_assert_int_eq(ev2(c, IR_IDIV, I, -7, -2), 3);
  ck_assert_int_eq(ev2(c, IR_MOD, I, -7, -2), -1);
  ck_assert_int_eq(ev2(c, IR_IDIV, I, INT32_MIN, -1), INT32_MIN); /* wraps */
  ck_assert_int_eq(ev2(c, IR_MOD, I, INT32_MIN, -1), 0);
  ck_assert_int_eq(ev2(c, IR_IDIV, X, INT64_MIN, -1), INT64_MIN);
  ck_assert_int_eq(ev2(c, IR_MOD, X, INT64_MIN, -1), 0);
  ck_assert_int_eq(ev2(c, IR_IDIV, IR_DT_UINT8, 250, 7), 35);
  ck_assert_int_eq(ev2(c, IR_IDIV, IR_DT_UINT64, -1, 2), INT64_MAX); /* unsigned division of 2^64-1 */
  ck_assert_int_eq(ev2(c, IR_MOD, IR_DT_UINT64, -1, 10), 5);
  int64_t out;
  ck_assert_int_eq(ir_eval(c, ir_alu2(c, IR_IDIV, ir_const_int(c, I, 1), ir_const_int(c, I, 0)), NULL, NULL, &out), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "division by zero"));
  ck_assert_int_eq(ir_eval(c, ir_alu2(c, IR_MOD, ir_const_int(c, I, 1), ir_const_int(c, I, 0)), NULL, NULL, &out), -1);
  ir_free(c);
}
END_TEST

START_TEST(test_eval_wrap) {
  ir_ctx *c = ir_new();
  ck_assert_int_eq(ev2(c, IR_ADD, IR_DT_INT32, INT32_MAX, 1), INT32_MIN);
  ck_assert_int_eq(ev2(c, IR_SUB, IR_DT_INT32, INT32_MIN, 1), INT32_MAX);
  ck_assert_int_eq(ev2(c, IR_MUL, IR_DT_INT8, 100, 3), 44);
  ck_assert_int_eq(ev2(c, IR_MUL, IR_DT_INT8, 100, -3), -44);
  ck_assert_int_eq(ev2(c, IR_SUB, IR_DT_UINT8, 0, 1), 255);
  ck_assert_int_eq(ev2(c, IR_ADD, IR_DT_UINT16, 65535, 2), 1);
  ck_assert_int_eq(ev2(c, IR_MUL, IR_DT_INDEX, INT64_MAX, 2), -2);
  ck_assert_int_eq(ev2(c, IR_ADD, IR_DT_UINT64, -1, 1), 0);
  ck_assert_int_eq(ev2(c, IR_ADD, IR_DT_BOOL, 1, 1), 1); /* bool results are 0/1 */
  int64_t out;
  ck_assert_int_eq(ir_eval(c, ir_alu1(c, IR_NEG, ir_const_int(c, IR_DT_INT16, INT16_MIN)), NULL, NULL, &out), 0);
  ck_assert_int_eq(out, INT16_MIN);
  ck_assert_int_eq(ir_eval(c, ir_cast(c, IR_DT_INT8, ir_const_int(c, IR_DT_INT32, 300)), NULL, NULL, &out), 0);
  ck_assert_int_eq(out, 44);
  ck_assert_int_eq(ir_eval(c, ir_cast(c, IR_DT_UINT8, ir_const_int(c, IR_DT_INT32, -1)), NULL, NULL, &out), 0);
  ck_assert_int_eq(out, 255);
  ck_assert_int_eq(ir_eval(c, ir_cast(c, IR_DT_BOOL, ir_const_int(c, IR_DT_INT32, 256)), NULL, NULL, &out), 0);
  ck_assert_int_eq(out, 1);
  ck_assert_int_eq(ir_eval(c, ir_cast(c, IR_DT_INT64, ir_const_int(c, IR_DT_UINT32, -1)), NULL, NULL, &out), 0);
  ck_assert_int_eq(out, 4294967295LL);
  ir_free(c);
}
END_TEST

START_TEST(test_eval_shifts_compares) {
  ir_ctx *c = ir_new();
  ck_assert_int_eq(ev2(c, IR_SHR, IR_DT_INT32, -8, 1), -4);                 /* arithmetic */
  ck_assert_int_eq(ev2(c, IR_SHR, IR_DT_UINT32, 0xFFFFFFF0LL, 4), 0x0FFFFFFF); /* logical */
  ck_assert_int_eq(ev2(c, IR_SHR, IR_DT_UINT64, -1, 60), 15);
  ck_assert_int_eq(ev2(c, IR_SHL, IR_DT_INT32, 1, 31), INT32_MIN);
  ck_assert_int_eq(ev2(c, IR_SHL, IR_DT_INT8, 3, 6), -64);
  ck_assert_int_eq(ev2(c, IR_SHL, IR_DT_INT32, 1, 32), 0);   /* amounts >= width shift everything out */
  ck_assert_int_eq(ev2(c, IR_SHR, IR_DT_INT32, -5, 40), -1);
  ck_assert_int_eq(ev2(c, IR_SHR, IR_DT_INT32, 5, -1), 0);   /* negative amount reads as huge */
  ck_assert_int_eq(ev2(c, IR_CMPLT, IR_DT_INT32, -1, 1), 1);
  ck_assert_int_eq(ev2(c, IR_CMPLT, IR_DT_UINT32, -1, 1), 0); /* 0xffffffff < 1 is false */
  ck_assert_int_eq(ev2(c, IR_CMPLT, IR_DT_UINT64, 1, -1), 1);
  ck_assert_int_eq(ev2(c, IR_CMPNE, IR_DT_INT32, 3, 3), 0);
  ck_assert_int_eq(ev2(c, IR_CMPEQ, IR_DT_INT32, 3, 3), 1);
  ck_assert_int_eq(ev2(c, IR_MAX, IR_DT_INT32, -5, 3), 3);
  ck_assert_int_eq(ev2(c, IR_MAX, IR_DT_UINT64, -5, 3), -5);  /* 2^64-5 is the larger */
  ck_assert_int_eq(ev2(c, IR_AND, IR_DT_INT32, -4, 7), 4);
  ck_assert_int_eq(ev2(c, IR_OR, IR_DT_INT8, 0x40, -128), -64);
  ck_assert_int_eq(ev2(c, IR_XOR, IR_DT_UINT8, 0xff, 0x0f), 0xf0);
  ir_free(c);
}
END_TEST

START_TEST(test_eval_vars_errors) {
  ir_ctx *c = ir_new();
  const ir_node *i = ir_var(c, IR_DT_INDEX, "i", -5, 5), *j = ir_var(c, IR_DT_INDEX, "j", 0, 3);
  const ir_node *e = ir_alu3(c, IR_WHERE, ir_alu2(c, IR_CMPLT, i, j), ir_alu2(c, IR_MUL, i, j), ir_alu2(c, IR_SUB, i, j));
  const ir_node *vars[] = {i, j};
  int64_t vals[] = {-2, 3}, out;
  test_env env = {vars, vals, 2};
  ck_assert_int_eq(ir_eval(c, e, test_lookup, &env, &out), 0);
  ck_assert_int_eq(out, -6);
  // cppcheck-suppress unreadVariable
  vals[0] = 4; /* read through env */
  ck_assert_int_eq(ir_eval(c, e, test_lookup, &env, &out), 0);
  ck_assert_int_eq(out, 1);
  env.n = 1;
  ck_assert_int_eq(ir_eval(c, e, test_lookup, &env, &out), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "'j'"));
  ck_assert_ptr_nonnull(strstr(ir_error(c), "not bound"));
  ck_assert_int_eq(ir_eval(c, e, NULL, NULL, &out), -1);
  /* variable values are truncated to the variable's dtype */
  const ir_node *b = ir_var(c, IR_DT_INT8, "b", -128, 127);
  int64_t big = 200;
  test_env env2 = {&b, &big, 1};
  ck_assert_int_eq(ir_eval(c, b, test_lookup, &env2, &out), 0);
  ck_assert_int_eq(out, -56);
  /* not integer */
  const ir_node *f = ir_alu2(c, IR_ADD, ir_const_float(c, IR_DT_FLOAT32, 1), ir_const_float(c, IR_DT_FLOAT32, 2));
  ck_assert_int_eq(ir_eval(c, f, NULL, NULL, &out), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "CONST"));
  ck_assert_int_eq(ir_eval(c, ir_cast(c, IR_DT_INT32, f), NULL, NULL, &out), -1);
  ir_free(c);
}
END_TEST

TCase *tcase_eval(void) {
  TCase *tc = tcase_create("eval");
  tcase_add_test(tc, test_eval_division);
  tcase_add_test(tc, test_eval_wrap);
  tcase_add_test(tc, test_eval_shifts_compares);
  tcase_add_test(tc, test_eval_vars_errors);
  return tc;
}
