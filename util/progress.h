/* util/progress.h: a one-line progress bar on stderr for long loads and training loops (file loads,
 * datasets, epochs), drawn only when stderr is a terminal and BG_PROGRESS is not 0, at most ten times
 * a second, so a log or CI output never fills with bar updates. */
#ifndef BG_UTIL_PROGRESS_H
#define BG_UTIL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct bg_progress {
  char label[48];
  uint64_t total, done;
  uint64_t start_ns, last_draw_ns;
  bool on;              /* drawing (a terminal, BG_PROGRESS not 0) */
  bool bytes;           /* show done/total as MiB and MiB/s instead of counts */
} bg_progress;

/* Starts a bar for `total` units (bytes when `bytes`); nothing is drawn when stderr is not a terminal. */
void bg_progress_start(bg_progress *p, const char *label, uint64_t total, bool bytes);
/* Adds n units done; redraws at most every 100 ms. `extra` (may be NULL) is appended, e.g. "loss 0.31". */
void bg_progress_add(bg_progress *p, uint64_t n, const char *extra);
/* Draws the final state and ends the line (nothing when not drawing). */
void bg_progress_end(bg_progress *p);

#endif
