/* tests/unit/rdna3/harness.h: a flat GPU memory for the emulator tests (one host buffer at a GPU
 * virtual address above 4 GiB, with an unmapped hole), code loading, kernels built at build time
 * and single-wave runs with preset registers. */
#ifndef BG_TESTS_RDNA3_HARNESS_H
#define BG_TESTS_RDNA3_HARNESS_H

#include "rdna3_internal.h"

#define GPU_BASE 0x100000000ull   /* above 4 GiB: 32-bit address truncation faults */
#define GPU_SIZE (64u << 20)
#define GPU_PAGE 4096u            /* xlate hands out at most to the end of a page */

typedef struct gpu {
  uint8_t *mem;
  uint64_t brk;                   /* next free byte (offset) */
  uint64_t hole_va, hole_size;    /* unmapped range inside the buffer */
  uint64_t xlates, faults;         /* translations, and those that found nothing */
  uint64_t snippets_va;            /* asm_snippets.bin once loaded (0: not yet) */
} gpu;

void gpu_init(gpu *g);
void gpu_free(gpu *g);
uint64_t gpu_alloc(gpu *g, uint64_t size, uint64_t align);  /* zeroed */
void *gpu_ptr(gpu *g, uint64_t va);
rdna3_mem gpu_mem(gpu *g);

/* Read a build-time file named by environment variable var (directory) + name. NULL when the
 * LLVM tools were absent at build time (the test then exits 77). */
uint8_t *read_built(const char *name, size_t *n);
bool have_llvm(void);

/* The core generation the tests run (default gfx11): gfx12 loads NAME.gfx12.bin kernels and asm_snippets_gfx12.s,
 * and dispatches and single waves run the gfx12 variant. A fixture sets it per test (each test runs in its own
 * process). */
extern rdna3_gen harness_gen;

/* Assembly snippets (asm_snippets.s): the code address of label name, loaded once into g. */
uint64_t snippet_va(gpu *g, const char *name);

/* One wave with registers preset by the caller: exec = all 32 lanes, pc = the snippet. */
typedef struct wave_run {
  rdna3_ctx c;
  rdna3_wave w;
  rdna3_report rep;
  uint8_t lds[65536];
} wave_run;
void wave_setup(wave_run *r, gpu *g, const char *snippet);
int wave_go(wave_run *r);  /* 0 at s_endpgm, else -1 (r->rep.msg) */

/* A compiled kernel (kernels/NAME.ll): descriptor fields, code loaded into g. */
typedef struct kernel {
  uint64_t code_va;
  uint32_t group_segment, private_segment, kernarg_size;
  uint32_t rsrc1, rsrc2, rsrc3;
  uint16_t properties;
} kernel;
void kernel_load(gpu *g, const char *name, kernel *k);
/* Dispatch k over grid workgroups of local size; kernarg bytes are copied to GPU memory and the
 * user SGPRs filled as its descriptor asks. Returns rdna3_dispatch's result. */
int kernel_run(gpu *g, const kernel *k, const uint32_t grid[3], const uint32_t local[3], const void *kernarg,
               size_t kernarg_n, rdna3_report *rep);

#endif
