/* tests/mockgpu/nv_pci/test_nvpci_hw.c: the emulated NVIDIA GPU's hardware model (nvpci_gpu.c, nvpci_falcon.c,
 * nvpci_fsp.c, nvpci_fwgen.c) driven through platform/pci as a driver would: BAR0 registers, BAR1 as VRAM, DMA memory.
 * The firmware is prepared the way tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN describes (the VBIOS walked through the PROM window, the FWSEC
 * signature chosen by the fuse register, the Booter's signature patched, the files read back from the generated
 * folder), so a model that disagrees with those layouts fails here. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "mock_sysfs.h"
#include "nvpci_internal.h"
#include "platform/mock_plugin.h"
#include "platform/pci_usb.h"
#include "usb/usb_transport.h"
#include "platform/pci.h"
#include "platform/pci_scan.h"
#include "platform/sysmem.h"

#define BDF "0000:05:00.0"
#define MIB (1ull << 20)
#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

typedef struct env {
  mock_sysfs *tree;
  nvpci_gpu *g;
  nvpci_gsp *gsp;
  bg_pci_dev *d;
  bg_mmio bar0, bar1;
  uint64_t bar1_bus, vram;
  char dir[256];
} env;

static env E;

static void env_open(const char *chip, uint32_t fuse) {
  memset(&E, 0, sizeof(E));
  E.tree = mock_sysfs_new();
  ck_assert_ptr_nonnull(E.tree);
  nvpci_cfg cfg = {.chip = chip, .bdf = BDF, .vram_size = 512 * MIB, .fuse_version = fuse};
  E.g = nvpci_new(E.tree, &cfg);
  ck_assert_ptr_nonnull(E.g);
  E.gsp = nvpci_gsp_new(E.g);
  ck_assert_ptr_nonnull(E.gsp);
  nvpci_set_gsp(E.g, E.gsp);
  OK(mock_tmpdir_new("nvfw", E.dir, sizeof(E.dir)));
  OK(nvpci_write_firmware(E.g, E.dir));
  OK(bg_pci_open_sysfs(BDF, 0, &E.d));
  OK(bg_pci_map_bar(E.d, 0, 0, 0, 0, &E.bar0));
  OK(bg_pci_map_bar(E.d, 1, 0, 0, 0, &E.bar1));
  bg_pci_bar b;
  OK(bg_pci_bar_info(E.d, 1, &b));
  E.bar1_bus = b.base;
  E.vram = 512 * MIB;
}

static void env_close(void) {
  bg_pci_unmap_bar(E.d, &E.bar0);
  bg_pci_unmap_bar(E.d, &E.bar1);
  bg_pci_close(E.d);
  ck_assert_msg(nvpci_nfail(E.g) == 0, "unexpected model failures:\n%s", nvpci_failures(E.g));
  ck_assert_msg(mock_sysfs_nfail(E.tree) == 0, "unexpected tree failures:\n%s", mock_sysfs_failures(E.tree));
  nvpci_gsp_free(E.gsp);
  nvpci_free(E.g);
  mock_rm_tree(E.dir);
  mock_sysfs_free(E.tree);
}

static uint32_t rd(uint32_t off) { return bg_mmio_rd32(&E.bar0, off); }
static void wr(uint32_t off, uint32_t v) { ck_assert_int_eq(bg_mmio_wr32(&E.bar0, off, v), 0); }

/* Exactly n new model failures, the last naming needle; then forget them. */
static void expect_fail(unsigned n, const char *needle) {
  ck_assert_msg(nvpci_nfail(E.g) == n, "%u model failures, expected %u:\n%s", nvpci_nfail(E.g), n, nvpci_failures(E.g));
  ck_assert_msg(strstr(nvpci_failures(E.g), needle), "failures lack '%s':\n%s", needle, nvpci_failures(E.g));
  nvpci_clear_failures(E.g);
}

static void vram_put(uint64_t off, const void *p, size_t n) { OK(bg_mmio_write(&E.bar1, off, p, n)); }

/* ---------------- a recording GSP-RM (the real one, nvpci_gsp.c, has its suite nvpci-gsp) ---------------- */

struct nvpci_gsp {
  nvpci_gpu *g;
  bool running;
  uint64_t meta, libos;
  unsigned starts, notifies, resets, writes, doorbells;
  uint32_t last_reg, last_val, last_token;
};
nvpci_gsp *nvpci_gsp_new(nvpci_gpu *g) {
  nvpci_gsp *s = calloc(1, sizeof(*s));
  if (s) s->g = g;
  return s;
}
void nvpci_gsp_free(nvpci_gsp *s) { free(s); }
void nvpci_gsp_doorbell(nvpci_gsp *s, uint32_t token) { /* recorded: the hardware passes doorbell writes on */
  s->doorbells++;
  s->last_token = token;
}
int nvpci_gsp_start(nvpci_gsp *s, uint64_t wpr_meta_bus, uint64_t libos_args_bus) {
  s->starts++;
  s->meta = wpr_meta_bus, s->libos = libos_args_bus;
  s->running = true;
  return 0;
}
void nvpci_gsp_notify(nvpci_gsp *s) { s->notifies++; }
void nvpci_gsp_reg_written(nvpci_gsp *s, uint32_t reg, uint32_t v) { s->writes++, s->last_reg = reg, s->last_val = v; }
void nvpci_gsp_reset(nvpci_gsp *s) { s->running = false, s->resets++; }
bool nvpci_gsp_running(const nvpci_gsp *s) { return s->running; }
uint64_t nvpci_gsp_rpcs(const nvpci_gsp *s) { return s->notifies; }

/* ---------------- the driver's side, from tinygrad's NV code ---------------- */

static void flcn_reset(uint32_t base, bool riscv) {
  wr(base + FLCN_ENGINE, 1);
  wr(base + FLCN_ENGINE, 0);
  int polls = 0;
  while (rd(base + FLCN_HWCFG2) & FLCN_HWCFG2_MEM_SCRUBBING) ck_assert_int_lt(++polls, 100);
  if (riscv) wr(base + RISCV_BCR_CTRL, 0x110);
  else {
    wr(base + RISCV_BCR_CTRL, 0);
    ck_assert_uint_eq(rd(base + RISCV_BCR_CTRL) & 1u, 1u);
    wr(base + FLCN_RM, rd(NV_PMC_BOOT_0));
  }
}

static void dma(uint32_t base, uint32_t cmd, uint32_t dest, uint32_t mem_off, uint64_t src, uint32_t size) {
  wr(base + FLCN_DMATRFBASE, (uint32_t)(src >> 8));
  wr(base + FLCN_DMATRFBASE1, (uint32_t)(src >> 40) & 0x1ffu);
  for (uint32_t x = 0; x < size; x += 256) {
    ck_assert_uint_eq(rd(base + FLCN_DMATRFCMD) & 1u, 0);
    wr(base + FLCN_DMATRFMOFFS, dest + x);
    wr(base + FLCN_DMATRFFBOFFS, mem_off + x);
    wr(base + FLCN_DMATRFCMD, cmd);
  }
  ck_assert_uint_eq(rd(base + FLCN_DMATRFCMD) & 2u, 2u);
}

typedef struct hs {
  uint64_t img; /* VRAM address */
  uint32_t code_off, data_off, imem_pa, imem_va, imem_sz, dmem_pa, dmem_va, dmem_sz, pkc, engid, ucode;
  uint64_t mailbox;
} hs;

static uint32_t execute_hs(uint32_t base, const hs *h) {
  wr(base + FLCN_FBIF_CTL, rd(base + FLCN_FBIF_CTL) | FLCN_FBIF_CTL_ALLOW_PHYS_NO_CTX);
  wr(base + FLCN_DMACTL, 0);
  wr(base + FLCN_FBIF_TRANSCFG0, 4); /* target local FB, physical */
  dma(base, 0x614, h->imem_pa, h->imem_va, h->img + h->code_off - h->imem_va, h->imem_sz);
  dma(base, 0x600, h->dmem_pa, h->dmem_va, h->img + h->data_off - h->dmem_va, h->dmem_sz);
  wr(base + FLCN2_BROM_PARAADDR0, h->pkc);
  wr(base + FLCN2_BROM_ENGIDMASK, h->engid);
  wr(base + FLCN2_BROM_CURR_UCODE_ID, h->ucode);
  wr(base + FLCN2_MOD_SEL, 1);
  wr(base + FLCN_BOOTVEC, h->imem_va);
  if (h->mailbox) {
    wr(base + FLCN_MAILBOX0, (uint32_t)h->mailbox);
    wr(base + FLCN_MAILBOX1, (uint32_t)(h->mailbox >> 32));
  }
  if (rd(base + FLCN_CPUCTL) & FLCN_CPUCTL_ALIAS_EN) wr(base + FLCN_CPUCTL_ALIAS, 2);
  else wr(base + FLCN_CPUCTL, FLCN_CPUCTL_STARTCPU);
  ck_assert_uint_ne(rd(base + FLCN_CPUCTL) & FLCN_CPUCTL_HALTED, 0);
  return rd(base + FLCN_MAILBOX0);
}

typedef struct fwsec {
  uint8_t *img;
  uint32_t imem_pa, imem_sz, imem_va, dmem_pa, dmem_sz, pkc, engid, ucode, nsig, sigver;
  const uint8_t *sigs;
  uint8_t rom[0x40000];
} fwsec;

static fwsec FW;

/* tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN: walk the ROM images, the BIT FALCON_DATA token, the ucode table, the FWSEC_PROD descriptor. */
static void fwsec_find(void) {
  uint8_t *rom = FW.rom;
  for (uint32_t o = 0; o < sizeof(FW.rom); o += 4) nvpci_put32(rom + o, rd(NV_PROM_DATA + o));
  uint32_t o = 0, base_len = 0, ext = 0;
  for (;;) {
    ck_assert_uint_eq(nvpci_get16(rom + o), 0xaa55);
    uint32_t pcir = o + nvpci_get16(rom + o + 0x18);
    ck_assert_mem_eq(rom + pcir, "PCIR", 4);
    uint32_t len = nvpci_get16(rom + pcir + 0x10) * 512u;
    uint8_t type = rom[pcir + 0x14];
    if (type == 0x00) base_len = len;
    if (type == 0xe0) {
      ext = o - base_len;
      break;
    }
    ck_assert_uint_eq(rom[pcir + 0x15] & 0x80, 0);
    o += len;
    ck_assert_uint_lt(o, sizeof(FW.rom));
  }
  ck_assert_uint_eq(nvpci_get32(rom + 0x1b2), 0x00544942);
  uint32_t tbl = 0;
  for (unsigned i = 0; i < rom[0x1b0 + 10]; i++) {
    const uint8_t *t = rom + 0x1b0 + rom[0x1b0 + 8] + i * rom[0x1b0 + 9];
    if (t[0] == 0x70 && t[1] == 2 && nvpci_get16(t + 2) >= 4) tbl = nvpci_get32(rom + (nvpci_get32(t + 4) & 0xffff));
  }
  ck_assert_uint_ne(tbl, 0);
  const uint8_t *h = rom + ext + tbl;
  uint32_t desc = 0;
  for (unsigned i = 0; i < h[3]; i++) {
    const uint8_t *e = h + h[1] + i * h[2];
    if (e[0] == 0x85) desc = ext + nvpci_get32(e + 2);
  }
  ck_assert_uint_ne(desc, 0);
  const uint8_t *d = rom + desc;
  uint32_t dsize = nvpci_get32(d) >> 16;
  FW.pkc = nvpci_get32(d + 8);
  uint32_t iface = nvpci_get32(d + 12);
  FW.imem_pa = nvpci_get32(d + 16), FW.imem_sz = nvpci_get32(d + 20), FW.imem_va = nvpci_get32(d + 24);
  FW.dmem_pa = nvpci_get32(d + 28), FW.dmem_sz = nvpci_get32(d + 32);
  FW.engid = nvpci_get16(d + 36), FW.ucode = d[38], FW.nsig = d[39], FW.sigver = nvpci_get16(d + 40);
  FW.sigs = d + 44;
  ck_assert_uint_eq(dsize, 44 + FW.nsig * 384);
  FW.img = rom + desc + dsize;
  (void)iface;
}

/* Patch the FRTS command (nouveau nvkm_gsp_fwsec_patch) and signature sig (-1: the one the fuse selects). */
static void fwsec_patch(uint8_t *img, int sig, uint64_t frts) {
  const uint8_t *d = FW.img - (44 + FW.nsig * 384);
  uint8_t *dm = img + FW.imem_sz;
  const uint8_t *ah = dm + nvpci_get32(d + 12);
  ck_assert_uint_eq(ah[0], 1);
  uint32_t mapper = 0;
  for (unsigned i = 0; i < ah[3]; i++)
    if (nvpci_get32(ah + ah[1] + i * ah[2]) == 4) mapper = nvpci_get32(ah + ah[1] + i * ah[2] + 4);
  ck_assert_uint_ne(mapper, 0);
  nvpci_put32(dm + mapper + 44, 0x15);
  uint8_t *c = dm + nvpci_get32(dm + mapper + 8);
  nvpci_put32(c, 1), nvpci_put32(c + 4, 24), nvpci_put64(c + 8, 0), nvpci_put32(c + 16, 0), nvpci_put32(c + 20, 2);
  nvpci_put32(c + 24, 1), nvpci_put32(c + 28, 20), nvpci_put32(c + 32, (uint32_t)(frts >> 12));
  nvpci_put32(c + 36, 0x100), nvpci_put32(c + 40, 2);
  if (sig < 0) {
    uint32_t reg = rd(0x8241c0 + (FW.ucode - 1) * 4), v = 0;
    while (reg >> v) v++;
    ck_assert_uint_ne(FW.sigver & (1u << v), 0);
    sig = __builtin_popcount(FW.sigver & ((1u << v) - 1));
  }
  memcpy(dm + FW.pkc, FW.sigs + (size_t)sig * 384, 384);
}

/* FWSEC-FRTS on the GSP falcon; returns MAILBOX0. */
static uint32_t run_fwsec(int sig, uint64_t frts) {
  fwsec_find();
  size_t n = FW.imem_sz + FW.dmem_sz;
  uint8_t *img = malloc(n);
  memcpy(img, FW.img, n);
  fwsec_patch(img, sig, frts);
  const uint64_t at = 16 * MIB;
  vram_put(at, img, n);
  free(img);
  flcn_reset(NVPCI_GSP_BASE, false);
  hs h = {.img = at, .code_off = 0, .data_off = FW.imem_sz, .imem_pa = FW.imem_pa, .imem_va = FW.imem_va,
          .imem_sz = FW.imem_sz, .dmem_pa = FW.dmem_pa, .dmem_va = 0, .dmem_sz = FW.dmem_sz, .pkc = FW.pkc,
          .engid = FW.engid, .ucode = FW.ucode};
  return execute_hs(NVPCI_GSP_BASE, &h);
}

/* ---------------- files ---------------- */

static uint8_t *slurp(const char *name, size_t *n) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", E.dir, name);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "%s missing", path);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc((size_t)len);
  ck_assert_uint_eq(fread(p, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  *n = (size_t)len;
  return p;
}

static const uint8_t *elf_section(const uint8_t *e, const char *name, size_t *n) {
  uint64_t shoff = nvpci_get64(e + 40);
  unsigned shnum = nvpci_get16(e + 60), shstr = nvpci_get16(e + 62);
  const uint8_t *strs = e + nvpci_get64(e + shoff + shstr * 64 + 24);
  for (unsigned i = 0; i < shnum; i++) {
    const uint8_t *sh = e + shoff + i * 64;
    if (!strcmp((const char *)strs + nvpci_get32(sh), name)) {
      *n = nvpci_get64(sh + 32);
      return e + nvpci_get64(sh + 24);
    }
  }
  ck_abort_msg("no section %s", name);
  return NULL;
}

/* GSP-RM in VRAM (radix3, bootloader, signature) and the WPR metadata; returns the metadata's bus address. */
static uint64_t put_gsp_rm(bool fmc, const char *sig_name) {
  size_t gn, bn, img_n, sig_n;
  uint8_t *gsp = slurp("gsp-570.144.bin", &gn), *bl = slurp("bootloader-570.144.bin", &bn);
  const uint8_t *img = elf_section(gsp, ".fwimage", &img_n), *sig = elf_section(gsp, sig_name, &sig_n);
  const uint64_t R = 32 * MIB, BL = 31 * MIB, SIG = 30 * MIB, META = 29 * MIB;
  size_t n3 = (img_n + 4095) / 4096;
  ck_assert_uint_le(n3, 512);
  uint8_t page[4096] = {0};
  nvpci_put64(page, E.bar1_bus + R + 4096);
  vram_put(R, page, 4096);
  memset(page, 0, sizeof(page));
  nvpci_put64(page, E.bar1_bus + R + 8192);
  vram_put(R + 4096, page, 4096);
  memset(page, 0, sizeof(page));
  for (size_t i = 0; i < n3; i++) nvpci_put64(page + 8 * i, E.bar1_bus + R + 12288 + 4096 * i);
  vram_put(R + 8192, page, 4096);
  vram_put(R + 12288, img, img_n);
  uint32_t bl_off = nvpci_get32(bl + 16), bl_size = nvpci_get32(bl + 20);
  const uint8_t *desc = bl + nvpci_get32(bl + 12);
  vram_put(BL, bl + bl_off, bl_size);
  vram_put(SIG, sig, sig_n);
  uint8_t m[256] = {0};
  nvpci_put64(m, 0xdc3aae21371a60b3ull), nvpci_put64(m + 8, 1);
  nvpci_put64(m + 16, E.bar1_bus + R), nvpci_put64(m + 24, img_n);
  nvpci_put64(m + 32, E.bar1_bus + BL), nvpci_put64(m + 40, bl_size);
  nvpci_put64(m + 48, nvpci_get32(desc + 48)), nvpci_put64(m + 56, nvpci_get32(desc + 40));
  nvpci_put64(m + 64, nvpci_get32(desc + 32));
  nvpci_put64(m + 72, E.bar1_bus + SIG), nvpci_put64(m + 80, sig_n);
  uint64_t v = E.vram;
  if (fmc) {
    nvpci_put64(m + 192, 0x20000), nvpci_put32(m + 244, 0x1820000), nvpci_put64(m + 104, 0x220000);
    nvpci_put64(m + 128, 0x8700000), nvpci_put64(m + 160, MIB);
  } else { /* tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw non-FMC layout, top-down */
    uint64_t frts = v - 2 * MIB, boot = frts - bl_size, radix = (3 + n3) * 4096ull;
    uint64_t gspo = (boot - radix) & ~0xffffull, heap = 0x8100000, heapo = (gspo - heap) & ~(MIB - 1);
    uint64_t wpr = (heapo - 0x1000) & ~(MIB - 1), nonwpr = (wpr - MIB) & ~(MIB - 1);
    nvpci_put64(m + 88, nonwpr), nvpci_put64(m + 96, nonwpr), nvpci_put64(m + 104, MIB), nvpci_put64(m + 112, wpr);
    nvpci_put64(m + 120, heapo), nvpci_put64(m + 128, heap), nvpci_put64(m + 136, gspo), nvpci_put64(m + 144, boot);
    nvpci_put64(m + 152, frts), nvpci_put64(m + 160, MIB), nvpci_put64(m + 168, v - MIB), nvpci_put64(m + 176, v);
    nvpci_put64(m + 184, v - MIB), nvpci_put64(m + 192, MIB);
  }
  vram_put(META, m, sizeof(m));
  free(gsp), free(bl);
  return E.bar1_bus + META;
}

/* ---------------- tests ---------------- */

START_TEST(identity) {
  static const struct { const char *chip; uint16_t dev; uint32_t arch; bool fsp; } c[] = {
      {"ga102", 0x2204, 0x17, false}, {"ad102", 0x2684, 0x19, false}, {"gh100", 0x2335, 0x18, true},
      {"gb202", 0x2b85, 0x1b, true}};
  for (size_t i = 0; i < 4; i++) {
    env_open(c[i].chip, 1);
    uint32_t v;
    OK(bg_pci_cfg_read(E.d, 0, 4, &v));
    ck_assert_uint_eq(v, 0x10deu | (uint32_t)c[i].dev << 16);
    OK(bg_pci_cfg_read(E.d, 8, 4, &v));
    ck_assert_uint_eq(v >> 8, c[i].fsp && c[i].arch == 0x18 ? 0x030200u : 0x030000u); /* H200: a 3D controller */
    ck_assert_uint_eq(rd(NV_PMC_BOOT_42) >> 24 & 0x3f, c[i].arch);
    ck_assert_uint_eq(rd(NV_PMC_BOOT_0) >> 24 & 0x1f, c[i].arch);
    ck_assert_uint_eq(rd(NV_PGC6_AON_SECURE_SCRATCH_GROUP_42), 512);
    if (c[i].fsp) ck_assert_uint_eq(rd(c[i].arch == 0x18 ? 0x0200bcu : NV_THERM_I2CS_SCRATCH), 0xff); /* gh100 dev_therm.h */
    else {
      ck_assert_uint_eq(rd(NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK) & 1, 1);
      ck_assert_uint_eq(rd(NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0) & 0xff, 0xff);
    }
    ck_assert_uint_eq(rd(NV_PFB_PRI_MMU_WPR2_ADDR_HI), 0);
    ck_assert_uint_eq(rd(NV_PROM_DATA) & 0xffff, 0xaa55);
    /* the BAR1 block register of the generation, the MMU invalidate counted, the doorbell recorded */
    wr(c[i].fsp ? NV_VF_BAR1_BLOCK_LOW : NV_PBUS_BAR1_BLOCK, 0x80000123u);
    ck_assert_uint_eq(rd(c[i].fsp ? NV_VF_BAR1_BLOCK_LOW : NV_PBUS_BAR1_BLOCK), 0x80000123u);
    wr(NV_VF_MMU_INVALIDATE, 0x80000001u);
    ck_assert_uint_eq(nvpci_mmu_invalidates(E.g), 1);
    /* dev_vm.h: PDB ADDR 31:4 and UPPER_PDB ADDR 19:0 = pa >> 12, APERTURE 1:1; latched at the trigger only */
    uint64_t pdb = 0x12345678000ull + ((uint64_t)i << 44);
    wr(NV_VF_MMU_INVALIDATE_PDB, (uint32_t)(pdb >> 12 << 4) | 2u);
    wr(NV_VF_MMU_INVALIDATE_UPPER_PDB, (uint32_t)(pdb >> 40));
    ck_assert_uint_eq(nvpci_tlb_invalidates(E.g), 1);
    ck_assert_uint_eq(nvpci_tlb_last(E.g, NULL, NULL), 0);
    wr(NV_VF_MMU_INVALIDATE, 0x80000043u);
    int aper = -1;
    uint32_t trig = 0;
    ck_assert_uint_eq(nvpci_tlb_invalidates(E.g), 2);
    ck_assert_uint_eq(nvpci_tlb_last(E.g, &aper, &trig), pdb);
    ck_assert_int_eq(aper, 1);
    ck_assert_uint_eq(trig, 0x80000043u);
    wr(NV_VF_DOORBELL, 7);
    uint32_t last;
    ck_assert_uint_eq(nvpci_doorbells(E.g, &last), 1);
    ck_assert_uint_eq(last, 7);
    ck_assert_uint_eq(E.gsp->doorbells, 1); /* passed on to GSP-RM's channels */
    ck_assert_uint_eq(E.gsp->last_token, 7);
    /* the files of the chip's folder */
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", E.dir, c[i].fsp ? "fmc-570.144.bin" : "booter_load-570.144.bin");
    ck_assert_int_eq(access(path, R_OK), 0);
    snprintf(path, sizeof(path), "%s/%s", E.dir, c[i].fsp ? "booter_load-570.144.bin" : "fmc-570.144.bin");
    ck_assert_int_ne(access(path, R_OK), 0);
    env_close();
  }
}
END_TEST

/* A small BAR1 (256 MiB) in front of 1 GiB of VRAM: the host sees the first 256 MiB, the GPU all of it. */
START_TEST(small_bar) {
  mock_sysfs *tree = mock_sysfs_new();
  nvpci_cfg cfg = {.chip = "ad102", .bdf = BDF, .vram_size = 1024 * MIB, .small_bar = true, .fuse_version = 1};
  nvpci_gpu *g = nvpci_new(tree, &cfg);
  ck_assert_ptr_nonnull(g);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(BDF, 0, &d));
  bg_pci_bar b;
  OK(bg_pci_bar_info(d, 1, &b));
  ck_assert_uint_eq(b.size, 256 * MIB);
  OK(bg_pci_bar_info(d, 3, &b));
  ck_assert_uint_eq(b.size, 32 * MIB);
  bg_mmio bar0, bar1;
  OK(bg_pci_map_bar(d, 0, 0, 0, 0, &bar0));
  OK(bg_pci_map_bar(d, 1, 0, 0, 0, &bar1));
  ck_assert_uint_eq(bg_mmio_rd32(&bar0, NV_PGC6_AON_SECURE_SCRATCH_GROUP_42), 1024);
  OK(bg_mmio_wr32(&bar1, 0x1000, 0xfeedf00du));
  uint64_t vsize;
  uint8_t *v = nvpci_vram(g, &vsize);
  ck_assert_uint_eq(vsize, 1024 * MIB);
  ck_assert_uint_eq(nvpci_get32(v + 0x1000), 0xfeedf00du);
  nvpci_put32(v + 0x2000, 0x12345678u);
  ck_assert_uint_eq(bg_mmio_rd32(&bar1, 0x2000), 0x12345678u);
  bg_pci_unmap_bar(d, &bar0);
  bg_pci_unmap_bar(d, &bar1);
  bg_pci_close(d);
  ck_assert_uint_eq(nvpci_nfail(g), 0);
  nvpci_free(g);
  mock_sysfs_free(tree);
}
END_TEST

START_TEST(strict_unmodelled) {
  env_open("ga102", 1);
  ck_assert_uint_eq(rd(0x123450), 0xffffffffu);
  expect_fail(1, "0x123450: register not modelled");
  wr(0x00f000, 1);
  expect_fail(1, "0x00f000: register not modelled");
  rd(NV_THERM_I2CS_SCRATCH); /* an FSP chip's register on Ampere */
  expect_fail(1, "not modelled by the emulated ga102");
  wr(NV_PMC_BOOT_0, 0);
  expect_fail(1, "read-only register 0x000000");
  wr(NV_PFB_PRI_MMU_WPR2_ADDR_HI, 0x10);
  expect_fail(1, "only the secure falcons set WPR2");
  ck_assert_int_eq(bg_mmio_wr16(&E.bar0, NV_PBUS_SW_SCRATCH(0), 1), 0);
  expect_fail(1, "registers are 32-bit");
  ck_assert_uint_eq(bg_mmio_rd16(&E.bar0, NV_PROM_DATA), 0xaa55); /* the PROM window reads bytes too */
  ck_assert_uint_eq(bg_mmio_rd8(&E.bar0, NV_PROM_DATA + 1), 0xaa);
  bg_mmio_rd64(&E.bar0, NV_PROM_DATA);
  expect_fail(1, "read of 8 bytes at 0x300000");
  env_close();
}
END_TEST

START_TEST(falcon_reset_scrub) {
  env_open("ga102", 1);
  const uint32_t B = NVPCI_SEC2_BASE;
  wr(B + FLCN_MAILBOX0, 0x1234);
  wr(B + FLCN_ENGINE, 1);
  wr(B + FLCN_MAILBOX0, 1);
  expect_fail(1, "while the engine is in reset");
  wr(B + FLCN_ENGINE, 0);
  ck_assert_uint_ne(rd(B + FLCN_HWCFG2) & FLCN_HWCFG2_MEM_SCRUBBING, 0);
  wr(B + FLCN_BOOTVEC, 0);
  expect_fail(1, "before HWCFG2.mem_scrubbing cleared");
  int polls = 0;
  while (rd(B + FLCN_HWCFG2) & FLCN_HWCFG2_MEM_SCRUBBING) ck_assert_int_lt(++polls, 10);
  ck_assert_uint_eq(rd(B + FLCN_MAILBOX0), 0); /* the reset cleared it */
  ck_assert_uint_ne(rd(B + FLCN_CPUCTL) & FLCN_CPUCTL_HALTED, 0);
  ck_assert_uint_ne(rd(B + FLCN_HWCFG2) & FLCN_HWCFG2_RISCV, 0);
  wr(B + FLCN_CPUCTL_ALIAS, 2);
  expect_fail(1, "alias_en is 0");
  env_close();
}
END_TEST

START_TEST(falcon_dma_imem) {
  env_open("ga102", 1);
  const uint32_t B = NVPCI_SEC2_BASE;
  flcn_reset(B, false);
  uint8_t blk[512];
  for (int i = 0; i < 512; i++) blk[i] = (uint8_t)(i * 7 + 3);
  vram_put(0x201000, blk, sizeof(blk));
  wr(B + FLCN_FBIF_CTL, FLCN_FBIF_CTL_ALLOW_PHYS_NO_CTX);
  wr(B + FLCN_DMACTL, 0);
  wr(B + FLCN_FBIF_TRANSCFG0, 4);
  dma(B, 0x614, 0x100, 0x1000, 0x200000, 512); /* IMEM 0x100.. from VRAM 0x201000.. */
  ck_assert_mem_eq(E.g->flcn[NVPCI_FLCN_SEC2].imem + 0x100, blk, 512);
  ck_assert_uint_eq(E.g->flcn[NVPCI_FLCN_SEC2].imem_blk[1], 2); /* loaded secure */
  dma(B, 0x600, 0x200, 0x1100, 0x200000, 256); /* DMEM */
  ck_assert_mem_eq(E.g->flcn[NVPCI_FLCN_SEC2].dmem + 0x200, blk + 256, 256);
  wr(B + FLCN_DMATRFCMD, 0x514); /* 128-byte blocks */
  expect_fail(1, "size field 5");
  wr(B + FLCN_FBIF_TRANSCFG0, 1); /* coherent sysmem target */
  wr(B + FLCN_DMATRFCMD, 0x614);
  expect_fail(1, "needs target local FB");
  env_close();
}
END_TEST

START_TEST(fwsec_frts) {
  env_open("ga102", 1);
  ck_assert_uint_eq(run_fwsec(-1, E.vram - 2 * MIB), 0);
  ck_assert_uint_eq(rd(NV_PFB_PRI_MMU_WPR2_ADDR_LO) >> 4, (E.vram - 2 * MIB) >> 12);
  ck_assert_uint_eq(rd(NV_PFB_PRI_MMU_WPR2_ADDR_HI) >> 4, (E.vram - MIB - 4096) >> 12);
  ck_assert_uint_eq(rd(NV_PBUS_SW_SCRATCH(0xe)) >> 16, 0);
  ck_assert_int_eq(nvpci_stage(E.g), NVPCI_STAGE_FRTS);
  env_close();
}
END_TEST

START_TEST(fwsec_wrong_signature) {
  env_open("ga102", 1);
  /* tinygrad's choice: always the last signature (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN.prep_ucode); fuse version 1 selects signature 1 of 3 */
  ck_assert_uint_ne(run_fwsec(2, E.vram - 2 * MIB), 0);
  expect_fail(1, "is signature 2, but fuse version 1");
  ck_assert_uint_eq(rd(NV_PFB_PRI_MMU_WPR2_ADDR_HI), 0);
  ck_assert_uint_ne(rd(NV_PBUS_SW_SCRATCH(0xe)) >> 16, 0);
  ck_assert_int_eq(nvpci_stage(E.g), NVPCI_STAGE_COLD);
  env_close();
  env_open("ad102", 2); /* another fuse version: the last signature is right here */
  ck_assert_uint_eq(run_fwsec(2, E.vram - 2 * MIB), 0);
  env_close();
}
END_TEST

START_TEST(fwsec_wrong_frts) {
  env_open("ga102", 1);
  ck_assert_uint_ne(run_fwsec(-1, E.vram - 3 * MIB), 0);
  expect_fail(1, "frts_region.addr");
  ck_assert_uint_eq(rd(NV_PFB_PRI_MMU_WPR2_ADDR_HI), 0);
  env_close();
}
END_TEST

/* Booter with the WPR metadata: GSP-RM starts (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN B, C). */
static uint32_t run_booter(uint64_t meta, uint64_t libos) {
  size_t n;
  uint8_t *f = slurp("booter_load-570.144.bin", &n);
  const uint8_t *hs2 = f + nvpci_get32(f + 12);
  uint32_t data_off = nvpci_get32(f + 16), data_size = nvpci_get32(f + 20);
  uint8_t *img = f + data_off;
  uint32_t loc = nvpci_get32(f + nvpci_get32(hs2 + 8)), sig = nvpci_get32(f + nvpci_get32(hs2 + 12));
  uint32_t nsig = nvpci_get32(f + nvpci_get32(hs2 + 24)), sig_len = nvpci_get32(hs2 + 4) / nsig;
  memcpy(img + loc, f + nvpci_get32(hs2) + sig, sig_len);
  const uint8_t *lh = f + nvpci_get32(hs2 + 28);
  const uint64_t at = 20 * MIB;
  vram_put(at, img, data_size);
  flcn_reset(NVPCI_GSP_BASE, true);
  wr(NVPCI_GSP_BASE + FLCN_MAILBOX0, (uint32_t)libos);
  wr(NVPCI_GSP_BASE + FLCN_MAILBOX1, (uint32_t)(libos >> 32));
  flcn_reset(NVPCI_SEC2_BASE, false);
  hs h = {.img = at, .code_off = nvpci_get32(lh + 20), .data_off = nvpci_get32(lh + 8), .imem_pa = 0,
          .imem_va = nvpci_get32(lh + 20), .imem_sz = nvpci_get32(lh + 24), .dmem_pa = 0, .dmem_va = 0,
          .dmem_sz = nvpci_get32(lh + 12), .pkc = 0x10, .engid = 1, .ucode = 3, .mailbox = meta};
  free(f);
  return execute_hs(NVPCI_SEC2_BASE, &h);
}

START_TEST(booter_starts_gsp) {
  env_open("ga102", 1);
  bg_sysmem libos;
  OK(bg_pci_alloc_sysmem(E.d, 4096, 0, NULL, &libos));
  uint64_t meta = put_gsp_rm(false, ".fwsignature_ga10x");
  /* without FRTS first: no WPR2 */
  ck_assert_uint_ne(run_booter(meta, libos.bus[0]), 0);
  expect_fail(1, "WPR2 is not set up");
  ck_assert_uint_eq(run_fwsec(-1, E.vram - 2 * MIB), 0);
  /* another chip's signature section */
  uint64_t bad = put_gsp_rm(false, ".fwsignature_ad10x");
  ck_assert_uint_ne(run_booter(bad, libos.bus[0]), 0);
  expect_fail(1, "the signature at sysmemAddrOfSignature differs");
  ck_assert(!nvpci_gsp_running(E.gsp));
  meta = put_gsp_rm(false, ".fwsignature_ga10x");
  ck_assert_uint_eq(run_booter(meta, libos.bus[0]), 0);
  ck_assert(nvpci_gsp_running(E.gsp));
  ck_assert_uint_eq(E.gsp->starts, 1);
  ck_assert_uint_eq(E.gsp->meta, meta); /* what the Booter read from its mailboxes */
  ck_assert_uint_eq(E.gsp->libos, libos.bus[0]); /* and from GSP's */
  ck_assert_int_eq(nvpci_stage(E.g), NVPCI_STAGE_GSP_RUNNING);
  ck_assert_uint_ne(rd(NV_PGC6_BSI_SECURE_SCRATCH_14) & 1u << 26, 0);
  ck_assert_uint_eq(rd(NVPCI_SEC2_BASE + FLCN_MAILBOX0), 0);
  nvpci_set_stage(E.g, NVPCI_STAGE_INIT_DONE); /* what the GSP-RM model says once it posted GSP_INIT_DONE */
  nvpci_set_stage(E.g, NVPCI_STAGE_FRTS);      /* never down */
  ck_assert_int_eq(nvpci_stage(E.g), NVPCI_STAGE_INIT_DONE);
  /* the host rings GSP's command queue; its register writes reach the model (CPU-sequencer steps) */
  wr(NV_PGSP_QUEUE_HEAD0, 0x40);
  ck_assert_uint_eq(E.gsp->notifies, 1);
  ck_assert_uint_eq(rd(NV_PGSP_QUEUE_HEAD0), 0x40);
  wr(NVPCI_GSP_BASE + FLCN_MAILBOX1, 0x3a00);
  ck_assert_uint_eq(E.gsp->last_reg, NVPCI_GSP_BASE + FLCN_MAILBOX1);
  ck_assert_uint_eq(E.gsp->last_val, 0x3a00);
  ck_assert_uint_ne(rd(NVPCI_GSP_BASE + RISCV_CPUCTL) & RISCV_CPUCTL_ACTIVE_STAT, 0);
  ck_assert_uint_ne(rd(NV_PFB_PRI_MMU_WPR2_ADDR_HI), 0);
  /* a process that exits without a reset leaves GSP-RM and WPR2 for the next one (warm detection) */
  bg_pci_free_sysmem(E.d, &libos);
  bg_pci_unmap_bar(E.d, &E.bar0);
  bg_pci_unmap_bar(E.d, &E.bar1);
  bg_pci_close(E.d);
  OK(bg_pci_open_sysfs(BDF, 0, &E.d));
  OK(bg_pci_map_bar(E.d, 0, 0, 0, 0, &E.bar0));
  OK(bg_pci_map_bar(E.d, 1, 0, 0, 0, &E.bar1));
  ck_assert_uint_ne(rd(NV_PFB_PRI_MMU_WPR2_ADDR_HI), 0);
  ck_assert(nvpci_gsp_running(E.gsp));
  /* a function reset makes everything cold */
  unsigned resets = E.gsp->resets;
  OK(bg_pci_reset(E.d));
  ck_assert_uint_eq(E.gsp->resets, resets + 1);
  ck_assert_uint_eq(rd(NV_PFB_PRI_MMU_WPR2_ADDR_HI), 0);
  ck_assert_uint_eq(rd(NV_PFB_PRI_MMU_WPR2_ADDR_LO), 0);
  ck_assert(!nvpci_gsp_running(E.gsp));
  ck_assert_int_eq(nvpci_stage(E.g), NVPCI_STAGE_COLD);
  ck_assert_uint_ne(rd(NVPCI_GSP_BASE + FLCN_CPUCTL) & FLCN_CPUCTL_HALTED, 0);
  ck_assert_uint_eq(rd(NVPCI_GSP_BASE + RISCV_CPUCTL) & RISCV_CPUCTL_ACTIVE_STAT, 0);
  ck_assert_uint_eq(rd(NVPCI_SEC2_BASE + FLCN_MAILBOX0), 0);
  ck_assert_uint_eq(rd(NV_PGC6_BSI_SECURE_SCRATCH_14) & 1u << 26, 0);
  env_close();
}
END_TEST

/* ---------------- FSP ---------------- */

static void emem_write(const uint8_t *p, size_t n) {
  wr(NV_PFSP_EMEMC0, NV_PFSP_EMEMC_AINCW);
  for (size_t i = 0; i < n; i += 4) wr(NV_PFSP_EMEMD0, nvpci_get32(p + i));
}

/* One message (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT kfsp_send_msg, without its extra padding unless pad); returns the response's errorCode. */
static uint32_t fsp_send(uint32_t nvdm, const uint8_t *payload, size_t n, bool pad) {
  uint8_t msg[1024] = {0};
  nvpci_put32(msg, 0xc0000000u);
  nvpci_put32(msg + 4, 0x7eu | 0x10deu << 8 | nvdm << 24);
  memcpy(msg + 8, payload, n);
  size_t len = 8 + ((n + 3) & ~(size_t)3) + (pad && n % 4 == 0 ? 4 : 0);
  emem_write(msg, len);
  wr(NV_PFSP_QUEUE_TAIL0, (uint32_t)len - 4);
  wr(NV_PFSP_QUEUE_HEAD0, 0);
  ck_assert_uint_ne(rd(NV_PFSP_MSGQ_HEAD0), rd(NV_PFSP_MSGQ_TAIL0));
  uint32_t h = rd(NV_PFSP_MSGQ_HEAD0), t = rd(NV_PFSP_MSGQ_TAIL0);
  ck_assert_uint_eq(t - h + 4, 20);
  wr(NV_PFSP_EMEMC0, NV_PFSP_EMEMC_AINCR | h);
  uint32_t r[5];
  for (int i = 0; i < 5; i++) r[i] = rd(NV_PFSP_EMEMD0);
  wr(NV_PFSP_MSGQ_TAIL0, h);
  ck_assert_uint_eq(r[1] >> 24, 0x15); /* NVDM_TYPE_FSP_RESPONSE */
  ck_assert_uint_eq(r[3], nvdm);
  return r[4];
}

static void cot_build(uint8_t *p, uint64_t meta, uint64_t libos) {
  size_t fn, in, hn, sn, kn;
  uint8_t *fmc = slurp("fmc-570.144.bin", &fn);
  const uint8_t *img = elf_section(fmc, "image", &in), *hash = elf_section(fmc, "hash", &hn);
  const uint8_t *sig = elf_section(fmc, "signature", &sn), *key = elf_section(fmc, "publickey", &kn);
  const uint64_t IMG = 40 * MIB, PARAMS = 41 * MIB;
  vram_put(IMG, img, in);
  uint8_t bp[80] = {0};
  nvpci_put32(bp + 8, 1), nvpci_put32(bp + 12, 256), nvpci_put64(bp + 16, meta), nvpci_put32(bp + 36, 1);
  nvpci_put32(bp + 40, 1), nvpci_put64(bp + 48, libos);
  vram_put(PARAMS, bp, sizeof(bp));
  memset(p, 0, 860);
  /* COT version 1 on GH100 (architecture 0x18), 2 on Blackwell (open-gpu-kernel-modules cotPayloadVersion) */
  nvpci_put16(p, rd(NV_PMC_BOOT_42) >> 24 == 0x18 ? 1 : 2), nvpci_put16(p + 2, 860), nvpci_put64(p + 4, E.bar1_bus + IMG);
  nvpci_put64(p + 24, 0x1c00000), nvpci_put32(p + 32, 0x100000);
  memcpy(p + 36, hash, hn), memcpy(p + 84, key, kn), memcpy(p + 468, sig, sn);
  nvpci_put64(p + 852, E.bar1_bus + PARAMS);
  free(fmc);
}

START_TEST(fsp_emem_round_trip) {
  env_open("gh100", 1);
  uint8_t pat[16];
  for (int i = 0; i < 16; i++) pat[i] = (uint8_t)(0xa0 + i);
  wr(NV_PFSP_EMEMC0, NV_PFSP_EMEMC_AINCW | 1u << 8); /* block 1 */
  for (int i = 0; i < 16; i += 4) wr(NV_PFSP_EMEMD0, nvpci_get32(pat + i));
  wr(NV_PFSP_EMEMC0, NV_PFSP_EMEMC_AINCR | 1u << 8);
  for (int i = 0; i < 16; i += 4) ck_assert_uint_eq(rd(NV_PFSP_EMEMD0), nvpci_get32(pat + i));
  wr(NV_PFSP_EMEMC0, 1u << 8 | 4u); /* no auto-increment: the same dword twice */
  ck_assert_uint_eq(rd(NV_PFSP_EMEMD0), nvpci_get32(pat + 4));
  ck_assert_uint_eq(rd(NV_PFSP_EMEMD0), nvpci_get32(pat + 4));
  wr(NV_PFSP_EMEMC0, 4u << 8);
  expect_fail(1, "points past the 1024-byte channel");
  env_close();
}
END_TEST

START_TEST(fsp_cot_boot_and_rejects) {
  env_open("gh100", 1);
  ck_assert_uint_ne(rd(NVPCI_GSP_BASE + FLCN_HWCFG2) & FLCN_HWCFG2_BR_PRIV_LOCKDOWN, 0);
  bg_sysmem libos;
  OK(bg_pci_alloc_sysmem(E.d, 4096, 0, NULL, &libos));
  uint64_t meta = put_gsp_rm(true, ".fwsignature_gh10x");
  uint8_t p[860];
  cot_build(p, meta, libos.bus[0]);
  /* wrong NVDM type, wrong version, a mismatched image: each rejected with an error code, GSP-RM not started */
  ck_assert_uint_eq(fsp_send(0x13, p, sizeof(p), false), NVPCI_FSP_ERR_TYPE);
  expect_fail(1, "NVDM type 0x13");
  nvpci_put16(p, 3);
  ck_assert_uint_eq(fsp_send(0x14, p, sizeof(p), false), NVPCI_FSP_ERR_PAYLOAD);
  expect_fail(1, "NVDM_PAYLOAD_COT version 3");
  nvpci_put16(p, 2); /* Blackwell's version: not GH100's */
  ck_assert_uint_eq(fsp_send(0x14, p, sizeof(p), false), NVPCI_FSP_ERR_PAYLOAD);
  expect_fail(1, "NVDM_PAYLOAD_COT version 2 size 860, expected version 1");
  nvpci_put16(p, 1), nvpci_put16(p + 2, 856);
  ck_assert_uint_eq(fsp_send(0x14, p, sizeof(p), false), NVPCI_FSP_ERR_PAYLOAD);
  expect_fail(1, "size 856");
  nvpci_put16(p + 2, 860);
  uint8_t x = 0x5a;
  vram_put(40 * MIB + 100, &x, 1);
  ck_assert_uint_eq(fsp_send(0x14, p, sizeof(p), false), NVPCI_FSP_ERR_IMAGE);
  expect_fail(1, "FMC image at gspFmcSysmemOffset differs");
  ck_assert(!nvpci_gsp_running(E.gsp));
  ck_assert_uint_ne(rd(NVPCI_GSP_BASE + FLCN_HWCFG2) & FLCN_HWCFG2_BR_PRIV_LOCKDOWN, 0);
  /* the right message, padded as tinygrad pads it: accepted, counted */
  cot_build(p, meta, libos.bus[0]);
  ck_assert_uint_eq(fsp_send(0x14, p, sizeof(p), true), 0);
  ck_assert_uint_eq(nvpci_fsp_padded(E.g), 1);
  ck_assert(nvpci_gsp_running(E.gsp));
  ck_assert_uint_eq(E.gsp->starts, 1);
  ck_assert_uint_eq(E.gsp->meta, meta);
  ck_assert_uint_eq(E.gsp->libos, libos.bus[0]);
  ck_assert_uint_eq(rd(NVPCI_GSP_BASE + FLCN_HWCFG2) & FLCN_HWCFG2_BR_PRIV_LOCKDOWN, 0);
  ck_assert_uint_ne(rd(NVPCI_GSP_BASE + RISCV_CPUCTL) & RISCV_CPUCTL_ACTIVE_STAT, 0);
  ck_assert_uint_ne(rd(NV_PFB_PRI_MMU_WPR2_ADDR_HI), 0);
  ck_assert_uint_ne(rd(NV_PGC6_BSI_SECURE_SCRATCH_14) & 1u << 26, 0);
  /* FWSEC is the FSP's business on Hopper */
  flcn_reset(NVPCI_SEC2_BASE, false);
  wr(NVPCI_SEC2_BASE + FLCN_CPUCTL, FLCN_CPUCTL_STARTCPU);
  expect_fail(1, "boots GSP-RM through the FSP");
  bg_pci_free_sysmem(E.d, &libos);
  OK(bg_pci_reset(E.d));
  ck_assert(!nvpci_gsp_running(E.gsp));
  ck_assert_uint_ne(rd(NVPCI_GSP_BASE + FLCN_HWCFG2) & FLCN_HWCFG2_BR_PRIV_LOCKDOWN, 0);
  ck_assert_uint_eq(rd(NV_PFB_PRI_MMU_WPR2_ADDR_HI), 0);
  env_close();
}
END_TEST

/* ---------------- the plugin module (MOCKPCI+NV, MOCKUSB+NV) ---------------- */

static const char *plugin_path;

START_TEST(plugin_nv) {
  ck_assert_ptr_nonnull(plugin_path);
  setenv("BG_MOCK_PLUGIN", plugin_path, 1);
  bg_mock_devices d;
  setenv("MOCKGPU_SHARED", "1", 1);
  ck_assert_int_eq(bg_mock_plugin_start("MOCKPCI", "NV", &d), -BG_ENOTSUP);
  ck_assert_msg(strstr(bg_last_error(), "MOCKGPU_SHARED=1 is not supported for NV"), "%s", bg_last_error());
  unsetenv("MOCKGPU_SHARED");
  setenv("MOCKGPU_CHIP", "gfx11", 1);
  ck_assert_int_eq(bg_mock_plugin_start("MOCKPCI", "NV", &d), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "MOCKGPU_CHIP must be ga102, ad102, gh100 or gb202"), "%s", bg_last_error());
  setenv("MOCKGPU_CHIP", "gh100", 1);
  setenv("MOCKGPU_COUNT", "2", 1);
  OK(bg_mock_plugin_start("MOCKPCI", "NV", &d));
  ck_assert_int_eq(d.count, 2);
  char path[600];
  snprintf(path, sizeof(path), "%s/fmc-570.144.bin", d.fw_dir);
  ck_assert_int_eq(access(path, R_OK), 0);
  setenv("BG_SYSFS_ROOT", d.sysfs_root, 1);
  setenv("BG_LOCK_DIR", d.lock_dir, 1);
  bg_pci_dev *dev;
  OK(bg_pci_open_sysfs(d.bdf[1], 0, &dev));
  bg_mmio bar0;
  OK(bg_pci_map_bar(dev, 0, 0, 0, 0, &bar0));
  ck_assert_uint_eq(bg_mmio_rd32(&bar0, NV_PMC_BOOT_42) >> 24, 0x18);
  ck_assert_uint_eq(bg_mmio_rd32(&bar0, 0x0200bcu), 0xff); /* GH100's FSP boot-complete scratch (gh100 dev_therm.h) */
  bg_pci_unmap_bar(dev, &bar0);
  bg_pci_close(dev);
  /* MOCKUSB: the same kind, each GPU behind a bridge */
  bg_mock_devices u;
  OK(bg_mock_plugin_start("MOCKUSB", "NV", &u));
  bg_usb_transport *t;
  OK(bg_mock_plugin_usb_transport(0, &t));
  ck_assert_ptr_nonnull(t);
  bg_pci_dev *ud; /* the GPU behind the bridge, its BARs placed by the library */
  OK(bg_usb_pci_open(t, &ud));
  bg_mmio r0, r1;
  OK(bg_pci_map_bar(ud, 0, 0, 0, 0, &r0));
  ck_assert_uint_eq(bg_mmio_rd32(&r0, NV_PMC_BOOT_42) >> 24, 0x18);
  ck_assert_uint_eq(bg_mmio_rd32(&r0, NV_PROM_DATA) & 0xffff, 0xaa55);
  OK(bg_pci_map_bar(ud, 1, 0, 1u << 20, 0, &r1));
  OK(bg_mmio_wr32(&r1, 0x100, 0xc0ffee11u));
  ck_assert_uint_eq(bg_mmio_rd32(&r1, 0x100), 0xc0ffee11u);
  bg_pci_unmap_bar(ud, &r1);
  bg_pci_unmap_bar(ud, &r0);
  bg_pci_close(ud);
  /* one kind per process */
  ck_assert_int_eq(bg_mock_plugin_start("MOCKUSB", "AMD", &u), -BG_EBUSY);
  ck_assert_msg(strstr(bg_last_error(), "are NV, not AMD"), "%s", bg_last_error());
}
END_TEST

/* ---------------- cold boot through the plugin, with the real GSP-RM model ---------------- */

/* The host side of GSP-RM's queues (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw): one shared region (page list, command queue, status queue),
 * RMARGS with MESSAGE_QUEUE_INIT_ARGUMENTS, the libos arguments naming it. */
typedef struct gsp_host {
  bg_sysmem shm, rmargs, libos;
  uint8_t *m;
  uint32_t seq, wptr, rptr;
} gsp_host;

#define QSIZE 0x40000u
#define NPTE (1u + 2u * QSIZE / 4096u)

static void gsp_host_init(gsp_host *h) {
  memset(h, 0, sizeof(*h));
  OK(bg_pci_alloc_sysmem(E.d, NPTE * 4096ull, 0, NULL, &h->shm));
  OK(bg_pci_alloc_sysmem(E.d, 4096, 0, NULL, &h->rmargs));
  OK(bg_pci_alloc_sysmem(E.d, 4096, 0, NULL, &h->libos));
  h->m = (uint8_t *)(uintptr_t)h->shm.view.ptr;
  memset(h->m, 0, NPTE * 4096ull);
  for (unsigned i = 0; i < NPTE; i++) nvpci_put64(h->m + 8 * i, h->shm.bus[i]);
  uint8_t *q = h->m + 0x1000; /* msgqTxHeader */
  nvpci_put32(q + 4, QSIZE), nvpci_put32(q + 8, 0x1000), nvpci_put32(q + 12, QSIZE / 0x1000 - 1);
  nvpci_put32(q + 20, 1), nvpci_put32(q + 24, 32), nvpci_put32(q + 28, 0x1000);
  uint8_t *r = (uint8_t *)(uintptr_t)h->rmargs.view.ptr;
  memset(r, 0, 4096);
  nvpci_put64(r, h->shm.bus[0]), nvpci_put32(r + 8, NPTE), nvpci_put64(r + 16, 0x1000), nvpci_put64(r + 24, 0x1000 + QSIZE);
  r[48] = 1;
  uint8_t *l = (uint8_t *)(uintptr_t)h->libos.view.ptr;
  memset(l, 0, 4096);
  nvpci_put64(l, 0x524d41524753ull); /* "RMARGS" as a big-endian integer */
  nvpci_put64(l + 8, h->rmargs.bus[0]), nvpci_put64(l + 16, 0x1000);
  l[24] = 1, l[25] = 1; /* contiguous, sysmem */
}

static void gsp_host_free(gsp_host *h) {
  bg_pci_free_sysmem(E.d, &h->shm);
  bg_pci_free_sysmem(E.d, &h->rmargs);
  bg_pci_free_sysmem(E.d, &h->libos);
}

/* One RPC record in the command queue (element header, rpc header, payload; XOR checksum folded to 32 bits). */
static void gsp_send(gsp_host *h, uint32_t fn, const uint8_t *payload, size_t n) {
  size_t total = 0x50 + n, elems = (total + 0xfff) / 0x1000;
  uint8_t *b = calloc(elems, 0x1000);
  nvpci_put32(b + 36, h->seq++), nvpci_put32(b + 40, (uint32_t)elems);
  uint8_t *r = b + 0x30;
  nvpci_put32(r, 0x03000000u), nvpci_put32(r + 4, 0x43505256u), nvpci_put32(r + 8, (uint32_t)(0x20 + n));
  nvpci_put32(r + 12, fn), nvpci_put32(r + 16, 0xffffffffu), nvpci_put32(r + 20, 0xffffffffu);
  memcpy(b + 0x50, payload, n);
  uint64_t x = 0;
  for (size_t i = 0; i < (total + 7) / 8; i++) x ^= nvpci_get64(b + 8 * i);
  nvpci_put32(b + 32, (uint32_t)(x >> 32) ^ (uint32_t)x);
  const uint32_t cnt = QSIZE / 0x1000 - 1;
  for (size_t k = 0; k < elems; k++) memcpy(h->m + 0x2000 + ((h->wptr + k) % cnt) * 0x1000, b + k * 0x1000, 0x1000);
  h->wptr = (uint32_t)((h->wptr + elems) % cnt);
  __atomic_store_n((uint32_t *)(void *)(h->m + 0x1000 + 16), h->wptr, __ATOMIC_RELEASE);
  free(b);
}

/* GSP_SET_SYSTEM_INFO and SET_REGISTRY, queued before GSP-RM runs (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw). */
static void gsp_prequeue(gsp_host *h, const char *bdf, bool fmc) {
  uint8_t si[928] = {0};
  bg_pci_bar b;
  for (int i = 0; i < 3; i++) {
    OK(bg_pci_bar_info(E.d, i == 0 ? 0 : i == 1 ? 1 : 3, &b));
    nvpci_put64(si + 8 * i, b.base);
  }
  unsigned dom, bus, dev, fn;
  ck_assert_int_eq(sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn), 4);
  nvpci_put64(si + 32, bus << 8 | dev << 3 | fn);
  nvpci_put64(si + 72, 0x7ffffffff000ull);
  nvpci_put32(si + 80, fmc ? 0x92000 : 0x88000), nvpci_put32(si + 84, 0x1000);
  uint32_t v;
  OK(bg_pci_cfg_read(E.d, 0, 4, &v));
  nvpci_put32(si + 88, v);
  OK(bg_pci_cfg_read(E.d, 0x2c, 4, &v));
  nvpci_put32(si + 92, v);
  OK(bg_pci_cfg_read(E.d, 8, 1, &v));
  nvpci_put32(si + 96, v);
  si[840] = 1;
  gsp_send(h, 72, si, sizeof(si));
  static const char *const names[2] = {"RMForcePcieConfigSave", "RMSecBusResetEnable"};
  uint8_t reg[128] = {0};
  uint32_t at = 8 + 2 * 16;
  for (int i = 0; i < 2; i++) {
    uint8_t *e = reg + 8 + 16 * i;
    nvpci_put32(e, at), e[4] = 1, nvpci_put32(e + 8, 1), nvpci_put32(e + 12, 4);
    memcpy(reg + at, names[i], strlen(names[i]) + 1);
    at += (uint32_t)strlen(names[i]) + 1;
  }
  nvpci_put32(reg, at), nvpci_put32(reg + 4, 2);
  gsp_send(h, 73, reg, at);
}

/* Read the status queue, running CPU-sequencer events, until GSP_INIT_DONE. */
static bool gsp_wait_init_done(gsp_host *h) {
  uint8_t *st = h->m + 0x1000 + QSIZE;
  ck_assert_uint_eq(nvpci_get32(st + 28), 0x1000); /* GSP's side is initialised */
  uint32_t cnt = nvpci_get32(st + 12);
  for (int guard = 0; guard < 64; guard++) {
    uint32_t wp = __atomic_load_n((uint32_t *)(void *)(st + 16), __ATOMIC_ACQUIRE);
    if (h->rptr == wp) return false;
    const uint8_t *e = st + 0x1000 + (size_t)h->rptr * 0x1000;
    uint32_t fn = nvpci_get32(e + 0x30 + 12), elems = nvpci_get32(e + 40);
    ck_assert_uint_eq(nvpci_get32(e + 0x30 + 16), 0); /* rpc_result */
    if (fn == 0x1002) { /* GSP_RUN_CPU_SEQUENCER: WRITE, MODIFY, POLL, DELAY_US, STORE */
      const uint8_t *p = e + 0x50;
      uint32_t n = nvpci_get32(p + 4);
      for (uint32_t i = 0; i < n;) {
        const uint8_t *c = p + 40 + 4 * i;
        uint32_t op = nvpci_get32(c), a = nvpci_get32(c + 4);
        if (op == 0) wr(a, nvpci_get32(c + 8)), i += 3;
        else if (op == 1) wr(a, (rd(a) & ~nvpci_get32(c + 8)) | (nvpci_get32(c + 12) & nvpci_get32(c + 8))), i += 4;
        else if (op == 2) {
          ck_assert_uint_eq(rd(a) & nvpci_get32(c + 8), nvpci_get32(c + 12));
          i += 6;
        }
        else if (op == 3) i += 2;
        else if (op == 4) rd(a), i += 3;
        else {
          ck_abort_msg("sequencer opcode %u", op);
        }
      }
    }
    h->rptr = (h->rptr + elems) % cnt;
    __atomic_store_n((uint32_t *)(void *)(h->m + 0x1000 + 32), h->rptr, __ATOMIC_RELEASE);
    if (fn == 0x1001) return true;
  }
  return false;
}

static void plugin_env(const char *chip) {
  ck_assert_ptr_nonnull(plugin_path);
  setenv("BG_MOCK_PLUGIN", plugin_path, 1);
  setenv("MOCKGPU_CHIP", chip, 1);
  bg_mock_devices d;
  OK(bg_mock_plugin_start("MOCKPCI", "NV", &d));
  setenv("BG_SYSFS_ROOT", d.sysfs_root, 1);
  setenv("BG_LOCK_DIR", d.lock_dir, 1);
  memset(&E, 0, sizeof(E));
  snprintf(E.dir, sizeof(E.dir), "%s", d.fw_dir);
  OK(bg_pci_open_sysfs(d.bdf[0], 0, &E.d));
  OK(bg_pci_map_bar(E.d, 0, 0, 0, 0, &E.bar0));
  OK(bg_pci_map_bar(E.d, 1, 0, 0, 0, &E.bar1));
  bg_pci_bar b;
  OK(bg_pci_bar_info(E.d, 1, &b));
  E.bar1_bus = b.base;
  E.vram = (uint64_t)rd(NV_PGC6_AON_SECURE_SCRATCH_GROUP_42) << 20;
}

/* GA102: FWSEC-FRTS, Booter, GSP-RM to GSP_INIT_DONE; a function reset, and the same again. */
START_TEST(plugin_cold_boot_booter) {
  plugin_env("ga102");
  const char *bdf = bg_pci_name(E.d);
  for (int round = 0; round < 2; round++) {
    gsp_host h;
    gsp_host_init(&h);
    gsp_prequeue(&h, bdf, false);
    ck_assert_uint_eq(run_fwsec(-1, E.vram - 2 * MIB), 0);
    uint64_t meta = put_gsp_rm(false, ".fwsignature_ga10x");
    ck_assert_uint_eq(run_booter(meta, h.libos.bus[0]), 0);
    wr(NVPCI_GSP_BASE + FLCN_OS, 0);
    ck_assert_uint_ne(rd(NVPCI_GSP_BASE + RISCV_CPUCTL) & RISCV_CPUCTL_ACTIVE_STAT, 0);
    ck_assert(gsp_wait_init_done(&h));
    ck_assert_uint_ne(rd(NV_PFB_PRI_MMU_WPR2_ADDR_HI), 0);
    gsp_host_free(&h);
    OK(bg_pci_reset(E.d));
    ck_assert_uint_eq(rd(NV_PFB_PRI_MMU_WPR2_ADDR_HI), 0);
  }
  bg_pci_unmap_bar(E.d, &E.bar0);
  bg_pci_unmap_bar(E.d, &E.bar1);
  bg_pci_close(E.d);
}
END_TEST

/* GH100 and GB202: the FSP's chain of trust, GSP-RM to GSP_INIT_DONE. */
START_TEST(plugin_cold_boot_fsp) {
  static const char *const chips[2] = {"gh100", "gb202"};
  plugin_env(chips[_i]);
  gsp_host h;
  gsp_host_init(&h);
  gsp_prequeue(&h, bg_pci_name(E.d), true);
  uint64_t meta = put_gsp_rm(true, _i ? ".fwsignature_gb20x" : ".fwsignature_gh10x");
  uint8_t p[860];
  cot_build(p, meta, h.libos.bus[0]);
  ck_assert_uint_eq(fsp_send(0x14, p, sizeof(p), false), 0);
  ck_assert_uint_eq(rd(NVPCI_GSP_BASE + FLCN_HWCFG2) & FLCN_HWCFG2_BR_PRIV_LOCKDOWN, 0);
  ck_assert(gsp_wait_init_done(&h));
  gsp_host_free(&h);
  bg_pci_unmap_bar(E.d, &E.bar0);
  bg_pci_unmap_bar(E.d, &E.bar1);
  bg_pci_close(E.d);
}
END_TEST

int main(int argc, char **argv) {
  plugin_path = argc > 1 ? argv[1] : NULL;
  Suite *s = suite_create("nvpci-hw");
  TCase *tc = tcase_create("hw");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, identity);
  tcase_add_test(tc, small_bar);
  tcase_add_test(tc, strict_unmodelled);
  tcase_add_test(tc, falcon_reset_scrub);
  tcase_add_test(tc, falcon_dma_imem);
  tcase_add_test(tc, fwsec_frts);
  tcase_add_test(tc, fwsec_wrong_signature);
  tcase_add_test(tc, fwsec_wrong_frts);
  tcase_add_test(tc, booter_starts_gsp);
  tcase_add_test(tc, fsp_emem_round_trip);
  tcase_add_test(tc, fsp_cot_boot_and_rejects);
  tcase_add_test(tc, plugin_nv);
  tcase_add_test(tc, plugin_cold_boot_booter);
  tcase_add_loop_test(tc, plugin_cold_boot_fsp, 0, 2);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
