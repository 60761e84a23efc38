/* usb/usb_scan.h: list ASM24 USB-to-PCIe bridges (read-only).
 *
 * Uses a private libusb context. A device is opened only to read its product string and is closed
 * again at once: no interface is claimed, no kernel driver is detached, nothing is reset. */
#ifndef BG_USB_USB_SCAN_H
#define BG_USB_USB_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A bridge identity (tinygrad tinygrad/runtime/support/usb.py ASM24Controller). */
typedef struct bg_usb_bridge_id {
  uint16_t vid, pid;
  bool custom_fw;    /* true: tinygrad's custom firmware, usable; false: stock ASMedia, flash first */
  const char *what;
} bg_usb_bridge_id;

typedef struct bg_usb_info {
  uint8_t bus, address;
  char name[16];          /* "usb:BUS-ADDR", the device name (and lock-file key) of the reference */
  char port_path[48];     /* "BUS-P1.P2...", as in /sys/bus/usb/devices */
  uint16_t vid, pid;
  int speed_mbps;         /* 0 when libusb does not know */
  const char *speed;      /* "SuperSpeed (5 Gbit/s)", "unknown" */
  const bg_usb_bridge_id *id;
  bool opened;            /* the product string could be read */
  char product[128];      /* iProduct, "" when not opened */
  bool product_ok;        /* product starts with "custom" or "AS2462" (the driver's check) */
  char note[128];         /* why it was not opened, else "" */
} bg_usb_info;

/* Scan the USB buses for bridges. On success *out (free with bg_usb_free) holds *n entries in bus,
 * address order. Returns 0 or a negative BG_E* code (built without libusb, libusb_init failed). */
int bg_usb_scan(bg_usb_info **out, size_t *n);
void bg_usb_free(bg_usb_info *list);

/* Table lookup; NULL when (vid, pid) is not a bridge. */
const bg_usb_bridge_id *bg_usb_bridge_lookup(uint16_t vid, uint16_t pid);
/* The bridge table, for --help and tests. */
size_t bg_usb_bridge_ids(const bg_usb_bridge_id **out);

#endif
