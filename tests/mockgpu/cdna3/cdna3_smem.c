/* tests/mockgpu/cdna3/cdna3_smem.c: scalar memory (gfx9 SMEM, 64 bits): s_load_dword[xN] and s_buffer_load_dword[xN]
 * through the K$ model of the RDNA3 core's rdna3_mem.kcache when the caller gives one, s_dcache_inv/wb.
 * Address: SBASE pair (+ buffer descriptor base) + the 21-bit signed IMM offset or the SGPR the OFFSET field names,
 * + SOFFSET's SGPR when SOE is set (CDNA3 ISA guide "Scalar Memory Operations"). */
#include <string.h>

#include "cdna3_ops.h"
#include "cdna3_internal.h"

static int kread(cdna3_ctx *c, const cdna3_wave *w, uint64_t va, uint8_t *dst, unsigned n) {
  rdna3_kcache *k = c->mem->kcache;
  if (!k) return cdna3_mem_read(c, w, va, dst, n);
  while (n) {
    uint64_t line = va / RDNA3_KCACHE_LINE;
    unsigned idx = (unsigned)(line % RDNA3_KCACHE_LINES), off = (unsigned)(va % RDNA3_KCACHE_LINE);
    if (k->tag[idx] != line + 1) {
      if (cdna3_mem_read(c, w, line * RDNA3_KCACHE_LINE, k->data[idx], RDNA3_KCACHE_LINE)) return -1;
      k->tag[idx] = line + 1;
      k->misses++;
    } else {
      k->hits++;
    }
    unsigned m = RDNA3_KCACHE_LINE - off < n ? RDNA3_KCACHE_LINE - off : n;
    memcpy(dst, k->data[idx] + off, m);
    dst += m, va += m, n -= m;
  }
  return 0;
}

int cdna3_exec_smem(cdna3_ctx *c, cdna3_wave *w) {
  c->ndw = 2;
  if (cdna3_need(c, w, 2)) return -1;
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  unsigned op = (e0 >> 18) & 0xff, sdata = (e0 >> 6) & 0x7f, sbase = (e0 & 0x3f) * 2;
  bool imm = (e0 >> 17) & 1, soe = (e0 >> 14) & 1;
  if (op == C3_S_DCACHE_INV) {
    if (c->mem->kcache) rdna3_kcache_invalidate(c->mem->kcache);
    return 0;
  }
  if (op == C3_S_DCACHE_WB) return 0;  /* the K$ holds no dirty lines: scalar stores are not emulated */
  bool buffer = op >= C3_S_BUFFER_LOAD_DWORD && op <= C3_S_BUFFER_LOAD_DWORDX16;
  if (!(op <= C3_S_LOAD_DWORDX16 || buffer)) return cdna3_fail(c, w, "unimplemented SMEM opcode %u", op);
  unsigned n = 1u << (op & 7);
  if (sdata + n > 102 || (n > 1 && sdata % (n < 4 ? 2 : 4)))
    return cdna3_fail(c, w, "s_load destination s%u..s%u is not an aligned SGPR range", sdata, sdata + n - 1);
  uint64_t base = cdna3_sreg64(c, w, sbase);
  if (buffer) base &= 0xffffffffffffull;  /* V# BASE_ADDRESS [47:0] */
  int64_t off = imm ? (int64_t)((int32_t)(e1 << 11) >> 11) : (int64_t)cdna3_sreg32(c, w, e1 & 0x7f);
  if (soe) off += cdna3_sreg32(c, w, (e1 >> 25) & 0x7f);
  uint64_t va = (base + (uint64_t)off) & ~3ull;  /* scalar loads ignore the low two address bits */
  cdna3_pend *p = cdna3_pend_new(w, CDNA3_LGKMCNT, sdata, n, 0, 0);
  if (kread(c, w, va, (uint8_t *)p->d[0], 4 * n)) return -1;
  return 0;
}
