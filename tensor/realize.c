/* tensor/realize.c: device buffers, running a schedule (its kernels compiled first, tcompile.c),
 * and the public realize/read/item. Kernels are submitted back to back on the device timeline and synchronized
 * only when the host reads (or frees an intermediate buffer). An assign's kernel (tassign.c) stores into its target
 * buffer, which stays its owner's; the node then maps to a fresh view of that buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor_internal.h"

int t_new_buffer(bg_tctx *c, enum ir_scalar s, int64_t numel, int64_t *uid) {
  if (c->nbufs == c->bufs_cap) {
    size_t ncap = c->bufs_cap ? c->bufs_cap * 2 : 64;
    tbuf *nb = realloc(c->bufs, ncap * sizeof *nb);
    if (!nb) return bg_error(BG_ENOMEM, "tensor: out of host memory for a buffer");
    c->bufs = nb;
    c->bufs_cap = ncap;
  }
  uint64_t bytes = (uint64_t)numel * ir_scalar_size(s);
  tbuf *b = &c->bufs[c->nbufs];
  memset(b, 0, sizeof *b);
  int r = bg_buf_alloc(c->dev, bytes ? bytes : 1, 0, &b->b);
  if (r < 0) return bg_error_context(r, "tensor: buffer of %llu bytes: ", (unsigned long long)bytes);
  b->numel = numel;
  b->s = s;
  *uid = (int64_t)c->nbufs++;
  return 0;
}

static void drop_buffer(bg_tctx *c, int64_t uid) {
  if (uid >= 0 && (size_t)uid < c->nbufs && c->bufs[uid].b) {
    bg_buf_free(c->bufs[uid].b);
    c->bufs[uid].b = NULL;
  }
}

static node view_of(bg_tctx *c, int64_t uid, node like) {
  tshape sh = *t_shape(c, like); /* a copy: n_buffer may move the side table */
  return n_reshape(c, n_buffer(c, uid, c->bufs[uid].numel, c->bufs[uid].s), &sh);
}

node t_from_host(bg_tctx *c, enum ir_scalar s, const tshape *sh, const void *data) {
  int64_t uid, n = t_numel(sh);
  if (t_new_buffer(c, s, n, &uid) < 0) return NULL;
  if (n && bg_buf_write(c->bufs[uid].b, 0, data, (uint64_t)n * ir_scalar_size(s)) < 0) {
    drop_buffer(c, uid);
    return NULL;
  }
  c->st.copies_in++;
  return n_reshape(c, n_buffer(c, uid, n, s), sh);
}

static bool is_root(node u, const node *roots, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (roots[i] == u) return true;
  return false;
}

int t_run_kernels(bg_tctx *c, tkernel *ks, unsigned nk, const node *roots, unsigned nroots) {
  tmap pend = {0};        /* node id -> buffer uid, for the nodes this schedule realizes */
  size_t *prog = malloc((nk ? nk : 1) * sizeof *prog);  /* kernel -> its program in c->progs */
  if (!prog) return bg_error(BG_ENOMEM, "tensor: out of host memory running a schedule");
  int rc = t_compile_schedule(c, ks, nk, prog); /* every kernel compiled before the first runs */
  for (unsigned i = 0; i < nk && !rc; i++) {
    tkernel *k = &ks[i];
    int64_t uid = t_assign_target(k->out); /* an assign stores into its target (tassign.c) */
    if (uid >= 0 && (!c->bufs[uid].b || c->bufs[uid].numel != t_numel(t_shape(c, k->out)))) {
      rc = bg_error(BG_EINVAL, "tensor: assign target buffer %lld is freed or of another size", (long long)uid);
      break;
    }
    if (uid < 0 && (rc = t_new_buffer(c, IR_DT_SCALAR(k->out->dt), t_numel_max(c, t_shape(c, k->out)), &uid)) < 0) break;
    tmap_ent *e = tmap_put(&pend, k->out->id, 0);
    if (!e) {
      if (t_assign_target(k->out) < 0) drop_buffer(c, uid);
      rc = bg_error(BG_ENOMEM, "tensor: out of host memory running a schedule");
      break;
    }
    e->v = (uint64_t)uid;
    if (!k->k) continue; /* empty tensor */
    tprog *p = &c->progs[prog[i]];
    bg_buf *bufs[48];
    int64_t uids[48];
    uint64_t vals[16];
    bufs[0] = c->bufs[uid].b;
    uids[0] = uid;
    for (unsigned j = 0; j < k->nin; j++) {
      node in = k->in[j];
      int64_t src = in->op == IR_BUFFER ? ((const tbuf_arg *)(const void *)in->arg.b->data)->uid
                                        : (int64_t)tmap_get(&pend, in->id, 0)->v;
      bufs[j + 1] = c->bufs[src].b;
      uids[j + 1] = src;
    }
    for (unsigned v = 0; v < p->k.nvars; v++) vals[v] = (uint64_t)t_kernel_var_value(c, k, c->vars[p->vid[v]].name);
    BG_LOG(2, "tensor: run %s (%u buffers, %u variables, global %u,%u,%u)", p->k.name, k->nin + 1, p->k.nvars, p->k.gsz[0],
           p->k.gsz[1], p->k.gsz[2]);
    /* inputs another device wrote (bg_tn_to's transfers): wait for exactly those writes (hcq/peer.c) */
    if ((rc = bg_dev_wait_bufs(c->dev, bufs + 1, k->nin)) < 0) {
      bg_error_context(rc, "tensor: %s waiting for its inputs: ", p->k.name);
      break;
    }
    if ((rc = bg_program_run(p->prg, bufs, k->nin + 1u, vals, p->k.nvars, p->k.gsz, p->k.lsz, false, NULL)) < 0) {
      bg_error_context(rc, "tensor: running %s: ", p->k.name);
      break;
    }
    if (c->cap && (rc = t_jit_record(c, (size_t)(p - c->progs), uids, k->nin + 1u, vals)) < 0) break;
    if (c->cap && t_assign_target(k->out) >= 0 && (rc = t_jit_assigned(c, uid)) < 0) break;
    c->st.kernels_run++;
    if (c->st.last_nkernels < 32) {
      snprintf(c->st.last_kernels[c->st.last_nkernels], sizeof c->st.last_kernels[0], "%s", p->k.name);
    }
    c->st.last_nkernels++;
  }
  /* keep what a root or a handle refers to; free the rest (every buffer on failure) */
  for (unsigned i = 0; i < nk; i++) {
    tmap_ent *e = tmap_get(&pend, ks[i].out->id, 0);
    if (!e) continue;
    node u = ks[i].out;
    if (t_assign_target(u) >= 0) { /* the target's buffer: its owner's, never freed or kept here */
      node v = rc ? NULL : t_buffer_fresh(c, (int64_t)e->v, t_shape(c, u));
      if (v && t_tables(c)) t_set_real(c, u, v);
      else if (!rc) rc = bg_error(BG_ENOMEM, "tensor: out of host memory");
    } else if (!rc && (is_root(u, roots, nroots) || t_has_handle(c, u))) {
      node v = view_of(c, (int64_t)e->v, u);
      if (v && t_tables(c)) t_set_real(c, u, v);
      else rc = bg_error(BG_ENOMEM, "tensor: out of host memory");
      if (!rc && c->cap) rc = t_jit_made(c, u); /* not recomputed by the rest of the capture */
    } else if (!rc && c->cap) {
      rc = t_jit_keep(c, (int64_t)e->v); /* a replay writes and reads it again */
    } else {
      drop_buffer(c, (int64_t)e->v);
    }
  }
  tmap_free(&pend);
  free(prog);
  return rc;
}

int bg_tn_realize(bg_tensor *const *ts, unsigned n) {
  if (!n) return 0;
  if (!ts || !ts[0]) return bg_error(BG_EINVAL, "realize: NULL tensor");
  bg_tctx *c = ts[0]->c;
  node roots[64], *rs = n <= 64 ? roots : malloc(n * sizeof *rs);
  if (!rs) return bg_error(BG_ENOMEM, "realize: out of host memory");
  unsigned nr = 0;
  int rc = 0;
  c->st.last_nkernels = 0;
  for (unsigned i = 0; i < n && !rc; i++) {
    if (!ts[i] || ts[i]->c != c) rc = bg_error(BG_EINVAL, "realize: tensor %u is NULL or from another context", i);
    else if (!ts[i]->u)
      rc = bg_error(BG_EINVAL, "realize: tensor %u is the error tensor: %s", i, c->has_err ? c->err : "an earlier op failed");
  }
  if (!rc && c->has_err) rc = bg_error(BG_EINVAL, "realize: %s", c->err);
  for (unsigned i = 0; i < n && !rc; i++) {
    node u = t_node(ts[i]);
    if (t_is_view(u) || is_root(u, rs, nr)) continue;
    rs[nr++] = u;
  }
  if (!rc && nr) rc = t_realize(c, rs, nr);
  if (rs != roots) free(rs);
  return rc;
}

int bg_tn_read(bg_tensor *t, void *dst, size_t cap) {
  int rc = bg_tn_realize(&t, 1);
  if (rc < 0) return rc;
  bg_tctx *c = t->c;
  node u = t_node(t);
  uint64_t bytes = (uint64_t)bg_tn_numel(t) * bg_dtype_size(t->dt);
  if (cap < bytes) return bg_error(BG_EINVAL, "read: destination holds %zu bytes, the tensor has %llu", cap, (unsigned long long)bytes);
  if (!bytes) return 0;
  if (!dst) return bg_error(BG_EINVAL, "read: NULL destination");
  int64_t uid = ((const tbuf_arg *)(const void *)t_view_buffer(u)->arg.b->data)->uid;
  if ((rc = bg_dev_synchronize(c->dev, 0)) < 0 || (rc = bg_buf_read(c->bufs[uid].b, 0, dst, bytes)) < 0)
    return bg_error_context(rc, "read: ");
  c->st.copies_out++;
  return 0;
}

/* Realized, a tensor is a view of a whole buffer of its context (as bg_tn_read relies on). */
int bg_tn_buffer(bg_tensor *t, bg_buf **buf) {
  if (!t) return bg_error(BG_EINVAL, "bg_tn_buffer: tensor argument 't' is NULL");
  if (!buf) return bg_error(BG_EINVAL, "bg_tn_buffer: 'buf' is NULL");
  int rc = bg_tn_realize(&t, 1);
  if (rc < 0) return rc;
  bg_tctx *c = t->c;
  node u = t_node(t);
  if (!t_is_view(u)) {
    t_fail(c, "bg_tn_buffer: the realized tensor is not a whole buffer (take bg_tn_contiguous first)");
    return -BG_EINVAL;
  }
  if ((rc = bg_dev_synchronize(c->dev, 0)) < 0) return bg_error_context(rc, "bg_tn_buffer: ");
  *buf = c->bufs[((const tbuf_arg *)(const void *)t_view_buffer(u)->arg.b->data)->uid].b;
  return 0;
}

int bg_tn_item(bg_tensor *t, double *out) {
  if (!t) return bg_error(BG_EINVAL, "item: NULL tensor");
  if (t->u && bg_tn_numel(t) != 1) {
    tshape s = t_mkshape(t->ndim, t->shape);
    char ss[160];
    t_shape_str(&s, ss, sizeof ss);
    return bg_error(BG_EINVAL, "item: tensor of shape %s has %lld elements, expected 1", ss, (long long)bg_tn_numel(t));
  }
  uint8_t v[8] = {0};
  int rc = bg_tn_read(t, v, sizeof v);
  if (rc < 0) return rc;
  *out = t_value_double(t_scalar(t->dt), v);
  return 0;
}
