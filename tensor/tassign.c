/* tensor/tassign.c: in-place assignment (tinygrad's Tensor.assign, tensor.py), the graph side.
 *
 * bg_tn_assign(dst, src) makes an assign node: a BUFFERIZE whose blob is int64[2] {tag, target uid}
 * (a unique tag, so two equal assignments stay two writes) over src cast to dst's dtype. The
 * scheduler always realizes it, its kernel stores into the target buffer (realize.c), reads of the
 * target at another index than the one written go through a copy (lower.c), and kernels that read
 * the old contents run before it (sched.c). dst's handle points at the assign node until that
 * realize, then at a fresh view of its own buffer: a BUFFER node with a new version in its blob,
 * so graphs built after the write never reuse a node realized from the old contents. */
#include <string.h>

#include "tensor/tensor_internal.h"

int64_t t_assign_target(node u) {
  if (!u || u->op != IR_BUFFERIZE || !u->arg.b || u->arg.b->size != 2 * sizeof(int64_t)) return -1;
  return ((const int64_t *)(const void *)u->arg.b->data)[1];
}

node t_buffer_fresh(bg_tctx *c, int64_t uid, const tshape *shp) {
  tshape sh = *shp; /* a copy: building nodes may move the side table */
  int64_t blob[3] = {uid, c->bufs[uid].numel, ++c->next_tag}; /* {tbuf_arg, version} */
  ir_arg a = {.b = ir_blob_intern(c->g, blob, sizeof blob)};
  tshape flat = t_mkshape(1, &blob[1]);
  node b = a.b ? n_node(c, IR_BUFFER, c->bufs[uid].s, a, 0, NULL, &flat) : NULL;
  return b ? n_reshape(c, b, &sh) : NULL;
}

void t_handle_repoint(bg_tensor *t, node u) {
  bg_tctx *c = t->c;
  if (!t_tables(c)) return; /* out of memory: the handle keeps its node, which still reads the buffer */
  if (t->u && t->u->id < c->real_cap && c->handles[t->u->id]) c->handles[t->u->id]--;
  t->u = u;
  if (u && u->id < c->real_cap) c->handles[u->id]++;
}

void t_follow_assign(bg_tensor *t) {
  bg_tctx *c = t->c;
  if (t->u && t_assign_target(t->u) >= 0 && t->u->id < c->real_cap && c->real[t->u->id]) t_handle_repoint(t, c->real[t->u->id]);
}

bg_tensor *bg_tn_assign(bg_tensor *dst, bg_tensor *src) {
  if (!dst) return t_null_arg("assign", "dst", src);
  if (!src) return t_null_arg("assign", "src", dst);
  bg_tctx *c = dst->c;
  if (src->c != c) return t_fail(c, "assign: src is from another context than dst");
  if (t_dead(dst) || t_dead(src)) return &c->err_t;
  char ds[160], ss[160];
  tshape dsh = t_shape_of(dst), ssh = t_shape_of(src);
  t_shape_str(&dsh, ds, sizeof ds);
  t_shape_str(&ssh, ss, sizeof ss);
  if (dsh.n != ssh.n || memcmp(dsh.d, ssh.d, dsh.n * sizeof dsh.d[0]))
    return t_fail(c, "assign: src of shape %s does not match dst of shape %s, expected the same shape", ss, ds);
  for (unsigned i = 0; i < dsh.n; i++)
    if (BG_DIM_IS_VAR(dsh.d[i])) return t_fail(c, "assign: dst of shape %s has a symbolic size, expected concrete sizes", ds);
  /* dst must be one whole buffer: a realized assign is its target's buffer (read c->real directly: during a JIT
   * capture t_real hides nodes computed from the inputs, but the target buffer is the same); realize a pending
   * assign (or a lazy dst) first */
  t_follow_assign(dst);
  if (!t_is_view(t_node(dst)) && bg_tn_realize(&dst, 1) < 0) return t_fail(c, "assign: realizing dst %s: %s", ds, bg_last_error());
  node view = t_node(dst);
  if (!t_is_view(view)) return t_fail(c, "assign: dst %s is not a buffer", ds);
  int64_t uid = ((const tbuf_arg *)(const void *)t_view_buffer(view)->arg.b->data)->uid;
  if (!c->bufs[uid].b) return t_fail(c, "assign: dst %s: its buffer was freed", ds);
  node v = t_node(src);
  if (v->dt != view->dt) v = n_cast(c, v, IR_DT_SCALAR(view->dt));
  int64_t blob[2] = {++c->next_tag, uid};
  ir_arg a = {.b = ir_blob_intern(c->g, blob, sizeof blob)};
  node as = v && a.b ? n_node(c, IR_BUFFERIZE, view->dt, a, 1, &v, &dsh) : NULL;
  if (!as) return t_fail(c, "assign: out of host memory building the graph");
  t_handle_repoint(dst, as);
  return dst;
}
