/* platform/vfio.c: VFIO container, group and device fd, with a message for each way a real system refuses
 * (platform/vfio.h). Regions, interrupts and reset: vfio_dev.c; DMA mappings: vfio_dma.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "platform/pci_attr.h"
#include "platform/pci_scan.h"
#include "platform/vfio.h"

#define NOIOMMU_PARAM "module/vfio/parameters/enable_unsafe_noiommu_mode"
#define NOIOMMU_HINT "echo 1 > /sys/" NOIOMMU_PARAM
#define IOMMU_HINT "boot with the IOMMU on (intel_iommu=on or amd_iommu=on, iommu=pt)"

const char *bg_vfio_dev_root(void) {
  const char *r = getenv("BG_DEV_ROOT");
  return r && *r ? r : "/dev";
}

int bg_vfio_available(void) {
  if (bg_sysfs_exists("module/vfio")) return 0;
  return bg_error(BG_ENOTSUP, "VFIO is not available: the vfio module is not loaded (%s/module/vfio is missing): load "
                  "it: modprobe vfio-pci disable_idle_d3=1", bg_pci_sysfs_root());
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

/* "Y"/"1": no-IOMMU mode on; "N"/"0": off; -1: the parameter is missing. */
static int noiommu_param(void) {
  char buf[16];
  if (!bg_sysfs_exists(NOIOMMU_PARAM) || bg_sysfs_read(NOIOMMU_PARAM, buf, sizeof(buf)) < 0) return -1;
  return buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1';
}

static int group_of(const char *bdf, int *id) {
  char rel[BG_SYSFS_REL_MAX], path[PATH_MAX], target[PATH_MAX];
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s/iommu_group", bdf);
  bg_sysfs_path(path, sizeof(path), rel);
  ssize_t n = readlink(path, target, sizeof(target) - 1);
  if (n < 0)
    return bg_error(BG_ENOTSUP, "%s: no IOMMU group (no %s: the IOMMU is off): %s, or use VFIO's no-IOMMU mode (%s; "
                    "then bind vfio-pci again, which creates a no-IOMMU group)", bdf, path, IOMMU_HINT, NOIOMMU_HINT);
  target[n] = '\0';
  const char *base = strrchr(target, '/');
  *id = atoi(base ? base + 1 : target);
  return 0;
}

static bool node_exists(const char *name) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/vfio/%s", bg_vfio_dev_root(), name);
  return access(path, F_OK) == 0;
}

bool bg_vfio_translated(const char *bdf, int *group) {
  char drv[64], rel[BG_SYSFS_REL_MAX], path[PATH_MAX], target[PATH_MAX];
  if (bg_sysfs_driver(bdf, drv, sizeof(drv)) < 0 || strcmp(drv, "vfio-pci") != 0) return false;
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s/iommu_group", bdf);
  bg_sysfs_path(path, sizeof(path), rel);
  ssize_t n = readlink(path, target, sizeof(target) - 1);
  if (n < 0) return false;
  target[n] = '\0';
  const char *base = strrchr(target, '/');
  *group = atoi(base ? base + 1 : target);
  char node[32];
  snprintf(node, sizeof(node), "%d", *group);
  return node_exists(node);
}

int bg_vfio_open_node(bg_vfio *v, const char *name, int *fd) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/vfio/%s", bg_vfio_dev_root(), name);
  int r = v->sys->open(v->sys_ctx, path, O_RDWR | O_CLOEXEC);
  if (r >= 0) {
    *fd = r;
    return 0;
  }
  if (r == -EMEDIUMTYPE) return bg_error_context(-BG_ENOTSUP, "VFIO: ");
  int e = -r;
  return bg_error(e == EACCES || e == EPERM ? BG_EPERM : e == EBUSY ? BG_EBUSY : BG_ENOTSUP,
                  "VFIO: cannot open %s: %s%s", path, strerror(e),
                  e == EACCES || e == EPERM ? ": run as root"
                  : e == ENOENT && strcmp(name, "vfio") == 0 ? ": the vfio module is not loaded (modprobe vfio-pci)"
                                                             : "");
}


/* A new container must speak this API and offer the backend the group needs. */
static int container_check(bg_vfio *v, const char *bdf) {
  int api = v->sys->ioctl(v->sys_ctx, v->container, VFIO_GET_API_VERSION, 0);
  if (api != VFIO_API_VERSION)
    return bg_error(BG_ENOTSUP, "VFIO: %s/vfio/vfio speaks the wrong API version (%d%s%s, expected %d): not a VFIO "
                    "container of this kernel interface", bg_vfio_dev_root(), api, api < 0 ? ": " : "",
                    api < 0 ? strerror(-api) : "", VFIO_API_VERSION);
  if (v->noiommu && v->sys->ioctl(v->sys_ctx, v->container, VFIO_CHECK_EXTENSION, VFIO_NOIOMMU_IOMMU) != 1)
    return bg_error(BG_ENOTSUP, "VFIO: %s: no-IOMMU mode is disabled: the container offers no no-IOMMU backend (%s)",
                    bdf, NOIOMMU_HINT);
  if (!v->noiommu && v->sys->ioctl(v->sys_ctx, v->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) != 1)
    return bg_error(BG_ENOTSUP, "VFIO: %s: the container offers no type1v2 IOMMU backend for group %d (modprobe "
                    "vfio_iommu_type1)", bdf, v->group_id);
  return 0;
}

/* The group's node decides the backend: /dev/vfio/<N> is translated (type1v2), noiommu-<N> is not. */
static int pick_backend(bg_vfio *v, const char *bdf, char *node, size_t n) {
  if (!node_exists("vfio")) { /* no container node: say so (the module, or BG_DEV_ROOT) before the group's */
    int fd, r = bg_vfio_open_node(v, "vfio", &fd);
    if (r < 0) return r;
    v->sys->close(v->sys_ctx, fd);
  }
  snprintf(node, n, "%d", v->group_id);
  if (node_exists(node)) return 0;
  snprintf(node, n, "noiommu-%d", v->group_id);
  v->noiommu = true;
  if (node_exists(node)) return 0;
  if (noiommu_param() == 0)
    return bg_error(BG_ENOTSUP, "VFIO: %s: no-IOMMU mode is disabled (%s/%s reads 0) and group %d has no node %s/vfio/"
                    "%d: %s, then bind vfio-pci again; or %s", bdf, bg_pci_sysfs_root(), NOIOMMU_PARAM, v->group_id,
                    bg_vfio_dev_root(), v->group_id, NOIOMMU_HINT, IOMMU_HINT);
  return bg_error(BG_ENOTSUP, "VFIO: %s: group %d has no node (%s/vfio/%d or noiommu-%d): is the function bound to "
                  "vfio-pci?", bdf, v->group_id, bg_vfio_dev_root(), v->group_id, v->group_id);
}

/* Who makes the group not viable: its devices bound to a driver that owns DMA (not vfio-pci, not pcieport). */
static void blockers(int group_id, char *out, size_t n) {
  char rel[BG_SYSFS_REL_MAX], path[PATH_MAX], drv[64];
  snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/devices", group_id);
  bg_sysfs_path(path, sizeof(path), rel);
  size_t len = 0;
  out[0] = '\0';
  DIR *dir = opendir(path);
  if (!dir) return;
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    if (!bg_pci_bdf_valid(e->d_name) || bg_sysfs_driver(e->d_name, drv, sizeof(drv)) < 0 || !drv[0] ||
        strcmp(drv, "vfio-pci") == 0 || strcmp(drv, "pcieport") == 0)
      continue;
    int k = snprintf(out + len, n - len, "%s%s is bound to %s", len ? ", " : "", e->d_name, drv);
    if (k < 0 || (size_t)k >= n - len) break;
    len += (size_t)k;
  }
  closedir(dir);
}

static int group_open(bg_vfio *v, const char *bdf, const char *node) {
  int r = bg_vfio_open_node(v, node, &v->group);
  if (r == -BG_EBUSY)
    return bg_error(BG_EBUSY, "VFIO: %s: device in use: IOMMU group %d (%s/vfio/%s) is open elsewhere (another process "
                    "or thread, e.g. a VM or another baregpu open of a device of the same group): close it first",
                    bdf, v->group_id, bg_vfio_dev_root(), node);
  if (r < 0) return r;
  struct vfio_group_status st = {.argsz = sizeof(st)};
  if ((r = v->sys->ioctl(v->sys_ctx, v->group, VFIO_GROUP_GET_STATUS, (unsigned long)&st)) < 0)
    return bg_error(BG_EIO, "VFIO: group %d status: %s", v->group_id, strerror(-r));
  if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE)) {
    char who[512];
    blockers(v->group_id, who, sizeof(who));
    return bg_error(BG_EBUSY, "VFIO: %s: IOMMU group %d is not viable: %s: bind every device of the group to vfio-pci "
                    "(or unbind it) first", bdf, v->group_id,
                    who[0] ? who : "another device of the group is bound to a host driver");
  }
  if ((r = bg_vfio_container_attach(v)) < 0) return r;
  r = v->sys->ioctl(v->sys_ctx, v->group, VFIO_GROUP_GET_DEVICE_FD, (unsigned long)bdf);
  if (r == -EBUSY)
    return bg_error(BG_EBUSY, "VFIO: %s: device in use: VFIO_GROUP_GET_DEVICE_FD: %s (its device fd is open "
                    "elsewhere): close it first", bdf, strerror(EBUSY));
  if (r < 0)
    return bg_error(r == -EPERM ? BG_EPERM : BG_EIO, "VFIO: group %d: device %s: %s%s", v->group_id, bdf,
                    strerror(-r), r == -EPERM ? ": no-IOMMU devices need CAP_SYS_RAWIO (run as root)" : "");
  v->device = r;
  return 0;
}

int bg_vfio_open(const char *bdf, bg_vfio *v) {
  *v = (bg_vfio){.container = -1, .group = -1, .device = -1, .irq_fd = -1, .group_id = -1};
  v->sys = bg_vfio_sys_current(&v->sys_ctx);
  char node[32];
  bool fresh = false;
  int r = bg_vfio_available();
  if (r == 0) r = group_of(bdf, &v->group_id);
  if (r == 0) r = pick_backend(v, bdf, node, sizeof(node));
  if (r == 0) r = bg_vfio_container_get(v, &fresh);
  if (r == 0 && fresh) r = container_check(v, bdf);
  if (r == 0) r = group_open(v, bdf, node);
  if (r == 0) r = bg_vfio_dev_open_regions(v, bdf);
  if (r == 0) r = bg_vfio_irq_enable(v, bdf);
  if (r < 0) bg_vfio_close(v);
  return r;
}

void bg_vfio_close(bg_vfio *v) {
  int *open_fds[] = {&v->irq_fd, &v->device, &v->group};
  for (size_t i = 0; i < sizeof(open_fds) / sizeof(open_fds[0]); i++) {
    int fd = *open_fds[i];
    if (fd >= 0) {
      if (open_fds[i] == &v->irq_fd) close(fd);
      else v->sys->close(v->sys_ctx, fd);
    }
    *open_fds[i] = -1;
  }
  bg_vfio_container_put(v);
}
