/* tensor/shard.h: private to tensor/: meshes and sharded tensors (shard.c, shard_ops.c), the ring all-reduce
 * (allreduce.c), bg_tn_to's capture hook (tmulti.c) and the multi-device JIT (mjit.c), which reuses the single-device
 * capture of jit.c through the hooks declared at the end. */
#ifndef BG_TENSOR_SHARD_H
#define BG_TENSOR_SHARD_H

#include <stdbool.h>
#include <stdint.h>

#include "baregpu/hcq.h"
#include "baregpu/tensor.h"

#define BG_MESH_MAX 8

struct bg_sharded {
  bg_mesh *m;
  bool dead;                        /* the mesh's error tensor */
  int axis;                         /* non-negative, or BG_SHARD_REPLICATED */
  unsigned ndim;
  int64_t shape[BG_MAX_DIMS];       /* the whole tensor's */
  bg_tensor *parts[BG_MESH_MAX];
  struct bg_sharded *next;          /* the mesh's list, freed at close */
};

struct bg_mesh {
  unsigned n;
  bg_tctx *c[BG_MESH_MAX];
  char err[512];
  bool has_err;
  bg_sharded err_s;                 /* what ops return after an error */
  bg_sharded *list;
};

/* Latches the first error on the mesh (and bg_last_error()); returns the mesh's dead sharded tensor. */
bg_sharded *sh_fail(bg_mesh *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A sharded tensor of m from per-device parts (parts[i] in context i) along axis: the whole shape is the parts'
 * shape with the axis summed (replicated: part 0's). A dead part (its context latched an error) latches that
 * context's message on the mesh, naming op. */
bg_sharded *sh_make(bg_mesh *m, const char *op, bg_tensor *const *parts, int axis);
/* "(4,6) split along axis 0 on a mesh of 2" / "(4,6) replicated", for messages. */
void sh_str(const bg_sharded *s, char *buf, size_t n);
/* Start and length of device i's chunk along s's axis (from its part's shape). */
void sh_chunk(const bg_sharded *s, unsigned i, int64_t *start, int64_t *len);
/* Whether s is usable by an op: non-NULL, live; false with the mesh's error latched (or bg_last_error for NULL). */
bool sh_ok(const char *op, const bg_sharded *s);

/* Ring all-reduce of parts[0..m->n) (equal shapes, part i in context i of m) into out[i] (replicated sums), 0 or a
 * negative BG_E* with the error latched on the mesh. */
int t_allreduce(bg_mesh *m, bg_tensor *const *parts, bg_tensor **out);

/* ---- the multi-device JIT's capture (mjit.c) ---- */
/* bg_tn_to calls this after each transfer; while a multi-device JIT of this thread captures, it records the transfer of bytes
 * from buffer suid of src to buffer duid of dst. 0 or a negative BG_E*. */
int t_mjit_note_transfer(bg_tctx *src, int64_t suid, bg_tctx *dst, int64_t duid, uint64_t bytes);

/* Tests: replay launch by launch even where the queue programs are possible (the baseline they are compared with). */
void t_mjit_set_per_launch(bg_mjit *j, bool on);

/* ---- jit.c hooks: the single-device capture driven from outside (mjit.c) ---- */
/* Start capturing c's launches into j (a JIT of c): inputs are the buffers in_uids[0..nin). */
int t_jit_capture_start(bg_jit *j, const int64_t *in_uids, unsigned nin);
void t_jit_capture_stop(bg_jit *j);
size_t t_jit_nlaunches(const bg_jit *j);
/* Run captured launch i (bg_program_run) with buffer uid from[k] replaced by to[k] (k < nmap), after making the
 * device wait for the other devices' writes of its buffers (bg_dev_wait_bufs). */
int t_jit_run_launch(bg_jit *j, size_t i, const int64_t *from, const int64_t *to, unsigned nmap);
/* Record captured launch i as an EXEC on q, buffer uid from[k] as operand to[k] (k < nmap), other buffers and kernel
 * variables as the constants of the capture. */
int t_jit_record_launch(bg_jit *j, size_t i, bg_queue *q, const int64_t *from, const bg_val *to, unsigned nmap);

#endif
