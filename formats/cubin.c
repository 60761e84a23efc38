/* formats/cubin.c: the NVIDIA cubin loader (see cubin.h).
 *
 * Layout: every SHF_ALLOC section except the per-block .nv.shared.* and per-thread .nv.local.* ones
 * goes into one image in file order, each at max(sh_addralign, 128) (instruction fetch works in
 * 128-byte lines; tinygrad's runtime/support/elf.py uses the same floor); NOBITS sections such as
 * .nv.global are zero-filled. Symbols are section base + st_value.
 * Kernels: a .nv.info.<name> section (sh_info: its .text.<name>) marks an entry; its records and the
 * records of the file-wide .nv.info keyed by the kernel's symbol index give the launch facts. Records
 * are {u8 format, u8 attribute, u16 value-or-size}; format EIFMT_SVAL (4) is followed by `size`
 * payload bytes (attribute ids as cuobjdump -elf names them; tinygrad ops_nv.py NVProgram reads the
 * same three). Unknown attributes are skipped by their size; a record running past its section is an
 * error. Relocations of loaded sections are collected (RELA addends kept: tinygrad drops them) and
 * applied by bg_cubin_relocate. Only <string.h>-level code, every read bounds-checked. */
#include "formats/cubin.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "formats/elf64.h"

enum {
  ET_REL = 1, ET_EXEC = 2, EM_CUDA = 190,
  SHT_NULL = BG_SHT_NULL, SHT_PROGBITS = BG_SHT_PROGBITS, SHT_RELA = BG_SHT_RELA, SHT_NOBITS = BG_SHT_NOBITS, SHT_REL = BG_SHT_REL,
  SHF_ALLOC = 0x2, SHF_EXECINSTR = 0x4,
  SHN_UNDEF = 0, SHN_LORESERVE = 0xff00,
  /* .nv.info record formats and the attributes read here (EIATTR_*, cuobjdump -elf spelling). */
  EIFMT_NVAL = 1, EIFMT_BVAL = 2, EIFMT_HVAL = 3, EIFMT_SVAL = 4,
  EIATTR_MAX_THREADS = 0x05, EIATTR_PARAM_CBANK = 0x0a, EIATTR_REQNTID = 0x10, EIATTR_FRAME_SIZE = 0x11,
  EIATTR_MIN_STACK_SIZE = 0x12, EIATTR_KPARAM_INFO = 0x17, EIATTR_CBANK_PARAM_SIZE = 0x19,
  EIATTR_EXIT_INSTR_OFFSETS = 0x1c, EIATTR_MAX_STACK_SIZE = 0x23, EIATTR_REGCOUNT = 0x2f,
  /* Relocation types (R_CUDA_*, as cuobjdump -elf prints them). */
  R_CUDA_NONE = 0, R_CUDA_32 = 1, R_CUDA_64 = 2, R_CUDA_ABS32_LO_32 = 0x38, R_CUDA_ABS32_HI_32 = 0x39,
};
enum { MIN_ALIGN = 128, PAGE = 4096, MAX_PARAMS = 4096 };
#define MAX_IMAGE (256ull << 20)

static bool starts(const char *s, const char *pre) { return s && !strncmp(s, pre, strlen(pre)); }

#define EINV(...) bg_error(BG_EINVAL, "cubin: " __VA_ARGS__)

/* The ELF64 reading is formats/elf64.c's. */
typedef bg_elf64_sec sec;
typedef bg_elf64 elf;
static const char *sname(const elf *e, unsigned i) { return bg_elf64_sname(e, i); }

static const bg_elf64_want WANT = {EM_CUDA, "EM_CUDA (190)", ET_EXEC, ET_REL, "ET_EXEC (2) or ET_REL (1)"};

static int read_header(elf *e, unsigned *sm) {
  int rc = bg_elf64_ident(e, &WANT);
  if (rc) return rc;
  /* The SM: e_flags bits 0-7 up to ELF ABI version 7 (CUDA 12), bits 8-15 from version 8 (CUDA 13). */
  *sm = e->abiversion >= 8 ? (e->flags >> 8) & 0xff : e->flags & 0xff;
  if (*sm < 30)
    return EINV("e_flags 0x%08x (EI_ABIVERSION %u): SM version %u, expected 30 or more", e->flags, e->abiversion, *sm);
  return bg_elf64_sections(e);
}

/* Which sections go to GPU memory, at which offsets (see the top of the file). */
static int layout(elf *e, bg_cubin *c) {
  uint64_t end = 0;
  size_t n = 0;
  for (unsigned i = 1; i < e->ns; i++) {
    sec *s = &e->s[i];
    if (!(s->flags & SHF_ALLOC) || starts(s->sname, ".nv.shared.") || starts(s->sname, ".nv.local.")) continue;
    if (s->type != SHT_PROGBITS && s->type != SHT_NOBITS) continue;
    uint64_t align = s->align > MIN_ALIGN ? s->align : MIN_ALIGN;
    s->base = (end + align - 1) & ~(align - 1);
    if (s->base > MAX_IMAGE || s->size > MAX_IMAGE - s->base)
      return EINV("section %u (%s): offset 0x%llx + sh_size 0x%llx exceeds the %llu MiB image limit", i, sname(e, i),
                  (unsigned long long)s->base, (unsigned long long)s->size, MAX_IMAGE >> 20);
    s->loaded = true;
    end = s->base + s->size;
    n++;
  }
  if (n == 0) return EINV("no loadable (SHF_ALLOC) section");
  c->image_size = (end + PAGE - 1) & ~(uint64_t)(PAGE - 1);
  if (c->image_size == 0) c->image_size = PAGE;
  if (!(c->image = calloc(1, c->image_size)) || !(c->sections = calloc(n, sizeof *c->sections)))
    return bg_error(BG_ENOMEM, "cubin: out of memory for a 0x%llx-byte image", (unsigned long long)c->image_size);
  for (unsigned i = 1; i < e->ns; i++) {
    const sec *s = &e->s[i];
    if (!s->loaded) continue;
    bg_cubin_section *o = &c->sections[c->nsections++];
    *o = (bg_cubin_section){.index = i, .offset = s->base, .size = s->size, .nobits = s->type == SHT_NOBITS};
    snprintf(o->name, sizeof o->name, "%s", sname(e, i));
    if (s->type == SHT_PROGBITS) memcpy(c->image + s->base, e->p + s->offset, s->size);
  }
  return 0;
}

/* A symbol: value is st_value (section relative). */
typedef bg_elf64_sym sym;

/* ---- .nv.info records ---- */

typedef struct attr {
  unsigned fmt, id;
  uint16_t value;          /* the u16 of non-SVAL records; the payload size of SVAL ones */
  const uint8_t *payload;  /* SVAL only */
  uint64_t at;             /* record offset in its section, for messages */
} attr;

/* The record at *off in section si; 1 when one was read, 0 at the end, <0 on a malformed record. */
static int next_attr(const elf *e, unsigned si, uint64_t *off, attr *a) {
  const sec *s = &e->s[si];
  if (*off >= s->size) return 0;
  /* Info sections are found by name: one of a type without file bytes has an unchecked sh_offset. */
  if (s->type == SHT_NOBITS || s->type == SHT_NULL)
    return EINV("section %u (%s): type %u has no bytes in the file, expected attribute records (SHT_CUDA_INFO)", si,
                sname(e, si), s->type);
  if (s->size - *off < 4)
    return EINV("section %u (%s): record at offset 0x%llx: %llu bytes left, expected a 4-byte header", si, sname(e, si),
                (unsigned long long)*off, (unsigned long long)(s->size - *off));
  const uint8_t *p = e->p + s->offset + *off;
  *a = (attr){.fmt = p[0], .id = p[1], .value = bg_le16(p + 2), .at = *off};
  *off += 4;
  if (a->fmt < EIFMT_NVAL || a->fmt > EIFMT_SVAL)
    return EINV("section %u (%s): record at offset 0x%llx (attribute 0x%02x): format %u, expected 1..4", si, sname(e, si),
                (unsigned long long)a->at, a->id, a->fmt);
  if (a->fmt == EIFMT_SVAL) {
    if (a->value > s->size - *off)
      return EINV("section %u (%s): attribute 0x%02x at offset 0x%llx: size %u exceeds the %llu bytes left in the section",
                  si, sname(e, si), a->id, (unsigned long long)a->at, a->value, (unsigned long long)(s->size - *off));
    a->payload = p + 4;
    *off += a->value;
  }
  return 1;
}

/* A known attribute with the wrong format or size. */
static int bad_attr(const elf *e, unsigned si, const attr *a, const char *name, const char *want) {
  return EINV("section %u (%s): %s (0x%02x) at offset 0x%llx: format %u size %u, expected %s", si, sname(e, si), name, a->id,
              (unsigned long long)a->at, a->fmt, a->value, want);
}

static bool sval(const attr *a, unsigned size) { return a->fmt == EIFMT_SVAL && a->value == size; }

typedef struct kstate {
  bg_cubin_kernel *k;
  uint64_t symidx;
  bool have_cbank, have_regs;
} kstate;

/* Records keyed by the kernel's symbol: in .nv.info (and accepted in .nv.info.<name>). */
static int sym_attr(const elf *e, unsigned si, const attr *a, kstate *ks) {
  const char *nm = a->id == EIATTR_REGCOUNT ? "EIATTR_REGCOUNT" : a->id == EIATTR_FRAME_SIZE ? "EIATTR_FRAME_SIZE"
                   : a->id == EIATTR_MIN_STACK_SIZE ? "EIATTR_MIN_STACK_SIZE" : "EIATTR_MAX_STACK_SIZE";
  if (!sval(a, 8)) return bad_attr(e, si, a, nm, "4 (SVAL) size 8 {u32 symbol, u32 value}");
  if (bg_le32(a->payload) != ks->symidx) return 0;
  uint32_t v = bg_le32(a->payload + 4);
  switch (a->id) {
  case EIATTR_REGCOUNT: ks->k->regs = v; ks->have_regs = true; break;
  case EIATTR_FRAME_SIZE: ks->k->frame_size = v; break;
  case EIATTR_MIN_STACK_SIZE: ks->k->min_stack = v; break;
  default: ks->k->max_stack = v; break;
  }
  return 0;
}

static int kernel_attr(const elf *e, unsigned si, const attr *a, kstate *ks, bool *seen) {
  bg_cubin_kernel *k = ks->k;
  switch (a->id) {
  case EIATTR_REGCOUNT: case EIATTR_FRAME_SIZE: case EIATTR_MIN_STACK_SIZE: case EIATTR_MAX_STACK_SIZE:
    return sym_attr(e, si, a, ks);
  case EIATTR_PARAM_CBANK:
    if (!sval(a, 8)) return bad_attr(e, si, a, "EIATTR_PARAM_CBANK", "4 (SVAL) size 8 {u32 symbol, u16 offset, u16 size}");
    k->param_base = bg_le16(a->payload + 4);
    k->param_size = bg_le16(a->payload + 6);
    ks->have_cbank = true;
    return 0;
  case EIATTR_CBANK_PARAM_SIZE:
    if (a->fmt != EIFMT_HVAL) return bad_attr(e, si, a, "EIATTR_CBANK_PARAM_SIZE", "3 (HVAL)");
    k->cbank_param_size = a->value;
    return 0;
  case EIATTR_KPARAM_INFO: {
    if (!sval(a, 12))
      return bad_attr(e, si, a, "EIATTR_KPARAM_INFO", "4 (SVAL) size 12 {u32 index, u16 ordinal, u16 offset, u32 flags}");
    uint32_t ord = bg_le16(a->payload + 4), off = bg_le16(a->payload + 6), size = bg_le32(a->payload + 8) >> 18;
    if (ord >= k->nparams || seen[ord])
      return EINV("section %u (%s): EIATTR_KPARAM_INFO at offset 0x%llx: ordinal %u is %s", si, sname(e, si),
                  (unsigned long long)a->at, ord, ord >= k->nparams ? "beyond the parameter count" : "a duplicate");
    seen[ord] = true;
    k->params[ord] = (bg_cubin_param){.ordinal = ord, .offset = off, .size = size};
    return 0;
  }
  case EIATTR_MAX_THREADS: case EIATTR_REQNTID: {
    const char *nm = a->id == EIATTR_MAX_THREADS ? "EIATTR_MAX_THREADS" : "EIATTR_REQNTID";
    if (!sval(a, 12)) return bad_attr(e, si, a, nm, "4 (SVAL) size 12 {u32 x, y, z}");
    uint32_t *dst = a->id == EIATTR_MAX_THREADS ? k->max_threads : k->reqntid;
    for (int d = 0; d < 3; d++) dst[d] = bg_le32(a->payload + 4 * d);
    return 0;
  }
  case EIATTR_EXIT_INSTR_OFFSETS:
    if (a->fmt != EIFMT_SVAL || a->value % 4)
      return bad_attr(e, si, a, "EIATTR_EXIT_INSTR_OFFSETS", "4 (SVAL) with a multiple of 4 bytes");
    for (unsigned i = 0; i < a->value / 4u; i++)
      if (bg_le32(a->payload + 4 * i) >= k->code_size)
        return EINV("section %u (%s): EIATTR_EXIT_INSTR_OFFSETS entry %u: 0x%x is beyond the 0x%llx-byte code", si,
                    sname(e, si), i, bg_le32(a->payload + 4 * i), (unsigned long long)k->code_size);
    k->nexits += a->value / 4u;
    return 0;
  default:
    return 0;   /* unknown to this loader: skipped by its size */
  }
}

/* Walk section si, calling kernel_attr for each record (count_only: count EIATTR_KPARAM_INFO). */
static int walk_info(const elf *e, unsigned si, kstate *ks, bool *seen, bool count_only) {
  uint64_t off = 0;
  attr a;
  int rc;
  while ((rc = next_attr(e, si, &off, &a)) > 0) {
    if (count_only) {
      if (a.id == EIATTR_KPARAM_INFO && ++ks->k->nparams > MAX_PARAMS)
        return EINV("section %u (%s): more than %u EIATTR_KPARAM_INFO records", si, sname(e, si), MAX_PARAMS);
      continue;
    }
    if (ks->symidx == UINT64_MAX) {   /* the file-wide section: only symbol-keyed records concern a kernel */
      if (a.id == EIATTR_REGCOUNT || a.id == EIATTR_FRAME_SIZE || a.id == EIATTR_MIN_STACK_SIZE || a.id == EIATTR_MAX_STACK_SIZE)
        if (!sval(&a, 8)) return bad_attr(e, si, &a, "a symbol-keyed attribute", "4 (SVAL) size 8 {u32 symbol, u32 value}");
      continue;
    }
    if ((rc = kernel_attr(e, si, &a, ks, seen))) return rc;
  }
  return rc;
}

static int find_section(const elf *e, const char *prefix, const char *name) {
  for (unsigned i = 1; i < e->ns; i++) {
    const char *s = e->s[i].sname;
    size_t pl = strlen(prefix);
    if (s && !strncmp(s, prefix, pl) && !strcmp(s + pl, name)) return (int)i;
  }
  return 0;
}

static int load_kernel(const elf *e, unsigned info_si, bg_cubin_kernel *k) {
  const char *name = sname(e, info_si) + strlen(".nv.info.");
  if (snprintf(k->name, sizeof k->name, "%s", name) >= (int)sizeof k->name)
    return EINV("section %u (%s): kernel name longer than %zu bytes", info_si, sname(e, info_si), sizeof k->name - 1);
  unsigned ti = e->s[info_si].info;
  if (ti == 0 || ti >= e->ns || !starts(e->s[ti].sname, ".text.") || strcmp(e->s[ti].sname + 6, name) ||
      !(e->s[ti].flags & SHF_EXECINSTR) || !e->s[ti].loaded)
    return EINV("section %u (%s): sh_info %u (%s), expected the loaded code section .text.%s", info_si, sname(e, info_si), ti,
                sname(e, ti), name);
  k->code_offset = e->s[ti].base;
  k->code_size = e->s[ti].size;
  kstate ks = {.k = k, .symidx = UINT64_MAX};
  for (uint64_t i = 1; i < e->nsyms; i++) {
    sym sy;
    int rc = bg_elf64_sym_read(e, i, &sy);
    if (rc) return rc;
    if (sy.shndx == ti && !strcmp(sy.name, name)) {
      ks.symidx = i;
      break;
    }
  }
  if (ks.symidx == UINT64_MAX) return EINV("kernel %s: no symbol named %s in section %u (%s)", name, name, ti, sname(e, ti));
  int rc = walk_info(e, info_si, &ks, NULL, true);
  if (rc) return rc;
  bool *seen = calloc(k->nparams + 1, sizeof *seen);
  if (k->nparams && !(k->params = calloc(k->nparams, sizeof *k->params))) rc = bg_error(BG_ENOMEM, "cubin: out of memory");
  if (!seen && !rc) rc = bg_error(BG_ENOMEM, "cubin: out of memory");
  if (!rc) rc = walk_info(e, info_si, &ks, seen, false);
  for (unsigned i = 1; !rc && i < e->ns; i++)   /* file-wide .nv.info sections */
    if (e->s[i].sname && !strcmp(e->s[i].sname, ".nv.info")) {
      uint64_t off = 0;
      attr a;
      int r;
      while (!rc && (r = next_attr(e, i, &off, &a)) != 0) {
        if (r < 0) rc = r;
        else if (a.id == EIATTR_REGCOUNT || a.id == EIATTR_FRAME_SIZE || a.id == EIATTR_MIN_STACK_SIZE ||
                 a.id == EIATTR_MAX_STACK_SIZE)
          rc = sym_attr(e, i, &a, &ks);
      }
    }
  free(seen);
  if (rc) return rc;
  if (!ks.have_cbank) return EINV("kernel %s: no EIATTR_PARAM_CBANK record in .nv.info.%s (the parameter base)", name, name);
  if (!ks.have_regs) return EINV("kernel %s: no EIATTR_REGCOUNT record for symbol %llu", name, (unsigned long long)ks.symidx);
  if (k->cbank_param_size && k->cbank_param_size != k->param_size)
    return EINV("kernel %s: EIATTR_CBANK_PARAM_SIZE 0x%x, expected the EIATTR_PARAM_CBANK size 0x%x", name, k->cbank_param_size,
                k->param_size);
  for (uint32_t i = 0; i < k->nparams; i++) {
    const bg_cubin_param *p = &k->params[i];
    if (p->size == 0 || p->offset + (uint64_t)p->size > k->param_size)
      return EINV("kernel %s: parameter %u: offset 0x%x size 0x%x, expected a nonempty range within the 0x%x parameter bytes",
                  name, i, p->offset, p->size, k->param_size);
  }
  int c0 = find_section(e, ".nv.constant0.", name);
  if (!c0 || !e->s[c0].loaded) return EINV("kernel %s: no loaded section .nv.constant0.%s (constant bank 0)", name, name);
  k->cbank0_offset = e->s[c0].base;
  k->cbank0_size = (uint32_t)e->s[c0].size;
  if (k->param_base + (uint64_t)k->param_size > e->s[c0].size)
    return EINV("kernel %s: EIATTR_PARAM_CBANK offset 0x%x + size 0x%x exceeds .nv.constant0.%s of 0x%llx bytes", name,
                k->param_base, k->param_size, name, (unsigned long long)e->s[c0].size);
  int sh = find_section(e, ".nv.shared.", name);
  if (sh) {
    if (e->s[sh].size > UINT32_MAX) return EINV("section %u (%s): sh_size 0x%llx, expected below 4 GiB", sh, sname(e, sh),
                                                (unsigned long long)e->s[sh].size);
    k->shared = (uint32_t)e->s[sh].size;
  }
  k->local = k->frame_size > k->min_stack ? k->frame_size : k->min_stack;
  if (k->max_stack > k->local) k->local = k->max_stack;
  /* Constant banks 1..17: the kernel's own .nv.constantN.<name>, else a file-wide .nv.constantN. */
  for (unsigned b = 1; b < BG_CUBIN_NBANKS; b++) {
    char pre[32], whole[32];
    snprintf(pre, sizeof pre, ".nv.constant%u.", b);
    snprintf(whole, sizeof whole, ".nv.constant%u", b);
    int si = find_section(e, pre, name);
    if (!si) si = find_section(e, whole, "");
    if (si && e->s[si].loaded) {
      k->bank_offset[b] = e->s[si].base;
      k->bank_size[b] = e->s[si].size;
    }
  }
  k->bank_offset[0] = k->cbank0_offset;
  k->bank_size[0] = k->cbank0_size;
  return 0;
}

/* ---- relocations ---- */

static unsigned reloc_width(uint32_t type) {
  switch (type) {
  case R_CUDA_64: return 8;
  case R_CUDA_32: case R_CUDA_ABS32_LO_32: case R_CUDA_ABS32_HI_32: return 4;
  default: return 0;
  }
}
/* Where the field starts relative to r_offset: the 32-bit immediate of a 128-bit instruction is at bits 32-63. */
static unsigned reloc_skip(uint32_t type) { return type == R_CUDA_ABS32_LO_32 || type == R_CUDA_ABS32_HI_32 ? 4 : 0; }

static int collect_relocs(const elf *e, bg_cubin *c) {
  int rc;
  c->relocs = bg_elf64_reloc_array(e, MAX_IMAGE / 4, sizeof *c->relocs, &rc);
  if (rc) return rc;
  for (unsigned i = 0; (i = bg_elf64_next_rel(e, i)) != 0;) {
    const sec *s = &e->s[i];
    unsigned ti;
    if ((rc = bg_elf64_reloc_target(e, i, &ti))) return rc;
    const sec *t = &e->s[ti];
    if (!t->loaded) continue;   /* .debug_frame and the like: not in GPU memory */
    if (t->type == SHT_NOBITS) return EINV("section %u (%s): relocates NOBITS section %u (%s)", i, sname(e, i), s->info,
                                           sname(e, s->info));
    if (s->link != e->symtab)
      return EINV("section %u (%s): sh_link %u, expected the symbol table %u", i, sname(e, i), s->link, e->symtab);
    uint64_t n = bg_elf64_rel_count(e, i);
    for (uint64_t k = 0; k < n; k++) {
      bg_elf64_rel r;
      bg_elf64_rel_read(e, i, k, &r);
      if (r.type == R_CUDA_NONE) continue;
      uint64_t off = r.offset;
      uint32_t type = r.type, si = r.sym;
      unsigned w = reloc_width(type), skip = reloc_skip(type);
      if (!w)
        return EINV("section %u (%s): relocation %llu: unknown type %u (0x%x), expected R_CUDA_32 (1), R_CUDA_64 (2), "
                    "R_CUDA_ABS32_LO_32 (0x38) or R_CUDA_ABS32_HI_32 (0x39)", i, sname(e, i), (unsigned long long)k, type, type);
      if (!bg_in_bounds(off, (uint64_t)skip + w, t->size))
        return EINV("section %u (%s): relocation %llu: r_offset 0x%llx + %u bytes outside section %u (%s) of 0x%llx bytes", i,
                    sname(e, i), (unsigned long long)k, (unsigned long long)off, skip + w, s->info, sname(e, s->info),
                    (unsigned long long)t->size);
      sym sy;
      if ((rc = bg_elf64_sym_read(e, si, &sy)))
        return bg_error_context(rc, "section %u (%s): relocation %llu: ", i, sname(e, i), (unsigned long long)k);
      if (sy.shndx == SHN_UNDEF || sy.shndx >= SHN_LORESERVE || sy.shndx >= e->ns || !e->s[sy.shndx].loaded)
        return EINV("section %u (%s): relocation %llu: symbol %u (%s) in section %u, expected a section loaded in the image", i,
                    sname(e, i), (unsigned long long)k, si, sy.name, sy.shndx);
      const sec *ss = &e->s[sy.shndx];
      if (sy.value > ss->size)
        return EINV("section %u (%s): relocation %llu: symbol %s st_value 0x%llx beyond its section %u (%s) of 0x%llx bytes", i,
                    sname(e, i), (unsigned long long)k, sy.name, (unsigned long long)sy.value, sy.shndx, sname(e, sy.shndx),
                    (unsigned long long)ss->size);
      /* REL entries: addend 0 (ptxas writes RELA). */
      c->relocs[c->nrelocs++] = (bg_cubin_reloc){.offset = t->base + off, .type = type, .sym = ss->base + sy.value,
                                                 .addend = r.addend};
    }
  }
  return 0;
}

int bg_cubin_relocate(const bg_cubin *c, uint64_t va, uint8_t *dst) {
  if (!c || !c->image || !dst) return bg_error(BG_EINVAL, "cubin: relocate: no image or no destination");
  memcpy(dst, c->image, c->image_size);
  for (size_t i = 0; i < c->nrelocs; i++) {
    const bg_cubin_reloc *r = &c->relocs[i];
    unsigned w = reloc_width(r->type), skip = reloc_skip(r->type);
    if (!w || !bg_in_bounds(r->offset, (uint64_t)skip + w, c->image_size))
      return EINV("relocation %zu: type %u at 0x%llx outside the image", i, r->type, (unsigned long long)r->offset);
    uint64_t v = va + r->sym + (uint64_t)r->addend;
    uint8_t *p = dst + r->offset + skip;
    switch (r->type) {
    case R_CUDA_64: bg_put_le64(p, v); break;
    case R_CUDA_32:
      if (v > UINT32_MAX)
        return EINV("relocation %zu: R_CUDA_32 at image offset 0x%llx: value 0x%llx does not fit 32 bits (image VA 0x%llx)", i,
                    (unsigned long long)r->offset, (unsigned long long)v, (unsigned long long)va);
      bg_put_le32(p, (uint32_t)v);
      break;
    case R_CUDA_ABS32_LO_32: bg_put_le32(p, (uint32_t)v); break;
    default: bg_put_le32(p, (uint32_t)(v >> 32)); break;
    }
  }
  return 0;
}

static int load(elf *e, bg_cubin *c) {
  int rc = read_header(e, &c->sm);
  if (!rc) rc = layout(e, c);
  if (!rc) rc = bg_elf64_find_symtab(e, false);
  if (rc) return rc;
  size_t nk = 0;
  for (unsigned i = 1; i < e->ns; i++) nk += starts(e->s[i].sname, ".nv.info.");
  if (nk == 0) return EINV("no kernel: no .nv.info.<name> section");
  if (!(c->kernels = calloc(nk, sizeof *c->kernels))) return bg_error(BG_ENOMEM, "cubin: out of memory for %zu kernels", nk);
  for (unsigned i = 1; i < e->ns; i++) {
    if (!starts(e->s[i].sname, ".nv.info.")) continue;
    if ((rc = load_kernel(e, i, &c->kernels[c->nkernels++]))) return rc;
  }
  for (unsigned i = 1; i < e->ns; i++)   /* the file-wide .nv.info: every record well formed */
    if (e->s[i].sname && !strcmp(e->s[i].sname, ".nv.info")) {
      kstate none = {.symidx = UINT64_MAX};
      if ((rc = walk_info(e, i, &none, NULL, false))) return rc;
    }
  return collect_relocs(e, c);
}

int bg_cubin_load(const void *data, size_t n, bg_cubin *out) {
  if (!out) return bg_error(BG_EINVAL, "cubin: no output");
  memset(out, 0, sizeof *out);
  if (!data) return bg_error(BG_EINVAL, "cubin: no input bytes");
  elf e = {.p = data, .n = n, .who = "cubin"};
  int rc = load(&e, out);
  free(e.s);
  if (rc) bg_cubin_free(out);
  return rc;
}

const bg_cubin_kernel *bg_cubin_kernel_find(const bg_cubin *c, const char *name) {
  if (!c) return NULL;
  if (!name) {
    if (c->nkernels == 1) return &c->kernels[0];
    bg_error(BG_EINVAL, "cubin: %zu kernels and no kernel name given", c->nkernels);
    return NULL;
  }
  for (size_t i = 0; i < c->nkernels; i++)
    if (!strcmp(c->kernels[i].name, name)) return &c->kernels[i];
  bg_error(BG_EINVAL, "cubin: no kernel named '%s' (%zu kernels)", name, c->nkernels);
  return NULL;
}

void bg_cubin_free(bg_cubin *c) {
  if (!c) return;
  for (size_t i = 0; i < c->nkernels; i++) free(c->kernels[i].params);
  free(c->kernels);
  free(c->image);
  free(c->sections);
  free(c->relocs);
  memset(c, 0, sizeof *c);
}
