/* platform/vfio_sys.h: the system calls platform/vfio.c makes on VFIO files, through one table.
 *
 * On a real system the table is the kernel's open/ioctl/mmap/pread/pwrite/close on /dev/vfio/vfio, the group node
 * and the device fd (Linux include/uapi/linux/vfio.h). Under an emulated sysfs root (platform/pci_hook.h) the
 * root's hooks may carry their own table (tests/mockgpu/mock_vfio.c), so the same VFIO code runs against an
 * emulated container, group and device, as the BAR hooks let the sysfs code run against an emulated BAR. */
#ifndef BG_HCQ_VFIO_SYS_H
#define BG_HCQ_VFIO_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "platform/mmio.h"

typedef struct bg_vfio_sys {
  /* A VFIO node (container or group) at path: an fd, or -errno; -EMEDIUMTYPE when something other than a VFIO
   * node is there (a FIFO, a directory), with a message naming it recorded. */
  int (*open)(void *ctx, const char *path, int oflags);
  /* ioctl(fd, req, arg) with arg a value or a pointer cast to unsigned long: the ioctl's result (>= 0) or -errno. */
  int (*ioctl)(void *ctx, int fd, unsigned long req, unsigned long arg);
  /* A view of [off, off+size) of the device fd (off = region offset + offset in the region): 0 or -errno. */
  int (*mmap)(void *ctx, int fd, uint64_t off, uint64_t size, bg_mmio *out);
  void (*munmap)(void *ctx, bg_mmio *m);
  /* Bytes transferred, or -errno. */
  ssize_t (*pread)(void *ctx, int fd, void *buf, size_t n, uint64_t off);
  ssize_t (*pwrite)(void *ctx, int fd, const void *buf, size_t n, uint64_t off);
  void (*close)(void *ctx, int fd);
} bg_vfio_sys;

/* The table of the current sysfs root's hooks when they carry one, else the kernel's (ctx NULL). */
const bg_vfio_sys *bg_vfio_sys_current(void **ctx);

#endif
