/* dist/collectives.c: the public collectives on device buffers and device tensors: check the arguments, exchange
 * headers, run the staging pipeline (dist/pipeline.c). A tensor collective reads the input's buffer and writes a new
 * tensor's own buffer (bg_tn_buffer), so no other handle and no value realized from the input sees a change. */
#include <stdlib.h>
#include <string.h>

#include "dist/dist_internal.h"

static int range_ok(const char *what, const char *name, const bg_buf *b, uint64_t off, uint64_t n) {
  if (!b) return bg_error(BG_EINVAL, "%s: buffer '%s' is NULL", what, name);
  uint64_t size = bg_buf_size(b);
  if (off > size || n > size - off)
    return bg_error(BG_EINVAL, "%s: '%s' range [%llu, +%llu) is outside its %llu bytes", what, name,
                    (unsigned long long)off, (unsigned long long)n, (unsigned long long)size);
  return 0;
}

static int root_ok(const bg_dist *d, const char *what, int root) {
  if (root < 0 || root >= d->size) return bg_error(BG_EINVAL, "%s: root %d, expected 0..%d", what, root, d->size - 1);
  return 0;
}

static int mean_ok(const char *what, enum bg_dtype dt, enum bg_dist_op op) {
  if (op != BG_DIST_SUM && op != BG_DIST_MEAN) return bg_error(BG_EINVAL, "%s: op %d, expected BG_DIST_SUM or BG_DIST_MEAN", what, (int)op);
  if (op == BG_DIST_MEAN && dt != BG_FLOAT32 && dt != BG_FLOAT64)
    return bg_error(BG_EINVAL, "%s: the mean of %s: expected float32 or float64", what, bg_dtype_name(dt));
  return 0;
}

int bg_dist_allreduce_buf(bg_dist *d, bg_buf *b, uint64_t off, uint64_t count, enum bg_dtype t, enum bg_dist_op op) {
  const char *what = "bg_dist_allreduce_buf";
  if (!d) return bg_error(BG_EINVAL, "%s: 'd' is NULL", what);
  const int64_t shape[1] = {(int64_t)count};
  int rc = dist_check_header(d, what, DIST_ALLREDUCE, op, t, 1, shape, 0);
  dist_job j = {.kind = DIST_ALLREDUCE, .what = what, .dst = b, .src = b, .doff = off, .soff = off, .dt = t,
                .mean = op == BG_DIST_MEAN};
  if (rc == 0) rc = mean_ok(what, t, op);
  if (rc == 0) rc = dist_mpi_type(what, t, &j.mt);
  j.bytes = count * bg_dtype_size(t);
  if (rc == 0) rc = range_ok(what, "b", b, off, j.bytes);
  return rc < 0 ? rc : dist_pipeline(d, &j);
}

int bg_dist_broadcast_buf(bg_dist *d, bg_buf *b, uint64_t off, uint64_t bytes, int root) {
  const char *what = "bg_dist_broadcast_buf";
  if (!d) return bg_error(BG_EINVAL, "%s: 'd' is NULL", what);
  const int64_t shape[1] = {(int64_t)bytes};
  int rc = dist_check_header(d, what, DIST_BCAST, 0, BG_UINT8, 1, shape, root);
  if (rc == 0) rc = root_ok(d, what, root);
  if (rc == 0) rc = range_ok(what, "b", b, off, bytes);
  dist_job j = {.kind = DIST_BCAST, .what = what, .dst = b, .src = b, .doff = off, .soff = off, .bytes = bytes,
                .dt = BG_UINT8, .root = root};
  return rc < 0 ? rc : dist_pipeline(d, &j);
}

int bg_dist_allgather_buf(bg_dist *d, bg_buf *dst, uint64_t doff, bg_buf *src, uint64_t soff, uint64_t bytes) {
  const char *what = "bg_dist_allgather_buf";
  if (!d) return bg_error(BG_EINVAL, "%s: 'd' is NULL", what);
  const int64_t shape[1] = {(int64_t)bytes};
  int rc = dist_check_header(d, what, DIST_ALLGATHER, 0, BG_UINT8, 1, shape, 0);
  if (rc == 0) rc = range_ok(what, "src", src, soff, bytes);
  if (rc == 0) rc = range_ok(what, "dst", dst, doff, bytes * (uint64_t)d->size);
  if (rc == 0 && bg_buf_dev(dst) != bg_buf_dev(src))
    rc = bg_error(BG_EINVAL, "%s: 'dst' is on %s, 'src' on %s: expected one device", what, bg_dev_name(bg_buf_dev(dst)),
                  bg_dev_name(bg_buf_dev(src)));
  if (rc == 0 && dst == src && doff < soff + bytes && soff < doff + bytes * (uint64_t)d->size)
    rc = bg_error(BG_EINVAL, "%s: 'dst' and 'src' ranges overlap", what);
  dist_job j = {.kind = DIST_ALLGATHER, .what = what, .dst = dst, .src = src, .doff = doff, .soff = soff,
                .bytes = bytes, .dt = BG_UINT8};
  return rc < 0 ? rc : dist_pipeline(d, &j);
}

/* ---- tensors ---- */

static int tensor_args(const char *what, const bg_dist *d, const bg_tensor *t, bg_tensor **out) {
  if (out) *out = NULL;
  if (!d) return bg_error(BG_EINVAL, "%s: 'd' is NULL", what);
  if (!t) return bg_error(BG_EINVAL, "%s: tensor argument 't' is NULL", what);
  if (!out) return bg_error(BG_EINVAL, "%s: 'out' is NULL", what);
  return 0;
}

static int tensor_error(const char *what, bg_tensor *t, int rc) {
  const char *e = bg_tctx_error(bg_tn_ctx(t));
  return e ? bg_error(-rc, "%s: %s", what, e) : bg_error_context(rc, "%s: ", what);
}

/* t realized: its buffer *src (read only), and *res, a new realized tensor of dtype dt and shape (ndim, shape) in a
 * buffer of its own (*dst; zero-filled by a kernel: contiguous() of a tensor that is already a buffer is that buffer,
 * so a copy of t would not do). *src and *dst stay NULL for tensors without elements. */
static int src_and_result(const char *what, bg_tensor *t, unsigned ndim, const int64_t *shape, bg_buf **src,
                          bg_tensor **res, bg_buf **dst) {
  *src = *dst = NULL;
  *res = bg_tn_contiguous(bg_tn_zeros(bg_tn_ctx(t), bg_tn_dtype(t), ndim, shape));
  int rc = bg_tn_numel(t) ? bg_tn_buffer(t, src) : bg_tn_realize(&t, 1);
  if (rc == 0) rc = bg_tn_numel(*res) ? bg_tn_buffer(*res, dst) : bg_tn_realize(res, 1);
  return rc < 0 ? tensor_error(what, t, rc) : 0;
}

int bg_dist_allreduce(bg_dist *d, bg_tensor *t, enum bg_dist_op op, bg_tensor **out) {
  const char *what = "bg_dist_allreduce";
  int rc = tensor_args(what, d, t, out);
  if (rc < 0) return rc;
  enum bg_dtype dt = bg_tn_dtype(t);
  rc = dist_check_header(d, what, DIST_ALLREDUCE, op, dt, bg_tn_ndim(t), bg_tn_shape(t), 0);
  dist_job j = {.kind = DIST_ALLREDUCE, .what = what, .dt = dt, .mean = op == BG_DIST_MEAN,
                .bytes = (uint64_t)bg_tn_numel(t) * bg_dtype_size(dt)};
  if (rc == 0) rc = mean_ok(what, dt, op);
  if (rc == 0) rc = dist_mpi_type(what, dt, &j.mt);
  bg_tensor *r = NULL;
  if (rc == 0) rc = src_and_result(what, t, bg_tn_ndim(t), bg_tn_shape(t), &j.src, &r, &j.dst);
  if (rc == 0) rc = dist_pipeline(d, &j);
  if (rc == 0) *out = r;
  return rc;
}

int bg_dist_broadcast(bg_dist *d, bg_tensor *t, int root, bg_tensor **out) {
  const char *what = "bg_dist_broadcast";
  int rc = tensor_args(what, d, t, out);
  if (rc < 0) return rc;
  enum bg_dtype dt = bg_tn_dtype(t);
  rc = dist_check_header(d, what, DIST_BCAST, 0, dt, bg_tn_ndim(t), bg_tn_shape(t), root);
  if (rc == 0) rc = root_ok(d, what, root);
  dist_job j = {.kind = DIST_BCAST, .what = what, .dt = dt, .root = root,
                .bytes = (uint64_t)bg_tn_numel(t) * bg_dtype_size(dt)};
  bg_tensor *r = NULL;
  if (rc == 0) rc = src_and_result(what, t, bg_tn_ndim(t), bg_tn_shape(t), &j.src, &r, &j.dst);
  if (rc == 0) rc = dist_pipeline(d, &j);
  if (rc == 0) *out = r;
  return rc;
}

int bg_dist_allgather(bg_dist *d, bg_tensor *t, bg_tensor **out) {
  const char *what = "bg_dist_allgather";
  int rc = tensor_args(what, d, t, out);
  if (rc < 0) return rc;
  enum bg_dtype dt = bg_tn_dtype(t);
  unsigned nd = bg_tn_ndim(t);
  rc = dist_check_header(d, what, DIST_ALLGATHER, 0, dt, nd, bg_tn_shape(t), 0);
  if (rc == 0 && nd + 1 > BG_MAX_DIMS)
    rc = bg_error(BG_EINVAL, "%s: a tensor of %u dimensions: the result needs %u, at most %d", what, nd, nd + 1, BG_MAX_DIMS);
  if (rc < 0) return rc;
  int64_t shape[BG_MAX_DIMS] = {d->size};
  memcpy(shape + 1, bg_tn_shape(t), nd * sizeof *shape);
  dist_job j = {.kind = DIST_ALLGATHER, .what = what, .dt = dt, .bytes = (uint64_t)bg_tn_numel(t) * bg_dtype_size(dt)};
  bg_tensor *r = NULL;
  rc = src_and_result(what, t, nd + 1, shape, &j.src, &r, &j.dst);
  if (rc == 0) rc = dist_pipeline(d, &j);
  if (rc == 0) *out = r;
  return rc;
}
