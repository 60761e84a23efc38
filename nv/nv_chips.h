/* nv/nv_chips.h: the NVIDIA chips the bare-metal (PCI) interface boots, keyed by NV_PMC_BOOT_42.
 *
 * NV_PMC_BOOT_42 (BAR0 0x000a00): architecture 29:24, implementation 23:20 (open-gpu-kernel-modules
 * src/common/inc/swref/published/ampere/ga102/dev_boot.h). Ampere GA10x and Ada AD10x boot through FWSEC-FRTS from the
 * VBIOS, then Booter on SEC2 (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN); Hopper GH100 and Blackwell GB20x boot through the FSP chain of
 * trust (2.4; open-gpu-kernel-modules src/nvidia/src/kernel/gpu/fsp/arch/hopper/kern_fsp_gh100.c). tinygrad keys FSP
 * and MMU v3 on architecture >= 0x1a and so excludes GH100 (0x18), which also boots through FSP and uses MMU v3. */
#ifndef BG_NV_CHIPS_H
#define BG_NV_CHIPS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum bg_nv_chip_family {
  BG_NV_AMPERE = 0x17,    /* GA10x (GA100 has no usable compute class: tinygrad tinygrad/runtime/ops_nv.py) */
  BG_NV_HOPPER = 0x18,    /* GH100 */
  BG_NV_ADA = 0x19,       /* AD10x */
  BG_NV_BLACKWELL = 0x1b, /* GB20x */
} bg_nv_family;

typedef struct bg_nv_chip {
  const char *name;        /* "GA102" */
  uint8_t arch, impl;      /* NV_PMC_BOOT_42 architecture / implementation */
  bg_nv_family family;
  const char *fw_dir;      /* linux-firmware folder below nvidia/: "ga102" */
  const char *sig_section; /* signature section of the GSP-RM ELF: ".fwsignature_ga10x" */
  int mmu_ver;             /* 2 (49-bit VA, 4-level PDE) or 3 (57-bit VA, 5-level PDE) */
  bool fsp_boot;           /* boot through the FSP chain of trust (FMC), not FWSEC + Booter */
  uint32_t pci_config_mirror; /* GspSystemInfo.pciConfigMirrorBase: 0x88000, 0x92000 on FSP chips */
  uint8_t sm_major, sm_minor; /* SM version (sm_86, sm_89, sm_90, sm_120) */
} bg_nv_chip;

/* The chip of a PMC_BOOT_42 value, or NULL. */
const bg_nv_chip *bg_nv_chip_by_boot42(uint32_t boot42);
/* The chip of a name ("GA102", "gh100"; case-insensitive), or NULL. */
const bg_nv_chip *bg_nv_chip_by_name(const char *name);
/* Does the bare-metal interface claim this PCI function? Vendor 0x10de, class 0x03xxxx, and a device id of a family
 * above ((device & 0xff00) in GA10x 0x22..0x25, AD10x 0x26..0x28, GH100 0x23, GB20x 0x2b..0x2f). */
bool bg_nv_pci_claims(uint16_t vendor, uint16_t device, uint32_t class_code);
/* Every chip in the table (for tests and tools). */
unsigned bg_nv_chips(const bg_nv_chip **table);

#endif
