/* tests/mockgpu/rdna3/rdna3_dispatch.c: a DISPATCH_DIRECT as the SPI runs it: every workgroup of
 * the grid in order, its waves interleaved at s_barrier, with the initial register state of
 * AMDGPUUsage "Initial Kernel Execution State": user SGPRs, then the enabled workgroup ids X/Y/Z,
 * TG_SIZE and the scratch wave offset; v0 = packed work-item ids; EXEC = the wave's live lanes. */
#include "rdna3_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* COMPUTE_PGM_RSRC2 fields (gc_11_0_0_sh_mask.h). */
#define RSRC2_SCRATCH_EN(r) ((r) & 1)
#define RSRC2_USER_SGPR(r) (((r) >> 1) & 0x1f)
#define RSRC2_TGID_EN(r, i) (((r) >> (7 + (i))) & 1)
#define RSRC2_TG_SIZE_EN(r) (((r) >> 10) & 1)
#define RSRC2_TIDIG_COMP_CNT(r) (((r) >> 11) & 3)
#define RSRC2_LDS_SIZE(r) (((r) >> 15) & 0x1ff)
#define LDS_GRANULE 512           /* bytes per RSRC2.LDS_SIZE unit on gfx11 */
/* COMPUTE_PGM_RSRC1 fields: VGPRS [5:0] in blocks of 8 (wave32), SGPRS [9:6] reserved (0) on gfx10+. gfx12 keeps
 * both (AMDGPUUsage: the wave32 VGPR encoding granule is 8 on GFX10-GFX12; bits 21/23, DX10_CLAMP/IEEE_MODE on
 * gfx11, are WG_RR_EN/DISABLE_PERF on gfx12, which this model does not read), and LDS_SIZE keeps its 512-byte encoding unit (AMDGPUUsage "LDS_SIZE":
 * GFX10.3, GFX11 and GFX12.0 encode in 512-byte units). */
#define RSRC1_VGPRS(r) ((r) & 0x3f)
#define RSRC1_SGPRS(r) (((r) >> 6) & 0xf)
#define VGPR_GRANULE 8
#define CS_W32_EN (1u << 15)      /* COMPUTE_DISPATCH_INITIATOR */
#define TMPRING_WAVESIZE(t) (((t) >> 12) & 0x7fff)  /* in 64-dword units */

/* gfx12 has architected SGPRs (LLVM AMDGPUUsage "Initial Kernel Execution State", FeatureArchitectedSGPRs): the
 * workgroup ids are also in TTMP9 (X) and TTMP7 (Y [15:0], Z [31:16]), where LLVM's gfx12 code reads them. */
enum { TTMP7 = 115, TTMP9 = 117 };

static void init_wave(const rdna3_dispatch *d, rdna3_wave *w, const uint32_t wg[3], unsigned wave,
                      unsigned nwaves, unsigned nthreads) {
  memset(w, 0, offsetof(rdna3_wave, pq));  /* barrier_signaled too */  /* the pending-load entries are written before use */
  rdna3_wave_reset_pending(w);
  w->pc = d->pgm_addr;
  w->wave = wave;
  memcpy(w->wg, wg, sizeof w->wg);
  uint32_t r2 = d->pgm_rsrc2;
  unsigned s = 0, nuser = RSRC2_USER_SGPR(r2);
  for (; s < nuser; s++) w->s[s] = s < 16 ? d->user_data[s] : 0;  /* only 16 USER_DATA registers */
  for (unsigned i = 0; i < 3; i++)
    if (RSRC2_TGID_EN(r2, i)) w->s[s++] = wg[i];
  if (RSRC2_TG_SIZE_EN(r2)) w->s[s++] = nwaves & 0x3f;
  if (d->gen == RDNA3_GEN_GFX12) w->s[TTMP9] = wg[0], w->s[TTMP7] = (wg[1] & 0xffff) | wg[2] << 16;
  if (RSRC2_SCRATCH_EN(r2)) w->s[s++] = 0;  /* scratch addresses are relative to the wave here */
  unsigned cnt = RSRC2_TIDIG_COMP_CNT(r2), nx = d->num_thread[0], ny = d->num_thread[1];
  uint32_t exec = 0;
  for (unsigned l = 0; l < RDNA3_LANES; l++) {
    unsigned t = wave * RDNA3_LANES + l;
    if (t >= nthreads) break;
    exec |= 1u << l;
    uint32_t x = t % nx, y = (t / nx) % ny, z = t / (nx * ny);
    w->v[0][l] = x | (cnt >= 1 ? y << 10 : 0) | (cnt >= 2 ? z << 20 : 0);
  }
  w->s[RDNA3_EXEC_LO] = exec;
}

/* Run the waves of one workgroup to completion, releasing each barrier once every wave that has
 * not ended waits at it. */
static int run_workgroup(rdna3_ctx *c, rdna3_wave *waves, unsigned n) {
  for (;;) {
    bool all_done = true;
    for (unsigned i = 0; i < n; i++) {
      rdna3_wave *w = &waves[i];
      if (w->done || w->at_barrier) continue;
      c->wave_flat_id = i;  /* one workgroup in flight: its waves use scratch slots 0..n-1 */
      int rc = rdna3_run_wave(c, w);
      if (rc < 0) return -1;
    }
    for (unsigned i = 0; i < n; i++) all_done &= waves[i].done;
    if (all_done) return 0;
    for (unsigned i = 0; i < n; i++) waves[i].at_barrier = false;
  }
}

int rdna3_dispatch_run(const rdna3_dispatch *d, const rdna3_mem *mem, rdna3_report *rep) {
  memset(rep, 0, sizeof *rep);
  if (!(d->initiator & CS_W32_EN)) {
    snprintf(rep->msg, sizeof rep->msg, "rdna3: COMPUTE_DISPATCH_INITIATOR 0x%x lacks CS_W32_EN: only wave32 is emulated",
             d->initiator);
    return -1;
  }
  unsigned nthreads = d->num_thread[0] * d->num_thread[1] * d->num_thread[2];
  if (!nthreads || nthreads > 1024) {
    snprintf(rep->msg, sizeof rep->msg, "rdna3: workgroup size %ux%ux%u is not 1..1024 work-items", d->num_thread[0],
             d->num_thread[1], d->num_thread[2]);
    return -1;
  }
  unsigned nvgpr = (RSRC1_VGPRS(d->pgm_rsrc1) + 1) * VGPR_GRANULE;
  if (nvgpr > RDNA3_NVGPR) {
    snprintf(rep->msg, sizeof rep->msg, "rdna3: COMPUTE_PGM_RSRC1 0x%x grants %u VGPRs (VGPRS %u): a wave32 has at most %u",
             d->pgm_rsrc1, nvgpr, RSRC1_VGPRS(d->pgm_rsrc1), (unsigned)RDNA3_NVGPR);
    return -1;
  }
  if (RSRC1_SGPRS(d->pgm_rsrc1)) {
    snprintf(rep->msg, sizeof rep->msg, "rdna3: COMPUTE_PGM_RSRC1 0x%x has SGPRS %u: reserved on gfx10+, must be 0",
             d->pgm_rsrc1, RSRC1_SGPRS(d->pgm_rsrc1));
    return -1;
  }
  for (unsigned i = 1; i < 3 && d->gen == RDNA3_GEN_GFX12; i++)
    if (d->grid[i] && (uint64_t)d->start[i] + d->grid[i] - 1 > 0xffff) {
      snprintf(rep->msg, sizeof rep->msg, "rdna3: workgroup id %c up to %llu does not fit the 16 bits of TTMP7 (gfx12)",
               "XYZ"[i], (unsigned long long)d->start[i] + d->grid[i] - 1);
      return -1;
    }
  unsigned nwaves = (nthreads + RDNA3_LANES - 1) / RDNA3_LANES;
  rdna3_ctx c = {.isa = rdna3_isa_of(d->gen), .mem = mem, .rep = rep, .budget = d->max_insts ? d->max_insts : 1000000000ull,
                 .lds_size = RSRC2_LDS_SIZE(d->pgm_rsrc2) * LDS_GRANULE, .denorm_mode = (d->pgm_rsrc1 >> 16) & 3,
                 .nvgpr = nvgpr};
  if (d->scratch_base && RSRC2_SCRATCH_EN(d->pgm_rsrc2)) {
    c.scratch_base = d->scratch_base;
    c.scratch_lane_bytes = TMPRING_WAVESIZE(d->tmpring_size) * 256 / RDNA3_LANES;
  }
  rdna3_wave *waves = malloc(sizeof *waves * nwaves);
  c.lds = calloc(1, c.lds_size ? c.lds_size : 1);
  if (!waves || !c.lds) {
    free(waves);
    free(c.lds);
    snprintf(rep->msg, sizeof rep->msg, "rdna3: out of host memory");
    return -1;
  }
  int rc = 0;
  for (uint32_t z = 0; z < d->grid[2] && !rc; z++)
    for (uint32_t y = 0; y < d->grid[1] && !rc; y++)
      for (uint32_t x = 0; x < d->grid[0] && !rc; x++) {
        uint32_t wg[3] = {d->start[0] + x, d->start[1] + y, d->start[2] + z};
        for (unsigned i = 0; i < nwaves; i++) init_wave(d, &waves[i], wg, i, nwaves, nthreads);
        memset(c.lds, 0, c.lds_size);
        rc = run_workgroup(&c, waves, nwaves);
        rep->waves += nwaves;
      }
  rep->insts = c.insts;
  c.st.waves = rep->waves;
  c.st.wave_insts = c.insts;
  rep->stats = c.st;
  free(waves);
  free(c.lds);
  return rc;
}
