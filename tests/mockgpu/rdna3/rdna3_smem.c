/* tests/mockgpu/rdna3/rdna3_smem.c: scalar memory loads (SMEM: s_load_b32..b512, s_buffer_load_*).
 * Address = SBASE pair (or a buffer descriptor's base) + signed offset (21 bits gfx11, 24 bits gfx12) + SOFFSET SGPR. The
 * hardware drops the low two address bits; a misaligned address is a compiler or driver bug here,
 * so it stops the dispatch. The data is read at issue (through the K$ when the dispatch has one)
 * and lands in the SGPRs at s_waitcnt lgkmcnt (gfx11) or s_wait_kmcnt (gfx12) (rdna3_wait.c). */
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

/* The fields of an SMEM instruction; gfx11 and gfx12 place them differently (RDNA3 / RDNA4 ISA guide "SMEM"):
 *   gfx11: SBASE [5:0] (pairs), SDATA [12:6], OP [25:18]; OFFSET [52:32] (21-bit signed), SOFFSET [63:57].
 *   gfx12: SBASE [5:0], SDATA [12:6], OP [20:13] (loads 0..5 = b32,b64,b128,b256,b512,b96, 8..11 = i8,u8,i16,u16;
 *          buffer loads the same + 16; s_dcache_inv 33);
 *          OFFSET [55:32] (24-bit signed), SOFFSET [63:57]. */
typedef struct smem_inst {
  unsigned op, sdata, sbase, soff;
  int32_t off;
} smem_inst;

static void decode(const rdna3_ctx *c, smem_inst *m) {
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  m->sdata = (e0 >> 6) & 0x7f, m->sbase = (e0 & 0x3f) * 2, m->soff = e1 >> 25;
  if (c->isa->gen == RDNA3_GEN_GFX12) {
    m->op = (e0 >> 13) & 0xff;
    m->off = (int32_t)(e1 << 8) >> 8;
  } else {
    m->op = (e0 >> 18) & 0xff;
    m->off = (int32_t)(e1 << 11) >> 11;
  }
}

/* gfx12 sub-dword scalar loads: s_load_i8, _u8, _i16, _u16 (and the buffer forms) fill one SGPR, extended. */
enum { S_LOAD_I8_GFX12 = 8, S_LOAD_U16_GFX12 = 11, S_DCACHE_INV_GFX12 = 33 };

/* Dwords loaded and whether it is a buffer load, or 0 for an opcode that is not a load on this generation
 * (gfx12 sub-dword loads: 1, *small the bytes). */
static unsigned load_dwords(const rdna3_isa *isa, unsigned op, bool *buffer, unsigned *small) {
  static const uint8_t gfx12_sizes[6] = {1, 2, 4, 8, 16, 3};
  *buffer = false, *small = 0;
  if (isa->gen == RDNA3_GEN_GFX12) {
    if (op >= 16 && op <= 27) *buffer = true, op -= 16;
    if (op >= S_LOAD_I8_GFX12 && op <= S_LOAD_U16_GFX12) return *small = op <= S_LOAD_I8_GFX12 + 1 ? 1 : 2, 1;
    return op < 6 ? gfx12_sizes[op] : 0;
  }
  if (op <= S_LOAD_B512) return 1u << op;
  if (op >= S_BUFFER_LOAD_B32 && op <= S_BUFFER_LOAD_B512) return *buffer = true, 1u << (op - S_BUFFER_LOAD_B32);
  return 0;
}

int rdna3_exec_smem(rdna3_ctx *c, rdna3_wave *w) {
  c->ndw = 2;
  if (rdna3_need(c, w, 2)) return -1;
  smem_inst m;
  decode(c, &m);
  bool gfx12 = c->isa->gen == RDNA3_GEN_GFX12;
  if (!gfx12 && m.op == S_GL1_INV) return 0;  /* GL1 is not modelled */
  if (m.op == (gfx12 ? S_DCACHE_INV_GFX12 : S_DCACHE_INV)) {
    if (c->mem->kcache) rdna3_kcache_invalidate(c->mem->kcache);
    return 0;
  }
  bool buffer;
  unsigned small;
  unsigned n = load_dwords(c->isa, m.op, &buffer, &small);
  if (!n) return rdna3_fail(c, w, "unimplemented SMEM opcode %u", m.op);
  uint64_t base = w->s[m.sbase] | (uint64_t)w->s[m.sbase + 1] << 32;
  if (buffer) base &= 0xffffffffffffull;  /* V# BASE_ADDRESS [47:0] */
  uint64_t va = base + (int64_t)m.off + (m.soff == RDNA3_NULL ? 0 : w->s[m.soff]);
  if (va & (small ? small - 1 : 3)) return rdna3_fail(c, w, "misaligned scalar load from 0x%llx", (unsigned long long)va);
  if (m.sdata + n > RDNA3_NSGPR - 22)  /* s106.. are VCC, TTMP, M0, EXEC */
    return rdna3_fail(c, w, "scalar load destination s%u..s%u out of range", m.sdata, m.sdata + n - 1);
  rdna3_pend *p = rdna3_pend_new(w, c->isa->smem_counter, m.sdata, n, 0, 0xffffffffu);
  if (!small)
    return c->mem->kcache ? kcache_read(c, w, va, p->d[0], 4u * n) : rdna3_mem_read(c, w, va, p->d[0], 4u * n);
  uint8_t b[2] = {0, 0};
  if (c->mem->kcache ? kcache_read(c, w, va, b, small) : rdna3_mem_read(c, w, va, b, small)) return -1;
  bool sign = (m.op & 15) == S_LOAD_I8_GFX12 || (m.op & 15) == S_LOAD_I8_GFX12 + 2;  /* i8, i16 */
  uint32_t v = small == 1 ? b[0] : (uint32_t)(b[0] | b[1] << 8);
  if (sign) v = small == 1 ? (uint32_t)(int32_t)(int8_t)v : (uint32_t)(int32_t)(int16_t)v;
  p->d[0][0] = v;
  return 0;
}
