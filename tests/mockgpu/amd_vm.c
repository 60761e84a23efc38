/* tests/mockgpu/amd_vm.c: VMID 0 address translation of the emulated GPU's engines (amd_vm.h). Register
 * addresses from the generated gc tables (am/regs, Linux gc_11_0_0 / gc_12_0_0 offsets) on the device's
 * discovery bases; entry formats from AMD's page-table layout (Linux amdgpu_vm.h bit names). */
#include "amd_vm.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "am/am_regs.h"
#include "amd_gmc.h"
#include "amd_internal.h"
#include "platform/pci_regs.h"
#include "mock_internal.h"
#include "mock_shm.h"

#define PTE_VALID (1ull << 0)
#define PTE_SYSTEM (1ull << 1)
#define PTE_READABLE (1ull << 5)
#define PTE_WRITEABLE (1ull << 6)
#define PDE_PTE_GFX11 (1ull << 54)
#define PTE_IS_PTE_GFX12 (1ull << 63)
#define PTE_TF_GFX9 (1ull << 56) /* gfx9: a PDB0 entry that translates further (points to a PTB) */
#define PTE_ADDR_MASK 0x0000FFFFFFFFF000ull
#define UTCL2_IH_CLIENT 0x1b /* SOC21_IH_CLIENTID_UTCL2 */

static const struct bg_am_regtab *gc_tab(const mock_amd *g) {
  return bg_am_regtab_by_name(g->ip.gc.maj >= 12 ? "gc_12_0_0" : g->ip.gc.maj >= 11 ? "gc_11_0_0" : "gc_9_4_3");
}

/* Absolute address of a GC register, 0 when the table lacks it. */
static uint32_t gc_addr(const mock_amd *g, enum bg_am_reg_id name) {
  uint32_t a = 0;
  if (bg_am_reg_abs_id(&g->disc, GC_HWIP, 0, gc_tab(g), name, &a) < 0) return 0;
  return a;
}

static uint64_t gc_pair(const mock_amd *g, enum bg_am_reg_id lo, enum bg_am_reg_id hi) {
  return (uint64_t)amd_get(g, gc_addr(g, hi)) << 32 | amd_get(g, gc_addr(g, lo));
}

void amd_vm_load(amd_vm *vm, mock_amd *g) {
  memset(vm, 0, sizeof(*vm));
  vm->g = g;
  vm->gfx12 = g->ip.gc.maj >= 12;
  vm->gfx9 = g->ip.gc.maj == 9;
  vm->vram = mock_pci_bar_mem(g->pci, 0);
  vm->vram_size = g->vram_size;
  if (g->ip.gc.maj < 11 && !vm->gfx9) return; /* no such GC: everything faults */
  vm->blocked = mock_amd_hub_check(g, true, vm->bad, sizeof(vm->bad)) < 0;
  uint64_t lo = amd_get(g, gc_addr(g, regGCMC_VM_SYSTEM_APERTURE_LOW_ADDR));
  uint64_t hi = amd_get(g, gc_addr(g, regGCMC_VM_SYSTEM_APERTURE_HIGH_ADDR));
  vm->ap_lo = lo << 18;
  vm->ap_hi = ((hi + 1) << 18) - 1;
  if (hi < lo || (hi == 0 && lo == 0)) vm->ap_lo = 1, vm->ap_hi = 0; /* aperture off */
  vm->cntl = amd_get(g, gc_addr(g, regGCVM_CONTEXT0_CNTL));
  vm->start = gc_pair(g, regGCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32, regGCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32) << 12;
  vm->end = gc_pair(g, regGCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32, regGCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32) << 12 | 0xfff;
  uint64_t base = gc_pair(g, regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32, regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32);
  unsigned depth = (vm->cntl >> 1) & 3, block = (vm->cntl >> 3) & 0xf;
  vm->root = base & PTE_ADDR_MASK;
  /* gfx9 (Linux gmc_v9_0 with translate_further, am/mm_pt.h): depth 2 (PDB2-PDB1-PDB0) and block size 9, the PDB0
   * entries being 2 MiB pages or (TF) tables of 4 KiB pages: the same four 9-bit index levels as gfx10+. */
  vm->ok = (vm->cntl & 1) && depth == (vm->gfx9 ? 2u : 3u) && block == (vm->gfx9 ? 9u : 0u) && (base & 1) &&
           vm->start <= vm->end;
}

static uint8_t *vram_at(const amd_vm *vm, uint64_t pa, uint64_t n) {
  if (pa > vm->vram_size || n > vm->vram_size - pa) return NULL;
  return vm->vram + pa;
}

/* Host pointer of a bus address (one 4 KiB DMA page at a time), NULL when not mapped or bus mastering is off. */
static uint8_t *sys_at(const amd_vm *vm, uint64_t bus, char *why, size_t whyn) {
  if (!(mock_pci_command(vm->g->pci) & BG_PCI_COMMAND_MASTER)) {
    snprintf(why, whyn, "system page 0x%" PRIx64 " with bus mastering off", bus);
    return NULL;
  }
  uint8_t *p = mock_dma_host(vm->g->tree, vm->g->pci, bus);
  if (!p) snprintf(why, whyn, "system page at bus address 0x%" PRIx64 " is not DMA-mapped by the driver", bus);
  return p;
}

uint8_t *amd_vm_xlate(amd_vm *vm, uint64_t va, bool write, size_t *avail, char *why, size_t whyn) {
  *avail = 4096 - (va & 4095);
  if (vm->blocked) {
    snprintf(why, whyn, "%s", vm->bad);
    return NULL;
  }
  if (vm->tlb_page == (va >> 12) + 1 && (!write || vm->tlb_writable)) return vm->tlb_host + (va & 4095);
  if (va >= vm->ap_lo && va <= vm->ap_hi) { /* system aperture: physical VRAM */
    uint8_t *p = vram_at(vm, va, 1);
    if (!p) snprintf(why, whyn, "system-aperture address 0x%" PRIx64 " beyond VRAM (0x%" PRIx64 " bytes)", va, vm->vram_size);
    return p;
  }
  if (!vm->ok) {
    snprintf(why, whyn, "va 0x%" PRIx64 " outside the system aperture and VM context 0 disabled (CNTL 0x%x)", va, vm->cntl);
    return NULL;
  }
  if (va < vm->start || va > vm->end) {
    snprintf(why, whyn, "va 0x%" PRIx64 " outside context 0 [0x%" PRIx64 ", 0x%" PRIx64 "] (range fault)", va, vm->start,
             vm->end);
    return NULL;
  }
  uint64_t off = va - vm->start, table = vm->root;
  for (unsigned lv = 0; lv < 4; lv++) {
    unsigned shift = 12 + 9 * (3 - lv);
    uint64_t idx = (off >> shift) & 511, ent;
    const uint8_t *t = vram_at(vm, table + idx * 8, 8);
    if (!t) {
      snprintf(why, whyn, "va 0x%" PRIx64 ": level %u table 0x%" PRIx64 " outside VRAM", va, lv, table);
      return NULL;
    }
    ent = __atomic_load_n((const uint64_t *)(const void *)t, __ATOMIC_RELAXED);
    if (!(ent & PTE_VALID)) {
      snprintf(why, whyn, "va 0x%" PRIx64 ": level %u entry %" PRIu64 " not valid (0x%" PRIx64 ")", va, lv, idx, ent);
      return NULL;
    }
    bool leaf = lv == 3 || (vm->gfx12  ? (ent & PTE_IS_PTE_GFX12) != 0
                            : vm->gfx9 && lv == 2 ? !(ent & PTE_TF_GFX9)
                                                  : (ent & PDE_PTE_GFX11) != 0);
    if (!leaf) {
      table = ent & PTE_ADDR_MASK;
      continue;
    }
    if (!(ent & (write ? PTE_WRITEABLE : PTE_READABLE))) {
      snprintf(why, whyn, "va 0x%" PRIx64 ": %s through a PTE without %s (0x%" PRIx64 ")", va, write ? "write" : "read",
               write ? "WRITEABLE" : "READABLE", ent);
      *avail = 0; /* permission, not mapping: told apart by the caller through avail */
      return NULL;
    }
    uint64_t psz = 1ull << shift, addr = ((ent & PTE_ADDR_MASK) & ~(psz - 1)) + (off & (psz - 1));
    uint8_t *page = (ent & PTE_SYSTEM) ? sys_at(vm, addr & ~4095ull, why, whyn) : vram_at(vm, addr & ~4095ull, 4096);
    if (!page) {
      if (!(ent & PTE_SYSTEM))
        snprintf(why, whyn, "va 0x%" PRIx64 ": PTE 0x%" PRIx64 " points outside VRAM", va, ent);
      return NULL;
    }
    vm->tlb_page = (va >> 12) + 1;
    vm->tlb_host = page;
    vm->tlb_writable = (ent & PTE_WRITEABLE) != 0;
    return page + (va & 4095);
  }
  return NULL;
}

static int copy(amd_vm *vm, uint64_t va, uint8_t *host, size_t n, bool write, const char *engine, unsigned cid) {
  while (n) {
    size_t avail;
    char why[256];
    uint8_t *p = amd_vm_xlate(vm, va, write, &avail, why, sizeof(why));
    if (!p) {
      amd_vm_fault(vm->g, engine, cid, va, write, avail == 0, why);
      return -1;
    }
    size_t k = avail < n ? avail : n;
    if (write) memcpy(p, host, k);
    else memcpy(host, p, k);
    va += k, host += k, n -= k;
  }
  return 0;
}

int amd_vm_read(amd_vm *vm, uint64_t va, void *dst, size_t n, const char *engine, unsigned cid) {
  return copy(vm, va, dst, n, false, engine, cid);
}

int amd_vm_write(amd_vm *vm, uint64_t va, const void *src, size_t n, const char *engine, unsigned cid) {
  return copy(vm, va, (uint8_t *)(uintptr_t)src, n, true, engine, cid);
}

/* Field X of GCVM_L2_PROTECTION_FAULT_STATUS_LO32 (gfx12) or GCVM_L2_PROTECTION_FAULT_STATUS (gfx11). */
#define FLD(X, v) field(g, GCVM_L2_PROTECTION_FAULT_STATUS_LO32__##X, GCVM_L2_PROTECTION_FAULT_STATUS__##X, v)
static uint32_t field(const mock_amd *g, enum bg_am_field_id lo32, enum bg_am_field_id plain, uint32_t v) {
  enum bg_am_field_id f = lo32;
  const struct bg_am_reg *r = bg_am_reg_find(gc_tab(g), regGCVM_L2_PROTECTION_FAULT_STATUS_LO32);
  if (!r) r = bg_am_reg_find(gc_tab(g), regGCVM_L2_PROTECTION_FAULT_STATUS), f = plain;
  unsigned shift = 0;
  uint32_t mask = 0;
  if (!r || bg_am_reg_field(r, f, &shift, &mask) < 0) return 0;
  return (v << shift) & mask;
}

void amd_vm_fault(mock_amd *g, const char *engine, unsigned cid, uint64_t va, bool write, bool permission,
                  const char *why) {
  mock_shm_lock(&g->lock);
  amd_fail(g, "VM fault (%s %s at 0x%" PRIx64 "): %s", engine, write ? "write" : "read", va, why);
  uint32_t cur = amd_get(g, g->r.gc_fault_status);
  if (cur) { /* the first fault stays latched */
    amd_set(g, g->r.gc_fault_status, cur | FLD(MORE_FAULTS, 1));
  } else {
    uint32_t st = (permission ? FLD(PERMISSION_FAULTS, write ? 4u : 2u) : FLD(MAPPING_ERROR, 1u)) |
                  FLD(CID, cid) | FLD(RW, write) | FLD(VMID, 0);
    mock_amd_vm_fault(g, UTCL2_IH_CLIENT, 0, va, st);
  }
  pthread_mutex_unlock(&g->lock);
}

static uint8_t *aligned(amd_vm *vm, uint64_t va, unsigned size, bool write, const char *engine, unsigned cid) {
  if (va & (size - 1)) {
    mock_shm_lock(&vm->g->lock);
    amd_fail(vm->g, "%s: %u-byte %s at 0x%" PRIx64 " is not %u-byte aligned", engine, size, write ? "write" : "read", va,
             size);
    pthread_mutex_unlock(&vm->g->lock);
    return NULL;
  }
  size_t avail;
  char why[256];
  uint8_t *p = amd_vm_xlate(vm, va, write, &avail, why, sizeof(why));
  if (!p) amd_vm_fault(vm->g, engine, cid, va, write, avail == 0, why);
  return p;
}

int amd_vm_store(amd_vm *vm, uint64_t va, uint64_t v, unsigned size, const char *engine, unsigned cid) {
  uint8_t *p = aligned(vm, va, size, true, engine, cid);
  if (!p) return -1;
  if (size == 8) __atomic_store_n((uint64_t *)(void *)p, v, __ATOMIC_RELEASE);
  else __atomic_store_n((uint32_t *)(void *)p, (uint32_t)v, __ATOMIC_RELEASE);
  return 0;
}

int amd_vm_load32(amd_vm *vm, uint64_t va, uint32_t *v, const char *engine, unsigned cid) {
  const uint8_t *p = aligned(vm, va, 4, false, engine, cid);
  if (!p) return -1;
  *v = __atomic_load_n((const uint32_t *)(const void *)p, __ATOMIC_ACQUIRE);
  return 0;
}
