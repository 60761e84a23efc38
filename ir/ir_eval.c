/* ir/ir_eval.c: reference semantics of integer/bool expressions. Constant folding in ir_symbolic.c
 * calls ir_eval_alu too, so simplification and evaluation cannot disagree.
 *
 * Values are int64 holding the dtype's bits sign- or zero-extended. Arithmetic wraps modulo
 * 2^width, IDIV/MOD truncate like C (MIN / -1 wraps to MIN, MIN % -1 is 0), bool results are 0/1.
 * Shift amounts are read as unsigned: an amount >= width shifts everything out (SHL and logical SHR
 * give 0, arithmetic SHR gives the sign), as PTX does, rather than being undefined. */
#include <stdlib.h>

#include "ir/ir_internal.h"

static int64_t s64(uint64_t u) { return u > (uint64_t)INT64_MAX ? -(int64_t)(~u) - 1 : (int64_t)u; }

static int64_t shr_signed(int64_t a, unsigned k) { return a < 0 ? ~(int64_t)((~(uint64_t)a) >> k) : (int64_t)((uint64_t)a >> k); }

int ir_eval_alu(enum ir_op op, ir_dtype dt, ir_dtype sdt, const int64_t *v, int64_t *out) {
  if (!ir_dt_is_intlike(dt) || !ir_dt_is_intlike(sdt) || IR_DT_LANES(dt) != 1) return IR_EV_UNSUP;
  const bool sgn = ir_scalar_is_signed(IR_DT_SCALAR(sdt));
  const unsigned w = ir_dtype_bits(sdt);
  const uint64_t a = (uint64_t)v[0];
  uint64_t b = 0, r;
  if (ir_op_group(op) == IR_G_ALU2 || ir_op_group(op) == IR_G_ALU3) b = (uint64_t)v[1];
  switch (op) {
  case IR_NEG: r = 0u - a; break;
  case IR_ADD: r = a + b; break;
  case IR_SUB: r = a - b; break;
  case IR_MUL: r = a * b; break;
  case IR_MULACC: r = a * b + (uint64_t)v[2]; break;
  case IR_IDIV:
  case IR_MOD:
    if (b == 0) return IR_EV_DIV0;
    if (sgn && v[0] == INT64_MIN && v[1] == -1) r = op == IR_IDIV ? a : 0; /* wraps like 0 - MIN */
    else if (sgn) r = (uint64_t)(op == IR_IDIV ? v[0] / v[1] : v[0] % v[1]);
    else r = op == IR_IDIV ? a / b : a % b;
    break;
  case IR_MAX: r = (sgn ? v[0] >= v[1] : a >= b) ? a : b; break;
  case IR_CMPLT: r = sgn ? v[0] < v[1] : a < b; break;
  case IR_CMPNE: r = a != b; break;
  case IR_CMPEQ: r = a == b; break;
  case IR_AND: r = a & b; break;
  case IR_OR: r = a | b; break;
  case IR_XOR: r = a ^ b; break;
  case IR_SHL: r = b >= w ? 0 : a << b; break;
  case IR_SHR:
    if (sgn) r = (uint64_t)(b >= w ? (v[0] < 0 ? -1 : 0) : shr_signed(v[0], (unsigned)b));
    else r = b >= w ? 0 : a >> b;
    break;
  case IR_WHERE: r = v[0] ? b : (uint64_t)v[2]; break;
  case IR_CAST: r = a; break; /* value already in sdt; truncation to dt below */
  case IR_BITCAST:
    if (ir_dtype_bits(dt) != w) return IR_EV_UNSUP;
    r = a;
    break;
  default: return IR_EV_UNSUP;
  }
  *out = ir_norm(dt, s64(r));
  return IR_EV_OK;
}

static bool is_input(enum ir_op op) { return op == IR_DEFINE_VAR || op == IR_RANGE || op == IR_SPECIAL; }

int ir_eval(ir_ctx *ctx, const ir_node *u, ir_var_lookup lookup, void *user, int64_t *out) {
  if (!u) {
    ir_set_error(ctx, "ir_eval: NULL expression");
    return -1;
  }
  const ir_node **buf = NULL;
  size_t cap = 0, n = ir_walk(ctx, u, &buf, &cap);
  int rc = -1;
  ir_map pos = {0};
  int64_t *val = NULL;
  char dts[32];
  if (n == (size_t)-1) goto done;
  val = malloc(n * sizeof *val);
  if (!val) goto oom;
  for (size_t k = 0; k < n; k++) {
    ir_map_ent *m = ir_map_put(&pos, buf[k]->id);
    if (!m) goto oom;
    m->aux = (uint32_t)k;
  }
  for (size_t k = 0; k < n; k++) {
    const ir_node *x = buf[k];
    enum ir_op op = (enum ir_op)x->op;
    if (IR_DT_LANES(x->dt) != 1 || !ir_dt_is_intlike(x->dt)) goto unsup;
    if (op == IR_CONST) {
      val[k] = ir_norm(x->dt, x->arg.i);
    } else if (is_input(op)) {
      int64_t v = 0;
      if (!lookup || !lookup(user, x, &v)) {
        const ir_var_info *vi = ir_var_get(x);
        ir_set_error(ctx, "ir_eval: %s '%s' (id %u) is not bound", ir_op_name(op),
                     vi ? vi->name : op == IR_SPECIAL && x->arg.b ? (const char *)x->arg.b->data : "", x->id);
        goto done;
      }
      val[k] = ir_norm(x->dt, v);
    } else {
      int64_t sv[3] = {0, 0, 0};
      if (x->nsrc > 3 || x->nsrc == 0) goto unsup;
      for (unsigned i = 0; i < x->nsrc; i++) sv[i] = val[ir_map_get(&pos, x->src[i]->id)->aux];
      int r = ir_eval_alu(op, x->dt, x->src[0]->dt, sv, &val[k]);
      if (r == IR_EV_DIV0) {
        ir_set_error(ctx, "ir_eval: division by zero in %s (id %u)", ir_op_name(op), x->id);
        goto done;
      }
      if (r != IR_EV_OK) goto unsup;
    }
    continue;
  unsup:
    ir_dtype_str(x->dt, dts, sizeof dts);
    ir_set_error(ctx, "ir_eval: cannot evaluate %s %s (id %u): not an integer/bool scalar op", ir_op_name(op),
                 dts, x->id);
    goto done;
  }
  *out = val[n - 1];
  rc = 0;
  goto done;
oom:
  ir_set_error(ctx, "ir_eval: out of memory");
done:
  ir_map_free(&pos);
  free(val);
  free(buf);
  return rc;
}
