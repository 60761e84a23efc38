/* tests/fuzz/fuzz_nv_fw.c: libFuzzer target for the NVIDIA firmware file parsers (nv/nv_fw.h): Booter, the GSP
 * bootloader, the GSP-RM ELF and the FMC, all four on every input. Byte 0 picks the chip whose signature section the
 * GSP-RM ELF must have (modulo the chip table), the rest is the file. When a parser accepts, every pointer it returns
 * must lie inside the file and every size must be the one nv_fw.h promises. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "nv/nv_fw.h"

static void inside(const uint8_t *f, size_t n, const uint8_t *p, size_t len) {
  if (p < f || (size_t)(p - f) > n || len > n - (size_t)(p - f)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const bg_nv_chip *chips;
  unsigned nchips = bg_nv_chips(&chips);
  const bg_nv_chip *chip = &chips[data[0] % nchips];
  const uint8_t *f = data + 1;
  size_t n = size - 1;

  bg_nv_booter b;
  if (bg_nv_booter_parse(f, n, "booter.bin", &b) == 0) {
    if (!b.image || b.image_size == 0 || b.image_size > n) abort();
    if (b.app0_size == 0 || b.app0_offset > b.image_size || b.app0_size > b.image_size - b.app0_offset) abort();
    if (b.os_data_offset > b.image_size || b.os_data_size > b.image_size - b.os_data_offset) abort();
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < b.image_size; i++) sum ^= b.image[i]; /* the whole copy is readable */
    bg_nv_booter_free(&b);
  }
  bg_nv_bootloader bl;
  if (bg_nv_bootloader_parse(f, n, "bootloader.bin", &bl) == 0) {
    inside(f, n, bl.data, bl.data_size);
    if (bl.manifest_offset >= bl.data_size || bl.monitor_code_offset >= bl.data_size ||
        bl.monitor_data_offset >= bl.data_size)
      abort();
  }
  bg_nv_gsp_elf g;
  if (bg_nv_gsp_elf_parse(f, n, "gsp.bin", chip, &g) == 0) {
    if (g.image_size == 0 || g.signature_size == 0) abort();
    inside(f, n, g.image, g.image_size);
    inside(f, n, g.signature, g.signature_size);
  }
  bg_nv_fmc m;
  if (bg_nv_fmc_parse(f, n, "fmc.bin", &m) == 0) {
    if (m.image_size == 0) abort();
    inside(f, n, m.image, m.image_size);
  }
  return 0;
}
