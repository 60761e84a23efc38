/* platform/vfio.c: VFIO container, no-IOMMU group, device fd and interrupt eventfd (platform/vfio.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/vfio.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "util/fd_io.h"
#include "platform/pci_attr.h"
#include "platform/pci_scan.h"
#include "platform/vfio.h"

#define NOIOMMU_HINT "echo 1 > /sys/module/vfio/parameters/enable_unsafe_noiommu_mode"

const char *bg_vfio_dev_root(void) {
  const char *r = getenv("BG_DEV_ROOT");
  return r && *r ? r : "/dev";
}

int bg_vfio_available(void) {
  if (bg_sysfs_exists("module/vfio")) return 0;
  return bg_error(BG_ENOTSUP, "VFIO is not available: %s/module/vfio is missing (load it: modprobe vfio-pci "
                  "disable_idle_d3=1; then %s)", bg_pci_sysfs_root(), NOIOMMU_HINT);
}

int bg_vfio_bind(const char *bdf) {
  char rel[BG_SYSFS_REL_MAX], drv[64];
  int r = bg_sysfs_driver(bdf, drv, sizeof(drv));
  if (r < 0 || strcmp(drv, "vfio-pci") == 0) return r;
  if (drv[0]) return bg_error(BG_EBUSY, "%s: bound to %s: unbind it before binding vfio-pci", bdf, drv);
  if (!bg_sysfs_exists("bus/pci/drivers/vfio-pci"))
    return bg_error(BG_ENOTSUP, "%s: the vfio-pci driver is not loaded (modprobe vfio-pci disable_idle_d3=1)", bdf);
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver_override", bdf);
  if ((r = bg_sysfs_write(rel, "vfio-pci")) < 0) return r;
  if ((r = bg_sysfs_write("bus/pci/drivers_probe", bdf)) < 0) return r;
  if ((r = bg_sysfs_driver(bdf, drv, sizeof(drv))) < 0) return r;
  if (strcmp(drv, "vfio-pci") != 0)
    return bg_error(BG_EIO, "%s: probing with driver_override=vfio-pci left it bound to '%s'", bdf, drv);
  return 0;
}

static int group_of(const char *bdf, int *id) {
  char rel[BG_SYSFS_REL_MAX], path[PATH_MAX], target[PATH_MAX];
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s/iommu_group", bdf);
  bg_sysfs_path(path, sizeof(path), rel);
  ssize_t n = readlink(path, target, sizeof(target) - 1);
  if (n < 0)
    return bg_error(BG_ENOTSUP, "%s: no IOMMU group (%s: %s): enable VFIO's no-IOMMU mode (%s) and bind vfio-pci "
                    "again", bdf, path, strerror(errno), NOIOMMU_HINT);
  target[n] = '\0';
  const char *base = strrchr(target, '/');
  *id = atoi(base ? base + 1 : target);
  return 0;
}

static int open_dev(const char *name, int *fd) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/vfio/%s", bg_vfio_dev_root(), name);
  /* Character devices (the emulated tree uses regular files); a FIFO or directory is refused without blocking. */
  if (bg_open_file(path, O_RDWR, BG_FT_CHR | BG_FT_REG, fd) == 0) return 0;
  int e = errno;
  if (e == 0) return bg_error_context(-BG_ENOTSUP, "VFIO: ");
  return bg_error(e == EACCES || e == EPERM ? BG_EPERM : e == EBUSY ? BG_EBUSY : BG_ENOTSUP,
                  "VFIO: cannot open %s: %s%s", path, strerror(e),
                  e == EACCES || e == EPERM ? ": run as root" : e == EBUSY ? ": another process holds the group" : "");
}

/* The container must speak this API and offer the no-IOMMU backend. */
static int check_container(bg_vfio *v) {
  int api = ioctl(v->container, VFIO_GET_API_VERSION);
  if (api != VFIO_API_VERSION)
    return bg_error(BG_ENOTSUP, "VFIO: %s/vfio/vfio is not a VFIO container (API version %d, errno: %s)",
                    bg_vfio_dev_root(), api, api < 0 ? strerror(errno) : "none");
  if (ioctl(v->container, VFIO_CHECK_EXTENSION, VFIO_NOIOMMU_IOMMU) != 1)
    return bg_error(BG_ENOTSUP, "VFIO: the no-IOMMU backend is off: %s", NOIOMMU_HINT);
  return 0;
}

static int open_group(const char *bdf, bg_vfio *v) {
  char name[32];
  snprintf(name, sizeof(name), "noiommu-%d", v->group_id);
  int r = open_dev(name, &v->group);
  if (r == -BG_ENOTSUP) {
    snprintf(name, sizeof(name), "%d", v->group_id);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/vfio/%s", bg_vfio_dev_root(), name);
    if (access(path, F_OK) == 0)
      return bg_error(BG_ENOTSUP, "%s: IOMMU group %d is translated by an IOMMU, and baregpu gives the device "
                      "physical addresses: boot with the IOMMU off or in no-IOMMU mode (%s)", bdf, v->group_id,
                      NOIOMMU_HINT);
  }
  if (r < 0) return r;
  struct vfio_group_status st = {.argsz = sizeof(st)};
  if (ioctl(v->group, VFIO_GROUP_GET_STATUS, &st) != 0)
    return bg_error(BG_EIO, "VFIO: group %d status: %s", v->group_id, strerror(errno));
  if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE))
    return bg_error(BG_EBUSY, "VFIO: group %d is not viable: every device in it must be bound to vfio-pci",
                    v->group_id);
  if (ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container) != 0)
    return bg_error(BG_EIO, "VFIO: group %d: set container: %s", v->group_id, strerror(errno));
  /* Valid once per container; a second device in the same container gets EBUSY, harmlessly. */
  if (ioctl(v->container, VFIO_SET_IOMMU, VFIO_NOIOMMU_IOMMU) != 0 && errno != EBUSY)
    return bg_error(BG_EIO, "VFIO: set no-IOMMU backend: %s", strerror(errno));
  v->device = ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, bdf);
  if (v->device < 0)
    return bg_error(BG_EIO, "VFIO: group %d has no device %s: %s", v->group_id, bdf, strerror(errno));
  return 0;
}

static int set_irq(bg_vfio *v, unsigned index, unsigned flags, int fd) {
  /* struct vfio_irq_set ends in a flexible array: the eventfd follows it. */
  _Alignas(struct vfio_irq_set) uint8_t buf[sizeof(struct vfio_irq_set) + sizeof(int32_t)];
  struct vfio_irq_set *set = (struct vfio_irq_set *)buf;
  memset(buf, 0, sizeof(buf));
  bool with_fd = (flags & VFIO_IRQ_SET_DATA_TYPE_MASK) == VFIO_IRQ_SET_DATA_EVENTFD;
  set->argsz = (uint32_t)(with_fd ? sizeof(buf) : sizeof(*set));
  set->flags = flags;
  set->index = index;
  set->count = 1;
  if (with_fd) memcpy(set->data, &fd, sizeof(int32_t));
  return ioctl(v->device, VFIO_DEVICE_SET_IRQS, set) == 0 ? 0 : -errno;
}

/* MSI when the device has it, else INTx. */
static int enable_irq(const char *bdf, bg_vfio *v) {
  v->irq_fd = eventfd(0, EFD_CLOEXEC);
  if (v->irq_fd < 0) return bg_error(BG_EIO, "%s: eventfd: %s", bdf, strerror(errno));
  struct vfio_irq_info info = {.argsz = sizeof(info), .index = VFIO_PCI_MSI_IRQ_INDEX};
  unsigned index = VFIO_PCI_MSI_IRQ_INDEX;
  if (ioctl(v->device, VFIO_DEVICE_GET_IRQ_INFO, &info) != 0 || info.count == 0) {
    index = VFIO_PCI_INTX_IRQ_INDEX;
    v->intx = true;
  }
  int e = set_irq(v, index, VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER, v->irq_fd);
  if (e < 0)
    return bg_error(BG_EIO, "%s: VFIO: routing %s into an eventfd failed: %s", bdf, v->intx ? "INTx" : "MSI",
                    strerror(-e));
  return 0;
}

int bg_vfio_open(const char *bdf, bg_vfio *v) {
  *v = (bg_vfio){-1, -1, -1, -1, -1, false};
  int r = bg_vfio_available();
  if (r == 0) r = group_of(bdf, &v->group_id);
  if (r == 0) r = open_dev("vfio", &v->container);
  if (r == 0) r = check_container(v);
  if (r == 0) r = open_group(bdf, v);
  if (r == 0) r = enable_irq(bdf, v);
  if (r < 0) bg_vfio_close(v);
  return r;
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
  /* INTx stays masked after it fires until we unmask it. */
  if (v->intx) {
    int e = set_irq(v, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_UNMASK, -1);
    if (e < 0) return bg_error(BG_EIO, "%s: VFIO: INTx unmask: %s", bdf, strerror(-e));
  }
  return 0;
}

void bg_vfio_close(bg_vfio *v) {
  int *open_fds[] = {&v->irq_fd, &v->device, &v->group, &v->container};
  for (size_t i = 0; i < sizeof(open_fds) / sizeof(open_fds[0]); i++) {
    int fd = *open_fds[i];
    if (fd >= 0) close(fd);
    *open_fds[i] = -1;
  }
}
