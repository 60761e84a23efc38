/* hcq/gpu_scan.h: the GPU scan of the tools and of device selection: platform/pci_scan.h's enumeration with each
 * chip named by the built-in backends' tables (hcq/chip.h). */
#ifndef BG_HCQ_GPU_SCAN_H
#define BG_HCQ_GPU_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/pci_scan.h"

/* bg_pci_enumerate with bg_pci_chip_lookup as the namer: AMD/NVIDIA GPUs only unless BG_PCI_SCAN_ALL. */
int bg_pci_scan(unsigned flags, bg_pci_info **out, size_t *n, size_t *nscanned);
/* The backends' tables through bg_chip_lookup (AMD: am/chips.c), then the NVIDIA families; NULL when unknown. */
const bg_pci_chip *bg_pci_chip_lookup(uint16_t vendor, uint16_t device);
/* bg_pci_class_is_gpu with the chip bg_pci_chip_lookup names. */
bool bg_pci_is_gpu(uint16_t vendor, uint16_t device, uint32_t class_code);

#endif
