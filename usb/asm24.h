/* usb/asm24.h: an ASM24 bridge with the custom firmware, over a USB transport.
 *
 * Bridge memory (XDATA) reads and writes, PCIe config and memory TLPs with completion checks, the
 * SRAM stream engine, batched memory writes and pipelined copies (tinygrad tinygrad/runtime/support/usb.py ASM24Controller, USBMMIOInterface; tinygrad tinygrad/runtime/support/system.py System.pci_setup_usb_bars; tinygrad tinygrad/runtime/ops_amd.py USBIface).
 *
 * Round trips: every call below that talks to the bridge submits its transfers as one batch and
 * waits once. Memory writes may be queued (bg_asm24_mem_write with batched=true) and go out with
 * the next flush: bg_asm24_flush, any read (queued writes ride in front of the read in the same
 * round trip, so reads always see them), or a full queue. A queue submit (ring bytes, wptr,
 * doorbell) therefore costs one round trip.
 *
 * Retries: a completion whose firmware status byte is non-zero is re-issued after 1 ms, up to
 * BG_ASM24_RETRIES times (tinygrad tinygrad/runtime/support/usb.py ASM24Controller). A failed batch
 * (timeout, stall, short transfer) is recovered in place (asm24.c): the bulk endpoints' halts are
 * cleared and the batch re-sent after 1 ms from the start of the failed command, whose re-execution is
 * harmless (memory writes of the same bytes, reads), up to BG_ASM24_RETRIES times; an SRAM read is
 * not re-sent (its arm was consumed); a gone device is not retried. The error after the last retry
 * names the request, the failed command with its address and "after N retries"; the bridge goes on.
 * Threads: every call below takes the bridge's recursive lock itself, so requests of several threads
 * never interleave on the wire; a process opens one bg_asm24 per bridge (hcq/dev_internal.h,
 * bg_phys_lock). Internal: not installed. */
#ifndef BG_USB_ASM24_H
#define BG_USB_ASM24_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "usb/asm24_proto.h"
#include "usb/usb_transport.h"

typedef struct bg_asm24 bg_asm24;

/* Progress of a long copy: done of total bytes. bg_usb_progress_tty (usb_progress.h) draws a bar. */
typedef void (*bg_asm24_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* Take the transport (closed by bg_asm24_close, also on failure here) and bring the PCIe link up:
 * read the LTSSM state at 0xB450; when it is not L0 (0x78), power the link on (0xF3) and read
 * again; "PCIe link not up" otherwise. */
int bg_asm24_open(bg_usb_transport *t, bg_asm24 **out);
/* Flush queued writes and close the transport. */
void bg_asm24_close(bg_asm24 *b);
const char *bg_asm24_name(const bg_asm24 *b);
/* The bridge serves one request sequence at a time (its write queue and transfer buffers are shared).
 * Each call here holds this recursive lock; a sequence of calls that must not be split by another
 * thread's request (SRAM arm then read, flush then SRAM write) holds it around the whole sequence.
 * The bg_pci_ops of usb/usb_pci.c do. */
void bg_asm24_lock(bg_asm24 *b);
void bg_asm24_unlock(bg_asm24 *b);
bg_usb_transport *bg_asm24_transport(bg_asm24 *b);

/* XDATA: reads in 255-byte requests, writes one request per byte (tinygrad tinygrad/runtime/support/usb.py ASM24Controller). */
int bg_asm24_xdata_read(bg_asm24 *b, uint16_t addr, void *dst, size_t n);
int bg_asm24_xdata_write(bg_asm24 *b, uint16_t addr, const void *src, size_t n);
int bg_asm24_pcie_power(bg_asm24 *b, bool on);

/* One TLP of size 1..4 bytes inside a dword (mode 0). Non-posted: the completion is read in the
 * same round trip and must be Successful Completion (-BG_EIO naming the TLP, the address and the
 * status otherwise; CRS is retried). *val: data to write / data read. */
int bg_asm24_tlp(bg_asm24 *b, uint8_t fmt_type, uint64_t addr, unsigned size, uint32_t *val);
int bg_asm24_cfg_read(bg_asm24 *b, unsigned bus, unsigned dev, unsigned fn, unsigned reg, unsigned size, uint32_t *v);
int bg_asm24_cfg_write(bg_asm24 *b, unsigned bus, unsigned dev, unsigned fn, unsigned reg, unsigned size, uint32_t v);

/* PCIe memory at any address, length and alignment: whole dwords stream (mode 1/2), partial
 * dwords at the ends go as byte-enabled single TLPs. */
int bg_asm24_mem_write(bg_asm24 *b, uint64_t addr, const void *src, size_t n, bool batched);
int bg_asm24_mem_read(bg_asm24 *b, uint64_t addr, void *dst, size_t n);
int bg_asm24_flush(bg_asm24 *b);
/* Reads rd[0..n) (each whole dwords at a dword address) behind the queued writes, in order, in one round trip. */
typedef struct bg_asm24_read {
  uint64_t addr;
  void *dst;
  size_t n;
} bg_asm24_read;
int bg_asm24_mem_readv(bg_asm24 *b, const bg_asm24_read *rd, size_t n);
/* Bytes queued and not yet flushed. */
size_t bg_asm24_pending(const bg_asm24 *b);

/* Long copies to and from PCIe memory (VRAM through BAR0): 1 MiB streams, 4 in flight; a failed
 * stream and everything after it is re-sent. progress may be NULL. */
int bg_asm24_copy_in(bg_asm24 *b, uint64_t addr, const void *src, size_t n, bg_asm24_progress_fn progress, void *ctx);
int bg_asm24_copy_out(bg_asm24 *b, uint64_t addr, void *dst, size_t n, bg_asm24_progress_fn progress, void *ctx);

/* SRAM stream engine (0xF2): write n bytes at SRAM slot (padded to 512 bytes with zeros, so the
 * bytes up to the next 512 are overwritten); arm a read of n bytes from slot 0 (before the GPU
 * fills it), then read them. */
int bg_asm24_sram_write(bg_asm24 *b, unsigned slot, const void *src, size_t n);
int bg_asm24_sram_read_arm(bg_asm24 *b, size_t n);
int bg_asm24_sram_read(bg_asm24 *b, void *dst, size_t n);

/* Host half of the copy-in pipeline through the SRAM (tinygrad tinygrad/runtime/ops_amd.py USBIface): chunk seq (1..BG_ASM24_COPYIN_CHUNK
 * payload bytes) goes to window seq&1 (SRAM slot 0 or 16) as its wire image: payload, zero padding, and the
 * sentinel BG_ASM24_COPYIN_SENTINEL(seq) as the last dword of round_up(n+4, 512) bytes (*wire). Before the
 * window is overwritten the GPU must have drained chunk seq-2: the drain fence (u64 at XDATA 0xA800, which
 * the GPU's SDMA writes seq+1 to after each chunk) is polled until it reaches seq-1, at most timeout_ms (-BG_EHANG
 * "not draining"); then the 0xF2 arm and the data go in one round trip (retried whole), so an error never leaves
 * the engine armed. Two round trips per chunk. *fence gets the last value read. The
 * GPU side (POLL_REGMEM on the sentinel, COPY_LINEAR, WRITE64 of the fence) is the queue backend's. */
#define BG_ASM24_COPYIN_CHUNK (0x40000u - 4)
#define BG_ASM24_COPYIN_WINDOW(seq) (((seq) & 1u) * 16u)  /* SRAM slot of the window */
#define BG_ASM24_COPYIN_SENTINEL(seq) (0x51000000u | ((seq) & 0xFFFFFFu))
int bg_asm24_copyin_stage(bg_asm24 *b, uint32_t seq, const void *src, size_t n, int timeout_ms, size_t *wire,
                          uint64_t *fence);

/* The PCIe hierarchy behind the bridge (tinygrad tinygrad/runtime/support/system.py System.pci_setup_usb_bars): bus numbers and windows of the bridge
 * ports on buses 0..gpu_bus-1, the largest Resizable BAR size for BAR0, then every BAR of the
 * device at gpu_bus sized and placed (prefetchable ones from pref_base, others from mem_base, 2 MiB
 * aligned), then memory decoding and bus mastering on. */
typedef struct bg_asm24_bar {
  uint64_t addr, size;
  bool is_64, prefetch;
} bg_asm24_bar;
int bg_asm24_setup_bars(bg_asm24 *b, unsigned gpu_bus, uint64_t mem_base, uint64_t pref_base, bg_asm24_bar bars[6]);

#endif
