/* tests/fuzz/fuzz_fw.c: libFuzzer target for the AMD firmware parser (am/fw_parse.h), every format: the first byte
 * picks the family (bg_fw_family, modulo their count), the rest is the file. When it parses, every descriptor must lie
 * inside the file (the parser's promise), and the image is checked against an IP version and printed. */
#include <stdio.h>
#include <stdlib.h>

#include "am/fw_parse.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static FILE *null;
  if (!null) null = fopen("/dev/null", "w");
  bg_fw_family family = (bg_fw_family)(data[0] % BG_FW_NFAMILIES);
  static bg_fw_image img; /* 30 KiB: not on the fuzzer's stack */
  if (bg_fw_parse(family, "fuzz.bin", data + 1, size - 1, &img) != 0) return 0;
  if (img.ndescs < 0 || img.ndescs > BG_FW_MAX_DESCS) abort();
  for (int i = 0; i < img.ndescs; i++) {
    const bg_fw_desc *d = &img.descs[i];
    if (d->offset > size - 1 || d->size > size - 1 - d->offset || d->data != data + 1 + d->offset) abort();
    if (bg_fw_find(&img, (bg_fw_space)d->space, d->fw_type) == NULL && !(d->flags & BG_FW_DESC_AUX)) abort();
  }
  bg_fw_check_ip(&img, "GC", 11, 0, 0);
  if (null) bg_fw_dump_image(&img, true, null);
  return 0;
}
