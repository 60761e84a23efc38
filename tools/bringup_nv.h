/* tools/bringup_nv.h: bg-bringup's NVIDIA part: a bare-metal boot (nv/nv_pci.h) of one PCI function, with every step,
 * its time and its register and RPC counts. */
#ifndef BG_TOOLS_BRINGUP_NV_H
#define BG_TOOLS_BRINGUP_NV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Open bdf through sysfs, boot it (fw_dir: NULL for $BG_NV_FIRMWARE_DIR or linux-firmware), print the report on f as
 * text or one JSON document, and close it (UNLOADING_GUEST_DRIVER). 0 booted; a negative BG_E* code with the message
 * in err otherwise (the report is printed either way). */
int bringup_nv_run(const char *bdf, const char *fw_dir, bool json, FILE *f, char *err, size_t errlen);

#endif
