/* platform/vfio_sys.c: the kernel's VFIO system calls, or the emulated ones of the current root (vfio_sys.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "platform/pci_hook.h"
#include "platform/vfio_sys.h"
#include "util/fd_io.h"

static int sys_open(void *ctx, const char *path, int oflags) {
  (void)ctx;
  int fd;
  /* The nodes are character devices; a FIFO or directory in their place is refused without blocking. */
  if (bg_open_file(path, oflags, BG_FT_CHR, &fd) == 0) return fd;
  return errno ? -errno : -EMEDIUMTYPE;
}

static int sys_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg) {
  (void)ctx;
  int r = ioctl(fd, req, arg);
  return r < 0 ? -errno : r;
}

static int sys_mmap(void *ctx, int fd, uint64_t off, uint64_t size, bg_mmio *out) {
  (void)ctx;
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
  if (p == MAP_FAILED) return -errno;
  /* Children of a fork must not inherit device mappings. */
  madvise(p, size, MADV_DONTFORK);
  *out = (bg_mmio){p, size, NULL, NULL};
  return 0;
}

static void sys_munmap(void *ctx, bg_mmio *m) {
  (void)ctx;
  munmap((void *)m->ptr, m->size);
}

static ssize_t sys_pread(void *ctx, int fd, void *buf, size_t n, uint64_t off) {
  (void)ctx;
  ssize_t r = pread(fd, buf, n, (off_t)off);
  return r < 0 ? -errno : r;
}

static ssize_t sys_pwrite(void *ctx, int fd, const void *buf, size_t n, uint64_t off) {
  (void)ctx;
  ssize_t r = pwrite(fd, buf, n, (off_t)off);
  return r < 0 ? -errno : r;
}

static void sys_close(void *ctx, int fd) {
  (void)ctx;
  close(fd);
}

static const bg_vfio_sys kernel_sys = {sys_open, sys_ioctl, sys_mmap, sys_munmap, sys_pread, sys_pwrite, sys_close};

const bg_vfio_sys *bg_vfio_sys_current(void **ctx) {
  void *hctx = NULL;
  const bg_pci_hooks *h = bg_pci_hooks_current(&hctx);
  if (h && h->vfio) {
    *ctx = hctx;
    return h->vfio;
  }
  *ctx = NULL;
  return &kernel_sys;
}
