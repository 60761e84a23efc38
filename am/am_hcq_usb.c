/* am/am_hcq_usb.c: the AMD HCQ device behind an ASM24 USB bridge (tinygrad tinygrad/runtime/support/usb.py USBMMIOInterface, ASM24Controller; tinygrad tinygrad/runtime/ops_amd.py USBIface; tinygrad tinygrad/runtime/support/system.py USBPCIDevice).
 *
 * The GPU cannot reach host RAM over USB and the bridge SRAM is 512 KiB, so every buffer lives in VRAM (tinygrad's
 * USBIface: "alloc always uses VRAM") and has no direct CPU pointer. The core reaches signals and kernel arguments
 * through mem_read/mem_write below, which go through the BAR0 view: it is mapped write-combined, so writes queue in
 * the bridge and ride in front of the next read or uncached write (the doorbell). That makes a submit — kernel
 * arguments, ring bytes, wptr, doorbell — one USB round trip; a signal poll is one round trip (mode-2 read).
 * Host copies stream through BAR0 with the PCI device's bulk copy (bg_pci_copy_in/out; over the bridge: pipelined
 * copies, 1 MiB streams, 4 in flight). */
#include <inttypes.h>

#include "am/am_hcq.h"
#include "platform/pci.h"

/* BAR0 bus address of VRAM offset pa, or an error when [pa, pa+n) is beyond the BAR. */
static int bar_addr(am_hcq *h, uint64_t pa, uint64_t n, uint64_t *addr) {
  bg_pci_bar bar;
  int e = bg_pci_bar_info(h->d->pci, 0, &bar);
  if (e < 0) return e;
  if (pa > bar.size || n > bar.size - pa)
    return bg_error(BG_ENOTSUP, "am: %s: VRAM 0x%" PRIx64 "+0x%" PRIx64 " is beyond the %" PRIu64 " MiB BAR0: over "
                    "USB the CPU reaches VRAM only through the BAR (the bridge's resizable-BAR set-up should cover it)",
                    h->d->bdf, pa, n, bar.size >> 20);
  *addr = bar.base + pa;
  return 0;
}

static const am_alloc *usb_alloc(const bg_dev *dev, const bg_mem *m, uint64_t off, uint64_t n) {
  const am_alloc *a = m->meta;
  if (!a || a->host || off > m->size || n > m->size - off) {
    bg_error(BG_EINVAL, "am: %s: device access of %" PRIu64 " bytes at offset %" PRIu64 " of a %" PRIu64
             "-byte %s buffer: expected a VRAM buffer and a range inside it", dev->name, n, off, m->size,
             a && a->host ? "system-memory" : "unknown");
    return NULL;
  }
  return a;
}

int bg_am_hcq_usb_mem_read(bg_dev *dev, const bg_mem *m, uint64_t off, void *dst, uint64_t n) {
  am_hcq *h = dev->priv;
  const am_alloc *a = usb_alloc(dev, m, off, n);
  return a ? bg_mmio_read(&h->d->vram, a->pa + off, dst, n) : -BG_EINVAL;
}

int bg_am_hcq_usb_mem_write(bg_dev *dev, const bg_mem *m, uint64_t off, const void *src, uint64_t n) {
  am_hcq *h = dev->priv;
  const am_alloc *a = usb_alloc(dev, m, off, n);
  return a ? bg_mmio_write(&h->d->vram, a->pa + off, src, n) : -BG_EINVAL;
}

/* A bridge copy between host memory and the VRAM range of m at off: from src when it is set, else into dst. */
static int usb_copy(am_hcq *h, const bg_mem *m, uint64_t off, const void *src, void *dst, uint64_t n) {
  bool to_vram = src != NULL;
  const am_alloc *a = usb_alloc(h->dev, m, off, n);
  uint64_t addr = 0;
  if (!a) return -BG_EINVAL;
  int e = bar_addr(h, a->pa + off, n, &addr);
  if (e >= 0 && to_vram) e = bg_pci_copy_in(h->d->pci, addr, src, n, NULL, NULL);
  else if (e >= 0) e = bg_pci_copy_out(h->d->pci, addr, dst, n, NULL, NULL);
  return e < 0 ? bg_error_context(e, "am: %s: copy of %" PRIu64 " bytes %s VRAM over USB: ", h->d->bdf, n,
                                  to_vram ? "to" : "from")
               : 0;
}

int bg_am_hcq_usb_copyin(am_hcq *h, const bg_mem *dst, uint64_t off, const void *src, uint64_t n) {
  return usb_copy(h, dst, off, src, NULL, n);
}

int bg_am_hcq_usb_copyout(am_hcq *h, const bg_mem *src, uint64_t off, void *dst, uint64_t n) {
  return usb_copy(h, src, off, NULL, dst, n);
}
