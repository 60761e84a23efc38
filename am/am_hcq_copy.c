/* am/am_hcq_copy.c: host <-> device copies of the AMD device (bg_backend_ops copyin/copyout).
 *
 * After a synchronize, writes go through the CPU view (BAR0 is write-combined: fast) and are followed by an HDP
 * flush; reads of VRAM of 256 KiB and more go through SDMA into a host staging buffer, because CPU reads through
 * the BAR are uncached. A VRAM buffer without a CPU view (beyond a small BAR) always takes SDMA. Host memory
 * is read and written directly. Over USB the bridge's pipelined copies stream through BAR0 (am_hcq_usb.c). */
#include <inttypes.h>
#include <string.h>

#include "am/am_hcq.h"

#define STAGE_SIZE ((uint64_t)16 << 20)
#define SDMA_READ_FROM ((uint64_t)256 << 10)

static int stage_ready(am_hcq *h) {
  int e = 0;
  if (!h->stage) e = bg_buf_alloc(h->dev, STAGE_SIZE, BG_BUF_HOST | BG_BUF_CPU_ACCESS, &h->stage);
  if (e >= 0 && !bg_buf_cpu(h->stage))
    return bg_error(BG_ENOTSUP, "am: %s: the staging buffer has no CPU view", h->d->bdf);
  if (e >= 0 && !h->stage_q) e = bg_queue_new(h->dev, BG_QUEUE_COPY, &h->stage_q);
  return e < 0 ? bg_error_context(e, "am: %s: SDMA staging: ", h->d->bdf) : 0;
}

/* One SDMA copy between device addresses, waited for. */
static int sdma_copy(am_hcq *h, uint64_t dst, uint64_t src, uint64_t n) {
  bg_queue *q = h->stage_q;
  bg_queue_reset(q);
  bg_queue_copy(q, bg_const(dst), bg_const(src), n);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  int e = bg_queue_submit(q, NULL, 0);
  return e < 0 ? e : bg_dev_synchronize(h->dev, 0);
}

/* Whether the CPU reaches [pa, pa+n) of VRAM through BAR0. */
static bool bar_reaches(const am_hcq *h, uint64_t pa, uint64_t n) { return pa + n <= h->d->vram.size; }

int bg_am_hcq_copyin(bg_dev *dev, bg_mem *dst, uint64_t off, const void *src, uint64_t n) {
  am_hcq *h = dev->priv;
  const am_alloc *a = dst->meta;
  int e = bg_dev_synchronize(dev, 0);
  if (e < 0) return e;
  if (h->usb) return bg_am_hcq_usb_copyin(h, dst, off, src, n);
  if (dst->cpu) memcpy((uint8_t *)dst->cpu + off, src, n);
  else if (a->host) e = bg_mmio_write(&a->sm.view, off, src, n);
  else if (bar_reaches(h, a->pa + off, n)) e = bg_mmio_write(&h->d->vram, a->pa + off, src, n);
  else {
    if ((e = stage_ready(h)) < 0) return e;
    for (uint64_t done = 0; done < n && e >= 0; done += STAGE_SIZE) {
      uint64_t c = n - done < STAGE_SIZE ? n - done : STAGE_SIZE;
      memcpy(bg_buf_cpu(h->stage), (const uint8_t *)src + done, c);
      e = sdma_copy(h, dst->va + off + done, bg_buf_va(h->stage), c);
    }
    return e;
  }
  if (e >= 0 && !a->host) e = bg_am_hcq_flush_hdp(h);
  return e;
}

int bg_am_hcq_copyout(bg_dev *dev, const bg_mem *src, uint64_t off, void *dst, uint64_t n) {
  am_hcq *h = dev->priv;
  const am_alloc *a = src->meta;
  int e = bg_dev_synchronize(dev, 0);
  if (e < 0) return e;
  if (h->usb) return bg_am_hcq_usb_copyout(h, src, off, dst, n);
  if (a->host) {
    if (src->cpu) memcpy(dst, (const uint8_t *)src->cpu + off, n);
    else e = bg_mmio_read(&a->sm.view, off, dst, n);
    return e;
  }
  if (n < SDMA_READ_FROM && bar_reaches(h, a->pa + off, n)) {
    if (src->cpu) memcpy(dst, (const uint8_t *)src->cpu + off, n);
    else e = bg_mmio_read(&h->d->vram, a->pa + off, dst, n);
    return e;
  }
  if ((e = stage_ready(h)) < 0) return e;
  for (uint64_t done = 0; done < n && e >= 0; done += STAGE_SIZE) {
    uint64_t c = n - done < STAGE_SIZE ? n - done : STAGE_SIZE;
    if ((e = sdma_copy(h, bg_buf_va(h->stage), src->va + off + done, c)) >= 0)
      memcpy((uint8_t *)dst + done, bg_buf_cpu(h->stage), c);
  }
  return e;
}

void bg_am_hcq_copy_fini(am_hcq *h) {
  bg_queue_free(h->stage_q);
  bg_buf_free(h->stage);
  h->stage_q = NULL;
  h->stage = NULL;
}
