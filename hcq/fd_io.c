/* hcq/fd_io.c: see fd_io.h. */
#include "hcq/fd_io.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

int bg_fd_write_all(int fd, const void *data, size_t n) {
  const uint8_t *p = data;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -errno;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}
