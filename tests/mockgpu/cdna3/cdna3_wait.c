/* tests/mockgpu/cdna3/cdna3_wait.c: outstanding loads and s_waitcnt, the RDNA3 core's model (rdna3.h "Memory
 * latency") for a wave64: a load's data is read at issue and lands in its destination when the wave waits
 * (vmcnt: FLAT/GLOBAL/SCRATCH loads and returning atomics; lgkmcnt: LDS and scalar loads), so a kernel missing
 * an s_waitcnt reads the old register value. gfx9 has no vscnt: stores take effect at issue here. */
#include <string.h>

#include "cdna3_internal.h"

static void land(cdna3_wave *w, const cdna3_pend *p) {
  if (p->reg < CDNA3_SRC_VGPR) {
    for (unsigned i = 0; i < p->n; i++) w->s[p->reg + i] = p->d[0][i];
    return;
  }
  unsigned r = p->reg - CDNA3_SRC_VGPR;
  for (unsigned i = 0; i < p->n; i++) {
    uint32_t *dst = w->v[r + i];
    if (p->lanes == ~0ull && p->mask == 0xffffffffu) {
      memcpy(dst, p->d[i], sizeof p->d[i]);
      continue;
    }
    for (unsigned l = 0; l < CDNA3_LANES; l++)
      if ((p->lanes >> l) & 1) dst[l] = (dst[l] & ~p->mask) | (p->d[i][l] & p->mask);
  }
}

static void land_oldest(cdna3_wave *w, cdna3_pq *q) {
  land(w, &q->e[q->head]);
  q->head = (q->head + 1) % CDNA3_PEND_MAX;
  q->n--;
}

cdna3_pend *cdna3_pend_new(cdna3_wave *w, unsigned cnt, unsigned reg, unsigned n, uint64_t lanes, uint32_t mask) {
  cdna3_pq *q = &w->pq[cnt];
  if (q->n == CDNA3_PEND_MAX) land_oldest(w, q);
  cdna3_pend *p = &q->e[(q->head + q->n++) % CDNA3_PEND_MAX];
  p->reg = (uint16_t)reg, p->n = (uint16_t)n, p->lanes = lanes, p->mask = mask;
  return p;
}

void cdna3_wait(cdna3_wave *w, unsigned cnt, unsigned k) {
  cdna3_pq *q = &w->pq[cnt];
  while (q->n > k) land_oldest(w, q);
}

void cdna3_wait_all(cdna3_wave *w) {
  for (unsigned i = 0; i < CDNA3_NCNT; i++) cdna3_wait(w, i, 0);
}
