/* usb/usb_pci.c: bg_pci_ops over the ASM24 bridge (usb/usb_pci.h; tinygrad tinygrad/runtime/support/usb.py ASM24Controller, USBMMIOInterface; tinygrad tinygrad/runtime/support/system.py System.pci_setup_usb_bars, USBPCIDevice; tinygrad tinygrad/runtime/ops_amd.py USBIface). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "platform/pci_regs.h"
#include "usb/usb_pci.h"

typedef struct usb_pci {
  bg_asm24 *b;
  bg_asm24_bar bars[6];
  uint64_t sram_used;   /* bump pointer into the SRAM (tinygrad tinygrad/runtime/support/system.py USBPCIDevice: no wrap) */
} usb_pci;

typedef enum view_kind { VIEW_BAR, VIEW_XDATA, VIEW_SRAM } view_kind;

typedef struct usb_view {
  bg_asm24 *b;
  view_kind kind;
  uint64_t base;        /* BAR: PCIe address; XDATA: controller address; SRAM: offset in SRAM */
  bool wc;              /* BAR: queue writes */
  uint8_t *shadow;      /* SRAM: host copy of the whole view */
} usb_view;

static const bg_pci_ops usb_pci_ops;

static usb_pci *priv(bg_pci_dev *d) { return bg_pci_priv(d); }

/* Devices opened here: bg_pci_dev is opaque, so membership is how d is known to be ours. */
#define MAX_OPEN 16
static const bg_pci_dev *open_devs[MAX_OPEN];
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static bool track(const bg_pci_dev *d, bool add) {
  bool found = false;
  pthread_mutex_lock(&open_lock);
  for (int i = 0; i < MAX_OPEN && !found; i++) {
    if (add ? open_devs[i] == NULL : open_devs[i] == d) {
      open_devs[i] = add ? d : NULL;
      found = true;
    }
  }
  pthread_mutex_unlock(&open_lock);
  return found;
}

bool bg_usb_pci_is_usb(const bg_pci_dev *d) {
  bool found = false;
  pthread_mutex_lock(&open_lock);
  for (int i = 0; i < MAX_OPEN && d && !found; i++) found = open_devs[i] == d;
  pthread_mutex_unlock(&open_lock);
  return found;
}

bg_asm24 *bg_usb_pci_bridge(bg_pci_dev *d) { return bg_usb_pci_is_usb(d) ? priv(d)->b : NULL; }

int bg_usb_pci_flush(bg_pci_dev *d) {
  bg_asm24 *b = bg_usb_pci_bridge(d);
  if (!b) return 0;
  bg_asm24_lock(b);
  int r = bg_asm24_flush(b);
  bg_asm24_unlock(b);
  return r;
}

int bg_usb_pci_readv(bg_pci_dev *d, const bg_pci_read *rd, size_t n) {
  bg_asm24 *b = bg_usb_pci_bridge(d);
  if (!b) return bg_error(BG_ENOTSUP, "%s: batched reads need a USB bridge", bg_pci_name(d));
  if (n > 16) return bg_error(BG_EINVAL, "%s: %zu batched reads: expected at most 16", bg_pci_name(d), n);
  bg_asm24_read r[16];
  for (size_t i = 0; i < n; i++) r[i] = (bg_asm24_read){rd[i].addr, rd[i].dst, rd[i].n};
  return bg_asm24_mem_readv(b, r, n);
}

/* ---------------- views ---------------- */

static int view_read_locked(void *ctx, uint64_t off, void *dst, size_t n) {
  usb_view *v = ctx;
  switch (v->kind) {
  case VIEW_BAR: return bg_asm24_mem_read(v->b, v->base + off, dst, n);
  case VIEW_XDATA: return bg_asm24_xdata_read(v->b, (uint16_t)(v->base + off), dst, n);
  case VIEW_SRAM: {
    /* The engine reads from slot 0: read up to the end of the range, keep the tail. */
    size_t end = (size_t)(v->base + off + n);
    int r = bg_asm24_flush(v->b);
    uint8_t *tmp = r == 0 ? malloc(end) : NULL;
    if (r == 0 && !tmp) r = bg_error(BG_ENOMEM, "%s: SRAM read buffer", bg_asm24_name(v->b));
    if (r == 0) r = bg_asm24_sram_read_arm(v->b, end);
    if (r == 0) r = bg_asm24_sram_read(v->b, tmp, end);
    if (r == 0) {
      memcpy(dst, tmp + v->base + off, n);
      memcpy(v->shadow + off, dst, n);
    }
    free(tmp);
    return r;
  }
  }
  return -BG_EINVAL;
}

static int view_write_locked(void *ctx, uint64_t off, const void *src, size_t n) {
  usb_view *v = ctx;
  switch (v->kind) {
  case VIEW_BAR: return bg_asm24_mem_write(v->b, v->base + off, src, n, v->wc);
  case VIEW_XDATA: return bg_asm24_xdata_write(v->b, (uint16_t)(v->base + off), src, n);
  case VIEW_SRAM: {
    /* Whole 512-byte sectors from the slot start: the shadow supplies the bytes around the write. */
    memcpy(v->shadow + off, src, n);
    uint64_t abs = v->base + off, slot = abs / BG_ASM24_SLOT, from = slot * BG_ASM24_SLOT;
    uint64_t to = (abs + n + BG_ASM24_SECTOR - 1) / BG_ASM24_SECTOR * BG_ASM24_SECTOR;
    int r = bg_asm24_flush(v->b);
    return r < 0 ? r : bg_asm24_sram_write(v->b, (unsigned)slot, v->shadow + (from - v->base), (size_t)(to - from));
  }
  }
  return -BG_EINVAL;
}

/* Views may be used from several threads (signals): one bridge request sequence at a time. */
static int view_read(void *ctx, uint64_t off, void *dst, size_t n) {
  bg_asm24 *b = ((usb_view *)ctx)->b;
  bg_asm24_lock(b);
  int r = view_read_locked(ctx, off, dst, n);
  bg_asm24_unlock(b);
  return r;
}

static int view_write(void *ctx, uint64_t off, const void *src, size_t n) {
  bg_asm24 *b = ((usb_view *)ctx)->b;
  bg_asm24_lock(b);
  int r = view_write_locked(ctx, off, src, n);
  bg_asm24_unlock(b);
  return r;
}

static const bg_mmio_ops usb_view_ops = {view_read, view_write};

static int new_view(bg_pci_dev *d, view_kind kind, uint64_t base, uint64_t size, bool wc, bg_mmio *out) {
  usb_view *v = calloc(1, sizeof(*v));
  if (!v) return bg_error(BG_ENOMEM, "%s: out of memory for a view", bg_pci_name(d));
  *v = (usb_view){priv(d)->b, kind, base, wc, NULL};
  if (kind == VIEW_SRAM && !(v->shadow = calloc(1, size))) {
    free(v);
    return bg_error(BG_ENOMEM, "%s: out of memory for a %" PRIu64 "-byte SRAM shadow", bg_pci_name(d), size);
  }
  *out = (bg_mmio){NULL, size, &usb_view_ops, v};
  // cppcheck-suppress memleak ; v lives on in out->ctx until free_view
  return 0;
}

static void free_view(bg_mmio *m) {
  usb_view *v = m->ctx;
  if (!v) return;
  if (v->wc) {
    bg_asm24_lock(v->b);
    bg_asm24_flush(v->b);
    bg_asm24_unlock(v->b);
  }
  free(v->shadow);
  free(v);
}

/* ---------------- bg_pci_ops ---------------- */

static int cfg_read(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t *v) {
  bg_asm24_lock(priv(d)->b);
  int r = bg_asm24_cfg_read(priv(d)->b, BG_ASM24_GPU_BUS, 0, 0, off, size, v);
  bg_asm24_unlock(priv(d)->b);
  return r;
}

static int cfg_write(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t v) {
  bg_asm24_lock(priv(d)->b);
  int r = bg_asm24_cfg_write(priv(d)->b, BG_ASM24_GPU_BUS, 0, 0, off, size, v);
  bg_asm24_unlock(priv(d)->b);
  return r;
}

static int bar_info(bg_pci_dev *d, int bar, bg_pci_bar *out) {
  const bg_asm24_bar *b = &priv(d)->bars[bar];
  *out = (bg_pci_bar){.base = b->addr, .size = b->size, .is_64 = b->is_64, .prefetch = b->prefetch};
  return 0;
}

static int map_bar(bg_pci_dev *d, int bar, uint64_t off, uint64_t size, unsigned flags, bg_mmio *out) {
  const bg_asm24_bar *b = &priv(d)->bars[bar];
  if (!b->size) return bg_error(BG_ENODEV, "%s: BAR%d is not implemented by the GPU", bg_pci_name(d), bar);
  if (size == 0 && off < b->size) size = b->size - off;
  if (off % BG_SYSMEM_PAGE || off > b->size || size > b->size - off || !size)
    return bg_error(BG_EINVAL, "%s: map of BAR%d 0x%" PRIx64 "+0x%" PRIx64 ": outside its 0x%" PRIx64 " bytes or not "
                    "page-aligned", bg_pci_name(d), bar, off, size, b->size);
  return new_view(d, VIEW_BAR, b->addr + off, size, (flags & BG_PCI_MAP_WC) != 0, out);
}

static void unmap_bar(bg_pci_dev *d, bg_mmio *m) {
  (void)d;
  free_view(m);
}

// cppcheck-suppress constParameter ; the signature is bg_pci_ops'
static int alloc_sysmem(bg_pci_dev *d, uint64_t size, unsigned flags, void *fixed_va, bg_sysmem *out) {
  (void)flags;
  usb_pci *p = priv(d);
  if (fixed_va)
    return bg_error(BG_ENOTSUP, "sysmem at a fixed address: bridge SRAM has no CPU mapping over USB");
  uint64_t sz = (size + BG_ASM24_SLOT - 1) / BG_ASM24_SLOT * BG_ASM24_SLOT;
  if (!size || sz > BG_ASM24_SRAM_SIZE - p->sram_used)
    return bg_error(BG_ENOMEM, "sysmem of %" PRIu64 " bytes: the bridge SRAM has %" PRIu64 " of 512 KiB left", size,
                    BG_ASM24_SRAM_SIZE - p->sram_used);
  out->npages = (size_t)(sz / BG_SYSMEM_PAGE);
  out->bus = malloc(out->npages * sizeof(*out->bus));
  if (!out->bus) return bg_error(BG_ENOMEM, "sysmem page list");
  int r = new_view(d, VIEW_SRAM, p->sram_used, sz, false, &out->view);
  if (r < 0) {
    free(out->bus);
    out->bus = NULL;
    return r;
  }
  for (size_t i = 0; i < out->npages; i++)
    out->bus[i] = bg_asm24_windows[BG_ASM24_WIN_SRAM].sys + p->sram_used + i * BG_SYSMEM_PAGE;
  out->size = sz;
  p->sram_used += sz;
  return 0;
}

static void free_sysmem(bg_pci_dev *d, bg_sysmem *m) {
  usb_pci *p = priv(d);
  usb_view *v = m->view.ctx;
  if (v && v->base + m->size == p->sram_used) p->sram_used = v->base;  /* the last one: give it back */
  free_view(&m->view);
  free(m->bus);
}

static int check_alive(bg_pci_dev *d) {
  uint32_t v = 0;
  int r = cfg_read(d, BG_PCI_VENDOR_ID, 2, &v);
  if (r < 0) return bg_error_context(r, "device %s vanished: ", bg_pci_name(d));
  if (v == 0xffff) return bg_error(BG_ENODEV, "device %s vanished: its configuration space reads 0xffff", bg_pci_name(d));
  return 0;
}

/* Bulk copies: the bridge's pipelined streams (usb/asm24_copy.c), which take the bridge lock themselves. */
static int copy_in(bg_pci_dev *d, uint64_t addr, const void *src, size_t n, bg_pci_progress_fn progress, void *ctx) {
  return bg_asm24_copy_in(priv(d)->b, addr, src, n, progress, ctx);
}

static int copy_out(bg_pci_dev *d, uint64_t addr, void *dst, size_t n, bg_pci_progress_fn progress, void *ctx) {
  return bg_asm24_copy_out(priv(d)->b, addr, dst, n, progress, ctx);
}

static void close_dev(bg_pci_dev *d) {
  track(d, false);
  bg_asm24_close(priv(d)->b);
}

static const bg_pci_ops usb_pci_ops = {
  .features = BG_PCI_FEAT_NO_HOST_DMA, .copy_in = copy_in, .copy_out = copy_out,
  .cfg_read = cfg_read, .cfg_write = cfg_write, .bar_info = bar_info, .map_bar = map_bar, .unmap_bar = unmap_bar,
  .resize_bar = NULL, .reset = NULL, .alloc_sysmem = alloc_sysmem, .free_sysmem = free_sysmem, .dma_map = NULL,
  .dma_unmap = NULL, .wait_irq = NULL, .check_alive = check_alive, .close = close_dev,
};

int bg_usb_pci_map_window(bg_pci_dev *d, int which, bg_mmio *out) {
  memset(out, 0, sizeof(*out));
  if (!bg_usb_pci_is_usb(d) || which < 0 || which >= BG_ASM24_NWIN)
    return bg_error(BG_EINVAL, "usb: window %d of %s: not a USB device or no such window", which, bg_pci_name(d));
  const bg_asm24_window *w = &bg_asm24_windows[which];
  if (which == BG_ASM24_WIN_SRAM) return new_view(d, VIEW_SRAM, 0, w->size, false, out);
  return new_view(d, VIEW_XDATA, w->xdata, w->size, false, out);
}

int bg_usb_pci_open(bg_usb_transport *t, bg_pci_dev **out) {
  *out = NULL;
  char name[48];
  snprintf(name, sizeof(name), "%s", t->name);
  bg_asm24 *b;
  int r = bg_asm24_open(t, &b);
  if (r < 0) return r;
  bg_pci_dev *d = bg_pci_dev_new(&usb_pci_ops, name, sizeof(usb_pci));
  if (!d) {
    bg_asm24_close(b);
    return -BG_ENOMEM;
  }
  usb_pci *p = priv(d);
  p->b = b;
  if (!track(d, true)) {
    bg_pci_close(d);
    return bg_error(BG_EBUSY, "%s: more than %d USB GPUs open in this process", name, MAX_OPEN);
  }
  r = bg_asm24_setup_bars(b, BG_ASM24_GPU_BUS, BG_ASM24_MEM_BASE, BG_ASM24_PREF_BASE, p->bars);
  if (r < 0) {
    bg_error_context(r, "%s: PCIe set-up behind the bridge: ", name);
    bg_pci_close(d);
    return r;
  }
  BG_LOG(1, "usb: %s: GPU at bus %u: BAR0 0x%" PRIx64 " (%" PRIu64 " MiB), BAR2 0x%" PRIx64 ", BAR5 0x%" PRIx64, name,
         BG_ASM24_GPU_BUS, p->bars[0].addr, p->bars[0].size >> 20, p->bars[2].addr, p->bars[5].addr);
  *out = d;
  return 0;
}

int bg_usb_pci_open_index(int index, bg_pci_dev **out) {
  *out = NULL;
  bg_usb_transport *t;
  int r = bg_usb_open_libusb(index, &t);
  return r < 0 ? r : bg_usb_pci_open(t, out);
}
