/* am/chips.h: the AMD GPUs the AM driver accepts, and the GC-version -> gfx target rule.
 *
 * The PCI id list is the hard gate of tinygrad's AM (tinygrad/runtime/ops_amd.py PCIIface); chip names and likely IP versions are
 * informative only (the discovery table is authoritative). The gfx target is derived from the GC IP
 * version found by discovery: target = maj*10000 + min*100 + rev, with the single remap
 * 90403 -> 90402 (GC 9.4.3 is gfx942); the arch string is "gfx" + decimal major + hex minor + hex rev. */
#ifndef BG_AM_CHIPS_H
#define BG_AM_CHIPS_H

#include <stddef.h>
#include <stdint.h>

#include "hcq/chip.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_AM_PCI_VENDOR_AMD 0x1002u


/* The one table of AMD PCI ids (bg_chip_info, hcq/chip.h): chip in Linux amdgpu's lower-case spelling, marketing
 * name, likely GC version and arch, family. The tools and platform/pci_scan.c read it through bg_am_chip_info
 * (bg_iface.chip_lookup of every AMD interface). */
/* Entry for a supported device id, or NULL. */
const bg_chip_info *bg_am_chip_lookup(uint16_t device_id);
/* Like bg_am_chip_lookup, but an unsupported id records BG_ENOTSUP with a message naming the id and the
 * supported list ("am: PCI device 0x1002:0x1234 is not supported by AM; supported device ids: 0x744c (navi31), ...").
 * `vendor` must be 0x1002. *out may be NULL. */
int bg_am_chip_check(uint16_t vendor, uint16_t device_id, const bg_chip_info **out);
/* Number of entries and entry i (for listings). */
size_t bg_am_chip_count(void);
/* bg_iface.chip_lookup of the AMD interfaces: the entry for (vendor, device), NULL unless vendor is 0x1002. */
const bg_chip_info *bg_am_chip_info(uint16_t vendor, uint16_t device);
const bg_chip_info *bg_am_chip_at(size_t i);

/* gfx target version from a GC IP version: 11.0.0 -> 110000, 12.0.1 -> 120001, 9.4.3 -> 90402, 9.5.0 -> 90500. */
uint32_t bg_am_gfx_target_version(unsigned maj, unsigned min, unsigned rev);
/* Arch string of a GC IP version into buf: "gfx1100", "gfx1201", "gfx942", "gfx950". Returns 0, or
 * -BG_EINVAL if buf is too small or a version part is out of range (minor/rev > 15 cannot be written as one
 * hex digit). */
int bg_am_gfx_arch(unsigned maj, unsigned min, unsigned rev, char *buf, size_t cap);
/* Whether AM can drive a GC version: a GFX row of the IP table (am/am_ip.h: 9.4.3, 9.5.0, GC major 11 or 12; GC
 * 9.4.2, MI200, is refused even though the target rule maps it to 90402 as well: Linux calls it gfx90a). If not,
 * records BG_ENOTSUP ("am: GC IP 10.3.0 (gfx1030) is not supported; AM drives GC 9.4.3, 9.5.0, 11.x.x, 12.x.x") and
 * returns its negative code; else 0. */
int bg_am_gc_check_supported(unsigned maj, unsigned min, unsigned rev);

#ifdef __cplusplus
}
#endif
#endif
