/* tests/mockgpu/rdna3/rdna3_lds.c: local data share (DS encoding): loads, stores, two-address
 * forms, d16 halves and the common atomics. Addresses are bytes within the workgroup's allocation;
 * anything outside it stops the dispatch (hardware drops such writes and reads 0: a silent wrong
 * result this model makes visible). Loads land at s_waitcnt lgkmcnt (rdna3_wait.c); stores count
 * on lgkmcnt too, in order, and write LDS at issue. */
#include "rdna3_float.h"
#include "rdna3_ops.h"
#include "rdna3_valu.h"

static uint8_t *lds_at(rdna3_ctx *c, const rdna3_wave *w, uint32_t addr, unsigned n, unsigned lane) {
  if ((uint64_t)addr + n > c->lds_size) {
    rdna3_fail(c, w, "LDS access of %u bytes at 0x%x (lane %u) outside the workgroup's %u bytes", n, addr, lane,
               c->lds_size);
    return NULL;
  }
  return c->lds + addr;
}

static uint32_t ld32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static void st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static uint32_t ds_atomic(unsigned op, uint32_t old, uint32_t v) {
  switch (op) {
  case DS_ADD_U32: case DS_ADD_RTN_U32: return old + v;
  case DS_SUB_U32: return old - v;
  case DS_MIN_I32: return (int32_t)v < (int32_t)old ? v : old;
  case DS_MAX_I32: return (int32_t)v > (int32_t)old ? v : old;
  case DS_MIN_U32: return v < old ? v : old;
  case DS_MAX_U32: return v > old ? v : old;
  case DS_AND_B32: return old & v;
  case DS_OR_B32: return old | v;
  case DS_XOR_B32: return old ^ v;
  case DS_MIN_F32: return rdna3_u(fminf(rdna3_f(old), rdna3_f(v)));
  case DS_MAX_F32: return rdna3_u(fmaxf(rdna3_f(old), rdna3_f(v)));
  default: return rdna3_u(rdna3_f(old) + rdna3_f(v));  /* DS_ADD_F32, DS_ADD_RTN_F32 */
  }
}

/* One phase: the cycles its banks need, the most distinct dwords any one bank serves (lanes reading the same
 * dword share it). Fast path: every bank meets at most one dword. */
static unsigned phase_cycles(const uint32_t *dw, unsigned n) {
  uint32_t first[RDNA3_LDS_BANKS], used = 0, multi = 0;
  for (unsigned i = 0; i < n; i++) {
    unsigned b = dw[i] % RDNA3_LDS_BANKS;
    if (!((used >> b) & 1)) used |= 1u << b, first[b] = dw[i];
    else if (first[b] != dw[i]) multi |= 1u << b;
  }
  if (!multi) return used ? 1 : 0;
  unsigned worst = 1;
  for (; multi; multi &= multi - 1) {
    unsigned b = (unsigned)__builtin_ctz(multi), k = 0;
    uint32_t seen[RDNA3_LANES * 4];
    for (unsigned i = 0; i < n; i++) {
      if (dw[i] % RDNA3_LDS_BANKS != b) continue;
      unsigned j = 0;
      while (j < k && seen[j] != dw[i]) j++;
      if (j == k) seen[k++] = dw[i];
    }
    if (k > worst) worst = k;
  }
  return worst;
}

uint64_t rdna3_lds_conflicts(const uint32_t addr[2][RDNA3_LANES], unsigned naddr, unsigned ndw, uint32_t exec) {
  unsigned per_lane = naddr * ndw, lanes = per_lane <= 1 ? 32 : per_lane == 2 ? 16 : 8;
  uint64_t extra = 0;
  for (unsigned p0 = 0; p0 < RDNA3_LANES; p0 += lanes) {
    uint32_t dw[RDNA3_LANES * 4];
    unsigned n = 0;
    for (unsigned l = p0; l < p0 + lanes; l++) {
      if (!((exec >> l) & 1)) continue;
      for (unsigned a = 0; a < naddr; a++)
        for (unsigned i = 0; i < ndw; i++) dw[n++] = (addr[a][l] >> 2) + i;
    }
    unsigned cyc = phase_cycles(dw, n);
    if (cyc > 1) extra += cyc - 1;
  }
  return extra;
}

int rdna3_exec_ds(rdna3_ctx *c, rdna3_wave *w) {
  c->ndw = 2;
  if (rdna3_need(c, w, 2)) return -1;
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  unsigned op = (e0 >> 18) & 0xff, off0 = e0 & 0xff, off1 = (e0 >> 8) & 0xff;
  unsigned vaddr = e1 & 0xff, d0 = (e1 >> 8) & 0xff, d1 = (e1 >> 16) & 0xff, vdst = e1 >> 24;
  uint32_t offset = off1 << 8 | off0;
  if ((e0 >> 17) & 1) return rdna3_fail(c, w, "GDS is not implemented");
  uint32_t exec = w->s[RDNA3_EXEC_LO];
  /* registers: data sources (d0, d1) and results (vdst), checked against the grant */
  unsigned nd = 0, nres = 0, mask = 0xffffffffu;
  switch (op) {
  case DS_STORE_B32: case DS_STORE_B8: case DS_STORE_B8_D16_HI: case DS_STORE_B16: case DS_STORE_B16_D16_HI:
  case DS_STORE_2ADDR_B32: case DS_STORE_2ADDR_STRIDE64_B32:
  case DS_ADD_U32: case DS_SUB_U32: case DS_MIN_I32: case DS_MAX_I32: case DS_MIN_U32: case DS_MAX_U32:
  case DS_AND_B32: case DS_OR_B32: case DS_XOR_B32: case DS_MIN_F32: case DS_MAX_F32: case DS_ADD_F32: nd = 1; break;
  case DS_STORE_B64: case DS_STORE_2ADDR_B64: case DS_STORE_2ADDR_STRIDE64_B64: nd = 2; break;
  case DS_STORE_B96: nd = 3; break;
  case DS_STORE_B128: nd = 4; break;
  case DS_ADD_RTN_U32: case DS_ADD_RTN_F32: nd = 1, nres = 1; break;
  case DS_LOAD_B32: case DS_LOAD_U8: case DS_LOAD_I8: case DS_LOAD_U16: case DS_LOAD_I16: nres = 1; break;
  case DS_LOAD_U8_D16: case DS_LOAD_I8_D16: case DS_LOAD_U16_D16: nres = 1, mask = 0xffffu; break;
  case DS_LOAD_U8_D16_HI: case DS_LOAD_I8_D16_HI: case DS_LOAD_U16_D16_HI: nres = 1, mask = 0xffff0000u; break;
  case DS_LOAD_B64: case DS_LOAD_2ADDR_B32: case DS_LOAD_2ADDR_STRIDE64_B32: nres = 2; break;
  case DS_LOAD_B96: nres = 3; break;
  case DS_LOAD_B128: case DS_LOAD_2ADDR_B64: case DS_LOAD_2ADDR_STRIDE64_B64: nres = 4; break;
  default: return rdna3_fail(c, w, "unimplemented DS opcode %u", op);
  }
  bool two = op == DS_STORE_2ADDR_B32 || op == DS_STORE_2ADDR_STRIDE64_B32 || op == DS_STORE_2ADDR_B64 ||
             op == DS_STORE_2ADDR_STRIDE64_B64;
  /* the bank model's view: each lane's address(es), bytes at each, and which way data moves */
  bool two_any = two || op == DS_LOAD_2ADDR_B32 || op == DS_LOAD_2ADDR_STRIDE64_B32 || op == DS_LOAD_2ADDR_B64 ||
                 op == DS_LOAD_2ADDR_STRIDE64_B64;
  bool b64x2 = op == DS_STORE_2ADDR_B64 || op == DS_STORE_2ADDR_STRIDE64_B64 || op == DS_LOAD_2ADDR_B64 ||
               op == DS_LOAD_2ADDR_STRIDE64_B64;
  bool stride64 = op == DS_STORE_2ADDR_STRIDE64_B32 || op == DS_STORE_2ADDR_STRIDE64_B64 ||
                  op == DS_LOAD_2ADDR_STRIDE64_B32 || op == DS_LOAD_2ADDR_STRIDE64_B64;
  unsigned esize = b64x2 ? 8 : 4, estride = esize * (stride64 ? 64 : 1);
  unsigned bytes = two_any ? esize : nd ? 4 * nd : 4 * nres;  /* per address */
  if (op == DS_STORE_B8 || op == DS_STORE_B8_D16_HI || op == DS_LOAD_U8 || op == DS_LOAD_I8 || op == DS_LOAD_U8_D16 ||
      op == DS_LOAD_U8_D16_HI || op == DS_LOAD_I8_D16 || op == DS_LOAD_I8_D16_HI)
    bytes = 1;
  if (op == DS_STORE_B16 || op == DS_STORE_B16_D16_HI || op == DS_LOAD_U16 || op == DS_LOAD_I16 ||
      op == DS_LOAD_U16_D16 || op == DS_LOAD_U16_D16_HI)
    bytes = 2;
  bool atomic = op <= DS_XOR_B32 || op == DS_MIN_F32 || op == DS_MAX_F32 || op == DS_ADD_F32 || op == DS_ADD_RTN_U32 ||
                op == DS_ADD_RTN_F32;
  if (atomic) bytes = 4;
  bool loads = atomic || nres, stores = atomic || !nres;  /* atomics read and write */
  uint32_t addr[2][RDNA3_LANES];
  if (rdna3_vgprs(c, w, vaddr, 1, "address") || (nd && rdna3_vgprs(c, w, d0, nd, "data")) ||
      (two && rdna3_vgprs(c, w, d1, op == DS_STORE_2ADDR_B64 || op == DS_STORE_2ADDR_STRIDE64_B64 ? 2 : 1, "data1")) ||
      (nres && rdna3_vgprs(c, w, vdst, nres, "destination")))
    return -1;
  /* every DS op counts on lgkmcnt; those that return data carry it */
  rdna3_pend *pd = rdna3_pend_new(w, RDNA3_LGKMCNT, RDNA3_SRC_VGPR + vdst, nres, exec, mask);
  uint32_t (*res)[RDNA3_LANES] = pd->d;
  for (unsigned l = 0; l < RDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    uint32_t base = w->v[vaddr][l];
    uint8_t *p, *q;
    if (two_any) addr[0][l] = base + off0 * estride, addr[1][l] = base + off1 * estride;
    else addr[0][l] = base + offset;
    switch (op) {
    case DS_STORE_B32: case DS_STORE_B64: case DS_STORE_B96: case DS_STORE_B128: {
      unsigned n = op == DS_STORE_B32 ? 1 : op == DS_STORE_B64 ? 2 : op == DS_STORE_B96 ? 3 : 4;
      if (!(p = lds_at(c, w, base + offset, 4 * n, l))) return -1;
      for (unsigned i = 0; i < n; i++) st32(p + 4 * i, w->v[d0 + i][l]);
      break;
    }
    case DS_STORE_B8: case DS_STORE_B8_D16_HI:
      if (!(p = lds_at(c, w, base + offset, 1, l))) return -1;
      *p = (uint8_t)(w->v[d0][l] >> (op == DS_STORE_B8 ? 0 : 16));
      break;
    case DS_STORE_B16: case DS_STORE_B16_D16_HI: {
      if (!(p = lds_at(c, w, base + offset, 2, l))) return -1;
      uint16_t h = (uint16_t)(w->v[d0][l] >> (op == DS_STORE_B16 ? 0 : 16));
      memcpy(p, &h, 2);
      break;
    }
    case DS_STORE_2ADDR_B32: case DS_STORE_2ADDR_STRIDE64_B32: case DS_STORE_2ADDR_B64:
    case DS_STORE_2ADDR_STRIDE64_B64: {
      bool b64 = op == DS_STORE_2ADDR_B64 || op == DS_STORE_2ADDR_STRIDE64_B64;
      unsigned size = b64 ? 8 : 4, stride = size * (op == DS_STORE_2ADDR_STRIDE64_B32 || op == DS_STORE_2ADDR_STRIDE64_B64 ? 64 : 1);
      if (!(p = lds_at(c, w, base + off0 * stride, size, l)) || !(q = lds_at(c, w, base + off1 * stride, size, l))) return -1;
      st32(p, w->v[d0][l]);
      st32(q, w->v[d1][l]);
      if (b64) st32(p + 4, w->v[d0 + 1][l]), st32(q + 4, w->v[d1 + 1][l]);
      break;
    }
    case DS_LOAD_B32: case DS_LOAD_B64: case DS_LOAD_B96: case DS_LOAD_B128: {
      unsigned n = op == DS_LOAD_B32 ? 1 : op == DS_LOAD_B64 ? 2 : op == DS_LOAD_B96 ? 3 : 4;
      if (!(p = lds_at(c, w, base + offset, 4 * n, l))) return -1;
      for (unsigned i = 0; i < n; i++) res[i][l] = ld32(p + 4 * i);
      break;
    }
    case DS_LOAD_U8: case DS_LOAD_I8:
      if (!(p = lds_at(c, w, base + offset, 1, l))) return -1;
      res[0][l] = op == DS_LOAD_U8 ? *p : (uint32_t)(int32_t)(int8_t)*p;
      break;
    case DS_LOAD_U16: case DS_LOAD_I16: {
      if (!(p = lds_at(c, w, base + offset, 2, l))) return -1;
      uint16_t h;
      memcpy(&h, p, 2);
      res[0][l] = op == DS_LOAD_U16 ? h : (uint32_t)(int32_t)(int16_t)h;
      break;
    }
    case DS_LOAD_U8_D16: case DS_LOAD_U8_D16_HI: case DS_LOAD_I8_D16: case DS_LOAD_I8_D16_HI:
    case DS_LOAD_U16_D16: case DS_LOAD_U16_D16_HI: {
      bool b16 = op == DS_LOAD_U16_D16 || op == DS_LOAD_U16_D16_HI;
      if (!(p = lds_at(c, w, base + offset, b16 ? 2 : 1, l))) return -1;
      uint16_t h;
      if (b16) memcpy(&h, p, 2);
      else h = op == DS_LOAD_I8_D16 || op == DS_LOAD_I8_D16_HI ? (uint16_t)(int16_t)(int8_t)*p : *p;
      res[0][l] = (uint32_t)h * 0x10001u;  /* the entry's mask picks the half */
      break;
    }
    case DS_LOAD_2ADDR_B32: case DS_LOAD_2ADDR_STRIDE64_B32: case DS_LOAD_2ADDR_B64:
    case DS_LOAD_2ADDR_STRIDE64_B64: {
      bool b64 = op == DS_LOAD_2ADDR_B64 || op == DS_LOAD_2ADDR_STRIDE64_B64;
      unsigned size = b64 ? 8 : 4, stride = size * (op == DS_LOAD_2ADDR_STRIDE64_B32 || op == DS_LOAD_2ADDR_STRIDE64_B64 ? 64 : 1);
      if (!(p = lds_at(c, w, base + off0 * stride, size, l)) || !(q = lds_at(c, w, base + off1 * stride, size, l))) return -1;
      unsigned n = size / 4;
      for (unsigned i = 0; i < n; i++) {
        res[i][l] = ld32(p + 4 * i);
        res[n + i][l] = ld32(q + 4 * i);
      }
      break;
    }
    case DS_ADD_U32: case DS_SUB_U32: case DS_MIN_I32: case DS_MAX_I32: case DS_MIN_U32: case DS_MAX_U32:
    case DS_AND_B32: case DS_OR_B32: case DS_XOR_B32: case DS_MIN_F32: case DS_MAX_F32: case DS_ADD_F32:
    case DS_ADD_RTN_U32: case DS_ADD_RTN_F32: {
      if (!(p = lds_at(c, w, base + offset, 4, l))) return -1;
      uint32_t old = ld32(p);
      st32(p, ds_atomic(op, old, w->v[d0][l]));
      if (op == DS_ADD_RTN_U32 || op == DS_ADD_RTN_F32) res[0][l] = old;
      break;
    }
    default: break;  /* refused above */
    }
  }
  uint64_t moved = (uint64_t)__builtin_popcount(exec) * bytes * (two_any ? 2 : 1);
  if (loads) c->st.lds_load_bytes += moved;
  if (stores) c->st.lds_store_bytes += moved;
  c->st.lds_bank_conflict_cycles += rdna3_lds_conflicts(addr, two_any ? 2 : 1, (bytes + 3) / 4, exec);
  return 0;
}
