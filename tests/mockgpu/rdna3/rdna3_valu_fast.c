/* tests/mockgpu/rdna3/rdna3_valu_fast.c: the VALU opcodes that dominate compiled kernels (address
 * arithmetic, float multiply-add, moves, selects by bit ops) as whole-wave loops over 32-bit
 * operand arrays. Same results as rdna3_valu_lane.c; taken only without modifiers, carries or
 * 16/64-bit operands. Inactive lanes are computed too (pure arithmetic, no traps) and dropped. */
#include "rdna3_float.h"
#include "rdna3_ops.h"
#include "rdna3_valu.h"

#define LANES for (unsigned l = 0; l < RDNA3_LANES; l++)
#define F(x) rdna3_f(x)
#define U(x) rdna3_u(x)

bool rdna3_valu_fast(unsigned op, const uint32_t *a, const uint32_t *b, const uint32_t *c, uint32_t *d) {
  switch (op) {
  case V_MOV_B32: LANES d[l] = a[l]; return true;
  case V_ADD_NC_U32: LANES d[l] = a[l] + b[l]; return true;
  case V_SUB_NC_U32: LANES d[l] = a[l] - b[l]; return true;
  case V_SUBREV_NC_U32: LANES d[l] = b[l] - a[l]; return true;
  case V_AND_B32: LANES d[l] = a[l] & b[l]; return true;
  case V_OR_B32: LANES d[l] = a[l] | b[l]; return true;
  case V_XOR_B32: LANES d[l] = a[l] ^ b[l]; return true;
  case V_LSHLREV_B32: LANES d[l] = b[l] << (a[l] & 31); return true;
  case V_LSHRREV_B32: LANES d[l] = b[l] >> (a[l] & 31); return true;
  case V_ASHRREV_I32: LANES d[l] = (uint32_t)((int32_t)b[l] >> (a[l] & 31)); return true;
  case V_MUL_LO_U32: LANES d[l] = a[l] * b[l]; return true;
  case V_MUL_HI_U32: LANES d[l] = (uint32_t)(((uint64_t)a[l] * b[l]) >> 32); return true;
  case V_MAX_U32: LANES d[l] = a[l] > b[l] ? a[l] : b[l]; return true;
  case V_MIN_U32: LANES d[l] = a[l] < b[l] ? a[l] : b[l]; return true;
  case V_MAX_I32: LANES d[l] = (int32_t)a[l] > (int32_t)b[l] ? a[l] : b[l]; return true;
  case V_MIN_I32: LANES d[l] = (int32_t)a[l] < (int32_t)b[l] ? a[l] : b[l]; return true;
  case V_LSHL_OR_B32: LANES d[l] = (a[l] << (b[l] & 31)) | c[l]; return true;
  case V_LSHL_ADD_U32: LANES d[l] = (a[l] << (b[l] & 31)) + c[l]; return true;
  case V_ADD_LSHL_U32: LANES d[l] = (a[l] + b[l]) << (c[l] & 31); return true;
  case V_ADD3_U32: LANES d[l] = a[l] + b[l] + c[l]; return true;
  case V_OR3_B32: LANES d[l] = a[l] | b[l] | c[l]; return true;
  case V_XAD_U32: LANES d[l] = (a[l] ^ b[l]) + c[l]; return true;
  case V_AND_OR_B32: LANES d[l] = (a[l] & b[l]) | c[l]; return true;
  case V_ADD_F32: LANES d[l] = U(F(a[l]) + F(b[l])); return true;
  case V_SUB_F32: LANES d[l] = U(F(a[l]) - F(b[l])); return true;
  case V_SUBREV_F32: LANES d[l] = U(F(b[l]) - F(a[l])); return true;
  case V_MUL_F32: LANES d[l] = U(F(a[l]) * F(b[l])); return true;
  case V_FMA_F32: LANES d[l] = U(fmaf(F(a[l]), F(b[l]), F(c[l]))); return true;
  case V_MAX_F32: LANES d[l] = U(fmaxf(F(a[l]), F(b[l]))); return true;
  case V_MIN_F32: LANES d[l] = U(fminf(F(a[l]), F(b[l]))); return true;
  default: return false;
  }
}

bool rdna3_valu_fast_carry(unsigned op, const uint32_t *a, const uint32_t *b, uint32_t cin, uint32_t *d,
                           uint32_t *cout) {
  uint32_t m = 0;
  switch (op) {
  case V_CNDMASK_B32: LANES d[l] = (cin >> l) & 1 ? b[l] : a[l]; break;
  case V_ADD_CO_U32: LANES { d[l] = a[l] + b[l]; m |= (uint32_t)(d[l] < a[l]) << l; } break;
  case V_SUB_CO_U32: LANES { d[l] = a[l] - b[l]; m |= (uint32_t)(b[l] > a[l]) << l; } break;
  case V_SUBREV_CO_U32: LANES { d[l] = b[l] - a[l]; m |= (uint32_t)(a[l] > b[l]) << l; } break;
  case V_ADD_CO_CI_U32:
    LANES {
      uint64_t t = (uint64_t)a[l] + b[l] + ((cin >> l) & 1);
      d[l] = (uint32_t)t;
      m |= (uint32_t)(t >> 32) << l;
    }
    break;
  case V_SUB_CO_CI_U32:
    LANES {
      uint64_t t = (uint64_t)b[l] + ((cin >> l) & 1);
      d[l] = (uint32_t)(a[l] - t);
      m |= (uint32_t)(t > a[l]) << l;
    }
    break;
  default: return false;
  }
  *cout = m;
  return true;
}

/* V_CMP_{lt,eq,le,gt,ne/lg,ge}_{i32,u32,f32}: the compare mask of all 32 lanes. */
bool rdna3_valu_fast_cmp(unsigned op, const uint32_t *a, const uint32_t *b, uint32_t *mask) {
  uint32_t m = 0;
  switch (op & 0x7f) {
  case V_CMP_F_I32 + 1: LANES m |= (uint32_t)((int32_t)a[l] < (int32_t)b[l]) << l; break;
  case V_CMP_F_I32 + 2: case V_CMP_F_U32 + 2: LANES m |= (uint32_t)(a[l] == b[l]) << l; break;
  case V_CMP_F_I32 + 3: LANES m |= (uint32_t)((int32_t)a[l] <= (int32_t)b[l]) << l; break;
  case V_CMP_F_I32 + 4: LANES m |= (uint32_t)((int32_t)a[l] > (int32_t)b[l]) << l; break;
  case V_CMP_F_I32 + 5: case V_CMP_F_U32 + 5: LANES m |= (uint32_t)(a[l] != b[l]) << l; break;
  case V_CMP_F_I32 + 6: LANES m |= (uint32_t)((int32_t)a[l] >= (int32_t)b[l]) << l; break;
  case V_CMP_F_U32 + 1: LANES m |= (uint32_t)(a[l] < b[l]) << l; break;
  case V_CMP_F_U32 + 3: LANES m |= (uint32_t)(a[l] <= b[l]) << l; break;
  case V_CMP_F_U32 + 4: LANES m |= (uint32_t)(a[l] > b[l]) << l; break;
  case V_CMP_F_U32 + 6: LANES m |= (uint32_t)(a[l] >= b[l]) << l; break;
  case V_CMP_F_F32 + 1: LANES m |= (uint32_t)(F(a[l]) < F(b[l])) << l; break;
  case V_CMP_F_F32 + 2: LANES m |= (uint32_t)(F(a[l]) == F(b[l])) << l; break;
  case V_CMP_F_F32 + 3: LANES m |= (uint32_t)(F(a[l]) <= F(b[l])) << l; break;
  case V_CMP_F_F32 + 4: LANES m |= (uint32_t)(F(a[l]) > F(b[l])) << l; break;
  case V_CMP_F_F32 + 6: LANES m |= (uint32_t)(F(a[l]) >= F(b[l])) << l; break;
  case V_CMP_F_F32 + 13: LANES m |= (uint32_t)!(F(a[l]) == F(b[l])) << l; break;  /* neq */
  default: return false;
  }
  *mask = m;
  return true;
}
