/* tests/unit/compile/test_kcache.c: the kernel cache (compile/kcache.h) is an optimisation, never a requirement.
 *
 * For each user of the cache - CPU kernels (bg_kernel_build -> hostcc), LLVM AMD code objects
 * (bg_kernel_compile_amdgpu) and BEAM choices (bg_beam_opts) - a cache directory that cannot be created (its parent
 * is a regular file, as for a non-root user with HOME=/nonexistent; tests run as root, so permissions cannot be used),
 * an entry that is a directory and an entry that is a FIFO each give a working kernel, compiled without the cache,
 * and exactly one warning on stderr in the process. A FIFO entry must not block the compile: alarm() turns such a
 * hang into a failed test. Each test runs in its own forked process (the warning is once per process) with stderr
 * captured to a file, in a fresh temporary directory. */
#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baregpu/compile.h"
#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#include "formats/amdgpu_elf.h"
#include "compile/beam.h"
#include "compile/kernel.h"
#include "compile/krender_llvm.h"
#include "ast_build.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())
#define WARNING "baregpu: warning: kernel cache: "
enum { GUARD_S = 120 }; /* a hang (a blocking open of a FIFO) fails the test instead of stalling the suite */

static bg_dev *dev;
static char root[256], errfile[300];
static int saved_stderr = -1;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static void setup(void) {
  const char *t = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/bg-kcache-test-XXXXXX", t && *t ? t : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(root));
  snprintf(errfile, sizeof errfile, "%s/stderr.txt", root);
  fflush(stderr);
  saved_stderr = dup(2);
  FILE *f = fopen(errfile, "w");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_ge(dup2(fileno(f), 2), 0);
  fclose(f);
  ck_assert_ptr_nonnull(C = ir_new());
  OK(bg_dev_open("CPU", &dev));
  unsetenv("IGNORE_BEAM_CACHE");
  alarm(GUARD_S);
}

static void teardown(void) {
  alarm(0);
  bg_dev_close(dev);
  ir_free(C);
  fflush(stderr);
  dup2(saved_stderr, 2);
  close(saved_stderr);
  nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* What this process printed on stderr so far (static buffer). */
static const char *captured(void) {
  static char text[16384];
  fflush(stderr);
  FILE *f = fopen(errfile, "r");
  ck_assert_ptr_nonnull(f);
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  return text;
}

static int count_warnings(void) {
  int n = 0;
  for (const char *p = captured(); (p = strstr(p, WARNING)) != NULL; p++) n++;
  return n;
}

/* Exactly one cache warning, and it names `needle` (the directory or entry at fault). */
static void one_warning_naming(const char *needle) {
  const char *err = captured();
  ck_assert_msg(count_warnings() == 1, "expected one cache warning, stderr was:\n%s", err);
  const char *w = strstr(err, WARNING);
  const char *eol = strchr(w, '\n');
  ck_assert_msg(eol != NULL, "warning without a newline:\n%s", err);
  char line[2048];
  snprintf(line, sizeof line, "%.*s", (int)(eol - w), w);
  ck_assert_msg(strstr(line, needle) != NULL, "the warning does not name %s: %s", needle, line);
}

static void use_cache(const char *sub, char *dir, size_t n) {
  snprintf(dir, n, "%s/%s", root, sub);
  setenv("BG_CACHE_DIR", dir, 1);
}

/* A cache directory whose parent is a regular file: it can never be created. */
static void unusable_cache(char *dir, size_t n) {
  char file[300];
  snprintf(file, sizeof file, "%s/not-a-dir", root);
  FILE *f = fopen(file, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  snprintf(dir, n, "%s/cache", file);
  setenv("BG_CACHE_DIR", dir, 1);
}

/* Replace every entry <dir>/<key>.<ext> with a directory (fifo false) or a FIFO; how many. */
static int replace_entries(const char *dir, const char *ext, bool fifo, char *first, size_t n) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int count = 0;
  struct dirent *de;
  size_t el = strlen(ext);
  while ((de = readdir(d)) != NULL) {
    size_t l = strlen(de->d_name);
    if (l <= el + 1 || de->d_name[l - el - 1] != '.' || strcmp(de->d_name + l - el, ext) != 0) continue;
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(fifo ? mkfifo(path, 0644) : mkdir(path, 0755), 0);
    if (!count++) snprintf(first, n, "%s", path);
  }
  closedir(d);
  return count;
}

static bool is_fifo(const char *path) {
  struct stat sb;
  return lstat(path, &sb) == 0 && S_ISFIFO(sb.st_mode);
}

/* out[i] = a[i] * 3 + 1 over 64 floats. */
static N scale_add(void) {
  N i = out_r(0, 64);
  return sink1(st(buf(0, IR_DT_FLOAT32), i, add(mul(ld(buf(1, IR_DT_FLOAT32), i), kf(3)), kf(1))));
}

/* Build sink for the CPU device with opts and check that it computes a*3+1. */
static void cpu_kernel_runs(const bg_kopts *opts) {
  bg_kernel k;
  bg_program *p;
  OK(bg_kernel_build(dev, C, scale_add(), opts, &k, &p));
  float in[64], out[64];
  for (int i = 0; i < 64; i++) in[i] = (float)i * 0.5f - 7.0f;
  bg_buf *b[2];
  OK(bg_buf_alloc(dev, sizeof out, 0, &b[0]));
  OK(bg_buf_alloc(dev, sizeof in, 0, &b[1]));
  OK(bg_buf_write(b[1], 0, in, sizeof in));
  OK(bg_program_run(p, b, 2, NULL, 0, k.gsz, k.lsz, true, NULL));
  OK(bg_buf_read(b[0], 0, out, sizeof out));
  for (int i = 0; i < 64; i++) ck_assert_float_eq(out[i], in[i] * 3.0f + 1.0f);
  bg_buf_free(b[0]);
  bg_buf_free(b[1]);
  bg_program_free(p);
  bg_kernel_free(&k);
}

static unsigned long misses(void) {
  bg_compile_stats s;
  bg_compile_get_stats(&s);
  return s.misses;
}

/* ---------------- CPU kernels (hostcc) ---------------- */

START_TEST(cpu_cache_dir_unusable) {
  char dir[400];
  unusable_cache(dir, sizeof dir);
  unsigned long m0 = misses();
  cpu_kernel_runs(NULL);
  cpu_kernel_runs(NULL); /* nothing was cached: compiled again, no second warning */
  ck_assert_uint_eq(misses() - m0, 2);
  one_warning_naming(dir);
  /* Without BG_CACHE_DIR the directory comes from HOME (a non-root user with HOME=/nonexistent). */
  unsetenv("BG_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  char home[300];
  snprintf(home, sizeof home, "%s/not-a-dir", root);
  setenv("HOME", home, 1);
  cpu_kernel_runs(NULL);
  ck_assert_int_eq(count_warnings(), 1);
}
END_TEST

START_TEST(cpu_entry_is_directory) {
  char dir[400], entry[600];
  use_cache("cache", dir, sizeof dir);
  cpu_kernel_runs(NULL);
  ck_assert_int_eq(count_warnings(), 0);
  ck_assert_int_ge(replace_entries(dir, "so", false, entry, sizeof entry), 1);
  unsigned long m0 = misses();
  cpu_kernel_runs(NULL);
  cpu_kernel_runs(NULL);
  ck_assert_uint_eq(misses() - m0, 2);
  one_warning_naming(entry);
}
END_TEST

START_TEST(cpu_entry_is_fifo) {
  char dir[400], entry[600];
  use_cache("cache", dir, sizeof dir);
  cpu_kernel_runs(NULL);
  ck_assert_int_ge(replace_entries(dir, "so", true, entry, sizeof entry), 1);
  unsigned long m0 = misses();
  cpu_kernel_runs(NULL); /* must not wait for a writer on the FIFO */
  ck_assert_uint_eq(misses() - m0, 1);
  one_warning_naming(entry);
  /* The compiled kernel replaced the FIFO: the next build is a cache hit. */
  ck_assert(!is_fifo(entry));
  cpu_kernel_runs(NULL);
  ck_assert_uint_eq(misses() - m0, 1);
  ck_assert_int_eq(count_warnings(), 1);
}
END_TEST

/* ---------------- BEAM choices ---------------- */

static void beam_runs(void) {
  bg_kopts o;
  OK(bg_beam_opts(dev, C, scale_add(), 1, &o));
  cpu_kernel_runs(&o);
}

START_TEST(beam_cache_dir_unusable) {
  char dir[400];
  unusable_cache(dir, sizeof dir);
  beam_runs();
  beam_runs();
  one_warning_naming(dir);
}
END_TEST

START_TEST(beam_entry_is_directory) {
  char dir[400], entry[600];
  use_cache("cache", dir, sizeof dir);
  beam_runs();
  ck_assert_int_eq(replace_entries(dir, "beam", false, entry, sizeof entry), 1);
  bg_beam_stats s0, s1;
  bg_beam_get_stats(&s0);
  beam_runs();
  bg_beam_get_stats(&s1);
  ck_assert_uint_eq(s1.searches, s0.searches + 1); /* searched again, not read from the directory */
  one_warning_naming(entry);
}
END_TEST

START_TEST(beam_entry_is_fifo) {
  char dir[400], entry[600];
  use_cache("cache", dir, sizeof dir);
  beam_runs();
  ck_assert_int_eq(replace_entries(dir, "beam", true, entry, sizeof entry), 1);
  bg_beam_stats s0, s1;
  bg_beam_get_stats(&s0);
  beam_runs();
  bg_beam_get_stats(&s1);
  ck_assert_uint_eq(s1.searches, s0.searches + 1);
  one_warning_naming(entry);
}
END_TEST

/* ---------------- LLVM AMD code objects ---------------- */

#if BG_HAVE_LLVM
static void amdgpu_compiles(void) {
  bg_kernel k;
  void *elf = NULL;
  size_t n = 0;
  OK(bg_kernel_compile_amdgpu(C, scale_add(), NULL, "gfx1100", &k, &elf, &n));
  bg_amdgpu_image img;
  OK(bg_amdgpu_elf_load(elf, n, k.name, &img)); /* a loadable code object */
  ck_assert_str_eq(img.mcpu, "gfx1100");
  bg_amdgpu_image_free(&img);
  free(elf);
  bg_kernel_free(&k);
}

START_TEST(amdgpu_cache_dir_unusable) {
  char dir[400];
  unusable_cache(dir, sizeof dir);
  amdgpu_compiles();
  amdgpu_compiles();
  one_warning_naming(dir);
}
END_TEST

START_TEST(amdgpu_entry_is_directory) {
  char dir[400], entry[600];
  use_cache("cache", dir, sizeof dir);
  amdgpu_compiles();
  ck_assert_int_eq(replace_entries(dir, "co", false, entry, sizeof entry), 1);
  amdgpu_compiles();
  amdgpu_compiles();
  one_warning_naming(entry);
}
END_TEST

START_TEST(amdgpu_entry_is_fifo) {
  char dir[400], entry[600];
  use_cache("cache", dir, sizeof dir);
  amdgpu_compiles();
  ck_assert_int_eq(replace_entries(dir, "co", true, entry, sizeof entry), 1);
  amdgpu_compiles();
  one_warning_naming(entry);
  ck_assert(!is_fifo(entry)); /* replaced by the new entry */
}
END_TEST
#endif

int main(void) {
  Suite *s = suite_create("kcache");
  TCase *t = tcase_create("kcache");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 2 * GUARD_S);
  tcase_add_test(t, cpu_cache_dir_unusable);
  tcase_add_test(t, cpu_entry_is_directory);
  tcase_add_test(t, cpu_entry_is_fifo);
  tcase_add_test(t, beam_cache_dir_unusable);
  tcase_add_test(t, beam_entry_is_directory);
  tcase_add_test(t, beam_entry_is_fifo);
#if BG_HAVE_LLVM
  tcase_add_test(t, amdgpu_cache_dir_unusable);
  tcase_add_test(t, amdgpu_entry_is_directory);
  tcase_add_test(t, amdgpu_entry_is_fifo);
#endif
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_FORK); /* one process per test: the warning is once per process */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
