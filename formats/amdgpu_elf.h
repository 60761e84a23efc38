/* formats/amdgpu_elf.h: the AMD code-object loader (ELF64, EM_AMDGPU, HSA ABI v4/v5/v6).
 *
 * Input: the bytes LLVM emitted for one kernel (relocatable object or shared code object).
 * Output: a loadable image (the allocated sections laid out at their addresses, .bss zeroed), the
 * kernel descriptor of the named kernel, its metadata (from the NT_AMDGPU_METADATA note), and the
 * relocations still to apply for the address the image will live at. The driver (am/) allocates
 * VRAM of img->size, calls bg_amdgpu_image_relocate with that address, and uploads img->data.
 *
 * Every field read from the file is bounds-checked; a malformed file gets -BG_EINVAL with a message
 * naming the field, its value and what was expected ("amdgpu elf: section 7 (.text): sh_offset
 * 0x... + sh_size 0x... exceeds the file size 0x..."), never a crash (fuzzed). */
#ifndef BG_FORMATS_AMDGPU_ELF_H
#define BG_FORMATS_AMDGPU_ELF_H

#include <stddef.h>
#include <stdint.h>

/* The 64-byte kernel descriptor (LLVM AMDGPUUsage "Kernel Descriptor"). */
typedef struct bg_amdgpu_kd {
  uint32_t group_segment_fixed_size;     /* LDS bytes */
  uint32_t private_segment_fixed_size;   /* scratch bytes per work-item */
  uint32_t kernarg_size;
  int64_t kernel_code_entry_byte_offset; /* from the descriptor to the first instruction */
  uint32_t compute_pgm_rsrc3, compute_pgm_rsrc1, compute_pgm_rsrc2;
  uint16_t kernel_code_properties;       /* ENABLE_SGPR_* bits, ENABLE_WAVEFRONT_SIZE32 (bit 10) */
  uint16_t kernarg_preload;
} bg_amdgpu_kd;

typedef struct bg_amdgpu_reloc {
  uint64_t offset;    /* in the image */
  uint32_t type;      /* R_AMDGPU_ABS64, R_AMDGPU_REL32_LO/HI, R_AMDGPU_REL64, R_AMDGPU_ABS32_LO/HI, R_AMDGPU_RELATIVE64 */
  uint64_t sym;       /* symbol value: offset in the image */
  int64_t addend;
} bg_amdgpu_reloc;

typedef struct bg_amdgpu_image {
  uint8_t *data;              /* size bytes, malloc'd */
  uint64_t size;              /* image size (page aligned) */
  char mcpu[16];              /* target from e_flags: "gfx1100", "gfx1201", "gfx942", "gfx950" */
  char name[64];              /* the kernel */
  uint64_t kd_offset;         /* kernel descriptor (the "<name>.kd" symbol) in the image */
  uint64_t code_offset;       /* first instruction: kd_offset + kernel_code_entry_byte_offset */
  bg_amdgpu_kd kd;
  /* From the metadata note (0 when absent): */
  uint32_t kernarg_segment_size, kernarg_segment_align;
  uint32_t max_flat_workgroup_size;
  uint32_t reqd_workgroup_size[3];
  uint32_t wavefront_size, sgpr_count, vgpr_count;
  bg_amdgpu_reloc *relocs;
  size_t nrelocs;
} bg_amdgpu_image;

/* Parse elf (n bytes). kernel_name NULL: the only kernel in the file. 0 or -BG_E* (message set). */
int bg_amdgpu_elf_load(const void *elf, size_t n, const char *kernel_name, bg_amdgpu_image *out);
/* Apply the relocations for an image placed at GPU virtual address va (idempotent: relocations are
 * computed from the pristine bytes each time). */
int bg_amdgpu_image_relocate(bg_amdgpu_image *img, uint64_t va);
void bg_amdgpu_image_free(bg_amdgpu_image *img);

/* EF_AMDGPU_MACH_* value (e_flags & EF_AMDGPU_MACH) of a processor name ("gfx1100" -> 0x041); 0 when
 * unknown to this table. */
unsigned bg_amdgpu_mach(const char *mcpu);
/* The processor name of an EF_AMDGPU_MACH_* value; NULL when unknown. */
const char *bg_amdgpu_mach_name(unsigned mach);

#endif
