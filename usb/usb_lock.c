/* usb/usb_lock.c: a transport that holds its device's lock file for as long as it is open (platform/pci_usb.h
 * bg_usb_transport_lock). The libusb transport takes the lock itself before it claims the interface
 * (usb_libusb.c); this wrapper gives any other transport (the emulated bridge of tests/mockgpu) the same rule. */
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "platform/pci_lock.h"
#include "platform/pci_usb.h"
#include "usb/usb_transport.h"

typedef struct locked {
  bg_usb_transport t; /* first: the wrapper is the transport its users see (stats are counted in it) */
  bg_usb_transport *inner;
  int lock_fd;
} locked;

/* The inner transport reports its completions to the gate of the wrapper (usb_order.c runs on the outer one). */
static int lk_start(bg_usb_transport *t, bg_usb_xfer *x) {
  bg_usb_transport *in = ((locked *)t)->inner;
  in->complete = t->complete;
  in->complete_ctx = t->complete_ctx;
  return in->ops->start(in, x);
}

static void lk_cancel(bg_usb_transport *t, bg_usb_xfer *x) {
  bg_usb_transport *in = ((locked *)t)->inner;
  in->ops->cancel(in, x);
}

static int lk_poll(bg_usb_transport *t) {
  bg_usb_transport *in = ((locked *)t)->inner;
  return in->ops->poll(in);
}

static int lk_clear_halt(bg_usb_transport *t, uint8_t ep) {
  bg_usb_transport *in = ((locked *)t)->inner;
  return in->ops->clear_halt ? in->ops->clear_halt(in, ep) : 0;
}

static void lk_close(bg_usb_transport *t) {
  locked *l = (locked *)t;
  bg_usb_transport_close(l->inner);
  bg_pci_lock_release(l->lock_fd);
  free(l);
}

static const bg_usb_transport_ops lk_ops = {lk_start, lk_cancel, lk_poll, lk_close, lk_clear_halt};

int bg_usb_transport_lock(bg_usb_transport **t) {
  bg_usb_transport *in = *t;
  locked *l = calloc(1, sizeof(*l));
  int e = l ? bg_pci_lock_acquire(in->name, &l->lock_fd) : bg_error(BG_ENOMEM, "usb: out of memory");
  if (e < 0) {
    free(l);
    bg_usb_transport_close(in);
    *t = NULL;
    return e;
  }
  l->t.ops = &lk_ops;
  memcpy(l->t.name, in->name, sizeof(l->t.name));
  memcpy(l->t.product, in->product, sizeof(l->t.product));
  l->inner = in;
  *t = &l->t;
  return 0;
}
