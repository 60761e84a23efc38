/* platform/pci_chip.h: what is known about a GPU from its PCI id alone (the type only). Each backend owns the table
 * of the ids it drives (AMD: am/chips.c) and hands entries out through bg_iface.chip_lookup; the HCQ core walks the
 * interfaces (bg_chip_lookup, hcq/chip.h) and passes that look-up down to the PCI scan (bg_pci_enumerate). */
#ifndef BG_PLATFORM_PCI_CHIP_H
#define BG_PLATFORM_PCI_CHIP_H

#include <stdint.h>

/* A known chip: matches when (device & mask) == this entry's device. */
typedef struct bg_chip_info {
  uint16_t vendor, device, mask;
  const char *chip;     /* one spelling, Linux amdgpu's lower-case asic name: "navi31", "mi300x"; NVIDIA: "GA10x" */
  const char *product;  /* marketing name: "Radeon RX 7900 XT/XTX/GRE" (NULL where unknown) */
  const char *arch;     /* likely arch: "gfx1100", "sm_86" (AMD: discovery's GC version is authoritative) */
  const char *family;   /* "RDNA3", "CDNA3", "Ampere" */
  uint8_t gc[3];        /* AMD: likely GC IP version; zero elsewhere */
} bg_chip_info;

#endif
