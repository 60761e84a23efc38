/* usb/usb_transport.c: the implementation-independent half of usb/usb_transport.h: argument
 * checks, statistics and messages. */
#include <stdio.h>

#include "baregpu/error.h"
#include "usb/usb_transport.h"

const char *bg_usb_kind_name(bg_usb_kind k) {
  static const char *const names[BG_USB_NKINDS] = {"control OUT", "control IN", "bulk OUT", "bulk IN"};
  return k < BG_USB_NKINDS ? names[k] : "?";
}

void bg_usb_xfer_describe(const bg_usb_xfer *x, char *buf, size_t n) {
  if (x->kind == BG_USB_CTRL_OUT || x->kind == BG_USB_CTRL_IN)
    snprintf(buf, n, "%s request 0x%02X (wValue 0x%04X, wIndex 0x%04X, %zu bytes)", bg_usb_kind_name(x->kind), x->req,
             x->val, x->idx, x->len);
  else
    snprintf(buf, n, "%s of %zu bytes on endpoint 0x%02X", bg_usb_kind_name(x->kind), x->len,
             x->kind == BG_USB_BULK_OUT ? BG_USB_EP_BULK_OUT : BG_USB_EP_BULK_IN);
}

bool bg_usb_retryable(int status) { return status == -BG_ETIMEDOUT || status == -BG_EIO; }

int bg_usb_submit(bg_usb_transport *t, bg_usb_xfer *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (x[i].kind >= BG_USB_NKINDS || (x[i].len && !x[i].buf) ||
        ((x[i].kind == BG_USB_CTRL_OUT || x[i].kind == BG_USB_CTRL_IN) && x[i].len > 0xFFFF))
      return bg_error(BG_EINVAL, "%s: transfer %zu of the batch is malformed (kind %d, %zu bytes)", t->name, i,
                      (int)x[i].kind, x[i].len);
    x[i].actual = 0;
    x[i].status = 0;
    x[i].halted = false;
  }
  int r = t->ops->submit(t, x, n);
  if (r < 0) return r;
  for (size_t i = 0; i < n; i++) {
    t->stats.xfers[x[i].kind]++;
    t->stats.bytes[x[i].kind] += x[i].len;
  }
  return 0;
}

/* The message of a failed batch is made here, on the library's side, so that a transport living in
 * another module (the emulated bridge in the mock plugin) needs no error state of its own. */
int bg_usb_wait(bg_usb_transport *t, bg_usb_xfer *x, size_t n) {
  t->stats.round_trips++;
  int r = t->ops->wait(t, x, n);
  if (r == 0) return 0;
  for (size_t i = 0; i < n; i++) {
    if (x[i].status >= 0) continue;
    char d[128];
    bg_usb_xfer_describe(&x[i], d, sizeof(d));
    const char *why = x[i].status == -BG_ETIMEDOUT ? "timed out" : x[i].status == -BG_ENODEV ? "device gone (unplugged or reset)"
                      : x[i].halted ? "stalled (endpoint halted)"
                      : x[i].actual && x[i].actual < x[i].len ? "short transfer" : "stalled or cancelled";
    return bg_error(-x[i].status, "%s: %s: %s (%zu of %zu bytes)", t->name, d, why, x[i].actual, x[i].len);
  }
  return r;  /* not a transfer's failure: the implementation's message stands */
}

int bg_usb_run(bg_usb_transport *t, bg_usb_xfer *x, size_t n) {
  int r = bg_usb_submit(t, x, n);
  return r < 0 ? r : bg_usb_wait(t, x, n);
}

int bg_usb_resync(bg_usb_transport *t) {
  static const uint8_t eps[2] = {BG_USB_EP_BULK_OUT, BG_USB_EP_BULK_IN};
  t->stats.resyncs++;
  for (int i = 0; i < 2; i++) {
    int r = t->ops->clear_halt ? t->ops->clear_halt(t, eps[i]) : 0;
    if (r == -BG_ENODEV)
      return bg_error(BG_ENODEV, "%s: clearing the halt of endpoint 0x%02X: device gone (unplugged or reset)", t->name,
                      eps[i]);
    if (r < 0) return bg_error(-r, "%s: clearing the halt of endpoint 0x%02X failed (%s)", t->name, eps[i], bg_strerror(r));
  }
  return 0;
}

void bg_usb_transport_close(bg_usb_transport *t) {
  if (t) t->ops->close(t);
}
