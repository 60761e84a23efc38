/* util/fd_io.h: opening files from outside without blocking, and writing whole buffers (internal; compile/,
 * am/fw_load.c and hcq/'s sysfs, proc and VFIO code).
 *
 * Paths a user or the system can replace (firmware, cache entries, sysfs attributes, /proc files, device nodes) are
 * opened with O_NONBLOCK | O_CLOEXEC and their type is checked with fstat before anything reads them: a FIFO with no
 * writer would otherwise block open(2) or read(2) for ever, a directory or socket would fail later with a confusing
 * message. O_NONBLOCK changes nothing for regular files and character devices, so the fd is used as is. */
#ifndef BG_HCQ_FD_IO_H
#define BG_HCQ_FD_IO_H

#include <stddef.h>

/* File types bg_open_file accepts (a mask). */
enum { BG_FT_REG = 1u << 0, BG_FT_CHR = 1u << 1 };

/* Open path with flags (O_RDONLY/O_WRONLY/O_RDWR plus e.g. O_NOFOLLOW, O_SYNC, O_TRUNC; O_NONBLOCK and O_CLOEXEC are
 * added) and check that it is one of `types`. 0 and *fd; else *fd = -1, a negative BG_E* code and a recorded
 * message: "cannot open PATH: <strerror>" (EACCES/EPERM/EROFS -BG_EPERM, ENOENT/ENODEV/ENXIO -BG_ENODEV, EBUSY
 * -BG_EBUSY, else -BG_EIO) with errno set to the open's error, or "PATH is not a regular file: it is a FIFO"
 * (-BG_EIO) with errno set to 0. Callers that word their own message test errno. */
int bg_open_file(const char *path, int flags, unsigned types, int *fd);
/* bg_open_file for a regular file. */
int bg_open_regular(const char *path, int flags, int *fd);
/* "a FIFO", "a directory", ... for st_mode. */
const char *bg_file_type_name(unsigned mode);

/* Write all n bytes of data to fd, retrying short writes and EINTR. 0, or -errno of the failed write. */
int bg_fd_write_all(int fd, const void *data, size_t n);
/* Read n bytes of fd into data, retrying short reads and EINTR: 0 when all n came; 1 when the file ended first; or
 * -errno of the failed read. *got: the bytes read either way. */
int bg_fd_read_all(int fd, void *data, size_t n, size_t *got);

#endif
