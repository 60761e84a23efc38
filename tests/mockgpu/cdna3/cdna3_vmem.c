/* tests/mockgpu/cdna3/cdna3_vmem.c: FLAT, GLOBAL and SCRATCH (gfx9 FLAT encoding with SEG) and the MUBUF cache
 * controls of a wave64. GLOBAL: SADDR pair + 32-bit VGPR offset, or a 64-bit VGPR address (SADDR 0x7f: off),
 * + 13-bit signed offset. SCRATCH (gfx942 architected flat scratch: the SPI sets up the wave's scratch base): the
 * per-lane private address is SADDR's SGPR (or none) + the VADDR VGPR when SVE is set + offset, laid out as hardware
 * swizzles it (dword i of lane l at wave base + i * 256 + l * 4; COMPUTE_TMPRING_SIZE.WAVESIZE in 1 KiB units says
 * the bytes per wave). FLAT: the shared and private apertures map to LDS and scratch, everything else is global.
 * The ACC bit (gfx90a+) makes data and destination registers AGPRs. SC0/SC1/NT cache policies change nothing here:
 * memory is coherent. */
#include <string.h>

#include "cdna3_ops.h"
#include "cdna3_internal.h"
#include "rdna3_float.h"

enum { SEG_FLAT = 0, SEG_SCRATCH = 1, SEG_GLOBAL = 2 };

static int access(cdna3_ctx *c, const cdna3_wave *w, int seg, uint64_t addr, unsigned lane, uint8_t *buf, unsigned n,
                  bool write) {
  if (seg == SEG_FLAT && addr >= CDNA3_SHARED_BASE && addr < CDNA3_SHARED_BASE + CDNA3_APERTURE_SIZE) {
    uint64_t off = addr - CDNA3_SHARED_BASE;
    if (off + n > c->lds_size)
      return cdna3_fail(c, w, "flat LDS access of %u bytes at 0x%llx outside the workgroup's %u bytes", n,
                        (unsigned long long)off, c->lds_size);
    if (write) memcpy(c->lds + off, buf, n), c->st.lds_store_bytes += n;
    else memcpy(buf, c->lds + off, n), c->st.lds_load_bytes += n;
    return 0;
  }
  if (seg == SEG_FLAT && addr >= CDNA3_PRIVATE_BASE && addr < CDNA3_PRIVATE_BASE + CDNA3_APERTURE_SIZE)
    seg = SEG_SCRATCH, addr -= CDNA3_PRIVATE_BASE;
  if (seg == SEG_SCRATCH) {
    if (!c->scratch_base)
      return cdna3_fail(c, w, "scratch access at 0x%llx but the dispatch has no scratch", (unsigned long long)addr);
    if (addr + n > c->scratch_lane_bytes)
      return cdna3_fail(c, w, "scratch access of %u bytes at 0x%llx beyond %u bytes per lane", n,
                        (unsigned long long)addr, c->scratch_lane_bytes);
    uint64_t wave_base = c->scratch_base + (uint64_t)c->wave_flat_id * c->scratch_lane_bytes * CDNA3_LANES;
    for (unsigned i = 0; i < n; i++) {
      uint64_t a = addr + i, pa = wave_base + (a >> 2) * 4 * CDNA3_LANES + lane * 4 + (a & 3);
      if (write ? cdna3_mem_write(c, w, pa, buf + i, 1) : cdna3_mem_read(c, w, pa, buf + i, 1)) return -1;
    }
    return 0;
  }
  if (write) c->st.global_store_bytes += n;
  else c->st.global_load_bytes += n;
  return write ? cdna3_mem_write(c, w, addr, buf, n) : cdna3_mem_read(c, w, addr, buf, n);
}

static uint32_t atomic32(unsigned op, uint32_t old, uint32_t v, uint32_t cmp) {
  switch (op) {
  case C3_FLAT_ATOMIC_SWAP: return v;
  case C3_FLAT_ATOMIC_CMPSWAP: return old == cmp ? v : old;
  case C3_FLAT_ATOMIC_ADD: return old + v;
  case C3_FLAT_ATOMIC_SUB: return old - v;
  case C3_FLAT_ATOMIC_SMIN: return (int32_t)v < (int32_t)old ? v : old;
  case C3_FLAT_ATOMIC_SMAX: return (int32_t)v > (int32_t)old ? v : old;
  case C3_FLAT_ATOMIC_UMIN: return v < old ? v : old;
  case C3_FLAT_ATOMIC_UMAX: return v > old ? v : old;
  case C3_FLAT_ATOMIC_AND: return old & v;
  case C3_FLAT_ATOMIC_OR: return old | v;
  case C3_FLAT_ATOMIC_XOR: return old ^ v;
  default: return rdna3_u(rdna3_f(old) + rdna3_f(v));  /* C3_FLAT_ATOMIC_ADD_F32 */
  }
}

int cdna3_exec_flat(cdna3_ctx *c, cdna3_wave *w) {
  c->ndw = 2;
  if (cdna3_need(c, w, 2)) return -1;
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  unsigned op = (e0 >> 18) & 0x7f, seg = (e0 >> 14) & 3;
  bool sc0 = (e0 >> 16) & 1, sve = (e0 >> 13) & 1;
  int32_t offset = seg == SEG_FLAT ? (int32_t)(e0 & 0xfff) : (int32_t)(e0 << 19) >> 19;
  unsigned vaddr = e1 & 0xff, data = (e1 >> 8) & 0xff, saddr = (e1 >> 16) & 0x7f, vdst = e1 >> 24;
  bool acc = (e1 >> 23) & 1, use_saddr = saddr != 0x7f;
  if (seg == 3) return cdna3_fail(c, w, "reserved FLAT segment 3");
  if (seg == SEG_FLAT && use_saddr && saddr) return cdna3_fail(c, w, "FLAT with an SADDR");
  bool is_store = op >= C3_FLAT_STORE_BYTE && op <= C3_FLAT_STORE_DWORDX4;
  bool is_load = (op >= C3_FLAT_LOAD_UBYTE && op <= C3_FLAT_LOAD_DWORDX4) ||
                 (op >= C3_FLAT_LOAD_UBYTE_D16 && op <= C3_FLAT_LOAD_SHORT_D16_HI);
  bool is_atomic = (op >= C3_FLAT_ATOMIC_SWAP && op <= C3_FLAT_ATOMIC_XOR) || op == C3_FLAT_ATOMIC_ADD_F32;
  if (!is_store && !is_load && !is_atomic) return cdna3_fail(c, w, "unimplemented FLAT opcode %u", op);
  if (is_atomic && seg == SEG_SCRATCH) return cdna3_fail(c, w, "scratch atomics do not exist");
  unsigned bytes;
  bool d16 = op >= C3_FLAT_LOAD_UBYTE_D16, hi = false, sgn = false;
  if (is_store) {
    static const uint8_t sb[8] = {1, 1, 2, 2, 4, 8, 12, 16};
    bytes = sb[op - C3_FLAT_STORE_BYTE];
    hi = op == C3_FLAT_STORE_BYTE_D16_HI || op == C3_FLAT_STORE_SHORT_D16_HI;
  } else if (is_atomic) {
    bytes = 4;
  } else if (d16) {
    bytes = op >= C3_FLAT_LOAD_SHORT_D16 ? 2 : 1, hi = op & 1;
    sgn = op == C3_FLAT_LOAD_SBYTE_D16 || op == C3_FLAT_LOAD_SBYTE_D16_HI;
  } else {
    static const uint8_t lb[8] = {1, 1, 2, 2, 4, 8, 12, 16};
    bytes = lb[op - C3_FLAT_LOAD_UBYTE], sgn = op == C3_FLAT_LOAD_SBYTE || op == C3_FLAT_LOAD_SSHORT;
  }
  unsigned nreg = (bytes + 3) / 4;
  bool vaddr_used = seg == SEG_SCRATCH ? sve : true, vaddr64 = !(seg == SEG_SCRATCH || (seg == SEG_GLOBAL && use_saddr));
  int pa = -1, pdata = -1, pdst = -1;
  if (vaddr_used && (pa = cdna3_reg(c, w, vaddr, vaddr64 ? 2 : 1, false, "address")) < 0) return -1;
  if ((is_store || is_atomic) &&
      (pdata = cdna3_reg(c, w, data, op == C3_FLAT_ATOMIC_CMPSWAP ? 2 : nreg, acc, "data")) < 0)
    return -1;
  bool returns = is_load || (is_atomic && sc0);  /* gfx940: SC0 on an atomic returns the old value (was GLC) */
  if (returns && (pdst = cdna3_reg(c, w, vdst, nreg, acc, "destination")) < 0) return -1;
  uint64_t exec = cdna3_exec(w);
  cdna3_pend *p = NULL;
  if (returns)
    p = cdna3_pend_new(w, CDNA3_VMCNT, CDNA3_SRC_VGPR + (unsigned)pdst, nreg, exec,
                       !d16 || is_atomic ? 0xffffffffu : hi ? 0xffff0000u : 0xffffu);
  for (unsigned l = 0; l < CDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    uint64_t addr;
    if (seg == SEG_SCRATCH) {
      addr = (uint64_t)(int64_t)offset + (use_saddr ? w->s[saddr] : 0) + (sve ? w->v[pa][l] : 0);
      addr &= 0xffffffffu;
    } else if (seg == SEG_GLOBAL && use_saddr) {
      addr = cdna3_sreg64(c, w, saddr) + w->v[pa][l] + (int64_t)offset;
    } else {
      addr = (w->v[pa][l] | (uint64_t)w->v[pa + 1][l] << 32) + (int64_t)offset;
    }
    uint8_t buf[16] = {0};
    if (is_store) {
      if (hi) {
        uint32_t v = w->v[pdata][l] >> 16;
        memcpy(buf, &v, 4);
      } else {
        for (unsigned i = 0; i < nreg; i++) memcpy(buf + 4 * i, &w->v[pdata + i][l], 4);
      }
      if (access(c, w, (int)seg, addr, l, buf, bytes, true)) return -1;
    } else if (is_atomic) {
      uint32_t old, v = w->v[pdata][l], cmp = op == C3_FLAT_ATOMIC_CMPSWAP ? w->v[pdata + 1][l] : 0;
      if (access(c, w, (int)seg, addr, l, (uint8_t *)&old, 4, false)) return -1;
      uint32_t nv = atomic32(op, old, v, cmp);
      if (access(c, w, (int)seg, addr, l, (uint8_t *)&nv, 4, true)) return -1;
      if (p) p->d[0][l] = old;
    } else {
      if (access(c, w, (int)seg, addr, l, buf, bytes, false)) return -1;
      if (bytes >= 4) {
        for (unsigned i = 0; i < nreg; i++) memcpy(&p->d[i][l], buf + 4 * i, 4);
      } else {
        uint32_t v = bytes == 1 ? (sgn ? (uint32_t)(int32_t)(int8_t)buf[0] : buf[0])
                                : (sgn ? (uint32_t)(int32_t)(int16_t)(buf[0] | buf[1] << 8) : (uint32_t)(buf[0] | buf[1] << 8));
        p->d[0][l] = d16 ? (v & 0xffff) * 0x10001u : v;
      }
    }
  }
  return 0;
}

/* MUBUF: only the cache controls gfx942's memory model emits (buffer_wbl2, buffer_inv: AMDGPUUsage "Memory Model
 * GFX942"); memory here is coherent, so they do nothing. Buffer loads and stores are not emulated. */
enum { C3_BUFFER_WBL2 = 40, C3_BUFFER_INV = 41 };

int cdna3_exec_mubuf(cdna3_ctx *c, cdna3_wave *w) {
  c->ndw = 2;
  if (cdna3_need(c, w, 2)) return -1;
  unsigned op = (c->enc[0] >> 18) & 0x7f;
  if (op == C3_BUFFER_WBL2 || op == C3_BUFFER_INV) return 0;
  return cdna3_fail(c, w, "unimplemented MUBUF opcode %u (buffer memory is not emulated)", op);
}
