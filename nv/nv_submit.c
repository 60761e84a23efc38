/* nv/nv_submit.c: GPFIFO submission (tinygrad ops_nv.py NVCommandQueue._submit_to_gpfifo, with the overrun check it
 * lacks: tinygrad never reads GPGet, so a full ring or a wrapped command buffer overwrites what the GPU has not read).
 *
 * The command bytes are copied into the channel's pushbuffer ring (cmdq, CPU-visible), and a GPFIFO entry pointing at
 * them goes into the ring (NVC56F_GP_ENTRY0/1 of clc56f.h: address bits 39:2, LEVEL bit 41 = SUBROUTINE, LENGTH in
 * dwords at 62:42). GPPut in USERD (AmpereAControlGPFifo.GPPut, byte 0x8c) advances, then the work-submit token goes
 * to the usermode page's NVC361_NOTIFY_CHANNEL_PENDING (0x90). Before a ring slot or cmdq bytes are reused, GPGet
 * (byte 0x88) must have passed the entry that used them. */
#include <inttypes.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "baregpu/error.h"
#include "nv/nv_hcq.h"
#include "util/env.h"

#define USERD_GPGET (0x88 / 4)
#define USERD_GPPUT (0x8c / 4)
#define GP_ENTRY_LEVEL_SUBROUTINE (1ull << 41)
#define GP_ENTRY_LENGTH_SHIFT 42
#define GP_ENTRY_LENGTH_MAX ((1u << 21) - 1) /* LENGTH 62:42 */
#define NV_DOORBELL_OFFSET 0x90

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* USERD's byte offset in the GPFIFO area: after the ring (nv_dev.c). */
static uint64_t userd_off(const bg_queue_hw *hq) { return hq->ring_off + (uint64_t)hq->entries * 8; }

uint32_t bg_nv_gpget(const bg_queue_hw *hq) {
  if (hq->userd) return __atomic_load_n(&hq->userd[USERD_GPGET], __ATOMIC_ACQUIRE);
  return bg_mmio_rd32(hq->area_view, hq->area_base + userd_off(hq) + USERD_GPGET * 4); /* behind the bridge: one read */
}

static uint32_t gpget(const bg_queue_hw *hq) { return bg_nv_gpget(hq); }

/* The pushbuffer bytes, the GPFIFO entry and GPPut: through the CPU views, or behind the bridge as writes through
 * BAR1 (queued by the bridge in order, ahead of the doorbell's register write). */
static int publish(bg_queue_hw *hq, uint64_t pos, const void *cmd, size_t len, uint64_t entry) {
  if (hq->userd) {
    memcpy((uint8_t *)hq->cmdq.cpu + pos, cmd, len);
    hq->ring[hq->put] = entry;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* pushbuffer and entry before GPPut */
    __atomic_store_n(&hq->userd[USERD_GPPUT], (hq->put + 1) % hq->entries, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
  }
  int e = bg_mmio_write(hq->cmdq_view, hq->cmdq_base + pos, cmd, len);
  if (e >= 0) e = bg_mmio_wr64(hq->area_view, hq->area_base + hq->ring_off + (uint64_t)hq->put * 8, entry);
  if (e >= 0) e = bg_mmio_wr32(hq->area_view, hq->area_base + userd_off(hq) + USERD_GPPUT * 4, (hq->put + 1) % hq->entries);
  return e < 0 ? bg_error_context(e, "%s: %s: submit through BAR1: ", hq->g->name, hq->name) : 0;
}

/* cmdq bytes the GPU has read: everything up to the end of the entry before GPGet (all of them when idle). */
static uint64_t consumed(const bg_queue_hw *hq, uint32_t get) {
  if (get == hq->put) return hq->cmdq_put;
  return hq->entry_end[(get + hq->entries - 1) % hq->entries];
}

/* Wait until ok(hq, arg) holds, re-reading GPGet; -BG_EHANG naming the channel and both pointers. */
static int wait_gpget(bg_queue_hw *hq, bool (*ok)(const bg_queue_hw *, uint32_t, uint64_t), uint64_t arg,
                      const char *why) {
  uint32_t get = gpget(hq);
  if (ok(hq, get, arg)) return 0;
  int timeout_ms = 30000;
  int e = bg_env_wait_timeout_ms(&timeout_ms);
  if (e) return e;
  uint64_t start = now_ms();
  unsigned spins = 0;
  while (!ok(hq, get = gpget(hq), arg)) {
    if (get >= hq->entries)
      return bg_error(BG_EHANG, "%s: %s: GPGet %u is outside the ring of %u entries", hq->g->name, hq->name, get,
                      hq->entries);
    if (now_ms() - start > (uint64_t)timeout_ms)
      return bg_error(BG_EHANG, "%s: %s: the GPU did not advance GPGet within %d ms (BG_WAIT_TIMEOUT_MS) while %s: "
                      "GPGet %u, GPPut %u", hq->g->name, hq->name, timeout_ms, why, get, hq->put);
    if (++spins > 64) {
      struct timespec ts = {0, 50000};
      nanosleep(&ts, NULL);
    } else {
      sched_yield();
    }
  }
  return 0;
}

static bool slot_free(const bg_queue_hw *hq, uint32_t get, uint64_t arg) {
  (void)arg;
  return (hq->put + 1) % hq->entries != get;
}

static bool bytes_free(const bg_queue_hw *hq, uint32_t get, uint64_t end) {
  return end - consumed(hq, get) <= hq->cmdq.size;
}

static bool idle(const bg_queue_hw *hq, uint32_t get, uint64_t arg) {
  (void)arg;
  return get == hq->put;
}

int bg_nv_channel_wait_idle(bg_queue_hw *hq) { return wait_gpget(hq, idle, 0, "waiting for the channel to drain"); }

int bg_nv_submit(bg_dev *d, bg_queue_hw *hq, const void *cmd, size_t len) {
  (void)d;
  nv_gpu *g = hq->g;
  if (len == 0 || len % 4 || len > hq->cmdq.size || len / 4 > GP_ENTRY_LENGTH_MAX)
    return bg_error(BG_EINVAL, "%s: %s: submit of %zu bytes (a non-zero multiple of 4, at most %" PRIu64 ")", g->name,
                    hq->name, len, hq->cmdq.size);
  pthread_mutex_lock(&g->lock);
  /* a pushbuffer slice never wraps: skip the ring's tail when it is too short */
  uint64_t pos = hq->cmdq_put % hq->cmdq.size, start = hq->cmdq_put;
  if (pos + len > hq->cmdq.size) start += hq->cmdq.size - pos, pos = 0;
  int e = wait_gpget(hq, slot_free, 0, "waiting for a free GPFIFO entry");
  if (e == 0) e = wait_gpget(hq, bytes_free, start + len, "waiting for pushbuffer space");
  if (e) {
    pthread_mutex_unlock(&g->lock);
    return e;
  }
  uint64_t va = hq->cmdq.va + pos;
  uint64_t entry = (va & 0xfffffffffcull) | GP_ENTRY_LEVEL_SUBROUTINE | ((uint64_t)(len / 4) << GP_ENTRY_LENGTH_SHIFT);
  if ((e = publish(hq, pos, cmd, len, entry))) {
    pthread_mutex_unlock(&g->lock);
    return e;
  }
  hq->cmdq_put = start + len;
  hq->entry_end[hq->put] = hq->cmdq_put;
  hq->put = (hq->put + 1) % hq->entries;
  if (g->pci) bg_nv_pci_doorbell(g, hq->token);
  else g->sys->doorbell(g->sys->ctx, (volatile uint32_t *)(volatile void *)(g->usermode + NV_DOORBELL_OFFSET), hq->token);
  hq->nsubmits++;
  pthread_mutex_unlock(&g->lock);
  return 0;
}
