/* am/am_gmc.h: GMC of the AM bring-up (tinygrad tinygrad/runtime/support/am/ip.py AM_GMC): FB location, system aperture, MMHUB and GC hub, the
 * context-0 page tables (am/mm_pt.h) and TLB invalidation.
 *
 *   bg_am_gmc_create   init_sw: FB_LOCATION_BASE/TOP read back (fb_base, fb_end, mc_base = fb_base; no XGMI
 *                      hive support: paddr_base 0), root page table (mm_pt, boot region, zeroed), memscratch
 *                      page, dummy page (boot region, tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw) — call before the PSP/SMU allocations
 *   bg_am_gmc_init     init_hw: bg_am_gmc_enable_hub(MM); gfx9 (no RLC autoload) also bg_am_gmc_enable_hub(GC).
 *                      On gfx11/12 the RLC autoload resets the GC hub, so bg_am_gfx_init enables it after the
 *                      autoload (Linux gfx_v11_0_hw_init -> gfx_v11_0_gfxhub_enable; tinygrad AM_GFX.init_hw)
 *   bg_am_gmc_enable_hub  hub init of every instance of one hub kind, then one TLB flush of that hub (Linux
 *                      gmc_v11_0_gart_enable, gfx_v11_0_gfxhub_enable: flush_gpu_tlb right after the enable)
 *   bg_am_gmc_flush_tlb  flush_hdp, then per instance: MMHUB only acquire ENG17_SEM (read until bit0), write
 *                      ENG17_REQ = 0xf80001 (vmid 0), poll ENG17_ACK bit0, MMHUB release SEM, GC >= 11 on MMHUB
 *                      set MMVM_L2_BANK_SELECT_RESERVED_CID2.RESERVED_CACHE_PRIVATE_INVALIDATION and read back.
 *                      A hub not yet initialised is skipped (hub_initted). mm_pt's flush callback flushes GC
 *                      then MM.
 * One thread at a time. */
#ifndef BG_AM_GMC_H
#define BG_AM_GMC_H

#include <stdbool.h>
#include <stdint.h>

#include "am/am_dev.h"
#include "am/mm_pt.h"

#ifdef __cplusplus
extern "C" {
#endif

enum bg_am_hub { BG_AM_HUB_MM = 0, BG_AM_HUB_GC = 1 };

typedef struct bg_am_gmc {
  bg_am_dev *d;
  bg_am_pt *pt;              /* context 0 page tables (root in the boot region) */
  enum bg_am_pt_gen gen;
  uint64_t fb_base, fb_end, mc_base, paddr_base;
  uint64_t vm_base, vm_end;
  uint64_t memscratch, dummy; /* VRAM offsets */
  bool hub_initted[2];
  unsigned long nflush[2];   /* flush_tlb calls that reached a hub */
} bg_am_gmc;

int bg_am_gmc_create(bg_am_dev *d, bg_am_gmc **out);
/* Frees the page tables and the boot pages (VRAM is not written). */
void bg_am_gmc_destroy(bg_am_gmc *g);
int bg_am_gmc_init(bg_am_gmc *g);
/* Hub init of one hub kind on all its instances (init_hub), no flush. */
int bg_am_gmc_init_hub(bg_am_gmc *g, enum bg_am_hub hub);
/* init_hub, then flush_tlb of that hub (vmid 0). */
int bg_am_gmc_enable_hub(bg_am_gmc *g, enum bg_am_hub hub);
int bg_am_gmc_flush_tlb(bg_am_gmc *g, enum bg_am_hub hub, unsigned vmid);

#ifdef __cplusplus
}
#endif
#endif
