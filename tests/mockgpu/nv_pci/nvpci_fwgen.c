/* tests/mockgpu/nv_pci/nvpci_fwgen.c: the firmware of the emulated NVIDIA GPU, generated deterministically (seeded by
 * chip and file) with the layouts the real files have, so the driver parses them as it parses linux-firmware's:
 *
 *   VBIOS (served by the PROM window): PCI expansion ROM images (base 0x00, an EFI image 0x03, the extended 0xE0
 *     image; nouveau nvkm/subdev/bios/image.c, base.c "imaged_addr"), the BIT header at 0x1b0 with a FALCON_DATA
 *     token (0x70, version 2; tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN), the falcon ucode table (version 1, 6-byte packed entries) with a
 *     FWSEC_PROD (0x85) and a FWSEC_DBG (0x86) entry, FALCON_UCODE_DESC_V3 descriptors (nouveau
 *     include/nvfw/fw.h ... nvkm/subdev/gsp/fwsec.c nvkm_gsp_fwsec_v3) with 3 signatures and SignatureVersions 0x7,
 *     the application interface table and a DMEM mapper v3 (fwsec.c nvfw_falcon_appif_*).
 *   booter_load-570.144.bin (GA/AD): nvfw_bin_hdr + nvfw_hs_header_v2 + nvfw_hs_load_header_v2 (include/nvfw/hs.h;
 *     patch_loc / patch_sig / num_sig are file offsets of u32 values, nvkm/subdev/gsp/ga102.c), 3 signatures.
 *   bootloader-570.144.bin: nvfw_bin_hdr + RM_RISCV_UCODE_DESC (84 bytes, nouveau include/nvrm rmRiscvUcode.h).
 *   gsp-570.144.bin: ELF64 with .fwimage, .fwsignature_{ga10x,ad10x,gh10x,gb20x} (4 KiB each) and .fwversion.
 *   fmc-570.144.bin (GH/GB): ELF64 with sections image, hash (48 B), signature (384 B), publickey (381 B; tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT). */
#include "nvpci_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- deterministic bytes ---------------- */

static uint64_t seed_of(const char *a, const char *b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char *s = a; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
  h = (h ^ '/') * 0x100000001b3ull;
  for (const char *s = b; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
  return h;
}

static uint64_t next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void fill(uint64_t *s, uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(next(s) >> 24);
}

static int blob_new(nvpci_blob *b, size_t n) {
  b->p = calloc(1, n ? n : 1);
  b->n = n;
  return b->p ? 0 : -1;
}

static int blob_rand(nvpci_blob *b, size_t n, const char *chip, const char *tag) {
  if (blob_new(b, n) < 0) return -1;
  uint64_t s = seed_of(chip, tag);
  fill(&s, b->p, n);
  return 0;
}

/* ---------------- ELF64 ---------------- */

typedef struct elf_sec {
  const char *name;
  const nvpci_blob *data;
} elf_sec;

static int elf_build(nvpci_blob *out, const elf_sec *secs, unsigned n) {
  char strtab[512] = "";
  size_t strn = 1, name_off[16];
  for (unsigned i = 0; i < n; i++) {
    name_off[i] = strn;
    size_t l = strlen(secs[i].name) + 1;
    memcpy(strtab + strn, secs[i].name, l);
    strn += l;
  }
  const char *shs = ".shstrtab";
  size_t shs_off = strn;
  memcpy(strtab + strn, shs, strlen(shs) + 1);
  strn += strlen(shs) + 1;
  size_t off = 64, data_off[16];
  for (unsigned i = 0; i < n; i++) {
    data_off[i] = off;
    off = (off + secs[i].data->n + 15) & ~(size_t)15;
  }
  size_t str_at = off;
  off = (off + strn + 15) & ~(size_t)15;
  size_t shoff = off, shnum = n + 2;
  if (blob_new(out, shoff + shnum * 64) < 0) return -1;
  uint8_t *e = out->p;
  memcpy(e, "\x7f" "ELF", 4);
  e[4] = 2, e[5] = 1, e[6] = 1;        /* ELFCLASS64, little endian, EV_CURRENT */
  nvpci_put16(e + 16, 2);              /* ET_EXEC */
  nvpci_put16(e + 18, 0xf3);           /* EM_RISCV */
  nvpci_put32(e + 20, 1);
  nvpci_put64(e + 40, shoff);
  nvpci_put16(e + 52, 64);             /* e_ehsize */
  nvpci_put16(e + 58, 64);             /* e_shentsize */
  nvpci_put16(e + 60, (uint16_t)shnum);
  nvpci_put16(e + 62, (uint16_t)(n + 1));
  for (unsigned i = 0; i < n; i++) {
    memcpy(e + data_off[i], secs[i].data->p, secs[i].data->n);
    uint8_t *sh = e + shoff + (i + 1) * 64;
    nvpci_put32(sh, (uint32_t)name_off[i]);
    nvpci_put32(sh + 4, 1);            /* SHT_PROGBITS */
    nvpci_put64(sh + 24, data_off[i]);
    nvpci_put64(sh + 32, secs[i].data->n);
    nvpci_put64(sh + 48, 1);
  }
  memcpy(e + str_at, strtab, strn);
  uint8_t *sh = e + shoff + (n + 1) * 64;
  nvpci_put32(sh, (uint32_t)shs_off);
  nvpci_put32(sh + 4, 3);              /* SHT_STRTAB */
  nvpci_put64(sh + 24, str_at);
  nvpci_put64(sh + 32, strn);
  nvpci_put64(sh + 48, 1);
  return 0;
}

/* ---------------- VBIOS with FWSEC ---------------- */

#define ROM_SIZE 0x20000u
#define BASE_LEN 0x2000u
#define EFI_AT 0x2000u
#define EFI_LEN 0x1000u
#define EXT_AT 0x3000u
#define EXT_ROM_OFF (EXT_AT - BASE_LEN) /* pointers >= BASE_LEN land at EXT_ROM_OFF + pointer (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN.2) */
#define BIT_AT 0x1b0u
#define TBL_AT (EXT_AT + 0x100u)
#define DESC_HDR 44u
/* FWSEC layout (DMEM offsets): interface table, DMEM mapper, command buffer, signature (PKC data) */
#define FW_IMEM 0x2000u
#define FW_DMEM 0x1000u
#define FW_IFACE 0x40u
#define FW_MAPPER 0x200u
#define FW_CMD 0x300u
#define FW_PKC 0x400u

static void put_pcir(uint8_t *img, uint16_t device, uint32_t len, uint8_t type, bool last) {
  img[0] = 0x55, img[1] = 0xaa;
  img[2] = (uint8_t)(len / 512);
  nvpci_put16(img + 0x18, 0x40);
  uint8_t *p = img + 0x40;
  memcpy(p, "PCIR", 4);
  nvpci_put16(p + 4, 0x10de);
  nvpci_put16(p + 6, device);
  nvpci_put16(p + 0x0a, 0x18);
  p[0x0d] = 0x00, p[0x0e] = 0x00, p[0x0f] = 0x03; /* class code 0x030000 */
  nvpci_put16(p + 0x10, (uint16_t)(len / 512));
  p[0x14] = type;
  p[0x15] = last ? 0x80 : 0x00;
}

/* One FALCON_UCODE_DESC_V3 + signatures + image at rom[at]; returns the bytes used. */
static size_t put_fwsec(uint8_t *rom, size_t at, uint64_t *s, nvpci_fw *fw, bool keep) {
  uint8_t *d = rom + at;
  const uint32_t descsize = DESC_HDR + NVPCI_FWSEC_NSIG * NVPCI_SIG_SIZE;
  nvpci_put32(d, descsize << 16 | 3u << 8 | 1u); /* size 31:16, version 15:8, valid */
  nvpci_put32(d + 4, FW_IMEM + FW_DMEM);         /* StoredSize */
  nvpci_put32(d + 8, FW_PKC);
  nvpci_put32(d + 12, FW_IFACE);
  nvpci_put32(d + 16, 0);                        /* IMEMPhysBase */
  nvpci_put32(d + 20, FW_IMEM);
  nvpci_put32(d + 24, 0);                        /* IMEMVirtBase */
  nvpci_put32(d + 28, 0);                        /* DMEMPhysBase */
  nvpci_put32(d + 32, FW_DMEM);
  nvpci_put16(d + 36, 0x400);                    /* EngineIdMask: GSP */
  d[38] = 9;                                     /* UcodeId */
  d[39] = NVPCI_FWSEC_NSIG;
  nvpci_put16(d + 40, 0x7);                      /* SignatureVersions: fuse versions 0, 1, 2 */
  nvpci_put16(d + 42, 0);
  fill(s, d + DESC_HDR, NVPCI_FWSEC_NSIG * NVPCI_SIG_SIZE);
  uint8_t *img = d + descsize;
  fill(s, img, FW_IMEM + FW_DMEM);
  uint8_t *dm = img + FW_IMEM;
  /* application interface table (version 1, header 4, entries 8) with two entries, the DMEM mapper second */
  dm[FW_IFACE] = 1, dm[FW_IFACE + 1] = 4, dm[FW_IFACE + 2] = 8, dm[FW_IFACE + 3] = 2;
  nvpci_put32(dm + FW_IFACE + 4, 0x1), nvpci_put32(dm + FW_IFACE + 8, 0x600);
  nvpci_put32(dm + FW_IFACE + 12, 0x4), nvpci_put32(dm + FW_IFACE + 16, FW_MAPPER);
  uint8_t *m = dm + FW_MAPPER;
  memset(m, 0, 64);
  nvpci_put32(m, 0x50414d44);                    /* "DMAP" */
  nvpci_put16(m + 4, 3), nvpci_put16(m + 6, 64);
  nvpci_put32(m + 8, FW_CMD), nvpci_put32(m + 12, 0x100);
  nvpci_put32(m + 16, FW_CMD), nvpci_put32(m + 20, 0x100);
  memset(dm + FW_CMD, 0, 0x100);
  memset(dm + FW_PKC, 0, NVPCI_SIG_SIZE);
  if (keep) {
    memcpy(fw->fwsec.p, img, FW_IMEM + FW_DMEM);
    for (unsigned i = 0; i < NVPCI_FWSEC_NSIG; i++) memcpy(fw->fw_sigs[i], d + DESC_HDR + i * NVPCI_SIG_SIZE, NVPCI_SIG_SIZE);
    fw->fw_imem_phys = 0, fw->fw_imem_size = FW_IMEM, fw->fw_imem_virt = 0;
    fw->fw_dmem_phys = 0, fw->fw_dmem_size = FW_DMEM, fw->fw_pkc = FW_PKC, fw->fw_iface = FW_IFACE;
    fw->fw_engid = 0x400, fw->fw_ucode_id = 9, fw->fw_sigver = 0x7;
    fw->fw_mapper_off = FW_MAPPER, fw->fw_cmd_off = FW_CMD;
  }
  return descsize + FW_IMEM + FW_DMEM;
}

static int build_vbios(nvpci_fw *fw, const nvpci_chip *c) {
  if (blob_new(&fw->vbios, ROM_SIZE) < 0 || blob_new(&fw->fwsec, FW_IMEM + FW_DMEM) < 0) return -1;
  uint8_t *rom = fw->vbios.p;
  uint64_t s = seed_of(c->name, "vbios");
  fill(&s, rom, ROM_SIZE);
  memset(rom, 0, 0x400); /* headers of the base image */
  put_pcir(rom, c->device, BASE_LEN, 0x00, false);
  put_pcir(rom + EFI_AT, c->device, EFI_LEN, 0x03, false);
  put_pcir(rom + EXT_AT, c->device, ROM_SIZE - EXT_AT, 0xe0, true);
  /* BIT: Id 0xb8ff, "BIT\0", BCD 1.00, HeaderSize 12, TokenSize 8, 3 tokens */
  uint8_t *b = rom + BIT_AT;
  nvpci_put16(b, 0xb8ff);
  nvpci_put32(b + 2, 0x00544942);
  nvpci_put16(b + 6, 0x0100);
  b[8] = 12, b[9] = 8, b[10] = 3;
  static const struct { uint8_t id, ver; uint16_t size, ptr; } tok[3] = {
      {0x42, 1, 8, 0x300}, {0x70, 2, 4, 0x380}, {0x49, 1, 4, 0x390}};
  for (unsigned i = 0; i < 3; i++) {
    uint8_t *t = b + 12 + 8 * i;
    t[0] = tok[i].id, t[1] = tok[i].ver;
    nvpci_put16(t + 2, tok[i].size);
    nvpci_put32(t + 4, tok[i].ptr);
  }
  uint8_t sum = 0;
  for (unsigned i = 0; i < 12; i++) sum = (uint8_t)(sum + b[i]);
  b[11] = (uint8_t)(0x100 - sum);
  nvpci_put32(rom + 0x380, TBL_AT - EXT_ROM_OFF); /* FalconUcodeTablePtr */
  /* falcon ucode table: {Version 1, HeaderSize 6, EntrySize 6, EntryCount 3, DescVersion 3, DescSize 44} */
  uint8_t *t = rom + TBL_AT;
  t[0] = 1, t[1] = 6, t[2] = 6, t[3] = 3, t[4] = 3, t[5] = DESC_HDR;
  size_t dbg_at = TBL_AT + 0x100, prod_at;
  size_t used = put_fwsec(rom, dbg_at, &s, fw, false);
  prod_at = (dbg_at + used + 0xff) & ~(size_t)0xff;
  if (prod_at + used > ROM_SIZE) return -1;
  put_fwsec(rom, prod_at, &s, fw, true);
  static const uint8_t appid[3] = {0x05, 0x86, 0x85}; /* another ucode, FWSEC_DBG, FWSEC_PROD */
  const size_t at[3] = {dbg_at, dbg_at, prod_at};
  for (unsigned i = 0; i < 3; i++) {
    uint8_t *e = t + 6 + 6 * i;
    e[0] = appid[i], e[1] = 0x07;
    nvpci_put32(e + 2, (uint32_t)(at[i] - EXT_ROM_OFF));
  }
  return 0;
}

unsigned nvpci_fwsec_sig_index(const nvpci_fw *fw, uint32_t fuse_version, bool *ok) {
  /* nouveau ga102_gsp_fwsec_signature: the signature of fuse version v is the popcount of the versions below v */
  uint32_t bit = fuse_version < 16 ? 1u << fuse_version : 0;
  *ok = (fw->fw_sigver & bit) != 0;
  unsigned idx = 0;
  for (uint32_t v = 0; v < fuse_version && v < 16; v++) idx += (fw->fw_sigver >> v) & 1u;
  return idx;
}

void nvpci_fwsec_expected(const nvpci_fw *fw, unsigned sig, uint64_t frts, uint8_t *out) {
  memcpy(out, fw->fwsec.p, fw->fwsec.n);
  uint8_t *dm = out + fw->fw_imem_size;
  nvpci_put32(dm + fw->fw_mapper_off + 44, 0x15); /* init_cmd = FRTS */
  uint8_t *c = dm + fw->fw_cmd_off;
  nvpci_put32(c, 1), nvpci_put32(c + 4, 24), nvpci_put64(c + 8, 0), nvpci_put32(c + 16, 0), nvpci_put32(c + 20, 2);
  nvpci_put32(c + 24, 1), nvpci_put32(c + 28, 20), nvpci_put32(c + 32, (uint32_t)(frts >> 12));
  nvpci_put32(c + 36, 0x100), nvpci_put32(c + 40, 2);
  if (sig < NVPCI_FWSEC_NSIG) memcpy(dm + fw->fw_pkc, fw->fw_sigs[sig], NVPCI_SIG_SIZE);
}

/* ---------------- Booter, bootloader ---------------- */

#define BT_HDR 0x100u
#define BT_DATA 0x1000u
#define BT_OS_CODE 0x800u
#define BT_APP 0x1000u
#define BT_OS_DATA 0x800u
#define BT_NSIG 3u

static int build_booter(nvpci_fw *fw, const nvpci_chip *c) {
  const uint32_t data_size = BT_OS_CODE + BT_APP + BT_OS_DATA;
  if (blob_rand(&fw->booter_file, BT_DATA + data_size, c->name, "booter_load") < 0) return -1;
  uint8_t *f = fw->booter_file.p;
  memset(f, 0, BT_DATA);
  nvpci_put32(f, 0x10de), nvpci_put32(f + 4, 1), nvpci_put32(f + 8, (uint32_t)fw->booter_file.n);
  nvpci_put32(f + 12, BT_HDR), nvpci_put32(f + 16, BT_DATA), nvpci_put32(f + 20, data_size);
  uint8_t *h = f + BT_HDR; /* nvfw_hs_header_v2 */
  nvpci_put32(h, 0x200), nvpci_put32(h + 4, BT_NSIG * NVPCI_SIG_SIZE);
  nvpci_put32(h + 8, 0x180), nvpci_put32(h + 12, 0x184);   /* patch_loc, patch_sig: where their values are */
  nvpci_put32(h + 16, 0x188), nvpci_put32(h + 20, 12);     /* meta data: fuse version, engine id, ucode id */
  nvpci_put32(h + 24, 0x194), nvpci_put32(h + 28, 0x1a0), nvpci_put32(h + 32, 28);
  fw->bt_code_off = BT_OS_CODE, fw->bt_code_size = BT_APP;
  fw->bt_data_off = BT_OS_CODE + BT_APP, fw->bt_data_size = BT_OS_DATA;
  fw->bt_patch_loc = fw->bt_data_off + 0x10;
  fw->bt_fuse = 1, fw->bt_engid = 1, fw->bt_ucode_id = 3;
  nvpci_put32(f + 0x180, fw->bt_patch_loc), nvpci_put32(f + 0x184, 0);
  nvpci_put32(f + 0x188, fw->bt_fuse), nvpci_put32(f + 0x18c, fw->bt_engid), nvpci_put32(f + 0x190, fw->bt_ucode_id);
  nvpci_put32(f + 0x194, BT_NSIG);
  uint8_t *l = f + 0x1a0; /* nvfw_hs_load_header_v2 */
  nvpci_put32(l, 0), nvpci_put32(l + 4, BT_OS_CODE), nvpci_put32(l + 8, fw->bt_data_off);
  nvpci_put32(l + 12, BT_OS_DATA), nvpci_put32(l + 16, 1), nvpci_put32(l + 20, fw->bt_code_off);
  nvpci_put32(l + 24, fw->bt_code_size);
  uint64_t s = seed_of(c->name, "booter_sigs");
  fill(&s, f + 0x200, BT_NSIG * NVPCI_SIG_SIZE);
  if (blob_new(&fw->booter_img, data_size) < 0) return -1;
  memcpy(fw->booter_img.p, f + BT_DATA, data_size);
  /* the production signature the fuse selects: nouveau ga100_flcn_fw_signature, fuse_ver - fls(reg) = 0 */
  memcpy(fw->booter_img.p + fw->bt_patch_loc, f + 0x200, NVPCI_SIG_SIZE);
  return 0;
}

#define BL_HDR 0x100u
#define BL_DATA 0x200u
#define BL_SIZE 0x1800u

static int build_bootloader(nvpci_fw *fw, const nvpci_chip *c) {
  if (blob_rand(&fw->bl_file, BL_DATA + BL_SIZE, c->name, "bootloader") < 0) return -1;
  uint8_t *f = fw->bl_file.p;
  memset(f, 0, BL_DATA);
  nvpci_put32(f, 0x10de), nvpci_put32(f + 4, 1), nvpci_put32(f + 8, (uint32_t)fw->bl_file.n);
  nvpci_put32(f + 12, BL_HDR), nvpci_put32(f + 16, BL_DATA), nvpci_put32(f + 20, BL_SIZE);
  uint8_t *d = f + BL_HDR; /* RM_RISCV_UCODE_DESC */
  fw->bl_mon_code = 0x0, fw->bl_mon_data = 0x1000, fw->bl_manifest = 0x1400;
  nvpci_put32(d, 1), nvpci_put32(d + 4, 0), nvpci_put32(d + 8, BL_SIZE);
  nvpci_put32(d + 28, 0x570144);
  nvpci_put32(d + 32, fw->bl_manifest), nvpci_put32(d + 36, 0x400);
  nvpci_put32(d + 40, fw->bl_mon_data), nvpci_put32(d + 44, 0x400);
  nvpci_put32(d + 48, fw->bl_mon_code), nvpci_put32(d + 52, 0x1000);
  nvpci_put32(d + 56, 1);
  if (blob_new(&fw->bl_data, BL_SIZE) < 0) return -1;
  memcpy(fw->bl_data.p, f + BL_DATA, BL_SIZE);
  return 0;
}

/* ---------------- GSP-RM and FMC ELFs ---------------- */

static int build_gsp(nvpci_fw *fw, const nvpci_chip *c) {
  /* one .fwimage for every chip (linux-firmware ships one file), not a whole number of pages */
  if (blob_rand(&fw->fwimage, 0x4b123, "all", "fwimage") < 0) return -1;
  nvpci_blob sigs[NVPCI_NCHIPS] = {{0}};
  elf_sec secs[NVPCI_NCHIPS + 2];
  unsigned n = 0;
  secs[n++] = (elf_sec){".fwimage", &fw->fwimage};
  int r = 0;
  for (unsigned i = 0; i < NVPCI_NCHIPS && r == 0; i++) {
    r = blob_rand(&sigs[i], 0x1000, NVPCI_CHIPS[i].name, "fwsignature");
    secs[n++] = (elf_sec){NVPCI_CHIPS[i].sig_suffix, &sigs[i]};
  }
  nvpci_blob ver = {(uint8_t *)"570.144", 8};
  secs[n++] = (elf_sec){".fwversion", &ver};
  if (r == 0) r = elf_build(&fw->gsp_file, secs, n);
  for (unsigned i = 0; i < NVPCI_NCHIPS; i++) {
    if (&NVPCI_CHIPS[i] == c) fw->fwsig = sigs[i];
    else free(sigs[i].p);
  }
  return r;
}

static int build_fmc(nvpci_fw *fw, const nvpci_chip *c) {
  if (blob_rand(&fw->fmc_image, 0x10000, c->name, "fmc_image") < 0 || blob_rand(&fw->fmc_hash, 48, c->name, "fmc_hash") < 0 ||
      blob_rand(&fw->fmc_sig, NVPCI_SIG_SIZE, c->name, "fmc_sig") < 0 ||
      blob_rand(&fw->fmc_pubkey, NVPCI_SIG_SIZE - 3, c->name, "fmc_pubkey") < 0)
    return -1;
  const elf_sec secs[4] = {{"image", &fw->fmc_image}, {"hash", &fw->fmc_hash}, {"signature", &fw->fmc_sig},
                           {"publickey", &fw->fmc_pubkey}};
  return elf_build(&fw->fmc_file, secs, 4);
}

int nvpci_fw_build(nvpci_fw *fw, nvpci_chip_id chip) {
  memset(fw, 0, sizeof(*fw));
  const nvpci_chip *c = &NVPCI_CHIPS[chip];
  int r = build_vbios(fw, c);
  if (r == 0) r = build_bootloader(fw, c);
  if (r == 0) r = build_gsp(fw, c);
  if (r == 0) r = c->fsp ? build_fmc(fw, c) : build_booter(fw, c);
  if (r < 0) nvpci_fw_free(fw);
  return r;
}

void nvpci_fw_free(nvpci_fw *fw) {
  nvpci_blob *all[] = {&fw->vbios, &fw->fwsec, &fw->booter_file, &fw->booter_img, &fw->bl_file, &fw->bl_data,
                       &fw->gsp_file, &fw->fwimage, &fw->fwsig, &fw->fmc_file, &fw->fmc_image, &fw->fmc_hash,
                       &fw->fmc_sig, &fw->fmc_pubkey};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) free(all[i]->p), all[i]->p = NULL, all[i]->n = 0;
}

/* ---------------- files ---------------- */

static int write_file(nvpci_gpu *g, const char *dir, const char *name, const nvpci_blob *b) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) {
    nvpci_fail(g, "cannot create %s: %s", path, strerror(errno));
    return -1;
  }
  size_t w = fwrite(b->p, 1, b->n, f);
  int rc = fclose(f);
  if (w != b->n || rc != 0) {
    nvpci_fail(g, "cannot write %s", path);
    return -1;
  }
  return 0;
}

int nvpci_write_firmware(nvpci_gpu *g, const char *dir) {
  const nvpci_fw *fw = &g->fw;
  int r = write_file(g, dir, "bootloader-570.144.bin", &fw->bl_file);
  if (r == 0) r = write_file(g, dir, "gsp-570.144.bin", &fw->gsp_file);
  if (r == 0 && g->c->fsp) r = write_file(g, dir, "fmc-570.144.bin", &fw->fmc_file);
  if (r == 0 && !g->c->fsp) r = write_file(g, dir, "booter_load-570.144.bin", &fw->booter_file);
  return r;
}
