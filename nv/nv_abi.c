/* nv/nv_abi.c: the per-family layout table of nv_abi_family.h, built from the structs there (offsetof/sizeof, so
 * the table and the pinned structs cannot disagree). */
#include "nv_abi_family.h"

#define LAYOUT(fam, os46, vas, sched, chan, uvmfree, fb_entries, name_size)                                       \
  {                                                                                                              \
    .family = (fam), .os46_size = sizeof(os46), .os46_status_off = offsetof(os46, status),                      \
    .os46_dma_offset_off = offsetof(os46, dmaOffset), .vaspace_alloc_size = sizeof(vas),                         \
    .gpfifo_schedule_size = sizeof(sched), .channel_alloc_size = sizeof(chan),                                   \
    .channel_userd_mem_off = offsetof(chan, hUserdMemory),                                                       \
    .channel_userd_offset_off = offsetof(chan, userdOffset), .channel_engine_type_off = offsetof(chan, engineType), \
    .uvm_free_size = sizeof(uvmfree), .uvm_free_status_off = offsetof(uvmfree, rmStatus),                        \
    .fb_info_v2_size = offsetof(bg_nv2080_fb_get_info_v2, fbInfoList) + (fb_entries) * sizeof(bg_nv2080_fb_info), \
    .gpu_name_string_size = (name_size)                                                                          \
  }

/* the name string's ascii-only form (595.45.04 on): flags + ascii[64] */
#define NAME_ASCII_ONLY (offsetof(bg_nv2080_gpu_name_string, gpuNameString) + NV2080_GPU_MAX_NAME_STRING_LENGTH)

static const bg_nv_abi_layout layouts[] = {
    LAYOUT(NV_FAMILY_570, bg_nv_os46_map_dma_570, bg_nv_vaspace_alloc_570, bg_nva06c_gpfifo_schedule_570,
           bg_nv_channel_alloc_570, bg_nv_uvm_free_570, 0x39, sizeof(bg_nv2080_gpu_name_string)),
    LAYOUT(NV_FAMILY_580, bg_nv_os46_map_dma_580, bg_nv_vaspace_alloc_580, bg_nva06c_gpfifo_schedule_580,
           bg_nv_channel_alloc_570, bg_nv_uvm_free_570, NV2080_FB_INFO_MAX_LIST_SIZE, sizeof(bg_nv2080_gpu_name_string)),
    LAYOUT(NV_FAMILY_610, bg_nv_os46_map_dma_580, bg_nv_vaspace_alloc_580, bg_nva06c_gpfifo_schedule_580,
           bg_nv_channel_alloc_610, bg_nv_uvm_free_610, NV2080_FB_INFO_MAX_LIST_SIZE, NAME_ASCII_ONLY),
};

const bg_nv_abi_layout *bg_nv_abi_layout_of(enum bg_nv_family family) {
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    if (layouts[i].family == family) return &layouts[i];
  return NULL;
}
