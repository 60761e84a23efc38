/* tests/mockgpu/mock_pci.h: an emulated PCI function for the sysfs path of platform/pci.
 *
 * The model has a 4 KiB configuration space (type 0 header, PCIe and MSI capabilities, a
 * Resizable BAR extended capability), BARs backed by host memory, per-range register hooks a
 * GPU model attaches to, and DMA into host memory the driver allocated. It lives in a fake
 * sysfs tree (mock_sysfs.h) and sees the driver only through that tree's files and the BAR
 * views it hands out.
 *
 * Strict: an access outside a BAR or its view, a BAR access with memory decoding off, DMA with
 * bus mastering off or to an unmapped bus address, a write to a read-only identity field of
 * config space, a straddling or oddly sized access to a hooked register, and (on a strict BAR)
 * an access to an unmodelled offset are recorded as failures (mock_sysfs_nfail) and fail the
 * access itself. */
#ifndef BG_MOCKGPU_MOCK_PCI_H
#define BG_MOCKGPU_MOCK_PCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mock_sysfs mock_sysfs;
typedef struct mock_pci mock_pci;

typedef struct mock_pci_bar_cfg {
  uint64_t size;          /* bytes, a power of two >= 16; 0: not implemented */
  bool is_64, prefetch, io;
  uint32_t rebar_sizes;   /* Resizable BAR: bit n = 2^n MiB supported; 0: fixed size */
} mock_pci_bar_cfg;

typedef struct mock_pci_cfg {
  const char *bdf;        /* "0000:03:00.0" */
  uint16_t vendor, device, subvendor, subdevice;
  uint32_t class_code;    /* 0x030000: VGA */
  uint8_t revision;
  mock_pci_bar_cfg bars[6];
  const char *driver;     /* bound kernel driver (added to the tree if new), NULL: none */
  const char *link_speed; /* "16.0 GT/s PCIe"; NULL: no link files */
  int link_width;
  bool no_reset;          /* no "reset" file: the kernel found no reset method */
  int iommu_group;        /* >= 0: an iommu_group link */
  uint64_t bridge_window; /* largest BAR the upstream bridge fits (0: any): bigger resizes get ENOSPC */
  bool resize_ignored;    /* accept resize writes but keep the old size */
  bool unemulated_bars;   /* BAR views are plain mmaps of the sparse resourceN files */
  bool no_msi;            /* no MSI capability: interrupts only through INTx */
} mock_pci_cfg;

/* Register hooks over BAR bytes [off, off+len): called with the BAR offset and an access size of
 * 1, 2, 4 or 8 that lies inside the range, naturally aligned. */
typedef uint64_t (*mock_pci_rd_fn)(void *user, mock_pci *m, int bar, uint64_t off, unsigned size);
typedef void (*mock_pci_wr_fn)(void *user, mock_pci *m, int bar, uint64_t off, uint64_t v, unsigned size);
int mock_pci_hook(mock_pci *m, int bar, uint64_t off, uint64_t len, mock_pci_rd_fn rd, mock_pci_wr_fn wr,
                  void *user);
/* Strict BAR: an offset no hook covers is an unmodelled register, a failure. */
void mock_pci_bar_strict(mock_pci *m, int bar, bool on);
/* Direct BAR: views are plain pointers into the backing memory (VRAM-like speed; still bounded
 * by the view, but no hooks or decoding checks). */
void mock_pci_bar_direct(mock_pci *m, int bar, bool on);
/* Backing memory and current size (after resizes). */
void *mock_pci_bar_mem(mock_pci *m, int bar);
/* What the host CPU's direct maps of the BAR get instead of its backing memory (NULL: the backing memory):
 * the emulated AMD GPU's HDP host view of VRAM (amd_hdp.h). Peers (the USB bridge) still reach the backing memory. */
void mock_pci_bar_cpu_view(mock_pci *m, int bar, void *view);
uint64_t mock_pci_bar_size(const mock_pci *m, int bar);
unsigned mock_pci_bar_views(const mock_pci *m, int bar);

/* A dead device: BAR reads return all ones, writes are dropped; config space still answers. */
void mock_pci_set_dead(mock_pci *m, bool dead);
/* Function resets seen, and a callback the GPU model resets its state in. */
unsigned mock_pci_resets(const mock_pci *m);
void mock_pci_on_reset(mock_pci *m, void (*fn)(void *user, mock_pci *m), void *user);

const char *mock_pci_bdf(const mock_pci *m);
uint16_t mock_pci_command(const mock_pci *m);
const uint8_t *mock_pci_config(const mock_pci *m);
bool mock_pci_enabled(const mock_pci *m);     /* "1" written to enable */
const char *mock_pci_driver(const mock_pci *m); /* "" when unbound */

/* Device-initiated DMA to host memory through bus addresses the driver got (bus mastering on). */
int mock_pci_dma_read(mock_pci *m, uint64_t bus, void *dst, size_t n);
int mock_pci_dma_write(mock_pci *m, uint64_t bus, const void *src, size_t n);

/* Where the device's DMA lands instead of the host memory mapped through the tree (the USB
 * bridge's SRAM windows, tests/mockgpu/asm24.h): the bytes at bus and how many of them are
 * contiguous (*avail); NULL: nothing there (a failure). fn NULL: back to the tree. */
typedef uint8_t *(*mock_pci_dma_target_fn)(void *user, uint64_t bus, size_t *avail);
void mock_pci_set_dma_target(mock_pci *m, mock_pci_dma_target_fn fn, void *user);

#endif
