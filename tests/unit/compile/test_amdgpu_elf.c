/* tests/unit/compile/test_amdgpu_elf.c: the AMD code-object loader (formats/amdgpu_elf.h) on code
 * objects written by the test itself (no LLVM needed): a relocatable object shaped like LLVM's
 * (.text, .rodata kernel descriptor with its R_AMDGPU_REL64 entry offset, .note metadata in msgpack,
 * .data with one relocation of every supported type) and the same laid out as ET_DYN; each
 * relocation formula at two load addresses; malformed headers, sections, symbols, relocations,
 * descriptors and notes each rejected with -BG_EINVAL naming the field; every truncation of the
 * object, and 10,000 random byte flips (fixed seed), without a crash (run it under ASan). */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "formats/amdgpu_elf.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

/* ---------------- a little byte writer ---------------- */

typedef struct wbuf {
  uint8_t b[8192];
  size_t n;
} wbuf;

static void put(wbuf *w, const void *p, size_t n) {
  ck_assert_uint_le(w->n + n, sizeof w->b);
  memcpy(w->b + w->n, p, n);
  w->n += n;
}
static void put8(wbuf *w, uint8_t v) { put(w, &v, 1); }
static void le(wbuf *w, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++) put8(w, i < 8 ? (uint8_t)(v >> (8 * i)) : 0);   /* n > 8: zero fill */
}
static void pad_to(wbuf *w, size_t align) {
  while (w->n % align) put8(w, 0);
}
static void set_le(uint8_t *p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

/* msgpack, as the metadata note holds it */
static void mp_str(wbuf *w, const char *s) {
  size_t n = strlen(s);
  if (n < 32) put8(w, (uint8_t)(0xa0 | n));
  else {
    put8(w, 0xd9);
    put8(w, (uint8_t)n);
  }
  put(w, s, n);
}
static void mp_uint(wbuf *w, uint32_t v) {
  if (v < 128) put8(w, (uint8_t)v);
  else {
    put8(w, 0xce);
    for (int i = 3; i >= 0; i--) put8(w, (uint8_t)(v >> (8 * i)));
  }
}

static void metadata(wbuf *w, const char *kname) {
  char sym[80];
  snprintf(sym, sizeof sym, "%s.kd", kname);
  put8(w, 0x83);   /* map of 3 */
  mp_str(w, "amdhsa.version");
  put8(w, 0x92);
  mp_uint(w, 1);
  mp_uint(w, 2);
  mp_str(w, "amdhsa.target");
  mp_str(w, "amdgcn-amd-amdhsa--gfx1100");
  mp_str(w, "amdhsa.kernels");
  put8(w, 0x91);
  put8(w, 0x8d);   /* map of 13 */
  mp_str(w, ".name"); mp_str(w, kname);
  mp_str(w, ".symbol"); mp_str(w, sym);
  mp_str(w, ".kernarg_segment_size"); mp_uint(w, 20);
  mp_str(w, ".kernarg_segment_align"); mp_uint(w, 8);
  mp_str(w, ".max_flat_workgroup_size"); mp_uint(w, 256);
  mp_str(w, ".reqd_workgroup_size"); put8(w, 0x93); mp_uint(w, 64); mp_uint(w, 4); mp_uint(w, 1);
  mp_str(w, ".wavefront_size"); mp_uint(w, 32);
  mp_str(w, ".sgpr_count"); mp_uint(w, 18);
  mp_str(w, ".vgpr_count"); mp_uint(w, 300);
  mp_str(w, ".uses_dynamic_stack"); put8(w, 0xc2);
  mp_str(w, ".max_ratio"); put8(w, 0xcb); le(w, 0, 8);   /* a float64 to skip */
  mp_str(w, ".args"); put8(w, 0x91); put8(w, 0x82); mp_str(w, ".size"); mp_uint(w, 8); mp_str(w, ".offset"); mp_uint(w, 0);
  mp_str(w, ".language"); mp_str(w, "OpenCL C");
}

/* ---------------- the test object ---------------- */

enum { S_NULL, S_TEXT, S_RODATA, S_DATA, S_NOTE, S_RELA_RODATA, S_RELA_DATA, S_SYMTAB, S_STRTAB, S_SHSTRTAB, NSEC };
enum { TEXT_SIZE = 512, DATA_SIZE = 64, KD_KERNARG = 20 };

typedef struct obj {
  wbuf w;
  uint64_t sh_off[NSEC], sh_size[NSEC], sh_addr[NSEC];
  size_t shoff;             /* section header table */
  size_t reloc_at[8];       /* file offsets of the .rela.data entries */
  size_t kd_at;             /* file offset of the kernel descriptor */
} obj;

/* The relocations in .data: (offset in .data, type, symbol, addend). */
static const struct { uint64_t off; uint32_t type; uint32_t sym; int64_t addend; } DATA_RELOCS[] = {
    {0, 3, 1, 4},      /* R_AMDGPU_ABS64 -> k + 4 */
    {8, 1, 1, 8},      /* R_AMDGPU_ABS32_LO */
    {12, 2, 1, 8},     /* R_AMDGPU_ABS32_HI */
    {16, 10, 2, -4},   /* R_AMDGPU_REL32_LO -> k.kd - 4 */
    {20, 11, 2, -4},   /* R_AMDGPU_REL32_HI */
    {24, 5, 1, 0},     /* R_AMDGPU_REL64 */
    {32, 13, 0, 64},   /* R_AMDGPU_RELATIVE64: base + 64 */
    {40, 6, 3, 0},     /* R_AMDGPU_ABS32 -> data */
};
enum { NDATA_RELOCS = sizeof DATA_RELOCS / sizeof *DATA_RELOCS };

/* ET_REL (dyn false) or ET_DYN (sections at the addresses the loader would choose, symbols absolute). */
static void build(obj *o, bool dyn) {
  memset(o, 0, sizeof *o);
  wbuf *w = &o->w;
  static const char shstr[] = "\0.text\0.rodata\0.data\0.note\0.rela.rodata\0.rela.data\0.symtab\0.strtab\0.shstrtab";
  static const char str[] = "\0k\0k.kd\0data";
  /* addresses as ET_REL layout gives them: text 0, rodata 0x200, data 0x240, note 0x280 */
  o->sh_addr[S_TEXT] = 0;
  o->sh_addr[S_RODATA] = 0x200;
  o->sh_addr[S_DATA] = 0x240;
  o->sh_addr[S_NOTE] = 0x280;
  le(w, 0, 64);   /* header, filled below */
  pad_to(w, 256);
  o->sh_off[S_TEXT] = w->n;
  for (int i = 0; i < TEXT_SIZE / 4; i++) le(w, 0xbf810000u, 4);   /* s_endpgm */
  o->sh_size[S_TEXT] = TEXT_SIZE;
  pad_to(w, 64);
  o->sh_off[S_RODATA] = o->kd_at = w->n;
  le(w, 0x400, 4);                 /* group_segment_fixed_size */
  le(w, 16, 4);                    /* private_segment_fixed_size */
  le(w, KD_KERNARG, 4);            /* kernarg_size */
  le(w, 0, 4);
  le(w, dyn ? (uint64_t)(0 - 0x200) : 0, 8);   /* kernel_code_entry_byte_offset: REL64 fills it in ET_REL */
  le(w, 0, 20);
  le(w, 0x3, 4);                   /* rsrc3 */
  le(w, 0x60af0000u, 4);           /* rsrc1 */
  le(w, 0x1384, 4);                /* rsrc2 */
  le(w, 0x408, 2);                 /* kernel_code_properties: kernarg ptr, wave32 */
  le(w, 0, 2);
  le(w, 0, 4);
  o->sh_size[S_RODATA] = 64;
  o->sh_off[S_DATA] = w->n;
  le(w, 0, DATA_SIZE);
  o->sh_size[S_DATA] = DATA_SIZE;
  o->sh_off[S_NOTE] = w->n;
  wbuf md = {.n = 0};
  metadata(&md, "k");
  le(w, 7, 4);
  le(w, md.n, 4);
  le(w, 32, 4);                    /* NT_AMDGPU_METADATA */
  put(w, "AMDGPU\0", 8);
  put(w, md.b, md.n);
  pad_to(w, 4);
  o->sh_size[S_NOTE] = w->n - o->sh_off[S_NOTE];
  pad_to(w, 8);
  uint64_t abs_base = dyn ? 1 : 0;   /* ET_DYN: r_offset and symbol values are addresses */
  o->sh_off[S_RELA_RODATA] = w->n;
  le(w, 16 + (abs_base ? o->sh_addr[S_RODATA] : 0), 8);
  le(w, (uint64_t)1 << 32 | 5, 8);   /* R_AMDGPU_REL64 -> k */
  le(w, 16, 8);
  o->sh_size[S_RELA_RODATA] = 24;
  if (dyn) o->sh_size[S_RELA_RODATA] = 0;   /* linked: the entry offset is already final */
  o->sh_off[S_RELA_DATA] = w->n;
  for (int i = 0; i < NDATA_RELOCS; i++) {
    o->reloc_at[i] = w->n;
    le(w, DATA_RELOCS[i].off + (abs_base ? o->sh_addr[S_DATA] : 0), 8);
    le(w, (uint64_t)DATA_RELOCS[i].sym << 32 | DATA_RELOCS[i].type, 8);
    le(w, (uint64_t)DATA_RELOCS[i].addend, 8);
  }
  o->sh_size[S_RELA_DATA] = 24 * NDATA_RELOCS;
  o->sh_off[S_SYMTAB] = w->n;
  le(w, 0, 24);
  /* k: FUNC in .text at 0; k.kd: OBJECT in .rodata at 0; data: OBJECT in .data at 8 */
  const struct { uint32_t name; uint8_t info; uint16_t shndx; uint64_t value, size; } syms[] = {
      {1, 0x12, S_TEXT, 0, TEXT_SIZE}, {3, 0x11, S_RODATA, 0, 64}, {8, 0x11, S_DATA, 8, 8}};
  for (int i = 0; i < 3; i++) {
    le(w, syms[i].name, 4);
    put8(w, syms[i].info);
    put8(w, 0);
    le(w, syms[i].shndx, 2);
    le(w, syms[i].value + (dyn ? o->sh_addr[syms[i].shndx] : 0), 8);
    le(w, syms[i].size, 8);
  }
  o->sh_size[S_SYMTAB] = 4 * 24;
  o->sh_off[S_STRTAB] = w->n;
  put(w, str, sizeof str);
  o->sh_size[S_STRTAB] = sizeof str;
  o->sh_off[S_SHSTRTAB] = w->n;
  put(w, shstr, sizeof shstr);
  o->sh_size[S_SHSTRTAB] = sizeof shstr;
  pad_to(w, 8);
  o->shoff = w->n;
  const struct { uint32_t name, type; uint64_t flags, align, entsize; uint32_t link, info; } sh[NSEC] = {
      {0, 0, 0, 0, 0, 0, 0},         {1, 1, 0x6, 256, 0, 0, 0},        {7, 1, 0x2, 64, 0, 0, 0},
      {15, 1, 0x3, 8, 0, 0, 0},      {21, 7, 0x2, 4, 0, 0, 0},         {27, 4, 0x40, 8, 24, S_SYMTAB, S_RODATA},
      {40, 4, 0x40, 8, 24, S_SYMTAB, S_DATA}, {51, 2, 0, 8, 24, S_STRTAB, 1}, {59, 3, 0, 1, 0, 0, 0},
      {67, 3, 0, 1, 0, 0, 0}};
  for (int i = 0; i < NSEC; i++) {
    le(w, sh[i].name, 4);
    le(w, sh[i].type, 4);
    le(w, sh[i].flags, 8);
    le(w, dyn && (sh[i].flags & 2) ? o->sh_addr[i] : 0, 8);
    le(w, o->sh_off[i], 8);
    le(w, o->sh_size[i], 8);
    le(w, sh[i].link, 4);
    le(w, sh[i].info, 4);
    le(w, sh[i].align, 8);
    le(w, sh[i].entsize, 8);
  }
  uint8_t *h = w->b;
  memcpy(h, "\177ELF", 4);
  h[4] = 2;      /* ELFCLASS64 */
  h[5] = 1;      /* ELFDATA2LSB */
  h[6] = 1;
  h[7] = 64;     /* ELFOSABI_AMDGPU_HSA */
  h[8] = 3;      /* ABI version: code object v5 */
  set_le(h + 16, dyn ? 3 : 1, 2);
  set_le(h + 18, 224, 2);
  set_le(h + 20, 1, 4);
  set_le(h + 40, o->shoff, 8);
  set_le(h + 48, 0x041, 4);   /* EF_AMDGPU_MACH_AMDGCN_GFX1100 */
  set_le(h + 52, 64, 2);
  set_le(h + 58, 64, 2);
  set_le(h + 60, NSEC, 2);
  set_le(h + 62, S_SHSTRTAB, 2);
}

static uint8_t *shdr(obj *o, int i) { return o->w.b + o->shoff + 64 * (size_t)i; }

/* ---------------- valid objects ---------------- */

static void check_image(bg_amdgpu_image *img, bool dyn) {
  ck_assert_str_eq(img->mcpu, "gfx1100");
  ck_assert_str_eq(img->name, "k");
  ck_assert_uint_eq(img->kd_offset, 0x200);
  ck_assert_uint_eq(img->code_offset, 0);
  ck_assert_int_eq(img->kd.kernel_code_entry_byte_offset, -0x200);
  ck_assert_uint_eq(img->kd.group_segment_fixed_size, 0x400);
  ck_assert_uint_eq(img->kd.private_segment_fixed_size, 16);
  ck_assert_uint_eq(img->kd.kernarg_size, KD_KERNARG);
  ck_assert_uint_eq(img->kd.compute_pgm_rsrc1, 0x60af0000u);
  ck_assert_uint_eq(img->kd.compute_pgm_rsrc2, 0x1384);
  ck_assert_uint_eq(img->kd.compute_pgm_rsrc3, 0x3);
  ck_assert_uint_eq(img->kd.kernel_code_properties, 0x408);
  ck_assert_uint_eq(img->kernarg_segment_size, 20);
  ck_assert_uint_eq(img->kernarg_segment_align, 8);
  ck_assert_uint_eq(img->max_flat_workgroup_size, 256);
  ck_assert_uint_eq(img->reqd_workgroup_size[0], 64);
  ck_assert_uint_eq(img->reqd_workgroup_size[1], 4);
  ck_assert_uint_eq(img->reqd_workgroup_size[2], 1);
  ck_assert_uint_eq(img->wavefront_size, 32);
  ck_assert_uint_eq(img->sgpr_count, 18);
  ck_assert_uint_eq(img->vgpr_count, 300);
  ck_assert_uint_eq(img->size, 4096);
  ck_assert_uint_eq(img->nrelocs, NDATA_RELOCS + (dyn ? 0 : 1));
  ck_assert_uint_eq(get_le(img->data, 4), 0xbf810000u);
  /* each formula at two addresses, and again (idempotent) */
  const uint64_t vas[3] = {0x7f0000000000ull, 0x100000000ull, 0x7f0000000000ull};
  for (int t = 0; t < 3; t++) {
    uint64_t va = vas[t], k = va, kd = va + 0x200, data = va + 0x240 + 8;
    OK(bg_amdgpu_image_relocate(img, va));
    const uint8_t *d = img->data + 0x240;
    ck_assert_uint_eq(get_le(d + 0, 8), k + 4);
    ck_assert_uint_eq(get_le(d + 8, 4), (uint32_t)(k + 8));
    ck_assert_uint_eq(get_le(d + 12, 4), (uint32_t)((k + 8) >> 32));
    uint64_t rel = kd - 4 - (va + 0x240 + 16);
    ck_assert_uint_eq(get_le(d + 16, 4), (uint32_t)rel);
    uint64_t relhi = kd - 4 - (va + 0x240 + 20);
    ck_assert_uint_eq(get_le(d + 20, 4), (uint32_t)(relhi >> 32));
    ck_assert_uint_eq(get_le(d + 24, 8), k - (va + 0x240 + 24));
    ck_assert_uint_eq(get_le(d + 32, 8), va + 64);
    ck_assert_uint_eq(get_le(d + 40, 4), (uint32_t)data);
    ck_assert_int_eq((int64_t)get_le(img->data + 0x200 + 16, 8), -0x200);
  }
}

START_TEST(load_relocatable) {
  obj o;
  build(&o, false);
  bg_amdgpu_image img;
  OK(bg_amdgpu_elf_load(o.w.b, o.w.n, "k", &img));
  check_image(&img, false);
  bg_amdgpu_image_free(&img);
  OK(bg_amdgpu_elf_load(o.w.b, o.w.n, NULL, &img));   /* the only kernel */
  ck_assert_str_eq(img.name, "k");
  bg_amdgpu_image_free(&img);
  ck_assert_int_eq(bg_amdgpu_elf_load(o.w.b, o.w.n, "other", &img), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "other.kd"));
  ck_assert_ptr_null(img.data);
}
END_TEST

START_TEST(load_linked) {
  obj o;
  build(&o, true);
  bg_amdgpu_image img;
  OK(bg_amdgpu_elf_load(o.w.b, o.w.n, "k", &img));
  check_image(&img, true);
  bg_amdgpu_image_free(&img);
}
END_TEST

START_TEST(mach_names) {
  ck_assert_uint_eq(bg_amdgpu_mach("gfx1100"), 0x041);
  ck_assert_uint_eq(bg_amdgpu_mach("gfx1201"), 0x04e);
  ck_assert_uint_eq(bg_amdgpu_mach("gfx942"), 0x04c);
  ck_assert_uint_eq(bg_amdgpu_mach("gfx950"), 0x04f);
  ck_assert_uint_eq(bg_amdgpu_mach("gfx9999"), 0);
  ck_assert_str_eq(bg_amdgpu_mach_name(0x048), "gfx1200");
  ck_assert_ptr_null(bg_amdgpu_mach_name(0));
}
END_TEST

/* ---------------- malformed objects ---------------- */

typedef void (*mutator)(obj *o);
static void m_magic(obj *o) { o->w.b[1] = 'X'; }
static void m_class(obj *o) { o->w.b[4] = 1; }
static void m_data(obj *o) { o->w.b[5] = 2; }
static void m_type(obj *o) { set_le(o->w.b + 16, 2, 2); }
static void m_machine(obj *o) { set_le(o->w.b + 18, 62, 2); }
static void m_mach(obj *o) { set_le(o->w.b + 48, 0x0ee, 4); }
static void m_shentsize(obj *o) { set_le(o->w.b + 58, 40, 2); }
static void m_shoff(obj *o) { set_le(o->w.b + 40, o->w.n - 64, 8); }
static void m_shnum(obj *o) { set_le(o->w.b + 60, 0, 2); }
static void m_shstrndx(obj *o) { set_le(o->w.b + 62, NSEC, 2); }
static void m_sec_offset(obj *o) { set_le(shdr(o, S_TEXT) + 24, 0xfffffffffffff000ull, 8); }
static void m_sec_size(obj *o) { set_le(shdr(o, S_NOTE) + 32, o->w.n, 8); }
static void m_sec_align(obj *o) { set_le(shdr(o, S_RODATA) + 48, 3, 8); }
static void m_huge_bss(obj *o) {
  set_le(shdr(o, S_DATA) + 4, 8, 4);   /* SHT_NOBITS of 1 TiB */
  set_le(shdr(o, S_DATA) + 32, 1ull << 40, 8);
}
static void m_symtab_entsize(obj *o) { set_le(shdr(o, S_SYMTAB) + 56, 16, 8); }
static void m_symtab_link(obj *o) { set_le(shdr(o, S_SYMTAB) + 40, S_TEXT, 4); }
static void m_sym_name(obj *o) { set_le(o->w.b + o->sh_off[S_SYMTAB] + 24 * 2, 0x7fff, 4); }
static void m_sym_shndx(obj *o) { set_le(o->w.b + o->sh_off[S_SYMTAB] + 24 * 2 + 6, 200, 2); }
static void m_sym_value(obj *o) { set_le(o->w.b + o->sh_off[S_SYMTAB] + 24 * 2 + 8, 0x100000, 8); }
static void m_kd_outside(obj *o) { set_le(o->w.b + o->sh_off[S_SYMTAB] + 24 * 2 + 8, 32, 8); }
static void m_rel_type(obj *o) { set_le(o->w.b + o->reloc_at[0] + 8, (uint64_t)1 << 32 | 7, 8); }
static void m_rel_offset(obj *o) { set_le(o->w.b + o->reloc_at[1], 0x10000, 8); }
static void m_rel_sym(obj *o) { set_le(o->w.b + o->reloc_at[2] + 8, (uint64_t)99 << 32 | 2, 8); }
static void m_rel_undef(obj *o) { set_le(o->w.b + o->sh_off[S_SYMTAB] + 24 * 3 + 6, 0, 2); }
static void m_rel_entsize(obj *o) { set_le(shdr(o, S_RELA_DATA) + 56, 16, 8); }
static void m_rel_info(obj *o) { set_le(shdr(o, S_RELA_DATA) + 44, 77, 4); }
static void m_rel_link(obj *o) { set_le(shdr(o, S_RELA_DATA) + 40, S_STRTAB, 4); }
static void m_entry_misaligned(obj *o) { set_le(o->w.b + o->sh_off[S_RELA_RODATA] + 16, 16 + 4, 8); }
static void m_entry_outside(obj *o) { set_le(o->w.b + o->sh_off[S_RELA_RODATA] + 8, (uint64_t)2 << 32 | 5, 8); }
static void m_note_size(obj *o) { set_le(o->w.b + o->sh_off[S_NOTE] + 4, 0xffffff00u, 4); }
static void m_msgpack(obj *o) { o->w.b[o->sh_off[S_NOTE] + 20] = 0xc1; }   /* never-used msgpack byte */
static void m_msgpack_count(obj *o) {   /* the top map claims 2^32-1 entries */
  uint8_t *p = o->w.b + o->sh_off[S_NOTE] + 20;
  p[0] = 0xdf;   /* overwrites the first key: count bytes follow */
  p[1] = p[2] = p[3] = p[4] = 0xff;
}

static const struct { const char *what; mutator m; const char *expect; } MALFORMED[] = {
    {"magic", m_magic, "e_ident"},
    {"class", m_class, "EI_CLASS"},
    {"data", m_data, "EI_DATA"},
    {"type", m_type, "e_type"},
    {"machine", m_machine, "e_machine"},
    {"mach", m_mach, "EF_AMDGPU_MACH"},
    {"shentsize", m_shentsize, "e_shentsize"},
    {"shoff", m_shoff, "e_shoff"},
    {"shnum", m_shnum, "e_shnum"},
    {"shstrndx", m_shstrndx, "e_shstrndx"},
    {"section offset", m_sec_offset, "sh_offset"},
    {"section size", m_sec_size, "sh_size"},
    {"section alignment", m_sec_align, "sh_addralign"},
    {"huge .bss", m_huge_bss, "image limit"},
    {"symtab entsize", m_symtab_entsize, "sh_entsize"},
    {"symtab link", m_symtab_link, "string table"},
    {"symbol name", m_sym_name, "st_name"},
    {"symbol section", m_sym_shndx, "st_shndx"},
    {"symbol value", m_sym_value, "st_value"},
    {"descriptor outside", m_kd_outside, "kernel descriptor"},
    {"relocation type", m_rel_type, "type 7"},
    {"relocation offset", m_rel_offset, "r_offset"},
    {"relocation symbol", m_rel_sym, "symbol index 99"},
    {"undefined symbol", m_rel_undef, "undefined symbol 'data'"},
    {"relocation entsize", m_rel_entsize, "sh_entsize"},
    {"relocation target", m_rel_info, "sh_info 77"},
    {"relocation symtab", m_rel_link, "sh_link"},
    {"misaligned entry", m_entry_misaligned, "alignment"},
    {"entry outside code", m_entry_outside, "kernel_code_entry_byte_offset"},
    {"note size", m_note_size, "n_descsz"},
    {"msgpack byte", m_msgpack, "msgpack"},
    {"msgpack count", m_msgpack_count, "msgpack"},
};
enum { NMALFORMED = sizeof MALFORMED / sizeof *MALFORMED };

START_TEST(malformed) {
  obj o;
  build(&o, false);
  MALFORMED[_i].m(&o);
  bg_amdgpu_image img;
  int rc = bg_amdgpu_elf_load(o.w.b, o.w.n, "k", &img);
  ck_assert_msg(rc == -BG_EINVAL, "%s: rc %d (%s)", MALFORMED[_i].what, rc, rc ? bg_last_error() : "loaded");
  ck_assert_msg(strstr(bg_last_error(), MALFORMED[_i].expect), "%s: message '%s' does not name '%s'", MALFORMED[_i].what,
                bg_last_error(), MALFORMED[_i].expect);
  ck_assert_ptr_null(img.data);
  ck_assert_ptr_null(img.relocs);
}
END_TEST

START_TEST(bad_arguments) {
  bg_amdgpu_image img;
  ck_assert_int_eq(bg_amdgpu_elf_load(NULL, 10, NULL, &img), -BG_EINVAL);
  ck_assert_int_eq(bg_amdgpu_elf_load("x", 1, NULL, NULL), -BG_EINVAL);
  ck_assert_int_eq(bg_amdgpu_elf_load("\177ELF", 4, NULL, &img), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "smaller than the 64-byte ELF64 header"));
  memset(&img, 0, sizeof img);
  ck_assert_int_eq(bg_amdgpu_image_relocate(&img, 0), -BG_EINVAL);
  bg_amdgpu_image_free(&img);
  bg_amdgpu_image_free(NULL);
}
END_TEST

/* Every prefix of the object fails cleanly: the section headers sit at its end. */
START_TEST(truncations) {
  obj o;
  build(&o, _i == 1);
  for (size_t n = 0; n < o.w.n; n++) {
    uint8_t *copy = malloc(n ? n : 1);   /* exact size, so ASan sees any read past it */
    memcpy(copy, o.w.b, n);
    bg_amdgpu_image img;
    int rc = bg_amdgpu_elf_load(copy, n, "k", &img);
    ck_assert_msg(rc == -BG_EINVAL, "truncated to %zu of %zu bytes: rc %d", n, o.w.n, rc);
    free(copy);
  }
}
END_TEST

/* 10,000 mutants with 1-8 random bytes changed (fixed seed): loaded or rejected, never a crash;
 * a loaded one relocates and its code lies in its image. */
START_TEST(random_flips) {
  obj o;
  build(&o, _i == 1);
  uint32_t seed = 0x9e3779b9u + (uint32_t)_i;
  unsigned loaded = 0;
  uint8_t *copy = malloc(o.w.n);
  for (int iter = 0; iter < 10000; iter++) {
    memcpy(copy, o.w.b, o.w.n);
    seed = seed * 1664525u + 1013904223u;
    int flips = 1 + (int)(seed >> 29);
    for (int f = 0; f < flips; f++) {
      seed = seed * 1664525u + 1013904223u;
      size_t at = (seed >> 8) % o.w.n;
      seed = seed * 1664525u + 1013904223u;
      copy[at] = (seed >> 24) & 1 ? (uint8_t)(seed >> 16) : (uint8_t)(copy[at] ^ (1u << ((seed >> 16) & 7)));
    }
    bg_amdgpu_image img;
    int rc = bg_amdgpu_elf_load(copy, o.w.n, (seed & 1) ? "k" : NULL, &img);
    ck_assert_msg(rc == 0 || rc == -BG_EINVAL || rc == -BG_ENOMEM, "iteration %d: rc %d", iter, rc);
    if (rc == 0) {
      loaded++;
      ck_assert_uint_lt(img.code_offset, img.size);
      ck_assert_uint_le(img.kd_offset + 64, img.size);
      OK(bg_amdgpu_image_relocate(&img, 0xffffffffff000000ull));
      bg_amdgpu_image_free(&img);
    }
  }
  free(copy);
  ck_assert_uint_gt(loaded, 0);   /* flips in padding and unused bytes leave loadable objects */
}
END_TEST

int main(void) {
  Suite *s = suite_create("amdgpu_elf");
  TCase *tc = tcase_create("loader");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, load_relocatable);
  tcase_add_test(tc, load_linked);
  tcase_add_test(tc, mach_names);
  tcase_add_loop_test(tc, malformed, 0, NMALFORMED);
  tcase_add_test(tc, bad_arguments);
  tcase_add_loop_test(tc, truncations, 0, 2);
  tcase_add_loop_test(tc, random_flips, 0, 2);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
