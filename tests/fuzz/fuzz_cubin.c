/* tests/fuzz/fuzz_cubin.c: libFuzzer target for the NVIDIA cubin loader (formats/cubin.h): any byte string is
 * loaded; when it loads, the loader's promises are checked (kernels, parameters and constant bank 0 inside the
 * image and their ranges) and the image is relocated at two addresses, then freed. How to build and run it:
 * tests/fuzz/README.md. The deterministic in-suite equivalent is tests/unit/nv/test_cubin.c (truncations, flips). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "formats/cubin.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bg_cubin c;
  if (bg_cubin_load(data, size, &c) != 0) return 0;
  for (size_t i = 0; i < c.nkernels; i++) {
    const bg_cubin_kernel *k = &c.kernels[i];
    if (k->code_offset + k->code_size > c.image_size || k->cbank0_offset + k->cbank0_size > c.image_size) abort();
    if ((uint64_t)k->param_base + k->param_size > k->cbank0_size) abort();
    for (uint32_t p = 0; p < k->nparams; p++)
      if (k->params[p].ordinal != p || (uint64_t)k->params[p].offset + k->params[p].size > k->param_size) abort();
  }
  uint8_t *img = malloc(c.image_size);
  if (img) {
    bg_cubin_relocate(&c, 0, img);
    bg_cubin_relocate(&c, 0xffff800000000000ull, img);
    free(img);
  }
  bg_cubin_free(&c);
  return 0;
}
