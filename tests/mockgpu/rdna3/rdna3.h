/* tests/mockgpu/rdna3/rdna3.h: a wave32 RDNA3 (gfx11) shader core, with an RDNA4 (gfx12) variant, the part of
 * the emulated AMD GPU that executes dispatched code.
 *
 * The command processor model (tests/mockgpu/amd_pm4.c) calls rdna3_dispatch when it executes a
 * DISPATCH_DIRECT packet, with the COMPUTE_* register values the driver programmed, exactly as the
 * hardware's SPI would see them: the emulator sets up each wave's initial SGPRs (user data, then
 * the workgroup ids and TG_SIZE enabled by COMPUTE_PGM_RSRC2) and VGPRs (packed workitem ids in v0:
 * x [9:0], y [19:10], z [29:20] per RSRC2.TIDIG_COMP_CNT), and runs every workgroup of the grid
 * (waves of one workgroup interleaved so s_barrier and LDS work). Memory goes through mem->xlate,
 * which the caller implements with the GPU page tables the driver wrote.
 *
 * Resources: a wave may use the VGPRs COMPUTE_PGM_RSRC1.VGPRS grants ((VGPRS + 1) * 8 in wave32 on
 * gfx11, LLVM AMDGPUUsage "COMPUTE_PGM_RSRC1" / getVGPREncodingGranule) and the LDS RSRC2.LDS_SIZE
 * grants (512-byte units). Hardware does not check either for static register numbers (a wave
 * beyond its grant reads and writes another wave's registers) and drops out-of-range LDS accesses
 * (reads 0); this model stops the dispatch instead, so an understated descriptor is found.
 * RSRC1.SGPRS must be 0: gfx10+ always allocates 106 SGPRs (AMDGPUUsage: "Reserved, must be 0").
 *
 * RDNA4 (gfx12, rdna3_dispatch.gen = RDNA3_GEN_GFX12; rdna3_isa.c): the same core with the gfx12 encodings (SMEM with
 * a 24-bit offset, the 96-bit VFLAT/VGLOBAL/VSCRATCH forms, renumbered VALU ops such as v_max_num_f32, SALU float
 * ops, s_barrier_signal/s_barrier_wait, the gfx12 WMMA operand layout) and the split wait counters: s_wait_loadcnt
 * (vector loads, returning atomics), s_wait_dscnt (LDS), s_wait_kmcnt (scalar loads) each land their own loads;
 * s_wait_storecnt / _samplecnt / _bvhcnt / _expcnt have nothing outstanding here (stores take effect at issue).
 *
 * Memory latency: a load's result lands in its destination registers only when the wave waits for
 * it (s_waitcnt vmcnt / lgkmcnt, s_waitcnt_vmcnt / _lgkmcnt) or ends, or when more loads are
 * outstanding than the model keeps (rdna3_internal.h RDNA3_PEND_MAX: the oldest lands early, which
 * hardware may also do); an instruction that reads the destination before that sees its old value,
 * so a kernel missing a waitcnt computes a wrong result. Counters retire in issue order (vmcnt:
 * loads and returning atomics; lgkmcnt: LDS and scalar loads; LDS stores count but return nothing).
 * Stores and the memory side of atomics take effect at issue: the waves of a dispatch run one
 * after another here, so s_waitcnt_vscnt and expcnt have nothing to wait for.
 *
 * Scalar cache: scalar loads read through rdna3_mem.kcache when the caller gives one (the command
 * processor keeps one per queue, amd_pm4.c): 64-byte lines stay until it is invalidated
 * (ACQUIRE_MEM GCR_CNTL.GLK_INV, or s_dcache_inv in the shader), so memory changed behind it is
 * read stale, as on hardware.
 *
 * WMMA (rdna3_wmma.c): V_WMMA_{F32,F16,BF16}_16X16X16_{F16,BF16} with the ISA guide's wave32 operand layout;
 * EXEC must be all ones and lanes 16-31 of A and B must repeat lanes 0-15 (gfx11), else the dispatch stops; gfx12
 * has its own layout (A/B in 4 VGPRs, lanes 16-31 carry k 8..15).
 *
 * Statistics: rdna3_report.stats counts what the dispatch executed (instructions by class once per wave, bytes of
 * active lanes moved to/from global memory and LDS, LDS bank-conflict cycles from the 32-bank model in rdna3_lds.c);
 * the command processor sums them per device for the mock plugin's shader_stats. Deterministic: the same dispatch
 * on the same memory counts the same.
 *
 * Strict: an instruction or encoding it does not implement, an access through an unmapped
 * address, a misaligned scalar load, an LDS access out of the workgroup's allocation, a VGPR
 * beyond the grant, a PC outside the mapped code or a wave that does not reach s_endpgm within the
 * instruction budget stops the dispatch with -1 and a report naming the instruction encoding, its
 * address and the wave. */
#ifndef BG_MOCKGPU_RDNA3_H
#define BG_MOCKGPU_RDNA3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The scalar (constant) cache, K$: direct-mapped 64-byte lines, 16 KiB like an RDNA3 CU's (RDNA3
 * ISA guide "Scalar memory"); tagged by virtual address (one VMID per queue here). */
#define RDNA3_KCACHE_LINES 256u
#define RDNA3_KCACHE_LINE 64u
typedef struct rdna3_kcache {
  uint64_t tag[RDNA3_KCACHE_LINES];  /* line address / 64 + 1; 0: invalid */
  uint8_t data[RDNA3_KCACHE_LINES][RDNA3_KCACHE_LINE];
  uint64_t hits, misses, invalidations;
} rdna3_kcache;
void rdna3_kcache_invalidate(rdna3_kcache *k);

typedef struct rdna3_mem {
  void *ctx;
  rdna3_kcache *kcache;       /* scalar loads read through it; NULL: straight from memory */
  /* Host pointer for GPU virtual address va, valid for *avail bytes (at least 1: up to the end of
   * the page), or NULL when va is not mapped (or not writable and write is set): a fault. */
  uint8_t *(*xlate)(void *ctx, uint64_t va, bool write, size_t *avail);
  /* Optional: polled every 4096 instructions; true stops the dispatch with -1 ("preempted"): the queue was
   * dequeued (CP_HQD_DEQUEUE_REQUEST), so an endless wave does not outlive its queue. */
  bool (*preempted)(void *ctx);
} rdna3_mem;

/* The shader core generation a dispatch runs on (rdna3_isa.h): one decode and semantic code base, the
 * encodings and opcode numbers that differ from gfx11 in per-generation tables. */
typedef enum rdna3_gen {
  RDNA3_GEN_GFX11 = 0,        /* RDNA3 (GC 11.x) */
  RDNA3_GEN_GFX12,            /* RDNA4 (GC 12.x): split wait counters, new SMEM/VFLAT/VGLOBAL/VSCRATCH encodings */
} rdna3_gen;

/* Register values at the DISPATCH_DIRECT (names as in gc_11_0_0_offset.h / _sh_mask.h). */
typedef struct rdna3_dispatch {
  rdna3_gen gen;              /* the emulated chip's shader core (the command processor knows its GC version) */
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

/* Shader statistics of one dispatch (rdna3.h "Statistics"); deterministic for a given dispatch and memory. */
typedef struct rdna3_stats {
  uint64_t waves, wave_insts;  /* waves run; instructions executed, counted once per wave (s_endpgm included) */
  uint64_t valu_insts;         /* VOP1/VOP2/VOPC/VOP3/VOP3P/VOPD (a VOPD pair is one), WMMA included */
  uint64_t salu_insts;         /* SOP1/SOP2/SOPC/SOPK/SOPP (branches, s_waitcnt, s_barrier, s_endpgm) */
  uint64_t smem_insts;         /* scalar memory (s_load_*, s_dcache_inv) */
  uint64_t vmem_insts;         /* FLAT/GLOBAL/SCRATCH and MUBUF */
  uint64_t lds_insts;          /* DS */
  uint64_t wmma_insts;         /* V_WMMA_* (also in valu_insts) */
  uint64_t global_load_bytes, global_store_bytes;  /* FLAT/GLOBAL bytes of active lanes outside LDS and scratch */
  uint64_t lds_load_bytes, lds_store_bytes;        /* DS (and FLAT to the LDS aperture) bytes of active lanes */
  uint64_t lds_bank_conflict_cycles;               /* extra LDS cycles from bank conflicts (rdna3_lds.c) */
} rdna3_stats;

typedef struct rdna3_report {
  char msg[512];              /* empty on success */
  uint64_t pc;                /* address of the failing instruction */
  uint32_t enc[3];            /* its dwords */
  uint32_t wg[3], wave;       /* workgroup id and wave index within it */
  uint64_t insts;             /* instructions executed (all waves) */
  uint64_t waves;             /* waves run */
  rdna3_stats stats;          /* what the dispatch executed, up to the failure if it failed */
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
/* The same for the processor mcpu names (LLVM's -mcpu, e.g. "gfx1200"). */
void rdna3_disasm_mcpu(const char *mcpu, const uint32_t *enc, unsigned ndw, char *buf, size_t n);

#endif
