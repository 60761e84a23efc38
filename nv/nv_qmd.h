/* nv/nv_qmd.h: the QMD (Queue Meta Data, the compute launch descriptor) of versions 3 (Ampere/Ada, 256 bytes),
 * 4 (Hopper, 384 bytes) and 5 (Blackwell, 384 bytes), packed from per-version field tables.
 *
 * Every bit range comes from NVIDIA/open-gpu-doc classes/compute/clc6c0qmd.h (NVC6C0_QMDV03_00_*),
 * clcbc0qmd.h (NVCBC0_QMDV04_00_*) and clcec0qmd.h (NVCEC0_QMDV05_00_*): MW(hi:lo) there is an absolute bit range of
 * the descriptor seen as little-endian 32-bit words. A field a version lacks (SM_GLOBAL_CACHING_ENABLE after V03,
 * QMD_TYPE before V04) has no entry; setting it is an error, bg_nv_qmd_has() tells. */
#ifndef BG_NV_QMD_H
#define BG_NV_QMD_H

#include <stdbool.h>
#include <stdint.h>

#define BG_NV_QMD_MAX_BYTES 384u
#define BG_NV_QMD_MAX_DWORDS (BG_NV_QMD_MAX_BYTES / 4)

/* The fields baregpu writes; the table of each version maps them to NVIDIA's names and bit ranges. Fields marked
 * (i) are indexed: constant buffers 0..7, releases 0..1. */
enum bg_nv_qmd_field {
  BG_QMD_QMD_MAJOR_VERSION,
  BG_QMD_QMD_MINOR_VERSION,
  BG_QMD_QMD_TYPE,                 /* V04+: 2 = GRID_CTA */
  BG_QMD_QMD_GROUP_ID,
  BG_QMD_SM_GLOBAL_CACHING_ENABLE, /* V03 only */
  BG_QMD_INVALIDATE_TEXTURE_HEADER_CACHE,
  BG_QMD_INVALIDATE_TEXTURE_SAMPLER_CACHE,
  BG_QMD_INVALIDATE_TEXTURE_DATA_CACHE,
  BG_QMD_INVALIDATE_SHADER_DATA_CACHE,
  BG_QMD_INVALIDATE_SHADER_CONSTANT_CACHE, /* V03, V05 */
  BG_QMD_API_VISIBLE_CALL_LIMIT,
  BG_QMD_SAMPLER_INDEX,
  BG_QMD_CWD_MEMBAR_TYPE,
  BG_QMD_BARRIER_COUNT,
  BG_QMD_REGISTER_COUNT,           /* V03: REGISTER_COUNT_V */
  BG_QMD_SHARED_MEMORY_SIZE,       /* V05: _SHIFTED7 */
  BG_QMD_MIN_SM_CONFIG_SHARED_MEM_SIZE,
  BG_QMD_MAX_SM_CONFIG_SHARED_MEM_SIZE,
  BG_QMD_TARGET_SM_CONFIG_SHARED_MEM_SIZE,
  BG_QMD_SHADER_LOCAL_MEMORY_LOW_SIZE,  /* V05: _SHIFTED4 */
  BG_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, /* V05: _SHIFTED4 */
  BG_QMD_PROGRAM_ADDRESS_LOWER,    /* V05: _SHIFTED4 */
  BG_QMD_PROGRAM_ADDRESS_UPPER,
  BG_QMD_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED, /* address >> 8 */
  BG_QMD_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED,
  BG_QMD_PROGRAM_PREFETCH_SIZE,    /* 256-byte units */
  BG_QMD_SASS_VERSION,
  BG_QMD_GRID_WIDTH,               /* V03: CTA_RASTER_WIDTH */
  BG_QMD_GRID_HEIGHT,
  BG_QMD_GRID_DEPTH,
  BG_QMD_CTA_THREAD_DIMENSION0,
  BG_QMD_CTA_THREAD_DIMENSION1,
  BG_QMD_CTA_THREAD_DIMENSION2,
  BG_QMD_CONSTANT_BUFFER_VALID,    /* (i) */
  BG_QMD_CONSTANT_BUFFER_INVALIDATE, /* (i) */
  BG_QMD_CONSTANT_BUFFER_ADDR_LOWER, /* (i) V04+: _SHIFTED6 */
  BG_QMD_CONSTANT_BUFFER_ADDR_UPPER, /* (i) */
  BG_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, /* (i) bytes / 16 */
  BG_QMD_RELEASE_ENABLE,           /* (i) */
  BG_QMD_RELEASE_STRUCTURE_SIZE,   /* (i) 0 = four-word semaphore (payload + timestamp) */
  BG_QMD_RELEASE_PAYLOAD64B,       /* (i) */
  BG_QMD_RELEASE0_ADDRESS_LOWER,
  BG_QMD_RELEASE0_ADDRESS_UPPER,
  BG_QMD_RELEASE0_PAYLOAD_LOWER,
  BG_QMD_RELEASE0_PAYLOAD_UPPER,
  BG_QMD_RELEASE1_ADDRESS_LOWER,
  BG_QMD_RELEASE1_ADDRESS_UPPER,
  BG_QMD_RELEASE1_PAYLOAD_LOWER,
  BG_QMD_RELEASE1_PAYLOAD_UPPER,
  BG_QMD_DEPENDENT_QMD0_ENABLE,
  BG_QMD_DEPENDENT_QMD0_ACTION,
  BG_QMD_DEPENDENT_QMD0_PREFETCH,
  BG_QMD_DEPENDENT_QMD0_POINTER,   /* QMD address >> 8 */
  BG_QMD_NFIELDS
};

/* Where a field lives in one version. */
typedef struct bg_nv_qmd_bits {
  const char *name;   /* NVIDIA's macro name, e.g. "NVCBC0_QMDV04_00_GRID_WIDTH" */
  uint16_t lo, hi;    /* bit range of index 0 (inclusive) */
  uint16_t stride;    /* bits between consecutive indices */
  uint8_t count;      /* indices (1: not indexed) */
  uint8_t shift;      /* the field holds value >> shift (_SHIFTED4/6/7; the address pairs split after shifting) */
} bg_nv_qmd_bits;

/* Bytes of a QMD of this version (256 or 384), 0 for an unknown version. */
unsigned bg_nv_qmd_bytes(int version);
/* The field's entry, or NULL (message set) for an unknown version/field, a field the version lacks, or index out of
 * range. */
const bg_nv_qmd_bits *bg_nv_qmd_field(int version, enum bg_nv_qmd_field f, unsigned index);
bool bg_nv_qmd_has(int version, enum bg_nv_qmd_field f);
/* Bit range of field f[index] in version: *lo, *width. 0 or -BG_EINVAL (message set). */
int bg_nv_qmd_bit_range(int version, enum bg_nv_qmd_field f, unsigned index, unsigned *lo, unsigned *width);
/* Write the raw field value (already shifted for *_SHIFTED fields). -BG_EINVAL naming the field, the version and its
 * width when value does not fit. */
int bg_nv_qmd_set(uint32_t *qmd, int version, enum bg_nv_qmd_field f, unsigned index, uint64_t value);
uint64_t bg_nv_qmd_get(const uint32_t *qmd, int version, enum bg_nv_qmd_field f, unsigned index);
/* An address (or byte size) into a LOWER/UPPER pair: shifted by the lower field's shift (the low bits must be zero),
 * low 32 bits into lower, the rest into upper (which must hold it). */
int bg_nv_qmd_set_addr(uint32_t *qmd, int version, enum bg_nv_qmd_field lower, enum bg_nv_qmd_field upper,
                       unsigned index, uint64_t addr);
/* A single field holding value >> shift (e.g. V05 SHARED_MEMORY_SIZE_SHIFTED7): the dropped bits must be zero. */
int bg_nv_qmd_set_scaled(uint32_t *qmd, int version, enum bg_nv_qmd_field f, unsigned index, uint64_t value);

#endif
