/* tests/mockgpu/amd_sdma_exec.c: SDMA0 queue 0 executor (amd_sdma_exec.h). Opcodes as Linux's SDMA_OP_* /
 * SDMA_SUBOP_* (sdma_v6_0_0_pkt_open.h, identical in sdma_v7_0_0_pkt_open.h for the packets modelled; SDMA 4.4.2 of
 * gfx942 as vega10_sdma_pkt_open.h / sdma_v4_4_2.c: narrower count fields, no MTYPE in FENCE, no GCR_REQ). */
#include "amd_sdma_exec.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amd_cp.h"
#include "amd_gfx9.h"
#include "amd_engine.h"
#include "amd_internal.h"
#include "amd_vm.h"
#include "mock_shm.h"

enum {
  SDMA_OP_NOP = 0, SDMA_OP_COPY = 1, SDMA_OP_WRITE = 2, SDMA_OP_INDIRECT = 4, SDMA_OP_FENCE = 5, SDMA_OP_TRAP = 6,
  SDMA_OP_POLL_REGMEM = 8, SDMA_OP_CONST_FILL = 11, SDMA_OP_TIMESTAMP = 13, SDMA_OP_SRBM_WRITE = 14,
  SDMA_OP_GCR_REQ = 17,
};
enum { SDMA_SUBOP_COPY_LINEAR = 0, SDMA_SUBOP_WRITE_LINEAR = 0, SDMA_SUBOP_TIMESTAMP_GET = 1,
       SDMA_SUBOP_TIMESTAMP_GET_GLOBAL = 2 };
#define RB_RPTR_WRITEBACK_ENABLE (1u << 12)
#define MAX_PKT_DW (4u + (1u << 20))
#define MAX_IB_DW (1u << 20)
#define COPY_CHUNK (64u << 10)

/* Field widths that differ between the packet generations (vega10_sdma_pkt_open.h vs sdma_v6_0_0_pkt_open.h). */
typedef struct sdma_gen {
  unsigned major;         /* 4 (SDMA 4.4.2, gfx942) or 6 (SDMA 6.x / 7.x) */
  uint32_t count_mask;    /* COPY_LINEAR / CONST_FILL byte count - 1: 22 bits on SDMA 4, 30 bits on 6/7 */
  uint32_t fence_hdr_ok;  /* FENCE header bits above the opcode allowed: v6 MTYPE/GCC/SYS/SNP/GPA/L2_POLICY, v4 none */
  bool gcr_req;           /* GCR_REQ (17) exists (SDMA 5+) */
} sdma_gen;
static const sdma_gen SDMA_V4 = {4, 0x3fffffu, 0, false};
static const sdma_gen SDMA_V6 = {6, 0x3fffffffu, 0xffff0000u, true};

typedef struct sdma {
  amd_engine e;
  const sdma_gen *gen;
  const mock_amd_sdma_rb *rb;
  amd_vm vm;
  uint32_t *pk;     /* packet buffer (MAX_PKT_DW) */
  uint8_t *chunk;   /* copy bounce buffer */
  mock_amd_sdma_stats st;
} sdma;

enum { X_OK = AMD_X_OK, X_HUNG = AMD_X_HUNG, X_STOPPED = AMD_X_STOPPED };

typedef amd_pk_src pk_src; /* off: byte offset of the packet */

static int bad(sdma *q, const pk_src *s, const uint32_t *pk, unsigned n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int bad(sdma *q, const pk_src *s, const uint32_t *pk, unsigned n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  amd_engine_vbad(&q->e, s, "byte", pk, n, fmt, ap);
  va_end(ap);
  q->st.hung = true;
  q->e.latched = true;
  return X_HUNG;
}

/* Packet length in dwords from the header (and dword 3 for WRITE), 0 for an unknown packet. */
static unsigned pkt_len(const uint32_t *pk, unsigned have) {
  unsigned op = pk[0] & 0xff;
  switch (op) {
  case SDMA_OP_NOP: return 1 + ((pk[0] >> 16) & 0x3fff);
  case SDMA_OP_COPY: return 7;
  case SDMA_OP_WRITE: return have >= 4 ? 4 + (pk[3] & 0xfffff) + 1 : 4;
  case SDMA_OP_INDIRECT: return 6;
  case SDMA_OP_FENCE: return 4;
  case SDMA_OP_TRAP: return 2;
  case SDMA_OP_POLL_REGMEM: return 6;
  case SDMA_OP_CONST_FILL: return 5;
  case SDMA_OP_TIMESTAMP: return 3;
  case SDMA_OP_SRBM_WRITE: return 3;
  case SDMA_OP_GCR_REQ: return 5;
  default: return 0;
  }
}

static int copy_linear(sdma *q, const pk_src *s, const uint32_t *pk, unsigned n) {
  if (pk[1] & ~q->gen->count_mask)
    return bad(q, s, pk, n, "COPY_LINEAR count 0x%x has bits beyond the SDMA %u count field (mask 0x%x)", pk[1],
               q->gen->major, q->gen->count_mask);
  uint64_t bytes = (uint64_t)(pk[1] & q->gen->count_mask) + 1, src = (uint64_t)pk[4] << 32 | pk[3], dst = (uint64_t)pk[6] << 32 | pk[5];
  if (pk[2] != 0) return bad(q, s, pk, n, "COPY_LINEAR parameter 0x%x: byte swap not modelled", pk[2]);
  q->st.copies++;
  for (uint64_t done = 0; done < bytes;) {
    size_t k = bytes - done < COPY_CHUNK ? (size_t)(bytes - done) : COPY_CHUNK;
    if (amd_vm_read(&q->vm, src + done, q->chunk, k, "SDMA0 copy", AMD_VM_CID_SDMA0) < 0 ||
        amd_vm_write(&q->vm, dst + done, q->chunk, k, "SDMA0 copy", AMD_VM_CID_SDMA0) < 0)
      return bad(q, s, pk, n, "COPY_LINEAR of %" PRIu64 " bytes faulted", bytes);
    done += k;
  }
  q->st.bytes_copied += bytes;
  return X_OK;
}

static int const_fill(sdma *q, const pk_src *s, const uint32_t *pk, unsigned n) {
  unsigned fs = pk[0] >> 30;
  if (pk[4] & ~q->gen->count_mask)
    return bad(q, s, pk, n, "CONST_FILL count 0x%x has bits beyond the SDMA %u count field (mask 0x%x)", pk[4],
               q->gen->major, q->gen->count_mask);
  uint64_t dst = (uint64_t)pk[2] << 32 | pk[1], bytes = (uint64_t)(pk[4] & q->gen->count_mask) + 1;
  if (fs != 0 && fs != 2) return bad(q, s, pk, n, "CONST_FILL FILLSIZE %u not modelled (0 byte, 2 dword)", fs);
  if (fs == 2 && ((dst | bytes) & 3)) return bad(q, s, pk, n, "CONST_FILL of dwords needs a dword-aligned address and size");
  for (size_t i = 0; i < COPY_CHUNK; i += 4) {
    uint32_t v = fs == 2 ? pk[3] : (pk[3] & 0xff) * 0x01010101u;
    memcpy(q->chunk + i, &v, 4);
  }
  for (uint64_t done = 0; done < bytes;) {
    size_t k = bytes - done < COPY_CHUNK ? (size_t)(bytes - done) : COPY_CHUNK;
    if (amd_vm_write(&q->vm, dst + done, q->chunk, k, "SDMA0 fill", AMD_VM_CID_SDMA0) < 0)
      return bad(q, s, pk, n, "CONST_FILL faulted");
    done += k;
  }
  return X_OK;
}

static int poll_regmem(sdma *q, const pk_src *s, const uint32_t *pk, unsigned n) {
  bool hdp = (pk[0] >> 26) & 1, mem = pk[0] >> 31;
  unsigned func = (pk[0] >> 28) & 7;
  uint64_t addr = (uint64_t)pk[2] << 32 | pk[1];
  if (func == 7 || (hdp && mem)) return bad(q, s, pk, n, "POLL_REGMEM func %u hdp_flush %d mem_poll %d not modelled", func, hdp, mem);
  if (!mem && (pk[1] & 3)) return bad(q, s, pk, n, "POLL_REGMEM register byte address 0x%x not dword aligned", pk[1]);
  if (hdp) mock_amd_wreg(q->e.g, pk[2] >> 2, pk[3]); /* HDP flush: request register, then poll done */
  q->st.waits++;
  int r = amd_engine_poll(&q->e, &q->vm, mem, mem ? addr : pk[1] >> 2, func, pk[3], pk[4], "SDMA0 POLL_REGMEM",
                          AMD_VM_CID_SDMA0);
  return r == X_HUNG ? bad(q, s, pk, n, "poll address faulted") : r;
}

static int exec_ib(sdma *q, const pk_src *s, const uint32_t *pk, unsigned n);

static int exec_packet(sdma *q, const pk_src *s, const uint32_t *pk, unsigned n, bool in_ib) {
  unsigned op = pk[0] & 0xff, sub = (pk[0] >> 8) & 0xff;
  uint64_t a = (uint64_t)pk[2] << 32 | pk[1];
  q->st.packets++;
  switch (op) {
  case SDMA_OP_NOP: return X_OK;
  case SDMA_OP_COPY:
    if (sub != SDMA_SUBOP_COPY_LINEAR) return bad(q, s, pk, n, "COPY sub-op %u not modelled (LINEAR 0)", sub);
    return copy_linear(q, s, pk, n);
  case SDMA_OP_WRITE:
    if (sub != SDMA_SUBOP_WRITE_LINEAR) return bad(q, s, pk, n, "WRITE sub-op %u not modelled (LINEAR 0)", sub);
    for (unsigned i = 4; i < n; i++)
      if (amd_vm_store(&q->vm, a + 4ull * (i - 4), pk[i], 4, "SDMA0 WRITE", AMD_VM_CID_SDMA0) < 0)
        return bad(q, s, pk, n, "WRITE faulted");
    return X_OK;
  case SDMA_OP_INDIRECT:
    if (in_ib) return bad(q, s, pk, n, "INDIRECT inside an IB");
    return exec_ib(q, s, pk, n);
  case SDMA_OP_FENCE:
    if (pk[0] & 0xffff0000u & ~q->gen->fence_hdr_ok)
      return bad(q, s, pk, n, "FENCE header 0x%08x: SDMA %u has no MTYPE/cache-policy bits (16..31 must be 0)", pk[0],
                 q->gen->major);
    if (amd_vm_store(&q->vm, a, pk[3], 4, "SDMA0 FENCE", AMD_VM_CID_SDMA0) < 0) return bad(q, s, pk, n, "FENCE faulted");
    return X_OK;
  case SDMA_OP_TRAP: q->st.traps++; return X_OK;
  case SDMA_OP_POLL_REGMEM: return poll_regmem(q, s, pk, n);
  case SDMA_OP_CONST_FILL: return const_fill(q, s, pk, n);
  case SDMA_OP_TIMESTAMP:
    if (sub != SDMA_SUBOP_TIMESTAMP_GET && sub != SDMA_SUBOP_TIMESTAMP_GET_GLOBAL)
      return bad(q, s, pk, n, "TIMESTAMP sub-op %u not modelled (GET 1, GET_GLOBAL 2)", sub);
    if (amd_vm_store(&q->vm, a, amd_gpu_clock(), 8, "SDMA0 TIMESTAMP", AMD_VM_CID_SDMA0) < 0)
      return bad(q, s, pk, n, "TIMESTAMP faulted");
    return X_OK;
  case SDMA_OP_SRBM_WRITE:
    if ((pk[0] >> 28) != 0xf) return bad(q, s, pk, n, "SRBM_WRITE with BYTE_EN 0x%x (only 0xf modelled)", pk[0] >> 28);
    mock_amd_wreg(q->e.g, pk[1] & 0x3ffff, pk[2]);
    return X_OK;
  case SDMA_OP_GCR_REQ:
    if (!q->gen->gcr_req) return bad(q, s, pk, n, "GCR_REQ (opcode 17) does not exist on SDMA %u", q->gen->major);
    return X_OK; /* no caches */
  default: return bad(q, s, pk, n, "unknown SDMA opcode %u (sub-op %u)", op, sub);
  }
}

static int exec_ib(sdma *q, const pk_src *ring, const uint32_t *pk, unsigned n) {
  uint64_t va = (uint64_t)pk[2] << 32 | pk[1];
  uint32_t ndw = pk[3] & 0xfffff;
  if ((va & 31) || ((pk[0] >> 16) & 0xf) != 0)
    return bad(q, ring, pk, n, "INDIRECT needs a 32-byte aligned IB and VMID 0");
  if (!ndw) return X_OK;
  uint32_t *ib = malloc((size_t)ndw * 4);
  if (!ib) return bad(q, ring, pk, n, "out of memory for an IB of %u dwords", ndw);
  pk_src s = {true, va, 0};
  int r = X_OK;
  if (amd_vm_read(&q->vm, va, ib, (size_t)ndw * 4, "SDMA0 IB fetch", AMD_VM_CID_SDMA0) < 0)
    r = bad(q, ring, pk, n, "IB of %u dwords not readable", ndw);
  for (uint32_t i = 0; r == X_OK && i < ndw;) {
    s.off = 4ull * i;
    unsigned len = pkt_len(ib + i, ndw - i);
    if (!len) r = bad(q, &s, ib + i, 1, "unknown SDMA opcode %u", ib[i] & 0xff);
    else if (len > ndw - i) r = bad(q, &s, ib + i, ndw - i, "packet of %u dwords runs past the IB end", len);
    else r = exec_packet(q, &s, ib + i, len, true);
    i += len;
  }
  free(ib);
  return r;
}

static int ring_read(sdma *q, uint64_t at, unsigned n, uint32_t *dst) {
  uint64_t size = 4ull << ((q->rb->rb_cntl >> 1) & 0x1f);
  return amd_engine_ring_read(&q->e, &q->vm, q->rb->base, size, at, n, dst, AMD_VM_CID_SDMA0);
}

static void sdma_run(amd_engine *e) {
  sdma *q = e->priv;
  if (!q->rb->enabled) return;
  if (amd_engine_new_activation(e)) {
    q->st.rptr = 0;
    q->st.hung = e->latched;
    if (e->latched) /* a ring enable alone does not restart an engine that stopped on an error */
      amd_fail(e->g, "SDMA0: doorbell on a ring enabled again after the engine hung, without an engine reset "
               "({F32|MCU}_CNTL halt, GRBM_SOFT_RESET.SOFT_RESET_SDMA0: Linux sdma_v6_0_soft_reset)");
  }
  if (q->st.hung) return;
  amd_vm_load(&q->vm, e->g);
  uint64_t size = 4ull << ((q->rb->rb_cntl >> 1) & 0x1f);
  pk_src s = {false, q->rb->base, q->st.rptr};
  if ((e->db & 3) || e->db < q->st.rptr || e->db - q->st.rptr > size) {
    bad(q, &s, NULL, 0, "doorbell write pointer 0x%" PRIx64 " with read pointer 0x%" PRIx64 " on a ring of 0x%" PRIx64 " bytes",
        e->db, q->st.rptr, size);
    return;
  }
  while (q->st.rptr < e->db && amd_engine_alive(&q->e)) {
    s.off = q->st.rptr;
    unsigned have = (unsigned)((e->db - s.off) / 4 < 4 ? (e->db - s.off) / 4 : 4);
    if (ring_read(q, s.off, have, q->pk) < 0) {
      bad(q, &s, NULL, 0, "ring not readable");
      return;
    }
    unsigned n = pkt_len(q->pk, have);
    if (!n) {
      bad(q, &s, q->pk, have, "unknown SDMA opcode %u", q->pk[0] & 0xff);
      return;
    }
    if (n > (e->db - s.off) / 4 || n > MAX_PKT_DW) {
      bad(q, &s, q->pk, have, "packet of %u dwords runs past the write pointer 0x%" PRIx64, n, e->db);
      return;
    }
    if (ring_read(q, s.off, n, q->pk) < 0) {
      bad(q, &s, q->pk, have, "ring not readable");
      return;
    }
    if (exec_packet(q, &s, q->pk, n, false) != X_OK) return;
    q->st.rptr += 4ull * n;
    if ((q->rb->rb_cntl & RB_RPTR_WRITEBACK_ENABLE) &&
        amd_vm_store(&q->vm, q->rb->rptr_addr, q->st.rptr, 8, "SDMA0 rptr writeback", AMD_VM_CID_SDMA0) < 0) {
      q->st.hung = true;
      q->e.latched = true;
      return;
    }
  }
}

static int64_t sdma_doorbell(amd_engine *e) {
  const sdma *q = e->priv;
  if (!q->rb->enabled || !(q->rb->doorbell & (1u << 28))) return -1;
  return (int64_t)((q->rb->doorbell_offset >> 2) & 0x3ffffff) * 4;
}

static void sdma_destroy(amd_engine *e) {
  sdma *q = e->priv;
  free(q->pk);
  free(q->chunk);
  free(q);
}

static const amd_engine_ops SDMA_OPS = {"SDMA0", sdma_doorbell, sdma_run, sdma_destroy};

amd_engine *amd_sdma_engine(mock_amd *g) {
  const mock_amd_sdma_rb *rb = mock_amd_sdma_ring(g);
  const sdma_gen *gen = &SDMA_V6;
  if (!rb && (rb = mock_amd_sdma9_ring(g))) gen = &SDMA_V4; /* gfx942: SDMA 4.4.2 instance 0's GFX ring */
  if (!rb) return NULL;
  sdma *q = calloc(1, sizeof(*q));
  uint32_t *pk = malloc(MAX_PKT_DW * 4);
  uint8_t *chunk = malloc(COPY_CHUNK);
  if (!q || !pk || !chunk) {
    free(q), free(pk), free(chunk);
    return NULL;
  }
  q->e.ops = &SDMA_OPS;
  q->e.priv = q;
  q->gen = gen;
  q->rb = rb;
  q->e.q_active = &rb->enabled;
  q->e.q_nactivate = &rb->nenable;
  q->pk = pk;
  q->chunk = chunk;
  return &q->e;
}

bool mock_amd_sdma_stats_get(mock_amd *g, mock_amd_sdma_stats *out) {
  return amd_engine_read_priv(g, &SDMA_OPS, offsetof(sdma, st), out, sizeof(*out));
}

int amd_sdma_soft_reset(mock_amd *g, bool halted) {
  mock_shm_lock(&g->lock);
  amd_engine *e = amd_engine_find(g, &SDMA_OPS);
  int r = 0;
  if (e && !halted) {
    amd_fail(g, "GRBM_SOFT_RESET.SOFT_RESET_SDMA0 with the SDMA engine running ({F32|MCU}_CNTL.HALT clear; Linux "
             "sdma_v6_0_soft_reset halts it first)");
    r = -1;
  } else if (e) {
    e->latched = false; /* the engine's thread starts clean at its next ring enable */
  }
  pthread_mutex_unlock(&g->lock);
  return r;
}
