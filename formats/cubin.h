/* formats/cubin.h: the NVIDIA cubin loader (ELF64, EM_CUDA 190, what ptxas / nvJitLink emit).
 *
 * Input: the bytes of one cubin. Output: the GPU image (the allocated sections laid out at their
 * offsets, NOBITS zeroed, .nv.shared.* left out: shared memory is per block), every kernel of the
 * file with its launch facts read from the .nv.info attribute records (parameter base, size and
 * per-parameter offsets always from EIATTR_PARAM_CBANK / EIATTR_KPARAM_INFO, never assumed),
 * and the relocations still to apply for the VA the image will live at. The driver allocates
 * image_size bytes, calls bg_cubin_relocate(c, va, buf) and uploads buf.
 *
 * Every field read from the file is bounds-checked; a malformed file gets -BG_EINVAL with a message
 * naming the section / field, its value and what was expected, never a crash (fuzzed:
 * tests/fuzz/fuzz_cubin.c). */
#ifndef BG_FORMATS_CUBIN_H
#define BG_FORMATS_CUBIN_H

#include <stddef.h>
#include <stdint.h>

enum { BG_CUBIN_NBANKS = 18 };   /* constant banks c[0x0]..c[0x11] */

typedef struct bg_cubin_param {
  uint32_t ordinal;   /* position in the PTX parameter list */
  uint32_t offset;    /* bytes from the parameter base (param_base) */
  uint32_t size;      /* bytes */
} bg_cubin_param;

typedef struct bg_cubin_kernel {
  char name[128];
  uint64_t code_offset, code_size;     /* .text.<name> in the image */
  uint32_t param_base, param_size;     /* EIATTR_PARAM_CBANK: where the parameters start in constant bank 0 */
  uint32_t cbank_param_size;           /* EIATTR_CBANK_PARAM_SIZE */
  uint32_t nparams;
  bg_cubin_param *params;              /* sorted by ordinal (0..nparams-1), malloc'd */
  uint32_t regs;                       /* EIATTR_REGCOUNT */
  uint32_t shared;                     /* static shared bytes: sh_size of .nv.shared.<name> (0 when absent) */
  uint32_t frame_size, min_stack, max_stack;   /* EIATTR_FRAME_SIZE, _MIN_STACK_SIZE, _MAX_STACK_SIZE */
  uint32_t local;                      /* per-thread local memory: the largest of the three above */
  uint32_t cbank0_size;                /* sh_size of .nv.constant0.<name> */
  uint64_t cbank0_offset;              /* its default contents in the image */
  uint32_t max_threads[3], reqntid[3]; /* EIATTR_MAX_THREADS / EIATTR_REQNTID (.maxntid / .reqntid), 0 when absent */
  uint32_t nexits;                     /* entries of EIATTR_EXIT_INSTR_OFFSETS */
  uint64_t bank_offset[BG_CUBIN_NBANKS], bank_size[BG_CUBIN_NBANKS];   /* .nv.constantN[.<name>] in the image; size 0: none */
} bg_cubin_kernel;

typedef struct bg_cubin_section {
  char name[64];
  unsigned index;       /* ELF section index */
  uint64_t offset, size; /* in the image */
  int nobits;           /* zero-filled (e.g. .nv.global) */
} bg_cubin_section;

typedef struct bg_cubin_reloc {
  uint64_t offset;      /* of the relocated field's section start + r_offset, in the image */
  uint32_t type;        /* R_CUDA_32, R_CUDA_64, R_CUDA_ABS32_LO_32, R_CUDA_ABS32_HI_32 */
  uint64_t sym;         /* symbol value: offset in the image */
  int64_t addend;
} bg_cubin_reloc;

typedef struct bg_cubin {
  unsigned sm;          /* from e_flags: 80, 86, 89, 90, 100, 120 */
  uint8_t *image;       /* image_size bytes, pristine (not relocated), malloc'd */
  uint64_t image_size;  /* 4 KiB aligned */
  bg_cubin_section *sections;
  size_t nsections;
  bg_cubin_kernel *kernels;
  size_t nkernels;
  bg_cubin_reloc *relocs;
  size_t nrelocs;
} bg_cubin;

/* Parse cubin (n bytes). 0 or -BG_E* (message set); on error *out is empty. */
int bg_cubin_load(const void *cubin, size_t n, bg_cubin *out);
/* The kernel called name; NULL name: the only kernel. NULL (message set) when there is none. */
const bg_cubin_kernel *bg_cubin_kernel_find(const bg_cubin *c, const char *name);
/* Write the image relocated for GPU virtual address va into dst (c->image_size bytes). */
int bg_cubin_relocate(const bg_cubin *c, uint64_t va, uint8_t *dst);
void bg_cubin_free(bg_cubin *c);

#endif
