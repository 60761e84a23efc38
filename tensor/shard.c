/* tensor/shard.c: meshes (one context per device) and sharded tensors (baregpu/tensor.h "several devices"): split or
 * replicate a tensor over a mesh, wrap per-device tensors, gather, realize and read. Device i holds the i-th chunk of
 * ceil(size/n) elements along the axis, as tinygrad's MultiLazyBuffer / Tensor.shard (tinygrad/multi.py). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/shard.h"
#include "tensor/tensor_internal.h"

int bg_mesh_open(const char *const *devs, unsigned n, bg_mesh **out) {
  if (!out) return bg_error(BG_EINVAL, "mesh_open: out is NULL");
  *out = NULL;
  if (!devs || n < 1 || n > BG_MESH_MAX) return bg_error(BG_EINVAL, "mesh_open: %u devices, expected 1..%d", n, BG_MESH_MAX);
  bg_mesh *m = calloc(1, sizeof *m);
  if (!m) return bg_error(BG_ENOMEM, "mesh_open: out of host memory");
  m->err_s.m = m;
  m->err_s.dead = true;
  for (unsigned i = 0; i < n; i++) {
    int r = bg_tctx_open(devs[i], &m->c[i]);
    if (r < 0) {
      bg_error_context(r, "mesh_open: device %u (%s): ", i, devs[i] ? devs[i] : "default");
      for (unsigned k = 0; k < i; k++) bg_tctx_close(m->c[k]);
      free(m);
      return r;
    }
    m->n = i + 1;
  }
  *out = m;
  return 0;
}

void bg_mesh_close(bg_mesh *m) {
  if (!m) return;
  for (bg_sharded *s = m->list, *next; s; s = next) {
    next = s->next;
    free(s);
  }
  for (unsigned i = 0; i < m->n; i++) bg_tctx_close(m->c[i]);
  free(m);
}

unsigned bg_mesh_size(const bg_mesh *m) { return m ? m->n : 0; }
bg_tctx *bg_mesh_ctx(const bg_mesh *m, unsigned i) { return m && i < m->n ? m->c[i] : NULL; }
const char *bg_mesh_error(const bg_mesh *m) { return m && m->has_err ? m->err : NULL; }

bg_sharded *sh_fail(bg_mesh *m, const char *fmt, ...) {
  char msg[sizeof m->err];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  bg_error(BG_EINVAL, "%s", msg);
  if (!m->has_err) {
    memcpy(m->err, msg, sizeof m->err);
    m->has_err = true;
    BG_LOG(1, "tensor: mesh: %s", m->err);
  }
  return &m->err_s;
}

void sh_str(const bg_sharded *s, char *buf, size_t n) {
  tshape sh = t_mkshape(s->ndim, s->shape);
  SHSTR(ss, &sh);
  if (s->axis == BG_SHARD_REPLICATED) snprintf(buf, n, "%s replicated on a mesh of %u", ss, s->m->n);
  else snprintf(buf, n, "%s split along axis %d on a mesh of %u", ss, s->axis, s->m->n);
}

bool sh_ok(const char *op, const bg_sharded *s) {
  if (!s) {
    bg_error(BG_EINVAL, "%s: sharded tensor argument is NULL", op);
    return false;
  }
  if (s->dead) {
    bg_error(BG_EINVAL, "%s: the sharded tensor is the error tensor: %s", op, s->m->has_err ? s->m->err : "an earlier op failed");
    return false;
  }
  return true;
}

void sh_chunk(const bg_sharded *s, unsigned i, int64_t *start, int64_t *len) {
  *start = 0;
  *len = s->axis == BG_SHARD_REPLICATED ? 0 : s->parts[i]->shape[s->axis];
  for (unsigned k = 0; k < i && s->axis != BG_SHARD_REPLICATED; k++) *start += s->parts[k]->shape[s->axis];
}

bg_sharded *sh_make(bg_mesh *m, const char *op, bg_tensor *const *parts, int axis) {
  for (unsigned i = 0; i < m->n; i++) {
    if (!parts[i]) return sh_fail(m, "%s: part %u is NULL", op, i);
    if (parts[i]->c != m->c[i])
      return sh_fail(m, "%s: part %u is a tensor of %s, expected one of context %u (%s)", op, i,
                     bg_tctx_device(parts[i]->c), i, bg_tctx_device(m->c[i]));
    if (t_dead(parts[i]))
      return sh_fail(m, "%s: device %u (%s): %s", op, i, bg_tctx_device(m->c[i]),
                     m->c[i]->has_err ? m->c[i]->err : "an earlier op failed");
  }
  const bg_tensor *p0 = parts[0];
  tshape s0 = t_shape_of(p0);
  SHSTR(ss0, &s0);
  if (axis != BG_SHARD_REPLICATED && (axis < 0 || (unsigned)axis >= p0->ndim))
    return sh_fail(m, "%s: axis %d out of range for part shape %s", op, axis, ss0);
  bg_sharded *s = calloc(1, sizeof *s);
  if (!s) return sh_fail(m, "%s: out of host memory", op);
  s->m = m;
  s->axis = axis;
  s->ndim = p0->ndim;
  memcpy(s->shape, p0->shape, sizeof s->shape);
  if (axis != BG_SHARD_REPLICATED) s->shape[axis] = 0;
  for (unsigned i = 0; i < m->n; i++) {
    const bg_tensor *p = parts[i];
    tshape si = t_shape_of(p);
    SHSTR(ssi, &si);
    bool same = p->ndim == p0->ndim;
    for (unsigned d = 0; d < p0->ndim && same; d++) same = (int)d == axis || p->shape[d] == p0->shape[d];
    if (!same || p->dt != p0->dt) {
      free(s);
      if (axis == BG_SHARD_REPLICATED)
        return sh_fail(m, "%s: replicated part %u is %s %s, part 0 %s %s; expected equal", op, i, ssi, bg_dtype_name(p->dt),
                       ss0, bg_dtype_name(p0->dt));
      return sh_fail(m, "%s: part %u is %s %s, part 0 %s %s; expected equal off axis %d", op, i, ssi, bg_dtype_name(p->dt),
                     ss0, bg_dtype_name(p0->dt), axis);
    }
    s->parts[i] = parts[i];
    if (axis != BG_SHARD_REPLICATED) s->shape[axis] += p->shape[axis];
  }
  s->next = m->list;
  m->list = s;
  return s;
}

bg_sharded *bg_tn_shard(bg_mesh *m, bg_tensor *t, int axis) {
  if (!m) {
    bg_error(BG_EINVAL, "shard: mesh is NULL");
    return NULL;
  }
  if (!t) return sh_fail(m, "shard: tensor argument 't' is NULL");
  if (t_dead(t)) return sh_fail(m, "shard: the tensor is the error tensor of %s: %s", bg_tctx_device(t->c),
                                t->c->has_err ? t->c->err : "an earlier op failed");
  tshape sh = t_shape_of(t);
  SHSTR(ss, &sh);
  bg_tensor *parts[BG_MESH_MAX];
  if (axis == BG_SHARD_REPLICATED) {
    for (unsigned i = 0; i < m->n; i++) parts[i] = bg_tn_to(t, m->c[i]);
    return sh_make(m, "shard", parts, axis);
  }
  if (axis < -(int)sh.n || axis >= (int)sh.n)
    return sh_fail(m, "shard: axis %d out of range for shape %s (expected -%u..%u or BG_SHARD_REPLICATED)", axis, ss, sh.n,
                   sh.n ? sh.n - 1 : 0);
  unsigned ax = (unsigned)(axis < 0 ? axis + (int)sh.n : axis);
  int64_t size = sh.d[ax], chunk = (size + m->n - 1) / m->n;
  if (BG_DIM_IS_VAR(size)) return sh_fail(m, "shard: axis %u of %s is symbolic", ax, ss);
  if ((int64_t)(m->n - 1) * chunk >= size)
    return sh_fail(m, "shard: axis %u of %s has %lld elements: %u devices would leave a chunk of ceil(%lld/%u) = %lld empty",
                   ax, ss, (long long)size, m->n, (long long)size, m->n, (long long)chunk);
  for (unsigned i = 0; i < m->n; i++) {
    int64_t b[BG_MAX_DIMS][2];
    for (unsigned d = 0; d < sh.n; d++) b[d][0] = 0, b[d][1] = sh.d[d];
    b[ax][0] = (int64_t)i * chunk;
    b[ax][1] = i + 1 == m->n ? size : (int64_t)(i + 1) * chunk;
    parts[i] = bg_tn_to(bg_tn_shrink(t, b), m->c[i]);
  }
  return sh_make(m, "shard", parts, (int)ax);
}

bg_sharded *bg_sh_from(bg_mesh *m, bg_tensor *const *parts, int axis) {
  if (!m) {
    bg_error(BG_EINVAL, "sh_from: mesh is NULL");
    return NULL;
  }
  if (!parts) return sh_fail(m, "sh_from: parts is NULL");
  if (parts[0] && axis < 0 && axis != BG_SHARD_REPLICATED && axis >= -(int)parts[0]->ndim) axis += (int)parts[0]->ndim;
  return sh_make(m, "sh_from", parts, axis);
}

bg_tensor *bg_sh_part(const bg_sharded *s, unsigned i) { return s && !s->dead && i < s->m->n ? s->parts[i] : NULL; }
int bg_sh_axis(const bg_sharded *s) { return s ? s->axis : BG_SHARD_REPLICATED; }
unsigned bg_sh_ndim(const bg_sharded *s) { return s && !s->dead ? s->ndim : 0; }
const int64_t *bg_sh_shape(const bg_sharded *s) { return s ? s->shape : NULL; }

bg_tensor *bg_sh_gather(bg_sharded *s, bg_tctx *dst) {
  if (!dst) {
    bg_error(BG_EINVAL, "sh_gather: destination context is NULL");
    return NULL;
  }
  if (!sh_ok("sh_gather", s)) return t_fail(dst, "%s", bg_last_error());
  if (s->axis == BG_SHARD_REPLICATED) return bg_tn_to(s->parts[0], dst);
  bg_tensor *ts[BG_MESH_MAX];
  for (unsigned i = 0; i < s->m->n; i++) ts[i] = bg_tn_to(s->parts[i], dst);
  return bg_tn_cat(ts, s->m->n, s->axis);
}

int bg_sh_realize(bg_sharded *const *s, unsigned n) {
  if (!n) return 0;
  if (!s) return bg_error(BG_EINVAL, "sh_realize: the array is NULL");
  for (unsigned k = 0; k < n; k++) {
    if (!sh_ok("sh_realize", s[k])) return -BG_EINVAL;
    if (s[k]->m != s[0]->m) return bg_error(BG_EINVAL, "sh_realize: tensor %u is of another mesh than tensor 0", k);
  }
  bg_mesh *m = s[0]->m;
  bg_tensor *stack[16], **ts = n <= 16 ? stack : malloc(n * sizeof *ts);
  if (!ts) return bg_error(BG_ENOMEM, "sh_realize: out of host memory");
  int r = 0;
  for (unsigned i = 0; i < m->n && !r; i++) {
    for (unsigned k = 0; k < n; k++) ts[k] = s[k]->parts[i];
    if ((r = bg_tn_realize(ts, n)) < 0) {
      bg_error_context(r, "sh_realize: device %u (%s): ", i, bg_tctx_device(m->c[i]));
      sh_fail(m, "%s", bg_last_error());
    }
  }
  if (ts != stack) free(ts);
  return r;
}

int bg_sh_read(bg_sharded *s, void *dst, size_t cap) {
  if (!sh_ok("sh_read", s)) return -BG_EINVAL;
  bg_tensor *g = bg_sh_gather(s, s->m->c[0]);
  if (!g || t_dead(g)) return bg_error(BG_EINVAL, "sh_read: gathering: %s", bg_tctx_error(s->m->c[0]));
  return bg_tn_read(g, dst, cap);
}
