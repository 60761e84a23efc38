/* tests/mockgpu/cdna3/cdna3_dispatch.c: one XCC's share of a kernel dispatch as the SPI runs it: the workgroups
 * whose linear id % nxcc == xcc, in order, each one's waves interleaved at s_barrier, with the initial register
 * state of AMDGPUUsage "Initial Kernel Execution State" for gfx942: user SGPRs (RSRC2.USER_SGPR of them), then the
 * enabled workgroup ids X/Y/Z and TG_SIZE; v0 = packed work-item ids (x [9:0], y [19:10], z [29:20]: gfx90a+
 * "packed work-item IDs", per RSRC2.TIDIG_COMP_CNT); EXEC = the wave's live lanes of 64. Architected flat scratch
 * (gfx940+): no scratch SGPRs; scratch instructions address the wave's slot of the dispatch's scratch.
 *
 * Grants (AMDGPUUsage "COMPUTE_PGM_RSRC1/2/3" for GFX90A/GFX942): RSRC1.VGPRS [5:0] grants (VGPRS + 1) * 8
 * registers of the unified VGPR+AGPR file to a wave64; RSRC3.ACCUM_OFFSET [5:0] puts the first AGPR at
 * (ACCUM_OFFSET + 1) * 4; RSRC2.LDS_SIZE [23:15] grants LDS in 128-dword (512-byte) units. */
#include "cdna3_internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RSRC2_SCRATCH_EN(r) ((r) & 1)
#define RSRC2_USER_SGPR(r) (((r) >> 1) & 0x1f)
#define RSRC2_TGID_EN(r, i) (((r) >> (7 + (i))) & 1)
#define RSRC2_TG_SIZE_EN(r) (((r) >> 10) & 1)
#define RSRC2_TIDIG_COMP_CNT(r) (((r) >> 11) & 3)
#define RSRC2_LDS_SIZE(r) (((r) >> 15) & 0x1ff)
#define LDS_GRANULE 512u
#define LDS_MAX 65536u               /* 64 KiB of LDS per CU on MI300 (CDNA3 ISA guide "Local Data Share") */
#define RSRC1_VGPRS(r) ((r) & 0x3f)
#define VGPR_GRANULE 8u
#define RSRC3_ACCUM_OFFSET(r) ((r) & 0x3f)
#define CS_W32_EN (1u << 15)
#define TMPRING_WAVESIZE(t) (((t) >> 12) & 0x1fff)  /* gfx9: in 1 KiB (256-dword) units */
#define TMPRING_WAVESIZE_UNIT 1024u

static void init_wave(const rdna3_dispatch *d, cdna3_wave *w, const uint32_t wg[3], unsigned wave, unsigned nwaves,
                      unsigned nthreads, unsigned nreg) {
  /* Zero the SGPRs, the granted registers and the scalar state: clearing all 512 x 64 would dominate small
   * workgroups' cost; registers beyond the grant are never read (cdna3_reg). */
  memset(w->s, 0, sizeof w->s);
  memset(w->v, 0, nreg * sizeof w->v[0]);
  memset(&w->pc, 0, offsetof(cdna3_wave, pq) - offsetof(cdna3_wave, pc));
  cdna3_wave_reset_pending(w);
  w->pc = d->pgm_addr;
  w->wave = wave;
  /* MODE from RSRC1: FLOAT_MODE [19:12] -> FP_ROUND/FP_DENORM [7:0], DX10_CLAMP [21] -> [8], IEEE_MODE [23] -> [9] */
  uint32_t r1 = d->pgm_rsrc1;
  w->mode = ((r1 >> 12) & 0xff) | ((r1 >> 21) & 1) << 8 | ((r1 >> 23) & 1) << 9;
  memcpy(w->wg, wg, sizeof w->wg);
  uint32_t r2 = d->pgm_rsrc2;
  unsigned s = 0, nuser = RSRC2_USER_SGPR(r2);
  for (; s < nuser; s++) w->s[s] = s < 16 ? d->user_data[s] : 0;
  for (unsigned i = 0; i < 3; i++)
    if (RSRC2_TGID_EN(r2, i)) w->s[s++] = wg[i];
  if (RSRC2_TG_SIZE_EN(r2)) w->s[s++] = nwaves & 0x3f;
  unsigned cnt = RSRC2_TIDIG_COMP_CNT(r2), nx = d->num_thread[0], ny = d->num_thread[1];
  uint64_t exec = 0;
  for (unsigned l = 0; l < CDNA3_LANES; l++) {
    unsigned t = wave * CDNA3_LANES + l;
    if (t >= nthreads) break;
    exec |= 1ull << l;
    uint32_t x = t % nx, y = (t / nx) % ny, z = t / (nx * ny);
    w->v[0][l] = x | (cnt >= 1 ? y << 10 : 0) | (cnt >= 2 ? z << 20 : 0);
  }
  cdna3_set_exec(w, exec);
}

static int run_workgroup(cdna3_ctx *c, cdna3_wave *waves, unsigned n) {
  for (;;) {
    bool all_done = true;
    for (unsigned i = 0; i < n; i++) {
      cdna3_wave *w = &waves[i];
      if (w->done || w->at_barrier) continue;
      c->wave_flat_id = i;
      if (cdna3_run_wave(c, w) < 0) return -1;
    }
    for (unsigned i = 0; i < n; i++) all_done &= waves[i].done;
    if (all_done) return 0;
    for (unsigned i = 0; i < n; i++) waves[i].at_barrier = false;
  }
}

static int bad(rdna3_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(rdna3_report *rep, const char *fmt, ...) {
  char m[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m, sizeof m, fmt, ap);
  va_end(ap);
  snprintf(rep->msg, sizeof rep->msg, "cdna3: %s", m);
  return -1;
}

int cdna3_dispatch_run(const cdna3_dispatch *dd, const rdna3_mem *mem, rdna3_report *rep) {
  memset(rep, 0, sizeof *rep);
  const rdna3_dispatch *d = &dd->regs;
  if (d->initiator & CS_W32_EN)
    return bad(rep, "COMPUTE_DISPATCH_INITIATOR 0x%x has CS_W32_EN: CDNA3 runs wave64 only", d->initiator);
  if (!dd->nxcc || dd->xcc >= dd->nxcc) return bad(rep, "XCC %u of %u: expected 0 <= xcc < nxcc", dd->xcc, dd->nxcc);
  unsigned nthreads = d->num_thread[0] * d->num_thread[1] * d->num_thread[2];
  if (!nthreads || nthreads > 1024)
    return bad(rep, "workgroup size %ux%ux%u is not 1..1024 work-items", d->num_thread[0], d->num_thread[1],
               d->num_thread[2]);
  unsigned nreg = (RSRC1_VGPRS(d->pgm_rsrc1) + 1) * VGPR_GRANULE, acc = (RSRC3_ACCUM_OFFSET(d->pgm_rsrc3) + 1) * 4;
  if (nreg > CDNA3_NREG)
    return bad(rep, "COMPUTE_PGM_RSRC1 0x%x grants %u registers: a wave64 has at most %u", d->pgm_rsrc1, nreg,
               (unsigned)CDNA3_NREG);
  if (acc > nreg)
    return bad(rep, "COMPUTE_PGM_RSRC3.ACCUM_OFFSET puts the AGPRs at %u, beyond the %u registers granted", acc, nreg);
  unsigned lds = RSRC2_LDS_SIZE(d->pgm_rsrc2) * LDS_GRANULE;
  if (lds > LDS_MAX) return bad(rep, "COMPUTE_PGM_RSRC2.LDS_SIZE asks %u bytes of LDS: a CU has %u", lds, LDS_MAX);
  cdna3_ctx c = {.mem = mem, .rep = rep, .budget = d->max_insts ? d->max_insts : 1000000000ull, .lds_size = lds,
                 .nreg = nreg, .accum_offset = acc < nreg ? acc : nreg};
  c.nvgpr = c.accum_offset < CDNA3_NVGPR ? c.accum_offset : CDNA3_NVGPR;
  if (d->scratch_base && RSRC2_SCRATCH_EN(d->pgm_rsrc2)) {
    c.scratch_base = d->scratch_base;
    c.scratch_lane_bytes = TMPRING_WAVESIZE(d->tmpring_size) * TMPRING_WAVESIZE_UNIT / CDNA3_LANES;
  }
  unsigned nwaves = (nthreads + CDNA3_LANES - 1) / CDNA3_LANES;
  cdna3_wave *waves = malloc(sizeof *waves * nwaves);
  c.lds = calloc(1, c.lds_size ? c.lds_size : 1);
  if (!waves || !c.lds) {
    free(waves);
    free(c.lds);
    snprintf(rep->msg, sizeof rep->msg, "cdna3: out of host memory");
    return -1;
  }
  int rc = 0;
  uint64_t linear = 0;
  for (uint32_t z = 0; z < d->grid[2] && !rc; z++)
    for (uint32_t y = 0; y < d->grid[1] && !rc; y++)
      for (uint32_t x = 0; x < d->grid[0] && !rc; x++, linear++) {
        if (linear % dd->nxcc != dd->xcc) continue;
        uint32_t wg[3] = {d->start[0] + x, d->start[1] + y, d->start[2] + z};
        for (unsigned i = 0; i < nwaves; i++) init_wave(d, &waves[i], wg, i, nwaves, nthreads, nreg);
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
