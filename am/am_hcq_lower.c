/* am/am_hcq_lower.c: lowering recorded HCQ commands into PM4 (compute) or SDMA (copy) packets (tinygrad tinygrad/runtime/ops_amd.py AMDComputeQueue, AMDCopyQueue).
 * Constant fields are encoded directly; every operand goes through bg_tmpl_put, so a re-submit patches only the
 * fields whose variables changed. Signals carry 32-bit values on AMD (RELEASE_MEM DATA_SEL 1, SDMA FENCE, 32-bit
 * waits), as in tinygrad: a constant wider than 32 bits fails the lowering. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "am/am_hcq.h"
#include "am/am_pm4.h"
#include "am/am_sdma_pkt.h"

const char *bg_am_hcq_op_name(int op) {
  static const char *const names[] = {"wait", "signal", "timestamp", "memory_barrier", "exec", "copy"};
  return (unsigned)op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
}

/* a + c as an operand (folded when a is a constant). */
static const ir_node *add_const(bg_tmpl *t, const ir_node *a, uint64_t c) {
  if (c == 0) return a;
  if (a->op == IR_CONST) return ir_const_int(t->ir, IR_DT_UINT64, (int64_t)((uint64_t)a->arg.i + c));
  const ir_node *k = ir_const_int(t->ir, IR_DT_UINT64, (int64_t)c);
  return k ? ir_alu2(t->ir, IR_ADD, a, k) : NULL;
}

static const ir_node *mul(bg_tmpl *t, const ir_node *a, const ir_node *b) {
  if (a->op == IR_CONST && b->op == IR_CONST)
    return ir_const_int(t->ir, IR_DT_UINT64, (int64_t)((uint64_t)a->arg.i * (uint64_t)b->arg.i));
  return ir_alu2(t->ir, IR_MUL, a, b);
}

#define TRY(x)               \
  do {                       \
    long r_ = (x);           \
    if (r_ < 0) return (int)r_; \
  } while (0)
#define NOMEM(p) \
  if (!(p)) return bg_error(BG_ENOMEM, "out of memory for an operand expression")

/* ---------------- PM4 (compute queue) ---------------- */

/* Where PM4 goes: the command section (the PM4 ring) or, on the AQL queue, an IB in the kernel-argument block that
 * a vendor-specific packet runs (o->ib: the IB grows by each packet, contiguously). */
long bg_am_pm4_emit(am_pm4_out *o, const uint32_t *dw, unsigned n) {
  if (!o->ib) return bg_tmpl_emit_dw(o->t, dw, n);
  long off = bg_tmpl_reserve(o->t, BG_SEC_KARGS, (size_t)n * 4, 4);
  if (off < 0) return off;
  if (o->start < 0) o->start = off;
  if (off != o->start + 4l * o->ndw) /* only PM4 is reserved while an IB is open (am_hcq_aql.c) */
    return bg_error(BG_EINVAL, "am: PM4 IB at kernel-argument offset %ld is not contiguous (next packet at %ld)", o->start, off);
  memcpy(o->t->kargs + off, dw, (size_t)n * 4);
  o->ndw += n;
  return off;
}

static int pm4_put(am_pm4_out *o, long off, unsigned dw, unsigned width, const ir_node *v) {
  if (!o->ib) return bg_tmpl_put_dw(o->t, off, dw, width, v);
  return bg_tmpl_put(o->t, BG_SEC_KARGS, (size_t)off + 4u * dw, width, v);
}

static int pm4_wait(am_pm4_out *o, const bg_cmd *c) {
  uint32_t dw[BG_PM4_WAIT_MEM_DW];
  long off = bg_am_pm4_emit(o, dw, bg_pm4_wait_mem(dw, WAIT_REG_MEM_FUNC_GEQ, 0, 0, 0xffffffffu));
  TRY(off);
  TRY(pm4_put(o, off, BG_PM4_WAIT_DW_ADDR, 8, c->addr));
  return pm4_put(o, off, BG_PM4_WAIT_DW_REF, 4, c->value);
}

/* Every XCC's CP runs an AQL vendor packet's IB (am_hcq_aql.c): on a multi-XCC part what must happen once (a signal
 * write, a timestamp) is kept to XCC 0 by PRED_EXEC over its next ndw dwords (soc15d.h PACKET3_PRED_EXEC: DEVICE_SELECT
 * [31:24], EXEC_COUNT [13:0]; tinygrad ops_amd.py pred_exec). Otherwise later XCCs rewrite a timestamp the host may
 * already have read, and a signal the host may already have set again. */
static int on_xcc0(const am_hcq *h, am_pm4_out *o, unsigned ndw) {
  if (!o->ib || !h->blk.gfx || h->blk.gfx->xccs <= 1) return 0;
  const uint32_t dw[2] = {PACKET3(PACKET3_PRED_EXEC, 0), 1u << 24 | ndw};
  long off = bg_am_pm4_emit(o, dw, 2);
  return off < 0 ? (int)off : 0;
}

static int pm4_signal(const am_hcq *h, am_pm4_out *o, const bg_cmd *c) {
  uint32_t dw[BG_PM4_RELEASE_MEM_DW];
  unsigned n = bg_pm4_release_mem(dw, h->gfx, 0, 0, RELEASE_MEM_DATA_32, 0, true);
  TRY(on_xcc0(h, o, n));
  long off = bg_am_pm4_emit(o, dw, n);
  TRY(off);
  TRY(pm4_put(o, off, BG_PM4_RELEASE_DW_ADDR, 8, c->addr));
  return pm4_put(o, off, BG_PM4_RELEASE_DW_DATA, 4, c->value);
}

static int pm4_timestamp(const am_hcq *h, am_pm4_out *o, const bg_cmd *c) {
  uint32_t dw[BG_PM4_RELEASE_MEM_DW + BG_PM4_ACQUIRE_MEM_DW_GFX10];
  unsigned n = bg_pm4_release_mem(dw, h->gfx, 0, 0, RELEASE_MEM_DATA_CLOCK, 0, false);
  TRY(on_xcc0(h, o, n)); /* the cache acquire after it runs on every XCC */
  n += bg_pm4_acquire_mem(dw + n, h->gfx, BG_PM4_ALL_CACHES);
  long off = bg_am_pm4_emit(o, dw, n);
  TRY(off);
  const ir_node *ts = add_const(o->t, c->addr, 8); /* the raw timestamp lives at signal + 8 */
  NOMEM(ts);
  return pm4_put(o, off, BG_PM4_RELEASE_DW_ADDR, 8, ts);
}

static int pm4_barrier(const am_hcq *h, am_pm4_out *o) {
  uint32_t dw[BG_PM4_HDP_FLUSH_DW + BG_PM4_ACQUIRE_MEM_DW_GFX10];
  unsigned n = bg_pm4_hdp_flush(dw, h->hdp_req, h->hdp_done);
  n += bg_pm4_acquire_mem(dw + n, h->gfx, BG_PM4_ALL_CACHES);
  long off = bg_am_pm4_emit(o, dw, n);
  return off < 0 ? (int)off : 0;
}

int bg_am_hcq_lower_pm4_sync(const am_hcq *h, am_pm4_out *o, const bg_cmd *c) {
  switch (c->op) {
  case BG_CMD_WAIT: return pm4_wait(o, c);
  case BG_CMD_SIGNAL: return pm4_signal(h, o, c);
  case BG_CMD_TIMESTAMP: return pm4_timestamp(h, o, c);
  case BG_CMD_BARRIER: return pm4_barrier(h, o);
  default: return bg_error(BG_EINVAL, "command op %d is not a PM4 wait/signal/timestamp/barrier", (int)c->op);
  }
}

#define HSA_DISPATCH_PACKET_SIZE 64u

/* The hsa_kernel_dispatch_packet_t a kernel with ENABLE_SGPR_DISPATCH_PTR reads (tinygrad tinygrad/runtime/ops_amd.py AMDComputeQueue exec). */
static int dispatch_packet(bg_tmpl *t, const am_prog *p, const bg_cmd *c, size_t at, const ir_node *kargs) {
  for (int k = 0; k < 3; k++) {
    const ir_node *g = mul(t, c->gsz[k], c->lsz[k]);
    NOMEM(g);
    int r;
    if ((r = bg_tmpl_put(t, BG_SEC_KARGS, at + 4 + 2u * (unsigned)k, 2, c->lsz[k])) < 0 ||
        (r = bg_tmpl_put(t, BG_SEC_KARGS, at + 12 + 4u * (unsigned)k, 4, g)) < 0)
      return r;
  }
  uint32_t seg[2] = {p->private_size, p->group_size};
  uint16_t setup = 3; /* dimensions */
  memcpy(t->kargs + at + 2, &setup, 2);
  memcpy(t->kargs + at + 24, seg, sizeof(seg));
  return bg_tmpl_put(t, BG_SEC_KARGS, at + 40, 8, kargs);
}

static int pm4_exec(const am_hcq *h, bg_tmpl *t, const bg_cmd *c) {
  const bg_program *prg = c->prg;
  const am_prog *p = prg->handle;
  unsigned unsupported = p->code_props & (KCP_QUEUE_PTR | KCP_DISPATCH_ID | KCP_FLAT_SCRATCH_INIT |
                                          KCP_PRIVATE_SEGMENT_SIZE);
  if (unsupported)
    return bg_error(BG_ENOTSUP, "'%s': kernel_code_properties 0x%x enables user SGPRs this driver does not provide "
                    "(queue ptr 0x4, dispatch id 0x10, flat scratch init 0x20, private segment size 0x40)",
                    prg->name, p->code_props);
  if ((p->code_props & KCP_PRIVATE_SEGMENT_BUFFER) && !h->scratch.va)
    return bg_error(BG_EINVAL, "'%s' needs scratch memory but none is allocated", prg->name);
  /* Kernel arguments: the C-like layout of bg_program, padded to the descriptor's kernarg_size (hidden
   * arguments read as zero), then the dispatch packet when the kernel asks for it. */
  size_t kbytes = prg->kargs_size > p->kernarg_size ? prg->kargs_size : p->kernarg_size;
  kbytes = (kbytes + 15) & ~(size_t)15;
  bool dptr = p->code_props & KCP_DISPATCH_PTR;
  long ko = bg_tmpl_reserve(t, BG_SEC_KARGS, kbytes + (dptr ? HSA_DISPATCH_PACKET_SIZE : 0), 64);
  TRY(ko);
  for (unsigned i = 0; i < prg->nargs; i++) {
    int r = bg_tmpl_put(t, BG_SEC_KARGS, (size_t)ko + prg->arg_offsets[i], prg->arg_sizes[i], c->args[i]);
    if (r < 0) return bg_error_context(r, "argument %u of '%s': ", i, prg->name);
  }
  const ir_node *kargs = bg_tmpl_kargs_addr(t, (size_t)ko);
  NOMEM(kargs);
  if (dptr) TRY(dispatch_packet(t, p, c, (size_t)ko + kbytes, kargs));

  uint32_t dw[160], user[BG_PM4_MAX_USER_DATA];
  unsigned n = 0, nuser = 0, ud_dispatch = 0;
  if (p->code_props & KCP_PRIVATE_SEGMENT_BUFFER) {
    /* buffer resource of the scratch (tinygrad tinygrad/runtime/ops_amd.py AMDComputeQueue): base, base_hi | swizzle, size, word3 */
    user[nuser++] = (uint32_t)h->scratch.va;
    user[nuser++] = (uint32_t)(h->scratch.va >> 32) | 1u << 31;
    user[nuser++] = 0xffffffffu;
    user[nuser++] = 0x20c14000u;
  }
  if (dptr) {
    ud_dispatch = nuser;
    nuser += 2;
  }
  unsigned ud_kargs = nuser;
  nuser += 2;
  n += bg_pm4_acquire_mem(dw + n, h->gfx, BG_PM4_DISPATCH_CACHES);
  uint32_t pgm[2] = {(uint32_t)(p->code_va >> 8), (uint32_t)(p->code_va >> 40)};
  n += bg_pm4_set_sh_reg(dw + n, COMPUTE_PGM_LO, pgm, 2);
  uint32_t rsrc[2] = {p->rsrc1, p->rsrc2};
  n += bg_pm4_set_sh_reg(dw + n, COMPUTE_PGM_RSRC1, rsrc, 2);
  n += bg_pm4_set_sh_reg(dw + n, bg_pm4_rsrc3_reg(h->gfx), &p->rsrc3, 1);
  uint32_t tmpring = p->private_size ? h->tmpring : 0;
  n += bg_pm4_set_sh_reg(dw + n, COMPUTE_TMPRING_SIZE, &tmpring, 1);
  if (p->private_size) {
    uint32_t sb[2] = {(uint32_t)(h->scratch.va >> 8), (uint32_t)(h->scratch.va >> 40)};
    n += bg_pm4_set_sh_reg(dw + n, COMPUTE_DISPATCH_SCRATCH_BASE_LO, sb, 2);
  }
  static const uint32_t zeros[3] = {0, 0, 0};
  n += bg_pm4_set_sh_reg(dw + n, COMPUTE_RESTART_X, zeros, 3);
  unsigned at_user = n + 2;
  n += bg_pm4_set_sh_reg(dw + n, COMPUTE_USER_DATA_0, user, nuser);
  n += bg_pm4_set_sh_reg(dw + n, COMPUTE_RESOURCE_LIMITS, zeros, 1);
  uint32_t start[8] = {0, 0, 0, 0, 0, 0, 0, 0}; /* START_X/Y/Z, NUM_THREAD_X/Y/Z, PIPELINESTAT, PERFCOUNT */
  unsigned at_start = n + 2;
  n += bg_pm4_set_sh_reg(dw + n, COMPUTE_START_X, start, 8);
  unsigned at_dispatch = n;
  n += bg_pm4_dispatch_direct(dw + n, h->gfx, 0, 0, 0, p->wave32);
  n += bg_pm4_event_write(dw + n, CS_PARTIAL_FLUSH, 4);
  long off = bg_tmpl_emit_dw(t, dw, n);
  TRY(off);
  if (dptr) {
    const ir_node *pk = add_const(t, kargs, kbytes);
    NOMEM(pk);
    TRY(bg_tmpl_put_dw(t, off, at_user + ud_dispatch, 8, pk));
  }
  TRY(bg_tmpl_put_dw(t, off, at_user + ud_kargs, 8, kargs));
  for (unsigned k = 0; k < 3; k++) {
    TRY(bg_tmpl_put_dw(t, off, at_start + 3 + k, 4, c->lsz[k]));
    TRY(bg_tmpl_put_dw(t, off, at_dispatch + BG_PM4_DISPATCH_DW_X + k, 4, c->gsz[k]));
  }
  return 0;
}

static int lower_pm4(const am_hcq *h, bg_tmpl *t, const bg_cmd *c) {
  am_pm4_out o = {t, false, -1, 0};
  switch (c->op) {
  case BG_CMD_WAIT:
  case BG_CMD_SIGNAL:
  case BG_CMD_TIMESTAMP:
  case BG_CMD_BARRIER: return bg_am_hcq_lower_pm4_sync(h, &o, c);
  case BG_CMD_EXEC: return pm4_exec(h, t, c);
  case BG_CMD_COPY:
    return bg_error(BG_ENOTSUP, "the AMD compute queue has no copy command: record copies on a copy queue (SDMA)");
  }
  return bg_error(BG_EINVAL, "unknown command op %d", (int)c->op);
}

/* ---------------- SDMA (copy queue) ---------------- */

static int sdma_copy(const am_hcq *h, bg_tmpl *t, const bg_cmd *c) {
  for (uint64_t done = 0; done < c->size; done += h->max_copy) {
    uint64_t n = c->size - done < h->max_copy ? c->size - done : h->max_copy;
    uint32_t dw[BG_SDMA_COPY_DW];
    long off = bg_tmpl_emit_dw(t, dw, bg_sdma_copy_linear(dw, 0, 0, (uint32_t)n));
    TRY(off);
    const ir_node *dst = add_const(t, c->addr, done), *src = add_const(t, c->value, done);
    NOMEM(dst && src);
    TRY(bg_tmpl_put_dw(t, off, BG_SDMA_COPY_DW_DST, 8, dst));
    TRY(bg_tmpl_put_dw(t, off, BG_SDMA_COPY_DW_SRC, 8, src));
  }
  return 0;
}

static int lower_sdma(const am_hcq *h, bg_tmpl *t, const bg_cmd *c) {
  uint32_t dw[8];
  long off;
  switch (c->op) {
  case BG_CMD_WAIT:
    TRY(off = bg_tmpl_emit_dw(t, dw, bg_sdma_poll_geq(dw, 0, 0)));
    TRY(bg_tmpl_put_dw(t, off, BG_SDMA_POLL_DW_ADDR, 8, c->addr));
    return bg_tmpl_put_dw(t, off, BG_SDMA_POLL_DW_VALUE, 4, c->value);
  case BG_CMD_SIGNAL:
    TRY(off = bg_tmpl_emit_dw(t, dw, bg_sdma_fence(dw, h->sdma_major, 0, 0)));
    TRY(bg_tmpl_put_dw(t, off, BG_SDMA_FENCE_DW_ADDR, 8, c->addr));
    return bg_tmpl_put_dw(t, off, BG_SDMA_FENCE_DW_DATA, 4, c->value);
  case BG_CMD_TIMESTAMP: {
    TRY(off = bg_tmpl_emit_dw(t, dw, bg_sdma_timestamp(dw, 0)));
    const ir_node *ts = add_const(t, c->addr, 8);
    NOMEM(ts);
    return bg_tmpl_put_dw(t, off, BG_SDMA_TIMESTAMP_DW_ADDR, 8, ts);
  }
  case BG_CMD_COPY: return sdma_copy(h, t, c);
  case BG_CMD_BARRIER:
  case BG_CMD_EXEC:
    return bg_error(BG_ENOTSUP, "the AMD copy queue (SDMA) cannot %s", c->op == BG_CMD_EXEC ? "run kernels" :
                    "do a memory barrier");
  }
  return bg_error(BG_EINVAL, "unknown command op %d", (int)c->op);
}

int bg_am_hcq_lower(bg_dev *dev, bg_queue_hw *hq, const bg_cmd *cmds, size_t ncmds, bg_tmpl *t) {
  const am_hcq *h = dev->priv;
  if (hq->aql) return bg_am_hcq_lower_aql(h, hq, cmds, ncmds, t);
  for (size_t i = 0; i < ncmds; i++) {
    int r = hq->sdma ? lower_sdma(h, t, &cmds[i]) : lower_pm4(h, t, &cmds[i]);
    if (r < 0) {
      return bg_error_context(r, "am: %s: command %zu (%s): ", hq->name, i, bg_am_hcq_op_name(cmds[i].op));
    }
  }
  if (t->cmd_len > hq->ring_bytes / 2)
    return bg_error(BG_EINVAL, "am: %s: %zu commands lower to %zu bytes, more than half the %" PRIu64 "-byte ring: "
                    "split the program", hq->name, ncmds, t->cmd_len, hq->ring_bytes);
  return 0;
}
