/* hcq/tmpl.h: core-side template functions (backends use backend.h). */
#ifndef BG_HCQ_TMPL_H
#define BG_HCQ_TMPL_H
#include "hcq/backend.h"
/* Evaluate patches whose slots changed (all of them when `all`) and write them; returns how many. */
size_t bg_tmpl_apply(bg_tmpl *t, const uint64_t *slots, const uint64_t changed[2], bool all);
#endif
