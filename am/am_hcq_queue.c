/* am/am_hcq_queue.c: the AMD hardware queues and submission (tinygrad tinygrad/runtime/ops_amd.py AMDComputeQueue, AMDCopyQueue submit; tinygrad tinygrad/runtime/support/am/ip.py AM_GFX, AM_SDMA doorbells).
 *
 * Compute: the HQD ring am_gfx programmed (ME1 pipe0 queue0, 16 MiB in VRAM); PM4 tolerates a wrap at any dword,
 * so a submission is copied in up to two pieces. Copy: SDMA0 queue0; a submission never straddles the ring end
 * (the tail is filled with NOPs and the submission starts at 0). Both wait for room behind the read pointer.
 * Then: write pointer to its poll word (u64), HDP flush so the GPU sees the VRAM writes, 64-bit doorbell. */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am/am_gfx.h"
#include "am/am_hcq.h"
#include "am/am_ih.h"
#include "am/am_pm4.h"
#include "am/am_sdma.h"
#include "am/am_sdma_pkt.h"
#include "am/am_soc.h"
#include "hcq/dev_internal.h"
#include "util/env.h"
#include "util/clock.h"

int bg_am_hcq_queue_create(bg_dev *dev, enum bg_queue_kind kind, bg_queue_hw **out) {
  am_hcq *h = dev->priv;
  bg_am_dev *d = h->d;
  int k = kind == BG_QUEUE_COPY;
  if (h->q[k]) { /* another bg_dev of this GPU made it: one ring per engine */
    h->q[k]->refs++;
    *out = h->q[k];
    return 0;
  }
  /* GC 9.4.3 (MI300: several XCCs): the compute queue is the AQL queue of every XCC (am_hcq_aql.c). */
  if (!d->ip.gfx->queues && !d->ip.gfx->aql)
    return bg_error(BG_ENOTSUP, "am: %s: %s queues on %s (GC %u.%u.%u) are not implemented: only GC 9.4.3, 11.x, 12.x",
                    d->bdf, k ? "copy" : "compute", d->disc.arch, d->gc.maj, d->gc.min, d->gc.rev);
  bg_queue_hw *q = calloc(1, sizeof(*q));
  if (!q) return bg_error(BG_ENOMEM, "am: out of host memory");
  q->h = h;
  q->refs = 1;
  q->kind = kind;
  if (k) {
    bg_am_sdma *s = h->blk.sdma;
    if (!s->ring_on) {
      free(q);
      return bg_error(BG_EIO, "am: %s: SDMA0 queue 0 is not enabled (the boot did not set it up)", d->bdf);
    }
    q->sdma = true;
    snprintf(q->name, sizeof(q->name), "copy queue (SDMA0 %s)", s->v44 ? "GFX ring" : "queue0");
    q->ring = s->ring;
    q->ring_bytes = BG_AM_SDMA_RING_SIZE;
    q->wptr = s->ptrs + 0x38;
    q->rptr = s->ptrs + 0x80;
    q->doorbell = BG_AM_SDMA_DOORBELL;
  } else if (d->ip.gfx->aql && !d->ip.gfx->queues) {
    int e = bg_am_hcq_aql_queue_init(h, q);
    if (e < 0) {
      free(q);
      return e;
    }
  } else {
    bg_am_gfx *x = h->blk.gfx;
    if (!x->hqd_active) {
      free(q);
      return bg_error(BG_EIO, "am: %s: the compute HQD is not active (the boot did not set it up)", d->bdf);
    }
    snprintf(q->name, sizeof(q->name), "compute queue (HQD me1 pipe0 queue0)");
    q->ring = x->ring;
    q->ring_bytes = BG_AM_GFX_RING_SIZE;
    q->wptr = x->ptrs + 0x38;
    q->rptr = x->ptrs + 0x80;
    q->doorbell = BG_AM_GFX_DOORBELL;
  }
  /* Continue where the hardware's write pointer is (0 after setup). */
  q->put = q->consumed = bg_mmio_rd64(&d->vram, q->wptr);
  h->q[k] = q;
  BG_LOG(2, "am: %s: %s: ring 0x%" PRIx64 " (%" PRIu64 " MiB), doorbell %u, wptr %" PRIu64, d->bdf, q->name, q->ring,
         q->ring_bytes >> 20, q->doorbell, q->put);
  *out = q;
  return 0;
}

void bg_am_hcq_queue_destroy(bg_dev *dev, bg_queue_hw *hq) {
  am_hcq *h = dev->priv;
  if (!hq || --hq->refs) return;
  for (int k = 0; k < 2; k++)
    if (h->q[k] == hq) h->q[k] = NULL;
  free(hq);
}


/* How far the engine has read, as a monotonic count in the ring's units. SDMA writes back a 64-bit byte count; the
 * CP reports its dword position, which only its low bits (modulo the power-of-two ring) are relied upon for. */
uint64_t bg_am_hcq_consumed_from(const bg_queue_hw *q, uint64_t raw) {
  if (q->sdma || q->aql) return raw; /* bytes / dispatch ids, 64-bit */
  uint64_t ring_dw = q->ring_bytes / 4;
  return q->put - ((q->put - (uint32_t)raw) & (ring_dw - 1));
}

bool bg_am_hcq_queue_busy(const bg_queue_hw *q) { return q->consumed != q->put; }

void bg_am_hcq_rptr_word(const bg_queue_hw *q, uint64_t *pa, size_t *n) {
  *pa = q->rptr;
  *n = q->sdma || q->aql ? 8 : 4;
}

static uint64_t read_consumed(const bg_queue_hw *q) {
  const bg_mmio *vram = &q->h->d->vram;
  return bg_am_hcq_consumed_from(q, q->sdma || q->aql ? bg_mmio_rd64(vram, q->rptr) : bg_mmio_rd32(vram, q->rptr));
}

/* Wait until `need` more units fit without overwriting what the engine has not read (never filling the ring
 * completely, so a wrapped position is unambiguous). The read pointer is only read when the last value seen does
 * not leave room: on hardware that is a read across the bus. */
static const char *unit_name(const bg_queue_hw *q) { return q->sdma ? "bytes" : q->aql ? "packets" : "dwords"; }

static int ring_room(bg_queue_hw *q, uint64_t need) {
  uint64_t size = q->sdma ? q->ring_bytes : q->ring_bytes / (q->aql ? 64 : 4);
  if (q->put + need - q->consumed < size) return 0;
  int tmo, r = bg_env_wait_timeout_ms(&tmo);
  if (r < 0) return r;
  uint64_t last = bg_now_ns(), seen = q->consumed;
  for (unsigned spin = 0;; spin++) {
    uint64_t cur = read_consumed(q);
    if (cur > q->consumed && cur <= q->put) q->consumed = cur;
    if (q->put + need - q->consumed < size) return 0;
    uint64_t t = bg_now_ns();
    if (q->consumed != seen) {
      seen = q->consumed;
      last = t;
    } else if (t - last > (uint64_t)tmo * 1000000u) {
      char st[256];
      bg_am_hcq_queue_state(q, st, sizeof(st));
      return bg_error(BG_ETIMEDOUT, "am: %s: ring full and no progress for %d ms (%" PRIu64 " %s to write): %s",
                      q->h->d->bdf, tmo, need, unit_name(q), st);
    }
    if (spin > 64) { /* kept: backoff inside the poll of the read pointer */
      struct timespec ts = {0, 20000};
      nanosleep(&ts, NULL);
    } else {
      sched_yield();
    }
  }
}

/* BG_DEBUG=2: one line per DISPATCH_DIRECT in the submitted PM4 stream. */
static void log_dispatches(const bg_queue_hw *q, const uint32_t *dw, size_t ndw) {
  uint32_t pgm[2] = {0, 0}, ud[BG_PM4_MAX_USER_DATA] = {0}, nud = 0, lsz[3] = {0, 0, 0};
  for (size_t i = 0; i < ndw;) {
    uint32_t hdr = dw[i], op = PACKET3_OPCODE(hdr), n = PACKET3_COUNT(hdr) + 1;
    if (PACKET_TYPE(hdr) != 3 || i + 1 + n > ndw) break;
    const uint32_t *p = dw + i + 1;
    if (op == PACKET3_SET_SH_REG) {
      for (uint32_t k = 1; k < n; k++) {
        uint32_t reg = p[0] + k - 1;
        if (reg == COMPUTE_PGM_LO || reg == COMPUTE_PGM_HI) pgm[reg - COMPUTE_PGM_LO] = p[k];
        if (reg >= COMPUTE_NUM_THREAD_X && reg < COMPUTE_NUM_THREAD_X + 3) lsz[reg - COMPUTE_NUM_THREAD_X] = p[k];
        if (reg >= COMPUTE_USER_DATA_0 && reg < COMPUTE_USER_DATA_0 + BG_PM4_MAX_USER_DATA) {
          ud[reg - COMPUTE_USER_DATA_0] = p[k];
          if (reg - COMPUTE_USER_DATA_0 + 1 > nud) nud = reg - COMPUTE_USER_DATA_0 + 1;
        }
      }
      if (p[0] == COMPUTE_USER_DATA_0) nud = n - 1;
    } else if (op == PACKET3_DISPATCH_DIRECT) {
      uint64_t code = ((uint64_t)pgm[1] << 32 | pgm[0]) << 8;
      uint64_t kargs = nud >= 2 ? (uint64_t)ud[nud - 1] << 32 | ud[nud - 2] : 0; /* the kernarg pointer comes last */
      const am_prog *pg = bg_am_hcq_prog_at(q->h, code);
      bg_log(2, "am: %s: %s: dispatch %s (code 0x%" PRIx64 ") grid [%u, %u, %u] local [%u, %u, %u] kernargs 0x%" PRIx64,
             q->h->d->bdf, q->name, pg ? pg->name : "?", code, p[0], p[1], p[2], lsz[0], lsz[1], lsz[2], kargs);
    }
    i += 1 + n;
  }
}

int bg_am_hcq_submit(bg_dev *dev, bg_queue_hw *q, const void *cmd, size_t len) {
  am_hcq *h = dev->priv;
  bg_am_dev *d = h->d;
  if (len % 4)
    return bg_error(BG_EINVAL, "am: %s: %s: submit of %zu bytes is not a whole number of dwords", d->bdf, q->name, len);
  if (len == 0) return 0;
  if (len > q->ring_bytes / 2)
    return bg_error(BG_EINVAL, "am: %s: %s: a program of %zu bytes exceeds half the %" PRIu64 "-byte ring: split it",
                    d->bdf, q->name, len, q->ring_bytes);
  if (q->sdma) {
    uint64_t off = q->put % q->ring_bytes, pad = off + len > q->ring_bytes ? q->ring_bytes - off : 0;
    int e = ring_room(q, pad + len);
    if (e < 0) return e;
    if (pad) {
      uint32_t nop[1] = {0};  /* zero dwords are one-dword NOPs */
      for (uint64_t k = 0; k < pad; k += 4) bg_mmio_write(&d->vram, q->ring + off + k, nop, 4);
      q->put += pad;
      off = 0;
    }
    if ((e = bg_mmio_write(&d->vram, q->ring + off, cmd, len)) < 0) return e;
    q->put += len;
  } else if (q->aql) { /* whole 64-byte packets; the ring holds a whole number of them, so none straddles its end */
    if (len % 64)
      return bg_error(BG_EINVAL, "am: %s: %s: submit of %zu bytes is not a whole number of AQL packets", d->bdf, q->name, len);
    if (bg_debug_level() >= 2) bg_am_hcq_aql_log(q, cmd, len);
    int e = ring_room(q, len / 64);
    if (e < 0) return e;
    uint64_t off = (q->put * 64) % q->ring_bytes, first = q->ring_bytes - off < len ? q->ring_bytes - off : len;
    e = bg_mmio_write(&d->vram, q->ring + off, cmd, first);
    if (e >= 0 && first < len) e = bg_mmio_write(&d->vram, q->ring, (const uint8_t *)cmd + first, len - first);
    if (e < 0) return e;
    q->put += len / 64;
  } else {
    if (bg_debug_level() >= 2) log_dispatches(q, cmd, len / 4);
    int e = ring_room(q, len / 4);
    if (e < 0) return e;
    uint64_t off = (q->put * 4) % q->ring_bytes, first = q->ring_bytes - off < len ? q->ring_bytes - off : len;
    e = bg_mmio_write(&d->vram, q->ring + off, cmd, first);
    if (e >= 0 && first < len) e = bg_mmio_write(&d->vram, q->ring, (const uint8_t *)cmd + first, len - first);
    if (e < 0) return e;
    q->put += len / 4;
  }
  int e = bg_mmio_wr64(&d->vram, q->wptr, q->put);
  if (e < 0) return e;
  uint64_t t0 = bg_now_ns();
  /* Over USB the BAR writes reach VRAM as PCIe writes in order and tinygrad flushes no HDP there (tinygrad tinygrad/runtime/ops_amd.py USBIface):
   * the doorbell (uncached view) sends the queued ring + wptr writes and itself in one round trip. */
  if (!h->usb && (e = bg_am_hcq_flush_hdp(h)) < 0) return e;
  /* AQL: the doorbell carries the index of the last packet written (tinygrad AMDComputeAQLQueue: put_value - 1) */
  e = bg_mmio_wr64(&d->doorbell, (uint64_t)q->doorbell * 8, q->aql ? q->put - 1 : q->put);
  q->kick_ns += bg_now_ns() - t0;
  q->nsubmits++;
  /* Over USB a signal read is a round trip: waits poll when this work is expected done (hcq/signal.c). The key is the
   * recorded command stream (a replayed queue submits the same bytes from the same template). */
  if (e >= 0 && h->usb) bg_signal_note_submit(dev, (uint64_t)(uintptr_t)cmd ^ (uint64_t)len << 48 ^ (uint64_t)q->sdma << 63);
  return e;
}

void bg_am_hcq_queue_state(const bg_queue_hw *q, char *buf, size_t n) {
  const bg_am_dev *d = q->h->d;
  const bg_mmio *vram = &d->vram;
  if (q->aql) {
    bg_am_hcq_aql_state(q, buf, n);
  } else if (q->sdma) {
    uint64_t rptr = bg_mmio_rd64(vram, q->rptr), off = rptr % q->ring_bytes & ~3ull;
    uint32_t hdr = bg_mmio_rd32(vram, q->ring + off);
    const char *nm = bg_sdma_op_name(SDMA_PKT_HEADER_OP(hdr));
    snprintf(buf, n, "%s: rptr byte %" PRIu64 " of %" PRIu64 " written, at %s (header 0x%08x, packet at 0x%" PRIx64 ")",
             q->name, rptr, q->put, nm ? nm : "an unknown opcode", hdr, bg_am_mc(d, q->ring + off));
  } else {
    uint32_t rptr = bg_mmio_rd32(vram, q->rptr);
    uint64_t off = ((uint64_t)rptr * 4) % q->ring_bytes;
    uint32_t hdr = bg_mmio_rd32(vram, q->ring + off);
    const char *nm = PACKET_TYPE(hdr) == 3 ? bg_pm4_opcode_name(PACKET3_OPCODE(hdr)) : NULL;
    snprintf(buf, n, "%s: rptr dword %u of %" PRIu64 " written, at %s (header 0x%08x, packet at 0x%" PRIx64 ")",
             q->name, rptr, q->put, nm ? nm : "an unknown packet", hdr, bg_am_mc(d, q->ring + off));
  }
}

/* ---------------- hang check ---------------- */

/* Dword i of the packet at read position pos (ring units), wrapping at the ring's end. */
static uint32_t pkt_dw(const bg_queue_hw *q, uint64_t pos, unsigned i) {
  uint64_t byte = q->sdma ? pos : pos * 4;
  return bg_mmio_rd32(&q->h->d->vram, q->ring + (byte + 4ull * i) % q->ring_bytes);
}

/* WAIT_REG_MEM.FUNCTION / POLL_REGMEM.FUNC (one encoding, Linux soc15d.h / sdma_v6_0 packets): 0 always, 1 <, 2 <=,
 * 3 ==, 4 !=, 5 >=, 6 >. */
static bool wait_cmp(unsigned func, uint32_t v, uint32_t ref) {
  switch (func) {
  case 0: return true;
  case 1: return v < ref;
  case 2: return v <= ref;
  case 3: return v == ref;
  case 4: return v != ref;
  case 5: return v >= ref;
  case 6: return v > ref;
  default: return false;
  }
}

/* Is the packet at the queue's read position a memory wait that legitimately blocks it (its condition does not
 * hold, or its memory is not a signal this process can read)? A met wait the engine does not pass is a stall: a
 * lost doorbell or a stuck engine. */
static int at_blocking_wait(am_hcq *h, const bg_queue_hw *q, bool *blocking) {
  *blocking = false;
  if (q->aql) return bg_am_hcq_aql_blocking(h, q, blocking);
  uint32_t hdr = pkt_dw(q, q->consumed, 0), func, ref, mask;
  uint64_t addr;
  if (q->sdma) {
    if (SDMA_PKT_HEADER_OP(hdr) != SDMA_OP_POLL_REGMEM || !(hdr >> 31)) return 0; /* MEM_POLL: a memory poll */
    func = (hdr >> 28) & 7;
    addr = (uint64_t)pkt_dw(q, q->consumed, 2) << 32 | pkt_dw(q, q->consumed, 1);
    ref = pkt_dw(q, q->consumed, 3), mask = pkt_dw(q, q->consumed, 4);
  } else {
    if (PACKET_TYPE(hdr) != 3 || PACKET3_OPCODE(hdr) != PACKET3_WAIT_REG_MEM) return 0;
    uint32_t dw1 = pkt_dw(q, q->consumed, 1);
    if (!(dw1 & WAIT_REG_MEM_MEM_SPACE(1))) return 0; /* a register wait (the HDP flush) completes at once */
    func = dw1 & 7;
    addr = (uint64_t)pkt_dw(q, q->consumed, 3) << 32 | pkt_dw(q, q->consumed, 2);
    ref = pkt_dw(q, q->consumed, 4), mask = pkt_dw(q, q->consumed, 5);
  }
  for (unsigned i = 0; i < h->ndevs; i++) {
    uint32_t v;
    int r = bg_signal_pool_read32(h->devs[i], addr, &v);
    if (r < 0) return r;
    if (r == 1) {
      *blocking = !wait_cmp(func, v & mask, ref);
      return 0;
    }
  }
  *blocking = true; /* memory of the caller's own: cannot tell, the wait timeout decides */
  return 0;
}

int bg_am_hcq_hang_check(am_hcq *h) {
  long hang_ms;
  int e = bg_env_int("BG_HANG_CHECK_MS", &hang_ms);
  if (e < 0) return e;
  uint64_t now = bg_now_ns();
  for (int k = 0; k < 2; k++) {
    bg_queue_hw *q = h->q[k];
    if (!q) continue;
    uint64_t cur = read_consumed(q);
    if (cur > q->consumed && cur <= q->put) q->consumed = cur;
    if (q->consumed == q->put || !q->stall_armed || q->stall_pos != q->consumed) {
      q->stall_armed = q->consumed != q->put; /* the clock runs from the first time it is seen busy here */
      q->stall_pos = q->consumed;
      q->stall_ns = now;
      continue;
    }
    if (now - q->stall_ns < (uint64_t)hang_ms * 1000000u) continue;
    bool blocking;
    if ((e = at_blocking_wait(h, q, &blocking)) < 0) return e;
    if (blocking) {
      q->stall_ns = now;
      continue;
    }
    h->nfaults++;
    char st[256];
    bg_am_hcq_queue_state(q, st, sizeof(st));
    return bg_error(BG_EHANG, "am: %s: %s hung: its read pointer has not moved for %" PRIu64 " ms with %" PRIu64
                    " %s pending: %s", h->d->bdf, q->name, (now - q->stall_ns) / 1000000u, q->put - q->consumed,
                    unit_name(q), st);
  }
  return 0;
}

/* ---------------- faults and recovery ---------------- */

int bg_am_hcq_ih_wptr_reg(am_hcq *h, uint32_t *reg) {
  if (!h->ih_wptr_reg) {
    int e = bg_am_nreg_addr(h->d, OSSSYS_HWIP, 0, regIH_RB_WPTR, &h->ih_wptr_reg);
    if (e < 0) return e;
  }
  *reg = h->ih_wptr_reg;
  return 0;
}

static int ih_wptr(am_hcq *h, uint32_t *w) {
  uint32_t reg;
  int e = bg_am_hcq_ih_wptr_reg(h, &reg);
  if (e < 0) return e;
  *w = bg_am_rreg(h->d, reg);
  return 0;
}

int bg_am_hcq_fault_check(bg_dev *dev) {
  am_hcq *h = dev->priv;
  /* What the wait's last signal poll read in its round trip (over USB), if it was this device's after its last
   * submit: the same words this check reads, in the same order, right after the signal. */
  struct am_polled p = h->polled;
  h->polled.valid = false;
  bool polled = p.valid && p.dev == dev && p.submits == dev->submits;
  /* Idle first (a read-pointer word per queue with work, only while it has some), then the interrupt ring: a fault
   * of the last packet is in the ring before the engine is seen idle. */
  bool busy = false;
  for (int k = 0; k < 2; k++) {
    bg_queue_hw *q = h->q[k];
    if (!q || q->consumed == q->put) continue;
    uint64_t cur = polled && p.busy[k] ? bg_am_hcq_consumed_from(q, p.raw[k]) : read_consumed(q);
    if (cur > q->consumed && cur <= q->put) q->consumed = cur;
    busy |= q->consumed != q->put;
  }
  uint32_t w = 0;
  if (!h->blk.ih) return busy;
  int e = polled && p.ih ? (w = p.ih_wptr, 0) : ih_wptr(h, &w);
  if (e < 0) return bg_error_context(e, "am: %s: fault check: ", h->d->bdf);
  if (w != h->ih_seen) { /* interrupts since the last check: drain them, a fault among them is reported */
    if ((e = dev->ops->sleep(dev, 0)) < 0) return e;
    h->ih_seen = w;
  }
  return busy;
}

/* Zero a ring's read-pointer report and write-pointer poll words: the engine restarts at 0 when it is enabled. */
static int zero_ptrs(am_hcq *h, const bg_queue_hw *q) {
  int e = bg_mmio_wr64(&h->d->vram, q->rptr, 0);
  return e < 0 ? e : bg_mmio_wr64(&h->d->vram, q->wptr, 0);
}

int bg_am_hcq_recover(bg_dev *dev) {
  am_hcq *h = dev->priv;
  bg_am_dev *d = h->d;
  int e = 0;
  size_t n = 0;
  /* The interrupt handler's part first (Linux gmc_v11_0_process_interrupt): drain, and clear the latched fault
   * status so the next fault raises an interrupt again. The drained errors were reported already or are the fault
   * being recovered from. */
  if (h->blk.ih && (e = bg_am_ih_drain(h->blk.ih, NULL, 0, &n)) < 0) return e;
  if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, regGCVM_L2_PROTECTION_FAULT_CNTL, 1, NULL,
                              BG_AM_F(GCVM_L2_PROTECTION_FAULT_CNTL__CLEAR_PROTECTION_FAULT_STATUS_ADDR, 1))) < 0)
    return e;
  int qe = 0;
  for (int k = 0; k < 2 && qe >= 0; k++) {
    bg_queue_hw *q = h->q[k];
    if (!q) continue;
    if (q->sdma) {
      if ((e = bg_am_sdma_reset(h->blk.sdma)) < 0 || (e = zero_ptrs(h, q)) < 0 ||
          (e = bg_am_sdma_setup_queue(h->blk.sdma)) < 0)
        qe = bg_error_context(e, "am: %s: resetting the %s: ", d->bdf, q->name);
    } else {
      /* the dequeue stops both queues of every XCC: the AQL queue restarts with them */
      if ((e = bg_am_gfx_dequeue(h->blk.gfx)) < 0 || (e = zero_ptrs(h, q)) < 0 ||
          (e = bg_am_gfx_setup_queue(h->blk.gfx)) < 0 || (q->aql && (e = bg_am_gfx_setup_aql(h->blk.gfx)) < 0))
        qe = bg_error_context(e, "am: %s: resetting the %s: ", d->bdf, q->name);
    }
    if (qe < 0) break;
    q->put = q->consumed = 0;
    BG_LOG(1, "am: %s: %s reset (ring pointers 0)", d->bdf, q->name);
  }
  if (qe < 0) {
    /* A queue that will not reset (an HQD that stays active, an SDMA engine that will not halt): mode1 reset and the
     * cold boot's hardware steps on the same blocks (Linux amdgpu_device_gpu_recover falls back to a full reset when
     * the per-queue reset fails). Every ring restarts at 0; the page tables and buffers stay (VRAM survives). */
    BG_LOG(1, "am: %s: queue reset failed (%s): mode1 reset in place", d->bdf, bg_last_error());
    for (int k = 0; k < 2; k++)
      if (h->q[k] && (e = zero_ptrs(h, h->q[k])) < 0) return e;
    bg_am_boot_report rep;
    if ((e = bg_am_boot_reset_in_place(d, &h->blk, &rep)) < 0)
      return bg_error_context(e, "am: %s: the queue reset failed, and so did the mode1 reset after it: ", d->bdf);
    for (int k = 0; k < 2; k++)
      if (h->q[k]) h->q[k]->put = h->q[k]->consumed = 0;
    h->mode1_recoveries++;
    BG_LOG(1, "am: %s: recovered by mode1 reset (%.1f ms reset, %.1f ms GFX)", d->bdf, rep.ms_reset, rep.ms_gfx);
  }
  if (h->blk.ih && (e = ih_wptr(h, &h->ih_seen)) < 0) return e;
  return 0;
}
