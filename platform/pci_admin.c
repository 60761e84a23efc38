/* platform/pci_admin.c: driver unbind/bind, reset and sibling removal by address (platform/pci_admin.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "platform/pci_admin.h"
#include "platform/pci_attr.h"
#include "platform/pci_lock.h"

/* Destructive actions are announced on stderr for the real bus; under an emulated tree
 * (BG_SYSFS_ROOT) only with BG_DEBUG >= 1, to keep test logs readable. */
static void notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void notice(const char *fmt, ...) {
  const char *root = getenv("BG_SYSFS_ROOT");
  if (root && *root && bg_debug_level() < 1) return;
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  bg_log(1, "%s", line);
}

/* The device must exist and belong to nobody else. */
static int check_device(const char *bdf) {
  char rel[BG_SYSFS_REL_MAX];
  if (!bdf || !bg_pci_bdf_valid(bdf))
    return bg_error(BG_EINVAL, "bad PCI address '%s': expected DDDD:BB:DD.F", bdf ? bdf : "(null)");
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s", bdf);
  if (!bg_sysfs_exists(rel)) {
    char path[512];
    bg_sysfs_path(path, sizeof(path), rel);
    return bg_error(BG_ENODEV, "no PCI device %s (%s does not exist)", bdf, path);
  }
  pid_t pid = 0;
  int r = bg_pci_lock_owner(bdf, &pid);
  if (r < 0) return r;
  if (pid != 0 && pid != getpid())
    return pid > 0 ? bg_error(BG_EBUSY, "device %s is in use by pid %d", bdf, (int)pid)
                   : bg_error(BG_EBUSY, "device %s is in use by another process", bdf);
  return 0;
}

/* The driver link after a write to bind or unbind: unbinding is synchronous in Linux (driver_detach runs in the
 * write), but a driver may probe asynchronously (PROBE_PREFER_ASYNCHRONOUS, the driver_async_probe= parameter;
 * drivers/base/dd.c), so wait a bounded time (10 s) for the link to show `want` ("" for none). */
static int driver_settles(const char *bdf, const char *want, char *now, size_t n) {
  for (int i = 0;; i++) {
    int r = bg_sysfs_driver(bdf, now, n);
    if (r < 0 || strcmp(now, want) == 0 || i == 1000) return r;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

int bg_pci_unbind(const char *bdf, char *was, size_t n) {
  char rel[BG_SYSFS_REL_MAX], drv[64] = "", now[64] = "";
  if (was && n) was[0] = '\0';
  int r = check_device(bdf);
  if (r == 0) r = bg_sysfs_driver(bdf, drv, sizeof(drv));
  if (r < 0 || !drv[0]) return r;
  if (was && n) snprintf(was, n, "%s", drv);
  notice("pci: %s: unbinding kernel driver %s", bdf, drv);
  snprintf(rel, sizeof(rel), "bus/pci/drivers/%s/unbind", drv);
  if ((r = bg_sysfs_write(rel, bdf)) < 0) return bg_error_context(r, "%s: unbind %s: ", bdf, drv);
  if ((r = driver_settles(bdf, "", now, sizeof(now))) < 0) return r;
  if (now[0]) return bg_error(BG_EIO, "%s: still bound to %s after writing to %s", bdf, now, rel);
  return 0;
}

int bg_pci_bind(const char *bdf, const char *driver) {
  char rel[BG_SYSFS_REL_MAX], drv[64] = "";
  int r = check_device(bdf);
  if (r == 0) r = bg_sysfs_driver(bdf, drv, sizeof(drv));
  if (r < 0) return r;
  if (!driver || !*driver || strchr(driver, '/')) return bg_error(BG_EINVAL, "%s: bad driver name", bdf);
  if (strcmp(drv, driver) == 0) return 0;
  if (drv[0]) return bg_error(BG_EBUSY, "%s: bound to %s: unbind it before binding %s", bdf, drv, driver);
  snprintf(rel, sizeof(rel), "bus/pci/drivers/%s", driver);
  if (!bg_sysfs_exists(rel))
    return bg_error(BG_ENODEV, "%s: kernel driver %s is not loaded (modprobe %s)", bdf, driver, driver);
  /* A VFIO open leaves driver_override=vfio-pci, which makes the kernel refuse any other driver:
   * writing a newline clears it. */
  char over[64] = "";
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver_override", bdf);
  if (bg_sysfs_exists(rel) && bg_sysfs_read(rel, over, sizeof(over)) >= 0 && over[0] && over[0] != '\n' &&
      strncmp(over, "(null)", 6) != 0 && strncmp(over, driver, strlen(driver)) != 0 &&
      (r = bg_sysfs_write(rel, "\n")) < 0)
    return bg_error_context(r, "%s: clearing driver_override '%s': ", bdf, over);
  snprintf(rel, sizeof(rel), "bus/pci/drivers/%s/bind", driver);
  if ((r = bg_sysfs_write(rel, bdf)) < 0) return bg_error_context(r, "%s: bind %s: ", bdf, driver);
  if ((r = driver_settles(bdf, driver, drv, sizeof(drv))) < 0) return r;
  if (strcmp(drv, driver) != 0)
    return bg_error(BG_EIO, "%s: writing to %s did not bind it (driver now '%s')", bdf, rel, drv);
  return 0;
}

int bg_pci_reset_bdf(const char *bdf) {
  char rel[BG_SYSFS_REL_MAX];
  int r = check_device(bdf);
  if (r < 0) return r;
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s/reset", bdf);
  if (!bg_sysfs_exists(rel))
    return bg_error(BG_ENOTSUP, "%s: the kernel knows no reset method for this device (no %s)", bdf, rel);
  r = bg_sysfs_write(rel, "1");
  return r < 0 ? bg_error_context(r, "%s: reset: ", bdf) : 0;
}

int bg_pci_remove_siblings(const char *bdf) {
  char sib[16], rel[BG_SYSFS_REL_MAX];
  int r = check_device(bdf);
  if (r < 0) return r;
  for (char fn = '1'; fn <= '7'; fn++) {
    if (fn == bdf[11]) continue;
    memcpy(sib, bdf, 11);
    sib[11] = fn;
    sib[12] = '\0';
    snprintf(rel, sizeof(rel), "bus/pci/devices/%s/remove", sib);
    if (!bg_sysfs_exists(rel)) continue;
    notice("pci: %s: removing sibling function %s", bdf, sib);
    if ((r = bg_sysfs_write(rel, "1")) < 0) return bg_error_context(r, "%s: removing sibling %s: ", bdf, sib);
  }
  return 0;
}
