/* hcq/tmpl.h: core-side template functions (backends use backend.h). */
#ifndef BG_HCQ_TMPL_H
#define BG_HCQ_TMPL_H
#include "hcq/backend.h"
/* Evaluate patches whose slots changed (all of them when `all`) and write them; returns how many. */
size_t bg_tmpl_apply(bg_tmpl *t, const uint64_t *slots, const uint64_t changed[2], bool all);
/* An operand compiled for evaluation at submit (the queue's operand checks), sharing the template's code array. */
typedef struct bg_texpr {
  uint32_t code_start, code_len;
  uint64_t deps[2];         /* slots it reads */
} bg_texpr;
int bg_tmpl_expr(bg_tmpl *t, const ir_node *v, bg_texpr *out);
uint64_t bg_tmpl_eval(const bg_tmpl *t, const bg_texpr *e, const uint64_t *slots);
#endif
