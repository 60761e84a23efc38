/* nv/nv_abi_gsp.h: the RM parameter blocks only the bare-metal path (GSP-RM over RPC, firmware 570.144) sends, with
 * the layouts of NVIDIA/open-gpu-kernel-modules tag 570.124.04 (alloc/alloc_channel.h, ctrl/ctrl0080/ctrl0080gpu.h,
 * ctrl/ctrl2080/ctrl2080fifo.h, ctrl2080gpu.h, ctrl2080internal.h, ctrl/ctrl90f1.h), which tinygrad's generated
 * tinygrad/runtime/autogen/nv_570.py repeats. The kernel module's ioctl path never sends these: it has RM-side memory
 * objects and UVM where GSP-RM is handed physical memory descriptors. */
#ifndef BG_NV_ABI_GSP_H
#define BG_NV_ABI_GSP_H

#include "nv_abi.h"

/* NV_MEMORY_DESC_PARAMS: memory GSP-RM is handed by address (RM's own ADDR_* apertures). */
#define NV_ADDRESS_SPACE_NONE 0u   /* ADDR_UNKNOWN: no memory */
#define NV_ADDRESS_SPACE_SYSMEM 1u
#define NV_ADDRESS_SPACE_FBMEM 2u  /* video memory */
typedef struct {
  uint64_t base, size;
  uint32_t addressSpace, cacheAttrib;
} bg_nv_memory_desc;
NV_ABI_ASSERT_SIZE(bg_nv_memory_desc, 24);

/* NV_CHANNEL_ALLOC_PARAMS in full (570): the memory descriptors follow hObjectEccError. */
typedef struct {
  uint32_t hObjectError, hObjectBuffer;
  uint64_t gpFifoOffset;
  uint32_t gpFifoEntries, flags, hContextShare, hVASpace;
  uint32_t hUserdMemory[8];
  uint64_t userdOffset[8];
  uint32_t engineType, cid, subDeviceId, hObjectEccError;
  bg_nv_memory_desc instanceMem, userdMem, ramfcMem, mthdbufMem;
  uint32_t hPhysChannelGroup, internalFlags;
  bg_nv_memory_desc errorNotifierMem, eccErrorNotifierMem;
  uint32_t ProcessID, SubProcessID;
  uint32_t encryptIv[3], decryptIv[3], hmacNonce[8];
  uint32_t tpcConfigID;
  uint32_t pad;
} bg_nv_gsp_channel_alloc;
NV_ABI_ASSERT_SIZE(bg_nv_gsp_channel_alloc, 368);
NV_ABI_ASSERT_OFF(bg_nv_gsp_channel_alloc, engineType, 128);
NV_ABI_ASSERT_OFF(bg_nv_gsp_channel_alloc, instanceMem, 144);
NV_ABI_ASSERT_OFF(bg_nv_gsp_channel_alloc, mthdbufMem, 216);
NV_ABI_ASSERT_OFF(bg_nv_gsp_channel_alloc, internalFlags, 244);
NV_ABI_ASSERT_OFF(bg_nv_gsp_channel_alloc, errorNotifierMem, 248);
NV_ABI_ASSERT_OFF(bg_nv_gsp_channel_alloc, tpcConfigID, 360);

/* The golden channel's flags and internal flags: the values of RM's own internal channels (tinygrad
 * tinygrad/runtime/support/nv/ip.py NV_GSP.init_golden_image), and its class id 3. */
#define NV_GOLDEN_CHANNEL_FLAGS 0x200320u
#define NV_GOLDEN_CHANNEL_INTERNAL_FLAGS 0x1au
#define NV_GOLDEN_CHANNEL_CID 3u

/* NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2: the class list inline (no pointer crosses the RPC). */
#define NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2 0x800292u
#define NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE 100u
typedef struct {
  uint32_t numClasses;
  uint32_t classList[NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE];
} bg_nv0080_classlist_v2;
NV_ABI_ASSERT_SIZE(bg_nv0080_classlist_v2, 404);

/* NV2080_CTRL_CMD_FIFO_GET_DEVICE_INFO_TABLE: engineData[2] is the RM engine type, engineData[3] its runlist
 * (NV2080_CTRL_FIFO_ENGINE_INFO_TYPE_RM_ENGINE_TYPE = 2, _RUNLIST = 3). */
#define NV2080_CTRL_CMD_FIFO_GET_DEVICE_INFO_TABLE 0x20801112u
#define NV2080_FIFO_ENGINE_DATA_RM_ENGINE_TYPE 2u
#define NV2080_FIFO_ENGINE_DATA_RUNLIST 3u
typedef struct {
  uint32_t engineData[16];
  uint32_t pbdmaIds[2], pbdmaFaultIds[2];
  uint32_t numPbdmas;
  char engineName[16];
} bg_nv2080_fifo_device_entry;
NV_ABI_ASSERT_SIZE(bg_nv2080_fifo_device_entry, 100);
typedef struct {
  uint32_t baseIndex, numEntries;
  uint8_t bMore, pad[3];
  bg_nv2080_fifo_device_entry entries[32];
} bg_nv2080_fifo_device_info;
NV_ABI_ASSERT_SIZE(bg_nv2080_fifo_device_info, 3212);

/* NV90F1_CTRL_CMD_VASPACE_COPY_SERVER_RESERVED_PDES: the page-directory entries of a VA range RM keeps for itself,
 * in tables the client owns. */
#define NV90F1_CTRL_CMD_VASPACE_COPY_SERVER_RESERVED_PDES 0x90f10106u
typedef struct {
  uint64_t physAddress, size;
  uint32_t aperture;
  uint8_t pageShift, pad[3];
} bg_nv90f1_pde_level;
NV_ABI_ASSERT_SIZE(bg_nv90f1_pde_level, 24);
typedef struct {
  uint32_t hSubDevice, subDeviceId;
  uint64_t pageSize, virtAddrLo, virtAddrHi;
  uint32_t numLevelsToCopy, pad;
  bg_nv90f1_pde_level levels[6];
} bg_nv90f1_copy_server_reserved_pdes;
NV_ABI_ASSERT_SIZE(bg_nv90f1_copy_server_reserved_pdes, 184);

/* NV2080_CTRL_CMD_INTERNAL_STATIC_KGR_GET_CONTEXT_BUFFERS_INFO: {size, alignment} per context-buffer engine id
 * (NV0080_CTRL_FIFO_GET_ENGINE_CONTEXT_PROPERTIES_ENGINE_ID_*), per GR engine. */
#define NV2080_CTRL_CMD_INTERNAL_STATIC_KGR_GET_CONTEXT_BUFFERS_INFO 0x20800a32u
#define NV_CTX_ENGINE_ID_COUNT 26u
typedef struct {
  struct { uint32_t size, alignment; } engine[NV_CTX_ENGINE_ID_COUNT];
} bg_nv2080_gr_ctx_buffers;
typedef struct {
  bg_nv2080_gr_ctx_buffers engineContextBuffersInfo[8];
} bg_nv2080_kgr_ctx_buffers_info;
NV_ABI_ASSERT_SIZE(bg_nv2080_kgr_ctx_buffers_info, 1664);
/* The engine ids of the context buffers a compute channel needs (ctrl0080fifo.h). */
enum {
  NV_CTX_ID_GRAPHICS = 0, NV_CTX_ID_GRAPHICS_PATCH = 16, NV_CTX_ID_GRAPHICS_BUNDLE_CB = 17,
  NV_CTX_ID_GRAPHICS_PAGEPOOL_GLOBAL = 18, NV_CTX_ID_GRAPHICS_ATTRIBUTE_CB = 19, NV_CTX_ID_GRAPHICS_RTV_CB_GLOBAL = 20,
  NV_CTX_ID_GRAPHICS_FECS_EVENT = 23, NV_CTX_ID_GRAPHICS_PRIV_ACCESS_MAP = 24,
};

/* NV2080_CTRL_CMD_GPU_PROMOTE_CTX: hand GSP-RM the context buffers of a channel's engine. */
#define NV2080_CTRL_CMD_GPU_PROMOTE_CTX 0x2080012bu
#define NV2080_PROMOTE_CTX_MAX_ENTRIES 16u
typedef struct {
  uint64_t gpuPhysAddr, gpuVirtAddr, size;
  uint32_t physAttr;
  uint16_t bufferId;
  uint8_t bInitialize, bNonmapped;
} bg_nv2080_promote_entry;
NV_ABI_ASSERT_SIZE(bg_nv2080_promote_entry, 32);
typedef struct {
  uint32_t engineType, hClient, ChID, hChanClient, hObject, hVirtMemory;
  uint64_t virtAddress, size;
  uint32_t entryCount, pad;
  bg_nv2080_promote_entry promoteEntry[NV2080_PROMOTE_CTX_MAX_ENTRIES];
} bg_nv2080_promote_ctx;
NV_ABI_ASSERT_SIZE(bg_nv2080_promote_ctx, 560);
/* physAttr of a video-memory buffer (NV2080_CTRL_GPU_PROMOTE_CTX_PHYS_ATTR: aperture VIDMEM) */
#define NV_PROMOTE_PHYS_ATTR_VIDMEM 0x4u

/* NV2080_CTRL_CMD_INTERNAL_STATIC_KGR_GET_INFO: GR info inline, per GR engine ({index, data} at index). */
#define NV2080_CTRL_CMD_INTERNAL_STATIC_KGR_GET_INFO 0x20800a2au
#define NV2080_GR_INFO_MAX 58u
typedef struct {
  struct { uint32_t index, data; } engineInfo[8][NV2080_GR_INFO_MAX];
} bg_nv2080_kgr_info;
NV_ABI_ASSERT_SIZE(bg_nv2080_kgr_info, 3712);

#endif
