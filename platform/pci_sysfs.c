/* platform/pci_sysfs.c: bg_pci_dev over Linux sysfs (tinygrad tinygrad/runtime/support/system.py PCIDevice,
 * System.alloc_sysmem). Every access is a file under bg_pci_sysfs_root(): config, resource, resourceN[_wc],
 * resourceN_resize, reset, enable. A function bound to vfio-pci (or opened with BG_PCI_VFIO) goes to the VFIO backend
 * instead (platform/pci_vfio.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "platform/pci.h"
#include "platform/pci_admin.h"
#include "platform/pci_attr.h"
#include "platform/pci_hook.h"
#include "platform/pci_lock.h"
#include "platform/pci_regs.h"
#include "platform/pci_resource.h"
#include "platform/pci_vfio.h"

typedef struct sysfs_map {
  bg_mmio m;
  int bar;
  bool hooked;  /* view from the emulated device's hooks, not an mmap */
} sysfs_map;

typedef struct sysfs_dev {
  char bdf[16];
  int lock_fd, cfg_fd;
  char unbound[64];           /* kernel driver this open unbound, "" if none */
  const bg_pci_hooks *hooks;  /* emulated device under a fake root, else NULL */
  void *hctx;
  sysfs_map *maps;
  size_t nmaps, capmaps;
} sysfs_dev;

static sysfs_dev *S(bg_pci_dev *d) { return bg_pci_priv(d); }

static void rel_of(const sysfs_dev *s, const char *attr, char *rel, size_t n) {
  snprintf(rel, n, "bus/pci/devices/%s/%s", s->bdf, attr);
}

/* A failed access to a device whose directory is gone: say it vanished. */
static int vanished_or(const sysfs_dev *s, int r) {
  char rel[BG_SYSFS_REL_MAX];
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s", s->bdf);
  if (bg_sysfs_exists(rel)) return r;
  char path[512];
  bg_sysfs_path(path, sizeof(path), rel);
  return bg_error(BG_ENODEV, "device %s vanished: %s is gone (hot-unplugged, removed, or fell off the bus)", s->bdf,
                  path);
}

/* ---------------- configuration space ---------------- */

static int cfg_read(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t *v) {
  sysfs_dev *s = S(d);
  uint32_t x = 0;
  ssize_t n = pread(s->cfg_fd, &x, size, off);
  if (n == (ssize_t)size) {
    *v = x;
    return 0;
  }
  if (n < 0) return vanished_or(s, bg_error(BG_ENODEV, "device %s vanished: config read at 0x%x: %s", s->bdf, off,
                                            strerror(errno)));
  /* Without privilege the kernel returns only the first 64 bytes of config space. */
  return bg_error(off >= 64 && geteuid() != 0 ? BG_EPERM : BG_EIO,
                  "%s: config read of %u bytes at 0x%x returned %zd bytes%s", s->bdf, size, off, n,
                  off >= 64 && geteuid() != 0 ? ": reading past 64 bytes needs root" : "");
}

static int cfg_write(bg_pci_dev *d, uint32_t off, unsigned size, uint32_t v) {
  sysfs_dev *s = S(d);
  char rel[BG_SYSFS_REL_MAX];
  rel_of(s, "config", rel, sizeof(rel));
  int r = bg_sysfs_pwrite(s->cfg_fd, rel, off, &v, size);
  return r < 0 ? vanished_or(s, r) : 0;
}

/* Memory decoding lets the CPU reach the BARs; bus mastering lets the device DMA. */
static int enable_decoding(bg_pci_dev *d) {
  uint32_t cmd, want;
  int r = cfg_read(d, BG_PCI_COMMAND, 2, &cmd);
  if (r < 0) return r;
  want = cmd | BG_PCI_COMMAND_MEMORY | BG_PCI_COMMAND_MASTER;
  if (want == cmd) return 0;
  if ((r = cfg_write(d, BG_PCI_COMMAND, 2, want)) < 0 || (r = cfg_read(d, BG_PCI_COMMAND, 2, &cmd)) < 0) return r;
  if ((cmd & want) != want)
    return bg_error(BG_EIO, "%s: command register reads 0x%04x after enabling memory space and bus mastering "
                    "(wrote 0x%04x)", S(d)->bdf, cmd, want);
  return 0;
}

/* ---------------- BARs ---------------- */

static int bar_info(bg_pci_dev *d, int bar, bg_pci_bar *out) {
  sysfs_dev *s = S(d);
  char rel[BG_SYSFS_REL_MAX], buf[2048];
  rel_of(s, "resource", rel, sizeof(rel));
  int r = bg_sysfs_read(rel, buf, sizeof(buf));
  if (r < 0) return vanished_or(s, r);
  if (!bg_pci_resource_bar(buf, bar, out))
    return bg_error(BG_EFORMAT, "%s: %s has no line \"0xSTART 0xEND 0xFLAGS\" for BAR%d", s->bdf, rel, bar);
  return 0;
}

static int add_map(sysfs_dev *s, const bg_mmio *m, int bar, bool hooked) {
  if (s->nmaps == s->capmaps) {
    size_t cap = s->capmaps ? s->capmaps * 2 : 8;
    sysfs_map *nm = realloc(s->maps, cap * sizeof(*nm));
    if (!nm) return bg_error(BG_ENOMEM, "%s: out of memory tracking BAR mappings", s->bdf);
    s->maps = nm;
    s->capmaps = cap;
  }
  s->maps[s->nmaps++] = (sysfs_map){*m, bar, hooked};
  return 0;
}

static void release_map(sysfs_dev *s, sysfs_map *mp) {
  if (mp->hooked) {
    if (s->hooks->bar_unmap) s->hooks->bar_unmap(s->hctx, &mp->m);
  } else {
    munmap((void *)mp->m.ptr, mp->m.size);
  }
}

static int map_bar(bg_pci_dev *d, int bar, uint64_t off, uint64_t size, unsigned flags, bg_mmio *out) {
  sysfs_dev *s = S(d);
  bg_pci_bar b;
  int r = bar_info(d, bar, &b);
  if (r < 0) return r;
  if (b.size == 0 || b.is_io)
    return bg_error(BG_EINVAL, "%s: BAR%d is %s", s->bdf, bar, b.is_io ? "an I/O BAR (not mappable)" : "not implemented");
  if (size == 0 && off < b.size) size = b.size - off;
  if (off % BG_SYSMEM_PAGE || size == 0 || off > b.size || size > b.size - off)
    return bg_error(BG_EINVAL, "%s: BAR%d window 0x%" PRIx64 "+0x%" PRIx64 " is not page-aligned inside its 0x%"
                    PRIx64 " bytes", s->bdf, bar, off, size, b.size);
  char attr[32], rel[BG_SYSFS_REL_MAX];
  snprintf(attr, sizeof(attr), "resource%d_wc", bar);
  rel_of(s, attr, rel, sizeof(rel));
  if (!(flags & BG_PCI_MAP_WC) || !bg_sysfs_exists(rel)) {
    snprintf(attr, sizeof(attr), "resource%d", bar);
    rel_of(s, attr, rel, sizeof(rel));
  }
  int fd;
  if ((r = bg_sysfs_open(rel, O_RDWR | O_SYNC, &fd)) < 0) return vanished_or(s, r);
  bool hooked = false;
  if (s->hooks && s->hooks->bar_map) {
    int h = s->hooks->bar_map(s->hctx, s->bdf, bar, off, size, out);
    if (h < 0) r = bg_sysfs_fail(-h, "emulated device refused to map", rel);
    hooked = h == 0;
  }
  if (r == 0 && !hooked) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
    if (p == MAP_FAILED) {
      r = bg_sysfs_fail(errno, "cannot mmap", rel);
    } else {
      /* Children of a fork must not inherit device mappings. */
      madvise(p, size, MADV_DONTFORK);
      *out = (bg_mmio){p, size, NULL, NULL};
    }
  }
  close(fd);
  if (r == 0 && (r = add_map(s, out, bar, hooked)) < 0) {
    sysfs_map tmp = {*out, bar, hooked};
    release_map(s, &tmp);
  }
  if (r < 0) memset(out, 0, sizeof(*out));
  return r;
}

static void unmap_bar(bg_pci_dev *d, bg_mmio *m) {
  sysfs_dev *s = S(d);
  for (size_t i = 0; i < s->nmaps; i++) {
    sysfs_map *mp = &s->maps[i];
    if (mp->m.ptr == m->ptr && mp->m.ctx == m->ctx && mp->m.ops == m->ops) {
      release_map(s, mp);
      s->maps[i] = s->maps[--s->nmaps];
      return;
    }
  }
  BG_LOG(1, "%s: unmap of a BAR view that is not mapped (ignored)", s->bdf);
}

/* Resizable BAR: resourceN_resize holds a hex mask of supported sizes (bit n = 2^n MiB);
 * writing n asks the kernel to resize, which it refuses while a driver is bound or when the
 * bridge window above the device is too small. */
static int resize_bar(bg_pci_dev *d, int bar, uint64_t *size) {
  sysfs_dev *s = S(d);
  char attr[32], rel[BG_SYSFS_REL_MAX], buf[64];
  bg_pci_bar b;
  int r = bar_info(d, bar, &b);
  if (r < 0) return r;
  *size = b.size;
  snprintf(attr, sizeof(attr), "resource%d_resize", bar);
  rel_of(s, attr, rel, sizeof(rel));
  if (!bg_sysfs_exists(rel))
    return bg_error(BG_ENOTSUP, "%s: BAR%d is not resizable (no %s: no Resizable BAR capability, or a kernel older "
                    "than 6.1)", s->bdf, bar, rel);
  if ((r = bg_sysfs_read(rel, buf, sizeof(buf))) < 0) return vanished_or(s, r);
  char *end;
  unsigned long long mask = strtoull(buf, &end, 16);
  if (end == buf || *end || mask == 0)
    return bg_error(BG_EFORMAT, "%s: %s reads '%s', not a mask of sizes", s->bdf, rel, buf);
  int n = 63 - __builtin_clzll(mask);
  if (n > 43) return bg_error(BG_EFORMAT, "%s: %s offers 2^%d MiB, beyond any BAR", s->bdf, rel, n);
  uint64_t want = (1ull << 20) << n;
  if (b.size >= want) return 0;
  for (size_t i = 0; i < s->nmaps; i++)
    if (s->maps[i].bar == bar)
      return bg_error(BG_EBUSY, "%s: BAR%d is mapped: unmap it before resizing", s->bdf, bar);
  snprintf(buf, sizeof(buf), "%d", n);
  r = bg_sysfs_write(rel, buf);
  if (r < 0)
    return bg_error_context(r == -BG_EPERM || r == -BG_EBUSY ? r : -BG_EIO,
                            "%s: BAR%d: resize from %" PRIu64 " MiB to %" PRIu64 " MiB refused (a bound driver, or "
                            "Resizable BAR / Above 4G Decoding off in the firmware setup, or a bridge window too "
                            "small): ", s->bdf, bar, b.size >> 20, want >> 20);
  if ((r = bar_info(d, bar, &b)) < 0) return r;
  *size = b.size;
  if (b.size != want)
    return bg_error(BG_EIO, "%s: BAR%d: resize to %" PRIu64 " MiB refused: still %" PRIu64 " MiB after writing %s to "
                    "%s", s->bdf, bar, want >> 20, b.size >> 20, buf, rel);
  BG_LOG(1, "%s: BAR%d resized to %" PRIu64 " MiB", s->bdf, bar, b.size >> 20);
  return 0;
}

/* ---------------- reset, liveness ---------------- */

static int reset(bg_pci_dev *d) {
  sysfs_dev *s = S(d);
  char rel[BG_SYSFS_REL_MAX];
  rel_of(s, "reset", rel, sizeof(rel));
  if (!bg_sysfs_exists(rel))
    return vanished_or(s, bg_error(BG_ENOTSUP, "%s: the kernel knows no reset method for this device (no %s)",
                                   s->bdf, rel));
  int r = bg_sysfs_write(rel, "1");
  if (r < 0) return vanished_or(s, bg_error_context(r, "%s: reset: ", s->bdf));
  /* The kernel restores config space after a function reset; check it did. */
  return enable_decoding(d);
}

static int check_alive(bg_pci_dev *d) {
  sysfs_dev *s = S(d);
  int r = vanished_or(s, 0);
  uint32_t v;
  if (r == 0) r = cfg_read(d, BG_PCI_VENDOR_ID, 2, &v);
  if (r == 0 && v == 0xffff)
    r = bg_error(BG_ENODEV, "device %s vanished: its configuration space reads 0xffff", s->bdf);
  return r;
}

/* ---------------- DMA memory ---------------- */

static int translate(sysfs_dev *s, void *va, size_t npages, unsigned flags, uint64_t *bus) {
  if (s->hooks && s->hooks->dma_map) {
    int r = s->hooks->dma_map(s->hctx, s->bdf, va, npages, flags, bus);
    return r < 0 ? bg_error(bg_sysfs_errcode(-r), "emulated device: DMA translation of %p failed: %s", va,
                            strerror(-r)) : 0;
  }
  return bg_sysmem_translate(va, npages, bus);
}

static void untranslate(sysfs_dev *s, void *va, size_t npages) {
  if (s->hooks && s->hooks->dma_unmap) s->hooks->dma_unmap(s->hctx, s->bdf, va, npages);
}

static int alloc_sysmem(bg_pci_dev *d, uint64_t size, unsigned flags, void *fixed_va, bg_sysmem *out) {
  sysfs_dev *s = S(d);
  if (!(s->hooks && s->hooks->dma_map)) return bg_sysmem_alloc(size, flags, fixed_va, out);
  int r = bg_sysmem_map(size, flags, fixed_va, out);
  if (r < 0) return r;
  /* Tell the model what the pages really are: HUGE only when 2 MiB pages were obtained. */
  unsigned got = (flags & ~(unsigned)BG_SYSMEM_HUGE) | (out->huge ? BG_SYSMEM_HUGE : 0);
  if ((r = translate(s, out->map_base, out->npages, got, out->bus)) < 0) {
    bg_sysmem_free(out);
    return r;
  }
  if ((r = bg_sysmem_check_layout(out, got)) < 0) {
    untranslate(s, out->map_base, out->npages);
    bg_sysmem_free(out);
  }
  return r;
}

static void free_sysmem(bg_pci_dev *d, bg_sysmem *m) {
  untranslate(S(d), m->map_base, m->npages);
  bg_sysmem_free(m);
}

static int dma_map(bg_pci_dev *d, void *va, uint64_t size, uint64_t *bus) {
  int r = bg_sysmem_lock(va, size);
  if (r == 0 && (r = translate(S(d), va, size / BG_SYSMEM_PAGE, 0, bus)) < 0) munlock(va, size);
  return r;
}

static void dma_unmap(bg_pci_dev *d, void *va, uint64_t size) {
  untranslate(S(d), va, size / BG_SYSMEM_PAGE);
  munlock(va, size);
}

/* ---------------- open, close ---------------- */

static void close_dev(bg_pci_dev *d) {
  sysfs_dev *s = S(d);
  if (s->nmaps) BG_LOG(1, "%s: closing with %zu BAR views still mapped: unmapping them", s->bdf, s->nmaps);
  for (size_t i = 0; i < s->nmaps; i++) release_map(s, &s->maps[i]);
  free(s->maps);
  if (s->cfg_fd >= 0) close(s->cfg_fd);
  bg_pci_lock_release(s->lock_fd);
}

static const bg_pci_ops sysfs_ops = {
  .cfg_read = cfg_read, .cfg_write = cfg_write, .bar_info = bar_info, .map_bar = map_bar, .unmap_bar = unmap_bar,
  .resize_bar = resize_bar, .reset = reset, .alloc_sysmem = alloc_sysmem, .free_sysmem = free_sysmem,
  .dma_map = dma_map, .dma_unmap = dma_unmap, .wait_irq = NULL, .check_alive = check_alive, .close = close_dev,
};


/* A bound kernel driver goes only when the caller asked (it may be driving a display). */
static int take_from_driver(sysfs_dev *s, unsigned flags) {
  char drv[64];
  int r = bg_sysfs_driver(s->bdf, drv, sizeof(drv));
  if (r < 0 || !drv[0]) return r;
  if (!(flags & BG_PCI_UNBIND_DRIVER))
    return bg_error(BG_EBUSY, "%s is bound to kernel driver %s: unbind it first (hcq_smi unbind %s) or open with "
                    "BG_PCI_UNBIND_DRIVER", s->bdf, drv, s->bdf);
  return bg_pci_unbind(s->bdf, s->unbound, sizeof(s->unbound));
}

static int open_steps(bg_pci_dev *d, unsigned flags) {
  sysfs_dev *s = S(d);
  char rel[BG_SYSFS_REL_MAX];
  int r = bg_pci_lock_acquire(s->bdf, &s->lock_fd);
  if (r < 0) return r;
  /* Privilege probe before anything changes: writing enable needs root. */
  int fd;
  rel_of(s, "enable", rel, sizeof(rel));
  if ((r = bg_sysfs_open(rel, O_RDWR, &fd)) < 0) return vanished_or(s, r);
  close(fd);
  if ((r = take_from_driver(s, flags)) < 0) return r;
  if ((flags & BG_PCI_REMOVE_SIBLINGS) && (r = bg_pci_remove_siblings(s->bdf)) < 0) return r;
  if ((r = bg_sysfs_write(rel, "1")) < 0) return vanished_or(s, r);
  rel_of(s, "config", rel, sizeof(rel));
  if ((r = bg_sysfs_open(rel, O_RDWR | O_SYNC, &s->cfg_fd)) < 0) return vanished_or(s, r);
  uint32_t id;
  if ((r = cfg_read(d, BG_PCI_VENDOR_ID, 4, &id)) < 0) return r;
  if (id == 0xffffffffu)
    return bg_error(BG_ENODEV, "device %s does not answer: its configuration space reads 0xffffffff (removed, "
                    "powered off, or in D3cold)", s->bdf);
  return enable_decoding(d);
}

int bg_pci_open_sysfs(const char *bdf, unsigned flags, bg_pci_dev **out) {
  *out = NULL;
  if (!bdf || !bg_pci_bdf_valid(bdf))
    return bg_error(BG_EINVAL, "bad PCI address '%s': expected DDDD:BB:DD.F", bdf ? bdf : "(null)");
  char rel[BG_SYSFS_REL_MAX];
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s", bdf);
  if (!bg_sysfs_exists(rel)) {
    char path[512];
    bg_sysfs_path(path, sizeof(path), rel);
    return bg_error(BG_ENODEV, "no PCI device %s (%s does not exist)", bdf, path);
  }
  /* VFIO when asked, or when vfio-pci holds the function (unless the caller asked to take it from its driver). */
  char drv[64];
  int r = bg_sysfs_driver(bdf, drv, sizeof(drv));
  if (r < 0) return r;
  if ((flags & BG_PCI_VFIO) || (strcmp(drv, "vfio-pci") == 0 && !(flags & BG_PCI_UNBIND_DRIVER)))
    return bg_pci_open_vfio(bdf, flags, out);
  bg_pci_dev *d = bg_pci_dev_new(&sysfs_ops, bdf, sizeof(sysfs_dev));
  if (!d) return -BG_ENOMEM;
  sysfs_dev *s = S(d);
  snprintf(s->bdf, sizeof(s->bdf), "%s", bdf);
  s->lock_fd = s->cfg_fd = -1;
  s->hooks = bg_pci_hooks_current(&s->hctx);
  r = open_steps(d, flags);
  if (r < 0) {
    /* Say what the failed open left changed. */
    if (s->unbound[0]) {
      char msg[1024];
      snprintf(msg, sizeof(msg), "%s", bg_last_error());
      bg_error(-r, "%s (kernel driver %s stays unbound: hcq_smi bind %s %s rebinds it)", msg, s->unbound, bdf,
               s->unbound);
    }
    bg_pci_close(d);
    return r;
  }
  BG_LOG(1, "%s: opened through %s", bdf, bg_pci_sysfs_root());
  *out = d;
  return 0;
}
