/* platform/pci_resource.h: the sysfs PCI "resource" file, parsed in one place (the bus scan and
 * the sysfs device both read BARs from it). */
#ifndef BG_PLATFORM_PCI_RESOURCE_H
#define BG_PLATFORM_PCI_RESOURCE_H

#include <stdbool.h>

#include "platform/pci_scan.h"

/* One line, "0xSTART 0xEND 0xFLAGS" (Linux drivers/pci/pci-sysfs.c resource_show): fills *out
 * (size 0 for an unimplemented BAR, which reads "0x0 0x0 0x0" with no IO/MEM flag). False, *out
 * untouched, when the line does not have that form; the caller names the file. */
bool bg_pci_resource_line(const char *line, bg_pci_bar *out);

/* Line `bar` (from 0) of the whole file's text, parsed as above; false when the text has fewer
 * lines or that line has another form. */
bool bg_pci_resource_bar(const char *text, int bar, bg_pci_bar *out);

#endif
