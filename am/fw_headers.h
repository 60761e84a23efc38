/* am/fw_headers.h: AMD firmware file header layouts (linux-firmware amdgpu/ *.bin files).
 *
 * Source: Linux drivers/gpu/drm/amd/amdgpu/amdgpu_ucode.h (struct common_firmware_header and the
 * per-family <family>_firmware_header_v<major>_<minor> structs), written out here from the
 * documented layouts; field names follow Linux. All fields are little-endian u16/u32 in a packed
 * layout (no padding: every field is naturally aligned), which the _Static_asserts below check.
 *
 * The structs document the layout; the parser never casts a file buffer to them. It reads every
 * field with bg_fw_rd32/bg_fw_rd16 at the offsetof() of the field, after checking that the file
 * is long enough, so unaligned buffers and big-endian hosts are fine. */
#ifndef BAREGPU_AM_FW_HEADERS_H
#define BAREGPU_AM_FW_HEADERS_H

#include <stddef.h>
#include <stdint.h>

/* Little-endian loads from a byte buffer (no alignment requirement). */
static inline uint32_t bg_fw_rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint16_t bg_fw_rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* struct common_firmware_header: the first 32 bytes of every file. */
struct bg_fw_common_header {
  uint32_t size_bytes;               /* size of the whole image (see fw_parse.c for the policy) */
  uint32_t header_size_bytes;        /* size of the versioned header */
  uint16_t header_version_major;
  uint16_t header_version_minor;
  uint16_t ip_version_major;         /* IP the file is for (GC, SDMA, MP0, MP1) */
  uint16_t ip_version_minor;
  uint32_t ucode_version;
  uint32_t ucode_size_bytes;
  uint32_t ucode_array_offset_bytes; /* from the start of the file */
  uint32_t crc32;                    /* not verified by Linux */
};

/* struct psp_fw_legacy_bin_desc (psp v1.x components; offset from the ucode array). */
struct bg_fw_psp_legacy_desc {
  uint32_t fw_version;
  uint32_t offset_bytes;
  uint32_t size_bytes;
};

/* struct psp_fw_bin_desc (psp v2.x sOS and ta v2.0; offset from the ucode array). */
struct bg_fw_psp_bin_desc {
  uint32_t fw_type; /* PSP_FW_TYPE_* (sOS) or TA_FW_TYPE_* (TA) */
  uint32_t fw_version;
  uint32_t offset_bytes;
  uint32_t size_bytes;
};

/* psp_firmware_header_v1_0: sOS, or a TOC file (which uses only the ucode array). The system
 * driver is [ucode array, +sos.offset_bytes), the sOS [ucode array + sos.offset_bytes, +size). */
struct bg_fw_psp_v1_0 {
  struct bg_fw_common_header header;
  struct bg_fw_psp_legacy_desc sos; /* sos.fw_version = feature version */
};
/* psp_firmware_header_v1_1 */
struct bg_fw_psp_v1_1 {
  struct bg_fw_psp_v1_0 v1_0;
  struct bg_fw_psp_legacy_desc toc;
  struct bg_fw_psp_legacy_desc kdb;
};
/* psp_firmware_header_v1_2 */
struct bg_fw_psp_v1_2 {
  struct bg_fw_psp_v1_0 v1_0;
  struct bg_fw_psp_legacy_desc res;
  struct bg_fw_psp_legacy_desc kdb;
};
/* psp_firmware_header_v1_3 */
struct bg_fw_psp_v1_3 {
  struct bg_fw_psp_v1_1 v1_1;
  struct bg_fw_psp_legacy_desc spl;
  struct bg_fw_psp_legacy_desc rl;
  struct bg_fw_psp_legacy_desc sys_drv_aux;
  struct bg_fw_psp_legacy_desc sos_aux;
};
/* psp_firmware_header_v2_0: psp_fw_bin_count descriptors follow the count. */
struct bg_fw_psp_v2_0 {
  struct bg_fw_common_header header;
  uint32_t psp_fw_bin_count;
  struct bg_fw_psp_bin_desc psp_fw_bin[];
};
/* psp_firmware_header_v2_1: descriptors [psp_aux_fw_bin_index, count) are the aux set. */
struct bg_fw_psp_v2_1 {
  struct bg_fw_common_header header;
  uint32_t psp_fw_bin_count;
  uint32_t psp_aux_fw_bin_index;
  struct bg_fw_psp_bin_desc psp_fw_bin[];
};
/* ta_firmware_header_v2_0 */
struct bg_fw_ta_v2_0 {
  struct bg_fw_common_header header;
  uint32_t ta_fw_bin_count;
  struct bg_fw_psp_bin_desc ta_fw_bin[];
};

/* smc_firmware_header_v1_0 */
struct bg_fw_smc_v1_0 {
  struct bg_fw_common_header header;
  uint32_t ucode_start_addr;
};
/* smc_firmware_header_v2_0: one pptable, offset from the start of the file. */
struct bg_fw_smc_v2_0 {
  struct bg_fw_smc_v1_0 v1_0;
  uint32_t ppt_offset_bytes;
  uint32_t ppt_size_bytes;
};
/* smc_soft_pptable_entry (offsets from the start of the file). */
struct bg_fw_smc_pptable_entry {
  uint32_t id;
  uint32_t ppt_offset_bytes;
  uint32_t ppt_size_bytes;
};
/* smc_firmware_header_v2_1: pptable_count entries at pptable_entry_offset (from the file start). */
struct bg_fw_smc_v2_1 {
  struct bg_fw_smc_v1_0 v1_0;
  uint32_t pptable_count;
  uint32_t pptable_entry_offset;
};

/* sdma_firmware_header_v1_0 (jt in dwords, from the ucode array) */
struct bg_fw_sdma_v1_0 {
  struct bg_fw_common_header header;
  uint32_t ucode_feature_version;
  uint32_t ucode_change_version;
  uint32_t jt_offset;
  uint32_t jt_size;
};
/* sdma_firmware_header_v1_1 */
struct bg_fw_sdma_v1_1 {
  struct bg_fw_sdma_v1_0 v1_0;
  uint32_t digest_size;
};
/* sdma_firmware_header_v2_0: ctx (TH0) at the ucode array, ctl (TH1) at ctl_ucode_offset (file). */
struct bg_fw_sdma_v2_0 {
  struct bg_fw_common_header header;
  uint32_t ucode_feature_version;
  uint32_t ctx_ucode_size_bytes;
  uint32_t ctx_jt_offset;
  uint32_t ctx_jt_size;
  uint32_t ctl_ucode_offset;
  uint32_t ctl_ucode_size_bytes;
  uint32_t ctl_jt_offset;
  uint32_t ctl_jt_size;
};
/* sdma_firmware_header_v3_0 */
struct bg_fw_sdma_v3_0 {
  struct bg_fw_common_header header;
  uint32_t ucode_feature_version;
  uint32_t ucode_offset_bytes;
  uint32_t ucode_size_bytes;
};

/* gfx_firmware_header_v1_0 (jump table in dwords, from the ucode array, at its end) */
struct bg_fw_gfx_v1_0 {
  struct bg_fw_common_header header;
  uint32_t ucode_feature_version;
  uint32_t jt_offset;
  uint32_t jt_size;
};
/* gfx_firmware_header_v2_0 (RS64): code at the ucode array, data (stack) at data_offset_bytes. */
struct bg_fw_gfx_v2_0 {
  struct bg_fw_common_header header;
  uint32_t ucode_feature_version;
  uint32_t ucode_size_bytes;
  uint32_t ucode_offset_bytes;
  uint32_t data_size_bytes;
  uint32_t data_offset_bytes;
  uint32_t ucode_start_addr_lo;
  uint32_t ucode_start_addr_hi;
};

/* imu_firmware_header_v1_0: IRAM then DRAM, back to back at the ucode array (offsets unused). */
struct bg_fw_imu_v1_0 {
  struct bg_fw_common_header header;
  uint32_t imu_iram_ucode_size_bytes;
  uint32_t imu_iram_ucode_offset_bytes;
  uint32_t imu_dram_ucode_size_bytes;
  uint32_t imu_dram_ucode_offset_bytes;
};

/* rlc_firmware_header_v2_0 (offsets from the start of the file) */
struct bg_fw_rlc_v2_0 {
  struct bg_fw_common_header header;
  uint32_t ucode_feature_version;
  uint32_t jt_offset;
  uint32_t jt_size;
  uint32_t save_and_restore_offset;
  uint32_t clear_state_descriptor_offset;
  uint32_t avail_scratch_ram_locations;
  uint32_t reg_restore_list_size;
  uint32_t reg_list_format_start;
  uint32_t reg_list_format_separate_start;
  uint32_t starting_offsets_start;
  uint32_t reg_list_format_size_bytes;
  uint32_t reg_list_format_array_offset_bytes;
  uint32_t reg_list_size_bytes;
  uint32_t reg_list_array_offset_bytes;
  uint32_t reg_list_format_separate_size_bytes;
  uint32_t reg_list_format_separate_array_offset_bytes;
  uint32_t reg_list_separate_size_bytes;
  uint32_t reg_list_separate_array_offset_bytes;
};
/* rlc_firmware_header_v2_1 */
struct bg_fw_rlc_v2_1 {
  struct bg_fw_rlc_v2_0 v2_0;
  uint32_t reg_list_format_direct_reg_list_length;
  uint32_t save_restore_list_cntl_ucode_ver;
  uint32_t save_restore_list_cntl_feature_ver;
  uint32_t save_restore_list_cntl_size_bytes;
  uint32_t save_restore_list_cntl_offset_bytes;
  uint32_t save_restore_list_gpm_ucode_ver;
  uint32_t save_restore_list_gpm_feature_ver;
  uint32_t save_restore_list_gpm_size_bytes;
  uint32_t save_restore_list_gpm_offset_bytes;
  uint32_t save_restore_list_srm_ucode_ver;
  uint32_t save_restore_list_srm_feature_ver;
  uint32_t save_restore_list_srm_size_bytes;
  uint32_t save_restore_list_srm_offset_bytes;
};
/* rlc_firmware_header_v2_2 */
struct bg_fw_rlc_v2_2 {
  struct bg_fw_rlc_v2_1 v2_1;
  uint32_t rlc_iram_ucode_size_bytes;
  uint32_t rlc_iram_ucode_offset_bytes;
  uint32_t rlc_dram_ucode_size_bytes;
  uint32_t rlc_dram_ucode_offset_bytes;
};
/* rlc_firmware_header_v2_3 */
struct bg_fw_rlc_v2_3 {
  struct bg_fw_rlc_v2_2 v2_2;
  uint32_t rlcp_ucode_version;
  uint32_t rlcp_ucode_feature_version;
  uint32_t rlcp_ucode_size_bytes;
  uint32_t rlcp_ucode_offset_bytes;
  uint32_t rlcv_ucode_version;
  uint32_t rlcv_ucode_feature_version;
  uint32_t rlcv_ucode_size_bytes;
  uint32_t rlcv_ucode_offset_bytes;
};

/* Layout checks against amdgpu_ucode.h (and tinygrad tinygrad/runtime/support/am/amdev.py AMFirmware). */
#define BG_FW_AT(T, f, o) _Static_assert(offsetof(struct T, f) == (o), #T "." #f " at " #o)
#define BG_FW_SIZE(T, n) _Static_assert(sizeof(struct T) == (n), "sizeof " #T " is " #n)
BG_FW_AT(bg_fw_common_header, header_size_bytes, 4);
BG_FW_AT(bg_fw_common_header, header_version_major, 8);
BG_FW_AT(bg_fw_common_header, header_version_minor, 10);
BG_FW_AT(bg_fw_common_header, ip_version_major, 12);
BG_FW_AT(bg_fw_common_header, ip_version_minor, 14);
BG_FW_AT(bg_fw_common_header, ucode_version, 16);
BG_FW_AT(bg_fw_common_header, ucode_size_bytes, 20);
BG_FW_AT(bg_fw_common_header, ucode_array_offset_bytes, 24);
BG_FW_AT(bg_fw_common_header, crc32, 28);
BG_FW_SIZE(bg_fw_common_header, 32);
BG_FW_SIZE(bg_fw_psp_legacy_desc, 12);
BG_FW_SIZE(bg_fw_psp_bin_desc, 16);
BG_FW_AT(bg_fw_psp_v1_0, sos, 32);
BG_FW_SIZE(bg_fw_psp_v1_0, 44);
BG_FW_AT(bg_fw_psp_v1_1, toc, 44);
BG_FW_AT(bg_fw_psp_v1_1, kdb, 56);
BG_FW_SIZE(bg_fw_psp_v1_1, 68);
BG_FW_AT(bg_fw_psp_v1_2, kdb, 56);
BG_FW_SIZE(bg_fw_psp_v1_2, 68);
BG_FW_AT(bg_fw_psp_v1_3, spl, 68);
BG_FW_AT(bg_fw_psp_v1_3, rl, 80);
BG_FW_AT(bg_fw_psp_v1_3, sys_drv_aux, 92);
BG_FW_AT(bg_fw_psp_v1_3, sos_aux, 104);
BG_FW_SIZE(bg_fw_psp_v1_3, 116);
BG_FW_AT(bg_fw_psp_v2_0, psp_fw_bin_count, 32);
BG_FW_AT(bg_fw_psp_v2_0, psp_fw_bin, 36);
BG_FW_AT(bg_fw_psp_v2_1, psp_aux_fw_bin_index, 36);
BG_FW_AT(bg_fw_psp_v2_1, psp_fw_bin, 40);
BG_FW_AT(bg_fw_ta_v2_0, ta_fw_bin, 36);
BG_FW_AT(bg_fw_smc_v1_0, ucode_start_addr, 32);
BG_FW_SIZE(bg_fw_smc_v1_0, 36);
BG_FW_AT(bg_fw_smc_v2_0, ppt_offset_bytes, 36);
BG_FW_AT(bg_fw_smc_v2_0, ppt_size_bytes, 40);
BG_FW_SIZE(bg_fw_smc_v2_0, 44);
BG_FW_AT(bg_fw_smc_v2_1, pptable_count, 36);
BG_FW_AT(bg_fw_smc_v2_1, pptable_entry_offset, 40);
BG_FW_SIZE(bg_fw_smc_v2_1, 44);
BG_FW_SIZE(bg_fw_smc_pptable_entry, 12);
BG_FW_AT(bg_fw_sdma_v1_0, jt_offset, 40);
BG_FW_AT(bg_fw_sdma_v1_0, jt_size, 44);
BG_FW_SIZE(bg_fw_sdma_v1_0, 48);
BG_FW_SIZE(bg_fw_sdma_v1_1, 52);
BG_FW_AT(bg_fw_sdma_v2_0, ctx_ucode_size_bytes, 36);
BG_FW_AT(bg_fw_sdma_v2_0, ctl_ucode_offset, 48);
BG_FW_AT(bg_fw_sdma_v2_0, ctl_ucode_size_bytes, 52);
BG_FW_SIZE(bg_fw_sdma_v2_0, 64);
BG_FW_AT(bg_fw_sdma_v3_0, ucode_offset_bytes, 36);
BG_FW_AT(bg_fw_sdma_v3_0, ucode_size_bytes, 40);
BG_FW_SIZE(bg_fw_sdma_v3_0, 44);
BG_FW_AT(bg_fw_gfx_v1_0, ucode_feature_version, 32);
BG_FW_AT(bg_fw_gfx_v1_0, jt_offset, 36);
BG_FW_AT(bg_fw_gfx_v1_0, jt_size, 40);
BG_FW_SIZE(bg_fw_gfx_v1_0, 44);
BG_FW_AT(bg_fw_gfx_v2_0, ucode_size_bytes, 36);
BG_FW_AT(bg_fw_gfx_v2_0, ucode_offset_bytes, 40);
BG_FW_AT(bg_fw_gfx_v2_0, data_size_bytes, 44);
BG_FW_AT(bg_fw_gfx_v2_0, data_offset_bytes, 48);
BG_FW_AT(bg_fw_gfx_v2_0, ucode_start_addr_lo, 52);
BG_FW_AT(bg_fw_gfx_v2_0, ucode_start_addr_hi, 56);
BG_FW_SIZE(bg_fw_gfx_v2_0, 60);
BG_FW_AT(bg_fw_imu_v1_0, imu_iram_ucode_size_bytes, 32);
BG_FW_AT(bg_fw_imu_v1_0, imu_iram_ucode_offset_bytes, 36);
BG_FW_AT(bg_fw_imu_v1_0, imu_dram_ucode_size_bytes, 40);
BG_FW_AT(bg_fw_imu_v1_0, imu_dram_ucode_offset_bytes, 44);
BG_FW_SIZE(bg_fw_imu_v1_0, 48);
BG_FW_AT(bg_fw_rlc_v2_0, reg_list_separate_array_offset_bytes, 100);
BG_FW_SIZE(bg_fw_rlc_v2_0, 104);
BG_FW_AT(bg_fw_rlc_v2_1, reg_list_format_direct_reg_list_length, 104);
BG_FW_AT(bg_fw_rlc_v2_1, save_restore_list_cntl_size_bytes, 116);
BG_FW_AT(bg_fw_rlc_v2_1, save_restore_list_cntl_offset_bytes, 120);
BG_FW_AT(bg_fw_rlc_v2_1, save_restore_list_gpm_size_bytes, 132);
BG_FW_AT(bg_fw_rlc_v2_1, save_restore_list_gpm_offset_bytes, 136);
BG_FW_AT(bg_fw_rlc_v2_1, save_restore_list_srm_size_bytes, 148);
BG_FW_AT(bg_fw_rlc_v2_1, save_restore_list_srm_offset_bytes, 152);
BG_FW_SIZE(bg_fw_rlc_v2_1, 156);
BG_FW_AT(bg_fw_rlc_v2_2, rlc_iram_ucode_size_bytes, 156);
BG_FW_AT(bg_fw_rlc_v2_2, rlc_iram_ucode_offset_bytes, 160);
BG_FW_AT(bg_fw_rlc_v2_2, rlc_dram_ucode_size_bytes, 164);
BG_FW_AT(bg_fw_rlc_v2_2, rlc_dram_ucode_offset_bytes, 168);
BG_FW_SIZE(bg_fw_rlc_v2_2, 172);
BG_FW_AT(bg_fw_rlc_v2_3, rlcp_ucode_size_bytes, 180);
BG_FW_AT(bg_fw_rlc_v2_3, rlcp_ucode_offset_bytes, 184);
BG_FW_AT(bg_fw_rlc_v2_3, rlcv_ucode_size_bytes, 196);
BG_FW_AT(bg_fw_rlc_v2_3, rlcv_ucode_offset_bytes, 200);
BG_FW_SIZE(bg_fw_rlc_v2_3, 204);
#undef BG_FW_AT
#undef BG_FW_SIZE

/* Linux UCODE_MAX_PSP_PACKAGING: a v2 descriptor count must be below this. */
#define BG_FW_MAX_PSP_PACKAGING 12u
/* smc_soft_pptable_entry id of the MI300 P2S table ("XS2P"). */
#define BG_FW_PPTABLE_ID_P2S 0x50325358u

#endif
