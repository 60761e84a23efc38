/* platform/pci_attr.c: sysfs file access for the PCI layer (platform/pci_attr.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "util/fd_io.h"
#include "platform/pci_attr.h"
#include "platform/pci_hook.h"
#include "platform/pci_scan.h"

int bg_sysfs_errcode(int e) {
  switch (e) {
  case EACCES: case EPERM: case EROFS: return BG_EPERM;
  case ENOENT: case ENODEV: case ENXIO: return BG_ENODEV;
  case EBUSY: return BG_EBUSY;
  case ENOMEM: return BG_ENOMEM;
  case EINVAL: return BG_EINVAL;
  default: return BG_EIO;
  }
}

void bg_sysfs_path(char *buf, size_t n, const char *rel) {
  snprintf(buf, n, "%s/%s", bg_pci_sysfs_root(), rel);
}

int bg_sysfs_fail(int e, const char *what, const char *rel) {
  char path[PATH_MAX];
  bg_sysfs_path(path, sizeof(path), rel);
  int code = bg_sysfs_errcode(e);
  return bg_error(code, "%s %s: %s (errno %d)%s", what, path, strerror(e), e,
                  code == BG_EPERM ? ": run as root (or with CAP_SYS_ADMIN and CAP_DAC_OVERRIDE)" : "");
}

bool bg_sysfs_exists(const char *rel) {
  char path[PATH_MAX];
  bg_sysfs_path(path, sizeof(path), rel);
  return access(path, F_OK) == 0;
}

int bg_sysfs_open(const char *rel, int oflags, int *fd) {
  void *ctx = NULL;
  const bg_pci_hooks *h = bg_pci_hooks_current(&ctx);
  int e = h && h->open ? -h->open(ctx, rel, oflags) : 0;
  if (e == 0) {
    char path[PATH_MAX];
    bg_sysfs_path(path, sizeof(path), rel);
    /* Attributes are regular files; anything else in their place (a FIFO in an emulated tree) is refused
     * without blocking (util/fd_io.h). */
    if (bg_open_regular(path, oflags, fd) < 0) {
      if (errno == 0) return bg_error_context(-BG_EIO, "sysfs attribute ");
      e = errno;
    }
  }
  if (e) {
    *fd = -1;
    return bg_sysfs_fail(e, (oflags & O_ACCMODE) == O_RDONLY ? "cannot open" : "cannot open for writing", rel);
  }
  return 0;
}

int bg_sysfs_read(const char *rel, char *buf, size_t n) {
  int fd, r = bg_sysfs_open(rel, O_RDONLY, &fd);
  if (r < 0) return r;
  ssize_t len = read(fd, buf, n - 1);
  int e = errno;
  close(fd);
  if (len < 0) return bg_sysfs_fail(e, "cannot read", rel);
  buf[len] = '\0';
  while (len > 0 && isspace((unsigned char)buf[len - 1])) buf[--len] = '\0';
  return 0;
}

static int notify_written(const char *rel, uint64_t off, const void *data, size_t n) {
  void *ctx = NULL;
  const bg_pci_hooks *h = bg_pci_hooks_current(&ctx);
  int r = h && h->written ? h->written(ctx, rel, off, data, n) : 0;
  return r < 0 ? bg_sysfs_fail(-r, "cannot write", rel) : 0;
}

int bg_sysfs_write(const char *rel, const char *value) {
  /* O_TRUNC matters only to the emulated tree's regular files; sysfs ignores it. */
  int fd, r = bg_sysfs_open(rel, O_WRONLY | O_TRUNC, &fd);
  if (r < 0) return r;
  size_t n = strlen(value);
  ssize_t w = write(fd, value, n);
  int e = errno;
  close(fd);
  if (w != (ssize_t)n) return bg_sysfs_fail(w < 0 ? e : EIO, "cannot write", rel);
  return notify_written(rel, 0, value, n);
}

int bg_sysfs_pwrite(int fd, const char *rel, uint64_t off, const void *data, size_t n) {
  ssize_t w = pwrite(fd, data, n, (off_t)off);
  if (w != (ssize_t)n) return bg_sysfs_fail(w < 0 ? errno : EIO, "cannot write", rel);
  return notify_written(rel, off, data, n);
}

int bg_sysfs_driver(const char *bdf, char *name, size_t n) {
  char path[PATH_MAX], rel[BG_SYSFS_REL_MAX], target[PATH_MAX];
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver", bdf);
  bg_sysfs_path(path, sizeof(path), rel);
  name[0] = '\0';
  ssize_t len = readlink(path, target, sizeof(target) - 1);
  if (len < 0) return errno == ENOENT ? 0 : bg_sysfs_fail(errno, "cannot read link", rel);
  target[len] = '\0';
  const char *base = strrchr(target, '/');
  snprintf(name, n, "%s", base ? base + 1 : target);
  return 0;
}

bool bg_pci_bdf_valid(const char *bdf) {
  static const char form[] = "hhhh:hh:hh.h";
  if (strlen(bdf) != sizeof(form) - 1) return false;
  for (size_t i = 0; form[i]; i++)
    if (form[i] == 'h' ? !isxdigit((unsigned char)bdf[i]) : bdf[i] != form[i]) return false;
  return true;
}
