/* tests/unit/onnx/test_onnx_parse.c: the ONNX front end's load and run errors on hand-built model bytes (a truncated
 * protobuf, wrong wire types, a missing initializer, an unknown operator, a wrong input count, attributes of the
 * wrong type, short raw_data, sequence inputs), each with its message; and a valid model computing on CPU. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../check_helpers.h"
#include "baregpu/onnx.h"
#include "baregpu/tensor.h"
#include "pb_build.h"

static bg_tctx *c;
static void setup(void) { OK(bg_tctx_open("CPU", &c)); }
static void teardown(void) { bg_tctx_close(c); }

/* y = op(x[, w]) over float x of 4 elements; w an initializer of 4 floats when with_w. */
static void model_unary(pb *m, const char *op, const pb *attr, int ninputs, bool with_w, int64_t opset) {
  pb g = {0};
  const char *in2[] = {"x", "w", NULL}, *in1[] = {"x", NULL}, *out[] = {"y", NULL};
  pb_node(&g, op, ninputs == 2 ? in2 : in1, out, attr, attr ? 1 : 0);
  pb_str(&g, 2, "g");
  if (with_w) {
    pb t = {0};
    float w[4] = {1, 2, 3, 4};
    pb_int(&t, 1, 4);
    pb_int(&t, 2, 1);
    pb_str(&t, 8, "w");
    pb_bytes(&t, 9, w, sizeof w);
    pb_msg(&g, 5, &t);
  }
  pb_value_info(&g, 11, "x", 1, 4);
  pb_value_info(&g, 12, "y", 1, 4);
  pb_model(m, &g, opset);
}

static int load(const pb *m, bg_onnx_model **out) { return bg_onnx_load_buffer(c, m->b, m->n, "t.onnx", NULL, out); }

static int run1(bg_onnx_model *mo, const float *x, float *y) {
  int64_t sh[1] = {4};
  bg_tensor *in = bg_tn_from(c, BG_FLOAT32, 1, sh, x), *out;
  int r = bg_onnx_run(mo, &in, 1, &out);
  if (r < 0) return r;
  return bg_tn_read(out, y, 4 * sizeof *y);
}

START_TEST(valid_model_runs) {
  pb m = {0};
  model_unary(&m, "Add", NULL, 2, true, 13);
  bg_onnx_model *mo;
  OK(load(&m, &mo));
  ck_assert_uint_eq(bg_onnx_num_inputs(mo), 1);   /* the initializer is no input */
  ck_assert_str_eq(bg_onnx_input_name(mo, 0), "x");
  ck_assert_str_eq(bg_onnx_output_name(mo, 0), "y");
  enum bg_dtype dt;
  unsigned nd;
  const int64_t *sh;
  OK(bg_onnx_input_info(mo, 0, &dt, &nd, &sh));
  ck_assert_int_eq(dt, BG_FLOAT32);
  ck_assert_uint_eq(nd, 1);
  ck_assert_int_eq(sh[0], 4);
  float x[4] = {0.5f, -1, 2, 10}, y[4];
  OK(run1(mo, x, y));
  for (int i = 0; i < 4; i++) ck_assert_float_eq(y[i], x[i] + (float)(i + 1));
  bg_onnx_free(mo);
}
END_TEST

START_TEST(truncated_protobuf) {
  pb m = {0};
  model_unary(&m, "Relu", NULL, 1, false, 13);
  bg_onnx_model *mo = (bg_onnx_model *)1;
  for (size_t cut = 1; cut < m.n; cut += 7) {
    int r = bg_onnx_load_buffer(c, m.b, m.n - cut, "cut.onnx", NULL, &mo);
    ck_assert_msg(r < 0, "cut %zu loaded", cut);
    ck_assert_ptr_null(mo);
    ck_assert_msg(strstr(bg_last_error(), "cut.onnx"), "message '%s' lacks the file", bg_last_error());
  }
  FAILS(bg_onnx_load_buffer(c, m.b, m.n - 1, "cut.onnx", NULL, &mo), BG_EFORMAT, "truncated or malformed protobuf");
}
END_TEST

START_TEST(wrong_wire_type) {
  /* ModelProto.graph (field 7) as a varint instead of a message */
  pb m = {0};
  pb_int(&m, 1, 8);
  pb_int(&m, 7, 5);
  bg_onnx_model *mo;
  FAILS(load(&m, &mo), BG_EFORMAT, "not a valid ONNX ModelProto");
  /* no graph at all */
  pb m2 = {0};
  pb_int(&m2, 1, 8);
  FAILS(load(&m2, &mo), BG_EFORMAT, "ModelProto.graph (field 7) is missing");
}
END_TEST

START_TEST(missing_initializer) {
  pb m = {0};
  model_unary(&m, "Add", NULL, 2, false, 13);
  bg_onnx_model *mo;
  FAILS(load(&m, &mo), BG_EFORMAT, "node 0 (Add 'n0'): input 1 'w' is neither a graph input, an initializer");
}
END_TEST

START_TEST(unknown_op) {
  pb m = {0};
  model_unary(&m, "FooBar", NULL, 1, false, 13);
  bg_onnx_model *mo;
  FAILS(load(&m, &mo), BG_ENOTSUP, "unknown operator FooBar");
  ck_assert_msg(!strncmp(bg_last_error(), "unsupported: ", 13), "'%s'", bg_last_error());
  /* known, but not at this opset (LayerNormalization appeared in 17) */
  pb m2 = {0};
  model_unary(&m2, "LayerNormalization", NULL, 2, true, 13);
  FAILS(load(&m2, &mo), BG_ENOTSUP, "LayerNormalization at opset 13");
}
END_TEST

START_TEST(wrong_input_count) {
  pb m = {0};
  model_unary(&m, "Relu", NULL, 2, true, 13);
  bg_onnx_model *mo;
  FAILS(load(&m, &mo), BG_EFORMAT, "node 0 (Relu 'n0'): 2 inputs, expected 1 to 1");
}
END_TEST

START_TEST(bad_attribute_type) {
  pb a = {0};   /* LeakyRelu alpha as an INT (type 2) instead of a FLOAT */
  pb_str(&a, 1, "alpha");
  pb_int(&a, 20, 2);
  pb_int(&a, 3, 1);
  pb m = {0};
  model_unary(&m, "LeakyRelu", &a, 1, false, 13);
  bg_onnx_model *mo;
  OK(load(&m, &mo));
  float x[4] = {1, -1, 2, -2}, y[4];
  FAILS(run1(mo, x, y), BG_EFORMAT, "node 0 (LeakyRelu 'n0'): attribute 'alpha' has type INT, expected FLOAT");
  bg_onnx_free(mo);
  /* the same attribute as a FLOAT works: alpha 0.5 */
  pb a2 = {0};
  pb_str(&a2, 1, "alpha");
  pb_int(&a2, 20, 1);
  pb_float(&a2, 2, 0.5f);
  pb m2 = {0};
  model_unary(&m2, "LeakyRelu", &a2, 1, false, 13);
  OK(load(&m2, &mo));
  OK(run1(mo, x, y));
  ck_assert_float_eq(y[0], 1);
  ck_assert_float_eq(y[1], -0.5f);
  ck_assert_float_eq(y[3], -1);
  bg_onnx_free(mo);
}
END_TEST

START_TEST(short_raw_data) {
  pb g = {0}, t = {0}, m = {0};
  const char *in[] = {"x", "w", NULL}, *out[] = {"y", NULL};
  pb_node(&g, "Add", in, out, NULL, 0);
  float w[3] = {1, 2, 3};
  pb_int(&t, 1, 4);
  pb_int(&t, 2, 1);
  pb_str(&t, 8, "w");
  pb_bytes(&t, 9, w, sizeof w);   /* 12 bytes for 4 floats */
  pb_msg(&g, 5, &t);
  pb_value_info(&g, 11, "x", 1, 4);
  pb_value_info(&g, 12, "y", 1, 4);
  pb_model(&m, &g, 13);
  bg_onnx_model *mo;
  FAILS(load(&m, &mo), BG_EFORMAT, "initializer 0 'w': TensorProto.raw_data has 12 bytes, expected 16");
}
END_TEST

START_TEST(sequence_input_unsupported) {
  pb g = {0}, m = {0}, vi = {0}, type = {0}, seq = {0};
  const char *in[] = {"x", NULL}, *out[] = {"y", NULL};
  pb_node(&g, "Identity", in, out, NULL, 0);
  pb_msg(&type, 4, &seq);   /* TypeProto.sequence_type */
  pb_str(&vi, 1, "x");
  pb_msg(&vi, 2, &type);
  pb_msg(&g, 11, &vi);
  pb_value_info(&g, 12, "y", 1, 4);
  pb_model(&m, &g, 13);
  bg_onnx_model *mo;
  OK(load(&m, &mo));
  FAILS(bg_onnx_input_info(mo, 0, NULL, NULL, NULL), BG_ENOTSUP, "graph input 'x' is a sequence");
  bg_tensor *outs[1];
  bg_tensor *x = bg_tn_zeros(c, BG_FLOAT32, 0, NULL);
  FAILS(bg_onnx_run(mo, &x, 1, outs), BG_ENOTSUP, "unsupported: ");
  bg_onnx_free(mo);
}
END_TEST

START_TEST(string_tensor_unsupported) {
  pb g = {0}, t = {0}, m = {0};
  const char *in[] = {"x", "w", NULL}, *out[] = {"y", NULL};
  pb_node(&g, "Add", in, out, NULL, 0);
  pb_int(&t, 1, 1);
  pb_int(&t, 2, 8);   /* STRING */
  pb_str(&t, 8, "w");
  pb_str(&t, 6, "hello");
  pb_msg(&g, 5, &t);
  pb_value_info(&g, 11, "x", 1, 4);
  pb_value_info(&g, 12, "y", 1, 4);
  pb_model(&m, &g, 13);
  bg_onnx_model *mo;
  FAILS(load(&m, &mo), BG_ENOTSUP, "initializer 0 'w': TensorProto.data_type 8 (STRING) is a string tensor");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("onnx");
  TCase *t = tcase_create("parse");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 120);
  tcase_add_test(t, valid_model_runs);
  tcase_add_test(t, truncated_protobuf);
  tcase_add_test(t, wrong_wire_type);
  tcase_add_test(t, missing_initializer);
  tcase_add_test(t, unknown_op);
  tcase_add_test(t, wrong_input_count);
  tcase_add_test(t, bad_attribute_type);
  tcase_add_test(t, short_raw_data);
  tcase_add_test(t, sequence_input_unsupported);
  tcase_add_test(t, string_tensor_unsupported);
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
