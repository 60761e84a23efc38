/* usb/asm24_internal.h: state shared by asm24.c (requests, batching), asm24_copy.c (pipelined
 * copies) and asm24_pcie.c (hierarchy set-up). Not for other folders. */
#ifndef BG_USB_ASM24_INTERNAL_H
#define BG_USB_ASM24_INTERNAL_H

#include <pthread.h>

#include "usb/asm24.h"

/* One queued write: a mode-1 stream of len bytes (data in the arena at off), or a byte-enabled
 * single TLP (len <= 4, value in the payload). */
typedef struct bg_asm24_op {
  bool single;
  bool combine;    /* write-combined: later contiguous WC writes may extend it */
  uint64_t addr;
  size_t off, len;
  uint16_t wvalue;
  uint8_t payload[BG_ASM24_TLP_PAYLOAD];
} bg_asm24_op;

#define BG_ASM24_QUEUE_BYTES (1u << 20)  /* flush before the queue holds more */
#define BG_ASM24_QUEUE_OPS 256u

struct bg_asm24 {
  bg_usb_transport *t;
  pthread_mutex_t lock;           /* recursive: one request sequence at a time (bg_asm24_lock) */
  bg_asm24_op ops[BG_ASM24_QUEUE_OPS];
  size_t nops;
  uint8_t *arena;                 /* BG_ASM24_QUEUE_BYTES */
  size_t used;
  bg_usb_xfer *x;                 /* transfers of one flush */
  size_t capx;
  uint8_t *bounce;                /* SRAM padding, unaligned reads */
  size_t capbounce;
};

/* Run x[0..n) as one round trip; on a retryable failure resynchronise (bg_asm24_recover) and re-send from the
 * start of the failed command, up to BG_ASM24_RETRIES times (asm24.c explains why that is safe). what names
 * the request; the final error names it, the failed command and its address. */
int bg_asm24_run(bg_asm24 *b, bg_usb_xfer *x, size_t n, const char *what);
/* After a failed batch, with nothing in flight: clear both bulk endpoints' halts (bg_usb_resync) and report the
 * recovery at BG_DEBUG=1: what (the operation), why (the failed transfer), resend (what goes again), retry. */
int bg_asm24_recover(bg_asm24 *b, const char *what, const char *why, const char *resend, int retry);
/* The queued writes as transfers at b->x[0..), followed by room for extra more; *n set. */
int bg_asm24_queue_xfers(bg_asm24 *b, size_t extra, size_t *n);
void bg_asm24_queue_clear(bg_asm24 *b);
int bg_asm24_bounce(bg_asm24 *b, size_t n);

#endif
