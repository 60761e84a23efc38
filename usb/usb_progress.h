/* usb/usb_progress.h: a terminal progress bar for long USB copies (bg_asm24_progress_fn).
 *
 * Drawn on stderr, and only when stderr is a terminal: logs and pipes stay clean. Internal. */
#ifndef BG_USB_USB_PROGRESS_H
#define BG_USB_USB_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct bg_usb_progress {
  const char *label;   /* "copy in" */
  double t0;           /* set by bg_usb_progress_init */
  int last_permille;   /* last drawn, -1 before the first */
  bool tty;
} bg_usb_progress;

void bg_usb_progress_init(bg_usb_progress *p, const char *label);
/* The callback: ctx is a bg_usb_progress. Ends the line when done == total. */
void bg_usb_progress_tty(void *ctx, uint64_t done, uint64_t total);
/* The line it would draw, for tests: "copy in [#####.....]  50.0%  12.3 MB/s". */
void bg_usb_progress_format(const bg_usb_progress *p, uint64_t done, uint64_t total, double secs, char *buf, size_t n);

#endif
