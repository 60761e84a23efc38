/* tests/unit/compile/test_host_obj.c: the host relocatable-object loader (formats/host_obj.c) and the CPU device
 * loading ET_REL objects through it (cpu/cpu_program.c). Kernels are compiled at test time with `cc -c -O2 -fPIC`
 * (and `clang` when installed: LLVM's object emission, what the in-process compiler produces): calls into libm
 * (sinf, expf), a constant pool, a static table, a loop the compiler turns into memset, a global variable reached
 * through the GOT, .bss. Then every malformed field is refused by name, and random byte flips never crash. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#include "baregpu/hcq.h"
#include "formats/host_obj.h"
#include "../check_helpers.h"

static const char *kernel_src =
  "#include <math.h>\n"
  "#include <stdint.h>\n"
  "static const float table[8] = {0.5f, 1.5f, -2.25f, 3.0f, 4.75f, -5.5f, 6.125f, 7.0f};\n"
  "float gscale = 2.0f;\n"                       /* global: reached through GOTPCREL under -fPIC */
  "unsigned gcalls;\n"                           /* global .bss */
  "static float scratch[64];\n"                  /* local .bss */
  "__attribute__((noinline)) static void fill(uint8_t *p, unsigned n, int v) {\n"
  "  for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)v;\n"   /* becomes a memset call at -O2 */
  "}\n"
  "void objk(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  (void)lsz;\n"
  "  float *out = ((float *const *)ka)[0];\n"
  "  const float *in = ((const float *const *)ka)[1];\n"
  "  uint8_t *bytes = ((uint8_t *const *)ka)[2];\n"
  "  uint32_t *order = ((uint32_t *const *)ka)[3];\n"
  "  uint32_t i = gid[1] * gsz[0] + gid[0];\n"
  "  float x = in[i];\n"
  "  scratch[i % 64] += 1.0f;\n"
  "  out[i] = sinf(x) + expf(x * 0.5f) * gscale + table[i & 7] * 1.2345678f + scratch[i % 64];\n"
  "  fill(bytes + (uint64_t)i * 256, gsz[0] * 16, (int)(i & 0xff) ^ 0x5a);\n"
  "  order[i] = __atomic_fetch_add(&gcalls, 1, __ATOMIC_RELAXED);\n"
  "}\n";

static const float table[8] = {0.5f, 1.5f, -2.25f, 3.0f, 4.75f, -5.5f, 6.125f, 7.0f};
enum { N = 64, GX = 16, GY = 4 };   /* GX * 16 = 256 bytes filled per work-group */

/* Compile src with `compiler -c -O2 -fPIC extra` into a malloc'd object; false when the compiler is missing. */
static bool compile_obj(const char *compiler, const char *extra, const char *src, uint8_t **obj, size_t *n) {
  char dir[] = "/tmp/bg-hostobj-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char c[128], o[128], cmd[512];
  snprintf(c, sizeof c, "%s/k.c", dir);
  snprintf(o, sizeof o, "%s/k.o", dir);
  FILE *f = fopen(c, "w");
  ck_assert_ptr_nonnull(f);
  fputs(src, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1 || exit 99; %s -c -O2 -fPIC %s -o %s %s", compiler,
           compiler, extra, o, c);
  int st = system(cmd);
  bool have = WIFEXITED(st) && WEXITSTATUS(st) != 99;
  if (have) {
    ck_assert_msg(st == 0, "%s failed (%d)", cmd, st);
    f = fopen(o, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    *obj = malloc(*n);
    ck_assert(fread(*obj, 1, *n, f) == *n);
    fclose(f);
    unlink(o);
  }
  unlink(c);
  rmdir(dir);
  return have;
}

static const char *const compilers[] = {"cc", "clang"};

/* ---------------- running kernels ---------------- */

static void check_results(const float *out, const uint8_t *bytes, const uint32_t *order, const float *in, int run) {
  int bad = 0;
  for (int i = 0; i < N; i++) {
    float x = in[i];
    float want = sinf(x) + expf(x * 0.5f) * 2.0f + table[i & 7] * 1.2345678f + (float)run;
    if (fabsf(out[i] - want) > 1e-4f * (1 + fabsf(want))) {
      if (bad++ < 4) fprintf(stderr, "out[%d] = %g, want %g\n", i, out[i], want);
    }
  }
  ck_assert_int_eq(bad, 0);
  for (int i = 0; i < N; i++)
    for (int b = 0; b < 256; b++) bad += bytes[i * 256 + b] != (uint8_t)((i & 0xff) ^ 0x5a);
  ck_assert_int_eq(bad, 0);
  /* Each call took one ticket of the global counter: the tickets of run r are [r*N, (r+1)*N) once each. */
  uint8_t seen[N] = {0};
  for (int i = 0; i < N; i++) {
    ck_assert_uint_ge(order[i], (unsigned)(run - 1) * N);
    ck_assert_uint_lt(order[i], (unsigned)run * N);
    ck_assert_int_eq(seen[order[i] - (unsigned)(run - 1) * N]++, 0);
  }
}

/* Through the CPU device: bg_program_load tells the ET_REL object from a shared object, the grid runs it, and the
 * image's globals persist between launches. */
START_TEST(host_obj_runs_on_cpu_device) {
  uint8_t *obj;
  size_t n;
  if (!compile_obj(compilers[_i], "", kernel_src, &obj, &n)) {
    fprintf(stderr, "host-obj: %s not installed: skipped\n", compilers[_i]);
    return;
  }
  ck_assert(bg_host_obj_is_rel(obj, n));
  bg_dev *dev;
  OK(bg_dev_open("CPU", &dev));
  static const uint8_t sizes[4] = {8, 8, 8, 8};
  bg_program_info info = {"objk", 4, sizes};
  bg_program *p;
  OK(bg_program_load(dev, obj, n, &info, &p));
  bg_buf *o, *in, *bytes, *order;
  OK(bg_buf_alloc(dev, N * 4, BG_BUF_ZERO, &o));
  OK(bg_buf_alloc(dev, N * 4, 0, &in));
  OK(bg_buf_alloc(dev, N * 256, BG_BUF_ZERO, &bytes));
  OK(bg_buf_alloc(dev, N * 4, BG_BUF_ZERO, &order));
  float *inf = bg_buf_cpu(in);
  for (int i = 0; i < N; i++) inf[i] = (float)i * 0.37f - 9.0f;
  bg_buf *bufs[4] = {o, in, bytes, order};
  const uint32_t g[3] = {GX, GY, 1}, l[3] = {1, 1, 1};
  for (int run = 1; run <= 2; run++) {
    memset(bg_buf_cpu(bytes), 0, N * 256);
    OK(bg_program_run(p, bufs, 4, NULL, 0, g, l, true, NULL));
    check_results(bg_buf_cpu(o), bg_buf_cpu(bytes), bg_buf_cpu(order), inf, run);
  }
  /* A malformed object through the device names the program and the field. */
  obj[18] = 40;   /* e_machine EM_ARM */
  bg_program *bad = NULL;
  FAILS(bg_program_load(dev, obj, n, &info, &bad), BG_EINVAL, "cpu: program 'objk': host obj: e_machine 40");
  ck_assert_ptr_null(bad);
  bg_buf_free(o);
  bg_buf_free(in);
  bg_buf_free(bytes);
  bg_buf_free(order);
  bg_program_free(p);
  bg_dev_close(dev);
  free(obj);
}
END_TEST

/* An ET_REL kernel that never returns (no unwind tables registered for its image) is cancelled at close like a
 * shared object's, on the queue's worker and on a pool thread (grid of 2, BG_CPU_THREADS=2). */
START_TEST(host_obj_never_ending_kernel_cancelled_at_close) {
  uint8_t *obj;
  size_t n;
  ck_assert(compile_obj("cc", "", "#include <stdint.h>\n"
                        "void spin_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
                        "  (void)gsz; (void)lsz;\n"
                        "  volatile uint32_t *c = ((uint32_t *const *)ka)[0];\n"
                        "  for (;;) c[gid[0]] = c[gid[0]] + 1;\n"
                        "}\n", &obj, &n));
  setenv("BG_WAIT_TIMEOUT_MS", "300", 1);
  setenv("BG_CPU_THREADS", "2", 1);
  bg_dev *dev;
  OK(bg_dev_open("CPU", &dev));
  static const uint8_t sizes[1] = {8};
  bg_program_info info = {"spin_k", 1, sizes};
  bg_program *p;
  OK(bg_program_load(dev, obj, n, &info, &p));
  bg_buf *c;
  OK(bg_buf_alloc(dev, 64, BG_BUF_ZERO, &c));
  const volatile uint32_t *count = bg_buf_cpu(c);
  const uint32_t gs[3] = {2, 1, 1}, ls[3] = {1, 1, 1};
  OK(bg_program_run(p, &c, 1, NULL, 0, gs, ls, false, NULL));
  for (int i = 0; i < 10000 && (!count[0] || !count[1]); i++) usleep(1000);
  ck_assert_msg(count[0] && count[1], "both work-groups should be running (%u, %u)", count[0], count[1]);
  ck_assert_int_eq(bg_dev_synchronize(dev, 0), -BG_ETIMEDOUT);
  bg_program_free(p);
  bg_buf_free(c);
  bg_clear_error();
  bg_dev_close(dev);
  ck_assert_msg(strstr(bg_last_error(), "kernel 'spin_k' still running 300 ms") && strstr(bg_last_error(), "cancelled"),
                "%s", bg_last_error());
  unsetenv("BG_WAIT_TIMEOUT_MS");
  unsetenv("BG_CPU_THREADS");
  free(obj);
}
END_TEST

/* The permissions of the page holding addr in /proc/self/maps ("r-xp"), or "" when not mapped. */
static void perms_of(const void *addr, char out[5]) {
  FILE *f = fopen("/proc/self/maps", "r");
  ck_assert_ptr_nonnull(f);
  char line[512];
  out[0] = '\0';
  uintptr_t a = (uintptr_t)addr;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char pr[5];
    if (sscanf(line, "%lx-%lx %4s", &lo, &hi, pr) == 3 && a >= lo && a < hi) {
      memcpy(out, pr, 5);
      break;
    }
  }
  fclose(f);
}

/* Directly: stubs and GOT made for libm and memset, code read+execute, data never executable, the entry callable. */
START_TEST(host_obj_layout_and_protection) {
  uint8_t *obj;
  size_t n;
  if (!compile_obj(compilers[_i], "", kernel_src, &obj, &n)) return;
  bg_host_obj o;
  OK(bg_host_obj_load(obj, n, "objk", &o));
  ck_assert_uint_ge(o.nstubs, 3);   /* sinf, expf, memset */
  ck_assert_uint_ge(o.ngot, 4);     /* those, gscale and gcalls */
  ck_assert_uint_eq((uintptr_t)o.image % 4096, 0);
  ck_assert((uint8_t *)o.entry >= o.image && (uint8_t *)o.entry < o.image + o.code_size);
  char pr[5];
  perms_of(o.image, pr);
  ck_assert_str_eq(pr, "r-xp");
  perms_of(o.image + o.code_size, pr);   /* read-only data and the GOT */
  ck_assert_str_eq(pr, "r--p");
  perms_of(o.image + o.size - 1, pr);    /* .data and .bss */
  ck_assert_str_eq(pr, "rw-p");
  float out[N], in[N];
  static uint8_t bytes[N * 256];
  uint32_t order[N];
  for (int i = 0; i < N; i++) in[i] = (float)i * 0.11f - 3.0f;
  void *args[4] = {out, in, bytes, order};
  void (*fn)(const void *, const uint32_t *, const uint32_t *, const uint32_t *);
  memcpy(&fn, &o.entry, sizeof fn);
  const uint32_t gsz[3] = {GX, GY, 1}, lsz[3] = {1, 1, 1};
  for (uint32_t y = 0; y < GY; y++)
    for (uint32_t x = 0; x < GX; x++) fn(args, (const uint32_t[3]){x, y, 0}, gsz, lsz);
  check_results(out, bytes, order, in, 1);
  bg_host_obj_free(&o);
  bg_host_obj_free(&o);   /* freeing twice is harmless */
  free(obj);
}
END_TEST

/* ---------------- malformed objects ---------------- */

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint64_t rd64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void wr32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i);
}
static void wr64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> 8 * i);
}
static uint8_t *shdr(uint8_t *f, unsigned i) { return f + rd64(f + 40) + 64u * i; }
/* Section index by name (shstrtab lookup). */
static unsigned find_sec(uint8_t *f, const char *name) {
  unsigned shnum = rd16(f + 60);
  uint8_t *strs = f + rd64(shdr(f, rd16(f + 62)) + 24);
  for (unsigned i = 1; i < shnum; i++)
    if (!strcmp((const char *)strs + (uint32_t)rd64(shdr(f, i)), name)) return i;
  ck_abort_msg("no section %s", name);
  return 0;
}
/* The symbol named `name` (its 24-byte entry). */
static uint8_t *find_sym(uint8_t *f, const char *name) {
  unsigned st = find_sec(f, ".symtab");
  uint8_t *sh = shdr(f, st);
  uint8_t *strs = f + rd64(shdr(f, (unsigned)(sh[40] | sh[41] << 8)) + 24);
  for (uint64_t k = 1; k < rd64(sh + 32) / 24; k++) {
    uint8_t *s = f + rd64(sh + 24) + 24 * k;
    if (!strcmp((const char *)strs + (s[0] | s[1] << 8 | s[2] << 16 | (uint32_t)s[3] << 24), name)) return s;
  }
  ck_abort_msg("no symbol %s", name);
  return NULL;
}

typedef void (*mutate_fn)(uint8_t *f, size_t n);
static void m_machine(uint8_t *f, size_t n) { (void)n; wr16(f + 18, 183); }
static void m_type(uint8_t *f, size_t n) { (void)n; wr16(f + 16, 3); }
static void m_shstrndx(uint8_t *f, size_t n) { (void)n; wr16(f + 62, rd16(f + 60)); }
static void m_shoff(uint8_t *f, size_t n) { wr64(f + 40, n - 100); }
static void m_sec_offset(uint8_t *f, size_t n) { (void)n; wr64(shdr(f, find_sec(f, ".text")) + 24, 0xfffffff0u); }
static void m_bss_size(uint8_t *f, size_t n) { (void)n; wr64(shdr(f, find_sec(f, ".bss")) + 32, 1ull << 40); }
static void m_rel_target(uint8_t *f, size_t n) { (void)n; wr32(shdr(f, find_sec(f, ".rela.text")) + 44, 0x7777); }
static void m_rel_is_rel(uint8_t *f, size_t n) { (void)n; wr32(shdr(f, find_sec(f, ".rela.text")) + 4, 9); }
static uint8_t *first_rela(uint8_t *f) { return f + rd64(shdr(f, find_sec(f, ".rela.text")) + 24); }
static void m_rel_offset(uint8_t *f, size_t n) {
  (void)n;
  wr64(first_rela(f), rd64(shdr(f, find_sec(f, ".text")) + 32) - 2);   /* 2 bytes before the end: 4 do not fit */
}
static void m_rel_type(uint8_t *f, size_t n) { (void)n; wr32(first_rela(f) + 8, 37); }
static void m_rel_sym(uint8_t *f, size_t n) { (void)n; wr32(first_rela(f) + 12, 0xffffff); }
static void m_sym_shndx(uint8_t *f, size_t n) { (void)n; wr16(find_sym(f, "gscale") + 6, 0x7000); }
static void m_sym_value(uint8_t *f, size_t n) { (void)n; wr64(find_sym(f, "gscale") + 8, 1ull << 33); }
static void m_entry_local(uint8_t *f, size_t n) { (void)n; find_sym(f, "objk")[4] = 2 << 4 | 1; /* weak object */ }
static void m_undef_missing(uint8_t *f, size_t n) {
  (void)n;
  uint8_t *s = find_sym(f, "sinf");
  unsigned st = find_sec(f, ".symtab");
  uint8_t *sh = shdr(f, st);
  char *name = (char *)f + rd64(shdr(f, (unsigned)(sh[40] | sh[41] << 8)) + 24) +
               (s[0] | s[1] << 8 | s[2] << 16 | (uint32_t)s[3] << 24);
  name[0] = 'q';   /* "qinf": in no library */
}

static const struct { const char *what; mutate_fn fn; const char *entry; const char *msg; } cases[] = {
  {"wrong machine", m_machine, "objk", "e_machine 183, expected EM_X86_64 (62)"},
  {"not ET_REL", m_type, "objk", "e_type 3, expected ET_REL (1)"},
  {"section-name table index", m_shstrndx, "objk", "e_shstrndx"},
  {"section headers past the end", m_shoff, "objk", "e_shoff"},
  {"section past the end", m_sec_offset, "objk", "sh_offset 0xfffffff0"},
  {"huge .bss", m_bss_size, "objk", "sh_size 0x10000000000"},
  {"bad section index in sh_info", m_rel_target, "objk", "sh_info 30583"},
  {"SHT_REL", m_rel_is_rel, "objk", "SHT_REL (9), expected SHT_RELA"},
  {"relocation past the section end", m_rel_offset, "objk", "bytes past the end"},
  {"unknown relocation type", m_rel_type, "objk", "type 37 is not supported"},
  {"symbol index out of range", m_rel_sym, "objk", "symbol index 16777215"},
  {"symbol section index", m_sym_shndx, "objk", "st_shndx 0x7000"},
  {"symbol value past its section", m_sym_value, "objk", "st_value 0x200000000"},
  {"entry missing", NULL, "nope", "entry 'nope' not found"},
  {"entry not a function", NULL, "gscale", "entry 'gscale' (symbol"},
  {"entry not global", m_entry_local, "objk", "expected a global (1) STT_FUNC (2)"},
  {"undefined symbol not found", m_undef_missing, "objk", "undefined symbol 'qinf'"},
};

START_TEST(host_obj_malformed_names_field) {
  uint8_t *obj;
  size_t n;
  ck_assert_msg(compile_obj("cc", "", kernel_src, &obj, &n), "no cc");
  uint8_t *copy = malloc(n);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    memcpy(copy, obj, n);
    if (cases[i].fn) cases[i].fn(copy, n);
    bg_host_obj o;
    int r = bg_host_obj_load(copy, n, cases[i].entry, &o);
    ck_assert_msg(r == -BG_EINVAL, "%s: got %d: %s", cases[i].what, r, bg_last_error());
    ck_assert_msg(strstr(bg_last_error(), cases[i].msg) && strstr(bg_last_error(), "host obj: "),
                  "%s: message '%s' lacks '%s'", cases[i].what, bg_last_error(), cases[i].msg);
    ck_assert_ptr_null(o.map);
  }
  /* Every truncation fails with a message (the section headers are at the end of the file). */
  for (size_t len = 0; len < n; len++) {
    bg_host_obj o;
    ck_assert_msg(bg_host_obj_load(obj, len, "objk", &o) == -BG_EINVAL, "truncated to %zu bytes loaded", len);
    ck_assert_ptr_nonnull(strstr(bg_last_error(), "host obj: "));
  }
  free(copy);
  free(obj);
}
END_TEST

/* Non-PIC code takes a symbol's absolute address in 32 bits (R_X86_64_32): the image is mapped far above 4 GiB. */
START_TEST(host_obj_abs32_does_not_fit) {
  uint8_t *obj;
  size_t n;
  ck_assert(compile_obj("cc", "-fno-pic -mcmodel=small",
                        "int g[4];\nint *addr(void) { return g; }\nvoid k(void) { g[0] = 1; }\n", &obj, &n));
  bg_host_obj o;
  FAILS(bg_host_obj_load(obj, n, "k", &o), BG_EINVAL, "does not fit in 32 bits");
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "R_X86_64_32"));
  free(obj);
}
END_TEST

/* Random byte flips (a fixed seed): every result is 0 or an error, never a crash. Flips land anywhere and, half of
 * the time, in the section headers, symbols and relocations where the loader's checks are. */
START_TEST(host_obj_random_flips) {
  uint8_t *obj;
  size_t n;
  ck_assert(compile_obj("cc", "", kernel_src, &obj, &n));
  uint64_t shoff = rd64(obj + 40);
  unsigned sym = find_sec(obj, ".symtab"), rela = find_sec(obj, ".rela.text");
  uint64_t regions[3][2] = {{shoff, n - shoff},
                            {rd64(shdr(obj, sym) + 24), rd64(shdr(obj, sym) + 32)},
                            {rd64(shdr(obj, rela) + 24), rd64(shdr(obj, rela) + 32)}};
  uint8_t *copy = malloc(n);
  srand(16);
  int loaded = 0;
  for (int it = 0; it < 4000; it++) {
    memcpy(copy, obj, n);
    int flips = 1 + rand() % 4;
    for (int k = 0; k < flips; k++) {
      size_t at;
      if (rand() % 2) {
        at = (size_t)rand() % n;
      } else {
        int r = rand() % 3;
        at = (size_t)(regions[r][0] + (uint64_t)rand() % regions[r][1]);
      }
      copy[at] ^= (uint8_t)(1u << (rand() % 8));
    }
    bg_host_obj o;
    int r = bg_host_obj_load(copy, n, "objk", &o);
    ck_assert_msg(r == 0 || r == -BG_EINVAL || r == -BG_ENOMEM, "iteration %d: %d %s", it, r, bg_last_error());
    if (r == 0) {
      loaded++;
      ck_assert((uint8_t *)o.entry >= o.image && (uint8_t *)o.entry < o.image + o.code_size);
      bg_host_obj_free(&o);
    }
  }
  fprintf(stderr, "host-obj: %d of 4000 flipped objects still loaded\n", loaded);
  free(copy);
  free(obj);
}
END_TEST

static Suite *host_obj_suite(void) {
  Suite *s = suite_create("host-obj");
  TCase *tc = tcase_create("loader");
  tcase_set_timeout(tc, 240);
  tcase_add_loop_test(tc, host_obj_runs_on_cpu_device, 0, 2);
  tcase_add_loop_test(tc, host_obj_layout_and_protection, 0, 2);
  tcase_add_test(tc, host_obj_never_ending_kernel_cancelled_at_close);
  tcase_add_test(tc, host_obj_malformed_names_field);
  tcase_add_test(tc, host_obj_abs32_does_not_fit);
  tcase_add_test(tc, host_obj_random_flips);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(host_obj_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
