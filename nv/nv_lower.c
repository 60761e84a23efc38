/* nv/nv_lower.c: lowering recorded HCQ commands into pushbuffer methods of a GPFIFO channel (tinygrad
 * tinygrad/runtime/ops_nv.py NVComputeQueue, NVCopyQueue), with the QMD and constant bank 0 of each launch in the
 * kernel-argument block.
 *
 * Every operand goes through bg_tmpl_put (constants written now, symbolic operands become patches), so a recorded
 * program re-submits by patching only what changed: the contract am/am_hcq_lower.c follows.
 *
 *   WAIT       host semaphore acquire, ACQ_CIRC_GEQ with a 64-bit payload (both channel kinds)
 *   SIGNAL     host semaphore release with WFI, 64-bit payload and timestamp (both channel kinds: a four-word
 *              release writes the value at addr and the GPU timer at addr + 8)
 *   TIMESTAMP  the same release with payload 0 (tinygrad NVDevice: timestamp(sig) = signal(sig, 0))
 *   BARRIER    INVALIDATE_SHADER_CACHES_NO_WFI (compute only)
 *   EXEC       kargs block: constant bank 0 (driver area + parameters at the cubin's offsets), padded to 256, then the
 *              QMD (its grid/block dims and constant buffer 0 address patched); SEND_PCAS_A(qmd >> 8) +
 *              SEND_SIGNALING_PCAS2_B(PREFETCH_SCHEDULE). A signal after a launch is a host release with WFI (the QMD's
 *              release slots are not used).
 *   COPY       copy engine OFFSET_IN/OUT, LINE_LENGTH_IN, LAUNCH_DMA per chunk of at most 2 GiB (copy only)
 *
 * Local memory: the first launch of a template is preceded by SET_SHADER_LOCAL_MEMORY_A/B + NON_THROTTLED_A/B/C of
 * the device's local-memory buffer as it is when the template is lowered (nv_prog.c grows it when a program that
 * needs more is loaded, before any template can launch that program, and keeps replaced buffers until close): every
 * submit of a template sets a buffer large enough for its own programs, whatever ran before it on the channel.
 *
 * The kernel-argument block of a submit is allocated from the device's arena with 16-byte alignment; its size is
 * padded to a multiple of 256 here and the arena's base is 256-aligned (checked), so every block, and the QMD in
 * it, is 256-aligned as SEND_PCAS_A (address >> 8) requires. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "nv/nv_hcq.h"
#include "nv/nv_push.h"
#include "nv/nv_qmd.h"
#include "util/grow.h"

static const char *const op_names[] = {"wait", "signal", "timestamp", "memory_barrier", "exec", "copy"};

/* Launch limits (CUDA programming guide, compute capability 8.x/9.x: block (1024, 1024, 64), 1024 threads; grid
 * (2^31-1, 65535, 65535)). */
static const uint64_t block_max[3] = {1024, 1024, 64};
static const uint64_t grid_max[3] = {0x7fffffffu, 65535, 65535};
#define QMD_VA_LIMIT ((uint64_t)1 << 40)

#define TRY(x)                  \
  do {                          \
    long r_ = (x);              \
    if (r_ < 0) return (int)r_; \
  } while (0)
#define NOMEM(p) \
  if (!(p)) return bg_error(BG_ENOMEM, "out of memory for an operand expression")

static const ir_node *cnst(bg_tmpl *t, uint64_t c) { return ir_const_int(t->ir, IR_DT_UINT64, (int64_t)c); }

/* a + c, folded when a is a constant. */
static const ir_node *add_const(bg_tmpl *t, const ir_node *a, uint64_t c) {
  if (c == 0) return a;
  if (a->op == IR_CONST) return cnst(t, (uint64_t)a->arg.i + c);
  const ir_node *k = cnst(t, c);
  return k ? ir_alu2(t->ir, IR_ADD, a, k) : NULL;
}

/* a >> s, folded when a is a constant. */
static const ir_node *shr(bg_tmpl *t, const ir_node *a, unsigned s) {
  if (s == 0) return a;
  if (a->op == IR_CONST) return cnst(t, (uint64_t)a->arg.i >> s);
  const ir_node *k = cnst(t, s);
  return k ? ir_alu2(t->ir, IR_SHR, a, k) : NULL;
}

/* a & 0xffffffff, folded when a is a constant (a patch of 4 bytes truncates on its own). */
static const ir_node *lo32(bg_tmpl *t, const ir_node *a) {
  return a->op == IR_CONST ? cnst(t, (uint64_t)a->arg.i & 0xffffffffu) : a;
}

/* ---------------- host semaphores (both channel kinds) ---------------- */

static int semaphore(bg_tmpl *t, const ir_node *addr, const ir_node *payload, uint32_t execute) {
  uint32_t dw[BG_NV_SEM_DW];
  long off = bg_tmpl_emit_dw(t, dw, bg_nv_push_semaphore(dw, 0, 0, execute));
  TRY(off);
  TRY(bg_tmpl_put_dw(t, off, BG_NV_SEM_DW_ADDR, 8, addr));
  return bg_tmpl_put_dw(t, off, BG_NV_SEM_DW_PAYLOAD, 8, payload);
}

/* ---------------- EXEC ---------------- */

/* A QMD field that an operand fills: a constant is packed now (bg_nv_qmd_set checks it fits); a symbolic one becomes
 * a patch of the field's bytes (its value at submit is the core's to check, as on AMD: the work-group size against
 * the program's limit; the tensor layer declares grid variables up to 2^32-1, so their declared range proves
 * nothing). */
static int qmd_operand(bg_tmpl *t, uint32_t *qmd, int ver, size_t qmd_off, enum bg_nv_qmd_field f, const ir_node *v,
                       const char *what) {
  if (v->op == IR_CONST) {
    int e = bg_nv_qmd_set(qmd, ver, f, 0, (uint64_t)v->arg.i);
    return e < 0 ? bg_error_context(e, "%s: ", what) : 0;
  }
  unsigned lo, width;
  TRY(bg_nv_qmd_bit_range(ver, f, 0, &lo, &width));
  if (lo % 8 || !(width == 8 || width == 16 || width == 32))
    return bg_error(BG_EINVAL, "%s: QMD V%02d field %s (bits %u:%u) is not a whole byte range: it cannot be patched", what,
                    ver, bg_nv_qmd_field(ver, f, 0)->name, lo + width - 1, lo);
  return bg_tmpl_put(t, BG_SEC_KARGS, qmd_off + lo / 8, width / 8, v);
}

/* Symbolic address into a QMD LOWER/UPPER pair (the constant bank 0 address): lower = (addr >> shift) as 32 bits,
 * upper = the next 16 bits (addresses are below 2^40, so the rest of the upper field stays 0). */
static int qmd_addr_patch(bg_tmpl *t, int ver, size_t qmd_off, enum bg_nv_qmd_field lower, enum bg_nv_qmd_field upper,
                          unsigned index, const ir_node *addr) {
  const bg_nv_qmd_bits *b = bg_nv_qmd_field(ver, lower, index);
  unsigned lo_bit, lo_w, hi_bit, hi_w;
  if (!b) return -BG_EINVAL;
  TRY(bg_nv_qmd_bit_range(ver, lower, index, &lo_bit, &lo_w));
  TRY(bg_nv_qmd_bit_range(ver, upper, index, &hi_bit, &hi_w));
  if (lo_bit % 8 || hi_bit % 8 || lo_w != 32 || hi_w < 16)
    return bg_error(BG_EINVAL, "QMD V%02d: %s is not patchable as 32 + 16 bits", ver, b->name);
  const ir_node *s = shr(t, addr, b->shift), *h = s ? shr(t, s, 32) : NULL;
  NOMEM(s && h);
  TRY(bg_tmpl_put(t, BG_SEC_KARGS, qmd_off + lo_bit / 8, 4, lo32(t, s)));
  return bg_tmpl_put(t, BG_SEC_KARGS, qmd_off + hi_bit / 8, 2, h);
}

/* Launch limits of constant dimensions (symbolic ones: the core checks the work-group size at submit). */
static int check_dims(const bg_cmd *c, const nv_prog *p) {
  uint64_t threads = 1;
  bool all_const = true;
  for (int k = 0; k < 3; k++) {
    const ir_node *g = c->gsz[k], *l = c->lsz[k];
    if (g->op == IR_CONST && ((uint64_t)g->arg.i > grid_max[k] || g->arg.i == 0))
      return bg_error(BG_EINVAL, "grid dimension %c is %" PRIu64 ": it must be 1..%" PRIu64, "xyz"[k],
                      (uint64_t)g->arg.i, grid_max[k]);
    if (l->op != IR_CONST) {
      all_const = false;
      continue;
    }
    if ((uint64_t)l->arg.i > block_max[k] || l->arg.i == 0)
      return bg_error(BG_EINVAL, "block dimension %c is %" PRIu64 ": it must be 1..%" PRIu64, "xyz"[k],
                      (uint64_t)l->arg.i, block_max[k]);
    threads *= (uint64_t)l->arg.i;
  }
  uint64_t limit = p->max_threads && p->max_threads < 1024 ? p->max_threads : 1024;
  if (all_const && threads > limit)
    return bg_error(BG_EINVAL, "block of %" PRIu64 " threads: '%s' allows %" PRIu64 " (%u registers per thread)", threads,
                    p->name, limit, p->regs);
  return 0;
}

/* Driver words of constant bank 0 (tinygrad tinygrad/runtime/ops_nv.py NVProgram): shared window, local window and
 * the initial stack pointer 0xfffdc0 (the SASS prologue loads R1 from c[0x0][0x28]); Blackwell keeps them higher. */
static void cb0_driver_area(uint8_t *cb0, unsigned sm) {
  uint64_t shared = BG_NV_SHARED_WINDOW, local = BG_NV_LOCAL_WINDOW;
  uint32_t sp = 0xfffdc0;
  size_t at_win = sm >= 100 ? 188 * 4 : 6 * 4, at_sp = sm >= 100 ? 223 * 4 : 10 * 4;
  memcpy(cb0 + at_win, &shared, 8);
  memcpy(cb0 + at_win + 8, &local, 8);
  memcpy(cb0 + at_sp, &sp, 4);
}

static int exec_cmd(bg_dev *d, bg_tmpl *t, const bg_cmd *c, bool *local_set) {
  nv_gpu *g = bg_nv_gpu(d);
  const bg_program *prg = c->prg;
  const nv_prog *p = prg->handle;
  int ver = p->qmd_version;
  unsigned qbytes = bg_nv_qmd_bytes(ver);
  if (!qbytes) return bg_error(BG_EINVAL, "'%s': QMD version %d is not one of 3, 4, 5", prg->name, ver);
  if (prg->nargs != p->nparams)
    return bg_error(BG_EINVAL, "'%s' takes %u parameters in its cubin, the program was loaded with %u", prg->name,
                    p->nparams, prg->nargs);
  TRY(check_dims(c, p));
  if (d->kargs_buf) {
    uint64_t base = d->kargs_buf->mem.va, end = base + d->kargs_buf->mem.size;
    if (base % 256)
      return bg_error(BG_EINVAL, "the kernel-argument arena at 0x%" PRIx64 " is not 256-byte aligned (QMDs in it must be)",
                      base);
    if (end > QMD_VA_LIMIT)
      return bg_error(BG_EINVAL, "the kernel-argument arena [0x%" PRIx64 ", 0x%" PRIx64 ") reaches past 2^40: a QMD there "
                      "cannot be launched (SEND_PCAS_A holds address >> 8 in 32 bits)", base, end);
  }
  /* kargs: [constant bank 0: cb0_size bytes, padded to 256] [QMD] */
  size_t cb0_span = ((size_t)p->cb0_size + 255) & ~(size_t)255;
  long ko = bg_tmpl_reserve(t, BG_SEC_KARGS, cb0_span + qbytes, 256);
  TRY(ko);
  size_t qo = (size_t)ko + cb0_span;
  cb0_driver_area(t->kargs + ko, g ? g->sm : 90);
  for (unsigned i = 0; i < prg->nargs; i++) {
    int r = bg_tmpl_put(t, BG_SEC_KARGS, (size_t)ko + p->param_base + p->param_offsets[i], p->param_sizes[i],
                        c->args[i]);
    if (r < 0) return bg_error_context(r, "parameter %u of '%s': ", i, prg->name);
  }
  uint32_t qmd[BG_NV_QMD_MAX_DWORDS];
  memcpy(qmd, p->qmd, qbytes);
  static const enum bg_nv_qmd_field grid[3] = {BG_QMD_GRID_WIDTH, BG_QMD_GRID_HEIGHT, BG_QMD_GRID_DEPTH};
  static const enum bg_nv_qmd_field block[3] = {BG_QMD_CTA_THREAD_DIMENSION0, BG_QMD_CTA_THREAD_DIMENSION1,
                                               BG_QMD_CTA_THREAD_DIMENSION2};
  for (int k = 0; k < 3; k++) {
    char what[48];
    snprintf(what, sizeof(what), "grid dimension %c", "xyz"[k]);
    TRY(qmd_operand(t, qmd, ver, qo, grid[k], c->gsz[k], what));
    snprintf(what, sizeof(what), "block dimension %c", "xyz"[k]);
    TRY(qmd_operand(t, qmd, ver, qo, block[k], c->lsz[k], what));
  }
  memcpy(t->kargs + qo, qmd, qbytes);
  /* The symbolic patches above were added after their bytes' constants were packed into qmd: the memcpy keeps the
   * zeros there, the patches fill them at submit. */
  const ir_node *cb0 = bg_tmpl_kargs_addr(t, (size_t)ko), *qva = bg_tmpl_kargs_addr(t, qo);
  NOMEM(cb0 && qva);
  TRY(qmd_addr_patch(t, ver, qo, BG_QMD_CONSTANT_BUFFER_ADDR_LOWER, BG_QMD_CONSTANT_BUFFER_ADDR_UPPER, 0, cb0));

  uint32_t dw[BG_NV_LOCAL_MEMORY_DW + BG_NV_PCAS_DW];
  unsigned n = 0;
  if (!*local_set && g) {
    pthread_mutex_lock(&g->lock);
    uint64_t lva = g->local_mem.va, per_tpc = g->local_bytes_per_tpc;
    pthread_mutex_unlock(&g->lock);
    if (lva) n += bg_nv_push_local_memory(dw, lva, per_tpc);
    *local_set = true;
  }
  unsigned at_pcas = n;
  n += bg_nv_push_send_pcas(dw + n, 0);
  long off = bg_tmpl_emit_dw(t, dw, n);
  TRY(off);
  const ir_node *q8 = shr(t, qva, 8);
  NOMEM(q8);
  return bg_tmpl_put_dw(t, off, at_pcas + BG_NV_PCAS_DW_QMD, 4, q8);
}

/* ---------------- COPY ---------------- */

static int copy_cmd(bg_tmpl *t, const bg_cmd *c) {
  for (uint64_t done = 0; done < c->size; done += BG_NV_COPY_CHUNK) {
    uint64_t n = c->size - done < BG_NV_COPY_CHUNK ? c->size - done : BG_NV_COPY_CHUNK;
    uint32_t dw[BG_NV_COPY_DW];
    long off = bg_tmpl_emit_dw(t, dw, bg_nv_push_copy(dw, 0, 0, (uint32_t)n));
    TRY(off);
    const ir_node *dst = add_const(t, c->addr, done), *src = add_const(t, c->value, done);
    NOMEM(dst && src);
    const ir_node *dh = shr(t, dst, 32), *sh = shr(t, src, 32);
    NOMEM(dh && sh);
    TRY(bg_tmpl_put_dw(t, off, BG_NV_COPY_DW_SRC_HI, 4, sh));
    TRY(bg_tmpl_put_dw(t, off, BG_NV_COPY_DW_SRC_LO, 4, lo32(t, src)));
    TRY(bg_tmpl_put_dw(t, off, BG_NV_COPY_DW_DST_HI, 4, dh));
    TRY(bg_tmpl_put_dw(t, off, BG_NV_COPY_DW_DST_LO, 4, lo32(t, dst)));
  }
  return 0;
}

static int lower_one(bg_dev *d, const bg_queue_hw *hq, bg_tmpl *t, const bg_cmd *c, bool *local_set) {
  bool copy = hq->kind == BG_QUEUE_COPY;
  switch (c->op) {
  case BG_CMD_WAIT: return semaphore(t, c->addr, c->value, BG_NV_SEM_ACQUIRE_GEQ64);
  case BG_CMD_SIGNAL: return semaphore(t, c->addr, c->value, BG_NV_SEM_RELEASE64_TS);
  case BG_CMD_TIMESTAMP: {
    const ir_node *zero = cnst(t, 0);
    NOMEM(zero);
    return semaphore(t, c->addr, zero, BG_NV_SEM_RELEASE64_TS);
  }
  case BG_CMD_BARRIER: {
    if (copy) return bg_error(BG_EINVAL, "the NV copy channel has no memory_barrier (record it on a compute queue)");
    uint32_t dw[BG_NV_BARRIER_DW];
    long off = bg_tmpl_emit_dw(t, dw, bg_nv_push_barrier(dw));
    return off < 0 ? (int)off : 0;
  }
  case BG_CMD_EXEC:
    if (copy) return bg_error(BG_EINVAL, "the NV copy channel cannot run kernels");
    return exec_cmd(d, t, c, local_set);
  case BG_CMD_COPY:
    if (!copy) return bg_error(BG_EINVAL, "the NV compute channel has no copy command: record copies on a copy queue");
    return copy_cmd(t, c);
  }
  return bg_error(BG_EINVAL, "unknown command op %d", (int)c->op);
}

int bg_nv_lower(bg_dev *d, bg_queue_hw *hq, const bg_cmd *cmds, size_t ncmds, bg_tmpl *t) {
  bool local_set = false;
  for (size_t i = 0; i < ncmds; i++) {
    int r = lower_one(d, hq, t, &cmds[i], &local_set);
    if (r < 0) {
      const char *op = (unsigned)cmds[i].op < sizeof(op_names) / sizeof(op_names[0]) ? op_names[cmds[i].op] : "?";
      return bg_error_context(r, "nv: %s: command %zu (%s): ", hq->name, i, op);
    }
  }
  /* whole 256-byte blocks, so that every block the arena hands out stays 256-aligned (see the top of the file) */
  if (t->kargs_len % 256) TRY(bg_tmpl_reserve(t, BG_SEC_KARGS, 256 - t->kargs_len % 256, 1));
  return 0;
}

/* ---------------- channel setup ---------------- */

int bg_nv_channel_setup_cmds(nv_gpu *g, enum bg_queue_kind kind, uint32_t **buf, size_t *len, size_t *cap) {
  uint32_t dw[BG_NV_SET_OBJECT_DW + 2 * BG_NV_PAIR_DW];
  unsigned n = 0;
  if (kind == BG_QUEUE_COMPUTE) {
    n += bg_nv_push_set_object(dw, BG_NV_SUBC_COMPUTE, g->cls.compute);
    n += bg_nv_push_compute_pair(dw + n, NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_A, BG_NV_SHARED_WINDOW);
    n += bg_nv_push_compute_pair(dw + n, NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A, BG_NV_LOCAL_WINDOW);
  } else if (kind == BG_QUEUE_COPY) {
    n += bg_nv_push_set_object(dw, BG_NV_SUBC_COPY, g->cls.copy);
  } else {
    return bg_error(BG_EINVAL, "nv: channel setup: queue kind %d is neither compute (0) nor copy (1)", (int)kind);
  }
  if (*len % 4) return bg_error(BG_EINVAL, "nv: channel setup: the buffer holds %zu bytes, not whole dwords", *len);
  size_t have = *len / 4;
  if (!bg_grow((void **)buf, cap, have + n, sizeof(uint32_t)))
    return bg_error(BG_ENOMEM, "nv: out of host memory for the channel setup pushbuffer");
  memcpy(*buf + have, dw, (size_t)n * 4);
  *len += (size_t)n * 4;
  return 0;
}
