/* platform/pci_vfio.c: bg_pci_dev over VFIO (platform/pci_vfio.h; tinygrad tinygrad/runtime/support/system.py
 * System.vfio and its PCI device). BAR sizes come from the region info, bus addresses of the BARs (for peer-to-peer)
 * from the sysfs resource file; DMA memory gets IOVAs from the container (type1) or physical addresses (no-IOMMU). */
#include <errno.h>
#include <inttypes.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "baregpu/error.h"
#include "platform/pci_admin.h"
#include "platform/pci_attr.h"
#include "platform/pci_hook.h"
#include "platform/pci_lock.h"
#include "platform/pci_regs.h"
#include "platform/pci_resource.h"
#include "platform/pci_vfio.h"
#include "platform/vfio.h"

typedef struct vfio_map {
  bg_mmio m;
  int bar;
} vfio_map;

typedef struct vfio_pdev {
  char bdf[16];
  int lock_fd;
  bg_vfio v;
  char unbound[64];           /* kernel driver this open unbound, "" if none */
  const bg_pci_hooks *hooks;  /* emulated device under a fake root (no-IOMMU DMA translation), else NULL */
  void *hctx;
  vfio_map *maps;
  size_t nmaps, capmaps;
} vfio_pdev;

static vfio_pdev *V(bg_pci_dev *d) { return bg_pci_priv(d); }

/* A failed access to a device whose sysfs directory is gone: say it vanished. */
static int vanished_or(const vfio_pdev *s, int r) {
  char rel[BG_SYSFS_REL_MAX];
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s", s->bdf);
  if (bg_sysfs_exists(rel)) return r;
  return bg_error(BG_ENODEV, "device %s vanished: its sysfs directory is gone (hot-unplugged or removed)", s->bdf);
}

static int cfg_read(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t *v) {
  vfio_pdev *s = V(d);
  int r = bg_vfio_cfg_read(&s->v, s->bdf, off, size, v);
  return r < 0 ? vanished_or(s, r) : 0;
}

static int cfg_write(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t v) {
  vfio_pdev *s = V(d);
  int r = bg_vfio_cfg_write(&s->v, s->bdf, off, size, v);
  return r < 0 ? vanished_or(s, r) : 0;
}

/* Memory decoding lets the CPU reach the BARs; bus mastering lets the device DMA (vfio-pci leaves it to the user). */
static int enable_decoding(bg_pci_dev *d) {
  uint32_t cmd, want;
  int r = cfg_read(d, BG_PCI_COMMAND, 2, &cmd);
  if (r < 0) return r;
  want = cmd | BG_PCI_COMMAND_MEMORY | BG_PCI_COMMAND_MASTER;
  if (want == cmd) return 0;
  if ((r = cfg_write(d, BG_PCI_COMMAND, 2, want)) < 0 || (r = cfg_read(d, BG_PCI_COMMAND, 2, &cmd)) < 0) return r;
  if ((cmd & want) != want)
    return bg_error(BG_EIO, "%s: command register reads 0x%04x after enabling memory space and bus mastering "
                    "(wrote 0x%04x through VFIO)", V(d)->bdf, cmd, want);
  return 0;
}

static int bar_info(bg_pci_dev *d, int bar, bg_pci_bar *out) {
  vfio_pdev *s = V(d);
  char rel[BG_SYSFS_REL_MAX], buf[2048];
  memset(out, 0, sizeof(*out));
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s/resource", s->bdf);
  /* The kernel still shows the BAR's bus address in sysfs; VFIO's region info is what this fd can reach. */
  if (bg_sysfs_read(rel, buf, sizeof(buf)) == 0) bg_pci_resource_bar(buf, bar, out);
  const bg_vfio_region *rg = &s->v.regions[bar];
  out->size = rg->size;
  if (rg->size && !(rg->flags & VFIO_REGION_INFO_FLAG_MMAP)) out->is_io = true;
  return 0;
}

static int map_bar(bg_pci_dev *d, int bar, uint64_t off, uint64_t size, unsigned flags, bg_mmio *out) {
  vfio_pdev *s = V(d);
  (void)flags; /* vfio-pci maps BARs uncached: there is no write-combined view to ask for */
  const bg_vfio_region *rg = &s->v.regions[bar];
  if (rg->size == 0 || !(rg->flags & VFIO_REGION_INFO_FLAG_MMAP))
    return bg_error(BG_EINVAL, "%s: BAR%d is %s", s->bdf, bar, rg->size ? "an I/O BAR (not mappable)" : "not implemented");
  if (size == 0 && off < rg->size) size = rg->size - off;
  if (s->nmaps == s->capmaps) {
    size_t cap = s->capmaps ? s->capmaps * 2 : 8;
    vfio_map *nm = realloc(s->maps, cap * sizeof(*nm));
    if (!nm) return bg_error(BG_ENOMEM, "%s: out of memory tracking BAR mappings", s->bdf);
    s->maps = nm;
    s->capmaps = cap;
  }
  int r = bg_vfio_map_bar(&s->v, s->bdf, bar, off, size, out);
  if (r < 0) return vanished_or(s, r);
  s->maps[s->nmaps++] = (vfio_map){*out, bar};
  return 0;
}

static void unmap_bar(bg_pci_dev *d, bg_mmio *m) {
  vfio_pdev *s = V(d);
  for (size_t i = 0; i < s->nmaps; i++)
    if (s->maps[i].m.ptr == m->ptr && s->maps[i].m.ctx == m->ctx && s->maps[i].m.ops == m->ops) {
      bg_vfio_unmap_bar(&s->v, &s->maps[i].m);
      s->maps[i] = s->maps[--s->nmaps];
      return;
    }
  BG_LOG(1, "%s: unmap of a BAR view that is not mapped (ignored)", s->bdf);
}

static int reset(bg_pci_dev *d) {
  vfio_pdev *s = V(d);
  int r = bg_vfio_reset(&s->v, s->bdf);
  /* vfio-pci restores config space around the reset; bus mastering is the user's to set again. */
  return r < 0 ? vanished_or(s, r) : enable_decoding(d);
}

static int check_alive(bg_pci_dev *d) {
  vfio_pdev *s = V(d);
  int r = vanished_or(s, 0);
  uint32_t v = 0;
  if (r == 0) r = cfg_read(d, BG_PCI_VENDOR_ID, 2, &v);
  if (r == 0 && v == 0xffff)
    r = bg_error(BG_ENODEV, "device %s vanished: its configuration space reads 0xffff", s->bdf);
  return r;
}

/* ---------------- DMA: IOVAs (type1) or physical addresses (no-IOMMU) ---------------- */

static int phys_translate(vfio_pdev *s, void *va, size_t npages, unsigned flags, uint64_t *bus) {
  if (s->hooks && s->hooks->dma_map) {
    int r = s->hooks->dma_map(s->hctx, s->bdf, va, npages, flags, bus);
    return r < 0 ? bg_error(bg_sysfs_errcode(-r), "emulated device: DMA translation of %p failed: %s", va,
                            strerror(-r)) : 0;
  }
  return bg_sysmem_translate(va, npages, bus);
}

static void phys_untranslate(vfio_pdev *s, void *va, size_t npages) {
  if (s->hooks && s->hooks->dma_unmap) s->hooks->dma_unmap(s->hctx, s->bdf, va, npages);
}

/* Bus addresses of npages pages at va: one IOVA range (contiguous to the device), or their physical pages. */
static int dma_in(vfio_pdev *s, void *va, size_t npages, unsigned flags, uint64_t *bus) {
  if (s->v.noiommu) return phys_translate(s, va, npages, flags, bus);
  uint64_t iova;
  int r = bg_vfio_dma_map(&s->v, s->bdf, va, (uint64_t)npages * BG_SYSMEM_PAGE, flags & BG_SYSMEM_HUGE, &iova);
  for (size_t i = 0; r == 0 && i < npages; i++) bus[i] = iova + i * BG_SYSMEM_PAGE;
  return r;
}

static void dma_out(vfio_pdev *s, void *va, size_t npages) {
  if (s->v.noiommu) phys_untranslate(s, va, npages);
  else if (bg_vfio_dma_unmap(&s->v, s->bdf, va, (uint64_t)npages * BG_SYSMEM_PAGE) < 0)
    BG_LOG(1, "%s", bg_last_error());
}

static int alloc_sysmem(bg_pci_dev *d, uint64_t size, unsigned flags, void *fixed_va, bg_sysmem *out) {
  vfio_pdev *s = V(d);
  if (s->v.noiommu && !(s->hooks && s->hooks->dma_map)) return bg_sysmem_alloc(size, flags, fixed_va, out);
  int r = bg_sysmem_map(size, flags, fixed_va, out);
  if (r < 0) return r;
  /* HUGE only when 2 MiB pages were obtained; an IOVA range is contiguous whatever the pages are. */
  unsigned got = (flags & ~(unsigned)BG_SYSMEM_HUGE) | (out->huge ? BG_SYSMEM_HUGE : 0);
  if ((r = dma_in(s, out->map_base, out->npages, got, out->bus)) < 0) {
    bg_sysmem_free(out);
    return r;
  }
  if ((r = bg_sysmem_check_layout(out, got)) < 0) {
    dma_out(s, out->map_base, out->npages);
    bg_sysmem_free(out);
  }
  return r;
}

static void free_sysmem(bg_pci_dev *d, bg_sysmem *m) {
  dma_out(V(d), m->map_base, m->npages);
  bg_sysmem_free(m);
}

static int dma_map(bg_pci_dev *d, void *va, uint64_t size, uint64_t *bus) {
  int r = bg_sysmem_lock(va, size);
  if (r == 0 && (r = dma_in(V(d), va, size / BG_SYSMEM_PAGE, 0, bus)) < 0) munlock(va, size);
  return r;
}

static void dma_unmap(bg_pci_dev *d, void *va, uint64_t size) {
  dma_out(V(d), va, size / BG_SYSMEM_PAGE);
  munlock(va, size);
}

static int wait_irq(bg_pci_dev *d, int timeout_ms) { return bg_vfio_wait_irq(&V(d)->v, V(d)->bdf, timeout_ms); }

static void close_dev(bg_pci_dev *d) {
  vfio_pdev *s = V(d);
  if (s->nmaps) BG_LOG(1, "%s: closing with %zu BAR views still mapped: unmapping them", s->bdf, s->nmaps);
  for (size_t i = 0; i < s->nmaps; i++) bg_vfio_unmap_bar(&s->v, &s->maps[i].m);
  free(s->maps);
  bg_vfio_close(&s->v);
  bg_pci_lock_release(s->lock_fd);
}

/* No resize_bar: the kernel resizes a BAR only with no driver bound, so it is done before binding vfio-pci. */
static const bg_pci_ops vfio_ops = {
  .cfg_read = cfg_read, .cfg_write = cfg_write, .bar_info = bar_info, .map_bar = map_bar, .unmap_bar = unmap_bar,
  .resize_bar = NULL, .reset = reset, .alloc_sysmem = alloc_sysmem, .free_sysmem = free_sysmem, .dma_map = dma_map,
  .dma_unmap = dma_unmap, .wait_irq = wait_irq, .check_alive = check_alive, .close = close_dev,
};

static int open_steps(bg_pci_dev *d, unsigned flags) {
  vfio_pdev *s = V(d);
  char drv[64];
  int r = bg_pci_lock_acquire(s->bdf, &s->lock_fd);
  if (r == 0) r = bg_vfio_available();
  if (r == 0) r = bg_sysfs_driver(s->bdf, drv, sizeof(drv));
  if (r < 0) return r;
  if (drv[0] && strcmp(drv, "vfio-pci") != 0) {
    if (!(flags & BG_PCI_UNBIND_DRIVER))
      return bg_error(BG_EBUSY, "%s is bound to kernel driver %s: unbind it first (hcq_smi unbind %s) or open with "
                      "BG_PCI_UNBIND_DRIVER", s->bdf, drv, s->bdf);
    if ((r = bg_pci_unbind(s->bdf, s->unbound, sizeof(s->unbound))) < 0) return r;
  }
  if ((flags & BG_PCI_REMOVE_SIBLINGS) && (r = bg_pci_remove_siblings(s->bdf)) < 0) return r;
  if ((r = bg_vfio_bind(s->bdf)) < 0 || (r = bg_vfio_open(s->bdf, &s->v)) < 0) return r;
  uint32_t id;
  if ((r = cfg_read(d, BG_PCI_VENDOR_ID, 4, &id)) < 0) return r;
  if (id == 0xffffffffu)
    return bg_error(BG_ENODEV, "device %s does not answer: its configuration space reads 0xffffffff (removed, "
                    "powered off, or in D3cold)", s->bdf);
  return enable_decoding(d);
}

int bg_pci_open_vfio(const char *bdf, unsigned flags, bg_pci_dev **out) {
  *out = NULL;
  bg_pci_dev *d = bg_pci_dev_new(&vfio_ops, bdf, sizeof(vfio_pdev));
  if (!d) return -BG_ENOMEM;
  vfio_pdev *s = V(d);
  snprintf(s->bdf, sizeof(s->bdf), "%s", bdf);
  s->lock_fd = -1;
  s->v = (bg_vfio){.container = -1, .group = -1, .device = -1, .irq_fd = -1, .group_id = -1};
  s->hooks = bg_pci_hooks_current(&s->hctx);
  int r = open_steps(d, flags);
  if (r < 0) {
    if (s->unbound[0]) {
      char msg[1024];
      snprintf(msg, sizeof(msg), "%s", bg_last_error());
      bg_error(-r, "%s (kernel driver %s stays unbound: hcq_smi bind %s %s rebinds it)", msg, s->unbound, bdf,
               s->unbound);
    }
    bg_pci_close(d);
    return r;
  }
  BG_LOG(1, "%s: opened through VFIO (%s group %d, %s)", bdf, s->v.noiommu ? "no-IOMMU" : "type1 IOMMU",
         s->v.group_id, s->v.intx ? "INTx" : "MSI");
  *out = d;
  return 0;
}
