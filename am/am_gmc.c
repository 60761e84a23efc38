/* am/am_gmc.c: GMC (am/am_gmc.h). */
#include "am/am_gmc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "am/am_soc.h"
#include "am/mm_va.h"
#include "baregpu/error.h"

/* Register / field X of hub h: regGCVM_X, regGCMC_VM_X on the GC hub, regMMVM_X, regMMMC_VM_X on the MM hub
 * (CDNA names are normalised so, am/regs/README.md). Both identifiers must exist, so a typo fails the build. */
#define HR(h, X) ((h) == BG_AM_HUB_MM ? regMM##X : regGC##X)
#define HF(h, X, F) ((h) == BG_AM_HUB_MM ? MM##X##__##F : GC##X##__##F)

static int hwip_of(enum bg_am_hub h) { return h == BG_AM_HUB_MM ? MMHUB_HWIP : GC_HWIP; }
static const char *pfx_of(enum bg_am_hub h) { return h == BG_AM_HUB_MM ? "MM" : "GC"; }
/* Hub instances: every MMHUB (one per AID on MI300), the live (not harvested) GC XCCs. */
static uint32_t insts_of(const bg_am_dev *d, enum bg_am_hub h) {
  return h == BG_AM_HUB_MM ? d->disc.ip[MMHUB_HWIP].inst_mask : bg_am_xcc_mask(d);
}

/* VM_INVALIDATE_ENG<n>_ADDR_RANGE_LO32 / _HI32 of engines 0..17, GC and MM hub. */
#define ENG(n)                                                                                                  \
  {{regGCVM_INVALIDATE_ENG##n##_ADDR_RANGE_LO32, regGCVM_INVALIDATE_ENG##n##_ADDR_RANGE_HI32},                  \
   {regMMVM_INVALIDATE_ENG##n##_ADDR_RANGE_LO32, regMMVM_INVALIDATE_ENG##n##_ADDR_RANGE_HI32}}
static const enum bg_am_reg_id INV_RANGE[18][2][2] = {ENG(0),  ENG(1),  ENG(2),  ENG(3),  ENG(4),  ENG(5),
                                                      ENG(6),  ENG(7),  ENG(8),  ENG(9),  ENG(10), ENG(11),
                                                      ENG(12), ENG(13), ENG(14), ENG(15), ENG(16), ENG(17)};
#undef ENG

static int flush_cb(void *ctx) {
  bg_am_gmc *g = ctx;
  int e = bg_am_gmc_flush_tlb(g, BG_AM_HUB_GC, 0);
  return e < 0 ? e : bg_am_gmc_flush_tlb(g, BG_AM_HUB_MM, 0);
}

int bg_am_gmc_create(bg_am_dev *d, bg_am_gmc **out) {
  *out = NULL;
  bg_am_gmc *g = calloc(1, sizeof(*g));
  if (!g) return bg_error(BG_ENOMEM, "am: %s: gmc state", d->bdf);
  g->d = d;
  g->memscratch = g->dummy = UINT64_MAX; /* not allocated */
  uint32_t base = 0, top = 0;
  g->gen = d->ip.gmc->pt_gen; /* am/am_ip.h */
  int e = bg_am_nrreg(d, MMHUB_HWIP, 0, regMMMC_VM_FB_LOCATION_BASE, &base);
  if (e >= 0) e = bg_am_nrreg(d, MMHUB_HWIP, 0, regMMMC_VM_FB_LOCATION_TOP, &top);
  if (e < 0) goto fail;
  g->fb_base = (uint64_t)(base & 0xffffffu) << 24;
  g->fb_end = (uint64_t)(top & 0xffffffu) << 24;
  g->mc_base = g->fb_base + g->paddr_base;
  g->vm_base = BG_AM_VA_BASE;
  g->vm_end = 0x7fffffffffffull; /* min(vm_base + 2^48 - 1, 0x7fffffffffff) with vm_base 0x200000000000 */
  if (g->fb_end <= g->fb_base) {
    e = bg_error(BG_EIO, "am: %s: gmc: FB location base 0x%" PRIx32 " top 0x%" PRIx32 " is empty", d->bdf, base, top);
    goto fail;
  }
  struct bg_am_pt_config pc = {
      .gen = g->gen, .va_base = g->vm_base, .va_size = BG_AM_VA_SIZE, .paddr_base = g->paddr_base,
      .addr_mask = (1ull << d->ip.gmc->pa_bits) - 1, .flush = flush_cb, .flush_ctx = g};
  if ((e = bg_am_pt_create(&pc, d->mm, &g->pt)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x1000, 0x1000, false, &g->memscratch)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x1000, 0x1000, false, &g->dummy)) < 0) {
    bg_error_context(e, "am: %s: gmc init_sw: ", d->bdf);
    goto fail;
  }
  g->hub_initted[BG_AM_HUB_MM] = true; /* valid from a previous boot on a warm start (tinygrad tinygrad/runtime/support/am/ip.py AM_GMC) */
  *out = g;
  return 0;
fail:
  bg_am_gmc_destroy(g);
  return e;
}

void bg_am_gmc_destroy(bg_am_gmc *g) {
  if (!g) return;
  if (g->pt) bg_am_pt_destroy(g->pt);
  if (g->dummy != UINT64_MAX) bg_am_vram_free(g->d->mm, g->dummy);
  if (g->memscratch != UINT64_MAX) bg_am_vram_free(g->d->mm, g->memscratch);
  free(g);
}

static int w(bg_am_gmc *g, enum bg_am_hub h, unsigned inst, enum bg_am_reg_id id, uint32_t v) {
  return bg_am_nwreg(g->d, hwip_of(h), inst, id, v);
}

static int hub_one(bg_am_gmc *g, enum bg_am_hub h, unsigned i) {
  bg_am_dev *d = g->d;
  int hw = hwip_of(h), e;
  const struct bg_am_gmc_ip *ip = d->ip.gmc;
  uint64_t scratch = (g->paddr_base + g->memscratch) >> 12, dummy = (g->paddr_base + g->dummy) >> 12;
  uint64_t root = bg_am_pt_base_reg(g->pt);
  e = w(g, h, i, HR(h, MC_VM_AGP_BASE), 0);
  if (e >= 0) e = w(g, h, i, HR(h, MC_VM_AGP_BOT), 0xffffff);
  if (e >= 0) e = w(g, h, i, HR(h, MC_VM_AGP_TOP), 0);
  if (e >= 0) e = w(g, h, i, HR(h, MC_VM_SYSTEM_APERTURE_LOW_ADDR), (uint32_t)(g->fb_base >> 18));
  if (e >= 0) e = w(g, h, i, HR(h, MC_VM_SYSTEM_APERTURE_HIGH_ADDR), (uint32_t)(g->fb_end >> 18));
  if (e >= 0) e = w(g, h, i, HR(h, MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB), (uint32_t)scratch);
  if (e >= 0) e = w(g, h, i, HR(h, MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB), (uint32_t)(scratch >> 32));
  if (e >= 0) e = w(g, h, i, HR(h, VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32), (uint32_t)dummy);
  if (e >= 0) e = w(g, h, i, HR(h, VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32), (uint32_t)(dummy >> 32));
  if (e >= 0)
    e = bg_am_nwreg_fields(d, hw, i, HR(h, VM_L2_PROTECTION_FAULT_CNTL2), 1, NULL,
                           BG_AM_F(HF(h, VM_L2_PROTECTION_FAULT_CNTL2, ACTIVE_PAGE_MIGRATION_PTE_READ_RETRY), 1));
  if (e >= 0)
    e = bg_am_nwreg_fields(d, hw, i, HR(h, MC_VM_MX_L1_TLB_CNTL), 1, NULL,
                           BG_AM_F(HF(h, MC_VM_MX_L1_TLB_CNTL, ENABLE_L1_TLB), 1),
                           BG_AM_F(HF(h, MC_VM_MX_L1_TLB_CNTL, SYSTEM_ACCESS_MODE), 3),
                           BG_AM_F(HF(h, MC_VM_MX_L1_TLB_CNTL, ENABLE_ADVANCED_DRIVER_MODEL), 1),
                           BG_AM_F(HF(h, MC_VM_MX_L1_TLB_CNTL, SYSTEM_APERTURE_UNMAPPED_ACCESS), 0),
                           BG_AM_F(HF(h, MC_VM_MX_L1_TLB_CNTL, MTYPE), AMDGPU_MTYPE_UC));
  if (e >= 0)
    e = bg_am_nwreg_fields(d, hw, i, HR(h, VM_L2_CNTL), 1, NULL, BG_AM_F(HF(h, VM_L2_CNTL, ENABLE_L2_CACHE), 1),
                           BG_AM_F(HF(h, VM_L2_CNTL, ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY), 1),
                           BG_AM_F(HF(h, VM_L2_CNTL, L2_PDE0_CACHE_TAG_GENERATION_MODE), 0),
                           BG_AM_F(HF(h, VM_L2_CNTL, PDE_FAULT_CLASSIFICATION), 0),
                           BG_AM_F(HF(h, VM_L2_CNTL, CONTEXT1_IDENTITY_ACCESS_MODE), 1),
                           BG_AM_F(HF(h, VM_L2_CNTL, IDENTITY_MODE_FRAGMENT_SIZE), 0),
                           BG_AM_F(HF(h, VM_L2_CNTL, ENABLE_L2_FRAGMENT_PROCESSING), ip->l2_fragment));
  if (e >= 0)
    e = bg_am_nwreg_fields(d, hw, i, HR(h, VM_L2_CNTL2), 1, NULL,
                           BG_AM_F(HF(h, VM_L2_CNTL2, INVALIDATE_ALL_L1_TLBS), 1),
                           BG_AM_F(HF(h, VM_L2_CNTL2, INVALIDATE_L2_CACHE), 1));
  if (e >= 0)
    e = bg_am_nwreg_fields(d, hw, i, HR(h, VM_L2_CNTL3), 0, NULL,
                           BG_AM_F(HF(h, VM_L2_CNTL3, L2_CACHE_4K_ASSOCIATIVITY), 1),
                           BG_AM_F(HF(h, VM_L2_CNTL3, L2_CACHE_BIGK_ASSOCIATIVITY), 1),
                           BG_AM_F(HF(h, VM_L2_CNTL3, BANK_SELECT), ip->l2_bank_select),
                           BG_AM_F(HF(h, VM_L2_CNTL3, L2_CACHE_BIGK_FRAGMENT_SIZE), ip->l2_bigk_fragment));
  if (e >= 0)
    e = bg_am_nwreg_fields(d, hw, i, HR(h, VM_L2_CNTL4), 0, NULL,
                           BG_AM_F(HF(h, VM_L2_CNTL4, L2_CACHE_4K_PARTITION_COUNT), 1));
  if (e >= 0 && ip->l2_cntl5)
    e = bg_am_nwreg_fields(d, hw, i, HR(h, VM_L2_CNTL5), 0, NULL,
                           BG_AM_F(HF(h, VM_L2_CNTL5, WALKER_PRIORITY_CLIENT_ID), 0x1ff));
  /* enable_vm_addressing(root, vmid 0) */
  if (e >= 0) e = w(g, h, i, HR(h, VM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32), (uint32_t)(g->vm_base >> 12));
  if (e >= 0) e = w(g, h, i, HR(h, VM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32), (uint32_t)(g->vm_base >> 44));
  if (e >= 0) e = w(g, h, i, HR(h, VM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32), (uint32_t)(g->vm_end >> 12));
  if (e >= 0) e = w(g, h, i, HR(h, VM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32), (uint32_t)(g->vm_end >> 44));
  if (e >= 0) e = w(g, h, i, HR(h, VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32), (uint32_t)root);
  if (e >= 0) e = w(g, h, i, HR(h, VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32), (uint32_t)(root >> 32));
  if (e >= 0) {
    uint32_t v = 0x1800000;
    const struct bg_am_reg *r = bg_am_reg_find(bg_am_tab_of(d, hw), HR(h, VM_CONTEXT0_CNTL));
    if (!r)
      return bg_error(BG_ENOTSUP, "am: %s: gmc: no register %s", d->bdf, bg_am_reg_id_name(HR(h, VM_CONTEXT0_CNTL)));
#define PF(X) BG_AM_F(HF(h, VM_CONTEXT0_CNTL, X##_PROTECTION_FAULT_ENABLE_INTERRUPT), 1), \
              BG_AM_F(HF(h, VM_CONTEXT0_CNTL, X##_PROTECTION_FAULT_ENABLE_DEFAULT), 1)
    const struct bg_am_fv fv[] = {
        PF(RANGE), PF(DUMMY_PAGE), PF(PDE0), PF(VALID), PF(READ), PF(WRITE), PF(EXECUTE),
        BG_AM_F(HF(h, VM_CONTEXT0_CNTL, ENABLE_CONTEXT), 1),
        BG_AM_F(HF(h, VM_CONTEXT0_CNTL, PAGE_TABLE_DEPTH), bg_am_pt_hw_depth(g->gen)),
        BG_AM_F(HF(h, VM_CONTEXT0_CNTL, PAGE_TABLE_BLOCK_SIZE), bg_am_pt_hw_block_size(g->gen))};
#undef PF
    if ((e = bg_am_reg_fields_set(r, &v, fv, sizeof(fv) / sizeof(fv[0]))) < 0)
      return bg_error_context(e, "am: %s: gmc: ", d->bdf);
    e = w(g, h, i, HR(h, VM_CONTEXT0_CNTL), v);
  }
  if (e >= 0) e = w(g, h, i, HR(h, VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32), 0xffffffff);
  if (e >= 0) e = w(g, h, i, HR(h, VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32), 0xf);
  if (e >= 0) e = w(g, h, i, HR(h, VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32), 0);
  if (e >= 0) e = w(g, h, i, HR(h, VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32), 0);
  if (e >= 0) e = w(g, h, i, HR(h, VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32), 0);
  if (e >= 0) e = w(g, h, i, HR(h, VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32), 0);
  for (unsigned k = 0; k <= 17 && e >= 0; k++) {
    e = w(g, h, i, INV_RANGE[k][h == BG_AM_HUB_MM][0], 0xffffffff);
    if (e >= 0) e = w(g, h, i, INV_RANGE[k][h == BG_AM_HUB_MM][1], 0x1f);
  }
  return e;
}

int bg_am_gmc_init_hub(bg_am_gmc *g, enum bg_am_hub h) {
  uint32_t mask = insts_of(g->d, h);
  for (unsigned i = 0; i < 32; i++) {
    if (!(mask >> i & 1)) continue;
    int e = hub_one(g, h, i);
    if (e < 0) return bg_error_context(e, "am: %s: gmc: %s hub %u: ", g->d->bdf, pfx_of(h), i);
  }
  g->hub_initted[h] = true;
  return 0;
}

/* Linux enables a hub, flushes HDP, then flushes the hub's TLB once (gmc_v11_0_gart_enable for MMHUB,
 * gfx_v11_0_gfxhub_enable / gfx_v12_0_gfxhub_enable for the GFX hub); bg_am_gmc_flush_tlb flushes HDP first. */
int bg_am_gmc_enable_hub(bg_am_gmc *g, enum bg_am_hub h) {
  int e = bg_am_gmc_init_hub(g, h);
  return e < 0 ? e : bg_am_gmc_flush_tlb(g, h, 0);
}

int bg_am_gmc_init(bg_am_gmc *g) {
  int e = bg_am_gmc_enable_hub(g, BG_AM_HUB_MM);
  /* gfx11/12: the RLC autoload resets the GC hub, so bg_am_gfx_init enables it after the autoload
   * (gfx_v11_0_hw_init); gfx9 has no autoload: both hubs here, as gmc_v9_0_gart_enable / gmc_v9_0_hw_init do */
  if (e < 0 || g->d->ip.gfx->rlc_autoload) return e;
  return bg_am_gmc_enable_hub(g, BG_AM_HUB_GC);
}

static int poll(bg_am_gmc *g, uint32_t addr, uint32_t mask, const char *what) {
  bg_am_dev *d = g->d;
  double end = bg_am_now_ms() + d->opts.timeout_ms;
  uint32_t v;
  for (;;) {
    if ((v = bg_am_rreg(d, addr)) & mask) return 0;
    if (bg_am_now_ms() > end) break;
  }
  return bg_error(BG_ETIMEDOUT, "am: %s: gmc: timeout after %d ms waiting for %s (0x%" PRIx32 ") & 0x%" PRIx32
                  " (last 0x%" PRIx32 ")", d->bdf, d->opts.timeout_ms, what, addr, mask, v);
}

int bg_am_gmc_flush_tlb(bg_am_gmc *g, enum bg_am_hub h, unsigned vmid) {
  bg_am_dev *d = g->d;
  int e = bg_am_flush_hdp(d);
  if (e < 0 || !g->hub_initted[h]) return e;
  int hw = hwip_of(h);
  uint32_t mask = insts_of(d, h);
  for (unsigned i = 0; i < 32 && e >= 0; i++) {
    if (!(mask >> i & 1)) continue;
    uint32_t sem = 0, req = 0, ack = 0;
    if ((e = bg_am_nreg_addr(d, hw, i, HR(h, VM_INVALIDATE_ENG17_SEM), &sem)) < 0 ||
        (e = bg_am_nreg_addr(d, hw, i, HR(h, VM_INVALIDATE_ENG17_REQ), &req)) < 0 ||
        (e = bg_am_nreg_addr(d, hw, i, HR(h, VM_INVALIDATE_ENG17_ACK), &ack)) < 0)
      return e;
    if (h == BG_AM_HUB_MM && (e = poll(g, sem, 1, "MMVM_INVALIDATE_ENG17_SEM")) < 0) return e;
    uint32_t v = (1u << vmid) | 0x1fu << 19; /* PER_VMID_INVALIDATE_REQ, INVALIDATE_L2_PTES/PDE0/1/2, L1_PTES */
    if ((e = bg_am_wreg(d, req, v)) < 0) return e;
    e = poll(g, ack, 1u << vmid, h == BG_AM_HUB_MM ? "MMVM_INVALIDATE_ENG17_ACK" : "GCVM_INVALIDATE_ENG17_ACK");
    if (h == BG_AM_HUB_MM) {
      int e2 = bg_am_wreg(d, sem, 0);
      if (e >= 0) e = e2;
    }
    if (e >= 0 && h == BG_AM_HUB_MM && d->ip.gmc->mm_flush_cid2) {
      e = bg_am_nwreg_fields(d, hw, i, regMMVM_L2_BANK_SELECT_RESERVED_CID2, 1, NULL,
                             BG_AM_F(MMVM_L2_BANK_SELECT_RESERVED_CID2__RESERVED_CACHE_PRIVATE_INVALIDATION, 1));
      uint32_t rb;
      if (e >= 0) e = bg_am_nrreg(d, hw, i, regMMVM_L2_BANK_SELECT_RESERVED_CID2, &rb);
    }
  }
  if (e >= 0) g->nflush[h]++;
  return e;
}
