/* tests/fuzz/fuzz_safetensors.c: libFuzzer target for the safetensors header reader (tensor/safetensors.c
 * t_st_parse_header), from memory. The input is a whole file: an 8-byte little-endian header length N, N bytes of JSON,
 * then the data section. Whatever it accepts must hold what the loader relies on: every tensor inside the data
 * section, in offset order, not overlapping, its bytes equal to its shape times its dtype's size. */
#include <stdlib.h>
#include <string.h>

#include "baregpu/tensor.h"
#include "fuzz_common.h"
#include "tensor/tload.h"

static uint64_t dsize(enum bg_dtype t) {
  switch (t) {
  case BG_FLOAT64: case BG_INT64: case BG_UINT64: return 8;
  case BG_FLOAT32: case BG_INT32: case BG_UINT32: return 4;
  case BG_FLOAT16: case BG_BFLOAT16: case BG_INT16: case BG_UINT16: return 2;
  default: return 1;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 8) return 0;
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | data[i];
  if (n > size - 8) return 0;
  tst_header h;
  int e = t_st_parse_header((const char *)data + 8, (size_t)n, size - 8 - n, "fuzz", &h);
  if (e == 0) {
    uint64_t at = 0;
    for (size_t i = 0; i < h.n; i++) {
      const tst_entry *t = &h.e[i];
      if (!t->name || t->begin != at || t->end < t->begin || t->end > size - 8 - n || t->ndim > BG_MAX_DIMS) abort();
      uint64_t bytes = dsize(t->dt);
      for (unsigned d = 0; d < t->ndim; d++) {
        if (t->shape[d] < 0) abort();
        bytes *= (uint64_t)t->shape[d];
      }
      if (bytes != t->end - t->begin) abort();
      at = t->end;
    }
    if (at != size - 8 - n) abort();
  } else if (e != -BG_EINVAL && e != -BG_ENOMEM) {
    abort();
  }
  t_st_header_free(&h);
  return 0;
}
