/* tests/unit/am/test_fw.c: AMD firmware parsers (am/fw_parse.c) and per-chip firmware sets
 * (am/fw_load.c): generated files of every family and version, exact per-chip load lists, corrupt,
 * truncated, wrong-chip and missing files, the real linux-firmware files in $BG_FW_FIXTURES, and
 * a mutation fuzz loop (run it under ASan to prove there are no out-of-bounds reads). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "am/fw_headers.h"
#include "am/fw_load.h"
#include "am/fw_parse.h"
#include "baregpu/error.h"
#include "fw_gen.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())
#define FAILS(call, code, needle)                                                                     \
  do {                                                                                                \
    int r_ = (call);                                                                                  \
    ck_assert_msg(r_ == -(code), "%s returned %d (%s), expected -%s: %s", #call, r_, bg_strerror(r_), \
                  #code, bg_last_error());                                                            \
    ck_assert_msg(strstr(bg_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", #call,      \
                  bg_last_error(), needle);                                                           \
  } while (0)
#define N(a) (sizeof(a) / sizeof((a)[0]))

static char tmpdir[256];

static void tmp_setup(void) {
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/bg_fw_test.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void) {
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
}

static uint8_t *build(const fw_gen_spec *s, size_t *len) {
  uint8_t *b = fw_gen_build(s, len);
  ck_assert_ptr_nonnull(b);
  return b;
}

/* ---- every family and header version ----------------------------------------------------------------------- */

typedef struct dwant {
  uint8_t space;
  uint32_t type;
  bool aux;
} dwant;

#define G(t) {BG_FW_SPACE_GFX, BG_GFX_FW_##t, false}
#define P(t) {BG_FW_SPACE_PSP, BG_PSP_FW_##t, false}
#define PA(t) {BG_FW_SPACE_PSP, BG_PSP_FW_##t, true}

typedef struct family_case {
  fw_gen_spec spec;
  dwant w[16];
  int nw;
} family_case;

static const uint32_t sos_types[] = {BG_PSP_FW_KDB, BG_PSP_FW_SYS_DRV, BG_PSP_FW_SOS, BG_PSP_FW_TOC};
static const uint32_t ta_types[] = {BG_TA_FW_XGMI, BG_TA_FW_RAS, BG_TA_FW_RAP};
static const uint32_t ppt_ids[] = {0x94c, BG_FW_PPTABLE_ID_P2S};

static const family_case families[] = {
  {{BG_FW_PSP_SOS, 1, 0, 13, 0, 1, NULL, 0, 0}, {P(SYS_DRV), P(SOS)}, 2},
  {{BG_FW_PSP_SOS, 1, 1, 13, 0, 2, NULL, 0, 0}, {P(SYS_DRV), P(SOS), P(TOC), P(KDB)}, 4},
  {{BG_FW_PSP_SOS, 1, 2, 13, 0, 3, NULL, 0, 0}, {P(SYS_DRV), P(SOS), P(KDB)}, 3},
  {{BG_FW_PSP_SOS, 1, 3, 13, 0, 4, NULL, 0, 0},
   {P(SYS_DRV), P(SOS), P(TOC), P(KDB), P(SPL), P(RL), PA(SYS_DRV), PA(SOS)},
   8},
  {{BG_FW_PSP_SOS, 2, 0, 13, 0, 5, sos_types, 4, 0}, {P(KDB), P(SYS_DRV), P(SOS), P(TOC)}, 4},
  {{BG_FW_PSP_SOS, 2, 1, 14, 0, 6, sos_types, 4, 2}, {P(KDB), P(SYS_DRV), PA(SOS), PA(TOC)}, 4},
  {{BG_FW_PSP_TA, 2, 0, 13, 0, 7, ta_types, 3, 0},
   {{BG_FW_SPACE_TA, BG_TA_FW_XGMI, false}, {BG_FW_SPACE_TA, BG_TA_FW_RAS, false}, {BG_FW_SPACE_TA, BG_TA_FW_RAP, false}},
   3},
  {{BG_FW_PSP_TOC, 1, 0, 13, 0, 8, NULL, 0, 0}, {P(TOC)}, 1},
  {{BG_FW_SMC, 1, 0, 13, 0, 9, NULL, 0, 0}, {G(SMU)}, 1},
  {{BG_FW_SMC, 2, 0, 13, 0, 10, NULL, 0, 0}, {G(SMU), {BG_FW_SPACE_PPTABLE, 0, false}}, 2},
  {{BG_FW_SMC, 2, 1, 13, 0, 11, ppt_ids, 2, 0}, {G(SMU), {BG_FW_SPACE_PPTABLE, 0x94c, false}, G(P2S_TABLE)}, 3},
  {{BG_FW_SDMA, 1, 0, 4, 4, 12, NULL, 0, 0}, {G(SDMA0)}, 1},
  {{BG_FW_SDMA, 1, 1, 4, 4, 13, NULL, 0, 0}, {G(SDMA0)}, 1},
  {{BG_FW_SDMA, 2, 0, 6, 0, 14, NULL, 0, 0}, {G(SDMA_UCODE_TH1), G(SDMA_UCODE_TH0)}, 2},
  {{BG_FW_SDMA, 3, 0, 7, 0, 15, NULL, 0, 0}, {G(SDMA_UCODE_TH0)}, 1},
  {{BG_FW_GFX_PFP, 1, 0, 9, 4, 16, NULL, 0, 0}, {G(CP_PFP)}, 1},
  {{BG_FW_GFX_ME, 1, 0, 9, 4, 17, NULL, 0, 0}, {G(CP_ME)}, 1},
  {{BG_FW_GFX_MEC, 1, 0, 9, 4, 18, NULL, 0, 0}, {G(CP_MEC), G(CP_MEC_ME1)}, 2},
  {{BG_FW_GFX_PFP, 2, 0, 12, 0, 19, NULL, 0, 0}, {G(RS64_PFP), G(RS64_PFP_P0_STACK)}, 2},
  {{BG_FW_GFX_ME, 2, 0, 12, 0, 20, NULL, 0, 0}, {G(RS64_ME), G(RS64_ME_P0_STACK)}, 2},
  {{BG_FW_GFX_MEC, 2, 0, 11, 0, 21, NULL, 0, 0}, {G(RS64_MEC), G(RS64_MEC_P0_STACK)}, 2},
  {{BG_FW_IMU, 1, 0, 11, 0, 22, NULL, 0, 0}, {G(IMU_I), G(IMU_D)}, 2},
  {{BG_FW_RLC, 2, 0, 9, 4, 23, NULL, 0, 0}, {G(RLC_G)}, 1},
  {{BG_FW_RLC, 2, 1, 9, 4, 24, NULL, 0, 0},
   {G(RLC_RESTORE_LIST_SRM_CNTL), G(RLC_RESTORE_LIST_GPM_MEM), G(RLC_RESTORE_LIST_SRM_MEM), G(RLC_G)},
   4},
  {{BG_FW_RLC, 2, 2, 10, 3, 25, NULL, 0, 0},
   {G(RLC_RESTORE_LIST_SRM_CNTL), G(RLC_RESTORE_LIST_GPM_MEM), G(RLC_RESTORE_LIST_SRM_MEM), G(RLC_IRAM),
    G(RLC_DRAM_BOOT), G(RLC_G)},
   6},
  {{BG_FW_RLC, 2, 3, 11, 0, 26, NULL, 0, 0},
   {G(RLC_RESTORE_LIST_SRM_CNTL), G(RLC_RESTORE_LIST_GPM_MEM), G(RLC_RESTORE_LIST_SRM_MEM), G(RLC_IRAM),
    G(RLC_DRAM_BOOT), G(RLC_P), G(RLC_V), G(RLC_G)},
   8},
};

START_TEST(family_versions) {
  const family_case *fc = &families[_i];
  size_t len;
  uint8_t *b = build(&fc->spec, &len);
  bg_fw_image img;
  OK(bg_fw_parse(fc->spec.family, "gen.bin", b, len, &img));
  ck_assert_uint_eq(img.header_version_major, fc->spec.major);
  ck_assert_uint_eq(img.header_version_minor, fc->spec.minor);
  ck_assert_uint_eq(img.crc32, img.crc32_computed);
  ck_assert_msg(img.ndescs == fc->nw, "%s v%u.%u: %d descriptors, expected %d", bg_fw_family_name(fc->spec.family),
                fc->spec.major, fc->spec.minor, img.ndescs, fc->nw);
  for (int i = 0; i < fc->nw; i++) {
    const bg_fw_desc *d = &img.descs[i];
    ck_assert_msg(d->space == fc->w[i].space && d->fw_type == fc->w[i].type &&
                      ((d->flags & BG_FW_DESC_AUX) != 0) == fc->w[i].aux,
                  "%s v%u.%u desc %d: %s (space %u type %u), expected type %u", bg_fw_family_name(fc->spec.family),
                  fc->spec.major, fc->spec.minor, i, d->name, d->space, d->fw_type, fc->w[i].type);
    ck_assert_msg(fw_gen_check(&img, d), "desc %d (%s) does not point at its bytes", i, d->name);
    ck_assert_str_eq(d->name, bg_fw_type_name((bg_fw_space)d->space, d->fw_type));
    ck_assert_ptr_eq(d->data, b + d->offset);
  }
  if (fc->spec.family == BG_FW_GFX_MEC && fc->spec.major == 2) ck_assert_uint_eq(img.ucode_start, 0x30000);
  if (fc->spec.family == BG_FW_SMC) ck_assert_uint_eq(img.ucode_start, 0x20000);
  free(b);
}
END_TEST

/* ---- per-chip load lists ------------------------------------------------------------------------------------ */

typedef struct lwant {
  bg_am_fw_file_id file;
  uint32_t type, parsed_type; /* parsed_type: the component's type in its file (SDMA1..3 are SDMA0's bytes) */
} lwant;

#define L(f, t) {BG_AM_FW_##f, BG_GFX_FW_##t, BG_GFX_FW_##t}

static const lwant gfx11_list[] = {
  L(SDMA, SDMA_UCODE_TH1), L(SDMA, SDMA_UCODE_TH0), L(MEC, RS64_MEC), L(MEC, RS64_MEC_P0_STACK), L(IMU, IMU_I),
  L(IMU, IMU_D),           L(RLC, RLC_IRAM),        L(RLC, RLC_DRAM_BOOT), L(RLC, RLC_P),         L(RLC, RLC_V),
  L(RLC, RLC_G),
};
static const lwant gfx12_list[] = {
  L(SDMA, SDMA_UCODE_TH0), L(PFP, RS64_PFP), L(PFP, RS64_PFP_P0_STACK), L(ME, RS64_ME), L(ME, RS64_ME_P0_STACK),
  L(MEC, RS64_MEC),        L(MEC, RS64_MEC_P0_STACK), L(IMU, IMU_I), L(IMU, IMU_D), L(RLC, RLC_IRAM),
  L(RLC, RLC_DRAM_BOOT),   L(RLC, RLC_P), L(RLC, RLC_V), L(RLC, RLC_G),
};
static const lwant gfx942_list[] = {
  L(SMU, P2S_TABLE),
  L(SMU, P2S_TABLE),
  L(SDMA, SDMA0),
  {BG_AM_FW_SDMA, BG_GFX_FW_SDMA1, BG_GFX_FW_SDMA0},
  {BG_AM_FW_SDMA, BG_GFX_FW_SDMA2, BG_GFX_FW_SDMA0},
  {BG_AM_FW_SDMA, BG_GFX_FW_SDMA3, BG_GFX_FW_SDMA0},
  L(MEC, CP_MEC),
  L(MEC, CP_MEC_ME1),
  L(RLC, RLC_RESTORE_LIST_SRM_CNTL),
  L(RLC, RLC_RESTORE_LIST_GPM_MEM),
  L(RLC, RLC_RESTORE_LIST_SRM_MEM),
  L(RLC, RLC_G),
};

static bg_am_fw *load_chip(fw_gen_chip_id chip) {
  ck_assert_int_eq(fw_gen_chip(tmpdir, chip), 0);
  bg_am_fw_ips ip;
  fw_gen_chip_ips(chip, &ip);
  bg_am_fw *fw;
  OK(bg_am_fw_load(&ip, tmpdir, &fw));
  return fw;
}

START_TEST(chip_lists) {
  fw_gen_chip_id chip = (fw_gen_chip_id)_i;
  const lwant *w = chip == FW_GEN_GFX11 ? gfx11_list : chip == FW_GEN_GFX12 ? gfx12_list : gfx942_list;
  int nw = (int)(chip == FW_GEN_GFX11 ? N(gfx11_list) : chip == FW_GEN_GFX12 ? N(gfx12_list) : N(gfx942_list));
  bg_am_fw *fw = load_chip(chip);
  ck_assert_int_eq(fw->ndescs, nw);
  for (int i = 0; i < nw; i++) {
    const bg_fw_desc *d = &fw->descs[i];
    fw_gen_spec s;
    ck_assert(fw_gen_chip_spec(chip, w[i].file, &s));
    ck_assert_msg(d->space == BG_FW_SPACE_GFX && d->fw_type == w[i].type, "chip %d desc %d: %s (%u), expected %s",
                  chip, i, d->name, d->fw_type, bg_fw_type_name(BG_FW_SPACE_GFX, w[i].type));
    ck_assert_str_eq(d->name, bg_fw_type_name(BG_FW_SPACE_GFX, w[i].type));
    ck_assert_msg(fw_gen_check_as(s.salt, BG_FW_SPACE_GFX, w[i].parsed_type, false, d), "chip %d desc %d (%s) bytes",
                  chip, i, d->name);
    const bg_am_fw_file *f = &fw->files[w[i].file];
    ck_assert(d->data >= f->buf && d->data + d->size <= f->buf + f->len);
  }
  /* sOS components for the bootloader: primary ones only. */
  fw_gen_spec sos;
  ck_assert(fw_gen_chip_spec(chip, BG_AM_FW_SOS, &sos));
  static const uint32_t boot[] = {BG_PSP_FW_SYS_DRV, BG_PSP_FW_SOS, BG_PSP_FW_KDB, BG_PSP_FW_TOC};
  for (size_t i = 0; i < N(boot); i++) {
    const bg_fw_desc *d = bg_am_fw_sos(fw, boot[i]);
    ck_assert_ptr_nonnull(d);
    ck_assert(!(d->flags & BG_FW_DESC_AUX));
    ck_assert(fw_gen_check_as(sos.salt, BG_FW_SPACE_PSP, boot[i], false, d));
  }
  ck_assert_ptr_nonnull(fw->toc);
  ck_assert_uint_eq(fw->toc->fw_type, BG_PSP_FW_TOC);
  ck_assert_int_eq(bg_am_fw_sos(fw, BG_PSP_FW_SPL) != NULL, chip == FW_GEN_GFX12);
  ck_assert_int_eq(bg_am_fw_sos(fw, BG_PSP_FW_RL) != NULL, chip == FW_GEN_GFX942);
  if (chip == FW_GEN_GFX942) {
    ck_assert_ptr_null(fw->smu);
    ck_assert_int_eq(fw->files[BG_AM_FW_SOS].img.ndescs, 10);
    ck_assert_uint_eq(fw->rs64_start[2], 0);
  } else {
    fw_gen_spec smu;
    ck_assert(fw_gen_chip_spec(chip, BG_AM_FW_SMU, &smu));
    ck_assert_ptr_nonnull(fw->smu);
    ck_assert(fw_gen_check_as(smu.salt, BG_FW_SPACE_GFX, BG_GFX_FW_SMU, false, fw->smu));
    ck_assert_uint_eq(fw->rs64_start[2], 0x30000);
    ck_assert_uint_eq(fw->rs64_start[0], chip == FW_GEN_GFX12 ? 0x10000 : 0);
    ck_assert_uint_eq(fw->rs64_start[1], chip == FW_GEN_GFX12 ? 0x20000 : 0);
  }
  /* The dump: one line per descriptor. */
  char *text = NULL;
  size_t tlen = 0;
  FILE *mf = open_memstream(&text, &tlen);
  ck_assert_ptr_nonnull(mf);
  bg_am_fw_dump(fw, false, mf);
  fclose(mf);
  int lines = 0;
  for (size_t i = 0; i < tlen; i++) lines += text[i] == '\n';
  int rs64 = chip == FW_GEN_GFX12 ? 3 : chip == FW_GEN_GFX11 ? 1 : 0;
  ck_assert_int_eq(lines, 1 + fw->files[BG_AM_FW_SOS].img.ndescs + (fw->smu ? 1 : 0) + fw->ndescs + rs64);
  ck_assert_ptr_nonnull(strstr(text, "RLC_G"));
  free(text);
  mf = open_memstream(&text, &tlen);
  bg_am_fw_dump(fw, true, mf);
  fclose(mf);
  ck_assert_ptr_nonnull(strstr(text, "matches [32, size_bytes)"));
  free(text);
  bg_am_fw_free(fw);
}
END_TEST

START_TEST(file_names) {
  static const char *const want[FW_GEN_NCHIPS][BG_AM_FW_NFILES] = {
    {"psp_13_0_0_sos.bin", "smu_13_0_0.bin", "sdma_6_0_0.bin", NULL, NULL, "gc_11_0_0_mec.bin", "gc_11_0_0_imu.bin",
     "gc_11_0_0_rlc.bin"},
    {"psp_14_0_2_sos.bin", "smu_14_0_2.bin", "sdma_7_0_0.bin", "gc_12_0_0_pfp.bin", "gc_12_0_0_me.bin",
     "gc_12_0_0_mec.bin", "gc_12_0_0_imu.bin", "gc_12_0_0_rlc.bin"},
    {"psp_13_0_6_sos.bin", "smu_13_0_6.bin", "sdma_4_4_2.bin", NULL, NULL, "gc_9_4_3_mec.bin", NULL,
     "gc_9_4_3_rlc.bin"},
  };
  for (int c = 0; c < FW_GEN_NCHIPS; c++) {
    bg_am_fw_ips ip;
    fw_gen_chip_ips((fw_gen_chip_id)c, &ip);
    for (int f = 0; f < BG_AM_FW_NFILES; f++) {
      char name[64] = "";
      int has = bg_am_fw_name(&ip, (bg_am_fw_file_id)f, name, sizeof(name));
      ck_assert_int_eq(has, want[c][f] != NULL);
      if (has) ck_assert_str_eq(name, want[c][f]);
    }
  }
  /* MI350: no SMU firmware. */
  bg_am_fw_ips mi350 = {{9, 5, 0}, {13, 0, 12}, {13, 0, 12}, {4, 4, 5}};
  char name[64];
  ck_assert_int_eq(bg_am_fw_name(&mi350, BG_AM_FW_SMU, name, sizeof(name)), 0);
  ck_assert_int_eq(bg_am_fw_name(&mi350, BG_AM_FW_SOS, name, sizeof(name)), 1);
  ck_assert_str_eq(name, "psp_13_0_12_sos.bin");
}
END_TEST

/* ---- corrupt files ------------------------------------------------------------------------------------------ */

static void wr32(uint8_t *b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) b[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

typedef struct corrupt_case {
  fw_gen_spec spec;
  size_t at;       /* field to overwrite (u32; u16 pair for the version) */
  int64_t value;   /* -1: the file size; -2: file size + 4 */
  const char *needle;
} corrupt_case;

#define HDR(f) offsetof(struct bg_fw_common_header, f)
static const fw_gen_spec mec2 = {BG_FW_GFX_MEC, 2, 0, 11, 0, 40, NULL, 0, 0};
static const fw_gen_spec sos20 = {BG_FW_PSP_SOS, 2, 0, 13, 0, 41, sos_types, 4, 0};
static const fw_gen_spec sos21 = {BG_FW_PSP_SOS, 2, 1, 13, 0, 42, sos_types, 4, 0};
static const fw_gen_spec smc21 = {BG_FW_SMC, 2, 1, 13, 0, 43, ppt_ids, 2, 0};
static const fw_gen_spec mec1 = {BG_FW_GFX_MEC, 1, 0, 9, 4, 44, NULL, 0, 0};
static const fw_gen_spec rlc23 = {BG_FW_RLC, 2, 3, 11, 0, 45, NULL, 0, 0};
static const fw_gen_spec sdma2 = {BG_FW_SDMA, 2, 0, 6, 0, 46, NULL, 0, 0};
static const fw_gen_spec imu1 = {BG_FW_IMU, 1, 0, 11, 0, 47, NULL, 0, 0};
static const fw_gen_spec sos13 = {BG_FW_PSP_SOS, 1, 3, 11, 0, 48, NULL, 0, 0};

static const corrupt_case corrupts[] = {
  {mec2, HDR(header_size_bytes), 8, "header_size_bytes 0x8 is outside 0x3c.."},
  {mec2, HDR(header_size_bytes), -2, "header_size_bytes"},
  {mec2, HDR(size_bytes), -2, "size_bytes"},
  {mec2, HDR(ucode_array_offset_bytes), -1, "ucode_array_offset_bytes"},
  {mec2, HDR(ucode_size_bytes), 0xffffffff, "ucode_size_bytes 0xffffffff = 0x1000000ff exceeds the file size"},
  {mec2, HDR(header_version_major), 0x00090009, "header_version 9.9 is not supported (supported: 1.0, 2.0)"},
  {mec2, offsetof(struct bg_fw_gfx_v2_0, data_offset_bytes), -1, "data_offset_bytes"},
  {mec2, offsetof(struct bg_fw_gfx_v2_0, data_size_bytes), 0xfffffff0, "data_size_bytes 0xfffffff0"},
  {mec2, offsetof(struct bg_fw_gfx_v2_0, ucode_size_bytes), 0x7fffffff, "ucode_size_bytes (v2)"},
  {sos20, offsetof(struct bg_fw_psp_v2_0, psp_fw_bin_count), 12, "psp_fw_bin_count 12 exceeds the maximum 11"},
  {sos20, offsetof(struct bg_fw_psp_v2_0, psp_fw_bin) + 3 * 16 + 8, -1, "psp_fw_bin[3].offset_bytes"},
  {sos20, offsetof(struct bg_fw_psp_v2_0, psp_fw_bin) + 1 * 16 + 12, 0xffffffff, "psp_fw_bin[1].size_bytes"},
  {sos21, offsetof(struct bg_fw_psp_v2_1, psp_aux_fw_bin_index), 5, "psp_aux_fw_bin_index 5 exceeds"},
  {sos13, offsetof(struct bg_fw_psp_v1_3, spl) + 4, 0xfffffff0, "spl.offset_bytes"},
  {sos13, offsetof(struct bg_fw_psp_v1_0, sos) + 4, -1, "sos.offset_bytes"},
  {smc21, offsetof(struct bg_fw_smc_v2_1, pptable_entry_offset), -1, "pptable_entry_offset"},
  {smc21, offsetof(struct bg_fw_smc_v2_1, pptable_count), 0x10, "pptable_count"},
  {mec1, offsetof(struct bg_fw_gfx_v1_0, jt_size), 0x40000000, "jt_size*4"},
  {mec1, offsetof(struct bg_fw_gfx_v1_0, jt_offset), 0x3fffffff, "jt_offset*4"},
  {rlc23, offsetof(struct bg_fw_rlc_v2_2, rlc_iram_ucode_offset_bytes), -1, "rlc_iram_ucode_offset_bytes"},
  {rlc23, offsetof(struct bg_fw_rlc_v2_3, rlcv_ucode_size_bytes), 0xffffffff, "rlcv_ucode_size_bytes"},
  {rlc23, HDR(header_version_major), 0x00040002, "header_version 2.4 is not supported (supported: 2.0-2.3)"},
  {sdma2, offsetof(struct bg_fw_sdma_v2_0, ctl_ucode_offset), -1, "ctl_ucode_offset"},
  {sdma2, offsetof(struct bg_fw_sdma_v2_0, ctx_ucode_size_bytes), 0x80000000, "ctx_ucode_size_bytes"},
  {imu1, offsetof(struct bg_fw_imu_v1_0, imu_dram_ucode_size_bytes), 0x10000, "imu_dram_ucode_size_bytes"},
};

START_TEST(corrupt) {
  const corrupt_case *cc = &corrupts[_i];
  size_t len;
  uint8_t *b = build(&cc->spec, &len);
  uint32_t v = cc->value == -1 ? (uint32_t)len : cc->value == -2 ? (uint32_t)len + 4 : (uint32_t)cc->value;
  wr32(b, cc->at, v);
  bg_fw_image img;
  FAILS(bg_fw_parse(cc->spec.family, "/fw/corrupt.bin", b, len, &img), BG_EFORMAT, cc->needle);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "firmware /fw/corrupt.bin: "));
  free(b);
}
END_TEST

/* ---- truncated files ---------------------------------------------------------------------------------------- */

START_TEST(truncated) {
  for (int c = 0; c < FW_GEN_NCHIPS; c++)
    for (int f = 0; f < BG_AM_FW_NFILES; f++) {
      fw_gen_spec s;
      if (!fw_gen_chip_spec((fw_gen_chip_id)c, (bg_am_fw_file_id)f, &s)) continue;
      size_t len;
      uint8_t *b = build(&s, &len);
      size_t cuts[] = {0, 1, 16, 31, 32, 36, 44, 0x60, 0xff, 0x100, 0x101, len / 2, len - 4, len - 1};
      for (size_t k = 0; k < N(cuts); k++) {
        size_t n = cuts[k];
        if (n >= len) continue;
        uint8_t *t = malloc(n ? n : 1); /* exact size: ASan catches any read past it */
        memcpy(t, b, n);
        bg_fw_image img;
        int r = bg_fw_parse(s.family, "/fw/cut.bin", t, n, &img);
        ck_assert_msg(r == -BG_EFORMAT, "chip %d file %d cut at 0x%zx: %d", c, f, n, r);
        const char *m = bg_last_error();
        ck_assert_msg(strstr(m, "/fw/cut.bin") && (strstr(m, "size_bytes") || strstr(m, "file size 0x")), "%s", m);
        /* Same cut with size_bytes patched to the new size: a component's own fields are named. */
        if (n > 0x100) {
          wr32(t, 0, (uint32_t)n);
          r = bg_fw_parse(s.family, "/fw/cut.bin", t, n, &img);
          ck_assert_msg(r == -BG_EFORMAT, "chip %d file %d cut at 0x%zx (size fixed): %d", c, f, n, r);
          ck_assert_msg(strstr(bg_last_error(), "exceeds the file size") || strstr(bg_last_error(), "beyond the file size"),
                        "%s", bg_last_error());
        }
        free(t);
      }
      free(b);
    }
}
END_TEST

/* ---- wrong chip, missing files ------------------------------------------------------------------------------ */

START_TEST(wrong_chip) {
  ck_assert_int_eq(fw_gen_chip(tmpdir, FW_GEN_GFX11), 0);
  bg_am_fw_ips ip;
  fw_gen_chip_ips(FW_GEN_GFX11, &ip);
  /* An SDMA 7.0 file under the SDMA 6.0.0 name. */
  fw_gen_spec s;
  ck_assert(fw_gen_chip_spec(FW_GEN_GFX12, BG_AM_FW_SDMA, &s));
  size_t len;
  uint8_t *b = build(&s, &len);
  ck_assert_int_eq(fw_gen_write(tmpdir, "sdma_6_0_0.bin", b, len), 0);
  free(b);
  bg_am_fw *fw = (bg_am_fw *)1;
  FAILS(bg_am_fw_load(&ip, tmpdir, &fw), BG_EFORMAT,
        "sdma_6_0_0.bin: ip_version 7.0 in the header does not match SDMA0 6.0.0");
  ck_assert_ptr_null(fw);
  /* A GC 12 MEC under the GC 11 name. */
  ck_assert_int_eq(fw_gen_chip(tmpdir, FW_GEN_GFX11), 0);
  ck_assert(fw_gen_chip_spec(FW_GEN_GFX12, BG_AM_FW_MEC, &s));
  b = build(&s, &len);
  ck_assert_int_eq(fw_gen_write(tmpdir, "gc_11_0_0_mec.bin", b, len), 0);
  free(b);
  FAILS(bg_am_fw_load(&ip, tmpdir, &fw), BG_EFORMAT, "gfx: mec firmware ");
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "ip_version 12.0 in the header does not match GC 11.0.0"));
  /* The wrong family under a name: an RLC file as the IMU. */
  ck_assert_int_eq(fw_gen_chip(tmpdir, FW_GEN_GFX11), 0);
  ck_assert(fw_gen_chip_spec(FW_GEN_GFX11, BG_AM_FW_RLC, &s));
  b = build(&s, &len);
  ck_assert_int_eq(fw_gen_write(tmpdir, "gc_11_0_0_imu.bin", b, len), 0);
  free(b);
  FAILS(bg_am_fw_load(&ip, tmpdir, &fw), BG_EFORMAT, "gc_11_0_0_imu.bin: header_version 2.3 is not supported");
  /* Unstamped (0.0) ip versions are accepted. */
  ck_assert_int_eq(fw_gen_chip(tmpdir, FW_GEN_GFX11), 0);
  ck_assert(fw_gen_chip_spec(FW_GEN_GFX11, BG_AM_FW_IMU, &s));
  s.ip_major = s.ip_minor = 0;
  b = build(&s, &len);
  ck_assert_int_eq(fw_gen_write(tmpdir, "gc_11_0_0_imu.bin", b, len), 0);
  free(b);
  OK(bg_am_fw_load(&ip, tmpdir, &fw));
  bg_am_fw_free(fw);
}
END_TEST

START_TEST(missing) {
  bg_am_fw_ips ip;
  fw_gen_chip_ips(FW_GEN_GFX12, &ip);
  bg_am_fw *fw;
  char want[400];
  snprintf(want, sizeof(want), "firmware %s/psp_14_0_2_sos.bin not found (the folder is BG_FIRMWARE_DIR", tmpdir);
  FAILS(bg_am_fw_load(&ip, tmpdir, &fw), BG_ENODEV, want);
  /* The environment override picks the folder. */
  ck_assert_int_eq(setenv("BG_FIRMWARE_DIR", tmpdir, 1), 0);
  ck_assert_str_eq(bg_am_fw_dir(NULL), tmpdir);
  FAILS(bg_am_fw_load(&ip, NULL, &fw), BG_ENODEV, want);
  ck_assert_int_eq(fw_gen_chip(tmpdir, FW_GEN_GFX12), 0);
  OK(bg_am_fw_load(&ip, NULL, &fw));
  ck_assert_str_eq(fw->dir, tmpdir);
  bg_am_fw_free(fw);
  ck_assert_int_eq(unsetenv("BG_FIRMWARE_DIR"), 0);
  ck_assert_str_eq(bg_am_fw_dir(NULL), BG_AM_FW_DEFAULT_DIR);
  /* One file missing: named. */
  char path[400], zst[420];
  snprintf(path, sizeof(path), "%s/gc_12_0_0_imu.bin", tmpdir);
  ck_assert_int_eq(unlink(path), 0);
  FAILS(bg_am_fw_load(&ip, tmpdir, &fw), BG_ENODEV, "gc_12_0_0_imu.bin not found");
  /* Only a compressed copy: not supported yet, named. */
  snprintf(zst, sizeof(zst), "%s.zst", path);
  FILE *z = fopen(zst, "w");
  ck_assert_ptr_nonnull(z);
  fputs("(zstd)", z);
  fclose(z);
  FAILS(bg_am_fw_load(&ip, tmpdir, &fw), BG_ENOTSUP, zst);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "compressed firmware is not supported yet"));
  /* A directory where a file should be. */
  ck_assert_int_eq(mkdir(path, 0755), 0);
  FAILS(bg_am_fw_load(&ip, tmpdir, &fw), BG_EIO, "not a regular file");
}
END_TEST

/* ---- real linux-firmware files ------------------------------------------------------------------------------ */

typedef struct real_case {
  const char *file;
  bg_fw_family family;
  int ndescs;
  unsigned ip_major, ip_minor;
} real_case;

static const real_case reals[] = {
  {"aldebaran_mec.bin", BG_FW_GFX_MEC, 2, 9, 4},        {"aldebaran_rlc.bin", BG_FW_RLC, 4, 9, 4},
  {"aldebaran_sdma.bin", BG_FW_SDMA, 1, 4, 4},          {"aldebaran_smc.bin", BG_FW_SMC, 1, 13, 0},
  {"aldebaran_sos.bin", BG_FW_PSP_SOS, 6, 13, 0},       {"aldebaran_ta.bin", BG_FW_PSP_TA, 3, 13, 0},
  {"gc_10_3_7_rlc.bin", BG_FW_RLC, 6, 10, 3},           {"psp_13_0_5_ta.bin", BG_FW_PSP_TA, 3, 13, 0},
  {"psp_13_0_8_toc.bin", BG_FW_PSP_TOC, 1, 13, 0},      {"sdma_5_2_7.bin", BG_FW_SDMA, 1, 5, 2},
  {"sienna_cichlid_mec.bin", BG_FW_GFX_MEC, 2, 10, 3},  {"sienna_cichlid_rlc.bin", BG_FW_RLC, 6, 10, 3},
  {"sienna_cichlid_sdma.bin", BG_FW_SDMA, 1, 5, 2},     {"sienna_cichlid_smc.bin", BG_FW_SMC, 3, 11, 0},
  {"sienna_cichlid_sos.bin", BG_FW_PSP_SOS, 5, 11, 0},
};

static const char *fixtures_dir(void) {
  const char *d = getenv("BG_FW_FIXTURES");
  return d && *d ? d : "../shared/fixtures/firmware/amdgpu";
}

/* An oracle that shares nothing with am/fw_parse.c or am/fw_headers.h: little-endian words read at the
 * byte offsets of Linux drivers/gpu/drm/amd/amdgpu/amdgpu_ucode.h (struct common_firmware_header: size_bytes
 * @0, header_size_bytes @4, header/ip version u16s @8..14, ucode_version @16, ucode_size_bytes @20,
 * ucode_array_offset_bytes @24, crc32 @28), and the ranges amdgpu_ucode.c / amdgpu_psp.c /
 * gfx_v9_0.c derive from them. */
static uint32_t le32(const uint8_t *b, size_t at) {
  return (uint32_t)b[at] | (uint32_t)b[at + 1] << 8 | (uint32_t)b[at + 2] << 16 | (uint32_t)b[at + 3] << 24;
}
static uint16_t le16(const uint8_t *b, size_t at) { return (uint16_t)(b[at] | b[at + 1] << 8); }

/* The descriptor of (space, type) must exist with exactly this range (offsets from the file start). */
static void want_range(const char *file, const bg_fw_image *img, bg_fw_space space, uint32_t type, size_t off,
                       size_t size) {
  const bg_fw_desc *d = NULL;
  for (int i = 0; i < img->ndescs; i++)
    if (img->descs[i].space == space && img->descs[i].fw_type == type && !(img->descs[i].flags & BG_FW_DESC_AUX)) {
      d = &img->descs[i];
      break;
    }
  if (!d) {
    ck_abort_msg("%s: no descriptor of type %u (space %d); the header has one", file, type, space);
    return;
  }
  ck_assert_msg(d->offset == off && d->size == size,
                "%s: %s at 0x%zx size 0x%zx, the header says 0x%zx size 0x%zx", file, d->name, d->offset, d->size,
                off, size);
}

static void oracle(const char *file, bg_fw_family fam, const uint8_t *b, size_t len, const bg_fw_image *img) {
  ck_assert_msg(len >= 32, "%s: %zu bytes, shorter than the 32-byte common header", file, len);
  ck_assert_uint_eq(img->size_bytes, le32(b, 0));
  ck_assert_uint_eq(img->header_size_bytes, le32(b, 4));
  ck_assert_uint_eq(img->header_version_major, le16(b, 8));
  ck_assert_uint_eq(img->header_version_minor, le16(b, 10));
  ck_assert_uint_eq(img->ip_version_major, le16(b, 12));
  ck_assert_uint_eq(img->ip_version_minor, le16(b, 14));
  ck_assert_uint_eq(img->ucode_version, le32(b, 16));
  ck_assert_uint_eq(img->ucode_size_bytes, le32(b, 20));
  ck_assert_uint_eq(img->ucode_array_offset_bytes, le32(b, 24));
  ck_assert_uint_eq(img->crc32, le32(b, 28));
  const size_t arr = le32(b, 24), usize = le32(b, 20);
  unsigned major = le16(b, 8), minor = le16(b, 10);
  int want_n = -1;
  switch (fam) {
  case BG_FW_GFX_MEC: /* gfx_firmware_header_v1_0: jt_offset (dwords) @36, jt_size (dwords) @40 */
    ck_assert_uint_eq(major, 1);
    want_range(file, img, BG_FW_SPACE_GFX, BG_GFX_FW_CP_MEC, arr, usize - 4 * (size_t)le32(b, 40));
    want_range(file, img, BG_FW_SPACE_GFX, BG_GFX_FW_CP_MEC_ME1, arr + 4 * (size_t)le32(b, 36), 4 * (size_t)le32(b, 40));
    want_n = 2;
    break;
  case BG_FW_SDMA: /* sdma_firmware_header_v1_x: the whole ucode array is SDMA0 */
    ck_assert_uint_eq(major, 1);
    want_range(file, img, BG_FW_SPACE_GFX, BG_GFX_FW_SDMA0, arr, usize);
    want_n = 1;
    break;
  case BG_FW_PSP_TA: /* ta_firmware_header_v2_0: ta_fw_bin_count @32, psp_fw_bin_desc[16 bytes] from @36 */
    ck_assert_uint_eq(major, 2);
    want_n = (int)le32(b, 32);
    for (int i = 0; i < want_n; i++) {
      size_t e = 36 + 16 * (size_t)i;
      want_range(file, img, BG_FW_SPACE_TA, le32(b, e), arr + le32(b, e + 8), le32(b, e + 12));
    }
    break;
  case BG_FW_PSP_SOS: { /* psp_firmware_header_v1_x: psp_fw_legacy_bin_desc {fw_version, offset, size} */
    ck_assert_uint_eq(major, 1);
    /* sys_drv: the ucode array up to the sOS (amdgpu_psp.c psp_init_sos_base_fw: sys.size_bytes = sos.offset_bytes) */
    want_range(file, img, BG_FW_SPACE_PSP, BG_PSP_FW_SYS_DRV, arr, le32(b, 36));
    want_range(file, img, BG_FW_SPACE_PSP, BG_PSP_FW_SOS, arr + le32(b, 36), le32(b, 40));
    want_n = 2;
    /* v1.1/v1.3: toc @44, kdb @56; v1.3: spl @68, rl @80, sys_drv_aux @92, sos_aux @104 */
    static const struct { size_t at; uint32_t type; unsigned min_minor; } comp[] = {
      {44, BG_PSP_FW_TOC, 1}, {56, BG_PSP_FW_KDB, 1}, {68, BG_PSP_FW_SPL, 3}, {80, BG_PSP_FW_RL, 3}};
    for (size_t i = 0; i < N(comp); i++) {
      if (minor < comp[i].min_minor || minor == 2 || le32(b, comp[i].at + 8) == 0) continue;
      want_range(file, img, BG_FW_SPACE_PSP, comp[i].type, arr + le32(b, comp[i].at + 4), le32(b, comp[i].at + 8));
      want_n++;
    }
    if (minor == 3 && le32(b, 96) != 0) want_n++;  /* sys_drv_aux */
    if (minor == 3 && le32(b, 108) != 0) want_n++; /* sos_aux */
    break;
  }
  case BG_FW_SMC: /* smc_firmware_header_v2_1: pptable_count @36, pptable_entry_offset @40 (from the file
                   * start); entries {id, ppt_offset_bytes (from the file start), ppt_size_bytes} */
    ck_assert_uint_eq(major, 2);
    ck_assert_uint_eq(minor, 1);
    want_range(file, img, BG_FW_SPACE_GFX, BG_GFX_FW_SMU, arr, usize);
    want_n = 1 + (int)le32(b, 36);
    for (uint32_t i = 0; i < le32(b, 36); i++) {
      size_t e = le32(b, 40) + 12 * (size_t)i;
      want_range(file, img, BG_FW_SPACE_PPTABLE, le32(b, e), le32(b, e + 4), le32(b, e + 8));
    }
    break;
  case BG_FW_PSP_TOC: /* psp v1.0 TOC file: the ucode array is the TOC */
    want_range(file, img, BG_FW_SPACE_PSP, BG_PSP_FW_TOC, arr, usize);
    want_n = 1;
    break;
  case BG_FW_RLC: /* rlc_firmware_header_v2_0: the ucode array is RLC_G (gfx_v9_0.c / gfx_v10_0.c) */
    want_range(file, img, BG_FW_SPACE_GFX, BG_GFX_FW_RLC_G, arr, usize);
    break;
  default:
    ck_abort_msg("%s: no oracle for family %s", file, bg_fw_family_name(fam));
  }
  if (want_n >= 0)
    ck_assert_msg(img->ndescs == want_n, "%s: %d descriptors, the header describes %d", file, img->ndescs, want_n);
}

START_TEST(real_files) {
  const real_case *rc = &reals[_i];
  /* A named fixture that is absent fails: the folder comes from meson (BG_FW_FIXTURES). */
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", fixtures_dir(), rc->file);
  struct stat st;
  ck_assert_msg(stat(path, &st) == 0 && S_ISREG(st.st_mode),
                "firmware fixture %s is missing (BG_FW_FIXTURES=%s; the files are linux-firmware's amdgpu/*.bin, "
                "see ../shared/fixtures/firmware/README.md)",
                path, fixtures_dir());
  uint8_t *b;
  size_t len;
  OK(bg_am_fw_read_file(path, &b, &len));
  bg_fw_image img;
  OK(bg_fw_parse(rc->family, path, b, len, &img));
  oracle(rc->file, rc->family, b, len, &img);
  OK(bg_fw_check_ip(&img, "IP", rc->ip_major, rc->ip_minor, 0));
  FAILS(bg_fw_check_ip(&img, "IP", rc->ip_major + 1, rc->ip_minor, 0), BG_EFORMAT, rc->file);
  ck_assert_msg(img.ndescs == rc->ndescs, "%s: %d descriptors, expected %d", rc->file, img.ndescs, rc->ndescs);
  for (int i = 0; i < img.ndescs; i++) {
    const bg_fw_desc *d = &img.descs[i];
    ck_assert_ptr_eq(d->data, b + d->offset);
    ck_assert_msg(d->offset <= len && d->size <= len - d->offset, "%s desc %s outside the file", rc->file, d->name);
    ck_assert_msg(d->size > 0, "%s desc %s is empty", rc->file, d->name);
  }
  ck_assert_uint_le(img.size_bytes, len);
  /* Spot checks against the layouts read by hand. */
  if (!strcmp(rc->file, "aldebaran_mec.bin")) {
    ck_assert_uint_eq(img.descs[0].fw_type, BG_GFX_FW_CP_MEC);
    ck_assert_uint_eq(img.descs[0].size, 0x41390);
    ck_assert_uint_eq(img.descs[1].offset, 0x100 + 0x41390);
    ck_assert_uint_eq(img.descs[1].size, 0x480);
  }
  if (!strcmp(rc->file, "sienna_cichlid_sos.bin")) {
    const bg_fw_desc *toc = bg_fw_find(&img, BG_FW_SPACE_PSP, BG_PSP_FW_TOC);
    ck_assert_ptr_nonnull(toc);
    ck_assert_uint_eq(toc->offset, 0x100 + 0x34ac0);
    ck_assert_uint_eq(toc->size, 0x600);
    ck_assert_ptr_nonnull(bg_fw_find(&img, BG_FW_SPACE_PSP, BG_PSP_FW_SPL));
  }
  if (!strcmp(rc->file, "aldebaran_sos.bin")) {
    ck_assert_ptr_nonnull(bg_fw_find(&img, BG_FW_SPACE_PSP, BG_PSP_FW_RL));
    const bg_fw_desc *sos = bg_fw_find(&img, BG_FW_SPACE_PSP, BG_PSP_FW_SOS);
    ck_assert_uint_eq(sos->offset, 0x100 + 0x1e890);
  }
  if (!strcmp(rc->file, "gc_10_3_7_rlc.bin")) {
    /* size_bytes < file size: IRAM/DRAM lie beyond size_bytes, inside the file. */
    ck_assert_uint_lt(img.size_bytes, len);
    const bg_fw_desc *dram = bg_fw_find(&img, BG_FW_SPACE_GFX, BG_GFX_FW_RLC_DRAM_BOOT);
    ck_assert_uint_eq(dram->offset + dram->size, len);
  }
  if (!strcmp(rc->file, "sienna_cichlid_smc.bin")) {
    ck_assert_uint_eq(img.descs[1].space, BG_FW_SPACE_PPTABLE);
    ck_assert_uint_eq(img.descs[1].fw_type, 0x94c);
    ck_assert_uint_eq(img.descs[2].offset + img.descs[2].size, len);
  }
  char *text = NULL;
  size_t tlen = 0;
  FILE *mf = open_memstream(&text, &tlen);
  bg_fw_dump_image(&img, true, mf);
  fclose(mf);
  ck_assert_ptr_nonnull(strstr(text, rc->file));
  free(text);
  free(b);
}
END_TEST

/* ---- fuzz ------------------------------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

START_TEST(fuzz) {
  /* Seeds: every chip file and every family case. */
  enum { MAXSEEDS = 64 };
  uint8_t *seed[MAXSEEDS];
  size_t seedlen[MAXSEEDS];
  bg_fw_family fam[MAXSEEDS];
  int n = 0;
  for (int c = 0; c < FW_GEN_NCHIPS; c++)
    for (int f = 0; f < BG_AM_FW_NFILES; f++) {
      fw_gen_spec s;
      if (!fw_gen_chip_spec((fw_gen_chip_id)c, (bg_am_fw_file_id)f, &s)) continue;
      seed[n] = build(&s, &seedlen[n]);
      fam[n++] = s.family;
    }
  for (size_t i = 0; i < N(families) && n < MAXSEEDS; i++) {
    seed[n] = build(&families[i].spec, &seedlen[n]);
    fam[n++] = families[i].spec.family;
  }
  int parsed = 0, failed = 0;
  for (int it = 0; it < 20000; it++) {
    int k = (int)(rnd() % (uint32_t)n);
    size_t len = seedlen[k];
    uint8_t *b = malloc(len);
    memcpy(b, seed[k], len);
    int flips = 1 + (int)(rnd() % 4);
    for (int j = 0; j < flips; j++) {
      size_t at = (rnd() % 4 != 0) ? rnd() % (len < 0x100 ? len : 0x100) : rnd() % len;
      switch (rnd() % 4) {
      case 0: b[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
      case 1: b[at] = (uint8_t)rnd(); break;
      case 2: b[at] = 0xff; break;
      default: b[at & ~(size_t)3] = (uint8_t)(b[at & ~(size_t)3] + 4); break;
      }
    }
    if (rnd() % 4 == 0) { /* truncate into an exact-size buffer */
      size_t cut = rnd() % (len + 1);
      uint8_t *t = malloc(cut ? cut : 1);
      memcpy(t, b, cut);
      free(b);
      b = t;
      len = cut;
    }
    /* Try the right family and, sometimes, a wrong one. */
    bg_fw_family f = rnd() % 8 == 0 ? (bg_fw_family)(rnd() % BG_FW_NFAMILIES) : fam[k];
    bg_fw_image img;
    bg_clear_error();
    int r = bg_fw_parse(f, "/fw/fuzz.bin", b, len, &img);
    if (r == 0) {
      parsed++;
      for (int i = 0; i < img.ndescs; i++) {
        const bg_fw_desc *d = &img.descs[i];
        ck_assert(d->offset <= len && d->size <= len - d->offset);
        volatile uint8_t sink = 0;
        if (d->size) sink ^= d->data[0] ^ d->data[d->size - 1]; /* ASan: inside the allocation */
        (void)sink;
      }
    } else {
      failed++;
      ck_assert_int_eq(r, -BG_EFORMAT);
      ck_assert_ptr_nonnull(strstr(bg_last_error(), "firmware /fw/fuzz.bin: "));
    }
    free(b);
  }
  fprintf(stderr, "test_fw: fuzz: 20000 mutations, %d parsed, %d rejected cleanly\n", parsed, failed);
  ck_assert_int_gt(parsed, 100);
  ck_assert_int_gt(failed, 100);
  for (int i = 0; i < n; i++) free(seed[i]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("am-fw");
  TCase *t = tcase_create("parse");
  tcase_add_loop_test(t, family_versions, 0, (int)N(families));
  tcase_add_loop_test(t, corrupt, 0, (int)N(corrupts));
  tcase_add_test(t, truncated);
  tcase_add_loop_test(t, real_files, 0, (int)N(reals));
  suite_add_tcase(s, t);
  TCase *l = tcase_create("load");
  tcase_add_checked_fixture(l, tmp_setup, tmp_teardown);
  tcase_add_loop_test(l, chip_lists, 0, FW_GEN_NCHIPS);
  tcase_add_test(l, file_names);
  tcase_add_test(l, wrong_chip);
  tcase_add_test(l, missing);
  suite_add_tcase(s, l);
  TCase *z = tcase_create("fuzz");
  tcase_set_timeout(z, 120);
  tcase_add_test(z, fuzz);
  suite_add_tcase(s, z);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
