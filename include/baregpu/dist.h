/* baregpu/dist.h: many machines: collectives between MPI ranks, each rank driving its own devices (libbaregpu-dist,
 * built when Open MPI is found; link with `pkg-config ompi-c` and -lbaregpu-dist -lbaregpu).
 *
 * A bg_dist is this process's membership in MPI_COMM_WORLD. Collectives take device tensors of a bg_tctx
 * (baregpu/tensor.h) or raw device buffers (baregpu/hcq.h). Data moves device -> pinned host staging (BG_BUF_HOST
 * buffers of the device, plain host memory where the device has none: logged at BG_DEBUG=1) -> MPI -> host staging
 * -> device, in chunks (bg_dist_set_chunk), with the device copies of one chunk overlapping the MPI transfer of the
 * previous one (two staging slots, one copy queue). Every rank must make the same collective calls in the same
 * order, as MPI requires.
 *
 * Errors follow baregpu/error.h, rule 1: 0 or a negative BG_E* with a message in bg_last_error(). An MPI failure is
 * -BG_EIO with MPI_Error_string's text and the MPI call named. Before moving data each collective exchanges a small
 * header (operation, dtype, shape or size, root) between all ranks; a mismatch fails on every rank with -BG_EINVAL
 * naming this rank's and the other rank's shapes, so no rank is left waiting. (A device failure after the exchange
 * on one rank leaves the others in MPI until that rank exits and mpirun ends the job: MPI has no fault tolerance.)
 * Ownership: bg_dist_init's *out is the caller's, freed by bg_dist_finalize. Tensors a collective returns belong to
 * the input tensor's context (as every tensor, baregpu/tensor.h). Buffers stay the caller's.
 * Thread safety: one thread at a time per bg_dist (the caller serializes calls), and a tensor collective also uses
 * the tensor's context (one thread at a time, baregpu/tensor.h). MPI is initialized with MPI_THREAD_SERIALIZED. */
#ifndef BAREGPU_DIST_H
#define BAREGPU_DIST_H

#include <stdint.h>

#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "baregpu/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bg_dist bg_dist;
enum bg_dist_op { BG_DIST_SUM = 0, BG_DIST_MEAN = 1 };

/* Joins MPI_COMM_WORLD: MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED) unless MPI is already initialized (then
 * the caller's MPI stays the caller's). argc/argv may be NULL. *out: the caller's, freed by bg_dist_finalize; NULL on
 * failure. One bg_dist per process at a time (-BG_EBUSY for a second). */
int bg_dist_init(int *argc, char ***argv, bg_dist **out);
/* Frees d's staging memory and calls MPI_Finalize only if bg_dist_init initialized MPI. Cannot fail (a failing
 * MPI_Finalize is logged). NULL is a no-op. */
void bg_dist_finalize(bg_dist *d);
/* This process's rank and the number of ranks (cannot fail). */
int bg_dist_rank(const bg_dist *d);
int bg_dist_size(const bg_dist *d);
/* Bytes per pipeline chunk (default 1 MiB); rounded down to a multiple of 64 bytes. -BG_EINVAL outside 64 B .. 1 GiB. */
int bg_dist_set_chunk(bg_dist *d, uint64_t bytes);
/* MPI_Barrier (0 or -BG_EIO). */
int bg_dist_barrier(bg_dist *d);

/* ---- device tensors (t: a tensor of any context; it is realized first; *out: a new realized tensor of t's context,
 * NULL on failure) ----
 * Every rank gives the same dtype and shape. Broadcast and all-gather move any dtype; all-reduce takes int8..uint64,
 * float32 and float64 (bool, float16 and bfloat16: -BG_ENOTSUP, MPI has no sum for them). */
/* Elementwise sum over the ranks of t, or the mean (sum / size, float dtypes only). Same shape and dtype as t. */
int bg_dist_allreduce(bg_dist *d, bg_tensor *t, enum bg_dist_op op, bg_tensor **out);
/* Root's t on every rank (every rank gives a tensor of the same shape and dtype; its values matter on root only). */
int bg_dist_broadcast(bg_dist *d, bg_tensor *t, int root, bg_tensor **out);
/* Every rank's t stacked along a new leading axis: shape (size, t's shape...), rank r's at index r. */
int bg_dist_allgather(bg_dist *d, bg_tensor *t, bg_tensor **out);

/* ---- raw device buffers (bytes at b + off; ranges must lie inside the buffers; -BG_EINVAL naming the range) ---- */
/* In place: count elements of dtype t at b + off become their sum (or mean) over the ranks. */
int bg_dist_allreduce_buf(bg_dist *d, bg_buf *b, uint64_t off, uint64_t count, enum bg_dtype t, enum bg_dist_op op);
/* In place: bytes at b + off become root's. */
int bg_dist_broadcast_buf(bg_dist *d, bg_buf *b, uint64_t off, uint64_t bytes, int root);
/* dst + doff receives size * bytes: rank r's `bytes` at src + soff land at dst + doff + r * bytes. dst and src are
 * buffers of one device (-BG_EINVAL otherwise); the ranges must not overlap. */
int bg_dist_allgather_buf(bg_dist *d, bg_buf *dst, uint64_t doff, bg_buf *src, uint64_t soff, uint64_t bytes);

/* How the last collective on d went (for tests and benches; cannot fail). */
typedef struct bg_dist_stats {
  uint64_t chunks;      /* pipeline chunks moved */
  uint64_t bytes;       /* bytes this rank sent into MPI */
  int pinned;           /* 1: BG_BUF_HOST staging with copy-queue copies; 0: plain host memory, bg_buf_read/write */
} bg_dist_stats;
void bg_dist_last_stats(const bg_dist *d, bg_dist_stats *st);

#ifdef __cplusplus
}
#endif
#endif
