/* am/gfx_v11.c: GFX of GC 11.x (Linux gfx_v11_0.c) and GC 12.x (gfx_v12_0.c) (am/am_ip.h). */
#include "am/am_ip.h"

/* RS64 MEC started at the firmware's start address, RLC autoloaded by the PSP, PM4 queues. */
const struct bg_am_gfx_ip bg_am_gfx_v11_0 = {
    .name = "gfx_v11_0", .bringup = true, .queues = true, .rlc_autoload = true, .aql = false, .pm4_gen = 11};
/* GC 12 also starts the RS64 PFP and ME. */
const struct bg_am_gfx_ip bg_am_gfx_v12_0 = {
    .name = "gfx_v12_0", .bringup = true, .queues = true, .rlc_autoload = true, .aql = false, .pm4_gen = 12};
