/* hcq/fd_io.h: writing a whole buffer to a file descriptor (internal; compile/kcache.c and hcq/cpu_program.c). */
#ifndef BG_HCQ_FD_IO_H
#define BG_HCQ_FD_IO_H

#include <stddef.h>

/* Write all n bytes of data to fd, retrying short writes and EINTR. 0, or -errno of the failed write. */
int bg_fd_write_all(int fd, const void *data, size_t n);

#endif
