/* hcq/target.h: internal helpers of DEV= parsing. */
#ifndef BG_HCQ_TARGET_H
#define BG_HCQ_TARGET_H
#include <stdbool.h>

/* Is iface ("" for none) a documented interface of kind? */
bool bg_target_known_iface(const char *kind, const char *iface);
/* Apply a visibility filter ("0,2", "1-3", "" for all) to ndevs devices: map[i] = physical index of
 * visible device i. Returns the number visible. */
int bg_visible_filter(const char *indices, int ndevs, int *map, int max);
#endif
