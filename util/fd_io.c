/* util/fd_io.c: see fd_io.h. */
#include "util/fd_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baregpu/error.h"

const char *bg_file_type_name(unsigned mode) {
  switch (mode & S_IFMT) {
  case S_IFREG: return "a regular file";
  case S_IFDIR: return "a directory";
  case S_IFCHR: return "a character device";
  case S_IFBLK: return "a block device";
  case S_IFIFO: return "a FIFO";
  case S_IFSOCK: return "a socket";
  case S_IFLNK: return "a symbolic link";
  default: return "a file of unknown type";
  }
}

static int open_errcode(int e) {
  switch (e) {
  case EACCES: case EPERM: case EROFS: return BG_EPERM;
  case ENOENT: case ENODEV: case ENXIO: return BG_ENODEV;
  case EBUSY: return BG_EBUSY;
  default: return BG_EIO;
  }
}

static const char *expected(unsigned types) {
  if (types == BG_FT_REG) return "a regular file";
  if (types == BG_FT_CHR) return "a character device";
  return "a regular file or a character device";
}

int bg_open_file(const char *path, int flags, unsigned types, int *fd) {
  *fd = -1;
  /* O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer (fifo(7)). */
  int f = open(path, flags | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  /* Opening a FIFO for writing without a reader fails with ENXIO: say what is there instead. */
  if (f < 0 && errno == ENXIO && stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
    int r = bg_error(BG_EIO, "%s is not %s: it is %s", path, expected(types), bg_file_type_name(st.st_mode));
    errno = 0;
    return r;
  }
  if (f < 0) {
    int e = errno;
    int r = bg_error(open_errcode(e), "cannot open %s: %s", path, strerror(e));
    errno = e;
    return r;
  }
  if (fstat(f, &st) != 0) {
    int e = errno;
    close(f);
    int r = bg_error(BG_EIO, "cannot stat %s: %s", path, strerror(e));
    errno = e;
    return r;
  }
  unsigned fmt = st.st_mode & S_IFMT;
  if (!((types & BG_FT_REG) && fmt == S_IFREG) && !((types & BG_FT_CHR) && fmt == S_IFCHR)) {
    close(f);
    int r = bg_error(BG_EIO, "%s is not %s: it is %s", path, expected(types), bg_file_type_name(st.st_mode));
    errno = 0;
    return r;
  }
  *fd = f;
  return 0;
}

int bg_open_regular(const char *path, int flags, int *fd) { return bg_open_file(path, flags, BG_FT_REG, fd); }

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

int bg_fd_read_all(int fd, void *data, size_t n, size_t *got) {
  uint8_t *p = data;
  *got = 0;
  while (*got < n) {
    ssize_t r = read(fd, p + *got, n - *got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -errno;
    if (r == 0) return 1;
    *got += (size_t)r;
  }
  return 0;
}
