/* tests/fuzz/fuzz_nv_vbios.c: libFuzzer target for the VBIOS walk and the FWSEC-FRTS patch (nv/nv_fw.h): the input
 * is the ROM dump. When it parses, the signatures and the image must lie inside it; every fuse version 0..16 is tried
 * for a signature, and each index found is patched into an FRTS image that must be the image's size. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "nv/nv_fw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bg_nv_vbios v;
  if (bg_nv_vbios_parse(data, size, &v) != 0) return 0;
  const uint8_t *end = data + size;
  size_t sigs = (size_t)v.fwsec.signature_count * BG_NV_FWSEC_SIG_SIZE;
  if (v.signatures < data || v.signatures > end || sigs > (size_t)(end - v.signatures)) abort();
  if (v.image < data || v.image > end || v.image_size > (size_t)(end - v.image)) abort();
  if (v.bit_off >= size || v.ucode_table_off >= size) abort();
  for (uint32_t fuse = 0; fuse <= 16; fuse++) {
    unsigned idx;
    if (bg_nv_fwsec_sig_index(&v.fwsec, fuse, &idx) != 0) continue;
    if (idx >= v.fwsec.signature_count) abort();
    uint8_t *img;
    size_t n;
    if (bg_nv_fwsec_frts_image(&v, idx, 0x7fe00000ull + ((uint64_t)fuse << 32), &img, &n) == 0) {
      if (n != v.image_size) abort();
      /* the signature landed at DMEM + PKCDataOffset */
      if (memcmp(img + v.fwsec.imem_load_size + v.fwsec.pkc_data_offset,
                 v.signatures + (size_t)idx * BG_NV_FWSEC_SIG_SIZE, BG_NV_FWSEC_SIG_SIZE) != 0)
        abort();
      free(img);
    }
  }
  return 0;
}
