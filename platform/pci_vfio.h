/* platform/pci_vfio.h: bg_pci_dev through VFIO (platform/vfio.h): config space, BARs, reset, DMA and interrupts all
 * through the VFIO device fd and container. bg_pci_open_sysfs opens a function this way when asked (BG_PCI_VFIO) or
 * when it is bound to vfio-pci; the drivers see the one bg_pci_dev interface. Internal. */
#ifndef BG_HCQ_PCI_VFIO_H
#define BG_HCQ_PCI_VFIO_H

#include "platform/pci.h"

/* Lock the function, take it from its driver when flags allow (BG_PCI_UNBIND_DRIVER, BG_PCI_REMOVE_SIBLINGS), bind
 * it to vfio-pci, open it through VFIO and enable memory decoding and bus mastering. */
int bg_pci_open_vfio(const char *bdf, unsigned flags, bg_pci_dev **out);

#endif
