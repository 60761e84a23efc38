/* tests/unit/am/discovery_gen.c: discovery table image generator (see discovery_gen.h). */
#include "discovery_gen.h"

#include <string.h>

static void w16(uint8_t *p, size_t off, uint16_t v) { p[off] = (uint8_t)v, p[off + 1] = (uint8_t)(v >> 8); }
static void w32(uint8_t *p, size_t off, uint32_t v) { w16(p, off, (uint16_t)v), w16(p, off + 2, (uint16_t)(v >> 16)); }
static void w64(uint8_t *p, size_t off, uint64_t v) { w32(p, off, (uint32_t)v), w32(p, off + 4, (uint32_t)(v >> 32)); }
static uint16_t r16(const uint8_t *p, size_t off) { return (uint16_t)(p[off] | p[off + 1] << 8); }
static uint32_t r32(const uint8_t *p, size_t off) { return r16(p, off) | (uint32_t)r16(p, off + 2) << 16; }

static uint16_t sum16(const uint8_t *p, size_t n) {
  unsigned s = 0;
  for (size_t i = 0; i < n; i++) s += p[i];
  return (uint16_t)s;
}

struct discgen_ip *discgen_add(struct discgen_config *c, uint8_t die, uint16_t hw_id, uint8_t inst, uint8_t maj,
                               uint8_t min, uint8_t rev, unsigned nbases, const uint64_t *bases) {
  if (c->nips >= DISCGEN_MAX_IPS || nbases > BG_AM_MAX_SEGMENTS) return NULL;
  struct discgen_ip *ip = &c->ips[c->nips++];
  memset(ip, 0, sizeof(*ip));
  ip->die = die, ip->hw_id = hw_id, ip->instance = inst, ip->maj = maj, ip->min = min, ip->rev = rev;
  ip->nbases = (uint8_t)nbases;
  for (unsigned i = 0; i < nbases; i++) ip->bases[i] = bases[i];
  return ip;
}

/* ---- configurations ---- */

static const uint64_t MOCK_GC[] = {0x1260, 0xA000, 0x1C000, 0x2402C00};
static const uint64_t MOCK_MMHUB[] = {0x1A000, 0x2408800};
static const uint64_t MOCK_NBIO[] = {0x0, 0x14, 0xD20, 0x10400, 0x241B000, 0x4040000};
static const uint64_t MOCK_MP[] = {0x16000, 0xDC0000, 0xE00000, 0xE40000, 0x243FC00};
static const uint64_t MOCK_HDP[] = {0xF20, 0x240A400};
static const uint64_t MOCK_OSSSYS[] = {0x10A0, 0x240A000};

/* tinygrad's mock pads every base list with zeros to 10 entries. */
static void add_padded(struct discgen_config *c, uint16_t hw_id, uint8_t maj, uint8_t min, uint8_t rev,
                       const uint64_t *b, unsigned n) {
  uint64_t pad[10] = {0};
  for (unsigned i = 0; i < n && i < 10; i++) pad[i] = b[i];
  discgen_add(c, 0, hw_id, 0, maj, min, rev, 10, pad);
}

#define N(a) (unsigned)(sizeof(a) / sizeof((a)[0]))

void discgen_config_mock(struct discgen_config *c) {
  memset(c, 0, sizeof(*c));
  c->name = "mock-gc12.0.0";
  c->bin_major = 1, c->bin_minor = 0, c->ipds_version = 4, c->num_dies = 1;
  add_padded(c, BG_AM_HWID_GC, 12, 0, 0, MOCK_GC, N(MOCK_GC));
  add_padded(c, BG_AM_HWID_SDMA0, 7, 0, 0, MOCK_GC, N(MOCK_GC));
  add_padded(c, BG_AM_HWID_MMHUB, 4, 1, 0, MOCK_MMHUB, N(MOCK_MMHUB));
  add_padded(c, BG_AM_HWID_NBIF, 6, 3, 1, MOCK_NBIO, N(MOCK_NBIO));
  add_padded(c, BG_AM_HWID_MP0, 14, 0, 2, MOCK_MP, N(MOCK_MP));
  add_padded(c, BG_AM_HWID_MP1, 14, 0, 2, MOCK_MP, N(MOCK_MP));
  add_padded(c, BG_AM_HWID_HDP, 7, 0, 0, MOCK_HDP, N(MOCK_HDP));
  add_padded(c, BG_AM_HWID_OSSSYS, 7, 0, 0, MOCK_OSSSYS, N(MOCK_OSSSYS));
  c->has_gc = true;
  c->gc.version_major = 2, c->gc.version_minor = 1;
  c->gc.gc_num_se = 2, c->gc.gc_num_cu_per_sh = 8, c->gc.gc_num_sh_per_se = 2, c->gc.gc_num_rb_per_se = 4;
  c->gc.gc_num_tccs = 8, c->gc.gc_wave_size = 32, c->gc.gc_max_waves_per_simd = 16;
  c->gc.gc_max_scratch_slots_per_cu = 32, c->gc.gc_lds_size = 64;
}

void discgen_config_gfx11(struct discgen_config *c) {
  memset(c, 0, sizeof(*c));
  c->name = "navi31-gc11.0.0";
  c->bin_major = 1, c->bin_minor = 1, c->ipds_version = 3, c->num_dies = 1, c->ipds_id = 0x1234;
  static const uint64_t athub[] = {0xC00, 0x13300, 0x2408C00};
  static const uint64_t vcn0[] = {0x7800, 0x7E00, 0x2403000};
  static const uint64_t vcn1[] = {0x7A00, 0x8000, 0x2403400};
  static const uint64_t umc[] = {0x14000, 0x2425800};
  static const uint64_t df[] = {0x7000, 0x240B800};
  discgen_add(c, 0, BG_AM_HWID_MP1, 0, 13, 0, 0, N(MOCK_MP), MOCK_MP);
  discgen_add(c, 0, BG_AM_HWID_GC, 0, 11, 0, 0, N(MOCK_GC), MOCK_GC);
  discgen_add(c, 0, BG_AM_HWID_SDMA0, 0, 6, 0, 0, N(MOCK_GC), MOCK_GC);
  discgen_add(c, 0, BG_AM_HWID_SDMA1, 0, 6, 0, 0, N(MOCK_GC), MOCK_GC);
  discgen_add(c, 0, BG_AM_HWID_MMHUB, 0, 3, 0, 0, N(MOCK_MMHUB), MOCK_MMHUB);
  discgen_add(c, 0, BG_AM_HWID_ATHUB, 0, 3, 0, 0, N(athub), athub);
  discgen_add(c, 0, BG_AM_HWID_NBIF, 0, 4, 3, 0, N(MOCK_NBIO), MOCK_NBIO);
  discgen_add(c, 0, 216 /* XGBE: not mapped to any HWIP */, 0, 1, 0, 0, 1, (const uint64_t[]){0x123400});
  discgen_add(c, 0, BG_AM_HWID_MP0, 0, 13, 0, 0, N(MOCK_MP), MOCK_MP);
  discgen_add(c, 0, BG_AM_HWID_HDP, 0, 6, 0, 0, N(MOCK_HDP), MOCK_HDP);
  discgen_add(c, 0, BG_AM_HWID_OSSSYS, 0, 6, 0, 0, N(MOCK_OSSSYS), MOCK_OSSSYS);
  discgen_add(c, 0, BG_AM_HWID_UVD, 0, 4, 0, 0, N(vcn0), vcn0);
  discgen_add(c, 0, BG_AM_HWID_UVD, 1, 4, 0, 0, N(vcn1), vcn1);
  discgen_add(c, 0, BG_AM_HWID_DF, 0, 4, 3, 0, N(df), df);
  for (unsigned i = 0; i < 20; i++) {
    uint64_t b[2] = {umc[0] + 0x800u * i, umc[1] + 0x800u * i};
    discgen_add(c, 0, BG_AM_HWID_UMC, (uint8_t)i, 8, 10, 0, 2, b);
  }
  c->has_gc = true;
  c->gc.version_major = 1, c->gc.version_minor = 2;
  c->gc.gc_num_se = 6, c->gc.gc_num_wgp0_per_sa = 4, c->gc.gc_num_wgp1_per_sa = 0, c->gc.gc_num_rb_per_se = 4;
  c->gc.gc_num_gl2c = 24, c->gc.gc_num_gprs = 1536, c->gc.gc_wave_size = 32, c->gc.gc_max_waves_per_simd = 16;
  c->gc.gc_max_scratch_slots_per_cu = 32, c->gc.gc_lds_size = 64, c->gc.gc_num_sc_per_se = 2;
  c->gc.gc_num_sa_per_se = 2, c->gc.gc_num_packer_per_sc = 4, c->gc.gc_num_gl2a = 4, c->gc.gc_num_tcp_per_sa = 8;
  c->gc.gc_num_sdp_interface = 16, c->gc.gc_num_tcps = 96, c->gc.gc_num_tcp_per_wpg = 2, c->gc.gc_tcp_l1_size = 32;
  c->gc.gc_num_sqc_per_wgp = 1, c->gc.gc_gl1c_per_sa = 1, c->gc.gc_gl1c_size_per_instance = 256;
  c->gc.gc_gl2c_per_gpu = 6144;
  c->has_harvest = true;
}

/* 64-bit base: AID routing in the upper half; odd instances also set bits 30-31 of the low half (which
 * Linux and the parser clear). */
static uint64_t b64(unsigned aid, unsigned inst, uint32_t dw) {
  return (uint64_t)(0x10u + aid) << 32 | (inst & 1 ? 0xC0000000u : 0u) | dw;
}

void discgen_config_gfx942(struct discgen_config *c) {
  memset(c, 0, sizeof(*c));
  c->name = "mi300x-gc9.4.3";
  c->bin_major = 2, c->bin_minor = 0, c->ipds_version = 4, c->base64 = true, c->num_dies = 4;
  static const uint32_t gc[] = {0x2000, 0xA000, 0x1C000, 0x2402C00, 0x2406000};
  static const uint32_t sdma[] = {0x1260, 0xA000, 0x1C000};
  static const uint32_t mmhub[] = {0x1A000, 0x2408800};
  /* NBIO 7.9 segments 0..8 (segment 8 holds DOORBELL0_CTRL_ENTRY_*; 6 and 7 unused by AM) */
  static const uint32_t nbio[] = {0x0, 0x14, 0xD20, 0x10400, 0x241B000, 0x4040000, 0x4080000, 0x40C0000, 0x4100000};
  static const uint32_t mp[] = {0x16000, 0x243FC00, 0xDC0000, 0xE00000};
  static const uint32_t hdp[] = {0xF20, 0x240A400};
  static const uint32_t oss[] = {0x10A0, 0x240A000};
  for (unsigned aid = 0; aid < 4; aid++) {
    uint64_t b[BG_AM_MAX_SEGMENTS];
#define ADD(hwid, inst, maj, min, rev, arr, stride)                                                   \
  do {                                                                                                \
    for (unsigned k = 0; k < N(arr); k++) b[k] = b64(aid, (inst), (arr)[k] + (uint32_t)(stride));      \
    discgen_add(c, (uint8_t)aid, (hwid), (uint8_t)(inst), maj, min, rev, N(arr), b);                 \
  } while (0)
    ADD(BG_AM_HWID_NBIF, aid, 7, 9, 0, nbio, 0x1000000u * aid);
    ADD(BG_AM_HWID_MP0, aid, 13, 0, 6, mp, 0x1000000u * aid);
    ADD(BG_AM_HWID_MP1, aid, 13, 0, 6, mp, 0x1000000u * aid + 0x400u);
    for (unsigned x = 0; x < 2; x++) ADD(BG_AM_HWID_GC, aid * 2 + x, 9, 4, 3, gc, 0x100000u * (aid * 2 + x));
    for (unsigned s = 0; s < 4; s++) ADD(BG_AM_HWID_SDMA0, aid * 4 + s, 4, 4, 2, sdma, 0x80000u * (aid * 4 + s));
    ADD(BG_AM_HWID_MMHUB, aid, 1, 8, 0, mmhub, 0x1000000u * aid);
    ADD(BG_AM_HWID_HDP, aid, 4, 4, 2, hdp, 0x1000000u * aid);
    ADD(BG_AM_HWID_OSSSYS, aid, 4, 4, 2, oss, 0x1000000u * aid);
#undef ADD
  }
  c->has_gc = true;
  c->gc.version_major = 2, c->gc.version_minor = 1;
  c->gc.gc_num_se = 4, c->gc.gc_num_cu_per_sh = 10, c->gc.gc_num_sh_per_se = 1, c->gc.gc_num_rb_per_se = 2;
  c->gc.gc_num_tccs = 16, c->gc.gc_num_gprs = 512, c->gc.gc_wave_size = 64, c->gc.gc_max_waves_per_simd = 8;
  c->gc.gc_max_scratch_slots_per_cu = 32, c->gc.gc_lds_size = 64, c->gc.gc_num_sc_per_se = 1;
  c->gc.gc_num_packer_per_sc = 1, c->gc.gc_num_tcp_per_sh = 10, c->gc.gc_tcp_size_per_cu = 16;
  c->gc.gc_num_sdp_interface = 16, c->gc.gc_num_cu_per_sqc = 2, c->gc.gc_instruction_cache_size_per_sqc = 64;
  c->gc.gc_scalar_data_cache_size_per_sqc = 16, c->gc.gc_tcc_size = 4096;
  c->has_harvest = true;
}

/* ---- builder ---- */

size_t discgen_build(const struct discgen_config *c, uint8_t *buf, size_t cap, struct discgen_layout *lay) {
  struct discgen_layout l;
  memset(&l, 0, sizeof(l));
  if (cap > 0) memset(buf, 0, cap);
  if (c->num_dies < 1 || c->num_dies > BG_AM_DISC_MAX_DIES || c->nips > DISCGEN_MAX_IPS) return 0;
  for (unsigned i = 0; i < c->nips; i++)
    if (c->ips[i].nbases > BG_AM_MAX_SEGMENTS || c->ips[i].die >= c->num_dies) return 0;
  const unsigned ntables = BG_AM_TABLE_COUNT;
  l.tables_at = c->bin_major >= 2 ? 16 : 12;
  l.hdr_size = l.tables_at + 8 * ntables;
  size_t bsz = c->base64 ? 8 : 4;

  /* size everything first */
  size_t p = l.hdr_size;
  l.ipds_off = p;
  p += BG_AM_DISC_IPDS_HEADER_SIZE;
  for (unsigned d = 0; d < c->num_dies; d++) {
    l.die_off[d] = p;
    p += 4;
    l.first_ip_off[d] = p;
    for (unsigned i = 0; i < c->nips; i++)
      if (c->ips[i].die == d) p += 8 + bsz * c->ips[i].nbases;
  }
  l.ipds_size = p - l.ipds_off;
  if (c->has_harvest) l.harvest_off = p, p += BG_AM_DISC_HARVEST_TABLE_SIZE;
  const uint16_t *fields = NULL;
  size_t nf = 0;
  if (c->has_gc) {
    nf = bg_am_gc_info_layout(c->gc.version_major, c->gc.version_minor, &fields);
    if (!nf) return 0;
    l.gc_off = p, l.gc_size = 16 + 4 * nf, p += l.gc_size;
  }
  l.binary_size = p;
  if (p > cap || p > 0xffff || l.ipds_size > 0xffff) return 0;

  /* binary header */
  w32(buf, 0, BG_AM_DISC_BINARY_SIGNATURE);
  w16(buf, 4, c->bin_major), w16(buf, 6, c->bin_minor);
  w16(buf, 10, (uint16_t)l.binary_size);
  if (c->bin_major >= 2) w16(buf, 12, (uint16_t)ntables);

  /* IP discovery table */
  size_t h = l.ipds_off;
  w32(buf, h, BG_AM_DISC_IPDS_SIGNATURE);
  w16(buf, h + 4, c->ipds_version), w16(buf, h + 6, (uint16_t)l.ipds_size), w32(buf, h + 8, c->ipds_id);
  w16(buf, h + 12, c->num_dies);
  for (unsigned d = 0; d < c->num_dies; d++) w16(buf, h + 14 + 4 * d, (uint16_t)d), w16(buf, h + 16 + 4 * d, (uint16_t)l.die_off[d]);
  buf[h + 78] = c->base64 ? 1 : 0;
  for (unsigned d = 0; d < c->num_dies; d++) {
    size_t q = l.die_off[d];
    unsigned n = 0;
    w16(buf, q, (uint16_t)d);
    q += 4;
    for (unsigned i = 0; i < c->nips; i++) {
      const struct discgen_ip *ip = &c->ips[i];
      if (ip->die != d) continue;
      n++;
      w16(buf, q, ip->hw_id);
      buf[q + 2] = ip->instance, buf[q + 3] = ip->nbases;
      buf[q + 4] = ip->maj, buf[q + 5] = ip->min, buf[q + 6] = ip->rev, buf[q + 7] = ip->byte7;
      q += 8;
      for (unsigned k = 0; k < ip->nbases; k++, q += bsz) {
        if (c->base64) w64(buf, q, ip->bases[k]);
        else w32(buf, q, (uint32_t)ip->bases[k]);
      }
    }
    w16(buf, l.die_off[d] + 2, (uint16_t)n);
  }
  w16(buf, l.tables_at + 8 * BG_AM_TABLE_IP_DISCOVERY, (uint16_t)l.ipds_off);
  w16(buf, l.tables_at + 8 * BG_AM_TABLE_IP_DISCOVERY + 4, (uint16_t)l.ipds_size);

  if (c->has_harvest) {
    w32(buf, l.harvest_off, BG_AM_DISC_HARVEST_SIGNATURE);
    w32(buf, l.harvest_off + 4, 1);
    for (unsigned i = 0; i < c->nharvest && i < BG_AM_DISC_MAX_HARVEST; i++) {
      w16(buf, l.harvest_off + 8 + 4 * i, c->harvest[i].hw_id);
      buf[l.harvest_off + 10 + 4 * i] = c->harvest[i].instance;
    }
    w16(buf, l.tables_at + 8 * BG_AM_TABLE_HARVEST_INFO, (uint16_t)l.harvest_off);
    w16(buf, l.tables_at + 8 * BG_AM_TABLE_HARVEST_INFO + 4, BG_AM_DISC_HARVEST_TABLE_SIZE);
  }
  if (c->has_gc) {
    w32(buf, l.gc_off, BG_AM_DISC_GC_TABLE_ID);
    w16(buf, l.gc_off + 4, c->gc.version_major), w16(buf, l.gc_off + 6, c->gc.version_minor);
    w32(buf, l.gc_off + 8, (uint32_t)l.gc_size);
    for (size_t i = 0; i < nf; i++) {
      uint32_t v;
      memcpy(&v, (const char *)&c->gc + fields[i], sizeof(v));
      w32(buf, l.gc_off + 16 + 4 * i, v);
    }
    w16(buf, l.tables_at + 8 * BG_AM_TABLE_GC, (uint16_t)l.gc_off);
    w16(buf, l.tables_at + 8 * BG_AM_TABLE_GC + 4, (uint16_t)l.gc_size);
  }
  discgen_fix_table_checksums(buf, l.binary_size);
  discgen_fix_binary_checksum(buf, l.binary_size);
  if (lay) *lay = l;
  return l.binary_size;
}

void discgen_fix_table_checksums(uint8_t *buf, size_t len) {
  if (len < 60) return;
  size_t tables_at = r16(buf, 4) >= 2 ? 16 : 12;
  size_t off = r16(buf, tables_at + 8 * BG_AM_TABLE_IP_DISCOVERY);
  if (off && off + 8 <= len) {
    size_t sz = r16(buf, off + 6);
    if (off + sz <= len) w16(buf, tables_at + 8 * BG_AM_TABLE_IP_DISCOVERY + 2, sum16(buf + off, sz));
  }
  off = r16(buf, tables_at + 8 * BG_AM_TABLE_GC);
  if (off && off + 16 <= len) {
    size_t sz = r32(buf, off + 8);
    if (sz <= len - off) w16(buf, tables_at + 8 * BG_AM_TABLE_GC + 2, sum16(buf + off, sz));
  }
  off = r16(buf, tables_at + 8 * BG_AM_TABLE_HARVEST_INFO);
  if (off && off + BG_AM_DISC_HARVEST_TABLE_SIZE <= len)
    w16(buf, tables_at + 8 * BG_AM_TABLE_HARVEST_INFO + 2, sum16(buf + off, BG_AM_DISC_HARVEST_TABLE_SIZE));
}

void discgen_fix_binary_checksum(uint8_t *buf, size_t len) {
  if (len < 12) return;
  size_t sz = r16(buf, 10);
  if (sz < 10 || sz > len) return;
  w16(buf, 8, sum16(buf + 10, sz - 10));
}
