/* tests/fuzz/fuzz_host_obj.c: libFuzzer target for the host relocatable-object loader (formats/host_obj.h): any byte
 * string is loaded with the entry name the seeds define ("objk"), its promises checked when it loads (the entry inside
 * the executable part of the image), and freed; nothing is ever run. How to build and run it: tests/fuzz/README.md.
 * The deterministic in-suite equivalent is tests/unit/compile/test_host_obj.c (malformed fields, random flips). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "formats/host_obj.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bg_host_obj o;
  (void)bg_host_obj_is_rel(data, size);
  if (bg_host_obj_load(data, size, "objk", &o) != 0) return 0;
  const uint8_t *entry = o.entry;
  if (entry < o.image || entry >= o.image + o.code_size || o.code_size > o.size) abort();   /* the loader's promises */
  bg_host_obj_free(&o);
  return 0;
}
