/* am/am_soc.c: SOC init and register access by id (am/am_soc.h). */
#include "am/am_soc.h"

#include "baregpu/error.h"

const struct bg_am_regtab *bg_am_tab_of(const bg_am_dev *d, int hwip) {
  switch (hwip) {
  case GC_HWIP: return d->regs.gc;
  case MMHUB_HWIP: return d->regs.mmhub;
  case NBIO_HWIP:
  case NBIF_HWIP: return d->regs.nbio;
  case OSSSYS_HWIP: return d->regs.osssys;
  case HDP_HWIP: return d->regs.hdp;
  case MP0_HWIP: return d->regs.mp;
  case SDMA0_HWIP: return d->regs.sdma;
  default: return NULL;
  }
}

static int lookup(bg_am_dev *d, int hwip, unsigned inst, enum bg_am_reg_id id, const struct bg_am_reg **r,
                  uint32_t *addr) {
  const struct bg_am_regtab *t = bg_am_tab_of(d, hwip);
  if (!t) return bg_error(BG_EINVAL, "am: %s: no register table for hwip %d (%s)", d->bdf, hwip, bg_am_reg_id_name(id));
  int e = bg_am_reg_get(t, id, r);
  if (e < 0) return bg_error_context(e, "am: %s: ", d->bdf);
  e = bg_am_reg_abs(&d->disc, hwip == NBIF_HWIP ? NBIO_HWIP : hwip, inst, *r, addr);
  return e < 0 ? bg_error_context(e, "am: %s: ", d->bdf) : 0;
}

int bg_am_nreg_addr(bg_am_dev *d, int hwip, unsigned inst, enum bg_am_reg_id id, uint32_t *addr) {
  const struct bg_am_reg *r;
  return lookup(d, hwip, inst, id, &r, addr);
}

int bg_am_nwreg(bg_am_dev *d, int hwip, unsigned inst, enum bg_am_reg_id id, uint32_t v) {
  uint32_t a;
  int e = bg_am_nreg_addr(d, hwip, inst, id, &a);
  return e < 0 ? e : bg_am_wreg(d, a, v);
}

int bg_am_nrreg(bg_am_dev *d, int hwip, unsigned inst, enum bg_am_reg_id id, uint32_t *v) {
  uint32_t a;
  int e = bg_am_nreg_addr(d, hwip, inst, id, &a);
  if (e >= 0) *v = bg_am_rreg(d, a);
  return e;
}

int bg_am_nwreg_fv(bg_am_dev *d, int hwip, unsigned inst, enum bg_am_reg_id id, int rmw, uint32_t *out,
                   const struct bg_am_fv *fv, size_t n) {
  const struct bg_am_reg *r;
  uint32_t a, v;
  int e = lookup(d, hwip, inst, id, &r, &a);
  if (e < 0) return e;
  v = rmw ? bg_am_rreg(d, a) : 0;
  if ((e = bg_am_reg_fields_set(r, &v, fv, n)) < 0) return bg_error_context(e, "am: %s: ", d->bdf);
  if (out) *out = v;
  return bg_am_wreg(d, a, v);
}

uint32_t bg_am_aid_mask(const bg_am_dev *d) { return d->ip.nbio->multi_aid ? d->disc.ip[MMHUB_HWIP].inst_mask : 1u; }

uint32_t bg_am_xcc_mask(const bg_am_dev *d) {
  const struct bg_am_ip *gc = &d->disc.ip[GC_HWIP];
  uint32_t m = gc->inst_mask & ~gc->harvest_mask;
  return m ? m : 1u;
}

unsigned bg_am_xcc_count(const bg_am_dev *d) { return (unsigned)__builtin_popcount(bg_am_xcc_mask(d)); }

/* indirect_wreg_pcie (tinygrad tinygrad/runtime/support/am/amdev.py AMDev register access): byte address reg*4, plus (1 << 34 | aid << 32) for another AID, through
 * BIF_BX0_PCIE_INDEX2(_HI)/PCIE_DATA2 of NBIO instance 0. */
int bg_am_indirect_wreg_pcie(bg_am_dev *d, uint32_t reg, uint32_t v, unsigned aid) {
  uint64_t a = (uint64_t)reg * 4 + (aid ? ((uint64_t)(aid & 3u) << 32 | 1ull << 34) : 0);
  uint32_t hi = (uint32_t)(a >> 32);
  int e = bg_am_nwreg(d, NBIO_HWIP, 0, regBIF_BX0_PCIE_INDEX2, (uint32_t)a);
  if (e >= 0 && hi) e = bg_am_nwreg(d, NBIO_HWIP, 0, regBIF_BX0_PCIE_INDEX2_HI, hi & 0xffu);
  if (e >= 0) e = bg_am_nwreg(d, NBIO_HWIP, 0, regBIF_BX0_PCIE_DATA2, v);
  if (e >= 0 && hi) e = bg_am_nwreg(d, NBIO_HWIP, 0, regBIF_BX0_PCIE_INDEX2_HI, 0);
  return e < 0 ? bg_error_context(e, "am: %s: indirect PCIe write of 0x%x to AID %u: ", d->bdf, reg, aid) : 0;
}

/* Linux soc21/soc24/soc15 common_hw_init -> nbio_v4_3/nbif_v6_3_1/nbio_v7_9 remap_hdp_registers: HDP_MEM_FLUSH_CNTL
 * and HDP_REG_FLUSH_CNTL appear at the hole of the NBIO descriptor (BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL =
 * hole + KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL (0), BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL = hole + 4). Until then the HDP
 * flush has nowhere to go. REG_FLUSH_CNTL is the dword after MEM_FLUSH_CNTL (0x12e / 0x12d, segment 2, in
 * nbio_4_3_0/nbif_6_3_1/nbio_7_9_0_offset.h); the generated tables do not carry it. Then the flush dword is pinned
 * (bg_am_flush_hdp_pin reads it back). */
static int remap_hdp(bg_am_dev *d) {
  uint32_t mem, hole = d->ip.nbio->hdp_hole;
  int e = bg_am_nreg_addr(d, NBIO_HWIP, 0, regBIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL, &mem);
  if (e >= 0) e = bg_am_wreg(d, mem, hole);
  if (e >= 0) e = bg_am_wreg(d, mem + 1, hole + 4);
  d->hdp_flush_dw = 0;
  if (e >= 0) e = bg_am_flush_hdp_pin(d);
  return e < 0 ? bg_error_context(e, "am: %s: SOC init: HDP remap: ", d->bdf) : 0;
}

int bg_am_soc_init(bg_am_dev *d) {
  int e;
  if (d->ip.nbio->multi_aid) { /* NBIO 7.9.x (MI300): fence the doorbells of harvested XCCs, slave mode on other AIDs */
    unsigned live = bg_am_xcc_mask(d) & 0xffu;
    if ((e = bg_am_nwreg(d, NBIO_HWIP, 0, regXCC_DOORBELL_FENCE, 0xffu & ~live)) < 0) return e;
    uint32_t fence, slave = 0;
    const struct bg_am_reg *r = bg_am_reg_find(d->regs.nbio, regXCC_DOORBELL_FENCE);
    if ((e = bg_am_nreg_addr(d, NBIO_HWIP, 0, regXCC_DOORBELL_FENCE, &fence)) < 0 ||
        (e = bg_am_reg_field_set(r, &slave, XCC_DOORBELL_FENCE__SHUB_SLV_MODE, 1)) < 0)
      return e;
    uint32_t aids = bg_am_aid_mask(d);
    for (unsigned aid = 1; aid < 32; aid++)
      if ((aids >> aid & 1) && (e = bg_am_indirect_wreg_pcie(d, fence, slave, aid)) < 0) return e;
    if ((e = bg_am_nwreg(d, NBIO_HWIP, 0, regBIFC_GFX_INT_MONITOR_MASK, 0x7ff)) < 0) return e;
    if ((e = bg_am_nwreg(d, NBIO_HWIP, 0, regBIFC_DOORBELL_ACCESS_EN_PF, 0xfffff)) < 0) return e;
  } else if ((e = bg_am_nwreg_fields(d, NBIO_HWIP, 0, regRCC_DEV0_EPF2_STRAP2, 1, NULL,
                                     BG_AM_F(RCC_DEV0_EPF2_STRAP2__STRAP_NO_SOFT_RESET_DEV0_F2, 0))) < 0) {
    return e;
  }
  if ((e = remap_hdp(d)) < 0) return e;
  return bg_am_nwreg_fields(d, NBIO_HWIP, 0, regRCC_DEV0_EPF0_RCC_DOORBELL_APER_EN, 0, NULL,
                            BG_AM_F(RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN__BIF_DOORBELL_APER_EN, 1));
}
