/* usb/usb_transport.h: the USB transport under the ASM24 bridge protocol.
 *
 * A transport moves control transfers on EP0 and bulk transfers on the bridge's two bulk endpoints (tinygrad
 * tinygrad/runtime/support/usb.py ASM24Controller). Two implementations: libusb-1.0 (usb_libusb.c, a real bridge)
 * and the emulated bridge of tests/mockgpu/asm24.c, which plugs in at this vtable.
 *
 * Ordering (usb_order.c). A USB host controller keeps order within one endpoint only: EP0, bulk OUT 0x02 and bulk
 * IN 0x81 are separate queues and may be serviced in either order (Linux drivers/usb/core/urb.c usb_unlink_urb: host
 * controller drivers "place all the URBs for a particular endpoint in a queue"; drivers/usb/host/xhci-ring.c: one
 * transfer ring per endpoint, each consumed in order, each with its own doorbell). The bridge's firmware takes one
 * request at a time: a 0xF0/0xF2 arm is followed by exactly its bulk data, and a request arriving while a bulk
 * transfer is armed is taken wrongly. So the driver never depends on order across endpoints: a transfer is handed
 * to the host controller only once every earlier transfer on another endpoint has completed; transfers on the
 * same endpoint are handed over together (the host keeps their order). The data of a stream therefore goes out
 * only after its arm completed, the next request only after the data completed (one stream open at a time), and
 * reads and config requests wait for pending stream writes. The chaining runs in the completion path (libusb: its
 * transfer callback), so the caller waits once per batch, not once per step.
 *
 * Errors a transfer can end with (status): -BG_ETIMEDOUT (timeout), -BG_EIO (stall, short transfer, cancelled
 * after an earlier failure), -BG_ENODEV (the device is gone). After the first failed transfer every later one
 * (in submission order) is cancelled: those not handed over yet never reach the wire, those in flight are
 * cancelled in the host controller. A stalled bulk endpoint stays halted (every later transfer on it stalls) until
 * the host clears the halt, and a cancelled or timed-out bulk transfer leaves the two ends of the pipe out of
 * step: bg_usb_resync clears the halt of both bulk endpoints (CLEAR_FEATURE(ENDPOINT_HALT), which also resets the
 * endpoint's state on the device), as usb-storage's bulk-only reset recovery does (Linux
 * drivers/usb/storage/transport.c usb_stor_Bulk_reset -> usb_stor_reset_common). The protocol layer
 * (usb/asm24.c) decides what to re-send. Internal: not installed. */
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
  /* the ordering gate's own (usb_order.c); the implementations leave them alone */
  uint8_t state;         /* enum bg_usb_xfer_state */
  uint64_t depth;        /* at submit: the caller's depth; once started: the depth it completes at (bg_usb_stats) */
} bg_usb_xfer;

enum bg_usb_xfer_state { BG_USB_QUEUED, BG_USB_STARTED, BG_USB_DONE };

/* Transfers and bytes moved per kind, and waits (round trips).
 * Critical path (usb_order.c): each transfer completes at a depth, counted in sequential USB transactions: one more
 * than the latest of what it had to wait for before it could be handed to the host controller (the caller's wait
 * before it was submitted, and every earlier transfer on another endpoint), and not before the transfer ahead of
 * it on its own endpoint (handed over together, they pipeline). critical is the deepest so far; a per-transaction
 * latency L (the completion-to-next-submission turnaround) makes critical * L the time the wire keeps the caller. */
typedef struct bg_usb_stats {
  uint64_t xfers[BG_USB_NKINDS];
  uint64_t bytes[BG_USB_NKINDS];
  uint64_t round_trips;   /* bg_usb_wait calls: the caller blocked */
  uint64_t resyncs;       /* bg_usb_resync calls: failed batches recovered from */
  uint64_t chained;       /* transfers handed over from a completion (they waited for another endpoint's transfer) */
  uint64_t critical;      /* the critical path so far, in sequential transactions */
} bg_usb_stats;

typedef struct bg_usb_transport bg_usb_transport;

/* An implementation hands single transfers to the host controller; usb_order.c decides when. */
typedef struct bg_usb_transport_ops {
  /* Queue x behind the transfers started before on its endpoint. When it completes (status, actual and halted
   * filled), the implementation calls t->complete(t->complete_ctx, x), only from within poll (libusb runs transfer
   * callbacks only inside libusb_handle_events). 0, or -BG_E* when it could not be started (then it never
   * completes). */
  int (*start)(bg_usb_transport *t, bg_usb_xfer *x);
  /* Cancel a started transfer that has not completed: it completes later, through poll, failed (-BG_EIO) unless
   * it had already finished. */
  void (*cancel)(bg_usb_transport *t, bg_usb_xfer *x);
  /* Block until at least one started transfer completed, and report each that did. 0, or -BG_E* when event
   * handling failed (the message set); then nothing started is left in flight. */
  int (*poll)(bg_usb_transport *t);
  void (*close)(bg_usb_transport *t);
  /* CLEAR_FEATURE(ENDPOINT_HALT) on bulk endpoint ep (libusb_clear_halt), with nothing in flight: the
   * endpoint takes transfers again and the device drops what it had armed for it. 0 or -BG_E*. */
  int (*clear_halt)(bg_usb_transport *t, uint8_t ep);
} bg_usb_transport_ops;

typedef void (*bg_usb_complete_fn)(void *ctx, bg_usb_xfer *x);

struct bg_usb_transport {
  const bg_usb_transport_ops *ops;
  char name[32];        /* "usb:BUS-ADDR" (the lock name, tinygrad tinygrad/runtime/support/usb.py ASM24Controller), or "mockusb:N" */
  char product[128];    /* iProduct */
  bg_usb_stats stats;
  /* Where an implementation reports completions: set by usb_order.c (a wrapping transport points its inner one's
   * at the outer gate: usb_lock.c). */
  bg_usb_complete_fn complete;
  void *complete_ctx;
  /* the ordering gate (usb_order.c): transfers submitted and not yet waited for, in submission order */
  bg_usb_xfer **q;
  size_t nq, capq;
  size_t qdone;         /* q[0..qdone) are done */
  size_t inflight;      /* started and not completed */
  bool failed;          /* a transfer failed: every later one is cancelled until the queue drains */
  bool pumping;
  uint64_t ep_depth[3]; /* the depth the last transfer started on EP0, 0x02, 0x81 completes at */
  uint64_t now;         /* the caller's depth: the deepest transfer it waited for */
};

/* The endpoint a transfer of kind k goes to: 0 (EP0), 1 (0x02), 2 (0x81). */
unsigned bg_usb_endpoint_slot(bg_usb_kind k);

/* Submit x[0..n) (in order, behind what is in flight) and wait for them: one wait of the caller. 0 or the first
 * failure (the message names the transfer). Counted in t->stats. */
int bg_usb_run(bg_usb_transport *t, bg_usb_xfer *x, size_t n);
/* The two halves, for pipelines that overlap host work with transfers in flight. bg_usb_wait returns when
 * x[0..n) completed and forgets them (the queue keeps later ones); it drives every completion meanwhile. */
int bg_usb_submit(bg_usb_transport *t, bg_usb_xfer *x, size_t n);
int bg_usb_wait(bg_usb_transport *t, bg_usb_xfer *x, size_t n);
/* Cancel and reap whatever is still in flight, then close (the queue's memory too). */
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
