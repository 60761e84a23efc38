/* formats/host_obj.c: the host relocatable-object loader (see host_obj.h).
 *
 * Three passes over the file before anything runs: the entry symbol is looked up and the sections are checked and
 * placed (code, read-only, writable groups, each page aligned so each gets its own protection); the relocations are
 * walked once to count the GOT slots (GOTPCREL*, and every PLT32 to an undefined symbol) and jump stubs needed; then the
 * image is mapped read+write, filled, the GOT and stubs written, the relocations applied with the final addresses and
 * the groups protected. Formulas: System V x86-64 psABI, table "Relocation Types" (S symbol, A addend, P place,
 * G + GOT the symbol's GOT slot, L its PLT entry: here the in-image stub). A relocation into a section that is not
 * loaded (debug info) is not applied, as a static linker would drop it. Only dlsym/mmap beyond <string.h>: no libelf. */
#include "formats/host_obj.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "baregpu/error.h"
#include "formats/elf64.h"

/* ELF constants, named as the ELF specification and LLVM's BinaryFormat/ELF.h name them. */
enum {
  ET_REL = 1, EM_X86_64 = 62,
  SHF_WRITE = 0x1, SHF_ALLOC = 0x2, SHF_EXECINSTR = 0x4, SHF_TLS = 0x400,
  SHT_X86_64_UNWIND = 0x70000001,
  SHN_UNDEF = 0, SHN_LORESERVE = 0xff00, SHN_ABS = 0xfff1, SHN_COMMON = 0xfff2,
  STB_LOCAL = 0, STB_GLOBAL = 1, STB_WEAK = 2,
  STT_NOTYPE = 0, STT_OBJECT = 1, STT_FUNC = 2, STT_SECTION = 3, STT_TLS = 6, STT_GNU_IFUNC = 10,
  R_X86_64_NONE = 0, R_X86_64_64 = 1, R_X86_64_PC32 = 2, R_X86_64_PLT32 = 4, R_X86_64_GOTPCREL = 9, R_X86_64_32 = 10,
  R_X86_64_32S = 11, R_X86_64_PC64 = 24, R_X86_64_GOTOFF64 = 25, R_X86_64_GOTPC32 = 26, R_X86_64_GOTPC64 = 29,
  R_X86_64_GOTPCRELX = 41, R_X86_64_REX_GOTPCRELX = 42,
};
enum { PAGE = 4096, STUB_SIZE = 8, NGROUPS = 3, G_CODE = 0, G_RO = 1, G_RW = 2 };
/* Keeps every displacement inside the image far below 2 GiB, and a hostile .bss from asking for absurd memory. */
#define MAX_IMAGE (256ull << 20)

#define EINV(...) bg_error(BG_EINVAL, "host obj: " __VA_ARGS__)

typedef bg_elf64_sec sec;

typedef struct ld {
  bg_elf64 e;
  const char *entry;
  uint64_t entry_sym;
  uint64_t grp[NGROUPS + 1];   /* group g is [grp[g], grp[g+1]) in the image */
  uint64_t stub_off, got_off, size, max_align;
  uint32_t *got_of, *stub_of;  /* per symbol: its GOT slot / stub + 1, 0 when none */
  uint64_t *addr;              /* per symbol: resolved address */
  uint8_t *resolved;
  unsigned ngot, nstubs;
  uint8_t *img;
} ld;

static const bg_elf64_want WANT = {EM_X86_64, "EM_X86_64 (62)", ET_REL, ET_REL, "ET_REL (1)"};

static const char *sname(const ld *l, unsigned i) { return bg_elf64_sname(&l->e, i); }
static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

bool bg_host_obj_is_rel(const void *bin, size_t size) {
  const uint8_t *p = bin;
  return p && size >= BG_ELF_EHDR_SIZE && !memcmp(p, "\177ELF", 4) && p[4] == 2 && bg_le16(p + 16) == ET_REL;
}

static const char *type_name(uint32_t t) {
  switch (t) {
  case R_X86_64_NONE: return "R_X86_64_NONE";
  case R_X86_64_64: return "R_X86_64_64";
  case R_X86_64_PC32: return "R_X86_64_PC32";
  case R_X86_64_PLT32: return "R_X86_64_PLT32";
  case R_X86_64_GOTPCREL: return "R_X86_64_GOTPCREL";
  case R_X86_64_32: return "R_X86_64_32";
  case R_X86_64_32S: return "R_X86_64_32S";
  case R_X86_64_PC64: return "R_X86_64_PC64";
  case R_X86_64_GOTOFF64: return "R_X86_64_GOTOFF64";
  case R_X86_64_GOTPC32: return "R_X86_64_GOTPC32";
  case R_X86_64_GOTPC64: return "R_X86_64_GOTPC64";
  case R_X86_64_GOTPCRELX: return "R_X86_64_GOTPCRELX";
  case R_X86_64_REX_GOTPCRELX: return "R_X86_64_REX_GOTPCRELX";
  default: return NULL;
  }
}
static bool is_got(uint32_t t) {
  return t == R_X86_64_GOTPCREL || t == R_X86_64_GOTPCRELX || t == R_X86_64_REX_GOTPCRELX;
}
/* Bytes a relocation writes; the GOTPC* types use only the GOT's address, never their symbol's. */
static unsigned width(uint32_t t) {
  return t == R_X86_64_NONE ? 0
         : t == R_X86_64_64 || t == R_X86_64_PC64 || t == R_X86_64_GOTOFF64 || t == R_X86_64_GOTPC64 ? 8 : 4;
}
static bool uses_sym(uint32_t t) { return t != R_X86_64_NONE && t != R_X86_64_GOTPC32 && t != R_X86_64_GOTPC64; }

/* Which group a section is placed in; -1 when it is not loaded. Allocated sections of other kinds are refused. */
static int group_of(const ld *l, unsigned i, int *rc) {
  const sec *s = &l->e.s[i];
  *rc = 0;
  if (!(s->flags & SHF_ALLOC)) return -1;
  if (s->type != BG_SHT_PROGBITS && s->type != BG_SHT_NOBITS && s->type != SHT_X86_64_UNWIND && s->type != BG_SHT_NOTE) {
    *rc = EINV("section %u (%s): sh_type 0x%x with SHF_ALLOC, expected SHT_PROGBITS (1), SHT_NOBITS (8), SHT_NOTE (7) "
               "or SHT_X86_64_UNWIND (0x70000001) (constructors and dynamic sections are not loaded)",
               i, sname(l, i), s->type);
    return -1;
  }
  if (s->flags & SHF_TLS) {
    *rc = EINV("section %u (%s): sh_flags 0x%llx has SHF_TLS: thread-local storage is not supported in kernels", i,
               sname(l, i), (unsigned long long)s->flags);
    return -1;
  }
  if ((s->flags & SHF_WRITE) && (s->flags & SHF_EXECINSTR)) {
    *rc = EINV("section %u (%s): sh_flags 0x%llx has SHF_WRITE and SHF_EXECINSTR, expected at most one (code is never "
               "writable)", i, sname(l, i), (unsigned long long)s->flags);
    return -1;
  }
  return (s->flags & SHF_EXECINSTR) ? G_CODE : (s->flags & SHF_WRITE) ? G_RW : G_RO;
}

/* The entry: a global STT_FUNC named l->entry, defined in an executable loaded section. */
static int find_entry(ld *l) {
  const bg_elf64 *e = &l->e;
  for (uint64_t i = 1; i < e->nsyms; i++) {
    bg_elf64_sym s;
    int rc = bg_elf64_sym_read(e, i, &s);
    if (rc) return rc;
    if (strcmp(s.name, l->entry) != 0 || (s.info >> 4) == STB_LOCAL) continue;
    if ((s.info >> 4) != STB_GLOBAL || (s.info & 0xf) != STT_FUNC)
      return EINV("entry '%s' (symbol %llu): st_info 0x%02x (binding %u, type %u), expected a global (1) STT_FUNC (2)",
                  l->entry, (unsigned long long)i, s.info, s.info >> 4, s.info & 0xf);
    if (s.shndx == SHN_UNDEF || s.shndx >= e->ns || !(e->s[s.shndx].flags & SHF_EXECINSTR) ||
        !(e->s[s.shndx].flags & SHF_ALLOC))
      return EINV("entry '%s' (symbol %llu): st_shndx %u, expected an allocated executable section below %u", l->entry,
                  (unsigned long long)i, s.shndx, e->ns);
    if (s.value >= e->s[s.shndx].size)
      return EINV("entry '%s' (symbol %llu): st_value 0x%llx, expected below the size 0x%llx of section %u (%s)",
                  l->entry, (unsigned long long)i, (unsigned long long)s.value,
                  (unsigned long long)e->s[s.shndx].size, s.shndx, sname(l, s.shndx));
    l->entry_sym = i;
    return 0;
  }
  return EINV("entry '%s' not found: no global STT_FUNC symbol of that name among %llu symbols", l->entry,
              (unsigned long long)e->nsyms);
}

/* Places every loaded section, group after group, and leaves room for the stubs (end of code) and the GOT (end of
 * read-only data). The counts must be known: see count(). */
static int layout(ld *l) {
  uint64_t off = 0;
  l->max_align = PAGE;
  for (int g = 0; g < NGROUPS; g++) {
    off = align_up(off, PAGE);
    l->grp[g] = off;
    for (unsigned i = 1; i < l->e.ns; i++) {
      int rc, gi = group_of(l, i, &rc);
      if (rc) return rc;
      if (gi != g) continue;
      sec *s = &l->e.s[i];
      uint64_t a = s->align ? s->align : 1;   /* a power of two up to 64 KiB (bg_elf64_sections) */
      if (a > l->max_align) l->max_align = a;
      if (s->size > MAX_IMAGE)
        return EINV("section %u (%s): sh_size 0x%llx, expected at most 0x%llx (the image limit)", i, sname(l, i),
                    (unsigned long long)s->size, MAX_IMAGE);
      off = align_up(off, a);
      s->base = off;
      s->loaded = true;
      off += s->size;
      if (off > MAX_IMAGE)
        return EINV("section %u (%s): ends at image offset 0x%llx, past the image limit 0x%llx", i, sname(l, i),
                    (unsigned long long)off, MAX_IMAGE);
    }
    if (g == G_CODE) {
      off = align_up(off, 16);
      l->stub_off = off;
      off += (uint64_t)l->nstubs * STUB_SIZE;
    } else if (g == G_RO) {
      off = align_up(off, 8);
      l->got_off = off;
      off += (uint64_t)l->ngot * 8;
    }
  }
  l->grp[NGROUPS] = align_up(off, PAGE);
  l->size = l->grp[NGROUPS];
  return 0;
}

/* The relocation sections applied: those whose target is loaded. Checks what applying them relies on. */
static int rel_section(const ld *l, unsigned ri, unsigned *target) {
  const bg_elf64 *e = &l->e;
  int rc = bg_elf64_reloc_target(e, ri, target);
  if (rc) return rc;
  if (!(e->s[*target].flags & SHF_ALLOC)) return 1;   /* not loaded: not applied */
  const sec *r = &e->s[ri];
  if (r->type != BG_SHT_RELA)
    return EINV("section %u (%s): sh_type SHT_REL (9), expected SHT_RELA (4): x86-64 relocations carry their addend", ri,
                sname(l, ri));
  if (r->entsize != BG_ELF_RELA_SIZE)
    return EINV("section %u (%s): sh_entsize %llu, expected %u", ri, sname(l, ri), (unsigned long long)r->entsize,
                BG_ELF_RELA_SIZE);
  if (r->link != e->symtab)
    return EINV("section %u (%s): sh_link %u, expected the symbol table %u", ri, sname(l, ri), r->link, e->symtab);
  if (e->s[*target].type == BG_SHT_NOBITS)
    return EINV("section %u (%s): sh_info %u names SHT_NOBITS section %s, which has no bytes to relocate", ri,
                sname(l, ri), *target, sname(l, *target));
  return 0;
}

/* One relocation's entry checked for what counting needs: its type known, its symbol in the table. */
static int rel_entry(const ld *l, unsigned ri, uint64_t k, bg_elf64_rel *r, bg_elf64_sym *sym) {
  bg_elf64_rel_read(&l->e, ri, k, r);
  if (!type_name(r->type))
    return EINV("section %u (%s): relocation %llu: type %u is not supported (expected R_X86_64_64, PC32, PLT32, "
                "GOTPCREL, GOTPCRELX, REX_GOTPCRELX, PC64, 32, 32S, GOTOFF64, GOTPC32 or GOTPC64)",
                ri, sname(l, ri), (unsigned long long)k, r->type);
  if (r->sym >= l->e.nsyms)
    return EINV("section %u (%s): relocation %llu (%s): symbol index %u, expected below %llu", ri, sname(l, ri),
                (unsigned long long)k, type_name(r->type), r->sym, (unsigned long long)l->e.nsyms);
  return bg_elf64_sym_read(&l->e, r->sym, sym);
}

/* GOT slots (GOTPCREL* references, PLT32 to undefined symbols) and stubs (PLT32 to undefined symbols), one per symbol. */
static int count(ld *l) {
  for (unsigned ri = 0; (ri = bg_elf64_next_rel(&l->e, ri)) != 0;) {
    unsigned t;
    int rc = rel_section(l, ri, &t);
    if (rc < 0) return rc;
    if (rc) continue;
    uint64_t n = bg_elf64_rel_count(&l->e, ri);
    for (uint64_t k = 0; k < n; k++) {
      bg_elf64_rel r;
      bg_elf64_sym s;
      if ((rc = rel_entry(l, ri, k, &r, &s))) return rc;
      bool stub = r.type == R_X86_64_PLT32 && r.sym != 0 && s.shndx == SHN_UNDEF;
      if ((is_got(r.type) || stub) && !l->got_of[r.sym]) l->got_of[r.sym] = ++l->ngot;
      if (stub && !l->stub_of[r.sym]) l->stub_of[r.sym] = ++l->nstubs;
    }
  }
  return 0;
}

/* libm is searched too when the process has not loaded it: kernels call expf, sinf... (kept open: images hold its
 * addresses). */
static void *g_libm;
static pthread_once_t g_libm_once = PTHREAD_ONCE_INIT;
static void open_libm(void) { g_libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL); }

static void *lookup(const char *name) {
  void *p = dlsym(RTLD_DEFAULT, name);
  if (!p) {
    pthread_once(&g_libm_once, open_libm);
    if (g_libm) p = dlsym(g_libm, name);
  }
  return p;
}

/* Symbol i's address (cached). */
static int sym_addr(ld *l, uint32_t i, const bg_elf64_sym *s, uint64_t *out) {
  if (l->resolved[i]) {
    *out = l->addr[i];
    return 0;
  }
  const bg_elf64 *e = &l->e;
  unsigned type = s->info & 0xf, bind = s->info >> 4;
  uint64_t a = 0;
  if (i == 0) {
    a = 0;
  } else if (s->shndx == SHN_UNDEF) {
    if (!*s->name) return EINV("symbol %u: undefined (st_shndx 0) and without a name", i);
    void *p = lookup(s->name);
    if (!p && bind != STB_WEAK)
      return EINV("symbol %u: undefined symbol '%s' is not defined in the process or libm (dlsym)", i, s->name);
    a = (uint64_t)(uintptr_t)p;
  } else if (s->shndx == SHN_ABS) {
    a = s->value;
  } else if (s->shndx == SHN_COMMON) {
    return EINV("symbol %u (%s): st_shndx SHN_COMMON (0xfff2): compile with -fno-common", i, s->name);
  } else if (s->shndx >= SHN_LORESERVE || s->shndx >= e->ns) {
    return EINV("symbol %u (%s): st_shndx 0x%x, expected a section index below %u, SHN_UNDEF or SHN_ABS", i, s->name,
                s->shndx, e->ns);
  } else {
    const sec *sc = &e->s[s->shndx];
    if (!sc->loaded)
      return EINV("symbol %u (%s): defined in section %u (%s), which is not loaded (not SHF_ALLOC)", i, s->name,
                  s->shndx, sname(l, s->shndx));
    if (s->value > sc->size)
      return EINV("symbol %u (%s): st_value 0x%llx, past the end 0x%llx of section %u (%s)", i, s->name,
                  (unsigned long long)s->value, (unsigned long long)sc->size, s->shndx, sname(l, s->shndx));
    if (type == STT_TLS || type == STT_GNU_IFUNC)
      return EINV("symbol %u (%s): st_info type %u (STT_TLS or STT_GNU_IFUNC) is not supported", i, s->name, type);
    a = (uint64_t)(uintptr_t)(l->img + sc->base + s->value);
  }
  l->addr[i] = a;
  l->resolved[i] = 1;
  *out = a;
  return 0;
}

/* A symbol's name for messages: a section symbol has none, its section's name says what it is. */
static const char *sym_label(const ld *l, const bg_elf64_sym *s) {
  return *s->name ? s->name : (s->info & 0xf) == STT_SECTION ? sname(l, s->shndx) : "";
}

static bool fits_s32(uint64_t v) {
  int64_t s = (int64_t)v;
  return s >= INT32_MIN && s <= INT32_MAX;
}

/* Applies every relocation of section ri to its target t (the image is mapped and filled). */
static int apply(ld *l, unsigned ri, unsigned t) {
  const sec *ts = &l->e.s[t];
  uint64_t n = bg_elf64_rel_count(&l->e, ri);
  uint64_t got = (uint64_t)(uintptr_t)(l->img + l->got_off);
  for (uint64_t k = 0; k < n; k++) {
    bg_elf64_rel r;
    bg_elf64_sym s;
    int rc = rel_entry(l, ri, k, &r, &s);
    if (rc) return rc;
    unsigned w = width(r.type);
    if (!bg_in_bounds(r.offset, w, ts->size))
      return EINV("section %u (%s): relocation %llu (%s): r_offset 0x%llx + %u bytes past the end 0x%llx of section %u "
                  "(%s)", ri, sname(l, ri), (unsigned long long)k, type_name(r.type), (unsigned long long)r.offset, w,
                  (unsigned long long)ts->size, t, sname(l, t));
    uint64_t S = 0, A = (uint64_t)r.addend;
    if (uses_sym(r.type) && (rc = sym_addr(l, r.sym, &s, &S))) return rc;
    uint8_t *where = l->img + ts->base + r.offset;
    uint64_t P = (uint64_t)(uintptr_t)where, v = 0;
    uint64_t G = l->got_of[r.sym] ? got + (uint64_t)(l->got_of[r.sym] - 1) * 8 : 0;
    bool wide = w == 8, ok = true;
    switch (r.type) {
    case R_X86_64_NONE: continue;
    case R_X86_64_64: v = S + A; break;
    case R_X86_64_PC32: v = S + A - P; ok = fits_s32(v); break;
    case R_X86_64_PLT32: {
      uint64_t L = l->stub_of[r.sym] ? (uint64_t)(uintptr_t)(l->img + l->stub_off) +
                                       (uint64_t)(l->stub_of[r.sym] - 1) * STUB_SIZE : S;
      v = L + A - P;
      ok = fits_s32(v);
      break;
    }
    case R_X86_64_GOTPCREL: case R_X86_64_GOTPCRELX: case R_X86_64_REX_GOTPCRELX:
      v = G + A - P;
      ok = fits_s32(v);
      break;
    case R_X86_64_32: v = S + A; ok = v <= UINT32_MAX; break;
    case R_X86_64_32S: v = S + A; ok = fits_s32(v); break;
    case R_X86_64_PC64: v = S + A - P; break;
    case R_X86_64_GOTOFF64: v = S + A - got; break;
    case R_X86_64_GOTPC32: v = got + A - P; ok = fits_s32(v); break;
    case R_X86_64_GOTPC64: v = got + A - P; break;
    }
    if (!ok)
      return EINV("section %u (%s): relocation %llu (%s) against symbol %u (%s): value 0x%llx does not fit in 32 bits "
                  "(the image is at %p: %s needs the symbol within 2 GiB; compile with -fPIC)", ri, sname(l, ri),
                  (unsigned long long)k, type_name(r.type), r.sym, sym_label(l, &s), (unsigned long long)v, (void *)l->img,
                  type_name(r.type));
    if (wide) bg_put_le64(where, v);
    else bg_put_le32(where, (uint32_t)v);
  }
  return 0;
}

/* GOT slots hold absolute addresses; a stub is `jmp *slot(%rip)` (ff 25 rel32) padded with int3. */
static int fill_got_stubs(ld *l) {
  uint8_t *got = l->img + l->got_off;
  for (uint64_t i = 0; i < l->e.nsyms; i++) {
    if (!l->got_of[i]) continue;
    bg_elf64_sym s;
    uint64_t a;
    int rc = bg_elf64_sym_read(&l->e, i, &s);
    if (rc || (rc = sym_addr(l, (uint32_t)i, &s, &a))) return rc;
    uint8_t *slot = got + (uint64_t)(l->got_of[i] - 1) * 8;
    bg_put_le64(slot, a);
    if (!l->stub_of[i]) continue;
    uint8_t *st = l->img + l->stub_off + (uint64_t)(l->stub_of[i] - 1) * STUB_SIZE;
    st[0] = 0xff;
    st[1] = 0x25;
    bg_put_le32(st + 2, (uint32_t)(slot - (st + 6)));   /* inside the image: fits */
    st[6] = st[7] = 0xcc;
  }
  return 0;
}

static int load(ld *l, const void *bin, size_t size, bg_host_obj *out) {
  bg_elf64 *e = &l->e;
  e->p = bin;
  e->n = size;
  e->who = "host obj";
  int rc = bg_elf64_ident(e, &WANT);
  if (rc || (rc = bg_elf64_sections(e)) || (rc = bg_elf64_find_symtab(e, false))) return rc;
  if ((rc = find_entry(l))) return rc;
  l->got_of = calloc(e->nsyms, sizeof *l->got_of);
  l->stub_of = calloc(e->nsyms, sizeof *l->stub_of);
  l->addr = calloc(e->nsyms, sizeof *l->addr);
  l->resolved = calloc(e->nsyms, 1);
  if (!l->got_of || !l->stub_of || !l->addr || !l->resolved)
    return bg_error(BG_ENOMEM, "host obj: out of memory for %llu symbols", (unsigned long long)e->nsyms);
  if ((rc = count(l)) || (rc = layout(l))) return rc;

  /* Mapped with room to align the image to its largest section alignment (mmap gives pages). */
  size_t extra = l->max_align > PAGE ? l->max_align - PAGE : 0;
  size_t msize = l->size + extra;
  void *m = mmap(NULL, msize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return bg_error(BG_ENOMEM, "host obj: cannot map a %zu-byte image: %s", msize, strerror(errno));
  out->map = m;
  out->map_size = msize;
  l->img = (uint8_t *)(uintptr_t)align_up((uint64_t)(uintptr_t)m, l->max_align);
  for (unsigned i = 1; i < e->ns; i++)
    if (e->s[i].loaded && e->s[i].type != BG_SHT_NOBITS) memcpy(l->img + e->s[i].base, e->p + e->s[i].offset, e->s[i].size);
  if ((rc = fill_got_stubs(l))) return rc;
  for (unsigned ri = 0; (ri = bg_elf64_next_rel(e, ri)) != 0;) {
    unsigned t;
    if ((rc = rel_section(l, ri, &t)) < 0) return rc;
    if (rc == 0 && (rc = apply(l, ri, t))) return rc;
  }
  bg_elf64_sym es;
  uint64_t entry;
  if ((rc = bg_elf64_sym_read(e, l->entry_sym, &es)) || (rc = sym_addr(l, (uint32_t)l->entry_sym, &es, &entry))) return rc;
  /* Code read+execute, read-only data and the GOT read-only, data read+write: never writable and executable. */
  if (mprotect(l->img + l->grp[G_CODE], l->grp[G_RO] - l->grp[G_CODE], PROT_READ | PROT_EXEC) != 0 ||
      mprotect(l->img + l->grp[G_RO], l->grp[G_RW] - l->grp[G_RO], PROT_READ) != 0)
    return bg_error(BG_EIO, "host obj: mprotect of the image: %s", strerror(errno));
  out->image = l->img;
  out->size = l->size;
  out->code_size = l->grp[G_RO];
  out->entry = (void *)(uintptr_t)entry;
  out->ngot = l->ngot;
  out->nstubs = l->nstubs;
  return 0;
}

int bg_host_obj_load(const void *bin, size_t size, const char *entry, bg_host_obj *out) {
  if (!out) return bg_error(BG_EINVAL, "host obj: no output object");
  memset(out, 0, sizeof *out);
  if (!bin) return bg_error(BG_EINVAL, "host obj: no object bytes");
  if (!entry || !*entry) return bg_error(BG_EINVAL, "host obj: no entry name");
  ld l = {.entry = entry};
  int rc = load(&l, bin, size, out);
  free(l.e.s);
  free(l.got_of);
  free(l.stub_of);
  free(l.addr);
  free(l.resolved);
  if (rc) bg_host_obj_free(out);
  return rc;
}

void bg_host_obj_free(bg_host_obj *o) {
  if (!o) return;
  if (o->map) munmap(o->map, o->map_size);
  memset(o, 0, sizeof *o);
}
