/* nv/nv_version.h: the nvidia kernel module's version and the ABI family baregpu uses for it (nv_abi_family.h). */
#ifndef BG_NV_VERSION_H
#define BG_NV_VERSION_H

#include <stddef.h>

#include "nv_abi_family.h"

typedef struct {
  unsigned major, minor, patch; /* "580.65.06" -> 580, 65, 6; "570.144" -> 570, 144, 0 */
  enum bg_nv_family family;
  char text[32];                /* the version as the driver wrote it */
} bg_nv_driver_version;

/* Parse "MAJOR.MINOR[.PATCH]" (what NV_ESC_CHECK_VERSION_STR returns) and map it to a family. -BG_EFORMAT for text
 * that is not a version, -BG_ENOTSUP for a version of no known family (the message names it and the known ones). */
int bg_nv_version_parse(const char *text, bg_nv_driver_version *out);
/* The same from the text of /proc/driver/nvidia/version (its "NVRM version:" line). */
int bg_nv_version_parse_proc(const char *proc_text, bg_nv_driver_version *out);
/* Read and parse a /proc/driver/nvidia/version file (path given so tests can point elsewhere). */
int bg_nv_version_read_proc(const char *path, bg_nv_driver_version *out);
/* The family of a driver major version; -BG_ENOTSUP naming `what` and the known families for any other. */
int bg_nv_family_of_major(unsigned major, const char *what, enum bg_nv_family *out);
/* "570.x, 580.x, 610.x" */
const char *bg_nv_known_families(void);

#endif
