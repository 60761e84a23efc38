/* usb/usb_order.c: submitting, ordering and waiting (usb/usb_transport.h "Ordering").
 *
 * Every submitted transfer joins one queue in submission order. A queued transfer is handed to the host controller
 * (ops->start) once every earlier transfer on another endpoint has completed and every earlier one on its own
 * endpoint has been handed over: the device then meets the transfers in exactly the order they were submitted,
 * whatever order the host controller services its endpoints in, because within one endpoint the host keeps order
 * (Linux drivers/usb/core/urb.c: one queue per endpoint) and across endpoints nothing is in flight together. The
 * queue is re-examined on every completion (pump from gate_complete, inside the implementation's poll: for libusb
 * its transfer callback), so a chain arm -> data -> next arm costs the caller one wait, not one per step.
 *
 * After a failure every later transfer is cancelled: queued ones never reach the wire, started ones are cancelled
 * in the host controller, until the queue has drained (the protocol layer then resynchronises and re-sends). */
#include <stdio.h>
#include <stdlib.h>

#include "baregpu/error.h"
#include "usb/usb_transport.h"

static void gate_complete(void *ctx, bg_usb_xfer *x);

static void attach(bg_usb_transport *t) {
  if (!t->complete) {
    t->complete = gate_complete;
    t->complete_ctx = t;
  }
}

/* Cancel everything after (or other than) the failed transfer: queued ones end here, started ones through cancel. */
static void fail_rest(bg_usb_transport *t, const bg_usb_xfer *failed) {
  t->failed = true;
  for (size_t i = t->qdone; i < t->nq; i++) {
    bg_usb_xfer *x = t->q[i];
    if (x == failed || x->state == BG_USB_DONE) continue;
    if (x->state == BG_USB_QUEUED) {
      x->status = -BG_EIO;
      x->actual = 0;
      x->state = BG_USB_DONE;
    } else {
      t->ops->cancel(t, x);
    }
  }
}

static void advance_done(bg_usb_transport *t) {
  while (t->qdone < t->nq && t->q[t->qdone]->state == BG_USB_DONE) t->qdone++;
}

/* The depth x completes at (bg_usb_stats "Critical path"): ep_depth[] hold only earlier transfers here, since a later
 * one on another endpoint cannot start before x completed, nor a later one on x's endpoint before x started. */
static void account_start(bg_usb_transport *t, bg_usb_xfer *x, unsigned e) {
  uint64_t gate = 0;
  for (unsigned o = 0; o < 3; o++)
    if (o != e && t->ep_depth[o] > gate) gate = t->ep_depth[o];
  uint64_t start = x->depth > gate ? x->depth : gate;
  uint64_t d = start + 1 > t->ep_depth[e] ? start + 1 : t->ep_depth[e];
  x->depth = d;
  t->ep_depth[e] = d;
  if (d > t->stats.critical) t->stats.critical = d;
}

/* Hand over every queued transfer the rule allows, in order; stop at the first that must wait. */
static void pump(bg_usb_transport *t, bool from_completion) {
  if (t->pumping || t->failed) return;
  t->pumping = true;
  size_t busy[3] = {0, 0, 0};  /* started and not completed, per endpoint, before position i */
  for (size_t i = t->qdone; i < t->nq; i++) {
    bg_usb_xfer *x = t->q[i];
    unsigned e = bg_usb_endpoint_slot(x->kind);
    if (x->state == BG_USB_DONE) continue;
    if (x->state == BG_USB_QUEUED) {
      if (busy[(e + 1) % 3] || busy[(e + 2) % 3]) break;  /* another endpoint still has one in flight */
      account_start(t, x, e);
      x->state = BG_USB_STARTED;
      t->inflight++;
      if (from_completion) t->stats.chained++;
      int r = t->ops->start(t, x);
      if (r < 0) {
        t->inflight--;
        x->status = r;
        x->actual = 0;
        x->state = BG_USB_DONE;
        fail_rest(t, x);
        break;
      }
    }
    busy[e]++;
  }
  advance_done(t);
  t->pumping = false;
}

static void gate_complete(void *ctx, bg_usb_xfer *x) {
  bg_usb_transport *t = ctx;
  if (x->state != BG_USB_STARTED) return;  /* not ours to complete (a stray report) */
  x->state = BG_USB_DONE;
  t->inflight--;
  if (x->status < 0 && !t->failed) fail_rest(t, x);
  advance_done(t);
  pump(t, true);
}

int bg_usb_submit(bg_usb_transport *t, bg_usb_xfer *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (x[i].kind >= BG_USB_NKINDS || (x[i].len && !x[i].buf) ||
        ((x[i].kind == BG_USB_CTRL_OUT || x[i].kind == BG_USB_CTRL_IN) && x[i].len > 0xFFFF))
      return bg_error(BG_EINVAL, "%s: transfer %zu of the batch is malformed (kind %d, %zu bytes)", t->name, i,
                      (int)x[i].kind, x[i].len);
  if (t->nq + n > t->capq) {
    size_t cap = (t->nq + n) * 2;
    bg_usb_xfer **nq = realloc(t->q, cap * sizeof(*nq));
    if (!nq) return bg_error(BG_ENOMEM, "%s: out of memory for %zu queued transfers", t->name, t->nq + n);
    t->q = nq;
    t->capq = cap;
  }
  attach(t);
  for (size_t i = 0; i < n; i++) {
    bg_usb_xfer *q = &x[i];
    q->actual = 0;
    q->status = 0;
    q->halted = false;
    q->depth = t->now;
    q->state = BG_USB_QUEUED;
    if (t->failed) {  /* behind a failure that has not drained yet: cancelled like the rest */
      q->status = -BG_EIO;
      q->state = BG_USB_DONE;
    }
    t->q[t->nq++] = q;
    t->stats.xfers[q->kind]++;
    t->stats.bytes[q->kind] += q->len;
  }
  advance_done(t);
  pump(t, false);
  return 0;
}

/* Forget x[0..n): they leave the queue, the rest keeps its order. */
static size_t forget(bg_usb_transport *t, const bg_usb_xfer *x, size_t n) {
  size_t k = 0, gone = 0;
  for (size_t i = 0; i < t->nq; i++) {
    bg_usb_xfer *q = t->q[i];
    if (q >= x && q < x + n) {
      if (q->depth > t->now) t->now = q->depth;
      gone++;
      continue;
    }
    t->q[k++] = q;
  }
  t->nq = k;
  t->qdone = 0;
  advance_done(t);
  if (!t->nq) t->failed = false;  /* drained: the next submission starts clean */
  return gone;
}

static bool all_done(const bg_usb_xfer *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (x[i].state != BG_USB_DONE) return false;
  return true;
}

/* The message of a failed batch is made here, on the library's side, so that a transport living in
 * another module (the emulated bridge in the mock plugin) needs no error state of its own. */
int bg_usb_wait(bg_usb_transport *t, bg_usb_xfer *x, size_t n) {
  t->stats.round_trips++;
  int r = 0;
  while (!all_done(x, n)) {
    if (!t->inflight) {
      forget(t, x, n);
      return bg_error(BG_EINVAL, "%s: waiting for a transfer that was never submitted (or was already waited for)",
                      t->name);
    }
    if ((r = t->ops->poll(t)) < 0) {
      /* the implementation reported what it had in flight; what never started ends here */
      if (!t->failed) fail_rest(t, NULL);
      for (size_t i = t->qdone; i < t->nq; i++)
        if (t->q[i]->state == BG_USB_QUEUED) t->q[i]->state = BG_USB_DONE;
      break;
    }
  }
  if (forget(t, x, n) != n && r == 0)
    return bg_error(BG_EINVAL, "%s: waiting for a transfer that was never submitted (or was already waited for)",
                    t->name);
  if (r < 0) return r;
  for (size_t i = 0; i < n; i++) {
    if (x[i].status >= 0) continue;
    char d[128];
    bg_usb_xfer_describe(&x[i], d, sizeof(d));
    const char *why = x[i].status == -BG_ETIMEDOUT ? "timed out" : x[i].status == -BG_ENODEV ? "device gone (unplugged or reset)"
                      : x[i].halted ? "stalled (endpoint halted)"
                      : x[i].actual && x[i].actual < x[i].len ? "short transfer" : "stalled or cancelled";
    return bg_error(-x[i].status, "%s: %s: %s (%zu of %zu bytes)", t->name, d, why, x[i].actual, x[i].len);
  }
  return 0;
}

int bg_usb_run(bg_usb_transport *t, bg_usb_xfer *x, size_t n) {
  int r = bg_usb_submit(t, x, n);
  return r < 0 ? r : bg_usb_wait(t, x, n);
}

void bg_usb_transport_close(bg_usb_transport *t) {
  if (!t) return;
  if (t->inflight) {
    fail_rest(t, NULL);
    while (t->inflight && t->ops->poll(t) == 0) {}
  }
  free(t->q);
  t->q = NULL;
  t->nq = t->capq = t->qdone = 0;
  t->ops->close(t);
}
