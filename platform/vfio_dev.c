/* platform/vfio_dev.c: what a VFIO device fd offers (platform/vfio.h): its info and regions, config space through
 * the config region, BARs mmapped at their region offsets, reset, and interrupts into an eventfd. */
#include <errno.h>
#include <inttypes.h>
#include <linux/vfio.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "platform/sysmem.h"
#include "platform/vfio.h"

static int vioctl(bg_vfio *v, int fd, unsigned long req, void *arg) {
  return v->sys->ioctl(v->sys_ctx, fd, req, (unsigned long)arg);
}

int bg_vfio_dev_open_regions(bg_vfio *v, const char *bdf) {
  struct vfio_device_info info = {.argsz = sizeof(info)};
  int r = vioctl(v, v->device, VFIO_DEVICE_GET_INFO, &info);
  if (r < 0) return bg_error(BG_EIO, "VFIO: %s: VFIO_DEVICE_GET_INFO: %s", bdf, strerror(-r));
  if (!(info.flags & VFIO_DEVICE_FLAGS_PCI) || info.num_regions < BG_VFIO_NREGIONS)
    return bg_error(BG_ENOTSUP, "VFIO: %s: not a vfio-pci device (flags 0x%x, %u regions; expected "
                    "VFIO_DEVICE_FLAGS_PCI and at least %d regions)", bdf, info.flags, info.num_regions,
                    BG_VFIO_NREGIONS);
  v->can_reset = info.flags & VFIO_DEVICE_FLAGS_RESET;
  for (unsigned i = 0; i < BG_VFIO_NREGIONS; i++) {
    struct vfio_region_info ri = {.argsz = sizeof(ri), .index = i};
    if ((r = vioctl(v, v->device, VFIO_DEVICE_GET_REGION_INFO, &ri)) < 0)
      return bg_error(BG_EIO, "VFIO: %s: region %u info: %s", bdf, i, strerror(-r));
    v->regions[i] = (bg_vfio_region){ri.offset, ri.size, ri.flags};
  }
  const bg_vfio_region *cfg = &v->regions[VFIO_PCI_CONFIG_REGION_INDEX];
  if (cfg->size < 256 || !(cfg->flags & VFIO_REGION_INFO_FLAG_READ))
    return bg_error(BG_EIO, "VFIO: %s: config region of %" PRIu64 " bytes (flags 0x%x): expected a readable region of "
                    "at least 256 bytes", bdf, cfg->size, cfg->flags);
  return 0;
}

int bg_vfio_cfg_read(bg_vfio *v, const char *bdf, uint32_t off, unsigned size, uint32_t *val) {
  const bg_vfio_region *cfg = &v->regions[VFIO_PCI_CONFIG_REGION_INDEX];
  uint32_t x = 0;
  if (off + size > cfg->size) {
    /* Conventional config space (256 bytes) reads past its end as all ones, as a root complex answers. */
    *val = size == 4 ? 0xffffffffu : (1u << (8 * size)) - 1;
    return 0;
  }
  ssize_t n = v->sys->pread(v->sys_ctx, v->device, &x, size, cfg->offset + off);
  if (n != (ssize_t)size)
    return bg_error(BG_ENODEV, "%s: VFIO config read of %u bytes at 0x%x: %s", bdf, size, off,
                    n < 0 ? strerror((int)-n) : "short read");
  *val = x;
  return 0;
}

int bg_vfio_cfg_write(bg_vfio *v, const char *bdf, uint32_t off, unsigned size, uint32_t val) {
  const bg_vfio_region *cfg = &v->regions[VFIO_PCI_CONFIG_REGION_INDEX];
  if (off + size > cfg->size)
    return bg_error(BG_EINVAL, "%s: VFIO config write at 0x%x: the config region has 0x%" PRIx64 " bytes", bdf, off,
                    cfg->size);
  ssize_t n = v->sys->pwrite(v->sys_ctx, v->device, &val, size, cfg->offset + off);
  if (n != (ssize_t)size)
    return bg_error(BG_EIO, "%s: VFIO config write of %u bytes at 0x%x: %s", bdf, size, off,
                    n < 0 ? strerror((int)-n) : "short write");
  return 0;
}

int bg_vfio_map_bar(bg_vfio *v, const char *bdf, int bar, uint64_t off, uint64_t size, bg_mmio *out) {
  const bg_vfio_region *rg = &v->regions[bar];
  if (!(rg->flags & VFIO_REGION_INFO_FLAG_MMAP))
    return bg_error(BG_EINVAL, "%s: BAR%d cannot be mmapped through VFIO (region flags 0x%x, %" PRIu64 " bytes)", bdf,
                    bar, rg->flags, rg->size);
  if (off % BG_SYSMEM_PAGE || size == 0 || off > rg->size || size > rg->size - off)
    return bg_error(BG_EINVAL, "%s: BAR%d window 0x%" PRIx64 "+0x%" PRIx64 " is not page-aligned inside its 0x%" PRIx64
                    " bytes", bdf, bar, off, size, rg->size);
  int r = v->sys->mmap(v->sys_ctx, v->device, rg->offset + off, size, out);
  if (r < 0) return bg_error(BG_EIO, "%s: mmap of BAR%d through the VFIO device fd: %s", bdf, bar, strerror(-r));
  return 0;
}

void bg_vfio_unmap_bar(bg_vfio *v, bg_mmio *m) { v->sys->munmap(v->sys_ctx, m); }

int bg_vfio_reset(bg_vfio *v, const char *bdf) {
  if (!v->can_reset)
    return bg_error(BG_ENOTSUP, "%s: VFIO offers no reset for this device (no VFIO_DEVICE_FLAGS_RESET: no FLR, PM or "
                    "bus reset method)", bdf);
  int r = v->sys->ioctl(v->sys_ctx, v->device, VFIO_DEVICE_RESET, 0);
  return r < 0 ? bg_error(BG_EIO, "%s: VFIO_DEVICE_RESET: %s", bdf, strerror(-r)) : 0;
}

/* One VFIO_DEVICE_SET_IRQS of count 1 at start 0; the eventfd follows the header (flexible array data[]). */
static int set_irq(bg_vfio *v, unsigned index, unsigned flags, int fd) {
  _Alignas(struct vfio_irq_set) uint8_t buf[sizeof(struct vfio_irq_set) + sizeof(int32_t)];
  struct vfio_irq_set *set = (struct vfio_irq_set *)buf;
  memset(buf, 0, sizeof(buf));
  bool with_fd = (flags & VFIO_IRQ_SET_DATA_TYPE_MASK) == VFIO_IRQ_SET_DATA_EVENTFD;
  set->argsz = (uint32_t)(with_fd ? sizeof(buf) : sizeof(*set));
  set->flags = flags;
  set->index = index;
  set->count = 1;
  if (with_fd) memcpy(buf + sizeof(*set), &fd, sizeof(int32_t));
  return vioctl(v, v->device, VFIO_DEVICE_SET_IRQS, set);
}

/* MSI when the device has it (VFIO_DEVICE_GET_IRQ_INFO count > 0), else INTx. */
int bg_vfio_irq_enable(bg_vfio *v, const char *bdf) {
  struct vfio_irq_info info = {.argsz = sizeof(info), .index = VFIO_PCI_MSI_IRQ_INDEX};
  unsigned index = VFIO_PCI_MSI_IRQ_INDEX;
  if (vioctl(v, v->device, VFIO_DEVICE_GET_IRQ_INFO, &info) < 0 || info.count == 0) {
    info = (struct vfio_irq_info){.argsz = sizeof(info), .index = VFIO_PCI_INTX_IRQ_INDEX};
    int r = vioctl(v, v->device, VFIO_DEVICE_GET_IRQ_INFO, &info);
    if (r < 0 || info.count == 0)
      return bg_error(BG_ENOTSUP, "%s: VFIO: the device has neither MSI nor INTx (%s)", bdf,
                      r < 0 ? strerror(-r) : "no interrupt pin");
    index = VFIO_PCI_INTX_IRQ_INDEX;
    v->intx = true;
  }
  if (!(info.flags & VFIO_IRQ_INFO_EVENTFD))
    return bg_error(BG_ENOTSUP, "%s: VFIO: %s cannot signal an eventfd (irq info flags 0x%x)", bdf,
                    v->intx ? "INTx" : "MSI", info.flags);
  v->irq_fd = eventfd(0, EFD_CLOEXEC);
  if (v->irq_fd < 0) return bg_error(BG_EIO, "%s: eventfd: %s", bdf, strerror(errno));
  int e = set_irq(v, index, VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER, v->irq_fd);
  if (e < 0)
    return bg_error(BG_EIO, "%s: VFIO: routing %s into an eventfd failed: %s", bdf, v->intx ? "INTx" : "MSI",
                    strerror(-e));
  return 0;
}

int bg_vfio_wait_irq(bg_vfio *v, const char *bdf, int timeout_ms) {
  struct pollfd p = {v->irq_fd, POLLIN, 0};
  int n;
  while ((n = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {}
  if (n < 0) return bg_error(BG_EIO, "%s: poll on the interrupt eventfd: %s", bdf, strerror(errno));
  if (n == 0) return bg_error(BG_ETIMEDOUT, "%s: no interrupt within %d ms", bdf, timeout_ms);
  uint64_t cnt;
  if (read(v->irq_fd, &cnt, sizeof(cnt)) != sizeof(cnt))
    return bg_error(BG_EIO, "%s: reading the interrupt eventfd: %s", bdf, strerror(errno));
  /* INTx stays masked after it fires (VFIO_IRQ_INFO_AUTOMASKED) until it is unmasked. */
  if (v->intx) {
    int e = set_irq(v, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_UNMASK, -1);
    if (e < 0) return bg_error(BG_EIO, "%s: VFIO: INTx unmask: %s", bdf, strerror(-e));
  }
  return 0;
}
