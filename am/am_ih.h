/* am/am_ih.h: interrupt handler rings of the AM bring-up (tinygrad tinygrad/runtime/support/am/ip.py AM_IH).
 *
 *   bg_am_ih_create   init_sw: ring0 (256 KiB) + its wptr writeback page, ring1 (256 KiB) + wptr page, in the
 *                     boot region (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw); call after the GMC's and before the PSP/SMU allocations
 *   bg_am_ih_init     init_hw: per ring BASE/BASE_HI (mc >> 8), CNTL (MC_SPACE 4, WPTR_OVERFLOW_CLEAR, RB_SIZE 16,
 *                     MC_SNOOP; ring0 WPTR_OVERFLOW_ENABLE + RPTR_REARM, ring1 RB_FULL_DRAIN_ENABLE), ring0
 *                     WPTR_ADDR_LO/HI, WPTR = RPTR = 0, DOORBELL_RPTR = 0; OSSSYS != 4.4.2: storm/flood
 *                     controls; then RB_ENABLE (+ ENABLE_INTR on ring0). Register addresses by name, so the
 *                     osssys 6.0.0 / 7.0.0 orders (RPTR/WPTR at +3/+4 vs +1/+2) come from the tables.
 *   bg_am_ih_drain    ring0 entries between RPTR and WPTR.OFFSET: each decoded (client, src, ring, vmid,
 *                     pasid, ctx); a UTCL2 fault (src 0, or the IH descriptor's utcl2_client: 27 on vega20_ih) reads
 *                     GCVM_L2_PROTECTION_FAULT_STATUS(_LO32) and ADDR_HI32:LO32 and clears them through
 *                     FAULT_CNTL.CLEAR_PROTECTION_FAULT_STATUS_ADDR; every non-SDMA-trap entry is reported
 *                     ("am: <bdf>: ih: fault client 0x1b src 0x0 vmid 0 pasid 0 addr 0x...") and counted as an
 *                     error. Then RPTR = WPTR and a WPTR overflow is cleared.
 * Not done: RAS status check, ring1 processing, SQ interrupt decoding. */
#ifndef BG_AM_IH_H
#define BG_AM_IH_H

#include <stddef.h>
#include <stdint.h>

#include "am/am_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_AM_IH_RING_SIZE 0x40000u

typedef struct bg_am_ih_entry {
  uint32_t client, src, ring_id, vmid, vmid_type, pasid, node, ctx[4];
  uint64_t fault_addr;   /* UTCL2 faults: GCVM_L2_PROTECTION_FAULT_ADDR << 12, else 0 */
  uint32_t fault_status; /* UTCL2 faults: GCVM_L2_PROTECTION_FAULT_STATUS(_LO32) */
} bg_am_ih_entry;

typedef struct bg_am_ih {
  bg_am_dev *d;
  uint64_t ring[2], wptr[2]; /* VRAM offsets */
  char last[256];            /* last reported fault line */
} bg_am_ih;

int bg_am_ih_create(bg_am_dev *d, bg_am_ih **out);
void bg_am_ih_destroy(bg_am_ih *ih);
int bg_am_ih_init(bg_am_ih *ih);
/* Process ring0. Entries decoded go to out[0..max) (may be NULL); *n (may be NULL) gets the number drained.
 * Returns the number of error entries (faults) reported (>= 0), or a negative error. */
/* The pieces of bg_am_ih_drain that read what the GPU wrote (tests/fuzz/fuzz_ih.c): the whole 8-dword entries
 * between the RPTR and WPTR register values (at most the ring), *first = RPTR's dword index; one entry's fields. */
uint32_t bg_am_ih_pending(uint32_t wreg, uint32_t rreg, uint32_t *first);
void bg_am_ih_decode(const uint32_t dw[8], bg_am_ih_entry *en);
int bg_am_ih_drain(bg_am_ih *ih, bg_am_ih_entry *out, size_t max, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
