/* tests/fuzz/fuzz_kcache.c: libFuzzer target for the kernel-cache entry reader (compile/kcache.h). The first byte
 * picks the mode: odd, the rest is written as an entry file as found on disk and loaded (a valid trailer is rare, so
 * that is mostly the corrupt-entry paths); even, the rest is stored as a payload through bg_kcache_store and loaded
 * back, which must give the same bytes (the trailer round trip). */
#include <stdlib.h>
#include <string.h>

#include "compile/kcache.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static char path[4096];
  if (!path[0]) fuzz_path(path, sizeof path, "entry.so");
  const uint8_t *body = data + 1;
  size_t n = size - 1;
  if (data[0] & 1) {
    fuzz_write(path, body, n);
  } else if (bg_kcache_store(path, body, n) != 0) {
    abort();   /* the scratch directory is writable: a store that fails is a bug */
  }
  void *got = NULL;
  size_t len = 0;
  int hit = bg_kcache_load(path, &got, &len);
  if (hit < 0 || hit > 1) abort();
  if (!(data[0] & 1) && (hit != 1 || len != n || (n && memcmp(got, body, n) != 0))) abort();
  free(got);
  return 0;
}
