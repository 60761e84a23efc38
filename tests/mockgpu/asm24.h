/* tests/mockgpu/asm24.h: an emulated ASM24 USB-to-PCIe bridge with the custom firmware, at the
 * USB transport boundary (usb/usb_transport.h), in front of an emulated PCI function (mock_pci.h,
 * e.g. the AMD GPU of amd_gpu.h) at bus 4 (tinygrad tinygrad/runtime/support/usb.py ASM24Controller; tinygrad tinygrad/runtime/support/system.py System.pci_setup_usb_bars; tinygrad test/mockgpu/usb.py).
 *
 * Model: 64 KiB XDATA with the LTSSM register (0xB450, 0x78 once 0xF3 powered the link), 512 KiB
 * SRAM, the sys_buf/cq_buf windows and the 0x200-byte window at sys 0x800000 (reachable through
 * XDATA and by the GPU's DMA at their PCIe addresses: mock_pci_set_dma_target), four PCI-PCI
 * bridge ports on buses 0..3 (type 1 headers: bus numbers, memory windows, command) and the GPU's
 * configuration space and BARs behind them.
 *
 * Strict (each recorded as a failure, mock_asm24_failures, and the transfer stalls or the TLP
 * completes with Unsupported Request): unknown requests, wrong lengths or fields, a bulk transfer
 * nothing armed or of another length than armed, a request while a stream is still armed, TLPs
 * with the link down, config TLPs of the wrong type for the bus or to a bus no bridge routes,
 * memory TLPs outside every bridge window or GPU BAR (or with memory decoding off), SRAM arms
 * beyond 512 KiB, GPU DMA outside the windows.
 *
 * Faults on request (mock_asm24_inject): stalls, timeouts, short bulk transfers (half the bytes
 * land), completions with the firmware's error byte, a vanished device, and bulk transfers that stall
 * as on a real host controller (mock_asm24_inject_stall): the endpoint halts (LIBUSB_ERROR_PIPE) and
 * stays halted until the host clears it, or the transfer times out (LIBUSB_ERROR_TIMEOUT), each
 * before the command executed (it stays armed: the firmware still waits for or holds the data, until
 * the host clears the endpoint's halt) or after (the write landed or the read was done, the host only
 * sees the failure). Counters of transfers, bytes and TLPs (mock_asm24_get_stats). Not thread-safe,
 * except mock_asm24_inject_stall (atomic: another thread may inject while the driver runs).
 *
 * The host controller's real guarantees (usb/usb_transport.h "Ordering"): started transfers wait in three queues,
 * EP0 (control IN and OUT), bulk OUT 0x02 and bulk IN 0x81, each serviced in order; which queue's head goes next is
 * drawn by a seeded generator, so control and bulk transfers meet the firmware in any order a host may legally
 * choose. Seed 0 services them in the order they were started (the old, batch-in-order model). The firmware takes
 * one request at a time: a request while a bulk transfer is armed is a failure (as before); a bulk transfer that
 * arrives before the firmware is armed for it is, in MOCK_ASM24_FW_STRICT (the default), a recorded failure and a
 * stall, and in MOCK_ASM24_FW_HOLD held back by flow control (NRDY/ERDY on SuperSpeed, NAK on high speed) until an
 * arm for it arrives, timing out (-BG_ETIMEDOUT, the host's timeout) when nothing else in flight could arm it.
 * Defaults come from the environment at mock_asm24_new: MOCKUSB_SEED (decimal, else 1) and MOCKUSB_FW ("strict" or
 * "hold"); the plugin gives bridge i the seed MOCKUSB_SEED + i. Completions are reported from the transport's poll,
 * one transfer per poll. */
#ifndef BG_MOCKGPU_ASM24_H
#define BG_MOCKGPU_ASM24_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mock_pci.h"
#include "usb/usb_transport.h"

typedef struct mock_asm24 mock_asm24;

/* The bridge in front of gpu (which stays owned by its tree). Link down until 0xF3. */
mock_asm24 *mock_asm24_new(mock_pci *gpu);
void mock_asm24_free(mock_asm24 *m);
/* A transport to the bridge ("mockusb:N"); closing it leaves the bridge alive. NULL on ENOMEM. */
bg_usb_transport *mock_asm24_transport(mock_asm24 *m);

typedef enum mock_asm24_fault {
  MOCK_ASM24_STALL,      /* the transfer stalls (-BG_EIO); nothing happens */
  MOCK_ASM24_TIMEOUT,    /* the transfer times out (-BG_ETIMEDOUT); nothing happens */
  MOCK_ASM24_SHORT,      /* a bulk transfer moves half its bytes (OUT: they land), then fails short */
  MOCK_ASM24_CPL_ERROR,  /* a completion read (0xF0 IN) reports the firmware's transport error (byte 7) */
  MOCK_ASM24_GONE,       /* every transfer from then on: -BG_ENODEV */
  /* Bulk transfers only, as a real bridge stalls (the host controller's view, usb/usb_transport.h): */
  MOCK_ASM24_HALT,       /* the endpoint halts before the data moved (-BG_EIO, halted): the command stays armed, and
                            every transfer on the endpoint stalls, until the host clears the halt */
  MOCK_ASM24_HALT_AFTER, /* the command executed (OUT: the data landed; IN: the PCIe read was done, the host's buffer
                            gets garbage), then the endpoint halts (-BG_EIO, halted, 0 bytes) */
  MOCK_ASM24_HANG,       /* the transfer times out before the data moved (-BG_ETIMEDOUT): the command stays armed (the
                            firmware waits) until the host clears the endpoint's halt */
  MOCK_ASM24_HANG_AFTER, /* the command executed, the transfer times out anyway (-BG_ETIMEDOUT, 0 bytes, IN: garbage) */
} mock_asm24_fault;

/* Fire fault on count transfers it applies to, once after transfers have passed. */
void mock_asm24_inject(mock_asm24 *m, mock_asm24_fault fault, unsigned after, unsigned count);
void mock_asm24_clear_faults(mock_asm24 *m);
/* The next count bulk transfers stall, in turn HALT, HANG_AFTER, HALT_AFTER, HANG (the turn goes on across calls,
 * so repeated single stalls meet every variant); faults of mock_asm24_inject come first. Safe from any thread. */
void mock_asm24_inject_stall(mock_asm24 *m, unsigned count);
/* Stalls injected by mock_asm24_inject_stall and not fired yet. */
unsigned mock_asm24_stalls_pending(const mock_asm24 *m);

/* The scheduler's seed (0: start order) and the firmware's answer to early bulk data. */
typedef enum mock_asm24_fw_mode { MOCK_ASM24_FW_STRICT, MOCK_ASM24_FW_HOLD } mock_asm24_fw_mode;
void mock_asm24_set_seed(mock_asm24 *m, uint64_t seed);
uint64_t mock_asm24_get_seed(const mock_asm24 *m);
void mock_asm24_set_fw_mode(mock_asm24 *m, mock_asm24_fw_mode mode);

typedef struct mock_asm24_stats {
  uint64_t xfers[BG_USB_NKINDS], bytes[BG_USB_NKINDS];
  uint64_t cfg_tlps, mem_tlps, stream_writes, stream_reads, sram_writes, sram_reads, faults_fired;
  uint64_t clear_halts;           /* CLEAR_FEATURE(ENDPOINT_HALT) requests from the host */
  uint64_t dropped_arms;          /* armed commands dropped by a clear halt */
  uint64_t stalls[4];             /* HALT, HALT_AFTER, HANG, HANG_AFTER fired (either injection) */
  uint64_t overtakes;             /* transfers serviced before one started earlier on another endpoint */
  uint64_t held;                  /* bulk transfers held back by flow control (MOCK_ASM24_FW_HOLD) until armed */
  uint64_t early_bulk;            /* bulk transfers that arrived with nothing armed for them (either mode) */
} mock_asm24_stats;
const mock_asm24_stats *mock_asm24_get_stats(const mock_asm24 *m);
void mock_asm24_reset_stats(mock_asm24 *m);

unsigned mock_asm24_nfail(const mock_asm24 *m);
const char *mock_asm24_failures(const mock_asm24 *m);
void mock_asm24_clear_failures(mock_asm24 *m);

uint8_t *mock_asm24_sram(mock_asm24 *m);
uint8_t *mock_asm24_xdata(mock_asm24 *m);
/* The GPU-side windows' memory by PCIe address (NULL outside), as the GPU's DMA sees it. */
uint8_t *mock_asm24_sys(mock_asm24 *m, uint64_t sys, size_t *avail);
bool mock_asm24_link_up(const mock_asm24 *m);

#endif
