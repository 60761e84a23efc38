/* usb/usb_libusb.c: the libusb-1.0 transport (usb/usb_transport.h).
 *
 * One private libusb context per opened bridge; events are handled on that context only (the reference's pitfall
 * 1.2: never the default context). Every transfer is asynchronous and handed over singly by usb_order.c, which
 * decides when; its completion callback reports to usb_order.c, which may hand over the next transfers from inside
 * the callback (libusb_submit_transfer is allowed there), so chained transfers cost the caller no extra wait. Each
 * transfer carries its request's timeout (libusb cancels it when it expires: LIBUSB_TRANSFER_TIMED_OUT); halts are
 * cleared by the protocol layer's recovery (bg_usb_resync -> lx_clear_halt). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "bg_config.h"
#include "platform/pci_lock.h"
#include "usb/usb_scan.h"
#include "usb/usb_transport.h"

#if BG_HAVE_LIBUSB
#include <libusb.h>

typedef struct inflight {
  bg_usb_xfer *x;
  struct libusb_transfer *lt;
  uint8_t *setup;        /* control: setup packet + data */
  struct lx *owner;
  struct inflight *prev, *next;
} inflight;

typedef struct lx {
  bg_usb_transport t;
  libusb_context *ctx;
  libusb_device_handle *h;
  int lock_fd;
  inflight *fl;          /* transfers in flight, a doubly linked list */
  size_t nfl;
  uint64_t ncompleted;   /* callbacks run */
} lx;

static int usb_code(int e) {
  switch (e) {
  case LIBUSB_ERROR_ACCESS: return BG_EPERM;
  case LIBUSB_ERROR_NO_MEM: return BG_ENOMEM;
  case LIBUSB_ERROR_NO_DEVICE: case LIBUSB_ERROR_NOT_FOUND: return BG_ENODEV;
  case LIBUSB_ERROR_BUSY: return BG_EBUSY;
  case LIBUSB_ERROR_TIMEOUT: return BG_ETIMEDOUT;
  default: return BG_EIO;
  }
}

static void unlink_fl(lx *u, inflight *f) {
  if (f->prev) f->prev->next = f->next;
  else u->fl = f->next;
  if (f->next) f->next->prev = f->prev;
  u->nfl--;
}

static void release(inflight *f) {
  free(f->setup);
  libusb_free_transfer(f->lt);
  free(f);
}

static void LIBUSB_CALL on_done(struct libusb_transfer *lt) {
  inflight *f = lt->user_data;
  lx *u = f->owner;
  bg_usb_xfer *x = f->x;
  size_t got = (size_t)lt->actual_length;
  switch (lt->status) {
  case LIBUSB_TRANSFER_COMPLETED: x->status = 0; break;
  case LIBUSB_TRANSFER_TIMED_OUT: x->status = -BG_ETIMEDOUT; break;
  case LIBUSB_TRANSFER_NO_DEVICE: x->status = -BG_ENODEV; break;
  default: x->status = -BG_EIO; break;  /* stall, error, overflow, cancelled */
  }
  x->actual = got;
  x->halted = lt->status == LIBUSB_TRANSFER_STALL;
  if (x->status == 0 && got != x->len) x->status = -BG_EIO;  /* short: an error (tinygrad tinygrad/runtime/support/usb.py ASM24Controller) */
  if (x->kind == BG_USB_CTRL_IN && got) memcpy(x->buf, f->setup + LIBUSB_CONTROL_SETUP_SIZE, got);
  unlink_fl(u, f);
  release(f);
  u->ncompleted++;
  /* usb_order.c: may start the transfers this one gated, from here */
  u->t.complete(u->t.complete_ctx, x);
}

static int lx_start(bg_usb_transport *t, bg_usb_xfer *q) {
  lx *u = (lx *)t;
  inflight *f = calloc(1, sizeof(*f));
  if (!f || !(f->lt = libusb_alloc_transfer(0))) {
    free(f);
    return bg_error(BG_ENOMEM, "%s: libusb_alloc_transfer failed", t->name);
  }
  f->x = q;
  f->owner = u;
  if (q->kind == BG_USB_CTRL_OUT || q->kind == BG_USB_CTRL_IN) {
    f->setup = malloc(LIBUSB_CONTROL_SETUP_SIZE + q->len);
    if (!f->setup) {
      release(f);
      return bg_error(BG_ENOMEM, "%s: out of memory for a control transfer", t->name);
    }
    bool in = q->kind == BG_USB_CTRL_IN;
    libusb_fill_control_setup(f->setup, in ? BG_USB_REQTYPE_VENDOR_IN : BG_USB_REQTYPE_VENDOR_OUT, q->req, q->val,
                              q->idx, (uint16_t)q->len);
    if (!in && q->len) memcpy(f->setup + LIBUSB_CONTROL_SETUP_SIZE, q->buf, q->len);
    libusb_fill_control_transfer(f->lt, u->h, f->setup, on_done, f, q->timeout_ms);
  } else {
    unsigned char ep = q->kind == BG_USB_BULK_OUT ? BG_USB_EP_BULK_OUT : BG_USB_EP_BULK_IN;
    libusb_fill_bulk_transfer(f->lt, u->h, ep, q->buf, (int)q->len, on_done, f, q->timeout_ms);
  }
  int r = libusb_submit_transfer(f->lt);
  if (r != 0) {
    char d[128];
    bg_usb_xfer_describe(q, d, sizeof(d));
    release(f);
    return bg_error(usb_code(r), "%s: submitting %s failed: %s%s", t->name, d, libusb_error_name(r),
                    r == LIBUSB_ERROR_NO_DEVICE ? " (the bridge is gone: unplugged or reset)" : "");
  }
  f->next = u->fl;
  if (u->fl) u->fl->prev = f;
  u->fl = f;
  u->nfl++;
  return 0;
}

/* Rare (after a failure): a walk of what is in flight finds x's libusb transfer. */
// cppcheck-suppress constParameter ; the signature is bg_usb_transport_ops'
static void lx_cancel(bg_usb_transport *t, bg_usb_xfer *x) {
  lx *u = (lx *)t;
  for (inflight *f = u->fl; f; f = f->next)
    if (f->x == x) {
      libusb_cancel_transfer(f->lt);
      return;
    }
}

/* Event handling failed: cancel what is in flight and reap it, so that nothing completes into a caller's buffer after
 * its call returned. Transfers libusb never gives back are reported failed and left to libusb (not freed: it may
 * still own them). */
static void abort_all(lx *u) {
  for (inflight *f = u->fl; f; f = f->next) libusb_cancel_transfer(f->lt);
  struct timeval tv = {1, 0};
  for (int i = 0; i < 16 && u->nfl; i++)
    if (libusb_handle_events_timeout_completed(u->ctx, &tv, NULL) != 0) break;
  while (u->fl) {
    inflight *f = u->fl;
    unlink_fl(u, f);
    f->x->status = -BG_EIO;
    f->x->actual = 0;
    u->t.complete(u->t.complete_ctx, f->x);
  }
}

/* Callbacks run inside libusb_handle_events_completed; it returns after handling events (or its own timeout, then
 * it is called again) until at least one transfer completed. */
static int lx_poll(bg_usb_transport *t) {
  lx *u = (lx *)t;
  uint64_t before = u->ncompleted;
  while (u->nfl && u->ncompleted == before) {
    int r = libusb_handle_events_completed(u->ctx, NULL);
    if (r != 0 && r != LIBUSB_ERROR_INTERRUPTED) {
      int e = bg_error(usb_code(r), "%s: libusb_handle_events failed: %s", t->name, libusb_error_name(r));
      abort_all(u);
      return e;
    }
  }
  return 0;
}
/* libusb_clear_halt: CLEAR_FEATURE(ENDPOINT_HALT) to the device, and the host side's toggle/sequence reset. */
static int lx_clear_halt(bg_usb_transport *t, uint8_t ep) {
  lx *u = (lx *)t;
  int r = libusb_clear_halt(u->h, ep);
  if (r == 0) return 0;
  return bg_error(usb_code(r), "%s: libusb_clear_halt(0x%02X) failed: %s", t->name, ep, libusb_error_name(r));
}

static void forget_completion(void *ctx, bg_usb_xfer *x) { (void)ctx, (void)x; }

/* usb_order.c reaped what was in flight before calling this; what is left (event handling failed) is nobody's. */
static void lx_close(bg_usb_transport *t) {
  lx *u = (lx *)t;
  u->t.complete = forget_completion;
  if (u->nfl) abort_all(u);
  if (u->h) {
    libusb_release_interface(u->h, 0);
    libusb_close(u->h);
  }
  libusb_exit(u->ctx);
  bg_pci_lock_release(u->lock_fd);
  free(u);
}

static const bg_usb_transport_ops lx_ops = {lx_start, lx_cancel, lx_poll, lx_close, lx_clear_halt};

/* The index-th custom-firmware bridge; *stock set when only stock-firmware ones exist. */
static libusb_device *pick(libusb_device **list, ssize_t cnt, int index, int *ncustom, int *nstock) {
  libusb_device *best[64] = {NULL};
  int k = 0;
  *ncustom = *nstock = 0;
  for (ssize_t i = 0; i < cnt && k < 64; i++) {
    struct libusb_device_descriptor dd;
    if (libusb_get_device_descriptor(list[i], &dd) != 0) continue;
    const bg_usb_bridge_id *id = bg_usb_bridge_lookup(dd.idVendor, dd.idProduct);
    if (!id) continue;
    if (!id->custom_fw) {
      (*nstock)++;
      continue;
    }
    best[k++] = list[i];
  }
  /* bus, address order, as bg_usb_scan lists them */
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0; j--) {
      unsigned a = (unsigned)libusb_get_bus_number(best[j - 1]) << 8 | libusb_get_device_address(best[j - 1]);
      unsigned b = (unsigned)libusb_get_bus_number(best[j]) << 8 | libusb_get_device_address(best[j]);
      if (a <= b) break;
      libusb_device *tmp = best[j];
      best[j] = best[j - 1];
      best[j - 1] = tmp;
    }
  *ncustom = k;
  return index < k ? best[index] : NULL;
}

static int claim(lx *u, libusb_device *dev) {
  bg_usb_transport *t = &u->t;
  int r = libusb_open(dev, &u->h);
  if (r != 0)
    return bg_error(usb_code(r), "%s: open failed: %s%s", t->name, libusb_error_name(r),
                    r == LIBUSB_ERROR_ACCESS ? " (needs root or a udev rule for the bridge)" : "");
  struct libusb_device_descriptor dd;
  unsigned char s[sizeof(t->product)];
  r = libusb_get_device_descriptor(dev, &dd);
  r = r == 0 && dd.iProduct ? libusb_get_string_descriptor_ascii(u->h, dd.iProduct, s, (int)sizeof(s) - 1) : r;
  if (r < 0) return bg_error(usb_code(r), "%s: reading the product string failed: %s", t->name, libusb_error_name(r));
  s[r] = 0;
  snprintf(t->product, sizeof(t->product), "%s", (const char *)s);
  /* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: the custom firmware's product string starts with "custom" or "AS2462". */
  if (strncmp(t->product, "custom", 6) != 0 && strncmp(t->product, "AS2462", 6) != 0)
    return bg_error(BG_ENOTSUP, "%s: product \"%s\" is not the custom ASM24 firmware (expected a name starting "
                    "with \"custom\" or \"AS2462\"); flash the custom firmware first", t->name, t->product);
  if (libusb_kernel_driver_active(u->h, 0) == 1) {
    if ((r = libusb_detach_kernel_driver(u->h, 0)) != 0)
      return bg_error(usb_code(r), "%s: detaching the kernel driver (uas/usb-storage) failed: %s", t->name,
                      libusb_error_name(r));
    libusb_reset_device(u->h);
  }
  if ((r = libusb_set_configuration(u->h, 1)) != 0 && r != LIBUSB_ERROR_BUSY)
    return bg_error(usb_code(r), "%s: set configuration 1 failed: %s", t->name, libusb_error_name(r));
  if ((r = libusb_claim_interface(u->h, 0)) != 0)
    return bg_error(usb_code(r), "%s: claiming interface 0 failed: %s%s", t->name, libusb_error_name(r),
                    r == LIBUSB_ERROR_BUSY ? " (claimed by another process or a kernel driver)" : "");
  if ((r = libusb_set_interface_alt_setting(u->h, 0, 0)) != 0)
    return bg_error(usb_code(r), "%s: alt setting 0 failed: %s", t->name, libusb_error_name(r));
  return 0;
}

int bg_usb_open_libusb(int index, bg_usb_transport **out) {
  *out = NULL;
  lx *u = calloc(1, sizeof(*u));
  if (!u) return bg_error(BG_ENOMEM, "usb: out of memory");
  u->t.ops = &lx_ops;
  u->lock_fd = -1;
  int r = libusb_init(&u->ctx);
  if (r != 0) {
    free(u);
    return bg_error(usb_code(r), "usb: libusb_init failed: %s%s", libusb_error_name(r),
                    r == LIBUSB_ERROR_OTHER ? " (no usbfs at /dev/bus/usb on this machine?)" : "");
  }
  libusb_device **list = NULL;
  ssize_t cnt = libusb_get_device_list(u->ctx, &list);
  int ncustom = 0, nstock = 0;
  libusb_device *dev = cnt >= 0 ? pick(list, cnt, index, &ncustom, &nstock) : NULL;
  int e = 0;
  if (cnt < 0) {
    e = bg_error(usb_code((int)cnt), "usb: listing devices failed: %s", libusb_error_name((int)cnt));
  } else if (!dev) {
    e = nstock && !ncustom
            ? bg_error(BG_ENOTSUP, "usb: %d ASM24 bridge(s) found, all with the stock ASMedia firmware (174C:2464/2463); "
                       "flash the custom firmware (ADD1:0001)", nstock)
            : bg_error(BG_ENODEV, "usb: no ASM24 bridge with index %d (%d with the custom firmware found)", index, ncustom);
  } else {
    snprintf(u->t.name, sizeof(u->t.name), "usb:%u-%u", libusb_get_bus_number(dev), libusb_get_device_address(dev));
    e = bg_pci_lock_acquire(u->t.name, &u->lock_fd);
    if (e == 0) e = claim(u, dev);
  }
  if (list) libusb_free_device_list(list, 1);
  if (e < 0) {
    if (u->h) libusb_close(u->h);
    libusb_exit(u->ctx);
    if (u->lock_fd >= 0) bg_pci_lock_release(u->lock_fd);
    free(u);
    return e;
  }
  *out = &u->t;
  return 0;
}
#else
int bg_usb_open_libusb(int index, bg_usb_transport **out) {
  (void)index;
  *out = NULL;
  return bg_error(BG_ENOTSUP, "usb: baregpu was built without libusb-1.0 (install libusb-1.0-0-dev and reconfigure "
                  "with -Dusb=enabled)");
}
#endif
