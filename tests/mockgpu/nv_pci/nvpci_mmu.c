/* tests/mockgpu/nv_pci/nvpci_mmu.c: the emulated GPU's page-table walker. See nvpci_mmu.h.
 *
 * Shape of both formats: 4 KiB tables; one entry per VA slice; the next-to-last level (PDE0) has 16-byte "dual"
 * entries (a big-page half in the low qword, the small-page half in the high qword); a set bit 0 on the way down is a
 * leaf in the PTE format (nouveau gp100_vmm_pd0_pte writes a 2 MiB leaf as the low qword with a zero high qword).
 *
 *   level  v2 (49-bit)      v3 (57-bit)      entries  leaf
 *   root   PDE3 [48:47]     PDE4 [56]        4 / 2    -
 *          PDE2 [46:38]     PDE3 [55:47]     512      -
 *          -                PDE2 [46:38]     512      -
 *          PDE1 [37:29]     PDE1 [37:29]     512      512 MiB
 *          PDE0 [28:21]     PDE0 [28:21]     256x16B  2 MiB
 *          PTE  [20:12]     PTE  [20:12]     512      4 KiB
 */
#include "nvpci_mmu.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define BIT(n) (1ull << (n))
#define BITS(hi, lo) ((~0ull >> (63 - (hi))) & ~(BIT(lo) - 1))  /* mask of bits hi..lo */

typedef struct lvl {
  const char *name;
  unsigned va_lo;     /* lowest VA bit this level indexes */
  unsigned nbits;     /* VA bits it indexes */
  bool dual;          /* 16-byte entries */
  bool pte;           /* the last level */
  uint64_t leaf;      /* page size of a leaf here, 0 when a leaf is not allowed */
} lvl;

static const lvl lv_v2[] = {
  {"PDE3", 47, 2, false, false, 0},
  {"PDE2", 38, 9, false, false, 0},
  {"PDE1", 29, 9, false, false, BIT(29)},
  {"PDE0", 21, 8, true, false, BIT(21)},
  {"PTE", 12, 9, false, true, BIT(12)},
};
static const lvl lv_v3[] = {
  {"PDE4", 56, 1, false, false, 0},
  {"PDE3", 47, 9, false, false, 0},
  {"PDE2", 38, 9, false, false, 0},
  {"PDE1", 29, 9, false, false, BIT(29)},
  {"PDE0", 21, 8, true, false, BIT(21)},
  {"PTE", 12, 9, false, true, BIT(12)},
};

typedef struct walk {
  const nvpci_mmu_mem *mem;
  int ver;
  uint64_t va;
  char *why;
  size_t whylen;
  /* where we are, for messages */
  const lvl *at;
  unsigned index;
  uint64_t table;
} walk;

static int fault(walk *w, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fault(walk *w, int code, const char *fmt, ...) {
  if (w->why && w->whylen) {
    int n = 0;
    if (w->at)
      n = snprintf(w->why, w->whylen, "v%d VA 0x%" PRIx64 ": %s[%u] of the table at 0x%" PRIx64 ": ", w->ver, w->va,
                   w->at->name, w->index, w->table);
    else
      n = snprintf(w->why, w->whylen, "v%d VA 0x%" PRIx64 ": ", w->ver, w->va);
    if (n >= 0 && (size_t)n < w->whylen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(w->why + n, w->whylen - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  return -code;
}

/* Read an entry of 8 or 16 bytes from VRAM or (sys) system memory. */
static int fetch(walk *w, bool sys, uint64_t at, unsigned n, uint64_t q[2]) {
  q[1] = 0;
  if (sys) {
    if (!w->mem->sys_read)
      return fault(w, NVPCI_MMU_SYSPDE, "the table is in system memory (0x%" PRIx64 "): tables must be in VRAM", at);
    if (w->mem->sys_read(w->mem->ctx, at, q, n))
      return fault(w, NVPCI_MMU_SYSREAD, "reading system memory at 0x%" PRIx64 " failed", at);
    return 0;
  }
  if (at > w->mem->vram_size || w->mem->vram_size - at < n)
    return fault(w, NVPCI_MMU_OUTSIDE, "entry at 0x%" PRIx64 " is outside VRAM (0x%" PRIx64 " bytes)", at,
                 w->mem->vram_size);
  memcpy(q, w->mem->vram + at, n);
  return 0;
}

static int check_kind(walk *w, unsigned kind) {
  /* NV_MMU_PTE_KIND_PITCH 0x00, NV_MMU_PTE_KIND_GENERIC_MEMORY 0x06: the only kinds a compute driver uses. */
  if (kind == 0x00 || kind == 0x06) return 0;
  return fault(w, NVPCI_MMU_RESERVED, "kind 0x%02x (only pitch 0x00 and generic memory 0x06 are emulated)", kind);
}

/* A valid leaf (bit 0 set) in the PTE format of w->ver, mapping page_size bytes. */
static int leaf(walk *w, uint64_t d, uint64_t page_size, nvpci_mmu_result *out) {
  unsigned aper = (unsigned)(d >> 1) & 3;
  uint64_t base;
  if (aper == 1) return fault(w, NVPCI_MMU_RESERVED, "leaf 0x%016" PRIx64 " has the peer-memory aperture", d);
  memset(out, 0, sizeof(*out));
  if (w->ver == 2) {
    /* gp100_vmm_valid: VALID 0, APERTURE 2:1, VOL 3, PRIV 5, RO 6, KIND 63:56; gh100 dev_mmu.h NV_MMU_VER2_PTE: ENCRYPTED
     * 4, ATOMIC_DISABLE 7, ADDRESS_SYS 53:8 / ADDRESS_VID 32:8 + VID_PEER 35:33, COMPTAGLINE 55:36. */
    if (d & BIT(4)) return fault(w, NVPCI_MMU_RESERVED, "leaf 0x%016" PRIx64 " has ENCRYPTED set", d);
    if (d & BIT(5)) return fault(w, NVPCI_MMU_RESERVED, "leaf 0x%016" PRIx64 " has PRIVILEGE set", d);
    uint64_t high = aper == NVPCI_MMU_APER_VID ? BITS(55, 33) : BITS(55, 54);
    if (d & high)
      return fault(w, NVPCI_MMU_RESERVED, "leaf 0x%016" PRIx64 " has bits 0x%016" PRIx64 " set (peer index / comptags)",
                   d, d & high);
    int r = check_kind(w, (unsigned)(d >> 56));
    if (r) return r;
    base = ((d & BITS(53, 8)) >> 8) << 12;
    out->uncached = (d & BIT(3)) != 0;
    out->read_only = (d & BIT(6)) != 0;
    out->no_atomic = (d & BIT(7)) != 0;
    out->kind = (uint8_t)(d >> 56);
  } else {
    /* NV_MMU_VER3_PTE: VALID 0, APERTURE 2:1, PCF 7:3, KIND 11:8, ADDRESS 51:12, PEER_ID 63:61. PCF of a valid PTE:
     * bit 0 uncached, bit 1 privilege, bit 2 read-only, bit 3 no atomics, bit 4 access counting disabled (the
     * NV_MMU_VER3_PTE_PCF_{REGULAR,PRIVILEGE}_{RW,RO}_{ATOMIC,NO_ATOMIC}_{CACHED,UNCACHED}_{ACE,ACD} values). */
    if (d & BITS(63, 52)) return fault(w, NVPCI_MMU_RESERVED, "leaf 0x%016" PRIx64 " has bits 63:52 set", d);
    unsigned pcf = (unsigned)(d >> 3) & 0x1f;
    if (pcf & 2) return fault(w, NVPCI_MMU_RESERVED, "leaf 0x%016" PRIx64 " has a PRIVILEGE PCF (0x%x)", d, pcf);
    int r = check_kind(w, (unsigned)(d >> 8) & 0xf);
    if (r) return r;
    base = d & BITS(51, 12);
    out->uncached = (pcf & 1) != 0;
    out->read_only = (pcf & 4) != 0;
    out->no_atomic = (pcf & 8) != 0;
    out->kind = (uint8_t)((d >> 8) & 0xf);
  }
  if (base & (page_size - 1))
    return fault(w, NVPCI_MMU_RESERVED, "leaf address 0x%" PRIx64 " is not aligned to its page size 0x%" PRIx64, base,
                 page_size);
  if (aper == NVPCI_MMU_APER_VID && (base > w->mem->vram_size || w->mem->vram_size - base < page_size))
    return fault(w, NVPCI_MMU_OUTSIDE, "page [0x%" PRIx64 ", +0x%" PRIx64 ") is outside VRAM (0x%" PRIx64 " bytes)",
                 base, page_size, w->mem->vram_size);
  out->aperture = (int)aper;
  out->page_size = page_size;
  out->pa = base + (w->va & (page_size - 1));
  return 0;
}

/* An 8-byte pointer to the next table: its address and whether it is in system memory. */
static int pde(walk *w, uint64_t d, uint64_t *next, bool *sys) {
  unsigned aper = (unsigned)(d >> 1) & 3;
  uint64_t rsv, addr;
  if (w->ver == 2) {
    /* gp100_vmm_pde: APERTURE 2:1 (1 VRAM, 2 coherent, 3 non-coherent), VOL 3, address >> 4 (ADDRESS_SYS 53:8, 4 KiB
     * units); NV_MMU_VER2_PDE_NO_ATS 5. Video memory addresses are ADDRESS_VID 32:8 (35:33 the peer). */
    rsv = BIT(4) | BITS(7, 6) | BITS(63, 54) | (aper == 1 ? BITS(53, 33) : 0);
    addr = ((d & BITS(53, 8)) >> 8) << 12;
  } else {
    /* NV_MMU_VER3_PDE: APERTURE 2:1, PCF 5:3 (0..3 defined), ADDRESS 51:12. */
    rsv = BITS(11, 6) | BITS(63, 52) | (((d >> 3) & 7) > 3 ? BITS(5, 3) : 0);
    addr = d & BITS(51, 12);
  }
  if (aper == 0) {
    if (d & ~(w->ver == 2 ? BIT(3) : BITS(5, 3))) /* VOL (v2 sparse) / PCF (v3 invalid/sparse codes) may be set */
      return fault(w, NVPCI_MMU_RESERVED, "invalid entry 0x%016" PRIx64 " has bits set", d);
    return fault(w, NVPCI_MMU_UNMAPPED, "invalid entry 0x%016" PRIx64, d);
  }
  if (d & rsv) return fault(w, NVPCI_MMU_RESERVED, "entry 0x%016" PRIx64 ": reserved bits 0x%016" PRIx64 " set", d, d & rsv);
  *sys = aper != 1;
  if (*sys && !w->mem->sys_read)
    return fault(w, NVPCI_MMU_SYSPDE, "entry 0x%016" PRIx64 " points to a table in system memory (aperture %u) at 0x%" PRIx64,
                 d, aper, addr);
  *next = addr;
  return 0;
}

/* The dual PDE0: a 2 MiB leaf in lo, or the small-page table in hi (64 KiB big-page tables are not emulated). */
static int dual(walk *w, const uint64_t q[2], uint64_t *next, bool *sys, bool *is_leaf) {
  uint64_t lo = q[0], hi = q[1];
  *is_leaf = (lo & 1) != 0;
  if (*is_leaf) {
    if (hi) return fault(w, NVPCI_MMU_RESERVED, "2 MiB leaf with a non-zero high half 0x%016" PRIx64, hi);
    return 0;
  }
  /* Big half: APERTURE_BIG 2:1 must be invalid; v2 may carry NO_ATS 5 (and VOL_BIG 3: sparse), v3 PCF_BIG 5:3. */
  uint64_t lo_ok = w->ver == 2 ? (BIT(5) | BIT(3)) : BITS(5, 3);
  if (lo & BITS(2, 1))
    return fault(w, NVPCI_MMU_RESERVED, "low half 0x%016" PRIx64 " points to a 64 KiB big-page table (not emulated)", lo);
  if (lo & ~lo_ok) return fault(w, NVPCI_MMU_RESERVED, "low half 0x%016" PRIx64 ": reserved bits set", lo);
  /* Small half: NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL 66:65, VOL_SMALL 67, ADDRESS_SMALL_SYS 117:72;
   * NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL 66:65, PCF_SMALL 69:67, ADDRESS_SMALL 115:76: the PDE layout shifted by 64. */
  uint64_t hi_invalid_ok = w->ver == 2 ? 0 : BITS(5, 3); /* v3: the invalid / sparse PCF codes */
  if (((hi >> 1) & 3) == 0) {
    if (hi & ~hi_invalid_ok) return fault(w, NVPCI_MMU_RESERVED, "invalid dual entry with high half 0x%016" PRIx64, hi);
    if (w->ver == 2 && (lo & BIT(3))) return fault(w, NVPCI_MMU_UNMAPPED, "sparse dual entry (VOL_BIG set)");
    return fault(w, NVPCI_MMU_UNMAPPED, "invalid dual entry 0x%016" PRIx64 "_%016" PRIx64, hi, lo);
  }
  /* Bit 64 is not IS_PTE for the small half; v2 has no NO_ATS there (bit 69). */
  uint64_t hi_rsv = BIT(0) | (w->ver == 2 ? BIT(5) : 0);
  if (hi & hi_rsv)
    return fault(w, NVPCI_MMU_RESERVED, "high half 0x%016" PRIx64 ": reserved bits 0x%016" PRIx64 " set", hi, hi & hi_rsv);
  return pde(w, hi, next, sys);
}

int nvpci_mmu_walk(const nvpci_mmu_mem *mem, int ver, uint64_t root_pa, bool root_sys, uint64_t va,
                   nvpci_mmu_result *out, char *why, size_t whylen) {
  walk w = {mem, ver, va, why, whylen, NULL, 0, 0};
  if (why && whylen) why[0] = '\0';
  if (!mem || !out || (!mem->vram && mem->vram_size) || (ver != 2 && ver != 3))
    return fault(&w, NVPCI_MMU_BADARG, "bad arguments (version %d: 2 or 3)", ver);
  const lvl *lv = ver == 2 ? lv_v2 : lv_v3;
  int nlv = ver == 2 ? 5 : 6;
  unsigned width = lv[0].va_lo + lv[0].nbits;
  if (va >> width) return fault(&w, NVPCI_MMU_BADVA, "beyond the %u-bit VA space", width);
  uint64_t table = root_pa;
  bool sys = root_sys;
  for (int l = 0; l < nlv; l++) {
    w.at = &lv[l];
    w.table = table;
    w.index = (unsigned)(va >> lv[l].va_lo) & ((1u << lv[l].nbits) - 1);
    if (!sys && (table & 0xfff))
      return fault(&w, NVPCI_MMU_RESERVED, "table address 0x%" PRIx64 " is not 4 KiB aligned", table);
    unsigned esz = lv[l].dual ? 16 : 8;
    uint64_t q[2];
    int r = fetch(&w, sys, table + (uint64_t)w.index * esz, esz, q);
    if (r) return r;
    bool is_leaf = (q[0] & 1) != 0;
    if (is_leaf && !lv[l].leaf)
      return fault(&w, NVPCI_MMU_BIGLEAF, "entry 0x%016" PRIx64 " is a leaf, but %s cannot hold one", q[0], lv[l].name);
    if (lv[l].pte && !is_leaf) {
      /* v2: VALID_FALSE + VOL is sparse (nouveau gp100_vmm_pgt_sparse); v3 invalid PCF codes 0..3 (SPARSE,
       * MAPPING_NOWHERE, NO_VALID_4KB_PAGE) sit in 7:3. */
      uint64_t ok = ver == 2 ? BIT(3) : BITS(4, 3);
      if (q[0] & ~ok) return fault(&w, NVPCI_MMU_RESERVED, "invalid PTE 0x%016" PRIx64 " has bits set", q[0]);
      return fault(&w, NVPCI_MMU_UNMAPPED, "invalid PTE 0x%016" PRIx64, q[0]);
    }
    if (lv[l].dual) {
      if ((r = dual(&w, q, &table, &sys, &is_leaf))) return r;
    } else if (!is_leaf) {
      if ((r = pde(&w, q[0], &table, &sys))) return r;
    }
    if (is_leaf) {
      if ((r = leaf(&w, q[0], lv[l].leaf, out))) return r;
      out->level = l;
      return 0;
    }
  }
  return fault(&w, NVPCI_MMU_RESERVED, "no leaf at the PTE level");
}

int nvpci_mmu_translate(const uint8_t *vram, uint64_t vram_size, int ver, uint64_t root_pa, uint64_t va,
                        nvpci_mmu_result *out, char *why, size_t whylen) {
  nvpci_mmu_mem mem = {vram, vram_size, NULL, NULL};
  return nvpci_mmu_walk(&mem, ver, root_pa, false, va, out, why, whylen);
}

const char *nvpci_mmu_fault_name(int code) {
  static const char *const names[] = {"ok", "unmapped", "outside VRAM", "PDE in system memory", "reserved bits",
                                      "leaf at a level without leaves", "VA beyond the format", "bad argument",
                                      "system-memory read failed"};
  if (code < 0) code = -code;
  return (size_t)code < sizeof(names) / sizeof(names[0]) ? names[code] : "unknown";
}
