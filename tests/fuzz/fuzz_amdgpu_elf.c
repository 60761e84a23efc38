/* tests/fuzz/fuzz_amdgpu_elf.c: libFuzzer target for the AMD code-object loader
 * (formats/amdgpu_elf.h): any byte string is loaded (with and without a kernel name), relocated at
 * two addresses when it loads, and freed. How to build and run it: tests/fuzz/README.md. The deterministic
 * in-suite equivalent is tests/unit/compile/test_amdgpu_elf.c (truncations, random flips). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "formats/amdgpu_elf.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int named = 0; named < 2; named++) {
    bg_amdgpu_image img;
    if (bg_amdgpu_elf_load(data, size, named ? "k" : NULL, &img) != 0) continue;
    if (img.code_offset >= img.size || img.kd_offset + 64 > img.size) abort();   /* the loader's promises */
    bg_amdgpu_image_relocate(&img, 0);
    bg_amdgpu_image_relocate(&img, 0xffff800000000000ull);
    bg_amdgpu_image_free(&img);
  }
  return 0;
}
