/* tests/fuzz/fuzz_beam_cache.c: libFuzzer target for the BEAM cache entry reader (compile/beam.h): the bytes are an
 * entry's payload as bg_kcache_load returns it. When it decodes, the options must be in range (upcast factors
 * 1..KMAX_UPCAST, unroll 1..KMAX_UNROLL, what the kernel rewriter accepts). */
#include <stdlib.h>

#include "compile/beam.h"
#include "compile/kernel_internal.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bg_kopts o;
  if (!bg_beam_cache_decode(data, size, &o)) return 0;
  for (int i = 0; i < 8; i++)
    if (o.upcast[i] > KMAX_UPCAST) abort();
  if (o.unroll > KMAX_UNROLL) abort();
  return 0;
}
