/* tests/mockgpu/amd_gmc.c: GMC page-table walker, TLB counters and IH ring injection of the emulated GPU
 * (amd_gmc.h). Register addresses come from the generated tables (am/am_regs.h) with the model's own
 * discovery bases; register values from the model's register file. */
#include "amd_gmc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "am/am_regs.h"
#include "amd_internal.h"

static const char *tab_name(const mock_amd *g, int hwip) {
  switch (g->cfg.chip) {
  case MOCK_AMD_MOCK: return hwip == GC_HWIP ? "gc_12_0_0" : hwip == MMHUB_HWIP ? "mmhub_4_1_0" : "osssys_7_0_0";
  case MOCK_AMD_GFX11: return hwip == GC_HWIP ? "gc_11_0_0" : hwip == MMHUB_HWIP ? "mmhub_3_0_0" : "osssys_6_0_0";
  default: return hwip == GC_HWIP ? "gc_9_4_3" : hwip == MMHUB_HWIP ? "mmhub_1_8_0" : "osssys_4_4_2";
  }
}

static uint32_t ra(const mock_amd *g, int hwip, enum bg_am_reg_id name) {
  uint32_t a = 0;
  if (bg_am_reg_abs_id(&g->disc, hwip, 0, bg_am_regtab_by_name(tab_name(g, hwip)), name, &a) < 0) return 0;
  return a;
}

static uint32_t rd(const mock_amd *g, int hwip, enum bg_am_reg_id name) { return amd_get(g, ra(g, hwip, name)); }

int mock_amd_translate(mock_amd *g, bool gc, uint64_t va, uint64_t *addr, bool *system, char *why, size_t n) {
  int hw = gc ? GC_HWIP : MMHUB_HWIP;
  const char *p = gc ? "GC" : "MM";
/* GCVM_CONTEXT0_X or MMVM_CONTEXT0_X by hub */
#define R(s) rd(g, hw, gc ? regGCVM_CONTEXT0_##s : regMMVM_CONTEXT0_##s)
  uint32_t cntl = R(CNTL);
  uint64_t start = R(PAGE_TABLE_START_ADDR_HI32);
  start = (start << 32 | R(PAGE_TABLE_START_ADDR_LO32)) << 12;
  uint64_t end = R(PAGE_TABLE_END_ADDR_HI32);
  end = (end << 32 | R(PAGE_TABLE_END_ADDR_LO32)) << 12 | 0xfff;
  uint64_t base = R(PAGE_TABLE_BASE_ADDR_HI32);
  base = base << 32 | R(PAGE_TABLE_BASE_ADDR_LO32);
#undef R
  if (mock_amd_hub_check(g, gc, why, n) < 0) return -1;
  unsigned depth = (cntl >> 1) & 3;
  if (!(cntl & 1) || depth != 3) return snprintf(why, n, "%s context0 disabled or depth %u (cntl 0x%x)", p, depth, cntl), -1;
  if (!(base & 1)) return snprintf(why, n, "%s context0 base 0x%" PRIx64 " not valid", p, base), -1;
  if (va < start || va > end) return snprintf(why, n, "va 0x%" PRIx64 " outside [0x%" PRIx64 ", 0x%" PRIx64 "]", va, start, end), -1;
  uint64_t table = base & 0x0000FFFFFFFFF000ull, off = va - start;
  bool g12 = g->cfg.chip == MOCK_AMD_MOCK;
  for (unsigned lv = 0; lv < 4; lv++) {
    unsigned shift = 12 + 9 * (3 - lv);
    uint64_t idx = (off >> shift) & 511, ent;
    uint8_t *t = amd_vram_at(g, table + idx * 8, 8);
    if (!t) return snprintf(why, n, "level %u table 0x%" PRIx64 " outside VRAM", lv, table), -1;
    memcpy(&ent, t, 8);
    if (!(ent & 1)) return snprintf(why, n, "va 0x%" PRIx64 ": level %u entry %" PRIu64 " invalid (0x%" PRIx64 ")", va, lv, idx, ent), -1;
    bool leaf = lv == 3 || (g12 ? (ent >> 63) & 1 : (ent >> 54) & 1);
    if (leaf) {
      uint64_t psz = 1ull << shift;
      *addr = (ent & 0x0000FFFFFFFFF000ull & ~(psz - 1)) + (off & (psz - 1));
      *system = (ent >> 1) & 1;
      return 0;
    }
    table = ent & 0x0000FFFFFFFFF000ull;
  }
  return -1;
}

/* Hub index h -> IP and instance (GC instances first, then MMHUBs: the order amd_gpu.c's build_hooks numbers them). */
static bool hub_where(const mock_amd *g, unsigned h, int *hwip, unsigned *inst) {
  unsigned k = 0;
  for (int pass = 0; pass < 2; pass++) {
    int hw = pass ? MMHUB_HWIP : GC_HWIP;
    for (unsigned i = 0; i < BG_AM_MAX_INSTANCES; i++) {
      if (!(g->disc.ip[hw].inst_mask >> i & 1)) continue;
      if (k++ == h) return *hwip = hw, *inst = i, true;
    }
  }
  return false;
}

static uint32_t hub_cntl(const mock_amd *g, unsigned h) {
  int hw;
  unsigned inst;
  uint32_t a = 0;
  if (!hub_where(g, h, &hw, &inst) ||
      bg_am_reg_abs_id(&g->disc, hw, inst, bg_am_regtab_by_name(tab_name(g, hw)),
                       hw == GC_HWIP ? regGCVM_CONTEXT0_CNTL : regMMVM_CONTEXT0_CNTL, &a) < 0)
    return 0;
  return amd_get(g, a);
}

/* A flush counts for the hub's TLB only once the hub is enabled (Linux flushes each hub right after enabling it:
 * gmc_v11_0_gart_enable / gmc_v9_0_hw_init for MMHUB, gfx_v11_0_gfxhub_enable / gfx_v12_0_gfxhub_enable for GC). */
void amd_gmc_on_invalidate(mock_amd *g, unsigned h) {
  if (h < AMD_MAX_HUBS && (hub_cntl(g, h) & 1)) g->hub[h].flushed = true;
}

/* The RLC autoload (PSP AUTOLOAD_RLC, gfx11/12) resets the GC hub: every GCVM_* / GCMC_VM_* register of every GC
 * instance back to its reset value (0 in the model), the invalidation engine idle. This is why Linux programs the
 * GFX hub after the autoload (gfx_v11_0_hw_init: wait_for_rlc_autoload_complete, then gfx_v11_0_gfxhub_enable). */
void amd_gmc_autoload_reset(mock_amd *g) {
  const struct bg_am_regtab *t = bg_am_regtab_by_name(tab_name(g, GC_HWIP));
  for (unsigned h = 0; h < g->nhubs && h < AMD_MAX_HUBS; h++) {
    int hw;
    unsigned inst;
    if (g->hub[h].mm || !hub_where(g, h, &hw, &inst)) continue;
    g->hub[h].wiped = (hub_cntl(g, h) & 1) != 0;
    g->hub[h].req = 0, g->hub[h].sem_held = g->hub[h].flushed = false;
    for (size_t i = 0; t && i < t->nregs; i++) {
      const char *n = t->regs[i].name;
      uint32_t a;
      if ((strncmp(n, "regGCVM_", 8) == 0 || strncmp(n, "regGCMC_VM_", 11) == 0) &&
          bg_am_reg_abs(&g->disc, GC_HWIP, inst, &t->regs[i], &a) == 0)
        amd_set(g, a, 0);
    }
  }
}

int mock_amd_hub_check(const mock_amd *g, bool gc, char *why, size_t n) {
  for (unsigned h = 0; h < g->nhubs && h < AMD_MAX_HUBS; h++) {
    if (g->hub[h].mm == gc) continue; /* instance 0 of the kind: the first of its hub indices */
    uint32_t cntl = hub_cntl(g, h);
    const char *p = gc ? "GC" : "MM";
    if (!(cntl & 1) && g->hub[h].wiped)
      return snprintf(why, n, "%s hub: its registers were reset by the RLC autoload (PSP AUTOLOAD_RLC) after the driver "
                      "programmed them and were not programmed again: program the GC hub after the autoload (Linux "
                      "gfx_v11_0_hw_init: gfx_v11_0_gfxhub_enable after wait_for_rlc_autoload_complete)", p), -1;
    if ((cntl & 1) && !g->hub[h].flushed)
      return snprintf(why, n, "%s hub enabled (%sVM_CONTEXT0_CNTL 0x%x) but its TLB never invalidated since (no "
                      "%sVM_INVALIDATE_ENG17_REQ after the enable; Linux flushes each hub once after enabling it: "
                      "gmc_v11_0_gart_enable, gfx_v11_0_gfxhub_enable)", p, p, cntl, p), -1;
    return 0;
  }
  return 0;
}

unsigned mock_amd_tlb_invalidations(const mock_amd *g, bool gc) {
  for (unsigned h = 0; h < g->nhubs; h++)
    if (g->hub[h].mm == !gc) return g->hub[h].ninv;
  return 0;
}

int mock_amd_ih_inject(mock_amd *g, const uint32_t entry[8]) {
  uint32_t cntl = rd(g, OSSSYS_HWIP, regIH_RB_CNTL), rbsz = (cntl >> 1) & 0x1f;
  uint64_t base = rd(g, OSSSYS_HWIP, regIH_RB_BASE_HI);
  base = (base << 32 | rd(g, OSSSYS_HWIP, regIH_RB_BASE)) << 8;
  uint64_t size = 4ull << rbsz;
  if (!(cntl & 1) || rbsz < 4 || rbsz > 17 || !amd_vram_at(g, base, size)) {
    amd_fail(g, "IH inject: ring0 not enabled or insane (IH_RB_CNTL 0x%x, base 0x%" PRIx64 ")", cntl, base);
    return -1;
  }
  uint32_t wa = ra(g, OSSSYS_HWIP, regIH_RB_WPTR), w = amd_get(g, wa) & 0x3fffcu;
  memcpy(amd_vram_at(g, base + w % size, 32), entry, 32);
  w = (uint32_t)((w + 32) % size);
  amd_set(g, wa, w);
  uint64_t wb = rd(g, OSSSYS_HWIP, regIH_RB_WPTR_ADDR_HI);
  wb = wb << 32 | rd(g, OSSSYS_HWIP, regIH_RB_WPTR_ADDR_LO);
  uint8_t *p = amd_vram_at(g, wb, 4);
  if (p) memcpy(p, &w, 4);
  return 0;
}

int mock_amd_vm_fault(mock_amd *g, uint32_t client, unsigned vmid, uint64_t va, uint32_t status) {
  amd_set(g, g->r.gc_fault_status, status);
  amd_set(g, ra(g, GC_HWIP, regGCVM_L2_PROTECTION_FAULT_ADDR_LO32), (uint32_t)(va >> 12));
  amd_set(g, ra(g, GC_HWIP, regGCVM_L2_PROTECTION_FAULT_ADDR_HI32), (uint32_t)(va >> 44));
  uint32_t e[8] = {(client & 0xff) | (vmid & 0xf) << 24, 0, 0, 0, (uint32_t)(va >> 12), (uint32_t)(va >> 44), 0, 0};
  return mock_amd_ih_inject(g, e);
}
