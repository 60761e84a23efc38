/* am/fw_parse.h: parse and validate one AMD firmware image (linux-firmware amdgpu/ *.bin files) into a
 * list of descriptors, each a byte range of the image checked to lie inside it.
 *
 * Families and header versions (layouts in fw_headers.h, tinygrad tinygrad/runtime/support/am/amdev.py AMFirmware):
 *   PSP sOS   psp v1.0-v1.3 (legacy descriptors) and v2.0/v2.1 (psp_fw_bin descriptors)
 *   PSP TA    ta v2.0;  PSP TOC  psp v1.0 (the ucode array is the TOC)
 *   SMC       smc v1.0, v2.0 (one pptable), v2.1 (pptable entries)
 *   SDMA      sdma v1.0/v1.1, v2.0, v3.0
 *   GFX       gfx v1.0 (MEC code + jump table; PFP/ME whole) and v2.0 (RS64 code + P0 stack)
 *   IMU       imu v1.0;  RLC  rlc v2.0-v2.3
 *
 * Validation policy (Linux checks much less; baregpu refuses anything it would read outside the
 * file): the file holds the 32-byte common header and the whole fixed part of its versioned header;
 * header_version is one listed above; header_size_bytes lies in [fixed header size, size_bytes];
 * size_bytes <= the file size (NOT ==: real linux-firmware RLC v2.2 files carry size_bytes smaller
 * than the file, with their IRAM/DRAM images beyond it, so the file size is the bound every range
 * is checked against); ucode_array_offset_bytes + ucode_size_bytes <= the file size; every
 * descriptor's offset + size <= the file size, computed in 64 bits so nothing wraps. The header's
 * crc32 is not checked (Linux ignores it; many real files' crc does not cover a range we can
 * reproduce); fw_parse computes crc32 over [32, size_bytes) and the dump reports whether it matches.
 *
 * Errors are BG_EFORMAT with "<block>: <kind> firmware <path>: <field> <value> <what was expected>".
 * The image points into the caller's buffer, which must outlive it. */
#ifndef BAREGPU_AM_FW_PARSE_H
#define BAREGPU_AM_FW_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum bg_fw_family {
  BG_FW_PSP_SOS,
  BG_FW_PSP_TA,
  BG_FW_PSP_TOC,
  BG_FW_SMC,
  BG_FW_SDMA,
  BG_FW_GFX_PFP,
  BG_FW_GFX_ME,
  BG_FW_GFX_MEC,
  BG_FW_IMU,
  BG_FW_RLC,
  BG_FW_NFAMILIES,
} bg_fw_family;

/* Which id space a descriptor's fw_type belongs to. */
typedef enum bg_fw_space {
  BG_FW_SPACE_GFX,     /* enum psp_gfx_fw_type: loadable with the PSP ring's LOAD_IP_FW */
  BG_FW_SPACE_PSP,     /* enum psp_fw_type: sOS components for the PSP bootloader */
  BG_FW_SPACE_TA,      /* enum ta_fw_type: trusted applications */
  BG_FW_SPACE_PPTABLE, /* SMC soft pptable; fw_type = the entry's id (0 for a v2.0 pptable) */
} bg_fw_space;

/* enum psp_gfx_fw_type (Linux drivers/gpu/drm/amd/amdgpu/psp_gfx_if.h). */
enum {
  BG_GFX_FW_CP_ME = 1,
  BG_GFX_FW_CP_PFP = 2,
  BG_GFX_FW_CP_MEC = 4,
  BG_GFX_FW_CP_MEC_ME1 = 5,
  BG_GFX_FW_RLC_V = 7,
  BG_GFX_FW_RLC_G = 8,
  BG_GFX_FW_SDMA0 = 9,
  BG_GFX_FW_SDMA1 = 10,
  BG_GFX_FW_SMU = 18,
  BG_GFX_FW_RLC_RESTORE_LIST_GPM_MEM = 20,
  BG_GFX_FW_RLC_RESTORE_LIST_SRM_MEM = 21,
  BG_GFX_FW_RLC_RESTORE_LIST_SRM_CNTL = 22,
  BG_GFX_FW_RLC_P = 25,
  BG_GFX_FW_RLC_IRAM = 26,
  BG_GFX_FW_RLC_DRAM_BOOT = 48,
  BG_GFX_FW_SDMA2 = 52,
  BG_GFX_FW_SDMA3 = 53,
  BG_GFX_FW_REG_LIST = 67,
  BG_GFX_FW_IMU_I = 68,
  BG_GFX_FW_IMU_D = 69,
  BG_GFX_FW_SDMA_UCODE_TH0 = 71,
  BG_GFX_FW_SDMA_UCODE_TH1 = 72,
  BG_GFX_FW_RS64_PFP = 87,
  BG_GFX_FW_RS64_ME = 88,
  BG_GFX_FW_RS64_MEC = 89,
  BG_GFX_FW_RS64_PFP_P0_STACK = 90,
  BG_GFX_FW_RS64_ME_P0_STACK = 92,
  BG_GFX_FW_RS64_MEC_P0_STACK = 94,
  BG_GFX_FW_P2S_TABLE = 129,
};

/* enum psp_fw_type (amdgpu_ucode.h): sOS components. */
enum {
  BG_PSP_FW_SOS = 1,
  BG_PSP_FW_SYS_DRV = 2,
  BG_PSP_FW_KDB = 3,
  BG_PSP_FW_TOC = 4,
  BG_PSP_FW_SPL = 5,
  BG_PSP_FW_RL = 6,
  BG_PSP_FW_SOC_DRV = 7,
  BG_PSP_FW_INTF_DRV = 8,
  BG_PSP_FW_DBG_DRV = 9,
  BG_PSP_FW_RAS_DRV = 10,
  BG_PSP_FW_IPKEYMGR_DRV = 11,
};

/* enum ta_fw_type (amdgpu_ucode.h). */
enum {
  BG_TA_FW_ASD = 1,
  BG_TA_FW_XGMI = 2,
  BG_TA_FW_RAS = 3,
  BG_TA_FW_HDCP = 4,
  BG_TA_FW_DTM = 5,
  BG_TA_FW_RAP = 6,
  BG_TA_FW_SECUREDISPLAY = 7,
};

#define BG_FW_DESC_AUX 1u /* sOS aux set (psp v1.3 *_aux, psp v2.1 index >= psp_aux_fw_bin_index) */

typedef struct bg_fw_desc {
  uint32_t fw_type;    /* id in `space` */
  uint8_t space;       /* bg_fw_space */
  uint8_t flags;       /* BG_FW_DESC_* */
  uint32_t version;    /* component fw_version (psp/ta descriptors) or pptable id; else 0 */
  const uint8_t *data; /* inside the image's buffer */
  size_t offset;       /* data - image start */
  size_t size;
  const char *name;    /* static: "RS64_MEC", "PSP_SOS", ... */
} bg_fw_desc;

#define BG_FW_MAX_DESCS 64
#define BG_FW_PATH_MAX 512

typedef struct bg_fw_image {
  bg_fw_family family;
  char path[BG_FW_PATH_MAX]; /* as given (for messages) */
  const uint8_t *buf;
  size_t len;
  /* common header */
  uint32_t size_bytes, header_size_bytes;
  uint16_t header_version_major, header_version_minor, ip_version_major, ip_version_minor;
  uint32_t ucode_version, ucode_size_bytes, ucode_array_offset_bytes, crc32;
  uint32_t crc32_computed; /* over [32, size_bytes) */
  uint32_t feature_version; /* ucode_feature_version / sos.fw_version where the header has one */
  uint64_t ucode_start;     /* gfx v2: ucode_start_addr_lo | hi << 32; smc: ucode_start_addr */
  int ndescs;
  bg_fw_desc descs[BG_FW_MAX_DESCS];
} bg_fw_image;

/* Parse `buf[0..len)` as `family`; `path` is used in messages. 0 or -BG_EFORMAT. */
int bg_fw_parse(bg_fw_family family, const char *path, const uint8_t *buf, size_t len, bg_fw_image *out);
/* Wrong-chip check: the header's ip_version major/minor must equal (maj, min) unless both are 0
 * in the header. `ip_name` ("GC", "MP0", ...) and (maj, min, rev) appear in the message. */
int bg_fw_check_ip(const bg_fw_image *img, const char *ip_name, unsigned maj, unsigned min, unsigned rev);
/* First non-aux descriptor of (space, type), or NULL. */
const bg_fw_desc *bg_fw_find(const bg_fw_image *img, bg_fw_space space, uint32_t fw_type);

const char *bg_fw_family_name(bg_fw_family family); /* "psp sos", "gfx mec", ... */
const char *bg_fw_type_name(bg_fw_space space, uint32_t fw_type); /* "RS64_MEC" or "?" */
uint32_t bg_fw_crc32(const uint8_t *p, size_t n); /* zlib/IEEE CRC-32 */

/* One line per descriptor (verbose: a first line with the common header and the crc32 state). */
void bg_fw_dump_desc(const bg_fw_desc *d, const char *file, FILE *f);
void bg_fw_dump_image(const bg_fw_image *img, bool verbose, FILE *f);

#endif
