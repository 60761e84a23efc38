/* usb/usb_scan.c: list ASM24 bridges through libusb-1.0 (usb/usb_scan.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "bg_config.h"
#include "platform/pci_usb.h"
#include "usb/usb_scan.h"

#if BG_HAVE_LIBUSB
#include <libusb.h>
#endif

/* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: custom firmware 0xADD1:0x0001 and 0x3801:0x0001 (the second
 * added in tinygrad 20b8ecff50); stock ASMedia 0x174C:0x2464 / 0x174C:0x2463 (flash tooling only). */
static const bg_usb_bridge_id bridge_ids[] = {
  {0xadd1, 0x0001, true, "ASM24 bridge, custom firmware"},
  {0x3801, 0x0001, true, "ASM24 bridge, custom firmware (new vendor id)"},
  {0x174c, 0x2464, false, "ASM2464 bridge, stock ASMedia firmware"},
  {0x174c, 0x2463, false, "ASM2463 bridge, stock ASMedia firmware"},
};

size_t bg_usb_bridge_ids(const bg_usb_bridge_id **out) {
  *out = bridge_ids;
  return sizeof(bridge_ids) / sizeof(bridge_ids[0]);
}

const bg_usb_bridge_id *bg_usb_bridge_lookup(uint16_t vid, uint16_t pid) {
  for (size_t i = 0; i < sizeof(bridge_ids) / sizeof(bridge_ids[0]); i++)
    if (bridge_ids[i].vid == vid && bridge_ids[i].pid == pid) return &bridge_ids[i];
  return NULL;
}

void bg_usb_free(bg_usb_info *list) { free(list); }

#if BG_HAVE_LIBUSB
static const char *speed_name(int s, int *mbps) {
  switch (s) {
  case LIBUSB_SPEED_LOW: *mbps = 1; return "LowSpeed (1.5 Mbit/s)";
  case LIBUSB_SPEED_FULL: *mbps = 12; return "FullSpeed (12 Mbit/s)";
  case LIBUSB_SPEED_HIGH: *mbps = 480; return "HighSpeed (480 Mbit/s)";
  case LIBUSB_SPEED_SUPER: *mbps = 5000; return "SuperSpeed (5 Gbit/s)";
  case LIBUSB_SPEED_SUPER_PLUS: *mbps = 10000; return "SuperSpeed+ (10 Gbit/s)";
  default: *mbps = 0; return "unknown";
  }
}

static int usb_errcode(int e) {
  switch (e) {
  case LIBUSB_ERROR_ACCESS: return BG_EPERM;
  case LIBUSB_ERROR_NO_MEM: return BG_ENOMEM;
  case LIBUSB_ERROR_NO_DEVICE: case LIBUSB_ERROR_NOT_FOUND: case LIBUSB_ERROR_OTHER: return BG_ENODEV;
  default: return BG_EIO;
  }
}

/* Read iProduct without claiming anything; on failure say why in note. */
static void read_product(libusb_device *dev, const struct libusb_device_descriptor *dd, bg_usb_info *u) {
  libusb_device_handle *h = NULL;
  int r = libusb_open(dev, &h);
  if (r != 0) {
    snprintf(u->note, sizeof(u->note), "not opened: %s%s", libusb_error_name(r),
             r == LIBUSB_ERROR_ACCESS ? " (needs root or a udev rule)" : "");
    return;
  }
  unsigned char s[sizeof(u->product)];
  r = dd->iProduct ? libusb_get_string_descriptor_ascii(h, dd->iProduct, s, (int)sizeof(s)) : 0;
  libusb_close(h);
  if (r < 0) {
    snprintf(u->note, sizeof(u->note), "product string: %s", libusb_error_name(r));
    return;
  }
  memcpy(u->product, s, (size_t)r);
  u->product[r] = '\0';
  u->opened = true;
  u->product_ok = strncmp(u->product, "custom", 6) == 0 || strncmp(u->product, "AS2462", 6) == 0;
}

static void fill(libusb_device *dev, const struct libusb_device_descriptor *dd, const bg_usb_bridge_id *id,
                 bg_usb_info *u) {
  memset(u, 0, sizeof(*u));
  u->bus = libusb_get_bus_number(dev);
  u->address = libusb_get_device_address(dev);
  snprintf(u->name, sizeof(u->name), "usb:%u-%u", u->bus, u->address);
  uint8_t ports[8];
  int np = libusb_get_port_numbers(dev, ports, (int)sizeof(ports));
  int off = snprintf(u->port_path, sizeof(u->port_path), "%u", u->bus);
  for (int i = 0; i < np && off > 0 && (size_t)off < sizeof(u->port_path); i++)
    off += snprintf(u->port_path + off, sizeof(u->port_path) - (size_t)off, "%c%u", i ? '.' : '-', ports[i]);
  u->vid = dd->idVendor;
  u->pid = dd->idProduct;
  u->speed = speed_name(libusb_get_device_speed(dev), &u->speed_mbps);
  u->id = id;
  read_product(dev, dd, u);
}

static int cmp_usb(const void *a, const void *b) {
  const bg_usb_info *x = a, *y = b;
  if (x->bus != y->bus) return x->bus < y->bus ? -1 : 1;
  return (x->address > y->address) - (x->address < y->address);
}

int bg_usb_scan(bg_usb_info **out, size_t *n) {
  *out = NULL;
  *n = 0;
  libusb_context *ctx = NULL;
  int r = libusb_init(&ctx);
  if (r != 0)
    return bg_error(usb_errcode(r), "usb scan: libusb_init failed: %s (%s)%s", libusb_error_name(r),
                    libusb_strerror(r), r == LIBUSB_ERROR_OTHER ? "; no usbfs (/dev/bus/usb) on this machine?" : "");
  libusb_device **list = NULL;
  ssize_t cnt = libusb_get_device_list(ctx, &list);
  if (cnt < 0) {
    libusb_exit(ctx);
    return bg_error(usb_errcode((int)cnt), "usb scan: libusb_get_device_list failed: %s", libusb_error_name((int)cnt));
  }
  bg_usb_info *v = cnt ? calloc((size_t)cnt, sizeof(*v)) : NULL;
  int err = (cnt && !v) ? bg_error(BG_ENOMEM, "usb scan: out of memory for %zd devices", cnt) : 0;
  size_t k = 0;
  for (ssize_t i = 0; !err && i < cnt; i++) {
    struct libusb_device_descriptor dd;
    if (libusb_get_device_descriptor(list[i], &dd) != 0) continue;
    const bg_usb_bridge_id *id = bg_usb_bridge_lookup(dd.idVendor, dd.idProduct);
    if (id) fill(list[i], &dd, id, &v[k++]);
  }
  libusb_free_device_list(list, 1);
  libusb_exit(ctx);
  if (err) {
    free(v);
    return err;
  }
  if (k > 1) qsort(v, k, sizeof(*v), cmp_usb);
  if (k == 0) {
    free(v);
    v = NULL;
  }
  *out = v;
  *n = k;
  return 0;
}
#else
int bg_usb_scan(bg_usb_info **out, size_t *n) {
  *out = NULL;
  *n = 0;
  return bg_error(BG_ENOTSUP, "usb scan: baregpu was built without libusb-1.0 (install libusb-1.0-0-dev and "
                  "reconfigure with -Dusb=enabled)");
}
#endif

/* platform/pci_usb.h: the usable bridges by name, for the drivers' device counts (am/am_iface.c USB+AMD). */
int bg_usb_pci_scan(char (*names)[16], int max) {
  bg_usb_info *list = NULL;
  size_t n = 0;
  int e = bg_usb_scan(&list, &n);
  if (e < 0) return e;
  int cnt = 0;
  for (size_t i = 0; i < n; i++) {
    if (!list[i].id || !list[i].id->custom_fw) continue;
    if (cnt < max) snprintf(names[cnt], 16, "%s", list[i].name);
    cnt++;
  }
  bg_usb_free(list);
  return cnt;
}
