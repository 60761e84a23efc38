/* tests/mockgpu/rdna3/rdna3_core.c: instruction fetch, format decode, failure reports, memory and
 * scalar-operand helpers shared by the executors. Encodings: RDNA3 ISA guide ch. 13 ("Microcode
 * formats"), as LLVM's AMDGPU backend (SIInstrFormats.td, gfx11) encodes them. */
#include "rdna3_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int rdna3_fail(rdna3_ctx *c, const rdna3_wave *w, const char *fmt, ...) {
  rdna3_report *r = c->rep;
  char what[256], dis[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  unsigned n = c->ndw ? c->ndw : 1;
  if (n > c->avail) n = c->avail ? c->avail : 1;
  /* The disassembler decodes the first instruction of all fetched dwords: an encoding this
   * emulator does not know still shows with its real length. */
  rdna3_disasm_mcpu(c->isa ? c->isa->mcpu : "gfx1100", c->enc, c->avail ? c->avail : 1, dis, sizeof dis);
  char hex[40] = "";
  for (unsigned i = 0, o = 0; i < n; i++)
    o += (unsigned)snprintf(hex + o, sizeof hex - o, "%s%08x", i ? " " : "", c->enc[i]);
  snprintf(r->msg, sizeof r->msg, "rdna3: %s at pc 0x%llx [%s] (%s), workgroup (%u,%u,%u) wave %u%s", what,
           (unsigned long long)w->pc, hex, dis, w->wg[0], w->wg[1], w->wg[2], w->wave,
           c->isa && c->isa->gen == RDNA3_GEN_GFX12 ? " (gfx12 core)" : "");
  r->pc = w->pc;
  memcpy(r->enc, c->enc, sizeof r->enc);
  memcpy(r->wg, w->wg, sizeof r->wg);
  r->wave = w->wave;
  return -1;
}

int rdna3_vgpr_fail(rdna3_ctx *c, const rdna3_wave *w, unsigned r, unsigned n, const char *what) {
  return rdna3_fail(c, w, "VGPR v%u%s (%s) beyond the %u VGPRs the dispatch grants (COMPUTE_PGM_RSRC1.VGPRS)", r + n - 1,
                    n > 1 ? " of a multi-register operand" : "", what, c->nvgpr);
}

static int mem_access(rdna3_ctx *c, const rdna3_wave *w, uint64_t va, uint8_t *buf, size_t n, bool write) {
  while (n) {
    size_t avail = 0;
    uint8_t *p = c->mem->xlate(c->mem->ctx, va, write, &avail);
    if (!p || !avail)
      return rdna3_fail(c, w, "%s fault: address 0x%llx is not mapped%s", write ? "write" : "read",
                        (unsigned long long)va, write ? " writable" : "");
    size_t k = avail < n ? avail : n;
    if (write) memcpy(p, buf, k);
    else memcpy(buf, p, k);
    va += k, buf += k, n -= k;
  }
  return 0;
}

int rdna3_mem_read(rdna3_ctx *c, const rdna3_wave *w, uint64_t va, void *dst, size_t n) {
  return mem_access(c, w, va, dst, n, false);
}

int rdna3_mem_write(rdna3_ctx *c, const rdna3_wave *w, uint64_t va, const void *src, size_t n) {
  return mem_access(c, w, va, (uint8_t *)(uintptr_t)src, n, true);
}

int rdna3_take_literal(rdna3_ctx *c, const rdna3_wave *w) {
  if (c->ndw >= 3) return rdna3_fail(c, w, "a second literal constant");
  if (rdna3_need(c, w, c->ndw + 1)) return -1;
  c->lit = c->enc[c->ndw++];
  return 0;
}

/* Inline constants as a 32-bit scalar operand sees them (float ones as f32 bit patterns). */
static const uint32_t inline_f32[8] = {0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000,
                                       0x40000000, 0xc0000000, 0x40800000, 0xc0800000};
static const uint64_t inline_f64[8] = {0x3fe0000000000000ull, 0xbfe0000000000000ull, 0x3ff0000000000000ull,
                                       0xbff0000000000000ull, 0x4000000000000000ull, 0xc000000000000000ull,
                                       0x4010000000000000ull, 0xc010000000000000ull};

uint32_t rdna3_sreg32(const rdna3_ctx *c, const rdna3_wave *w, unsigned src) {
  if (src < RDNA3_NSGPR) return src == RDNA3_NULL ? 0 : w->s[src];
  if (src <= RDNA3_SRC_INT_MAX) return src - RDNA3_SRC_ZERO;
  if (src <= RDNA3_SRC_NEG_MAX) return (uint32_t)(RDNA3_SRC_INT_MAX - (int)src);
  if (src >= RDNA3_SRC_HALF && src < RDNA3_SRC_INV_2PI) return inline_f32[src - RDNA3_SRC_HALF];
  switch (src) {
  case RDNA3_SRC_INV_2PI: return 0x3e22f983;
  case RDNA3_SRC_LITERAL: return c->lit;
  case RDNA3_SRC_SCC: return w->scc;
  case RDNA3_SRC_VCCZ: return w->s[RDNA3_VCC_LO] == 0;
  case RDNA3_SRC_EXECZ: return w->s[RDNA3_EXEC_LO] == 0;
  case RDNA3_SRC_SHARED_BASE: return (uint32_t)(RDNA3_SHARED_BASE >> 32);
  case RDNA3_SRC_SHARED_LIMIT: return (uint32_t)((RDNA3_SHARED_BASE + RDNA3_APERTURE_SIZE - 1) >> 32);
  case RDNA3_SRC_PRIVATE_BASE: return (uint32_t)(RDNA3_PRIVATE_BASE >> 32);
  case RDNA3_SRC_PRIVATE_LIMIT: return (uint32_t)((RDNA3_PRIVATE_BASE + RDNA3_APERTURE_SIZE - 1) >> 32);
  default: return 0;
  }
}

uint64_t rdna3_sreg64(const rdna3_ctx *c, const rdna3_wave *w, unsigned src) {
  if (src < RDNA3_NSGPR - 1) return src == RDNA3_NULL ? 0 : w->s[src] | (uint64_t)w->s[src + 1] << 32;
  if (src <= RDNA3_SRC_NEG_MAX && src >= RDNA3_SRC_ZERO) return (uint64_t)(int64_t)(int32_t)rdna3_sreg32(c, w, src);
  if (src >= RDNA3_SRC_HALF && src < RDNA3_SRC_INV_2PI) return inline_f64[src - RDNA3_SRC_HALF];
  if (src == RDNA3_SRC_INV_2PI) return 0x3fc45f306dc9c882ull;
  if (src == RDNA3_SRC_LITERAL) return c->lit;  /* 64-bit integer operands zero-extend it */
  /* Aperture registers: the 64-bit base or limit; a 32-bit operand sees its high dword. */
  if (src == RDNA3_SRC_SHARED_BASE) return RDNA3_SHARED_BASE;
  if (src == RDNA3_SRC_SHARED_LIMIT) return RDNA3_SHARED_BASE + RDNA3_APERTURE_SIZE - 1;
  if (src == RDNA3_SRC_PRIVATE_BASE) return RDNA3_PRIVATE_BASE;
  if (src == RDNA3_SRC_PRIVATE_LIMIT) return RDNA3_PRIVATE_BASE + RDNA3_APERTURE_SIZE - 1;
  return rdna3_sreg32(c, w, src);
}

void rdna3_swrite32(rdna3_wave *w, unsigned dst, uint32_t v) {
  if (dst < RDNA3_NSGPR && dst != RDNA3_NULL) w->s[dst] = v;
}

void rdna3_swrite64(rdna3_wave *w, unsigned dst, uint64_t v) {
  rdna3_swrite32(w, dst, (uint32_t)v);
  if (dst != RDNA3_NULL) rdna3_swrite32(w, dst + 1, (uint32_t)(v >> 32));
}

/* Make at least n dwords of the instruction at pc available in c->enc. Only what the
 * instruction needs is translated: a look-ahead into an unmapped next page would be a fault the
 * GPU never takes. */
int rdna3_need(rdna3_ctx *c, const rdna3_wave *w, unsigned n) {
  while (c->avail < n) {
    size_t avail = 0;
    const uint8_t *p = c->mem->xlate(c->mem->ctx, w->pc + 4 * c->avail, false, &avail);
    if (!p || avail < 4) {
      if (!c->avail) return rdna3_fail(c, w, "program counter outside mapped code");
      return rdna3_fail(c, w, "instruction runs past mapped code (needs %u dwords)", n);
    }
    for (size_t o = 0; o + 4 <= avail && c->avail < 3; o += 4) memcpy(&c->enc[c->avail++], p + o, 4);
  }
  return 0;
}

static int fetch(rdna3_ctx *c, rdna3_wave *w) {
  c->avail = 0;
  memset(c->enc, 0, sizeof c->enc);
  if (w->pc & 3) return rdna3_fail(c, w, "misaligned program counter");
  return rdna3_need(c, w, 1);
}

int rdna3_step(rdna3_ctx *c, rdna3_wave *w) {
  if (!c->isa) c->isa = &rdna3_isa_gfx11;
  if (fetch(c, w)) return -1;
  bool gfx12 = c->isa->gen == RDNA3_GEN_GFX12;
  uint32_t e = c->enc[0];
  int rc;
  uint64_t *cls;                                     /* the class counter of rdna3_stats */
  c->ndw = 1;
  c->jumped = false;
  if ((e >> 30) == 2) {                              /* scalar ALU: 10xx */
    cls = &c->st.salu_insts;
    if ((e >> 23) == 0x17d) rc = rdna3_exec_sop1(c, w);
    else if ((e >> 23) == 0x17e) rc = rdna3_exec_sopc(c, w);
    else if ((e >> 23) == 0x17f) rc = rdna3_exec_sopp(c, w);
    else if ((e >> 28) == 0xb) rc = rdna3_exec_sopk(c, w);
    else rc = rdna3_exec_sop2(c, w);
  } else if ((e >> 31) == 0 || (e >> 25) == 0x3f || (e >> 25) == 0x3e || (e >> 26) == 0x35 ||
             (e >> 24) == 0xcc || (e >> 26) == 0x32) {
    cls = &c->st.valu_insts;
    c->prev_wmma_d = w->wmma_d, w->wmma_d = 0;     /* a WMMA sets it again */
    rc = rdna3_exec_vop(c, w);                       /* VOP2, VOP1, VOPC, VOP3(SD), VOP3P, VOPD */
  } else if ((e >> 26) == 0x3d) {
    cls = &c->st.smem_insts;
    rc = rdna3_exec_smem(c, w);
  } else if ((e >> 26) == 0x36) {
    cls = &c->st.lds_insts;
    rc = rdna3_exec_ds(c, w);
  } else if ((e >> 26) == (gfx12 ? 0x3bu : 0x37u)) {  /* gfx11 FLAT; gfx12 VFLAT/VSCRATCH/VGLOBAL (SEG [25:24]) */
    cls = &c->st.vmem_insts;
    rc = rdna3_exec_flat(c, w);
  } else if ((e >> 26) == (gfx12 ? 0x31u : 0x38u)) {  /* gfx11 MUBUF; gfx12 VBUFFER */
    cls = &c->st.vmem_insts;
    rc = rdna3_exec_mubuf(c, w);
  } else {
    c->ndw = 1;
    return rdna3_fail(c, w, "unknown encoding");
  }
  if (rc) return -1;
  (*cls)++;
  c->insts++;
  if (!c->jumped) w->pc += 4ull * c->ndw;
  return 0;
}

int rdna3_run_wave(rdna3_ctx *c, rdna3_wave *w) {
  while (!w->done) {
    if (c->insts >= c->budget)
      return rdna3_fail(c, w, "instruction budget of %llu exhausted before s_endpgm",
                        (unsigned long long)c->budget);
    if ((c->insts & 0xfff) == 0 && c->mem->preempted && c->mem->preempted(c->mem->ctx)) {
      snprintf(c->rep->msg, sizeof c->rep->msg, "rdna3: preempted (queue dequeued)");
      return -1;
    }
    if (rdna3_step(c, w)) return -1;
    if (w->at_barrier) return 1;
  }
  return 0;
}
