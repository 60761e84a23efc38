/* tests/mockgpu/rdna3/rdna3_vmem.c: FLAT, GLOBAL and SCRATCH loads, stores and atomics.
 * GLOBAL: SADDR pair + 32-bit VGPR offset, or a 64-bit VGPR address (SADDR off), + signed offset.
 * SCRATCH: per-lane private addresses, swizzled the way the hardware lays them out (dword i of
 * lane l at wave base + i*128 + l*4; TMPRING_SIZE.WAVESIZE says the bytes per wave).
 * FLAT: the shared and private apertures map to LDS and scratch, everything else is global.
 * gfx12 (RDNA4) has the same operations in the 96-bit VFLAT/VGLOBAL/VSCRATCH encodings (decode_flat). */
#include "rdna3_float.h"
#include "rdna3_ops.h"
#include "rdna3_valu.h"

enum { SEG_FLAT = 0, SEG_SCRATCH = 1, SEG_GLOBAL = 2 };

/* Copy n bytes between the lane and the address in its segment; write: to memory. */
static int access(rdna3_ctx *c, const rdna3_wave *w, int seg, uint64_t addr, unsigned lane, uint8_t *buf,
                  unsigned n, bool write) {
  if (seg == SEG_FLAT && addr >= RDNA3_SHARED_BASE && addr < RDNA3_SHARED_BASE + RDNA3_APERTURE_SIZE) {
    uint64_t off = addr - RDNA3_SHARED_BASE;
    if (off + n > c->lds_size)
      return rdna3_fail(c, w, "flat LDS access of %u bytes at 0x%llx outside the workgroup's %u bytes", n,
                        (unsigned long long)off, c->lds_size);
    if (write) memcpy(c->lds + off, buf, n), c->st.lds_store_bytes += n;
    else memcpy(buf, c->lds + off, n), c->st.lds_load_bytes += n;
    return 0;
  }
  if (seg == SEG_FLAT && addr >= RDNA3_PRIVATE_BASE && addr < RDNA3_PRIVATE_BASE + RDNA3_APERTURE_SIZE)
    seg = SEG_SCRATCH, addr -= RDNA3_PRIVATE_BASE;
  if (seg == SEG_SCRATCH) {
    if (!c->scratch_base)
      return rdna3_fail(c, w, "scratch access at 0x%llx but the dispatch has no scratch", (unsigned long long)addr);
    if (addr + n > c->scratch_lane_bytes)
      return rdna3_fail(c, w, "scratch access of %u bytes at 0x%llx beyond %u bytes per lane", n,
                        (unsigned long long)addr, c->scratch_lane_bytes);
    uint64_t wave_base = c->scratch_base + (uint64_t)c->wave_flat_id * c->scratch_lane_bytes * RDNA3_LANES;
    for (unsigned i = 0; i < n; i++) {
      uint64_t a = addr + i, pa = wave_base + (a >> 2) * 4 * RDNA3_LANES + lane * 4 + (a & 3);
      if (write ? rdna3_mem_write(c, w, pa, buf + i, 1) : rdna3_mem_read(c, w, pa, buf + i, 1)) return -1;
    }
    return 0;
  }
  if (write) c->st.global_store_bytes += n;
  else c->st.global_load_bytes += n;
  return write ? rdna3_mem_write(c, w, addr, buf, n) : rdna3_mem_read(c, w, addr, buf, n);
}

static uint32_t atomic32(unsigned op, uint32_t old, uint32_t v, uint32_t cmp) {
  switch (op) {
  case FLAT_ATOMIC_SWAP_B32: return v;
  case FLAT_ATOMIC_CMPSWAP_B32: return old == cmp ? v : old;
  case FLAT_ATOMIC_ADD_U32: return old + v;
  case FLAT_ATOMIC_SUB_U32: return old - v;
  case FLAT_ATOMIC_MIN_I32: return (int32_t)v < (int32_t)old ? v : old;
  case FLAT_ATOMIC_MAX_I32: return (int32_t)v > (int32_t)old ? v : old;
  case FLAT_ATOMIC_MIN_U32: return v < old ? v : old;
  case FLAT_ATOMIC_MAX_U32: return v > old ? v : old;
  case FLAT_ATOMIC_AND_B32: return old & v;
  case FLAT_ATOMIC_OR_B32: return old | v;
  case FLAT_ATOMIC_XOR_B32: return old ^ v;
  default: return rdna3_u(rdna3_f(old) + rdna3_f(v));  /* FLAT_ATOMIC_ADD_F32 */
  }
}

/* The fields of a FLAT/GLOBAL/SCRATCH instruction (RDNA3 ISA guide "FLAT"; RDNA4 ISA guide "VFLAT, VGLOBAL,
 * VSCRATCH"): the same opcode numbers, placed differently.
 *   gfx11 (64 bits): OFFSET [12:0] (13-bit signed; 12-bit unsigned for FLAT), GLC [14], SEG [17:16], OP [25:18];
 *     VADDR [39:32], DATA [47:40], SADDR [54:48], SVE [55], VDST [63:56].
 *   gfx12 (96 bits): SADDR [6:0], OP [21:14], SEG [25:24]; VDST [39:32], SVE [49], SCOPE [51:50], TH [54:52]
 *     (TH bit 0 on an atomic: return the old value), DATA [62:55]; VADDR [71:64], OFFSET [95:72] (24-bit signed). */
typedef struct flat_inst {
  unsigned op, seg, vaddr, data, saddr, vdst;
  int32_t offset;
  bool returns_atomic, sve;
} flat_inst;

static int decode_flat(rdna3_ctx *c, const rdna3_wave *w, flat_inst *f) {
  bool gfx12 = c->isa->gen == RDNA3_GEN_GFX12;
  c->ndw = gfx12 ? 3 : 2;
  if (rdna3_need(c, w, c->ndw)) return -1;
  uint32_t e0 = c->enc[0], e1 = c->enc[1], e2 = c->enc[2];
  if (gfx12) {
    *f = (flat_inst){.op = (e0 >> 14) & 0xff, .seg = (e0 >> 24) & 3, .saddr = e0 & 0x7f, .vdst = e1 & 0xff,
                     .sve = (e1 >> 17) & 1, .returns_atomic = (e1 >> 20) & 1, .data = (e1 >> 23) & 0xff,
                     .vaddr = e2 & 0xff, .offset = (int32_t)e2 >> 8};
  } else {
    unsigned seg = (e0 >> 16) & 3;
    *f = (flat_inst){.op = (e0 >> 18) & 0xff, .seg = seg, .returns_atomic = (e0 >> 14) & 1,
                     .offset = seg == SEG_FLAT ? (int32_t)(e0 & 0xfff) : (int32_t)(e0 << 19) >> 19,
                     .vaddr = e1 & 0xff, .data = (e1 >> 8) & 0xff, .saddr = (e1 >> 16) & 0x7f, .vdst = e1 >> 24,
                     .sve = (e1 >> 23) & 1};
  }
  if (f->seg == 3) return rdna3_fail(c, w, "reserved FLAT segment 3");
  return 0;
}

/* gfx12 GLOBAL_INV / GLOBAL_WB / GLOBAL_WBINV (the cache maintenance of LLVM's gfx12 memory model): memory is
 * coherent here, so they only need to be well-formed. */
enum { GLOBAL_INV_GFX12 = 43, GLOBAL_WB_GFX12 = 44, GLOBAL_WBINV_GFX12 = 79 };

int rdna3_exec_flat(rdna3_ctx *c, rdna3_wave *w) {
  flat_inst f;
  if (decode_flat(c, w, &f)) return -1;
  unsigned op = f.op, seg = f.seg, vaddr = f.vaddr, data = f.data, saddr = f.saddr, vdst = f.vdst;
  int32_t offset = f.offset;
  bool glc = f.returns_atomic, sve = f.sve, use_saddr = saddr != RDNA3_NULL && saddr != 0x7f;
  if (c->isa->gen == RDNA3_GEN_GFX12 && seg == SEG_GLOBAL &&
      (op == GLOBAL_INV_GFX12 || op == GLOBAL_WB_GFX12 || op == GLOBAL_WBINV_GFX12))
    return 0;
  bool is_store = (op >= FLAT_STORE_B8 && op <= FLAT_STORE_B128) || op == FLAT_STORE_D16_HI_B8 || op == FLAT_STORE_D16_HI_B16;
  bool is_atomic = op >= FLAT_ATOMIC_SWAP_B32 && op <= FLAT_ATOMIC_ADD_F32;
  bool is_load = (op >= FLAT_LOAD_U8 && op <= FLAT_LOAD_B128) || (op >= FLAT_LOAD_D16_U8 && op <= FLAT_LOAD_D16_HI_B16);
  if (is_atomic && !(op <= FLAT_ATOMIC_XOR_B32 && op != 55) && op != FLAT_ATOMIC_ADD_F32)
    return rdna3_fail(c, w, "unimplemented FLAT atomic opcode %u", op);
  if (!is_store && !is_atomic && !is_load) return rdna3_fail(c, w, "unimplemented FLAT opcode %u", op);
  if (is_atomic && seg == SEG_SCRATCH) return rdna3_fail(c, w, "scratch atomics do not exist");
  /* sizes: bytes moved per lane, and the registers it takes */
  unsigned bytes;
  if (is_store) bytes = op == FLAT_STORE_B8 || op == FLAT_STORE_D16_HI_B8 ? 1 : op == FLAT_STORE_B16 || op == FLAT_STORE_D16_HI_B16 ? 2 : 4 * (op - FLAT_STORE_B32 + 1);
  else if (is_atomic) bytes = 4;
  else if (op >= FLAT_LOAD_D16_U8) bytes = op == FLAT_LOAD_D16_B16 || op == FLAT_LOAD_D16_HI_B16 ? 2 : 1;
  else bytes = op == FLAT_LOAD_U8 || op == FLAT_LOAD_I8 ? 1 : op == FLAT_LOAD_U16 || op == FLAT_LOAD_I16 ? 2 : 4 * (op - FLAT_LOAD_B32 + 1);
  unsigned nreg = (bytes + 3) / 4;
  bool vaddr_used = seg == SEG_SCRATCH ? sve : true, vaddr64 = !(seg == SEG_SCRATCH || (seg == SEG_GLOBAL && use_saddr));
  if (vaddr_used && rdna3_vgprs(c, w, vaddr, vaddr64 ? 2 : 1, "address")) return -1;
  if ((is_store || is_atomic) && rdna3_vgprs(c, w, data, op == FLAT_ATOMIC_CMPSWAP_B32 ? 2 : nreg, "data")) return -1;
  bool returns = is_load || (is_atomic && glc);
  if (returns && rdna3_vgprs(c, w, vdst, nreg, "destination")) return -1;
  uint32_t exec = w->s[RDNA3_EXEC_LO];
  rdna3_pend *p = NULL;
  if (returns) {
    bool d16 = op >= FLAT_LOAD_D16_U8 && !is_atomic, hi = d16 && op >= FLAT_LOAD_D16_HI_U8;
    p = rdna3_pend_new(w, RDNA3_VMCNT, RDNA3_SRC_VGPR + vdst, nreg, exec,
                       !d16 ? 0xffffffffu : hi ? 0xffff0000u : 0xffffu);
  }
  for (unsigned l = 0; l < RDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    uint64_t addr;
    if (seg == SEG_SCRATCH) {
      addr = (uint64_t)(int64_t)offset + (use_saddr ? w->s[saddr] : 0) + (sve ? w->v[vaddr][l] : 0);
      addr &= 0xffffffffu;
    } else if (seg == SEG_GLOBAL && use_saddr) {
      addr = (w->s[saddr] | (uint64_t)w->s[saddr + 1] << 32) + w->v[vaddr][l] + (int64_t)offset;
    } else {
      addr = (w->v[vaddr][l] | (uint64_t)w->v[vaddr + 1][l] << 32) + (int64_t)offset;
    }
    uint8_t buf[16];
    if (is_store) {
      if (op == FLAT_STORE_D16_HI_B8 || op == FLAT_STORE_D16_HI_B16) {
        uint32_t v = w->v[data][l] >> 16;
        memcpy(buf, &v, 4);
      } else {
        for (unsigned i = 0; i < nreg; i++) memcpy(buf + 4 * i, &w->v[data + i][l], 4);
      }
      if (access(c, w, (int)seg, addr, l, buf, bytes, true)) return -1;
    } else if (is_atomic) {
      uint32_t old, v = w->v[data][l], cmp = op == FLAT_ATOMIC_CMPSWAP_B32 ? w->v[data + 1][l] : 0;
      if (access(c, w, (int)seg, addr, l, (uint8_t *)&old, 4, false)) return -1;
      uint32_t nv = atomic32(op, old, v, cmp);
      if (access(c, w, (int)seg, addr, l, (uint8_t *)&nv, 4, true)) return -1;
      if (p) p->d[0][l] = old;
    } else if (op >= FLAT_LOAD_D16_U8) {
      bool b16 = bytes == 2;
      bool sgn = op == FLAT_LOAD_D16_I8 || op == FLAT_LOAD_D16_HI_I8;
      if (access(c, w, (int)seg, addr, l, buf, bytes, false)) return -1;
      uint16_t h;
      if (b16) memcpy(&h, buf, 2);
      else h = sgn ? (uint16_t)(int16_t)(int8_t)buf[0] : buf[0];
      p->d[0][l] = (uint32_t)h * 0x10001u;  /* the mask picks the half */
    } else {
      if (access(c, w, (int)seg, addr, l, buf, bytes, false)) return -1;
      if (bytes >= 4) {
        for (unsigned i = 0; i < nreg; i++) memcpy(&p->d[i][l], buf + 4 * i, 4);
      } else if (bytes == 2) {
        uint16_t h;
        memcpy(&h, buf, 2);
        p->d[0][l] = op == FLAT_LOAD_U16 ? h : (uint32_t)(int32_t)(int16_t)h;
      } else {
        p->d[0][l] = op == FLAT_LOAD_U8 ? buf[0] : (uint32_t)(int32_t)(int8_t)buf[0];
      }
    }
  }
  return 0;
}

/* MUBUF: only the cache invalidations a workgroup fence emits (buffer_gl0_inv, buffer_gl1_inv);
 * memory here is coherent, so they do nothing. Buffer loads and stores are not implemented. */
enum { BUFFER_GL0_INV = 43, BUFFER_GL1_INV = 44 };

int rdna3_exec_mubuf(rdna3_ctx *c, rdna3_wave *w) {
  if (c->isa->gen == RDNA3_GEN_GFX12) {  /* VBUFFER, 96 bits, OP [21:14]: no cache-invalidate forms on gfx12 */
    c->ndw = 3;
    if (rdna3_need(c, w, 3)) return -1;
    return rdna3_fail(c, w, "unimplemented VBUFFER opcode %u (buffer memory is not emulated)", (c->enc[0] >> 14) & 0xff);
  }
  c->ndw = 2;
  if (rdna3_need(c, w, 2)) return -1;
  unsigned op = (c->enc[0] >> 18) & 0xff;
  if (op == BUFFER_GL0_INV || op == BUFFER_GL1_INV) return 0;
  return rdna3_fail(c, w, "unimplemented MUBUF opcode %u (buffer memory is not emulated)", op);
}
