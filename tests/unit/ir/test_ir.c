/* tests/unit/ir/test_ir.c: the ir suite's main and the core cases: tables, interning, walks,
 * the rewrite engine, substitution, printing and verification. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "test_ir.h"

bool test_lookup(void *user, const ir_node *var, int64_t *value) {
  const test_env *e = user;
  for (size_t i = 0; i < e->n; i++)
    if (e->vars[i] == var) {
      *value = e->vals[i];
      return true;
    }
  return false;
}

#define I32 ((ir_dtype)IR_DT_INT32)
#define IDX ((ir_dtype)IR_DT_INDEX)

static const ir_node *k32(ir_ctx *c, int64_t v) { return ir_const_int(c, I32, v); }

/* ---- tables ---- */

START_TEST(test_tables) {
  ck_assert_str_eq(ir_op_name(IR_ADD), "ADD");
  ck_assert_str_eq(ir_op_name(IR_DEFINE_VAR), "DEFINE_VAR");
  ck_assert_int_eq(ir_op_nsrc(IR_WHERE), 3);
  ck_assert_int_eq(ir_op_nsrc(IR_SINK), -1);
  ck_assert_int_eq(ir_op_group(IR_CMPLT), IR_G_ALU2);
  ck_assert_int_eq(ir_op_arg_kind(IR_CONST), IR_ARG_SCALAR);
  ck_assert_int_eq(ir_op_arg_kind(IR_DEFINE_VAR), IR_ARG_BLOB);
  ck_assert_str_eq(ir_scalar_name(IR_DT_FLOAT32), "float32");
  ck_assert_str_eq(ir_scalar_name(IR_DT_INT32), "int32");
  ck_assert_str_eq(ir_scalar_name(IR_DT_INDEX), "index");
  /* every lowercase name is its .def name */
  static const char *const upper[] = {
#define IR_DTYPE(name, ctype, size, kind) #name,
#include "ir/ir_dtypes.def"
#undef IR_DTYPE
  };
  for (int s = 0; s < IR_DT_COUNT; s++) ck_assert_int_eq(strcasecmp(ir_scalar_name((enum ir_scalar)s), upper[s]), 0);
  ck_assert_uint_eq(ir_scalar_size(IR_DT_INT16), 2);
  ck_assert_uint_eq(ir_scalar_size(IR_DT_INDEX), 8);
  ck_assert(ir_scalar_is_int(IR_DT_UINT8) && !ir_scalar_is_signed(IR_DT_UINT8));
  ck_assert(ir_scalar_is_int(IR_DT_INDEX) && ir_scalar_is_signed(IR_DT_INDEX));
  ck_assert(!ir_scalar_is_int(IR_DT_BOOL) && !ir_scalar_is_float(IR_DT_BOOL));
  ck_assert(ir_scalar_is_float(IR_DT_BFLOAT16) && !ir_scalar_is_int(IR_DT_FLOAT64));
}
END_TEST

/* ---- interning ---- */

START_TEST(test_intern_identity) {
  ir_ctx *c = ir_new();
  const ir_node *x = ir_var(c, IDX, "x", 0, 10), *x2 = ir_var(c, IDX, "x", 0, 10);
  ck_assert_ptr_eq(x, x2);
  ck_assert_ptr_ne(x, ir_var(c, IDX, "x", 0, 11));
  ck_assert_ptr_ne(x, ir_var(c, I32, "x", 0, 10));
  ck_assert_ptr_eq(k32(c, 5), k32(c, 5));
  ck_assert_ptr_ne(k32(c, 5), k32(c, 6));
  ck_assert_ptr_ne(k32(c, 5), ir_const_int(c, IDX, 5));
  const ir_node *a = ir_alu2(c, IR_ADD, x, ir_const_int(c, IDX, 1));
  ck_assert_ptr_eq(a, ir_alu2(c, IR_ADD, x, ir_const_int(c, IDX, 1)));
  ck_assert_ptr_ne(a, ir_alu2(c, IR_SUB, x, ir_const_int(c, IDX, 1)));
  /* an argument of an op without one does not split nodes */
  ir_arg junk = {.i = 42};
  const ir_node *src[2] = {x, ir_const_int(c, IDX, 1)};
  ck_assert_ptr_eq(ir_intern(c, IR_ADD, IDX, junk, 2, src), a);
  /* floats by bits: 0.0 and -0.0 differ, NaN equals itself */
  ck_assert_ptr_ne(ir_const_float(c, IR_DT_FLOAT32, 0.0), ir_const_float(c, IR_DT_FLOAT32, -0.0));
  ck_assert_ptr_eq(ir_const_float(c, IR_DT_FLOAT64, NAN), ir_const_float(c, IR_DT_FLOAT64, NAN));
  ck_assert_ptr_eq(ir_const_float(c, IR_DT_FLOAT32, 0.1), ir_const_float(c, IR_DT_FLOAT32, (float)0.1));
  /* blobs */
  const ir_blob *b1 = ir_blob_intern(c, "abc", 3), *b2 = ir_blob_intern(c, "abc", 3);
  ck_assert_ptr_eq(b1, b2);
  ck_assert_ptr_ne(b1, ir_blob_intern(c, "abd", 3));
  ck_assert_ptr_ne(b1, ir_blob_intern(c, "abc", 2));
  ck_assert_ptr_eq(ir_blob_intern(c, NULL, 0), ir_blob_intern(c, "", 0));
  ck_assert_uint_eq(b1->size, 3);
  ck_assert_int_eq(memcmp(b1->data, "abc", 3), 0);
  ir_free(c);
}
END_TEST

START_TEST(test_intern_ids_and_growth) {
  ir_ctx *c = ir_new();
  ck_assert_uint_eq(ir_node_count(c), 0);
  const ir_node *first = k32(c, 0);
  ck_assert_uint_eq(first->id, 0);
  enum { N = 200000 };
  for (int i = 1; i < N; i++) ck_assert_uint_eq(k32(c, i)->id, (uint32_t)i);
  ck_assert_uint_eq(ir_node_count(c), N);
  for (int i = 0; i < N; i += 997) ck_assert_uint_eq(k32(c, i)->id, (uint32_t)i); /* found again after rehashes */
  ck_assert_uint_eq(ir_node_count(c), N);
  char name[16];
  for (int i = 0; i < 5000; i++) {
    snprintf(name, sizeof name, "v%d", i);
    ck_assert_ptr_eq(ir_blob_intern(c, name, strlen(name)), ir_blob_intern(c, name, strlen(name)));
  }
  ir_free(c);
}
END_TEST

START_TEST(test_constructors) {
  ir_ctx *c = ir_new();
  int64_t v;
  ck_assert(ir_is_const(ir_const_int(c, IR_DT_INT8, 300), &v) && v == 44);
  ck_assert(ir_is_const(ir_const_int(c, IR_DT_INT8, 200), &v) && v == -56);
  ck_assert(ir_is_const(ir_const_int(c, IR_DT_UINT8, -1), &v) && v == 255);
  ck_assert(ir_is_const(ir_const_int(c, IR_DT_UINT32, -1), &v) && v == 4294967295LL);
  ck_assert(ir_is_const(ir_const_int(c, IR_DT_INT32, 0x180000000LL), &v) && v == INT32_MIN);
  ck_assert(ir_is_const(ir_const_int(c, IR_DT_INDEX, INT64_MIN), &v) && v == INT64_MIN);
  ck_assert(ir_is_const(ir_const_bool(c, true), &v) && v == 1);
  ck_assert(!ir_is_const(ir_const_float(c, IR_DT_FLOAT32, 1.0), &v));
  const ir_node *x = ir_var(c, I32, "x", -3, 4);
  const ir_var_info *vi = ir_var_get(x);
  ck_assert_ptr_nonnull(vi);
  ck_assert_int_eq(vi->min, -3);
  ck_assert_int_eq(vi->max, 4);
  ck_assert_str_eq(vi->name, "x");
  ck_assert_ptr_null(ir_var_get(k32(c, 1)));
  ck_assert_ptr_null(ir_var(c, I32, "bad", 5, 4));
  ck_assert_ptr_nonnull(strstr(ir_error(c), "empty range"));
  /* dtype inference */
  const ir_node *lt = ir_alu2(c, IR_CMPLT, x, k32(c, 0));
  ck_assert_uint_eq(lt->dt, IR_DT_BOOL);
  ck_assert_uint_eq(ir_alu3(c, IR_WHERE, lt, ir_const_int(c, IR_DT_INT8, 1), ir_const_int(c, IR_DT_INT8, 2))->dt,
                    IR_DT_INT8);
  ck_assert_uint_eq(ir_alu2(c, IR_MUL, x, x)->dt, I32);
  ck_assert_uint_eq(ir_alu1(c, IR_NEG, x)->dt, I32);
  ck_assert_uint_eq(ir_cast(c, IR_DT_INT8, x)->dt, IR_DT_INT8);
  ck_assert_uint_eq(ir_cast(c, IR_DT_INT8, x)->op, IR_CAST);
  ir_dtype v4 = IR_DT_VEC(IR_DT_FLOAT32, 4);
  const ir_node *fv = ir_const_float(c, v4, 1.0);
  ck_assert_uint_eq(ir_alu2(c, IR_CMPLT, fv, fv)->dt, IR_DT_VEC(IR_DT_BOOL, 4));
  /* wrong arity for the constructor, NULL propagation */
  ck_assert_ptr_null(ir_alu2(c, IR_NEG, x, x));
  ck_assert_ptr_nonnull(strstr(ir_error(c), "NEG"));
  ck_assert_ptr_null(ir_alu2(c, IR_ADD, NULL, x));
  ck_assert_ptr_null(ir_alu1(c, IR_NEG, NULL));
  ir_free(c);
}
END_TEST

/* ---- walks ---- */

START_TEST(test_toposort) {
  ir_ctx *c = ir_new();
  const ir_node *x = ir_var(c, IDX, "x", 0, 9), *y = ir_var(c, IDX, "y", 0, 9);
  const ir_node *s = ir_alu2(c, IR_ADD, x, y), *m = ir_alu2(c, IR_MUL, s, x);
  const ir_node *root = ir_alu2(c, IR_SUB, m, s); /* diamond: s and x shared */
  const ir_node *const *order;
  size_t n = ir_toposort(c, root, &order);
  ck_assert_uint_eq(n, 5);
  ck_assert_ptr_eq(order[n - 1], root);
  for (size_t i = 0; i < n; i++) {
    for (size_t j = i + 1; j < n; j++) ck_assert_ptr_ne(order[i], order[j]);
    for (unsigned k = 0; k < order[i]->nsrc; k++) {
      size_t p = 0;
      while (order[p] != order[i]->src[k]) p++;
      ck_assert_uint_lt(p, i);
    }
  }
  /* first-visit order of leaves: x then y */
  ck_assert_ptr_eq(order[0], x);
  ck_assert_ptr_eq(order[1], y);
  const ir_node *vars[4];
  ck_assert_uint_eq(ir_vars(c, root, vars, 4), 2);
  ck_assert_ptr_eq(vars[0], x);
  ck_assert_ptr_eq(vars[1], y);
  ck_assert_uint_eq(ir_vars(c, root, vars, 1), 2); /* count beyond max */
  ck_assert_uint_eq(ir_vars(c, y, NULL, 0), 1);
  ck_assert_ptr_eq(order[n - 1], root); /* ir_vars left the toposort buffer alone */
  ir_free(c);
}
END_TEST

START_TEST(test_deep_graph) {
  /* 300k deep chain: walks, rewrite, eval, bounds and printing must not recurse */
  ir_ctx *c = ir_new();
  const ir_node *x = ir_var(c, IDX, "x", 0, 3), *e = x, *zero = ir_const_int(c, IDX, 0);
  enum { DEPTH = 300000 };
  for (int i = 0; i < DEPTH; i++) e = ir_alu2(c, IR_ADD, ir_alu2(c, IR_ADD, e, zero), ir_const_int(c, IDX, 1));
  const ir_node *const *order;
  ck_assert_uint_eq(ir_toposort(c, e, &order), 2 * (size_t)DEPTH + 3); /* x, 0, 1 and two ADDs a level */
  ck_assert_int_eq(ir_vmin(c, e), DEPTH);
  ck_assert_int_eq(ir_vmax(c, e), DEPTH + 3);
  int64_t v = 2, out;
  test_env env = {&x, &v, 1};
  ck_assert_int_eq(ir_eval(c, e, test_lookup, &env, &out), 0);
  ck_assert_int_eq(out, DEPTH + 2);
  const ir_node *s = ir_simplify(c, e);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_eq(s, ir_alu2(c, IR_ADD, x, ir_const_int(c, IDX, DEPTH)));
  ck_assert_int_eq(ir_verify(c, e), 0);
  size_t len = ir_render_expr(e, NULL, 0);
  ck_assert_uint_gt(len, 4 * (size_t)DEPTH);
  FILE *f = fopen("/dev/null", "w");
  ck_assert_int_eq(ir_print(c, e, f), 0);
  fclose(f);
  ir_free(c);
}
END_TEST

/* ---- rewrite engine ---- */

/* MUL(x, k>1) -> ADD(MUL(x, k-1), x); ADD(const, const) -> const. Reaching CONST 15 from 3*5 needs
 * the replacements and their new sources to be rewritten again and again. */
static const ir_node *r_unroll_mul(ir_rewriter *rw, const ir_node *u) {
  int64_t k;
  if (u->op != IR_MUL || !ir_is_const(u->src[1], &k) || k <= 1) return NULL;
  ir_ctx *c = ir_rw_ctx(rw);
  return ir_alu2(c, IR_ADD, ir_alu2(c, IR_MUL, u->src[0], ir_const_int(c, u->dt, k - 1)), u->src[0]);
}
static const ir_node *r_mul1(ir_rewriter *rw, const ir_node *u) {
  (void)rw;
  return u->op == IR_MUL && ir_is_const(u->src[1], NULL) && u->src[1]->arg.i == 1 ? u->src[0] : NULL;
}
static const ir_node *r_add_consts(ir_rewriter *rw, const ir_node *u) {
  int64_t a, b;
  if (u->op != IR_ADD || !ir_is_const(u->src[0], &a) || !ir_is_const(u->src[1], &b)) return NULL;
  ++*(int *)ir_rw_user(rw);
  return ir_const_int(ir_rw_ctx(rw), u->dt, a + b);
}
static const ir_node *r_swap_add(ir_rewriter *rw, const ir_node *u) {
  return u->op == IR_ADD ? ir_alu2(ir_rw_ctx(rw), IR_ADD, u->src[1], u->src[0]) : NULL;
}
static const ir_node *r_grow_const(ir_rewriter *rw, const ir_node *u) {
  int64_t v;
  return ir_is_const(u, &v) ? ir_const_int(ir_rw_ctx(rw), u->dt, v + 1) : NULL;
}
static const ir_node *r_sub0(ir_rewriter *rw, const ir_node *u) { /* SUB(0, x) -> NEG(x) */
  return u->op == IR_SUB && ir_is_const(u->src[0], NULL) && u->src[0]->arg.i == 0 ? ir_alu1(ir_rw_ctx(rw), IR_NEG, u->src[1])
                                                                                  : NULL;
}
static const ir_node *r_negneg(ir_rewriter *rw, const ir_node *u) {
  (void)rw;
  return u->op == IR_NEG && u->src[0]->op == IR_NEG ? u->src[0]->src[0] : NULL;
}

START_TEST(test_rewrite_fixed_point) {
  ir_ctx *c = ir_new();
  static const ir_rule rules[] = {r_unroll_mul, r_mul1, r_add_consts};
  const ir_rule_set set = {"unroll", 3, rules};
  const ir_rule_set *sets[] = {&set};
  int folds = 0;
  const ir_node *e = ir_alu2(c, IR_MUL, k32(c, 3), k32(c, 5));
  const ir_node *r = ir_rewrite(c, e, sets, 1, &folds);
  ck_assert_ptr_eq(r, k32(c, 15));
  ck_assert_int_eq(folds, 4);
  /* a rule that only matches after its source was rewritten */
  static const ir_rule rules2[] = {r_sub0, r_negneg};
  const ir_rule_set set2 = {"neg", 2, rules2};
  const ir_rule_set *sets2[] = {&set2};
  const ir_node *x = ir_var(c, I32, "x", 0, 5);
  const ir_node *e2 = ir_alu2(c, IR_SUB, k32(c, 0), ir_alu2(c, IR_SUB, k32(c, 0), x));
  ck_assert_ptr_eq(ir_rewrite(c, e2, sets2, 1, NULL), x);
  /* two sets applied together, and a shared subexpression rewritten once */
  const ir_node *sh = ir_alu2(c, IR_ADD, k32(c, 1), k32(c, 2));
  const ir_node *e3 = ir_alu2(c, IR_SUB, k32(c, 0), ir_alu2(c, IR_MUL, sh, sh));
  folds = 0;
  const ir_rule_set *both[] = {&set2, &set};
  const ir_node *r3 = ir_rewrite(c, e3, both, 2, &folds);
  ck_assert_ptr_eq(r3, ir_alu1(c, IR_NEG, k32(c, 9)));
  ck_assert_int_eq(folds, 3); /* 1+2 once although used twice, then 3+3 and 6+3 from unrolling */
  ir_free(c);
}
END_TEST

START_TEST(test_rewrite_cycles_fail) {
  ir_ctx *c = ir_new();
  const ir_node *x = ir_var(c, I32, "x", 0, 5), *e = ir_alu2(c, IR_ADD, x, k32(c, 1));
  static const ir_rule swap[] = {r_swap_add};
  const ir_rule_set sw = {"swapper", 1, swap};
  const ir_rule_set *s1[] = {&sw};
  ck_assert_ptr_null(ir_rewrite(c, e, s1, 1, NULL));
  ck_assert_ptr_nonnull(strstr(ir_error(c), "swapper"));
  ck_assert_ptr_nonnull(strstr(ir_error(c), "ADD"));
  static const ir_rule grow[] = {r_grow_const};
  const ir_rule_set gr = {"grower", 1, grow};
  const ir_rule_set *s2[] = {&gr};
  ck_assert_ptr_null(ir_rewrite(c, e, s2, 1, NULL));
  ck_assert_ptr_nonnull(strstr(ir_error(c), "grower"));
  ck_assert_ptr_nonnull(strstr(ir_error(c), "CONST"));
  ck_assert_ptr_nonnull(strstr(ir_error(c), "fixed point"));
  ir_free(c);
}
END_TEST

START_TEST(test_substitute) {
  ir_ctx *c = ir_new();
  const ir_node *x = ir_var(c, I32, "x", 0, 5), *y = ir_var(c, I32, "y", 0, 5);
  const ir_node *e = ir_alu2(c, IR_ADD, x, ir_alu2(c, IR_MUL, y, k32(c, 2)));
  const ir_node *from[] = {x, y}, *to[] = {y, x};
  ck_assert_ptr_eq(ir_substitute(c, e, from, to, 2), ir_alu2(c, IR_ADD, y, ir_alu2(c, IR_MUL, x, k32(c, 2))));
  ck_assert_ptr_eq(ir_substitute(c, e, from, to, 0), e);
  const ir_node *sub = ir_alu2(c, IR_MUL, y, k32(c, 2)), *f2[] = {sub}, *t2[] = {k32(c, 7)};
  ck_assert_ptr_eq(ir_substitute(c, e, f2, t2, 1), ir_alu2(c, IR_ADD, x, k32(c, 7)));
  ck_assert_ptr_eq(ir_substitute(c, e, (const ir_node *[]){e}, (const ir_node *[]){x}, 1), x);
  ir_free(c);
}
END_TEST

/* ---- printing ---- */

static char *print_to_string(ir_ctx *c, const ir_node *root) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_int_eq(ir_print(c, root, f), 0);
  fclose(f);
  return buf;
}

static const ir_node *sample(ir_ctx *c) {
  const ir_node *i = ir_var(c, IDX, "i", 0, 15), *j = ir_var(c, IDX, "j", 0, 3);
  const ir_node *four = ir_const_int(c, IDX, 4);
  return ir_alu2(c, IR_IDIV, ir_alu2(c, IR_ADD, ir_alu2(c, IR_MUL, i, four), j), four);
}

START_TEST(test_print_stable) {
  ir_ctx *c1 = ir_new(), *c2 = ir_new();
  char *p1 = print_to_string(c1, sample(c1));
  for (int k = 0; k < 100; k++) ir_var(c2, I32, "noise", k, 1000); /* shifts every id in c2 */
  const ir_node *s2 = sample(c2);
  char *p2 = print_to_string(c2, s2);
  ck_assert_str_eq(p1, p2);
  ck_assert_str_eq(p1, "%0 = DEFINE_VAR index () i[0..15]\n"
                       "%1 = CONST index () 4\n"
                       "%2 = MUL index (%0, %1)\n"
                       "%3 = DEFINE_VAR index () j[0..3]\n"
                       "%4 = ADD index (%2, %3)\n"
                       "%5 = IDIV index (%4, %1)\n");
  char *p3 = print_to_string(c2, s2);
  ck_assert_str_eq(p2, p3);
  free(p1);
  free(p2);
  free(p3);
  /* args of other kinds */
  const ir_node *w = ir_alu3(c1, IR_WHERE, ir_const_bool(c1, true), ir_const_float(c1, IR_DT_FLOAT32, 0.5),
                             ir_const_float(c1, IR_DT_FLOAT32, -2.0));
  ir_arg name = {.b = ir_blob_intern(c1, "gidx0", 5)};
  const ir_node *ext = ir_const_int(c1, IR_DT_INT32, 64);
  const ir_node *sp = ir_intern(c1, IR_SPECIAL, IR_DT_INT32, name, 1, &ext);
  const ir_node *sink_src[] = {w, sp};
  ir_arg none = {.b = NULL};
  char *p4 = print_to_string(c1, ir_intern(c1, IR_SINK, IR_DT_VOID, none, 2, sink_src));
  ck_assert_str_eq(p4, "%0 = CONST bool () 1\n"
                       "%1 = CONST float32 () 0.5\n"
                       "%2 = CONST float32 () -2\n"
                       "%3 = WHERE float32 (%0, %1, %2)\n"
                       "%4 = CONST int32 () 64\n"
                       "%5 = SPECIAL int32 (%4) \"gidx0\"\n"
                       "%6 = SINK void (%3, %5)\n");
  free(p4);
  ir_free(c1);
  ir_free(c2);
}
END_TEST

START_TEST(test_render) {
  ir_ctx *c = ir_new();
  char buf[128];
  const ir_node *e = sample(c);
  ck_assert_uint_eq(ir_render_expr(e, buf, sizeof buf), strlen("((i*4)+j)//4"));
  ck_assert_str_eq(buf, "((i*4)+j)//4");
  const ir_node *i = ir_var(c, IDX, "i", -3, 4), *k = ir_const_int(c, IDX, -2);
  const ir_node *w = ir_alu3(c, IR_WHERE, ir_alu2(c, IR_CMPLT, i, k), ir_alu2(c, IR_MAX, i, k),
                             ir_alu2(c, IR_MOD, ir_alu1(c, IR_NEG, i), ir_alu2(c, IR_SHR, i, k)));
  ir_render_expr(w, buf, sizeof buf);
  ck_assert_str_eq(buf, "((i<-2)?max(i,-2):((-i)%(i>>-2)))");
  ir_render_expr(ir_alu2(c, IR_CMPNE, ir_alu2(c, IR_XOR, i, k), ir_cast(c, IR_DT_INDEX, ir_const_bool(c, 1))), buf,
                 sizeof buf);
  ck_assert_str_eq(buf, "(i^-2)!=index(1)");
  /* truncation: returns the full length, always terminated */
  char small[6];
  ck_assert_uint_eq(ir_render_expr(e, small, sizeof small), strlen("((i*4)+j)//4"));
  ck_assert_str_eq(small, "((i*4");
  ir_render_expr(i, buf, sizeof buf);
  ck_assert_str_eq(buf, "i");
  ir_free(c);
}
END_TEST

/* ---- verification ---- */

START_TEST(test_verify) {
  ir_ctx *c = ir_new();
  ck_assert_int_eq(ir_verify(c, sample(c)), 0);
  const ir_node *x = ir_var(c, I32, "x", 0, 5), *ix = ir_var(c, IDX, "i", 0, 5);
  ir_arg none = {.i = 0};
  /* mixed dtypes */
  ck_assert_int_eq(ir_verify(c, ir_alu2(c, IR_ADD, x, ix)), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "ADD"));
  ck_assert_ptr_nonnull(strstr(ir_error(c), "expected equal dtypes"));
  ck_assert_ptr_nonnull(strstr(ir_error(c), "int32, index"));
  /* shifts may mix */
  ck_assert_int_eq(ir_verify(c, ir_alu2(c, IR_SHL, x, ix)), 0);
  /* bad arity: CONST with a source, ADD with three */
  const ir_node *bad = ir_intern(c, IR_CONST, I32, none, 1, &x);
  ck_assert_int_eq(ir_verify(c, bad), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "CONST"));
  ck_assert_ptr_nonnull(strstr(ir_error(c), "expected 0"));
  char id[16];
  snprintf(id, sizeof id, "%%%u", bad->id);
  ck_assert_ptr_nonnull(strstr(ir_error(c), id));
  const ir_node *three[] = {x, x, x};
  ck_assert_int_eq(ir_verify(c, ir_intern(c, IR_ADD, I32, none, 3, three)), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "3 sources, expected 2"));
  /* comparison that does not yield bool */
  const ir_node *two[] = {x, x};
  ck_assert_int_eq(ir_verify(c, ir_intern(c, IR_CMPLT, I32, none, 2, two)), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "expected bool"));
  /* WHERE: condition and branches */
  ck_assert_int_eq(ir_verify(c, ir_alu3(c, IR_WHERE, x, x, x)), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "condition"));
  const ir_node *cond = ir_alu2(c, IR_CMPLT, x, x);
  ck_assert_int_eq(ir_verify(c, ir_alu3(c, IR_WHERE, cond, x, ix)), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "branches"));
  ck_assert_int_eq(ir_verify(c, ir_alu3(c, IR_WHERE, cond, x, x)), 0);
  /* the bad node deep inside a good graph is found */
  const ir_node *deep = ir_alu2(c, IR_MUL, ir_alu2(c, IR_ADD, ir_alu2(c, IR_IDIV, x, ir_const_float(c, IR_DT_FLOAT32, 2)), x), x);
  ck_assert_int_eq(ir_verify(c, deep), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "IDIV"));
  /* blob argument missing, float op on ints */
  ck_assert_int_eq(ir_verify(c, ir_intern(c, IR_DEFINE_VAR, I32, none, 0, NULL)), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "blob"));
  ck_assert_int_eq(ir_verify(c, ir_alu1(c, IR_SQRT, x)), -1);
  ck_assert_ptr_nonnull(strstr(ir_error(c), "float"));
  ir_free(c);
}
END_TEST

TCase *tcase_core(void) {
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_tables);
  tcase_add_test(tc, test_intern_identity);
  tcase_add_test(tc, test_intern_ids_and_growth);
  tcase_add_test(tc, test_constructors);
  tcase_add_test(tc, test_toposort);
  tcase_add_test(tc, test_deep_graph);
  tcase_add_test(tc, test_rewrite_fixed_point);
  tcase_add_test(tc, test_rewrite_cycles_fail);
  tcase_add_test(tc, test_substitute);
  tcase_add_test(tc, test_print_stable);
  tcase_add_test(tc, test_render);
  tcase_add_test(tc, test_verify);
  return tc;
}

int main(void) {
  Suite *s = suite_create("ir");
  suite_add_tcase(s, tcase_core());
  suite_add_tcase(s, tcase_eval());
  suite_add_tcase(s, tcase_symbolic());
  suite_add_tcase(s, tcase_property());
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
