/* tests/unit/am/fw_gen.h: writes correctly-headed AMD firmware files with deterministic payloads.
 *
 * Every component (a descriptor's byte range) is filled by fw_gen_byte(tag, i) with
 * tag = fw_gen_tag(salt, space, fw_type, aux) and has size fw_gen_size(tag); the file's salt is
 * stored in the common header's ucode_version, so fw_gen_check() can tell from a parsed image
 * whether a descriptor points at exactly the right bytes. Layout: common + versioned header (and
 * any descriptor array) in the first 0x100 bytes, ucode array at 0x100, other components after it,
 * size_bytes = file size, crc32 over [32, size). Reusable by the emulated GPU: fw_gen_chip(). */
#ifndef BAREGPU_TESTS_AM_FW_GEN_H
#define BAREGPU_TESTS_AM_FW_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "am/fw_load.h"
#include "am/fw_parse.h"

typedef enum fw_gen_chip_id {
  FW_GEN_GFX11,  /* GC 11.0.0, PSP 13.0.0, SMU 13.0.0, SDMA 6.0.0 */
  FW_GEN_GFX12,  /* GC 12.0.0, PSP 14.0.2, SMU 14.0.2, SDMA 7.0.0 */
  FW_GEN_GFX942, /* GC 9.4.3, PSP 13.0.6, SMU 13.0.6, SDMA 4.4.2 */
  FW_GEN_NCHIPS,
} fw_gen_chip_id;

#define FW_GEN_UCODE_OFFSET 0x100u

/* One file to build. `types`: the psp_fw_bin (sOS v2.x) / ta_fw_bin types, or the smc v2.1
 * pptable ids; ignored by other families. `aux_index`: psp v2.1 psp_aux_fw_bin_index. */
typedef struct fw_gen_spec {
  bg_fw_family family;
  uint16_t major, minor;       /* header version */
  uint16_t ip_major, ip_minor; /* stamped in the common header */
  uint32_t salt;               /* stored as ucode_version */
  const uint32_t *types;
  int ntypes;
  uint32_t aux_index;
} fw_gen_spec;

uint32_t fw_gen_tag(uint32_t salt, bg_fw_space space, uint32_t fw_type, bool aux);
uint32_t fw_gen_size(uint32_t tag);
uint8_t fw_gen_byte(uint32_t tag, size_t i);
/* Descriptor d of img (generated) has the size and bytes of its component. */
bool fw_gen_check(const bg_fw_image *img, const bg_fw_desc *d);
/* Like fw_gen_check but for a component of (space, type) of a file with this salt. */
bool fw_gen_check_as(uint32_t salt, bg_fw_space space, uint32_t fw_type, bool aux, const bg_fw_desc *d);

/* Build one file (malloc'd; *len its size). NULL for an unsupported family/version. */
uint8_t *fw_gen_build(const fw_gen_spec *spec, size_t *len);

/* The IP versions of a chip, and the spec of each of its files (false if the chip has none). */
void fw_gen_chip_ips(fw_gen_chip_id chip, bg_am_fw_ips *ip);
bool fw_gen_chip_spec(fw_gen_chip_id chip, bg_am_fw_file_id file, fw_gen_spec *spec);
/* Write all of the chip's files (names as bg_am_fw_name) into dir (created if missing).
 * 0, or -1 with errno set. */
int fw_gen_chip(const char *dir, fw_gen_chip_id chip);
/* Write a buffer to dir/name. 0 or -1. */
int fw_gen_write(const char *dir, const char *name, const uint8_t *b, size_t n);

#endif
