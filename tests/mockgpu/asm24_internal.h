/* tests/mockgpu/asm24_internal.h: state of the emulated bridge shared by asm24.c (USB side,
 * vendor requests, faults) and asm24_fabric.c (PCIe side: ports, routing, the GPU). */
#ifndef BG_MOCKGPU_ASM24_INTERNAL_H
#define BG_MOCKGPU_ASM24_INTERNAL_H

#include <stdatomic.h>

#include "asm24.h"
#include "platform/mmio.h"

#define M24_NPORTS 4          /* bridge ports on buses 0..3; the GPU is on bus 4 (tinygrad tinygrad/runtime/support/usb.py ASM24Controller) */
#define M24_GPU_BUS 4
#define M24_MAX_FAULTS 8

typedef enum m24_pending { M24_NONE, M24_STREAM_W, M24_STREAM_R, M24_SRAM_W, M24_SRAM_R } m24_pending;

/* One started transfer waiting in its endpoint's queue (the host controller's view). */
typedef struct m24_slot {
  bg_usb_xfer *x;
  uint64_t seq;        /* start order */
  bool cancelled;
  bool held;           /* counted once as held back by flow control */
} m24_slot;

typedef struct m24_queue {
  m24_slot *s;
  size_t head, n, cap; /* ring */
} m24_queue;

struct mock_asm24 {
  mock_pci *gpu;
  int id;
  uint8_t xdata[0x10000];
  uint8_t sram[0x80000];
  uint8_t sysbuf[0x1000], cqbuf[0x1000], win800[0x200];
  uint8_t port_cfg[M24_NPORTS][4096];
  uint8_t port_wmask[4096];
  bg_mmio gpu_view[6];        /* the GPU's BARs, mapped on first use */
  /* the armed bulk transfer */
  m24_pending pending;
  uint64_t pend_addr;         /* stream: PCIe address; SRAM: byte offset */
  size_t pend_len;
  bool cpl_valid;
  uint8_t cpl[8];
  /* faults */
  struct { mock_asm24_fault kind; unsigned skip, left; } faults[M24_MAX_FAULTS];
  unsigned nfaults;
  bool gone;
  bool halted[2];             /* bulk OUT 0x02, bulk IN 0x81: STALL until the host clears the halt */
  atomic_uint stalls_left;    /* mock_asm24_inject_stall */
  unsigned stall_turn;
  /* the host controller: EP0, bulk OUT 0x02, bulk IN 0x81, each in order; the next head drawn by rng (seed 0: by
   * start order); started transfers waiting in total */
  m24_queue epq[3];
  size_t inflight;
  uint64_t next_seq;
  uint64_t seed, rng;
  mock_asm24_fw_mode fw_mode;
  bool lost;                  /* an ordering violation: the firmware is out of step, every transfer fails (ENODEV)
                                 until mock_asm24_clear_failures */
  mock_asm24_stats st;
  unsigned nfail;
  char failures[4096];
};

/* Record a failure (also on stderr) and return -BG_EIO. */
int m24_fail(mock_asm24 *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* asm24_fabric.c */
void m24_fabric_init(mock_asm24 *m);
void m24_fabric_free(mock_asm24 *m);
/* A mode-0 TLP: fills the completion (status in byte 4, data in 0..3) for non-posted ones. */
void m24_tlp(mock_asm24 *m, uint8_t fmt, uint8_t byte_en, uint64_t addr, uint32_t value, uint8_t cpl[8]);
/* Route [addr, addr+n) to a GPU BAR: 0 with bar and offset set, or a failure naming why. */
int m24_route_mem(mock_asm24 *m, uint64_t addr, size_t n, int *bar, uint64_t *off);
/* Streaming data to/from a routed range (dword accesses on register BARs). */
int m24_mem_stream(mock_asm24 *m, uint64_t addr, uint8_t *buf, size_t n, bool write);

#endif
