/* formats/elf64.c: see elf64.h. */
#include "formats/elf64.h"

#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"

enum { ELFCLASS64 = 2, ELFDATA2LSB = 1, EV_CURRENT = 1, EI_ABIVERSION = 8 };

#define EINV(e, fmt, ...) bg_error(BG_EINVAL, "%s: " fmt, (e)->who, __VA_ARGS__)

const char *bg_elf64_sname(const bg_elf64 *e, unsigned i) { return i < e->ns && e->s[i].sname ? e->s[i].sname : "?"; }

const char *bg_elf64_str(const bg_elf64 *e, unsigned si, uint64_t off) {
  if (si == 0 || si >= e->ns || e->s[si].type != BG_SHT_STRTAB || off >= e->s[si].size) return NULL;
  const char *base = (const char *)e->p + e->s[si].offset;
  return memchr(base + off, 0, e->s[si].size - off) ? base + off : NULL;
}

int bg_elf64_ident(bg_elf64 *e, const bg_elf64_want *want) {
  const uint8_t *p = e->p;
  if (e->n < BG_ELF_EHDR_SIZE) return EINV(e, "file size %zu is smaller than the 64-byte ELF64 header", e->n);
  if (memcmp(p, "\177ELF", 4))
    return EINV(e, "e_ident magic %02x %02x %02x %02x, expected 7f 45 4c 46", p[0], p[1], p[2], p[3]);
  if (p[4] != ELFCLASS64) return EINV(e, "EI_CLASS %u, expected ELFCLASS64 (2)", p[4]);
  if (p[5] != ELFDATA2LSB) return EINV(e, "EI_DATA %u, expected ELFDATA2LSB (1)", p[5]);
  e->type = bg_le16(p + 16);
  if (e->type != want->type_a && e->type != want->type_b)
    return EINV(e, "e_type %u, expected %s", e->type, want->types_name);
  e->machine = bg_le16(p + 18);
  if (e->machine != want->machine) return EINV(e, "e_machine %u, expected %s", e->machine, want->machine_name);
  if (bg_le32(p + 20) != EV_CURRENT) return EINV(e, "e_version %u, expected EV_CURRENT (1)", bg_le32(p + 20));
  e->flags = bg_le32(p + 48);
  e->abiversion = p[EI_ABIVERSION];
  return 0;
}

int bg_elf64_sections(bg_elf64 *e) {
  const uint8_t *p = e->p;
  uint64_t shoff = bg_le64(p + 40);
  unsigned shentsize = bg_le16(p + 58), shnum = bg_le16(p + 60), shstrndx = bg_le16(p + 62);
  if (shentsize != BG_ELF_SHDR_SIZE) return EINV(e, "e_shentsize %u, expected %u", shentsize, BG_ELF_SHDR_SIZE);
  if (shnum == 0 || shnum > BG_ELF_MAX_SECTIONS) return EINV(e, "e_shnum %u, expected 1..%u", shnum, BG_ELF_MAX_SECTIONS);
  if (!bg_in_bounds(shoff, (uint64_t)shnum * BG_ELF_SHDR_SIZE, e->n))
    return EINV(e, "e_shoff 0x%llx + %u section headers exceed the file size 0x%zx", (unsigned long long)shoff, shnum, e->n);
  if (shstrndx >= shnum) return EINV(e, "e_shstrndx %u, expected below e_shnum %u", shstrndx, shnum);
  if (!(e->s = calloc(shnum, sizeof *e->s))) return bg_error(BG_ENOMEM, "%s: out of memory for %u sections", e->who, shnum);
  e->ns = shnum;
  for (unsigned i = 0; i < shnum; i++) {
    const uint8_t *h = p + shoff + (uint64_t)i * BG_ELF_SHDR_SIZE;
    bg_elf64_sec *s = &e->s[i];
    *s = (bg_elf64_sec){.name = bg_le32(h), .type = bg_le32(h + 4), .flags = bg_le64(h + 8), .addr = bg_le64(h + 16),
                        .offset = bg_le64(h + 24), .size = bg_le64(h + 32), .link = bg_le32(h + 40),
                        .info = bg_le32(h + 44), .align = bg_le64(h + 48), .entsize = bg_le64(h + 56)};
    if (s->type != BG_SHT_NOBITS && s->type != BG_SHT_NULL && !bg_in_bounds(s->offset, s->size, e->n))
      return EINV(e, "section %u: sh_offset 0x%llx + sh_size 0x%llx exceeds the file size 0x%zx", i,
                  (unsigned long long)s->offset, (unsigned long long)s->size, e->n);
    if (s->align > BG_ELF_MAX_ALIGN || (s->align & (s->align - 1)))
      return EINV(e, "section %u: sh_addralign 0x%llx, expected a power of two up to 0x%llx", i,
                  (unsigned long long)s->align, (unsigned long long)BG_ELF_MAX_ALIGN);
  }
  for (unsigned i = 0; i < shnum; i++) e->s[i].sname = bg_elf64_str(e, shstrndx, e->s[i].name);
  return 0;
}

int bg_elf64_use_symtab(bg_elf64 *e, unsigned idx, unsigned from) {
  if (idx == 0 || idx >= e->ns || (e->s[idx].type != BG_SHT_SYMTAB && e->s[idx].type != BG_SHT_DYNSYM))
    return EINV(e, "section %u (%s): sh_link %u, expected a symbol table (SHT_SYMTAB or SHT_DYNSYM)", from,
                bg_elf64_sname(e, from), idx);
  const bg_elf64_sec *s = &e->s[idx];
  if (s->entsize != BG_ELF_SYM_SIZE)
    return EINV(e, "section %u (%s): sh_entsize %llu, expected %u for symbols", idx, bg_elf64_sname(e, idx),
                (unsigned long long)s->entsize, BG_ELF_SYM_SIZE);
  if (s->link >= e->ns || e->s[s->link].type != BG_SHT_STRTAB)
    return EINV(e, "section %u (%s): sh_link %u is not a string table", idx, bg_elf64_sname(e, idx), s->link);
  e->symtab = idx;
  e->nsyms = s->size / BG_ELF_SYM_SIZE;
  return 0;
}

int bg_elf64_find_symtab(bg_elf64 *e, bool dynsym_too) {
  unsigned tab = 0, dyn = 0;
  for (unsigned i = 1; i < e->ns; i++) {
    if (e->s[i].type == BG_SHT_SYMTAB && !tab) tab = i;
    if (e->s[i].type == BG_SHT_DYNSYM && !dyn && dynsym_too) dyn = i;
  }
  if (!tab && !dyn)
    return bg_error(BG_EINVAL, "%s: no symbol table (%s)", e->who, dynsym_too ? "SHT_SYMTAB or SHT_DYNSYM" : "SHT_SYMTAB");
  return bg_elf64_use_symtab(e, tab ? tab : dyn, tab ? tab : dyn);
}

int bg_elf64_sym_read(const bg_elf64 *e, uint64_t i, bg_elf64_sym *out) {
  if (i >= e->nsyms)
    return EINV(e, "symbol index %llu, expected below %llu", (unsigned long long)i, (unsigned long long)e->nsyms);
  const bg_elf64_sec *st = &e->s[e->symtab];
  const uint8_t *p = e->p + st->offset + i * BG_ELF_SYM_SIZE;
  out->name = bg_elf64_str(e, st->link, bg_le32(p));
  if (!out->name) return EINV(e, "symbol %llu: st_name 0x%x outside its string table", (unsigned long long)i, bg_le32(p));
  out->info = p[4];
  out->shndx = bg_le16(p + 6);
  out->value = bg_le64(p + 8);
  out->size = bg_le64(p + 16);
  return 0;
}

static unsigned rel_size(const bg_elf64_sec *s) { return s->type == BG_SHT_RELA ? BG_ELF_RELA_SIZE : BG_ELF_REL_SIZE; }

unsigned bg_elf64_next_rel(const bg_elf64 *e, unsigned i) {
  while (++i < e->ns)
    if (e->s[i].type == BG_SHT_REL || e->s[i].type == BG_SHT_RELA) return i;
  return 0;
}

void *bg_elf64_reloc_array(const bg_elf64 *e, uint64_t max_total, size_t elem, int *rc) {
  size_t total = 0;
  *rc = 0;
  for (unsigned i = 0; (i = bg_elf64_next_rel(e, i)) != 0;) {
    const bg_elf64_sec *s = &e->s[i];
    if (s->entsize != rel_size(s)) {
      *rc = EINV(e, "section %u (%s): sh_entsize %llu, expected %u", i, bg_elf64_sname(e, i),
                 (unsigned long long)s->entsize, rel_size(s));
      return NULL;
    }
    total += s->size / rel_size(s);
  }
  if (total > max_total) {
    *rc = EINV(e, "%zu relocations, more than the image could hold", total);
    return NULL;
  }
  void *a = total ? calloc(total, elem) : NULL;
  if (total && !a) *rc = bg_error(BG_ENOMEM, "%s: out of memory for %zu relocations", e->who, total);
  return a;
}

int bg_elf64_reloc_target(const bg_elf64 *e, unsigned si, unsigned *target) {
  const bg_elf64_sec *s = &e->s[si];
  if (s->info == 0 || s->info >= e->ns)
    return EINV(e, "section %u (%s): sh_info %u, expected a section index below %u", si, bg_elf64_sname(e, si), s->info, e->ns);
  *target = s->info;
  return 0;
}

uint64_t bg_elf64_rel_count(const bg_elf64 *e, unsigned si) { return e->s[si].size / rel_size(&e->s[si]); }

void bg_elf64_rel_read(const bg_elf64 *e, unsigned si, uint64_t k, bg_elf64_rel *out) {
  const bg_elf64_sec *s = &e->s[si];
  const uint8_t *p = e->p + s->offset + k * rel_size(s);
  uint64_t info = bg_le64(p + 8);
  *out = (bg_elf64_rel){.offset = bg_le64(p), .type = (uint32_t)info, .sym = (uint32_t)(info >> 32),
                        .addend = s->type == BG_SHT_RELA ? (int64_t)bg_le64(p + 16) : 0};
}
