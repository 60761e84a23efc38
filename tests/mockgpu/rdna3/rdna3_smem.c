/* tests/mockgpu/rdna3/rdna3_smem.c: scalar memory loads (SMEM: s_load_b32..b512, s_buffer_load_*).
 * Address = SBASE pair (or a buffer descriptor's base) + signed 21-bit offset + SOFFSET SGPR. The
 * hardware drops the low two address bits; a misaligned address is a compiler or driver bug here,
 * so it stops the dispatch. */
#include "rdna3_internal.h"
#include "rdna3_ops.h"

int rdna3_exec_smem(rdna3_ctx *c, rdna3_wave *w) {
  c->ndw = 2;
  if (rdna3_need(c, w, 2)) return -1;
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  unsigned op = (e0 >> 18) & 0xff, sdata = (e0 >> 6) & 0x7f, sbase = (e0 & 0x3f) * 2;
  int32_t off = (int32_t)(e1 << 11) >> 11;
  unsigned soff = e1 >> 25;
  if (op == S_GL1_INV || op == S_DCACHE_INV) return 0;  /* caches are coherent here */
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
  uint32_t buf[16];
  if (rdna3_mem_read(c, w, va, buf, 4u * n)) return -1;
  for (unsigned i = 0; i < n; i++) w->s[sdata + i] = buf[i];
  return 0;
}
