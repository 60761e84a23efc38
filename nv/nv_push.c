/* nv/nv_push.c: pushbuffer method encoders (nv_push.h). Method offsets and field values: NVIDIA/open-gpu-doc
 * classes/host/clc56f.h, classes/compute/clc6c0.h + clcbc0.h, classes/dma-copy/clc6b5.h + clc8b5.h. */
#include "nv/nv_push.h"

unsigned bg_nv_push_semaphore(uint32_t *dw, uint64_t addr, uint64_t payload, uint32_t execute) {
  dw[0] = bg_nv_method(BG_NV_SUBC_HOST, NVC56F_SEM_ADDR_LO, 5);
  dw[1] = (uint32_t)addr;
  dw[2] = (uint32_t)(addr >> 32);
  dw[3] = (uint32_t)payload;
  dw[4] = (uint32_t)(payload >> 32);
  dw[5] = execute;
  return BG_NV_SEM_DW;
}

unsigned bg_nv_push_non_stall_interrupt(uint32_t *dw) {
  dw[0] = bg_nv_method(BG_NV_SUBC_HOST, NVC56F_NON_STALL_INTERRUPT, 1);
  dw[1] = 0;
  return BG_NV_NON_STALL_DW;
}

unsigned bg_nv_push_wfi(uint32_t *dw) {
  dw[0] = bg_nv_method(BG_NV_SUBC_HOST, NVC56F_WFI, 1);
  dw[1] = 0; /* WFI_SCOPE CURRENT_SCG_TYPE */
  return BG_NV_WFI_DW;
}

unsigned bg_nv_push_set_object(uint32_t *dw, unsigned subc, uint32_t cls) {
  dw[0] = bg_nv_method(subc, NVC6C0_SET_OBJECT, 1);
  dw[1] = cls;
  return BG_NV_SET_OBJECT_DW;
}

unsigned bg_nv_push_compute_pair(uint32_t *dw, uint32_t method_a, uint64_t value) {
  dw[0] = bg_nv_method(BG_NV_SUBC_COMPUTE, method_a, 2);
  dw[1] = (uint32_t)(value >> 32);
  dw[2] = (uint32_t)value;
  return BG_NV_PAIR_DW;
}

unsigned bg_nv_push_barrier(uint32_t *dw) {
  dw[0] = bg_nv_method(BG_NV_SUBC_COMPUTE, NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI, 1);
  dw[1] = NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI_ALL;
  return BG_NV_BARRIER_DW;
}

unsigned bg_nv_push_send_pcas(uint32_t *dw, uint64_t qmd_va) {
  dw[0] = bg_nv_method(BG_NV_SUBC_COMPUTE, NVC6C0_SEND_PCAS_A, 1);
  dw[1] = (uint32_t)(qmd_va >> 8);
  dw[2] = bg_nv_method(BG_NV_SUBC_COMPUTE, NVC6C0_SEND_SIGNALING_PCAS2_B, 1);
  dw[3] = NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE;
  return BG_NV_PCAS_DW;
}

unsigned bg_nv_push_local_memory(uint32_t *dw, uint64_t va, uint64_t bytes_per_tpc) {
  unsigned n = bg_nv_push_compute_pair(dw, NVC6C0_SET_SHADER_LOCAL_MEMORY_A, va);
  dw[n++] = bg_nv_method(BG_NV_SUBC_COMPUTE, NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A, 3);
  dw[n++] = (uint32_t)(bytes_per_tpc >> 32);
  dw[n++] = (uint32_t)bytes_per_tpc;
  dw[n++] = 0xff; /* MAX_SM_COUNT */
  return n;
}

unsigned bg_nv_push_copy(uint32_t *dw, uint64_t dst, uint64_t src, uint32_t n) {
  dw[0] = bg_nv_method(BG_NV_SUBC_COPY, NVC6B5_OFFSET_IN_UPPER, 4);
  dw[1] = (uint32_t)(src >> 32);
  dw[2] = (uint32_t)src;
  dw[3] = (uint32_t)(dst >> 32);
  dw[4] = (uint32_t)dst;
  dw[5] = bg_nv_method(BG_NV_SUBC_COPY, NVC6B5_LINE_LENGTH_IN, 1);
  dw[6] = n;
  dw[7] = bg_nv_method(BG_NV_SUBC_COPY, NVC6B5_LAUNCH_DMA, 1);
  dw[8] = NVC6B5_LAUNCH_DMA_COPY;
  return BG_NV_COPY_DW;
}
