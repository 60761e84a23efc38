/* tests/fuzz/fuzz_ih.c: libFuzzer target for the interrupt-handler ring reader (am/am_ih.h): the first 8 bytes are the
 * WPTR and RPTR register values, the rest the ring's dwords (repeated to fill the ring). The walk between the pointers
 * must end within the ring (a WPTR off the entry grid once made bg_am_ih_drain loop forever), and every entry is
 * decoded with its fields in their bit widths (the first 64: more of the same add nothing but time). */
#include <stdlib.h>
#include <string.h>

#include "am/am_ih.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 8) return 0;
  const uint32_t ndw = BG_AM_IH_RING_SIZE / 4;
  uint32_t wreg, rreg, r;
  memcpy(&wreg, data, 4);
  memcpy(&rreg, data + 4, 4);
  uint32_t n = bg_am_ih_pending(wreg, rreg, &r);
  if (n > ndw / 8 || r >= ndw) abort();
  const uint8_t *ring = data + 8;
  size_t nring = (size - 8) / 4;
  for (uint32_t i = 0; i < n && i < 64 && nring; i++) {
    uint32_t dw[8];
    for (int k = 0; k < 8; k++) memcpy(&dw[k], ring + 4 * ((r + (uint32_t)k) % ndw % nring), 4);
    r = (r + 8) % ndw;
    bg_am_ih_entry en;
    bg_am_ih_decode(dw, &en);
    if (en.client > 0xff || en.src > 0xff || en.ring_id > 0xff || en.vmid > 0xf || en.vmid_type > 1 ||
        en.pasid > 0xffff || en.node > 0xff || en.fault_addr || en.fault_status || memcmp(en.ctx, dw + 4, 16))
      abort();
  }
  return 0;
}
