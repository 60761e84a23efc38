/* tests/mockgpu/rdna3/rdna3_smem.c: scalar memory loads (SMEM: s_load_b32..b512, s_buffer_load_*).
 * Address = SBASE pair (or a buffer descriptor's base) + signed 21-bit offset + SOFFSET SGPR. The
 * hardware drops the low two address bits; a misaligned address is a compiler or driver bug here,
 * so it stops the dispatch. The data is read at issue (through the K$ when the dispatch has one)
 * and lands in the SGPRs at s_waitcnt lgkmcnt (rdna3_wait.c). */
#include <string.h>

#include "rdna3_internal.h"
#include "rdna3_ops.h"

void rdna3_kcache_invalidate(rdna3_kcache *k) {
  memset(k->tag, 0, sizeof k->tag);
  k->invalidations++;
}

/* n bytes at va through the K$: a missing line is filled from memory (a fault is reported as for
 * an uncached read), a present one is used as it is, however memory changed since. */
static int kcache_read(rdna3_ctx *c, const rdna3_wave *w, uint64_t va, void *dst, size_t n) {
  rdna3_kcache *k = c->mem->kcache;
  uint8_t *out = dst;
  while (n) {
    uint64_t line = va / RDNA3_KCACHE_LINE;
    unsigned set = (unsigned)(line % RDNA3_KCACHE_LINES), off = (unsigned)(va % RDNA3_KCACHE_LINE);
    if (k->tag[set] != line + 1) {
      k->tag[set] = 0;
      if (rdna3_mem_read(c, w, line * RDNA3_KCACHE_LINE, k->data[set], RDNA3_KCACHE_LINE)) return -1;
      k->tag[set] = line + 1;
      k->misses++;
    } else {
      k->hits++;
    }
    size_t part = RDNA3_KCACHE_LINE - off < n ? RDNA3_KCACHE_LINE - off : n;
    memcpy(out, k->data[set] + off, part);
    out += part, va += part, n -= part;
  }
  return 0;
}

int rdna3_exec_smem(rdna3_ctx *c, rdna3_wave *w) {
  c->ndw = 2;
  if (rdna3_need(c, w, 2)) return -1;
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  unsigned op = (e0 >> 18) & 0xff, sdata = (e0 >> 6) & 0x7f, sbase = (e0 & 0x3f) * 2;
  int32_t off = (int32_t)(e1 << 11) >> 11;
  unsigned soff = e1 >> 25;
  if (op == S_GL1_INV) return 0;  /* GL1 is not modelled */
  if (op == S_DCACHE_INV) {
    if (c->mem->kcache) rdna3_kcache_invalidate(c->mem->kcache);
    return 0;
  }
  unsigned n;
  bool buffer = false;
  if (op <= S_LOAD_B512) n = 1u << op;
  else if (op >= S_BUFFER_LOAD_B32 && op <= S_BUFFER_LOAD_B512) n = 1u << (op - S_BUFFER_LOAD_B32), buffer = true;
  else return rdna3_fail(c, w, "unimplemented SMEM opcode %u", op);
  uint64_t base = w->s[sbase] | (uint64_t)w->s[sbase + 1] << 32;
  if (buffer) base &= 0xffffffffffffull;  /* V# BASE_ADDRESS [47:0] */
  uint64_t va = base + (int64_t)off + (soff == RDNA3_NULL ? 0 : w->s[soff]);
  if (va & 3) return rdna3_fail(c, w, "misaligned scalar load from 0x%llx", (unsigned long long)va);
  if (sdata + n > RDNA3_NSGPR - 22)  /* s106.. are VCC, TTMP, M0, EXEC */
    return rdna3_fail(c, w, "scalar load destination s%u..s%u out of range", sdata, sdata + n - 1);
  rdna3_pend *p = rdna3_pend_new(w, RDNA3_LGKMCNT, sdata, n, 0, 0xffffffffu);
  return c->mem->kcache ? kcache_read(c, w, va, p->d[0], 4u * n) : rdna3_mem_read(c, w, va, p->d[0], 4u * n);
}
