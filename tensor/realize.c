/* tensor/realize.c: device buffers, the program cache, running a schedule, and the public
 * realize/read/item. Kernels are submitted back to back on the device timeline and synchronized
 * only when the host reads (or frees an intermediate buffer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/beam.h"
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

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
  return h;
}

/* Kernel name when the compiler leaves it empty: E_/r_ and the output extents. */
static void own_name(const bg_tctx *c, const tkernel *k, char *name, size_t n) {
  const tshape *sh = t_shape(c, k->out);
  size_t len = (size_t)snprintf(name, n, "%c", 'E');
  for (unsigned i = 0; i < sh->n && len < n; i++)
    if (sh->d[i] > 1) len += (size_t)snprintf(name + len, n - len, "_%lld", (long long)sh->d[i]);
}

/* The compiled program of a kernel: the printed AST (ids renumbered by ir_print) is the key, so
 * structurally equal kernels compile once per context. */
static int program_for(bg_tctx *c, tkernel *k, tprog **out) {
  char *key = NULL;
  size_t klen = 0;
  FILE *f = open_memstream(&key, &klen);
  if (!f) return bg_error(BG_ENOMEM, "tensor: out of host memory printing a kernel");
  int pr = ir_print(k->k, k->sink, f);
  fclose(f);
  if (pr < 0) {
    free(key);
    return bg_error(BG_ENOMEM, "tensor: printing a kernel: %s", ir_error(k->k));
  }
  uint64_t h = fnv1a(key, klen);
  for (size_t i = 0; i < c->nprogs; i++)
    if (c->progs[i].hash == h && strcmp(c->progs[i].key, key) == 0) {
      free(key);
      *out = &c->progs[i];
      return 0;
    }
  if (bg_debug_level() >= 4) fprintf(stderr, "tensor: kernel AST\n%s", key);
  if (c->nprogs == c->progs_cap) {
    size_t ncap = c->progs_cap ? c->progs_cap * 2 : 16;
    tprog *np = realloc(c->progs, ncap * sizeof *np);
    if (!np) {
      free(key);
      return bg_error(BG_ENOMEM, "tensor: out of host memory for a program");
    }
    c->progs = np;
    c->progs_cap = ncap;
  }
  tprog *p = &c->progs[c->nprogs];
  memset(p, 0, sizeof *p);
  bg_kopts beam_opts, *opts = NULL;  /* BEAM=N: searched (or cached) optimizations, compile/beam.c */
  int r = bg_beam_width();
  if (r > 0 && (r = bg_beam_opts(c->dev, k->k, k->sink, (unsigned)r, &beam_opts)) == 0) opts = &beam_opts;
  if (r < 0) {
    free(key);
    return bg_error_context(r, "tensor: BEAM search for the kernel of a %s: ", ir_op_name((enum ir_op)k->out->op));
  }
  r = bg_kernel_build(c->dev, k->k, k->sink, opts, &p->k, &p->prg);
  if (r < 0) {
    free(key);
    return bg_error_context(r, "tensor: compiling the kernel of a %s: ", ir_op_name((enum ir_op)k->out->op));
  }
  unsigned nmatched = 0;  /* each kernel variable is a context variable this kernel binds */
  for (unsigned v = 0; v < p->k.nvars && v < 16; v++) {
    const ir_var_info *vi = ir_var_get(p->k.vars[v]);
    p->vid[v] = -1;
    for (unsigned j = 0; vi && j < k->nvar; j++)
      if (!strcmp(c->vars[k->vid[j]].name, vi->name)) p->vid[v] = k->vid[j];
    nmatched += p->vid[v] >= 0;
  }
  if (p->k.nvars != nmatched || p->k.nbufs != k->nin + 1) {
    unsigned nb = p->k.nbufs, nv = p->k.nvars;
    bg_program_free(p->prg);
    bg_kernel_free(&p->k);
    free(key);
    return bg_error(BG_EINVAL, "tensor: kernel compiled to %u buffers and %u variables, expected %u and %u", nb, nv, k->nin + 1,
                    k->nvar);
  }
  if (!p->k.name[0]) own_name(c, k, p->k.name, sizeof p->k.name);
  for (int d = 0; d < 3; d++) {
    if (!p->k.gsz[d]) p->k.gsz[d] = 1;
    if (!p->k.lsz[d]) p->k.lsz[d] = 1;
  }
  p->hash = h;
  p->key = key;
  c->nprogs++;
  c->st.kernels_compiled++;
  *out = p;
  return 0;
}

static bool is_root(node u, const node *roots, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (roots[i] == u) return true;
  return false;
}

int t_run_kernels(bg_tctx *c, tkernel *ks, unsigned nk, const node *roots, unsigned nroots) {
  tmap pend = {0};        /* node id -> buffer uid, for the nodes this schedule realizes */
  int rc = 0;
  for (unsigned i = 0; i < nk && !rc; i++) {
    tkernel *k = &ks[i];
    int64_t uid;
    if ((rc = t_new_buffer(c, IR_DT_SCALAR(k->out->dt), t_numel_max(c, t_shape(c, k->out)), &uid)) < 0) break;
    tmap_ent *e = tmap_put(&pend, k->out->id, 0);
    if (!e) {
      drop_buffer(c, uid);
      rc = bg_error(BG_ENOMEM, "tensor: out of host memory running a schedule");
      break;
    }
    e->v = (uint64_t)uid;
    if (!k->k) continue; /* empty tensor */
    tprog *p = NULL;
    if ((rc = program_for(c, k, &p)) < 0) break;
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
    if ((rc = bg_program_run(p->prg, bufs, k->nin + 1u, vals, p->k.nvars, p->k.gsz, p->k.lsz, false, NULL)) < 0) {
      bg_error_context(rc, "tensor: running %s: ", p->k.name);
      break;
    }
    if (c->cap && (rc = t_jit_record(c, (size_t)(p - c->progs), uids, k->nin + 1u, vals)) < 0) break;
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
    if (!rc && (is_root(u, roots, nroots) || t_has_handle(c, u))) {
      node v = view_of(c, (int64_t)e->v, u);
      if (v && t_tables(c)) t_set_real(c, u, v);
      else rc = bg_error(BG_ENOMEM, "tensor: out of host memory");
    } else if (!rc && c->cap) {
      rc = t_jit_keep(c, (int64_t)e->v); /* a replay writes and reads it again */
    } else {
      drop_buffer(c, (int64_t)e->v);
    }
  }
  tmap_free(&pend);
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
