/* tests/mockgpu/cdna3/cdna3_lds.c: DS (LDS) instructions of gfx9 in wave64: reads, writes (1, 2, 4, 8, 12, 16
 * bytes, the two-address read2/write2 forms with ST64), d16 reads, and the 32-bit atomics. Address: ADDR VGPR +
 * OFFSET (OFFSET1:OFFSET0, or each 8-bit offset times the element size for the 2-address forms, times 64 for ST64).
 * The ACC bit (gfx90a+) makes the data and destination registers AGPRs. An access outside the workgroup's LDS
 * allocation (COMPUTE_PGM_RSRC2.LDS_SIZE) stops the dispatch. Results land on lgkmcnt. Bank conflicts: the LDS of
 * a CDNA3 CU has 32 dword-wide banks (CDNA3 ISA guide "Local Data Share"); a wave64 access is served as two halves of
 * 32 lanes, each costed by the RDNA3 core's 32-bank model (rdna3_lds_conflicts). */
#include <assert.h>
#include <string.h>

#include "cdna3_ops.h"
#include "cdna3_internal.h"
#include "rdna3_float.h"
#include "rdna3_internal.h"

static int lds_at(cdna3_ctx *c, const cdna3_wave *w, uint32_t addr, unsigned n, uint8_t **p) {
  if ((uint64_t)addr + n > c->lds_size)
    return cdna3_fail(c, w, "LDS access of %u bytes at 0x%x outside the workgroup's %u bytes (RSRC2.LDS_SIZE)", n, addr,
                      c->lds_size);
  *p = c->lds + addr;
  return 0;
}

static uint32_t atomic(unsigned op, uint32_t old, uint32_t v) {
  switch (op) {
  case C3_DS_ADD_U32: case C3_DS_ADD_RTN_U32: return old + v;
  case C3_DS_SUB_U32: return old - v;
  case C3_DS_MIN_I32: return (int32_t)v < (int32_t)old ? v : old;
  case C3_DS_MAX_I32: return (int32_t)v > (int32_t)old ? v : old;
  case C3_DS_MIN_U32: return v < old ? v : old;
  case C3_DS_MAX_U32: return v > old ? v : old;
  case C3_DS_AND_B32: return old & v;
  case C3_DS_OR_B32: return old | v;
  case C3_DS_XOR_B32: return old ^ v;
  case C3_DS_MIN_F32: return rdna3_u(fminf(rdna3_f(old), rdna3_f(v)));
  case C3_DS_MAX_F32: return rdna3_u(fmaxf(rdna3_f(old), rdna3_f(v)));
  default: return rdna3_u(rdna3_f(old) + rdna3_f(v));  /* C3_DS_ADD_F32 */
  }
}

int cdna3_exec_ds(cdna3_ctx *c, cdna3_wave *w) {
  c->ndw = 2;
  if (cdna3_need(c, w, 2)) return -1;
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  unsigned op = (e0 >> 17) & 0xff, off0 = e0 & 0xff, off1 = (e0 >> 8) & 0xff;
  bool gds = (e0 >> 16) & 1, acc = (e0 >> 25) & 1;
  unsigned vaddr = e1 & 0xff, data0 = (e1 >> 8) & 0xff, data1 = (e1 >> 16) & 0xff, vdst = e1 >> 24;
  if (gds) return cdna3_fail(c, w, "GDS is not emulated");
  /* kind: 1 write, 2 read, 3 atomic (no return), 4 atomic returning; n: bytes per address; two: 2-address form */
  unsigned kind = 0, n = 4, stride = 1;
  bool two = false, sgn = false, d16 = false, hi = false;
  switch (op) {
  case C3_DS_WRITE_B8: kind = 1, n = 1; break;
  case C3_DS_WRITE_B16: kind = 1, n = 2; break;
  case C3_DS_WRITE_B8_D16_HI: kind = 1, n = 1, hi = true; break;
  case C3_DS_WRITE_B16_D16_HI: kind = 1, n = 2, hi = true; break;
  case C3_DS_WRITE_B32: kind = 1; break;
  case C3_DS_WRITE_B64: kind = 1, n = 8; break;
  case C3_DS_WRITE_B96: kind = 1, n = 12; break;
  case C3_DS_WRITE_B128: kind = 1, n = 16; break;
  case C3_DS_WRITE2_B32: kind = 1, two = true; break;
  case C3_DS_WRITE2ST64_B32: kind = 1, two = true, stride = 64; break;
  case C3_DS_WRITE2_B64: kind = 1, n = 8, two = true; break;
  case C3_DS_WRITE2ST64_B64: kind = 1, n = 8, two = true, stride = 64; break;
  case C3_DS_READ_B32: kind = 2; break;
  case C3_DS_READ_B64: kind = 2, n = 8; break;
  case C3_DS_READ_B96: kind = 2, n = 12; break;
  case C3_DS_READ_B128: kind = 2, n = 16; break;
  case C3_DS_READ2_B32: kind = 2, two = true; break;
  case C3_DS_READ2ST64_B32: kind = 2, two = true, stride = 64; break;
  case C3_DS_READ2_B64: kind = 2, n = 8, two = true; break;
  case C3_DS_READ2ST64_B64: kind = 2, n = 8, two = true, stride = 64; break;
  case C3_DS_READ_I8: kind = 2, n = 1, sgn = true; break;
  case C3_DS_READ_U8: kind = 2, n = 1; break;
  case C3_DS_READ_I16: kind = 2, n = 2, sgn = true; break;
  case C3_DS_READ_U16: kind = 2, n = 2; break;
  case C3_DS_READ_U8_D16: case C3_DS_READ_U8_D16_HI: case C3_DS_READ_I8_D16: case C3_DS_READ_I8_D16_HI:
  case C3_DS_READ_U16_D16: case C3_DS_READ_U16_D16_HI:
    kind = 2, d16 = true, hi = op & 1, n = op >= C3_DS_READ_U16_D16 ? 2 : 1, sgn = op == C3_DS_READ_I8_D16 || op == C3_DS_READ_I8_D16_HI;
    break;
  case C3_DS_ADD_U32: case C3_DS_SUB_U32: case C3_DS_MIN_I32: case C3_DS_MAX_I32: case C3_DS_MIN_U32:
  case C3_DS_MAX_U32: case C3_DS_AND_B32: case C3_DS_OR_B32: case C3_DS_XOR_B32: case C3_DS_MIN_F32:
  case C3_DS_MAX_F32: case C3_DS_ADD_F32:
    kind = 3; break;
  case C3_DS_ADD_RTN_U32: kind = 4; break;
  default: return cdna3_fail(c, w, "unimplemented DS opcode %u", op);
  }
  unsigned nreg = (n + 3) / 4 * (two ? 2 : 1);
  int pa = cdna3_reg(c, w, vaddr, 1, false, "address");
  if (pa < 0) return -1;
  int pd0 = -1, pd1 = -1, pv = -1;
  if (kind != 2 && (pd0 = cdna3_reg(c, w, data0, (n + 3) / 4, acc, "data")) < 0) return -1;
  if (kind == 1 && two && (pd1 = cdna3_reg(c, w, data1, (n + 3) / 4, acc, "data1")) < 0) return -1;
  bool returns = kind == 2 || kind == 4;
  if (returns && (pv = cdna3_reg(c, w, vdst, nreg, acc, "destination")) < 0) return -1;
  uint64_t exec = cdna3_exec(w);
  cdna3_pend *p = cdna3_pend_new(w, CDNA3_LGKMCNT, returns ? CDNA3_SRC_VGPR + (unsigned)pv : 0, returns ? nreg : 0, exec,
                                 !d16 ? 0xffffffffu : hi ? 0xffff0000u : 0xffffu);
  static_assert(RDNA3_LDS_BANKS == 32 && 2 * RDNA3_LANES == CDNA3_LANES, "two 32-bank halves per wave64");
  uint32_t half_addr[2][2][RDNA3_LANES] = {{{0}}};
  for (unsigned l = 0; l < CDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    uint32_t base = w->v[pa][l];
    for (unsigned t = 0; t < 2; t++)
      half_addr[l / RDNA3_LANES][t][l % RDNA3_LANES] = two ? base + (t ? off1 : off0) * n * stride : base + (off1 << 8 | off0);
    for (unsigned t = 0; t < (two ? 2u : 1u); t++) {
      uint32_t addr = two ? base + (t ? off1 : off0) * n * stride : base + (off1 << 8 | off0);
      uint8_t *m = NULL;
      if (lds_at(c, w, addr, n, &m)) return -1;
      if (kind == 1) {
        int src = t ? pd1 : pd0;
        uint8_t buf[16];
        if (hi) {
          uint32_t v = w->v[src][l] >> 16;
          memcpy(buf, &v, 4);
        } else {
          for (unsigned i = 0; i < (n + 3) / 4; i++) memcpy(buf + 4 * i, &w->v[src + i][l], 4);
        }
        memcpy(m, buf, n);
        c->st.lds_store_bytes += n;
      } else if (kind == 2) {
        uint8_t buf[16] = {0};
        memcpy(buf, m, n);
        c->st.lds_load_bytes += n;
        unsigned r0 = t * ((n + 3) / 4);
        if (n >= 4) {
          for (unsigned i = 0; i < n / 4; i++) memcpy(&p->d[r0 + i][l], buf + 4 * i, 4);
        } else {
          uint32_t v = n == 1 ? (sgn ? (uint32_t)(int32_t)(int8_t)buf[0] : buf[0])
                              : (sgn ? (uint32_t)(int32_t)(int16_t)(buf[0] | buf[1] << 8) : (uint32_t)(buf[0] | buf[1] << 8));
          p->d[0][l] = d16 ? (v & 0xffff) * 0x10001u : v;
        }
      } else {
        uint32_t old, v = w->v[pd0][l];
        memcpy(&old, m, 4);
        uint32_t nv = atomic(op, old, v);
        memcpy(m, &nv, 4);
        c->st.lds_load_bytes += 4, c->st.lds_store_bytes += 4;
        if (kind == 4) p->d[0][l] = old;
      }
    }
  }
  for (unsigned h = 0; h < 2; h++)
    c->st.lds_bank_conflict_cycles +=
        rdna3_lds_conflicts((const uint32_t(*)[RDNA3_LANES])half_addr[h], two ? 2 : 1, (n + 3) / 4, (uint32_t)(exec >> (32 * h)));
  return 0;
}
