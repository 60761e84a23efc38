/* tests/fuzz/fuzz_discovery.c: libFuzzer target for the IP discovery table parser (am/discovery.h): the bytes are the
 * table as read from the top of VRAM, parsed with checksums checked and (so that mutations get past them) without.
 * When it parses, register addresses of every hardware IP are looked up. */
#include <stdlib.h>

#include "am/discovery.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static struct bg_am_discovery d; /* large: not on the fuzzer's stack */
  for (unsigned flags = 0; flags <= BG_AM_DISC_NO_CHECKSUM; flags += BG_AM_DISC_NO_CHECKSUM) {
    if (bg_am_discovery_parse(data, size, flags, &d) != 0) continue;
    for (int hwip = 0; hwip < MAX_HWIP; hwip++) {
      uint32_t addr;
      for (unsigned inst = 0; inst < 2; inst++)
        for (unsigned seg = 0; seg < 2; seg++) bg_am_reg_addr(&d, hwip, inst, seg, 0x10, &addr);
    }
  }
  uint64_t vram, off;
  if (size >= 4) {
    uint32_t memsize = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
    if (bg_am_discovery_location(memsize, &vram, &off) == 0 && off + BG_AM_DISC_TABLE_FROM_TOP != vram) abort();
  }
  return 0;
}
