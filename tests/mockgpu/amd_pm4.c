/* tests/mockgpu/amd_pm4.c: the compute queue's command processor (amd_pm4.h). Opcodes and fields as Linux names
 * them (drivers/gpu/drm/amd/amdgpu/nvd.h PACKET3_*, soc15d.h field macros; gfx10+ RELEASE_MEM/ACQUIRE_MEM layout),
 * COMPUTE_* registers from the generated gc_11_0_0 / gc_12_0_0 tables. */
#include "amd_pm4.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_regs.h"
#include "amd_cp.h"
#include "amd_engine.h"
#include "amd_gmc.h"
#include "amd_internal.h"
#include "amd_vm.h"
#include "mock_shm.h"
#ifdef BG_MOCK_RDNA3
#include "rdna3/rdna3.h"
#endif

/* PACKET3 opcodes (nvd.h) */
enum {
  PACKET3_NOP = 0x10, PACKET3_DISPATCH_DIRECT = 0x15, PACKET3_PRED_EXEC = 0x23, PACKET3_WRITE_DATA = 0x37,
  PACKET3_WAIT_REG_MEM = 0x3C,
  PACKET3_INDIRECT_BUFFER = 0x3F, PACKET3_EVENT_WRITE = 0x46, PACKET3_RELEASE_MEM = 0x49, PACKET3_ACQUIRE_MEM = 0x58,
  PACKET3_SET_SH_REG = 0x76, PACKET3_SET_UCONFIG_REG = 0x79,
};
/* VGT_EVENT_TYPE values (Linux sid.h / nvd.h) */
enum {
  CACHE_FLUSH_TS = 0x04, CACHE_FLUSH = 0x06, CS_PARTIAL_FLUSH = 0x07, CACHE_FLUSH_AND_INV_TS_EVENT = 0x14,
  CACHE_FLUSH_AND_INV_EVENT = 0x16, BOTTOM_OF_PIPE_TS = 0x28,
};
#define EVENT_INDEX_EOP 5u
#define PACKET3_SET_SH_REG_START 0x2c00u
#define PACKET3_SET_SH_REG_END 0x3000u
#define PACKET3_SET_UCONFIG_REG_START 0xc000u
#define PACKET3_SET_UCONFIG_REG_END 0x10000u
#define INDIRECT_BUFFER_VALID (1u << 23)
#define INDIRECT_BUFFER_CHAIN (1u << 20)
/* PM4 register space = MMIO dwords with Navi's static GC bases (GC_BASE__INST0_SEG0/1, tinygrad tinygrad/runtime/ops_amd.py AMDDevice). */
static const uint32_t PM4_GC_SEG[2] = {0x1260, 0xA000};
#define MAX_PKT_DW (0x3fffu + 2u)
#define MAX_IB_DW (1u << 20)

enum {
  R_PGM_LO, R_PGM_HI, R_RSRC1, R_RSRC2, R_RSRC3, R_NUM_X, R_NUM_Y, R_NUM_Z, R_START_X, R_START_Y, R_START_Z,
  R_SCRATCH_LO, R_SCRATCH_HI, R_TMPRING, R_USER0, R_N
};
static const enum bg_am_reg_id RNAMES[R_N] = {
  regCOMPUTE_PGM_LO, regCOMPUTE_PGM_HI, regCOMPUTE_PGM_RSRC1, regCOMPUTE_PGM_RSRC2, regCOMPUTE_PGM_RSRC3,
  regCOMPUTE_NUM_THREAD_X, regCOMPUTE_NUM_THREAD_Y, regCOMPUTE_NUM_THREAD_Z, regCOMPUTE_START_X,
  regCOMPUTE_START_Y, regCOMPUTE_START_Z, regCOMPUTE_DISPATCH_SCRATCH_BASE_LO,
  regCOMPUTE_DISPATCH_SCRATCH_BASE_HI, regCOMPUTE_TMPRING_SIZE, regCOMPUTE_USER_DATA_0,
};

struct pm4 {
  amd_engine e;
  amd_engine *host;      /* the engine whose thread runs the packets: &e, or the AQL processor's (amd_pm4_ib_new) */
  bool gfx9;             /* soc15 dialect inside an AQL vendor-specific packet's IB (amd_pm4_ib_new) */
  unsigned xcc;          /* gfx9: the logical XCC whose CP runs the IB (PRED_EXEC's DEVICE_SELECT bit) */
  const mock_amd_hqd *hqd;
  amd_vm vm;
  uint32_t a[R_N];       /* absolute register addresses */
  uint8_t sh_known[PACKET3_SET_SH_REG_END - PACKET3_SET_SH_REG_START];
  uint8_t uc_known[PACKET3_SET_UCONFIG_REG_END - PACKET3_SET_UCONFIG_REG_START];
  uint32_t pk[MAX_PKT_DW];
  mock_amd_pm4_stats st;
#ifdef BG_MOCK_RDNA3
  rdna3_kcache kcache; /* the shader core's scalar cache: lines stay until an ACQUIRE_MEM with GLK_INV */
  rdna3_kcache *kc;    /* &kcache, or the AQL processor's */
#endif
};
typedef struct pm4 pm4;

enum { X_OK = AMD_X_OK, X_HUNG = AMD_X_HUNG, X_STOPPED = AMD_X_STOPPED, X_CHAIN = 2 };

typedef amd_pk_src pk_src; /* off: dword offset of the packet (ring: read pointer) */

static int bad(pm4 *p, const pk_src *s, const uint32_t *pk, unsigned n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int bad(pm4 *p, const pk_src *s, const uint32_t *pk, unsigned n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  amd_engine_vbad(p->host, s, "dword", pk, n, fmt, ap);
  va_end(ap);
  p->st.hung = true;
  return X_HUNG;
}

/* Poll until compare(value & mask, ref) holds: memory (va) or a register (reg, through the model's hooks). */
static int wait_for(pm4 *p, bool mem, uint64_t where, unsigned func, uint32_t ref, uint32_t mask) {
  p->st.waits++;
  return amd_engine_poll(p->host, &p->vm, mem, where, func, ref, mask, "CP WAIT_REG_MEM", AMD_VM_CID_CPC);
}

static int exec_ib(pm4 *p, uint64_t va, uint32_t ndw);

#ifdef BG_MOCK_RDNA3
typedef struct shader_mem {
  amd_vm vm;
  bool faulted;
  const amd_engine *e;
} shader_mem;

static bool shader_preempted(void *ctx) { return amd_engine_preempted(((shader_mem *)ctx)->e); }

static uint8_t *shader_xlate(void *ctx, uint64_t va, bool write, size_t *avail) {
  shader_mem *m = ctx;
  char why[256];
  uint8_t *h = amd_vm_xlate(&m->vm, va, write, avail, why, sizeof(why));
  if (!h && !m->faulted) {
    m->faulted = true;
    amd_vm_fault(m->vm.g, "shader", AMD_VM_CID_TCP, va, write, *avail == 0, why);
  }
  return h;
}
#endif

#define SQ_IH_CLIENT 0x14     /* SOC21_IH_CLIENTID_GRBM_CP */
#define SQ_INTERRUPT_ID 239   /* GFX_11_0_0__SRCID__SQ_INTERRUPT_ID */

/* COMPUTE_NUM_THREAD_X/Y/Z hold NUM_THREAD_FULL in [15:0] and NUM_THREAD_PARTIAL in [31:16] (Linux
 * gc_11_0_0_sh_mask.h / gc_12_0_0_sh_mask.h); a work-group has at most 1024 threads (LLVM AMDGPUUsage
 * amdgpu-flat-work-group-size). A dispatch outside that is refused before any wave starts: the failure names the
 * registers, the queue hangs, and (the model's choice, as for a wave that halts on an error) an SQ interrupt
 * tells the driver at once instead of leaving it to its wait timeout. */
#define NUM_THREAD_FULL_MASK 0xffffu
#define MAX_WORKGROUP_THREADS 1024u

static int check_workgroup(pm4 *p, const pk_src *s, const uint32_t *pk, unsigned n) {
  mock_amd *g = p->e.g;
  uint32_t v[3] = {amd_get(g, p->a[R_NUM_X]), amd_get(g, p->a[R_NUM_Y]), amd_get(g, p->a[R_NUM_Z])};
  uint64_t threads = 1;
  int bad_dim = -1;
  for (int k = 0; k < 3; k++) {
    if ((v[k] & ~NUM_THREAD_FULL_MASK) && bad_dim < 0) bad_dim = k;
    threads *= v[k] & NUM_THREAD_FULL_MASK;
  }
  if (bad_dim < 0 && threads >= 1 && threads <= MAX_WORKGROUP_THREADS) return X_OK;
  const uint32_t e[8] = {SQ_IH_CLIENT | SQ_INTERRUPT_ID << 8, 0, 0, 0, 2, v[0], v[1], v[2]}; /* 2: work-group size */
  mock_amd_ih_inject(g, e);
  if (bad_dim >= 0)
    return bad(p, s, pk, n, "DISPATCH_DIRECT with COMPUTE_NUM_THREAD_%c 0x%x: NUM_THREAD_PARTIAL set (partial "
               "work-groups are not modelled) or a size beyond the 16-bit NUM_THREAD_FULL", "XYZ"[bad_dim], v[bad_dim]);
  return bad(p, s, pk, n, "DISPATCH_DIRECT with COMPUTE_NUM_THREAD_X/Y/Z %u x %u x %u = %" PRIu64 " threads "
             "(1..%u per work-group)", v[0], v[1], v[2], threads, MAX_WORKGROUP_THREADS);
}

#ifdef BG_MOCK_RDNA3
void amd_shader_stats_add(mock_amd_shader_stats *t, const rdna3_stats *d) {
  t->waves += d->waves, t->wave_insts += d->wave_insts;
  t->valu_insts += d->valu_insts, t->salu_insts += d->salu_insts, t->smem_insts += d->smem_insts;
  t->vmem_insts += d->vmem_insts, t->lds_insts += d->lds_insts, t->wmma_insts += d->wmma_insts;
  t->global_load_bytes += d->global_load_bytes, t->global_store_bytes += d->global_store_bytes;
  t->lds_load_bytes += d->lds_load_bytes, t->lds_store_bytes += d->lds_store_bytes;
  t->lds_bank_conflict_cycles += d->lds_bank_conflict_cycles;
}
#endif

static int dispatch(pm4 *p, const pk_src *s, const uint32_t *pk, unsigned n) {
  mock_amd *g = p->e.g;
  p->st.dispatches++;
  if (check_workgroup(p, s, pk, n) != X_OK) return X_HUNG;
#ifdef BG_MOCK_RDNA3
  rdna3_dispatch d;
  memset(&d, 0, sizeof(d));
  uint32_t r[R_N];
  for (int i = 0; i < R_N; i++) r[i] = amd_get(g, p->a[i]);
  d.gen = g->ip.gc.maj >= 12 ? RDNA3_GEN_GFX12 : RDNA3_GEN_GFX11; /* GC 12.x runs the RDNA4 variant of the core */
  d.pgm_addr = ((uint64_t)r[R_PGM_HI] << 32 | r[R_PGM_LO]) << 8;
  d.pgm_rsrc1 = r[R_RSRC1], d.pgm_rsrc2 = r[R_RSRC2], d.pgm_rsrc3 = r[R_RSRC3];
  for (unsigned i = 0; i < 16; i++) d.user_data[i] = amd_get(g, p->a[R_USER0] + i);
  d.num_thread[0] = r[R_NUM_X], d.num_thread[1] = r[R_NUM_Y], d.num_thread[2] = r[R_NUM_Z];
  d.start[0] = r[R_START_X], d.start[1] = r[R_START_Y], d.start[2] = r[R_START_Z];
  d.grid[0] = pk[1], d.grid[1] = pk[2], d.grid[2] = pk[3];
  d.initiator = pk[4];
  d.scratch_base = ((uint64_t)r[R_SCRATCH_HI] << 32 | r[R_SCRATCH_LO]) << 8;
  d.tmpring_size = r[R_TMPRING];
  shader_mem m = {.vm = p->vm, .faulted = false, .e = p->host};
  rdna3_mem mem = {.ctx = &m, .kcache = p->kc, .xlate = shader_xlate, .preempted = shader_preempted};
  rdna3_report rep;
  memset(&rep, 0, sizeof(rep));
  pthread_mutex_unlock(&g->lock); /* the shader core touches only memory */
  int rc = rdna3_dispatch(&d, &mem, &rep);
  mock_shm_lock(&g->lock);
  g->shader.dispatches++;
  amd_shader_stats_add(&g->shader, &rep.stats);
  if (rc < 0 && !m.faulted && !amd_engine_alive(p->host)) return X_STOPPED; /* dequeued: the waves were killed */
  if (rc < 0 && !m.faulted) {
    /* The hardware halts the wave and raises an SQ interrupt (client GRBM_CP 0x14, src SQ_INTERRUPT_ID 239 in
     * gfx_11_0_0 / gfx_9_0 irqsrcs): the driver's hang check finds it. Payload: the model's own (error type 1 =
     * illegal instruction, the wave, the pc), where hardware carries wave/SIMD/SE ids. */
    const uint32_t e[8] = {SQ_IH_CLIENT | SQ_INTERRUPT_ID << 8, 0, 0, 0, 1, rep.wave, (uint32_t)rep.pc,
                           (uint32_t)(rep.pc >> 32)};
    mock_amd_ih_inject(g, e);
  }
  if (rc < 0)
    return bad(p, s, pk, n, "DISPATCH_DIRECT %ux%ux%u: %s (pc 0x%" PRIx64 " enc %08x %08x, workgroup %u,%u,%u wave %u)",
               pk[1], pk[2], pk[3], rep.msg, rep.pc, rep.enc[0], rep.enc[1], rep.wg[0], rep.wg[1], rep.wg[2], rep.wave);
  return X_OK;
#else
  (void)g;
  return bad(p, s, pk, n, "DISPATCH_DIRECT %ux%ux%u: no shader core (tests/mockgpu/rdna3 not built in)", pk[1], pk[2],
             pk[3]);
#endif
}

/* gfx10+ ACQUIRE_MEM: GCR_CNTL in dword 7 (nvd.h PACKET3_ACQUIRE_MEM_GCR_CNTL_*). The K$ is the one cache
 * modelled: GLK_INV (bit 7) invalidates it; the vector caches (GLV, GL1, GL2) are coherent here.
 * gfx9 (soc15d.h): CP_COHER_CNTL in dword 1, SH_KCACHE_ACTION_ENA (bit 27) invalidates the K$; CP_COHER_SIZE(_HI)
 * and CP_COHER_BASE(_HI) follow, then POLL_INTERVAL. */
#define GCR_CNTL_GLK_INV (1u << 7)
#define CP_COHER_CNTL_SH_KCACHE_ACTION_ENA (1u << 27)

static int acquire_mem(pm4 *p, const uint32_t *pk) {
  p->st.acquires++;
#ifdef BG_MOCK_RDNA3
  if (p->gfx9 ? (pk[1] & CP_COHER_CNTL_SH_KCACHE_ACTION_ENA) : (pk[7] & GCR_CNTL_GLK_INV)) rdna3_kcache_invalidate(p->kc);
#else
  (void)pk;
#endif
  return X_OK;
}

static int release_mem(pm4 *p, const pk_src *s, const uint32_t *pk, unsigned n) {
  unsigned ev = pk[1] & 0x3f, idx = (pk[1] >> 8) & 0xf;
  unsigned dst = (pk[2] >> 16) & 3, isel = (pk[2] >> 24) & 7, dsel = (pk[2] >> 29) & 7;
  if ((ev != CACHE_FLUSH_AND_INV_TS_EVENT && ev != BOTTOM_OF_PIPE_TS && ev != CACHE_FLUSH_TS) || idx != EVENT_INDEX_EOP)
    return bad(p, s, pk, n, "RELEASE_MEM event 0x%x index %u (an end-of-pipe TS event, index 5, expected)", ev, idx);
  if (dst > 1) return bad(p, s, pk, n, "RELEASE_MEM DST_SEL %u (0/1: memory)", dst);
  if (dsel > 3) return bad(p, s, pk, n, "RELEASE_MEM DATA_SEL %u not modelled (0..3)", dsel);
  uint64_t addr = (uint64_t)pk[4] << 32 | pk[3];
  if (dsel == 1 && amd_vm_store(&p->vm, addr, pk[5], 4, "CP RELEASE_MEM", AMD_VM_CID_CPC) < 0) return bad(p, s, pk, n, "RELEASE_MEM write failed");
  if (dsel >= 2) {
    uint64_t v = dsel == 2 ? ((uint64_t)pk[6] << 32 | pk[5]) : amd_gpu_clock();
    if (amd_vm_store(&p->vm, addr, v, 8, "CP RELEASE_MEM", AMD_VM_CID_CPC) < 0) return bad(p, s, pk, n, "RELEASE_MEM write failed");
  }
  if (isel) p->st.eop_irqs++;
  return X_OK;
}

static int wait_reg_mem(pm4 *p, const pk_src *s, const uint32_t *pk, unsigned n) {
  unsigned func = pk[1] & 7, space = (pk[1] >> 4) & 3, op = (pk[1] >> 6) & 3, eng = (pk[1] >> 8) & 3;
  if (func == 7 || space > 1 || op > 1 || eng != 0 || (space == 1 && op == 1))
    return bad(p, s, pk, n, "WAIT_REG_MEM function %u mem_space %u operation %u engine %u not modelled", func, space, op, eng);
  if (space == 1) return wait_for(p, true, (uint64_t)pk[3] << 32 | pk[2], func, pk[4], pk[5]);
  if (op == 1) mock_amd_wreg(p->e.g, pk[2], pk[4]); /* write-then-wait: e.g. HDP_FLUSH_REQ, then HDP_FLUSH_DONE */
  return wait_for(p, false, op == 1 ? pk[3] : pk[2], func, pk[4], pk[5]);
}

static int write_data(pm4 *p, const pk_src *s, const uint32_t *pk, unsigned n) {
  unsigned dst = (pk[1] >> 8) & 0xf;
  bool one = (pk[1] >> 16) & 1;
  unsigned ndw = n - 4;
  uint64_t addr = (uint64_t)pk[3] << 32 | pk[2];
  if (dst == 0) {
    for (unsigned i = 0; i < ndw; i++) mock_amd_wreg(p->e.g, pk[2] + (one ? 0 : i), pk[4 + i]);
    return X_OK;
  }
  if (dst != 5) return bad(p, s, pk, n, "WRITE_DATA DST_SEL %u not modelled (0 register, 5 memory)", dst);
  for (unsigned i = 0; i < ndw; i++)
    if (amd_vm_store(&p->vm, addr + (one ? 0 : 4ull * i), pk[4 + i], 4, "CP WRITE_DATA", AMD_VM_CID_CPC) < 0)
      return bad(p, s, pk, n, "WRITE_DATA write failed");
  return X_OK;
}

static int set_regs(pm4 *p, const pk_src *s, const uint32_t *pk, unsigned n, bool sh) {
  uint32_t start = sh ? PACKET3_SET_SH_REG_START : PACKET3_SET_UCONFIG_REG_START;
  uint32_t end = sh ? PACKET3_SET_SH_REG_END : PACKET3_SET_UCONFIG_REG_END;
  const uint8_t *known = sh ? p->sh_known : p->uc_known;
  for (unsigned i = 0; i + 2 < n; i++) {
    uint32_t a = start + (pk[1] & 0xffff) + i;
    if (a >= end || !known[a - start])
      return bad(p, s, pk, n, "%s register 0x%x is not a %s register of the gc table", sh ? "SET_SH_REG" : "SET_UCONFIG_REG",
                 a, sh ? "COMPUTE_*" : "UCONFIG");
    amd_set(p->e.g, a, pk[2 + i]);
  }
  return X_OK;
}

/* Execute one packet (n dwords incl. header). depth 0: from the ring, 1: from an IB. */
static int exec_packet(pm4 *p, const pk_src *s, const uint32_t *pk, unsigned n, int depth, uint64_t *cva,
                       uint32_t *cn) {
  p->st.packets++;
  if (pk[0] >> 30 == 2) return X_OK; /* type-2 filler */
  unsigned op = (pk[0] >> 8) & 0xff, count = n - 2;
#define LEN(want)                                                                             \
  do {                                                                                        \
    if (count != (want)) return bad(p, s, pk, n, "opcode 0x%x with count %u (expected %u)", op, count, (want)); \
  } while (0)
  switch (op) {
  case PACKET3_NOP: return X_OK;
  case PACKET3_SET_SH_REG:
  case PACKET3_SET_UCONFIG_REG:
  case PACKET3_DISPATCH_DIRECT:
    if (p->gfx9) /* the AQL queue dispatches through KERNEL_DISPATCH packets (amd_aql.h) */
      return bad(p, s, pk, n, "opcode 0x%x in an AQL vendor-specific IB: register writes and DISPATCH_DIRECT are not "
                 "modelled there (dispatch with a KERNEL_DISPATCH packet)", op);
    if (op == PACKET3_DISPATCH_DIRECT) {
      LEN(3);
      return dispatch(p, s, pk, n);
    }
    if (count < 1) return bad(p, s, pk, n, "SET_*_REG without values");
    return set_regs(p, s, pk, n, op == PACKET3_SET_SH_REG);
  case PACKET3_ACQUIRE_MEM: LEN(p->gfx9 ? 5u : 6u); return acquire_mem(p, pk);
  case PACKET3_EVENT_WRITE: {
    LEN(0);
    unsigned ev = pk[1] & 0x3f;
    if (ev != CS_PARTIAL_FLUSH && ev != CACHE_FLUSH && ev != CACHE_FLUSH_TS && ev != CACHE_FLUSH_AND_INV_TS_EVENT &&
        ev != CACHE_FLUSH_AND_INV_EVENT && ev != BOTTOM_OF_PIPE_TS)
      return bad(p, s, pk, n, "EVENT_WRITE event type 0x%x not modelled", ev);
    return X_OK;
  }
  case PACKET3_RELEASE_MEM: LEN(6); return release_mem(p, s, pk, n);
  case PACKET3_WAIT_REG_MEM: LEN(5); return wait_reg_mem(p, s, pk, n);
  case PACKET3_WRITE_DATA:
    if (count < 3) return bad(p, s, pk, n, "WRITE_DATA without data");
    return write_data(p, s, pk, n);
  case PACKET3_INDIRECT_BUFFER: {
    LEN(2);
    uint64_t va = (uint64_t)(pk[2] & 0xffff) << 32 | pk[1];
    uint32_t ndw = pk[3] & 0xfffff;
    bool chain = pk[3] & INDIRECT_BUFFER_CHAIN;
    if (!(pk[3] & INDIRECT_BUFFER_VALID) || ((pk[3] >> 24) & 0xf) != 0 || (va & 3))
      return bad(p, s, pk, n, "INDIRECT_BUFFER needs VALID, VMID 0 and a dword-aligned address");
    if (depth == 0 && chain) return bad(p, s, pk, n, "INDIRECT_BUFFER with CHAIN in the ring");
    if (depth == 1 && !chain) return bad(p, s, pk, n, "INDIRECT_BUFFER inside an IB (only CHAIN is allowed there)");
    if (depth == 1) {
      *cva = va, *cn = ndw;
      return X_CHAIN;
    }
    return exec_ib(p, va, ndw);
  }
  default: return bad(p, s, pk, n, "unknown PM4 opcode 0x%x", op);
  }
#undef LEN
}

/* PRED_EXEC (soc15d.h 0x23, one body dword: DEVICE_SELECT [31:24] the XCCs that run the next EXEC_COUNT [13:0]
 * dwords): every XCC's CP reads the IB of an AQL vendor packet, and a multi-XCC part keeps what must happen once (a
 * signal write, a timestamp) to one XCC with it (tinygrad ops_amd.py pred_exec). *skip: the dwords this XCC skips. */
static int pred_exec(pm4 *p, const pk_src *s, const uint32_t *pk, unsigned n, uint32_t left, uint32_t *skip) {
  p->st.packets++;
  if (n != 2) return bad(p, s, pk, n, "PRED_EXEC with count %u (expected 0: one body dword)", n - 2);
  uint32_t mask = pk[1] >> 24, count = pk[1] & 0x3fffu;
  if (pk[1] & 0x00ffc000u) return bad(p, s, pk, n, "PRED_EXEC body 0x%08x sets reserved bits 23:14", pk[1]);
  if (!mask) return bad(p, s, pk, n, "PRED_EXEC with DEVICE_SELECT 0: no XCC would run the next %u dwords", count);
  if (!count || count > left)
    return bad(p, s, pk, n, "PRED_EXEC EXEC_COUNT %u: expected 1..%u (the dwords left in the IB)", count, left);
  *skip = (mask & (1u << p->xcc)) ? 0 : count;
  return X_OK;
}

static unsigned pkt_len(uint32_t hdr) { return hdr >> 30 == 2 ? 1u : ((hdr >> 16) & 0x3fff) + 2u; }

static int exec_ib(pm4 *p, uint64_t va, uint32_t ndw) {
  for (;;) {
    if (!ndw) return X_OK;
    uint32_t *ib = malloc((size_t)ndw * 4);
    if (!ib) {
      amd_fail(p->e.g, "CP: out of memory for an IB of %u dwords", ndw);
      p->st.hung = true;
      return X_HUNG;
    }
    pk_src s = {true, va, 0};
    if (amd_vm_read(&p->vm, va, ib, (size_t)ndw * 4, "CP IB fetch", AMD_VM_CID_CPC) < 0) {
      free(ib);
      return bad(p, &s, NULL, 0, "IB of %u dwords not readable", ndw);
    }
    uint64_t cva = 0;
    uint32_t cn = 0, i = 0;
    int r = X_OK;
    while (i < ndw && r == X_OK) {
      s.off = i;
      unsigned n = pkt_len(ib[i]);
      if (ib[i] >> 30 != 3 && ib[i] >> 30 != 2) r = bad(p, &s, ib + i, 1, "not a type-3 packet header");
      else if (n > ndw - i) r = bad(p, &s, ib + i, ndw - i, "packet of %u dwords runs past the IB end (%u dwords)", n, ndw);
      else if (ib[i] >> 30 == 3 && ((ib[i] >> 8) & 0xff) == PACKET3_PRED_EXEC && p->gfx9) {
        uint32_t skip = 0;
        r = pred_exec(p, &s, ib + i, n, ndw - i - n, &skip);
        i += skip;
      } else r = exec_packet(p, &s, ib + i, n, 1, &cva, &cn);
      i += n;
    }
    free(ib);
    if (r != X_CHAIN) return r;
    va = cva, ndw = cn;
  }
}

/* n dwords of the ring from dword position at (wrapping). */
static int ring_read(pm4 *p, uint64_t at, unsigned n, uint32_t *dst) {
  uint64_t ndw = 2ull << (p->hqd->pq_control & 0x3f);
  return amd_engine_ring_read(&p->e, &p->vm, p->hqd->pq_base, ndw * 4, at * 4, n, dst, AMD_VM_CID_CPC);
}

static void pm4_run(amd_engine *e) {
  pm4 *p = e->priv;
  if (!p->hqd->active) return;
  if (amd_engine_new_activation(e)) {
    p->st.rptr = 0;
    p->st.hung = false;
  }
  if (p->st.hung) return;
  amd_vm_load(&p->vm, e->g);
  uint64_t ndw = 2ull << (p->hqd->pq_control & 0x3f);
  pk_src s = {false, p->hqd->pq_base, p->st.rptr};
  if (e->db < p->st.rptr || e->db - p->st.rptr > ndw) {
    bad(p, &s, NULL, 0, "doorbell write pointer %" PRIu64 " with read pointer %" PRIu64 " on a ring of %" PRIu64 " dwords",
        e->db, p->st.rptr, ndw);
    return;
  }
  while (p->st.rptr < e->db && amd_engine_alive(p->host)) {
    s.off = p->st.rptr;
    if (ring_read(p, s.off, 1, p->pk) < 0) {
      bad(p, &s, NULL, 0, "ring not readable");
      return;
    }
    unsigned n = pkt_len(p->pk[0]);
    if (p->pk[0] >> 30 != 3 && p->pk[0] >> 30 != 2) {
      bad(p, &s, p->pk, 1, "not a type-3 packet header");
      return;
    }
    if (n > e->db - s.off) {
      bad(p, &s, p->pk, 1, "packet of %u dwords runs past the write pointer %" PRIu64, n, e->db);
      return;
    }
    if (ring_read(p, s.off, n, p->pk) < 0) {
      bad(p, &s, p->pk, 1, "ring not readable");
      return;
    }
    uint64_t cva;
    uint32_t cn;
    int r = exec_packet(p, &s, p->pk, n, 0, &cva, &cn);
    if (r != X_OK) return;
    p->st.rptr += n;
    if (amd_vm_store(&p->vm, p->hqd->rptr_report, p->st.rptr, 8, "CP rptr report", AMD_VM_CID_CPC) < 0) {
      p->st.hung = true;
      return;
    }
  }
}

static int64_t pm4_doorbell(amd_engine *e) {
  const pm4 *p = e->priv;
  if (!p->hqd->active || !(p->hqd->doorbell_control & (1u << 30))) return -1;
  return (int64_t)((p->hqd->doorbell_control >> 2) & 0x3ffffff) * 4;
}

static void pm4_destroy(amd_engine *e) { free(e->priv); }

static const amd_engine_ops PM4_OPS = {"CP", pm4_doorbell, pm4_run, pm4_destroy};

amd_engine *amd_pm4_engine(mock_amd *g) {
  const mock_amd_hqd *hqd = mock_amd_cp_hqd(g);
  if (!hqd) return NULL;
  const struct bg_am_regtab *t = bg_am_regtab_by_name(g->ip.gc.maj >= 12 ? "gc_12_0_0" : "gc_11_0_0");
  pm4 *p = calloc(1, sizeof(*p));
  if (!p || !t) {
    free(p);
    return NULL;
  }
  p->e.ops = &PM4_OPS;
  p->e.priv = p;
  p->host = &p->e;
#ifdef BG_MOCK_RDNA3
  p->kc = &p->kcache;
#endif
  p->hqd = hqd;
  p->e.q_active = &hqd->active;
  p->e.q_nactivate = &hqd->nactivate;
  for (int i = 0; i < R_N; i++)
    if (bg_am_reg_abs_id(&g->disc, GC_HWIP, 0, t, RNAMES[i], &p->a[i]) < 0) {
      amd_fail(g, "CP: register %s not in %s", bg_am_reg_id_name(RNAMES[i]), t->name);
      free(p);
      return NULL;
    }
  /* The PM4 register space is the MMIO space of Navi (static GC bases); the model's bases must agree. */
  for (unsigned seg = 0; seg < 2; seg++)
    if (g->disc.ip[GC_HWIP].bases[0][seg] != PM4_GC_SEG[seg]) {
      amd_fail(g, "CP: GC segment %u base 0x%x is not Navi's 0x%x (PM4 register space)", seg,
               g->disc.ip[GC_HWIP].bases[0][seg], PM4_GC_SEG[seg]);
      free(p);
      return NULL;
    }
  for (size_t i = 0; i < t->nregs; i++) {
    const struct bg_am_reg *r = &t->regs[i];
    if (r->base_idx > 1) continue;
    uint32_t a = PM4_GC_SEG[r->base_idx] + r->offset;
    if (r->base_idx == 0 && strncmp(r->name, "regCOMPUTE_", 11) == 0 && a >= PACKET3_SET_SH_REG_START &&
        a < PACKET3_SET_SH_REG_END)
      p->sh_known[a - PACKET3_SET_SH_REG_START] = 1;
    if (a >= PACKET3_SET_UCONFIG_REG_START && a < PACKET3_SET_UCONFIG_REG_END)
      p->uc_known[a - PACKET3_SET_UCONFIG_REG_START] = 1;
  }
  return &p->e;
}

amd_pm4 *amd_pm4_ib_new(amd_engine *host, void *kcache) {
  pm4 *p = calloc(1, sizeof(*p));
  if (!p) return NULL;
  p->e.g = host->g;
  p->host = host;
  p->gfx9 = true;
#ifdef BG_MOCK_RDNA3
  p->kc = kcache ? kcache : &p->kcache;
#else
  (void)kcache;
#endif
  return p;
}

int amd_pm4_ib_run(amd_pm4 *p, const amd_vm *vm, unsigned xcc, uint64_t va, uint32_t ndw, mock_amd_pm4_stats *st) {
  p->vm = *vm;
  p->xcc = xcc;
  p->st = *st;
  int r = exec_ib(p, va, ndw);
  *st = p->st;
  return r;
}

void amd_pm4_ib_free(amd_pm4 *p) { free(p); }

void mock_amd_shader_stats_get(mock_amd *g, mock_amd_shader_stats *out) {
  mock_shm_lock(&g->lock);
  *out = g->shader;
  pthread_mutex_unlock(&g->lock);
}

bool mock_amd_pm4_stats_get(mock_amd *g, mock_amd_pm4_stats *out) {
  return amd_engine_read_priv(g, &PM4_OPS, offsetof(pm4, st), out, sizeof(*out));
}
