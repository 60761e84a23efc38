/* nv/nv_status.h: RM status codes (NV_STATUS, nvstatuscodes.h) as names. */
#ifndef BG_NV_STATUS_H
#define BG_NV_STATUS_H

#include <stdint.h>

#define NV_OK 0x0u
#define NV_ERR_INVALID_ARGUMENT 0x1fu
#define NV_ERR_INVALID_CLASS 0x22u
#define NV_ERR_INVALID_OBJECT_HANDLE 0x33u
#define NV_ERR_INSUFFICIENT_PERMISSIONS 0x1bu
#define NV_ERR_NOT_SUPPORTED 0x56u

/* "NV_ERR_INVALID_CLASS" for 0x22; NULL for a value nvstatuscodes.h does not name. */
const char *bg_nv_status_name(uint32_t status);
/* bg_nv_status_name, or "unknown NV_STATUS" */
const char *bg_nv_status_str(uint32_t status);

#endif
