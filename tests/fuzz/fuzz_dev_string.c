/* tests/fuzz/fuzz_dev_string.c: libFuzzer target for DEV strings (bg_target_parse, include/baregpu/hcq.h) and the
 * visibility filter (VISIBLE_DEVICES-style index lists, hcq/target.h). A parsed target must format back to a string
 * that parses to the same target (the canonical form is a fixed point). */
#include <stdlib.h>
#include <string.h>

#include "baregpu/hcq.h"
#include "fuzz_common.h"
#include "hcq/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char s[256];
  if (size >= sizeof s) return 0; /* DEV strings are short; longer ones take the same length check */
  memcpy(s, data, size);
  s[size] = '\0';
  bg_target t, u;
  if (bg_target_parse(s, &t) == 0) {
    char canon[128];
    bg_target_format(&t, canon, sizeof canon);
    if (bg_target_parse(canon, &u) != 0 || strcmp(t.kind, u.kind) || strcmp(t.iface, u.iface) ||
        strcmp(t.indices, u.indices) || t.index != u.index)
      abort();
  }
  int map[16];
  int n = bg_visible_filter(s, 8, map, 16);
  if (n > 16) abort();
  for (int i = 0; i < n; i++)
    if (map[i] < 0 || map[i] >= 8) abort();
  return 0;
}
