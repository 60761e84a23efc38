/* nv/nv_abi.c: the per-family layout table of nv_abi_family.h, built from the structs there (offsetof/sizeof, so
 * the table and the pinned structs cannot disagree). */
#include "nv_abi_family.h"

#define LAYOUT(fam, os46, vas, sched, chan, uvmfree)                                                                 \
  {                                                                                                                  \
    .family = (fam), .os46_size = sizeof(os46), .os46_status_off = offsetof(os46, status),                          \
    .os46_dma_offset_off = offsetof(os46, dmaOffset), .vaspace_alloc_size = sizeof(vas),                             \
    .gpfifo_schedule_size = sizeof(sched), .channel_alloc_size = sizeof(chan),                                       \
    .channel_userd_mem_off = offsetof(chan, hUserdMemory), .channel_userd_offset_off = offsetof(chan, userdOffset), \
    .channel_engine_type_off = offsetof(chan, engineType), .uvm_free_size = sizeof(uvmfree),                        \
    .uvm_free_status_off = offsetof(uvmfree, rmStatus)                                                               \
  }

static const bg_nv_abi_layout layouts[] = {
    LAYOUT(NV_FAMILY_570, bg_nv_os46_map_dma_570, bg_nv_vaspace_alloc_570, bg_nva06c_gpfifo_schedule_570, bg_nv_channel_alloc_570,
           bg_nv_uvm_free_570),
    LAYOUT(NV_FAMILY_580, bg_nv_os46_map_dma_580, bg_nv_vaspace_alloc_580, bg_nva06c_gpfifo_schedule_580, bg_nv_channel_alloc_570,
           bg_nv_uvm_free_570),
    LAYOUT(NV_FAMILY_610, bg_nv_os46_map_dma_580, bg_nv_vaspace_alloc_580, bg_nva06c_gpfifo_schedule_580, bg_nv_channel_alloc_610,
           bg_nv_uvm_free_610),
};

const bg_nv_abi_layout *bg_nv_abi_layout_of(enum bg_nv_family family) {
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    if (layouts[i].family == family) return &layouts[i];
  return NULL;
}
