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
