/* tests/fuzz/fuzz_nv_gsp.c: libFuzzer target for what the driver reads from GSP-RM (nv/nv_gsp.h): the status queue
 * (bg_nv_msgq_recv, and bg_nv_gsp_poll, which runs the events it finds: CPU sequencer, error log, MMU fault) and the
 * CPU sequencer's payload (bg_nv_gsp_sequencer_run) over a fake register file.
 *
 * Input: byte 0 even = a status queue: byte 1 = the host's read pointer (mod 64: 63 is out of range), then the status
 * queue's header page (msgqTxHeader with writePtr at 16), then the elements starting at that read pointer (wrapping
 * at 63). Byte 0 odd = a sequencer payload (rpc_run_cpu_sequencer_v17_00) from byte 1. */
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "fuzz_common.h"
#include "nv/nv_gsp.h"

#define REGION (0x1000u + 2u * BG_NV_GSP_QUEUE_SIZE)
#define ELEMS 63u

typedef struct regs {
  uint32_t r[256];
  uint64_t waited;
} regs;

static uint32_t rd(void *ctx, uint32_t addr) { return ((regs *)ctx)->r[(addr >> 2) & 255]; }
static void wr(void *ctx, uint32_t addr, uint32_t v) { ((regs *)ctx)->r[(addr >> 2) & 255] = v; }
static void delay(void *ctx, uint32_t us) { ((regs *)ctx)->waited += us; }
static int core(void *ctx) { return ((regs *)ctx)->r[0] & 1 ? bg_error(BG_EHANG, "core op refused") : 0; }
static void notify(void *ctx) { (void)ctx; }

static bg_nv_seq_ops seq_ops(regs *r) {
  return (bg_nv_seq_ops){.ctx = r, .rd32 = rd, .wr32 = wr, .delay_us = delay, .core_reset = core, .core_start = core,
                         .core_wait_halt = core, .core_resume = core, .timeout_ms = 1};
}

static void queue(const uint8_t *data, size_t size) {
  static uint8_t *region;
  static uint64_t bus[REGION / 0x1000];
  if (!region) {
    region = aligned_alloc(0x1000, REGION);
    if (!region) abort();
    for (size_t i = 0; i < REGION / 0x1000; i++) bus[i] = 0x100000ull * (i + 1);
  }
  bg_nv_msgq q;
  if (bg_nv_msgq_init(&q, region, REGION, bus, REGION / 0x1000) != 0) abort();
  uint32_t rptr = data[0] % 64;
  memcpy(region + BG_NV_MSGQ_CMD_OFFSET + 32, &rptr, 4); /* msgqRxHeader.readPtr of the status queue */
  data++, size--;
  uint8_t *stat = region + BG_NV_MSGQ_STAT_OFFSET;
  size_t k = size < 0x1000 ? size : 0x1000;
  memcpy(stat, data, k);
  data += k, size -= k;
  for (uint32_t e = rptr; size && e < rptr + ELEMS; e++) {
    k = size < 0x1000 ? size : 0x1000;
    memcpy(stat + 0x1000 + (size_t)(e % ELEMS) * 0x1000, data, k);
    data += k, size -= k;
  }
  /* Twice: the raw receive with a small buffer, then (pointer reset) the RPC layer's event handling. */
  static uint8_t buf[BG_NV_GSP_MAX_RECORD];
  bg_nv_rpc_msg m;
  for (int i = 0; i < 70; i++) {
    int r = bg_nv_msgq_recv(&q, &m, buf, 0x800);
    if (r == 0) break;
    if (r == 1 && (m.length > 0x800 || m.elem_count < 1 || m.elem_count > 16)) abort();
    if (r < 0 && !*bg_last_error()) abort(); /* every failure says why */
    if (r < 0 && r != -BG_EINVAL) break;
  }
  memcpy(region + BG_NV_MSGQ_CMD_OFFSET + 32, &rptr, 4);
  regs rf = {0};
  bg_nv_seq_ops so = seq_ops(&rf);
  bg_nv_gsp g = {.q = q};
  bg_nv_gsp_ops ops = {.notify = notify, .seq = &so, .timeout_ms = 1};
  if (bg_nv_gsp_init(&g, &ops) != 0) abort();
  for (int i = 0; i < 4 && bg_nv_gsp_poll(&g) < 0 && !g.error; i++) {}
  bg_nv_gsp_fini(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  if (data[0] & 1) {
    regs rf = {0};
    bg_nv_seq_ops so = seq_ops(&rf);
    int r = bg_nv_gsp_sequencer_run(data + 1, size - 1, &so);
    if (r < 0 && !*bg_last_error()) abort();
  } else {
    queue(data + 1, size - 1);
  }
  return 0;
}
