/* tests/conformance/cf_stream_amd.c: the AMD reader of captured compute streams (cf_stream.c): the memory barrier
 * as tinygrad's ops_amd.py emits it, an HDP flush then ACQUIRE_MEM over L2, found before the dispatch. PM4 layouts
 * from am/am_pm4.h (Linux nvd.h / soc15d.h). */
#include <stdio.h>
#include <string.h>

#include "am/am_hcq.h"
#include "am/am_pm4.h"
#include "conformance.h"
#include "hcq/backend.h"
#include "hcq/dev_internal.h"

/* Scan ndw dwords of PM4 for the barrier's HDP flush and L2 ACQUIRE_MEM; true at a DISPATCH_DIRECT (stops there). */
static bool scan_pm4(const am_hcq *h, const uint8_t *s, size_t ndw, bool *hdp, bool *l2) {
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
      *hdp = true;
    if (op == PACKET3_ACQUIRE_MEM) {
      uint32_t want = h->gfx >= 10 ? PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB(1)
                                   : PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_ACTION_ENA(1) |
                                         PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_WB_ACTION_ENA(1);
      uint32_t got = h->gfx >= 10 ? (pk >= 8 ? dw[7] : 0) : dw[1];
      if ((got & want) == want) *l2 = true;
    }
    if (op == PACKET3_DISPATCH_DIRECT) return true;
    i += pk;
  }
  return false;
}

/* gfx942's AQL queue (am/am_hcq_aql.c): 64-byte packets; the PM4 sits in IBs of vendor-specific packets (in the
 * submission's kernel-argument block, read through the arena's CPU view), the dispatch is a KERNEL_DISPATCH packet. */
static int aql_barrier(const bg_dev *d, const am_hcq *h, const uint8_t *s, size_t len, char *why, size_t n) {
  bool hdp = false, l2 = false;
  const bg_mem *m = d->kargs_buf ? &d->kargs_buf->mem : NULL;
  for (size_t o = 0; o + 64 <= len; o += 64) {
    uint32_t pk[16];
    memcpy(pk, s + o, sizeof pk);
    if ((pk[0] & 0xff) == 2) { /* KERNEL_DISPATCH */
      snprintf(why, n, "before the dispatch packet: HDP flush (WAIT_REG_MEM write-then-wait on 0x%x/0x%x) %s, "
               "ACQUIRE_MEM with L2 invalidate + writeback %s (in vendor-specific IBs)", h->hdp_req, h->hdp_done,
               hdp ? "present" : "missing", l2 ? "present" : "missing");
      return hdp && l2;
    }
    if ((pk[0] & 0xff) != 0 || pk[0] >> 16 != 1) continue; /* only vendor PM4_IB packets carry PM4 */
    uint64_t va = (uint64_t)(pk[3] & 0xffff) << 32 | pk[2];
    size_t ndw = pk[4] & 0xfffff;
    if (!m || !m->cpu || va < m->va || va + 4 * ndw > m->va + m->size) {
      snprintf(why, n, "the vendor packet's IB at 0x%llx is not in the kernel-argument arena's CPU view",
               (unsigned long long)va);
      return -1;
    }
    scan_pm4(h, (const uint8_t *)m->cpu + (va - m->va), ndw, &hdp, &l2);
  }
  snprintf(why, n, "no KERNEL_DISPATCH packet in %zu bytes", len);
  return 0;
}

/* AMD PM4: before the first DISPATCH_DIRECT, an HDP flush on this GPU's registers and an ACQUIRE_MEM that invalidates
 * and writes back L2 (the dispatch prologue's own ACQUIRE_MEM leaves L2 alone: BG_PM4_DISPATCH_CACHES). */
int cf_stream_amd_barrier(const bg_dev *d, const uint8_t *s, size_t len, char *why, size_t n) {
  const am_hcq *h = d->priv;
  if (h->q[0] && h->q[0]->aql) return aql_barrier(d, h, s, len, why, n);
  bool hdp = false, l2 = false;
  if (scan_pm4(h, s, len / 4, &hdp, &l2)) {
    snprintf(why, n, "before the dispatch: HDP flush (WAIT_REG_MEM write-then-wait on 0x%x/0x%x) %s, ACQUIRE_MEM "
             "with L2 invalidate + writeback %s", h->hdp_req, h->hdp_done, hdp ? "present" : "missing",
             l2 ? "present" : "missing");
    return hdp && l2;
  }
  snprintf(why, n, "no DISPATCH_DIRECT in %zu bytes", len);
  return 0;
}
