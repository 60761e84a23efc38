/* nv/nv_pci.h: an NVIDIA GPU brought up from its BARs with no nvidia kernel module (the PCI interface of nv/;
 * tinygrad's PCIIface + NVDev, tinygrad tinygrad/runtime/support/nv/ip.py), over any bg_pci_dev: sysfs, VFIO, the USB bridge, or the
 * emulated GPU of tests/mockgpu/nv_pci.
 *
 *   nv_pci_dev.c    open: chip from NV_PMC_BOOT_0/42, a GSP left running (WPR2 set) => bus-master off, function
 *                   reset, wait; GFW/boot-ROM done; VRAM size; BAR views; the VRAM allocators; close
 *   nv_falcon.c     falcon primitives: reset (scrub), DMA into IMEM/DMEM, heavy-secure execution, RISC-V select
 *   nv_boot_flcn.c  Ampere/Ada: FWSEC-FRTS from the VBIOS, then Booter on SEC2 loading GSP-RM (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN)
 *   nv_boot_fsp.c   Hopper/Blackwell: the FSP chain of trust (COT message into FSP's EMEM queue, tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT)
 *   nv_pci_boot.c   the order: firmware parsed, boot structures in memory (nv_gsp.h), the chip's boot, GSP init done,
 *                   BAR1 physical mode, the RM objects, the VA space; each step timed with its register and RPC counts
 *   nv_pci_vm.c     the driver's own GPU virtual memory: page tables (nv_mmu.h) in VRAM through BAR1, the RM VA space
 *                   (FERMI_VASPACE_A) pointed at their root (SET_PAGE_DIRECTORY), and the memory API below
 *
 * Every register access goes through bg_nv_rd32 / bg_nv_wr32 (counted; BG_DEBUG=4 logs them). */
#ifndef BG_NV_PCI_H
#define BG_NV_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hcq/tlsf.h"
#include "nv/nv_chips.h"
#include "nv/nv_fw.h"
#include "nv/nv_gsp.h"
#include "nv/nv_mmu.h"
#include "platform/pci.h"
#include "platform/sysmem.h"

#define BG_NV_PCI_MAX_STEPS 24

/* One bring-up step as bg-bringup shows it. */
typedef struct bg_nv_boot_step {
  const char *name;       /* "early init", "FWSEC-FRTS", "Booter", "FSP chain of trust", "GSP init done", ... */
  uint64_t ns;
  uint64_t reg_reads, reg_writes, rpcs;
} bg_nv_boot_step;

typedef struct bg_nv_pci {
  bg_pci_dev *pci;
  const bg_nv_chip *chip;
  uint32_t boot0, boot42;
  bg_mmio bar0;                 /* registers (16 MiB) */
  bg_mmio bar1;                 /* VRAM aperture (physical mode after boot: BAR1 offset == VRAM address) */
  uint64_t bar0_bus, bar1_bus, bar3_bus, bar1_size;
  uint64_t vram_size;
  bool large_bar;               /* BAR1 covers all of VRAM */
  bool warm;                    /* a GSP left running was found (and reset) at open */
  /* The GPU cannot reach host memory (BG_PCI_FEAT_NO_HOST_DMA: behind the USB bridge, whose 512 KiB SRAM cannot hold
   * the boot structures): every one lies in VRAM behind BAR1, built in a host copy and written through BAR1's view;
   * the message queues' host copy is synced around each notify and empty poll (nv_pci_boot.c). */
  bool no_host_dma;
  uint32_t msgq_cmd_w, msgq_stat_w, msgq_host_r; /* what the VRAM copy of the queues holds */
  /* VRAM: [0, 2 MiB) boot (root page table), page tables (small BAR only), the rest; top 64 MiB firmware */
  bg_tlsf *vram_boot, *vram_pt, *vram_main;
  bg_nv_firmware fw;
  bg_nv_gsp gsp;
  bg_sysmem msgq_mem, libos_mem, rmargs_mem, radix3_mem, bootloader_mem, sig_mem, wpr_meta_mem, fmc_mem;
  bg_nv_mmu mmu;                /* the driver's page tables (nv_pci_vm.c); mmu.ver 0 until made */
  bg_tlsf *va;                  /* GPU VAs of bg_nv_pci_alloc: [BG_NV_PCI_VA_BASE, +BG_NV_PCI_VA_SIZE) */
  uint32_t client;              /* the driver's own RM client (priv root) */
  uint32_t hdevice, hsubdevice, hvaspace; /* its NV01_DEVICE_0, NV20_SUBDEVICE_0, FERMI_VASPACE_A */
  uint64_t reg_reads, reg_writes;
  bg_nv_boot_step steps[BG_NV_PCI_MAX_STEPS];
  unsigned nsteps;
} bg_nv_pci;

/* Open and boot: early init, firmware (parsed before the first register write that changes state), the chip's boot
 * path, GSP-RM up, RM client. fw_dir: bg_nv_firmware_load's dir (NULL: the environment / linux-firmware). Each failure
 * names its step. */
int bg_nv_pci_open(bg_pci_dev *pci, const char *fw_dir, bg_nv_pci **out);
/* UNLOADING_GUEST_DRIVER, then free everything; the GPU is left reusable (the next open sees WPR2 and resets). */
void bg_nv_pci_close(bg_nv_pci *d);

uint32_t bg_nv_rd32(bg_nv_pci *d, uint32_t reg);
void bg_nv_wr32(bg_nv_pci *d, uint32_t reg, uint32_t v);
/* Poll reg until (value & mask) == want, or BG_EHANG naming `what`, the register and the last value. */
int bg_nv_poll(bg_nv_pci *d, uint32_t reg, uint32_t mask, uint32_t want, int timeout_ms, const char *what);

/* ---- GPU memory (nv_pci_vm.c) ---- */

/* tinygrad's VA window (tinygrad/runtime/support/nv/nvdev.py va_allocator: TLSFAllocator(1 << 44, base=0x1000000000)) */
#define BG_NV_PCI_VA_BASE 0x1000000000ull
#define BG_NV_PCI_VA_SIZE (1ull << 44)

enum {
  BG_NV_MEM_VRAM = 0,
  BG_NV_MEM_SYSMEM = 1u << 0,     /* host pages the GPU reaches as coherent system memory (not behind the USB bridge) */
  BG_NV_MEM_CONTIGUOUS = 1u << 1, /* sysmem: physically contiguous (one page or one hugepage); VRAM always is */
  BG_NV_MEM_CPU = 1u << 2,        /* a CPU view is required (VRAM: inside BAR1, BG_ENOMEM otherwise) */
};

typedef struct bg_nv_pci_mem {
  uint64_t va, size;        /* GPU VA; size rounded up to the page size used */
  unsigned flags;
  uint64_t vram_pa;         /* VRAM address (BG_NV_MEM_VRAM) */
  uint64_t page;            /* 4 KiB, or 2 MiB for VRAM of 8 MiB and more */
  bg_sysmem sys;            /* the host pages (BG_NV_MEM_SYSMEM) */
  bg_mmio view;             /* direct CPU view (size 0: none: VRAM outside a small BAR1, or BAR1 behind the USB
                               bridge, where d->bar1 at vram_pa reaches it) */
} bg_nv_pci_mem;

/* Memory mapped at a fresh GPU VA in the driver's VA space (TLB invalidated); errors name the size and what ran out. */
int bg_nv_pci_alloc(bg_nv_pci *d, uint64_t size, unsigned flags, bg_nv_pci_mem *out);
/* Unmap (TLB invalidated), free the VA and the memory; *m zeroed. NULL or zeroed m: nothing. */
void bg_nv_pci_free(bg_nv_pci *d, bg_nv_pci_mem *m);

/* Boot internals (nv_pci_boot.c calls them): the page tables with their root in boot VRAM; the VA space under the
 * device and SET_PAGE_DIRECTORY with that root; fini frees the tables and the VA allocator. */
int bg_nv_pci_vm_init(bg_nv_pci *d);
int bg_nv_pci_vaspace(bg_nv_pci *d);
void bg_nv_pci_vm_fini(bg_nv_pci *d);
/* SET_PAGE_DIRECTORY: point the FERMI_VASPACE_A hvaspace (of client's device hdevice) at the driver's root table, so
 * every VA space shares the driver's page tables. */
int bg_nv_pci_set_page_directory(bg_nv_pci *d, uint32_t client, uint32_t hdevice, uint32_t hvaspace);

#endif
