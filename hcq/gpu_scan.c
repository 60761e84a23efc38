/* hcq/gpu_scan.c: the GPU scan the tools and device selection use (hcq/gpu_scan.h): the platform's PCI enumeration
 * with chips named by the built-in backends (bg_chip_lookup) and, until an nv/ backend exists, NVIDIA families. */
#include "hcq/gpu_scan.h"

#include <stddef.h>

#include "hcq/chip.h"

/* NVIDIA families: tinygrad's NV PCI probe matches device & 0xff00 (tinygrad/runtime/ops_nv.py PCIIface); the
 * family and sm_* come from the device-id ranges (0x23xx is GH100) as NV_PMC_BOOT_42 would tell; individual chips
 * are not named, so they are reported by family. These stay here until an nv/ backend exists and owns them behind its
 * bg_iface.chip_lookup, as am/chips.c owns the AMD ids; this file keeps no AMD table. */
#define NV(dev, chip, arch, family) {BG_PCI_VENDOR_NV, dev, 0xff00, chip, NULL, arch, family, {0, 0, 0}}
static const bg_pci_chip nv_chips[] = {
  NV(0x2200, "GA10x", "sm_86", "Ampere"),    NV(0x2300, "GH100", "sm_90", "Hopper"),
  NV(0x2400, "GA10x", "sm_86", "Ampere"),    NV(0x2500, "GA10x", "sm_86", "Ampere"),
  NV(0x2600, "AD10x", "sm_89", "Ada"),       NV(0x2700, "AD10x", "sm_89", "Ada"),
  NV(0x2800, "AD10x", "sm_89", "Ada"),       NV(0x2b00, "GB20x", "sm_120", "Blackwell"),
  NV(0x2c00, "GB20x", "sm_120", "Blackwell"), NV(0x2d00, "GB20x", "sm_120", "Blackwell"),
  NV(0x2f00, "GB20x", "sm_120", "Blackwell"),
};
#undef NV

const bg_pci_chip *bg_pci_chip_lookup(uint16_t vendor, uint16_t device) {
  const bg_pci_chip *c = bg_chip_lookup(vendor, device); /* the backends' tables */
  if (c) return c;
  for (size_t i = 0; i < sizeof(nv_chips) / sizeof(nv_chips[0]); i++)
    if (nv_chips[i].vendor == vendor && (device & nv_chips[i].mask) == nv_chips[i].device) return &nv_chips[i];
  return NULL;
}

bool bg_pci_is_gpu(uint16_t vendor, uint16_t device, uint32_t class_code) {
  return bg_pci_class_is_gpu(vendor, class_code, bg_pci_chip_lookup(vendor, device));
}

int bg_pci_scan(unsigned flags, bg_pci_info **out, size_t *n, size_t *nscanned) {
  return bg_pci_enumerate(flags, bg_pci_chip_lookup, out, n, nscanned);
}

