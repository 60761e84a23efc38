/* tests/fuzz/fuzz_pagemap.c: libFuzzer target for the pagemap reader (bg_sysmem_translate, platform/sysmem.h): the
 * bytes are the entries of a /proc/self/pagemap as found through BG_PAGEMAP from page 1 on (page 0's entry is a zero
 * pad: a real buffer is never at address 0), translated for as many pages as whole entries given plus one (the last
 * read runs short). A translation that succeeds must give page-aligned, non-zero
 * bus addresses of present entries. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "platform/sysmem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[4096];
  if (!path[0]) {
    fuzz_path(path, sizeof path, "pagemap");
    setenv("BG_PAGEMAP", path, 1);
  }
  if (size > 64 * 1024) return 0;
  uint8_t *file = calloc(8 + size, 1);
  if (!file) return 0;
  memcpy(file + 8, data, size);
  fuzz_write(path, file, 8 + size);
  free(file);
  size_t entries = size / 8;
  uint64_t *bus = calloc(entries + 1, sizeof *bus);
  if (!bus) return 0;
  for (size_t npages = entries; npages <= entries + 1; npages++) {
    if (npages == 0) continue;
    if (bg_sysmem_translate((const void *)(uintptr_t)BG_SYSMEM_PAGE, npages, bus) != 0) continue;
    if (npages > entries) abort(); /* past the file's end cannot succeed */
    for (size_t i = 0; i < npages; i++) {
      uint64_t e;
      memcpy(&e, data + 8 * i, 8);
      if (bus[i] == 0 || bus[i] % BG_SYSMEM_PAGE || !(e >> 63)) abort();
    }
  }
  bg_sysmem_check_contiguous(bus, entries, BG_SYSMEM_PAGE, "fuzz");
  free(bus);
  return 0;
}
