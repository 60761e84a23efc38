/* onnx/ox_load.c: bg_onnx_load — parse a ModelProto (protobuf-c, code generated from onnx/onnx.proto), check the
 * graph (operators known at the model's opset, names defined before use, supported types) and index its values. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ox.h"
#include "util/fd_io.h"

int ox_model_err(const bg_onnx_model *m, int code, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (code == BG_ENOTSUP) return bg_error(code, "unsupported: onnx: %s: %s", m->name, msg);
  return bg_error(code, "onnx: %s: %s", m->name, msg);
}

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;   /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Index of name in the value table, adding it when add; -1 when absent (and not added). */
static int val_index(bg_onnx_model *m, const char *name, bool add) {
  size_t mask = m->hcap - 1;
  for (size_t i = hash_str(name) & mask;; i = (i + 1) & mask) {
    int v = m->hash[i];
    if (v < 0) {
      if (!add) return -1;
      m->hash[i] = (int)m->nvals;
      m->val_names[m->nvals] = (char *)name;
      return (int)m->nvals++;
    }
    if (!strcmp(m->val_names[v], name)) return v;
  }
}

static const char *type_case_name(Onnx__TypeProto__ValueCase vc) {
  switch (vc) {
  case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "a sequence";
  case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return "a map";
  case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "an optional";
  case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "a sparse tensor";
  default: return "no type";
  }
}

static int load_io(bg_onnx_model *m, const Onnx__ValueInfoProto *vi, const char *kind, unsigned idx, ox_io *io) {
  if (!vi->name || !vi->name[0]) return ox_model_err(m, BG_EFORMAT, "graph %s %u has no name", kind, idx);
  io->name = vi->name;
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
    if (tp && tp->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET) {
      io->unsup = 1;
      io->why = type_case_name(tp->value_case);
      return 0;
    }
    io->dt = BG_FLOAT32;   /* untyped (allowed for outputs of old models): unknown shape */
    io->ndim = 0;
    io->unsup = 0;
    io->shape[0] = -1;
    io->why = NULL;
    io->unsup = -1;        /* -1: no declared type */
    return 0;
  }
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  int r = ox_dtype(tt->has_elem_type ? tt->elem_type : 0, &io->dt, &io->why);
  if (r < 0) {
    io->unsup = 1;
    return 0;
  }
  if (tt->shape) {
    if (tt->shape->n_dim > BG_MAX_DIMS) {
      io->unsup = 1;
      io->why = "more than 8 dimensions";
      return 0;
    }
    io->ndim = (unsigned)tt->shape->n_dim;
    for (unsigned d = 0; d < io->ndim; d++) {
      const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[d];
      io->shape[d] = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? dm->dim_value : -1;
    }
  } else {
    io->unsup = -1;
  }
  return 0;
}

static int check_graph(bg_onnx_model *m) {
  const Onnx__ModelProto *pb = m->pb;
  const Onnx__GraphProto *g = pb->graph;
  if (!g) return ox_model_err(m, BG_EFORMAT, "ModelProto.graph (field 7) is missing");
  if (pb->n_training_info) return ox_model_err(m, BG_ENOTSUP, "training_info (training graphs)");
  if (g->n_sparse_initializer) return ox_model_err(m, BG_ENOTSUP, "sparse initializers");
  /* The default domain's opset ("" or "ai.onnx"); other domains are used only by their nodes. */
  m->opset = -1;
  for (size_t i = 0; i < pb->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = pb->opset_import[i];
    if ((!o->domain || !o->domain[0] || !strcmp(o->domain, "ai.onnx")) && o->has_version) m->opset = o->version;
  }
  if (m->opset < 0 && !pb->n_opset_import) m->opset = 1;   /* IR version 2 models had no opset_import */
  size_t cap = g->n_initializer + g->n_input + g->n_output;
  for (size_t i = 0; i < g->n_node; i++) cap += g->node[i]->n_output + g->node[i]->n_input;
  m->val_names = calloc(cap + 1, sizeof *m->val_names);
  m->hcap = 16;
  while (m->hcap < 2 * (cap + 1)) m->hcap *= 2;
  m->hash = malloc(m->hcap * sizeof *m->hash);
  m->nodes = calloc(g->n_node + 1, sizeof *m->nodes);
  m->in = calloc(g->n_input + 1, sizeof *m->in);
  m->out = calloc(g->n_output + 1, sizeof *m->out);
  if (!m->val_names || !m->hash || !m->nodes || !m->in || !m->out)
    return ox_model_err(m, BG_ENOMEM, "out of host memory indexing the graph");
  memset(m->hash, 0xff, m->hcap * sizeof *m->hash);
  /* initializers first: a graph input of the same name is only its default (IR >= 4) */
  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *t = g->initializer[i];
    if (!t->name || !t->name[0]) return ox_model_err(m, BG_EFORMAT, "initializer %zu has no name", i);
    val_index(m, t->name, true);
  }
  size_t ninit = m->nvals;
  for (size_t i = 0; i < g->n_input; i++) {
    ox_io io = {0};
    int r = load_io(m, g->input[i], "input", (unsigned)i, &io);
    if (r < 0) return r;
    int v = val_index(m, io.name, true);
    if ((size_t)v < ninit) continue;   /* an initializer */
    io.val = v;
    m->in[m->nin++] = io;
  }
  for (size_t n = 0; n < g->n_node; n++) {
    const Onnx__NodeProto *np = g->node[n];
    ox_node *nd = &m->nodes[n];
    nd->pb = np;
    const char *op = np->op_type ? np->op_type : "";
    const char *nm = np->name ? np->name : "";
    if (!op[0]) return ox_model_err(m, BG_EFORMAT, "node %zu ('%s'): NodeProto.op_type (field 4) is empty", n, nm);
    if (np->domain && np->domain[0] && strcmp(np->domain, "ai.onnx"))
      return ox_model_err(m, BG_ENOTSUP, "node %zu (%s '%s'): operator domain '%s'", n, op, nm, np->domain);
    if (m->opset < 0)
      return ox_model_err(m, BG_EFORMAT, "node %zu (%s '%s'): ModelProto.opset_import has no version for the default "
                          "domain", n, op, nm);
    bool known = false;
    nd->op = ox_find_op(op, m->opset, &known);
    if (!nd->op) {
      if (known) return ox_model_err(m, BG_ENOTSUP, "node %zu (%s '%s'): %s at opset %lld", n, op, nm, op,
                                     (long long)m->opset);
      return ox_model_err(m, BG_ENOTSUP, "node %zu (%s '%s'): unknown operator %s", n, op, nm, op);
    }
    const ox_op *o = nd->op;
    if ((int)np->n_input < o->min_in || (o->max_in >= 0 && (int)np->n_input > o->max_in))
      return ox_model_err(m, BG_EFORMAT, "node %zu (%s '%s'): %zu inputs, expected %d to %d", n, op, nm, np->n_input,
                          o->min_in, o->max_in);
    if ((int)np->n_output < o->min_out || (o->max_out >= 0 && (int)np->n_output > o->max_out))
      return ox_model_err(m, BG_EFORMAT, "node %zu (%s '%s'): %zu outputs, expected %d to %d", n, op, nm,
                          np->n_output, o->min_out, o->max_out);
    for (size_t a = 0; a < np->n_attribute; a++) {
      const Onnx__AttributeProto *at = np->attribute[a];
      if (!at->name || !at->name[0])
        return ox_model_err(m, BG_EFORMAT, "node %zu (%s '%s'): attribute %zu has no name", n, op, nm, a);
      if (at->ref_attr_name && at->ref_attr_name[0])
        return ox_model_err(m, BG_EFORMAT, "node %zu (%s '%s'): attribute '%s' refers to a function's attribute "
                            "outside a function", n, op, nm, at->name);
    }
    nd->in = malloc((np->n_input + 1) * sizeof *nd->in);
    nd->out = malloc((np->n_output + 1) * sizeof *nd->out);
    m->nnodes = n + 1;   /* counted before any error below, so the model's free releases this node's arrays */
    if (!nd->in || !nd->out) return ox_model_err(m, BG_ENOMEM, "out of host memory indexing the graph");
    for (size_t i = 0; i < np->n_input; i++) {
      const char *s = np->input[i];
      if (!s[0]) {
        nd->in[i] = -1;
        continue;
      }
      nd->in[i] = val_index(m, s, false);
      if (nd->in[i] < 0)
        return ox_model_err(m, BG_EFORMAT, "node %zu (%s '%s'): input %zu '%s' is neither a graph input, an "
                            "initializer nor an output of an earlier node", n, op, nm, i, s);
    }
    for (size_t i = 0; i < np->n_output; i++) {
      const char *s = np->output[i];
      nd->out[i] = s[0] ? val_index(m, s, true) : -1;
    }
    m->nnodes = n + 1;
  }
  for (size_t i = 0; i < g->n_output; i++) {
    ox_io io = {0};
    int r = load_io(m, g->output[i], "output", (unsigned)i, &io);
    if (r < 0) return r;
    io.val = val_index(m, io.name, false);
    if (io.val < 0)
      return ox_model_err(m, BG_EFORMAT, "graph output %zu '%s' is produced by no node, input or initializer", i,
                          io.name);
    m->out[m->nout++] = io;
  }
  /* initializers as tensors of the context, made once (every run reuses them) */
  m->init = calloc(m->nvals + 1, sizeof *m->init);
  if (!m->init) return ox_model_err(m, BG_ENOMEM, "out of host memory");
  for (size_t i = 0; i < g->n_initializer; i++) {
    char where[160];
    snprintf(where, sizeof where, "initializer %zu '%s'", i, g->initializer[i]->name);
    int v = val_index(m, g->initializer[i]->name, false);
    int r = ox_tensor_from_proto(m, m->c, g->initializer[i], where, &m->init[v].t, &m->init[v]);
    if (r < 0) return r;
  }
  return 0;
}

int bg_onnx_load_buffer(bg_tctx *c, const void *data, size_t size, const char *name, const char *base_dir,
                        bg_onnx_model **out) {
  if (!out) return bg_error(BG_EINVAL, "onnx: bg_onnx_load_buffer: out is NULL");
  *out = NULL;
  if (!c || (!data && size)) return bg_error(BG_EINVAL, "onnx: bg_onnx_load_buffer: %s is NULL", c ? "data" : "c");
  bg_onnx_model *m = calloc(1, sizeof *m);
  if (!m) return bg_error(BG_ENOMEM, "onnx: out of host memory");
  m->c = c;
  m->name = strdup(name ? name : "<memory>");
  m->base_dir = base_dir ? strdup(base_dir) : NULL;
  if (!m->name || (base_dir && !m->base_dir)) {
    bg_onnx_free(m);
    return bg_error(BG_ENOMEM, "onnx: out of host memory");
  }
  m->pb = onnx__model_proto__unpack(NULL, size, data);
  if (!m->pb) {
    int r = ox_model_err(m, BG_EFORMAT, "not a valid ONNX ModelProto (%zu bytes): truncated or malformed protobuf "
                         "(a field's wire type, length or varint is wrong)", size);
    bg_onnx_free(m);
    return r;
  }
  int r = check_graph(m);
  if (r < 0) {
    bg_onnx_free(m);
    return r;
  }
  *out = m;
  return 0;
}

int ox_read_file(const char *path, uint8_t **out, size_t *size) {
  *out = NULL;
  *size = 0;
  int fd;
  int r = bg_open_regular(path, O_RDONLY, &fd);
  if (r < 0) return bg_error(BG_EINVAL, "onnx: %s", bg_last_error());
  struct stat st;
  if (fstat(fd, &st) < 0 || st.st_size < 0) {
    close(fd);
    return bg_error(BG_EIO, "onnx: %s: fstat failed", path);
  }
  size_t n = (size_t)st.st_size, got = 0;
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) {
    close(fd);
    return bg_error(BG_ENOMEM, "onnx: %s: out of host memory (%zu bytes)", path, n);
  }
  while (got < n) {
    ssize_t k = read(fd, buf + got, n - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += (size_t)k;
  }
  close(fd);
  if (got != n) {
    free(buf);
    return bg_error(BG_EIO, "onnx: %s: read %zu of %zu bytes", path, got, n);
  }
  *out = buf;
  *size = n;
  return 0;
}

int bg_onnx_load(bg_tctx *c, const char *path, bg_onnx_model **out) {
  if (!out) return bg_error(BG_EINVAL, "onnx: bg_onnx_load: out is NULL");
  *out = NULL;
  if (!path) return bg_error(BG_EINVAL, "onnx: bg_onnx_load: path is NULL");
  uint8_t *buf;
  size_t n;
  int r = ox_read_file(path, &buf, &n);
  if (r < 0) return r;
  char *dir = strdup(path);
  if (!dir) {
    free(buf);
    return bg_error(BG_ENOMEM, "onnx: out of host memory");
  }
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  else strcpy(dir, ".");
  r = bg_onnx_load_buffer(c, buf, n, path, dir, out);
  free(dir);
  free(buf);
  return r;
}

void bg_onnx_free(bg_onnx_model *m) {
  if (!m) return;
  for (size_t i = 0; i < m->nnodes; i++) {
    free(m->nodes[i].in);
    free(m->nodes[i].out);
  }
  if (m->init)
    for (size_t i = 0; i < m->nvals; i++) free(m->init[i].ints);
  free(m->init);
  free(m->nodes);
  free(m->in);
  free(m->out);
  free(m->hash);
  free(m->val_names);
  if (m->pb) onnx__model_proto__free_unpacked(m->pb, NULL);
  free(m->name);
  free(m->base_dir);
  free(m);
}

unsigned bg_onnx_num_inputs(const bg_onnx_model *m) { return m ? m->nin : 0; }
unsigned bg_onnx_num_outputs(const bg_onnx_model *m) { return m ? m->nout : 0; }
const char *bg_onnx_input_name(const bg_onnx_model *m, unsigned i) { return m && i < m->nin ? m->in[i].name : NULL; }
const char *bg_onnx_output_name(const bg_onnx_model *m, unsigned i) {
  return m && i < m->nout ? m->out[i].name : NULL;
}

static int io_info(const bg_onnx_model *m, const ox_io *io, unsigned n, unsigned i, const char *kind,
                   enum bg_dtype *dtype, unsigned *ndim, const int64_t **shape) {
  if (!m || i >= n) return bg_error(BG_EINVAL, "onnx: %s index %u out of range (%u)", kind, i, m ? n : 0);
  io += i;
  if (io->unsup > 0)
    return ox_model_err(m, BG_ENOTSUP, "graph %s '%s' is %s", kind, io->name, io->why ? io->why : "not a tensor");
  if (dtype) *dtype = io->dt;
  if (ndim) *ndim = io->unsup < 0 ? 0 : io->ndim;
  if (shape) *shape = io->shape;
  return io->unsup < 0 ? 1 : 0;
}

int bg_onnx_input_info(const bg_onnx_model *m, unsigned i, enum bg_dtype *dtype, unsigned *ndim,
                       const int64_t **shape) {
  int r = io_info(m, m ? m->in : NULL, m ? m->nin : 0, i, "input", dtype, ndim, shape);
  return r > 0 ? 0 : r;
}

int bg_onnx_output_info(const bg_onnx_model *m, unsigned i, enum bg_dtype *dtype, unsigned *ndim,
                        const int64_t **shape) {
  int r = io_info(m, m ? m->out : NULL, m ? m->nout : 0, i, "output", dtype, ndim, shape);
  return r > 0 ? 0 : r;
}
