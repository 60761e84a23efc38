/* tensor/tload_io.c: the loader's reads: io_uring (liburing) with the staging buffers registered
 * (IORING_OP_READ_FIXED: the kernel pins them once instead of at every read, liburing's io_uring_register_buffers),
 * several reads in flight; or pread, one at a time, behind the same submit/wait interface, where liburing was not
 * there at build time or io_uring_queue_init fails at run time (ENOSYS, a seccomp filter, kernel.io_uring_disabled). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bg_config.h"
#include "tensor/tload.h"

#if BG_HAVE_URING
#include <liburing.h>
#endif

typedef struct preq {
  uint64_t off, tag;
  void *dst;
  uint32_t len;
} preq;

struct tload_io {
  int fd;
  unsigned depth;
  bool uring;
#if BG_HAVE_URING
  struct io_uring ring;
  bool fixed;          /* buffers registered */
#endif
  preq pend;           /* pread: the one queued read */
  bool has_pend;
};

int t_io_open(int fd, unsigned depth, void *const *bufs, const size_t *sizes, unsigned nbufs, bool force_pread,
              tload_io **out) {
  tload_io *io = calloc(1, sizeof *io);
  if (!io) return bg_error(BG_ENOMEM, "load: out of host memory");
  io->fd = fd;
  io->depth = 1;
#if BG_HAVE_URING
  if (!force_pread && io_uring_queue_init(depth, &io->ring, 0) == 0) {
    io->uring = true;
    io->depth = depth;
    struct iovec iov[16];
    if (nbufs && nbufs <= 16) {
      for (unsigned i = 0; i < nbufs; i++) iov[i] = (struct iovec){bufs[i], sizes[i]};
      /* fails under a small RLIMIT_MEMLOCK (kernels before 5.12 charge it): plain reads then */
      io->fixed = io_uring_register_buffers(&io->ring, iov, nbufs) == 0;
    }
  }
#else
  (void)depth;
  (void)bufs;
  (void)sizes;
  (void)nbufs;
  (void)force_pread;
#endif
  *out = io;
  return 0;
}

void t_io_close(tload_io *io) {
  if (!io) return;
#if BG_HAVE_URING
  if (io->uring) io_uring_queue_exit(&io->ring);   /* also unregisters the buffers */
#endif
  free(io);
}

bool t_io_uring(const tload_io *io) { return io->uring; }
unsigned t_io_depth(const tload_io *io) { return io->depth; }

int t_io_submit(tload_io *io, uint64_t off, void *dst, uint32_t len, int buf_index, uint64_t tag) {
#if BG_HAVE_URING
  if (io->uring) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&io->ring);
    if (!sqe) return bg_error(BG_EIO, "load: io_uring submission queue full (%u in flight)", io->depth);
    if (io->fixed && buf_index >= 0) io_uring_prep_read_fixed(sqe, io->fd, dst, len, off, buf_index);
    else io_uring_prep_read(sqe, io->fd, dst, len, off);
    io_uring_sqe_set_data64(sqe, tag);
    int r = io_uring_submit(&io->ring);
    if (r < 0) return bg_error(BG_EIO, "load: io_uring_submit: %s", strerror(-r));
    return 0;
  }
#else
  (void)buf_index;
#endif
  if (io->has_pend) return bg_error(BG_EIO, "load: a second pread queued (depth 1)");
  io->pend = (preq){off, tag, dst, len};
  io->has_pend = true;
  return 0;
}

int t_io_wait(tload_io *io, uint64_t *tag, int64_t *res) {
#if BG_HAVE_URING
  if (io->uring) {
    struct io_uring_cqe *cqe;
    int r;
    do r = io_uring_wait_cqe(&io->ring, &cqe);
    while (r == -EINTR);
    if (r < 0) return bg_error(BG_EIO, "load: io_uring_wait_cqe: %s", strerror(-r));
    *tag = io_uring_cqe_get_data64(cqe);
    *res = cqe->res;
    io_uring_cqe_seen(&io->ring, cqe);
    return 0;
  }
#endif
  if (!io->has_pend) return bg_error(BG_EIO, "load: waiting for a read that was never queued");
  io->has_pend = false;
  ssize_t r;
  do r = pread(io->fd, io->pend.dst, io->pend.len, (off_t)io->pend.off);
  while (r < 0 && errno == EINTR);
  *tag = io->pend.tag;
  *res = r < 0 ? -errno : r;
  return 0;
}
