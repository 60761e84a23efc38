/* nv/nv_classes.h: which usermode, GPFIFO, compute and copy classes a device gets, chosen from its class list
 * (NV0080_CTRL_CMD_GPU_GET_CLASSLIST), the QMD version of a compute class, and sm_XY from the GR SM version. */
#ifndef BG_NV_CLASSES_H
#define BG_NV_CLASSES_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t usermode, gpfifo, compute, copy;
  int qmd_version;        /* launch descriptor version for `compute`: 3 Ampere/Ada, 4 Hopper, 5 Blackwell */
  const char *generation; /* "Ampere", "Ada", "Hopper", "Blackwell" (from the compute class) */
} bg_nv_class_choice;

/* First match per role from the per-generation preference lists (newest first). -BG_ENOTSUP naming the role, the
 * candidates and the device's classes when a role has no match. */
int bg_nv_classes_select(const uint32_t *classes, size_t n, bg_nv_class_choice *out);
/* "HOPPER_COMPUTE_A" for 0xcbc0, ...; NULL for a class not named here. */
const char *bg_nv_class_name(uint32_t cls);
/* 3, 4 or 5 for a compute class; -BG_ENOTSUP for any other value. */
int bg_nv_qmd_version(uint32_t compute_class);
/* NV2080_CTRL_GR_INFO_SM_VERSION_* (0x806, 0x900, ...) -> sm number (86, 90, ...) and "sm_86"; -BG_ENOTSUP for an
 * unknown encoding. buf may be NULL. */
int bg_nv_sm_arch(uint32_t sm_version, unsigned *sm, char *buf, size_t cap);

#endif
