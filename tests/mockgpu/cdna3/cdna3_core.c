/* tests/mockgpu/cdna3/cdna3_core.c: instruction fetch, format decode, failure reports, memory, register grants
 * and scalar operands. Encodings: CDNA3 ISA guide "Microcode Formats" (gfx9 family), as LLVM's AMDGPU backend
 * encodes them for gfx942 (llvm-mc -mcpu=gfx942 --show-encoding). */
#include "cdna3_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cdna3_fail(cdna3_ctx *c, const cdna3_wave *w, const char *fmt, ...) {
  rdna3_report *r = c->rep;
  char what[256], dis[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  unsigned n = c->ndw ? c->ndw : 1;
  if (n > c->avail) n = c->avail ? c->avail : 1;
  cdna3_disasm(c->enc, c->avail ? c->avail : 1, dis, sizeof dis);
  char hex[40] = "";
  for (unsigned i = 0, o = 0; i < n && i < 3; i++)
    o += (unsigned)snprintf(hex + o, sizeof hex - o, "%s%08x", i ? " " : "", c->enc[i]);
  snprintf(r->msg, sizeof r->msg, "cdna3: %s at pc 0x%llx [%s] (%s), workgroup (%u,%u,%u) wave %u", what,
           (unsigned long long)w->pc, hex, dis, w->wg[0], w->wg[1], w->wg[2], w->wave);
  r->pc = w->pc;
  memcpy(r->enc, c->enc, sizeof r->enc);
  memcpy(r->wg, w->wg, sizeof r->wg);
  r->wave = w->wave;
  return -1;
}

int cdna3_reg(cdna3_ctx *c, const cdna3_wave *w, unsigned r, unsigned n, bool acc, const char *what) {
  if (!acc) {
    if (r + n <= c->nvgpr) return (int)r;
    return cdna3_fail(c, w, "VGPR v%u (%s) beyond the %u VGPRs the dispatch grants (COMPUTE_PGM_RSRC1.VGPRS, "
                      "RSRC3.ACCUM_OFFSET)", r + n - 1, what, c->nvgpr);
  }
  unsigned p = c->accum_offset + r;
  if (p + n <= c->nreg) return (int)p;
  return cdna3_fail(c, w, "AGPR a%u (%s) beyond the grant: ACCUM_OFFSET %u + AGPRs must fit the %u registers of "
                    "COMPUTE_PGM_RSRC1.VGPRS", r + n - 1, what, c->accum_offset, c->nreg);
}

static int mem_access(cdna3_ctx *c, const cdna3_wave *w, uint64_t va, uint8_t *buf, size_t n, bool write) {
  while (n) {
    size_t avail = 0;
    uint8_t *p = c->mem->xlate(c->mem->ctx, va, write, &avail);
    if (!p || !avail)
      return cdna3_fail(c, w, "%s fault: address 0x%llx is not mapped%s", write ? "write" : "read",
                        (unsigned long long)va, write ? " writable" : "");
    size_t k = avail < n ? avail : n;
    if (write) memcpy(p, buf, k);
    else memcpy(buf, p, k);
    va += k, buf += k, n -= k;
  }
  return 0;
}

int cdna3_mem_read(cdna3_ctx *c, const cdna3_wave *w, uint64_t va, void *dst, size_t n) {
  return mem_access(c, w, va, dst, n, false);
}

int cdna3_mem_write(cdna3_ctx *c, const cdna3_wave *w, uint64_t va, const void *src, size_t n) {
  return mem_access(c, w, va, (uint8_t *)(uintptr_t)src, n, true);
}

int cdna3_need(cdna3_ctx *c, const cdna3_wave *w, unsigned n) {
  while (c->avail < n) {
    size_t avail = 0;
    const uint8_t *p = c->mem->xlate(c->mem->ctx, w->pc + 4 * c->avail, false, &avail);
    if (!p || avail < 4) {
      if (!c->avail) return cdna3_fail(c, w, "program counter outside mapped code");
      return cdna3_fail(c, w, "instruction runs past mapped code (needs %u dwords)", n);
    }
    for (size_t o = 0; o + 4 <= avail && c->avail < 3; o += 4) memcpy(&c->enc[c->avail++], p + o, 4);
  }
  return 0;
}

int cdna3_take_literal(cdna3_ctx *c, const cdna3_wave *w) {
  if (c->ndw >= 3) return cdna3_fail(c, w, "a second literal constant");
  if (cdna3_need(c, w, c->ndw + 1)) return -1;
  c->lit = c->enc[c->ndw++];
  return 0;
}

static const uint32_t inline_f32[8] = {0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000,
                                       0x40000000, 0xc0000000, 0x40800000, 0xc0800000};
static const uint64_t inline_f64[8] = {0x3fe0000000000000ull, 0xbfe0000000000000ull, 0x3ff0000000000000ull,
                                       0xbff0000000000000ull, 0x4000000000000000ull, 0xc000000000000000ull,
                                       0x4010000000000000ull, 0xc010000000000000ull};

uint32_t cdna3_sreg32(const cdna3_ctx *c, const cdna3_wave *w, unsigned src) {
  if (src < CDNA3_NSGPR) return w->s[src];
  if (src <= CDNA3_SRC_INT_MAX) return src - CDNA3_SRC_ZERO;
  if (src <= CDNA3_SRC_NEG_MAX) return (uint32_t)(CDNA3_SRC_INT_MAX - (int)src);
  if (src >= CDNA3_SRC_HALF && src < CDNA3_SRC_INV_2PI) return inline_f32[src - CDNA3_SRC_HALF];
  switch (src) {
  case CDNA3_SRC_INV_2PI: return 0x3e22f983;
  case CDNA3_SRC_LITERAL: return c->lit;
  case CDNA3_SRC_SCC: return w->scc;
  case CDNA3_SRC_VCCZ: return (w->s[CDNA3_VCC_LO] | w->s[CDNA3_VCC_HI]) == 0;
  case CDNA3_SRC_EXECZ: return cdna3_exec(w) == 0;
  case CDNA3_SRC_SHARED_BASE: return (uint32_t)(CDNA3_SHARED_BASE >> 32);
  case CDNA3_SRC_SHARED_LIMIT: return (uint32_t)((CDNA3_SHARED_BASE + CDNA3_APERTURE_SIZE - 1) >> 32);
  case CDNA3_SRC_PRIVATE_BASE: return (uint32_t)(CDNA3_PRIVATE_BASE >> 32);
  case CDNA3_SRC_PRIVATE_LIMIT: return (uint32_t)((CDNA3_PRIVATE_BASE + CDNA3_APERTURE_SIZE - 1) >> 32);
  default: return 0;
  }
}

uint64_t cdna3_sreg64(const cdna3_ctx *c, const cdna3_wave *w, unsigned src) {
  if (src < CDNA3_NSGPR - 1) return w->s[src] | (uint64_t)w->s[src + 1] << 32;
  if (src <= CDNA3_SRC_NEG_MAX && src >= CDNA3_SRC_ZERO) return (uint64_t)(int64_t)(int32_t)cdna3_sreg32(c, w, src);
  if (src >= CDNA3_SRC_HALF && src < CDNA3_SRC_INV_2PI) return inline_f64[src - CDNA3_SRC_HALF];
  if (src == CDNA3_SRC_INV_2PI) return 0x3fc45f306dc9c882ull;
  if (src == CDNA3_SRC_LITERAL) return c->lit;
  if (src == CDNA3_SRC_SHARED_BASE) return CDNA3_SHARED_BASE;
  if (src == CDNA3_SRC_SHARED_LIMIT) return CDNA3_SHARED_BASE + CDNA3_APERTURE_SIZE - 1;
  if (src == CDNA3_SRC_PRIVATE_BASE) return CDNA3_PRIVATE_BASE;
  if (src == CDNA3_SRC_PRIVATE_LIMIT) return CDNA3_PRIVATE_BASE + CDNA3_APERTURE_SIZE - 1;
  if (src == CDNA3_SRC_VCCZ || src == CDNA3_SRC_EXECZ || src == CDNA3_SRC_SCC) return cdna3_sreg32(c, w, src);
  return 0;
}

void cdna3_swrite32(cdna3_wave *w, unsigned dst, uint32_t v) {
  if (dst < CDNA3_NSGPR) w->s[dst] = v;
}

void cdna3_swrite64(cdna3_wave *w, unsigned dst, uint64_t v) {
  cdna3_swrite32(w, dst, (uint32_t)v);
  cdna3_swrite32(w, dst + 1, (uint32_t)(v >> 32));
}

int cdna3_step(cdna3_ctx *c, cdna3_wave *w) {
  c->avail = 0;
  memset(c->enc, 0, sizeof c->enc);
  c->ndw = 1;
  if (w->pc & 3) return cdna3_fail(c, w, "misaligned program counter");
  if (cdna3_need(c, w, 1)) return -1;
  uint32_t e = c->enc[0];
  int rc;
  uint64_t *cls;
  c->jumped = false;
  if ((e >> 30) == 2) {                                  /* 10xx: scalar ALU */
    cls = &c->st.salu_insts;
    if ((e >> 23) == 0x17d) rc = cdna3_exec_sop1(c, w);
    else if ((e >> 23) == 0x17e) rc = cdna3_exec_sopc(c, w);
    else if ((e >> 23) == 0x17f) rc = cdna3_exec_sopp(c, w);
    else if ((e >> 28) == 0xb) rc = cdna3_exec_sopk(c, w);
    else rc = cdna3_exec_sop2(c, w);
  } else if ((e >> 31) == 0 || (e >> 26) == 0x34) {      /* VOP2/VOP1/VOPC, VOP3 (110100) */
    cls = &c->st.valu_insts;
    if ((e >> 23) == 0x1a7) rc = cdna3_exec_vop3p(c, w); /* VOP3P and VOP3P-MAI: 110100111 */
    else rc = cdna3_exec_vop(c, w);
  } else if ((e >> 26) == 0x30) {                        /* 110000: SMEM */
    cls = &c->st.smem_insts;
    rc = cdna3_exec_smem(c, w);
  } else if ((e >> 26) == 0x36) {                        /* 110110: DS */
    cls = &c->st.lds_insts;
    rc = cdna3_exec_ds(c, w);
  } else if ((e >> 26) == 0x37) {                        /* 110111: FLAT/GLOBAL/SCRATCH */
    cls = &c->st.vmem_insts;
    rc = cdna3_exec_flat(c, w);
  } else if ((e >> 26) == 0x38) {                        /* 111000: MUBUF */
    cls = &c->st.vmem_insts;
    rc = cdna3_exec_mubuf(c, w);
  } else {
    return cdna3_fail(c, w, "unknown encoding");
  }
  if (rc) return -1;
  (*cls)++;
  c->insts++;
  if (!c->jumped) w->pc += 4ull * c->ndw;
  return 0;
}

int cdna3_run_wave(cdna3_ctx *c, cdna3_wave *w) {
  while (!w->done) {
    if (c->insts >= c->budget)
      return cdna3_fail(c, w, "instruction budget of %llu exhausted before s_endpgm", (unsigned long long)c->budget);
    if ((c->insts & 0xfff) == 0 && c->mem->preempted && c->mem->preempted(c->mem->ctx)) {
      snprintf(c->rep->msg, sizeof c->rep->msg, "cdna3: preempted (queue dequeued)");
      return -1;
    }
    if (cdna3_step(c, w)) return -1;
    if (w->at_barrier) return 1;
  }
  return 0;
}
