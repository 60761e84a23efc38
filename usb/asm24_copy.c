/* usb/asm24_copy.c: pipelined copies to and from PCIe memory (usb/asm24.h).
 *
 * The body of a copy (whole dwords) goes as 1 MiB streaming requests (mode 1 / mode 2, reference
 * 1.4), COPY_DEPTH of them in flight: the host submits the next stream before waiting for the
 * oldest, so the link never idles on a round trip. After a failed stream the rest in flight is drained, the pipe
 * resynchronised (bg_asm24_recover: both bulk halts cleared) and the failed stream re-sent together with every
 * stream after it (all idempotent), up to BG_ASM24_RETRIES times at the same offset. Partial
 * dwords at the ends go through bg_asm24_mem_write / bg_asm24_mem_read. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "usb/asm24_internal.h"
#include "util/clock.h"

#define COPY_CHUNK (1u << 20)
#define COPY_DEPTH 4

typedef struct chunk {
  uint8_t payload[BG_ASM24_TLP_PAYLOAD];
  bg_usb_xfer x[2];
  size_t off, len;
} chunk;

typedef struct copy_pipe {
  bg_asm24 *b;
  bool write;
  uint64_t addr;
  uint8_t *host;
  size_t n;
  chunk c[COPY_DEPTH];
  size_t head, count;   /* ring of in-flight chunks */
} copy_pipe;

static int submit_chunk(copy_pipe *p, size_t off) {
  chunk *c = &p->c[(p->head + p->count) % COPY_DEPTH];
  c->off = off;
  c->len = p->n - off < COPY_CHUNK ? p->n - off : COPY_CHUNK;
  uint16_t wv;
  bg_asm24_stream_encode(p->write, p->addr + off, (uint32_t)(c->len / 4), &wv, c->payload);
  c->x[0] = (bg_usb_xfer){.kind = BG_USB_CTRL_OUT, .req = BG_ASM24_REQ_TLP, .val = wv,
                          .idx = p->write ? BG_ASM24_MODE_STREAM_WRITE : BG_ASM24_MODE_STREAM_READ,
                          .buf = c->payload, .len = sizeof(c->payload), .timeout_ms = BG_ASM24_TMO_TLP_MS};
  c->x[1] = (bg_usb_xfer){.kind = p->write ? BG_USB_BULK_OUT : BG_USB_BULK_IN, .buf = p->host + off, .len = c->len,
                          .timeout_ms = p->write ? BG_ASM24_TMO_BULK_MS : BG_ASM24_TMO_STREAM_READ_MS};
  int r = bg_usb_submit(p->b->t, c->x, 2);
  if (r == 0) p->count++;
  return r;
}

/* Wait for every chunk still in flight, ignoring their results (they are re-sent). */
static void drain(copy_pipe *p) {
  while (p->count) {
    bg_usb_wait(p->b->t, p->c[p->head].x, 2);
    p->head = (p->head + 1) % COPY_DEPTH;
    p->count--;
  }
}

static int run_pipe(copy_pipe *p, bg_asm24_progress_fn progress, void *ctx, uint64_t base_done, uint64_t total) {
  size_t next = 0, done = 0, fail_at = (size_t)-1;
  int tries = 0;
  char last[512] = "";
  while (done < p->n) {
    int r = 0;
    while (r == 0 && p->count < COPY_DEPTH && next < p->n) {
      r = submit_chunk(p, next);
      if (r == 0) next += p->c[(p->head + p->count - 1) % COPY_DEPTH].len;
    }
    if (r == 0 && p->count) {
      chunk *c = &p->c[p->head];
      r = bg_usb_wait(p->b->t, c->x, 2);
      p->head = (p->head + 1) % COPY_DEPTH;
      p->count--;
      if (r == 0) {
        done += c->len;
        if (progress) progress(ctx, base_done + done, total);
        continue;
      }
    }
    drain(p);
    if (!bg_usb_retryable(r))
      return bg_error_context(r, "%s: %s of %zu bytes at 0x%llx, at offset %zu: ", p->b->t->name,
                              p->write ? "copy in" : "copy out", p->n, (unsigned long long)p->addr, done);
    tries = fail_at == done ? tries + 1 : 1;
    fail_at = done;
    snprintf(last, sizeof(last), "%s", bg_last_error());
    char what[96], resend[160];
    snprintf(what, sizeof(what), "%s of %zu bytes at 0x%llx", p->write ? "copy in" : "copy out", p->n,
             (unsigned long long)p->addr);
    if (tries > BG_ASM24_RETRIES) {
      int e = bg_usb_resync(p->b->t);  /* the bridge stays usable for what comes next */
      if (e == -BG_ENODEV) return e;
      return bg_error(r == -BG_ETIMEDOUT ? BG_ETIMEDOUT : BG_EIO, "%s: %s: the %s stream at 0x%llx (offset %zu) "
                      "failed, %s after %d retries; last: %s", p->b->t->name, what, p->write ? "MWr" : "MRd",
                      (unsigned long long)(p->addr + done), done, r == -BG_ETIMEDOUT ? "timeout" : "transfer failed",
                      BG_ASM24_RETRIES, last);
    }
    snprintf(resend, sizeof(resend), "the stream at 0x%llx (offset %zu) and everything after it",
             (unsigned long long)(p->addr + done), done);
    int e = bg_asm24_recover(p->b, what, last, resend, tries);
    if (e < 0) return e;
    usleep(BG_ASM24_RETRY_SLEEP_US); /* kept: retry backoff after a failed stream (asm24_proto.h) */
    next = done;  /* re-send the failed stream and everything after it */
  }
  return 0;
}

static double now_ms(void) { return (double)bg_now_ns() * 1e-6; }

static int copyin_stage_locked(bg_asm24 *b, uint32_t seq, const void *src, size_t n, int timeout_ms, size_t *wire,
                               uint64_t *fence) {
  if (!n || n > BG_ASM24_COPYIN_CHUNK)
    return bg_error(BG_EINVAL, "%s: copy-in chunk %u of %zu bytes (1..%u)", b->t->name, seq, n, BG_ASM24_COPYIN_CHUNK);
  size_t w = (n + 4 + BG_ASM24_SECTOR - 1) / BG_ASM24_SECTOR * BG_ASM24_SECTOR;
  unsigned slot = BG_ASM24_COPYIN_WINDOW(seq);
  uint16_t wv, wi;
  size_t wire_len;
  int r = bg_asm24_sram_write_args(w, slot, &wv, &wi, &wire_len);
  if (r < 0 || (r = bg_asm24_bounce(b, w)) < 0 || (r = bg_asm24_flush(b)) < 0) return r;
  memcpy(b->bounce, src, n);
  memset(b->bounce + n, 0, w - n);
  uint32_t sentinel = BG_ASM24_COPYIN_SENTINEL(seq);
  memcpy(b->bounce + w - 4, &sentinel, 4);
  uint16_t fence_at = (uint16_t)(bg_asm24_windows[BG_ASM24_WIN_SYSBUF].xdata + BG_ASM24_COPYIN_FENCE_OFF);
  uint64_t f = 0;
  char what[96];
  snprintf(what, sizeof(what), "copy-in chunk %u (%zu bytes) into SRAM slot %u", seq, n, slot);
  /* The window is reused only once the GPU drained chunk seq-2; arm and data then go together, so an
   * error never leaves the engine armed. */
  double t0 = now_ms();
  if ((r = bg_asm24_xdata_read(b, fence_at, &f, 8)) < 0) return bg_error_context(r, "%s: ", what);
  while (f + 1 < seq) {
    if (now_ms() - t0 > timeout_ms)
      return bg_error(BG_EHANG, "%s: %s: the GPU is not draining the copy-in windows: fence 0x%llx at XDATA 0x%04x, "
                      "needs %u before the window is reused (waited %d ms)", b->t->name, what, (unsigned long long)f,
                      fence_at, seq - 1, timeout_ms);
    if ((r = bg_asm24_xdata_read(b, fence_at, &f, 8)) < 0) return bg_error_context(r, "%s: ", what);
  }
  bg_usb_xfer x[2] = {
    {.kind = BG_USB_CTRL_OUT, .req = BG_ASM24_REQ_SRAM, .val = wv, .idx = wi, .timeout_ms = BG_ASM24_TMO_SRAM_MS},
    {.kind = BG_USB_BULK_OUT, .buf = b->bounce, .len = w, .timeout_ms = BG_ASM24_TMO_BULK_MS}};
  if ((r = bg_asm24_run(b, x, 2, what)) < 0) return r;
  *wire = w;
  if (fence) *fence = f;
  return 0;
}

/* The bounce buffer holds the chunk from its copy to the last transfer: the whole stage is one locked sequence. */
int bg_asm24_copyin_stage(bg_asm24 *b, uint32_t seq, const void *src, size_t n, int timeout_ms, size_t *wire,
                          uint64_t *fence) {
  bg_asm24_lock(b);
  int r = copyin_stage_locked(b, seq, src, n, timeout_ms, wire, fence);
  bg_asm24_unlock(b);
  return r;
}

static int copy_in_locked(bg_asm24 *b, uint64_t addr, const void *src, size_t n, bg_asm24_progress_fn progress,
                          void *ctx) {
  int r = bg_asm24_flush(b);
  if (r < 0 || !n) return r;
  const uint8_t *s = src;
  size_t head = (4 - (addr & 3)) & 3;
  if (head > n) head = n;
  size_t body = (n - head) & ~(size_t)3, tail = n - head - body;
  if (head && (r = bg_asm24_mem_write(b, addr, s, head, true)) < 0) return r;
  if (tail && (r = bg_asm24_mem_write(b, addr + head + body, s + head + body, tail, true)) < 0) return r;
  if ((r = bg_asm24_flush(b)) < 0) return r;
  if (body) {
    copy_pipe p = {.b = b, .write = true, .addr = addr + head, .host = (uint8_t *)s + head, .n = body};
    if ((r = run_pipe(&p, progress, ctx, head + tail, n)) < 0) return r;
  }
  if (progress && !body) progress(ctx, n, n);
  return 0;
}

static int copy_out_locked(bg_asm24 *b, uint64_t addr, void *dst, size_t n, bg_asm24_progress_fn progress, void *ctx) {
  int r = bg_asm24_flush(b);
  if (r < 0 || !n) return r;
  uint8_t *d = dst;
  size_t head = (4 - (addr & 3)) & 3;
  if (head > n) head = n;
  size_t body = (n - head) & ~(size_t)3, tail = n - head - body;
  if (head && (r = bg_asm24_mem_read(b, addr, d, head)) < 0) return r;
  if (tail && (r = bg_asm24_mem_read(b, addr + head + body, d + head + body, tail)) < 0) return r;
  if (body) {
    copy_pipe p = {.b = b, .write = false, .addr = addr + head, .host = d + head, .n = body};
    if ((r = run_pipe(&p, progress, ctx, head + tail, n)) < 0) return r;
  }
  if (progress && !body) progress(ctx, n, n);
  return 0;
}

/* A copy is one request sequence: no other thread's request may interleave with its streams. */
int bg_asm24_copy_in(bg_asm24 *b, uint64_t addr, const void *src, size_t n, bg_asm24_progress_fn progress, void *ctx) {
  bg_asm24_lock(b);
  int r = copy_in_locked(b, addr, src, n, progress, ctx);
  bg_asm24_unlock(b);
  return r;
}

int bg_asm24_copy_out(bg_asm24 *b, uint64_t addr, void *dst, size_t n, bg_asm24_progress_fn progress, void *ctx) {
  bg_asm24_lock(b);
  int r = copy_out_locked(b, addr, dst, n, progress, ctx);
  bg_asm24_unlock(b);
  return r;
}
