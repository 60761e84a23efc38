/* formats/elf64.h: the ELF64 little-endian reading the code-object loaders share (formats/amdgpu_elf.c, cubin.c):
 * the file header, the section headers with their names, the symbol table and relocation sections' entry sizes.
 * Internal to formats/. Every read is bounds-checked; a malformed file gets -BG_EINVAL with a message that starts
 * with the loader's name ("cubin: e_shnum 0, expected 1..4096"). Layouts as the ELF specification (System V gABI,
 * "ELF Header", "Sections", "Symbol Table") and LLVM's BinaryFormat/ELF.h give them. */
#ifndef BG_FORMATS_ELF64_H
#define BG_FORMATS_ELF64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
  BG_ELF_EHDR_SIZE = 64, BG_ELF_SHDR_SIZE = 64, BG_ELF_SYM_SIZE = 24, BG_ELF_REL_SIZE = 16, BG_ELF_RELA_SIZE = 24,
  BG_ELF_MAX_SECTIONS = 4096,
  BG_SHT_NULL = 0, BG_SHT_PROGBITS = 1, BG_SHT_SYMTAB = 2, BG_SHT_STRTAB = 3, BG_SHT_RELA = 4, BG_SHT_NOTE = 7,
  BG_SHT_NOBITS = 8, BG_SHT_REL = 9, BG_SHT_DYNSYM = 11,
};
#define BG_ELF_MAX_ALIGN (1ull << 16)

/* Little-endian fields. */
static inline uint16_t bg_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t bg_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t bg_le64(const uint8_t *p) { return bg_le32(p) | (uint64_t)bg_le32(p + 4) << 32; }
static inline void bg_put_le32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void bg_put_le64(uint8_t *p, uint64_t v) {
  bg_put_le32(p, (uint32_t)v);
  bg_put_le32(p + 4, (uint32_t)(v >> 32));
}
/* off + len within n, without overflow. */
static inline bool bg_in_bounds(uint64_t off, uint64_t len, uint64_t n) { return off <= n && len <= n - off; }

typedef struct bg_elf64_sec {
  uint32_t name, type;
  uint64_t flags, addr, offset, size, align, entsize;
  uint32_t link, info;
  const char *sname;    /* from the section-name string table, NULL when outside it */
  /* the loader's: */
  bool loaded;          /* placed in the image */
  uint64_t base;        /* its address in the image */
} bg_elf64_sec;

typedef struct bg_elf64 {
  const uint8_t *p;     /* the file (n bytes) */
  size_t n;
  const char *who;      /* message prefix: "amdgpu elf", "cubin" */
  uint16_t type, machine;
  uint32_t flags;       /* e_flags */
  uint8_t abiversion;   /* e_ident[EI_ABIVERSION] */
  bg_elf64_sec *s;      /* e_shnum section headers (malloc'd: free(e->s)) */
  unsigned ns;
  unsigned symtab;      /* section index of the symbol table, 0 when none */
  uint64_t nsyms;
} bg_elf64;

/* What a loader accepts: e_machine and one of two e_type values, and how its messages name them
 * ("EM_CUDA (190)", "ET_EXEC (2) or ET_REL (1)"). */
typedef struct bg_elf64_want {
  uint16_t machine;
  const char *machine_name;
  uint16_t type_a, type_b;
  const char *types_name;
} bg_elf64_want;

/* The file header: magic, ELFCLASS64, ELFDATA2LSB, e_type, e_machine, EV_CURRENT (in that order), then e->type,
 * machine, flags and abiversion are set. e->p, n and who must be set. */
int bg_elf64_ident(bg_elf64 *e, const bg_elf64_want *want);
/* The section headers (e_shoff, e_shentsize, e_shnum, e_shstrndx checked; each section within the file, its
 * alignment a power of two up to BG_ELF_MAX_ALIGN) and their names. After bg_elf64_ident. */
int bg_elf64_sections(bg_elf64 *e);

/* Section i's name, "?" when it has none or i is out of range. */
const char *bg_elf64_sname(const bg_elf64 *e, unsigned i);
/* The NUL-terminated string at off in string section si, or NULL. */
const char *bg_elf64_str(const bg_elf64 *e, unsigned si, uint64_t off);

/* Use section idx as the symbol table (named by section `from`'s sh_link, or chosen by bg_elf64_find_symtab). */
int bg_elf64_use_symtab(bg_elf64 *e, unsigned idx, unsigned from);
/* The first SHT_SYMTAB, else (dynsym_too) the first SHT_DYNSYM; an error naming what was looked for when none. */
int bg_elf64_find_symtab(bg_elf64 *e, bool dynsym_too);

typedef struct bg_elf64_sym {
  const char *name;
  uint64_t value;       /* st_value as in the file */
  uint64_t size;
  uint16_t shndx;
  uint8_t info;
} bg_elf64_sym;
/* Symbol i of the symbol table (its name inside the string table). */
int bg_elf64_sym_read(const bg_elf64 *e, uint64_t i, bg_elf64_sym *out);

/* An array (calloc'd; NULL when the file has none) for the relocation entries of every SHT_REL / SHT_RELA section
 * (their sh_entsize checked, at most max_total entries), elem bytes each. *rc: 0 or -BG_E* (message set). */
void *bg_elf64_reloc_array(const bg_elf64 *e, uint64_t max_total, size_t elem, int *rc);
/* The next SHT_REL / SHT_RELA section after section i (0: from the start), 0 when there is none. */
unsigned bg_elf64_next_rel(const bg_elf64 *e, unsigned i);
/* Relocation section si's target: the section its sh_info names (checked to exist). */
int bg_elf64_reloc_target(const bg_elf64 *e, unsigned si, unsigned *target);

typedef struct bg_elf64_rel {
  uint64_t offset;      /* r_offset */
  uint32_t type, sym;   /* ELF64_R_TYPE / ELF64_R_SYM of r_info */
  int64_t addend;       /* r_addend (SHT_RELA); 0 for SHT_REL */
} bg_elf64_rel;
/* Entry k of relocation section si (k below its entry count: sh_size / entry size). */
void bg_elf64_rel_read(const bg_elf64 *e, unsigned si, uint64_t k, bg_elf64_rel *out);
/* Entries of relocation section si. */
uint64_t bg_elf64_rel_count(const bg_elf64 *e, unsigned si);

#endif
