/* tests/unit/am/discovery_gen.h: builds valid IP discovery table images (Linux discovery.h layouts, correct
 * checksums) for test configurations; reusable by the emulated GPU to place at VRAM - 64 KiB. */
#ifndef BG_TESTS_AM_DISCOVERY_GEN_H
#define BG_TESTS_AM_DISCOVERY_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "am/discovery.h"

#define DISCGEN_MAX_IPS 128u

struct discgen_ip {
  uint8_t die;
  uint16_t hw_id;
  uint8_t instance;
  uint8_t maj, min, rev;
  uint8_t byte7; /* sub_revision | variant << 4 */
  uint8_t nbases;
  uint64_t bases[BG_AM_MAX_SEGMENTS]; /* stored as u32 unless base64 */
};

struct discgen_config {
  const char *name;
  uint16_t bin_major, bin_minor; /* binary_header 1.x (6 tables) or 2.x (num_tables = 6) */
  uint16_t ipds_version;         /* 1..4 */
  bool base64;                   /* 64-bit bases (ipds_version 4) */
  uint16_t num_dies;             /* 1..16; entries name their die */
  uint32_t ipds_id;
  unsigned nips;
  struct discgen_ip ips[DISCGEN_MAX_IPS];
  bool has_gc;
  struct bg_am_gc_info gc; /* version_major/minor choose the layout; size is computed */
  bool has_harvest;
  unsigned nharvest;
  struct { uint16_t hw_id; uint8_t instance; } harvest[BG_AM_DISC_MAX_HARVEST];
};

/* Where the generator put things (byte offsets in the image). */
struct discgen_layout {
  size_t hdr_size, tables_at; /* binary_header size and table_list position */
  size_t ipds_off, ipds_size;
  size_t die_off[BG_AM_DISC_MAX_DIES];
  size_t first_ip_off[BG_AM_DISC_MAX_DIES];
  size_t harvest_off, gc_off, gc_size;
  size_t binary_size;
};

/* Reference mock configuration (tinygrad test/mockgpu/am/amgpu.py): GC 12.0.0, SDMA0 7.0.0, MMHUB 4.1.0, NBIF 6.3.1, MP0/MP1 14.0.2,
 * HDP 7.0.0, OSSSYS 7.0.0, one die, 32-bit bases padded to 10, gc_info v2.1, no harvest table. */
void discgen_config_mock(struct discgen_config *c);
/* Navi31-like: GC 11.0.0, SDMA0/1 6.0.0, MMHUB 3.0.0, ATHUB 3.0.0, NBIF 4.3.0, MP0/MP1 13.0.0, HDP/OSSSYS 6.0.0,
 * VCN 4.0.0 x2, UMC 8.10.0 x20 (instances >= 16 are ignored by the parser), an unmapped hw_id; IPDS v3,
 * gc_info v1.2, empty harvest table. */
void discgen_config_gfx11(struct discgen_config *c);
/* MI300X-like (synthetic bases): 4 dies (AIDs), GC 9.4.3 x8 XCCs, SDMA0 4.4.2 x16, MMHUB 1.8.0, NBIO 7.9.0,
 * MP0/MP1 13.0.6, HDP/OSSSYS 4.4.2 per AID, IPDS v4 with 64-bit bases (upper half = AID routing, some with
 * bits 30-31 of the low half set), binary_header v2, gc_info v2.1, harvest table with no entries. */
void discgen_config_gfx942(struct discgen_config *c);

/* Add an entry; returns it (NULL when full). */
struct discgen_ip *discgen_add(struct discgen_config *c, uint8_t die, uint16_t hw_id, uint8_t inst, uint8_t maj,
                               uint8_t min, uint8_t rev, unsigned nbases, const uint64_t *bases);

/* Build the image into buf (cap bytes; zero-filled first). Returns binary_size, or 0 if it does not fit in
 * cap or 64 KiB, or the configuration is invalid. lay may be NULL. */
size_t discgen_build(const struct discgen_config *c, uint8_t *buf, size_t cap, struct discgen_layout *lay);

/* Recompute checksums after editing an image: table checksums (IP discovery over its header size, GC over
 * its header size, harvest over 136 bytes; only where the header reads sane) and then the binary checksum. */
void discgen_fix_table_checksums(uint8_t *buf, size_t len);
void discgen_fix_binary_checksum(uint8_t *buf, size_t len);

#endif
