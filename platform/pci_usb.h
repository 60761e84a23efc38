/* platform/pci_usb.h: PCI functions behind USB-to-PCIe bridges, opened as a bg_pci_dev (platform/pci.h).
 *
 * platform names the interface and usb/ implements it (usb/usb_pci.c, usb/usb_scan.c; the reference is
 * tinygrad tinygrad/runtime/support/system.py USBPCIDevice), as platform/pci_sysfs.c implements bg_pci_open_sysfs:
 * a driver opens, copies to and tells apart such a device through platform/ alone (bg_pci_features,
 * bg_pci_copy_in/out) and includes nothing of usb/. Internal: not installed. */
#ifndef BG_PLATFORM_PCI_USB_H
#define BG_PLATFORM_PCI_USB_H

#include "platform/pci.h"

typedef struct bg_usb_transport bg_usb_transport;

/* Names ("usb:BUS-ADDR", the lock-file key) of the bridges with the custom firmware, in the order
 * bg_usb_pci_open_index counts them: up to max of them into names, the count returned, or a negative error
 * (built without libusb, no USB access). */
int bg_usb_pci_scan(char (*names)[16], int max);
/* Make *t hold the lock file of its device name (platform/pci_lock.h) until it is closed, as the libusb transport
 * does: -BG_EBUSY "device <name> is in use by pid N" while another process holds it; on failure *t is closed and
 * NULL. For transports that do not lock by themselves (the emulated bridge of tests/mockgpu). usb/usb_lock.c. */
int bg_usb_transport_lock(bg_usb_transport **t);
/* Take the transport (closed on failure too) and open the GPU behind it. */
int bg_usb_pci_open(bg_usb_transport *t, bg_pci_dev **out);
/* The index-th custom-firmware bridge through libusb (bg_usb_open_libusb). */
int bg_usb_pci_open_index(int index, bg_pci_dev **out);
/* Up to 16 reads of PCIe memory (bus addresses, whole dwords at dword addresses) behind the queued writes, in order,
 * in one bridge round trip (a signal poll that also reads what a fault check needs); -BG_ENOTSUP if d is no bridge. */
typedef struct bg_pci_read { uint64_t addr; void *dst; size_t n; } bg_pci_read;
int bg_usb_pci_readv(bg_pci_dev *d, const bg_pci_read *rd, size_t n);

#endif
