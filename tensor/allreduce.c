/* tensor/allreduce.c: the ring all-reduce (baregpu/tensor.h "several devices"). N devices each hold a tensor of one
 * shape; its flat data is cut in N chunks of ceil(numel/N) elements (the last ones shorter or empty). Reduce-scatter:
 * in step s (0..N-2) device i sends its partial chunk (i-s) mod N to device i+1 (bg_tn_to: one bg_buf_transfer on the
 * copy path), which adds it to its own partial of that chunk with a kernel; afterwards device i holds the whole sum of
 * chunk (i+1) mod N. All-gather: in step s device i sends its finished chunk (i+1-s) mod N to device i+1, which takes
 * it as is. Each device then joins its chunks (one cat kernel). tinygrad/schedule/allreduce.py handle_allreduce does
 * the same ring per chunk (chunk i's chain starts on device i, balanced chunk sizes) and reassembles by padding and
 * summing; here the chunks are fixed by the ring step and joined by a cat. */
#include <stdio.h>
#include <string.h>

#include "tensor/shard.h"
#include "tensor/tensor_internal.h"

static bool live(bg_mesh *m, bg_tensor *t, const char *what, unsigned dev) {
  if (!t_dead(t)) return true;
  sh_fail(m, "allreduce: %s on device %u (%s): %s", what, dev, bg_tctx_device(m->c[dev]),
          m->c[dev]->has_err ? m->c[dev]->err : bg_last_error());
  return false;
}

int t_allreduce(bg_mesh *m, bg_tensor *const *parts, bg_tensor **out) {
  unsigned n = m->n;
  for (unsigned i = 0; i < n; i++) {
    if (!parts[i] || parts[i]->c != m->c[i]) {
      sh_fail(m, "allreduce: part %u is NULL or not a tensor of context %u", i, i);
      return -BG_EINVAL;
    }
    if (!live(m, parts[i], "input", i)) return -BG_EINVAL;
    tshape a = t_shape_of(parts[0]), b = t_shape_of(parts[i]);
    SHSTR(sa, &a);
    SHSTR(sb, &b);
    if (parts[i]->dt != parts[0]->dt || a.n != b.n || t_numel(&a) != t_numel(&b) || memcmp(a.d, b.d, a.n * sizeof a.d[0])) {
      sh_fail(m, "allreduce: device %u holds %s %s, device 0 %s %s; expected equal shapes and dtypes", i, sb,
              bg_dtype_name(parts[i]->dt), sa, bg_dtype_name(parts[0]->dt));
      return -BG_EINVAL;
    }
  }
  tshape sh = t_shape_of(parts[0]);
  int64_t numel = t_numel(&sh), cs = (numel + n - 1) / n;
  if (n == 1 || numel == 0) {
    for (unsigned i = 0; i < n; i++) out[i] = parts[i];
    return 0;
  }
  bg_tensor *acc[BG_MESH_MAX][BG_MESH_MAX] = {{0}}; /* device, chunk: NULL for an empty chunk */
  int64_t lo[BG_MESH_MAX], hi[BG_MESH_MAX];
  for (unsigned c = 0; c < n; c++) {
    lo[c] = (int64_t)c * cs < numel ? (int64_t)c * cs : numel;
    hi[c] = (int64_t)(c + 1) * cs < numel ? (int64_t)(c + 1) * cs : numel;
  }
  for (unsigned i = 0; i < n; i++) {
    bg_tensor *flat = bg_tn_reshape(parts[i], 1, &numel);
    for (unsigned c = 0; c < n; c++) {
      if (hi[c] == lo[c]) continue;
      int64_t b[1][2] = {{lo[c], hi[c]}};
      acc[i][c] = bg_tn_contiguous(bg_tn_shrink(flat, b));
      if (!live(m, acc[i][c], "chunk", i)) return -BG_EINVAL;
    }
  }
  for (int phase = 0; phase < 2; phase++) {  /* 0: reduce-scatter, 1: all-gather */
    for (unsigned s = 0; s + 1 < n; s++) {
      bg_tensor *recv[BG_MESH_MAX];
      unsigned chunk[BG_MESH_MAX];
      for (unsigned i = 0; i < n; i++) { /* every send of a step reads values from before the step's adds */
        unsigned c = (unsigned)((i + (unsigned)phase + n - s) % n), dst = (i + 1) % n;
        chunk[dst] = c;
        recv[dst] = acc[i][c] ? bg_tn_to(acc[i][c], m->c[dst]) : NULL;
        if (recv[dst] && !live(m, recv[dst], "receiving a chunk", dst)) return -BG_EINVAL;
      }
      for (unsigned d = 0; d < n; d++) {
        if (!recv[d]) continue;
        acc[d][chunk[d]] = phase == 0 ? bg_tn_add(acc[d][chunk[d]], recv[d]) : recv[d];
        if (!live(m, acc[d][chunk[d]], "adding a chunk", d)) return -BG_EINVAL;
      }
    }
  }
  for (unsigned i = 0; i < n; i++) {
    bg_tensor *ts[BG_MESH_MAX];
    unsigned k = 0;
    for (unsigned c = 0; c < n; c++)
      if (acc[i][c]) ts[k++] = acc[i][c];
    out[i] = bg_tn_reshape(k == 1 ? ts[0] : bg_tn_cat(ts, k, 0), sh.n, sh.d);
    if (!live(m, out[i], "joining the chunks", i)) return -BG_EINVAL;
  }
  return 0;
}
