/* nv/nv_sys.c: the system-call table of NVK+NV (nv_sys.h): the nvidia kernel module's device files, /proc, and a
 * doorbell that is a plain 32-bit store into the usermode page (tinygrad ops_nv.py GPFifo submit: the ring entry and
 * GPPut are written, then the token goes to NVC361_NOTIFY_CHANNEL_PENDING). */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nv/nv_sys.h"

static int sys_open(void *ctx, const char *path, int flags) {
  (void)ctx;
  int fd;
  do fd = open(path, flags);
  while (fd < 0 && errno == EINTR);
  return fd;
}

static int sys_close(void *ctx, int fd) {
  (void)ctx;
  return close(fd); /* never retried: Linux releases the fd even when close reports EINTR */
}

static int sys_ioctl(void *ctx, int fd, unsigned long request, void *arg) {
  (void)ctx;
  int r;
  do r = ioctl(fd, request, arg);
  while (r < 0 && errno == EINTR);
  return r;
}

static void *sys_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  (void)ctx;
  return mmap(addr, len, prot, flags, fd, off);
}

static int sys_munmap(void *ctx, void *addr, size_t len) {
  (void)ctx;
  return munmap(addr, len);
}

static long sys_read_file(void *ctx, const char *path, char *buf, size_t cap) {
  (void)ctx;
  if (!cap) return errno = EINVAL, -1;
  int fd = sys_open(NULL, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t n = 0;
  while (n + 1 < cap) { /* /proc files may answer in short reads */
    ssize_t k = read(fd, buf + n, cap - 1 - n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      int e = errno;
      close(fd);
      return errno = e, -1;
    }
    if (k == 0) break;
    n += (size_t)k;
  }
  close(fd);
  buf[n] = '\0';
  return (long)n;
}

/* The caller made the GPFIFO entry and GPPut visible; the fence keeps the store after them on any CPU. */
static void sys_doorbell(void *ctx, volatile uint32_t *reg, uint32_t token) {
  (void)ctx;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  *reg = token;
}

const bg_nv_sys bg_nv_sys_real = {.ctx = NULL, .open = sys_open, .close = sys_close, .ioctl = sys_ioctl,
                                  .mmap = sys_mmap, .munmap = sys_munmap, .read_file = sys_read_file,
                                  .doorbell = sys_doorbell};
