/* nv/nv_abi_dev.h: the parameter blocks and flag values the open path, the memory allocator and the fault readout
 * send to RM (nv_dev.c, nv_mem.c, nv_fault.c), beyond those of nv_abi.h. Written from NVIDIA/open-gpu-kernel-modules
 * tags 570.124.04 and 580.65.06 (identical in both): src/common/sdk/nvidia/inc/nvos.h (NV_MEMORY_ALLOCATION_PARAMS,
 * NVOS02/NVOS32/NVOS33/NVOS46 flags), ctrl/ctrl83de/ctrl83dedebug.h, ctrl/ctrl2080/ctrl2080perf.h, class/cl0080.h,
 * alloc/alloc_channel.h. Sizes and offsets pinned by _Static_assert. */
#ifndef BG_NV_ABI_DEV_H
#define BG_NV_ABI_DEV_H

#include "nv_abi.h"

typedef struct { /* NV_MEMORY_ALLOCATION_PARAMS (nvos.h), for NV1_MEMORY_USER / NV01_MEMORY_SYSTEM */
  uint32_t owner, type, flags, width, height;
  int32_t pitch;
  uint32_t attr, attr2, format, comprCovg, zcullCovg, pad0;
  uint64_t rangeLo, rangeHi, size, alignment, offset, limit, address;
  uint32_t ctagOffset, hVASpace, internalflags, tag;
  int32_t numaNode;
  uint32_t pad1;
} bg_nv_memory_alloc;
NV_ABI_ASSERT_SIZE(bg_nv_memory_alloc, 128);
NV_ABI_ASSERT_OFF(bg_nv_memory_alloc, attr, 24);
NV_ABI_ASSERT_OFF(bg_nv_memory_alloc, format, 32);
NV_ABI_ASSERT_OFF(bg_nv_memory_alloc, size, 64);
NV_ABI_ASSERT_OFF(bg_nv_memory_alloc, limit, 88);
NV_ABI_ASSERT_OFF(bg_nv_memory_alloc, numaNode, 120);

#define NVOS32_TYPE_IMAGE 0u
#define NVOS32_TYPE_NOTIFIER 13u
#define NVOS32_ATTR_PAGE_SIZE_HUGE 3u                  /* attr 24:23 */
#define NVOS32_ATTR_LOCATION_PCI 1u                    /* attr 26:25 */
#define NVOS32_ATTR_PHYSICALITY_CONTIGUOUS 2u          /* attr 28:27 */
#define NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS 3u
#define NVOS32_ATTR2_ZBC_PREFER_NO_ZBC 1u              /* attr2 1:0 */
#define NVOS32_ATTR2_GPU_CACHEABLE_YES 1u              /* attr2 3:2 */
#define NVOS32_ATTR2_GPU_CACHEABLE_NO 2u
#define NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB 1u             /* attr2 21:20 */
#define NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT 0x1u
#define NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE 0x100u
#define NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED 0x4000u
#define NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED 0x8000u
#define NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM 0x10000u
#define NV_MEMORY_FORMAT_BLOCK_LINEAR_DEFAULT 6u     /* NVOS32_ATTR_FORMAT... tinygrad's format=6 (pitch, kind generic) */

/* NVOS02 flags of an OS descriptor: PHYSICALITY 4:4 NONCONTIGUOUS, COHERENCY 15:12 CACHED, MAPPING 31:30 NO_MAP */
#define NVOS02_FLAGS_HOST_OS_DESCRIPTOR ((1u << 4) | (1u << 12) | (1u << 30))
/* NVOS33 flags: CACHING_TYPE 25:23 */
#define NVOS33_FLAGS_CACHING_TYPE_WRITECOMBINED (2u << 23)
/* NVOS46 flags: CACHE_SNOOP 4:4 ENABLE, PAGE_SIZE 11:8 4KB (1), DMA_OFFSET_FIXED 15:15 TRUE */
#define NVOS46_FLAGS_FIXED_SNOOPED_4K ((1u << 4) | (1u << 8) | (1u << 15))

#define NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES 0u /* cl0080.h */
#define NV2080_ENGINE_TYPE_GRAPHICS 1u                             /* cl2080_notification.h */
#define NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC 1u           /* cl9067.h */
/* NV2080_CTRL_PERF_BOOST_FLAGS: CMD 1:0 BOOST_TO_MAX (2), CUDA 4:4 YES, CUDA_PRIORITY 6:6 HIGH (ctrl2080perf.h) */
#define NV2080_PERF_BOOST_FLAGS_CUDA_MAX ((1u << 4) | (1u << 6) | 2u)
#define NV2080_PERF_BOOST_DURATION_INFINITE 0xffffffffu

/* ---- GT200_DEBUGGER controls (ctrl83dedebug.h) ---- */
#define NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES 0x83de030cu
#define NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO 0x83de0328u
#define NV83DE_CTRL_DEBUG_MAX_SMS_PER_CALL 100
typedef struct { /* NV83DE_SM_ERROR_STATE_REGISTERS */
  uint32_t hwwGlobalEsr, hwwWarpEsr, hwwWarpEsrPc, hwwGlobalEsrReportMask, hwwWarpEsrReportMask, pad0;
  uint64_t hwwEsrAddr, hwwWarpEsrPc64;
  uint32_t hwwCgaEsr, hwwCgaEsrReportMask;
} bg_nv83de_sm_error_state;
NV_ABI_ASSERT_SIZE(bg_nv83de_sm_error_state, 48);
NV_ABI_ASSERT_OFF(bg_nv83de_sm_error_state, hwwEsrAddr, 24);
typedef struct { /* NV83DE_CTRL_DEBUG_READ_ALL_SM_ERROR_STATES_PARAMS */
  uint32_t hTargetChannel, numSMsToRead;
  bg_nv83de_sm_error_state smErrorStateArray[NV83DE_CTRL_DEBUG_MAX_SMS_PER_CALL];
  uint32_t mmuFaultInfo;
  uint8_t mmuFaultValid, pad0[3]; /* NV83DE_MMU_FAULT_INFO {NvBool valid; NvU32 faultInfo} */
  uint32_t mmuFaultFaultInfo, startingSM;
} bg_nv83de_read_all_sm_error_states;
NV_ABI_ASSERT_SIZE(bg_nv83de_read_all_sm_error_states, 4824);
NV_ABI_ASSERT_OFF(bg_nv83de_read_all_sm_error_states, mmuFaultValid, 4812);
NV_ABI_ASSERT_OFF(bg_nv83de_read_all_sm_error_states, startingSM, 4820);
#define NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_MAX_ENTRIES 4
typedef struct {
  uint64_t faultAddress;
  uint32_t faultType, accessType;
} bg_nv83de_mmu_fault_entry;
typedef struct { /* NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS */
  bg_nv83de_mmu_fault_entry mmuFaultInfoList[NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_MAX_ENTRIES];
  uint32_t count, pad0;
} bg_nv83de_read_mmu_fault_info;
NV_ABI_ASSERT_SIZE(bg_nv83de_read_mmu_fault_info, 72);
NV_ABI_ASSERT_OFF(bg_nv83de_read_mmu_fault_info, count, 64);

/* ---- NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2 (ctrl2080thermal.h): a list of instructions; the one used reads
 * sensor 0 (GET_STATUS_SENSOR_READING, degrees C). ---- */
#define NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2 0x20800513u
#define NV2080_THERMAL_SYSTEM_API_VER 1u
#define NV2080_THERMAL_SYSTEM_API_REV 0u
#define NV2080_THERMAL_SYSTEM_GET_STATUS_SENSOR_READING_OPCODE 0x1500u
#define NV2080_THERMAL_SYSTEM_INSTRUCTION_MAX_COUNT 0x20
typedef struct { /* NV2080_CTRL_THERMAL_SYSTEM_INSTRUCTION; operands is a union of 8 u32 */
  uint32_t result, executed, opcode;
  uint32_t operands[8]; /* GET_STATUS_SENSOR_READING: sensorIndex, (s32) value */
} bg_nv2080_thermal_instruction;
NV_ABI_ASSERT_SIZE(bg_nv2080_thermal_instruction, 44);
typedef struct { /* NV2080_CTRL_THERMAL_SYSTEM_EXECUTE_V2_PARAMS */
  uint32_t clientAPIVersion, clientAPIRevision, clientInstructionSizeOf, executeFlags, successfulInstructions,
      instructionListSize;
  bg_nv2080_thermal_instruction instructionList[NV2080_THERMAL_SYSTEM_INSTRUCTION_MAX_COUNT];
} bg_nv2080_thermal_execute_v2;
NV_ABI_ASSERT_SIZE(bg_nv2080_thermal_execute_v2, 1432);

/* NvNotification (nvtypes.h/cl906f.h): the channel's error notifier. RM writes entry 0 (NV_CHANNELGPFIFO_NOTIFICATION_
 * TYPE_ERROR) when the channel is torn down by an error: info32 = the robust-channel error (13 GR exception, 31 MMU
 * fault, ...), status non-zero. */
typedef struct {
  uint64_t timeStamp;
  uint32_t info32;
  uint16_t info16, status;
} bg_nv_notification;
NV_ABI_ASSERT_SIZE(bg_nv_notification, 16);

#endif
