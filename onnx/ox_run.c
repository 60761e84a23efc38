/* onnx/ox_run.c: bg_onnx_run — the graph's nodes, in file order (ONNX requires a topological order), each mapped by
 * its handler to lazy tensors; and what handlers share: errors naming the node, inputs, outputs, attributes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ox.h"

static int node_msg(ox_ctx *x, int code, const char *fmt, va_list ap) {
  char msg[768];
  vsnprintf(msg, sizeof msg, fmt, ap);
  const Onnx__NodeProto *n = x->node->pb;
  return ox_model_err(x->m, code, "node %zu (%s '%s'): %s", x->index, n->op_type, n->name ? n->name : "", msg);
}

int ox_err(ox_ctx *x, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = node_msg(x, code, fmt, ap);
  va_end(ap);
  return r;
}

int ox_unsup(ox_ctx *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = node_msg(x, BG_ENOTSUP, fmt, ap);
  va_end(ap);
  return r;
}

int ox_check(ox_ctx *x) {
  const char *e = bg_tctx_error(x->c);
  if (!e) return 0;
  int r = ox_err(x, BG_EINVAL, "%s", e);
  return r;
}

bool ox_has(ox_ctx *x, unsigned i) { return i < x->nin && x->node->in[i] >= 0; }

bg_tensor *ox_in(ox_ctx *x, unsigned i) { return ox_has(x, i) ? x->vals[x->node->in[i]].t : NULL; }

int ox_set_ints(ox_ctx *x, unsigned i, bg_tensor *t, const int64_t *v, size_t n) {
  if (!t) return ox_err(x, BG_EINVAL, "output %u: %s", i, bg_last_error());
  int r = ox_check(x);
  if (r < 0) return r;
  if (i >= x->nout || x->node->out[i] < 0) return 0;
  ox_val *o = &x->vals[x->node->out[i]];
  free(o->ints);
  o->ints = NULL;
  o->have_ints = false;
  o->t = t;
  if (v) {
    o->ints = malloc((n ? n : 1) * sizeof *o->ints);
    if (!o->ints) return ox_err(x, BG_ENOMEM, "out of host memory");
    memcpy(o->ints, v, n * sizeof *v);
    o->nints = n;
    o->have_ints = true;
  }
  return 0;
}

int ox_set(ox_ctx *x, unsigned i, bg_tensor *t) { return ox_set_ints(x, i, t, NULL, 0); }

int ox_ints(ox_ctx *x, unsigned i, int64_t *out, size_t cap, size_t *n) {
  *n = 0;
  if (!ox_has(x, i)) return ox_err(x, BG_EFORMAT, "input %u is missing", i);
  ox_val *v = &x->vals[x->node->in[i]];
  if (v->have_ints) {
    if (v->nints > cap) return ox_unsup(x, "input %u has %zu elements, at most %zu read on the host", i, v->nints, cap);
    memcpy(out, v->ints, v->nints * sizeof *out);
    *n = v->nints;
    return 0;
  }
  /* computed on the device: realize and read (an integer tensor of a shape or axes, small) */
  bg_tensor *t = v->t;
  int64_t ne = bg_tn_numel(t);
  if (ne < 0 || (size_t)ne > cap) return ox_unsup(x, "input %u has %lld elements, at most %zu read on the host", i,
                                                  (long long)ne, cap);
  enum bg_dtype dt = bg_tn_dtype(t);
  if (ox_is_float(dt)) return ox_err(x, BG_EFORMAT, "input %u is %s, expected an integer tensor", i, bg_dtype_name(dt));
  unsigned es = bg_dtype_size(dt);
  uint8_t *buf = malloc((size_t)(ne ? ne : 1) * es);
  if (!buf) return ox_err(x, BG_ENOMEM, "out of host memory");
  int r = ne ? bg_tn_read(t, buf, (size_t)ne * es) : 0;
  if (r < 0) {
    free(buf);
    return ox_err(x, r, "reading input %u on the host: %s", i, bg_last_error());
  }
  for (int64_t k = 0; k < ne; k++) {
    const uint8_t *p = buf + k * es;
    switch (dt) {
    case BG_BOOL: case BG_UINT8: out[k] = *p; break;
    case BG_INT8: out[k] = (int8_t)*p; break;
    case BG_INT16: { int16_t s; memcpy(&s, p, 2); out[k] = s; break; }
    case BG_UINT16: { uint16_t s; memcpy(&s, p, 2); out[k] = s; break; }
    case BG_INT32: { int32_t s; memcpy(&s, p, 4); out[k] = s; break; }
    case BG_UINT32: { uint32_t s; memcpy(&s, p, 4); out[k] = s; break; }
    default: memcpy(&out[k], p, 8); break;
    }
  }
  free(buf);
  *n = (size_t)ne;
  return 0;
}

int ox_scalar(ox_ctx *x, unsigned i, double *v) {
  bg_tensor *t = ox_in(x, i);
  if (!t) return ox_err(x, BG_EFORMAT, "input %u is missing", i);
  if (bg_tn_numel(t) != 1) return ox_err(x, BG_EFORMAT, "input %u has %lld elements, expected 1", i,
                                         (long long)bg_tn_numel(t));
  ox_val *val = &x->vals[x->node->in[i]];
  if (val->have_ints) {
    *v = (double)val->ints[0];
    return 0;
  }
  int r = bg_tn_item(t, v);
  return r < 0 ? ox_err(x, r, "reading input %u on the host: %s", i, bg_last_error()) : 0;
}

int ox_axis(ox_ctx *x, int64_t axis, unsigned ndim, int *out) {
  if (axis < -(int64_t)ndim || axis >= (int64_t)ndim)
    return ox_err(x, BG_EFORMAT, "axis %lld out of range for rank %u", (long long)axis, ndim);
  *out = (int)(axis < 0 ? axis + ndim : axis);
  return 0;
}

/* ---- attributes ---- */
static const char *const attr_types[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS",
                                         "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS",
                                         "TYPE_PROTO", "TYPE_PROTOS"};

const Onnx__AttributeProto *ox_attr(ox_ctx *x, const char *name) {
  const Onnx__NodeProto *n = x->node->pb;
  for (size_t i = 0; i < n->n_attribute; i++)
    if (!strcmp(n->attribute[i]->name, name)) return n->attribute[i];
  return NULL;
}

/* The attribute's type: the type field, else (IR version 1) guessed from the field present. */
static int attr_type(const Onnx__AttributeProto *a) {
  if (a->has_type) return (int)a->type;
  if (a->has_f) return 1;
  if (a->has_i) return 2;
  if (a->has_s) return 3;
  if (a->t) return 4;
  if (a->g) return 5;
  if (a->n_floats) return 6;
  if (a->n_ints) return 7;
  if (a->n_strings) return 8;
  return 0;
}

static int want(ox_ctx *x, const Onnx__AttributeProto *a, int type) {
  int t = attr_type(a);
  if (t == type) return 0;
  return ox_err(x, BG_EFORMAT, "attribute '%s' has type %s, expected %s", a->name,
                t >= 0 && t < 15 ? attr_types[t] : "unknown", attr_types[type]);
}

int ox_attr_int(ox_ctx *x, const char *name, int64_t def, int64_t *v) {
  const Onnx__AttributeProto *a = ox_attr(x, name);
  *v = def;
  if (!a) return 0;
  int r = want(x, a, 2);
  if (r < 0) return r;
  *v = a->i;
  return 0;
}

int ox_attr_float(ox_ctx *x, const char *name, double def, double *v) {
  const Onnx__AttributeProto *a = ox_attr(x, name);
  *v = def;
  if (!a) return 0;
  int r = want(x, a, 1);
  if (r < 0) return r;
  *v = a->f;
  return 0;
}

int ox_attr_ints(ox_ctx *x, const char *name, int64_t *out, size_t cap, size_t *n) {
  const Onnx__AttributeProto *a = ox_attr(x, name);
  *n = 0;
  if (!a) return 0;
  int r = want(x, a, 7);
  if (r < 0) return r;
  if (a->n_ints > cap) return ox_err(x, BG_EFORMAT, "attribute '%s' has %zu values, at most %zu", name, a->n_ints, cap);
  memcpy(out, a->ints, a->n_ints * sizeof *out);
  *n = a->n_ints;
  return 0;
}

int ox_attr_floats(ox_ctx *x, const char *name, float *out, size_t cap, size_t *n) {
  const Onnx__AttributeProto *a = ox_attr(x, name);
  *n = 0;
  if (!a) return 0;
  int r = want(x, a, 6);
  if (r < 0) return r;
  if (a->n_floats > cap)
    return ox_err(x, BG_EFORMAT, "attribute '%s' has %zu values, at most %zu", name, a->n_floats, cap);
  memcpy(out, a->floats, a->n_floats * sizeof *out);
  *n = a->n_floats;
  return 0;
}

int ox_attr_string(ox_ctx *x, const char *name, const char *def, char *out, size_t cap) {
  const Onnx__AttributeProto *a = ox_attr(x, name);
  snprintf(out, cap, "%s", def);
  if (!a) return 0;
  int r = want(x, a, 3);
  if (r < 0) return r;
  if (a->s.len >= cap) return ox_err(x, BG_EFORMAT, "attribute '%s' is %zu bytes long, at most %zu", name, a->s.len,
                                     cap - 1);
  if (a->s.len) memcpy(out, a->s.data, a->s.len);
  out[a->s.len] = 0;
  return 0;
}

/* ---- the run ---- */
int bg_onnx_run(bg_onnx_model *m, bg_tensor *const *inputs, unsigned nin, bg_tensor **outputs) {
  if (!m || !outputs || (nin && !inputs)) return bg_error(BG_EINVAL, "onnx: bg_onnx_run: a NULL argument");
  if (nin != m->nin) return ox_model_err(m, BG_EINVAL, "bg_onnx_run: %u inputs given, the model has %u", nin, m->nin);
  for (unsigned i = 0; i < m->nin; i++) {
    const ox_io *io = &m->in[i];
    if (io->unsup > 0) return ox_model_err(m, BG_ENOTSUP, "graph input '%s' is %s", io->name, io->why);
    if (!inputs[i] || bg_tn_ctx(inputs[i]) != m->c)
      return ox_model_err(m, BG_EINVAL, "bg_onnx_run: input %u ('%s') is NULL or of another context", i, io->name);
    if (bg_tn_dtype(inputs[i]) != io->dt)
      return ox_model_err(m, BG_EINVAL, "input '%s' is %s, the model declares %s", io->name,
                          bg_dtype_name(bg_tn_dtype(inputs[i])), bg_dtype_name(io->dt));
    /* declared shapes are not enforced: ONNX's runner does not check them either, and its 1.12 test data has inputs
     * that differ from their declaration (CastLike's 'like') */
  }
  for (unsigned i = 0; i < m->nout; i++)
    if (m->out[i].unsup > 0) return ox_model_err(m, BG_ENOTSUP, "graph output '%s' is %s", m->out[i].name,
                                                 m->out[i].why);
  ox_val *vals = calloc(m->nvals + 1, sizeof *vals);
  if (!vals) return ox_model_err(m, BG_ENOMEM, "out of host memory");
  for (size_t v = 0; v < m->nvals; v++) vals[v].t = m->init[v].t;
  for (size_t v = 0; v < m->nvals; v++)
    if (m->init[v].have_ints) {
      vals[v].ints = malloc((m->init[v].nints ? m->init[v].nints : 1) * sizeof(int64_t));
      if (vals[v].ints) {
        memcpy(vals[v].ints, m->init[v].ints, m->init[v].nints * sizeof(int64_t));
        vals[v].nints = m->init[v].nints;
        vals[v].have_ints = true;
      }
    }
  for (unsigned i = 0; i < m->nin; i++) {
    ox_val *v = &vals[m->in[i].val];
    v->t = inputs[i];
    free(v->ints);
    v->ints = NULL;
    v->have_ints = false;
  }
  int r = 0;
  for (size_t n = 0; n < m->nnodes && r >= 0; n++) {
    ox_ctx x = {.m = m, .c = m->c, .node = &m->nodes[n], .index = n, .vals = vals,
                .nin = (unsigned)m->nodes[n].pb->n_input, .nout = (unsigned)m->nodes[n].pb->n_output};
    for (unsigned i = 0; i < x.nin && r >= 0; i++)
      if (x.node->in[i] >= 0 && !vals[x.node->in[i]].t)
        r = ox_err(&x, BG_EFORMAT, "input %u '%s' is used before a node produces it", i, x.node->pb->input[i]);
    if (r >= 0) r = x.node->op->fn(&x);
    if (r >= 0) r = ox_check(&x);
    for (unsigned i = 0; i < x.nout && r >= 0; i++)
      if (x.node->out[i] >= 0 && !vals[x.node->out[i]].t)
        r = ox_err(&x, BG_ENOTSUP, "output %u '%s' is not produced by this implementation", i, x.node->pb->output[i]);
  }
  for (unsigned i = 0; i < m->nout && r >= 0; i++) {
    outputs[i] = vals[m->out[i].val].t;
    if (!outputs[i]) r = ox_model_err(m, BG_EFORMAT, "graph output '%s' was never produced", m->out[i].name);
  }
  for (size_t v = 0; v < m->nvals; v++) free(vals[v].ints);
  free(vals);
  return r < 0 ? r : 0;
}
