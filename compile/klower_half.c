/* compile/klower_half.c: float16/bfloat16 lowered for the C renderer: 16-bit floats computed in float32.
 *
 * float16 and bfloat16 values stay 16-bit patterns (uint16_t in C) where they are loaded, stored,
 * cast or bitcast. Every other op on them is rebuilt in float32 on CAST(x -> float32) operands
 * and its result CAST back, which rounds once per op like IEEE half arithmetic (float32 holds
 * every product and sum of two halves exactly enough for a correctly rounded result). Half
 * constants become float32 constants; CAST(CAST(h -> float32) -> half) is h. REDUCEs of halves
 * accumulate in float32 and round once at the end. The other ops the C renderer needs (THREEFRY,
 * transcendental functions, MAX, WHERE, comparisons, casts, bitcasts) map to C directly or to
 * functions of the prelude, see krender_c.c. Constants round with util/half.h (the prelude's twin). */
#include <math.h>

#include "baregpu/error.h"
#include "compile/kernel_internal.h"
#include "util/half.h"

typedef const ir_node *node;

static bool is_half(ir_dtype dt) {
  enum ir_scalar s = IR_DT_SCALAR(dt);
  return !IR_DT_IS_PTR(dt) && (s == IR_DT_FLOAT16 || s == IR_DT_BFLOAT16);
}

/* The value of a half constant, rounded to its format. */
static double half_value(node c) {
  float f = (float)c->arg.f;
  if (isnan(f) || isinf(f)) return f;
  return IR_DT_SCALAR(c->dt) == IR_DT_FLOAT16 ? bg_f16_to_f32(bg_f32_to_f16(f)) : bg_bf16_to_f32(bg_f32_to_bf16(f));
}

static node to_f32(ir_ctx *ctx, node x) {
  ir_dtype f32 = IR_DT_VEC(IR_DT_FLOAT32, IR_DT_LANES(x->dt));
  if (x->op == IR_CONST && IR_DT_LANES(x->dt) == 1) return ir_const_float(ctx, f32, half_value(x));
  if (x->op == IR_VECTORIZE) {
    node lanes[256];
    for (unsigned i = 0; i < x->nsrc && i < 256; i++)
      if (!(lanes[i] = to_f32(ctx, x->src[i]))) return NULL;
    return ir_intern(ctx, IR_VECTORIZE, f32, x->arg, x->nsrc, lanes);
  }
  return ir_cast(ctx, f32, x);
}

static bool computes(node u) {
  enum ir_op_group g = ir_op_group((enum ir_op)u->op);
  return (g == IR_G_ALU1 || g == IR_G_ALU2 || g == IR_G_ALU3) && u->op != IR_CAST && u->op != IR_BITCAST;
}

static node r_half_alu(ir_rewriter *rw, node u) {
  bool any = is_half(u->dt);
  if (!computes(u) && u->op != IR_REDUCE) return NULL;
  for (unsigned i = 0; i < u->nsrc && !any; i++) any = is_half(u->src[i]->dt);
  if (!any) return NULL;
  ir_ctx *ctx = ir_rw_ctx(rw);
  node src[KMAX_RANGES + 2];
  if (u->nsrc > KMAX_RANGES + 2) return NULL;
  for (unsigned i = 0; i < u->nsrc; i++) {
    src[i] = u->src[i];
    if (is_half(src[i]->dt) && src[i]->op != IR_RANGE && !(src[i] = to_f32(ctx, src[i]))) return NULL;
  }
  ir_dtype dt = is_half(u->dt) ? IR_DT_FLOAT32 : u->dt;
  node n = ir_intern(ctx, (enum ir_op)u->op, dt, u->arg, u->nsrc, src);
  return is_half(u->dt) ? ir_cast(ctx, u->dt, n) : n;
}

static node r_half_cast(ir_rewriter *rw, node u) {
  if (u->op != IR_CAST) return NULL;
  ir_ctx *ctx = ir_rw_ctx(rw);
  node x = u->src[0];
  /* CAST(CAST(h -> float32) -> half of h's format): float32 holds every half exactly */
  if (is_half(u->dt) && x->op == IR_CAST && IR_DT_SCALAR(x->dt) == IR_DT_FLOAT32 && x->src[0]->dt == u->dt)
    return x->src[0];
  /* half constants take part in arithmetic as float32 constants; casts of constants to halves fold */
  if (x->op == IR_CONST && is_half(x->dt) && IR_DT_SCALAR(u->dt) == IR_DT_FLOAT32) return ir_const_float(ctx, u->dt, half_value(x));
  if (x->op == IR_CONST && is_half(u->dt) && ir_scalar_is_float(IR_DT_SCALAR(x->dt))) {
    node c = ir_const_float(ctx, u->dt, x->arg.f);
    return c ? ir_const_float(ctx, u->dt, half_value(c)) : NULL;
  }
  return NULL;
}

static const ir_rule half_rules[] = {r_half_alu, r_half_cast};
static const ir_rule_set half_set = {"khalf", sizeof half_rules / sizeof half_rules[0], half_rules};

const ir_node *kdecomp(ir_ctx *ctx, const ir_node *sink) {
  const ir_rule_set *sets[1] = {&half_set};
  const ir_node *s = ir_rewrite(ctx, sink, sets, 1, NULL);
  if (!s) bg_error(BG_EINVAL, "kernel: float16 decomposition: %s", ir_error(ctx));
  return s;
}
