/* tests/fuzz/fuzz_smu_metrics.c: libFuzzer target for the SMU metrics table decoder (bg_am_smu_metrics_decode,
 * am/am_smu.h): the first byte picks the layout (SMU 13.0.0, 14.0.2 or 13.0.6, modulo 4 so that an unknown one is
 * tried too), the rest is the table as the SMU wrote it. A short table must be refused, not read past. */
#include <stdlib.h>

#include "am/am_smu.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  bg_am_smu_metrics m;
  unsigned layout = data[0] % 4u;
  int r = bg_am_smu_metrics_decode((bg_am_smu_layout)layout, data + 1, size - 1, &m);
  if (layout > BG_SMU_LAYOUT_13_0_6 && r == 0) abort();
  if (r == 0 && m.cdna != (layout == BG_SMU_LAYOUT_13_0_6)) abort();
  return 0;
}
