/* tests/mockgpu/nv/mock_nv_asm.c: placeholder (the assembler lands next). */
#include <stdio.h>

#include "baregpu/error.h"
#include "mock_nv.h"

int mock_nv_plugin_assemble(const char *ptx, unsigned sm, uint8_t **cubin, size_t *n, char *err, size_t errlen) {
  (void)ptx;
  (void)sm;
  *cubin = NULL;
  *n = 0;
  snprintf(err, errlen, "the emulated GPU's assembler is not there yet");
  return -BG_ENOTSUP;
}
