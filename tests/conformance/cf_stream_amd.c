/* tests/conformance/cf_stream_amd.c: the AMD reader of captured compute streams (cf_stream.c): the memory barrier
 * as tinygrad's ops_amd.py emits it, an HDP flush then ACQUIRE_MEM over L2, found before the dispatch. PM4 layouts
 * from am/am_pm4.h (Linux nvd.h / soc15d.h). */
#include <stdio.h>
#include <string.h>

#include "am/am_hcq.h"
#include "am/am_pm4.h"
#include "conformance.h"
#include "hcq/backend.h"

/* AMD PM4: before the first DISPATCH_DIRECT, an HDP flush on this GPU's registers and an ACQUIRE_MEM that invalidates
 * and writes back L2 (the dispatch prologue's own ACQUIRE_MEM leaves L2 alone: BG_PM4_DISPATCH_CACHES). */
int cf_stream_amd_barrier(const bg_dev *d, const uint8_t *s, size_t len, char *why, size_t n) {
  const am_hcq *h = d->priv;
  bool hdp = false, l2 = false;
  size_t ndw = len / 4;
  for (size_t i = 0; i < ndw;) {
    uint32_t dw[8] = {0}, hdr;
    memcpy(&hdr, s + i * 4, 4);
    if (PACKET_TYPE(hdr) != 3) {
      i++; /* type-2 filler */
      continue;
    }
    size_t pk = PACKET3_COUNT(hdr) + 2u;
    if (i + pk > ndw) break;
    memcpy(dw, s + i * 4, (pk < 8 ? pk : 8) * 4);
    uint32_t op = PACKET3_OPCODE(hdr);
    if (op == PACKET3_WAIT_REG_MEM && pk >= 4 && (dw[1] & WAIT_REG_MEM_OPERATION(3)) == WAIT_REG_MEM_OPERATION(1) &&
        (dw[1] & WAIT_REG_MEM_MEM_SPACE(3)) == 0 && dw[2] == h->hdp_req && dw[3] == h->hdp_done)
      hdp = true;
    if (op == PACKET3_ACQUIRE_MEM) {
      uint32_t want = h->gfx >= 10 ? PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB(1)
                                   : PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_ACTION_ENA(1) |
                                         PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_WB_ACTION_ENA(1);
      uint32_t got = h->gfx >= 10 ? (pk >= 8 ? dw[7] : 0) : dw[1];
      if ((got & want) == want) l2 = true;
    }
    if (op == PACKET3_DISPATCH_DIRECT) {
      snprintf(why, n, "before the dispatch: HDP flush (WAIT_REG_MEM write-then-wait on 0x%x/0x%x) %s, ACQUIRE_MEM "
               "with L2 invalidate + writeback %s", h->hdp_req, h->hdp_done, hdp ? "present" : "missing",
               l2 ? "present" : "missing");
      return hdp && l2;
    }
    i += pk;
  }
  snprintf(why, n, "no DISPATCH_DIRECT in %zu bytes", len);
  return 0;
}

