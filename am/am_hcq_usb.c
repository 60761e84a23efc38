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
#include "platform/pci_usb.h"

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

/* A signal word read while a fault check of dev is due: the fault check's words (the read pointers of the queues with
 * work, IH_RB_WPTR) ride in the same round trip, read after the signal as the check would read them after the wait
 * (struct am_polled). Without that a synchronize of finished work cost three round trips (signal, read pointer,
 * interrupt ring) where one does. */
static int poll_read(am_hcq *h, bg_dev *dev, uint64_t pa, void *dst) {
  bg_pci_read rd[4];
  struct am_polled p = {.valid = true, .dev = dev, .submits = dev->submits};
  size_t n = 0;
  uint64_t addr;
  int e = bar_addr(h, pa, 8, &addr);
  if (e < 0) return e;
  rd[n++] = (bg_pci_read){addr, dst, 8};
  pthread_mutex_lock(&h->lock);
  for (int k = 0; k < 2 && e >= 0; k++) {
    const bg_queue_hw *q = h->q[k];
    uint64_t rpa;
    size_t rn;
    if (!q || !bg_am_hcq_queue_busy(q)) continue;
    bg_am_hcq_rptr_word(q, &rpa, &rn);
    if ((e = bar_addr(h, rpa, rn, &addr)) >= 0) rd[n++] = (bg_pci_read){addr, &p.raw[k], rn}, p.busy[k] = true;
  }
  uint32_t reg = 0;
  bg_pci_bar bar5;
  if (e >= 0 && h->blk.ih && bg_am_hcq_ih_wptr_reg(h, &reg) >= 0 && (uint64_t)reg * 4 + 4 <= h->d->mmio.size &&
      bg_pci_bar_info(h->d->pci, 5, &bar5) >= 0) {
    rd[n++] = (bg_pci_read){bar5.base + (uint64_t)reg * 4, &p.ih_wptr, 4};
    p.ih = true;
  }
  if (e >= 0) e = bg_usb_pci_readv(h->d->pci, rd, n);
  if (e >= 0 && p.ih) bg_am_count_read(h->d, reg, p.ih_wptr); /* a register read like any other (counted, traced) */
  h->polled = p;
  h->polled.valid = e >= 0;
  pthread_mutex_unlock(&h->lock);
  return e;
}

int bg_am_hcq_usb_mem_read(bg_dev *dev, const bg_mem *m, uint64_t off, void *dst, uint64_t n) {
  am_hcq *h = dev->priv;
  const am_alloc *a = usb_alloc(dev, m, off, n);
  if (!a) return -BG_EINVAL;
  if (n == 8 && !((a->pa + off) & 3) && dev->submits != dev->fault_checked && dev->ops->fault_check)
    return poll_read(h, dev, a->pa + off, dst);
  return bg_mmio_read(&h->d->vram, a->pa + off, dst, n);
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
