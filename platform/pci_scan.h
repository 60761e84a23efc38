/* platform/pci_scan.h: read-only PCI discovery for tools and device selection.
 *
 * Lists PCI functions with their ids, class, BARs, bound kernel driver and PCIe link, and names
 * the GPUs the drivers know. Nothing here opens, unbinds or writes to a device.
 *
 * Sources: the real bus through libpciaccess; when BG_SYSFS_ROOT is set, the sysfs tree under
 * that root instead (libpciaccess cannot be pointed elsewhere, and the emulated devices of
 * tests/mockgpu live in such a tree). Driver and link always come from sysfs. */
#ifndef BG_PLATFORM_PCI_SCAN_H
#define BG_PLATFORM_PCI_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/pci_chip.h"

#define BG_PCI_VENDOR_AMD 0x1002u
#define BG_PCI_VENDOR_NV 0x10deu
#define BG_PCI_NBARS 6

typedef struct bg_pci_bar {
  uint64_t base, size; /* size 0: BAR not implemented */
  bool is_io, is_64, prefetch;
} bg_pci_bar;

/* A known chip (platform/pci_chip.h): a backend's table entry for an id, or hcq/gpu_scan.c's NVIDIA family entry. */
typedef bg_chip_info bg_pci_chip;

typedef struct bg_pci_info {
  uint32_t domain;
  uint8_t bus, dev, fn;
  char bdf[16];               /* "0000:03:00.0" */
  uint16_t vendor, device, subvendor, subdevice;
  uint32_t class_code;        /* base class << 16 | subclass << 8 | prog-if */
  uint8_t revision;
  bool is_gpu;                /* kept by the default (GPU-only) scan */
  const bg_pci_chip *chip;    /* NULL: not in the table */
  bg_pci_bar bars[BG_PCI_NBARS];
  bool bars_known;            /* false: probing failed, see note */
  char driver[64];            /* bound kernel driver, "" for none */
  char link_speed[32];        /* "16.0 GT/s PCIe", "" when sysfs has no link files */
  int link_width;             /* lanes, 0 when unknown */
  char note[160];             /* per-device problem that did not fail the scan, else "" */
} bg_pci_info;

enum bg_pci_scan_flags {
  BG_PCI_SCAN_ALL = 1u << 0,  /* keep every function, not only AMD/NVIDIA GPUs */
};

/* Names a chip from its ids, or NULL (the HCQ core passes the backends' look-up: hcq/gpu_scan.c). */
typedef const bg_chip_info *(*bg_pci_chip_fn)(uint16_t vendor, uint16_t device);

/* Enumerate the bus. On success *out is a malloc'd array (free with bg_pci_free) of *n entries sorted
 * by BDF, each named through chip_of (may be NULL), and *nscanned (may be NULL) is the number of functions seen
 * before filtering. Returns 0 or a negative BG_E* code (e.g. no /sys/bus/pci, built without libpciaccess).
 * Most callers want bg_pci_scan (hcq/gpu_scan.h), which names chips through the backends. */
int bg_pci_enumerate(unsigned flags, bg_pci_chip_fn chip_of, bg_pci_info **out, size_t *n, size_t *nscanned);
void bg_pci_free(bg_pci_info *list);

/* The GPU filter: AMD/NVIDIA with a display (0x03xx) or processing-accelerator (0x12xx) class,
 * or any class for an exact-id chip (mask 0xffff: AM probes by id alone; NVIDIA's masked ids
 * also cover the boards' HDMI audio functions, so NVIDIA needs the class). */
bool bg_pci_class_is_gpu(uint16_t vendor, uint32_t class_code, const bg_chip_info *chip);
/* "AMD", "NVIDIA", "Intel", ... or NULL. */
const char *bg_pci_vendor_name(uint16_t vendor);
/* Root of sysfs: $BG_SYSFS_ROOT or "/sys". */
const char *bg_pci_sysfs_root(void);

#endif
