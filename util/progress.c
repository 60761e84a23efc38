/* util/progress.c: the progress bar of util/progress.h. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/env.h"
#include "util/progress.h"

void bg_progress_start(bg_progress *p, const char *label, uint64_t total, bool bytes) {
  memset(p, 0, sizeof *p);
  snprintf(p->label, sizeof p->label, "%s", label ? label : "");
  p->total = total;
  p->bytes = bytes;
  long on = 1;
  if (bg_env_int("BG_PROGRESS", &on) < 0) on = 0;   /* a bad value was reported by bg_env_check */
  p->on = on && isatty(STDERR_FILENO);
  p->start_ns = bg_now_ns();
}

static void draw(bg_progress *p, const char *extra, uint64_t now) {
  enum { WIDTH = 30 };
  double frac = p->total ? (double)p->done / (double)p->total : 0.0;
  if (frac > 1.0) frac = 1.0;
  char bar[WIDTH + 1];
  int full = (int)(frac * WIDTH);
  for (int i = 0; i < WIDTH; i++) bar[i] = i < full ? '#' : '.';
  bar[WIDTH] = 0;
  double secs = (double)(now - p->start_ns) / 1e9;
  char amount[64];
  if (p->bytes) {
    double mib = (double)p->done / 1048576.0;
    snprintf(amount, sizeof amount, "%.0f/%.0f MiB %.0f MiB/s", mib, (double)p->total / 1048576.0,
             secs > 0 ? mib / secs : 0.0);
  } else {
    snprintf(amount, sizeof amount, "%llu/%llu", (unsigned long long)p->done, (unsigned long long)p->total);
  }
  fprintf(stderr, "\r%s [%s] %3.0f%% %s %.1fs%s%s\033[K", p->label, bar, frac * 100.0, amount, secs,
          extra ? " " : "", extra ? extra : "");
  fflush(stderr);
  p->last_draw_ns = now;
}

void bg_progress_add(bg_progress *p, uint64_t n, const char *extra) {
  p->done += n;
  if (!p->on) return;
  uint64_t now = bg_now_ns();
  if (p->last_draw_ns && now - p->last_draw_ns < 100000000ull && p->done < p->total) return;
  draw(p, extra, now);
}

void bg_progress_end(bg_progress *p) {
  if (!p->on) return;
  draw(p, NULL, bg_now_ns());
  fputc('\n', stderr);
  p->on = false;
}
