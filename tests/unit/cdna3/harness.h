/* tests/unit/cdna3/harness.h: a flat GPU memory for the CDNA3 core's tests (one host buffer at a GPU virtual
 * address above 4 GiB, with an unmapped hole), gfx942 code built at build time, single-wave runs with preset
 * registers and whole-kernel dispatches. */
#ifndef BG_TESTS_CDNA3_HARNESS_H
#define BG_TESTS_CDNA3_HARNESS_H

#include "cdna3_internal.h"

#define GPU_BASE 0x100000000ull
#define GPU_SIZE (64u << 20)
#define GPU_PAGE 4096u

typedef struct gpu {
  uint8_t *mem;
  uint64_t brk;
  uint64_t hole_va, hole_size;   /* unmapped range inside the buffer */
  uint64_t snippets_va;
} gpu;

void gpu_init(gpu *g);
void gpu_free(gpu *g);
uint64_t gpu_alloc(gpu *g, uint64_t size, uint64_t align);  /* zeroed */
void *gpu_ptr(gpu *g, uint64_t va);
rdna3_mem gpu_mem(gpu *g);

uint8_t *read_built(const char *name, size_t *n);  /* $CDNA3_BUILT/name */
bool have_llvm(void);
uint64_t snippet_va(gpu *g, const char *name);     /* asm_snippets.s label */

/* One wave64 with registers preset by the caller: EXEC all 64 lanes, 512 registers (256 VGPRs, AGPRs from 256). */
typedef struct wave_run {
  cdna3_ctx c;
  cdna3_wave w;
  rdna3_report rep;
  rdna3_mem mem;
  uint8_t lds[65536];
} wave_run;
wave_run *wave_new(gpu *g, const char *snippet);   /* free() it */
int wave_go(wave_run *r);                          /* 0 at s_endpgm, else -1 (r->rep.msg) */
uint32_t *agpr(wave_run *r, unsigned i);           /* a[i]'s 64 lanes */

typedef struct kernel {
  uint64_t code_va;
  uint32_t group_segment, private_segment, kernarg_size;
  uint32_t rsrc1, rsrc2, rsrc3;
  uint16_t properties;
} kernel;
void kernel_load(gpu *g, const char *name, kernel *k);
/* Dispatch k over grid workgroups of local size on XCC xcc of nxcc (nxcc 1: the whole grid). */
int kernel_run_xcc(gpu *g, const kernel *k, const uint32_t grid[3], const uint32_t local[3], const void *kernarg,
                   size_t kernarg_n, unsigned xcc, unsigned nxcc, rdna3_report *rep);
int kernel_run(gpu *g, const kernel *k, const uint32_t grid[3], const uint32_t local[3], const void *kernarg,
               size_t kernarg_n, rdna3_report *rep);

#endif
