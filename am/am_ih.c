/* am/am_ih.c: IH rings (am/am_ih.h). */
#include "am/am_ih.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "am/am_soc.h"
#include "baregpu/error.h"
#include "platform/mmio.h"

#define OSS OSSSYS_HWIP

int bg_am_ih_create(bg_am_dev *d, bg_am_ih **out) {
  *out = NULL;
  bg_am_ih *ih = calloc(1, sizeof(*ih));
  if (!ih) return bg_error(BG_ENOMEM, "am: %s: ih state", d->bdf);
  ih->d = d;
  for (int r = 0; r < 2; r++) ih->ring[r] = ih->wptr[r] = UINT64_MAX;
  int e = 0;
  for (int r = 0; r < 2 && e >= 0; r++) {
    e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, BG_AM_IH_RING_SIZE, 0x1000, false, &ih->ring[r]);
    if (e >= 0) e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x1000, 0x1000, false, &ih->wptr[r]);
  }
  if (e < 0) {
    bg_am_ih_destroy(ih);
    return bg_error_context(e, "am: %s: ih init_sw: ", d->bdf);
  }
  *out = ih;
  return 0;
}

void bg_am_ih_destroy(bg_am_ih *ih) {
  if (!ih) return;
  for (int r = 1; r >= 0; r--) {
    if (ih->wptr[r] != UINT64_MAX) bg_am_vram_free(ih->d->mm, ih->wptr[r]);
    if (ih->ring[r] != UINT64_MAX) bg_am_vram_free(ih->d->mm, ih->ring[r]);
  }
  free(ih);
}

/* The registers of IH ring 0 and ring 1 (Linux ih_v6_0.c ih_v6_0_init_register_offset). */
static const struct {
  enum bg_am_reg_id base, base_hi, wptr, rptr, doorbell; /* IH_RB_CNTL(_RING1): fields differ, written below */
} RING[2] = {
    {regIH_RB_BASE, regIH_RB_BASE_HI, regIH_RB_WPTR, regIH_RB_RPTR, regIH_DOORBELL_RPTR},
    {regIH_RB_BASE_RING1, regIH_RB_BASE_HI_RING1, regIH_RB_WPTR_RING1, regIH_RB_RPTR_RING1, regIH_DOORBELL_RPTR_RING1},
};

static int ring_regs(bg_am_ih *ih, int r) {
  bg_am_dev *d = ih->d;
  uint64_t mc = bg_am_mc(d, ih->ring[r]) >> 8, wp = bg_am_mc(d, ih->wptr[r]);
  int e;
  if ((e = bg_am_nwreg(d, OSS, 0, RING[r].base, (uint32_t)mc)) < 0) return e;
  if ((e = bg_am_nwreg(d, OSS, 0, RING[r].base_hi, (uint32_t)(mc >> 32))) < 0) return e;
  if (r == 0)
    e = bg_am_nwreg_fields(d, OSS, 0, regIH_RB_CNTL, 0, NULL, BG_AM_F(IH_RB_CNTL__MC_SPACE, 4),
                           BG_AM_F(IH_RB_CNTL__WPTR_OVERFLOW_CLEAR, 1), BG_AM_F(IH_RB_CNTL__RB_SIZE, 16),
                           BG_AM_F(IH_RB_CNTL__MC_SNOOP, 1), BG_AM_F(IH_RB_CNTL__MC_RO, 0),
                           BG_AM_F(IH_RB_CNTL__MC_VMID, 0),
                           BG_AM_F(IH_RB_CNTL__WPTR_OVERFLOW_ENABLE, 1), BG_AM_F(IH_RB_CNTL__RPTR_REARM, 1));
  else
    e = bg_am_nwreg_fields(d, OSS, 0, regIH_RB_CNTL_RING1, 0, NULL, BG_AM_F(IH_RB_CNTL_RING1__MC_SPACE, 4),
                           BG_AM_F(IH_RB_CNTL_RING1__WPTR_OVERFLOW_CLEAR, 1), BG_AM_F(IH_RB_CNTL_RING1__RB_SIZE, 16),
                           BG_AM_F(IH_RB_CNTL_RING1__MC_SNOOP, 1), BG_AM_F(IH_RB_CNTL_RING1__MC_RO, 0),
                           BG_AM_F(IH_RB_CNTL_RING1__MC_VMID, 0), BG_AM_F(IH_RB_CNTL_RING1__RB_FULL_DRAIN_ENABLE, 1));
  if (e < 0) return e;
  if (r == 0) {
    if ((e = bg_am_nwreg(d, OSS, 0, regIH_RB_WPTR_ADDR_LO, (uint32_t)wp)) < 0) return e;
    if ((e = bg_am_nwreg(d, OSS, 0, regIH_RB_WPTR_ADDR_HI, (uint32_t)(wp >> 32))) < 0) return e;
  }
  if ((e = bg_am_nwreg(d, OSS, 0, RING[r].wptr, 0)) < 0) return e;
  if ((e = bg_am_nwreg(d, OSS, 0, RING[r].rptr, 0)) < 0) return e;
  return bg_am_nwreg(d, OSS, 0, RING[r].doorbell, 0);
}

int bg_am_ih_init(bg_am_ih *ih) {
  bg_am_dev *d = ih->d;
  int e = 0;
  /* A fresh ring: zero the write-pointer pages so that stale entries from a previous run are not read. */
  for (int r = 0; r < 2 && e >= 0; r++) e = bg_am_vram_zero(d->mm, ih->wptr[r], 0x1000);
  for (int r = 0; r < 2 && e >= 0; r++) e = ring_regs(ih, r);
  bool v442 = d->regs.osssys == &bg_am_regtab_osssys_4_4_2;
  if (e >= 0 && !v442) {
    e = bg_am_nwreg_fields(d, OSS, 0, regIH_STORM_CLIENT_LIST_CNTL, 1, NULL,
                           BG_AM_F(IH_STORM_CLIENT_LIST_CNTL__CLIENT18_IS_STORM_CLIENT, 1));
    if (e >= 0) e = bg_am_nwreg_fields(d, OSS, 0, regIH_INT_FLOOD_CNTL, 1, NULL,
                                       BG_AM_F(IH_INT_FLOOD_CNTL__FLOOD_CNTL_ENABLE, 1));
    if (e >= 0) e = bg_am_nwreg_fields(d, OSS, 0, regIH_MSI_STORM_CTRL, 1, NULL, BG_AM_F(IH_MSI_STORM_CTRL__DELAY, 3));
  }
  if (e >= 0) e = bg_am_nwreg_fields(d, OSS, 0, regIH_RB_CNTL, 1, NULL, BG_AM_F(IH_RB_CNTL__RB_ENABLE, 1),
                                     BG_AM_F(IH_RB_CNTL__ENABLE_INTR, 1));
  if (e >= 0) e = bg_am_nwreg_fields(d, OSS, 0, regIH_RB_CNTL_RING1, 1, NULL, BG_AM_F(IH_RB_CNTL_RING1__RB_ENABLE, 1));
  return e < 0 ? bg_error_context(e, "am: %s: ih: ", d->bdf) : 0;
}

static int utcl2_fault(bg_am_ih *ih, bg_am_ih_entry *en) {
  bg_am_dev *d = ih->d;
  uint32_t lo = 0, hi = 0;
  int e = bg_am_nrreg(d, GC_HWIP, 0, regGCVM_L2_PROTECTION_FAULT_ADDR_LO32, &lo);
  if (e >= 0) e = bg_am_nrreg(d, GC_HWIP, 0, regGCVM_L2_PROTECTION_FAULT_ADDR_HI32, &hi);
  if (e < 0) return e;
  en->fault_status = bg_am_rr(d, BG_AM_R_FAULT_STATUS);
  en->fault_addr = ((uint64_t)hi << 32 | lo) << 12;
  return bg_am_nwreg_fields(d, GC_HWIP, 0, regGCVM_L2_PROTECTION_FAULT_CNTL, 1, NULL,
                            BG_AM_F(GCVM_L2_PROTECTION_FAULT_CNTL__CLEAR_PROTECTION_FAULT_STATUS_ADDR, 1));
}

/* GFX_11_0_0__SRCID__SQ_INTERRUPT_ID / GFX_9_0__SRCID__SQ_INTERRUPT_ID (Linux ivsrcid/gfx/irqsrcs_gfx_*.h) */
#define IH_SRC_SQ_INTERRUPT 239u

uint32_t bg_am_ih_pending(uint32_t wreg, uint32_t rreg, uint32_t *first) {
  const uint32_t ndw = BG_AM_IH_RING_SIZE / 4;
  uint32_t w = (wreg >> 2) & 0xffffu, r = (rreg >> 2) % ndw; /* OFFSET[2:17], dword index */
  *first = r;
  /* Whole entries only: a WPTR off the 8-dword grid (a corrupt register) must not make the walk from RPTR step
   * past it forever (Linux amdgpu_ih_process also bounds its walk). */
  return ((w % ndw + ndw - r) % ndw) / 8;
}

void bg_am_ih_decode(const uint32_t dw[8], bg_am_ih_entry *en) {
  *en = (bg_am_ih_entry){
      .client = dw[0] & 0xff, .src = (dw[0] >> 8) & 0xff, .ring_id = (dw[0] >> 16) & 0xff,
      .vmid = (dw[0] >> 24) & 0xf, .vmid_type = dw[0] >> 31, .pasid = dw[3] & 0xffff, .node = (dw[3] >> 16) & 0xff,
      .ctx = {dw[4], dw[5], dw[6], dw[7]}};
}

int bg_am_ih_drain(bg_am_ih *ih, bg_am_ih_entry *out, size_t max, size_t *n) {
  bg_am_dev *d = ih->d;
  const uint32_t ndw = BG_AM_IH_RING_SIZE / 4;
  uint32_t wreg = 0, rreg = 0;
  int e = bg_am_nrreg(d, OSS, 0, regIH_RB_WPTR, &wreg);
  if (e >= 0) e = bg_am_nrreg(d, OSS, 0, regIH_RB_RPTR, &rreg);
  if (e < 0) return e;
  uint32_t r, w = (wreg >> 2) & 0xffffu;
  uint32_t pending = bg_am_ih_pending(wreg, rreg, &r);
  size_t cnt = 0;
  int nerr = 0;
  for (uint32_t i = 0; i < pending; i++) {
    uint32_t dw[8];
    for (int k = 0; k < 8; k++)
      dw[k] = bg_mmio_rd32(&d->vram, ih->ring[0] + 4ull * ((r + (uint32_t)k) % ndw));
    r = (r + 8) % ndw;
    bg_am_ih_entry en;
    bg_am_ih_decode(dw, &en);
    bool sdma_trap = en.src == d->ip.ih->sdma_trap_src; /* sources per IH descriptor (am/am_ip.c) */
    if (!sdma_trap) {
      if (en.src == 0 || (d->ip.ih->utcl2_client >= 0 && en.client == (uint32_t)d->ip.ih->utcl2_client)) {
        if ((e = utcl2_fault(ih, &en)) < 0) return e;
      }
      if (en.src == IH_SRC_SQ_INTERRUPT)
        snprintf(ih->last, sizeof(ih->last),
                 "am: %s: ih: SQ interrupt (a shader wave halted on an error: illegal instruction or memory violation) "
                 "client 0x%" PRIx32 " data 0x%" PRIx32 " 0x%" PRIx32 " 0x%" PRIx32 " 0x%" PRIx32, d->bdf, en.client,
                 en.ctx[0], en.ctx[1], en.ctx[2], en.ctx[3]);
      else
        snprintf(ih->last, sizeof(ih->last),
               "am: %s: ih: fault client 0x%" PRIx32 " src 0x%" PRIx32 " ring %" PRIu32 " vmid %" PRIu32
               " pasid %" PRIu32 " addr 0x%" PRIx64 " status 0x%" PRIx32,
               d->bdf, en.client, en.src, en.ring_id, en.vmid, en.pasid, en.fault_addr, en.fault_status);
      bg_log(0, "%s", ih->last);
      nerr++;
    }
    if (out && cnt < max) out[cnt] = en;
    cnt++;
  }
  if (n) *n = cnt;
  if ((e = bg_am_nwreg(d, OSS, 0, regIH_RB_RPTR, (w % ndw) << 2)) < 0) return e;
  if (wreg & 1) { /* RB_OVERFLOW */
    if ((e = bg_am_nwreg_fields(d, OSS, 0, regIH_RB_WPTR, 1, NULL, BG_AM_F(IH_RB_WPTR__RB_OVERFLOW, 0))) < 0) return e;
    if ((e = bg_am_nwreg_fields(d, OSS, 0, regIH_RB_CNTL, 1, NULL,
                                BG_AM_F(IH_RB_CNTL__WPTR_OVERFLOW_CLEAR, 1))) < 0) return e;
    if ((e = bg_am_nwreg_fields(d, OSS, 0, regIH_RB_CNTL, 1, NULL,
                                BG_AM_F(IH_RB_CNTL__WPTR_OVERFLOW_CLEAR, 0))) < 0) return e;
  }
  return nerr;
}
