/* am/am_hcq_aql.c: the gfx942 compute queue over AQL (tinygrad tinygrad/runtime/ops_amd.py AMDComputeAQLQueue; packet
 * layouts from hsa.h, amd_queue_t from ROCm amd_hsa_queue.h, the PM4-IB vendor packet amd_aql_pm4_ib_packet_t).
 *
 * The ring is the AQL HQD ring every XCC's queue 1 processes (am_gfx.c setup_aql): 64-byte packets, positions in
 * packets (dispatch ids); write_dispatch_id is the wptr poll word (amd_queue_t + 56), read_dispatch_id the rptr
 * report (amd_queue_t + 128): the HQDs' pointer page is the amd_queue_t. The doorbell carries the index of the last
 * packet written (write index - 1). An exec is one KERNEL_DISPATCH packet; the PM4 between dispatches (waits, signals,
 * timestamps, memory barriers) is lowered as on the PM4 queue into an IB in the submission's kernel-argument block,
 * run by a vendor-specific packet. Every operand goes through bg_tmpl_put (ring bytes or IB dwords). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "am/am_gfx.h"
#include "am/am_hcq.h"
#include "am/am_pm4.h"
#include "hcq/dev_internal.h"

#define AQL_PKT 64u
/* hsa_packet_header_t (hsa.h): type [7:0], BARRIER [8], ACQUIRE_FENCE_SCOPE [10:9], RELEASE_FENCE_SCOPE [12:11] */
enum { HSA_PACKET_TYPE_VENDOR_SPECIFIC = 0, HSA_PACKET_TYPE_INVALID = 1, HSA_PACKET_TYPE_KERNEL_DISPATCH = 2,
       HSA_PACKET_TYPE_BARRIER_AND = 3, HSA_PACKET_TYPE_BARRIER_OR = 5 };
#define HSA_HEADER_BARRIER (1u << 8)
#define HSA_FENCE_SCOPE_SYSTEM 2u
#define HSA_HEADER_ACQUIRE(s) ((uint32_t)(s) << 9)
#define HSA_HEADER_RELEASE(s) ((uint32_t)(s) << 11)
#define AQL_HEADER(type) (HSA_HEADER_BARRIER | HSA_HEADER_ACQUIRE(HSA_FENCE_SCOPE_SYSTEM) | \
                          HSA_HEADER_RELEASE(HSA_FENCE_SCOPE_SYSTEM) | (type))
/* hsa_kernel_dispatch_packet_t byte offsets */
enum { KDP_SETUP = 2, KDP_WG = 4, KDP_GRID = 12, KDP_PRIVATE = 24, KDP_GROUP = 28, KDP_KERNEL_OBJECT = 32,
       KDP_KERNARG = 40, KDP_COMPLETION = 56 };
/* amd_aql_pm4_ib_packet_t: amd_format (dword 0 bits 16..31) AMD_AQL_FORMAT_PM4_IB, ib_jump_cmd[4], dw_cnt_remain */
#define AMD_AQL_FORMAT_PM4_IB 1u
#define PM4_IB_DW_CNT_REMAIN 10u
/* amd_queue_t byte offsets (amd_hsa_queue.h) */
enum { AQ_TYPE = 0, AQ_FEATURES = 4, AQ_BASE = 8, AQ_SIZE = 24, AQ_MAX_CU = 72, AQ_MAX_WAVE = 76,
       AQ_READ_ID_OFFSET = 136, AQ_TMPRING = 140, AQ_SCRATCH_RSRC = 144, AQ_SCRATCH_BASE = 160, AQ_SCRATCH_SIZE = 168,
       AQ_SCRATCH_LANE = 176, AQ_PROPERTIES = 180, AQ_BYTES = 256 };
#define AQ_READ_DISPATCH_ID 128u
enum { HSA_QUEUE_TYPE_SINGLE = 1, HSA_QUEUE_FEATURE_KERNEL_DISPATCH = 1 };
/* amd_queue_properties32_t: IS_PTR64 bit 1, ENABLE_PROFILING bit 3 (as tinygrad sets them) */
#define AMD_QUEUE_PROPERTIES_IS_PTR64 (1u << 1)
#define AMD_QUEUE_PROPERTIES_ENABLE_PROFILING (1u << 3)
/* gfx9 buffer resource word 1 / 3 (the scratch_resource_descriptor, Linux gfx9 SQ_BUF_RSRC_WORD*): SWIZZLE_ENABLE;
 * DST_SEL_X/Y/Z/W = X/Y/Z/W (4..7), NUM_FORMAT UINT (4), DATA_FORMAT 32 (4), ELEMENT_SIZE 1, INDEX_STRIDE 3,
 * ADD_TID_ENABLE, TYPE SQ_RSRC_BUF (0) */
#define RSRC1_SWIZZLE_ENABLE (1u << 31)
#define RSRC3_GFX9 (4u | 5u << 3 | 6u << 6 | 7u << 9 | 4u << 12 | 4u << 15 | 1u << 19 | 3u << 21 | 1u << 23)

#define TRY(x)                  \
  do {                          \
    long r_ = (x);              \
    if (r_ < 0) return (int)r_; \
  } while (0)

static int aq_write(am_hcq *h, unsigned off, const void *v, size_t n) {
  return bg_mmio_write(&h->d->vram, h->blk.gfx->aql_ptrs + off, v, n);
}

int bg_am_hcq_aql_scratch(am_hcq *h) {
  uint32_t xccs = h->blk.gfx->xccs ? h->blk.gfx->xccs : 1;
  uint64_t base = h->scratch.va, size = h->scratch.va ? h->scratch.size : 0;
  uint32_t rsrc[4] = {(uint32_t)base, (uint32_t)(base >> 32) | RSRC1_SWIZZLE_ENABLE, (uint32_t)(size / xccs), RSRC3_GFX9};
  uint32_t lane = h->scratch_per_thread; /* scratch_wave64_lane_byte_size: bytes per lane of a wave64 */
  int e;
  if ((e = aq_write(h, AQ_TMPRING, &h->tmpring, 4)) < 0 || (e = aq_write(h, AQ_SCRATCH_RSRC, rsrc, 16)) < 0 ||
      (e = aq_write(h, AQ_SCRATCH_BASE, &base, 8)) < 0 || (e = aq_write(h, AQ_SCRATCH_SIZE, &size, 8)) < 0 ||
      (e = aq_write(h, AQ_SCRATCH_LANE, &lane, 4)) < 0)
    return bg_error_context(e, "am: %s: amd_queue_t scratch fields: ", h->d->bdf);
  return 0;
}

int bg_am_hcq_aql_queue_init(am_hcq *h, bg_queue_hw *q) {
  bg_am_gfx *x = h->blk.gfx;
  bg_am_dev *d = h->d;
  if (!x->aql_active)
    return bg_error(BG_EIO, "am: %s: the AQL HQDs are not active (the boot did not set them up)", d->bdf);
  q->aql = true;
  snprintf(q->name, sizeof(q->name), "compute queue (AQL, queue1 x%u XCCs)", x->xccs);
  q->ring = x->aql_ring;
  q->ring_bytes = BG_AM_GFX_RING_SIZE;
  q->wptr = x->aql_ptrs + 56;                 /* amd_queue_t.write_dispatch_id: the HQDs' wptr poll word */
  q->rptr = x->aql_ptrs + AQ_READ_DISPATCH_ID; /* read_dispatch_id: their rptr report */
  q->doorbell = BG_AM_GFX_DOORBELL_AQL;
  /* amd_queue_t: what the CP reads of it (tinygrad tinygrad/runtime/ops_amd.py AMDComputeAQLQueue); the dispatch ids stay */
  const struct bg_am_gc_props *pr = &d->disc.props;
  uint32_t v[] = {HSA_QUEUE_TYPE_SINGLE, HSA_QUEUE_FEATURE_KERNEL_DISPATCH};
  uint64_t base = bg_am_mc(d, q->ring);
  uint32_t size = (uint32_t)(q->ring_bytes / AQL_PKT), cus = pr->cu_count ? pr->cu_count : 1;
  uint32_t waves = pr->max_waves_per_simd ? pr->max_waves_per_simd * (pr->simd_per_cu ? pr->simd_per_cu : 4) : 40;
  uint32_t max_cu = cus - 1, max_wave = waves - 1, off = AQ_READ_DISPATCH_ID;
  uint32_t props = AMD_QUEUE_PROPERTIES_IS_PTR64 | AMD_QUEUE_PROPERTIES_ENABLE_PROFILING;
  int e;
  if ((e = aq_write(h, AQ_TYPE, v, 8)) < 0 || (e = aq_write(h, AQ_BASE, &base, 8)) < 0 ||
      (e = aq_write(h, AQ_SIZE, &size, 4)) < 0 || (e = aq_write(h, AQ_MAX_CU, &max_cu, 4)) < 0 ||
      (e = aq_write(h, AQ_MAX_WAVE, &max_wave, 4)) < 0 || (e = aq_write(h, AQ_READ_ID_OFFSET, &off, 4)) < 0 ||
      (e = aq_write(h, AQ_PROPERTIES, &props, 4)) < 0)
    return bg_error_context(e, "am: %s: amd_queue_t: ", d->bdf);
  return bg_am_hcq_aql_scratch(h);
}

/* ---------------- lowering ---------------- */

/* Close the open PM4 IB (if any): a vendor-specific packet that runs it. */
static int flush_ib(bg_tmpl *t, am_pm4_out *o) {
  if (o->start < 0) return 0;
  uint32_t pk[16] = {0};
  pk[0] = AQL_HEADER(HSA_PACKET_TYPE_VENDOR_SPECIFIC) | AMD_AQL_FORMAT_PM4_IB << 16;
  bg_pm4_indirect_buffer(pk + 1, 0, o->ndw); /* ib_jump_cmd: address patched below */
  pk[5] = PM4_IB_DW_CNT_REMAIN;
  long off = bg_tmpl_emit_dw(t, pk, 16);
  TRY(off);
  const ir_node *ib = bg_tmpl_kargs_addr(t, (size_t)o->start);
  if (!ib) return bg_error(BG_ENOMEM, "out of memory for an operand expression");
  TRY(bg_tmpl_put_dw(t, off, 2, 8, ib));
  o->start = -1, o->ndw = 0;
  return 0;
}

static const ir_node *mul(bg_tmpl *t, const ir_node *a, const ir_node *b) {
  if (a->op == IR_CONST && b->op == IR_CONST)
    return ir_const_int(t->ir, IR_DT_UINT64, (int64_t)((uint64_t)a->arg.i * (uint64_t)b->arg.i));
  return ir_alu2(t->ir, IR_MUL, a, b);
}

static int aql_exec(const am_hcq *h, bg_tmpl *t, const bg_cmd *c) {
  const bg_program *prg = c->prg;
  const am_prog *p = prg->handle;
  if (p->code_props & KCP_FLAT_SCRATCH_INIT)
    return bg_error(BG_ENOTSUP, "'%s': kernel_code_properties enables flat scratch init (0x20), which gfx940+ "
                    "(architected flat scratch) does not provide", prg->name);
  if (p->wave32) return bg_error(BG_EINVAL, "'%s' is a wave32 kernel; gfx9 runs wave64 only", prg->name);
  if ((p->code_props & KCP_PRIVATE_SEGMENT_BUFFER || p->private_size) && !h->scratch.va)
    return bg_error(BG_EINVAL, "'%s' needs scratch memory but none is allocated", prg->name);
  size_t kbytes = prg->kargs_size > p->kernarg_size ? prg->kargs_size : p->kernarg_size;
  kbytes = (kbytes + 15) & ~(size_t)15;
  long ko = bg_tmpl_reserve(t, BG_SEC_KARGS, kbytes ? kbytes : 16, 16); /* hsa: kernarg_address 16-byte aligned */
  TRY(ko);
  for (unsigned i = 0; i < prg->nargs; i++) {
    int r = bg_tmpl_put(t, BG_SEC_KARGS, (size_t)ko + prg->arg_offsets[i], prg->arg_sizes[i], c->args[i]);
    if (r < 0) return bg_error_context(r, "argument %u of '%s': ", i, prg->name);
  }
  uint32_t pk[16] = {0};
  pk[0] = AQL_HEADER(HSA_PACKET_TYPE_KERNEL_DISPATCH) | 3u << 16; /* setup: 3 dimensions */
  pk[KDP_PRIVATE / 4] = p->private_size;
  pk[KDP_GROUP / 4] = p->group_size;
  pk[KDP_KERNEL_OBJECT / 4] = (uint32_t)p->kd_va, pk[KDP_KERNEL_OBJECT / 4 + 1] = (uint32_t)(p->kd_va >> 32);
  long off = bg_tmpl_emit_dw(t, pk, 16);
  TRY(off);
  for (unsigned k = 0; k < 3; k++) {
    const ir_node *g = mul(t, c->gsz[k], c->lsz[k]); /* grid_size counts work-items */
    if (!g) return bg_error(BG_ENOMEM, "out of memory for an operand expression");
    TRY(bg_tmpl_put(t, BG_SEC_CMD, (size_t)off + KDP_WG + 2 * k, 2, c->lsz[k]));
    TRY(bg_tmpl_put(t, BG_SEC_CMD, (size_t)off + KDP_GRID + 4 * k, 4, g));
  }
  const ir_node *kargs = bg_tmpl_kargs_addr(t, (size_t)ko);
  if (!kargs) return bg_error(BG_ENOMEM, "out of memory for an operand expression");
  return bg_tmpl_put(t, BG_SEC_CMD, (size_t)off + KDP_KERNARG, 8, kargs);
}

int bg_am_hcq_lower_aql(const am_hcq *h, bg_queue_hw *hq, const bg_cmd *cmds, size_t ncmds, bg_tmpl *t) {
  am_pm4_out o = {t, true, -1, 0};
  for (size_t i = 0; i < ncmds; i++) {
    const bg_cmd *c = &cmds[i];
    int r;
    if (c->op == BG_CMD_EXEC) {
      r = flush_ib(t, &o);
      if (r >= 0) r = aql_exec(h, t, c);
    } else if (c->op == BG_CMD_COPY) {
      r = bg_error(BG_ENOTSUP, "the AMD compute queue has no copy command: record copies on a copy queue (SDMA)");
    } else {
      r = bg_am_hcq_lower_pm4_sync(h, &o, c);
    }
    if (r < 0) return bg_error_context(r, "am: %s: command %zu (%s): ", hq->name, i, bg_am_hcq_op_name(c->op));
  }
  int r = flush_ib(t, &o);
  if (r < 0) return bg_error_context(r, "am: %s: ", hq->name);
  if (t->cmd_len > hq->ring_bytes / 2)
    return bg_error(BG_EINVAL, "am: %s: %zu commands lower to %zu bytes, more than half the %" PRIu64 "-byte ring: "
                    "split the program", hq->name, ncmds, t->cmd_len, hq->ring_bytes);
  return 0;
}

/* BG_DEBUG=2: one line per KERNEL_DISPATCH packet of a submission. */
void bg_am_hcq_aql_log(const bg_queue_hw *q, const void *cmd, size_t len) {
  for (size_t o = 0; o + AQL_PKT <= len; o += AQL_PKT) {
    uint32_t pk[16];
    memcpy(pk, (const uint8_t *)cmd + o, AQL_PKT);
    if ((pk[0] & 0xff) != HSA_PACKET_TYPE_KERNEL_DISPATCH) continue;
    uint64_t kd = (uint64_t)pk[9] << 32 | pk[8], kargs = (uint64_t)pk[11] << 32 | pk[10];
    const char *name = "?";
    for (const am_prog *p = q->h->progs; p; p = p->next)
      if (p->kd_va == kd) name = p->name;
    bg_log(2, "am: %s: %s: dispatch %s (kernel descriptor 0x%" PRIx64 ") grid [%u, %u, %u] local [%u, %u, %u] kernargs "
           "0x%" PRIx64, q->h->d->bdf, q->name, name, kd, pk[3], pk[4], pk[5], pk[1] & 0xffff, pk[1] >> 16,
           pk[2] & 0xffff, kargs);
  }
}

/* ---------------- hang check and state ---------------- */

static void packet_at(const bg_queue_hw *q, uint64_t idx, uint32_t pk[16]) {
  bg_mmio_read(&q->h->d->vram, q->ring + idx * AQL_PKT % q->ring_bytes, pk, AQL_PKT);
}

/* The 32-bit value at GPU address va through a signal pool of this GPU's devices: 1 read, 0 not there, <0 error. */
static int pool_read(am_hcq *h, uint64_t va, uint32_t *v) {
  for (unsigned i = 0; i < h->ndevs; i++) {
    int r = bg_signal_pool_read32(h->devs[i], va, v);
    if (r != 0) return r;
  }
  return 0;
}

static bool geq_unmet(uint32_t func, uint32_t v, uint32_t ref) {
  return func == WAIT_REG_MEM_FUNC_GEQ ? v < ref : func == WAIT_REG_MEM_FUNC_EQ ? v != ref : v == ref;
}

/* The IB of a vendor packet, read through the kernel-argument arena's CPU view of the device that owns it. */
static int ib_blocking(am_hcq *h, const uint32_t *pk, bool *blocking) {
  uint64_t va = (uint64_t)(pk[3] & 0xffff) << 32 | pk[2];
  uint32_t ndw = pk[4] & 0xfffff;
  for (unsigned i = 0; i < h->ndevs; i++) {
    const bg_dev *dv = h->devs[i];
    const bg_mem *m = dv->kargs_buf ? &dv->kargs_buf->mem : NULL;
    if (!m || !m->cpu || va < m->va || va + 4ull * ndw > m->va + m->size) continue;
    const uint32_t *ib = (const uint32_t *)(const void *)((const uint8_t *)m->cpu + (va - m->va));
    for (uint32_t k = 0; k + 6 < ndw; k += PACKET3_COUNT(ib[k]) + 2) {
      if (PACKET3_OPCODE(ib[k]) != PACKET3_WAIT_REG_MEM || !(ib[k + 1] & WAIT_REG_MEM_MEM_SPACE(1))) continue;
      uint32_t v;
      int r = pool_read(h, (uint64_t)ib[k + 3] << 32 | ib[k + 2], &v);
      if (r < 0) return r;
      if (r == 0 || geq_unmet(ib[k + 1] & 7, v & ib[k + 5], ib[k + 4])) {
        *blocking = true;
        return 0;
      }
    }
    return 0;
  }
  *blocking = true; /* not readable here: the wait timeout decides */
  return 0;
}

int bg_am_hcq_aql_blocking(am_hcq *h, const bg_queue_hw *q, bool *blocking) {
  uint32_t pk[16];
  *blocking = false;
  packet_at(q, q->consumed, pk);
  uint32_t type = pk[0] & 0xff;
  if (type == HSA_PACKET_TYPE_VENDOR_SPECIFIC) return ib_blocking(h, pk, blocking);
  if (type == HSA_PACKET_TYPE_BARRIER_AND || type == HSA_PACKET_TYPE_BARRIER_OR) *blocking = true; /* on signals */
  return 0;
}

void bg_am_hcq_aql_state(const bg_queue_hw *q, char *buf, size_t n) {
  static const char *const names[] = {"VENDOR_SPECIFIC", "INVALID", "KERNEL_DISPATCH", "BARRIER_AND", "AGENT_DISPATCH",
                                      "BARRIER_OR"};
  uint64_t rd = bg_mmio_rd64(&q->h->d->vram, q->rptr);
  uint32_t pk[16];
  packet_at(q, rd, pk);
  uint32_t type = pk[0] & 0xff;
  snprintf(buf, n, "%s: read_dispatch_id %" PRIu64 " of %" PRIu64 " written, at %s (header 0x%04x, packet at 0x%" PRIx64 ")",
           q->name, rd, q->put, type < 6 ? names[type] : "an unknown packet type", pk[0] & 0xffff,
           bg_am_mc(q->h->d, q->ring + rd * AQL_PKT % q->ring_bytes));
}
