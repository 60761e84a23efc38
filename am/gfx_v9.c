/* am/gfx_v9.c: GFX of GC 9.4.3 (MI300, Linux gfx_v9_4_3.c) and GC 9.5.0 (MI350) (am/am_ip.h). */
#include "am/am_ip.h"

/* MEC v1 loaded by the PSP (REG_LIST, no RLC autoload), v9 MQDs, an AQL queue on every XCC. No HCQ queues yet: they
 * need AQL queues with PRED_EXEC'd PM4 (tinygrad tinygrad/runtime/ops_amd.py AMDComputeAQLQueue). */
const struct bg_am_gfx_ip bg_am_gfx_v9_4_3 = {
    .name = "gfx_v9_4_3", .bringup = true, .queues = false, .rlc_autoload = false, .aql = true, .pm4_gen = 9};
/* GC 9.5.0 opens (discovery, firmware, PSP, SMU) but has no GFX bring-up yet. */
const struct bg_am_gfx_ip bg_am_gfx_v9_5_0 = {
    .name = "gfx_v9_5_0", .bringup = false, .queues = false, .rlc_autoload = false, .aql = true, .pm4_gen = 9};
