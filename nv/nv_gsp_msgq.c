/* nv/nv_gsp_msgq.c: the GSP-RM message queues: page 0 (the page list), the command queue the host writes and the
 * status queue GSP writes, and the RPC record format on them.
 *
 * Facts: tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw; Linux nouveau nvkm/subdev/gsp/r535.c (r535_gsp_cmdq_push: free space against GSP's
 * read pointer, checksum over the element; r535_gsp_msgq_wait: reads wrap at element granularity) and
 * open-gpu-kernel-modules src/nvidia/src/kernel/gpu/gsp/message_queue_cpu.c (GspMsgQueueSendCommand /
 * GspMsgQueueReceiveStatus: the checksum covers the 0x30-byte element header plus rpc.length, zero-padded to 8 bytes,
 * and folds to 0 when the stored checksum is included; a record is consumed by its elemCount). tinygrad advances the
 * read pointer by round_up(length, 0x1000) instead, which misreads the next message whenever the 0x30-byte element
 * header pushes a message into one more element (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.read_resp). */
#include <stdatomic.h>
#include <stdlib.h>

#include "baregpu/error.h"
#include "nv/nv_gsp.h"
#include "nv/nv_gsp_priv.h"

_Static_assert(BG_NV_GSP_ELEM_HDR == 0x30u, "GSP_MSG_QUEUE_ELEMENT header is 0x30 bytes (r535_gsp_msg)");
_Static_assert(BG_NV_GSP_RPC_HDR == 0x20u, "rpc_message_header_v is 0x20 bytes");
_Static_assert(BG_MSGQ_RX_READ_PTR == 32u, "msgqRxHeader follows the 32-byte msgqTxHeader");
_Static_assert(BG_NV_MSGQ_STAT_OFFSET == 0x41000u, "status queue at region + 0x41000 (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw)");

const char *bg_nv_rpc_name(uint32_t function) {
  switch (function) {
  case BG_NV_RPC_ALLOC_MEMORY: return "ALLOC_MEMORY";
  case BG_NV_RPC_FREE: return "FREE";
  case BG_NV_RPC_UNLOADING_GUEST_DRIVER: return "UNLOADING_GUEST_DRIVER";
  case BG_NV_RPC_SET_PAGE_DIRECTORY: return "SET_PAGE_DIRECTORY";
  case BG_NV_RPC_CONTINUATION_RECORD: return "CONTINUATION_RECORD";
  case BG_NV_RPC_GSP_SET_SYSTEM_INFO: return "GSP_SET_SYSTEM_INFO";
  case BG_NV_RPC_SET_REGISTRY: return "SET_REGISTRY";
  case BG_NV_RPC_GSP_RM_CONTROL: return "GSP_RM_CONTROL";
  case BG_NV_RPC_GSP_RM_ALLOC: return "GSP_RM_ALLOC";
  case BG_NV_RPC_EVENT_GSP_INIT_DONE: return "GSP_INIT_DONE";
  case BG_NV_RPC_EVENT_RUN_CPU_SEQUENCER: return "GSP_RUN_CPU_SEQUENCER";
  case BG_NV_RPC_EVENT_MMU_FAULT_QUEUED: return "MMU_FAULT_QUEUED";
  case BG_NV_RPC_EVENT_OS_ERROR_LOG: return "OS_ERROR_LOG";
  default: return "unknown";
  }
}

/* The queue pointers live in memory GSP reads and writes: 32-bit atomic accesses (the offsets are 4-aligned and the
 * region page-aligned). */
static uint32_t ld32(const uint8_t *p) { return atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)p, memory_order_acquire); }
static void st32(uint8_t *p, uint32_t v) { atomic_store_explicit((_Atomic uint32_t *)(uintptr_t)p, v, memory_order_release); }

static uint8_t *cmdq(const bg_nv_msgq *q) { return q->base + BG_NV_MSGQ_CMD_OFFSET; }
static uint8_t *statq(const bg_nv_msgq *q) { return q->base + BG_NV_MSGQ_STAT_OFFSET; }
/* Element i (mod msg_count) of a queue. */
static uint8_t *elem(const bg_nv_msgq *q, uint8_t *queue, uint32_t i) {
  return queue + BG_MSGQ_ENTRY_OFF + (size_t)(i % q->msg_count) * BG_NV_GSP_MSG_SIZE;
}

int bg_nv_msgq_init(bg_nv_msgq *q, uint8_t *region, size_t size, const uint64_t *bus, size_t npages) {
  const size_t need = BG_NV_MSGQ_STAT_OFFSET + BG_NV_GSP_QUEUE_SIZE;
  if (!q || !region || !bus) return bg_error(BG_EINVAL, "GSP message queues: NULL queue, region or page list");
  if (size < need)
    return bg_error(BG_EINVAL, "GSP message queues: region of %zu bytes, expected at least 0x%zx (page list + 2 queues)",
                    size, need);
  if (size % BG_NV_GSP_MSG_SIZE || npages != size / BG_NV_GSP_MSG_SIZE)
    return bg_error(BG_EINVAL, "GSP message queues: %zu bus addresses for a region of %zu bytes, expected one per 4 KiB "
                    "page (%zu)", npages, size, size / BG_NV_GSP_MSG_SIZE);
  if (npages * sizeof(uint64_t) > BG_NV_GSP_MSG_SIZE)
    return bg_error(BG_EINVAL, "GSP message queues: %zu pages do not fit the one-page page list (512 at most)", npages);
  for (size_t i = 0; i < npages; i++)
    if (bus[i] & (BG_NV_GSP_MSG_SIZE - 1))
      return bg_error(BG_EINVAL, "GSP message queues: bus address of page %zu (0x%llx) is not 4 KiB aligned", i,
                      (unsigned long long)bus[i]);
  memset(region, 0, size);
  for (size_t i = 0; i < npages; i++) bg_gsp_wr64(region + 8 * i, bus[i]);
  *q = (bg_nv_msgq){.base = region, .size = size, .bus0 = bus[0], .pte_count = (uint32_t)npages,
                    .msg_count = (BG_NV_GSP_QUEUE_SIZE - BG_MSGQ_ENTRY_OFF) / BG_NV_GSP_MSG_SIZE};
  uint8_t *tx = cmdq(q);
  bg_gsp_wr32(tx + BG_MSGQ_TX_VERSION, 0);
  bg_gsp_wr32(tx + BG_MSGQ_TX_SIZE, BG_NV_GSP_QUEUE_SIZE);
  bg_gsp_wr32(tx + BG_MSGQ_TX_MSG_SIZE, BG_NV_GSP_MSG_SIZE);
  bg_gsp_wr32(tx + BG_MSGQ_TX_MSG_COUNT, q->msg_count);
  bg_gsp_wr32(tx + BG_MSGQ_TX_WRITE_PTR, 0);
  bg_gsp_wr32(tx + BG_MSGQ_TX_FLAGS, 1); /* MSGQ_FLAGS_SWAP_RX */
  bg_gsp_wr32(tx + BG_MSGQ_TX_RX_HDR_OFF, BG_MSGQ_RX_READ_PTR);
  bg_gsp_wr32(tx + BG_MSGQ_TX_ENTRY_OFF, BG_MSGQ_ENTRY_OFF);
  return 0;
}

/* Payload bytes one record carries. */
#define REC_PAYLOAD (BG_NV_GSP_MAX_RECORD - BG_NV_GSP_ELEM_HDR - BG_NV_GSP_RPC_HDR)

static uint32_t elems_of(size_t payload) {
  return (uint32_t)((BG_NV_GSP_ELEM_HDR + BG_NV_GSP_RPC_HDR + payload + BG_NV_GSP_MSG_SIZE - 1) / BG_NV_GSP_MSG_SIZE);
}

/* Write one record of `n` payload bytes at element `at`; returns its element count. */
static uint32_t put_record(bg_nv_msgq *q, uint32_t at, uint32_t function, const uint8_t *payload, size_t n) {
  uint32_t count = elems_of(n);
  uint8_t hdr[BG_NV_GSP_ELEM_HDR + BG_NV_GSP_RPC_HDR] = {0};
  bg_gsp_wr32(hdr + BG_ELEM_SEQ, q->seq++);
  bg_gsp_wr32(hdr + BG_ELEM_COUNT, count);
  uint8_t *rpc = hdr + BG_NV_GSP_ELEM_HDR;
  bg_gsp_wr32(rpc + BG_RPC_VERSION, BG_RPC_HEADER_VERSION);
  bg_gsp_wr32(rpc + BG_RPC_SIGNATURE, BG_RPC_SIGNATURE_VRPC);
  bg_gsp_wr32(rpc + BG_RPC_LENGTH, (uint32_t)(BG_NV_GSP_RPC_HDR + n));
  bg_gsp_wr32(rpc + BG_RPC_FUNCTION, function);
  bg_gsp_wr32(rpc + BG_RPC_RESULT, BG_RPC_RESULT_PENDING);
  bg_gsp_wr32(rpc + BG_RPC_RESULT_PRIVATE, BG_RPC_RESULT_PENDING);
  /* The record as one byte string (header, payload, zeros) laid over its elements, which may wrap. */
  uint64_t sum = 0;
  for (uint32_t e = 0; e < count; e++) {
    uint8_t *dst = elem(q, cmdq(q), at + e);
    size_t lo = (size_t)e * BG_NV_GSP_MSG_SIZE, hi = lo + BG_NV_GSP_MSG_SIZE;
    memset(dst, 0, BG_NV_GSP_MSG_SIZE);
    if (lo < sizeof hdr) memcpy(dst, hdr + lo, sizeof hdr - lo);
    size_t p0 = lo > sizeof hdr ? lo : sizeof hdr, p1 = hi < sizeof hdr + n ? hi : sizeof hdr + n;
    if (p1 > p0) memcpy(dst + (p0 - lo), payload + (p0 - sizeof hdr), p1 - p0);
    for (size_t k = 0; k < BG_NV_GSP_MSG_SIZE; k += 8) sum ^= bg_gsp_rd64(dst + k);
  }
  bg_gsp_wr32(elem(q, cmdq(q), at) + BG_ELEM_CHECKSUM, (uint32_t)(sum >> 32) ^ (uint32_t)sum);
  return count;
}

int bg_nv_msgq_send(bg_nv_msgq *q, uint32_t function, const void *payload, size_t n) {
  if (!q || !q->base || !q->msg_count) return bg_error(BG_EINVAL, "GSP command queue: not initialized");
  if (n && !payload) return bg_error(BG_EINVAL, "GSP RPC %s: NULL payload of %zu bytes", bg_nv_rpc_name(function), n);
  /* The first record carries up to REC_PAYLOAD bytes, each CONTINUATION_RECORD the next REC_PAYLOAD. */
  size_t nrec = n <= REC_PAYLOAD ? 1 : 1 + (n - 1) / REC_PAYLOAD;
  uint64_t need = 0;
  for (size_t r = 0; r < nrec; r++) {
    size_t chunk = r + 1 < nrec ? REC_PAYLOAD : n - r * REC_PAYLOAD;
    need += elems_of(chunk);
  }
  uint32_t cnt = q->msg_count;
  if (need > cnt - 1)
    return bg_error(BG_EINVAL, "GSP RPC %s: %zu payload bytes need %llu queue elements, the queue holds %u",
                    bg_nv_rpc_name(function), n, (unsigned long long)need, cnt - 1);
  uint32_t wptr = ld32(cmdq(q) + BG_MSGQ_TX_WRITE_PTR);
  uint32_t rptr = ld32(statq(q) + BG_MSGQ_RX_READ_PTR); /* GSP's read pointer of the command queue */
  if (wptr >= cnt) return bg_error(BG_EIO, "GSP command queue: writePtr %u out of range (%u elements)", wptr, cnt);
  if (rptr >= cnt)
    return bg_error(BG_EIO, "GSP command queue: GSP's readPtr %u out of range (%u elements)", rptr, cnt);
  uint32_t free = (rptr + cnt - wptr - 1) % cnt;
  if (need > free)
    return bg_error(BG_EBUSY, "GSP RPC %s: command queue full (%llu elements needed, %u free: GSP read pointer %u, "
                    "write pointer %u)", bg_nv_rpc_name(function), (unsigned long long)need, free, rptr, wptr);
  const uint8_t *p = payload;
  for (size_t r = 0; r < nrec; r++) {
    size_t chunk = r + 1 < nrec ? REC_PAYLOAD : n - r * REC_PAYLOAD;
    uint32_t fn = r ? (uint32_t)BG_NV_RPC_CONTINUATION_RECORD : function;
    wptr = (wptr + put_record(q, wptr, fn, p ? p + r * REC_PAYLOAD : NULL, chunk)) % cnt;
  }
  /* The elements must be visible before GSP sees the new write pointer (release store). */
  st32(cmdq(q) + BG_MSGQ_TX_WRITE_PTR, wptr);
  q->sent += nrec;
  return 0;
}

int bg_nv_msgq_recv(bg_nv_msgq *q, bg_nv_rpc_msg *msg, void *buf, size_t cap) {
  if (!q || !q->base || !q->msg_count || !msg) return bg_error(BG_EINVAL, "GSP status queue: not initialized");
  uint32_t cnt = q->msg_count;
  uint32_t wptr = ld32(statq(q) + BG_MSGQ_TX_WRITE_PTR);
  uint32_t rptr = ld32(cmdq(q) + BG_MSGQ_RX_READ_PTR); /* the host's read pointer of the status queue */
  if (wptr >= cnt) return bg_error(BG_EIO, "GSP status queue: writePtr %u out of range (%u elements)", wptr, cnt);
  if (rptr >= cnt) return bg_error(BG_EIO, "GSP status queue: readPtr %u out of range (%u elements)", rptr, cnt);
  if (rptr == wptr) return 0;
  uint32_t used = (wptr + cnt - rptr) % cnt;
  const uint8_t *e0 = elem(q, statq(q), rptr);
  uint32_t count = bg_gsp_rd32(e0 + BG_ELEM_COUNT);
  if (count < 1 || count > BG_GSP_MAX_ELEMS || count > used)
    return bg_error(BG_EIO, "GSP status queue: element %u has elemCount %u, expected 1..%u and at most the %u written",
                    rptr, count, BG_GSP_MAX_ELEMS < used ? BG_GSP_MAX_ELEMS : used, used);
  const uint8_t *rpc = e0 + BG_NV_GSP_ELEM_HDR;
  uint32_t len = bg_gsp_rd32(rpc + BG_RPC_LENGTH);
  uint32_t fn = bg_gsp_rd32(rpc + BG_RPC_FUNCTION);
  if (len < BG_NV_GSP_RPC_HDR || (uint64_t)BG_NV_GSP_ELEM_HDR + len > (uint64_t)count * BG_NV_GSP_MSG_SIZE)
    return bg_error(BG_EIO, "GSP status queue: element %u (%s) has length %u, expected 0x20..0x%x for elemCount %u", rptr,
                    bg_nv_rpc_name(fn), len, count * BG_NV_GSP_MSG_SIZE - BG_NV_GSP_ELEM_HDR, count);
  /* Checksum over header + rpc.length bytes, the last word's bytes past the message taken as zero (the sender pads
   * with zeros); the stored checksum is inside, so the fold is 0 when it is right. */
  size_t msg_len = BG_NV_GSP_ELEM_HDR + len;
  uint64_t sum = 0;
  for (size_t off = 0; off < msg_len; off += 8) {
    const uint8_t *w = elem(q, statq(q), rptr + (uint32_t)(off / BG_NV_GSP_MSG_SIZE)) + off % BG_NV_GSP_MSG_SIZE;
    uint8_t word[8] = {0};
    memcpy(word, w, msg_len - off < 8 ? msg_len - off : 8);
    sum ^= bg_gsp_rd64(word);
  }
  if (((uint32_t)(sum >> 32) ^ (uint32_t)sum) != 0)
    return bg_error(BG_EIO, "GSP status queue: element %u (%s, %u bytes): checksum mismatch (stored 0x%08x)", rptr,
                    bg_nv_rpc_name(fn), len, bg_gsp_rd32(e0 + BG_ELEM_CHECKSUM));
  uint32_t ver = bg_gsp_rd32(rpc + BG_RPC_VERSION), sig = bg_gsp_rd32(rpc + BG_RPC_SIGNATURE);
  if (ver != BG_RPC_HEADER_VERSION)
    return bg_error(BG_EIO, "GSP status queue: element %u: header_version 0x%08x, expected 0x%08x", rptr, ver,
                    BG_RPC_HEADER_VERSION);
  if (sig != BG_RPC_SIGNATURE_VRPC)
    return bg_error(BG_EIO, "GSP status queue: element %u: signature 0x%08x, expected 0x%08x (\"VRPC\")", rptr, sig,
                    BG_RPC_SIGNATURE_VRPC);
  *msg = (bg_nv_rpc_msg){.function = fn, .result = bg_gsp_rd32(rpc + BG_RPC_RESULT),
                         .result_private = bg_gsp_rd32(rpc + BG_RPC_RESULT_PRIVATE), .seq = bg_gsp_rd32(e0 + BG_ELEM_SEQ),
                         .length = len - BG_NV_GSP_RPC_HDR, .elem_count = count};
  int ret = 1;
  if (msg->length > cap || (msg->length && !buf)) {
    ret = bg_error(BG_EINVAL, "GSP status queue: %s reply of %u bytes does not fit the %zu-byte buffer",
                   bg_nv_rpc_name(fn), msg->length, cap);
  } else {
    uint8_t *out = buf;
    for (size_t off = BG_NV_GSP_ELEM_HDR + BG_NV_GSP_RPC_HDR; off < msg_len;) {
      size_t in = off % BG_NV_GSP_MSG_SIZE, k = BG_NV_GSP_MSG_SIZE - in;
      if (k > msg_len - off) k = msg_len - off;
      memcpy(out, elem(q, statq(q), rptr + (uint32_t)(off / BG_NV_GSP_MSG_SIZE)) + in, k);
      out += k;
      off += k;
    }
  }
  /* Consumed by its elemCount (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.read_resp), after the copy: GSP may reuse the elements once it sees the pointer. */
  st32(cmdq(q) + BG_MSGQ_RX_READ_PTR, (rptr + count) % cnt);
  q->received++;
  return ret;
}
