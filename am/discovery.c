/* am/discovery.c: IP discovery table parser (see discovery.h). Every read is bounds-checked against the
 * validated binary_size (itself <= the image length), so arbitrary images never read out of bounds. */
#include "am/discovery.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "am/chips.h"
#include "baregpu/error.h"

/* ---- HWIP <-> hw_id ---- */

static const uint16_t hw_id_map[MAX_HWIP] = {
  [GC_HWIP] = BG_AM_HWID_GC,         [HDP_HWIP] = BG_AM_HWID_HDP,       [SDMA0_HWIP] = BG_AM_HWID_SDMA0,
  [SDMA1_HWIP] = BG_AM_HWID_SDMA1,   [SDMA2_HWIP] = BG_AM_HWID_SDMA2,   [SDMA3_HWIP] = BG_AM_HWID_SDMA3,
  [LSDMA_HWIP] = BG_AM_HWID_LSDMA,   [MMHUB_HWIP] = BG_AM_HWID_MMHUB,   [ATHUB_HWIP] = BG_AM_HWID_ATHUB,
  [NBIO_HWIP] = BG_AM_HWID_NBIF,     [MP0_HWIP] = BG_AM_HWID_MP0,       [MP1_HWIP] = BG_AM_HWID_MP1,
  [UVD_HWIP] = BG_AM_HWID_UVD,       [VCE_HWIP] = BG_AM_HWID_VCE,       [VPE_HWIP] = BG_AM_HWID_VPE,
  [DF_HWIP] = BG_AM_HWID_DF,         [DCE_HWIP] = BG_AM_HWID_DMU,       [OSSSYS_HWIP] = BG_AM_HWID_OSSSYS,
  [SMUIO_HWIP] = BG_AM_HWID_SMUIO,   [PWR_HWIP] = BG_AM_HWID_PWR,       [NBIF_HWIP] = BG_AM_HWID_NBIF,
  [THM_HWIP] = BG_AM_HWID_THM,       [CLK_HWIP] = BG_AM_HWID_CLKA,      [UMC_HWIP] = BG_AM_HWID_UMC,
  [XGMI_HWIP] = BG_AM_HWID_XGMI,     [DCI_HWIP] = BG_AM_HWID_DCI,       [PCIE_HWIP] = BG_AM_HWID_PCIE,
  [ISP_HWIP] = BG_AM_HWID_ISP,
};

static const char *const hwip_names[MAX_HWIP] = {
  [GC_HWIP] = "GC_HWIP",         [HDP_HWIP] = "HDP_HWIP",       [SDMA0_HWIP] = "SDMA0_HWIP",
  [SDMA1_HWIP] = "SDMA1_HWIP",   [SDMA2_HWIP] = "SDMA2_HWIP",   [SDMA3_HWIP] = "SDMA3_HWIP",
  [SDMA4_HWIP] = "SDMA4_HWIP",   [SDMA5_HWIP] = "SDMA5_HWIP",   [SDMA6_HWIP] = "SDMA6_HWIP",
  [SDMA7_HWIP] = "SDMA7_HWIP",   [LSDMA_HWIP] = "LSDMA_HWIP",   [MMHUB_HWIP] = "MMHUB_HWIP",
  [ATHUB_HWIP] = "ATHUB_HWIP",   [NBIO_HWIP] = "NBIO_HWIP",     [MP0_HWIP] = "MP0_HWIP",
  [MP1_HWIP] = "MP1_HWIP",       [UVD_HWIP] = "VCN_HWIP",       [VCN1_HWIP] = "VCN1_HWIP",
  [VCE_HWIP] = "VCE_HWIP",       [VPE_HWIP] = "VPE_HWIP",       [DF_HWIP] = "DF_HWIP",
  [DCE_HWIP] = "DCE_HWIP",       [OSSSYS_HWIP] = "OSSSYS_HWIP", [SMUIO_HWIP] = "SMUIO_HWIP",
  [PWR_HWIP] = "PWR_HWIP",       [NBIF_HWIP] = "NBIF_HWIP",     [THM_HWIP] = "THM_HWIP",
  [CLK_HWIP] = "CLK_HWIP",       [UMC_HWIP] = "UMC_HWIP",       [RSMU_HWIP] = "RSMU_HWIP",
  [XGMI_HWIP] = "XGMI_HWIP",     [DCI_HWIP] = "DCI_HWIP",       [PCIE_HWIP] = "PCIE_HWIP",
  [ISP_HWIP] = "ISP_HWIP",
};

uint16_t bg_am_hwip_hwid(int hwip) { return hwip > 0 && hwip < MAX_HWIP ? hw_id_map[hwip] : 0; }

const char *bg_am_hwip_name(int hwip) {
  return hwip > 0 && hwip < MAX_HWIP && hwip_names[hwip] ? hwip_names[hwip] : "?";
}

/* ---- gc_info layouts ---- */

#define F(x) (uint16_t) offsetof(struct bg_am_gc_info, x)
#define GC_V1_0 F(gc_num_se), F(gc_num_wgp0_per_sa), F(gc_num_wgp1_per_sa), F(gc_num_rb_per_se), F(gc_num_gl2c), \
    F(gc_num_gprs), F(gc_num_max_gs_thds), F(gc_gs_table_depth), F(gc_gsprim_buff_depth),                        \
    F(gc_parameter_cache_depth), F(gc_double_offchip_lds_buffer), F(gc_wave_size), F(gc_max_waves_per_simd),     \
    F(gc_max_scratch_slots_per_cu), F(gc_lds_size), F(gc_num_sc_per_se), F(gc_num_sa_per_se),                    \
    F(gc_num_packer_per_sc), F(gc_num_gl2a)
#define GC_V1_1 GC_V1_0, F(gc_num_tcp_per_sa), F(gc_num_sdp_interface), F(gc_num_tcps)
#define GC_V1_2 GC_V1_1, F(gc_num_tcp_per_wpg), F(gc_tcp_l1_size), F(gc_num_sqc_per_wgp),                      \
    F(gc_l1_instruction_cache_size_per_sqc), F(gc_l1_data_cache_size_per_sqc), F(gc_gl1c_per_sa),               \
    F(gc_gl1c_size_per_instance), F(gc_gl2c_per_gpu)
#define GC_V1_3 GC_V1_2, F(gc_tcp_size_per_cu), F(gc_tcp_cache_line_size), F(gc_instruction_cache_size_per_sqc), \
    F(gc_instruction_cache_line_size), F(gc_scalar_data_cache_size_per_sqc), F(gc_scalar_data_cache_line_size),  \
    F(gc_tcc_size), F(gc_tcc_cache_line_size)
#define GC_V2_0 F(gc_num_se), F(gc_num_cu_per_sh), F(gc_num_sh_per_se), F(gc_num_rb_per_se), F(gc_num_tccs),      \
    F(gc_num_gprs), F(gc_num_max_gs_thds), F(gc_gs_table_depth), F(gc_gsprim_buff_depth),                        \
    F(gc_parameter_cache_depth), F(gc_double_offchip_lds_buffer), F(gc_wave_size), F(gc_max_waves_per_simd),     \
    F(gc_max_scratch_slots_per_cu), F(gc_lds_size), F(gc_num_sc_per_se), F(gc_num_packer_per_sc)
#define GC_V2_1 GC_V2_0, F(gc_num_tcp_per_sh), F(gc_tcp_size_per_cu), F(gc_num_sdp_interface), F(gc_num_cu_per_sqc), \
    F(gc_instruction_cache_size_per_sqc), F(gc_scalar_data_cache_size_per_sqc), F(gc_tcc_size)

static const uint16_t gc_v1_0[] = {GC_V1_0};
static const uint16_t gc_v1_1[] = {GC_V1_1};
static const uint16_t gc_v1_2[] = {GC_V1_2};
static const uint16_t gc_v1_3[] = {GC_V1_3};
static const uint16_t gc_v2_0[] = {GC_V2_0};
static const uint16_t gc_v2_1[] = {GC_V2_1};
#undef F

size_t bg_am_gc_info_layout(unsigned major, unsigned minor, const uint16_t **fields) {
  static const struct { uint8_t maj, min; const uint16_t *f; size_t n; } layouts[] = {
    {1, 0, gc_v1_0, sizeof(gc_v1_0) / 2}, {1, 1, gc_v1_1, sizeof(gc_v1_1) / 2}, {1, 2, gc_v1_2, sizeof(gc_v1_2) / 2},
    {1, 3, gc_v1_3, sizeof(gc_v1_3) / 2}, {2, 0, gc_v2_0, sizeof(gc_v2_0) / 2}, {2, 1, gc_v2_1, sizeof(gc_v2_1) / 2},
  };
  for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
    if (layouts[i].maj == major && layouts[i].min == minor) {
      if (fields) *fields = layouts[i].f;
      return layouts[i].n;
    }
  if (fields) *fields = NULL;
  return 0;
}

/* ---- helpers ---- */

static uint16_t rd16(const uint8_t *p, size_t off) { return (uint16_t)(p[off] | (p[off + 1] << 8)); }
static uint32_t rd32(const uint8_t *p, size_t off) {
  return (uint32_t)p[off] | (uint32_t)p[off + 1] << 8 | (uint32_t)p[off + 2] << 16 | (uint32_t)p[off + 3] << 24;
}
static uint64_t rd64(const uint8_t *p, size_t off) { return (uint64_t)rd32(p, off) | (uint64_t)rd32(p, off + 4) << 32; }

uint16_t bg_am_discovery_checksum(const void *data, size_t len) {
  const uint8_t *p = data;
  uint16_t sum = 0;
  for (size_t i = 0; i < len; i++) sum = (uint16_t)(sum + p[i]);
  return sum;
}

static const char *const table_names[BG_AM_TABLE_COUNT] = {"IP_DISCOVERY", "GC", "HARVEST_INFO", "VCN_INFO",
                                                             "MALL_INFO", "NPS_INFO"};

#define FAIL(...) bg_error(BG_EFORMAT, "discovery: " __VA_ARGS__)

int bg_am_discovery_location(uint32_t memsize_reg, uint64_t *vram_size, uint64_t *table_offset) {
  if (memsize_reg == 0 || memsize_reg == 0xffffffffu)
    return bg_error(BG_ENODEV, "discovery: mmRCC_CONFIG_MEMSIZE (0x%x) reads 0x%08" PRIx32
                    ", expected the VRAM size in MiB (1..0xfffffffe); the device is absent or in reset",
                    BG_AM_DISC_MEMSIZE_REG, memsize_reg);
  uint64_t vram = (uint64_t)memsize_reg << 20;
  if (vram_size) *vram_size = vram;
  if (table_offset) *table_offset = vram - BG_AM_DISC_TABLE_FROM_TOP;
  return 0;
}

static void set_versions(struct bg_am_discovery *d) {
  const struct bg_am_ip *gc = &d->ip[GC_HWIP];
  d->arch[0] = '\0';
  if (gc->present) {
    d->gc_ver[0] = gc->maj, d->gc_ver[1] = gc->min, d->gc_ver[2] = gc->rev;
    d->gfx_target_version = bg_am_gfx_target_version(gc->maj, gc->min, gc->rev);
    if (gc->min <= 15 && gc->rev <= 15 && gc->maj <= 99)
      snprintf(d->arch, sizeof(d->arch), "gfx%u%x%x", (unsigned)(d->gfx_target_version / 10000u),
               (unsigned)(d->gfx_target_version / 100u % 100u), (unsigned)(d->gfx_target_version % 100u));
  }
  bool big = gc->present && gc->maj == 9 && (gc->min == 4 || gc->min == 5);
  d->reserved_vram_size = (uint64_t)(big ? 384u : 64u) << 20;
}

static void compute_props(struct bg_am_discovery *d) {
  const struct bg_am_ip *gc = &d->ip[GC_HWIP];
  struct bg_am_gc_props *p = &d->props;
  const struct bg_am_gc_info *g = &d->gc;
  uint32_t live = gc->inst_mask & ~gc->harvest_mask;
  p->num_xcc = 0;
  for (; live; live &= live - 1) p->num_xcc++;
  p->num_se = g->gc_num_se;
  if (g->version_major == 2) {
    p->cu_per_sa = g->gc_num_cu_per_sh;
    p->sh_per_se = g->gc_num_sh_per_se;
  } else {
    p->cu_per_sa = 2u * (g->gc_num_wgp0_per_sa + g->gc_num_wgp1_per_sa);
    p->sh_per_se = g->gc_num_sa_per_se;
  }
  p->array_count = p->sh_per_se * p->num_se * p->num_xcc;
  p->simd_per_cu = 2;
  p->cu_count = p->cu_per_sa * p->array_count;
  p->simd_count = p->simd_per_cu * p->cu_count;
  p->max_waves_per_simd = g->gc_max_waves_per_simd;
  p->max_slots_scratch_cu = g->gc_max_scratch_slots_per_cu;
  p->lds_size_kb = g->gc_lds_size;
  p->wave_size = g->gc_wave_size;
}

/* Verify a table checksum (unless disabled). */
static int check_sum(const uint8_t *img, size_t off, size_t size, uint16_t want, const char *what, unsigned flags) {
  if (flags & BG_AM_DISC_NO_CHECKSUM) return 0;
  uint16_t got = bg_am_discovery_checksum(img + off, size);
  if (got != want)
    return FAIL("%s checksum 0x%04x (byte sum of 0x%zx bytes at offset 0x%zx) does not match the recorded 0x%04x",
                what, got, size, off, want);
  return 0;
}

static int parse_ip_entries(const uint8_t *img, struct bg_am_discovery *d, size_t ip_off, size_t ip_end) {
  for (unsigned die = 0; die < d->num_dies; die++) {
    size_t dinfo = ip_off + 14 + 4u * die;
    uint16_t die_id = rd16(img, dinfo), die_off = rd16(img, dinfo + 2);
    if (die_off < ip_off + BG_AM_DISC_IPDS_HEADER_SIZE || (size_t)die_off + 4 > ip_end)
      return FAIL("ip_discovery_header die_info[%u] (die_id %u) die_offset 0x%x, expected 0x%zx..0x%zx "
                  "(a 4-byte die_header inside the IP discovery table)", die, die_id, die_off,
                  ip_off + BG_AM_DISC_IPDS_HEADER_SIZE, ip_end - 4);
    uint16_t num_ips = rd16(img, (size_t)die_off + 2);
    size_t p = (size_t)die_off + 4;
    for (unsigned j = 0; j < num_ips; j++) {
      if (p + 8 > ip_end)
        return FAIL("die %u ip entry %u of %u at offset 0x%zx: 8-byte header extends past the IP discovery table end "
                    "0x%zx", die, j, num_ips, p, ip_end);
      uint16_t hw_id = rd16(img, p);
      uint8_t inst = img[p + 2], nb = img[p + 3];
      size_t bsz = d->base_addr_64 ? 8 : 4;
      size_t step = 8 + (size_t)nb * bsz;
      if (p + step > ip_end)
        return FAIL("die %u ip entry %u (hw_id %u instance %u) at offset 0x%zx: num_base_address %u (%zu-bit) needs "
                    "0x%zx bytes, past the IP discovery table end 0x%zx", die, j, hw_id, inst, p, nb, bsz * 8, step,
                    ip_end);
      d->num_entries++;
      bool counted = false;
      for (int h = 1; h < MAX_HWIP; h++) {
        if (!hw_id_map[h] || hw_id_map[h] != hw_id) continue;
        if (inst >= BG_AM_MAX_INSTANCES) {
          if (!counted) d->ignored_entries++, counted = true;
          continue;
        }
        if (nb > BG_AM_MAX_SEGMENTS)
          return FAIL("die %u ip entry %u (%s instance %u) at offset 0x%zx: num_base_address %u, expected 0..%u", die,
                      j, hwip_names[h], inst, p, nb, BG_AM_MAX_SEGMENTS);
        struct bg_am_ip *ip = &d->ip[h];
        ip->present = true;
        ip->hw_id = hw_id;
        ip->maj = img[p + 4], ip->min = img[p + 5], ip->rev = img[p + 6];
        ip->sub_revision = img[p + 7] & 0xf, ip->variant = img[p + 7] >> 4;
        ip->inst_mask |= 1u << inst;
        ip->die[inst] = (uint8_t)die;
        ip->nsegs[inst] = nb;
        memset(ip->bases[inst], 0, sizeof(ip->bases[inst]));
        memset(ip->bases_raw[inst], 0, sizeof(ip->bases_raw[inst]));
        for (unsigned k = 0; k < nb; k++) {
          uint64_t raw = d->base_addr_64 ? rd64(img, p + 8 + 8u * k) : rd32(img, p + 8 + 4u * k);
          ip->bases_raw[inst][k] = raw;
          /* 64-bit bases: Linux keeps the low 32 bits and clears bits 30-31 (dword address); the upper
           * half is ASIC-specific routing (e.g. MI300 AID). */
          ip->bases[inst][k] = d->base_addr_64 ? (uint32_t)raw & 0x3fffffffu : (uint32_t)raw;
        }
      }
      p += step;
    }
  }
  return 0;
}

static int parse_harvest(const uint8_t *img, struct bg_am_discovery *d, unsigned flags, uint16_t cks) {
  size_t off = d->table_offset[BG_AM_TABLE_HARVEST_INFO];
  if (off + BG_AM_DISC_HARVEST_TABLE_SIZE > d->binary_size)
    return FAIL("harvest table at offset 0x%zx: its 0x%x bytes extend past binary_size 0x%x", off,
                BG_AM_DISC_HARVEST_TABLE_SIZE, d->binary_size);
  uint32_t sig = rd32(img, off);
  if (sig != BG_AM_DISC_HARVEST_SIGNATURE)
    return FAIL("harvest_info_header signature 0x%08" PRIx32 " at offset 0x%zx, expected 0x%08x (HARV)", sig, off,
                BG_AM_DISC_HARVEST_SIGNATURE);
  int r = check_sum(img, off, BG_AM_DISC_HARVEST_TABLE_SIZE, cks, "harvest table", flags);
  if (r < 0) return r;
  for (unsigned i = 0; i < BG_AM_DISC_MAX_HARVEST; i++) {
    size_t e = off + 8 + 4u * i;
    uint16_t hw_id = rd16(img, e);
    if (hw_id == 0) break;
    uint8_t inst = img[e + 2];
    d->harvest[d->nharvest].hw_id = hw_id;
    d->harvest[d->nharvest].instance = inst;
    d->nharvest++;
    for (int h = 1; h < MAX_HWIP; h++)
      if (hw_id_map[h] == hw_id && inst < 32) d->ip[h].harvest_mask |= 1u << inst;
  }
  return 0;
}

static int parse_gc_info(const uint8_t *img, struct bg_am_discovery *d, unsigned flags, uint16_t cks) {
  size_t off = d->table_offset[BG_AM_TABLE_GC];
  if (off + 16 > d->binary_size)
    return FAIL("gc_info header at offset 0x%zx: 16 bytes extend past binary_size 0x%x", off, d->binary_size);
  uint32_t id = rd32(img, off);
  uint16_t maj = rd16(img, off + 4), min = rd16(img, off + 6);
  uint32_t size = rd32(img, off + 8);
  if (id != BG_AM_DISC_GC_TABLE_ID)
    return FAIL("gc_info table_id 0x%08" PRIx32 " at offset 0x%zx, expected 0x%04x (GC)", id, off,
                BG_AM_DISC_GC_TABLE_ID);
  const uint16_t *fields;
  size_t n = bg_am_gc_info_layout(maj, min, &fields);
  if (!n)
    return bg_error(BG_ENOTSUP, "discovery: gc_info version %u.%u at offset 0x%zx is not supported, expected 1.0-1.3 or "
                    "2.0-2.1", maj, min, off);
  size_t need = 16 + 4 * n;
  if (size < need || off + size > d->binary_size)
    return FAIL("gc_info v%u.%u size %" PRIu32 " at offset 0x%zx, expected %zu..%zu (at least the v%u.%u structure, "
                "inside binary_size 0x%x)", maj, min, size, off, need,
                d->binary_size > off ? (size_t)d->binary_size - off : (size_t)0, maj, min, d->binary_size);
  int r = check_sum(img, off, size, cks, "gc_info table", flags);
  if (r < 0) return r;
  struct bg_am_gc_info *g = &d->gc;
  g->version_major = maj, g->version_minor = min, g->size = size;
  for (size_t i = 0; i < n; i++) {
    uint32_t v = rd32(img, off + 16 + 4 * i);
    memcpy((char *)g + fields[i], &v, sizeof(v));
  }
  d->has_gc_info = true;
  return 0;
}

int bg_am_discovery_parse(const void *image, size_t len, unsigned flags, struct bg_am_discovery *d) {
  if (!image || !d) return bg_error(BG_EINVAL, "discovery: parse: NULL argument");
  memset(d, 0, sizeof(*d));
  const uint8_t *img = image;
  if (len < BG_AM_DISC_BINARY_HEADER_SIZE)
    return FAIL("image of %zu bytes is shorter than the %u-byte binary_header", len, BG_AM_DISC_BINARY_HEADER_SIZE);
  uint32_t sig = rd32(img, 0);
  if (sig != BG_AM_DISC_BINARY_SIGNATURE)
    return FAIL("binary_header binary_signature 0x%08" PRIx32 " at offset 0x0, expected 0x%08x (no discovery table at "
                "VRAM top - 64 KiB?)", sig, BG_AM_DISC_BINARY_SIGNATURE);
  d->bin_major = rd16(img, 4), d->bin_minor = rd16(img, 6);
  d->binary_checksum = rd16(img, 8), d->binary_size = rd16(img, 10);
  size_t hdr_size, tables_at;
  unsigned ntables;
  if (d->bin_major <= 1) {
    hdr_size = BG_AM_DISC_BINARY_HEADER_SIZE, tables_at = 12, ntables = BG_AM_TABLE_COUNT;
  } else if (d->bin_major == 2) {
    ntables = rd16(img, 12);
    if (ntables == 0 || ntables > BG_AM_DISC_MAX_TABLES)
      return FAIL("binary_header (v2) num_tables %u, expected 1..%u", ntables, BG_AM_DISC_MAX_TABLES);
    tables_at = 16, hdr_size = 16 + 8u * ntables;
  } else {
    return FAIL("binary_header version %u.%u, expected major 0..2", d->bin_major, d->bin_minor);
  }
  if (d->binary_size < hdr_size || d->binary_size > len)
    return FAIL("binary_header binary_size %u, expected %zu..%zu (header size .. image length)", d->binary_size,
                hdr_size, len);
  if (!(flags & BG_AM_DISC_NO_CHECKSUM)) {
    uint16_t got = bg_am_discovery_checksum(img + 10, (size_t)d->binary_size - 10);
    if (got != d->binary_checksum)
      return FAIL("binary_header binary_checksum 0x%04x does not match the byte sum 0x%04x of bytes 0xa..0x%x",
                  d->binary_checksum, got, d->binary_size);
  }
  uint16_t cks[BG_AM_TABLE_COUNT] = {0};
  for (unsigned t = 0; t < ntables; t++) {
    size_t e = tables_at + 8u * t;
    uint16_t off = rd16(img, e), ck = rd16(img, e + 2), size = rd16(img, e + 4);
    const char *name = t < BG_AM_TABLE_COUNT ? table_names[t] : "?";
    if (off != 0 && (off < hdr_size || off >= d->binary_size))
      return FAIL("binary_header table_list[%u] (%s) offset 0x%x, expected 0 or 0x%zx..0x%x (inside the binary)", t,
                  name, off, hdr_size, d->binary_size - 1u);
    if (off != 0 && (size_t)off + size > d->binary_size)
      return FAIL("binary_header table_list[%u] (%s) offset 0x%x size 0x%x, ends past binary_size 0x%x", t, name, off,
                  size, d->binary_size);
    if (t < BG_AM_TABLE_COUNT) d->table_offset[t] = off, d->table_size[t] = size, cks[t] = ck;
  }

  /* IP discovery table */
  size_t ip_off = d->table_offset[BG_AM_TABLE_IP_DISCOVERY];
  if (ip_off == 0)
    return FAIL("binary_header table_list[0] (IP_DISCOVERY) offset is 0, expected the ip_discovery_header offset");
  if (ip_off + BG_AM_DISC_IPDS_HEADER_SIZE > d->binary_size)
    return FAIL("ip_discovery_header at offset 0x%zx: its %u bytes extend past binary_size 0x%x", ip_off,
                BG_AM_DISC_IPDS_HEADER_SIZE, d->binary_size);
  sig = rd32(img, ip_off);
  if (sig != BG_AM_DISC_IPDS_SIGNATURE)
    return FAIL("ip_discovery_header signature 0x%08" PRIx32 " at offset 0x%zx, expected 0x%08x (IPDS)", sig, ip_off,
                BG_AM_DISC_IPDS_SIGNATURE);
  d->ipds_version = rd16(img, ip_off + 4);
  d->ipds_size = rd16(img, ip_off + 6);
  d->num_dies = rd16(img, ip_off + 12);
  if (d->ipds_version < 1 || d->ipds_version > 4)
    return FAIL("ip_discovery_header version %u at offset 0x%zx, expected 1..4", d->ipds_version, ip_off);
  if (d->ipds_size < BG_AM_DISC_IPDS_HEADER_SIZE || ip_off + d->ipds_size > d->binary_size)
    return FAIL("ip_discovery_header size 0x%x at offset 0x%zx, expected 0x%x..0x%zx (header .. end of binary)",
                d->ipds_size, ip_off, BG_AM_DISC_IPDS_HEADER_SIZE, (size_t)d->binary_size - ip_off);
  int r = check_sum(img, ip_off, d->ipds_size, cks[BG_AM_TABLE_IP_DISCOVERY], "IP discovery table", flags);
  if (r < 0) return r;
  if (d->num_dies < 1 || d->num_dies > BG_AM_DISC_MAX_DIES)
    return FAIL("ip_discovery_header num_dies %u, expected 1..%u", d->num_dies, BG_AM_DISC_MAX_DIES);
  uint8_t flags64 = img[ip_off + 78];
  if ((flags64 & 1) && d->ipds_version < 4)
    return FAIL("ip_discovery_header base_addr_64_bit set in version %u, expected 0 (64-bit bases exist only in version "
                "4)", d->ipds_version);
  d->base_addr_64 = (flags64 & 1) != 0;
  r = parse_ip_entries(img, d, ip_off, ip_off + d->ipds_size);
  if (r < 0) return r;

  if (d->table_offset[BG_AM_TABLE_HARVEST_INFO]) {
    r = parse_harvest(img, d, flags, cks[BG_AM_TABLE_HARVEST_INFO]);
    if (r < 0) return r;
  }
  if (d->table_offset[BG_AM_TABLE_GC]) {
    r = parse_gc_info(img, d, flags, cks[BG_AM_TABLE_GC]);
    if (r < 0) return r;
  }
  set_versions(d);
  if (d->has_gc_info) compute_props(d);
  return 0;
}

int bg_am_reg_addr(const struct bg_am_discovery *d, int hwip, unsigned instance, unsigned segment, uint32_t offset,
                   uint32_t *addr) {
  if (!d || !addr) return bg_error(BG_EINVAL, "reg_addr: NULL argument");
  if (hwip <= 0 || hwip >= MAX_HWIP) return bg_error(BG_EINVAL, "reg_addr: HWIP %d out of range 1..%d", hwip, MAX_HWIP - 1);
  const struct bg_am_ip *ip = &d->ip[hwip];
  if (!ip->present)
    return bg_error(BG_EINVAL, "reg_addr: %s (hw_id %u) is not in the discovery table", hwip_names[hwip],
                    hw_id_map[hwip]);
  if (instance >= BG_AM_MAX_INSTANCES || !(ip->inst_mask & (1u << instance)))
    return bg_error(BG_EINVAL, "reg_addr: %s instance %u is not in the discovery table (instance mask 0x%" PRIx32 ")",
                    hwip_names[hwip], instance, ip->inst_mask);
  if (segment >= ip->nsegs[instance])
    return bg_error(BG_EINVAL, "reg_addr: %s instance %u has %u base address(es), segment %u requested",
                    hwip_names[hwip], instance, ip->nsegs[instance], segment);
  uint64_t a = (uint64_t)ip->bases[instance][segment] + offset;
  if (a > 0xffffffffu)
    return bg_error(BG_EINVAL, "reg_addr: %s instance %u segment %u base 0x%" PRIx32 " + offset 0x%" PRIx32
                    " overflows 32 bits", hwip_names[hwip], instance, segment, ip->bases[instance][segment], offset);
  *addr = (uint32_t)a;
  return 0;
}
