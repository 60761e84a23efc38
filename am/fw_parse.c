/* am/fw_parse.c: firmware image parsing and validation (policy in fw_parse.h). */
#include "am/fw_parse.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "am/fw_headers.h"
#include "baregpu/error.h"

#define OFF(T, f) offsetof(struct T, f)

typedef struct pctx {
  bg_fw_image *img;
  const uint8_t *b;
  size_t len;
} pctx;

static const char *const family_names[BG_FW_NFAMILIES] = {
  [BG_FW_PSP_SOS] = "psp: sos", [BG_FW_PSP_TA] = "psp: ta",   [BG_FW_PSP_TOC] = "psp: toc",
  [BG_FW_SMC] = "smu: smc",     [BG_FW_SDMA] = "sdma: sdma",  [BG_FW_GFX_PFP] = "gfx: pfp",
  [BG_FW_GFX_ME] = "gfx: me",   [BG_FW_GFX_MEC] = "gfx: mec", [BG_FW_IMU] = "gfx: imu",
  [BG_FW_RLC] = "gfx: rlc",
};

const char *bg_fw_family_name(bg_fw_family family) {
  return (unsigned)family < BG_FW_NFAMILIES ? family_names[family] : "?";
}

static int perr(const pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(const pctx *c, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return bg_error(BG_EFORMAT, "%s firmware %s: %s", bg_fw_family_name(c->img->family), c->img->path, msg);
}

static uint32_t rd32(const pctx *c, size_t off) { return bg_fw_rd32(c->b + off); }

/* Add descriptor [base + off, +size) after checking it lies inside the file. `base_field` names
 * where base comes from (NULL: the start of the file), `off_field` the offset (NULL: 0). */
static int add(pctx *c, bg_fw_space space, uint32_t type, const char *name, uint32_t version, uint8_t flags,
               const char *base_field, uint64_t base, const char *off_field, uint64_t off, const char *size_field,
               uint64_t size) {
  uint64_t start = base + off, end = start + size; /* each term < 2^35: no wrap */
  if (end > c->len) {
    char b[128] = "", o[128] = "";
    if (base_field) snprintf(b, sizeof(b), "%s 0x%" PRIx64 " + ", base_field, base);
    if (off_field) snprintf(o, sizeof(o), "%s 0x%" PRIx64 " + ", off_field, off);
    return perr(c, "%s: %s%s%s 0x%" PRIx64 " = 0x%" PRIx64 " exceeds the file size 0x%zx (expected an end <= 0x%zx)",
                name, b, o, size_field, size, end, c->len, c->len);
  }
  bg_fw_image *img = c->img;
  if (img->ndescs >= BG_FW_MAX_DESCS) return perr(c, "more than %d components", BG_FW_MAX_DESCS);
  bg_fw_desc *d = &img->descs[img->ndescs++];
  d->fw_type = type;
  d->space = (uint8_t)space;
  d->flags = flags;
  d->version = version;
  d->data = c->b + start;
  d->offset = (size_t)start;
  d->size = (size_t)size;
  d->name = name;
  return 0;
}

#define TRY(x) do { int r_ = (x); if (r_ < 0) return r_; } while (0)

/* Fixed size of the versioned header of (family, major, minor); 0 if the version is unknown. */
static size_t header_fixed_size(bg_fw_family fam, unsigned maj, unsigned min) {
  switch (fam) {
  case BG_FW_PSP_SOS:
    if (maj == 1 && min == 0) return sizeof(struct bg_fw_psp_v1_0);
    if (maj == 1 && min == 1) return sizeof(struct bg_fw_psp_v1_1);
    if (maj == 1 && min == 2) return sizeof(struct bg_fw_psp_v1_2);
    if (maj == 1 && min == 3) return sizeof(struct bg_fw_psp_v1_3);
    if (maj == 2 && min == 0) return sizeof(struct bg_fw_psp_v2_0);
    if (maj == 2 && min == 1) return sizeof(struct bg_fw_psp_v2_1);
    return 0;
  case BG_FW_PSP_TA: return maj == 2 && min == 0 ? sizeof(struct bg_fw_ta_v2_0) : 0;
  case BG_FW_PSP_TOC: return maj == 1 && min == 0 ? sizeof(struct bg_fw_psp_v1_0) : 0;
  case BG_FW_SMC:
    if (maj == 1 && min == 0) return sizeof(struct bg_fw_smc_v1_0);
    if (maj == 2 && min == 0) return sizeof(struct bg_fw_smc_v2_0);
    if (maj == 2 && min == 1) return sizeof(struct bg_fw_smc_v2_1);
    return 0;
  case BG_FW_SDMA:
    if (maj == 1 && min == 0) return sizeof(struct bg_fw_sdma_v1_0);
    if (maj == 1 && min == 1) return sizeof(struct bg_fw_sdma_v1_1);
    if (maj == 2 && min == 0) return sizeof(struct bg_fw_sdma_v2_0);
    if (maj == 3 && min == 0) return sizeof(struct bg_fw_sdma_v3_0);
    return 0;
  case BG_FW_GFX_PFP:
  case BG_FW_GFX_ME:
  case BG_FW_GFX_MEC:
    if (maj == 1 && min == 0) return sizeof(struct bg_fw_gfx_v1_0);
    if (maj == 2 && min == 0) return sizeof(struct bg_fw_gfx_v2_0);
    return 0;
  case BG_FW_IMU: return maj == 1 && min == 0 ? sizeof(struct bg_fw_imu_v1_0) : 0;
  case BG_FW_RLC:
    if (maj != 2) return 0;
    if (min == 0) return sizeof(struct bg_fw_rlc_v2_0);
    if (min == 1) return sizeof(struct bg_fw_rlc_v2_1);
    if (min == 2) return sizeof(struct bg_fw_rlc_v2_2);
    if (min == 3) return sizeof(struct bg_fw_rlc_v2_3);
    return 0;
  default: return 0;
  }
}

static const char *const supported_versions[BG_FW_NFAMILIES] = {
  [BG_FW_PSP_SOS] = "1.0-1.3, 2.0, 2.1", [BG_FW_PSP_TA] = "2.0", [BG_FW_PSP_TOC] = "1.0",
  [BG_FW_SMC] = "1.0, 2.0, 2.1", [BG_FW_SDMA] = "1.0, 1.1, 2.0, 3.0", [BG_FW_GFX_PFP] = "1.0, 2.0",
  [BG_FW_GFX_ME] = "1.0, 2.0", [BG_FW_GFX_MEC] = "1.0, 2.0", [BG_FW_IMU] = "1.0", [BG_FW_RLC] = "2.0-2.3",
};

/* ---- PSP ---------------------------------------------------------------------------------------------------- */

static const char *psp_type_name(uint32_t t) {
  static const char *const n[] = {"?", "PSP_SOS", "PSP_SYS_DRV", "PSP_KDB", "PSP_TOC", "PSP_SPL", "PSP_RL",
                                  "PSP_SOC_DRV", "PSP_INTF_DRV", "PSP_DBG_DRV", "PSP_RAS_DRV", "PSP_IPKEYMGR_DRV"};
  return t < sizeof(n) / sizeof(n[0]) ? n[t] : "?";
}

static const char *ta_type_name(uint32_t t) {
  static const char *const n[] = {"?", "TA_ASD", "TA_XGMI", "TA_RAS", "TA_HDCP", "TA_DTM", "TA_RAP", "TA_SECUREDISPLAY"};
  return t < sizeof(n) / sizeof(n[0]) ? n[t] : "?";
}

/* A psp v1.x legacy descriptor at `at` (offset from the ucode array); skipped when its size is 0. */
static int psp_legacy(pctx *c, size_t at, const char *field, uint32_t type, uint8_t flags) {
  uint32_t ver = rd32(c, at), off = rd32(c, at + 4), size = rd32(c, at + 8);
  if (size == 0) return 0;
  char fo[48], fs[48];
  snprintf(fo, sizeof(fo), "%s.offset_bytes", field);
  snprintf(fs, sizeof(fs), "%s.size_bytes", field);
  return add(c, BG_FW_SPACE_PSP, type, psp_type_name(type), ver, flags, "ucode_array_offset_bytes",
             c->img->ucode_array_offset_bytes, fo, off, fs, size);
}

static int parse_psp_v1(pctx *c, unsigned minor) {
  bg_fw_image *img = c->img;
  uint32_t uo = img->ucode_array_offset_bytes;
  size_t sos = OFF(bg_fw_psp_v1_0, sos);
  img->feature_version = rd32(c, sos);
  /* System driver: the ucode array up to the sOS; then the sOS. */
  TRY(add(c, BG_FW_SPACE_PSP, BG_PSP_FW_SYS_DRV, "PSP_SYS_DRV", rd32(c, sos), 0, "ucode_array_offset_bytes", uo, NULL,
          0, "sos.offset_bytes", rd32(c, sos + 4)));
  TRY(add(c, BG_FW_SPACE_PSP, BG_PSP_FW_SOS, "PSP_SOS", rd32(c, sos), 0, "ucode_array_offset_bytes", uo,
          "sos.offset_bytes", rd32(c, sos + 4), "sos.size_bytes", rd32(c, sos + 8)));
  if (minor == 1 || minor == 3) {
    TRY(psp_legacy(c, OFF(bg_fw_psp_v1_1, toc), "toc", BG_PSP_FW_TOC, 0));
    TRY(psp_legacy(c, OFF(bg_fw_psp_v1_1, kdb), "kdb", BG_PSP_FW_KDB, 0));
  }
  if (minor == 2) TRY(psp_legacy(c, OFF(bg_fw_psp_v1_2, kdb), "kdb", BG_PSP_FW_KDB, 0));
  if (minor == 3) {
    TRY(psp_legacy(c, OFF(bg_fw_psp_v1_3, spl), "spl", BG_PSP_FW_SPL, 0));
    TRY(psp_legacy(c, OFF(bg_fw_psp_v1_3, rl), "rl", BG_PSP_FW_RL, 0));
    TRY(psp_legacy(c, OFF(bg_fw_psp_v1_3, sys_drv_aux), "sys_drv_aux", BG_PSP_FW_SYS_DRV, BG_FW_DESC_AUX));
    TRY(psp_legacy(c, OFF(bg_fw_psp_v1_3, sos_aux), "sos_aux", BG_PSP_FW_SOS, BG_FW_DESC_AUX));
  }
  return 0;
}

/* psp v2.x sOS / ta v2.0: `count` psp_fw_bin_desc at `at`; index >= aux (if aux > 0) is the aux set. */
static int parse_bin_descs(pctx *c, const char *arr, const char *count_field, uint32_t count, size_t at, uint32_t aux,
                           bg_fw_space space) {
  if (count >= BG_FW_MAX_PSP_PACKAGING)
    return perr(c, "%s %u exceeds the maximum %u (Linux UCODE_MAX_PSP_PACKAGING)", count_field, count,
                BG_FW_MAX_PSP_PACKAGING - 1);
  uint64_t end = (uint64_t)at + (uint64_t)count * sizeof(struct bg_fw_psp_bin_desc);
  if (end > c->len)
    return perr(c, "%s %u: descriptors at 0x%zx end at 0x%" PRIx64 ", beyond the file size 0x%zx", count_field, count,
                at, end, c->len);
  for (uint32_t i = 0; i < count; i++) {
    size_t d = at + i * sizeof(struct bg_fw_psp_bin_desc);
    uint32_t type = rd32(c, d), ver = rd32(c, d + 4), off = rd32(c, d + 8), size = rd32(c, d + 12);
    char fo[48], fs[48];
    snprintf(fo, sizeof(fo), "%s[%u].offset_bytes", arr, i);
    snprintf(fs, sizeof(fs), "%s[%u].size_bytes", arr, i);
    const char *name = space == BG_FW_SPACE_TA ? ta_type_name(type) : psp_type_name(type);
    TRY(add(c, space, type, name, ver, aux && i >= aux ? BG_FW_DESC_AUX : 0, "ucode_array_offset_bytes",
            c->img->ucode_array_offset_bytes, fo, off, fs, size));
  }
  return 0;
}

static int parse_psp_sos(pctx *c) {
  bg_fw_image *img = c->img;
  if (img->header_version_major == 1) return parse_psp_v1(c, img->header_version_minor);
  uint32_t count = rd32(c, OFF(bg_fw_psp_v2_0, psp_fw_bin_count));
  if (img->header_version_minor == 0)
    return parse_bin_descs(c, "psp_fw_bin", "psp_fw_bin_count", count, OFF(bg_fw_psp_v2_0, psp_fw_bin), 0,
                           BG_FW_SPACE_PSP);
  uint32_t aux = rd32(c, OFF(bg_fw_psp_v2_1, psp_aux_fw_bin_index));
  if (aux > count)
    return perr(c, "psp_aux_fw_bin_index %u exceeds psp_fw_bin_count %u (expected 0..%u)", aux, count, count);
  return parse_bin_descs(c, "psp_fw_bin", "psp_fw_bin_count", count, OFF(bg_fw_psp_v2_1, psp_fw_bin), aux,
                         BG_FW_SPACE_PSP);
}

static int parse_psp_ta(pctx *c) {
  return parse_bin_descs(c, "ta_fw_bin", "ta_fw_bin_count", rd32(c, OFF(bg_fw_ta_v2_0, ta_fw_bin_count)),
                         OFF(bg_fw_ta_v2_0, ta_fw_bin), 0, BG_FW_SPACE_TA);
}

static int add_ucode(pctx *c, bg_fw_space space, uint32_t type, const char *name) {
  return add(c, space, type, name, 0, 0, NULL, 0, "ucode_array_offset_bytes", c->img->ucode_array_offset_bytes,
             "ucode_size_bytes", c->img->ucode_size_bytes);
}

static int parse_psp_toc(pctx *c) {
  c->img->feature_version = rd32(c, OFF(bg_fw_psp_v1_0, sos));
  return add_ucode(c, BG_FW_SPACE_PSP, BG_PSP_FW_TOC, "PSP_TOC");
}

/* ---- SMC ---------------------------------------------------------------------------------------------------- */

static int parse_smc(pctx *c) {
  bg_fw_image *img = c->img;
  img->ucode_start = rd32(c, OFF(bg_fw_smc_v1_0, ucode_start_addr));
  TRY(add_ucode(c, BG_FW_SPACE_GFX, BG_GFX_FW_SMU, "SMU"));
  if (img->header_version_major == 1) return 0;
  if (img->header_version_minor == 0) {
    uint32_t size = rd32(c, OFF(bg_fw_smc_v2_0, ppt_size_bytes));
    if (size == 0) return 0;
    return add(c, BG_FW_SPACE_PPTABLE, 0, "pptable", 0, 0, NULL, 0, "ppt_offset_bytes",
               rd32(c, OFF(bg_fw_smc_v2_0, ppt_offset_bytes)), "ppt_size_bytes", size);
  }
  uint32_t count = rd32(c, OFF(bg_fw_smc_v2_1, pptable_count));
  uint32_t at = rd32(c, OFF(bg_fw_smc_v2_1, pptable_entry_offset));
  if (count > BG_FW_MAX_DESCS - 1)
    return perr(c, "pptable_count %u exceeds the supported %d", count, BG_FW_MAX_DESCS - 1);
  uint64_t end = (uint64_t)at + (uint64_t)count * sizeof(struct bg_fw_smc_pptable_entry);
  if (end > c->len)
    return perr(c, "pptable_entry_offset 0x%x + pptable_count %u * 12 = 0x%" PRIx64 " exceeds the file size 0x%zx", at,
                count, end, c->len);
  for (uint32_t i = 0; i < count; i++) {
    size_t e = (size_t)at + i * sizeof(struct bg_fw_smc_pptable_entry);
    uint32_t id = rd32(c, e);
    char fo[48], fs[48];
    snprintf(fo, sizeof(fo), "pptable[%u].ppt_offset_bytes", i);
    snprintf(fs, sizeof(fs), "pptable[%u].ppt_size_bytes", i);
    bool p2s = id == BG_FW_PPTABLE_ID_P2S;
    TRY(add(c, p2s ? BG_FW_SPACE_GFX : BG_FW_SPACE_PPTABLE, p2s ? BG_GFX_FW_P2S_TABLE : id, p2s ? "P2S_TABLE" : "pptable",
            id, 0, NULL, 0, fo, rd32(c, e + 4), fs, rd32(c, e + 8)));
  }
  return 0;
}

/* ---- SDMA --------------------------------------------------------------------------------------------------- */

static int parse_sdma(pctx *c) {
  bg_fw_image *img = c->img;
  uint32_t uo = img->ucode_array_offset_bytes;
  img->feature_version = rd32(c, OFF(bg_fw_sdma_v1_0, ucode_feature_version));
  switch (img->header_version_major) {
  case 1: {
    /* The jump table (dwords) must lie inside the ucode array; the blob is loaded whole. */
    uint64_t jo = (uint64_t)rd32(c, OFF(bg_fw_sdma_v1_0, jt_offset)) * 4;
    uint64_t js = (uint64_t)rd32(c, OFF(bg_fw_sdma_v1_0, jt_size)) * 4;
    if (jo + js > img->ucode_size_bytes)
      return perr(c, "jt_offset*4 0x%" PRIx64 " + jt_size*4 0x%" PRIx64 " exceeds ucode_size_bytes 0x%x", jo, js,
                  img->ucode_size_bytes);
    return add_ucode(c, BG_FW_SPACE_GFX, BG_GFX_FW_SDMA0, "SDMA0");
  }
  case 2:
    TRY(add(c, BG_FW_SPACE_GFX, BG_GFX_FW_SDMA_UCODE_TH1, "SDMA_UCODE_TH1", 0, 0, NULL, 0, "ctl_ucode_offset",
            rd32(c, OFF(bg_fw_sdma_v2_0, ctl_ucode_offset)), "ctl_ucode_size_bytes",
            rd32(c, OFF(bg_fw_sdma_v2_0, ctl_ucode_size_bytes))));
    return add(c, BG_FW_SPACE_GFX, BG_GFX_FW_SDMA_UCODE_TH0, "SDMA_UCODE_TH0", 0, 0, NULL, 0, "ucode_array_offset_bytes",
               uo, "ctx_ucode_size_bytes", rd32(c, OFF(bg_fw_sdma_v2_0, ctx_ucode_size_bytes)));
  default:
    return add(c, BG_FW_SPACE_GFX, BG_GFX_FW_SDMA_UCODE_TH0, "SDMA_UCODE_TH0", 0, 0, NULL, 0, "ucode_array_offset_bytes",
               uo, "ucode_size_bytes (v3)", rd32(c, OFF(bg_fw_sdma_v3_0, ucode_size_bytes)));
  }
}

/* ---- GFX (PFP / ME / MEC) ------------------------------------------------------------------------------------- */

static int parse_gfx(pctx *c) {
  bg_fw_image *img = c->img;
  uint32_t uo = img->ucode_array_offset_bytes;
  img->feature_version = rd32(c, OFF(bg_fw_gfx_v1_0, ucode_feature_version));
  if (img->header_version_major == 1) {
    if (img->family == BG_FW_GFX_PFP) return add_ucode(c, BG_FW_SPACE_GFX, BG_GFX_FW_CP_PFP, "CP_PFP");
    if (img->family == BG_FW_GFX_ME) return add_ucode(c, BG_FW_SPACE_GFX, BG_GFX_FW_CP_ME, "CP_ME");
    uint64_t jo = (uint64_t)rd32(c, OFF(bg_fw_gfx_v1_0, jt_offset)) * 4;
    uint64_t js = (uint64_t)rd32(c, OFF(bg_fw_gfx_v1_0, jt_size)) * 4;
    if (js > img->ucode_size_bytes)
      return perr(c, "jt_size*4 0x%" PRIx64 " exceeds ucode_size_bytes 0x%x (expected <= it)", js,
                  img->ucode_size_bytes);
    TRY(add(c, BG_FW_SPACE_GFX, BG_GFX_FW_CP_MEC, "CP_MEC", 0, 0, NULL, 0, "ucode_array_offset_bytes", uo,
            "ucode_size_bytes - jt_size*4", img->ucode_size_bytes - js));
    return add(c, BG_FW_SPACE_GFX, BG_GFX_FW_CP_MEC_ME1, "CP_MEC_ME1", 0, 0, "ucode_array_offset_bytes", uo,
               "jt_offset*4", jo, "jt_size*4", js);
  }
  static const uint32_t code[] = {BG_GFX_FW_RS64_PFP, BG_GFX_FW_RS64_ME, BG_GFX_FW_RS64_MEC};
  static const uint32_t stack[] = {BG_GFX_FW_RS64_PFP_P0_STACK, BG_GFX_FW_RS64_ME_P0_STACK, BG_GFX_FW_RS64_MEC_P0_STACK};
  static const char *const code_name[] = {"RS64_PFP", "RS64_ME", "RS64_MEC"};
  static const char *const stack_name[] = {"RS64_PFP_P0_STACK", "RS64_ME_P0_STACK", "RS64_MEC_P0_STACK"};
  int e = img->family - BG_FW_GFX_PFP;
  img->ucode_start = (uint64_t)rd32(c, OFF(bg_fw_gfx_v2_0, ucode_start_addr_hi)) << 32 |
                     rd32(c, OFF(bg_fw_gfx_v2_0, ucode_start_addr_lo));
  TRY(add(c, BG_FW_SPACE_GFX, code[e], code_name[e], 0, 0, NULL, 0, "ucode_array_offset_bytes", uo,
          "ucode_size_bytes (v2)", rd32(c, OFF(bg_fw_gfx_v2_0, ucode_size_bytes))));
  return add(c, BG_FW_SPACE_GFX, stack[e], stack_name[e], 0, 0, NULL, 0, "data_offset_bytes",
             rd32(c, OFF(bg_fw_gfx_v2_0, data_offset_bytes)), "data_size_bytes",
             rd32(c, OFF(bg_fw_gfx_v2_0, data_size_bytes)));
}

/* ---- IMU / RLC ---------------------------------------------------------------------------------------------- */

static int parse_imu(pctx *c) {
  uint32_t uo = c->img->ucode_array_offset_bytes;
  uint32_t isz = rd32(c, OFF(bg_fw_imu_v1_0, imu_iram_ucode_size_bytes));
  TRY(add(c, BG_FW_SPACE_GFX, BG_GFX_FW_IMU_I, "IMU_I", 0, 0, NULL, 0, "ucode_array_offset_bytes", uo,
          "imu_iram_ucode_size_bytes", isz));
  return add(c, BG_FW_SPACE_GFX, BG_GFX_FW_IMU_D, "IMU_D", 0, 0, "ucode_array_offset_bytes", uo,
             "imu_iram_ucode_size_bytes", isz, "imu_dram_ucode_size_bytes",
             rd32(c, OFF(bg_fw_imu_v1_0, imu_dram_ucode_size_bytes)));
}

/* An RLC component whose size/offset fields (from the file start) are at `size_at`/`off_at`. */
static int rlc_part(pctx *c, uint32_t type, const char *name, const char *field, size_t size_at, size_t off_at) {
  char fo[64], fs[64];
  snprintf(fo, sizeof(fo), "%s_offset_bytes", field);
  snprintf(fs, sizeof(fs), "%s_size_bytes", field);
  return add(c, BG_FW_SPACE_GFX, type, name, 0, 0, NULL, 0, fo, rd32(c, off_at), fs, rd32(c, size_at));
}

static int parse_rlc(pctx *c) {
  unsigned minor = c->img->header_version_minor;
  c->img->feature_version = rd32(c, OFF(bg_fw_rlc_v2_0, ucode_feature_version));
  if (minor >= 1) {
    TRY(rlc_part(c, BG_GFX_FW_RLC_RESTORE_LIST_SRM_CNTL, "RLC_RESTORE_LIST_SRM_CNTL", "save_restore_list_cntl",
                 OFF(bg_fw_rlc_v2_1, save_restore_list_cntl_size_bytes),
                 OFF(bg_fw_rlc_v2_1, save_restore_list_cntl_offset_bytes)));
    TRY(rlc_part(c, BG_GFX_FW_RLC_RESTORE_LIST_GPM_MEM, "RLC_RESTORE_LIST_GPM_MEM", "save_restore_list_gpm",
                 OFF(bg_fw_rlc_v2_1, save_restore_list_gpm_size_bytes),
                 OFF(bg_fw_rlc_v2_1, save_restore_list_gpm_offset_bytes)));
    TRY(rlc_part(c, BG_GFX_FW_RLC_RESTORE_LIST_SRM_MEM, "RLC_RESTORE_LIST_SRM_MEM", "save_restore_list_srm",
                 OFF(bg_fw_rlc_v2_1, save_restore_list_srm_size_bytes),
                 OFF(bg_fw_rlc_v2_1, save_restore_list_srm_offset_bytes)));
  }
  if (minor >= 2) {
    TRY(rlc_part(c, BG_GFX_FW_RLC_IRAM, "RLC_IRAM", "rlc_iram_ucode", OFF(bg_fw_rlc_v2_2, rlc_iram_ucode_size_bytes),
                 OFF(bg_fw_rlc_v2_2, rlc_iram_ucode_offset_bytes)));
    TRY(rlc_part(c, BG_GFX_FW_RLC_DRAM_BOOT, "RLC_DRAM_BOOT", "rlc_dram_ucode",
                 OFF(bg_fw_rlc_v2_2, rlc_dram_ucode_size_bytes), OFF(bg_fw_rlc_v2_2, rlc_dram_ucode_offset_bytes)));
  }
  if (minor == 3) {
    TRY(rlc_part(c, BG_GFX_FW_RLC_P, "RLC_P", "rlcp_ucode", OFF(bg_fw_rlc_v2_3, rlcp_ucode_size_bytes),
                 OFF(bg_fw_rlc_v2_3, rlcp_ucode_offset_bytes)));
    TRY(rlc_part(c, BG_GFX_FW_RLC_V, "RLC_V", "rlcv_ucode", OFF(bg_fw_rlc_v2_3, rlcv_ucode_size_bytes),
                 OFF(bg_fw_rlc_v2_3, rlcv_ucode_offset_bytes)));
  }
  return add_ucode(c, BG_FW_SPACE_GFX, BG_GFX_FW_RLC_G, "RLC_G");
}

/* ---- entry points ------------------------------------------------------------------------------------------- */

uint32_t bg_fw_crc32(const uint8_t *p, size_t n) {
  static _Thread_local uint32_t table[256]; /* per thread: no data race on first use */
  static _Thread_local int ready;
  if (!ready) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t v = i;
      for (int k = 0; k < 8; k++) v = (v >> 1) ^ (0xEDB88320u & (0u - (v & 1u)));
      table[i] = v;
    }
    ready = 1;
  }
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) crc = (crc >> 8) ^ table[(crc ^ p[i]) & 0xFFu];
  return ~crc;
}

int bg_fw_parse(bg_fw_family family, const char *path, const uint8_t *buf, size_t len, bg_fw_image *out) {
  memset(out, 0, sizeof(*out));
  out->family = family;
  snprintf(out->path, sizeof(out->path), "%s", path ? path : "(memory)");
  out->buf = buf;
  out->len = len;
  pctx c = {out, buf, len};
  if ((unsigned)family >= BG_FW_NFAMILIES) return bg_error(BG_EINVAL, "firmware %s: bad family %d", out->path, family);
  if (!buf || len < sizeof(struct bg_fw_common_header))
    return perr(&c, "file size 0x%zx is smaller than the 0x%zx-byte common header", len,
                sizeof(struct bg_fw_common_header));
  out->size_bytes = rd32(&c, OFF(bg_fw_common_header, size_bytes));
  out->header_size_bytes = rd32(&c, OFF(bg_fw_common_header, header_size_bytes));
  out->header_version_major = bg_fw_rd16(buf + OFF(bg_fw_common_header, header_version_major));
  out->header_version_minor = bg_fw_rd16(buf + OFF(bg_fw_common_header, header_version_minor));
  out->ip_version_major = bg_fw_rd16(buf + OFF(bg_fw_common_header, ip_version_major));
  out->ip_version_minor = bg_fw_rd16(buf + OFF(bg_fw_common_header, ip_version_minor));
  out->ucode_version = rd32(&c, OFF(bg_fw_common_header, ucode_version));
  out->ucode_size_bytes = rd32(&c, OFF(bg_fw_common_header, ucode_size_bytes));
  out->ucode_array_offset_bytes = rd32(&c, OFF(bg_fw_common_header, ucode_array_offset_bytes));
  out->crc32 = rd32(&c, OFF(bg_fw_common_header, crc32));

  size_t fixed = header_fixed_size(family, out->header_version_major, out->header_version_minor);
  if (!fixed)
    return perr(&c, "header_version %u.%u is not supported (supported: %s)", out->header_version_major,
                out->header_version_minor, supported_versions[family]);
  if (len < fixed)
    return perr(&c, "file size 0x%zx is smaller than the v%u.%u header (0x%zx bytes)", len, out->header_version_major,
                out->header_version_minor, fixed);
  if (out->size_bytes > len)
    return perr(&c, "size_bytes 0x%x exceeds the file size 0x%zx (expected 0x%zx..0x%zx)", out->size_bytes, len, fixed,
                len);
  if (out->header_size_bytes < fixed || out->header_size_bytes > out->size_bytes)
    return perr(&c, "header_size_bytes 0x%x is outside 0x%zx..0x%x (v%u.%u header size..size_bytes)",
                out->header_size_bytes, fixed, out->size_bytes, out->header_version_major, out->header_version_minor);
  uint64_t uend = (uint64_t)out->ucode_array_offset_bytes + out->ucode_size_bytes;
  if (uend > len)
    return perr(&c, "ucode_array_offset_bytes 0x%x + ucode_size_bytes 0x%x = 0x%" PRIx64
                    " exceeds the file size 0x%zx (expected an end <= 0x%zx)",
                out->ucode_array_offset_bytes, out->ucode_size_bytes, uend, len, len);
  out->crc32_computed = bg_fw_crc32(buf + 32, out->size_bytes > 32 ? out->size_bytes - 32 : 0);

  switch (family) {
  case BG_FW_PSP_SOS: return parse_psp_sos(&c);
  case BG_FW_PSP_TA: return parse_psp_ta(&c);
  case BG_FW_PSP_TOC: return parse_psp_toc(&c);
  case BG_FW_SMC: return parse_smc(&c);
  case BG_FW_SDMA: return parse_sdma(&c);
  case BG_FW_GFX_PFP:
  case BG_FW_GFX_ME:
  case BG_FW_GFX_MEC: return parse_gfx(&c);
  case BG_FW_IMU: return parse_imu(&c);
  case BG_FW_RLC: return parse_rlc(&c);
  default: return 0;
  }
}

int bg_fw_check_ip(const bg_fw_image *img, const char *ip_name, unsigned maj, unsigned min, unsigned rev) {
  if (img->ip_version_major == 0 && img->ip_version_minor == 0) return 0; /* not stamped */
  if (img->ip_version_major == maj && img->ip_version_minor == min) return 0;
  return bg_error(BG_EFORMAT,
                  "%s firmware %s: ip_version %u.%u in the header does not match %s %u.%u.%u (expected %u.%u: "
                  "a file for another chip?)",
                  bg_fw_family_name(img->family), img->path, img->ip_version_major, img->ip_version_minor, ip_name,
                  maj, min, rev, maj, min);
}

const bg_fw_desc *bg_fw_find(const bg_fw_image *img, bg_fw_space space, uint32_t fw_type) {
  for (int i = 0; i < img->ndescs; i++) {
    const bg_fw_desc *d = &img->descs[i];
    if (d->space == space && d->fw_type == fw_type && !(d->flags & BG_FW_DESC_AUX)) return d;
  }
  return NULL;
}

const char *bg_fw_type_name(bg_fw_space space, uint32_t t) {
  switch (space) {
  case BG_FW_SPACE_PSP: return psp_type_name(t);
  case BG_FW_SPACE_TA: return ta_type_name(t);
  case BG_FW_SPACE_PPTABLE: return "pptable";
  case BG_FW_SPACE_GFX: break;
  }
  static const struct { uint32_t t; const char *n; } g[] = {
    {BG_GFX_FW_CP_ME, "CP_ME"}, {BG_GFX_FW_CP_PFP, "CP_PFP"}, {BG_GFX_FW_CP_MEC, "CP_MEC"},
    {BG_GFX_FW_CP_MEC_ME1, "CP_MEC_ME1"}, {BG_GFX_FW_RLC_V, "RLC_V"}, {BG_GFX_FW_RLC_G, "RLC_G"},
    {BG_GFX_FW_SDMA0, "SDMA0"}, {BG_GFX_FW_SDMA1, "SDMA1"}, {BG_GFX_FW_SMU, "SMU"},
    {BG_GFX_FW_RLC_RESTORE_LIST_GPM_MEM, "RLC_RESTORE_LIST_GPM_MEM"},
    {BG_GFX_FW_RLC_RESTORE_LIST_SRM_MEM, "RLC_RESTORE_LIST_SRM_MEM"},
    {BG_GFX_FW_RLC_RESTORE_LIST_SRM_CNTL, "RLC_RESTORE_LIST_SRM_CNTL"}, {BG_GFX_FW_RLC_P, "RLC_P"},
    {BG_GFX_FW_RLC_IRAM, "RLC_IRAM"}, {BG_GFX_FW_RLC_DRAM_BOOT, "RLC_DRAM_BOOT"}, {BG_GFX_FW_SDMA2, "SDMA2"},
    {BG_GFX_FW_SDMA3, "SDMA3"}, {BG_GFX_FW_REG_LIST, "REG_LIST"}, {BG_GFX_FW_IMU_I, "IMU_I"},
    {BG_GFX_FW_IMU_D, "IMU_D"}, {BG_GFX_FW_SDMA_UCODE_TH0, "SDMA_UCODE_TH0"},
    {BG_GFX_FW_SDMA_UCODE_TH1, "SDMA_UCODE_TH1"}, {BG_GFX_FW_RS64_PFP, "RS64_PFP"}, {BG_GFX_FW_RS64_ME, "RS64_ME"},
    {BG_GFX_FW_RS64_MEC, "RS64_MEC"}, {BG_GFX_FW_RS64_PFP_P0_STACK, "RS64_PFP_P0_STACK"},
    {BG_GFX_FW_RS64_ME_P0_STACK, "RS64_ME_P0_STACK"}, {BG_GFX_FW_RS64_MEC_P0_STACK, "RS64_MEC_P0_STACK"},
    {BG_GFX_FW_P2S_TABLE, "P2S_TABLE"},
  };
  for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++)
    if (g[i].t == t) return g[i].n;
  return "?";
}

void bg_fw_dump_desc(const bg_fw_desc *d, const char *file, FILE *f) {
  static const char *const spaces[] = {"gfx", "psp", "ta", "ppt"};
  fprintf(f, "  %-3s %3u %-26s %-24s off 0x%08zx size 0x%08zx ver 0x%08x%s\n", spaces[d->space & 3], d->fw_type,
          d->name, file ? file : "", d->offset, d->size, d->version, (d->flags & BG_FW_DESC_AUX) ? " aux" : "");
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

void bg_fw_dump_image(const bg_fw_image *img, bool verbose, FILE *f) {
  const char *file = base_name(img->path);
  if (verbose)
    fprintf(f,
            "%s: %s v%u.%u ip %u.%u size 0x%zx (size_bytes 0x%x) header 0x%x ucode 0x%x@0x%x ucode_version 0x%x "
            "feature %u crc32 0x%08x %s (not verified)\n",
            file, bg_fw_family_name(img->family), img->header_version_major, img->header_version_minor,
            img->ip_version_major, img->ip_version_minor, img->len, img->size_bytes, img->header_size_bytes,
            img->ucode_size_bytes, img->ucode_array_offset_bytes, img->ucode_version, img->feature_version, img->crc32,
            img->crc32 == 0 ? "unset" : img->crc32 == img->crc32_computed ? "matches [32, size_bytes)"
                                                                           : "differs from [32, size_bytes)");
  for (int i = 0; i < img->ndescs; i++) bg_fw_dump_desc(&img->descs[i], file, f);
}
