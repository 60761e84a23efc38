/* formats/host_obj.h: the loader of host relocatable objects: ELF64 ET_REL for EM_X86_64, as LLVM (or gcc/clang -c)
 * emits them with reloc model PIC and code model small. Used by cpu/cpu_program.c for CPU kernels compiled in process
 * (contract C1 of issue 16).
 *
 * Every SHF_ALLOC section is placed at its alignment in one mapping, grouped by access: code (and the jump stubs)
 * first, then read-only data (and the GOT), then writable data and .bss, each group on its own pages. RELA relocations
 * R_X86_64_64, PC32, PLT32, GOTPCREL, GOTPCRELX, REX_GOTPCRELX, PC64, 32, 32S, GOTOFF64, GOTPC32, GOTPC64 are applied
 * (System V x86-64 psABI, "Relocation Types"); undefined symbols are found with dlsym(RTLD_DEFAULT) and reached
 * through GOT slots and jump stubs inside the image, so every 32-bit displacement stays inside it. Then code is
 * mapped read+execute and data read (read+write where SHF_WRITE): never writable and executable at once.
 * Malformed input is -BG_EINVAL with a message naming the field, its value and what was expected. */
#ifndef BG_FORMATS_HOST_OBJ_H
#define BG_FORMATS_HOST_OBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bg_host_obj {
  void *map;            /* the mapping (map_size bytes; the image starts at image, page aligned) */
  size_t map_size;
  uint8_t *image;
  size_t size;          /* bytes of the image: code, stubs, read-only data, GOT, data, .bss */
  size_t code_size;     /* [image, image + code_size) is the executable part */
  void *entry;          /* the global STT_FUNC named as asked */
  unsigned nstubs, ngot; /* jump stubs and GOT slots made for undefined symbols and GOTPCREL references */
} bg_host_obj;

/* Is this an ELF64 ET_REL file (what bg_host_obj_load takes), judged by its magic, class and e_type alone. */
bool bg_host_obj_is_rel(const void *bin, size_t size);

/* Load the object, relocate it where it was mapped and find the entry `entry` (a global STT_FUNC defined in an
 * executable section). 0 with *out filled, or a negative BG_E* with the message set (*out then holds nothing). */
int bg_host_obj_load(const void *bin, size_t size, const char *entry, bg_host_obj *out);

/* Unmap (a zeroed or already freed object is fine). */
void bg_host_obj_free(bg_host_obj *o);

#endif
