/* tensor/tload.h: private to tensor/: the file loader behind bg_tn_from_file and bg_tn_load_safetensors
 * (tload.c: plan and pipeline; tload_io.c: io_uring or pread; st_header.c: the safetensors header; safetensors.c: its files).
 *
 * A load reads byte ranges of one file ("targets", each going to its own device buffer) through a few staging
 * buffers: each chunk read lands in a staging buffer and is copied to the destinations it overlaps (the copy queue,
 * bg_buf_write, or memcpy on the CPU device), while the next chunks are being read. */
#ifndef BG_TENSOR_TLOAD_H
#define BG_TENSOR_TLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baregpu/hcq.h"
#include "baregpu/tensor.h"

/* ---- knobs for tests and the bench (not thread-safe: set them before a load) ---- */
extern uint64_t t_load_chunk;      /* bytes per read, a multiple of 4096; 0 = the default (4 MiB) */
extern bool t_load_force_pread;    /* read with pread even where io_uring works */
extern bool t_load_no_direct;      /* never open with O_DIRECT */

/* One destination: file bytes [lo, hi) go to buf at offset 0. */
typedef struct tload_target {
  uint64_t lo, hi;
  bg_buf *buf;
} tload_target;

/* Reads every target (sorted by lo, not overlapping) of the open regular file at path into its buffer on dev.
 * size: the file's size (the caller checked every hi against it). Latches nothing: 0, or a negative BG_E* with a
 * message naming path. Fills *st (bytes, reads, max_inflight, chunks_copied added; used_uring/used_direct set). */
int t_load_targets(bg_dev *dev, const char *path, uint64_t size, const tload_target *tg, size_t n,
                   bg_load_stats *st);

/* ---- reads (tload_io.c): io_uring with registered buffers, or pread with the same interface ---- */
typedef struct tload_io tload_io;
/* depth: reads in flight at most. bufs[0..nbufs): staging memory registered for fixed reads when io_uring works.
 * Never fails for want of io_uring (falls back to pread); 0 or -BG_ENOMEM. */
int t_io_open(int fd, unsigned depth, void *const *bufs, const size_t *sizes, unsigned nbufs, bool force_pread,
              tload_io **out);
void t_io_close(tload_io *io);
bool t_io_uring(const tload_io *io);   /* io_uring (vs pread) */
unsigned t_io_depth(const tload_io *io);
/* Queue a read of len bytes at file offset off into dst; buf_index: the registered buffer dst lies in, or -1.
 * tag comes back with the completion. 0 or a negative BG_E* (message set). */
int t_io_submit(tload_io *io, uint64_t off, void *dst, uint32_t len, int buf_index, uint64_t tag);
/* Waits for one completion: its tag and result (bytes read, or -errno). 0 or a negative BG_E* (message set). */
int t_io_wait(tload_io *io, uint64_t *tag, int64_t *res);

/* ---- safetensors header (st_header.c) ---- */
typedef struct tst_entry {
  char *name;
  enum bg_dtype dt;
  unsigned ndim;
  int64_t shape[BG_MAX_DIMS];
  uint64_t begin, end;         /* data_offsets, relative to the data section */
} tst_entry;
typedef struct tst_header {
  tst_entry *e;                /* sorted by begin (file order) */
  size_t n;
} tst_header;
/* Parses the JSON header json[0..len) of file `what` whose data section holds data_size bytes: every tensor's dtype,
 * shape and offsets checked (known dtype, offsets inside the data, not overlapping, shape * dtype size == end -
 * begin). 0, or -BG_EINVAL / -BG_ENOMEM with a message naming `what` and the field. *out is freed by
 * t_st_header_free (also after a failure). Works from memory only (the fuzz target calls it). */
int t_st_parse_header(const char *json, size_t len, uint64_t data_size, const char *what, tst_header *out);
void t_st_header_free(tst_header *h);
/* The format's name of a dtype ("F32", "BF16", ...). */
const char *t_st_dtype_name(enum bg_dtype t);

#endif
