/* tests/mockgpu/cdna3/cdna3_valu.h: the gfx9 VALU opcode map onto the RDNA3 core's lane operations. */
#ifndef BG_MOCKGPU_CDNA3_VALU_H
#define BG_MOCKGPU_CDNA3_VALU_H

#include "cdna3_internal.h"
#include "rdna3_valu.h"

#define CDNA3_VOP_COUNT 0x300
/* Ops of gfx9 without an RDNA3 counterpart of the same semantics, numbered after the RDNA3 VOP3 space. */
enum {
  C3L_FIRST = 0x400, C3L_FMAC_F64 = C3L_FIRST, C3L_FMAC_F32, C3L_FMAMK_F32, C3L_FMAAK_F32, C3L_MOV_B64,
  C3L_LSHL_ADD_U64, C3L_READFIRSTLANE, C3L_READLANE, C3L_WRITELANE, C3L_MBCNT_LO, C3L_MBCNT_HI, C3L_COUNT,
};
extern const uint16_t cdna3_vop_map[CDNA3_VOP_COUNT];       /* gfx9 op -> RDNA3 op or C3L_*; 0: not implemented */
extern const rdna3_vop_info cdna3_local_info[C3L_COUNT - C3L_FIRST];

#endif
