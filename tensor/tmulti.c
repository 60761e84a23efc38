/* tensor/tmulti.c: bg_tn_to, a tensor copied into another context (another device): realized where it is, then one
 * bg_buf_transfer into a new buffer of the destination, which becomes a BUFFER tensor there. The transfer records
 * itself as the buffer's last write (hcq/peer.c), and t_run_kernels makes the destination device wait for exactly
 * that write (bg_dev_wait_bufs) before a kernel reads the buffer. As tinygrad's Tensor.to / the copy of
 * tinygrad/engine/realize.py (BufferCopy, BufferXfer). */
#include <string.h>

#include "tensor/shard.h"
#include "tensor/tensor_internal.h"

static int64_t view_uid(node u) { return ((const tbuf_arg *)(const void *)t_view_buffer(u)->arg.b->data)->uid; }

bg_tensor *bg_tn_to(bg_tensor *t, bg_tctx *dst) {
  if (!dst) {
    bg_error(BG_EINVAL, "to: destination context is NULL");
    return t ? t_fail(t->c, "to: destination context is NULL") : NULL;
  }
  if (!t) return t_fail(dst, "to: tensor argument 't' is NULL");
  if (t_dead(t)) return t_fail(dst, "to: the tensor is the error tensor of %s: %s", bg_tctx_device(t->c),
                               t->c->has_err ? t->c->err : "an earlier op failed");
  if (t->c == dst) return t;
  tshape sh = t_shape_of(t);
  SHSTR(ss, &sh);
  for (unsigned i = 0; i < sh.n; i++)
    if (BG_DIM_IS_VAR(sh.d[i])) return t_fail(dst, "to: %s has a symbolic size; bind it to a plain size first", ss);
  int r = bg_tn_realize(&t, 1);
  if (r < 0) return t_fail(dst, "to: realizing %s on %s: %s", ss, bg_tctx_device(t->c), bg_last_error());
  bg_tctx *src = t->c;
  node u = t_node(t);
  int64_t suid = view_uid(u), n = t_numel(&sh), duid;
  enum ir_scalar s = t_scalar(t->dt);
  uint64_t bytes = (uint64_t)n * ir_scalar_size(s);
  if (t_new_buffer(dst, s, n, &duid) < 0) return t_fail(dst, "to: %s on %s: %s", ss, bg_tctx_device(dst), bg_last_error());
  if (bytes && bg_buf_transfer(dst->bufs[duid].b, 0, src->bufs[suid].b, 0, bytes) < 0)
    return t_fail(dst, "to: %s from %s to %s: %s", ss, bg_tctx_device(src), bg_tctx_device(dst), bg_last_error());
  if (bytes && t_mjit_note_transfer(src, suid, dst, duid, bytes) < 0) return t_fail(dst, "to: %s", bg_last_error());
  src->st.copies_out++;
  dst->st.copies_in++;
  return t_wrap(dst, n_reshape(dst, n_buffer(dst, duid, n, s), &sh));
}
