/* hcq/target.h: internal helpers of DEV= parsing. */
#ifndef BG_HCQ_TARGET_H
#define BG_HCQ_TARGET_H
#include <stdbool.h>

/* Largest index in a visibility filter or after KIND: (every PCI bus can list at most 256 functions
 * of one kind in practice; bounds the filter's loops). */
#define BG_TARGET_MAX_INDEX 255
/* Is kind (through iface, "" for any) built into this library? */
bool bg_target_built(const char *kind, const char *iface);
/* Apply a visibility filter ("0,2", "1-3", "" for all) to ndevs devices: map[i] = physical index of
 * visible device i. Returns the number visible. */
int bg_visible_filter(const char *indices, int ndevs, int *map, int max);
#endif
