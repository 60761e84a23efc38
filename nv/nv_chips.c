/* nv/nv_chips.c: the chip table of the bare-metal interface (nv_chips.h).
 * Chip ids: open-gpu-kernel-modules src/common/inc/swref/published/<arch>/<chip>/dev_boot.h and the firmware folders
 * of linux-firmware nvidia/<chip>/gsp; signature sections as the GSP-RM ELF names them (.fwsignature_<chip[:4]>x). */
#include "nv/nv_chips.h"

#include <stddef.h>
#include <strings.h>


static const bg_nv_chip CHIPS[] = {
    {"GA102", 0x17, 2, BG_NV_AMPERE, "ga102", ".fwsignature_ga10x", 2, false, 0x88000, 8, 6},
    {"GA103", 0x17, 3, BG_NV_AMPERE, "ga103", ".fwsignature_ga10x", 2, false, 0x88000, 8, 6},
    {"GA104", 0x17, 4, BG_NV_AMPERE, "ga104", ".fwsignature_ga10x", 2, false, 0x88000, 8, 6},
    {"GA106", 0x17, 6, BG_NV_AMPERE, "ga106", ".fwsignature_ga10x", 2, false, 0x88000, 8, 6},
    {"GA107", 0x17, 7, BG_NV_AMPERE, "ga107", ".fwsignature_ga10x", 2, false, 0x88000, 8, 6},
    {"GH100", 0x18, 0, BG_NV_HOPPER, "gh100", ".fwsignature_gh10x", 3, true, 0x92000, 9, 0},
    {"AD102", 0x19, 2, BG_NV_ADA, "ad102", ".fwsignature_ad10x", 2, false, 0x88000, 8, 9},
    {"AD103", 0x19, 3, BG_NV_ADA, "ad103", ".fwsignature_ad10x", 2, false, 0x88000, 8, 9},
    {"AD104", 0x19, 4, BG_NV_ADA, "ad104", ".fwsignature_ad10x", 2, false, 0x88000, 8, 9},
    {"AD106", 0x19, 6, BG_NV_ADA, "ad106", ".fwsignature_ad10x", 2, false, 0x88000, 8, 9},
    {"AD107", 0x19, 7, BG_NV_ADA, "ad107", ".fwsignature_ad10x", 2, false, 0x88000, 8, 9},
    {"GB202", 0x1b, 2, BG_NV_BLACKWELL, "gb202", ".fwsignature_gb20x", 3, true, 0x92000, 12, 0},
    {"GB203", 0x1b, 3, BG_NV_BLACKWELL, "gb203", ".fwsignature_gb20x", 3, true, 0x92000, 12, 0},
    {"GB205", 0x1b, 5, BG_NV_BLACKWELL, "gb205", ".fwsignature_gb20x", 3, true, 0x92000, 12, 0},
    {"GB206", 0x1b, 6, BG_NV_BLACKWELL, "gb206", ".fwsignature_gb20x", 3, true, 0x92000, 12, 0},
    {"GB207", 0x1b, 7, BG_NV_BLACKWELL, "gb207", ".fwsignature_gb20x", 3, true, 0x92000, 12, 0},
};
#define NCHIPS (sizeof(CHIPS) / sizeof(CHIPS[0]))

const bg_nv_chip *bg_nv_chip_by_boot42(uint32_t boot42) {
  uint8_t arch = (boot42 >> 24) & 0x3f, impl = (boot42 >> 20) & 0xf;
  for (size_t i = 0; i < NCHIPS; i++)
    if (CHIPS[i].arch == arch && CHIPS[i].impl == impl) return &CHIPS[i];
  return NULL;
}

const bg_nv_chip *bg_nv_chip_by_name(const char *name) {
  for (size_t i = 0; name && i < NCHIPS; i++)
    if (strcasecmp(CHIPS[i].name, name) == 0) return &CHIPS[i];
  return NULL;
}

bool bg_nv_pci_claims(uint16_t vendor, uint16_t device, uint32_t class_code) {
  if (vendor != 0x10de || (class_code >> 16) != 0x03) return false;
  switch (device & 0xff00) {
    case 0x2200: case 0x2300: case 0x2400: case 0x2500: case 0x2600: case 0x2700: case 0x2800:
    case 0x2b00: case 0x2c00: case 0x2d00: case 0x2f00:
      return true;
    default:
      return false;
  }
}

unsigned bg_nv_chips(const bg_nv_chip **table) {
  *table = CHIPS;
  return (unsigned)NCHIPS;
}
