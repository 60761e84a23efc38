/* tests/mockgpu/amd_gfx9.c: MI300 model (amd_gfx9.h). Register addresses come from the driver's generated tables
 * (am/regs gc_9_4_3, nbio_7_9_0, sdma_4_4_2: Linux asic_reg offsets) with the device's discovery bases; field
 * positions from the same tables. */
#include "amd_gfx9.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_regs.h"
#include "amd_internal.h"
#include "mock_shm.h"

enum { X_GRBM, X_MEC_CNTL, X_MQD_LO, X_MQD_HI, X_PQ_BASE, X_PQ_BASE_HI, X_PQ_CONTROL, X_RPTR_LO, X_RPTR_HI, X_WPTR_LO,
       X_WPTR_HI, X_DOORBELL, X_EOP_LO, X_EOP_HI, X_EOP_CONTROL, X_PERSISTENT, X_IB_CONTROL, X_MQD_CONTROL, X_ACTIVE,
       X_DEQUEUE, X_WPTR_REG_HI, X_AQL_CONTROL, X_N };
static const enum bg_am_reg_id XNAMES[X_N] = {
    regGRBM_GFX_CNTL, regCP_MEC_CNTL, regCP_MQD_BASE_ADDR, regCP_MQD_BASE_ADDR_HI, regCP_HQD_PQ_BASE,
    regCP_HQD_PQ_BASE_HI, regCP_HQD_PQ_CONTROL, regCP_HQD_PQ_RPTR_REPORT_ADDR, regCP_HQD_PQ_RPTR_REPORT_ADDR_HI,
    regCP_HQD_PQ_WPTR_POLL_ADDR, regCP_HQD_PQ_WPTR_POLL_ADDR_HI, regCP_HQD_PQ_DOORBELL_CONTROL,
    regCP_HQD_EOP_BASE_ADDR, regCP_HQD_EOP_BASE_ADDR_HI, regCP_HQD_EOP_CONTROL, regCP_HQD_PERSISTENT_STATE,
    regCP_HQD_IB_CONTROL, regCP_MQD_CONTROL, regCP_HQD_ACTIVE, regCP_HQD_DEQUEUE_REQUEST,
    regCP_HQD_PQ_WPTR_HI, regCP_HQD_AQL_CONTROL};

enum { S_CNTL, S_RB_CNTL, S_BASE, S_BASE_HI, S_RPTR_LO, S_RPTR_HI, S_WPTR_LO, S_WPTR_HI, S_DB, S_DB_OFF, S_MINOR, S_N };
_Static_assert(S_DB_OFF - S_RB_CNTL == AMD_SDMA_DOORBELL_OFFSET, "S_RB_CNTL.. in amd_sdma_rb_cntl_write's order");
static const enum bg_am_reg_id SNAMES[S_N] = {
    regSDMA_CNTL, regSDMA_GFX_RB_CNTL, regSDMA_GFX_RB_BASE, regSDMA_GFX_RB_BASE_HI,
    regSDMA_GFX_RB_RPTR_ADDR_LO, regSDMA_GFX_RB_RPTR_ADDR_HI, regSDMA_GFX_RB_WPTR_POLL_ADDR_LO,
    regSDMA_GFX_RB_WPTR_POLL_ADDR_HI, regSDMA_GFX_DOORBELL, regSDMA_GFX_DOORBELL_OFFSET,
    regSDMA_GFX_MINOR_PTR_UPDATE};

#define NPORTS 16
#define E(n) regS2A_DOORBELL_ENTRY_##n##_CTRL
static const enum bg_am_reg_id S2A[NPORTS] = {E(0), E(1), E(2),  E(3),  E(4),  E(5),  E(6),  E(7),
                                              E(8), E(9), E(10), E(11), E(12), E(13), E(14), E(15)};
#undef E

typedef struct field {
  unsigned shift;
  uint32_t mask;
} field;

typedef struct g9 {
  const mock_amd *g;
  const struct bg_am_regtab *gc, *nbio, *sdma;
  unsigned nxcc, xcc_inst[MOCK_GFX9_MAX_XCC], naid;
  uint32_t x[MOCK_GFX9_MAX_XCC][X_N];
  mock_amd_hqd9 hqd[MOCK_GFX9_MAX_XCC][2];
  uint32_t index2, index2_hi, data2, db_entry1;
  uint32_t s2a[MOCK_GFX9_MAX_AID][NPORTS], s2a_val[MOCK_GFX9_MAX_AID][NPORTS];
  uint32_t fence[MOCK_GFX9_MAX_AID], fence_val[MOCK_GFX9_MAX_AID];
  bool fence_written[MOCK_GFX9_MAX_AID], via_pcie;
  unsigned pcie_writes;
  uint32_t s[S_N];
  mock_amd_sdma_rb rb;
  uint32_t mec_halted; /* CP_MEC_CNTL after reset: both MEs halted until the driver starts them */
  field slv_mode, queue_full, slot_wptr, sdma_trap, sdma_utc, sdma_db_en, sdma_rb_size, db1_size, db1_off;
} g9;

#define MAX_GPUS 16
static g9 *G9[MAX_GPUS]; /* single-threaded, like the rest of the model */

static g9 *g9_of(const mock_amd *g) {
  for (int i = 0; i < MAX_GPUS; i++)
    if (G9[i] && G9[i]->g == g) return G9[i];
  return NULL;
}

const mock_amd_hqd9 *mock_amd_gfx9_hqd(const mock_amd *g, unsigned xcc, unsigned queue) {
  g9 *c = g9_of(g);
  if (!c || queue > 1) return NULL;
  for (unsigned k = 0; k < c->nxcc; k++)
    if (c->xcc_inst[k] == xcc) return &c->hqd[k][queue];
  return NULL;
}
const mock_amd_sdma_rb *mock_amd_sdma9_ring(const mock_amd *g) {
  g9 *c = g9_of(g);
  return c ? &c->rb : NULL;
}
uint32_t mock_amd_xcc_fence(const mock_amd *g, unsigned aid, bool *written) {
  g9 *c = g9_of(g);
  bool w = c && aid < c->naid && c->fence_written[aid];
  if (written) *written = w;
  return w ? c->fence_val[aid] : 0;
}
uint32_t mock_amd_s2a(const mock_amd *g, unsigned aid, unsigned port) {
  g9 *c = g9_of(g);
  return c && aid < c->naid && port < NPORTS ? c->s2a_val[aid][port] : 0;
}
unsigned mock_amd_pcie_writes(const mock_amd *g) {
  g9 *c = g9_of(g);
  return c ? c->pcie_writes : 0;
}

static int fld(mock_amd *g, const struct bg_am_regtab *t, enum bg_am_field_id f, field *out) {
  const struct bg_am_reg *r = bg_am_reg_find(t, BG_AM_FIELD_REG(f));
  if (r && bg_am_reg_field(r, f, &out->shift, &out->mask) == 0) return 0;
  amd_fail(g, "MI300 model: no field %s.%s in %s", bg_am_reg_id_name(BG_AM_FIELD_REG(f)), bg_am_field_id_name(f), t->name);
  return -1;
}

static int addr_of(mock_amd *g, const struct bg_am_regtab *t, int hwip, unsigned inst, enum bg_am_reg_id name,
                   uint32_t *a) {
  if (bg_am_reg_abs_id(&g->disc, hwip, inst, t, name, a) == 0) return 0;
  amd_fail(g, "MI300 model: register %s of %s instance %u not found", bg_am_reg_id_name(name), t->name, inst);
  return -1;
}

int amd_gfx9_hooks(mock_amd *g, amd_hook_fn hook) {
  int slot = -1;
  for (int i = 0; i < MAX_GPUS && slot < 0; i++)
    if (!G9[i]) slot = i;
  g9 *c = mock_shm_calloc(1, sizeof(*c));
  if (!c || slot < 0) {
    mock_shm_free(c);
    amd_fail(g, "MI300 model: out of memory or GPU slots");
    return -1;
  }
  c->g = g;
  c->gc = bg_am_regtab_by_name("gc_9_4_3");
  c->nbio = bg_am_regtab_by_name("nbio_7_9_0");
  c->sdma = bg_am_regtab_by_name("sdma_4_4_2");
  int e = (!c->gc || !c->nbio || !c->sdma) ? -1 : 0;
  uint32_t gm = g->disc.ip[GC_HWIP].inst_mask & ~g->disc.ip[GC_HWIP].harvest_mask;
  for (unsigned i = 0; i < 32 && e == 0; i++) {
    if (!(gm >> i & 1) || c->nxcc == MOCK_GFX9_MAX_XCC) continue;
    unsigned k = c->nxcc++;
    c->xcc_inst[k] = i;
    for (int r = 0; r < X_N && e == 0; r++) e = addr_of(g, c->gc, GC_HWIP, i, XNAMES[r], &c->x[k][r]);
    if (e == 0) e = hook(g, c->x[k][X_ACTIVE], AMD_H_G9_HQD_ACTIVE, k);
    if (e == 0) e = hook(g, c->x[k][X_DEQUEUE], AMD_H_G9_HQD_DEQUEUE, k);
  }
  uint32_t am = g->disc.ip[NBIO_HWIP].inst_mask;
  for (unsigned aid = 0; aid < MOCK_GFX9_MAX_AID && e == 0; aid++) {
    if (!(am >> aid & 1)) break;
    c->naid++;
    e = addr_of(g, c->nbio, NBIO_HWIP, aid, regXCC_DOORBELL_FENCE, &c->fence[aid]);
    if (e == 0) e = hook(g, c->fence[aid], AMD_H_G9_FENCE, aid);
    for (unsigned p = 0; p < NPORTS && e == 0; p++) {
      e = addr_of(g, c->nbio, NBIO_HWIP, aid, S2A[p], &c->s2a[aid][p]);
      if (e == 0) e = hook(g, c->s2a[aid][p], AMD_H_G9_S2A, aid);
    }
  }
  if (e == 0) e = addr_of(g, c->nbio, NBIO_HWIP, 0, regBIF_BX0_PCIE_INDEX2, &c->index2);
  if (e == 0) e = addr_of(g, c->nbio, NBIO_HWIP, 0, regBIF_BX0_PCIE_INDEX2_HI, &c->index2_hi);
  if (e == 0) e = addr_of(g, c->nbio, NBIO_HWIP, 0, regBIF_BX0_PCIE_DATA2, &c->data2);
  if (e == 0) e = addr_of(g, c->nbio, NBIO_HWIP, 0, regDOORBELL0_CTRL_ENTRY_1, &c->db_entry1);
  if (e == 0) e = hook(g, c->data2, AMD_H_G9_PCIE_DATA2, 0);
  for (int r = 0; r < S_N && e == 0; r++) e = addr_of(g, c->sdma, SDMA0_HWIP, 0, SNAMES[r], &c->s[r]);
  if (e == 0) e = hook(g, c->s[S_RB_CNTL], AMD_H_G9_SDMA_RB_CNTL, 0);
  if (e == 0)
    e = fld(g, c->nbio, XCC_DOORBELL_FENCE__SHUB_SLV_MODE, &c->slv_mode) |
        fld(g, c->gc, CP_HQD_PQ_CONTROL__QUEUE_FULL_EN, &c->queue_full) |
        fld(g, c->gc, CP_HQD_PQ_CONTROL__SLOT_BASED_WPTR, &c->slot_wptr) |
        fld(g, c->sdma, SDMA_CNTL__TRAP_ENABLE, &c->sdma_trap) |
        fld(g, c->sdma, SDMA_CNTL__UTC_L1_ENABLE, &c->sdma_utc) |
        fld(g, c->sdma, SDMA_GFX_DOORBELL__ENABLE, &c->sdma_db_en) |
        fld(g, c->sdma, SDMA_GFX_RB_CNTL__RB_SIZE, &c->sdma_rb_size) |
        fld(g, c->nbio, DOORBELL0_CTRL_ENTRY_1__BIF_DOORBELL1_RANGE_SIZE_ENTRY, &c->db1_size) |
        fld(g, c->nbio, DOORBELL0_CTRL_ENTRY_1__BIF_DOORBELL1_RANGE_OFFSET_ENTRY, &c->db1_off);
  field h1, h2;
  if (e == 0)
    e = fld(g, c->gc, CP_MEC_CNTL__MEC_ME1_HALT, &h1) | fld(g, c->gc, CP_MEC_CNTL__MEC_ME2_HALT, &h2);
  c->mec_halted = e == 0 ? h1.mask | h2.mask : 0;
  if (e != 0) {
    amd_fail(g, "MI300 model: setup failed");
    mock_shm_free(c);
    return -1;
  }
  G9[slot] = c;
  return 0;
}

void amd_gfx9_free(const mock_amd *g) {
  for (int i = 0; i < MAX_GPUS; i++)
    if (G9[i] && G9[i]->g == g) mock_shm_free(G9[i]), G9[i] = NULL;
}

void amd_gfx9_reset(mock_amd *g) {
  g9 *c = g9_of(g);
  if (!c) return;
  memset(c->hqd, 0, sizeof(c->hqd));
  memset(&c->rb, 0, sizeof(c->rb));
  memset(c->s2a_val, 0, sizeof(c->s2a_val));
  memset(c->fence_val, 0, sizeof(c->fence_val));
  memset(c->fence_written, 0, sizeof(c->fence_written));
  c->via_pcie = false;
  for (unsigned k = 0; k < c->nxcc; k++) amd_set(g, c->x[k][X_MEC_CNTL], c->mec_halted);
}

static uint32_t get_f(uint32_t v, field f) { return (v & f.mask) >> f.shift; }
static uint64_t pair(const mock_amd *g, uint32_t lo, uint32_t hi) {
  return (uint64_t)amd_get(g, hi) << 32 | amd_get(g, lo);
}

/* PCIE_INDEX2(_HI) -> absolute dword of the addressed AID: bit 34 selects AID (bits 32..33), else AID 0. The same NBIO
 * segment offset on that AID's NBIO instance. */
static bool pcie_target(mock_amd *g, g9 *c, uint32_t *out, unsigned *aid_out) {
  uint64_t a = (uint64_t)amd_get(g, c->index2_hi) << 32 | amd_get(g, c->index2);
  unsigned aid = (a >> 34 & 1) ? (unsigned)(a >> 32 & 3) : 0;
  uint32_t dw = (uint32_t)(a & 0xffffffffu) / 4;
  if ((a & 3) || (a >> 35) || aid >= c->naid) {
    amd_fail(g, "PCIE_INDEX2 address 0x%" PRIx64 " is unaligned or names no AID (%u AIDs)", a, c->naid);
    return false;
  }
  *aid_out = aid;
  if (aid == 0) {
    *out = dw;
    return true;
  }
  const struct bg_am_ip *nb = &g->disc.ip[NBIO_HWIP];
  int seg = -1;
  for (unsigned s = 0; s < nb->nsegs[0]; s++)
    if (nb->bases[0][s] <= dw && (seg < 0 || nb->bases[0][s] > nb->bases[0][seg])) seg = (int)s;
  if (seg < 0 || (unsigned)seg >= nb->nsegs[aid]) {
    amd_fail(g, "PCIE_INDEX2 address 0x%" PRIx64 " is in no NBIO segment", a);
    return false;
  }
  *out = nb->bases[aid][seg] + (dw - nb->bases[0][seg]);
  return true;
}

static unsigned sel_queue(const mock_amd *g, const g9 *c, unsigned k, uint32_t *sel) {
  *sel = amd_get(g, c->x[k][X_GRBM]);
  return (*sel >> 8) & 7u;
}

static bool sel_ok(uint32_t sel) { return (sel & 3u) == 0 && ((sel >> 2) & 3u) == 1 && ((sel >> 4) & 0xfu) == 0; }

#define NEED AMD_NEED

/* 0 when XCC k's selected queue may be activated, else the failures are recorded. */
static int hqd_check(mock_amd *g, g9 *c, unsigned k, uint32_t sel) {
  int bad = 0;
  const uint32_t *x = c->x[k];
  unsigned xcc = c->xcc_inst[k];
  NEED(sel_ok(sel) && ((sel >> 8) & 7u) < 2,
       "XCC %u: CP_HQD_ACTIVE=1 with GRBM_GFX_CNTL 0x%x (modelled: me1 pipe0 queue 0/1 vmid0)", xcc, sel);
  NEED(mock_amd_fw_loaded(g, BG_GFX_FW_CP_MEC) && mock_amd_fw_loaded(g, BG_GFX_FW_REG_LIST),
       "XCC %u: CP_HQD_ACTIVE=1 before the PSP loaded the MEC firmware and the RLC register list (REG_LIST)", xcc);
  NEED(amd_get(g, x[X_MEC_CNTL]) == 0, "XCC %u: CP_HQD_ACTIVE=1 with CP_MEC_CNTL 0x%x (MEC halted or a pipe in reset)",
       xcc, amd_get(g, x[X_MEC_CNTL]));
  for (unsigned aid = 1; aid < c->naid; aid++)
    NEED(c->fence_written[aid] && get_f(c->fence_val[aid], c->slv_mode),
         "XCC %u: CP_HQD_ACTIVE=1 before SOC init set XCC_DOORBELL_FENCE.SHUB_SLV_MODE on AID %u", xcc, aid);
  NEED(c->nxcc < 2 || g->spatial,
       "XCC %u: CP_HQD_ACTIVE=1 before the PSP spatial partition (SRIOV_SPATIAL_PART) of this %u-XCC part", xcc, c->nxcc);
  uint64_t mqd = pair(g, x[X_MQD_LO], x[X_MQD_HI]);
  const uint8_t *m = amd_vram_at(g, mqd, 2048);
  NEED(mqd && !(mqd & 3) && m, "XCC %u: CP_HQD_ACTIVE=1 with CP_MQD_BASE_ADDR 0x%" PRIx64 " not an MQD in VRAM", xcc, mqd);
  uint32_t w[512];
  memset(w, 0, sizeof(w));
  if (m) {
    memcpy(w, m, sizeof(w));
    NEED(w[0] == 0xC0310800u, "XCC %u: MQD at 0x%" PRIx64 " has header 0x%x, expected 0xC0310800", xcc, mqd, w[0]);
    uint32_t n = x[X_WPTR_REG_HI] - x[X_MQD_LO] + 1;
    for (uint32_t i = 0; i < n && i < 512 - 0x80; i++) {
      uint32_t a = x[X_MQD_LO] + i;
      if (a == x[X_ACTIVE]) continue;
      if (amd_get(g, a) != w[0x80 + i]) {
        amd_fail(g, "XCC %u: CP_HQD_ACTIVE=1: register 0x%x = 0x%x differs from MQD dword 0x%x = 0x%x", xcc, a,
                 amd_get(g, a), 0x80 + i, w[0x80 + i]);
        bad = 1;
        break;
      }
    }
  }
  uint32_t pqc = amd_get(g, x[X_PQ_CONTROL]);
  uint64_t pq = pair(g, x[X_PQ_BASE], x[X_PQ_BASE_HI]) << 8, ring = 4ull << ((pqc & 0x3f) + 1);
  NEED(pqc != 0 && pq && amd_vram_at(g, pq, ring), "XCC %u: CP_HQD_ACTIVE=1 with PQ_BASE 0x%" PRIx64 " / PQ_CONTROL 0x%x:"
       " not a ring in VRAM", xcc, pq, pqc);
  NEED(pair(g, x[X_RPTR_LO], x[X_RPTR_HI]) && pair(g, x[X_WPTR_LO], x[X_WPTR_HI]),
       "XCC %u: CP_HQD_ACTIVE=1 without PQ_RPTR_REPORT_ADDR / PQ_WPTR_POLL_ADDR", xcc);
  NEED(amd_get(g, x[X_DOORBELL]) & (1u << 30), "XCC %u: CP_HQD_ACTIVE=1 with doorbell_en clear", xcc);
  if (amd_get(g, x[X_AQL_CONTROL]) & 1) {
    NEED(get_f(pqc, c->queue_full) == 1 && get_f(pqc, c->slot_wptr) == 2,
         "XCC %u: AQL queue with PQ_CONTROL 0x%x: needs QUEUE_FULL_EN and SLOT_BASED_WPTR = 2", xcc, pqc);
    if (c->nxcc > 1)
      NEED(w[39] == k && w[226] == 0x1000, "XCC %u: multi-XCC AQL MQD with compute_current_logic_xcc_id %u (expected %u)"
           " and cp_mqd_stride_size 0x%x (expected 0x1000)", xcc, w[39], k, w[226]);
  }
  return bad;
}

static void hqd_activate(mock_amd *g, g9 *c, unsigned k, unsigned q) {
  const uint32_t *x = c->x[k];
  mock_amd_hqd9 *h = &c->hqd[k][q];
  uint64_t mqd = pair(g, x[X_MQD_LO], x[X_MQD_HI]);
  const uint8_t *m = amd_vram_at(g, mqd, 2048);
  h->q.active = true;
  h->q.nactivate++;
  h->q.mqd = mqd;
  h->q.pq_base = pair(g, x[X_PQ_BASE], x[X_PQ_BASE_HI]) << 8;
  h->q.rptr_report = pair(g, x[X_RPTR_LO], x[X_RPTR_HI]);
  h->q.wptr_poll = pair(g, x[X_WPTR_LO], x[X_WPTR_HI]);
  h->q.eop_base = pair(g, x[X_EOP_LO], x[X_EOP_HI]) << 8;
  h->q.pq_control = amd_get(g, x[X_PQ_CONTROL]);
  h->q.doorbell_control = amd_get(g, x[X_DOORBELL]);
  h->q.eop_control = amd_get(g, x[X_EOP_CONTROL]);
  h->q.persistent_state = amd_get(g, x[X_PERSISTENT]);
  h->q.ib_control = amd_get(g, x[X_IB_CONTROL]);
  h->q.mqd_control = amd_get(g, x[X_MQD_CONTROL]);
  h->aql = amd_get(g, x[X_AQL_CONTROL]) & 1;
  if (m) memcpy(&h->xcc_id, m + 39 * 4, 4), memcpy(&h->tg_chunk, m + 41 * 4, 4), memcpy(&h->stride, m + 226 * 4, 4);
}

static int rb_check(mock_amd *g, g9 *c, uint32_t v) {
  int bad = 0;
  uint64_t base = pair(g, c->s[S_BASE], c->s[S_BASE_HI]) << 8, size = 4ull << get_f(v, c->sdma_rb_size);
  uint32_t cntl = amd_get(g, c->s[S_CNTL]), db1 = amd_get(g, c->db_entry1);
  NEED(mock_amd_fw_loaded(g, BG_GFX_FW_SDMA0), "SDMA_GFX_RB_CNTL enable before the PSP loaded the SDMA firmware");
  NEED(get_f(cntl, c->sdma_trap) && get_f(cntl, c->sdma_utc),
       "SDMA_GFX_RB_CNTL enable with SDMA_CNTL 0x%x (trap_enable and utc_l1_enable needed)", cntl);
  NEED(get_f(db1, c->db1_size) == 20 && get_f(db1, c->db1_off) == 0x200 && (c->s2a_val[0][1] & 1),
       "SDMA_GFX_RB_CNTL enable without the AID 0 doorbell routing (DOORBELL0_CTRL_ENTRY_1 0x%x, S2A port 1 0x%x)", db1,
       c->s2a_val[0][1]);
  NEED(amd_get(g, c->s[S_MINOR]) == 0, "SDMA_GFX_RB_CNTL enable inside MINOR_PTR_UPDATE = 1");
  NEED(base && amd_vram_at(g, base, size), "SDMA_GFX_RB_CNTL 0x%x enable with RB_BASE 0x%" PRIx64 ": not a ring of 0x%"
       PRIx64 " bytes in VRAM", v, base, size);
  NEED(pair(g, c->s[S_RPTR_LO], c->s[S_RPTR_HI]) && pair(g, c->s[S_WPTR_LO], c->s[S_WPTR_HI]),
       "SDMA_GFX_RB_CNTL enable without RB_RPTR_ADDR / RB_WPTR_POLL_ADDR");
  NEED(get_f(amd_get(g, c->s[S_DB]), c->sdma_db_en) && amd_get(g, c->s[S_DB_OFF]),
       "SDMA_GFX_RB_CNTL enable without DOORBELL.enable / DOORBELL_OFFSET");
  return bad;
}
#undef NEED

static int index_of(const uint32_t *a, unsigned n, uint32_t addr) {
  for (unsigned i = 0; i < n; i++)
    if (a[i] == addr) return (int)i;
  return -1;
}

static int xcc_of(const g9 *c, int r, uint32_t addr) {
  for (unsigned k = 0; k < c->nxcc; k++)
    if (c->x[k][r] == addr) return (int)k;
  return -1;
}

uint32_t amd_gfx9_read(mock_amd *g, int kind, uint32_t addr) {
  g9 *c = g9_of(g);
  if (!c) return amd_get(g, addr);
  if (kind == AMD_H_G9_PCIE_DATA2) {
    uint32_t t;
    unsigned aid;
    return pcie_target(g, c, &t, &aid) ? mock_amd_rreg(g, t) : 0xffffffffu;
  }
  if (kind == AMD_H_G9_HQD_ACTIVE) {
    int k = xcc_of(c, X_ACTIVE, addr);
    uint32_t sel;
    unsigned q = k < 0 ? 0 : sel_queue(g, c, (unsigned)k, &sel);
    if (k >= 0 && sel_ok(sel) && q < 2) return c->hqd[k][q].q.active ? 1u : 0u;
  }
  return amd_get(g, addr);
}

void amd_gfx9_write(mock_amd *g, int kind, uint32_t addr, uint32_t v) {
  g9 *c = g9_of(g);
  if (!c) {
    amd_set(g, addr, v);
    return;
  }
  switch (kind) {
  case AMD_H_G9_PCIE_DATA2: {
    uint32_t t;
    unsigned aid;
    amd_set(g, addr, v);
    if (!pcie_target(g, c, &t, &aid)) return;
    c->pcie_writes++;
    c->via_pcie = true;
    mock_amd_wreg(g, t, v);
    c->via_pcie = false;
    return;
  }
  case AMD_H_G9_S2A: {
    int aid = -1, port = -1;
    for (unsigned a = 0; a < c->naid && aid < 0; a++)
      if ((port = index_of(c->s2a[a], NPORTS, addr)) >= 0) aid = (int)a;
    if (!c->via_pcie) {
      amd_fail(g, "S2A_DOORBELL_ENTRY_%d_CTRL (AID %d, 0x%x) = 0x%x written directly: NBIO 7.9 takes the doorbell routing "
               "only through BIF_BX0_PCIE_INDEX2/PCIE_DATA2 (the RDNA doorbell_enable)", port, aid, addr, v);
      return;
    }
    amd_set(g, addr, v);
    if (aid >= 0) c->s2a_val[aid][port] = v;
    return;
  }
  case AMD_H_G9_FENCE: {
    int aid = index_of(c->fence, c->naid, addr);
    amd_set(g, addr, v);
    if (aid > 0 && !c->via_pcie) {
      amd_fail(g, "XCC_DOORBELL_FENCE of AID %d written directly (only AID 0 is; other AIDs through PCIE_DATA2)", aid);
      return;
    }
    if (aid >= 0) c->fence_val[aid] = v, c->fence_written[aid] = true;
    return;
  }
  case AMD_H_G9_HQD_ACTIVE: {
    int k = xcc_of(c, X_ACTIVE, addr);
    uint32_t sel;
    unsigned q = k < 0 ? 0 : sel_queue(g, c, (unsigned)k, &sel);
    if (k < 0) return;
    if (!(v & 1)) {
      amd_set(g, addr, v);
      if (sel_ok(sel) && q < 2) c->hqd[k][q].q.active = false;
      return;
    }
    if (hqd_check(g, c, (unsigned)k, sel)) return; /* refused: stays inactive */
    amd_set(g, addr, 1);
    hqd_activate(g, c, (unsigned)k, q);
    return;
  }
  case AMD_H_G9_HQD_DEQUEUE: {
    int k = xcc_of(c, X_DEQUEUE, addr);
    uint32_t sel;
    unsigned q = k < 0 ? 0 : sel_queue(g, c, (unsigned)k, &sel);
    amd_set(g, addr, v);
    if (k >= 0 && v && sel_ok(sel) && q < 2 && c->hqd[k][q].q.active) {
      c->hqd[k][q].q.active = false;
      c->hqd[k][q].q.ndequeue++;
      amd_set(g, c->x[k][X_ACTIVE], 0);
      amd_set(g, addr, 0); /* drained at once */
    }
    return;
  }
  case AMD_H_G9_SDMA_RB_CNTL:
    amd_sdma_rb_cntl_write(g, &c->rb, &c->s[S_RB_CNTL], addr, v, (v & 1) && rb_check(g, c, v));
    return;
  default: amd_set(g, addr, v); return;
  }
}
