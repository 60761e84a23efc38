/* platform/pci.c: the implementation-independent half of platform/pci.h: argument checks done once for
 * every implementation, capability walks, fault checks. */
#include <inttypes.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "platform/pci.h"
#include "platform/pci_regs.h"

struct bg_pci_dev {
  const bg_pci_ops *ops;
  char name[48];
  alignas(max_align_t) unsigned char priv[];
};

bg_pci_dev *bg_pci_dev_new(const bg_pci_ops *ops, const char *name, size_t priv_size) {
  bg_pci_dev *d = calloc(1, sizeof(*d) + priv_size);
  if (!d) {
    bg_error(BG_ENOMEM, "%s: out of memory for the device handle", name);
    return NULL;
  }
  d->ops = ops;
  snprintf(d->name, sizeof(d->name), "%s", name);
  return d;
}

void *bg_pci_priv(bg_pci_dev *d) { return d->priv; }
const char *bg_pci_name(const bg_pci_dev *d) { return d->name; }

void bg_pci_close(bg_pci_dev *d) {
  if (!d) return;
  if (d->ops->close) d->ops->close(d);
  free(d);
}

static int cfg_args(const bg_pci_dev *d, uint32_t off, unsigned size, const char *op) {
  if ((size != 1 && size != 2 && size != 4) || off % size || off + size > BG_PCI_CFG_SPACE_EXP_SIZE)
    return bg_error(BG_EINVAL, "%s: config %s of %u bytes at 0x%x: size must be 1, 2 or 4, naturally aligned, "
                    "inside 4 KiB", d->name, op, size, off);
  return 0;
}

int bg_pci_cfg_read(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t *v) {
  int r = cfg_args(d, off, size, "read");
  return r < 0 ? r : d->ops->cfg_read(d, off, size, v);
}

int bg_pci_cfg_write(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t v) {
  int r = cfg_args(d, off, size, "write");
  if (r == 0 && size < 4 && v >> (8 * size))
    r = bg_error(BG_EINVAL, "%s: config write of 0x%x does not fit in %u bytes", d->name, v, size);
  return r < 0 ? r : d->ops->cfg_write(d, off, size, v);
}

int bg_pci_find_cap(bg_pci_dev *d, unsigned id, uint32_t *off) {
  uint32_t status, ptr, hdr;
  *off = 0;
  int r = bg_pci_cfg_read(d, BG_PCI_STATUS, 2, &status);
  if (r < 0 || !(status & BG_PCI_STATUS_CAP_LIST)) return r;
  if ((r = bg_pci_cfg_read(d, BG_PCI_CAPABILITY_LIST, 1, &ptr)) < 0) return r;
  /* 48 entries fit in the 192 bytes after the header: more means a loop in the list. */
  for (int i = 0; i < 48 && (ptr &= ~3u) >= 0x40; i++) {
    if ((r = bg_pci_cfg_read(d, ptr, 2, &hdr)) < 0) return r;
    if ((hdr & 0xff) == id) {
      *off = ptr;
      return 0;
    }
    ptr = hdr >> 8;
  }
  return 0;
}

int bg_pci_find_ext_cap(bg_pci_dev *d, unsigned id, uint32_t *off) {
  uint32_t pos = BG_PCI_EXT_CAP_START, hdr;
  *off = 0;
  for (int i = 0; i < (int)((BG_PCI_CFG_SPACE_EXP_SIZE - BG_PCI_EXT_CAP_START) / 8) && pos >= BG_PCI_EXT_CAP_START;
       i++) {
    int r = bg_pci_cfg_read(d, pos, 4, &hdr);
    if (r < 0) return r;
    if (hdr == 0 || hdr == 0xffffffffu) return 0;
    if (BG_PCI_EXT_CAP_ID(hdr) == id) {
      *off = pos;
      return 0;
    }
    pos = BG_PCI_EXT_CAP_NEXT(hdr);
  }
  return 0;
}

static int bar_arg(const bg_pci_dev *d, int bar) {
  if (bar < 0 || bar >= BG_PCI_NBARS) return bg_error(BG_EINVAL, "%s: no BAR%d (BARs are 0..5)", d->name, bar);
  return 0;
}

int bg_pci_bar_info(bg_pci_dev *d, int bar, bg_pci_bar *out) {
  int r = bar_arg(d, bar);
  return r < 0 ? r : d->ops->bar_info(d, bar, out);
}

int bg_pci_map_bar(bg_pci_dev *d, int bar, uint64_t off, uint64_t size, unsigned flags, bg_mmio *out) {
  memset(out, 0, sizeof(*out));
  int r = bar_arg(d, bar);
  return r < 0 ? r : d->ops->map_bar(d, bar, off, size, flags, out);
}

void bg_pci_unmap_bar(bg_pci_dev *d, bg_mmio *m) {
  if (m->ptr || m->ops) d->ops->unmap_bar(d, m);
  memset(m, 0, sizeof(*m));
}

int bg_pci_resize_bar(bg_pci_dev *d, int bar, uint64_t *size) {
  int r = bar_arg(d, bar);
  if (r < 0) return r;
  if (!d->ops->resize_bar) {
    bg_pci_bar b;
    r = d->ops->bar_info(d, bar, &b);
    if (r == 0 && size) *size = b.size;
    return r;
  }
  uint64_t s = 0;
  r = d->ops->resize_bar(d, bar, &s);
  if (size) *size = s;
  return r;
}

int bg_pci_reset(bg_pci_dev *d) {
  if (!d->ops->reset) return bg_error(BG_ENOTSUP, "%s: this interface cannot reset the device", d->name);
  return d->ops->reset(d);
}

int bg_pci_alloc_sysmem(bg_pci_dev *d, uint64_t size, unsigned flags, void *fixed_va, bg_sysmem *out) {
  memset(out, 0, sizeof(*out));
  int r = d->ops->alloc_sysmem(d, size, flags, fixed_va, out);
  return r < 0 ? bg_error_context(r, "%s: ", d->name) : r;
}

void bg_pci_free_sysmem(bg_pci_dev *d, bg_sysmem *m) {
  if (m->size) d->ops->free_sysmem(d, m);
  memset(m, 0, sizeof(*m));
}

int bg_pci_dma_map(bg_pci_dev *d, void *va, uint64_t size, uint64_t *bus) {
  if (!d->ops->dma_map) return bg_error(BG_ENOTSUP, "%s: this interface cannot DMA to host memory", d->name);
  if ((uintptr_t)va % BG_SYSMEM_PAGE || size % BG_SYSMEM_PAGE || size == 0)
    return bg_error(BG_EINVAL, "%s: dma map of %p + 0x%llx: address and size must be whole 4 KiB pages", d->name, va,
                    (unsigned long long)size);
  int r = d->ops->dma_map(d, va, size, bus);
  return r < 0 ? bg_error_context(r, "%s: ", d->name) : r;
}

void bg_pci_dma_unmap(bg_pci_dev *d, void *va, uint64_t size) {
  if (d->ops->dma_unmap) d->ops->dma_unmap(d, va, size);
}

bool bg_pci_has_irq(const bg_pci_dev *d) { return d->ops->wait_irq != NULL; }

int bg_pci_wait_irq(bg_pci_dev *d, int timeout_ms) {
  if (!d->ops->wait_irq) return bg_error(BG_ENOTSUP, "%s: no interrupts on this interface: poll instead", d->name);
  return d->ops->wait_irq(d, timeout_ms);
}

unsigned bg_pci_features(const bg_pci_dev *d) { return d->ops->features; }

/* The memory BAR holding [addr, addr+n), or -BG_EINVAL naming the range. */
static int bar_of(bg_pci_dev *d, uint64_t addr, size_t n, int *bar, uint64_t *off) {
  for (int i = 0; i < BG_PCI_NBARS; i++) {
    bg_pci_bar b;
    if (d->ops->bar_info(d, i, &b) < 0 || b.size == 0 || b.is_io) continue;
    if (addr >= b.base && addr - b.base <= b.size && n <= b.size - (addr - b.base)) {
      *bar = i;
      *off = addr - b.base;
      return 0;
    }
  }
  return bg_error(BG_EINVAL,
                  "%s: copy of %zu bytes at bus address 0x%" PRIx64 ": expected a range inside one memory BAR",
                  d->name, n, addr);
}

/* Without a transport copy: map the pages of the BAR that hold the range and copy through the view. */
static int copy_mapped(bg_pci_dev *d, uint64_t addr, const void *src, void *dst, size_t n, bg_pci_progress_fn progress,
                       void *ctx) {
  int bar = 0;
  uint64_t off = 0;
  int r = bar_of(d, addr, n, &bar, &off);
  if (r < 0 || n == 0) return r;
  uint64_t page = off & ~(uint64_t)4095, len = off + n - page;
  bg_mmio m;
  if ((r = bg_pci_map_bar(d, bar, page, len, BG_PCI_MAP_WC, &m)) < 0) return r;
  r = src ? bg_mmio_write(&m, off - page, src, n) : bg_mmio_read(&m, off - page, dst, n);
  bg_pci_unmap_bar(d, &m);
  if (r == 0 && progress) progress(ctx, n, n);
  return r;
}

int bg_pci_copy_in(bg_pci_dev *d, uint64_t addr, const void *src, size_t n, bg_pci_progress_fn progress, void *ctx) {
  if (d->ops->copy_in) return d->ops->copy_in(d, addr, src, n, progress, ctx);
  return copy_mapped(d, addr, src, NULL, n, progress, ctx);
}

int bg_pci_copy_out(bg_pci_dev *d, uint64_t addr, void *dst, size_t n, bg_pci_progress_fn progress, void *ctx) {
  if (d->ops->copy_out) return d->ops->copy_out(d, addr, dst, n, progress, ctx);
  return copy_mapped(d, addr, NULL, dst, n, progress, ctx);
}

int bg_pci_check_alive(bg_pci_dev *d) {
  if (d->ops->check_alive) return d->ops->check_alive(d);
  uint32_t v;
  int r = d->ops->cfg_read(d, BG_PCI_VENDOR_ID, 2, &v);
  if (r < 0) return bg_error_context(r, "device %s vanished: ", d->name);
  if (v == 0xffff)
    return bg_error(BG_ENODEV, "device %s vanished: its configuration space reads 0xffff", d->name);
  return 0;
}

int bg_pci_check_bar(bg_pci_dev *d, int bar, const bg_mmio *m, uint64_t off) {
  if (!bg_mmio_ok(m, off, 4)) return bg_mmio_fault(m, off, 4, false);
  uint32_t v = bg_mmio_rd32(m, off);
  if (v != 0xffffffffu) return 0;
  int r = bg_pci_check_alive(d);
  if (r < 0) return r;
  return bg_error(BG_EIO, "BAR%d of %s reads 0x%08x: the device is dead or the VM has no usable IOMMU (register "
                  "at offset 0x%llx)", bar, d->name, v, (unsigned long long)off);
}
