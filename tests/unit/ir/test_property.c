/* tests/unit/ir/test_property.c: random integer expressions must keep their value under ir_simplify
 * for every assignment of their variables, and every value must lie within ir_vmin..ir_vmax.
 *
 * The generator leans towards what the rules look for (x*k*c + y) // c, nested div/mod, masks,
 * shifts, comparisons feeding WHERE), mixes in negative ranges and divisors and narrow dtypes
 * where arithmetic wraps, so an unsound rule or bound is found quickly. Seeded: reproducible. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "test_ir.h"

enum { N_EXPRS = 12000, MAX_DEPTH = 5, PER_CTX = 500 };

typedef struct gen {
  uint64_t s;
  ir_ctx *c;
  ir_dtype dt;
  const ir_node *vars[3];
  int nvars;
} gen;

static uint64_t rnd(gen *g) { /* splitmix64 */
  uint64_t z = (g->s += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}
static int pick(gen *g, int n) { return (int)(rnd(g) % (uint64_t)n); }
static bool chance(gen *g, int pct) { return pick(g, 100) < pct; }
static bool is_unsigned(const gen *g) { return !ir_scalar_is_signed(IR_DT_SCALAR(g->dt)); }
static unsigned width(const gen *g) { return 8u * ir_scalar_size(IR_DT_SCALAR(g->dt)); }

static const ir_node *K(gen *g, int64_t v) { return ir_const_int(g->c, g->dt, v); }

static int64_t small_const(gen *g) {
  static const int64_t odd[] = {16, 32, 64, 100, 127, -128, 255, 1000, 65535, -1000, INT32_MAX, INT32_MIN};
  if (chance(g, 12)) return odd[pick(g, (int)(sizeof odd / sizeof odd[0]))];
  int64_t v = pick(g, 21) - 10;
  return is_unsigned(g) && v < 0 ? -v : v;
}

static int64_t divisor(gen *g) {
  static const int64_t ds[] = {1, 2, 3, 4, 5, 6, 8, 12, 16, 7, -1, -2, -3, -4, -6, -8, 100, -128};
  int64_t d = ds[pick(g, (int)(sizeof ds / sizeof ds[0]))];
  return is_unsigned(g) && d < 0 ? -d : d;
}

/* A divisor constant that is not zero once truncated to the dtype. */
static const ir_node *K_nz(gen *g, int64_t v) {
  int64_t t;
  const ir_node *k = K(g, v);
  return ir_is_const(k, &t) && t != 0 ? k : K(g, 1);
}

static const ir_node *gen_int(gen *g, int depth);

static const ir_node *gen_bool(gen *g, int depth) {
  static const enum ir_op cmp[] = {IR_CMPLT, IR_CMPNE, IR_CMPEQ};
  int k = depth <= 0 ? 0 : pick(g, 10);
  if (k == 9) return ir_const_bool(g->c, chance(g, 50));
  if (k == 8) {
    static const enum ir_op bits[] = {IR_AND, IR_OR, IR_XOR};
    return ir_alu2(g->c, bits[pick(g, 3)], gen_bool(g, depth - 1), gen_bool(g, depth - 1));
  }
  const ir_node *a = gen_int(g, depth - 1);
  const ir_node *b = chance(g, 50) ? K(g, small_const(g)) : gen_int(g, depth - 1);
  return ir_alu2(g->c, cmp[pick(g, 3)], a, b);
}

static const ir_node *gen_int(gen *g, int depth) {
  ir_ctx *c = g->c;
  if (depth <= 0 || chance(g, 15)) {
    if (chance(g, 65)) return g->vars[pick(g, g->nvars)];
    return K(g, small_const(g));
  }
  const ir_node *a = gen_int(g, depth - 1), *t;
  int64_t d;
  switch (pick(g, 20)) {
  case 0:
  case 1: return ir_alu2(c, IR_ADD, a, gen_int(g, depth - 1));
  case 2: return ir_alu2(c, IR_SUB, a, gen_int(g, depth - 1));
  case 3: return ir_alu2(c, IR_MUL, a, gen_int(g, depth - 1));
  case 4: return ir_alu2(c, IR_MUL, a, K(g, small_const(g)));
  case 5: return ir_alu2(c, IR_IDIV, a, K_nz(g, divisor(g)));
  case 6: return ir_alu2(c, IR_MOD, a, K_nz(g, divisor(g)));
  case 7:
  case 8: /* the index pattern: (a*(d*m) + b) // d or % d, plus a constant sometimes */
    d = divisor(g);
    t = ir_alu2(c, IR_ADD, ir_alu2(c, IR_MUL, a, K(g, d * (pick(g, 4) + 1) * (chance(g, 20) ? -1 : 1))),
                gen_int(g, depth - 1));
    if (chance(g, 40)) t = ir_alu2(c, IR_ADD, t, K(g, small_const(g)));
    return ir_alu2(c, chance(g, 50) ? IR_IDIV : IR_MOD, t, K_nz(g, d));
  case 9: /* nested division / remainder */
    d = divisor(g);
    t = ir_alu2(c, chance(g, 50) ? IR_IDIV : IR_MOD, a, K_nz(g, d * (pick(g, 3) + 1)));
    return ir_alu2(c, chance(g, 50) ? IR_IDIV : IR_MOD, t, K_nz(g, d));
  case 10: return ir_alu2(c, IR_MAX, a, gen_int(g, depth - 1));
  case 11: {
    static const int64_t masks[] = {1, 3, 7, 15, 255, -4, -1, 6};
    return ir_alu2(c, IR_AND, a, chance(g, 70) ? K(g, masks[pick(g, 8)]) : gen_int(g, depth - 1));
  }
  case 12: return ir_alu2(c, chance(g, 50) ? IR_OR : IR_XOR, a, chance(g, 50) ? K(g, small_const(g)) : gen_int(g, depth - 1));
  case 13:
  case 14: { /* shifts: mostly in range, sometimes by >= width or by a variable (possibly negative) */
    const ir_node *k = chance(g, 85) ? K(g, pick(g, (int)width(g))) : chance(g, 50) ? K(g, width(g) + (unsigned)pick(g, 3))
                                                                                    : g->vars[pick(g, g->nvars)];
    return ir_alu2(c, chance(g, 50) ? IR_SHL : IR_SHR, a, k);
  }
  case 15:
  case 16: return ir_alu3(c, IR_WHERE, gen_bool(g, depth - 1), a, gen_int(g, depth - 1));
  case 17: return ir_alu1(c, IR_NEG, a);
  case 18: return ir_cast(c, g->dt, gen_bool(g, depth - 1));
  default: /* round trip through another dtype */
    return ir_cast(c, g->dt, ir_cast(c, chance(g, 50) ? IR_DT_INT16 : IR_DT_INDEX, a));
  }
}

/* ---- driver ---- */

typedef struct span {
  int64_t lo, hi;
} span;

static void setup_expr(gen *g) {
  static const struct {
    enum ir_scalar s;
    int weight;
  } dts[] = {{IR_DT_INDEX, 35}, {IR_DT_INT32, 20}, {IR_DT_INT8, 15}, {IR_DT_UINT8, 10}, {IR_DT_UINT32, 10}, {IR_DT_INT16, 10}};
  static const span sgn[] = {{-3, 4}, {0, 5}, {-8, -1}, {0, 15}, {-2, 2}, {1, 3}, {-5, 0}, {0, 7}};
  static const span uns[] = {{0, 5}, {0, 15}, {3, 10}, {0, 7}, {1, 3}};
  static const char *const names[] = {"a", "b", "c"};
  int w = pick(g, 100), k = 0;
  while (w >= dts[k].weight) w -= dts[k++].weight;
  g->dt = dts[k].s;
  g->nvars = 1 + pick(g, 3);
  for (int i = 0; i < g->nvars; i++) {
    span r = is_unsigned(g) ? uns[pick(g, 5)] : sgn[pick(g, 8)];
    if (chance(g, 8)) { /* next to the top of the dtype, where arithmetic wraps */
      int64_t top = g->dt == IR_DT_INT8 ? 127 : g->dt == IR_DT_UINT8 ? 255 : g->dt == IR_DT_INT16 ? 32767
                  : g->dt == IR_DT_UINT32 ? 4294967295LL : INT32_MAX;
      r = (span){top - 5, top};
    } else if (chance(g, 5) && !is_unsigned(g)) {
      int64_t bot = g->dt == IR_DT_INT8 ? -128 : g->dt == IR_DT_INT16 ? -32768 : INT32_MIN;
      r = (span){bot, bot + 4};
    }
    g->vars[i] = ir_var(g->c, g->dt, names[i], r.lo, r.hi);
  }
}

static void report(ir_ctx *c, const ir_node *e, const ir_node *s, const gen *g, const int64_t *vals, const char *what,
                   int64_t v0, int64_t v1) {
  static char be[4096], af[4096], vs[256];
  ir_render_expr(e, be, sizeof be);
  ir_render_expr(s, af, sizeof af);
  size_t n = 0;
  for (int i = 0; i < g->nvars; i++)
    n += (size_t)snprintf(vs + n, sizeof vs - n, "%s=%" PRId64 " ", ir_var_get(g->vars[i])->name, vals[i]);
  ck_abort_msg("%s (%s): before %s = %" PRId64 " [%" PRId64 "..%" PRId64 "], after %s = %" PRId64 " at %s(%s)", what,
               ir_scalar_name(IR_DT_SCALAR(g->dt)), be, v0, ir_vmin(c, e), ir_vmax(c, e), af, v1, vs, ir_error(c));
}

START_TEST(test_property_simplify) {
  gen g = {.s = 0x5eed1234abcdULL};
  long evals = 0;
  int changed = 0;
  for (int n = 0; n < N_EXPRS; n++) {
    if (n % PER_CTX == 0) {
      if (g.c) ir_free(g.c);
      g.c = ir_new();
      ck_assert_ptr_nonnull(g.c);
    }
    ir_ctx *c = g.c;
    setup_expr(&g);
    const ir_node *e = gen_int(&g, 1 + pick(&g, MAX_DEPTH));
    ck_assert_ptr_nonnull(e);
    ck_assert_msg(ir_verify(c, e) == 0, "generated graph invalid: %s", ir_error(c));
    const ir_node *s = ir_simplify(c, e);
    if (!s) report(c, e, e, &g, (int64_t[3]){0, 0, 0}, "ir_simplify failed", 0, 0);
    if (ir_verify(c, s) != 0) report(c, e, s, &g, (int64_t[3]){0, 0, 0}, "simplified graph invalid", 0, 0);
    if (ir_simplify(c, s) != s) report(c, e, ir_simplify(c, s), &g, (int64_t[3]){0, 0, 0}, "not a fixed point", 0, 0);
    changed += s != e;
    const int64_t lo = ir_vmin(c, e), hi = ir_vmax(c, e), slo = ir_vmin(c, s), shi = ir_vmax(c, s);
    int64_t vals[3];
    span r[3] = {{0, 0}, {0, 0}, {0, 0}};
    for (int i = 0; i < g.nvars; i++) {
      r[i] = (span){ir_var_get(g.vars[i])->min, ir_var_get(g.vars[i])->max};
      vals[i] = r[i].lo;
    }
    test_env env = {g.vars, vals, (size_t)g.nvars};
    for (;;) {
      int64_t v0, v1;
      if (ir_eval(c, e, test_lookup, &env, &v0) != 0) report(c, e, s, &g, vals, "original does not evaluate", 0, 0);
      if (ir_eval(c, s, test_lookup, &env, &v1) != 0) report(c, e, s, &g, vals, "simplified does not evaluate", v0, 0);
      if (v0 != v1) report(c, e, s, &g, vals, "value changed", v0, v1);
      if (v0 < lo || v0 > hi) report(c, e, s, &g, vals, "value outside vmin..vmax of the original", v0, v1);
      if (v1 < slo || v1 > shi) report(c, e, s, &g, vals, "value outside vmin..vmax of the simplified", v0, v1);
      evals++;
      int i = 0;
      while (i < g.nvars && vals[i] == r[i].hi) vals[i] = r[i].lo, i++;
      if (i == g.nvars) break;
      vals[i]++;
    }
  }
  ir_free(g.c);
  printf("ir property test: %d random expressions (%d changed by ir_simplify), %ld evaluations before/after, "
         "all equal and within vmin..vmax\n", N_EXPRS, changed, evals);
  fflush(stdout);
  ck_assert_int_ge(N_EXPRS, 10000);
  ck_assert_int_gt(changed, N_EXPRS / 2);
}
END_TEST

TCase *tcase_property(void) {
  TCase *tc = tcase_create("property");
  tcase_set_timeout(tc, 280);
  tcase_add_test(tc, test_property_simplify);
  return tc;
}
