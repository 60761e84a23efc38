/* am/chips.c: supported PCI ids and the gfx target rule (see chips.h). */
#include "am/chips.h"

#include <stdio.h>
#include <string.h>

#include "am/am_ip.h"
#include "baregpu/error.h"

/* PCI ids: exactly tinygrad's AM probe list (tinygrad/runtime/ops_amd.py PCIIface: 0x74a1, 0x744c, 0x7480, 0x7550,
 * 0x7551, 0x7590, 0x75a0, 0x75a8), the gate of what AM opens. Chip names are Linux amdgpu's lower-case spelling. */
#define AMD(dev, chip, product, ma, mi, rv, arch, family) \
  {BG_AM_PCI_VENDOR_AMD, dev, 0xffff, chip, product, arch, family, {ma, mi, rv}}
static const bg_chip_info chips[] = {
  AMD(0x744c, "navi31", "Radeon RX 7900 XT/XTX/GRE", 11, 0, 0, "gfx1100", "RDNA3"),
  AMD(0x7480, "navi33", "Radeon RX 7600 family", 11, 0, 2, "gfx1102", "RDNA3"),
  AMD(0x7550, "navi48", "Radeon RX 9070 (XT) / Radeon AI PRO R9700", 12, 0, 1, "gfx1201", "RDNA4"),
  AMD(0x7551, "navi48", "Radeon AI PRO R9700 / RX 9070 family", 12, 0, 1, "gfx1201", "RDNA4"),
  AMD(0x7590, "navi44", "Radeon RX 9060 XT", 12, 0, 0, "gfx1200", "RDNA4"),
  AMD(0x74a1, "mi300x", "Instinct MI300X", 9, 4, 3, "gfx942", "CDNA3"),
  AMD(0x75a0, "mi350", "Instinct MI350-series", 9, 5, 0, "gfx950", "CDNA4"),
  AMD(0x75a8, "mi350", "Instinct MI350-series (MI350P?)", 9, 5, 0, "gfx950", "CDNA4"),
};
#undef AMD

size_t bg_am_chip_count(void) { return sizeof(chips) / sizeof(chips[0]); }

const bg_chip_info *bg_am_chip_at(size_t i) { return i < bg_am_chip_count() ? &chips[i] : NULL; }

const bg_chip_info *bg_am_chip_info(uint16_t vendor, uint16_t device) {
  return vendor == BG_AM_PCI_VENDOR_AMD ? bg_am_chip_lookup(device) : NULL;
}

const bg_chip_info *bg_am_chip_lookup(uint16_t device_id) {
  for (size_t i = 0; i < bg_am_chip_count(); i++)
    if (chips[i].device == device_id) return &chips[i];
  return NULL;
}

int bg_am_chip_check(uint16_t vendor, uint16_t device_id, const bg_chip_info **out) {
  if (out) *out = NULL;
  const bg_chip_info *c = vendor == BG_AM_PCI_VENDOR_AMD ? bg_am_chip_lookup(device_id) : NULL;
  if (c) {
    if (out) *out = c;
    return 0;
  }
  char list[512];
  size_t n = 0;
  list[0] = '\0';
  for (size_t i = 0; i < bg_am_chip_count() && n < sizeof(list); i++) {
    int w = snprintf(list + n, sizeof(list) - n, "%s0x%04x (%s)", i ? ", " : "", (unsigned)chips[i].device,
                     chips[i].chip);
    if (w < 0) break;
    n += (size_t)w;
  }
  if (vendor != BG_AM_PCI_VENDOR_AMD)
    return bg_error(BG_ENOTSUP, "am: PCI device 0x%04x:0x%04x is not supported by AM: vendor 0x%04x is not AMD (0x1002); "
                    "supported device ids: %s", (unsigned)vendor, (unsigned)device_id, (unsigned)vendor, list);
  return bg_error(BG_ENOTSUP, "am: PCI device 0x%04x:0x%04x is not supported by AM; supported device ids: %s",
                  (unsigned)vendor, (unsigned)device_id, list);
}

uint32_t bg_am_gfx_target_version(unsigned maj, unsigned min, unsigned rev) {
  uint32_t v = (uint32_t)maj * 10000u + (uint32_t)min * 100u + (uint32_t)rev;
  return v == 90403u ? 90402u : v;
}

int bg_am_gfx_arch(unsigned maj, unsigned min, unsigned rev, char *buf, size_t cap) {
  if (!buf || cap == 0) return bg_error(BG_EINVAL, "am: gfx arch: NULL or empty buffer");
  buf[0] = '\0';
  if (maj > 99 || min > 15 || rev > 15)
    return bg_error(BG_EINVAL, "am: gfx arch: GC IP %u.%u.%u cannot be written as gfx<major><hex minor><hex rev>", maj,
                    min, rev);
  uint32_t t = bg_am_gfx_target_version(maj, min, rev);
  int w = snprintf(buf, cap, "gfx%u%x%x", (unsigned)(t / 10000u), (unsigned)(t / 100u % 100u), (unsigned)(t % 100u));
  if (w < 0 || (size_t)w >= cap) {
    buf[0] = '\0';
    return bg_error(BG_EINVAL, "am: gfx arch: buffer of %zu bytes too small", cap);
  }
  return 0;
}

int bg_am_gc_check_supported(unsigned maj, unsigned min, unsigned rev) {
  /* The GFX rows of the IP table (am/am_ip.c): explicit versions rather than targets, since GC 9.4.2 (MI200, gfx90a in
   * Linux) would also give target 90402. */
  if (bg_am_ip_find(BG_AM_IP_GFX, maj, min, rev)) return 0;
  char arch[16], list[256];
  if (bg_am_gfx_arch(maj, min, rev, arch, sizeof(arch)) < 0) snprintf(arch, sizeof(arch), "gfx?");
  bg_am_ip_supported(BG_AM_IP_GFX, list, sizeof(list));
  return bg_error(BG_ENOTSUP, "am: GC IP %u.%u.%u (%s) is not supported; AM drives GC %s", maj, min, rev, arch, list);
}
