/* nv/nv_boot_flcn.c: the Ampere/Ada boot (nv/nv_falcon.h): FWSEC-FRTS from the VBIOS on GSP's falcon core, then
 * Booter on SEC2 loading GSP-RM onto GSP's RISC-V core.
 *
 * Facts: tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN (steps A-C), Linux nouveau nvkm/subdev/gsp/fwsec.c (FRTS: WPR2 set afterwards, the error
 * code in NV_PBUS_SW_SCRATCH(0xe) [31:16]), nvkm/subdev/gsp/ga102.c ga102_gsp_fwsec_signature (the signature picked by the
 * fuse version of the ucode id), nvkm/subdev/gsp/r535.c r535_gsp_booter_load (MAILBOX0/1 = WPR meta; MAILBOX0 reads 0
 * on success). tinygrad always takes the last FWSEC signature (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN.prep_ucode): here the fuse decides. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "nv/nv_falcon.h"
#include "nv/nv_regs.h"

#define NV_PBUS_SW_SCRATCH(i) (0x00001400u + (i) * 4u) /* nouveau fwsec.c: the FRTS error code in 0xe [31:16] */
#define MIB (1ull << 20)

/* The ROM as far as its image chain goes (nouveau nvkm/subdev/bios/shadow.c shadow_image fetches image by image the
 * same way): each image's 0xAA55 header, its PCI data structure (pointer u16@0x18; length u16@+0x10 x 512, last-image
 * bit 7 of @+0x15; an NPDE extension after it overrides both except for code type 0x70, nouveau image.c), then the
 * image, until the last image or something that is not an image (bg_nv_vbios_parse then names what is wrong). Through
 * the PROM window (nouveau nvkm/subdev/bios/shadowprom.c): dword reads on PCI; one bulk read per piece without host
 * DMA (the USB bridge streams it), so a ROM of 64 KiB costs a few round trips, not 262144. Counted as dword reads. */
typedef struct rom_rd {
  bg_nv_pci *d;
  uint8_t *rom;
  uint32_t have;
  int err;
} rom_rd;

static bool rom_fetch(rom_rd *r, uint64_t upto) {
  if (upto > NV_PROM_SIZE) return false;
  uint32_t end = (uint32_t)((upto + 3) & ~3ull);
  if (end <= r->have) return true;
  bg_nv_pci *d = r->d;
  if (d->no_host_dma) {
    int e = bg_mmio_read(&d->bar0, NV_PROM_DATA + r->have, r->rom + r->have, end - r->have);
    if (e < 0) {
      r->err = bg_error_context(e, "nv: %s: VBIOS read of [0x%x, 0x%x) of the PROM window: ", bg_pci_name(d->pci),
                                r->have, end);
      return false;
    }
  } else {
    for (uint32_t o = r->have; o < end; o += 4) {
      uint32_t v = bg_mmio_rd32(&d->bar0, NV_PROM_DATA + o);
      memcpy(r->rom + o, &v, 4);
    }
  }
  d->reg_reads += (end - r->have) / 4;
  r->have = end;
  return true;
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static int read_vbios(bg_nv_pci *d, uint8_t **out, size_t *len) {
  rom_rd r = {d, calloc(1, NV_PROM_SIZE), 0, 0};
  if (!r.rom) return bg_error(BG_ENOMEM, "nv: %s: VBIOS buffer", bg_pci_name(d->pci));
  uint64_t o = 0;
  for (;;) {
    if (!rom_fetch(&r, o + 0x1a)) break;
    uint16_t sig = le16(r.rom + o);
    if (sig != 0xaa55 && sig != 0xbb77 && sig != 0x4e56) break;
    uint64_t pcir = o + le16(r.rom + o + 0x18);
    if (!rom_fetch(&r, pcir + 0x18)) break;
    uint64_t size = (uint64_t)le16(r.rom + pcir + 0x10) * 512;
    bool last = r.rom[pcir + 0x15] & 0x80;
    uint64_t npde = (pcir + le16(r.rom + pcir + 0x0a) + 0x0f) & ~(uint64_t)0x0f;
    if (r.rom[pcir + 0x14] != 0x70 && rom_fetch(&r, npde + 11) && memcmp(r.rom + npde, "NPDE", 4) == 0) {
      size = (uint64_t)le16(r.rom + npde + 8) * 512;
      last = r.rom[npde + 10] & 0x80;
    }
    if (r.err || size == 0 || !rom_fetch(&r, o + size) || last) break;
    o += size;
  }
  if (r.err) {
    free(r.rom);
    return r.err;
  }
  BG_LOG(4, "nv: rd32 NV_PROM_DATA (0x%06x) x %u dwords: the VBIOS image chain", NV_PROM_DATA, r.have / 4);
  *out = r.rom;
  *len = r.have;
  return 0;
}

static int vram_place(bg_nv_pci *d, const char *what, size_t n, uint64_t *pa) {
  uint64_t size = (n + 4095) & ~(uint64_t)4095;
  int e = bg_tlsf_alloc(d->vram_main, size, 4096, pa);
  if (e < 0) return bg_error_context(e, "nv: %s: VRAM for the %s image: ", bg_pci_name(d->pci), what);
  return 0;
}

int bg_nv_boot_flcn_prepare(bg_nv_pci *d, bg_nv_flcn_boot *b) {
  memset(b, 0, sizeof(*b));
  uint8_t *rom = NULL;
  size_t rom_len = 0;
  int e = read_vbios(d, &rom, &rom_len);
  if (e < 0) return e;
  bg_nv_vbios vb;
  if ((e = bg_nv_vbios_parse(rom, rom_len, &vb)) < 0) {
    free(rom);
    return bg_error_context(e, "nv: %s: VBIOS (BAR0 0x%x): ", bg_pci_name(d->pci), NV_PROM_DATA);
  }
  b->fwsec = vb.fwsec;
  if (vb.fwsec.ucode_id == 0) {
    free(rom);
    return bg_error(BG_EFORMAT, "nv: %s: VBIOS FWSEC descriptor: UcodeId 0 (1.. expected: it selects the fuse "
                    "NV_FUSE_OPT_FPF_GSP_UCODE<id>_VERSION)", bg_pci_name(d->pci));
  }
  /* the fuse version is the highest set bit's index + 1 of the ucode's fuse register, 0 when none is set
   * (open-gpu-kernel-modules kgspReadUcodeFuseVersion_GA100; nouveau ga102_gsp_fwsec_signature takes fls of it too) */
  uint32_t fuse = bg_nv_rd32(d, NV_FUSE_OPT_FPF_GSP_UCODE_VERSION(vb.fwsec.ucode_id));
  uint32_t version = fuse ? 32u - (uint32_t)__builtin_clz(fuse) : 0;
  e = bg_nv_fwsec_sig_index(&vb.fwsec, version, &b->sig_index);
  if (e >= 0) e = bg_nv_fwsec_frts_image(&vb, b->sig_index, d->vram_size - 2 * MIB, &b->frts_image, &b->frts_size);
  free(rom);
  if (e < 0) return bg_error_context(e, "nv: %s: FWSEC-FRTS: ", bg_pci_name(d->pci));
  if ((e = vram_place(d, "FWSEC-FRTS", b->frts_size, &b->frts_pa)) < 0 ||
      (e = vram_place(d, "Booter", d->fw.booter.image_size, &b->booter_pa)) < 0)
    return e;
  return 0;
}

void bg_nv_boot_flcn_free(bg_nv_pci *d, bg_nv_flcn_boot *b) {
  if (b->frts_pa && d->vram_main) bg_tlsf_free(d->vram_main, b->frts_pa);
  if (b->booter_pa && d->vram_main) bg_tlsf_free(d->vram_main, b->booter_pa);
  free(b->frts_image);
  memset(b, 0, sizeof(*b));
}

static int frts(bg_nv_pci *d, bg_nv_flcn_boot *b) {
  const bg_nv_falcon *gsp = &bg_nv_falcon_gsp;
  const bg_nv_fwsec_desc *f = &b->fwsec;
  bg_nv_hs_ucode u = {
      .what = "FWSEC-FRTS", .image_pa = b->frts_pa, .code_off = 0, .data_off = f->imem_load_size,
      .imem_pa = f->imem_phys_base, .imem_va = f->imem_virt_base, .imem_size = f->imem_load_size,
      .dmem_pa = f->dmem_phys_base, .dmem_va = 0, .dmem_size = f->dmem_load_size,
      .pkc_off = f->pkc_data_offset, .engine_id_mask = f->engine_id_mask, .ucode_id = f->ucode_id};
  uint32_t mbox[2];
  int e = bg_nv_falcon_reset(d, gsp, false);
  if (e >= 0) e = bg_nv_falcon_execute_hs(d, gsp, &u, mbox);
  if (e < 0) return e;
  uint32_t err = bg_nv_rd32(d, NV_PBUS_SW_SCRATCH(0xe)) >> 16;
  if (err)
    return bg_error(BG_EIO, "nv: %s: FWSEC-FRTS (signature %u) failed: error 0x%04" PRIx32 " in NV_PBUS_SW_SCRATCH(0xe) "
                    "[31:16] (GSP MAILBOX0 0x%08" PRIx32 ")", bg_pci_name(d->pci), b->sig_index, err, mbox[0]);
  uint32_t hi = bg_nv_rd32(d, NV_PFB_PRI_MMU_WPR2_ADDR_HI);
  if (hi == 0)
    return bg_error(BG_EIO, "nv: %s: FWSEC-FRTS (signature %u) ran but NV_PFB_PRI_MMU_WPR2_ADDR_HI is 0: WPR2 not set "
                    "up (GSP MAILBOX0 0x%08" PRIx32 ")", bg_pci_name(d->pci), b->sig_index, mbox[0]);
  return 0;
}

static int booter(bg_nv_pci *d, bg_nv_flcn_boot *b, uint64_t libos_bus, uint64_t wpr_meta_bus) {
  const bg_nv_falcon *gsp = &bg_nv_falcon_gsp, *sec2 = &bg_nv_falcon_sec2;
  const bg_nv_booter *bt = &d->fw.booter;
  int e = bg_nv_falcon_reset(d, gsp, true);
  if (e < 0) return e;
  bg_nv_wr32(d, NV_PGSP_FALCON_MAILBOX0, (uint32_t)libos_bus);
  bg_nv_wr32(d, NV_PGSP_FALCON_MAILBOX1, (uint32_t)(libos_bus >> 32));
  if ((e = bg_nv_falcon_reset(d, sec2, false)) < 0) return e;
  /* tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN step C 3: code from app 0 at its offset, data from the OS data; BROM PKC 0x10, engine 1, ucode 3 */
  bg_nv_hs_ucode u = {
      .what = "Booter", .image_pa = b->booter_pa, .code_off = bt->app0_offset, .data_off = bt->os_data_offset,
      .imem_pa = 0, .imem_va = bt->app0_offset, .imem_size = bt->app0_size, .dmem_pa = 0, .dmem_va = 0,
      .dmem_size = bt->os_data_size, .pkc_off = 0x10, .engine_id_mask = 1, .ucode_id = 3, .mailbox = true,
      .mailbox_in = wpr_meta_bus};
  uint32_t mbox[2];
  if ((e = bg_nv_falcon_execute_hs(d, sec2, &u, mbox)) < 0) return e;
  if (mbox[0] != 0)
    return bg_error(BG_EIO, "nv: %s: Booter on SEC2 failed: NV_PFALCON_FALCON_MAILBOX0 = 0x%08" PRIx32
                    " (0 expected), MAILBOX1 = 0x%08" PRIx32, bg_pci_name(d->pci), mbox[0], mbox[1]);
  bg_nv_falcon_wr(d, gsp, NV_PFALCON_FALCON_OS, 0);
  uint32_t c = bg_nv_falcon_rd(d, gsp, NV_PRISCV_RISCV_CPUCTL);
  if (!(c & NV_PRISCV_RISCV_CPUCTL_ACTIVE_STAT))
    return bg_error(BG_EIO, "nv: %s: after Booter, GSP NV_PRISCV_RISCV_CPUCTL = 0x%08" PRIx32
                    ": the RISC-V core is not active (active_stat, bit 7, expected 1)", bg_pci_name(d->pci), c);
  return 0;
}

int bg_nv_boot_flcn_run(bg_nv_pci *d, bg_nv_flcn_boot *b, uint64_t libos_bus, uint64_t wpr_meta_bus) {
  int e = bg_nv_vram_write(d, b->frts_pa, b->frts_image, b->frts_size);
  if (e >= 0) e = bg_nv_vram_write(d, b->booter_pa, d->fw.booter.image, d->fw.booter.image_size);
  if (e < 0) return e;
  bg_nv_step_begin(d, "FWSEC-FRTS");
  e = frts(d, b);
  bg_nv_step_end(d);
  if (e < 0) return e;
  bg_nv_step_begin(d, "Booter");
  e = booter(d, b, libos_bus, wpr_meta_bus);
  bg_nv_step_end(d);
  return e;
}
