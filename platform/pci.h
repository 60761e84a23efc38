/* platform/pci.h: one PCI-device interface for the drivers in am/ and nv/.
 *
 * A bg_pci_dev gives configuration space, BAR info and mappings, resizable BAR, function reset,
 * DMA memory with bus addresses, bulk copies to and from BAR memory, and (optionally) interrupts.
 * Implementations: sysfs in platform/pci_sysfs.c, VFIO in platform/pci_vfio.c, the USB bridge in
 * usb/usb_pci.c (opened through platform/pci_usb.h). The handle is opaque; an
 * implementation allocates it with bg_pci_dev_new and keeps its state in bg_pci_priv.
 *
 * Every function returns 0 or a negative BG_E* code with a message naming the device, e.g.
 * "0000:03:00.0: BAR0: resize to 32768 MiB refused: ...". A device is used by one thread at a
 * time (its driver serializes); BAR views may be used from any thread. Internal: not installed. */
#ifndef BG_HCQ_PCI_H
#define BG_HCQ_PCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/mmio.h"
#include "platform/pci_scan.h"
#include "platform/sysmem.h"

typedef struct bg_pci_dev bg_pci_dev;

/* bg_pci_map_bar flags. */
enum bg_pci_map_flags {
  BG_PCI_MAP_WC = 1u << 0,  /* write-combined (resourceN_wc) when the BAR offers it: VRAM */
};

/* bg_pci_ops.features: what a driver must do differently on this device. */
enum bg_pci_features {
  /* The device cannot reach host RAM (behind a USB bridge: tinygrad tinygrad/runtime/support/system.py
   * USBPCIDevice): its buffers live in its own memory, host copies go through bg_pci_copy_in/out, and
   * writes through a BG_PCI_MAP_WC view are queued until the next read or uncached write. */
  BG_PCI_FEAT_NO_HOST_DMA = 1u << 0,
};

/* Progress of a long bulk copy: done of total bytes (NULL: not reported). */
typedef void (*bg_pci_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct bg_pci_ops {
  unsigned features;  /* enum bg_pci_features */
  int (*cfg_read)(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t *v);
  int (*cfg_write)(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t v);
  int (*bar_info)(bg_pci_dev *d, int bar, bg_pci_bar *out);
  /* [off, off+size) of BAR bar, off page-aligned; size 0 = to the end of the BAR. */
  int (*map_bar)(bg_pci_dev *d, int bar, uint64_t off, uint64_t size, unsigned flags, bg_mmio *out);
  void (*unmap_bar)(bg_pci_dev *d, bg_mmio *m);
  /* Grow BAR bar to the largest size the device supports; *size gets the size in effect. NULL:
   * nothing to resize (the USB bridge sizes its BARs while it sets them up). */
  int (*resize_bar)(bg_pci_dev *d, int bar, uint64_t *size);
  int (*reset)(bg_pci_dev *d);
  /* Host memory the device may DMA to: CPU view and one bus address per 4 KiB page. */
  int (*alloc_sysmem)(bg_pci_dev *d, uint64_t size, unsigned flags, void *fixed_va, bg_sysmem *out);
  void (*free_sysmem)(bg_pci_dev *d, bg_sysmem *m);
  /* Bus addresses of existing host memory (a CPU buffer mapped into the GPU): locks it first. */
  int (*dma_map)(bg_pci_dev *d, void *va, uint64_t size, uint64_t *bus);
  void (*dma_unmap)(bg_pci_dev *d, void *va, uint64_t size);
  /* Bulk copy between host memory and [addr, addr+n) of the device's BAR memory (addr a bus address,
   * checked by the caller to lie in one BAR), pipelined where the transport can (the USB bridge: 1 MiB
   * streams). NULL: the BAR is mapped and memcpy is the copy (sysfs: the CPU reaches the BAR itself). */
  int (*copy_in)(bg_pci_dev *d, uint64_t addr, const void *src, size_t n, bg_pci_progress_fn progress, void *ctx);
  int (*copy_out)(bg_pci_dev *d, uint64_t addr, void *dst, size_t n, bg_pci_progress_fn progress, void *ctx);
  /* Wait for an interrupt; 0 fired, -BG_ETIMEDOUT. NULL: polling only. */
  int (*wait_irq)(bg_pci_dev *d, int timeout_ms);
  /* 0 when the device still answers, -BG_ENODEV naming it otherwise. */
  int (*check_alive)(bg_pci_dev *d);
  void (*close)(bg_pci_dev *d);  /* release what the implementation holds; the core frees d */
} bg_pci_ops;

/* ---------------- for implementations ---------------- */

/* A handle with priv_size zeroed bytes of implementation state; NULL on ENOMEM (message set). */
bg_pci_dev *bg_pci_dev_new(const bg_pci_ops *ops, const char *name, size_t priv_size);
void *bg_pci_priv(bg_pci_dev *d);

/* ---------------- for drivers ---------------- */

/* bg_pci_open_sysfs flags. */
enum bg_pci_open_flags {
  BG_PCI_UNBIND_DRIVER = 1u << 0,    /* unbind a bound kernel driver (otherwise: -BG_EBUSY) */
  BG_PCI_VFIO = 1u << 1,             /* bind to vfio-pci and open through VFIO (platform/pci_vfio.h) */
  BG_PCI_REMOVE_SIBLINGS = 1u << 2,  /* remove functions 1..7 of the slot (HDMI audio) */
};

/* Open a device under bg_pci_sysfs_root(): lock it, check privilege, unbind when asked, enable memory decoding and
 * bus mastering. bdf is "DDDD:BB:DD.F". Through VFIO (config, BARs, DMA, interrupts, reset all through the VFIO
 * device fd and container) with BG_PCI_VFIO, or when the function is bound to vfio-pci and BG_PCI_UNBIND_DRIVER is not
 * given; through sysfs files otherwise. */
int bg_pci_open_sysfs(const char *bdf, unsigned flags, bg_pci_dev **out);
void bg_pci_close(bg_pci_dev *d);
const char *bg_pci_name(const bg_pci_dev *d);

/* size is 1, 2 or 4, off naturally aligned and inside the 4 KiB configuration space. */
int bg_pci_cfg_read(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t *v);
int bg_pci_cfg_write(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t v);
/* Offset of a capability (id from platform/pci_regs.h) in the legacy list or the extended list;
 * 0 when absent. */
int bg_pci_find_cap(bg_pci_dev *d, unsigned id, uint32_t *off);
int bg_pci_find_ext_cap(bg_pci_dev *d, unsigned id, uint32_t *off);

int bg_pci_bar_info(bg_pci_dev *d, int bar, bg_pci_bar *out);
int bg_pci_map_bar(bg_pci_dev *d, int bar, uint64_t off, uint64_t size, unsigned flags, bg_mmio *out);
void bg_pci_unmap_bar(bg_pci_dev *d, bg_mmio *m);
int bg_pci_resize_bar(bg_pci_dev *d, int bar, uint64_t *size);
int bg_pci_reset(bg_pci_dev *d);

int bg_pci_alloc_sysmem(bg_pci_dev *d, uint64_t size, unsigned flags, void *fixed_va, bg_sysmem *out);
void bg_pci_free_sysmem(bg_pci_dev *d, bg_sysmem *m);
int bg_pci_dma_map(bg_pci_dev *d, void *va, uint64_t size, uint64_t *bus);
void bg_pci_dma_unmap(bg_pci_dev *d, void *va, uint64_t size);

/* enum bg_pci_features of d's implementation. */
unsigned bg_pci_features(const bg_pci_dev *d);

/* Copy n bytes from host memory to bus address addr of BAR memory (copy_out: the other way), through the
 * implementation's copy (progress per stream) or, without one, a mapping of the BAR holding the range
 * (progress once at the end). A range not inside one memory BAR is -BG_EINVAL naming it. */
int bg_pci_copy_in(bg_pci_dev *d, uint64_t addr, const void *src, size_t n, bg_pci_progress_fn progress, void *ctx);
int bg_pci_copy_out(bg_pci_dev *d, uint64_t addr, void *dst, size_t n, bg_pci_progress_fn progress, void *ctx);

bool bg_pci_has_irq(const bg_pci_dev *d);
int bg_pci_wait_irq(bg_pci_dev *d, int timeout_ms);

/* Faults. check_alive: -BG_ENODEV "device X vanished: ..." when it no longer answers.
 * check_bar: after mapping, read the 32-bit register at off of a BAR view: all ones means a dead
 * device or a VM without a usable IOMMU (-BG_EIO naming the BAR), or a vanished one. */
int bg_pci_check_alive(bg_pci_dev *d);
int bg_pci_check_bar(bg_pci_dev *d, int bar, const bg_mmio *m, uint64_t off);

#endif
