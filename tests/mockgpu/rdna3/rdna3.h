/* tests/mockgpu/rdna3/rdna3.h: a wave32 RDNA3 (gfx11) shader core, the part of the emulated AMD GPU
 * that executes dispatched code.
 *
 * The command processor model (tests/mockgpu/amd_pm4.c) calls rdna3_dispatch when it executes a
 * DISPATCH_DIRECT packet, with the COMPUTE_* register values the driver programmed, exactly as the
 * hardware's SPI would see them: the emulator sets up each wave's initial SGPRs (user data, then
 * the workgroup ids and TG_SIZE enabled by COMPUTE_PGM_RSRC2) and VGPRs (packed workitem ids in v0:
 * x [9:0], y [19:10], z [29:20] per RSRC2.TIDIG_COMP_CNT), and runs every workgroup of the grid
 * (waves of one workgroup interleaved so s_barrier and LDS work). Memory goes through mem->xlate,
 * which the caller implements with the GPU page tables the driver wrote.
 *
 * Strict: an instruction or encoding it does not implement, an access through an unmapped
 * address, a misaligned scalar load, an LDS access out of the workgroup's allocation, a PC outside
 * the mapped code or a wave that does not reach s_endpgm within the instruction budget stops the
 * dispatch with -1 and a report naming the instruction encoding, its address and the wave. */
#ifndef BG_MOCKGPU_RDNA3_H
#define BG_MOCKGPU_RDNA3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rdna3_mem {
  void *ctx;
  /* Host pointer for GPU virtual address va, valid for *avail bytes (at least 1: up to the end of
   * the page), or NULL when va is not mapped (or not writable and write is set): a fault. */
  uint8_t *(*xlate)(void *ctx, uint64_t va, bool write, size_t *avail);
  /* Optional: polled every 4096 instructions; true stops the dispatch with -1 ("preempted"): the queue was
   * dequeued (CP_HQD_DEQUEUE_REQUEST), so an endless wave does not outlive its queue. */
  bool (*preempted)(void *ctx);
} rdna3_mem;

/* Register values at the DISPATCH_DIRECT (names as in gc_11_0_0_offset.h / _sh_mask.h). */
typedef struct rdna3_dispatch {
  uint64_t pgm_addr;          /* (COMPUTE_PGM_HI << 32 | COMPUTE_PGM_LO) << 8: the first instruction */
  uint32_t pgm_rsrc1, pgm_rsrc2, pgm_rsrc3;  /* COMPUTE_PGM_RSRC1/2/3 */
  uint32_t user_data[16];     /* COMPUTE_USER_DATA_0..15 (RSRC2.USER_SGPR of them are loaded) */
  uint32_t num_thread[3];     /* COMPUTE_NUM_THREAD_X/Y/Z: workgroup size */
  uint32_t start[3];          /* COMPUTE_START_X/Y/Z: first workgroup id */
  uint32_t grid[3];           /* DISPATCH_DIRECT DIM_X/Y/Z: workgroups per dimension */
  uint32_t initiator;         /* COMPUTE_DISPATCH_INITIATOR (CS_W32_EN, bit 15, must be set: wave32) */
  uint64_t scratch_base;      /* COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI << 8 (0: none) */
  uint32_t tmpring_size;      /* COMPUTE_TMPRING_SIZE */
  uint64_t max_insts;         /* instruction budget for the whole dispatch; 0: 1e9 */
} rdna3_dispatch;

typedef struct rdna3_report {
  char msg[512];              /* empty on success */
  uint64_t pc;                /* address of the failing instruction */
  uint32_t enc[3];            /* its dwords */
  uint32_t wg[3], wave;       /* workgroup id and wave index within it */
  uint64_t insts;             /* instructions executed (all waves) */
  uint64_t waves;             /* waves run */
} rdna3_report;

/* Run the whole grid. 0 when every wave reached s_endpgm; -1 with rep->msg otherwise. rep may not
 * be NULL. Single-threaded; no global state (several emulated GPUs may run in one process).
 * C forbids a function and a typedef of one name, so the function is rdna3_dispatch_run and the
 * function-like macro keeps the call `rdna3_dispatch(&d, &mem, &rep)` working next to the type. */
int rdna3_dispatch_run(const rdna3_dispatch *d, const rdna3_mem *mem, rdna3_report *rep);
#define rdna3_dispatch(...) rdna3_dispatch_run(__VA_ARGS__)

/* Disassembly of one instruction for reports: "v_add_f32_e32 v0, v1, v2" via LLVM's disassembler
 * (llvm-mc-22/-19 --disassemble on PATH) when present, else "no disassembler". buf gets a NUL-terminated line. */
void rdna3_disasm(const uint32_t *enc, unsigned ndw, char *buf, size_t n);

#endif
