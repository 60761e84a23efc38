/* nv/nv_pci_vm.c: the bare-metal driver's own GPU virtual memory (nv/nv_pci.h "GPU memory").
 *
 * The page tables (nv/nv_mmu.h, the chip's format) live in VRAM and the CPU writes them through BAR1 (physical mode:
 * BAR1 offset == VRAM address): the root in the boot region [0, 2 MiB), the other tables from the page-table region
 * when BAR1 is small (so they stay visible) or from the main heap. GSP-RM learns the root through a FERMI_VASPACE_A
 * object under the device and SET_PAGE_DIRECTORY (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.rpc_rm_alloc and
 * rpc_set_page_directory; tinygrad tinygrad/runtime/support/nv/nvdev.py NVDev._early_mmu_init, NVMemoryManager).
 * Every map and every unmap ends with a TLB invalidate of all VAs and all PDBs with a sysmembar (tinygrad
 * nvdev.py NVMemoryManager.on_range_mapped writes the same value, after map only). */
#include <inttypes.h>
#include <string.h>

#include "baregpu/error.h"
#include "nv/nv_falcon.h"
#include "nv/nv_pci.h"
#include "nv/nv_regs.h"

#define FERMI_VASPACE_A 0x90f1u
#define PAGE_4K 4096ull
#define PAGE_2M (2ull << 20)
/* NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_PDB (ADDR 31:4 = pa >> 12, APERTURE 1:1 0 = VRAM), _UPPER_PDB (ADDR 19:0 =
 * pa >> 40), then the trigger: ALL_VA (0), ALL_PDB (1), SYS_MEMBAR (6), TRIGGER (31) (open-gpu-kernel-modules
 * hwref ampere/ga102 dev_vm.h) */
#define MMU_INVALIDATE_PDB 0x00b830a0u
#define MMU_INVALIDATE_UPPER_PDB 0x00b830a4u
#define MMU_INVALIDATE_ALL (1u << 0 | 1u << 1 | 1u << 6 | 1u << 31)
/* NV0080_CTRL_DMA_SET_PAGE_DIRECTORY_FLAGS_ALL_CHANNELS */
#define SET_PDIR_FLAGS_ALL_CHANNELS 0x8u

/* ---------------- page tables through BAR1 ---------------- */

static uint64_t pt_read64(void *ctx, uint64_t pa) {
  bg_nv_pci *d = ctx;
  uint64_t v = 0;
  if (bg_mmio_read(&d->bar1, pa, &v, 8) < 0) BG_LOG(1, "nv: %s: page table read at VRAM 0x%" PRIx64 ": %s",
                                                   bg_pci_name(d->pci), pa, bg_last_error());
  return v;
}

static void pt_write64(void *ctx, uint64_t pa, uint64_t v) {
  bg_nv_pci *d = ctx;
  if (bg_mmio_write(&d->bar1, pa, &v, 8) < 0) BG_LOG(1, "nv: %s: page table write at VRAM 0x%" PRIx64 ": %s",
                                                    bg_pci_name(d->pci), pa, bg_last_error());
}

/* The heap other tables come from: inside BAR1 either way (tinygrad reserve_ptable when the BAR is small). */
static bg_tlsf *pt_heap(bg_nv_pci *d) { return d->large_bar ? d->vram_main : d->vram_pt; }

static int pt_alloc(void *ctx, uint64_t *pa) {
  bg_nv_pci *d = ctx;
  bool root = d->mmu.tables == 0; /* bg_nv_mmu_init asks for the root first */
  int e = bg_tlsf_alloc(root ? d->vram_boot : pt_heap(d), PAGE_4K, PAGE_4K, pa);
  if (e < 0) return bg_error_context(e, "nv: %s: VRAM for a %s page table: ", bg_pci_name(d->pci), root ? "root" :
                                     "GPU");
  static const uint8_t zero[4096];
  if ((e = bg_nv_vram_write(d, *pa, zero, sizeof(zero))) < 0) {
    bg_tlsf_free(root ? d->vram_boot : pt_heap(d), *pa);
    return e;
  }
  return 0;
}

static void pt_free(void *ctx, uint64_t pa) {
  bg_nv_pci *d = ctx;
  bg_tlsf_free(pa < PAGE_2M ? d->vram_boot : pt_heap(d), pa);
}

static void pt_invalidate(void *ctx) {
  bg_nv_pci *d = ctx;
  uint64_t root = d->mmu.root_pa;
  bg_nv_wr32(d, MMU_INVALIDATE_PDB, (uint32_t)(root >> 12) << 4);
  bg_nv_wr32(d, MMU_INVALIDATE_UPPER_PDB, (uint32_t)(root >> 40) & 0xfffffu);
  bg_nv_wr32(d, NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE, MMU_INVALIDATE_ALL);
}

int bg_nv_pci_vm_init(bg_nv_pci *d) {
  bg_nv_mmu_ops ops = {d, pt_read64, pt_write64, pt_alloc, pt_free, pt_invalidate};
  int e = bg_tlsf_create(BG_NV_PCI_VA_BASE, BG_NV_PCI_VA_SIZE, PAGE_4K, &d->va);
  if (e < 0) return e;
  if ((e = bg_nv_mmu_init(&d->mmu, d->chip->mmu_ver, &ops)) < 0) {
    d->mmu.ver = 0;
    return bg_error_context(e, "nv: %s: page tables (MMU v%d): ", bg_pci_name(d->pci), d->chip->mmu_ver);
  }
  return 0;
}

void bg_nv_pci_vm_fini(bg_nv_pci *d) {
  if (d->mmu.ver && d->mmu.tables) bg_nv_mmu_fini(&d->mmu);
  memset(&d->mmu, 0, sizeof(d->mmu));
  if (d->va) bg_tlsf_destroy(d->va);
  d->va = NULL;
}

/* ---------------- the RM VA space ---------------- */

/* FERMI_VASPACE_A under the device (NV_VASPACE_ALLOCATION_PARAMETERS all zero: RM's defaults, as tinygrad sends),
 * then rpc_set_page_directory_v1E_05 {hClient, hDevice, pasid, pad, NV0080_CTRL_DMA_SET_PAGE_DIRECTORY_PARAMS_v1E_05
 * at 16: physAddress u64, numEntries, flags, hVASpace, chId, subDeviceId, pasid} (tinygrad tinygrad/runtime/autogen/nv.py
 * struct_rpc_set_page_directory_v1E_05); the reply's rpc_result is checked by bg_nv_gsp_wait. */
int bg_nv_pci_vaspace(bg_nv_pci *d) {
  uint8_t va[48];
  memset(va, 0, sizeof(va));
  uint32_t h = 0;
  int e = bg_nv_gsp_rm_alloc(&d->gsp, d->client, d->hdevice, 0, FERMI_VASPACE_A, va, sizeof(va), &h);
  if (e < 0) return bg_error_context(e, "RM_ALLOC FERMI_VASPACE_A: ");
  d->hvaspace = h;
  return bg_nv_pci_set_page_directory(d, d->client, d->hdevice, h);
}

int bg_nv_pci_set_page_directory(bg_nv_pci *d, uint32_t client, uint32_t hdevice, uint32_t hvaspace) {
  uint8_t m[48];
  memset(m, 0, sizeof(m));
  uint32_t w[] = {client, hdevice, 0xffffffffu};
  memcpy(m, w, sizeof(w));
  uint64_t root = d->mmu.root_pa;
  uint32_t p[] = {bg_nv_mmu_root_entries(d->mmu.ver), SET_PDIR_FLAGS_ALL_CHANNELS, hvaspace, 0 /* chId */,
                  1 /* subDeviceId */, 0xffffffffu /* pasid */};
  int e;
  memcpy(m + 16, &root, 8);
  memcpy(m + 24, p, sizeof(p));
  if ((e = bg_nv_gsp_send(&d->gsp, BG_NV_RPC_SET_PAGE_DIRECTORY, m, sizeof(m))) >= 0) {
    uint8_t reply[64];
    size_t len = 0;
    e = bg_nv_gsp_wait(&d->gsp, BG_NV_RPC_SET_PAGE_DIRECTORY, reply, sizeof(reply), &len);
  }
  if (e < 0) return bg_error_context(e, "SET_PAGE_DIRECTORY (root 0x%" PRIx64 "): ", root);
  return 0;
}

/* ---------------- memory ---------------- */

int bg_nv_pci_alloc(bg_nv_pci *d, uint64_t size, unsigned flags, bg_nv_pci_mem *out) {
  memset(out, 0, sizeof(*out));
  if (!d->va || !d->mmu.ver) return bg_error(BG_EINVAL, "nv: %s: alloc: no VA space (the device is not up)",
                                             bg_pci_name(d->pci));
  if (size == 0) return bg_error(BG_EINVAL, "nv: %s: alloc: size 0", bg_pci_name(d->pci));
  bool sys = flags & BG_NV_MEM_SYSMEM;
  if (sys && d->no_host_dma)
    return bg_error(BG_ENOTSUP, "nv: %s: alloc: system memory of 0x%" PRIx64 " bytes: the device cannot reach host "
                    "memory", bg_pci_name(d->pci), size);
  uint64_t page = !sys && size >= (8ull << 20) ? PAGE_2M : PAGE_4K;
  size = (size + page - 1) & ~(page - 1);
  bg_nv_map_attr attr = {.aperture = sys ? BG_NV_APER_SYSMEM_COH : BG_NV_APER_VIDMEM};
  int e;
  if (sys) {
    e = bg_pci_alloc_sysmem(d->pci, size, (flags & BG_NV_MEM_CONTIGUOUS) ? BG_SYSMEM_CONTIGUOUS : 0, NULL, &out->sys);
    if (e < 0) return bg_error_context(e, "nv: %s: alloc: 0x%" PRIx64 " bytes of system memory: ", bg_pci_name(d->pci),
                                       size);
    out->view = out->sys.view;
  } else {
    if ((e = bg_tlsf_alloc(d->vram_main, size, page, &out->vram_pa)) < 0)
      return bg_error_context(e, "nv: %s: alloc: 0x%" PRIx64 " bytes of VRAM: ", bg_pci_name(d->pci), size);
    /* behind the USB bridge BAR1 has no direct mapping to narrow: the range is reached through d->bar1 at vram_pa */
    if (out->vram_pa + size <= d->bar1.size) e = d->bar1.ops ? 0 : bg_mmio_sub(&d->bar1, out->vram_pa, size, &out->view);
    else if (flags & BG_NV_MEM_CPU)
      e = bg_error(BG_ENOMEM, "nv: %s: alloc: VRAM 0x%" PRIx64 " (+0x%" PRIx64 ") lies outside BAR1 (0x%" PRIx64
                   " bytes) and a CPU view was asked for", bg_pci_name(d->pci), out->vram_pa, size, d->bar1.size);
    if (e < 0) goto fail;
  }
  if ((e = bg_tlsf_alloc(d->va, size, page, &out->va)) < 0) {
    bg_error_context(e, "nv: %s: alloc: 0x%" PRIx64 " bytes of GPU VA: ", bg_pci_name(d->pci), size);
    goto fail;
  }
  e = sys ? bg_nv_mmu_map(&d->mmu, out->va, size, out->sys.bus, out->sys.npages, &attr)
          : bg_nv_mmu_map_contig(&d->mmu, out->va, size, out->vram_pa, &attr);
  if (e < 0) {
    bg_tlsf_free(d->va, out->va);
    goto fail;
  }
  out->size = size;
  out->flags = flags;
  out->page = page;
  return 0;
fail:
  if (sys) bg_pci_free_sysmem(d->pci, &out->sys);
  else bg_tlsf_free(d->vram_main, out->vram_pa);
  memset(out, 0, sizeof(*out));
  return e;
}

void bg_nv_pci_free(bg_nv_pci *d, bg_nv_pci_mem *m) {
  if (!d || !m || !m->size) return;
  if (bg_nv_mmu_unmap(&d->mmu, m->va, m->size) < 0)
    BG_LOG(1, "nv: %s: free of VA 0x%" PRIx64 ": %s", bg_pci_name(d->pci), m->va, bg_last_error());
  bg_tlsf_free(d->va, m->va);
  if (m->flags & BG_NV_MEM_SYSMEM) bg_pci_free_sysmem(d->pci, &m->sys);
  else bg_tlsf_free(d->vram_main, m->vram_pa);
  memset(m, 0, sizeof(*m));
}
