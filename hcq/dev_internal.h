/* hcq/dev_internal.h: device core functions shared inside hcq/. */
#ifndef BG_HCQ_DEV_INTERNAL_H
#define BG_HCQ_DEV_INTERNAL_H
#include "hcq/backend.h"

int bg_dev_create(const bg_iface *ifc, const bg_target *t, int phys_index, bg_dev **out);
/* Signal pool (signal.c). */
void bg_sigpool_free(bg_dev *d);
/* Latched error state: non-zero (negative) when an earlier sync failed. */
int bg_dev_check(bg_dev *d);
/* Programs keep a cached run queue (program.c). */
void bg_program_release_queue(bg_program *p);
#endif
