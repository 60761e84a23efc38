/* tests/unit/nv/test_nv_fw.c: the NVIDIA firmware parsers and loader (nv/nv_fw.h) on files this test writes.
 *
 * The files are laid out here from the structure definitions, independently of the parsers: PCI expansion ROM images
 * and NPDE (Linux nouveau nvkm/subdev/bios/image.c, pcir.c, npde.c), the BIT header and FALCON_DATA token (bios/bit.c,
 * pmu.c), FALCON_UCODE_DESC_V3, the application interface table and DMEM mapper v3 (nvkm/subdev/gsp/fwsec.c),
 * nvfw_bin_hdr / nvfw_hs_header_v2 / nvfw_hs_load_header_v2 (include/nvfw/fw.h, hs.h; falcon/fw.c for the indirect
 * patch fields), RM_RISCV_UCODE_DESC (include/nvrm/535.113.01/.../rmRiscvUcode.h) and ELF64 (System V gABI). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check_helpers.h"
#include "baregpu/error.h"
#include "nv/nv_fw.h"

static void p16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void p32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void p64(uint8_t *p, uint64_t v) { p32(p, (uint32_t)v), p32(p + 4, (uint32_t)(v >> 32)); }
static uint32_t g32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t g64(const uint8_t *p) { return g32(p) | (uint64_t)g32(p + 4) << 32; }

/* ---------------- VBIOS ---------------- */

enum {
  ROM_SIZE = 0x1800,
  BASE_LEN = 0x400,  /* image 0: 2 x 512 */
  IMG1 = 0x400,      /* image 1: PCIR says 1 x 512, its NPDE says 2 x 512 */
  EXT = 0x800,       /* image 2: code type 0xE0 */
  TABLE = EXT + 0x100,
  DESC = EXT + 0x200,
  NSIG = 3,
  DESC_SIZE = 44 + NSIG * 384,
  IMAGE = DESC + DESC_SIZE,
  IMEM = 0x200, DMEM = 0x400, STORED = IMEM + DMEM,
  IFACE = 0x10, MAPPER = 0x40, CMDBUF = 0x100, PKC = 0x200,
};

static void pci_image(uint8_t *r, unsigned at, unsigned len512, uint8_t type, bool last) {
  r[at] = 0x55, r[at + 1] = 0xaa;
  p16(r + at + 0x18, 0x20);
  uint8_t *pc = r + at + 0x20;
  memcpy(pc, "PCIR", 4);
  p16(pc + 4, 0x10de);
  p16(pc + 0x0a, 0x18); /* structure length */
  p16(pc + 0x10, len512);
  pc[0x14] = type;
  pc[0x15] = last ? 0x80 : 0;
}

/* A ROM with base image, an EFI image whose NPDE gives its real length, and the 0xE0 image with the ucode table and
 * FWSEC_PROD (3 signatures, versions bits 2, 5, 6). */
static uint8_t *make_rom(void) {
  uint8_t *r = calloc(1, ROM_SIZE);
  pci_image(r, 0, BASE_LEN / 512, 0x00, false);
  pci_image(r, IMG1, 1, 0x03, false);
  uint8_t *npde = r + IMG1 + 0x40; /* (0x20 + 0x18 + 15) & ~15 */
  memcpy(npde, "NPDE", 4);
  p16(npde + 8, 2);
  npde[10] = 0;
  pci_image(r, EXT, (ROM_SIZE - EXT) / 512, 0xe0, true);
  /* BIT at 0x1b0: id 0xb8ff, "BIT\0", BCD, HeaderSize 12, TokenSize 6, 2 tokens. */
  uint8_t *b = r + 0x1b0;
  b[0] = 0xff, b[1] = 0xb8;
  memcpy(b + 2, "BIT", 4);
  p16(b + 6, 0x0100);
  b[8] = 12, b[9] = 6, b[10] = 2;
  b[12] = 0x69, b[13] = 1, p16(b + 14, 4), p16(b + 16, 0x300); /* 'i' */
  b[18] = 0x70, b[19] = 2, p16(b + 20, 4), p16(b + 22, 0x200);  /* 'p' FALCON_DATA v2 */
  p32(r + 0x200, BASE_LEN + (TABLE - EXT));                      /* FalconUcodeTablePtr, in the image-0 space */
  uint8_t *t = r + TABLE;
  t[0] = 1, t[1] = 6, t[2] = 6, t[3] = 2, t[4] = 3, t[5] = 44;
  t[6] = 0x45, t[7] = 0, p32(t + 8, 0xdead);                     /* FWSEC_DBG: not ours */
  t[12] = 0x85, t[13] = 0, p32(t + 14, BASE_LEN + (DESC - EXT)); /* FWSEC_PROD */
  uint8_t *d = r + DESC;
  p32(d, 1u | 3u << 8 | (uint32_t)DESC_SIZE << 16);
  p32(d + 4, STORED), p32(d + 8, PKC), p32(d + 12, IFACE), p32(d + 16, 0x11), p32(d + 20, IMEM), p32(d + 24, 0x22);
  p32(d + 28, 0x33), p32(d + 32, DMEM);
  p16(d + 36, 0x4), d[38] = 9, d[39] = NSIG, p16(d + 40, 0x0064);
  for (int i = 0; i < NSIG; i++) memset(d + 44 + i * 384, 0xa0 + i, 384);
  uint8_t *img = r + IMAGE;
  for (int i = 0; i < STORED; i++) img[i] = (uint8_t)(i * 7 + 1);
  uint8_t *dm = img + IMEM;
  dm[IFACE] = 1, dm[IFACE + 1] = 4, dm[IFACE + 2] = 8, dm[IFACE + 3] = 2;
  p32(dm + IFACE + 4, 1), p32(dm + IFACE + 8, 0x80);      /* some other application */
  p32(dm + IFACE + 12, 4), p32(dm + IFACE + 16, MAPPER);  /* DMEMMAPPER */
  p32(dm + MAPPER + 8, CMDBUF);                           /* cmd_in_buffer_offset */
  p32(dm + MAPPER + 44, 0);                               /* init_cmd */
  return r;
}

START_TEST(vbios_good) {
  uint8_t *r = make_rom();
  bg_nv_vbios v;
  OK(bg_nv_vbios_parse(r, ROM_SIZE, &v));
  ck_assert_uint_eq(v.expansion_rom_off, EXT - BASE_LEN);
  ck_assert_uint_eq(v.bit_off, 0x1b0);
  ck_assert_uint_eq(v.ucode_table_off, TABLE);
  ck_assert_uint_eq(v.fwsec.stored_size, STORED);
  ck_assert_uint_eq(v.fwsec.pkc_data_offset, PKC);
  ck_assert_uint_eq(v.fwsec.interface_offset, IFACE);
  ck_assert_uint_eq(v.fwsec.imem_phys_base, 0x11);
  ck_assert_uint_eq(v.fwsec.imem_load_size, IMEM);
  ck_assert_uint_eq(v.fwsec.imem_virt_base, 0x22);
  ck_assert_uint_eq(v.fwsec.dmem_phys_base, 0x33);
  ck_assert_uint_eq(v.fwsec.dmem_load_size, DMEM);
  ck_assert_uint_eq(v.fwsec.engine_id_mask, 4);
  ck_assert_uint_eq(v.fwsec.ucode_id, 9);
  ck_assert_uint_eq(v.fwsec.signature_count, NSIG);
  ck_assert_uint_eq(v.fwsec.signature_versions, 0x64);
  ck_assert_ptr_eq(v.signatures, r + DESC + 44);
  ck_assert_ptr_eq(v.image, r + IMAGE);
  ck_assert_uint_eq(v.image_size, STORED);
  free(r);
}
END_TEST

/* One field spoiled at a time: the parse fails naming it. */
static void rom_fails(void (*spoil)(uint8_t *), size_t n, const char *sub) {
  uint8_t *r = make_rom();
  spoil(r);
  bg_nv_vbios v;
  FAILS(bg_nv_vbios_parse(r, n, &v), BG_EFORMAT, sub);
  ck_assert_msg(strstr(bg_last_error(), "VBIOS") != NULL, "'%s' does not name the VBIOS", bg_last_error());
  free(r);
}
static void sp_none(uint8_t *r) { (void)r; }
static void sp_romsig(uint8_t *r) { r[0] = 0x12; }
static void sp_pcir(uint8_t *r) { r[IMG1 + 0x20] = 'X'; }
static void sp_no_e0(uint8_t *r) { r[EXT + 0x20 + 0x14] = 0x03; }
static void sp_len0(uint8_t *r) { p16(r + IMG1 + 0x40 + 8, 0); }
static void sp_bit(uint8_t *r) { r[0x1b0 + 2] = 'b'; }
static void sp_falcon_ver(uint8_t *r) { r[0x1b0 + 19] = 1; }
static void sp_no_token(uint8_t *r) { r[0x1b0 + 18] = 0x71; }
static void sp_table_ptr(uint8_t *r) { p32(r + 0x200, 0x7fffff00); }
static void sp_no_prod(uint8_t *r) { r[TABLE + 12] = 0x45; }
static void sp_desc_ver(uint8_t *r) { p32(r + DESC, 1u | 2u << 8 | (uint32_t)DESC_SIZE << 16); }
static void sp_desc_flag(uint8_t *r) { p32(r + DESC, 3u << 8 | (uint32_t)DESC_SIZE << 16); }
static void sp_desc_size(uint8_t *r) { p32(r + DESC, 1u | 3u << 8 | (uint32_t)(DESC_SIZE - 1) << 16); }
static void sp_stored(uint8_t *r) { p32(r + DESC + 4, ROM_SIZE); }
static void sp_loadsizes(uint8_t *r) { p32(r + DESC + 32, DMEM + 0x100); }
static void sp_pkc(uint8_t *r) { p32(r + DESC + 8, DMEM - 383); }

START_TEST(vbios_errors) {
  rom_fails(sp_romsig, ROM_SIZE, "ROM signature 0xaa12, expected 0xaa55");
  rom_fails(sp_pcir, ROM_SIZE, "PCI data structure signature");
  rom_fails(sp_no_e0, ROM_SIZE, "code type 0xE0");
  rom_fails(sp_len0, ROM_SIZE, "image length 0");
  rom_fails(sp_bit, ROM_SIZE, "no BIT header");
  rom_fails(sp_falcon_ver, ROM_SIZE, "FALCON_DATA (0x70): version 1");
  rom_fails(sp_no_token, ROM_SIZE, "no FALCON_DATA token");
  rom_fails(sp_table_ptr, ROM_SIZE, "falcon ucode table pointer 0x7fffff00");
  rom_fails(sp_no_prod, ROM_SIZE, "no FWSEC_PROD entry");
  rom_fails(sp_desc_ver, ROM_SIZE, "descriptor version 2, expected 3");
  rom_fails(sp_desc_flag, ROM_SIZE, "VERSION_AVAILABLE");
  rom_fails(sp_desc_size, ROM_SIZE, "descriptor size");
  rom_fails(sp_stored, ROM_SIZE, "StoredSize");
  rom_fails(sp_loadsizes, ROM_SIZE, "DMEMLoadSize 0x500 exceed");
  rom_fails(sp_pkc, ROM_SIZE, "PKCDataOffset");
  rom_fails(sp_none, IMAGE + STORED - 1, "StoredSize");  /* cut inside the image */
  rom_fails(sp_none, EXT + 0x10, "past the end");         /* cut before the 0xE0 image's header */
  for (size_t n = 0; n < IMAGE + STORED; n += 97) {       /* every prefix fails cleanly */
    uint8_t *r = make_rom();
    uint8_t *cut = malloc(n ? n : 1);
    memcpy(cut, r, n);
    bg_nv_vbios v;
    ck_assert_int_lt(bg_nv_vbios_parse(cut, n, &v), 0);
    free(cut);
    free(r);
  }
}
END_TEST

START_TEST(sig_index) {
  bg_nv_fwsec_desc d = {.signature_count = 3, .signature_versions = 0x0064}; /* bits 2, 5, 6 */
  unsigned idx = 99;
  OK(bg_nv_fwsec_sig_index(&d, 2, &idx));
  ck_assert_uint_eq(idx, 0);
  OK(bg_nv_fwsec_sig_index(&d, 5, &idx));
  ck_assert_uint_eq(idx, 1);
  OK(bg_nv_fwsec_sig_index(&d, 6, &idx));
  ck_assert_uint_eq(idx, 2);
  FAILS(bg_nv_fwsec_sig_index(&d, 3, &idx), BG_EFORMAT, "fuse version 3: SignatureVersions 0x0064");
  FAILS(bg_nv_fwsec_sig_index(&d, 0, &idx), BG_EFORMAT, "fuse version 0");
  FAILS(bg_nv_fwsec_sig_index(&d, 40, &idx), BG_EFORMAT, "fuse version 40");
  ck_assert_uint_eq(idx, 2); /* untouched on failure */
  d.signature_versions = 0x0065;                          /* bit 6 is the 4th set bit, but only 3 signatures */
  FAILS(bg_nv_fwsec_sig_index(&d, 6, &idx), BG_EFORMAT, "SignatureCount is 3");
  OK(bg_nv_fwsec_sig_index(&d, 0, &idx));
  ck_assert_uint_eq(idx, 0);
  d = (bg_nv_fwsec_desc){.signature_count = 1, .signature_versions = 0x8000};
  OK(bg_nv_fwsec_sig_index(&d, 15, &idx));
  ck_assert_uint_eq(idx, 0);
  d.signature_count = 0;
  FAILS(bg_nv_fwsec_sig_index(&d, 15, &idx), BG_EFORMAT, "SignatureCount 0");
}
END_TEST

START_TEST(frts_patch) {
  uint8_t *r = make_rom();
  bg_nv_vbios v;
  OK(bg_nv_vbios_parse(r, ROM_SIZE, &v));
  unsigned idx;
  OK(bg_nv_fwsec_sig_index(&v.fwsec, 5, &idx));
  uint8_t *img = NULL;
  size_t n = 0;
  uint64_t frts = 0x3fe00000ull + (0x7ull << 32); /* above 4 GiB */
  OK(bg_nv_fwsec_frts_image(&v, idx, frts, &img, &n));
  ck_assert_uint_eq(n, STORED);
  uint8_t *want = malloc(STORED);
  memcpy(want, r + IMAGE, STORED);
  uint8_t *dm = want + IMEM;
  p32(dm + MAPPER + 44, 0x15); /* init_cmd = FRTS */
  uint8_t *c = dm + CMDBUF;
  p32(c, 1), p32(c + 4, 24), p64(c + 8, 0), p32(c + 16, 0), p32(c + 20, 2);
  p32(c + 24, 1), p32(c + 28, 20), p32(c + 32, (uint32_t)(frts >> 12)), p32(c + 36, 0x100), p32(c + 40, 2);
  memset(dm + PKC, 0xa1, 384); /* signature 1 */
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(img[i] == want[i], "byte 0x%zx (DMEM 0x%zx): 0x%02x, want 0x%02x", i, i - IMEM, img[i], want[i]);
  ck_assert_uint_eq(g32(img + IMEM + CMDBUF + 32), 0x73fe00);
  ck_assert_uint_eq(g64(img + IMEM + CMDBUF + 8), 0);
  ck_assert_msg(memcmp(r + IMAGE, img, 16) == 0 && r[IMAGE + IMEM + MAPPER + 44] == 0, "the ROM was written");
  free(img);
  free(want);
  FAILS(bg_nv_fwsec_frts_image(&v, 3, frts, &img, &n), BG_EFORMAT, "signature index 3");
  ck_assert_ptr_null(img);
  FAILS(bg_nv_fwsec_frts_image(&v, 0, frts + 0x800, &img, &n), BG_EINVAL, "FRTS offset");
  /* The interface table spoiled in the ROM: parse still fine, the patch names the field. */
  struct { unsigned at; uint32_t val; int width; const char *sub; } bad[] = {
      {IMAGE + IMEM + IFACE, 2, 1, "interface header version 2"},
      {IMAGE + IMEM + IFACE + 12, 5, 4, "no DMEMMAPPER entry"},
      {IMAGE + IMEM + IFACE + 16, DMEM - 63, 4, "DMEM mapper at DMEM 0x3c1"},
      {IMAGE + IMEM + MAPPER + 8, DMEM - 43, 4, "cmd_in_buffer_offset 0x3d5"},
      {IMAGE + IMEM + IFACE + 3, 200, 1, "of 200 outside DMEM"},
      {IMAGE + IMEM + IFACE + 2, 4, 1, "entry size 4"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    uint8_t *r2 = make_rom();
    if (bad[i].width == 1) r2[bad[i].at] = (uint8_t)bad[i].val;
    else p32(r2 + bad[i].at, bad[i].val);
    if (i == 4) p32(r2 + IMAGE + IMEM + IFACE + 12, 5); /* no mapper among the first two: walk on */
    OK(bg_nv_vbios_parse(r2, ROM_SIZE, &v));
    FAILS(bg_nv_fwsec_frts_image(&v, 0, frts, &img, &n), BG_EFORMAT, bad[i].sub);
    free(r2);
  }
  free(r);
}
END_TEST

/* ---------------- Booter ---------------- */

enum { BT_HDR = 0x40, BT_LOAD = 0xa0, BT_SIG = 0x100, BT_DATA = 0x200, BT_DSIZE = 0x400, BT_SIZE = BT_DATA + BT_DSIZE,
       BT_LOC = 0x300 };

static uint8_t *make_booter(void) {
  uint8_t *f = calloc(1, BT_SIZE);
  p32(f, 0x10de), p32(f + 4, 1), p32(f + 8, BT_SIZE), p32(f + 12, BT_HDR), p32(f + 16, BT_DATA), p32(f + 20, BT_DSIZE);
  uint8_t *h = f + BT_HDR;                          /* nvfw_hs_header_v2 */
  p32(h, BT_SIG), p32(h + 4, 0x100);                /* sig_prod_offset, sig_prod_size (2 x 0x80) */
  p32(h + 8, 0x80), p32(h + 12, 0x84);              /* patch_loc, patch_sig: where their values are */
  p32(h + 16, 0x90), p32(h + 20, 12);               /* meta_data_offset, size */
  p32(h + 24, 0x88);                                /* num_sig: where its value is */
  p32(h + 28, BT_LOAD), p32(h + 32, 28);            /* header_offset, header_size */
  p32(f + 0x80, BT_LOC), p32(f + 0x84, 0), p32(f + 0x88, 2);
  uint8_t *l = f + BT_LOAD;                         /* nvfw_hs_load_header_v2 */
  p32(l, 0), p32(l + 4, 0x100), p32(l + 8, 0x100), p32(l + 12, 0x80), p32(l + 16, 1), p32(l + 20, 0x200),
      p32(l + 24, 0x180);
  memset(f + BT_SIG, 0x11, 0x80);
  memset(f + BT_SIG + 0x80, 0x22, 0x80);
  for (int i = 0; i < BT_DSIZE; i++) f[BT_DATA + i] = (uint8_t)(i ^ 0x5a);
  return f;
}

START_TEST(booter_good) {
  uint8_t *f = make_booter();
  bg_nv_booter b;
  OK(bg_nv_booter_parse(f, BT_SIZE, "booter_load-570.144.bin", &b));
  ck_assert_uint_eq(b.image_size, BT_DSIZE);
  for (size_t i = 0; i < BT_DSIZE; i++) {
    uint8_t want = i >= BT_LOC && i < BT_LOC + 0x80 ? 0x11 : f[BT_DATA + i];
    ck_assert_msg(b.image[i] == want, "image byte 0x%zx: 0x%02x, want 0x%02x", i, b.image[i], want);
  }
  ck_assert_uint_eq(b.os_code_offset, 0);
  ck_assert_uint_eq(b.os_code_size, 0x100);
  ck_assert_uint_eq(b.os_data_offset, 0x100);
  ck_assert_uint_eq(b.os_data_size, 0x80);
  ck_assert_uint_eq(b.app0_offset, 0x200);
  ck_assert_uint_eq(b.app0_size, 0x180);
  bg_nv_booter_free(&b);
  ck_assert_ptr_null(b.image);
  p32(f + 0x84, 0x80); /* patch_sig selects the second signature */
  OK(bg_nv_booter_parse(f, BT_SIZE, "booter_load-570.144.bin", &b));
  ck_assert_uint_eq(b.image[BT_LOC], 0x22);
  ck_assert_uint_eq(b.image[BT_LOC + 0x7f], 0x22);
  ck_assert_uint_eq(b.image[BT_LOC + 0x80], f[BT_DATA + BT_LOC + 0x80]);
  bg_nv_booter_free(&b);
  free(f);
}
END_TEST

static void booter_fails(unsigned at, uint32_t val, size_t n, const char *sub) {
  uint8_t *f = make_booter();
  if (at != ~0u) p32(f + at, val);
  bg_nv_booter b = {.image = (uint8_t *)f};
  FAILS(bg_nv_booter_parse(f, n, "nvidia/ga102/gsp/booter_load-570.144.bin", &b), BG_EFORMAT, sub);
  ck_assert_msg(strstr(bg_last_error(), "nvidia/ga102/gsp/booter_load-570.144.bin: ") == bg_last_error(),
                "'%s' does not start with the file", bg_last_error());
  ck_assert_ptr_eq(b.image, f); /* *out untouched */
  free(f);
}

START_TEST(booter_errors) {
  booter_fails(0, 0x10df, BT_SIZE, "bin_magic 0x10df, expected 0x10de");
  booter_fails(~0u, 0, 20, "smaller than the 24-byte nvfw_bin_hdr");
  booter_fails(20, BT_DSIZE + 1, BT_SIZE, "data_offset 0x200 + data_size 0x401");
  booter_fails(20, 0, BT_SIZE, "data_size 0");
  booter_fails(12, BT_SIZE - 8, BT_SIZE, "nvfw_hs_header_v2 exceeds");
  booter_fails(BT_HDR + 8, BT_SIZE - 2, BT_SIZE, "patch_loc 0x5fe");
  booter_fails(0x88, 0, BT_SIZE, "num_sig 0");
  booter_fails(0x88, 3, BT_SIZE, "sig_prod_size 0x100 is not num_sig 3");
  booter_fails(0x84, BT_SIZE, BT_SIZE, "patch_sig 0x600");
  booter_fails(0x80, BT_DSIZE - 0x7f, BT_SIZE, "patch_loc 0x381");
  booter_fails(BT_HDR + 28, BT_SIZE - 4, BT_SIZE, "nvfw_hs_load_header_v2 exceeds");
  booter_fails(BT_LOAD + 16, 0, BT_SIZE, "num_apps 0");
  booter_fails(BT_LOAD + 16, 200, BT_SIZE, "with 200 apps");
  booter_fails(BT_LOAD + 12, BT_DSIZE, BT_SIZE, "os_data_offset 0x100 + os_data_size 0x400");
  booter_fails(BT_LOAD + 24, BT_DSIZE, BT_SIZE, "app[0] offset 0x200 size 0x400");
  booter_fails(BT_LOAD + 24, 0, BT_SIZE, "app[0] offset 0x200 size 0x0");
}
END_TEST

/* ---------------- Bootloader ---------------- */

enum { BL_DESC = 0x20, BL_DATA = 0x80, BL_DSIZE = 0x100, BL_SIZE = BL_DATA + BL_DSIZE };

static uint8_t *make_bootloader(void) {
  uint8_t *f = calloc(1, BL_SIZE);
  p32(f, 0x10de), p32(f + 8, BL_SIZE), p32(f + 12, BL_DESC), p32(f + 16, BL_DATA), p32(f + 20, BL_DSIZE);
  uint8_t *d = f + BL_DESC; /* RM_RISCV_UCODE_DESC */
  p32(d, 4);                /* version */
  p32(d + 32, 0x10), p32(d + 36, 0x8);  /* manifestOffset, manifestSize */
  p32(d + 40, 0x20), p32(d + 44, 0x10); /* monitorDataOffset, Size */
  p32(d + 48, 0x40), p32(d + 52, 0x80); /* monitorCodeOffset, Size */
  for (int i = 0; i < BL_DSIZE; i++) f[BL_DATA + i] = (uint8_t)i;
  return f;
}

START_TEST(bootloader) {
  uint8_t *f = make_bootloader();
  bg_nv_bootloader b;
  OK(bg_nv_bootloader_parse(f, BL_SIZE, "bootloader-570.144.bin", &b));
  ck_assert_ptr_eq(b.data, f + BL_DATA);
  ck_assert_uint_eq(b.data_size, BL_DSIZE);
  ck_assert_uint_eq(b.manifest_offset, 0x10);
  ck_assert_uint_eq(b.monitor_data_offset, 0x20);
  ck_assert_uint_eq(b.monitor_code_offset, 0x40);
  p32(f + BL_DESC + 48, BL_DSIZE);
  FAILS(bg_nv_bootloader_parse(f, BL_SIZE, "bl.bin", &b), BG_EFORMAT, "bl.bin: RM_RISCV_UCODE_DESC.monitorCodeOffset 0x100");
  p32(f + BL_DESC + 48, 0x40);
  p32(f + BL_DESC + 32, 0x1000);
  FAILS(bg_nv_bootloader_parse(f, BL_SIZE, "bl.bin", &b), BG_EFORMAT, "manifestOffset 0x1000");
  p32(f + BL_DESC + 32, 0x10);
  p32(f + 12, BL_SIZE - 83);
  FAILS(bg_nv_bootloader_parse(f, BL_SIZE, "bl.bin", &b), BG_EFORMAT, "84-byte RM_RISCV_UCODE_DESC");
  p32(f + 12, BL_DESC);
  p32(f, 0xde10);
  FAILS(bg_nv_bootloader_parse(f, BL_SIZE, "bl.bin", &b), BG_EFORMAT, "bl.bin: nvfw_bin_hdr.bin_magic 0xde10");
  ck_assert_uint_eq(b.monitor_code_offset, 0x40); /* untouched */
  free(f);
}
END_TEST

/* ---------------- ELF ---------------- */

typedef struct sec { const char *name; uint32_t type; const uint8_t *data; size_t size; } sec;

/* ELF64 LE: header, section data, .shstrtab, then the section headers (index 0 null). */
static uint8_t *make_elf(const sec *s, int ns, size_t *len) {
  size_t strsz = 1 + strlen(".shstrtab") + 1, data = 0;
  for (int i = 0; i < ns; i++) strsz += strlen(s[i].name) + 1, data += s[i].size;
  size_t shoff = (64 + data + strsz + 7) & ~(size_t)7, n = shoff + (size_t)(ns + 2) * 64;
  uint8_t *f = calloc(1, n);
  memcpy(f, "\177ELF", 4);
  f[4] = 2, f[5] = 1, f[6] = 1;
  p16(f + 16, 1), p16(f + 18, 0), p32(f + 20, 1);
  p64(f + 40, shoff), p16(f + 52, 64), p16(f + 58, 64), p16(f + 60, (uint32_t)ns + 2), p16(f + 62, (uint32_t)ns + 1);
  size_t at = 64, str = 64 + data, so = 1;
  for (int i = 0; i < ns; i++) {
    uint8_t *h = f + shoff + (size_t)(i + 1) * 64;
    memcpy(f + at, s[i].data, s[i].size);
    strcpy((char *)f + str + so, s[i].name);
    p32(h, (uint32_t)so), p32(h + 4, s[i].type), p64(h + 24, at), p64(h + 32, s[i].size), p64(h + 48, 1);
    so += strlen(s[i].name) + 1, at += s[i].size;
  }
  uint8_t *h = f + shoff + (size_t)(ns + 1) * 64;
  strcpy((char *)f + str + so, ".shstrtab");
  p32(h, (uint32_t)so), p32(h + 4, 3), p64(h + 24, str), p64(h + 32, strsz), p64(h + 48, 1);
  *len = n;
  return f;
}

static uint8_t fwimage[0x1000], sig_ga[0x100], sig_ad[0x80], sig_gb[0x40], sig_gh[0x60];
static uint8_t fmc_hash[48], fmc_sig[384], fmc_key[384];
static void fill_payloads(void) {
  memset(fmc_hash, 0x48, sizeof(fmc_hash)), memset(fmc_sig, 0x53, sizeof(fmc_sig)), memset(fmc_key, 0x4b, sizeof(fmc_key));
  for (size_t i = 0; i < sizeof(fwimage); i++) fwimage[i] = (uint8_t)(i * 13);
  memset(sig_ga, 0x6a, sizeof(sig_ga)), memset(sig_ad, 0xad, sizeof(sig_ad)), memset(sig_gb, 0x6b, sizeof(sig_gb));
  memset(sig_gh, 0x68, sizeof(sig_gh));
}

static uint8_t *gsp_elf(bool ga, bool ad, bool gb, size_t *n) {
  sec s[5];
  int k = 0;
  s[k++] = (sec){".fwimage", 1, fwimage, sizeof(fwimage)};
  if (ga) s[k++] = (sec){".fwsignature_ga10x", 1, sig_ga, sizeof(sig_ga)};
  if (ad) s[k++] = (sec){".fwsignature_ad10x", 1, sig_ad, sizeof(sig_ad)};
  if (gb) s[k++] = (sec){".fwsignature_gb20x", 1, sig_gb, sizeof(sig_gb)};
  if (ga && ad && gb) s[k++] = (sec){".fwsignature_gh10x", 1, sig_gh, sizeof(sig_gh)}; /* the every-chip file */
  return make_elf(s, k, n);
}

START_TEST(gsp_elf_parse) {
  fill_payloads();
  size_t n;
  uint8_t *f = gsp_elf(true, true, false, &n);
  bg_nv_gsp_elf g;
  OK(bg_nv_gsp_elf_parse(f, n, "gsp.bin", bg_nv_chip_by_name("AD104"), &g));
  ck_assert_uint_eq(g.image_size, sizeof(fwimage));
  ck_assert_int_eq(memcmp(g.image, fwimage, sizeof(fwimage)), 0);
  ck_assert_uint_eq(g.signature_size, sizeof(sig_ad));
  ck_assert_int_eq(memcmp(g.signature, sig_ad, sizeof(sig_ad)), 0);
  OK(bg_nv_gsp_elf_parse(f, n, "gsp.bin", bg_nv_chip_by_name("GA102"), &g));
  ck_assert_int_eq(g.signature[0], 0x6a);
  ck_assert_uint_eq(g.signature_size, sizeof(sig_ga));
  const bg_nv_gsp_elf kept = g;
  FAILS(bg_nv_gsp_elf_parse(f, n, "gsp.bin", bg_nv_chip_by_name("GB202"), &g), BG_EFORMAT,
        "gsp.bin: mismatched GSP-RM firmware for GB202: no section .fwsignature_gb20x; its signature sections: "
        ".fwsignature_ga10x, .fwsignature_ad10x");
  free(f);
  f = gsp_elf(false, false, false, &n);
  FAILS(bg_nv_gsp_elf_parse(f, n, "gsp.bin", bg_nv_chip_by_name("GH100"), &g), BG_EFORMAT,
        "no section .fwsignature_gh10x; its signature sections: none");
  free(f);
  sec only_sig[] = {{".fwsignature_ga10x", 1, sig_ga, sizeof(sig_ga)}};
  f = make_elf(only_sig, 1, &n);
  FAILS(bg_nv_gsp_elf_parse(f, n, "gsp.bin", bg_nv_chip_by_name("GA102"), &g), BG_EFORMAT, "no section .fwimage");
  free(f);
  sec nobits[] = {{".fwimage", 8, fwimage, sizeof(fwimage)}, {".fwsignature_ga10x", 1, sig_ga, sizeof(sig_ga)}};
  f = make_elf(nobits, 2, &n);
  FAILS(bg_nv_gsp_elf_parse(f, n, "gsp.bin", bg_nv_chip_by_name("GA102"), &g), BG_EFORMAT, "no section .fwimage");
  free(f);
  f = gsp_elf(true, false, false, &n);
  f[0] = 0x7e;
  FAILS(bg_nv_gsp_elf_parse(f, n, "gsp.bin", bg_nv_chip_by_name("GA102"), &g), BG_EFORMAT, "gsp.bin: e_ident magic");
  f[0] = 0x7f, f[4] = 1;
  FAILS(bg_nv_gsp_elf_parse(f, n, "gsp.bin", bg_nv_chip_by_name("GA102"), &g), BG_EFORMAT, "EI_CLASS 1");
  f[4] = 2;
  uint64_t shoff = g64(f + 40);
  p64(f + shoff + 64 + 32, n); /* .fwimage's sh_size past the end */
  FAILS(bg_nv_gsp_elf_parse(f, n, "gsp.bin", bg_nv_chip_by_name("GA102"), &g), BG_EFORMAT, "gsp.bin: section 1: sh_offset");
  FAILS(bg_nv_gsp_elf_parse(f, 63, "gsp.bin", bg_nv_chip_by_name("GA102"), &g), BG_EFORMAT, "64-byte ELF64 header");
  ck_assert_msg(memcmp(&g, &kept, sizeof(g)) == 0, "*out written by a failed parse"); /* untouched */
  free(f);
}
END_TEST

static uint8_t *fmc_file(size_t hash, size_t sig, size_t key, bool with_sig, size_t *n) {
  sec s[4];
  int k = 0;
  s[k++] = (sec){"image", 1, fwimage, 0x800};
  s[k++] = (sec){"hash", 1, fmc_hash, hash};
  if (with_sig) s[k++] = (sec){"signature", 1, fmc_sig, sig};
  s[k++] = (sec){"publickey", 1, fmc_key, key};
  return make_elf(s, k, n);
}

START_TEST(fmc_parse) {
  fill_payloads();
  size_t n;
  uint8_t *f = fmc_file(48, 384, 381, true, &n);
  bg_nv_fmc m;
  memset(&m, 0xee, sizeof(m));
  OK(bg_nv_fmc_parse(f, n, "fmc.bin", &m));
  ck_assert_uint_eq(m.image_size, 0x800);
  ck_assert_int_eq(memcmp(m.image, fwimage, 0x800), 0);
  ck_assert_int_eq(memcmp(m.hash, fmc_hash, 48), 0);
  ck_assert_int_eq(memcmp(m.signature, fmc_sig, 384), 0);
  ck_assert_int_eq(memcmp(m.public_key, fmc_key, 381), 0);
  ck_assert_msg(m.public_key[381] == 0 && m.public_key[382] == 0 && m.public_key[383] == 0, "key not zero-padded");
  free(f);
  struct { size_t h, s, k; bool with_sig; const char *sub; } bad[] = {
      {47, 384, 384, true, "fmc.bin: section hash has 47 bytes, expected 48"},
      {48, 383, 384, true, "section signature has 383 bytes, expected 384"},
      {48, 384, 380, true, "section publickey has 380 bytes, expected 381..384"},
      {48, 384, 385, true, "section publickey has 385 bytes"},
      {48, 384, 384, false, "fmc.bin: no section signature"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    uint8_t big[385];
    memset(big, 1, sizeof(big));
    sec s[4] = {{"image", 1, fwimage, 0x800}, {"hash", 1, fmc_hash, bad[i].h}, {"signature", 1, fmc_sig, bad[i].s},
                {"publickey", 1, bad[i].k > 384 ? big : fmc_key, bad[i].k}};
    if (!bad[i].with_sig) s[2] = s[3];
    f = make_elf(s, bad[i].with_sig ? 4 : 3, &n);
    FAILS(bg_nv_fmc_parse(f, n, "fmc.bin", &m), BG_EFORMAT, bad[i].sub);
    free(f);
  }
  ck_assert_int_eq(m.hash[0], 0x48); /* untouched */
}
END_TEST

/* ---------------- Loader ---------------- */

static char tmp[256];

static void put(const char *dir, const char *name, const uint8_t *b, size_t n) {
  char p[512];
  snprintf(p, sizeof(p), "%s/%s", dir, name);
  FILE *f = fopen(p, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(b, 1, n, f), n);
  fclose(f);
}

static void mkdirs(const char *path) {
  char p[512];
  snprintf(p, sizeof(p), "%s", path);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') *s = 0, mkdir(p, 0755), *s = '/';
  mkdir(p, 0755);
}

/* A chip folder: GSP ELF (unless !gsp), bootloader, booter (GA/AD) or FMC (GH/GB). */
static void populate(const char *dir, bool gsp, bool fsp) {
  fill_payloads();
  mkdirs(dir);
  size_t n;
  if (gsp) {
    uint8_t *g = gsp_elf(true, true, true, &n);
    put(dir, "gsp-570.144.bin", g, n);
    free(g);
  }
  uint8_t *bl = make_bootloader();
  put(dir, "bootloader-570.144.bin", bl, BL_SIZE);
  free(bl);
  if (fsp) {
    uint8_t *m = fmc_file(48, 384, 384, true, &n);
    put(dir, "fmc-570.144.bin", m, n);
    free(m);
  } else {
    uint8_t *b = make_booter();
    put(dir, "booter_load-570.144.bin", b, BT_SIZE);
    free(b);
  }
}

static void setup_tmp(void) {
  snprintf(tmp, sizeof(tmp), "%s/nvfwXXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(tmp));
  unsetenv("BG_NV_FIRMWARE_DIR");
  unsetenv("BG_NV_GSP_ELF");
}

static void rm_rf(const char *p) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p);
  ck_assert_int_eq(system(cmd), 0);
}

START_TEST(load_good_and_precedence) {
  setup_tmp();
  char a[400], b[400];
  snprintf(a, sizeof(a), "%s/a", tmp);
  snprintf(b, sizeof(b), "%s/b", tmp);
  populate(a, true, false);
  populate(b, true, false);
  const bg_nv_chip *ga = bg_nv_chip_by_name("GA102");
  bg_nv_firmware fw;
  OK(bg_nv_firmware_load(ga, a, &fw));
  ck_assert_str_eq(fw.dir, a);
  ck_assert_ptr_eq(fw.chip, ga);
  ck_assert_ptr_nonnull(fw.gsp_file);
  ck_assert_ptr_nonnull(fw.booter_file);
  ck_assert_ptr_null(fw.fmc_file);
  ck_assert_uint_eq(fw.gsp.signature[0], 0x6a);
  ck_assert_uint_eq(fw.bootloader.monitor_code_offset, 0x40);
  ck_assert_ptr_eq(fw.bootloader.data, fw.bootloader_file + BL_DATA);
  ck_assert_uint_eq(fw.booter.app0_size, 0x180);
  bg_nv_firmware_free(&fw);
  ck_assert_ptr_null(fw.gsp_file);
  /* the argument wins over the variable; the variable over the default */
  setenv("BG_NV_FIRMWARE_DIR", b, 1);
  OK(bg_nv_firmware_load(ga, a, &fw));
  ck_assert_str_eq(fw.dir, a);
  bg_nv_firmware_free(&fw);
  OK(bg_nv_firmware_load(ga, NULL, &fw));
  ck_assert_str_eq(fw.dir, b);
  bg_nv_firmware_free(&fw);
  OK(bg_nv_firmware_load(ga, "", &fw));
  ck_assert_str_eq(fw.dir, b);
  bg_nv_firmware_free(&fw);
  unsetenv("BG_NV_FIRMWARE_DIR");
  struct stat st;
  if (stat("/lib/firmware/nvidia", &st) != 0)
    FAILS(bg_nv_firmware_load(bg_nv_chip_by_name("GB207"), NULL, &fw), BG_ENOENT, "/lib/firmware/nvidia/gb207/gsp/");
  /* FSP chip: FMC instead of Booter */
  char h[400];
  snprintf(h, sizeof(h), "%s/gh", tmp);
  populate(h, true, true);
  OK(bg_nv_firmware_load(bg_nv_chip_by_name("GH100"), h, &fw));
  ck_assert_ptr_null(fw.booter_file);
  ck_assert_ptr_null(fw.booter.image);
  ck_assert_ptr_nonnull(fw.fmc_file);
  ck_assert_uint_eq(fw.fmc.hash[0], 0x48);
  ck_assert_uint_eq(fw.gsp.signature_size, sizeof(sig_gh));
  ck_assert_uint_eq(fw.gsp.signature[0], 0x68);
  bg_nv_firmware_free(&fw);
  rm_rf(tmp);
}
END_TEST

START_TEST(load_gsp_elf_places) {
  setup_tmp();
  /* linux-firmware layout: ad102/gsp without the GSP ELF, ga102/gsp with it */
  char ad[400], gadir[400], other[400];
  snprintf(ad, sizeof(ad), "%s/nvidia/ad102/gsp", tmp);
  snprintf(gadir, sizeof(gadir), "%s/nvidia/ga102/gsp", tmp);
  populate(ad, false, false);
  populate(gadir, true, false);
  const bg_nv_chip *adc = bg_nv_chip_by_name("AD102");
  bg_nv_firmware fw;
  OK(bg_nv_firmware_load(adc, ad, &fw));
  ck_assert_uint_eq(fw.gsp.signature[0], 0xad);
  bg_nv_firmware_free(&fw);
  /* neither place: both paths and both variables named */
  rm_rf(gadir);
  FAILS(bg_nv_firmware_load(adc, ad, &fw), BG_ENOENT, "/nvidia/ad102/gsp/gsp-570.144.bin not found nor ");
  ck_assert_msg(strstr(bg_last_error(), "/nvidia/ga102/gsp/gsp-570.144.bin") && strstr(bg_last_error(), "BG_NV_GSP_ELF") &&
                    strstr(bg_last_error(), "BG_NV_FIRMWARE_DIR"),
                "%s", bg_last_error());
  /* BG_NV_GSP_ELF names the file */
  snprintf(other, sizeof(other), "%s/elsewhere", tmp);
  mkdirs(other);
  size_t n;
  uint8_t *g = gsp_elf(false, true, false, &n);
  put(other, "my-gsp.elf", g, n);
  free(g);
  char path[512];
  snprintf(path, sizeof(path), "%s/my-gsp.elf", other);
  setenv("BG_NV_GSP_ELF", path, 1);
  OK(bg_nv_firmware_load(adc, ad, &fw));
  ck_assert_uint_eq(fw.gsp_size, n);
  bg_nv_firmware_free(&fw);
  /* mismatched: the named file has only GA10x's signature */
  g = gsp_elf(true, false, false, &n);
  put(other, "my-gsp.elf", g, n);
  free(g);
  FAILS(bg_nv_firmware_load(adc, ad, &fw), BG_EFORMAT, "my-gsp.elf: mismatched GSP-RM firmware for AD102");
  ck_assert_msg(strstr(bg_last_error(), ".fwsignature_ga10x"), "%s", bg_last_error());
  setenv("BG_NV_GSP_ELF", "/nonexistent/gsp.bin", 1);
  FAILS(bg_nv_firmware_load(adc, ad, &fw), BG_ENOENT, "/nonexistent/gsp.bin not found (named by BG_NV_GSP_ELF)");
  unsetenv("BG_NV_GSP_ELF");
  rm_rf(tmp);
}
END_TEST

START_TEST(load_errors) {
  setup_tmp();
  char d[400], p[512];
  snprintf(d, sizeof(d), "%s/ga", tmp);
  populate(d, true, false);
  const bg_nv_chip *ga = bg_nv_chip_by_name("GA102");
  bg_nv_firmware fw;
  memset(&fw, 0x5c, sizeof(fw));
  /* missing Booter */
  snprintf(p, sizeof(p), "%s/booter_load-570.144.bin", d);
  char moved[512];
  snprintf(moved, sizeof(moved), "%s/booter.bak", tmp);
  ck_assert_int_eq(rename(p, moved), 0);
  FAILS(bg_nv_firmware_load(ga, d, &fw), BG_ENOENT, p);
  ck_assert_msg(strstr(bg_last_error(), "not found") && strstr(bg_last_error(), "BG_NV_FIRMWARE_DIR") &&
                    strstr(bg_last_error(), "given by the caller"),
                "%s", bg_last_error());
  setenv("BG_NV_FIRMWARE_DIR", d, 1);
  FAILS(bg_nv_firmware_load(ga, NULL, &fw), BG_ENOENT, "from BG_NV_FIRMWARE_DIR");
  unsetenv("BG_NV_FIRMWARE_DIR");
  /* a FIFO in its place is refused at once (no blocking open or read) */
  ck_assert_int_eq(mkfifo(p, 0644), 0);
  FAILS(bg_nv_firmware_load(ga, d, &fw), BG_EINVAL, "is not a regular file: it is a FIFO");
  ck_assert_msg(strstr(bg_last_error(), p), "%s", bg_last_error());
  unlink(p);
  /* a device behind a symbolic link (links are followed: linux-firmware installs some names as links) */
  ck_assert_int_eq(symlink("/dev/null", p), 0);
  FAILS(bg_nv_firmware_load(ga, d, &fw), BG_EINVAL, "it is a character device");
  unlink(p);
  /* a directory too */
  ck_assert_int_eq(mkdir(p, 0755), 0);
  FAILS(bg_nv_firmware_load(ga, d, &fw), BG_EINVAL, "it is a directory");
  rmdir(p);
  /* a bad Booter: the parser's error naming the path */
  uint8_t *b = make_booter();
  p32(b, 0x1234);
  put(d, "booter_load-570.144.bin", b, BT_SIZE);
  free(b);
  FAILS(bg_nv_firmware_load(ga, d, &fw), BG_EFORMAT, "booter_load-570.144.bin: nvfw_bin_hdr.bin_magic 0x1234");
  ck_assert_int_eq(rename(moved, p), 0);
  /* mismatched GSP ELF (only another chip's signature section) */
  size_t n;
  uint8_t *g = gsp_elf(false, false, true, &n);
  put(d, "gsp-570.144.bin", g, n);
  free(g);
  FAILS(bg_nv_firmware_load(ga, d, &fw), BG_EFORMAT,
        "gsp-570.144.bin: mismatched GSP-RM firmware for GA102: no section .fwsignature_ga10x; its signature sections: "
        ".fwsignature_gb20x");
  /* an FSP chip needs its FMC */
  g = gsp_elf(true, true, true, &n);
  put(d, "gsp-570.144.bin", g, n);
  free(g);
  FAILS(bg_nv_firmware_load(bg_nv_chip_by_name("GB202"), d, &fw), BG_ENOENT, "fmc-570.144.bin not found");
  /* out untouched by every failure above */
  for (size_t i = 0; i < sizeof(fw); i++) ck_assert_uint_eq(((uint8_t *)&fw)[i], 0x5c);
  rm_rf(tmp);
}
END_TEST

int main(void) {
  Suite *s = suite_create("nv-fw");
  TCase *tc = tcase_create("fw");
  tcase_add_test(tc, vbios_good);
  tcase_add_test(tc, vbios_errors);
  tcase_add_test(tc, sig_index);
  tcase_add_test(tc, frts_patch);
  tcase_add_test(tc, booter_good);
  tcase_add_test(tc, booter_errors);
  tcase_add_test(tc, bootloader);
  tcase_add_test(tc, gsp_elf_parse);
  tcase_add_test(tc, fmc_parse);
  tcase_add_test(tc, load_good_and_precedence);
  tcase_add_test(tc, load_gsp_elf_places);
  tcase_add_test(tc, load_errors);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
