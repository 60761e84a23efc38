/* nv/nv_abi_family.h: the structures whose layout differs between the nvidia driver families baregpu knows.
 * 570 and 580: read from NVIDIA/open-gpu-kernel-modules tags 570.124.04 and 580.65.06 (nvos.h, alloc/alloc_channel.h,
 * ctrl/ctrla06f/ctrla06fgpfifo.h, kernel-open/nvidia-uvm/uvm_ioctl.h). 610: the repository here has no 610 tag; its
 * differences are those of tinygrad's tinygrad/runtime/autogen/nv_610.py (generated from tag 610.43.03): the channel
 * parameters gain hHandleVASpace at 32, UVM_FREE_PARAMS loses `length` (as it already did in 590.44.01). */
#ifndef BG_NV_ABI_FAMILY_H
#define BG_NV_ABI_FAMILY_H

#include "nv_abi.h"

enum bg_nv_family { NV_FAMILY_570 = 570, NV_FAMILY_580 = 580, NV_FAMILY_610 = 610 };

/* NVOS46_PARAMETERS: NV_ESC_RM_MAP_MEMORY_DMA. 580 added flags2 and kindOverride after flags. */
typedef struct {
  uint32_t hClient, hDevice, hDma, hMemory;
  uint64_t offset, length;
  uint32_t flags, pad0;
  uint64_t dmaOffset;
  uint32_t status, pad1;
} bg_nv_os46_map_dma_570;
NV_ABI_ASSERT_SIZE(bg_nv_os46_map_dma_570, 56);
NV_ABI_ASSERT_OFF(bg_nv_os46_map_dma_570, flags, 32);
NV_ABI_ASSERT_OFF(bg_nv_os46_map_dma_570, dmaOffset, 40);
NV_ABI_ASSERT_OFF(bg_nv_os46_map_dma_570, status, 48);
typedef struct { /* 580 and 610 */
  uint32_t hClient, hDevice, hDma, hMemory;
  uint64_t offset, length;
  uint32_t flags, flags2, kindOverride, pad0;
  uint64_t dmaOffset;
  uint32_t status, pad1;
} bg_nv_os46_map_dma_580;
NV_ABI_ASSERT_SIZE(bg_nv_os46_map_dma_580, 64);
NV_ABI_ASSERT_OFF(bg_nv_os46_map_dma_580, kindOverride, 40);
NV_ABI_ASSERT_OFF(bg_nv_os46_map_dma_580, dmaOffset, 48);
NV_ABI_ASSERT_OFF(bg_nv_os46_map_dma_580, status, 56);

/* NV_VASPACE_ALLOCATION_PARAMETERS (FERMI_VASPACE_A): 580 appended pasid. */
#define NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED (1u << 3)
#define NV_VASPACE_FLAGS_ENABLE_PAGE_FAULTING (1u << 6)
typedef struct {
  uint32_t index, flags;
  uint64_t vaSize, vaStartInternal, vaLimitInternal;
  uint32_t bigPageSize, pad0;
  uint64_t vaBase;
} bg_nv_vaspace_alloc_570;
NV_ABI_ASSERT_SIZE(bg_nv_vaspace_alloc_570, 48);
NV_ABI_ASSERT_OFF(bg_nv_vaspace_alloc_570, vaBase, 40);
typedef struct { /* 580 and 610 */
  uint32_t index, flags;
  uint64_t vaSize, vaStartInternal, vaLimitInternal;
  uint32_t bigPageSize, pad0;
  uint64_t vaBase;
  uint32_t pasid, pad1;
} bg_nv_vaspace_alloc_580;
NV_ABI_ASSERT_SIZE(bg_nv_vaspace_alloc_580, 56);
NV_ABI_ASSERT_OFF(bg_nv_vaspace_alloc_580, pasid, 48);

/* NVA06C/NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS: 580 appended bSkipEnable (the size RM checks grows 2 -> 3). */
typedef struct { uint8_t bEnable, bSkipSubmit; } bg_nva06c_gpfifo_schedule_570;
NV_ABI_ASSERT_SIZE(bg_nva06c_gpfifo_schedule_570, 2);
typedef struct { uint8_t bEnable, bSkipSubmit, bSkipEnable; } bg_nva06c_gpfifo_schedule_580; /* 580 and 610 */
NV_ABI_ASSERT_SIZE(bg_nva06c_gpfifo_schedule_580, 3);

/* NV_CHANNEL_ALLOC_PARAMS (alloc_channel.h), for the *_CHANNEL_GPFIFO_* classes. The tail after engineType (cid,
 * subDeviceId, hObjectEccError, the reserved memory descriptors and confidential-compute fields) is not used by
 * baregpu and kept as bytes so the size RM checks matches. NV_MAX_SUBDEVICES = 8. */
#define NV_CHANNEL_MAX_SUBDEVICES 8
typedef struct { /* 570 and 580 */
  uint32_t hObjectError, hObjectBuffer;
  uint64_t gpFifoOffset;
  uint32_t gpFifoEntries, flags, hContextShare, hVASpace;
  uint32_t hUserdMemory[NV_CHANNEL_MAX_SUBDEVICES];
  uint64_t userdOffset[NV_CHANNEL_MAX_SUBDEVICES];
  uint32_t engineType, cid, subDeviceId, hObjectEccError;
  uint8_t reserved[224];
} bg_nv_channel_alloc_570;
NV_ABI_ASSERT_SIZE(bg_nv_channel_alloc_570, 368);
NV_ABI_ASSERT_OFF(bg_nv_channel_alloc_570, hContextShare, 24);
NV_ABI_ASSERT_OFF(bg_nv_channel_alloc_570, hUserdMemory, 32);
NV_ABI_ASSERT_OFF(bg_nv_channel_alloc_570, userdOffset, 64);
NV_ABI_ASSERT_OFF(bg_nv_channel_alloc_570, engineType, 128);
typedef struct { /* 610: hHandleVASpace inserted at 32, everything after shifts by 8 (tinygrad nv_610.py) */
  uint32_t hObjectError, hObjectBuffer;
  uint64_t gpFifoOffset;
  uint32_t gpFifoEntries, flags, hContextShare, hVASpace, hHandleVASpace;
  uint32_t hUserdMemory[NV_CHANNEL_MAX_SUBDEVICES];
  uint32_t pad0;
  uint64_t userdOffset[NV_CHANNEL_MAX_SUBDEVICES];
  uint32_t engineType, cid, subDeviceId, hObjectEccError;
  uint8_t reserved[224];
} bg_nv_channel_alloc_610;
NV_ABI_ASSERT_SIZE(bg_nv_channel_alloc_610, 376);
NV_ABI_ASSERT_OFF(bg_nv_channel_alloc_610, hUserdMemory, 36);
NV_ABI_ASSERT_OFF(bg_nv_channel_alloc_610, userdOffset, 72);
NV_ABI_ASSERT_OFF(bg_nv_channel_alloc_610, engineType, 136);

/* UVM_FREE_PARAMS */
typedef struct {
  uint64_t base, length;
  uint32_t rmStatus, pad;
} bg_nv_uvm_free_570; /* 570 and 580 */
NV_ABI_ASSERT_SIZE(bg_nv_uvm_free_570, 24);
typedef struct {
  uint64_t base;
  uint32_t rmStatus, pad;
} bg_nv_uvm_free_610;
NV_ABI_ASSERT_SIZE(bg_nv_uvm_free_610, 16);

/* What the rest of nv/ needs to know per family: the parameter sizes RM checks and where the fields that move sit. */
typedef struct {
  enum bg_nv_family family;
  uint32_t os46_size, os46_status_off, os46_dma_offset_off; /* NV_ESC_RM_MAP_MEMORY_DMA */
  uint32_t vaspace_alloc_size;                              /* FERMI_VASPACE_A params */
  uint32_t gpfifo_schedule_size;                            /* NVA06C_CTRL_CMD_GPFIFO_SCHEDULE params */
  uint32_t channel_alloc_size, channel_userd_mem_off, channel_userd_offset_off, channel_engine_type_off;
  uint32_t uvm_free_size, uvm_free_status_off;
  uint32_t fb_info_v2_size;      /* NV2080_CTRL_CMD_FB_GET_INFO_V2: 4 + 8 * (0x39 on 570, 0x80 on 580) */
  uint32_t gpu_name_string_size; /* NV2080_CTRL_CMD_GPU_GET_NAME_STRING: 132 (ascii | unicode); 68 from 595.45.04 on
                                    (unicode dropped), taken for 610 (no 610 header here to confirm) */
} bg_nv_abi_layout;

/* The layout of a family, or NULL for a value that is not one. */
const bg_nv_abi_layout *bg_nv_abi_layout_of(enum bg_nv_family family);

#endif
