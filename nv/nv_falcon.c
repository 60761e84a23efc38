/* nv/nv_falcon.c: falcon primitives (nv/nv_falcon.h): reset with scrub wait and core select, DMA into IMEM/DMEM,
 * heavy-secure execution. Facts: Linux nouveau nvkm/falcon/gm200.c (gm200_flcn_reset_eng: ENGINE bit 0 pulsed with a
 * 10 us hold; gm200_flcn_fw_boot: mailboxes, BOOTVEC, start, halted bit 4), nvkm/falcon/ga102.c (DMATRF* transfers,
 * BROM registers, BCR_CTRL core select, FBIF setup), tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN. */
#include "nv/nv_falcon.h"

#include <inttypes.h>
#include <stdio.h>

#include "baregpu/error.h"
#include "nv/nv_regs.h"

const bg_nv_falcon bg_nv_falcon_gsp = {"GSP", NV_FALCON_BASE_GSP};
const bg_nv_falcon bg_nv_falcon_sec2 = {"SEC2", NV_FALCON_BASE_SEC2};

uint32_t bg_nv_falcon_rd(bg_nv_pci *d, const bg_nv_falcon *f, uint32_t off) { return bg_nv_rd32(d, f->base + off); }

void bg_nv_falcon_wr(bg_nv_pci *d, const bg_nv_falcon *f, uint32_t off, uint32_t v) { bg_nv_wr32(d, f->base + off, v); }

static int fpoll(bg_nv_pci *d, const bg_nv_falcon *f, uint32_t off, uint32_t mask, uint32_t want, int ms,
                 const char *what) {
  char w[96];
  snprintf(w, sizeof(w), "falcon %s: %s", f->name, what);
  return bg_nv_poll(d, f->base + off, mask, want, ms, w);
}

int bg_nv_falcon_reset(bg_nv_pci *d, const bg_nv_falcon *f, bool riscv) {
  bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_ENGINE, NV_PFALCON_FALCON_ENGINE_RESET);
  bg_nv_sleep_us(10);
  bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_ENGINE, 0);
  int e = fpoll(d, f, NV_PFALCON_FALCON_HWCFG2, NV_PFALCON_FALCON_HWCFG2_MEM_SCRUBBING, 0, BG_NV_TIMEOUT_SCRUB_MS,
                "reset: IMEM/DMEM scrubbing");
  if (e < 0) return e;
  if (riscv) {
    bg_nv_falcon_wr(d, f, NV_PRISCV_RISCV_BCR_CTRL,
                    NV_PRISCV_RISCV_BCR_CTRL_CORE_SELECT_RISCV | NV_PRISCV_RISCV_BCR_CTRL_BRFETCH);
    return 0;
  }
  if (bg_nv_falcon_rd(d, f, NV_PFALCON_FALCON_HWCFG2) & NV_PFALCON_FALCON_HWCFG2_RISCV) {
    bg_nv_falcon_wr(d, f, NV_PRISCV_RISCV_BCR_CTRL, 0);
    e = fpoll(d, f, NV_PRISCV_RISCV_BCR_CTRL, NV_PRISCV_RISCV_BCR_CTRL_VALID, NV_PRISCV_RISCV_BCR_CTRL_VALID,
              BG_NV_TIMEOUT_SCRUB_MS, "reset: falcon core select");
    if (e < 0) return e;
    bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_RM, d->boot0);
  }
  return 0;
}

void bg_nv_falcon_disable_ctx_req(bg_nv_pci *d, const bg_nv_falcon *f) {
  uint32_t v = bg_nv_falcon_rd(d, f, NV_PFALCON_FBIF_CTL);
  bg_nv_falcon_wr(d, f, NV_PFALCON_FBIF_CTL, v | NV_PFALCON_FBIF_CTL_ALLOW_PHYS_NO_CTX);
  bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_DMACTL, 0);
}

int bg_nv_falcon_dma(bg_nv_pci *d, const bg_nv_falcon *f, uint32_t cmd, uint32_t dest, uint32_t mem_off, uint64_t src,
                     uint32_t size) {
  if (src & 0xff)
    return bg_error(BG_EINVAL, "nv: falcon %s: DMA source 0x%" PRIx64 " is not 256-byte aligned", f->name, src);
  int e = fpoll(d, f, NV_PFALCON_FALCON_DMATRFCMD, NV_PFALCON_FALCON_DMATRFCMD_FULL, 0, BG_NV_TIMEOUT_HALT_MS,
                "DMA queue full");
  if (e < 0) return e;
  bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_DMATRFBASE, (uint32_t)(src >> 8));
  bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_DMATRFBASE1, (uint32_t)(src >> 40) & 0x1ffu);
  for (uint32_t x = 0; x < size; x += NV_PFALCON_FALCON_DMA_BLOCK) {
    if ((e = fpoll(d, f, NV_PFALCON_FALCON_DMATRFCMD, NV_PFALCON_FALCON_DMATRFCMD_FULL, 0, BG_NV_TIMEOUT_HALT_MS,
                   "DMA queue full")) < 0)
      return e;
    bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_DMATRFMOFFS, dest + x);
    bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_DMATRFFBOFFS, mem_off + x);
    bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_DMATRFCMD, cmd);
  }
  return fpoll(d, f, NV_PFALCON_FALCON_DMATRFCMD, NV_PFALCON_FALCON_DMATRFCMD_IDLE, NV_PFALCON_FALCON_DMATRFCMD_IDLE,
               BG_NV_TIMEOUT_HALT_MS, "DMA completion (idle)");
}

void bg_nv_falcon_start(bg_nv_pci *d, const bg_nv_falcon *f) {
  if (bg_nv_falcon_rd(d, f, NV_PFALCON_FALCON_CPUCTL) & NV_PFALCON_FALCON_CPUCTL_ALIAS_EN)
    bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_CPUCTL_ALIAS, NV_PFALCON_FALCON_CPUCTL_ALIAS_STARTCPU);
  else
    bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_CPUCTL, NV_PFALCON_FALCON_CPUCTL_STARTCPU);
}

int bg_nv_falcon_wait_halt(bg_nv_pci *d, const bg_nv_falcon *f) {
  return fpoll(d, f, NV_PFALCON_FALCON_CPUCTL, NV_PFALCON_FALCON_CPUCTL_HALTED, NV_PFALCON_FALCON_CPUCTL_HALTED,
               BG_NV_TIMEOUT_HALT_MS, "CPU halt");
}

/* The DMA source of a part loaded at virtual offset va: image + off - va (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN: the falcon adds its offset). */
static int part_src(const bg_nv_falcon *f, const bg_nv_hs_ucode *u, const char *part, uint32_t off, uint32_t va,
                    uint64_t *src) {
  if (u->image_pa + off < va)
    return bg_error(BG_EINVAL, "nv: falcon %s: %s: %s at image offset 0x%" PRIx32 " below its virtual base 0x%" PRIx32
                    " (image at VRAM 0x%" PRIx64 ")", f->name, u->what, part, off, va, u->image_pa);
  *src = u->image_pa + off - va;
  return 0;
}

int bg_nv_falcon_execute_hs(bg_nv_pci *d, const bg_nv_falcon *f, const bg_nv_hs_ucode *u, uint32_t mbox[2]) {
  uint64_t isrc = 0, dsrc = 0;
  int e = part_src(f, u, "IMEM", u->code_off, u->imem_va, &isrc);
  if (e >= 0) e = part_src(f, u, "DMEM", u->data_off, u->dmem_va, &dsrc);
  if (e < 0) return e;
  bg_nv_falcon_disable_ctx_req(d, f);
  uint32_t t = bg_nv_falcon_rd(d, f, NV_PFALCON_FBIF_TRANSCFG(0));
  t = (t & ~(NV_PFALCON_FBIF_TRANSCFG_TARGET_MASK | NV_PFALCON_FBIF_TRANSCFG_MEM_TYPE_PHYSICAL)) |
      NV_PFALCON_FBIF_TRANSCFG_MEM_TYPE_PHYSICAL; /* target 0: local FB */
  bg_nv_falcon_wr(d, f, NV_PFALCON_FBIF_TRANSCFG(0), t);

  uint32_t icmd = NV_PFALCON_FALCON_DMATRFCMD_SIZE_256B | NV_PFALCON_FALCON_DMATRFCMD_IMEM |
                  NV_PFALCON_FALCON_DMATRFCMD_SEC(1) | NV_PFALCON_FALCON_DMATRFCMD_CTXDMA(0);
  uint32_t dcmd = NV_PFALCON_FALCON_DMATRFCMD_SIZE_256B | NV_PFALCON_FALCON_DMATRFCMD_CTXDMA(0);
  if ((e = bg_nv_falcon_dma(d, f, icmd, u->imem_pa, u->imem_va, isrc, u->imem_size)) < 0 ||
      (e = bg_nv_falcon_dma(d, f, dcmd, u->dmem_pa, u->dmem_va, dsrc, u->dmem_size)) < 0)
    return bg_error_context(e, "nv: %s on %s: ", u->what, f->name);

  bg_nv_falcon_wr(d, f, NV_PFALCON2_FALCON_BROM_PARAADDR(0), u->pkc_off);
  bg_nv_falcon_wr(d, f, NV_PFALCON2_FALCON_BROM_ENGIDMASK, u->engine_id_mask);
  bg_nv_falcon_wr(d, f, NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID, u->ucode_id & 0xffu);
  bg_nv_falcon_wr(d, f, NV_PFALCON2_FALCON_MOD_SEL, NV_PFALCON2_FALCON_MOD_SEL_ALGO_RSA3K);
  bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_BOOTVEC, u->imem_va);
  if (u->mailbox) {
    bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_MAILBOX0, (uint32_t)u->mailbox_in);
    bg_nv_falcon_wr(d, f, NV_PFALCON_FALCON_MAILBOX1, (uint32_t)(u->mailbox_in >> 32));
  }
  bg_nv_falcon_start(d, f);
  if ((e = bg_nv_falcon_wait_halt(d, f)) < 0) return bg_error_context(e, "nv: %s: ", u->what);
  mbox[0] = bg_nv_falcon_rd(d, f, NV_PFALCON_FALCON_MAILBOX0);
  mbox[1] = bg_nv_falcon_rd(d, f, NV_PFALCON_FALCON_MAILBOX1);
  return 0;
}
