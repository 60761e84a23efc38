/* formats/amdgpu_elf.c: the AMD code-object loader (see amdgpu_elf.h).
 *
 * ET_REL (what LLVM emits in memory): every SHF_ALLOC section is placed in file order at its
 * alignment (executable sections at least 256 bytes: COMPUTE_PGM_LO holds the address >> 8), symbols
 * are section base + st_value. ET_DYN (linked): sections are at their sh_addr, symbols are st_value.
 * Relocations of allocated sections are collected with their symbol values (REL: the implicit
 * addend read from the file) and applied by bg_amdgpu_image_relocate; the kernel descriptor is read
 * after relocating at address 0 (kernel_code_entry_byte_offset is an R_AMDGPU_REL64 in ET_REL
 * objects, position independent). Metadata comes from the NT_AMDGPU_METADATA note (msgpack).
 * Only <string.h>-level code: no libelf, every read bounds-checked. */
#include "formats/amdgpu_elf.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "formats/elf64.h"

/* ELF constants, named as the ELF specification and LLVM's BinaryFormat/ELF.h name them. */
enum {
  ET_REL = 1, ET_DYN = 3, EM_AMDGPU = 224,
  SHT_NULL = BG_SHT_NULL, SHT_NOTE = BG_SHT_NOTE, SHT_NOBITS = BG_SHT_NOBITS, SHT_REL = BG_SHT_REL, SHT_RELA = BG_SHT_RELA,
  SHF_ALLOC = 0x2, SHF_EXECINSTR = 0x4,
  SHN_UNDEF = 0, SHN_LORESERVE = 0xff00, SHN_ABS = 0xfff1,
  EF_AMDGPU_MACH = 0x0ff,
  NT_AMDGPU_METADATA = 32,
  R_AMDGPU_NONE = 0, R_AMDGPU_ABS32_LO = 1, R_AMDGPU_ABS32_HI = 2, R_AMDGPU_ABS64 = 3, R_AMDGPU_REL32 = 4,
  R_AMDGPU_REL64 = 5, R_AMDGPU_ABS32 = 6, R_AMDGPU_REL32_LO = 10, R_AMDGPU_REL32_HI = 11, R_AMDGPU_RELATIVE64 = 13,
};
enum { KD_SIZE = 64 };
/* Limits that keep a hostile file from asking for absurd work or memory. */
enum { CODE_ALIGN = 256, PAGE = 4096, MSGPACK_DEPTH = 16 };
#define MAX_IMAGE (256ull << 20)

static const struct { const char *name; unsigned mach; } g_machs[] = {
    {"gfx900", 0x02c},  {"gfx906", 0x02f},  {"gfx908", 0x030},  {"gfx90a", 0x03f},  {"gfx942", 0x04c},
    {"gfx950", 0x04f},  {"gfx1030", 0x036}, {"gfx1100", 0x041}, {"gfx1101", 0x046}, {"gfx1102", 0x047},
    {"gfx1103", 0x044}, {"gfx1150", 0x043}, {"gfx1151", 0x04a}, {"gfx1200", 0x048}, {"gfx1201", 0x04e},
};

unsigned bg_amdgpu_mach(const char *mcpu) {
  for (size_t i = 0; mcpu && i < sizeof g_machs / sizeof *g_machs; i++)
    if (!strcmp(g_machs[i].name, mcpu)) return g_machs[i].mach;
  return 0;
}

const char *bg_amdgpu_mach_name(unsigned mach) {
  for (size_t i = 0; i < sizeof g_machs / sizeof *g_machs; i++)
    if (g_machs[i].mach == mach) return g_machs[i].name;
  return NULL;
}

/* The ELF64 reading is formats/elf64.c's. */
typedef bg_elf64_sec sec;
typedef bg_elf64 elf;
static const char *sname(const elf *e, unsigned i) { return bg_elf64_sname(e, i); }

#define EINV(...) bg_error(BG_EINVAL, "amdgpu elf: " __VA_ARGS__)

static const bg_elf64_want WANT = {EM_AMDGPU, "EM_AMDGPU (224)", ET_REL, ET_DYN, "ET_REL (1) or ET_DYN (3)"};

static int read_header(elf *e, unsigned *mach) {
  int rc = bg_elf64_ident(e, &WANT);
  if (rc) return rc;
  *mach = e->flags & EF_AMDGPU_MACH;
  return bg_elf64_sections(e);
}

/* Addresses of the allocated sections and the image size. */
static int layout(elf *e, uint64_t *size) {
  uint64_t end = 0;
  for (unsigned i = 1; i < e->ns; i++) {
    sec *s = &e->s[i];
    if (!(s->flags & SHF_ALLOC)) continue;
    uint64_t align = s->align ? s->align : 1;
    if ((s->flags & SHF_EXECINSTR) && align < CODE_ALIGN) align = CODE_ALIGN;
    if (e->type == ET_DYN) {
      s->base = s->addr;
    } else {
      s->base = (end + align - 1) & ~(align - 1);
    }
    if (s->base > MAX_IMAGE || s->size > MAX_IMAGE - s->base)
      return EINV("section %u (%s): address 0x%llx + sh_size 0x%llx exceeds the %llu MiB image limit", i, sname(e, i),
                  (unsigned long long)s->base, (unsigned long long)s->size, MAX_IMAGE >> 20);
    if (s->base + s->size > end) end = s->base + s->size;
  }
  if (end == 0) return EINV("no allocated (SHF_ALLOC) section with contents");
  *size = (end + PAGE - 1) & ~(uint64_t)(PAGE - 1);
  return 0;
}

/* A symbol; value is its address in the image (read_sym). */
typedef bg_elf64_sym sym;

static int read_sym(const elf *e, uint64_t i, sym *out) {
  int rc = bg_elf64_sym_read(e, i, out);
  if (rc) return rc;
  uint64_t v = out->value;
  if (e->type == ET_DYN || out->shndx == SHN_ABS || out->shndx == SHN_UNDEF) {
    out->value = v;
  } else if (out->shndx >= e->ns || out->shndx >= SHN_LORESERVE) {
    return EINV("symbol %llu (%s): st_shndx %u, expected below e_shnum %u", (unsigned long long)i, out->name, out->shndx, e->ns);
  } else {
    const sec *s = &e->s[out->shndx];
    if (!(s->flags & SHF_ALLOC) && v) out->value = v;  /* a non-loaded section: never a relocation target we apply */
    else if (v > s->size) return EINV("symbol %llu (%s): st_value 0x%llx beyond its section %u (%s) of 0x%llx bytes",
                                      (unsigned long long)i, out->name, (unsigned long long)v, out->shndx,
                                      sname(e, out->shndx), (unsigned long long)s->size);
    else out->value = s->base + v;
  }
  return 0;
}

/* ---- relocations ---- */

static unsigned reloc_width(uint32_t type) {
  switch (type) {
  case R_AMDGPU_ABS64: case R_AMDGPU_REL64: case R_AMDGPU_RELATIVE64: return 8;
  case R_AMDGPU_ABS32_LO: case R_AMDGPU_ABS32_HI: case R_AMDGPU_REL32: case R_AMDGPU_ABS32: case R_AMDGPU_REL32_LO:
  case R_AMDGPU_REL32_HI: return 4;
  default: return 0;
  }
}

static int collect_relocs(const elf *e, bg_amdgpu_image *img) {
  int rc;
  img->relocs = bg_elf64_reloc_array(e, MAX_IMAGE / 4, sizeof *img->relocs, &rc);
  if (rc) return rc;
  for (unsigned i = 0; (i = bg_elf64_next_rel(e, i)) != 0;) {
    const sec *s = &e->s[i];
    bool rela = s->type == SHT_RELA;
    uint64_t base = 0;
    if (e->type == ET_REL) {   /* r_offset is relative to the section sh_info names */
      unsigned ti;
      if ((rc = bg_elf64_reloc_target(e, i, &ti))) return rc;
      const sec *t = &e->s[ti];
      if (!(t->flags & SHF_ALLOC)) continue;   /* debug info and the like: not loaded */
      base = t->base;
    }
    elf es = *e;   /* the relocations' own symbol table */
    if ((rc = bg_elf64_use_symtab(&es, s->link, i))) return rc;
    uint64_t n = bg_elf64_rel_count(e, i);
    for (uint64_t k = 0; k < n; k++) {
      bg_elf64_rel r;
      bg_elf64_rel_read(e, i, k, &r);
      if (r.type == R_AMDGPU_NONE) continue;
      uint64_t off = r.offset;
      uint32_t type = r.type, si = r.sym;
      unsigned w = reloc_width(type);
      if (!w)
        return EINV("section %u (%s): relocation %llu has type %u, expected one of R_AMDGPU_ABS32_LO/HI (1/2), ABS64 (3), "
                    "REL32 (4), REL64 (5), ABS32 (6), REL32_LO/HI (10/11), RELATIVE64 (13)", i, sname(e, i),
                    (unsigned long long)k, type);
      uint64_t at = base + off;
      if (off > img->size || !bg_in_bounds(at, w, img->size))
        return EINV("section %u (%s): relocation %llu: r_offset 0x%llx + %u bytes outside the 0x%llx-byte image", i,
                    sname(e, i), (unsigned long long)k, (unsigned long long)at, w, (unsigned long long)img->size);
      sym sy = {0};
      if (si && read_sym(&es, si, &sy)) return bg_error_context(-BG_EINVAL, "section %u (%s): relocation %llu: ", i,
                                                              sname(e, i), (unsigned long long)k);
      if (si && sy.shndx == SHN_UNDEF)
        return EINV("section %u (%s): relocation %llu refers to the undefined symbol '%s'", i, sname(e, i),
                    (unsigned long long)k, sy.name);
      int64_t addend = rela ? r.addend : w == 8 ? (int64_t)bg_le64(img->data + at) : (int64_t)(int32_t)bg_le32(img->data + at);
      img->relocs[img->nrelocs++] = (bg_amdgpu_reloc){.offset = at, .type = type, .sym = sy.value, .addend = addend};
    }
  }
  return 0;
}

int bg_amdgpu_image_relocate(bg_amdgpu_image *img, uint64_t va) {
  if (!img || !img->data) return bg_error(BG_EINVAL, "amdgpu elf: relocate: no image");
  for (size_t i = 0; i < img->nrelocs; i++) {
    const bg_amdgpu_reloc *r = &img->relocs[i];
    unsigned w = reloc_width(r->type);
    if (!w || !bg_in_bounds(r->offset, w, img->size))
      return bg_error(BG_EINVAL, "amdgpu elf: relocation %zu: type %u at 0x%llx outside the 0x%llx-byte image", i, r->type,
                      (unsigned long long)r->offset, (unsigned long long)img->size);
    uint64_t S = va + r->sym, P = va + r->offset, A = (uint64_t)r->addend, v;
    switch (r->type) {
    case R_AMDGPU_REL32: case R_AMDGPU_REL64: case R_AMDGPU_REL32_LO: v = S + A - P; break;
    case R_AMDGPU_REL32_HI: v = (S + A - P) >> 32; break;
    case R_AMDGPU_ABS32_HI: v = (S + A) >> 32; break;
    case R_AMDGPU_RELATIVE64: v = va + A; break;
    default: v = S + A; break;   /* ABS32_LO, ABS32, ABS64 */
    }
    if (w == 8) bg_put_le64(img->data + r->offset, v);
    else bg_put_le32(img->data + r->offset, (uint32_t)v);
  }
  return 0;
}

/* ---- msgpack (the metadata note): a bounded reader, depth-limited skipping ---- */

typedef struct mp {
  const uint8_t *p, *end;
  bool bad;
} mp;

static bool mp_take(mp *m, size_t n, const uint8_t **out) {
  if (m->bad || (size_t)(m->end - m->p) < n) return m->bad = true, false;
  *out = m->p;
  m->p += n;
  return true;
}

static uint64_t mp_be(mp *m, unsigned n) {
  const uint8_t *b;
  uint64_t v = 0;
  if (!mp_take(m, n, &b)) return 0;
  for (unsigned i = 0; i < n; i++) v = v << 8 | b[i];
  return v;
}

enum mp_kind { MP_INT, MP_STR, MP_ARRAY, MP_MAP, MP_OTHER };

/* Reads one item's header: ints give their value, strings their bytes, containers their count,
 * anything else is skipped whole (its payload length n). */
static enum mp_kind mp_head(mp *m, int64_t *val, const uint8_t **str, uint64_t *n) {
  const uint8_t *b;
  *n = 0;
  *val = 0;
  if (!mp_take(m, 1, &b)) return MP_OTHER;
  uint8_t t = *b;
  uint64_t skip = 0;
  if (t <= 0x7f) return *val = t, MP_INT;
  if (t >= 0xe0) return *val = (int8_t)t, MP_INT;
  if ((t & 0xf0) == 0x80) return *n = t & 0x0f, MP_MAP;
  if ((t & 0xf0) == 0x90) return *n = t & 0x0f, MP_ARRAY;
  if ((t & 0xe0) == 0xa0) { *n = t & 0x1f; goto str; }
  switch (t) {
  case 0xcc: case 0xcd: case 0xce: case 0xcf: *val = (int64_t)mp_be(m, 1u << (t - 0xcc)); return MP_INT;
  case 0xd0: *val = (int8_t)mp_be(m, 1); return MP_INT;
  case 0xd1: *val = (int16_t)mp_be(m, 2); return MP_INT;
  case 0xd2: *val = (int32_t)mp_be(m, 4); return MP_INT;
  case 0xd3: *val = (int64_t)mp_be(m, 8); return MP_INT;
  case 0xd9: case 0xda: case 0xdb: *n = mp_be(m, 1u << (t - 0xd9)); goto str;
  case 0xdc: *n = mp_be(m, 2); return MP_ARRAY;
  case 0xdd: *n = mp_be(m, 4); return MP_ARRAY;
  case 0xde: *n = mp_be(m, 2); return MP_MAP;
  case 0xdf: *n = mp_be(m, 4); return MP_MAP;
  case 0xc0: case 0xc2: case 0xc3: return MP_OTHER;   /* nil, false, true */
  case 0xca: skip = 4; break;
  case 0xcb: skip = 8; break;
  case 0xc4: case 0xc5: case 0xc6: skip = mp_be(m, 1u << (t - 0xc4)); break;   /* bin */
  case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: skip = 1 + (1u << (t - 0xd4)); break;   /* fixext */
  case 0xc7: case 0xc8: case 0xc9: skip = 1 + mp_be(m, 1u << (t - 0xc7)); break;   /* ext */
  default: m->bad = true; return MP_OTHER;   /* 0xc1: never used */
  }
  if (!mp_take(m, skip, &b)) return MP_OTHER;
  return MP_OTHER;
str:
  if (!mp_take(m, *n, str)) return MP_OTHER;
  return MP_STR;
}

static void mp_skip(mp *m, unsigned depth) {
  int64_t v;
  const uint8_t *s;
  uint64_t n;
  enum mp_kind k = mp_head(m, &v, &s, &n);
  if (k != MP_ARRAY && k != MP_MAP) return;
  if (depth >= MSGPACK_DEPTH || n > (uint64_t)(m->end - m->p)) {   /* each item takes at least a byte */
    m->bad = true;
    return;
  }
  uint64_t items = k == MP_MAP ? 2 * n : n;
  for (uint64_t i = 0; i < items && !m->bad; i++) mp_skip(m, depth + 1);
}

static bool mp_str_eq(const uint8_t *s, uint64_t n, const char *lit) { return n == strlen(lit) && !memcmp(s, lit, n); }

static bool mp_uint(mp *m, uint32_t *out) {
  int64_t v;
  const uint8_t *s;
  uint64_t n;
  if (mp_head(m, &v, &s, &n) != MP_INT || v < 0 || v > UINT32_MAX) return false;
  *out = (uint32_t)v;
  return true;
}

typedef struct kmeta {
  bool found;
  uint32_t kernarg_size, kernarg_align, max_flat, reqd[3], wave, sgpr, vgpr;
} kmeta;

/* One kernel's map: fields kept when its .name or .symbol matches. */
static void mp_kernel(mp *m, uint64_t nkeys, const char *name, kmeta *km) {
  kmeta k = {.found = false};
  bool match = false;
  size_t nl = strlen(name);
  for (uint64_t i = 0; i < nkeys && !m->bad; i++) {
    int64_t v;
    const uint8_t *key;
    uint64_t kl;
    if (mp_head(m, &v, &key, &kl) != MP_STR) {
      m->bad = true;
      return;
    }
    if (mp_str_eq(key, kl, ".name") || mp_str_eq(key, kl, ".symbol")) {
      const uint8_t *s;
      uint64_t sl;
      if (mp_head(m, &v, &s, &sl) != MP_STR) { m->bad = true; return; }
      if ((sl == nl && !memcmp(s, name, nl)) || (sl == nl + 3 && !memcmp(s, name, nl) && !memcmp(s + nl, ".kd", 3))) match = true;
    } else if (mp_str_eq(key, kl, ".reqd_workgroup_size")) {
      const uint8_t *s;
      uint64_t n;
      if (mp_head(m, &v, &s, &n) != MP_ARRAY || n != 3) { m->bad = true; return; }
      for (int d = 0; d < 3 && !m->bad; d++)
        if (!mp_uint(m, &k.reqd[d])) m->bad = true;
    } else {
      uint32_t *dst = mp_str_eq(key, kl, ".kernarg_segment_size") ? &k.kernarg_size
                      : mp_str_eq(key, kl, ".kernarg_segment_align") ? &k.kernarg_align
                      : mp_str_eq(key, kl, ".max_flat_workgroup_size") ? &k.max_flat
                      : mp_str_eq(key, kl, ".wavefront_size") ? &k.wave
                      : mp_str_eq(key, kl, ".sgpr_count") ? &k.sgpr
                      : mp_str_eq(key, kl, ".vgpr_count") ? &k.vgpr : NULL;
      if (!dst) mp_skip(m, 2);
      else if (!mp_uint(m, dst)) m->bad = true;
    }
  }
  if (match && !m->bad) {
    k.found = true;
    *km = k;
  }
}

static int parse_metadata(const uint8_t *d, size_t n, const char *name, kmeta *km) {
  mp m = {d, d + n, false};
  int64_t v;
  const uint8_t *s;
  uint64_t cnt;
  if (mp_head(&m, &v, &s, &cnt) != MP_MAP) return EINV("NT_AMDGPU_METADATA: the note is not a msgpack map");
  for (uint64_t i = 0; i < cnt && !m.bad; i++) {
    const uint8_t *key;
    uint64_t kl, nk;
    if (mp_head(&m, &v, &key, &kl) != MP_STR) {
      m.bad = true;
      break;
    }
    if (!mp_str_eq(key, kl, "amdhsa.kernels")) {
      mp_skip(&m, 1);
      continue;
    }
    uint64_t nker;
    if (mp_head(&m, &v, &s, &nker) != MP_ARRAY) {
      m.bad = true;
      break;
    }
    for (uint64_t j = 0; j < nker && !m.bad; j++) {
      if (mp_head(&m, &v, &s, &nk) != MP_MAP) m.bad = true;
      else mp_kernel(&m, nk, name, km);
    }
  }
  if (m.bad) return EINV("NT_AMDGPU_METADATA: malformed msgpack at byte %zu of %zu", (size_t)(m.p - d), n);
  return 0;
}

/* Walks SHT_NOTE sections for the "AMDGPU" NT_AMDGPU_METADATA note. */
static int read_notes(const elf *e, const char *name, kmeta *km) {
  for (unsigned i = 1; i < e->ns; i++) {
    const sec *s = &e->s[i];
    if (s->type != SHT_NOTE) continue;
    const uint8_t *p = e->p + s->offset;
    uint64_t off = 0;
    while (off + 12 <= s->size) {
      uint32_t namesz = bg_le32(p + off), descsz = bg_le32(p + off + 4), type = bg_le32(p + off + 8);
      uint64_t name_at = off + 12, desc_at = name_at + (((uint64_t)namesz + 3) & ~3ull);
      if (!bg_in_bounds(name_at, namesz, s->size) || !bg_in_bounds(desc_at, descsz, s->size))
        return EINV("section %u (%s): note at 0x%llx: n_namesz %u / n_descsz %u exceed the section size 0x%llx", i,
                    sname(e, i), (unsigned long long)off, namesz, descsz, (unsigned long long)s->size);
      if (type == NT_AMDGPU_METADATA && namesz == 7 && !memcmp(p + name_at, "AMDGPU", 7)) {
        int rc = parse_metadata(p + desc_at, descsz, name, km);
        if (rc) return rc;
      }
      off = desc_at + (((uint64_t)descsz + 3) & ~3ull);
    }
  }
  return 0;
}

/* ---- the kernel ---- */

static int find_kernel(const elf *e, const char *want, bg_amdgpu_image *img) {
  uint64_t found = 0;
  sym kd = {0};
  for (uint64_t i = 1; i < e->nsyms; i++) {
    sym s;
    if (read_sym(e, i, &s)) return -BG_EINVAL;
    size_t l = strlen(s.name);
    if (l < 4 || strcmp(s.name + l - 3, ".kd") || s.shndx == SHN_UNDEF) continue;
    if (want ? (l - 3 != strlen(want) || memcmp(s.name, want, l - 3)) : false) continue;
    if (found && !want) return EINV("kernel name not given and the file holds several kernels ('%s', '%s')", kd.name, s.name);
    if (!found) kd = s;
    found = i;
  }
  if (!found) return want ? EINV("no symbol '%s.kd' (kernel descriptor of '%s')", want, want) : EINV("no kernel descriptor symbol (*.kd)");
  size_t l = strlen(kd.name) - 3;
  if (l >= sizeof img->name) return EINV("kernel name of %zu bytes, expected below %zu", l, sizeof img->name);
  memcpy(img->name, kd.name, l);
  img->name[l] = 0;
  bool inside = false;   /* the 64 bytes lie in one allocated section with contents */
  for (unsigned i = 1; i < e->ns && !inside; i++) {
    const sec *s = &e->s[i];
    inside = (s->flags & SHF_ALLOC) && s->type != SHT_NOBITS && kd.value >= s->base && bg_in_bounds(kd.value - s->base, KD_SIZE, s->size);
  }
  if (!inside)
    return EINV("symbol '%s': kernel descriptor at 0x%llx + %u bytes is not inside one allocated section", kd.name,
                (unsigned long long)kd.value, KD_SIZE);
  img->kd_offset = kd.value;
  return 0;
}

static void read_kd(const uint8_t *p, bg_amdgpu_kd *kd) {
  kd->group_segment_fixed_size = bg_le32(p + 0);
  kd->private_segment_fixed_size = bg_le32(p + 4);
  kd->kernarg_size = bg_le32(p + 8);
  kd->kernel_code_entry_byte_offset = (int64_t)bg_le64(p + 16);
  kd->compute_pgm_rsrc3 = bg_le32(p + 44);
  kd->compute_pgm_rsrc1 = bg_le32(p + 48);
  kd->compute_pgm_rsrc2 = bg_le32(p + 52);
  kd->kernel_code_properties = bg_le16(p + 56);
  kd->kernarg_preload = bg_le16(p + 58);
}

/* The executable section holding the image offset, or 0. */
static unsigned code_section(const elf *e, uint64_t at) {
  for (unsigned i = 1; i < e->ns; i++) {
    const sec *s = &e->s[i];
    if ((s->flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR) && at >= s->base && at - s->base < s->size)
      return i;
  }
  return 0;
}

static int load(elf *e, const char *kernel_name, bg_amdgpu_image *img) {
  unsigned mach = 0;
  int rc = read_header(e, &mach);
  if (rc || (rc = layout(e, &img->size)) || (rc = bg_elf64_find_symtab(e, true))) return rc;
  const char *mcpu = bg_amdgpu_mach_name(mach);
  if (!mcpu) return EINV("e_flags EF_AMDGPU_MACH 0x%03x is not a processor this loader knows (gfx9/gfx10/gfx11/gfx12)", mach);
  snprintf(img->mcpu, sizeof img->mcpu, "%s", mcpu);
  if (!(img->data = calloc(1, img->size))) return bg_error(BG_ENOMEM, "amdgpu elf: out of memory for a %llu-byte image",
                                                          (unsigned long long)img->size);
  for (unsigned i = 1; i < e->ns; i++) {
    const sec *s = &e->s[i];
    /* SHT_NULL, like SHT_NOBITS, has no bytes in the file (its sh_offset is not checked): nothing to copy. */
    if ((s->flags & SHF_ALLOC) && s->type != SHT_NOBITS && s->type != SHT_NULL && s->size)
      memcpy(img->data + s->base, e->p + s->offset, s->size);
  }
  if ((rc = collect_relocs(e, img)) || (rc = find_kernel(e, kernel_name, img))) return rc;
  if ((rc = bg_amdgpu_image_relocate(img, 0))) return rc;
  read_kd(img->data + img->kd_offset, &img->kd);
  int64_t eo = img->kd.kernel_code_entry_byte_offset;
  uint64_t code = img->kd_offset + (uint64_t)eo;
  /* -eo > kd_offset, as -(eo + 1) >= kd_offset: no overflow at INT64_MIN. */
  if ((eo < 0 && (uint64_t)(-(eo + 1)) >= img->kd_offset) || (eo > 0 && (uint64_t)eo >= img->size - img->kd_offset) || !code_section(e, code))
    return EINV("kernel '%s': kernel_code_entry_byte_offset %lld from the descriptor at 0x%llx is not in an executable section",
                img->name, (long long)eo, (unsigned long long)img->kd_offset);
  if (code % CODE_ALIGN)
    return EINV("kernel '%s': first instruction at 0x%llx, expected %u-byte alignment (COMPUTE_PGM_LO holds address >> 8)",
                img->name, (unsigned long long)code, CODE_ALIGN);
  img->code_offset = code;
  kmeta km = {.found = false};
  if ((rc = read_notes(e, img->name, &km))) return rc;
  if (km.found) {
    img->kernarg_segment_size = km.kernarg_size;
    img->kernarg_segment_align = km.kernarg_align;
    img->max_flat_workgroup_size = km.max_flat;
    memcpy(img->reqd_workgroup_size, km.reqd, sizeof km.reqd);
    img->wavefront_size = km.wave;
    img->sgpr_count = km.sgpr;
    img->vgpr_count = km.vgpr;
  }
  return 0;
}

int bg_amdgpu_elf_load(const void *data, size_t n, const char *kernel_name, bg_amdgpu_image *out) {
  if (!out) return bg_error(BG_EINVAL, "amdgpu elf: no output image");
  memset(out, 0, sizeof *out);
  if (!data) return bg_error(BG_EINVAL, "amdgpu elf: no input bytes");
  elf e = {.p = data, .n = n, .who = "amdgpu elf"};
  int rc = load(&e, kernel_name, out);
  free(e.s);
  if (rc) bg_amdgpu_image_free(out);
  return rc;
}

void bg_amdgpu_image_free(bg_amdgpu_image *img) {
  if (!img) return;
  free(img->data);
  free(img->relocs);
  memset(img, 0, sizeof *img);
}
