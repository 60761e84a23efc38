/* tests/unit/nv/test_cubin.c: the cubin loader (formats/cubin.h) and PTX -> cubin (compile/ptx_compile.h).
 *
 * 1. A cubin written here (no CUDA needed), shaped like ptxas output: .nv.info with EIATTR_REGCOUNT /
 *    FRAME_SIZE and an unknown attribute, .nv.info.k with KPARAM_INFO, PARAM_CBANK, CBANK_PARAM_SIZE,
 *    EXIT_INSTR_OFFSETS and unknown records, .nv.shared.k, and RELA relocations of each supported type;
 *    malformed variants (truncated header, section past the end, a record past its section, an unknown
 *    relocation type, ...) each rejected naming the field; every truncation and random byte flips.
 * 2. Cubins ptxas (or nvJitLink) makes at test time from the PTX below for sm_80/86/89/90: parameter
 *    offsets and sizes against the PTX declarations, registers, shared and local memory, launch bounds,
 *    a relocation resolved at a VA. Without a PTX compiler those cases print that they were skipped. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check_helpers.h"
#include "compile/ptx_compile.h"
#include "formats/cubin.h"

/* ---------------- a cubin built in C ---------------- */

enum { S_NULL, S_SHSTR, S_STR, S_SYM, S_INFO, S_INFOK, S_TEXT, S_C0, S_GLOB, S_RELTEXT, S_RELGLOB, S_SHARED, NSEC };
enum { SHT_PROGBITS = 1, SHT_SYMTAB = 2, SHT_STRTAB = 3, SHT_RELA = 4, SHT_NOBITS = 8, SHT_CUDA_INFO = 0x70000000 };

typedef struct bsec {
  const char *name;
  uint32_t type;
  uint64_t flags;
  uint8_t data[1024];
  size_t size;
  uint32_t link, info;
  uint64_t align, entsize;
} bsec;

static uint8_t g_file[16384];
static size_t g_n, g_data_at[NSEC], g_shoff;

static void set_le(uint8_t *p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}
static void app(bsec *s, uint64_t v, unsigned n) {
  ck_assert_uint_le(s->size + n, sizeof s->data);
  set_le(s->data + s->size, v, n);
  s->size += n;
}
/* An .nv.info record: SVAL with payload words, or a u16 value. */
static void rec_sval(bsec *s, unsigned id, const uint32_t *w, unsigned nw) {
  app(s, 4, 1);
  app(s, id, 1);
  app(s, 4u * nw, 2);
  for (unsigned i = 0; i < nw; i++) app(s, w[i], 4);
}
static void rec_hval(bsec *s, unsigned fmt, unsigned id, unsigned v) {
  app(s, fmt, 1);
  app(s, id, 1);
  app(s, v, 2);
}
static void add_sym(bsec *s, uint32_t name, uint8_t info, uint16_t shndx, uint64_t value, uint64_t size) {
  app(s, name, 4);
  app(s, info, 1);
  app(s, 0, 1);
  app(s, shndx, 2);
  app(s, value, 8);
  app(s, size, 8);
}
static void add_rela(bsec *s, uint64_t off, uint32_t sym, uint32_t type, int64_t addend) {
  app(s, off, 8);
  app(s, (uint64_t)sym << 32 | type, 8);
  app(s, (uint64_t)addend, 8);
}

/* KPARAM_INFO flags word: size in bits 18-31, cbank 0x1f in bits 12-16 (as ptxas writes it). */
#define KP_FLAGS(size) ((uint32_t)(size) << 18 | 0x1f000u)

static void build(void) {
  static bsec s[NSEC];
  memset(s, 0, sizeof s);
  const char *names[NSEC] = {"", ".shstrtab", ".strtab", ".symtab", ".nv.info", ".nv.info.k", ".text.k", ".nv.constant0.k",
                             ".nv.global.init", ".rela.text.k", ".rela.nv.global.init", ".nv.shared.k"};
  for (int i = 0; i < NSEC; i++) s[i].name = names[i];
  uint32_t name_off[NSEC];
  for (int i = 0; i < NSEC; i++) {
    name_off[i] = (uint32_t)s[S_SHSTR].size;
    memcpy(s[S_SHSTR].data + s[S_SHSTR].size, names[i], strlen(names[i]) + 1);
    s[S_SHSTR].size += strlen(names[i]) + 1;
  }
  s[S_SHSTR].type = s[S_STR].type = SHT_STRTAB;
  memcpy(s[S_STR].data, "\0k\0gvar\0", 8);
  s[S_STR].size = 8;
  s[S_SYM] = (bsec){.name = names[S_SYM], .type = SHT_SYMTAB, .link = S_STR, .info = 1, .align = 8, .entsize = 24};
  add_sym(&s[S_SYM], 0, 0, 0, 0, 0);
  add_sym(&s[S_SYM], 1, 0x12, S_TEXT, 0, 64);     /* k: GLOBAL FUNC */
  add_sym(&s[S_SYM], 3, 0x11, S_GLOB, 8, 8);      /* gvar: GLOBAL OBJECT at .nv.global.init + 8 */
  s[S_INFO] = (bsec){.name = names[S_INFO], .type = SHT_CUDA_INFO, .link = S_SYM, .align = 4};
  rec_sval(&s[S_INFO], 0x2f, (uint32_t[]){1, 10}, 2);     /* EIATTR_REGCOUNT k = 10 */
  rec_sval(&s[S_INFO], 0x2f, (uint32_t[]){2, 99}, 2);     /* another symbol's: not k's */
  rec_sval(&s[S_INFO], 0x11, (uint32_t[]){1, 0x40}, 2);   /* EIATTR_FRAME_SIZE */
  rec_sval(&s[S_INFO], 0x12, (uint32_t[]){1, 0x20}, 2);   /* EIATTR_MIN_STACK_SIZE */
  rec_sval(&s[S_INFO], 0x77, (uint32_t[]){5}, 1);         /* unknown: skipped by its size */
  s[S_INFOK] = (bsec){.name = names[S_INFOK], .type = SHT_CUDA_INFO, .link = S_SYM, .info = S_TEXT, .align = 4};
  rec_sval(&s[S_INFOK], 0x37, (uint32_t[]){0x82}, 1);
  rec_sval(&s[S_INFOK], 0x17, (uint32_t[]){0, 1u | 8u << 16, KP_FLAGS(4)}, 3);   /* ordinal 1: offset 8, 4 bytes */
  rec_sval(&s[S_INFOK], 0x17, (uint32_t[]){0, 0, KP_FLAGS(8)}, 3);   /* ordinal 0: offset 0, 8 bytes */
  rec_hval(&s[S_INFOK], 3, 0x1b, 0xff);
  rec_hval(&s[S_INFOK], 2, 0x4c, 1);
  rec_hval(&s[S_INFOK], 1, 0x7e, 0);
  rec_sval(&s[S_INFOK], 0x1c, (uint32_t[]){0x10, 0x30}, 2);                     /* EXIT_INSTR_OFFSETS */
  rec_sval(&s[S_INFOK], 0x05, (uint32_t[]){128, 2, 1}, 3);                      /* EIATTR_MAX_THREADS */
  rec_hval(&s[S_INFOK], 3, 0x19, 12);                                           /* EIATTR_CBANK_PARAM_SIZE */
  rec_sval(&s[S_INFOK], 0x0a, (uint32_t[]){0, 0x210u | 12u << 16}, 2);          /* EIATTR_PARAM_CBANK */
  s[S_TEXT] = (bsec){.name = names[S_TEXT], .type = SHT_PROGBITS, .flags = 6, .link = S_SYM, .align = 128, .size = 64};
  for (int i = 0; i < 64; i++) s[S_TEXT].data[i] = (uint8_t)(0xa0 + i);
  s[S_C0] = (bsec){.name = names[S_C0], .type = SHT_PROGBITS, .flags = 2, .info = S_TEXT, .align = 4, .size = 0x21c};
  s[S_GLOB] = (bsec){.name = names[S_GLOB], .type = SHT_PROGBITS, .flags = 3, .align = 8, .size = 16};
  s[S_RELTEXT] = (bsec){.name = names[S_RELTEXT], .type = SHT_RELA, .link = S_SYM, .info = S_TEXT, .align = 8, .entsize = 24};
  add_rela(&s[S_RELTEXT], 0x20, 2, 0x38, 4);   /* R_CUDA_ABS32_LO_32 gvar+4 */
  add_rela(&s[S_RELTEXT], 0x30, 2, 0x39, 4);   /* R_CUDA_ABS32_HI_32 gvar+4 */
  add_rela(&s[S_RELTEXT], 0x00, 0, 0, 0);      /* R_CUDA_NONE */
  s[S_RELGLOB] = (bsec){.name = names[S_RELGLOB], .type = SHT_RELA, .link = S_SYM, .info = S_GLOB, .align = 8, .entsize = 24};
  add_rela(&s[S_RELGLOB], 0, 1, 2, 0x10);      /* R_CUDA_64 k+0x10 */
  add_rela(&s[S_RELGLOB], 8, 1, 1, 0);         /* R_CUDA_32 k */
  s[S_SHARED] = (bsec){.name = names[S_SHARED], .type = SHT_NOBITS, .flags = 3, .info = S_TEXT, .align = 4, .size = 0x100};

  memset(g_file, 0, sizeof g_file);
  size_t off = 64;
  for (int i = 1; i < NSEC; i++) {
    off = (off + 127) & ~(size_t)127;
    g_data_at[i] = off;
    if (s[i].type != SHT_NOBITS) {
      memcpy(g_file + off, s[i].data, s[i].size);
      off += s[i].size;
    }
  }
  g_shoff = (off + 7) & ~(size_t)7;
  uint8_t *h = g_file;
  memcpy(h, "\177ELF\2\1\1\101\10", 9);   /* ELF64, LSB, OSABI 0x41, ABI version 8 */
  set_le(h + 16, 2, 2);                     /* ET_EXEC */
  set_le(h + 18, 190, 2);                   /* EM_CUDA */
  set_le(h + 20, 1, 4);
  set_le(h + 40, g_shoff, 8);
  set_le(h + 48, 0x06005a04, 4);            /* sm_90 in bits 8-15 */
  set_le(h + 52, 64, 2);
  set_le(h + 58, 64, 2);
  set_le(h + 60, NSEC, 2);
  set_le(h + 62, S_SHSTR, 2);
  for (int i = 0; i < NSEC; i++) {
    uint8_t *sh = g_file + g_shoff + 64u * (unsigned)i;
    if (i == 0) continue;
    set_le(sh, name_off[i], 4);
    set_le(sh + 4, s[i].type, 4);
    set_le(sh + 8, s[i].flags, 8);
    set_le(sh + 24, g_data_at[i], 8);
    set_le(sh + 32, s[i].size, 8);
    set_le(sh + 40, s[i].link, 4);
    set_le(sh + 44, s[i].info, 4);
    set_le(sh + 48, s[i].align, 8);
    set_le(sh + 56, s[i].entsize, 8);
  }
  g_n = g_shoff + 64u * NSEC;
  ck_assert_uint_le(g_n, sizeof g_file);
}

static uint8_t *shdr(int i) { return g_file + g_shoff + 64u * (unsigned)i; }

START_TEST(hand_cubin_loads) {
  build();
  bg_cubin c;
  OK(bg_cubin_load(g_file, g_n, &c));
  ck_assert_uint_eq(c.sm, 90);
  ck_assert_uint_eq(c.nkernels, 1);
  const bg_cubin_kernel *k = bg_cubin_kernel_find(&c, NULL);
  ck_assert_ptr_nonnull(k);
  ck_assert_ptr_eq(bg_cubin_kernel_find(&c, "k"), k);
  ck_assert_ptr_null(bg_cubin_kernel_find(&c, "nope"));
  ck_assert_str_eq(k->name, "k");
  ck_assert_uint_eq(k->param_base, 0x210);
  ck_assert_uint_eq(k->param_size, 12);
  ck_assert_uint_eq(k->cbank_param_size, 12);
  ck_assert_uint_eq(k->nparams, 2);
  ck_assert_uint_eq(k->params[0].offset, 0);
  ck_assert_uint_eq(k->params[0].size, 8);
  ck_assert_uint_eq(k->params[1].ordinal, 1);
  ck_assert_uint_eq(k->params[1].offset, 8);
  ck_assert_uint_eq(k->params[1].size, 4);
  ck_assert_uint_eq(k->regs, 10);
  ck_assert_uint_eq(k->frame_size, 0x40);
  ck_assert_uint_eq(k->min_stack, 0x20);
  ck_assert_uint_eq(k->local, 0x40);
  ck_assert_uint_eq(k->shared, 0x100);
  ck_assert_uint_eq(k->cbank0_size, 0x21c);
  ck_assert_uint_eq(k->max_threads[0], 128);
  ck_assert_uint_eq(k->max_threads[1], 2);
  ck_assert_uint_eq(k->nexits, 2);
  ck_assert_uint_eq(k->code_size, 64);
  ck_assert_uint_eq(k->code_offset % 128, 0);
  ck_assert_int_eq(memcmp(c.image + k->code_offset, g_file + g_data_at[S_TEXT], 64), 0);
  /* Layout: .text, .nv.constant0, .nv.global.init in the image, 128-aligned and disjoint; no .nv.shared, no .nv.info. */
  ck_assert_uint_eq(c.nsections, 3);
  for (size_t i = 0; i < c.nsections; i++) {
    ck_assert_uint_eq(c.sections[i].offset % 128, 0);
    ck_assert_msg(strncmp(c.sections[i].name, ".nv.shared", 10) && strncmp(c.sections[i].name, ".nv.info", 8), "%s loaded",
                  c.sections[i].name);
    if (i) ck_assert_uint_ge(c.sections[i].offset, c.sections[i - 1].offset + c.sections[i - 1].size);
  }
  ck_assert_uint_eq(c.image_size % 4096, 0);
  /* Relocations at a VA: gvar = .nv.global.init + 8. */
  uint64_t glob = 0;
  for (size_t i = 0; i < c.nsections; i++)
    if (!strcmp(c.sections[i].name, ".nv.global.init")) glob = c.sections[i].offset;
  ck_assert_uint_ne(glob, 0);
  ck_assert_uint_eq(c.nrelocs, 4);
  uint8_t *img = malloc(c.image_size);
  const uint64_t va = 0x7fff12340000ull;
  /* R_CUDA_32 (the last relocation) of an address above 4 GiB: an error; the others checked without it. */
  FAILS(bg_cubin_relocate(&c, va, img), BG_EINVAL, "R_CUDA_32");
  ck_assert_uint_eq(c.relocs[3].type, 1);
  c.nrelocs--;
  OK(bg_cubin_relocate(&c, va, img));
  c.nrelocs++;
  uint64_t gv = va + glob + 8 + 4;
  ck_assert_uint_eq(get_le(img + k->code_offset + 0x24, 4), (uint32_t)gv);
  ck_assert_uint_eq(get_le(img + k->code_offset + 0x34, 4), (uint32_t)(gv >> 32));
  ck_assert_uint_eq(get_le(img + k->code_offset + 0x20, 4), get_le(g_file + g_data_at[S_TEXT] + 0x20, 4));   /* untouched */
  ck_assert_uint_eq(get_le(img + glob, 8), va + k->code_offset + 0x10);
  OK(bg_cubin_relocate(&c, 0x10000, img));
  ck_assert_uint_eq(get_le(img + glob + 8, 4), 0x10000 + k->code_offset);
  free(img);
  bg_cubin_free(&c);
}
END_TEST

/* Load the mutated file and expect -BG_EINVAL with sub in the message. */
static void rejects(const char *sub) {
  bg_cubin c;
  FAILS(bg_cubin_load(g_file, g_n, &c), BG_EINVAL, sub);
  ck_assert_ptr_null(c.image);
}

START_TEST(hand_cubin_malformed) {
  build();
  bg_cubin c;
  FAILS(bg_cubin_load(g_file, 40, &c), BG_EINVAL, "64-byte ELF64 header");
  set_le(g_file + 18, 224, 2);
  rejects("e_machine 224");
  build();
  set_le(g_file + 48, 0, 4);
  rejects("SM version 0");
  build();
  set_le(shdr(S_TEXT) + 24, g_n - 8, 8);   /* .text.k's sh_offset near the end */
  rejects("section 6: sh_offset");
  build();
  set_le(g_file + 40, g_n, 8);
  rejects("e_shoff");
  build();
  /* The last record of .nv.info.k (PARAM_CBANK, 12 bytes) claims 9 payload bytes: 1 more than the section has. */
  set_le(g_file + g_data_at[S_INFOK] + get_le(shdr(S_INFOK) + 32, 8) - 10, 9, 2);
  rejects("size 9 exceeds the 8 bytes left");
  build();
  set_le(shdr(S_INFOK) + 32, get_le(shdr(S_INFOK) + 32, 8) - 10, 8);   /* the last record's header cut */
  rejects("expected a 4-byte header");
  build();
  set_le(g_file + g_data_at[S_INFO], 9, 1);   /* format 9 */
  rejects("format 9, expected 1..4");
  build();
  set_le(g_file + g_data_at[S_RELTEXT] + 8, 0x77, 4);
  rejects("unknown type 119 (0x77)");
  build();
  set_le(g_file + g_data_at[S_RELTEXT], 62, 8);   /* r_offset 62 + 4 + 4 > 64 */
  rejects("r_offset 0x3e");
  build();
  set_le(g_file + g_data_at[S_RELTEXT] + 12, 9, 4);   /* symbol 9 of 3 */
  rejects("symbol index 9");
  build();
  /* KPARAM ordinal 1's offset 8 + 4 > a parameter size of 11 */
  uint8_t *pc = g_file + g_data_at[S_INFOK] + get_le(shdr(S_INFOK) + 32, 8) - 2;
  set_le(pc, 11, 2);
  set_le(g_file + g_data_at[S_INFOK] + get_le(shdr(S_INFOK) + 32, 8) - 14, 11, 2);   /* CBANK_PARAM_SIZE too */
  rejects("parameter 1: offset 0x8 size 0x4");
  build();
  set_le(g_file + g_data_at[S_INFOK] + 8 + 4 + 4, 2, 2);   /* first KPARAM_INFO: ordinal 2 of 2 */
  rejects("ordinal 2 is beyond");
  build();
  set_le(g_file + g_data_at[S_INFOK] + get_le(shdr(S_INFOK) + 32, 8) - 4, 0x210 + 0x10, 2);   /* param base past cbank 0 */
  rejects("exceeds .nv.constant0.k");
  build();
  set_le(g_file + g_data_at[S_INFOK] + get_le(shdr(S_INFOK) + 32, 8) - 11, 0x7a, 1);   /* PARAM_CBANK -> unknown id */
  rejects("no EIATTR_PARAM_CBANK");
  build();
  set_le(g_file + g_data_at[S_INFO] + 1, 0x7a, 1);   /* REGCOUNT -> unknown id */
  rejects("no EIATTR_REGCOUNT");
  build();
  set_le(shdr(S_INFOK) + 44, S_C0, 4);
  rejects("expected the loaded code section .text.k");
}
END_TEST

/* Every truncation and random byte flips: an error or a load, never a crash (run under ASan). */
START_TEST(hand_cubin_fuzz) {
  build();
  uint8_t orig[sizeof g_file];
  size_t n = g_n;
  memcpy(orig, g_file, n);
  uint8_t *img = malloc(1 << 20);
  for (size_t len = 0; len < n; len++) {
    bg_cubin c;
    ck_assert_int_ne(bg_cubin_load(orig, len, &c), 0);   /* the section headers are at the end */
  }
  unsigned seed = 12345;
  for (int it = 0; it < 5000; it++) {
    memcpy(g_file, orig, n);
    for (int f = 0; f < 4; f++) {
      seed = seed * 1103515245u + 12345u;
      g_file[(seed >> 8) % n] ^= (uint8_t)(1u << ((seed >> 4) & 7));
    }
    bg_cubin c;
    if (bg_cubin_load(g_file, n, &c) == 0) {
      if (c.image_size <= (1u << 20)) (void)bg_cubin_relocate(&c, 0x1000, img);
      bg_cubin_free(&c);
    }
  }
  free(img);
}
END_TEST

/* ---------------- cubins from ptxas ---------------- */

static const char *const vadd_ptx =
    ".version %s\n.target sm_%u\n.address_size 64\n"
    ".visible .entry vadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n{\n"
    "  .reg .b32 %%r<6>; .reg .b64 %%rd<12>; .reg .f32 %%f<4>; .reg .pred %%p<2>;\n"
    "  ld.param.u64 %%rd1, [a]; ld.param.u64 %%rd2, [b]; ld.param.u64 %%rd3, [c]; ld.param.u32 %%r1, [n];\n"
    "  mov.u32 %%r2, %%ctaid.x; mov.u32 %%r3, %%ntid.x; mov.u32 %%r4, %%tid.x; mad.lo.s32 %%r5, %%r2, %%r3, %%r4;\n"
    "  setp.ge.s32 %%p1, %%r5, %%r1; @%%p1 bra DONE;\n"
    "  cvta.to.global.u64 %%rd4, %%rd1; cvta.to.global.u64 %%rd5, %%rd2; cvta.to.global.u64 %%rd6, %%rd3;\n"
    "  mul.wide.s32 %%rd7, %%r5, 4; add.s64 %%rd8, %%rd4, %%rd7; add.s64 %%rd9, %%rd5, %%rd7; add.s64 %%rd10, %%rd6, %%rd7;\n"
    "  ld.global.f32 %%f1, [%%rd8]; ld.global.f32 %%f2, [%%rd9]; add.f32 %%f3, %%f1, %%f2; st.global.f32 [%%rd10], %%f3;\n"
    "DONE:\n  ret;\n}\n";

/* Three kernels: mixed (parameters of 4, 8, 2, 1 bytes and a 16-aligned 20-byte array), smem (1 KiB of shared memory, .maxntid 128, a global variable whose address ptxas keeps in
 * constant bank 4 behind an R_CUDA_64), stk (a dynamically indexed local array: stack frame, .reqntid 64). */
static const char *const misc_ptx =
    ".version %s\n.target sm_%u\n.address_size 64\n"
    ".global .align 4 .u32 gcount;\n"
    ".visible .entry smem(.param .u64 out) .maxntid 128, 1, 1\n{\n"
    "  .reg .b32 %%r<8>; .reg .b64 %%rd<8>;\n  .shared .align 4 .b32 buf[256];\n"
    "  ld.param.u64 %%rd1, [out];\n"
    "  mov.u32 %%r1, %%tid.x; shl.b32 %%r2, %%r1, 2; mov.u32 %%r3, buf; add.u32 %%r4, %%r3, %%r2;\n"
    "  st.shared.u32 [%%r4], %%r1; bar.sync 0; xor.b32 %%r5, %%r2, 4; add.u32 %%r6, %%r3, %%r5; ld.shared.u32 %%r7, [%%r6];\n"
    "  cvta.to.global.u64 %%rd2, %%rd1; mul.wide.u32 %%rd3, %%r1, 4; add.s64 %%rd4, %%rd2, %%rd3; st.global.u32 [%%rd4], %%r7;\n"
    "  mov.u64 %%rd5, gcount; atom.global.add.u32 %%r7, [%%rd5], 1;\n  ret;\n}\n"
    ".visible .entry stk(.param .u64 out, .param .u32 k) .reqntid 64\n{\n"
    "  .local .align 4 .b32 arr[64];\n  .reg .b32 %%r<8>; .reg .b64 %%rd<8>;\n"
    "  ld.param.u64 %%rd1, [out]; ld.param.u32 %%r1, [k];\n"
    "  mov.u32 %%r2, %%tid.x; and.b32 %%r3, %%r2, 63; mul.wide.u32 %%rd2, %%r3, 4;\n"
    "  mov.u64 %%rd3, arr; add.s64 %%rd4, %%rd3, %%rd2; st.local.u32 [%%rd4], %%r2;\n"
    "  and.b32 %%r4, %%r1, 63; mul.wide.u32 %%rd5, %%r4, 4; add.s64 %%rd6, %%rd3, %%rd5; ld.local.u32 %%r5, [%%rd6];\n"
    "  cvta.to.global.u64 %%rd7, %%rd1; st.global.u32 [%%rd7], %%r5;\n  ret;\n}\n"
    ".visible .entry mixed(.param .u32 x, .param .u64 p, .param .u16 h, .param .u8 b, .param .align 16 .b8 s[20])\n{\n"
    "  .reg .b32 %%r<4>; .reg .b64 %%rd<4>;\n"
    "  ld.param.u32 %%r1, [x]; ld.param.u64 %%rd1, [p]; ld.param.u32 %%r2, [s+16]; add.u32 %%r3, %%r1, %%r2;\n"
    "  cvta.to.global.u64 %%rd2, %%rd1; st.global.u32 [%%rd2], %%r3;\n  ret;\n}\n";

static const unsigned g_sms[] = {80, 86, 89, 90};

/* PTX for sm from a template (PTX ISA 7.8 reaches sm_90). */
static void make_ptx(char *out, size_t n, const char *tmpl, unsigned sm) { snprintf(out, n, tmpl, "7.8", sm); }

/* Compile with tool; false (and a SKIPPED line naming why) when that tool is not installed. */
static bool compile_or_skip(const char *what, const char *ptx, unsigned sm, bg_ptx_tool tool, uint8_t **cubin, size_t *n) {
  int rc = bg_ptx_compile(ptx, sm, tool, cubin, n);
  if (rc == -BG_ENOTSUP) {
    printf("SKIPPED %s sm_%u: %s\n", what, sm, bg_last_error());
    return false;
  }
  ck_assert_msg(rc == 0, "%s sm_%u: %s", what, sm, bg_last_error());
  return true;
}

static const bg_cubin_kernel *kernel(const bg_cubin *c, const char *name) {
  const bg_cubin_kernel *k = bg_cubin_kernel_find(c, name);
  ck_assert_msg(k != NULL, "%s: %s", name, bg_last_error());
  ck_assert_uint_gt(k->regs, 0);
  ck_assert_uint_gt(k->code_size, 0);
  ck_assert_uint_le(k->code_offset + k->code_size, c->image_size);
  ck_assert_uint_le(k->param_base + k->param_size, k->cbank0_size);
  ck_assert_uint_eq(k->cbank_param_size, k->param_size);
  return k;
}

static void check_param(const bg_cubin_kernel *k, unsigned i, unsigned offset, unsigned size) {
  ck_assert_msg(i < k->nparams && k->params[i].ordinal == i && k->params[i].offset == offset && k->params[i].size == size,
                "%s param %u: offset %u size %u, expected %u %u", k->name, i, i < k->nparams ? k->params[i].offset : 0,
                i < k->nparams ? k->params[i].size : 0, offset, size);
}

START_TEST(ptxas_vadd) {
  unsigned sm = g_sms[_i];
  char ptx[4096];
  make_ptx(ptx, sizeof ptx, vadd_ptx, sm);
  uint8_t *bin;
  size_t n;
  if (!compile_or_skip("vadd (ptxas)", ptx, sm, BG_PTX_PTXAS, &bin, &n)) return;
  bg_cubin c;
  OK(bg_cubin_load(bin, n, &c));
  ck_assert_uint_eq(c.sm, sm);
  ck_assert_uint_eq(c.nkernels, 1);
  const bg_cubin_kernel *k = kernel(&c, "vadd");
  /* .param .u64 a, b, c, .param .u32 n: naturally aligned, in order. */
  ck_assert_uint_eq(k->nparams, 4);
  check_param(k, 0, 0, 8);
  check_param(k, 1, 8, 8);
  check_param(k, 2, 16, 8);
  check_param(k, 3, 24, 4);
  ck_assert_uint_eq(k->param_size, 28);
  ck_assert_uint_eq(k->shared, 0);
  ck_assert_uint_eq(k->local, 0);
  ck_assert_uint_ge(k->nexits, 1);
  bg_cubin_free(&c);
  free(bin);
}
END_TEST

START_TEST(ptxas_smem_stack) {
  unsigned sm = g_sms[_i];
  char ptx[8192];
  make_ptx(ptx, sizeof ptx, misc_ptx, sm);
  uint8_t *bin;
  size_t n;
  if (!compile_or_skip("mixed+smem+stk (ptxas)", ptx, sm, BG_PTX_PTXAS, &bin, &n)) return;
  bg_cubin c;
  OK(bg_cubin_load(bin, n, &c));
  ck_assert_uint_eq(c.nkernels, 3);
  const bg_cubin_kernel *s = kernel(&c, "smem"), *t = kernel(&c, "stk"), *m = kernel(&c, "mixed");
  /* .param .u32 x, .u64 p, .u16 h, .u8 b, .align 16 .b8 s[20]: each at its alignment */
  ck_assert_uint_eq(m->nparams, 5);
  check_param(m, 0, 0, 4);
  check_param(m, 1, 8, 8);
  check_param(m, 2, 16, 2);
  check_param(m, 3, 18, 1);
  check_param(m, 4, 32, 20);
  ck_assert_uint_eq(m->param_size, 52);
  ck_assert_uint_eq(s->nparams, 1);
  check_param(s, 0, 0, 8);
  ck_assert_uint_ge(s->shared, 1024);   /* .shared .b32 buf[256] */
  ck_assert_uint_eq(s->max_threads[0], 128);
  ck_assert_uint_eq(s->max_threads[1], 1);
  ck_assert_uint_eq(t->nparams, 2);
  check_param(t, 0, 0, 8);
  check_param(t, 1, 8, 4);
  ck_assert_uint_eq(t->shared, 0);
  ck_assert_uint_ge(t->local, 256);     /* .local .b32 arr[64] */
  ck_assert_uint_eq(t->reqntid[0], 64);
  /* gcount's address: an R_CUDA_64 in constant bank 4, resolved to the VA of .nv.global. */
  uint64_t glob = UINT64_MAX;
  for (size_t i = 0; i < c.nsections; i++)
    if (!strcmp(c.sections[i].name, ".nv.global")) glob = c.sections[i].offset;
  ck_assert_uint_ne(glob, UINT64_MAX);
  ck_assert_uint_ge(s->bank_size[4], 8);
  ck_assert_uint_ge(c.nrelocs, 1);
  uint8_t *img = malloc(c.image_size);
  const uint64_t va = 0x7f0000200000ull;
  OK(bg_cubin_relocate(&c, va, img));
  ck_assert_uint_eq(get_le(img + s->bank_offset[4], 8), va + glob);
  free(img);
  bg_cubin_free(&c);
  free(bin);
}
END_TEST

START_TEST(ptx_compile_tools) {
  char ptx[4096];
  make_ptx(ptx, sizeof ptx, vadd_ptx, 90);
  uint8_t *bin;
  size_t n;
  char path[4096];
  if (bg_ptx_find_ptxas(path, sizeof path) == 0) printf("ptxas: %s\n", path);
  /* ptxas runs on files in $TMPDIR: a private directory here, empty again afterwards. */
  char tmp[] = "/tmp/bg-nv-test-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(tmp));
  const char *old_tmp = getenv("TMPDIR");
  char *saved = old_tmp ? strdup(old_tmp) : NULL;
  setenv("TMPDIR", tmp, 1);
  for (int t = 0; t < 3; t++) {
    static const char *const names[] = {"auto", "nvJitLink", "ptxas"};
    if (!compile_or_skip(names[t], ptx, 90, (bg_ptx_tool)t, &bin, &n)) continue;
    bg_cubin c;
    OK(bg_cubin_load(bin, n, &c));
    ck_assert_uint_eq(c.sm, 90);
    check_param(kernel(&c, "vadd"), 3, 24, 4);
    bg_cubin_free(&c);
    free(bin);
    /* A PTX error: -BG_ECOMPILE carrying the tool's message about the bad line. */
    bin = NULL;
    FAILS(bg_ptx_compile(".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry bad() { frobnicate.u32 %r1; }\n", 90,
                         (bg_ptx_tool)t, &bin, &n),
          BG_ECOMPILE, "frobnicate");
    ck_assert_ptr_null(bin);
  }
  ck_assert_msg(rmdir(tmp) == 0, "%s is not empty after the compiles (temporary files left behind)", tmp);
  if (saved) setenv("TMPDIR", saved, 1);
  else unsetenv("TMPDIR");
  free(saved);
  FAILS(bg_ptx_compile(ptx, 7, BG_PTX_AUTO, &bin, &n), BG_EINVAL, "sm 7");
  FAILS(bg_ptx_compile(ptx, 90, (bg_ptx_tool)9, &bin, &n), BG_EINVAL, "tool 9");
}
END_TEST

int main(void) {
  Suite *s = suite_create("nv-cubin");
  TCase *tc = tcase_create("cubin");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, hand_cubin_loads);
  tcase_add_test(tc, hand_cubin_malformed);
  tcase_add_test(tc, hand_cubin_fuzz);
  tcase_add_loop_test(tc, ptxas_vadd, 0, 4);
  tcase_add_loop_test(tc, ptxas_smem_stack, 0, 4);
  tcase_add_test(tc, ptx_compile_tools);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
