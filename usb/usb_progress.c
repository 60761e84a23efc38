/* usb/usb_progress.c: the terminal progress bar of usb/usb_progress.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "usb/usb_progress.h"
#include "util/clock.h"

#define BAR_WIDTH 30

static double now_s(void) { return (double)bg_now_ns() * 1e-9; }

void bg_usb_progress_init(bg_usb_progress *p, const char *label) {
  p->label = label;
  p->t0 = now_s();
  p->last_permille = -1;
  p->tty = isatty(STDERR_FILENO) == 1;
}

void bg_usb_progress_format(const bg_usb_progress *p, uint64_t done, uint64_t total, double secs, char *buf, size_t n) {
  double frac = total ? (double)done / (double)total : 1.0;
  char bar[BAR_WIDTH + 1];
  int fill = (int)(frac * BAR_WIDTH + 0.5);
  for (int i = 0; i < BAR_WIDTH; i++) bar[i] = i < fill ? '#' : '.';
  bar[BAR_WIDTH] = 0;
  double mbs = secs > 0 ? (double)done / secs / 1e6 : 0;
  snprintf(buf, n, "%s [%s] %5.1f%%  %.1f MB/s", p->label, bar, frac * 100.0, mbs);
}

void bg_usb_progress_tty(void *ctx, uint64_t done, uint64_t total) {
  bg_usb_progress *p = ctx;
  if (!p->tty) return;
  int pm = total ? (int)(done * 1000 / total) : 1000;
  if (pm == p->last_permille) return;
  p->last_permille = pm;
  char line[160];
  bg_usb_progress_format(p, done, total, now_s() - p->t0, line, sizeof(line));
  fprintf(stderr, "\r%s%s", line, done >= total ? "\n" : "");
  fflush(stderr);
}
