/* nv/nv_push.h: pushbuffer methods of the host (GPFIFO channel), compute and copy classes.
 *
 * Method header (NVIDIA/open-gpu-doc classes/host/clc56f.h, NVC56F_DMA_INCR_*): SEC_OP 31:29 = 1 (incrementing),
 * COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 = method byte offset >> 2; `count` data dwords follow, written to
 * consecutive methods. Subchannel 0 reaches the channel class (host methods < 0x100), 1 the compute object and 4 the
 * copy object (SET_OBJECT binds a class to a subchannel; tinygrad tinygrad/runtime/ops_nv.py uses the same numbers).
 *
 * Each encoder writes into dw (room for the BG_NV_*_DW dwords it names) and returns the dwords written. The _DW_*
 * constants are dword indices of the fields lowering patches. */
#ifndef BG_NV_PUSH_H
#define BG_NV_PUSH_H

#include <stdbool.h>
#include <stdint.h>

enum { BG_NV_SUBC_HOST = 0, BG_NV_SUBC_COMPUTE = 1, BG_NV_SUBC_COPY = 4 };

/* Host methods (NVC56F_*, clc56f.h; the same offsets in HOPPER_CHANNEL_GPFIFO_A clc86f.h). */
#define NVC56F_NON_STALL_INTERRUPT 0x0020u
#define NVC56F_SEM_ADDR_LO 0x005cu /* then SEM_ADDR_HI 0x60, SEM_PAYLOAD_LO 0x64, SEM_PAYLOAD_HI 0x68, SEM_EXECUTE 0x6c */
#define NVC56F_SEM_EXECUTE 0x006cu
#define NVC56F_WFI 0x0078u
/* SEM_EXECUTE fields */
#define NVC56F_SEM_EXECUTE_OPERATION_RELEASE 1u
#define NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ 3u
#define NVC56F_SEM_EXECUTE_RELEASE_WFI_EN (1u << 20)
#define NVC56F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT (1u << 24)
#define NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP_EN (1u << 25)

/* Compute methods: the same offsets in AMPERE_COMPUTE_A/B, ADA_COMPUTE_A, HOPPER_COMPUTE_A and BLACKWELL_COMPUTE_*
 * (open-gpu-doc classes/compute/clc6c0.h, clc9c0.h, clcbc0.h, clcec0.h). */
#define NVC6C0_SET_OBJECT 0x0000u
#define NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_A 0x02a0u /* A: upper, B: lower */
#define NVC6C0_SEND_PCAS_A 0x02b4u                       /* QMD address >> 8 */
#define NVC6C0_SEND_SIGNALING_PCAS2_B 0x02c0u
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE 9u
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A 0x02e4u /* A: size upper, B: size lower, C: max SM count */
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_A 0x0790u               /* A: address upper, B: lower */
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A 0x07b0u
#define NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI 0x1698u
#define NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI_ALL 0x1011u /* INSTRUCTION 0, GLOBAL_DATA 4, CONSTANT 12 */

/* Copy methods (open-gpu-doc classes/dma-copy/clc6b5.h, clc7b5.h, clc8b5.h: same offsets). */
#define NVC6B5_SET_OBJECT 0x0000u
#define NVC6B5_LAUNCH_DMA 0x0300u
#define NVC6B5_OFFSET_IN_UPPER 0x0400u /* then OFFSET_IN_LOWER, OFFSET_OUT_UPPER, OFFSET_OUT_LOWER */
#define NVC6B5_LINE_LENGTH_IN 0x0418u
/* LAUNCH_DMA: DATA_TRANSFER_TYPE 1:0 = NON_PIPELINED (2), SRC_MEMORY_LAYOUT 7 = PITCH, DST_MEMORY_LAYOUT 8 = PITCH */
#define NVC6B5_LAUNCH_DMA_COPY 0x182u
/* The copy engine moves at most this many bytes per LAUNCH_DMA here (LINE_LENGTH_IN is 32 bits; 2 GiB as tinygrad). */
#define BG_NV_COPY_CHUNK ((uint64_t)2 << 30)

/* Shared and local memory windows of the compute object (tinygrad tinygrad/runtime/ops_nv.py NVDevice). */
#define BG_NV_SHARED_WINDOW 0x729400000000ull
#define BG_NV_LOCAL_WINDOW 0x729300000000ull

static inline uint32_t bg_nv_method(unsigned subc, uint32_t method, unsigned count) {
  return 1u << 29 | (count & 0x1fffu) << 16 | (subc & 7u) << 13 | (method >> 2 & 0xfffu);
}

/* SEM_EXECUTE values (clc56f.h): wait = ACQ_CIRC_GEQ, 64-bit payload; signal = RELEASE, WFI, 64-bit, timestamp. */
#define BG_NV_SEM_ACQUIRE_GEQ64 (NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ | NVC56F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT)
#define BG_NV_SEM_RELEASE64_TS                                                                                       \
  (NVC56F_SEM_EXECUTE_OPERATION_RELEASE | NVC56F_SEM_EXECUTE_RELEASE_WFI_EN | NVC56F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT | \
   NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP_EN)

/* Host semaphore: SEM_ADDR_LO/HI (a little-endian u64 at dword 1), SEM_PAYLOAD_LO/HI (u64 at dword 3), SEM_EXECUTE. */
enum { BG_NV_SEM_DW = 6, BG_NV_SEM_DW_ADDR = 1, BG_NV_SEM_DW_PAYLOAD = 3, BG_NV_SEM_DW_EXECUTE = 5 };
unsigned bg_nv_push_semaphore(uint32_t *dw, uint64_t addr, uint64_t payload, uint32_t execute);
enum { BG_NV_NON_STALL_DW = 2, BG_NV_WFI_DW = 2 };
unsigned bg_nv_push_non_stall_interrupt(uint32_t *dw);
unsigned bg_nv_push_wfi(uint32_t *dw);
/* SET_OBJECT of class cls on subchannel subc. */
enum { BG_NV_SET_OBJECT_DW = 2 };
unsigned bg_nv_push_set_object(uint32_t *dw, unsigned subc, uint32_t cls);
/* An (upper, lower) pair of a compute method A/B: 3 dwords. */
enum { BG_NV_PAIR_DW = 3 };
unsigned bg_nv_push_compute_pair(uint32_t *dw, uint32_t method_a, uint64_t value);
/* INVALIDATE_SHADER_CACHES_NO_WFI (instruction, global data, constant): the memory barrier. */
enum { BG_NV_BARRIER_DW = 2 };
unsigned bg_nv_push_barrier(uint32_t *dw);
/* SEND_PCAS_A (qmd_va >> 8) + SEND_SIGNALING_PCAS2_B (PREFETCH_SCHEDULE). */
enum { BG_NV_PCAS_DW = 4, BG_NV_PCAS_DW_QMD = 1 };
unsigned bg_nv_push_send_pcas(uint32_t *dw, uint64_t qmd_va);
/* SET_SHADER_LOCAL_MEMORY_A/B (buffer VA) + NON_THROTTLED_A/B/C (bytes per TPC, 0xff SMs). */
enum { BG_NV_LOCAL_MEMORY_DW = 3 + 4 };
unsigned bg_nv_push_local_memory(uint32_t *dw, uint64_t va, uint64_t bytes_per_tpc);
/* One copy of n bytes (n <= BG_NV_COPY_CHUNK): OFFSET_IN_UPPER/LOWER, OFFSET_OUT_UPPER/LOWER (src hi, src lo, dst hi,
 * dst lo at dwords 1..4), LINE_LENGTH_IN, LAUNCH_DMA 0x182. */
enum { BG_NV_COPY_DW = 9, BG_NV_COPY_DW_SRC_HI = 1, BG_NV_COPY_DW_SRC_LO = 2, BG_NV_COPY_DW_DST_HI = 3,
       BG_NV_COPY_DW_DST_LO = 4 };
unsigned bg_nv_push_copy(uint32_t *dw, uint64_t dst, uint64_t src, uint32_t n);

#endif
