/* usb/usb_transport.h: the USB transport under the ASM24 bridge protocol.
 *
 * A transport moves control transfers on EP0 and bulk transfers on the bridge's two bulk
 * endpoints (tinygrad tinygrad/runtime/support/usb.py ASM24Controller). Transfers are submitted as an ordered batch and
 * complete in order; a batch of n transfers costs one round trip (one wait), however large n is.
 * Two implementations: libusb-1.0 (usb_libusb.c, a real bridge) and the emulated bridge of
 * tests/mockgpu/asm24.c, which plugs in at this vtable.
 *
 * Errors a transfer can end with (status): -BG_ETIMEDOUT (timeout), -BG_EIO (stall, short
 * transfer, cancelled after an earlier failure of its batch), -BG_ENODEV (the device is gone).
 * After the first failed transfer of a batch the rest of the batch is cancelled. A stalled bulk
 * endpoint stays halted (every later transfer on it stalls) until the host clears the halt, and a
 * cancelled or timed-out bulk transfer leaves the two ends of the pipe out of step: bg_usb_resync
 * clears the halt of both bulk endpoints (CLEAR_FEATURE(ENDPOINT_HALT), which also resets the
 * endpoint's state on the device), as usb-storage's bulk-only reset recovery does (Linux
 * drivers/usb/storage/transport.c usb_stor_Bulk_reset -> usb_stor_reset_common). The protocol
 * layer (usb/asm24.c) decides what to re-send. Internal: not installed. */
#ifndef BG_USB_USB_TRANSPORT_H
#define BG_USB_USB_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: configuration 1, interface 0, alt setting 0; bulk OUT 0x02, bulk IN 0x81. */
#define BG_USB_EP_BULK_OUT 0x02u
#define BG_USB_EP_BULK_IN 0x81u
/* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: vendor requests, recipient device. */
#define BG_USB_REQTYPE_VENDOR_OUT 0x40u
#define BG_USB_REQTYPE_VENDOR_IN 0xC0u

typedef enum bg_usb_kind {
  BG_USB_CTRL_OUT,  /* vendor request, host to device, data buf[0..len) (len may be 0) */
  BG_USB_CTRL_IN,   /* vendor request, device to host, len bytes expected */
  BG_USB_BULK_OUT,  /* EP 0x02 */
  BG_USB_BULK_IN,   /* EP 0x81 */
  BG_USB_NKINDS,
} bg_usb_kind;

typedef struct bg_usb_xfer {
  bg_usb_kind kind;
  uint8_t req;           /* control: bRequest */
  uint16_t val, idx;     /* control: wValue, wIndex */
  void *buf;             /* data (OUT: read, IN: filled); must live until the batch completed */
  size_t len;            /* control: <= 0xFFFF */
  unsigned timeout_ms;
  /* filled on completion */
  size_t actual;
  int status;            /* 0 or -BG_E* */
  bool halted;           /* the endpoint answered STALL (LIBUSB_TRANSFER_STALL): halted until cleared */
} bg_usb_xfer;

/* Transfers and bytes moved per kind, and waits (round trips). */
typedef struct bg_usb_stats {
  uint64_t xfers[BG_USB_NKINDS];
  uint64_t bytes[BG_USB_NKINDS];
  uint64_t round_trips;
  uint64_t resyncs;       /* bg_usb_resync calls: failed batches recovered from */
} bg_usb_stats;

typedef struct bg_usb_transport bg_usb_transport;

typedef struct bg_usb_transport_ops {
  /* Start x[0..n) in order. 0, or -BG_E* when nothing could be started. */
  int (*submit)(bg_usb_transport *t, bg_usb_xfer *x, size_t n);
  /* Wait until x[0..n) (submitted before) completed; fills actual/status. 0, or the first
   * failed transfer's status (bg_usb_wait writes the message), or another error with its message. */
  int (*wait)(bg_usb_transport *t, bg_usb_xfer *x, size_t n);
  void (*close)(bg_usb_transport *t);
  /* CLEAR_FEATURE(ENDPOINT_HALT) on bulk endpoint ep (libusb_clear_halt), with nothing in flight: the
   * endpoint takes transfers again and the device drops what it had armed for it. 0 or -BG_E*. */
  int (*clear_halt)(bg_usb_transport *t, uint8_t ep);
} bg_usb_transport_ops;

struct bg_usb_transport {
  const bg_usb_transport_ops *ops;
  char name[32];        /* "usb:BUS-ADDR" (the lock name, tinygrad tinygrad/runtime/support/usb.py ASM24Controller), or "mockusb:N" */
  char product[128];    /* iProduct */
  bg_usb_stats stats;
};

/* Submit x[0..n) and wait for them: one round trip. 0 or the first failure (the message names
 * the transfer). Counted in t->stats. */
int bg_usb_run(bg_usb_transport *t, bg_usb_xfer *x, size_t n);
/* The two halves, for pipelines that overlap host work with transfers in flight. */
int bg_usb_submit(bg_usb_transport *t, bg_usb_xfer *x, size_t n);
int bg_usb_wait(bg_usb_transport *t, bg_usb_xfer *x, size_t n);
void bg_usb_transport_close(bg_usb_transport *t);
/* After a failed batch, once nothing is in flight: clear the halt of both bulk endpoints, so the
 * next command starts on a clean pipe. Counted in t->stats.resyncs. 0 or -BG_E* naming the endpoint. */
int bg_usb_resync(bg_usb_transport *t);

/* "CTRL_OUT 0xF0 wValue 0x0060 wIndex 0x1" and the like, for messages. */
void bg_usb_xfer_describe(const bg_usb_xfer *x, char *buf, size_t n);
const char *bg_usb_kind_name(bg_usb_kind k);
/* A transfer that may be retried (timeout, stall, short), as opposed to a gone device. */
bool bg_usb_retryable(int status);

/* ---------------- the libusb-1.0 implementation (usb_libusb.c) ---------------- */

/* Open bridge number index (0-based, in bus/address order) among the custom-firmware bridges of
 * tinygrad tinygrad/runtime/support/usb.py ASM24Controller: lock "usb:BUS-ADDR" (platform/pci_lock.h), check the product string, detach a kernel
 * driver, set configuration 1, claim interface 0, alt setting 0. Errors say which: no such
 * bridge, stock ASMedia firmware (flash the custom one), claimed by another process (pid), no
 * permission, gone. */
int bg_usb_open_libusb(int index, bg_usb_transport **out);

#endif
