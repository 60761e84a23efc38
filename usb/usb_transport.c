/* usb/usb_transport.c: the implementation-independent half of usb/usb_transport.h: messages, endpoint halts.
 * Submitting, ordering and waiting are usb_order.c's. */
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

unsigned bg_usb_endpoint_slot(bg_usb_kind k) {
  return k == BG_USB_BULK_OUT ? 1u : k == BG_USB_BULK_IN ? 2u : 0u;
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

