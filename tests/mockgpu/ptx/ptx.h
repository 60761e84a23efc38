/* tests/mockgpu/ptx/ptx.h: a PTX interpreter, the shader core of the emulated NVIDIA GPU (issue 14).
 *
 * It runs the PTX that LLVM's NVPTX backend emits for compute kernels (see README.md for the subset).
 * Strict, like the RDNA3 core (tests/mockgpu/rdna3/rdna3.h): a directive, instruction, type, modifier
 * or state space it does not know stops parsing with the PTX line; a fault, an out-of-bounds shared,
 * local or param access, a barrier that cannot complete or a launch that exceeds its instruction budget
 * stops the launch with the PTX line, the instruction text, the CTA and the thread. */
#ifndef BG_MOCKGPU_PTX_H
#define BG_MOCKGPU_PTX_H

#include <stddef.h>
#include <stdint.h>

typedef struct ptx_module ptx_module;

/* Global memory, at 64-bit addresses. Each returns 0, or -1 for a fault (unmapped address). */
typedef struct ptx_mem {
  void *ctx;
  int (*read)(void *ctx, uint64_t addr, void *dst, size_t n);
  int (*write)(void *ctx, uint64_t addr, const void *src, size_t n);
} ptx_mem;

typedef struct ptx_launch {
  const char *entry;          /* .entry name; NULL: the module's first entry */
  uint32_t grid[3], block[3]; /* CTAs per dimension (%nctaid), threads per CTA (%ntid) */
  const void *params;         /* the kernel parameters laid out as ptx_param_layout says */
  size_t params_size;
  ptx_mem mem;
  uint64_t max_insts;         /* instruction budget for the launch (all threads); 0: 1e9 */
} ptx_launch;

typedef struct ptx_report {
  char msg[640];              /* empty on success */
  int line;                   /* PTX line of the failing instruction (0: none) */
  uint32_t cta[3], tid[3];    /* the failing thread */
  uint64_t insts;             /* instructions executed */
} ptx_report;

/* Parse a module. 0 and *out, or -1 with err naming the PTX line and its text. */
int ptx_parse(const char *text, ptx_module **out, char *err, size_t errlen);
void ptx_free(ptx_module *m);

/* Offset and size of parameter idx of entry (NULL: the first) in the param buffer: each parameter at
 * the next multiple of its alignment (.align N, else its size). -1 when there is no such parameter. */
int ptx_param_layout(const ptx_module *m, const char *entry, unsigned idx, size_t *off, size_t *size);

/* Run a launch. 0 when every thread reached ret/exit; -1 with rep->msg otherwise. */
int ptx_run(const ptx_module *m, const ptx_launch *l, ptx_report *rep);

#endif
