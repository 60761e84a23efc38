/* hcq/chip.h: the chip look-up over the built-in backends (the type: platform/pci_chip.h). Each backend owns the table
 * of the ids it drives (AMD: am/chips.c) and hands entries out through bg_iface.chip_lookup; the core walks the
 * interfaces (bg_chip_lookup, hcq/registry.c), so hcq/ keeps no copy of a backend's table. */
#ifndef BG_HCQ_CHIP_H
#define BG_HCQ_CHIP_H

#include <stdint.h>

#include "platform/pci_chip.h"



/* The entry of the first built-in interface whose backend knows (vendor, device), or NULL. */
const bg_chip_info *bg_chip_lookup(uint16_t vendor, uint16_t device);

#endif
