/* tests/mockgpu/nv_pci/nvpci_falcon.c: the GSP (0x110000) and SEC2 (0x840000) falcons of the emulated NVIDIA GPU.
 *
 * Registers (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN; open-gpu-kernel-modules dev_falcon_v4.h / dev_riscv_pri.h; nouveau nvkm/falcon/ga102.c,
 * gm200.c): ENGINE reset (bit 0) halts the core, clears IMEM/DMEM and the BROM registers and leaves HWCFG2
 * mem_scrubbing set for the next two HWCFG2 reads; DMA (DMATRFBASE/BASE1/MOFFS/FBOFFS/CMD) copies 256-byte blocks from
 * VRAM (FBIF_TRANSCFG(0) target local FB, physical; FBIF_CTL allow_phys_no_ctx) into IMEM (cmd bit 4, secure with
 * bits 3:2 = 1) or DMEM; CPUCTL.startcpu (or CPUCTL_ALIAS when CPUCTL.alias_en) runs a model of the HS ucode that
 * checks what was loaded:
 *   GSP falcon: FWSEC-FRTS. IMEM/DMEM must equal the VBIOS's FWSEC_PROD with init_cmd 0x15, the FRTS command for
 *     [VRAM - 2 MiB, +1 MiB) in FB, and the signature the chip's fuse version selects (nouveau
 *     ga102_gsp_fwsec_signature); BOOTVEC and the BROM registers as the descriptor says. Then WPR2 covers the FRTS
 *     region, MAILBOX0 = 0 and NV_PBUS_SW_SCRATCH(0xe) [31:16] = 0 (nouveau nvkm_gsp_fwsec_frts); otherwise a recorded
 *     failure, MAILBOX0 = 0xbad0000n and that error in the scratch.
 *   SEC2: the Booter (ga102_gsp_booter_ctor layout, its production signature patched), which reads the WPR metadata
 *     at MAILBOX0/1 from system memory (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw GspFwWprMeta), needs WPR2 and GSP's RISC-V core selected with the
 *     libos arguments in GSP's MAILBOX0/1, and starts GSP-RM (nvpci_gsp_start): MAILBOX0 = 0, GSP RISCV_CPUCTL
 *     active. */
#include "nvpci_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R(f, o) ((f)->r[(o) / 4])
#define MIB ((uint64_t)1 << 20)

static nvpci_falcon *which(nvpci_gpu *g, uint32_t off, uint32_t *rel) {
  for (int i = 0; i < NVPCI_NFLCN; i++) {
    nvpci_falcon *f = &g->flcn[i];
    if (off >= f->base && off - f->base < 0x1700u) {
      *rel = off - f->base;
      return f;
    }
  }
  return NULL;
}

static bool known(uint32_t rel) {
  switch (rel) {
  case FLCN_MAILBOX0: case FLCN_MAILBOX1: case FLCN_OS: case FLCN_RM: case FLCN_HWCFG2: case FLCN_CPUCTL:
  case FLCN_BOOTVEC: case FLCN_DMACTL: case FLCN_DMATRFBASE: case FLCN_DMATRFMOFFS: case FLCN_DMATRFCMD:
  case FLCN_DMATRFFBOFFS: case FLCN_DMATRFBASE1: case FLCN_CPUCTL_ALIAS: case FLCN_ENGINE: case FLCN_FBIF_TRANSCFG0:
  case FLCN_FBIF_CTL: case FLCN2_MOD_SEL: case FLCN2_BROM_CURR_UCODE_ID: case FLCN2_BROM_ENGIDMASK:
  case FLCN2_BROM_PARAADDR0: case RISCV_CPUCTL: case RISCV_BCR_CTRL:
    return true;
  default:
    return false;
  }
}

static void falcon_reset(nvpci_gpu *g, nvpci_falcon *f) {
  memset(f->r, 0, sizeof(f->r));
  memset(f->imem, 0, sizeof(f->imem)), memset(f->dmem, 0, sizeof(f->dmem));
  memset(f->imem_blk, 0, sizeof(f->imem_blk)), memset(f->dmem_blk, 0, sizeof(f->dmem_blk));
  f->halted = true, f->riscv_active = false;
  f->scrub_reads = 2;
  /* the FSP keeps GSP's RISC-V boot ROM locked down until it hands over (Hopper/Blackwell) */
  f->lockdown = g->c->fsp && f == &g->flcn[NVPCI_FLCN_GSP] && !g->handoff;
}

void nvpci_falcon_cold(nvpci_gpu *g) {
  static const uint32_t bases[NVPCI_NFLCN] = {NVPCI_GSP_BASE, NVPCI_SEC2_BASE};
  static const char *const names[NVPCI_NFLCN] = {"GSP", "SEC2"};
  for (int i = 0; i < NVPCI_NFLCN; i++) {
    nvpci_falcon *f = &g->flcn[i];
    f->base = bases[i], f->name = names[i];
    f->in_reset = false;
    falcon_reset(g, f);
    f->scrub_reads = 0;
    f->dma_blocks = f->starts = 0;
  }
}

bool nvpci_falcon_rd(nvpci_gpu *g, uint32_t off, uint32_t *v, bool fx) {
  uint32_t rel;
  nvpci_falcon *f = which(g, off, &rel);
  if (!f || !known(rel)) return false;
  if (fx && f->in_reset && rel != FLCN_ENGINE) nvpci_fail(g, "%s falcon: read of 0x%06x while the engine is in reset", f->name, off);
  switch (rel) {
  case FLCN_HWCFG2:
    *v = FLCN_HWCFG2_RISCV | (f->scrub_reads ? FLCN_HWCFG2_MEM_SCRUBBING : 0) | (f->lockdown ? FLCN_HWCFG2_BR_PRIV_LOCKDOWN : 0);
    if (fx && f->scrub_reads && !f->in_reset) f->scrub_reads--;
    break;
  case FLCN_CPUCTL: *v = f->halted ? FLCN_CPUCTL_HALTED : 0; break; /* alias_en 0: start through CPUCTL */
  case FLCN_DMATRFCMD: *v = (R(f, rel) & ~3u) | 2u; break;            /* never full, always idle: DMA is synchronous */
  case RISCV_CPUCTL: *v = f->riscv_active ? RISCV_CPUCTL_ACTIVE_STAT : RISCV_CPUCTL_HALTED; break;
  case RISCV_BCR_CTRL: *v = R(f, rel) | RISCV_BCR_CTRL_VALID; break;
  case FLCN_ENGINE: *v = f->in_reset ? 1 : 0; break;
  default: *v = R(f, rel); break;
  }
  return true;
}

static void dma_block(nvpci_gpu *g, nvpci_falcon *f, uint32_t cmd) {
  uint32_t tc = R(f, FLCN_FBIF_TRANSCFG0);
  if ((cmd & 0x7u << 8) != 6u << 8) {
    nvpci_fail(g, "%s falcon: DMATRFCMD 0x%x: size field %u, the model moves 256-byte blocks (6)", f->name, cmd, cmd >> 8 & 7);
    return;
  }
  if (cmd & 1u << 5) {
    nvpci_fail(g, "%s falcon: DMATRFCMD 0x%x: falcon-to-FB transfers are not modelled", f->name, cmd);
    return;
  }
  if (cmd >> 12 & 7u) {
    nvpci_fail(g, "%s falcon: DMATRFCMD 0x%x: ctxdma %u, but only FBIF_TRANSCFG(0) is set up", f->name, cmd, cmd >> 12 & 7);
    return;
  }
  if ((tc & 3u) != 0 || !(tc & 4u) || !(R(f, FLCN_FBIF_CTL) & FLCN_FBIF_CTL_ALLOW_PHYS_NO_CTX) || (R(f, FLCN_DMACTL) & 1u)) {
    nvpci_fail(g, "%s falcon: DMA with FBIF_TRANSCFG(0)=0x%x FBIF_CTL=0x%x DMACTL=0x%x: needs target local FB (0), "
               "physical (bit 2), allow_phys_no_ctx and no context requirement", f->name, tc, R(f, FLCN_FBIF_CTL),
               R(f, FLCN_DMACTL));
    return;
  }
  uint64_t src = ((uint64_t)(R(f, FLCN_DMATRFBASE1) & 0x1ffu) << 32 | R(f, FLCN_DMATRFBASE)) << 8;
  src += R(f, FLCN_DMATRFFBOFFS);
  uint32_t dst = R(f, FLCN_DMATRFMOFFS);
  bool imem = cmd & 1u << 4;
  uint32_t cap = imem ? NVPCI_IMEM_SIZE : NVPCI_DMEM_SIZE;
  if (src % 256 || dst % 256 || src + 256 > g->vram_size || dst + 256 > cap) {
    nvpci_fail(g, "%s falcon: DMA of 256 bytes from VRAM 0x%" PRIx64 " to %s 0x%x is unaligned or out of range "
               "(VRAM 0x%" PRIx64 ", %s 0x%x)", f->name, src, imem ? "IMEM" : "DMEM", dst, g->vram_size,
               imem ? "IMEM" : "DMEM", cap);
    return;
  }
  memcpy((imem ? f->imem : f->dmem) + dst, g->vram + src, 256);
  if (imem) f->imem_blk[dst / 256] = (cmd >> 2 & 3u) == 1 ? 2 : 1;
  else f->dmem_blk[dst / 256] = 1;
  f->dma_blocks++;
}

/* ---------------- HS ucode models ---------------- */

static bool loaded(nvpci_gpu *g, nvpci_falcon *f, bool imem, uint32_t at, uint32_t n, const char *what) {
  const uint8_t *blk = imem ? f->imem_blk : f->dmem_blk;
  for (uint32_t b = at / 256; b < (at + n + 255) / 256; b++) {
    if (!blk[b] || (imem && blk[b] != 2)) {
      nvpci_fail(g, "%s falcon: %s: %s block at 0x%x %s", f->name, what, imem ? "IMEM" : "DMEM", b * 256,
                 blk[b] ? "was not loaded as secure code (DMATRFCMD sec = 1)" : "was never loaded");
      return false;
    }
  }
  return true;
}

static bool same(nvpci_gpu *g, nvpci_falcon *f, const uint8_t *mem, const uint8_t *want, uint32_t n, const char *what,
                 const char *space, uint32_t at) {
  for (uint32_t i = 0; i < n; i++)
    if (mem[i] != want[i]) {
      nvpci_fail(g, "%s falcon: %s: %s+0x%x is 0x%02x, the image has 0x%02x", f->name, what, space, at + i, mem[i], want[i]);
      return false;
    }
  return true;
}

static bool brom(nvpci_gpu *g, nvpci_falcon *f, const char *what, uint32_t bootvec, uint32_t pkc, uint32_t engid,
                 uint32_t ucode) {
  const struct { uint32_t reg, want; const char *name; } chk[] = {
      {FLCN_BOOTVEC, bootvec, "BOOTVEC"}, {FLCN2_BROM_PARAADDR0, pkc, "BROM_PARAADDR(0)"},
      {FLCN2_BROM_ENGIDMASK, engid, "BROM_ENGIDMASK"}, {FLCN2_BROM_CURR_UCODE_ID, ucode, "BROM_CURR_UCODE_ID"},
      {FLCN2_MOD_SEL, 1, "MOD_SEL (RSA-3K)"}};
  for (size_t i = 0; i < sizeof(chk) / sizeof(chk[0]); i++)
    if (R(f, chk[i].reg) != chk[i].want) {
      nvpci_fail(g, "%s falcon: %s: %s is 0x%x, expected 0x%x", f->name, what, chk[i].name, R(f, chk[i].reg), chk[i].want);
      return false;
    }
  return true;
}

/* Why the FWSEC DMEM differs from the expected image: the signature, the command or something else. */
static void fwsec_diagnose(nvpci_gpu *g, nvpci_falcon *f, const uint8_t *dm, const uint8_t *want, unsigned sig) {
  const nvpci_fw *fw = &g->fw;
  const uint8_t *s = dm + fw->fw_pkc;
  if (memcmp(s, want + fw->fw_pkc, NVPCI_SIG_SIZE)) {
    int other = -1;
    for (unsigned i = 0; i < NVPCI_FWSEC_NSIG; i++)
      if (!memcmp(s, fw->fw_sigs[i], NVPCI_SIG_SIZE)) other = (int)i;
    nvpci_fail(g, "%s falcon: FWSEC: the signature at DMEM+0x%x is %s%d, but fuse version %u (SignatureVersions 0x%x) "
               "selects signature %u", f->name, fw->fw_pkc, other < 0 ? "none of the VBIOS's signatures" : "signature ",
               other, g->cfg.fuse_version, fw->fw_sigver, sig);
    return;
  }
  uint32_t init = nvpci_get32(dm + fw->fw_mapper_off + 44);
  if (init != 0x15) {
    nvpci_fail(g, "%s falcon: FWSEC: DMEM mapper init_cmd is 0x%x, expected 0x15 (FRTS)", f->name, init);
    return;
  }
  const uint8_t *c = dm + fw->fw_cmd_off, *w = want + fw->fw_cmd_off;
  static const char *const fields[] = {"read_vbios.ver", "read_vbios.hdr", "read_vbios.addr lo", "read_vbios.addr hi",
                                       "read_vbios.size", "read_vbios.flags", "frts_region.ver", "frts_region.hdr",
                                       "frts_region.addr (4 KiB units)", "frts_region.size (4 KiB units)",
                                       "frts_region.type"};
  for (unsigned i = 0; i < 11; i++)
    if (nvpci_get32(c + 4 * i) != nvpci_get32(w + 4 * i)) {
      nvpci_fail(g, "%s falcon: FWSEC: FRTS command %s is 0x%x, expected 0x%x", f->name, fields[i], nvpci_get32(c + 4 * i),
                 nvpci_get32(w + 4 * i));
      return;
    }
  same(g, f, dm, want, fw->fw_dmem_size, "FWSEC", "DMEM", 0);
}

static uint32_t run_fwsec(nvpci_gpu *g, nvpci_falcon *f) {
  const nvpci_fw *fw = &g->fw;
  if (g->c->fsp) {
    nvpci_fail(g, "%s falcon: started in falcon mode on %s, whose FSP runs FWSEC itself", f->name, g->c->name);
    return 1;
  }
  bool ok;
  unsigned sig = nvpci_fwsec_sig_index(fw, g->cfg.fuse_version, &ok);
  if (!ok) {
    nvpci_fail(g, "%s falcon: FWSEC: no signature for fuse version %u (SignatureVersions 0x%x)", f->name, g->cfg.fuse_version,
               fw->fw_sigver);
    return 2;
  }
  uint64_t frts = g->vram_size - 2 * MIB;
  uint8_t *want = malloc(fw->fwsec.n);
  if (!want) return 3;
  nvpci_fwsec_expected(fw, sig, frts, want);
  uint32_t err = 0;
  if (!brom(g, f, "FWSEC", fw->fw_imem_virt, fw->fw_pkc, fw->fw_engid, fw->fw_ucode_id)) err = 4;
  else if (!loaded(g, f, true, fw->fw_imem_phys, fw->fw_imem_size, "FWSEC") ||
           !loaded(g, f, false, fw->fw_dmem_phys, fw->fw_dmem_size, "FWSEC"))
    err = 5;
  else if (!same(g, f, f->imem + fw->fw_imem_phys, want, fw->fw_imem_size, "FWSEC", "IMEM", fw->fw_imem_phys)) err = 6;
  else if (memcmp(f->dmem + fw->fw_dmem_phys, want + fw->fw_imem_size, fw->fw_dmem_size)) {
    fwsec_diagnose(g, f, f->dmem + fw->fw_dmem_phys, want + fw->fw_imem_size, sig);
    err = 7;
  }
  free(want);
  if (err) return err;
  g->wpr2_lo = (uint32_t)(frts >> 12) << 4;
  g->wpr2_hi = (uint32_t)((frts + MIB - 4096) >> 12) << 4;
  if (g->stage < NVPCI_STAGE_FRTS) g->stage = NVPCI_STAGE_FRTS;
  return 0;
}

/* ---------------- WPR metadata, radix3 ---------------- */

static int dma_rd(nvpci_gpu *g, uint64_t bus, void *dst, size_t n, const char *who, const char *what) {
  if (nvpci_dma_read(g, bus, dst, n) < 0) {
    nvpci_fail(g, "%s: cannot read %s (%zu bytes) at bus address 0x%" PRIx64, who, what, n, bus);
    return -1;
  }
  return 0;
}

/* Sysmem at bus equal to want (n bytes), read in pieces. */
int nvpci_dma_same(nvpci_gpu *g, uint64_t bus, const uint8_t *want, size_t n, const char *who, const char *what) {
  uint8_t buf[4096];
  for (size_t at = 0; at < n; at += sizeof(buf)) {
    size_t k = n - at < sizeof(buf) ? n - at : sizeof(buf);
    if (dma_rd(g, bus + at, buf, k, who, what) < 0) return -1;
    if (memcmp(buf, want + at, k)) {
      size_t i = 0;
      while (buf[i] == want[at + i]) i++;
      nvpci_fail(g, "%s: %s differs from the generated file at byte 0x%zx (0x%02x, expected 0x%02x)", who, what, at + i,
                 buf[i], want[at + i]);
      return -1;
    }
  }
  return 0;
}

/* The radix-3 tree (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw): level 0..2 pages hold the u64 addresses of the next level's pages; the leaves are the
 * image's pages. */
static int check_radix3(nvpci_gpu *g, uint64_t root, const nvpci_blob *img, const char *who) {
  size_t n3 = (img->n + 4095) / 4096, n2 = ((n3 - 1) >> 9) + 1, n1 = ((n2 - 1) >> 9) + 1;
  size_t count[3] = {n1, n2, n3};
  uint64_t *lvl = malloc(sizeof(uint64_t)), *next = NULL;
  if (!lvl) return -1;
  lvl[0] = root;
  size_t nl = 1;
  int r = 0;
  for (int d = 0; d < 3 && r == 0; d++) {
    next = calloc(count[d], sizeof(uint64_t));
    if (!next) {
      r = -1;
      break;
    }
    for (size_t i = 0; i < count[d] && r == 0; i++) {
      uint8_t e[8];
      r = dma_rd(g, lvl[i / 512] + (i % 512) * 8, e, 8, who, "a radix3 entry");
      next[i] = nvpci_get64(e);
      if (r == 0 && next[i] % 4096) {
        nvpci_fail(g, "%s: radix3 level %d entry %zu is 0x%" PRIx64 ", not a 4 KiB page address", who, d, i, next[i]);
        r = -1;
      }
    }
    free(lvl);
    lvl = next, nl = count[d], next = NULL;
  }
  for (size_t i = 0; i < nl && r == 0; i++) {
    size_t k = img->n - i * 4096 < 4096 ? img->n - i * 4096 : 4096;
    char what[64];
    snprintf(what, sizeof(what), ".fwimage page %zu (through radix3)", i);
    r = nvpci_dma_same(g, lvl[i], img->p + i * 4096, k, who, what);
  }
  free(lvl);
  return r;
}

int nvpci_check_wpr_meta(nvpci_gpu *g, uint64_t bus, bool fmc, const char *who) {
  const nvpci_fw *fw = &g->fw;
  uint8_t m[256];
  if (dma_rd(g, bus, m, sizeof(m), who, "GspFwWprMeta") < 0) return -1;
  uint64_t vram = g->vram_size;
#define Q(o) nvpci_get64(m + (o))
#define WANT(cond, ...)                                                                                                \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      nvpci_fail(g, __VA_ARGS__);                                                                                      \
      return -1;                                                                                                       \
    }                                                                                                                  \
  } while (0)
  WANT(Q(0) == 0xdc3aae21371a60b3ull, "%s: GspFwWprMeta.magic is 0x%" PRIx64 ", expected 0xdc3aae21371a60b3", who, Q(0));
  WANT(Q(8) == 1, "%s: GspFwWprMeta.revision is %" PRIu64 ", expected 1", who, Q(8));
  WANT(Q(24) == fw->fwimage.n, "%s: GspFwWprMeta.sizeOfRadix3Elf is 0x%" PRIx64 ", .fwimage has 0x%zx bytes", who, Q(24),
       fw->fwimage.n);
  WANT(Q(40) == fw->bl_data.n, "%s: GspFwWprMeta.sizeOfBootloader is 0x%" PRIx64 ", the bootloader has 0x%zx bytes", who,
       Q(40), fw->bl_data.n);
  WANT(Q(48) == fw->bl_mon_code && Q(56) == fw->bl_mon_data && Q(64) == fw->bl_manifest,
       "%s: GspFwWprMeta bootloader code/data/manifest offsets 0x%" PRIx64 "/0x%" PRIx64 "/0x%" PRIx64
       ", RM_RISCV_UCODE_DESC says 0x%x/0x%x/0x%x", who, Q(48), Q(56), Q(64), fw->bl_mon_code, fw->bl_mon_data,
       fw->bl_manifest);
  WANT(Q(80) == fw->fwsig.n, "%s: GspFwWprMeta.sizeOfSignature is 0x%" PRIx64 ", %s has 0x%zx bytes", who, Q(80),
       g->c->sig_suffix, fw->fwsig.n);
  WANT(Q(160) == MIB, "%s: GspFwWprMeta.frtsSize is 0x%" PRIx64 ", expected 1 MiB", who, Q(160));
  if (!fmc) {
    WANT(Q(176) == vram, "%s: GspFwWprMeta.fbSize is 0x%" PRIx64 ", VRAM is 0x%" PRIx64, who, Q(176), vram);
    WANT(Q(152) == vram - 2 * MIB, "%s: GspFwWprMeta.frtsOffset is 0x%" PRIx64 ", FWSEC put FRTS at 0x%" PRIx64, who,
         Q(152), vram - 2 * MIB);
    WANT(Q(168) == vram - MIB && Q(184) == vram - MIB && Q(192) == MIB,
         "%s: GspFwWprMeta gspFwWprEnd/vgaWorkspaceOffset/Size 0x%" PRIx64 "/0x%" PRIx64 "/0x%" PRIx64
         ", expected the VGA workspace in the last MiB (0x%" PRIx64 ")", who, Q(168), Q(184), Q(192), vram - MIB);
    /* bottom-up: non-WPR heap < WPR start <= heap < GSP-RM image <= boot binary < FRTS */
    WANT(Q(96) + Q(104) <= Q(112) && Q(112) <= Q(120) && Q(120) + Q(128) <= Q(136) && Q(136) + fw->fwimage.n <= Q(144) &&
             Q(144) + fw->bl_data.n <= Q(152) && Q(104) && Q(128),
         "%s: GspFwWprMeta layout overlaps or is out of order (nonWprHeap 0x%" PRIx64 "+0x%" PRIx64 ", wprStart 0x%" PRIx64
         ", heap 0x%" PRIx64 "+0x%" PRIx64 ", gspFw 0x%" PRIx64 ", bootBin 0x%" PRIx64 ", frts 0x%" PRIx64 ")", who,
         Q(96), Q(104), Q(112), Q(120), Q(128), Q(136), Q(144), Q(152));
  }
  if (check_radix3(g, Q(16), &fw->fwimage, who) < 0) return -1;
  if (nvpci_dma_same(g, Q(32), fw->bl_data.p, fw->bl_data.n, who, "the bootloader at sysmemAddrOfBootloader") < 0) return -1;
  if (nvpci_dma_same(g, Q(72), fw->fwsig.p, fw->fwsig.n, who, "the signature at sysmemAddrOfSignature") < 0) return -1;
#undef Q
#undef WANT
  return 0;
}

int nvpci_start_gsp_rm(nvpci_gpu *g, uint64_t wpr_meta, uint64_t libos, const char *who) {
  if (g->stage < NVPCI_STAGE_GSP_LOADED) g->stage = NVPCI_STAGE_GSP_LOADED;
  if (!g->gsp) {
    nvpci_fail(g, "%s: no GSP-RM model attached to this GPU", who);
    return -1;
  }
  if (nvpci_gsp_start(g->gsp, wpr_meta, libos) < 0) {
    nvpci_fail(g, "%s: GSP-RM did not start (see its failures)", who);
    return -1;
  }
  nvpci_falcon *gsp = &g->flcn[NVPCI_FLCN_GSP];
  gsp->riscv_active = true, gsp->halted = false;
  if (g->stage < NVPCI_STAGE_GSP_RUNNING) g->stage = NVPCI_STAGE_GSP_RUNNING;
  return 0;
}

static uint32_t run_booter(nvpci_gpu *g, nvpci_falcon *f) {
  const nvpci_fw *fw = &g->fw;
  const char *who = "SEC2 falcon: Booter";
  if (g->c->fsp) {
    nvpci_fail(g, "%s: started on %s, which boots GSP-RM through the FSP", who, g->c->name);
    return 1;
  }
  const uint8_t *img = fw->booter_img.p;
  if (!brom(g, f, "Booter", fw->bt_code_off, fw->bt_patch_loc - fw->bt_data_off, fw->bt_engid, fw->bt_ucode_id)) return 4;
  if (!loaded(g, f, true, 0, fw->bt_code_size, "Booter") || !loaded(g, f, false, 0, fw->bt_data_size, "Booter")) return 5;
  if (!same(g, f, f->imem, img + fw->bt_code_off, fw->bt_code_size, "Booter", "IMEM", 0)) return 6;
  const uint32_t sig_at = fw->bt_patch_loc - fw->bt_data_off;
  if (memcmp(f->dmem + sig_at, img + fw->bt_patch_loc, NVPCI_SIG_SIZE)) {
    nvpci_fail(g, "%s: DMEM+0x%x does not hold the production signature the fuse selects (signature 0 of sig_prod)", who,
               sig_at);
    return 7;
  }
  if (!same(g, f, f->dmem, img + fw->bt_data_off, fw->bt_data_size, "Booter", "DMEM", 0)) return 7;
  if (!g->wpr2_hi) {
    nvpci_fail(g, "%s: WPR2 is not set up (FWSEC-FRTS has not run)", who);
    return 8;
  }
  nvpci_falcon *gsp = &g->flcn[NVPCI_FLCN_GSP];
  if (gsp->in_reset || !(R(gsp, RISCV_BCR_CTRL) & RISCV_BCR_CTRL_CORE_SELECT_RISCV)) {
    nvpci_fail(g, "%s: the GSP falcon's RISC-V core is not selected (BCR_CTRL 0x%x)", who, R(gsp, RISCV_BCR_CTRL));
    return 9;
  }
  uint64_t libos = (uint64_t)R(gsp, FLCN_MAILBOX1) << 32 | R(gsp, FLCN_MAILBOX0);
  uint8_t probe[32];
  if (!libos || dma_rd(g, libos, probe, sizeof(probe), who, "the libos arguments in GSP's MAILBOX0/1") < 0) {
    if (!libos) nvpci_fail(g, "%s: GSP's MAILBOX0/1 hold no libos arguments address", who);
    return 10;
  }
  uint64_t meta = (uint64_t)R(f, FLCN_MAILBOX1) << 32 | R(f, FLCN_MAILBOX0);
  if (nvpci_check_wpr_meta(g, meta, false, who) < 0) return 11;
  if (nvpci_start_gsp_rm(g, meta, libos, who) < 0) return 12;
  g->handoff = true; /* NV_PGC6_BSI_SECURE_SCRATCH_14 bit 26, what nouveau r535 CORE_RESUME polls after the Booter */
  uint8_t m[256];
  if (nvpci_dma_read(g, meta, m, sizeof(m)) == 0) { /* WPR2 now covers GSP-RM's WPR */
    g->wpr2_lo = (uint32_t)(nvpci_get64(m + 112) >> 12) << 4;
    g->wpr2_hi = (uint32_t)((nvpci_get64(m + 168) - 4096) >> 12) << 4;
  }
  return 0;
}

static void start_cpu(nvpci_gpu *g, nvpci_falcon *f) {
  f->starts++;
  if (R(f, RISCV_BCR_CTRL) & RISCV_BCR_CTRL_CORE_SELECT_RISCV) {
    nvpci_fail(g, "%s falcon: CPU started with the RISC-V core selected: the host never starts GSP-RM itself", f->name);
    return;
  }
  uint32_t err = f == &g->flcn[NVPCI_FLCN_GSP] ? run_fwsec(g, f) : run_booter(g, f);
  f->halted = true;
  R(f, FLCN_MAILBOX0) = err ? 0xbad00000u | err : 0;
  if (f == &g->flcn[NVPCI_FLCN_GSP]) g->scratch[0xe] = (g->scratch[0xe] & 0xffffu) | err << 16;
}

bool nvpci_falcon_wr(nvpci_gpu *g, uint32_t off, uint32_t v, bool fx) {
  uint32_t rel;
  nvpci_falcon *f = which(g, off, &rel);
  if (!f || !known(rel)) return false;
  if (!fx) { /* the GSP model's view: plain values */
    if (rel == RISCV_CPUCTL) f->riscv_active = v & RISCV_CPUCTL_ACTIVE_STAT;
    else R(f, rel) = v;
    return true;
  }
  if (rel == FLCN_ENGINE) {
    if (v & 1u) f->in_reset = true;
    else if (f->in_reset) {
      f->in_reset = false;
      falcon_reset(g, f);
    }
    return true;
  }
  if (f->in_reset) {
    nvpci_fail(g, "%s falcon: write 0x%x to 0x%06x while the engine is in reset", f->name, v, off);
    return true;
  }
  if (f->scrub_reads && rel != FLCN_RM) {
    nvpci_fail(g, "%s falcon: write 0x%x to 0x%06x before HWCFG2.mem_scrubbing cleared", f->name, v, off);
    return true;
  }
  switch (rel) {
  case FLCN_HWCFG2: case RISCV_CPUCTL:
    nvpci_fail(g, "%s falcon: write 0x%x to read-only register 0x%06x", f->name, v, off);
    break;
  case FLCN_CPUCTL:
    R(f, rel) = v & ~FLCN_CPUCTL_STARTCPU;
    if (v & FLCN_CPUCTL_STARTCPU) start_cpu(g, f);
    break;
  case FLCN_CPUCTL_ALIAS:
    nvpci_fail(g, "%s falcon: CPUCTL_ALIAS written (0x%x) while CPUCTL.alias_en is 0: start through CPUCTL", f->name, v);
    break;
  case FLCN_DMATRFCMD:
    R(f, rel) = v;
    dma_block(g, f, v);
    break;
  case RISCV_BCR_CTRL:
    if (f->lockdown) {
      nvpci_fail(g, "%s falcon: BCR_CTRL written (0x%x) while the boot ROM is locked down by the FSP", f->name, v);
      break;
    }
    R(f, rel) = v & ~RISCV_BCR_CTRL_VALID;
    break;
  default:
    R(f, rel) = v;
    break;
  }
  return true;
}
