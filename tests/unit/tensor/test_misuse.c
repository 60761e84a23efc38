/* tests/unit/tensor/test_misuse.c: misuse of the tensor API leaves a message. A NULL operand next to a valid one
 * latches "<op>: tensor argument '<name>' is NULL" on the valid operand's context (bg_tctx_error) and in
 * bg_last_error(), and returns the error tensor; with no tensor at all there is no context, so the call returns
 * NULL with the message in bg_last_error(). bg_tn_cat with n = 0 (or a NULL array) is such an error. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tctx_fixture.h"

/* The context latched a message containing needle, and bg_last_error() holds it too; then clear both. */
static void latched(const char *needle) {
  const char *e = bg_tctx_error(c);
  ck_assert_msg(e != NULL, "no error latched (expected '%s')", needle);
  ck_assert_msg(strstr(e, needle) != NULL, "latched '%s' lacks '%s'", e, needle);
  ck_assert_msg(strstr(bg_last_error(), needle) != NULL, "bg_last_error '%s' lacks '%s'", bg_last_error(), needle);
  bg_tctx_clear_error(c);
  bg_clear_error();
}

/* No context to latch on: NULL and the message in bg_last_error(). */
static void no_context(bg_tensor *r, const char *needle) {
  ck_assert_ptr_null(r);
  ck_assert_msg(strstr(bg_last_error(), needle) != NULL, "bg_last_error '%s' lacks '%s'", bg_last_error(), needle);
  bg_clear_error();
}

static bg_tensor *mat(void) {
  const int64_t sh[2] = {2, 2};
  return bg_tn_zeros(c, BG_FLOAT32, 2, sh);
}

START_TEST(matmul_null_operand) {
  bg_tensor *x = mat();
  ck_assert_ptr_eq(bg_tn_matmul(NULL, x), bg_tn_matmul(NULL, x)); /* the error tensor, both times */
  latched("matmul: tensor argument 'a' is NULL");
  bg_tn_matmul(x, NULL);
  latched("matmul: tensor argument 'b' is NULL");
  no_context(bg_tn_matmul(NULL, NULL), "matmul: tensor argument 'a' is NULL");
  /* The error tensor passes through and realize says why. */
  bg_tensor *y = bg_tn_add(bg_tn_matmul(NULL, x), x);
  ck_assert_int_eq(bg_tn_realize(&y, 1), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_tctx_error(c), "matmul: tensor argument 'a' is NULL"));
}
END_TEST

START_TEST(other_ops_null_operand) {
  bg_tensor *x = mat();
  bg_tn_add(x, NULL);
  latched("add: tensor argument 'b' is NULL");
  bg_tn_where(x, NULL, x);
  latched("where: tensor argument 'x' is NULL");
  no_context(bg_tn_exp(NULL), "exp: tensor argument 'a' is NULL");
  no_context(bg_tn_sqrt(NULL), "sqrt: tensor argument 'a' is NULL");
  no_context(bg_tn_sum(NULL, BG_ALL_AXES, false), "sum: tensor argument 'a' is NULL");
  const int64_t sh[1] = {4};
  no_context(bg_tn_reshape(NULL, 1, sh), "reshape: tensor argument 'a' is NULL");
  no_context(bg_tn_contiguous(NULL), "contiguous: tensor argument 'a' is NULL");
}
END_TEST

START_TEST(cat_misuse) {
  bg_tensor *x = mat();
  bg_tensor *ts[2] = {x, x};
  no_context(bg_tn_cat(ts, 0, 0), "cat: n is 0, expected at least one tensor");
  no_context(bg_tn_cat(NULL, 2, 0), "cat: the tensor array is NULL");
  bg_tensor *none[2] = {NULL, NULL};
  no_context(bg_tn_cat(none, 2, 0), "cat: all 2 tensors are NULL");
  /* A NULL first tensor next to a valid one: latched on the valid one's context. */
  bg_tensor *first_null[2] = {NULL, x};
  bg_tn_cat(first_null, 2, 0);
  latched("cat: tensor 0 is NULL");
  /* A correct cat still works. */
  bg_tensor *y = bg_tn_cat(ts, 2, 0);
  OK(bg_tn_realize(&y, 1));
  ck_assert_ptr_null(bg_tctx_error(c));
}
END_TEST

int main(void) {
  Suite *s = suite_create("tensor-misuse");
  TCase *t = tcase_create("misuse");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 120);
  tcase_add_test(t, matmul_null_operand);
  tcase_add_test(t, other_ops_null_operand);
  tcase_add_test(t, cat_misuse);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
