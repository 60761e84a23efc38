/* platform/mmio.h: a view of device memory (a PCI BAR window, USB bridge SRAM, DMA memory).
 *
 * A view is either a direct pointer (a BAR mmapped through sysfs, host DMA pages) or a pair of
 * callbacks (the USB bridge turns accesses into PCIe requests; the emulated devices of
 * tests/mockgpu check each access). Drivers use the accessors below and never care which.
 *
 * Every access is checked against the view's size and natural alignment. Out-of-range or
 * misaligned accesses go to bg_mmio_fault (platform/pci_mmio.c), which records an error message;
 * reads then return all ones, as a dead PCI device would. Little-endian hosts only. */
#ifndef BG_HCQ_MMIO_H
#define BG_HCQ_MMIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct bg_mmio_ops {
  /* n bytes at view offset off; 0 or a negative BG_E* code (message recorded). */
  int (*read)(void *ctx, uint64_t off, void *dst, size_t n);
  int (*write)(void *ctx, uint64_t off, const void *src, size_t n);
} bg_mmio_ops;

typedef struct bg_mmio {
  volatile uint8_t *ptr;    /* direct view, or NULL when ops is set */
  uint64_t size;            /* bytes in the view */
  const bg_mmio_ops *ops;   /* NULL: use ptr */
  void *ctx;                /* ops' own */
} bg_mmio;

/* Record "mmio: <op> of n bytes at offset off is outside the view of size bytes" (or
 * misaligned) and return -BG_EINVAL. */
int bg_mmio_fault(const bg_mmio *m, uint64_t off, size_t n, bool write);

/* off..off+n within the view and naturally aligned (n is 1, 2, 4 or 8). */
static inline bool bg_mmio_ok(const bg_mmio *m, uint64_t off, size_t n) {
  return m->size >= n && off <= m->size - n && (off & (n - 1)) == 0;
}

#define BG_MMIO_RD(bits)                                                              \
  static inline uint##bits##_t bg_mmio_rd##bits(const bg_mmio *m, uint64_t off) {     \
    uint##bits##_t v = (uint##bits##_t)~(uint##bits##_t)0;                            \
    if (!bg_mmio_ok(m, off, sizeof(v))) {                                             \
      bg_mmio_fault(m, off, sizeof(v), false);                                        \
      return v;                                                                       \
    }                                                                                 \
    if (!m->ops) return *(volatile uint##bits##_t *)(m->ptr + off);                   \
    if (m->ops->read(m->ctx, off, &v, sizeof(v)) < 0) v = (uint##bits##_t)~(uint##bits##_t)0; \
    return v;                                                                         \
  }
#define BG_MMIO_WR(bits)                                                              \
  static inline int bg_mmio_wr##bits(const bg_mmio *m, uint64_t off, uint##bits##_t v) { \
    if (!bg_mmio_ok(m, off, sizeof(v))) return bg_mmio_fault(m, off, sizeof(v), true); \
    if (!m->ops) {                                                                    \
      *(volatile uint##bits##_t *)(m->ptr + off) = v;                                 \
      return 0;                                                                       \
    }                                                                                 \
    return m->ops->write(m->ctx, off, &v, sizeof(v));                                 \
  }
BG_MMIO_RD(8)
BG_MMIO_RD(16)
BG_MMIO_RD(32)
BG_MMIO_RD(64)
BG_MMIO_WR(8)
BG_MMIO_WR(16)
BG_MMIO_WR(32)
BG_MMIO_WR(64)
#undef BG_MMIO_RD
#undef BG_MMIO_WR

/* Bulk copies (VRAM through a BAR, bridge SRAM): any length, no alignment needed. */
static inline int bg_mmio_read(const bg_mmio *m, uint64_t off, void *dst, size_t n) {
  if (m->size < n || off > m->size - n) return bg_mmio_fault(m, off, n, false);
  if (m->ops) return m->ops->read(m->ctx, off, dst, n);
  memcpy(dst, (const uint8_t *)m->ptr + off, n);
  return 0;
}

static inline int bg_mmio_write(const bg_mmio *m, uint64_t off, const void *src, size_t n) {
  if (m->size < n || off > m->size - n) return bg_mmio_fault(m, off, n, true);
  if (m->ops) return m->ops->write(m->ctx, off, src, n);
  memcpy((uint8_t *)m->ptr + off, src, n);
  return 0;
}

/* A sub-window [off, off+size) of a view sharing its accessors; 0 or -BG_EINVAL. Callback views
 * need ops that take the window offset into account, so only direct views can be narrowed. */
int bg_mmio_sub(const bg_mmio *m, uint64_t off, uint64_t size, bg_mmio *out);

#endif
