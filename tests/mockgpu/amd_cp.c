/* tests/mockgpu/amd_cp.c: compute HQD and SDMA ring bring-up model (amd_cp.h). Register addresses come from the
 * driver's generated GC tables (am/regs, Linux gc_11_0_0 / gc_12_0_0 offsets) and the device's discovery bases. */
#include "amd_cp.h"

#include <stdlib.h>
#include <string.h>

#include "am/am_regs.h"
#include "amd_gfx9.h"
#include "amd_engine.h"
#include "amd_internal.h"
#include "amd_sdma_exec.h"
#include "mock_shm.h"

enum {
  C_GRBM, C_MEC_CNTL, C_MQD_LO, C_MQD_HI, C_PQ_BASE, C_PQ_BASE_HI, C_PQ_CONTROL, C_RPTR_LO, C_RPTR_HI, C_WPTR_LO,
  C_WPTR_HI, C_DOORBELL, C_EOP_LO, C_EOP_HI, C_EOP_CONTROL, C_PERSISTENT, C_IB_CONTROL, C_MQD_CONTROL, C_ACTIVE,
  C_DEQUEUE, C_WPTR_REG_HI,
  S_RB_CNTL, S_BASE, S_BASE_HI, S_RPTR_LO, S_RPTR_HI, S_WPTR_LO, S_WPTR_HI, S_DOORBELL, S_DOORBELL_OFF, S_MINOR,
  S_CNTL, S_ENGINE, G_SOFT_RESET,
  C_N
};
_Static_assert(S_DOORBELL_OFF - S_RB_CNTL == AMD_SDMA_DOORBELL_OFFSET, "S_RB_CNTL.. in amd_sdma_rb_cntl_write's order");
static const enum bg_am_reg_id NAMES[C_N] = {
    regGRBM_GFX_CNTL, regCP_MEC_RS64_CNTL, regCP_MQD_BASE_ADDR, regCP_MQD_BASE_ADDR_HI, regCP_HQD_PQ_BASE,
    regCP_HQD_PQ_BASE_HI, regCP_HQD_PQ_CONTROL, regCP_HQD_PQ_RPTR_REPORT_ADDR, regCP_HQD_PQ_RPTR_REPORT_ADDR_HI,
    regCP_HQD_PQ_WPTR_POLL_ADDR, regCP_HQD_PQ_WPTR_POLL_ADDR_HI, regCP_HQD_PQ_DOORBELL_CONTROL,
    regCP_HQD_EOP_BASE_ADDR, regCP_HQD_EOP_BASE_ADDR_HI, regCP_HQD_EOP_CONTROL, regCP_HQD_PERSISTENT_STATE,
    regCP_HQD_IB_CONTROL, regCP_MQD_CONTROL, regCP_HQD_ACTIVE, regCP_HQD_DEQUEUE_REQUEST,
    regCP_HQD_PQ_WPTR_HI,
    regSDMA0_QUEUE0_RB_CNTL, regSDMA0_QUEUE0_RB_BASE, regSDMA0_QUEUE0_RB_BASE_HI,
    regSDMA0_QUEUE0_RB_RPTR_ADDR_LO, regSDMA0_QUEUE0_RB_RPTR_ADDR_HI, regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO,
    regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI, regSDMA0_QUEUE0_DOORBELL, regSDMA0_QUEUE0_DOORBELL_OFFSET,
    regSDMA0_QUEUE0_MINOR_PTR_UPDATE, regSDMA0_CNTL, BG_AM_REG_ID_COUNT /* F32_CNTL or MCU_CNTL */,
    regGRBM_SOFT_RESET,
};

typedef struct amd_cp {
  const mock_amd *g;
  uint32_t a[C_N];
  mock_amd_hqd hqd;
  mock_amd_sdma_rb rb;
  uint32_t soft_reset_sdma0;  /* GRBM_SOFT_RESET.SOFT_RESET_SDMA0 mask */
  unsigned stuck_dequeues;    /* fault injection: dequeue requests still to be ignored (mock_amd_inject_hqd_stuck) */
} amd_cp;

#define MAX_GPUS 16
static amd_cp *CPS[MAX_GPUS]; /* the model is single-threaded, like the tree */

static amd_cp *cp_of(const mock_amd *g) {
  for (int i = 0; i < MAX_GPUS; i++)
    if (CPS[i] && CPS[i]->g == g) return CPS[i];
  return NULL;
}

const mock_amd_hqd *mock_amd_cp_hqd(const mock_amd *g) {
  const amd_cp *c = cp_of(g);
  return c ? &c->hqd : NULL;
}
int mock_amd_inject_hqd_stuck(mock_amd *g, unsigned count) {
  amd_cp *c = cp_of(g);
  if (!c) return -1;
  mock_shm_lock(&g->lock);
  c->stuck_dequeues += count;
  pthread_mutex_unlock(&g->lock);
  return 0;
}

const mock_amd_sdma_rb *mock_amd_sdma_ring(const mock_amd *g) {
  const amd_cp *c = cp_of(g);
  return c ? &c->rb : NULL;
}

int amd_cp_hooks(mock_amd *g, amd_hook_fn hook) {
  if (g->ip.gc.maj == 9) return amd_gfx9_hooks(g, hook); /* MI300: amd_gfx9.c */
  const char *tab = g->ip.gc.maj == 12 ? "gc_12_0_0" : g->ip.gc.maj == 11 ? "gc_11_0_0" : NULL;
  if (!tab) return 0;
  const struct bg_am_regtab *t = bg_am_regtab_by_name(tab);
  amd_cp *c = mock_shm_calloc(1, sizeof(*c));
  int slot = -1;
  for (int i = 0; i < MAX_GPUS && slot < 0; i++)
    if (!CPS[i]) slot = i;
  if (!t || !c || slot < 0) {
    mock_shm_free(c);
    amd_fail(g, "CP model: no table %s or no memory/slot", tab);
    return -1;
  }
  c->g = g;
  for (int i = 0; i < C_N; i++) {
    enum bg_am_reg_id n = i == S_ENGINE ? (g->ip.sdma0.maj >= 7 ? regSDMA0_MCU_CNTL : regSDMA0_F32_CNTL) : NAMES[i];
    if (bg_am_reg_abs_id(&g->disc, GC_HWIP, 0, t, n, &c->a[i]) < 0) {
      amd_fail(g, "CP model: register %s not found in %s", bg_am_reg_id_name(n), tab);
      mock_shm_free(c);
      return -1;
    }
  }
  unsigned sh;
  const struct bg_am_reg *sr = bg_am_reg_find(t, regGRBM_SOFT_RESET);
  if (!sr || bg_am_reg_field(sr, GRBM_SOFT_RESET__SOFT_RESET_SDMA0, &sh, &c->soft_reset_sdma0) < 0) {
    amd_fail(g, "CP model: GRBM_SOFT_RESET.SOFT_RESET_SDMA0 not in %s", tab);
    free(c);
    return -1;
  }
  CPS[slot] = c;
  uint32_t fault_cntl = 0;
  int e = bg_am_reg_abs_id(&g->disc, GC_HWIP, 0, t, regGCVM_L2_PROTECTION_FAULT_CNTL, &fault_cntl);
  e |= hook(g, fault_cntl, AMD_H_VM_FAULT_CNTL, 0);
  e |= hook(g, c->a[C_ACTIVE], AMD_H_CP_HQD_ACTIVE, 0);
  e |= hook(g, c->a[C_DEQUEUE], AMD_H_CP_HQD_DEQUEUE, 0);
  e |= hook(g, c->a[S_RB_CNTL], AMD_H_SDMA_RB_CNTL, 0);
  e |= hook(g, c->a[G_SOFT_RESET], AMD_H_GRBM_SOFT_RESET, 0);
  return e;
}

void amd_cp_free(const mock_amd *g) {
  amd_gfx9_free(g);
  for (int i = 0; i < MAX_GPUS; i++)
    if (CPS[i] && CPS[i]->g == g) mock_shm_free(CPS[i]), CPS[i] = NULL;
}

void amd_cp_reset(mock_amd *g) {
  amd_gfx9_reset(g);
  amd_cp *c = cp_of(g);
  if (!c) return;
  memset(&c->hqd, 0, sizeof(c->hqd));
  memset(&c->rb, 0, sizeof(c->rb));
}

uint32_t amd_cp_read(mock_amd *g, int kind, uint32_t addr) {
  if (kind >= AMD_H_G9_FIRST) return amd_gfx9_read(g, kind, addr);
  /* A dequeued HQD stays active until its engine has left the packet it was executing (the waves of a dispatch
   * are killed, a wait gives up): Linux gfx_v11_0_reset_kcq polls CP_HQD_ACTIVE for it. */
  if (kind == AMD_H_CP_HQD_ACTIVE) return amd_get(g, addr) | (amd_engine_busy(g, "CP") ? 1u : 0u);
  return amd_get(g, addr);
}

static uint64_t pair(const mock_amd *g, const amd_cp *c, int lo, int hi) {
  return (uint64_t)amd_get(g, c->a[hi]) << 32 | amd_get(g, c->a[lo]);
}

/* 0 when the HQD may be activated, else the failures are recorded. */
static int hqd_check(mock_amd *g, amd_cp *c) {
  int bad = 0;
#define NEED AMD_NEED
  uint32_t sel = amd_get(g, c->a[C_GRBM]), mec = amd_get(g, c->a[C_MEC_CNTL]);
  NEED(sel == 0x4, "CP_HQD_ACTIVE=1 with GRBM_GFX_CNTL 0x%x (only me1 pipe0 queue0 vmid0 = 0x4 is modelled)", sel);
  NEED(g->autoloaded, "CP_HQD_ACTIVE=1 before the RLC autoload (PSP AUTOLOAD_RLC)");
  NEED(!c->hqd.active, "CP_HQD_ACTIVE=1 on an active HQD: no CP_HQD_DEQUEUE_REQUEST before its MQD was loaded again "
       "(Linux gfx_v11_0_reset_kcq)");
  NEED((mec & (1u << 16)) == 0 && (mec & (1u << 26)) && (mec & (1u << 30)) == 0,
       "CP_HQD_ACTIVE=1 with CP_MEC_RS64_CNTL 0x%x (need pipe0 out of reset, active, MEC not halted)", mec);
  uint64_t mqd = pair(g, c, C_MQD_LO, C_MQD_HI);
  const uint8_t *m = amd_vram_at(g, mqd, 2048);
  NEED(mqd && !(mqd & 3) && m, "CP_HQD_ACTIVE=1 with CP_MQD_BASE_ADDR 0x%llx not an MQD in VRAM", (unsigned long long)mqd);
  if (m) {
    uint32_t w[512];
    memcpy(w, m, sizeof(w));
    NEED(w[0] == 0xC0310800u, "CP_HQD_ACTIVE=1: MQD at 0x%llx has header 0x%x, expected 0xC0310800",
         (unsigned long long)mqd, w[0]);
    uint32_t n = c->a[C_WPTR_REG_HI] - c->a[C_MQD_LO] + 1;
    for (uint32_t i = 0; i < n && i < 512 - 0x80; i++) {
      uint32_t a = c->a[C_MQD_LO] + i;
      if (a == c->a[C_ACTIVE]) continue;
      if (amd_get(g, a) != w[0x80 + i]) {
        amd_fail(g, "CP_HQD_ACTIVE=1: register 0x%x = 0x%x differs from MQD dword 0x%x = 0x%x", a, amd_get(g, a),
                 0x80 + i, w[0x80 + i]);
        bad = 1;
        break;
      }
    }
  }
  uint32_t pqc = amd_get(g, c->a[C_PQ_CONTROL]);
  uint64_t pq = pair(g, c, C_PQ_BASE, C_PQ_BASE_HI) << 8, ring = 4ull << ((pqc & 0x3f) + 1);
  NEED(pqc != 0 && pq && amd_vram_at(g, pq, ring),
       "CP_HQD_ACTIVE=1 with PQ_BASE 0x%llx / PQ_CONTROL 0x%x: not a ring of 0x%llx bytes in VRAM",
       (unsigned long long)pq, pqc, (unsigned long long)ring);
  NEED(pair(g, c, C_RPTR_LO, C_RPTR_HI) != 0, "CP_HQD_ACTIVE=1 without CP_HQD_PQ_RPTR_REPORT_ADDR");
  NEED(pair(g, c, C_WPTR_LO, C_WPTR_HI) != 0, "CP_HQD_ACTIVE=1 without CP_HQD_PQ_WPTR_POLL_ADDR");
  NEED(amd_get(g, c->a[C_DOORBELL]) & (1u << 30), "CP_HQD_ACTIVE=1 with PQ_DOORBELL_CONTROL 0x%x: doorbell_en clear",
       amd_get(g, c->a[C_DOORBELL]));
  return bad;
}

static int rb_check(mock_amd *g, amd_cp *c, uint32_t v) {
  int bad = 0;
  uint64_t base = pair(g, c, S_BASE, S_BASE_HI) << 8, size = 4ull << ((v >> 1) & 0x1f);
  NEED(g->autoloaded, "SDMA0_QUEUE0_RB_CNTL enable before the RLC autoload (SDMA firmware not running)");
  NEED(amd_get(g, c->a[S_CNTL]) & 1, "SDMA0_QUEUE0_RB_CNTL enable with SDMA0_CNTL.trap_enable clear (engine not set up)");
  NEED((amd_get(g, c->a[S_ENGINE]) & 1) == 0, "SDMA0_QUEUE0_RB_CNTL enable with the SDMA engine halted");
  NEED(amd_get(g, c->a[S_MINOR]) == 0, "SDMA0_QUEUE0_RB_CNTL enable inside MINOR_PTR_UPDATE = 1");
  NEED(base && amd_vram_at(g, base, size), "SDMA0_QUEUE0_RB_CNTL 0x%x enable with RB_BASE 0x%llx: not a ring of 0x%llx "
       "bytes in VRAM", v, (unsigned long long)base, (unsigned long long)size);
  NEED(pair(g, c, S_RPTR_LO, S_RPTR_HI) != 0, "SDMA0_QUEUE0_RB_CNTL enable without RB_RPTR_ADDR");
  NEED(pair(g, c, S_WPTR_LO, S_WPTR_HI) != 0, "SDMA0_QUEUE0_RB_CNTL enable without RB_WPTR_POLL_ADDR");
  NEED((amd_get(g, c->a[S_DOORBELL]) & (1u << 28)) && amd_get(g, c->a[S_DOORBELL_OFF]) != 0,
       "SDMA0_QUEUE0_RB_CNTL enable without DOORBELL.enable / DOORBELL_OFFSET");
#undef NEED
  return bad;
}

void amd_cp_write(mock_amd *g, int kind, uint32_t addr, uint32_t v) {
  if (kind >= AMD_H_G9_FIRST) {
    amd_gfx9_write(g, kind, addr, v);
    return;
  }
  amd_cp *c = cp_of(g);
  if (!c) {
    amd_set(g, addr, v);
    return;
  }
  switch (kind) {
  case AMD_H_CP_HQD_ACTIVE:
    if (!(v & 1)) {
      if (c->hqd.active) { /* the MQD register copy writes this dword too: an active queue must be dequeued first */
        amd_fail(g, "CP_HQD_ACTIVE=0 written on an active HQD (dequeue it with CP_HQD_DEQUEUE_REQUEST, Linux "
                 "gfx_v11_0_reset_kcq)");
        return;
      }
      amd_set(g, addr, v);
      return;
    }
    if (hqd_check(g, c)) return; /* refused: stays inactive */
    amd_set(g, addr, 1);
    c->hqd.active = true;
    c->hqd.nactivate++;
    c->hqd.mqd = pair(g, c, C_MQD_LO, C_MQD_HI);
    c->hqd.pq_base = pair(g, c, C_PQ_BASE, C_PQ_BASE_HI) << 8;
    c->hqd.rptr_report = pair(g, c, C_RPTR_LO, C_RPTR_HI);
    c->hqd.wptr_poll = pair(g, c, C_WPTR_LO, C_WPTR_HI);
    c->hqd.eop_base = pair(g, c, C_EOP_LO, C_EOP_HI) << 8;
    c->hqd.pq_control = amd_get(g, c->a[C_PQ_CONTROL]);
    c->hqd.doorbell_control = amd_get(g, c->a[C_DOORBELL]);
    c->hqd.eop_control = amd_get(g, c->a[C_EOP_CONTROL]);
    c->hqd.persistent_state = amd_get(g, c->a[C_PERSISTENT]);
    c->hqd.ib_control = amd_get(g, c->a[C_IB_CONTROL]);
    c->hqd.mqd_control = amd_get(g, c->a[C_MQD_CONTROL]);
    return;
  case AMD_H_CP_HQD_DEQUEUE:
    amd_set(g, addr, v);
    if (v && c->stuck_dequeues) { /* injected: the CP never acts on it, the HQD stays active (only a reset helps) */
      c->stuck_dequeues--;
      return;
    }
    if (v && (amd_get(g, c->a[C_ACTIVE]) & 1)) {
      amd_set(g, c->a[C_ACTIVE], 0); /* drained at once */
      amd_set(g, addr, 0);
      c->hqd.active = false;
      c->hqd.ndequeue++;
    }
    return;
  case AMD_H_VM_FAULT_CNTL:
    /* CLEAR_PROTECTION_FAULT_STATUS_ADDR (bit 0; Linux gmc_v11_0_process_interrupt writes it after reading the
     * status): the latched status clears, so the next VM fault raises an interrupt again. */
    amd_set(g, addr, v & ~1u);
    if (v & 1) amd_set(g, g->r.gc_fault_status, 0);
    return;
  case AMD_H_SDMA_RB_CNTL:
    amd_sdma_rb_cntl_write(g, &c->rb, &c->a[S_RB_CNTL], addr, v, (v & 1) && rb_check(g, c, v));
    return;
  case AMD_H_GRBM_SOFT_RESET: /* the SDMA0 bit resets the SDMA engine (amd_sdma_exec.h); CP/CPC bits: stored */
    amd_set(g, addr, v);
    if (v & c->soft_reset_sdma0) amd_sdma_soft_reset(g, amd_get(g, c->a[S_ENGINE]) & 1);
    return;
  default: amd_set(g, addr, v); return;
  }
}

static uint64_t reg_pair(const mock_amd *g, uint32_t lo, uint32_t hi) {
  return (uint64_t)amd_get(g, hi) << 32 | amd_get(g, lo);
}

void amd_sdma_rb_cntl_write(mock_amd *g, mock_amd_sdma_rb *rb, const uint32_t *regs, uint32_t addr, uint32_t v,
                            bool refused) {
  if (refused) {
    amd_set(g, addr, v & ~1u); /* refused: ring stays disabled */
    rb->enabled = false;
    return;
  }
  amd_set(g, addr, v);
  rb->enabled = v & 1;
  if (!(v & 1)) return;
  rb->nenable++;
  rb->rb_cntl = v;
  rb->base = reg_pair(g, regs[AMD_SDMA_RB_BASE], regs[AMD_SDMA_RB_BASE_HI]) << 8;
  rb->rptr_addr = reg_pair(g, regs[AMD_SDMA_RB_RPTR_LO], regs[AMD_SDMA_RB_RPTR_HI]);
  rb->wptr_poll = reg_pair(g, regs[AMD_SDMA_RB_WPTR_LO], regs[AMD_SDMA_RB_WPTR_HI]);
  rb->doorbell = amd_get(g, regs[AMD_SDMA_DOORBELL]);
  rb->doorbell_offset = amd_get(g, regs[AMD_SDMA_DOORBELL_OFFSET]);
}
