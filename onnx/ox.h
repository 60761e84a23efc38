/* onnx/ox.h: internals of the ONNX front end (onnx/README.md): the loaded model, the values of one run and the
 * operator table's handler interface. */
#ifndef BG_ONNX_OX_H
#define BG_ONNX_OX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baregpu/error.h"
#include "baregpu/onnx.h"
#include "baregpu/tensor.h"
#include "onnx/onnx.pb-c.h"

/* The model's graph inputs/outputs. */
typedef struct ox_io {
  const char *name;
  int val;                       /* index in the value table */
  int unsup;                     /* its type is not a supported tensor: the reason in why */
  const char *why;
  enum bg_dtype dt;
  unsigned ndim;
  int64_t shape[BG_MAX_DIMS];
} ox_io;

/* A value during a run: its tensor and, when known on the host (initializers, Constant, Shape and what small
 * integer arithmetic makes of them), its elements as int64 for the ops that read shapes and axes. */
typedef struct ox_val {
  bg_tensor *t;
  int64_t *ints;
  size_t nints;
  bool have_ints;
} ox_val;

typedef struct ox_ctx ox_ctx;
typedef int (*ox_fn)(ox_ctx *x);
typedef struct ox_op {
  const char *op_type;
  int since, until;              /* opset range the handler implements (until 0: open) */
  ox_fn fn;
  int min_in, max_in;            /* input count range (max -1: variadic) */
  int min_out, max_out;
} ox_op;

typedef struct ox_node {
  const Onnx__NodeProto *pb;
  const ox_op *op;
  int *in, *out;                 /* value indices; -1: an omitted optional input/output ("") */
} ox_node;

struct bg_onnx_model {
  bg_tctx *c;
  char *name, *base_dir;
  Onnx__ModelProto *pb;
  int64_t opset;
  size_t nvals;
  char **val_names;              /* borrowed from pb */
  int *hash;                     /* open addressing over val_names, size hcap */
  size_t hcap;
  ox_val *init;                  /* initializer values (t NULL: not an initializer) */
  ox_node *nodes;
  size_t nnodes;
  ox_io *in, *out;
  unsigned nin, nout;
};

/* One node's run. */
struct ox_ctx {
  bg_onnx_model *m;
  bg_tctx *c;
  const ox_node *node;
  size_t index;
  ox_val *vals;                  /* the run's value table */
  unsigned nin, nout;
};

/* ---- errors: "onnx: FILE: node I (OP 'NAME'): ..." ---- */
int ox_err(ox_ctx *x, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int ox_unsup(ox_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The context's latched error after building a node's tensors, as the node's error (0 when none). */
int ox_check(ox_ctx *x);

/* ---- inputs/outputs ---- */
bg_tensor *ox_in(ox_ctx *x, unsigned i);            /* NULL: absent (omitted or beyond nin) */
bool ox_has(ox_ctx *x, unsigned i);
int ox_set(ox_ctx *x, unsigned i, bg_tensor *t);    /* output i (an omitted output is dropped) */
int ox_set_ints(ox_ctx *x, unsigned i, bg_tensor *t, const int64_t *v, size_t n); /* with host elements */
/* Input i's elements as int64 on the host (realized and read when not known): at most cap, count in *n. */
int ox_ints(ox_ctx *x, unsigned i, int64_t *out, size_t cap, size_t *n);
int ox_scalar(ox_ctx *x, unsigned i, double *v);    /* a one-element input's value */

/* ---- attributes: absent -> def; present with another type -> -BG_EFORMAT naming the attribute ---- */
const Onnx__AttributeProto *ox_attr(ox_ctx *x, const char *name);
int ox_attr_int(ox_ctx *x, const char *name, int64_t def, int64_t *v);
int ox_attr_float(ox_ctx *x, const char *name, double def, double *v);
/* INTS: up to cap values into out, count in *n (0 when absent). */
int ox_attr_ints(ox_ctx *x, const char *name, int64_t *out, size_t cap, size_t *n);
int ox_attr_floats(ox_ctx *x, const char *name, float *out, size_t cap, size_t *n);
int ox_attr_string(ox_ctx *x, const char *name, const char *def, char *out, size_t cap);

/* ---- tensors ---- */
/* ONNX TensorProto.DataType -> bg_dtype: 0, or -BG_ENOTSUP ("unsupported: ...") naming the type. */
int ox_dtype(int onnx_type, enum bg_dtype *out, const char **why);
const char *ox_dtype_name(int onnx_type);
/* A TensorProto as a tensor of c (with its int64 elements in *v when v != NULL and it is an integer tensor of at
 * most 64 elements). where names it in messages ("initializer 'w'"). */
int ox_tensor_from_proto(bg_onnx_model *m, bg_tctx *c, const Onnx__TensorProto *tp, const char *where,
                         bg_tensor **out, ox_val *v);
/* A whole regular file into *buf (malloc'd), its size in *n. */
int ox_read_file(const char *path, uint8_t **buf, size_t *n);
/* Record "onnx: FILE: ..." with code. */
int ox_model_err(const bg_onnx_model *m, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- the operator table (ox_ops.c) ---- */
/* The handler for op_type at the model's opset, or NULL with *known telling whether op_type exists in another
 * opset range. */
const ox_op *ox_find_op(const char *op_type, int64_t opset, bool *known);

/* Helpers the op families share. */
int ox_axis(ox_ctx *x, int64_t axis, unsigned ndim, int *out);   /* signed ONNX axis -> [0, ndim) */
bool ox_is_float(enum bg_dtype t);

#endif
