/* tensor/tvar.c: variables of symbolic sizes (tinygrad's Variable). A variable lives in the context's
 * table; binding it gives a token (baregpu/tensor.h: top bits 10, variable id, bound value) that
 * stands for a size in shapes. In a kernel a token becomes the variable's DEFINE_VAR, so the AST,
 * and with it the compiled program, is the same for every binding; the binding travels with the
 * kernel as an int32 argument. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor_internal.h"

int bg_tvar_new(bg_tctx *c, const char *name, int64_t min, int64_t max) {
  if (!c) return bg_error(BG_EINVAL, "tvar: NULL context");
  if (!name || !*name || strlen(name) >= sizeof c->vars[0].name)
    return bg_error(BG_EINVAL, "tvar: name '%s' must have 1 to %zu characters", name ? name : "(null)",
                    sizeof c->vars[0].name - 1);
  if (min < 0 || min > max || max > INT32_MAX)
    return bg_error(BG_EINVAL, "tvar %s: bounds [%lld, %lld] must satisfy 0 <= min <= max <= %d", name, (long long)min,
                    (long long)max, INT32_MAX);
  for (unsigned i = 0; i < c->nvars; i++) {
    if (strcmp(c->vars[i].name, name)) continue;
    if (c->vars[i].min == min && c->vars[i].max == max) return (int)i;
    return bg_error(BG_EINVAL, "tvar %s: exists with bounds [%lld, %lld], asked for [%lld, %lld]", name,
                    (long long)c->vars[i].min, (long long)c->vars[i].max, (long long)min, (long long)max);
  }
  if (c->nvars == c->vars_cap) {
    unsigned ncap = c->vars_cap ? c->vars_cap * 2 : 8;
    tvar *nv = realloc(c->vars, ncap * sizeof *nv);
    if (!nv) return bg_error(BG_ENOMEM, "tvar %s: out of host memory", name);
    c->vars = nv;
    c->vars_cap = ncap;
  }
  tvar *v = &c->vars[c->nvars];
  memset(v, 0, sizeof *v);
  snprintf(v->name, sizeof v->name, "%s", name);
  v->min = min;
  v->max = max;
  return (int)c->nvars++;
}

int bg_tvar_bind(bg_tctx *c, int v, int64_t value, int64_t *token) {
  if (!c || !token) return bg_error(BG_EINVAL, "bind: %s is NULL", c ? "token" : "context");
  if (v < 0 || (unsigned)v >= c->nvars) {
    t_fail(c, "bind: variable %d does not exist (the context has %u)", v, c->nvars);
    return -BG_EINVAL;
  }
  const tvar *x = &c->vars[v];
  if (value < x->min || value > x->max) {
    t_fail(c, "bind: %s = %lld is outside its bounds [%lld, %lld]", x->name, (long long)value, (long long)x->min,
           (long long)x->max);
    return -BG_EINVAL;
  }
  *token = (int64_t)(2ull << 62 | (uint64_t)v << 32 | (uint64_t)value);
  return 0;
}

const char *bg_tvar_name(const bg_tctx *c, int v) {
  return c && v >= 0 && (unsigned)v < c->nvars ? c->vars[v].name : NULL;
}

const ir_node *t_dim_node(bg_tctx *c, ir_ctx *k, tkernel *kern, int64_t d) {
  if (!BG_DIM_IS_VAR(d)) return ir_const_int(k, IR_DT_INDEX, d);
  unsigned v = BG_DIM_VAR(d);
  int64_t val = BG_DIM_VALUE(d);
  if (v >= c->nvars) {
    bg_error(BG_EINVAL, "tensor: size token names variable %u, the context has %u", v, c->nvars);
    return NULL;
  }
  const tvar *x = &c->vars[v];
  unsigned i = 0;
  while (i < kern->nvar && kern->vid[i] != (int)v) i++;
  if (i == kern->nvar) {
    if (i == sizeof kern->vid / sizeof kern->vid[0]) {
      bg_error(BG_ENOTSUP, "tensor: a kernel would read more than %u variables", i);
      return NULL;
    }
    kern->vid[i] = (int)v;
    kern->vval[i] = val;
    kern->nvar++;
  } else if (kern->vval[i] != val) {
    bg_error(BG_EINVAL, "tensor: variable %s is bound to %lld and %lld in one kernel, expected one binding", x->name,
             (long long)kern->vval[i], (long long)val);
    return NULL;
  }
  return ir_var(k, IR_DT_INDEX, x->name, x->min, x->max);
}

int64_t t_numel_max(const bg_tctx *c, const tshape *s) {
  int64_t n = 1;
  for (unsigned i = 0; i < s->n; i++) {
    int64_t d = s->d[i];
    if (BG_DIM_IS_VAR(d)) d = BG_DIM_VAR(d) < c->nvars ? c->vars[BG_DIM_VAR(d)].max : 0;
    n *= d;
  }
  return n;
}

int64_t t_kernel_var_value(const bg_tctx *c, const tkernel *kern, const char *name) {
  for (unsigned i = 0; i < kern->nvar; i++)
    if (!strcmp(c->vars[kern->vid[i]].name, name)) return kern->vval[i];
  return -1;
}

bool t_shrink_ok(const bg_tctx *c, int64_t d, int64_t lo, int64_t hi) {
  if (BG_DIM_IS_VAR(lo)) return false; /* a symbolic start would make the size an expression */
  if (BG_DIM_IS_VAR(hi)) {
    if (lo != 0) return false;
    if (BG_DIM_IS_VAR(d)) return BG_DIM_VAR(d) == BG_DIM_VAR(hi) && BG_DIM_VALUE(hi) <= BG_DIM_VALUE(d);
    return BG_DIM_VAR(hi) < c->nvars && c->vars[BG_DIM_VAR(hi)].max <= d;
  }
  return lo >= 0 && lo <= hi && hi <= BG_DIM_VALUE(d);
}
