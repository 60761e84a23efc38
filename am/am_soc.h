/* am/am_soc.h: SOC init of the AM bring-up (tinygrad tinygrad/runtime/support/am/ip.py AM_SOC), and register access by id through the generated
 * tables (used by am_soc.c, am_gmc.c, am_ih.c).
 *
 * SOC init_hw: NBIO 7.9.x: XCC_DOORBELL_FENCE = 0xff & ~live XCCs on AID 0, {SHUB_SLV_MODE = 1} on every other AID
 * through indirect PCIe writes, BIFC_GFX_INT_MONITOR_MASK = 0x7ff,
 * BIFC_DOORBELL_ACCESS_EN_PF = 0xfffff; otherwise RCC_DEV0_EPF2_STRAP2.STRAP_NO_SOFT_RESET_DEV0_F2 = 0
 * (read-modify-write, through RSMU beyond BAR5); then the HDP flush remap (BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL /
 * _REG_FLUSH_CNTL at the NBIO descriptor's hole, Linux remap_hdp_registers; read back and pinned: am_dev.h
 * bg_am_flush_hdp); always RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = 1.
 * Not done: set_clockgating_state, doorbell_enable (GFX/SDMA bring-up). */
#ifndef BG_AM_SOC_H
#define BG_AM_SOC_H

#include <stdbool.h>
#include <stdint.h>

#include "am/am_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Register table of an IP block (GC, MMHUB, NBIO/NBIF, OSSSYS, HDP, MP0), NULL otherwise. */
const struct bg_am_regtab *bg_am_tab_of(const bg_am_dev *d, int hwip);
/* Absolute address of register `id` of instance `inst` of `hwip`; errors name the table and the register. */
int bg_am_nreg_addr(bg_am_dev *d, int hwip, unsigned inst, enum bg_am_reg_id id, uint32_t *addr);
int bg_am_nwreg(bg_am_dev *d, int hwip, unsigned inst, enum bg_am_reg_id id, uint32_t v);
int bg_am_nrreg(bg_am_dev *d, int hwip, unsigned inst, enum bg_am_reg_id id, uint32_t *v);
/* Write n field values from 0 (rmw false) or on top of the register's current value (rmw true: read, then
 * write). *out (may be NULL) gets the written value. A field of another register is -BG_EINVAL naming both. */
int bg_am_nwreg_fv(bg_am_dev *d, int hwip, unsigned inst, enum bg_am_reg_id id, int rmw, uint32_t *out,
                   const struct bg_am_fv *fv, size_t n);
/* The same with the field values as arguments, each BG_AM_F(FIELD_ID, value):
 *   bg_am_nwreg_fields(d, GC_HWIP, 0, regGRBM_CNTL, 1, NULL, BG_AM_F(GRBM_CNTL__READ_TIMEOUT, 0xff)) */
#define BG_AM_F(field, val) {(field), (uint32_t)(val)}
#define bg_am_nwreg_fields(d, hwip, inst, id, rmw, out, ...)                                               \
  bg_am_nwreg_fv((d), (hwip), (inst), (id), (rmw), (out), (const struct bg_am_fv[]){__VA_ARGS__},          \
                 sizeof((const struct bg_am_fv[]){__VA_ARGS__}) / sizeof(struct bg_am_fv))

int bg_am_soc_init(bg_am_dev *d);

/* AIDs (MMHUB instances where the NBIO descriptor has several AIDs, NBIO 7.9.x; else just AID 0) and live (not harvested) GC XCCs, as instance masks. */
uint32_t bg_am_aid_mask(const bg_am_dev *d);
uint32_t bg_am_xcc_mask(const bg_am_dev *d);
unsigned bg_am_xcc_count(const bg_am_dev *d);
/* indirect_wreg_pcie (tinygrad tinygrad/runtime/support/am/amdev.py AMDev register access): write the register at absolute dword `reg` of AID `aid` through
 * BIF_BX0_PCIE_INDEX2/INDEX2_HI/DATA2 (INDEX2_HI only for aid > 0, reset to 0 afterwards). */
int bg_am_indirect_wreg_pcie(bg_am_dev *d, uint32_t reg, uint32_t v, unsigned aid);

#ifdef __cplusplus
}
#endif
#endif
