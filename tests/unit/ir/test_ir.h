/* tests/unit/ir/test_ir.h: test cases of the ir suite, one TCase per concern, and shared helpers. */
#ifndef BG_TEST_IR_H
#define BG_TEST_IR_H

#include <check.h>
#include <stdint.h>

#include "ir/ir.h"

TCase *tcase_core(void);       /* tables, interning, walks, rewrite engine, printing, verification */
TCase *tcase_eval(void);       /* ir_eval semantics */
TCase *tcase_symbolic(void);   /* folding, identities, vmin/vmax, div/mod */
TCase *tcase_property(void);   /* random expressions: simplify preserves value and bounds */

/* Binds variables to values for ir_eval: vars[i] takes vals[i]. */
typedef struct test_env {
  const ir_node *const *vars;
  const int64_t *vals;
  size_t n;
} test_env;
bool test_lookup(void *user, const ir_node *var, int64_t *value);

#endif
