/* baregpu/onnx.h: ONNX models (onnx/README.md) run as lazy tensors of baregpu/tensor.h.
 *
 * A model is parsed (protobuf, ONNX IR up to version 8 / ONNX 1.12) and checked when loaded: every node's operator
 * must be known for the model's opset, every input name must be produced before it is used. bg_onnx_run maps the
 * graph to lazy tensors of the model's context each call; reading the outputs (bg_tn_read) runs them.
 *
 * Errors follow baregpu/error.h: 0 or a negative BG_E*; the message names the file, the node (index, op_type,
 * name) and the field. What the front end does not support by design (string tensors, sequences, maps, optional
 * types, training ops, sparse tensors, other operator domains) returns -BG_ENOTSUP with a message starting
 * "unsupported: ", distinct from malformed input (-BG_EFORMAT) and bad arguments (-BG_EINVAL).
 * Ownership: *out of a load is the caller's, freed by bg_onnx_free before the context closes; strings and shapes
 * returned belong to the model. Thread safety: as the model's context (one thread at a time). */
#ifndef BAREGPU_ONNX_H
#define BAREGPU_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "baregpu/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bg_onnx_model bg_onnx_model;

/* Parse the model file at path; initializers with external data are read relative to path's folder. */
int bg_onnx_load(bg_tctx *c, const char *path, bg_onnx_model **out);
/* The same from bytes in memory (copied as needed): name is used in messages (NULL: "<memory>"), base_dir is
 * the folder external data is read from (NULL: external data is refused). */
int bg_onnx_load_buffer(bg_tctx *c, const void *data, size_t size, const char *name, const char *base_dir,
                        bg_onnx_model **out);
void bg_onnx_free(bg_onnx_model *m);   /* NULL is a no-op */

/* The graph's inputs (initializers excluded) and outputs, in the file's order. Names never NULL. */
unsigned bg_onnx_num_inputs(const bg_onnx_model *m);
unsigned bg_onnx_num_outputs(const bg_onnx_model *m);
const char *bg_onnx_input_name(const bg_onnx_model *m, unsigned i);    /* NULL when i is out of range */
const char *bg_onnx_output_name(const bg_onnx_model *m, unsigned i);
/* Declared dtype and shape (a dimension < 0: symbolic or unknown); 0, or -BG_EINVAL for i out of range, or
 * -BG_ENOTSUP (an "unsupported: " message) when its type is not a tensor of a supported dtype. */
int bg_onnx_input_info(const bg_onnx_model *m, unsigned i, enum bg_dtype *dtype, unsigned *ndim,
                       const int64_t **shape);
int bg_onnx_output_info(const bg_onnx_model *m, unsigned i, enum bg_dtype *dtype, unsigned *ndim,
                        const int64_t **shape);

/* Build the graph on inputs[0..nin) (nin == bg_onnx_num_inputs, tensors of the model's context, in input order)
 * and fill outputs[0..bg_onnx_num_outputs) with lazy tensors of the context. */
int bg_onnx_run(bg_onnx_model *m, bg_tensor *const *inputs, unsigned nin, bg_tensor **outputs);

/* A serialized TensorProto file (the input_N.pb / output_N.pb of ONNX's test data) as a tensor of c in *out;
 * the tensor's name is copied into name[0..name_cap) (NUL-terminated, cut to fit; name NULL: not wanted). */
int bg_onnx_load_tensor(bg_tctx *c, const char *path, bg_tensor **out, char *name, size_t name_cap);

#ifdef __cplusplus
}
#endif
#endif
