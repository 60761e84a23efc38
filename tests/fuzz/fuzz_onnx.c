/* tests/fuzz/fuzz_onnx.c: libFuzzer target for the ONNX front end's parser (onnx/ox_load.c, ox_tensor.c): a model
 * loaded from memory (bg_onnx_load_buffer: protobuf, graph checks, initializers made into tensors) and its input and
 * output descriptions read back. Every input must load or fail with a message; a loaded model's names are never
 * NULL. One CPU context serves many inputs (opening one per input would dominate), reopened every 256 so the tensors
 * of loaded initializers do not pile up. */
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "baregpu/onnx.h"
#include "baregpu/tensor.h"
#include "fuzz_common.h"

static bg_tctx *ctx;
static unsigned uses;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20)) return 0;
  if (!ctx || ++uses % 256 == 0) {
    bg_tctx_close(ctx);
    ctx = NULL;
    if (bg_tctx_open("CPU", &ctx) < 0) abort();
  }
  bg_onnx_model *m = NULL;
  int r = bg_onnx_load_buffer(ctx, data, size, "fuzz.onnx", NULL, &m);
  if (r < 0) {
    if (m || !bg_last_error()[0]) abort();
    bg_tctx_clear_error(ctx);
    return 0;
  }
  for (unsigned i = 0; i < bg_onnx_num_inputs(m); i++) {
    if (!bg_onnx_input_name(m, i)) abort();
    enum bg_dtype dt;
    unsigned nd = 0;
    const int64_t *sh;
    if (bg_onnx_input_info(m, i, &dt, &nd, &sh) == 0 && nd > BG_MAX_DIMS) abort();
  }
  for (unsigned i = 0; i < bg_onnx_num_outputs(m); i++) {
    if (!bg_onnx_output_name(m, i)) abort();
    (void)bg_onnx_output_info(m, i, NULL, NULL, NULL);
  }
  if (bg_onnx_input_name(m, bg_onnx_num_inputs(m))) abort();
  bg_onnx_free(m);
  bg_tctx_clear_error(ctx);
  return 0;
}
