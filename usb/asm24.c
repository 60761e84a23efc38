/* usb/asm24.c: ASM24 requests, TLPs and the write queue (usb/asm24.h; tinygrad tinygrad/runtime/support/usb.py ASM24Controller, USBMMIOInterface; tinygrad tinygrad/runtime/support/system.py System.pci_setup_usb_bars). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "usb/asm24_internal.h"

const char *bg_asm24_name(const bg_asm24 *b) { return b->t->name; }
bg_usb_transport *bg_asm24_transport(bg_asm24 *b) { return b->t; }
size_t bg_asm24_pending(const bg_asm24 *b) {
  size_t n = 0;
  for (size_t i = 0; i < b->nops; i++) n += b->ops[i].len;
  return n;
}

static bg_usb_xfer ctrl(bg_usb_kind k, uint8_t req, uint16_t val, uint16_t idx, void *buf, size_t len, unsigned tmo) {
  return (bg_usb_xfer){.kind = k, .req = req, .val = val, .idx = idx, .buf = buf, .len = len, .timeout_ms = tmo};
}

static bg_usb_xfer bulk(bg_usb_kind k, void *buf, size_t len, unsigned tmo) {
  return (bg_usb_xfer){.kind = k, .buf = buf, .len = len, .timeout_ms = tmo};
}

/* ---------------- recovery from a failed batch ----------------
 * A transfer that stalled or timed out may or may not have been executed by the bridge (a bulk OUT's data may
 * have landed before the endpoint halted; a read may have been done when its data was lost), and the bridge may
 * still have the command armed. So after a failed batch: nothing is left in flight (the transport cancelled the
 * rest), both bulk endpoints' halts are cleared (bg_usb_resync: the pipe and the firmware's armed command start
 * clean), and the batch is re-sent from the start of the failed command: what completed before it executed once
 * and is not re-sent (a doorbell that already started work is not rung behind re-written ring bytes), and the
 * failed command and the cancelled ones after it are idempotent (memory writes of the same bytes, reads, config
 * writes, XDATA bytes, SRAM arms with their data). The one bulk transfer that is not (an SRAM read, whose arm the
 * failure consumed) is never re-sent: sram_read_unlocked reports it. */

/* The command transfer i belongs to: a bulk transfer and a completion read (0xF0 IN) are the second half of the
 * control OUT before them (the arm, the TLP), which must be re-sent with them. */
static size_t command_start(const bg_usb_xfer *x, size_t from, size_t i) {
  bool second = x[i].kind == BG_USB_BULK_OUT || x[i].kind == BG_USB_BULK_IN ||
                (x[i].kind == BG_USB_CTRL_IN && x[i].req == BG_ASM24_REQ_TLP);
  return i > from && second && x[i - 1].kind == BG_USB_CTRL_OUT ? i - 1 : i;
}

/* "MWr stream of 4096 bytes at 0x800010000" and the like: the command starting at x, for messages. */
static void command_describe(const bg_usb_xfer *x, char *buf, size_t n) {
  if (x->kind == BG_USB_CTRL_OUT && x->req == BG_ASM24_REQ_TLP && x->len == BG_ASM24_TLP_PAYLOAD) {
    uint32_t w[3];
    memcpy(w, x->buf, sizeof(w));
    unsigned long long addr = (unsigned long long)w[1] << 32 | w[0];
    uint8_t fmt = (uint8_t)(x->val & 0xFF);
    if (x->idx == BG_ASM24_MODE_STREAM_WRITE || x->idx == BG_ASM24_MODE_STREAM_READ)
      snprintf(buf, n, "%s stream of %llu bytes at 0x%llx", x->idx == BG_ASM24_MODE_STREAM_WRITE ? "MWr" : "MRd",
               4ull * w[2], addr);
    else
      snprintf(buf, n, "%s TLP at 0x%llx (byte enables 0x%x)", bg_asm24_fmt_name(fmt), addr, (unsigned)(x->val >> 8));
  } else if (x->kind == BG_USB_CTRL_OUT && x->req == BG_ASM24_REQ_SRAM) {
    snprintf(buf, n, "SRAM %s arm (wValue 0x%04X, wIndex 0x%04X)", x->val & 0x8000 ? "read" : "write", x->val, x->idx);
  } else if (x->req == BG_ASM24_REQ_XDATA_READ || x->req == BG_ASM24_REQ_XDATA_WRITE) {
    snprintf(buf, n, "XDATA %s at 0x%04X", x->req == BG_ASM24_REQ_XDATA_READ ? "read" : "write", x->val);
  } else {
    bg_usb_xfer_describe(x, buf, n);
  }
}

int bg_asm24_recover(bg_asm24 *b, const char *what, const char *why, const char *resend, int retry) {
  int r = bg_usb_resync(b->t);
  if (r < 0) return bg_error_context(r, "%s: %s: recovering from a failed transfer (%s): ", b->t->name, what, why);
  BG_LOG(1, "usb: %s: %s: %s; bulk endpoint halts cleared, re-sending %s (retry %d of %d)", b->t->name, what, why,
         resend, retry, BG_ASM24_RETRIES);
  return 0;
}

int bg_asm24_run(bg_asm24 *b, bg_usb_xfer *x, size_t n, const char *what) {
  char last[512] = "", cmd[128] = "";
  size_t from = 0;
  int r = 0;
  for (int attempt = 0; attempt <= BG_ASM24_RETRIES; attempt++) {
    if (attempt) usleep(BG_ASM24_RETRY_SLEEP_US); /* kept: retry backoff after a failed transfer (asm24_proto.h) */
    if ((r = bg_usb_run(b->t, x + from, n - from)) == 0) {
      if (attempt)
        BG_LOG(1, "usb: %s: %s: recovered after %d retr%s", b->t->name, what, attempt, attempt > 1 ? "ies" : "y");
      return 0;
    }
    if (!bg_usb_retryable(r)) return bg_error_context(r, "%s: %s: ", b->t->name, what);
    snprintf(last, sizeof(last), "%s", bg_last_error());
    size_t f = from;
    while (f < n && x[f].status == 0) f++;
    /* no transfer failed (the batch could not be submitted): all of it goes again */
    if (f < n) from = command_start(x, from, f);
    command_describe(&x[from], cmd, sizeof(cmd));
    if (attempt == BG_ASM24_RETRIES) break;
    char resend[192];
    snprintf(resend, sizeof(resend), "from the %s (transfer %zu of the batch's %zu)", cmd, from, n);
    int e = bg_asm24_recover(b, what, last, resend, attempt + 1);
    if (e < 0) return e;
  }
  /* the bridge stays usable: the pipe is resynchronised for whatever comes next */
  int e = bg_usb_resync(b->t);
  if (e == -BG_ENODEV) return e;
  return bg_error(r == -BG_ETIMEDOUT ? BG_ETIMEDOUT : BG_EIO, "%s: %s: %s after %d retries, at the %s; last: %s",
                  b->t->name, what, r == -BG_ETIMEDOUT ? "timeout" : "transfer failed", BG_ASM24_RETRIES, cmd, last);
}

static int grow_x(bg_asm24 *b, size_t n) {
  if (n <= b->capx) return 0;
  bg_usb_xfer *nx = realloc(b->x, n * sizeof(*nx));
  if (!nx) return bg_error(BG_ENOMEM, "%s: out of memory for %zu transfers", b->t->name, n);
  b->x = nx;
  b->capx = n;
  return 0;
}

int bg_asm24_bounce(bg_asm24 *b, size_t n) {
  if (n <= b->capbounce) return 0;
  uint8_t *nb = realloc(b->bounce, n);
  if (!nb) return bg_error(BG_ENOMEM, "%s: out of memory for a %zu-byte bounce buffer", b->t->name, n);
  b->bounce = nb;
  b->capbounce = n;
  return 0;
}

/* ---------------- the write queue ---------------- */

int bg_asm24_queue_xfers(bg_asm24 *b, size_t extra, size_t *n) {
  if (grow_x(b, 2 * b->nops + extra) < 0) return -BG_ENOMEM;
  size_t k = 0;
  for (size_t i = 0; i < b->nops; i++) {
    bg_asm24_op *o = &b->ops[i];
    b->x[k++] = ctrl(BG_USB_CTRL_OUT, BG_ASM24_REQ_TLP, o->wvalue, o->single ? BG_ASM24_MODE_SINGLE :
                     BG_ASM24_MODE_STREAM_WRITE, o->payload, BG_ASM24_TLP_PAYLOAD, BG_ASM24_TMO_TLP_MS);
    if (!o->single) b->x[k++] = bulk(BG_USB_BULK_OUT, b->arena + o->off, o->len, BG_ASM24_TMO_BULK_MS);
  }
  *n = k;
  return 0;
}

void bg_asm24_queue_clear(bg_asm24 *b) {
  b->nops = 0;
  b->used = 0;
}

static int flush_unlocked(bg_asm24 *b) {
  if (!b->nops) return 0;
  size_t n;
  int r = bg_asm24_queue_xfers(b, 0, &n);
  if (r == 0) r = bg_asm24_run(b, b->x, n, "flush of queued PCIe memory writes");
  bg_asm24_queue_clear(b);  /* delivered, or reported: never re-sent behind later writes */
  return r;
}

/* A byte-enabled MWr of len (1..4) bytes inside one dword. */
static int queue_single(bg_asm24 *b, uint64_t addr, const uint8_t *src, size_t len) {
  uint32_t v = 0;
  memcpy(&v, src, len);
  bg_asm24_op *o = &b->ops[b->nops];
  *o = (bg_asm24_op){.single = true, .addr = addr, .len = len};
  int r = bg_asm24_tlp_encode(BG_TLP_MWR64, addr, (unsigned)len, v, &o->wvalue, o->payload);
  if (r == 0) b->nops++;
  return r;
}

static void stream_payload(bg_asm24_op *o) {
  bg_asm24_stream_encode(true, o->addr, (uint32_t)(o->len / 4), &o->wvalue, o->payload);
}

/* Whole dwords: appended to the last stream when both are write-combined and this one continues it (an
 * uncached write, e.g. a 64-bit doorbell, stays one TLP of its own). */
static void queue_stream(bg_asm24 *b, uint64_t addr, const uint8_t *src, size_t len, bool combine) {
  bg_asm24_op *last = b->nops ? &b->ops[b->nops - 1] : NULL;
  if (combine && last && last->combine && !last->single && last->addr + last->len == addr &&
      last->off + last->len == b->used) {
    memcpy(b->arena + b->used, src, len);
    b->used += len;
    last->len += len;
    stream_payload(last);
    return;
  }
  bg_asm24_op *o = &b->ops[b->nops++];
  *o = (bg_asm24_op){.addr = addr, .off = b->used, .len = len, .combine = combine};
  memcpy(b->arena + b->used, src, len);
  b->used += len;
  stream_payload(o);
}

static int mem_write_unlocked(bg_asm24 *b, uint64_t addr, const void *src, size_t n, bool batched) {
  if (!n) return 0;
  if (n > BG_ASM24_QUEUE_BYTES / 2) {
    int r = bg_asm24_flush(b);
    return r < 0 ? r : bg_asm24_copy_in(b, addr, src, n, NULL, NULL);
  }
  if (b->nops + 3 > BG_ASM24_QUEUE_OPS || b->used + n > BG_ASM24_QUEUE_BYTES) {
    int r = bg_asm24_flush(b);
    if (r < 0) return r;
  }
  const uint8_t *s = src;
  size_t head = (4 - (addr & 3)) & 3;
  if (head > n) head = n;
  int r = 0;
  if (head) r = queue_single(b, addr, s, head);
  size_t body = (n - head) & ~(size_t)3;
  /* One uncached dword (a register, a 32-bit doorbell) goes as a single MWr TLP: one control transfer, where a stream
   * costs an arm and its data, two sequential steps (usb/usb_transport.h "Ordering"). */
  if (r == 0 && body == 4 && !batched) r = queue_single(b, addr + head, s + head, 4);
  else if (r == 0 && body) queue_stream(b, addr + head, s + head, body, batched);
  size_t tail = n - head - body;
  if (r == 0 && tail) r = queue_single(b, addr + head + body, s + head + body, tail);
  if (r < 0) return r;
  return batched ? 0 : bg_asm24_flush(b);
}

/* ---------------- reads ---------------- */

static int mem_read_unlocked(bg_asm24 *b, uint64_t addr, void *dst, size_t n) {
  if (!n) return 0;
  if (n > BG_ASM24_QUEUE_BYTES) {
    int r = bg_asm24_flush(b);
    return r < 0 ? r : bg_asm24_copy_out(b, addr, dst, n, NULL, NULL);
  }
  uint64_t a0 = addr & ~3ull, a1 = (addr + n + 3) & ~3ull;
  size_t span = (size_t)(a1 - a0);
  bool direct = a0 == addr && span == n;
  if (!direct && bg_asm24_bounce(b, span) < 0) return -BG_ENOMEM;
  size_t k;
  if (bg_asm24_queue_xfers(b, 2, &k) < 0) return -BG_ENOMEM;
  uint8_t payload[BG_ASM24_TLP_PAYLOAD];
  uint16_t wv;
  bg_asm24_stream_encode(false, a0, (uint32_t)(span / 4), &wv, payload);
  b->x[k++] = ctrl(BG_USB_CTRL_OUT, BG_ASM24_REQ_TLP, wv, BG_ASM24_MODE_STREAM_READ, payload, sizeof(payload),
                   BG_ASM24_TMO_TLP_MS);
  b->x[k++] = bulk(BG_USB_BULK_IN, direct ? dst : b->bounce, span, BG_ASM24_TMO_STREAM_READ_MS);
  char what[96];
  snprintf(what, sizeof(what), "PCIe memory read of %zu bytes at 0x%llx", n, (unsigned long long)addr);
  int r = bg_asm24_run(b, b->x, k, what);
  bg_asm24_queue_clear(b);
  if (r == 0 && !direct) memcpy(dst, b->bounce + (addr - a0), n);
  return r;
}

/* Several reads in one batch: the queued writes, then per read its mode-2 arm and bulk IN, in order (tinygrad
 * tinygrad/runtime/support/usb.py ASM24Controller.exec_ops sends a list of operations the same way). */
static int mem_readv_unlocked(bg_asm24 *b, const bg_asm24_read *rd, size_t n) {
  size_t bytes = 0;
  for (size_t i = 0; i < n; i++) {
    if ((rd[i].addr & 3) || (rd[i].n & 3) || !rd[i].n || !rd[i].dst)
      return bg_error(BG_EINVAL, "%s: batched read %zu: %zu bytes at 0x%llx: expected whole dwords at a dword address",
                      b->t->name, i, rd[i].n, (unsigned long long)rd[i].addr);
    bytes += rd[i].n;
  }
  if (bytes > BG_ASM24_QUEUE_BYTES)
    return bg_error(BG_EINVAL, "%s: batched reads of %zu bytes: expected at most %u", b->t->name, bytes,
                    BG_ASM24_QUEUE_BYTES);
  size_t k;
  if (bg_asm24_queue_xfers(b, 2 * n, &k) < 0) return -BG_ENOMEM;
  uint8_t (*payload)[BG_ASM24_TLP_PAYLOAD] = n ? calloc(n, sizeof(*payload)) : NULL;
  if (n && !payload) return bg_error(BG_ENOMEM, "%s: out of memory for %zu read commands", b->t->name, n);
  for (size_t i = 0; i < n; i++) {
    uint16_t wv;
    bg_asm24_stream_encode(false, rd[i].addr, (uint32_t)(rd[i].n / 4), &wv, payload[i]);
    b->x[k++] = ctrl(BG_USB_CTRL_OUT, BG_ASM24_REQ_TLP, wv, BG_ASM24_MODE_STREAM_READ, payload[i], BG_ASM24_TLP_PAYLOAD,
                     BG_ASM24_TMO_TLP_MS);
    b->x[k++] = bulk(BG_USB_BULK_IN, rd[i].dst, rd[i].n, BG_ASM24_TMO_STREAM_READ_MS);
  }
  char what[96];
  snprintf(what, sizeof(what), "%zu batched PCIe memory reads from 0x%llx", n, n ? (unsigned long long)rd[0].addr : 0ull);
  int r = bg_asm24_run(b, b->x, k, what);
  bg_asm24_queue_clear(b);
  free(payload);
  return r;
}

/* ---------------- XDATA, power ---------------- */

static int xdata_read_unlocked(bg_asm24 *b, uint16_t addr, void *dst, size_t n) {
  if (!n) return 0;
  if ((size_t)addr + n > 0x10000)
    return bg_error(BG_EINVAL, "%s: XDATA read of %zu bytes at 0x%04x runs past 0xFFFF", b->t->name, n, addr);
  size_t nreq = (n + BG_ASM24_XDATA_READ_MAX - 1) / BG_ASM24_XDATA_READ_MAX;
  if (grow_x(b, nreq) < 0) return -BG_ENOMEM;
  for (size_t i = 0; i < nreq; i++) {
    size_t off = i * BG_ASM24_XDATA_READ_MAX, len = n - off < BG_ASM24_XDATA_READ_MAX ? n - off : BG_ASM24_XDATA_READ_MAX;
    b->x[i] = ctrl(BG_USB_CTRL_IN, BG_ASM24_REQ_XDATA_READ, (uint16_t)(addr + off), 0, (uint8_t *)dst + off, len,
                   BG_ASM24_TMO_XDATA_MS);
  }
  char what[64];
  snprintf(what, sizeof(what), "XDATA read of %zu bytes at 0x%04x", n, addr);
  return bg_asm24_run(b, b->x, nreq, what);
}

static int xdata_write_unlocked(bg_asm24 *b, uint16_t addr, const void *src, size_t n) {
  if (!n) return 0;
  if ((size_t)addr + n > 0x10000)
    return bg_error(BG_EINVAL, "%s: XDATA write of %zu bytes at 0x%04x runs past 0xFFFF", b->t->name, n, addr);
  if (grow_x(b, n) < 0) return -BG_ENOMEM;
  const uint8_t *s = src;
  for (size_t i = 0; i < n; i++)
    b->x[i] = ctrl(BG_USB_CTRL_OUT, BG_ASM24_REQ_XDATA_WRITE, (uint16_t)(addr + i), s[i], NULL, 0,
                   BG_ASM24_TMO_XDATA_MS);
  char what[64];
  snprintf(what, sizeof(what), "XDATA write of %zu bytes at 0x%04x", n, addr);
  return bg_asm24_run(b, b->x, n, what);
}

static int pcie_power_unlocked(bg_asm24 *b, bool on) {
  bg_usb_xfer x = ctrl(BG_USB_CTRL_OUT, BG_ASM24_REQ_PCIE_POWER, on ? 1 : 0, 0, NULL, 0, BG_ASM24_TMO_POWER_MS);
  return bg_asm24_run(b, &x, 1, on ? "PCIe power on (0xF3)" : "PCIe power off (0xF3)");
}

/* ---------------- single TLPs ---------------- */

static void tlp_what(char *buf, size_t n, uint8_t fmt, uint64_t addr, unsigned size) {
  if (bg_asm24_tlp_is_cfg(fmt))
    snprintf(buf, n, "%s of %u bytes to %02x:%02x.%x register 0x%03x", bg_asm24_fmt_name(fmt), size,
             (unsigned)(addr >> 24) & 0xff, (unsigned)(addr >> 19) & 31, (unsigned)(addr >> 16) & 7,
             (unsigned)addr & 0xfff);
  else
    snprintf(buf, n, "%s of %u bytes at 0x%llx", bg_asm24_fmt_name(fmt), size, (unsigned long long)addr);
}

static int tlp_unlocked(bg_asm24 *b, uint8_t fmt, uint64_t addr, unsigned size, uint32_t *val) {
  uint8_t payload[BG_ASM24_TLP_PAYLOAD], cpl[BG_ASM24_CPL_SIZE];
  uint16_t wv;
  int r = bg_asm24_tlp_encode(fmt, addr, size, *val, &wv, payload);
  if (r < 0) return r;
  bool posted = bg_asm24_tlp_posted(fmt);
  char what[96];
  tlp_what(what, sizeof(what), fmt, addr, size);
  unsigned status = 0, ret = 0;
  for (int attempt = 0; attempt <= BG_ASM24_RETRIES; attempt++) {
    if (attempt) usleep(BG_ASM24_RETRY_SLEEP_US); /* kept: retry backoff (an error or CRS completion) */
    size_t k;
    if (bg_asm24_queue_xfers(b, 2, &k) < 0) return -BG_ENOMEM;
    b->x[k++] = ctrl(BG_USB_CTRL_OUT, BG_ASM24_REQ_TLP, wv, BG_ASM24_MODE_SINGLE, payload, sizeof(payload),
                     BG_ASM24_TMO_TLP_MS);
    if (!posted) b->x[k++] = ctrl(BG_USB_CTRL_IN, BG_ASM24_REQ_TLP, 0, 0, cpl, sizeof(cpl), BG_ASM24_TMO_TLP_MS);
    r = bg_asm24_run(b, b->x, k, what);
    bg_asm24_queue_clear(b);
    if (r < 0 || posted) return r;
    uint32_t v;
    bg_asm24_cpl_decode(cpl, addr, size, &v, &status, &ret);
    /* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: a non-zero return byte is a firmware transport error: re-issue; CRS: retry later. */
    if (ret != 0 || status == BG_CPL_CRS) continue;
    if (status != BG_CPL_SC)
      return bg_error(BG_EIO, "%s: %s: completion status %u (%s)%s", b->t->name, what, status, bg_asm24_cpl_name(status),
                      status == BG_CPL_UR ? ": nothing answers at that address (not assigned, or behind a bridge "
                                            "that does not route it)" : "");
    if (!bg_asm24_tlp_is_cfg(fmt) || !(fmt & 0x40)) *val = v;
    return 0;
  }
  return bg_error(ret ? BG_EIO : BG_ETIMEDOUT, "%s: %s: %s after %d retries", b->t->name, what,
                  ret ? "firmware reported a transport error (completion byte 7 non-zero)"
                      : "device kept answering Configuration Request Retry Status", BG_ASM24_RETRIES);
}

static int cfg_tlp(bg_asm24 *b, bool write, unsigned bus, unsigned dev, unsigned fn, unsigned reg, unsigned size,
                   uint32_t *v) {
  uint64_t addr;
  int r = bg_asm24_cfg_addr(bus, dev, fn, reg, &addr);
  if (r < 0) return r;
  if ((size != 1 && size != 2 && size != 4) || reg % size)
    return bg_error(BG_EINVAL, "%s: config access of %u bytes at 0x%x: 1, 2 or 4 bytes, naturally aligned", b->t->name,
                    size, reg);
  return bg_asm24_tlp(b, bg_asm24_cfg_fmt(write, bus), addr, size, v);
}

static int cfg_read_unlocked(bg_asm24 *b, unsigned bus, unsigned dev, unsigned fn, unsigned reg, unsigned size,
                             uint32_t *v) {
  *v = 0;
  return cfg_tlp(b, false, bus, dev, fn, reg, size, v);
}

static int cfg_write_unlocked(bg_asm24 *b, unsigned bus, unsigned dev, unsigned fn, unsigned reg, unsigned size,
                              uint32_t v) {
  return cfg_tlp(b, true, bus, dev, fn, reg, size, &v);
}

/* ---------------- SRAM engine ---------------- */

static int sram_write_unlocked(bg_asm24 *b, unsigned slot, const void *src, size_t n) {
  uint16_t wv, wi;
  size_t wire;
  int r = bg_asm24_sram_write_args(n, slot, &wv, &wi, &wire);
  if (r < 0 || (r = bg_asm24_bounce(b, wire)) < 0) return r;
  memcpy(b->bounce, src, n);
  memset(b->bounce + n, 0, wire - n);
  bg_usb_xfer x[2] = {ctrl(BG_USB_CTRL_OUT, BG_ASM24_REQ_SRAM, wv, wi, NULL, 0, BG_ASM24_TMO_SRAM_MS),
                      bulk(BG_USB_BULK_OUT, b->bounce, wire, BG_ASM24_TMO_BULK_MS)};
  char what[80];
  snprintf(what, sizeof(what), "SRAM write of %zu bytes at slot %u", n, slot);
  return bg_asm24_run(b, x, 2, what);
}

static int sram_read_arm_unlocked(bg_asm24 *b, size_t n) {
  uint16_t wv, wi;
  size_t wire;
  int r = bg_asm24_sram_read_args(n, &wv, &wi, &wire);
  if (r < 0) return r;
  bg_usb_xfer x = ctrl(BG_USB_CTRL_OUT, BG_ASM24_REQ_SRAM, wv, wi, NULL, 0, BG_ASM24_TMO_SRAM_MS);
  return bg_asm24_run(b, &x, 1, "SRAM read arm");
}

static int sram_read_unlocked(bg_asm24 *b, void *dst, size_t n) {
  uint16_t wv, wi;
  size_t wire;
  int r = bg_asm24_sram_read_args(n, &wv, &wi, &wire);
  if (r < 0 || (r = bg_asm24_bounce(b, wire)) < 0) return r;
  bg_usb_xfer x = bulk(BG_USB_BULK_IN, b->bounce, wire, BG_ASM24_TMO_BULK_MS);
  /* Not re-sent: the failed bulk IN consumed the arm, and the GPU filled the SRAM after it (copy-out); the pipe is
   * resynchronised so that the bridge goes on, and the caller arms again. */
  r = bg_usb_run(b->t, &x, 1);
  if (r < 0) {
    const bg_asm24_window *w = &bg_asm24_windows[BG_ASM24_WIN_SRAM];
    char why[512];
    snprintf(why, sizeof(why), "%s", bg_last_error());
    if (bg_usb_retryable(r) && bg_usb_resync(b->t) == -BG_ENODEV) return -BG_ENODEV;
    return bg_error(-r, "%s: SRAM read of %zu bytes from slot 0 (XDATA 0x%04X, PCIe 0x%llx) failed and is not re-sent "
                    "(the failed bulk IN consumed the arm: arm again, and have the GPU write again, before reading); "
                    "transfer: %s", b->t->name, n, w->xdata, (unsigned long long)w->sys, why);
  }
  memcpy(dst, b->bounce, n);
  return 0;
}

/* ---------------- open, close ---------------- */

int bg_asm24_open(bg_usb_transport *t, bg_asm24 **out) {
  *out = NULL;
  bg_asm24 *b = calloc(1, sizeof(*b));
  if (b) b->arena = malloc(BG_ASM24_QUEUE_BYTES);
  if (!b || !b->arena) {
    free(b);
    bg_usb_transport_close(t);
    return bg_error(BG_ENOMEM, "%s: out of memory for the bridge state", t->name);
  }
  b->t = t;
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&b->lock, &ma);
  pthread_mutexattr_destroy(&ma);
  uint8_t ltssm = 0;
  int r = bg_asm24_xdata_read(b, BG_ASM24_XDATA_LTSSM, &ltssm, 1);
  if (r == 0 && ltssm != BG_ASM24_LTSSM_L0) {
    /* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: the firmware boots with PCIe off. */
    if ((r = bg_asm24_pcie_power(b, true)) == 0) r = bg_asm24_xdata_read(b, BG_ASM24_XDATA_LTSSM, &ltssm, 1);
    if (r == 0 && ltssm != BG_ASM24_LTSSM_L0)
      r = bg_error(BG_ENODEV, "%s: PCIe link not up after power-on: LTSSM state 0x%02x at XDATA 0x%04x, expected 0x%02x "
                   "(L0); is a GPU seated and powered?", t->name, ltssm, BG_ASM24_XDATA_LTSSM, BG_ASM24_LTSSM_L0);
  }
  if (r < 0) {
    bg_asm24_close(b);
    return r;
  }
  *out = b;
  return 0;
}

void bg_asm24_close(bg_asm24 *b) {
  if (!b) return;
  bg_asm24_flush(b);
  bg_usb_transport_close(b->t);
  free(b->arena);
  free(b->x);
  free(b->bounce);
  pthread_mutex_destroy(&b->lock);
  free(b);
}

void bg_asm24_lock(bg_asm24 *b) { pthread_mutex_lock(&b->lock); }
void bg_asm24_unlock(bg_asm24 *b) { pthread_mutex_unlock(&b->lock); }

/* ---------------- one request sequence at a time ----------------
 * Every request above runs under the bridge's recursive lock, whichever thread calls it: the write queue, the
 * transfer and bounce buffers are the bridge's, and a request sent while another thread's stream write is armed
 * would be taken by the firmware as that stream's data. */

int bg_asm24_xdata_read(bg_asm24 *b, uint16_t addr, void *dst, size_t n) {
  bg_asm24_lock(b);
  int r = xdata_read_unlocked(b, addr, dst, n);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_xdata_write(bg_asm24 *b, uint16_t addr, const void *src, size_t n) {
  bg_asm24_lock(b);
  int r = xdata_write_unlocked(b, addr, src, n);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_pcie_power(bg_asm24 *b, bool on) {
  bg_asm24_lock(b);
  int r = pcie_power_unlocked(b, on);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_tlp(bg_asm24 *b, uint8_t fmt, uint64_t addr, unsigned size, uint32_t *val) {
  bg_asm24_lock(b);
  int r = tlp_unlocked(b, fmt, addr, size, val);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_cfg_read(bg_asm24 *b, unsigned bus, unsigned dev, unsigned fn, unsigned reg, unsigned size, uint32_t *v) {
  bg_asm24_lock(b);
  int r = cfg_read_unlocked(b, bus, dev, fn, reg, size, v);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_cfg_write(bg_asm24 *b, unsigned bus, unsigned dev, unsigned fn, unsigned reg, unsigned size, uint32_t v) {
  bg_asm24_lock(b);
  int r = cfg_write_unlocked(b, bus, dev, fn, reg, size, v);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_mem_write(bg_asm24 *b, uint64_t addr, const void *src, size_t n, bool batched) {
  bg_asm24_lock(b);
  int r = mem_write_unlocked(b, addr, src, n, batched);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_mem_read(bg_asm24 *b, uint64_t addr, void *dst, size_t n) {
  bg_asm24_lock(b);
  int r = mem_read_unlocked(b, addr, dst, n);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_mem_readv(bg_asm24 *b, const bg_asm24_read *rd, size_t n) {
  bg_asm24_lock(b);
  int r = mem_readv_unlocked(b, rd, n);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_flush(bg_asm24 *b) {
  bg_asm24_lock(b);
  int r = flush_unlocked(b);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_sram_write(bg_asm24 *b, unsigned slot, const void *src, size_t n) {
  bg_asm24_lock(b);
  int r = sram_write_unlocked(b, slot, src, n);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_sram_read_arm(bg_asm24 *b, size_t n) {
  bg_asm24_lock(b);
  int r = sram_read_arm_unlocked(b, n);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_sram_read(bg_asm24 *b, void *dst, size_t n) {
  bg_asm24_lock(b);
  int r = sram_read_unlocked(b, dst, n);
  bg_asm24_unlock(b);
  return r;
}
