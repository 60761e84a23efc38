/* tests/unit/compile/test_compile.c: SHA-256 known answers, bg_compile_c and its disk cache.
 * Every compile test runs in a fresh cache directory under BG_CACHE_DIR (or /tmp) and checks
 * stats as deltas, so it holds with or without Check's fork mode. */
#include <check.h>
#include <dlfcn.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baregpu/compile.h"
#include "baregpu/error.h"
#include "compile/hostcc.h"
#include "compile/sha256.h"

/* ---------------- SHA-256 (FIPS 180-2 appendix B and NIST examples) ---------------- */

static void hex_of(const void *data, size_t n, char out[65]) {
  uint8_t d[32];
  bg_sha256(data, n, d);
  bg_sha256_hex(d, out);
}

START_TEST(sha256_vectors) {
  static const struct { const char *msg, *hex; } v[] = {
    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
     "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    {"The quick brown fox jumps over the lazy dog",
     "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"},
  };
  char got[65];
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    hex_of(v[i].msg, strlen(v[i].msg), got);
    ck_assert_str_eq(got, v[i].hex);
  }
}
END_TEST

START_TEST(sha256_million_a) {
  /* One million 'a', fed in uneven pieces to exercise buffering across block boundaries. */
  bg_sha256_ctx s;
  bg_sha256_init(&s);
  char chunk[997];
  memset(chunk, 'a', sizeof chunk);
  size_t left = 1000000;
  for (size_t k = 1; left > 0; k = k % 997 + 1) {
    size_t n = k < left ? k : left;
    bg_sha256_update(&s, chunk, n);
    left -= n;
  }
  uint8_t d[32];
  char got[65];
  bg_sha256_final(&s, d);
  bg_sha256_hex(d, got);
  ck_assert_str_eq(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

START_TEST(sha256_incremental_matches_oneshot) {
  /* Every length around the padding boundaries (55, 56, 63, 64, 119, 120 ...). */
  uint8_t msg[300];
  for (size_t i = 0; i < sizeof msg; i++) msg[i] = (uint8_t)(i * 7 + 3);
  for (size_t n = 0; n <= sizeof msg; n++) {
    uint8_t one[32], inc[32];
    bg_sha256(msg, n, one);
    bg_sha256_ctx s;
    bg_sha256_init(&s);
    for (size_t i = 0; i < n; i++) bg_sha256_update(&s, msg + i, 1);
    bg_sha256_final(&s, inc);
    ck_assert_mem_eq(one, inc, 32);
  }
}
END_TEST

/* ---------------- fixtures ---------------- */

static char test_dir[4096];

static void fresh_cache_dir(void) {
  const char *base = getenv("BG_CACHE_DIR");
  if (!base || !*base) base = "/tmp";
  mkdir(base, 0777);
  snprintf(test_dir, sizeof test_dir, "%s/test_compile.XXXXXX", base);
  ck_assert_ptr_nonnull(mkdtemp(test_dir));
  setenv("BG_CACHE_DIR", test_dir, 1);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st; (void)flag; (void)ftw;
  return remove(path);
}

static void remove_cache_dir(void) {
  if (test_dir[0]) nftw(test_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  test_dir[0] = '\0';
}

static const char *kernel_src =
  "#include <stdint.h>\n"
  "#include <math.h>\n"
  "#ifndef VAL\n#define VAL 1\n#endif\n"
  "void add_val(const void *kargs, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  (void)gsz; (void)lsz;\n"
  "  float *out = ((float *const *)kargs)[0];\n"
  "  const float *in = ((const float *const *)kargs)[1];\n"
  "  out[gid[0]] = sqrtf(in[gid[0]] * in[gid[0]]) + (float)VAL;\n"
  "}\n";

typedef void (*entry_fn)(const void *, const uint32_t *, const uint32_t *, const uint32_t *);

static bool is_elf(const void *so, size_t n) { return n > 4 && memcmp(so, "\x7f" "ELF", 4) == 0; }

/* Load shared-object bytes as the CPU device does (memfd + dlopen) and run add_val on 8 floats. */
static void run_add_val(const void *so, size_t n, float expect_add) {
  int fd = memfd_create("test_compile", MFD_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, so, n), (ssize_t)n);
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(dl != NULL, "dlopen: %s", dlerror());
  void *sym = dlsym(dl, "add_val");
  ck_assert_ptr_nonnull(sym);
  entry_fn fn;
  memcpy(&fn, &sym, sizeof fn);
  float in[8], out[8];
  for (int i = 0; i < 8; i++) in[i] = (float)(i - 4);
  const void *kargs[2] = {out, in};
  uint32_t gid[3] = {0, 0, 0}, gsz[3] = {8, 1, 1}, lsz[3] = {1, 1, 1};
  for (gid[0] = 0; gid[0] < 8; gid[0]++) fn(kargs, gid, gsz, lsz);
  for (int i = 0; i < 8; i++) ck_assert_float_eq(out[i], (float)abs(i - 4) + expect_add);
  dlclose(dl);
  close(fd);
}

static bg_compile_stats stats_now(void) {
  bg_compile_stats st;
  bg_compile_get_stats(&st);
  return st;
}

/* ---------------- bg_compile_c ---------------- */

START_TEST(compile_and_load) {
  void *so = NULL;
  size_t n = 0;
  int r = bg_compile_c(kernel_src, NULL, &so, &n);
  ck_assert_msg(r == 0, "bg_compile_c: %s", bg_last_error());
  ck_assert(is_elf(so, n));
  run_add_val(so, n, 1.0f);
  free(so);
}
END_TEST

START_TEST(cache_hit_second_call) {
  bg_compile_stats s0 = stats_now();
  void *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  ck_assert_int_eq(bg_compile_c(kernel_src, "", &a, &na), 0);
  bg_compile_stats s1 = stats_now();
  ck_assert_uint_eq(s1.misses - s0.misses, 1);
  ck_assert_uint_eq(s1.hits - s0.hits, 0);
  ck_assert_int_eq(bg_compile_c(kernel_src, "", &b, &nb), 0);
  bg_compile_stats s2 = stats_now();
  ck_assert_uint_eq(s2.misses - s1.misses, 0);
  ck_assert_uint_eq(s2.hits - s1.hits, 1);
  ck_assert_uint_eq(na, nb);
  ck_assert_mem_eq(a, b, na);
  /* NULL and "" extra flags are the same key. */
  free(b);
  ck_assert_int_eq(bg_compile_c(kernel_src, NULL, &b, &nb), 0);
  ck_assert_uint_eq(stats_now().hits - s2.hits, 1);
  run_add_val(b, nb, 1.0f);
  free(a);
  free(b);
}
END_TEST

START_TEST(flags_make_a_different_entry) {
  char p1[4200], p2[4200];
  ck_assert_int_eq(bg_hostcc_entry_path(kernel_src, NULL, p1, sizeof p1), 0);
  ck_assert_int_eq(bg_hostcc_entry_path(kernel_src, "-DVAL=3", p2, sizeof p2), 0);
  ck_assert_str_ne(p1, p2);
  bg_compile_stats s0 = stats_now();
  void *a = NULL, *b = NULL;
  size_t na, nb;
  ck_assert_int_eq(bg_compile_c(kernel_src, NULL, &a, &na), 0);
  ck_assert_int_eq(bg_compile_c(kernel_src, "-DVAL=3", &b, &nb), 0);
  ck_assert_uint_eq(stats_now().misses - s0.misses, 2);
  ck_assert_int_eq(access(p1, R_OK), 0);
  ck_assert_int_eq(access(p2, R_OK), 0);
  run_add_val(a, na, 1.0f);
  run_add_val(b, nb, 3.0f);   /* the extra flags reached the compiler */
  /* A different source is a different entry too. */
  char p3[4200];
  ck_assert_int_eq(bg_hostcc_entry_path("int x;", NULL, p3, sizeof p3), 0);
  ck_assert_str_ne(p1, p3);
  free(a);
  free(b);
}
END_TEST

START_TEST(compile_error_reports_diagnostics) {
  const char *bad = "void broken(void) {\n  int x = ;\n}\n";
  void *so = (void *)1;
  size_t n = 0;
  bg_compile_stats s0 = stats_now();
  int r = bg_compile_c(bad, NULL, &so, &n);
  ck_assert_int_eq(r, -BG_ECOMPILE);
  const char *msg = bg_last_error();
  ck_assert_msg(strstr(msg, "kernel.c:2") != NULL, "diagnostics missing the line: %s", msg);
  ck_assert_msg(strstr(msg, "error") != NULL, "no 'error' in: %s", msg);
  ck_assert_msg(strstr(msg, test_dir) == NULL, "temporary path not stripped: %s", msg);
  ck_assert_uint_eq(stats_now().misses - s0.misses, 1);
  /* Nothing was cached: a second attempt compiles (and fails) again. */
  ck_assert_int_eq(bg_compile_c(bad, NULL, &so, &n), -BG_ECOMPILE);
  ck_assert_uint_eq(stats_now().misses - s0.misses, 2);
  /* Many errors: the message stays bounded and still says what failed. */
  char big[8192] = "";
  for (int i = 0; i < 200; i++) strcat(big, "int f(void) { return ; }\n");
  ck_assert_int_eq(bg_compile_c(big, NULL, &so, &n), -BG_ECOMPILE);
  ck_assert(strlen(bg_last_error()) < 4096);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "hostcc"));
}
END_TEST

START_TEST(corrupt_entry_is_recompiled) {
  char path[4200];
  ck_assert_int_eq(bg_hostcc_entry_path(kernel_src, NULL, path, sizeof path), 0);
  void *a = NULL, *b = NULL;
  size_t na, nb;
  ck_assert_int_eq(bg_compile_c(kernel_src, NULL, &a, &na), 0);

  /* Flip one byte in the middle of the entry. */
  FILE *f = fopen(path, "r+b");
  ck_assert_ptr_nonnull(f);
  fseek(f, (long)(na / 2), SEEK_SET);
  int c = fgetc(f);
  fseek(f, (long)(na / 2), SEEK_SET);
  fputc(c ^ 0x5a, f);
  fclose(f);
  bg_compile_stats s0 = stats_now();
  ck_assert_int_eq(bg_compile_c(kernel_src, NULL, &b, &nb), 0);
  ck_assert_uint_eq(stats_now().misses - s0.misses, 1);
  ck_assert_uint_eq(na, nb);
  ck_assert_mem_eq(a, b, na);
  free(b);

  /* Truncated, then empty: both recompiled; afterwards the entry is good again. */
  ck_assert_int_eq(truncate(path, (off_t)(na / 3)), 0);
  ck_assert_int_eq(bg_compile_c(kernel_src, NULL, &b, &nb), 0);
  free(b);
  ck_assert_int_eq(truncate(path, 0), 0);
  ck_assert_int_eq(bg_compile_c(kernel_src, NULL, &b, &nb), 0);
  free(b);
  ck_assert_uint_eq(stats_now().misses - s0.misses, 3);
  ck_assert_int_eq(bg_compile_c(kernel_src, NULL, &b, &nb), 0);
  ck_assert_uint_eq(stats_now().hits - s0.hits, 1);
  run_add_val(b, nb, 1.0f);
  free(a);
  free(b);
}
END_TEST

START_TEST(cache_dir_is_created) {
  char nested[4200];
  snprintf(nested, sizeof nested, "%s/a/b/c", test_dir);
  setenv("BG_CACHE_DIR", nested, 1);
  void *so = NULL;
  size_t n;
  ck_assert_msg(bg_compile_c("int x = 1;\n", NULL, &so, &n) == 0, "%s", bg_last_error());
  struct stat st;
  ck_assert_int_eq(stat(nested, &st), 0);
  ck_assert(S_ISDIR(st.st_mode));
  free(so);
  /* Only the entry remains: temporary files are gone. */
  char path[4200];
  ck_assert_int_eq(bg_hostcc_entry_path("int x = 1;\n", NULL, path, sizeof path), 0);
  ck_assert_int_eq(access(path, R_OK), 0);
  setenv("BG_CACHE_DIR", test_dir, 1);
}
END_TEST

START_TEST(bad_compiler_is_reported) {
  setenv("BG_CC", "/nonexistent/bg-no-such-cc", 1);
  void *so = NULL;
  size_t n;
  int r = bg_compile_c("int y;\n", NULL, &so, &n);
  unsetenv("BG_CC");
  ck_assert_int_eq(r, -BG_ECOMPILE);
  ck_assert_msg(strstr(bg_last_error(), "/nonexistent/bg-no-such-cc") != NULL, "%s", bg_last_error());
}
END_TEST

START_TEST(null_arguments) {
  void *so;
  size_t n;
  ck_assert_int_eq(bg_compile_c(NULL, NULL, &so, &n), -BG_EINVAL);
  ck_assert_int_eq(bg_compile_c("int z;", NULL, NULL, &n), -BG_EINVAL);
}
END_TEST

/* Several threads compiling the same kernel at once: all succeed with identical bytes (the
 * entry is written atomically, so nobody reads half a file). */
typedef struct { void *so; size_t n; int r; } job;

static void *compile_job(void *arg) {
  job *j = arg;
  j->r = bg_compile_c(kernel_src, "-DVAL=7", &j->so, &j->n);
  return NULL;
}

START_TEST(concurrent_compiles) {
  enum { N = 6 };
  pthread_t th[N];
  job jobs[N];
  memset(jobs, 0, sizeof jobs);
  for (int i = 0; i < N; i++) ck_assert_int_eq(pthread_create(&th[i], NULL, compile_job, &jobs[i]), 0);
  for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < N; i++) {
    ck_assert_int_eq(jobs[i].r, 0);
    ck_assert_uint_eq(jobs[i].n, jobs[0].n);
    ck_assert_mem_eq(jobs[i].so, jobs[0].so, jobs[0].n);
  }
  run_add_val(jobs[0].so, jobs[0].n, 7.0f);
  for (int i = 0; i < N; i++) free(jobs[i].so);
}
END_TEST

static Suite *compile_suite(void) {
  Suite *s = suite_create("compile");
  TCase *sha = tcase_create("sha256");
  tcase_add_test(sha, sha256_vectors);
  tcase_add_test(sha, sha256_million_a);
  tcase_add_test(sha, sha256_incremental_matches_oneshot);
  suite_add_tcase(s, sha);

  TCase *cc = tcase_create("hostcc");
  tcase_add_checked_fixture(cc, fresh_cache_dir, remove_cache_dir);
  tcase_set_timeout(cc, 120);
  tcase_add_test(cc, compile_and_load);
  tcase_add_test(cc, cache_hit_second_call);
  tcase_add_test(cc, flags_make_a_different_entry);
  tcase_add_test(cc, compile_error_reports_diagnostics);
  tcase_add_test(cc, corrupt_entry_is_recompiled);
  tcase_add_test(cc, cache_dir_is_created);
  tcase_add_test(cc, bad_compiler_is_reported);
  tcase_add_test(cc, null_arguments);
  tcase_add_test(cc, concurrent_compiles);
  suite_add_tcase(s, cc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(compile_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
