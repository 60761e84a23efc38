/* tests/mockgpu/rdna3/rdna3_wait.c: outstanding loads and s_waitcnt (rdna3.h "Memory latency").
 * gfx11 counters (LLVM AMDGPUUsage / SIInsertWaitcnts, RDNA3 ISA guide "Data dependency
 * resolution"): vmcnt counts vector memory loads and atomics with return, in order; lgkmcnt counts
 * LDS, scalar memory and messages; stores go to vscnt. A load's data is read at issue (a later
 * store of the same wave cannot overtake it) and written to its destination when it lands. FLAT loads,
 * which hardware counts on both vmcnt and lgkmcnt (they may reach LDS), are on vmcnt only here; LLVM
 * waits for both before using them. SMEM may return out of order on hardware (LLVM then waits for
 * lgkmcnt(0)); here lgkmcnt retires in order, so a kernel relying on the order of two scalar loads is
 * not caught. */
#include <string.h>

#include "rdna3_internal.h"

static void land(rdna3_wave *w, const rdna3_pend *p) {
  if (p->reg < RDNA3_SRC_VGPR) {
    for (unsigned i = 0; i < p->n; i++) w->s[p->reg + i] = p->d[0][i];
    return;
  }
  unsigned r = p->reg - RDNA3_SRC_VGPR;
  for (unsigned i = 0; i < p->n; i++) {
    uint32_t *dst = w->v[r + i];
    if (p->lanes == 0xffffffffu && p->mask == 0xffffffffu) {
      memcpy(dst, p->d[i], sizeof p->d[i]);
      continue;
    }
    for (unsigned l = 0; l < RDNA3_LANES; l++)
      if ((p->lanes >> l) & 1) dst[l] = (dst[l] & ~p->mask) | (p->d[i][l] & p->mask);
  }
}

static void land_oldest(rdna3_wave *w, rdna3_pq *q) {
  land(w, &q->e[q->head]);
  q->head = (q->head + 1) % RDNA3_PEND_MAX;
  q->n--;
}

rdna3_pend *rdna3_pend_new(rdna3_wave *w, unsigned cnt, unsigned reg, unsigned n, uint32_t lanes, uint32_t mask) {
  rdna3_pq *q = &w->pq[cnt];
  if (q->n == RDNA3_PEND_MAX) land_oldest(w, q);
  rdna3_pend *p = &q->e[(q->head + q->n++) % RDNA3_PEND_MAX];
  p->reg = (uint16_t)reg, p->n = (uint16_t)n, p->lanes = lanes, p->mask = mask;
  return p;
}

void rdna3_wait(rdna3_wave *w, unsigned cnt, unsigned k) {
  rdna3_pq *q = &w->pq[cnt];
  while (q->n > k) land_oldest(w, q);
}

void rdna3_wait_all(rdna3_wave *w) {
  for (unsigned i = 0; i < RDNA3_NCNT; i++) rdna3_wait(w, i, 0);
}
