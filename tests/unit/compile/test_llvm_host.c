/* tests/unit/compile/test_llvm_host.c: CPU kernels compiled in process by LLVM (compile/llvm_host.h, the KLLVM_HOST
 * flavour of compile/krender_llvm.c): the host target, the object's shape (ELF64 ET_REL for this machine, the
 * entry as a global function, no unwind tables), the CPU grid, FMA for float32/64 only, 512-bit FMAs in
 * a matmul on AVX-512 machines (LLVM's own disassembler), the kernel cache contract for <key>.o entries, and
 * BG_CPU_COMPILER. Results of the kernels are checked by test_kernel.c's "llvm" case. Built only with LLVM. */
#include <check.h>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <llvm-c/Disassembler.h>
#include <llvm-c/Target.h>

#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "compile/kernel.h"
#include "compile/krender_llvm.h"
#include "compile/llvm_host.h"
#include "ast_build.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

static char root[256];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static void setup(void) {
  snprintf(root, sizeof root, "/tmp/bg-llvm-host-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(root));
  setenv("BG_CACHE_DIR", root, 1);
  unsetenv("BG_CPU_COMPILER");
  ck_assert_ptr_nonnull(C = ir_new());
}

static void teardown(void) {
  ir_free(C);
  C = NULL;
  nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static N matmul(enum ir_scalar s, int m, int n, int kk) {
  N o = buf(0, s), a = buf(1, s), b = buf(2, s);
  N i = out_r(0, m), j = out_r(1, n), k = red_r(2, kk);
  N v = mul(ld(a, add(mul(i, ki(kk)), k)), ld(b, add(mul(k, ki(n)), j)));
  return sink1(st(o, add(mul(i, ki(n)), j), reduce(IR_ADD, v, k, NULL)));
}

/* ---------------- ELF ---------------- */

static const Elf64_Shdr *section(const void *obj, size_t n, unsigned i) {
  const Elf64_Ehdr *eh = obj;
  ck_assert_uint_lt(i, eh->e_shnum);
  ck_assert_uint_le(eh->e_shoff + (uint64_t)(i + 1) * sizeof(Elf64_Shdr), n);
  return (const Elf64_Shdr *)((const char *)obj + eh->e_shoff) + i;
}

static const char *section_name(const void *obj, size_t n, const Elf64_Shdr *sh) {
  const Elf64_Ehdr *eh = obj;
  const Elf64_Shdr *strs = section(obj, n, eh->e_shstrndx);
  ck_assert_uint_lt(strs->sh_offset + sh->sh_name, n);
  return (const char *)obj + strs->sh_offset + sh->sh_name;
}

/* The index of the section named name, or -1. */
static int find_section(const void *obj, size_t n, const char *name) {
  const Elf64_Ehdr *eh = obj;
  for (unsigned i = 1; i < eh->e_shnum; i++)
    if (!strcmp(section_name(obj, n, section(obj, n, i)), name)) return (int)i;
  return -1;
}

/* The global function symbol name: its section and value (offset in it). */
static bool find_function(const void *obj, size_t n, const char *name, unsigned *shndx, uint64_t *value, uint64_t *size) {
  const Elf64_Ehdr *eh = obj;
  for (unsigned i = 1; i < eh->e_shnum; i++) {
    const Elf64_Shdr *sh = section(obj, n, i);
    if (sh->sh_type != SHT_SYMTAB) continue;
    const Elf64_Shdr *strs = section(obj, n, sh->sh_link);
    ck_assert_uint_le(sh->sh_offset + sh->sh_size, n);
    const Elf64_Sym *sym = (const Elf64_Sym *)((const char *)obj + sh->sh_offset);
    for (size_t s = 0; s < sh->sh_size / sizeof *sym; s++) {
      ck_assert_uint_lt(strs->sh_offset + sym[s].st_name, n);
      if (strcmp((const char *)obj + strs->sh_offset + sym[s].st_name, name)) continue;
      if (ELF64_ST_TYPE(sym[s].st_info) != STT_FUNC || ELF64_ST_BIND(sym[s].st_info) != STB_GLOBAL) return false;
      *shndx = sym[s].st_shndx;
      *value = sym[s].st_value;
      *size = sym[s].st_size;
      return true;
    }
  }
  return false;
}

/* ---------------- tests ---------------- */

START_TEST(host_target) {
  const bg_llvm_host_target *h = bg_llvm_host();
  ck_assert_ptr_nonnull(h);
  ck_assert_msg(*h->triple && *h->cpu && *h->features, "triple '%s' cpu '%s' features '%s'", h->triple, h->cpu, h->features);
#if defined(__x86_64__)
  ck_assert_msg(!strncmp(h->triple, "x86_64", 6), "triple %s", h->triple);
#endif
  ck_assert_ptr_eq(bg_llvm_host(), h);   /* initialised once */
}
END_TEST

/* The object is what the CPU device's loader takes (contract C1): ELF64 ET_REL for this machine, the kernel a
 * global function, no unwind tables; the kernel has a grid (contract C2). */
START_TEST(object_shape_and_grid) {
  bg_kernel k;
  void *obj = NULL;
  size_t n = 0;
  OK(bg_kernel_compile_host(C, matmul(IR_DT_FLOAT32, 256, 256, 256), NULL, &k, &obj, &n));
  ck_assert_uint_ge(n, sizeof(Elf64_Ehdr));
  const Elf64_Ehdr *eh = obj;
  ck_assert_int_eq(memcmp(eh->e_ident, ELFMAG, SELFMAG), 0);
  ck_assert_int_eq(eh->e_ident[EI_CLASS], ELFCLASS64);
  ck_assert_int_eq(eh->e_type, ET_REL);
#if defined(__x86_64__)
  ck_assert_int_eq(eh->e_machine, EM_X86_64);
#endif
  unsigned shndx = 0;
  uint64_t value = 0, size = 0;
  ck_assert_msg(find_function(obj, n, k.name, &shndx, &value, &size), "no global function %s in the object", k.name);
  ck_assert_msg(shndx != SHN_UNDEF && size > 0, "%s: section %u size %llu", k.name, shndx, (unsigned long long)size);
  ck_assert_int_eq(find_section(obj, n, ".eh_frame"), -1);
  /* the grid: work-groups over the outermost output loop, one thread each */
  ck_assert_msg(k.gsz[0] > 1 && k.gsz[1] == 1 && k.gsz[2] == 1, "gsz %u %u %u", k.gsz[0], k.gsz[1], k.gsz[2]);
  ck_assert_msg(k.lsz[0] == 1 && k.lsz[1] == 1 && k.lsz[2] == 1, "lsz %u %u %u", k.lsz[0], k.lsz[1], k.lsz[2]);
  ck_assert_ptr_nonnull(strstr(k.src, "define void @"));
  ck_assert_ptr_nonnull(strstr(k.src, "(ptr %args, ptr %gidp, ptr %gszp, ptr %lszp)"));
  free(obj);
  bg_kernel_free(&k);
  /* a small kernel is one call */
  N o = buf(0, IR_DT_FLOAT32), a = buf(1, IR_DT_FLOAT32), r = out_r(0, 16);
  OK(bg_kernel_compile_host(C, sink1(st(o, r, add(ld(a, r), kf(1)))), NULL, &k, &obj, &n));
  ck_assert_msg(k.gsz[0] == 1 && k.gsz[1] == 1 && k.gsz[2] == 1, "gsz %u %u %u", k.gsz[0], k.gsz[1], k.gsz[2]);
  free(obj);
  bg_kernel_free(&k);
}
END_TEST

/* Float32/float64 multiply-adds are llvm.fma whatever the optimization choice (deterministic results), integers
 * and float16 never; no fast-math flags at all (NaN and inf semantics). */
START_TEST(fma_floats_only) {
  static const bg_kopts no_opt = {.no_opt = true}, up = {.upcast = {2, 4}, .unroll = 4};
  const bg_kopts *choices[3] = {NULL, &no_opt, &up};
  bg_kernel k;
  for (int c = 0; c < 3; c++) {
    OK(bg_kernel_render_cpu_llvm(C, matmul(IR_DT_FLOAT32, 16, 16, 16), choices[c], &k));
    ck_assert_msg(strstr(k.src, "call float @llvm.fma.f32(") != NULL, "%s: no llvm.fma.f32", k.name);
    bg_kernel_free(&k);
  }
  OK(bg_kernel_render_cpu_llvm(C, matmul(IR_DT_FLOAT64, 16, 16, 16), NULL, &k));
  ck_assert_ptr_nonnull(strstr(k.src, "call double @llvm.fma.f64("));
  bg_kernel_free(&k);
  static const char *const flags[] = {" fast ", "nnan", "ninf", "reassoc", "contract", " afn ", " arcp "};
  for (int t = 0; t < 3; t++) {
    enum ir_scalar s = t == 0 ? IR_DT_FLOAT32 : t == 1 ? IR_DT_INT32 : IR_DT_FLOAT16;
    OK(bg_kernel_render_cpu_llvm(C, matmul(s, 16, 16, 16), NULL, &k));
    for (size_t f = 0; f < sizeof flags / sizeof *flags; f++)
      ck_assert_msg(!strstr(k.src, flags[f]), "%s has '%s'", k.name, flags[f]);
    if (t) ck_assert_msg(!strstr(k.src, "llvm.fma"), "%s (%s) fuses", k.name, ir_scalar_name(s));
    bg_kernel_free(&k);
  }
  /* the GPU flavours are unchanged: no FMA */
  OK(bg_kernel_render_amdgpu(C, matmul(IR_DT_FLOAT32, 16, 16, 16), NULL, &k));
  ck_assert_ptr_null(strstr(k.src, "llvm.fma"));
  bg_kernel_free(&k);
}
END_TEST

/* On an AVX-512 machine the fp32 matmul's inner loop uses 512-bit FMAs (the widest vectors, contraction). */
START_TEST(matmul_zmm_fma) {
  const bg_llvm_host_target *h = bg_llvm_host();
  ck_assert_ptr_nonnull(h);
  if (!strstr(h->features, "+avx512f") || !strstr(h->features, "+fma")) {
    printf("matmul_zmm_fma: %s has no AVX-512F/FMA, skipped\n", h->cpu);
    return;
  }
  LLVMInitializeNativeDisassembler();
  bg_kernel k;
  void *obj = NULL;
  size_t n = 0;
  OK(bg_kernel_compile_host(C, matmul(IR_DT_FLOAT32, 256, 256, 256), NULL, &k, &obj, &n));
  unsigned shndx;
  uint64_t value, size;
  ck_assert(find_function(obj, n, k.name, &shndx, &value, &size));
  const Elf64_Shdr *text = section(obj, n, shndx);
  ck_assert_uint_le(text->sh_offset + value + size, n);
  LLVMDisasmContextRef dc = LLVMCreateDisasm(h->triple, NULL, 0, NULL, NULL);
  ck_assert_ptr_nonnull(dc);
  uint8_t *code = (uint8_t *)obj + text->sh_offset + value;
  unsigned zmm_fma = 0, insts = 0;
  for (uint64_t pc = 0; pc < size;) {
    char line[128];
    size_t len = LLVMDisasmInstruction(dc, code + pc, size - pc, pc, line, sizeof line);
    ck_assert_msg(len > 0, "%s: undecodable byte at +%llu", k.name, (unsigned long long)pc);
    if (strstr(line, "vfmadd") && strstr(line, "zmm")) zmm_fma++;
    insts++;
    pc += len;
  }
  LLVMDisasmDispose(dc);
  ck_assert_msg(zmm_fma >= 8, "%s: %u 512-bit FMAs in %u instructions", k.name, zmm_fma, insts);
  free(obj);
  bg_kernel_free(&k);
}
END_TEST

static unsigned count_entries(const char *ext, char *path, size_t n) {
  DIR *d = opendir(root);
  ck_assert_ptr_nonnull(d);
  unsigned c = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t l = strlen(e->d_name), el = strlen(ext);
    if (l > el && !strcmp(e->d_name + l - el, ext)) {
      c++;
      snprintf(path, n, "%s/%s", root, e->d_name);
    }
  }
  closedir(d);
  return c;
}

/* <key>.o entries: stored once, hit with the same bytes, a damaged entry is recompiled, another IR is another
 * entry, and no usable cache directory still compiles. */
START_TEST(cache_contract) {
  bg_kernel k;
  void *o1 = NULL, *o2 = NULL, *o3 = NULL;
  size_t n1, n2, n3;
  N mm = matmul(IR_DT_FLOAT32, 32, 32, 32);
  OK(bg_kernel_compile_host(C, mm, NULL, &k, &o1, &n1));
  bg_kernel_free(&k);
  char path[600];
  ck_assert_uint_eq(count_entries(".o", path, sizeof path), 1);
  OK(bg_kernel_compile_host(C, mm, NULL, &k, &o2, &n2));
  bg_kernel_free(&k);
  ck_assert_uint_eq(n1, n2);
  ck_assert_int_eq(memcmp(o1, o2, n1), 0);
  free(o2);
  /* damaged: the payload's first bytes overwritten (the trailer's hash no longer matches) */
  int fd = open(path, O_WRONLY);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(pwrite(fd, "garbage!", 8, 0), 8);
  close(fd);
  OK(bg_kernel_compile_host(C, mm, NULL, &k, &o2, &n2));
  bg_kernel_free(&k);
  ck_assert_uint_eq(n1, n2);
  ck_assert_msg(memcmp(o1, o2, n1) == 0, "the damaged entry was handed out");
  free(o2);
  /* truncated */
  ck_assert_int_eq(truncate(path, 10), 0);
  OK(bg_kernel_compile_host(C, mm, NULL, &k, &o2, &n2));
  bg_kernel_free(&k);
  ck_assert_int_eq(n1 == n2 && memcmp(o1, o2, n1) == 0, 1);
  free(o2);
  /* an entry that is a directory, then a FIFO: compiled without the cache, never blocking */
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  OK(bg_kernel_compile_host(C, mm, NULL, &k, &o2, &n2));
  bg_kernel_free(&k);
  ck_assert_int_eq(n1 == n2 && memcmp(o1, o2, n1) == 0, 1);
  free(o2);
  ck_assert_int_eq(rmdir(path), 0);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  OK(bg_kernel_compile_host(C, mm, NULL, &k, &o2, &n2));
  bg_kernel_free(&k);
  ck_assert_int_eq(n1 == n2 && memcmp(o1, o2, n1) == 0, 1);
  free(o2);
  ck_assert_int_eq(unlink(path), 0);
  OK(bg_kernel_compile_host(C, mm, NULL, &k, &o2, &n2));   /* stored again */
  bg_kernel_free(&k);
  free(o2);
  ck_assert_uint_eq(count_entries(".o", path, sizeof path), 1);
  /* another kernel, another entry */
  OK(bg_kernel_compile_host(C, matmul(IR_DT_FLOAT32, 32, 32, 16), NULL, &k, &o3, &n3));
  bg_kernel_free(&k);
  free(o3);
  ck_assert_uint_eq(count_entries(".o", path, sizeof path), 2);
  /* no cache directory at all */
  setenv("BG_CACHE_DIR", "/proc/no-such-dir/cache", 1);
  OK(bg_kernel_compile_host(C, mm, NULL, &k, &o2, &n2));
  bg_kernel_free(&k);
  ck_assert_int_eq(n1 == n2 && memcmp(o1, o2, n1) == 0, 1);
  free(o2);
  free(o1);
}
END_TEST

/* BG_CPU_COMPILER picks the CPU kernel compiler; another value is an error naming it and the allowed ones. */
START_TEST(cpu_compiler_variable) {
  bg_dev *dev;
  OK(bg_dev_open("CPU", &dev));
  N o = buf(0, IR_DT_FLOAT32), a = buf(1, IR_DT_FLOAT32), r = out_r(0, 16);
  N sk = sink1(st(o, r, add(ld(a, r), kf(1))));
  bg_kernel k;
  bg_program *p = NULL;
  setenv("BG_CPU_COMPILER", "gcc", 1);
  ck_assert_int_eq(bg_kernel_build(dev, C, sk, NULL, &k, &p), -BG_EINVAL);
  ck_assert_ptr_null(p);
  const char *m = bg_last_error();
  ck_assert_msg(strstr(m, "BG_CPU_COMPILER") && strstr(m, "gcc") && strstr(m, "'llvm' or 'c'"), "%s", m);
  setenv("BG_CPU_COMPILER", "c", 1);
  OK(bg_kernel_build(dev, C, sk, NULL, &k, &p));
  ck_assert_ptr_nonnull(strstr(k.src, "#include"));   /* C source */
  bg_program_free(p);
  bg_kernel_free(&k);
  setenv("BG_CPU_COMPILER", "llvm", 1);
  OK(bg_kernel_build(dev, C, sk, NULL, &k, &p));
  ck_assert_ptr_nonnull(strstr(k.src, "define void @"));   /* LLVM IR */
  bg_program_free(p);
  bg_kernel_free(&k);
  bg_dev_close(dev);
}
END_TEST

/* Compiles from several threads at once (the schedule's kernels compile in parallel): each thread compiles its
 * own kernel (built beforehand in an ir context of its own) and must get the object a serial compile gives. */
enum { NTHREADS = 4 };
typedef struct job {
  ir_ctx *ctx;
  const ir_node *sink;
  void *obj;
  size_t size;
  int rc;
  char err[256];
} job;

static void *compile_job(void *arg) {
  job *j = arg;
  bg_kernel k;
  j->rc = bg_kernel_compile_host(j->ctx, j->sink, NULL, &k, &j->obj, &j->size);
  if (j->rc) snprintf(j->err, sizeof j->err, "%s", bg_last_error());
  else bg_kernel_free(&k);
  return NULL;
}

START_TEST(concurrent_compiles) {
  job jobs[NTHREADS], serial[NTHREADS];
  pthread_t th[NTHREADS];
  setenv("BG_CACHE_DIR", "/proc/no-such-dir/cache", 1);   /* every compile really compiles */
  ir_ctx *mine = C;
  for (int t = 0; t < NTHREADS; t++) {   /* ast_build.h builds in C: point it at each job's context in turn */
    ck_assert_ptr_nonnull(C = ir_new());
    jobs[t] = (job){.ctx = C, .sink = matmul(t % 2 ? IR_DT_FLOAT64 : IR_DT_FLOAT32, 16 + 16 * t, 32, 24 + 8 * t)};
  }
  C = mine;
  for (int t = 0; t < NTHREADS; t++) ck_assert_int_eq(pthread_create(&th[t], NULL, compile_job, &jobs[t]), 0);
  for (int t = 0; t < NTHREADS; t++) ck_assert_int_eq(pthread_join(th[t], NULL), 0);
  for (int t = 0; t < NTHREADS; t++) {
    serial[t] = (job){.ctx = jobs[t].ctx, .sink = jobs[t].sink};
    compile_job(&serial[t]);
    ck_assert_msg(jobs[t].rc == 0 && serial[t].rc == 0, "%s %s", jobs[t].err, serial[t].err);
    ck_assert_msg(jobs[t].size == serial[t].size && !memcmp(jobs[t].obj, serial[t].obj, jobs[t].size),
                  "kernel %d: the concurrent compile differs from the serial one", t);
    free(jobs[t].obj);
    free(serial[t].obj);
    ir_free(jobs[t].ctx);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("llvm-host");
  TCase *tc = tcase_create("llvm-host");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, host_target);
  tcase_add_test(tc, object_shape_and_grid);
  tcase_add_test(tc, fma_floats_only);
  tcase_add_test(tc, matmul_zmm_fma);
  tcase_add_test(tc, cache_contract);
  tcase_add_test(tc, cpu_compiler_variable);
  tcase_add_test(tc, concurrent_compiles);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
