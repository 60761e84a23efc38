/* am/discovery.h: the IP discovery table (Linux drivers/gpu/drm/amd/include/discovery.h layouts).
 *
 * The table sits at the top of VRAM: vram_size - 64 KiB, 10 KiB long, where vram_size comes from
 * mmRCC_CONFIG_MEMSIZE (dword 0xde3, in MiB). bg_am_discovery_parse() validates it completely (binary
 * signature and checksum, table offsets/sizes, IPDS header and checksum, dies, IP entries, harvest and
 * gc_info tables with their checksums) and fills per-HWIP versions and register bases:
 *   absolute dword address = ip[hwip].bases[instance][segment] + register offset.
 * Every failure is BG_EFORMAT (BG_ENOTSUP for a well-formed but unknown gc_info version) with a message
 * naming the table, field, value and the expected range, e.g.
 *   "discovery: ip_discovery_header signature 0x00000000 at offset 0x3c, expected 0x53445049 (IPDS)". */
#ifndef BG_AM_DISCOVERY_H
#define BG_AM_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- wire constants ---- */
#define BG_AM_DISC_BINARY_SIGNATURE 0x28211407u
#define BG_AM_DISC_IPDS_SIGNATURE 0x53445049u /* "IPDS" */
#define BG_AM_DISC_GC_TABLE_ID 0x4347u       /* "GC" */
#define BG_AM_DISC_HARVEST_SIGNATURE 0x56524148u /* "HARV" */
#define BG_AM_DISC_MEMSIZE_REG 0xde3u         /* mmRCC_CONFIG_MEMSIZE, VRAM size in MiB */
#define BG_AM_DISC_TABLE_FROM_TOP (64u << 10) /* table at vram_size - 64 KiB */
#define BG_AM_DISC_TABLE_SIZE (10u << 10)     /* bytes read */
#define BG_AM_DISC_BINARY_HEADER_SIZE 60u     /* v1: 12 + 6 table_info */
#define BG_AM_DISC_IPDS_HEADER_SIZE 80u
#define BG_AM_DISC_HARVEST_TABLE_SIZE 136u    /* 8-byte header + 32 entries */
#define BG_AM_DISC_MAX_DIES 16u
#define BG_AM_DISC_MAX_TABLES 16u             /* binary_header v2 num_tables limit (v1 has 6) */

enum bg_am_disc_table { BG_AM_TABLE_IP_DISCOVERY = 0, BG_AM_TABLE_GC, BG_AM_TABLE_HARVEST_INFO, BG_AM_TABLE_VCN_INFO,
                        BG_AM_TABLE_MALL_INFO, BG_AM_TABLE_NPS_INFO, BG_AM_TABLE_COUNT };

/* Hardware ids of IP entries (Linux soc15_hw_ip.h; the ones the HWIP map refers to). */
enum bg_am_hwid {
  BG_AM_HWID_MP1 = 1, BG_AM_HWID_THM = 3, BG_AM_HWID_SMUIO = 4, BG_AM_HWID_CLKA = 6, BG_AM_HWID_PWR = 10,
  BG_AM_HWID_GC = 11, BG_AM_HWID_UVD = 12, BG_AM_HWID_DCI = 15, BG_AM_HWID_VPE = 21, BG_AM_HWID_VCE = 32,
  BG_AM_HWID_MMHUB = 34, BG_AM_HWID_ATHUB = 35, BG_AM_HWID_OSSSYS = 40, BG_AM_HWID_HDP = 41, BG_AM_HWID_SDMA0 = 42,
  BG_AM_HWID_SDMA1 = 43, BG_AM_HWID_ISP = 44, BG_AM_HWID_DF = 46, BG_AM_HWID_SDMA2 = 68, BG_AM_HWID_SDMA3 = 69,
  BG_AM_HWID_PCIE = 70, BG_AM_HWID_LSDMA = 91, BG_AM_HWID_NBIF = 108, BG_AM_HWID_UMC = 150, BG_AM_HWID_XGMI = 200,
  BG_AM_HWID_MP0 = 255, BG_AM_HWID_DMU = 271,
};

/* HW IP blocks, numbered as Linux's enum amd_hw_ip_block_type. */
enum bg_am_hwip {
  GC_HWIP = 1, HDP_HWIP, SDMA0_HWIP, SDMA1_HWIP, SDMA2_HWIP, SDMA3_HWIP, SDMA4_HWIP, SDMA5_HWIP, SDMA6_HWIP,
  SDMA7_HWIP, LSDMA_HWIP, MMHUB_HWIP, ATHUB_HWIP, NBIO_HWIP, MP0_HWIP, MP1_HWIP, UVD_HWIP, VCN_HWIP = UVD_HWIP,
  JPEG_HWIP = VCN_HWIP, VCN1_HWIP, VCE_HWIP, VPE_HWIP, DF_HWIP, DCE_HWIP, OSSSYS_HWIP, SMUIO_HWIP, PWR_HWIP,
  NBIF_HWIP, THM_HWIP, CLK_HWIP, UMC_HWIP, RSMU_HWIP, XGMI_HWIP, DCI_HWIP, PCIE_HWIP, ISP_HWIP, MAX_HWIP
};

#define BG_AM_MAX_INSTANCES 16u /* instances kept per HWIP (entries beyond are counted in ignored_entries) */
#define BG_AM_MAX_SEGMENTS 16u  /* base addresses kept per instance (more in a mapped entry is an error) */

/* hw_id of a HWIP (Linux hw_id_map; NBIO and NBIF both map to NBIF 108), 0 if none. */
uint16_t bg_am_hwip_hwid(int hwip);
/* "GC_HWIP", "NBIF_HWIP", ...; "?" for an unnamed or out-of-range value. */
const char *bg_am_hwip_name(int hwip);

struct bg_am_ip {
  bool present;                 /* at least one instance recorded */
  uint8_t maj, min, rev;        /* IP version (last matching entry wins, as tinygrad/Linux) */
  uint8_t sub_revision, variant; /* byte 7 of the entry: low/high nibble (harvest bits in pre-v3 tables) */
  uint16_t hw_id;
  uint32_t inst_mask;           /* instances present */
  uint32_t harvest_mask;        /* instances listed in the harvest table */
  uint8_t die[BG_AM_MAX_INSTANCES];
  uint8_t nsegs[BG_AM_MAX_INSTANCES];                        /* num_base_address of each instance */
  uint32_t bases[BG_AM_MAX_INSTANCES][BG_AM_MAX_SEGMENTS];   /* dword bases used for addressing */
  uint64_t bases_raw[BG_AM_MAX_INSTANCES][BG_AM_MAX_SEGMENTS]; /* as in the table (64-bit tables: upper bits ASIC-specific) */
};

/* gc_info: superset of v1.0..v1.3 and v2.0/v2.1 fields (Linux names); fields absent in a version are 0. */
struct bg_am_gc_info {
  uint16_t version_major, version_minor;
  uint32_t size; /* header.size */
  /* common / v1.x */
  uint32_t gc_num_se, gc_num_wgp0_per_sa, gc_num_wgp1_per_sa, gc_num_rb_per_se, gc_num_gl2c, gc_num_gprs,
      gc_num_max_gs_thds, gc_gs_table_depth, gc_gsprim_buff_depth, gc_parameter_cache_depth,
      gc_double_offchip_lds_buffer, gc_wave_size, gc_max_waves_per_simd, gc_max_scratch_slots_per_cu, gc_lds_size,
      gc_num_sc_per_se, gc_num_sa_per_se, gc_num_packer_per_sc, gc_num_gl2a;
  /* v1.1 */
  uint32_t gc_num_tcp_per_sa, gc_num_sdp_interface, gc_num_tcps;
  /* v1.2 */
  uint32_t gc_num_tcp_per_wpg, gc_tcp_l1_size, gc_num_sqc_per_wgp, gc_l1_instruction_cache_size_per_sqc,
      gc_l1_data_cache_size_per_sqc, gc_gl1c_per_sa, gc_gl1c_size_per_instance, gc_gl2c_per_gpu;
  /* v1.3 */
  uint32_t gc_tcp_size_per_cu, gc_tcp_cache_line_size, gc_instruction_cache_size_per_sqc,
      gc_instruction_cache_line_size, gc_scalar_data_cache_size_per_sqc, gc_scalar_data_cache_line_size, gc_tcc_size,
      gc_tcc_cache_line_size;
  /* v2.x only */
  uint32_t gc_num_cu_per_sh, gc_num_sh_per_se, gc_num_tccs;
  /* v2.1 (plus gc_tcp_size_per_cu, gc_num_sdp_interface, gc_instruction_cache_size_per_sqc,
   * gc_scalar_data_cache_size_per_sqc, gc_tcc_size above) */
  uint32_t gc_num_tcp_per_sh, gc_num_cu_per_sqc;
};

/* Wire layout of a gc_info version: the struct field (offsetof in bg_am_gc_info) of each u32 after the
 * 16-byte header, in order. Returns the count, or 0 for an unknown version. Shared with the test generator. */
size_t bg_am_gc_info_layout(unsigned major, unsigned minor, const uint16_t **fields);

/* Device properties derived from gc_info (tinygrad PCIIface._compute_props). */
struct bg_am_gc_props {
  uint32_t num_xcc;           /* GC instances not harvested */
  uint32_t num_se;            /* gc_num_se */
  uint32_t cu_per_sa;         /* v2: gc_num_cu_per_sh; v1: 2*(wgp0+wgp1) */
  uint32_t sh_per_se;         /* v2: gc_num_sh_per_se; v1: gc_num_sa_per_se */
  uint32_t array_count;       /* sh_per_se * num_se * num_xcc */
  uint32_t simd_per_cu;       /* 2 */
  uint32_t simd_count;        /* 2 * cu_per_sa * array_count */
  uint32_t cu_count;          /* cu_per_sa * array_count */
  uint32_t max_waves_per_simd, max_slots_scratch_cu, lds_size_kb, wave_size;
};

#define BG_AM_DISC_MAX_HARVEST 32u

struct bg_am_discovery {
  uint16_t bin_major, bin_minor, binary_size, binary_checksum;
  uint16_t table_offset[BG_AM_TABLE_COUNT], table_size[BG_AM_TABLE_COUNT];
  uint16_t ipds_version, ipds_size, num_dies;
  bool base_addr_64;
  uint32_t num_entries;       /* IP entries walked (all dies) */
  uint32_t ignored_entries;   /* entries with an instance >= BG_AM_MAX_INSTANCES of a mapped hw_id */
  struct bg_am_ip ip[MAX_HWIP];
  uint32_t nharvest;
  struct { uint16_t hw_id; uint8_t instance; } harvest[BG_AM_DISC_MAX_HARVEST];
  bool has_gc_info;
  struct bg_am_gc_info gc;
  struct bg_am_gc_props props; /* valid when has_gc_info */
  uint8_t gc_ver[3];           /* GC IP version (0.0.0 if no GC) */
  uint32_t gfx_target_version; /* bg_am_gfx_target_version(GC) */
  char arch[16];               /* "gfx1200", "" if no GC */
  uint64_t reserved_vram_size; /* 384 MiB on GC 9.4/9.5, else 64 MiB */
};

enum bg_am_disc_flags {
  BG_AM_DISC_NO_CHECKSUM = 1u << 0, /* skip binary/table checksum verification (e.g. tinygrad's Python mock blob) */
};

/* Location of the table from the MEMSIZE register value (MiB). Errors: 0 or 0xffffffff (device absent or
 * in reset), or VRAM smaller than 64 KiB. */
int bg_am_discovery_location(uint32_t memsize_reg, uint64_t *vram_size, uint64_t *table_offset);

/* Parse and validate `len` bytes (normally BG_AM_DISC_TABLE_SIZE) into *out (zeroed first). */
int bg_am_discovery_parse(const void *image, size_t len, unsigned flags, struct bg_am_discovery *out);

/* The 16-bit byte sum Linux uses for every discovery checksum. */
uint16_t bg_am_discovery_checksum(const void *data, size_t len);

/* Absolute dword address of a register: ip[hwip].bases[instance][segment] + offset. Errors (BG_EINVAL)
 * name a missing IP, instance or segment and what is present. */
int bg_am_reg_addr(const struct bg_am_discovery *d, int hwip, unsigned instance, unsigned segment, uint32_t offset,
                   uint32_t *addr);

#ifdef __cplusplus
}
#endif
#endif
