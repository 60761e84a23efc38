/* nv/nv_abi.h: the ioctl structures baregpu sends to the nvidia kernel module (RM escapes on /dev/nvidiactl and
 * /dev/nvidiaN, UVM ioctls on /dev/nvidia-uvm), the control commands and parameter structs issue 14 uses, and the
 * object classes. Layouts are written here from NVIDIA/open-gpu-kernel-modules (MIT), tags 570.124.04 and 580.65.06:
 * src/common/sdk/nvidia/inc/nvos.h, kernel-open/common/inc/nv-ioctl.h, nv-ioctl-numbers.h,
 * src/nvidia/arch/nvalloc/unix/include/nv_escape.h, nv-unix-nvos-params-wrappers.h, kernel-open/nvidia-uvm/uvm_ioctl.h,
 * uvm_linux_ioctl.h, ctrl/ and class/ headers. Every size and field offset is pinned by a _Static_assert below.
 * Structures whose layout differs between the 570, 580 and 610 driver families live in nv_abi_family.h. */
#ifndef BG_NV_ABI_H
#define BG_NV_ABI_H

#include <stddef.h>
#include <stdint.h>

#define NV_ABI_ASSERT_SIZE(t, n) _Static_assert(sizeof(t) == (n), #t " must be " #n " bytes (open-gpu-kernel-modules)")
#define NV_ABI_ASSERT_OFF(t, f, n) _Static_assert(offsetof(t, f) == (n), #t "." #f " must be at " #n)

/* ---- ioctl encoding (Linux _IOWR('F', nr, size): dir RW = 3 in bits 31:30, size in 29:16, type 'F', nr). The RM
 * escapes use their NV_ESC_* value as nr (nv_escape.h); the frontend ones are NV_IOCTL_BASE (200) + n
 * (nv-ioctl-numbers.h). RM reports its status inside the struct; ioctl() itself returns 0. */
#define NV_IOCTL_MAGIC 'F'
#define NV_IOCTL_BASE 200
#define NV_IOCTL_SIZE_MAX 0x3fffu /* _IOC_SIZEBITS = 14 */
#define NV_IOWR(nr, size) \
  (0xc0000000u | (((uint32_t)(size) & NV_IOCTL_SIZE_MAX) << 16) | ((uint32_t)NV_IOCTL_MAGIC << 8) | (uint32_t)(nr))

/* RM escapes (nv_escape.h) */
#define NV_ESC_RM_ALLOC_MEMORY 0x27 /* NVOS02 with fd; sent on /dev/nvidiaN */
#define NV_ESC_RM_FREE 0x29
#define NV_ESC_RM_CONTROL 0x2a
#define NV_ESC_RM_ALLOC 0x2b
#define NV_ESC_RM_MAP_MEMORY 0x4e
#define NV_ESC_RM_UNMAP_MEMORY 0x4f
#define NV_ESC_RM_MAP_MEMORY_DMA 0x57
#define NV_ESC_RM_UNMAP_MEMORY_DMA 0x58
/* frontend escapes (nv-ioctl-numbers.h) */
#define NV_ESC_CARD_INFO (NV_IOCTL_BASE + 0)
#define NV_ESC_REGISTER_FD (NV_IOCTL_BASE + 1)
#define NV_ESC_CHECK_VERSION_STR (NV_IOCTL_BASE + 10)

/* ---- RM escape parameter blocks (nvos.h); identical in 570, 580 and 610 ---- */
typedef struct { /* NVOS00_PARAMETERS: NV_ESC_RM_FREE */
  uint32_t hRoot, hObjectParent, hObjectOld, status;
} bg_nv_os00_free;
NV_ABI_ASSERT_SIZE(bg_nv_os00_free, 16);
NV_ABI_ASSERT_OFF(bg_nv_os00_free, status, 12);

typedef struct { /* NVOS21_PARAMETERS: NV_ESC_RM_ALLOC */
  uint32_t hRoot, hObjectParent, hObjectNew, hClass;
  uint64_t pAllocParms;
  uint32_t paramsSize, status;
} bg_nv_os21_alloc;
NV_ABI_ASSERT_SIZE(bg_nv_os21_alloc, 32);
NV_ABI_ASSERT_OFF(bg_nv_os21_alloc, pAllocParms, 16);
NV_ABI_ASSERT_OFF(bg_nv_os21_alloc, paramsSize, 24);
NV_ABI_ASSERT_OFF(bg_nv_os21_alloc, status, 28);

typedef struct { /* NVOS54_PARAMETERS: NV_ESC_RM_CONTROL */
  uint32_t hClient, hObject, cmd, flags;
  uint64_t params;
  uint32_t paramsSize, status;
} bg_nv_os54_control;
NV_ABI_ASSERT_SIZE(bg_nv_os54_control, 32);
NV_ABI_ASSERT_OFF(bg_nv_os54_control, params, 16);
NV_ABI_ASSERT_OFF(bg_nv_os54_control, status, 28);

typedef struct { /* NVOS02_PARAMETERS: NV_ESC_RM_ALLOC_MEMORY (system memory, e.g. OS descriptors) */
  uint32_t hRoot, hObjectParent, hObjectNew, hClass, flags, pad0;
  uint64_t pMemory, limit;
  uint32_t status, pad1;
} bg_nv_os02_alloc_memory;
NV_ABI_ASSERT_SIZE(bg_nv_os02_alloc_memory, 48);
NV_ABI_ASSERT_OFF(bg_nv_os02_alloc_memory, pMemory, 24);
NV_ABI_ASSERT_OFF(bg_nv_os02_alloc_memory, limit, 32);
NV_ABI_ASSERT_OFF(bg_nv_os02_alloc_memory, status, 40);

typedef struct { /* nv_ioctl_nvos02_parameters_with_fd (nv-unix-nvos-params-wrappers.h) */
  bg_nv_os02_alloc_memory params;
  int32_t fd, pad;
} bg_nv_os02_with_fd;
NV_ABI_ASSERT_SIZE(bg_nv_os02_with_fd, 56);
NV_ABI_ASSERT_OFF(bg_nv_os02_with_fd, fd, 48);

typedef struct { /* NVOS33_PARAMETERS: NV_ESC_RM_MAP_MEMORY (CPU mapping; the fd is then mmap()ed) */
  uint32_t hClient, hDevice, hMemory, pad0;
  uint64_t offset, length, pLinearAddress;
  uint32_t status, flags;
} bg_nv_os33_map_memory;
NV_ABI_ASSERT_SIZE(bg_nv_os33_map_memory, 48);
NV_ABI_ASSERT_OFF(bg_nv_os33_map_memory, offset, 16);
NV_ABI_ASSERT_OFF(bg_nv_os33_map_memory, pLinearAddress, 32);
NV_ABI_ASSERT_OFF(bg_nv_os33_map_memory, status, 40);
NV_ABI_ASSERT_OFF(bg_nv_os33_map_memory, flags, 44);

typedef struct { /* nv_ioctl_nvos33_parameters_with_fd */
  bg_nv_os33_map_memory params;
  int32_t fd, pad;
} bg_nv_os33_with_fd;
NV_ABI_ASSERT_SIZE(bg_nv_os33_with_fd, 56);
NV_ABI_ASSERT_OFF(bg_nv_os33_with_fd, fd, 48);

typedef struct { /* NVOS34_PARAMETERS: NV_ESC_RM_UNMAP_MEMORY */
  uint32_t hClient, hDevice, hMemory, pad0;
  uint64_t pLinearAddress;
  uint32_t status, flags;
} bg_nv_os34_unmap_memory;
NV_ABI_ASSERT_SIZE(bg_nv_os34_unmap_memory, 32);
NV_ABI_ASSERT_OFF(bg_nv_os34_unmap_memory, pLinearAddress, 16);
NV_ABI_ASSERT_OFF(bg_nv_os34_unmap_memory, status, 24);

/* ---- frontend escapes (nv-ioctl.h) ---- */
typedef struct { /* nv_ioctl_card_info_t (with nv_pci_info_t at 4) */
  uint8_t valid, pad0[3];
  uint32_t domain;
  uint8_t bus, slot, function, pad1;
  uint16_t vendor_id, device_id;
  uint32_t gpu_id;
  uint16_t interrupt_line, pad2;
  uint64_t reg_address, reg_size, fb_address, fb_size;
  uint32_t minor_number;
  uint8_t dev_name[10], pad3[2];
} bg_nv_card_info;
NV_ABI_ASSERT_SIZE(bg_nv_card_info, 72);
NV_ABI_ASSERT_OFF(bg_nv_card_info, domain, 4);
NV_ABI_ASSERT_OFF(bg_nv_card_info, vendor_id, 12);
NV_ABI_ASSERT_OFF(bg_nv_card_info, gpu_id, 16);
NV_ABI_ASSERT_OFF(bg_nv_card_info, reg_address, 24);
NV_ABI_ASSERT_OFF(bg_nv_card_info, fb_size, 48);
NV_ABI_ASSERT_OFF(bg_nv_card_info, minor_number, 56);
NV_ABI_ASSERT_OFF(bg_nv_card_info, dev_name, 60);
#define NV_CARD_INFO_MAX 64 /* NV_ESC_CARD_INFO fills an array of this many (nv.c: NV_MAX_DEVICES) */

typedef struct { /* nv_ioctl_register_fd_t: NV_ESC_REGISTER_FD on /dev/nvidiaN */
  int32_t ctl_fd;
} bg_nv_register_fd;
NV_ABI_ASSERT_SIZE(bg_nv_register_fd, 4);

#define NV_RM_API_VERSION_STRING_LENGTH 64
#define NV_RM_API_VERSION_CMD_QUERY '2' /* osapi.c: RM copies its version into versionString */
#define NV_RM_API_VERSION_REPLY_RECOGNIZED 1
typedef struct { /* nv_ioctl_rm_api_version_t: NV_ESC_CHECK_VERSION_STR */
  uint32_t cmd, reply;
  char versionString[NV_RM_API_VERSION_STRING_LENGTH];
} bg_nv_rm_api_version;
NV_ABI_ASSERT_SIZE(bg_nv_rm_api_version, 72);

/* ---- UVM (uvm_ioctl.h, uvm_linux_ioctl.h): the request is the raw number (UVM_IOCTL_BASE(i) = i); each params
 * struct ends with rmStatus. */
#define NV_UVM_INITIALIZE 0x30000001u
#define NV_UVM_REGISTER_GPU_VASPACE 25u
#define NV_UVM_REGISTER_CHANNEL 27u
#define NV_UVM_ENABLE_PEER_ACCESS 29u
#define NV_UVM_MAP_EXTERNAL_ALLOCATION 33u
#define NV_UVM_FREE 34u
#define NV_UVM_REGISTER_GPU 37u
#define NV_UVM_UNREGISTER_GPU 38u
#define NV_UVM_CREATE_EXTERNAL_RANGE 73u
#define NV_UVM_MM_INITIALIZE 75u

typedef struct { uint8_t uuid[16]; } bg_nv_uuid; /* NvProcessorUuid */

typedef struct {
  uint64_t flags;
  uint32_t rmStatus, pad;
} bg_nv_uvm_initialize;
NV_ABI_ASSERT_SIZE(bg_nv_uvm_initialize, 16);

typedef struct {
  int32_t uvmFd;
  uint32_t rmStatus;
} bg_nv_uvm_mm_initialize;
NV_ABI_ASSERT_SIZE(bg_nv_uvm_mm_initialize, 8);

typedef struct {
  bg_nv_uuid gpu_uuid;
  uint8_t numaEnabled, pad0[3];
  int32_t numaNodeId, rmCtrlFd;
  uint32_t hClient, hSmcPartRef, rmStatus;
} bg_nv_uvm_register_gpu;
NV_ABI_ASSERT_SIZE(bg_nv_uvm_register_gpu, 40);
NV_ABI_ASSERT_OFF(bg_nv_uvm_register_gpu, rmCtrlFd, 24);
NV_ABI_ASSERT_OFF(bg_nv_uvm_register_gpu, hClient, 28);
NV_ABI_ASSERT_OFF(bg_nv_uvm_register_gpu, rmStatus, 36);

typedef struct {
  bg_nv_uuid gpu_uuid;
  uint32_t rmStatus;
} bg_nv_uvm_unregister_gpu;
NV_ABI_ASSERT_SIZE(bg_nv_uvm_unregister_gpu, 20);

typedef struct {
  bg_nv_uuid gpuUuid;
  int32_t rmCtrlFd;
  uint32_t hClient, hVaSpace, rmStatus;
} bg_nv_uvm_register_gpu_vaspace;
NV_ABI_ASSERT_SIZE(bg_nv_uvm_register_gpu_vaspace, 32);
NV_ABI_ASSERT_OFF(bg_nv_uvm_register_gpu_vaspace, rmStatus, 28);

typedef struct {
  bg_nv_uuid gpuUuid;
  int32_t rmCtrlFd;
  uint32_t hClient, hChannel, pad0;
  uint64_t base, length;
  uint32_t rmStatus, pad1;
} bg_nv_uvm_register_channel;
NV_ABI_ASSERT_SIZE(bg_nv_uvm_register_channel, 56);
NV_ABI_ASSERT_OFF(bg_nv_uvm_register_channel, base, 32);
NV_ABI_ASSERT_OFF(bg_nv_uvm_register_channel, rmStatus, 48);

typedef struct {
  bg_nv_uuid gpuUuidA, gpuUuidB;
  uint32_t rmStatus;
} bg_nv_uvm_enable_peer_access;
NV_ABI_ASSERT_SIZE(bg_nv_uvm_enable_peer_access, 36);

typedef struct {
  uint64_t base, length;
  uint32_t rmStatus, pad;
} bg_nv_uvm_create_external_range;
NV_ABI_ASSERT_SIZE(bg_nv_uvm_create_external_range, 24);

#define NV_UVM_MAX_GPUS 256 /* UVM_MAX_GPUS_V2 */
#define NV_UVM_MAPPING_TYPE_READ_WRITE_ATOMIC 1 /* UvmGpuMappingTypeReadWriteAtomic */
typedef struct { /* UvmGpuMappingAttributes */
  bg_nv_uuid gpuUuid;
  uint32_t gpuMappingType, gpuCachingType, gpuFormatType, gpuElementBits, gpuCompressionType;
} bg_nv_uvm_gpu_mapping_attributes;
NV_ABI_ASSERT_SIZE(bg_nv_uvm_gpu_mapping_attributes, 36);

typedef struct {
  uint64_t base, length, offset;
  bg_nv_uvm_gpu_mapping_attributes perGpuAttributes[NV_UVM_MAX_GPUS];
  uint64_t gpuAttributesCount;
  int32_t rmCtrlFd;
  uint32_t hClient, hMemory, rmStatus;
} bg_nv_uvm_map_external_allocation;
NV_ABI_ASSERT_SIZE(bg_nv_uvm_map_external_allocation, 9264);
NV_ABI_ASSERT_OFF(bg_nv_uvm_map_external_allocation, perGpuAttributes, 24);
NV_ABI_ASSERT_OFF(bg_nv_uvm_map_external_allocation, gpuAttributesCount, 9240);
NV_ABI_ASSERT_OFF(bg_nv_uvm_map_external_allocation, rmCtrlFd, 9248);
NV_ABI_ASSERT_OFF(bg_nv_uvm_map_external_allocation, rmStatus, 9260);

/* ---- allocation parameters (class/ headers, nvos.h) that are the same in every family ---- */
typedef struct { /* NV0080_ALLOC_PARAMETERS (cl0080.h), for NV01_DEVICE_0 */
  uint32_t deviceId, hClientShare, hTargetClient, hTargetDevice, flags, pad0;
  uint64_t vaSpaceSize, vaStartInternal, vaLimitInternal;
  uint32_t vaMode, pad1;
} bg_nv_device_alloc;
NV_ABI_ASSERT_SIZE(bg_nv_device_alloc, 56);
NV_ABI_ASSERT_OFF(bg_nv_device_alloc, vaSpaceSize, 24);
NV_ABI_ASSERT_OFF(bg_nv_device_alloc, vaMode, 48);

typedef struct { uint32_t subDeviceId; } bg_nv_subdevice_alloc; /* NV2080_ALLOC_PARAMETERS (cl2080.h) */
NV_ABI_ASSERT_SIZE(bg_nv_subdevice_alloc, 4);

typedef struct { /* NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS (cl0070.h), for NV01_MEMORY_VIRTUAL */
  uint64_t offset, limit;
  uint32_t hVASpace, pad;
} bg_nv_memory_virtual_alloc;
NV_ABI_ASSERT_SIZE(bg_nv_memory_virtual_alloc, 24);

typedef struct { /* NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS (nvos.h), for KEPLER_CHANNEL_GROUP_A */
  uint32_t hObjectError, hObjectEccError, hVASpace, engineType;
  uint8_t bIsCallingContextVgpuPlugin, pad[3];
} bg_nv_channel_group_alloc;
NV_ABI_ASSERT_SIZE(bg_nv_channel_group_alloc, 20);
NV_ABI_ASSERT_OFF(bg_nv_channel_group_alloc, engineType, 12);

typedef struct { uint32_t hVASpace, flags, subctxId; } bg_nv_ctxshare_alloc; /* NV_CTXSHARE_ALLOCATION_PARAMETERS */
NV_ABI_ASSERT_SIZE(bg_nv_ctxshare_alloc, 12);

typedef struct { uint32_t hDebuggerClient_Obsolete, hAppClient, hClass3dObject; } bg_nv_debugger_alloc; /* cl83de.h */
NV_ABI_ASSERT_SIZE(bg_nv_debugger_alloc, 12);

/* ---- control commands (ctrl/ headers); cmd = class << 16 | category << 8 | message id ---- */
#define NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 0x13eu
#define NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 0x205u
#define NV0080_CTRL_CMD_GPU_GET_CLASSLIST 0x800201u
#define NV2080_CTRL_CMD_GPU_GET_GID_INFO 0x2080014au
#define NV2080_CTRL_CMD_GR_GET_INFO 0x20801201u
#define NV2080_CTRL_CMD_PERF_BOOST 0x2080200au
#define NV2080_CTRL_CMD_GPU_GET_NAME_STRING 0x20800110u
#define NV2080_CTRL_CMD_FB_GET_INFO_V2 0x20801303u
#define NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE 0x20802068u
#define NVA06C_CTRL_CMD_GPFIFO_SCHEDULE 0xa06c0101u
#define NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN 0xc36f0108u

#define NV0000_BUILD_VERSION_V2_STRING 256
typedef struct { /* NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS (ctrl0000system.h) */
  char driverVersionBuffer[NV0000_BUILD_VERSION_V2_STRING], versionBuffer[NV0000_BUILD_VERSION_V2_STRING];
  char driverBranch[NV0000_BUILD_VERSION_V2_STRING], titleBuffer[NV0000_BUILD_VERSION_V2_STRING];
  uint32_t changelistNumber, officialChangelistNumber;
} bg_nv0000_build_version_v2;
NV_ABI_ASSERT_SIZE(bg_nv0000_build_version_v2, 1032);

typedef struct { /* NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS (ctrl0000gpu.h) */
  uint32_t gpuId, gpuFlags, deviceInstance, subDeviceInstance, sliStatus, boardId, gpuInstance;
  int32_t numaId;
} bg_nv0000_gpu_id_info_v2;
NV_ABI_ASSERT_SIZE(bg_nv0000_gpu_id_info_v2, 32);
NV_ABI_ASSERT_OFF(bg_nv0000_gpu_id_info_v2, deviceInstance, 8);

typedef struct { /* NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS (ctrl0080gpu.h): classList NULL returns the count */
  uint32_t numClasses, pad;
  uint64_t classList;
} bg_nv0080_classlist;
NV_ABI_ASSERT_SIZE(bg_nv0080_classlist, 16);

#define NV2080_GPU_MAX_GID_LENGTH 256
#define NV2080_GID_FLAGS_FORMAT_BINARY 2u /* NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY in bits 1:1 */
typedef struct { /* NV2080_CTRL_GPU_GET_GID_INFO_PARAMS (ctrl2080gpu.h) */
  uint32_t index, flags, length;
  uint8_t data[NV2080_GPU_MAX_GID_LENGTH];
} bg_nv2080_gid_info;
NV_ABI_ASSERT_SIZE(bg_nv2080_gid_info, 268);
NV_ABI_ASSERT_OFF(bg_nv2080_gid_info, data, 12);

/* GR info indices (ctrl0080gr.h NV0080_CTRL_GR_INFO_INDEX_*, which ctrl2080gr.h aliases) */
#define NV2080_GR_INFO_INDEX_SM_VERSION 0x0cu
#define NV2080_GR_INFO_INDEX_MAX_WARPS_PER_SM 0x0du
#define NV2080_GR_INFO_INDEX_LITTER_NUM_GPCS 0x14u
#define NV2080_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC 0x17u
#define NV2080_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC 0x20u
typedef struct { uint32_t index, data; } bg_nv2080_gr_info; /* NV2080_CTRL_GR_INFO */
NV_ABI_ASSERT_SIZE(bg_nv2080_gr_info, 8);
typedef struct { /* NV2080_CTRL_GR_GET_INFO_PARAMS with NV2080_CTRL_GR_ROUTE_INFO {flags, route} at 16 */
  uint32_t grInfoListSize, pad0;
  uint64_t grInfoList;
  uint32_t routeFlags, pad1;
  uint64_t route;
} bg_nv2080_gr_get_info;
NV_ABI_ASSERT_SIZE(bg_nv2080_gr_get_info, 32);
NV_ABI_ASSERT_OFF(bg_nv2080_gr_get_info, routeFlags, 16);

typedef struct { uint32_t flags, duration; } bg_nv2080_perf_boost; /* NV2080_CTRL_PERF_BOOST_PARAMS (ctrl2080perf.h) */
NV_ABI_ASSERT_SIZE(bg_nv2080_perf_boost, 8);

/* For hcq_smi. The name string and FB info blocks are sent with the family's size (nv_abi_family.h): the fields
 * used here sit at the same offsets in every family, only the tails differ. */
#define NV2080_GPU_MAX_NAME_STRING_LENGTH 0x40
#define NV2080_GPU_NAME_STRING_FLAGS_TYPE_ASCII 0u
typedef struct { /* NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS (ctrl2080gpu.h), 570/580 layout: ascii[64] | unicode[64] */
  uint32_t gpuNameStringFlags;
  union {
    uint8_t ascii[NV2080_GPU_MAX_NAME_STRING_LENGTH];
    uint16_t unicode[NV2080_GPU_MAX_NAME_STRING_LENGTH];
  } gpuNameString;
} bg_nv2080_gpu_name_string;
NV_ABI_ASSERT_SIZE(bg_nv2080_gpu_name_string, 132);
NV_ABI_ASSERT_OFF(bg_nv2080_gpu_name_string, gpuNameString, 4);

#define NV2080_FB_INFO_INDEX_RAM_SIZE 0x07u       /* KiB */
#define NV2080_FB_INFO_INDEX_TOTAL_RAM_SIZE 0x08u /* KiB */
#define NV2080_FB_INFO_INDEX_HEAP_FREE 0x16u      /* KiB */
#define NV2080_FB_INFO_INDEX_USABLE_RAM_SIZE 0x20u
#define NV2080_FB_INFO_MAX_LIST_SIZE 0x80u /* 0x39 on 570 (ctrl2080fb.h) */
typedef struct { uint32_t index, data; } bg_nv2080_fb_info; /* NV2080_CTRL_FB_INFO */
typedef struct { /* NV2080_CTRL_FB_GET_INFO_V2_PARAMS (ctrl2080fb.h), 580 layout */
  uint32_t fbInfoListSize;
  bg_nv2080_fb_info fbInfoList[NV2080_FB_INFO_MAX_LIST_SIZE];
} bg_nv2080_fb_get_info_v2;
NV_ABI_ASSERT_SIZE(bg_nv2080_fb_get_info_v2, 1028);
NV_ABI_ASSERT_OFF(bg_nv2080_fb_get_info_v2, fbInfoList, 4);

typedef struct { uint32_t currPstate; } bg_nv2080_perf_current_pstate; /* ctrl2080perf.h */
NV_ABI_ASSERT_SIZE(bg_nv2080_perf_current_pstate, 4);

typedef struct { uint32_t workSubmitToken; } bg_nvc36f_work_submit_token; /* ctrlc36f.h */
NV_ABI_ASSERT_SIZE(bg_nvc36f_work_submit_token, 4);

/* ---- object classes (src/nvidia/generated/g_allclasses.h) ---- */
#define NV01_ROOT_CLIENT 0x41u
#define NV01_MEMORY_SYSTEM 0x3eu
#define NV1_MEMORY_USER 0x40u
#define NV01_MEMORY_VIRTUAL 0x70u
#define NV01_MEMORY_SYSTEM_OS_DESCRIPTOR 0x71u
#define NV01_DEVICE_0 0x80u
#define NV20_SUBDEVICE_0 0x2080u
#define GT200_DEBUGGER 0x83deu
#define FERMI_CONTEXT_SHARE_A 0x9067u
#define FERMI_VASPACE_A 0x90f1u
#define KEPLER_CHANNEL_GROUP_A 0xa06cu
#define TURING_USERMODE_A 0xc461u
#define AMPERE_USERMODE_A 0xc561u
#define HOPPER_USERMODE_A 0xc661u
#define BLACKWELL_USERMODE_A 0xc761u
#define AMPERE_CHANNEL_GPFIFO_A 0xc56fu
#define HOPPER_CHANNEL_GPFIFO_A 0xc86fu
#define BLACKWELL_CHANNEL_GPFIFO_A 0xc96fu
#define BLACKWELL_CHANNEL_GPFIFO_B 0xca6fu
#define AMPERE_DMA_COPY_A 0xc6b5u
#define AMPERE_DMA_COPY_B 0xc7b5u
#define HOPPER_DMA_COPY_A 0xc8b5u
#define BLACKWELL_DMA_COPY_A 0xc9b5u
#define BLACKWELL_DMA_COPY_B 0xcab5u
#define AMPERE_COMPUTE_A 0xc6c0u
#define AMPERE_COMPUTE_B 0xc7c0u
#define ADA_COMPUTE_A 0xc9c0u
#define HOPPER_COMPUTE_A 0xcbc0u
#define BLACKWELL_COMPUTE_A 0xcdc0u
#define BLACKWELL_COMPUTE_B 0xcec0u

#endif
