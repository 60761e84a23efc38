/* tests/unit/compile/ast_build.h: kernel-AST builders over the ir API shared by the compile suites (test_kernel.c,
 * test_amdgpu.c): constants, global buffers, output/reduce ranges, index/load/store, reduce, sink and a few ALU ops.
 * Nodes are interned in the suite's context C (defined here; the suite's fixture creates and frees it). Included
 * once by a suite's .c file (the definitions are static). */
#ifndef BAREGPU_TESTS_COMPILE_AST_BUILD_H
#define BAREGPU_TESTS_COMPILE_AST_BUILD_H

#include <stdint.h>

#include "ir/ir.h"

static ir_ctx *C;

typedef const ir_node *N;
static const ir_dtype IDX = IR_DT_INDEX;

static inline N ki(int64_t v) { return ir_const_int(C, IDX, v); }
static inline N kf(double v) { return ir_const_float(C, IR_DT_FLOAT32, v); }
static inline N buf(int slot, enum ir_scalar s) {
  ir_arg a = {.i = slot};
  return ir_intern(C, IR_DEFINE_GLOBAL, IR_DT_PTR(s, IR_AS_GLOBAL), a, 0, NULL);
}
static inline N rng(int axis, int kind, N extent) {
  ir_arg a = {.i = (int64_t)axis << 8 | kind};
  return ir_intern(C, IR_RANGE, IDX, a, 1, &extent);
}
static inline N out_r(int axis, int64_t n) { return rng(axis, 0, ki(n)); }
static inline N red_r(int axis, int64_t n) { return rng(axis, 1, ki(n)); }
static inline N index_of(N b, N i, N valid) {
  N s[3] = {b, i, valid};
  ir_arg a = {.i = 0};
  return ir_intern(C, IR_INDEX, b->dt, a, valid ? 3 : 2, s);
}
/* A load of b[i], gated by valid (NULL: always). */
static inline N ldg(N b, N i, N valid) {
  N x = index_of(b, i, valid);
  ir_arg a = {.i = 0};
  return ir_intern(C, IR_LOAD, IR_DT_SCALAR(b->dt), a, 1, &x);
}
static inline N ld(N b, N i) { return ldg(b, i, NULL); }
static inline N st(N b, N i, N v) {
  N s[2] = {index_of(b, i, NULL), v};
  ir_arg a = {.i = 0};
  return ir_intern(C, IR_STORE, IR_DT_VOID, a, 2, s);
}
/* Reduce v with op over range r0 (and r1 unless NULL). */
static inline N reduce(enum ir_op op, N v, N r0, N r1) {
  N s[3] = {v, r0, r1};
  ir_arg a = {.i = op};
  return ir_intern(C, IR_REDUCE, v->dt, a, r1 ? 3 : 2, s);
}
static inline N sinkv(unsigned n, const N *stores) {
  ir_arg a = {.b = NULL};
  return ir_intern(C, IR_SINK, IR_DT_VOID, a, n, stores);
}
static inline N sink1(N s) { return sinkv(1, &s); }
static inline N add(N a, N b) { return ir_alu2(C, IR_ADD, a, b); }
static inline N mul(N a, N b) { return ir_alu2(C, IR_MUL, a, b); }
static inline N lt(N a, N b) { return ir_alu2(C, IR_CMPLT, a, b); }
static inline N not_(N a) { return ir_alu2(C, IR_CMPNE, a, ir_const_bool(C, true)); }
static inline N and_(N a, N b) { return ir_alu2(C, IR_AND, a, b); }

#endif
