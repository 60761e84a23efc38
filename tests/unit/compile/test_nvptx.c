/* tests/unit/compile/test_nvptx.c: NVIDIA code generation without a device: the kernel ASTs the
 * AMD suite renders (elementwise add, broadcast, reduces, matmul, casts, float16, threefry, gated
 * loads, math, symbolic sizes with int arguments, a 3-d grid) rendered in the KLLVM_NVPTX flavour and
 * compiled to PTX for every processor the linked LLVM knows (sm_80, 86, 89, 90; sm_100 and sm_120
 * with LLVM 20+). The PTX must declare `.target sm_XY`, `.entry NAME` with one `.param` per argument
 * (`.u64 .ptr .global .align 16` per buffer, `.u32` per int32 variable) and `.reqntid` = the
 * renderer's work-group size. When ptxas is found (PATH, then /usr/local/cuda/bin) every PTX is
 * assembled with `ptxas -arch=sm_XY` and must succeed; otherwise the suite prints that this part was
 * skipped and why. Without LLVM, the IR is still rendered and checked. NVPTX_DUMP=1 prints the PTX. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "bg_config.h"
#include "compile/kernel.h"
#include "compile/krender_llvm.h"
#include "ast_build.h"
#include "../check_helpers.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"   /* bg_llvm_version */
#include "compile/llvm_nvptx.h"
#endif

extern char **environ;

static void setup(void) { ck_assert_ptr_nonnull(C = ir_new()); }
static void teardown(void) {
  ir_free(C);
  C = NULL;
}

static bool dump(void) {
  const char *e = getenv("NVPTX_DUMP");
  return e && *e && *e != '0';
}

/* Check's messages must stay short (a long one aborts the suite): long text goes to stderr first. */
#define CHECK_TEXT(cond, text, ...)                                           \
  do {                                                                        \
    const char *text_ = (text);                                               \
    if (!(cond)) fprintf(stderr, "----\n%s\n----\n", text_ ? text_ : "(none)"); \
    ck_assert_msg(cond, __VA_ARGS__);                                         \
  } while (0)

/* ---------------- the kernels (as test_amdgpu.c) ---------------- */

enum { NKERNELS = 12 };

static N kernel_ast(int i, const char **what) {
  const enum ir_scalar F = IR_DT_FLOAT32, H = IR_DT_FLOAT16, I32 = IR_DT_INT32, U64 = IR_DT_UINT64;
  N o, a, b, r, j, k;
  switch (i) {
  case 0:
    *what = "add";
    o = buf(0, F), a = buf(1, F), b = buf(2, F), r = out_r(0, 16);
    return sink1(st(o, r, add(ld(a, r), ld(b, r))));
  case 1:
    *what = "add_broadcast_i32";
    o = buf(0, I32), a = buf(1, I32), b = buf(2, I32), r = out_r(0, 3), j = out_r(1, 4);
    return sink1(st(o, add(mul(r, ki(4)), j), add(ld(a, add(mul(r, ki(4)), j)), ld(b, j))));
  case 2:
    *what = "sum256";
    o = buf(0, F), a = buf(1, F), r = red_r(0, 256);
    return sink1(st(o, ki(0), reduce(IR_ADD, ld(a, r), r, NULL)));
  case 3:
    *what = "max_2_2";
    o = buf(0, F), a = buf(1, F), r = out_r(0, 2), j = red_r(1, 2);
    return sink1(st(o, r, reduce(IR_MAX, ld(a, add(mul(r, ki(2)), j)), j, NULL)));
  case 4:
    *what = "matmul64";
    o = buf(0, F), a = buf(1, F), b = buf(2, F), r = out_r(0, 64), j = out_r(1, 64), k = red_r(2, 64);
    return sink1(st(o, add(mul(r, ki(64)), j),
                    reduce(IR_ADD, mul(ld(a, add(mul(r, ki(64)), k)), ld(b, add(mul(k, ki(64)), j))), k, NULL)));
  case 5: {
    *what = "casts";
    N ob = buf(0, I32), of = buf(1, F), obool = buf(2, IR_DT_BOOL), ou = buf(3, U64), af = buf(4, F), ai = buf(5, I32);
    r = out_r(0, 8);
    N st4[4] = {st(ob, r, ir_cast(C, I32, ld(af, r))), st(of, r, add(ir_cast(C, F, ld(ai, r)), ir_cast(C, F, ld(obool, r)))),
                st(obool, r, ir_cast(C, IR_DT_BOOL, ld(af, r))), st(ou, r, ir_cast(C, U64, ld(ai, r)))};
    return sinkv(4, st4);
  }
  case 6:
    *what = "half";
    o = buf(0, H), a = buf(1, H), r = out_r(0, 32);
    return sink1(st(o, r, ir_cast(C, H, add(mul(ir_cast(C, F, ld(a, r)), kf(2)), kf(1)))));
  case 7:
    *what = "threefry";
    o = buf(0, U64), a = buf(1, U64), b = buf(2, U64), r = out_r(0, 8);
    return sink1(st(o, r, ir_alu2(C, IR_THREEFRY, ld(a, r), ld(b, r))));
  case 8:
    *what = "gated";
    o = buf(0, F), a = buf(1, F), r = out_r(0, 16);
    return sink1(st(o, r, ldg(a, r, lt(r, ki(8)))));
  case 9: {
    *what = "math";
    o = buf(0, F), a = buf(1, F), r = out_r(0, 64);
    N x = ld(a, r);
    N v = add(add(ir_alu1(C, IR_EXP2, x), ir_alu1(C, IR_LOG2, x)), add(ir_alu1(C, IR_SIN, x), ir_alu1(C, IR_SQRT, x)));
    return sink1(st(o, r, v));
  }
  case 10: {
    *what = "symbolic";
    N n = ir_var(C, IDX, "n", 1, 64), off = ir_var(C, I32, "off", 0, 16);
    o = buf(0, I32), a = buf(1, I32), r = rng(0, 0, n);
    return sink1(st(o, r, add(ld(a, r), off)));
  }
  default: {
    *what = "big3d";
    o = buf(0, F), a = buf(1, F), r = out_r(0, 8), j = out_r(1, 30), k = out_r(2, 1024);
    N flat = add(add(mul(r, ki(30 * 1024)), mul(j, ki(1024))), k);
    return sink1(st(o, flat, mul(ld(a, flat), kf(3))));
  }
  }
}

/* ---------------- rendering (no LLVM needed) ---------------- */

START_TEST(render_ir) {
  const char *what;
  bg_kernel k;
  OK(bg_kernel_render_nvptx(C, kernel_ast(_i, &what), NULL, &k));
  char def[160];
  snprintf(def, sizeof def, "define ptx_kernel void @%s(", k.name);
  CHECK_TEXT(strstr(k.src, def), k.src, "%s: no '%s' in the IR (on stderr)", what, def);
  ck_assert_ptr_nonnull(strstr(k.src, "target triple = \"nvptx64-nvidia-cuda\""));
  ck_assert_ptr_nonnull(strstr(k.src, "ptr addrspace(1) noalias align 16 %data0"));
  ck_assert_ptr_null(strstr(k.src, "amdgcn"));
  ck_assert_ptr_null(strstr(k.src, "addrspace(5)"));
  char req[64];
  snprintf(req, sizeof req, "\"nvvm.reqntid\"=\"%u,%u,%u\"", k.lsz[0], k.lsz[1], k.lsz[2]);
  CHECK_TEXT(strstr(k.src, req), k.src, "%s: no %s in the IR (on stderr)", what, req);
  if (k.lsz[0] > 1) ck_assert_ptr_nonnull(strstr(k.src, "call i32 @llvm.nvvm.read.ptx.sreg.tid.x()"));
  if (k.gsz[0] > 1) ck_assert_ptr_nonnull(strstr(k.src, "call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()"));
  bg_kernel_free(&k);
}
END_TEST

/* PTX has no float64 exp2/log2/sin: a clear render error, not an abort inside LLVM's codegen. */
START_TEST(f64_math_refused) {
  N o = buf(0, IR_DT_FLOAT64), a = buf(1, IR_DT_FLOAT64), r = out_r(0, 8);
  bg_kernel k;
  FAILS(bg_kernel_render_nvptx(C, sink1(st(o, r, ir_alu1(C, IR_LOG2, ld(a, r)))), NULL, &k), BG_EINVAL,
        "is not supported on this target");
  /* float64 sqrt has one */
  OK(bg_kernel_render_nvptx(C, sink1(st(o, r, ir_alu1(C, IR_SQRT, ld(a, r)))), NULL, &k));
  ck_assert_ptr_nonnull(strstr(k.src, "@llvm.sqrt.f64("));
  bg_kernel_free(&k);
}
END_TEST

#if BG_HAVE_LLVM
/* ---------------- PTX ---------------- */

static const char *const SMS[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"};
enum { NSMS = sizeof SMS / sizeof *SMS };

static char g_ptxas[4096];   /* "" when not found */
static const char *g_ptxas_why;

/* ptxas from PATH, else /usr/local/cuda/bin/ptxas. */
static void find_ptxas(void) {
  const char *path = getenv("PATH");
  g_ptxas[0] = 0;
  for (const char *p = path; p && *p;) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n && n < sizeof g_ptxas - 8) {
      snprintf(g_ptxas, sizeof g_ptxas, "%.*s/ptxas", (int)n, p);
      if (access(g_ptxas, X_OK) == 0) return;
    }
    p = e ? e + 1 : p + n;
  }
  snprintf(g_ptxas, sizeof g_ptxas, "/usr/local/cuda/bin/ptxas");
  if (access(g_ptxas, X_OK) == 0) return;
  g_ptxas[0] = 0;
  g_ptxas_why = "no executable ptxas on PATH or at /usr/local/cuda/bin/ptxas";
}

/* A temp file in $TMPDIR (or /tmp) with suffix; fd returned, path in p. */
static int temp_file(char *p, size_t n, const char *suffix) {
  const char *dir = getenv("TMPDIR");
  snprintf(p, n, "%s/bg-nvptx-XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
  int fd = mkstemps(p, (int)strlen(suffix));
  ck_assert_msg(fd >= 0, "mkstemps %s: %s", p, strerror(errno));
  return fd;
}

/* Does the file hold the NUL-terminated string s (a section name in the cubin's string table)? */
static bool file_has(const char *path, const char *s) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f, "open %s: %s", path, strerror(errno));
  static char data[1 << 20];
  size_t n = fread(data, 1, sizeof data, f);
  fclose(f);
  size_t len = strlen(s) + 1;
  return n >= len && memmem(data, n, s, len) != NULL;
}

/* Runs ptxas -arch=sm on the PTX; 0 on success, else its exit status with its output in log. A
 * success must also give a cubin with the kernel as an entry: ptxas accepts a module without
 * entries (a kernel rendered as a plain .func), but only an entry gets the .nv.info.NAME section
 * of its attributes and its .text.NAME. */
static int run_ptxas(const char *ptx, const char *sm, const char *name, char *log, size_t logn) {
  char in[4200], out[4200], msg[4200], arch[32];
  int fd = temp_file(in, sizeof in, ".ptx");
  size_t len = strlen(ptx);
  ck_assert_msg(write(fd, ptx, len) == (ssize_t)len, "write %s: %s", in, strerror(errno));
  close(fd);
  close(temp_file(out, sizeof out, ".cubin"));
  int mfd = temp_file(msg, sizeof msg, ".log");
  snprintf(arch, sizeof arch, "-arch=%s", sm);
  char *argv[] = {g_ptxas, arch, in, "-o", out, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, mfd, 1);
  posix_spawn_file_actions_adddup2(&fa, mfd, 2);
  pid_t pid;
  int err = posix_spawn(&pid, g_ptxas, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  ck_assert_msg(err == 0, "posix_spawn %s: %s", g_ptxas, strerror(err));
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ssize_t got = pread(mfd, log, logn - 1, 0);
  log[got > 0 ? got : 0] = 0;
  close(mfd);
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  char info[160], text[160];
  snprintf(info, sizeof info, ".nv.info.%s", name);
  snprintf(text, sizeof text, ".text.%s", name);
  if (rc == 0 && !(file_has(out, info) && file_has(out, text))) {
    snprintf(log, logn, "the cubin has no %s and %s sections: %s is not an entry", info, text, name);
    rc = -1;
  }
  unlink(in);
  unlink(out);
  unlink(msg);
  return rc;
}

/* Checks the PTX's module and entry declarations against the render. */
static void check_ptx(const bg_kernel *k, const char *what, const char *sm, const char *ptx) {
  char want[256];
  snprintf(want, sizeof want, "\n.target %s\n", sm);
  CHECK_TEXT(strstr(ptx, want), ptx, "%s/%s: no '.target %s' in the PTX (on stderr)", what, sm, sm);
  ck_assert_msg(strstr(ptx, "\n.address_size 64\n"), "%s/%s: not 64-bit PTX", what, sm);
  snprintf(want, sizeof want, ".visible .entry %s(\n", k->name);
  const char *e = strstr(ptx, want);
  CHECK_TEXT(e, ptx, "%s/%s: no '%s' in the PTX (on stderr)", what, sm, want);
  const char *p = e + strlen(want);
  for (unsigned i = 0; i < k->nbufs + k->nvars; i++) {
    if (i < k->nbufs) snprintf(want, sizeof want, "\t.param .u64 .ptr .global .align 16 %s_param_%u", k->name, i);
    else snprintf(want, sizeof want, "\t.param .u32 %s_param_%u", k->name, i);
    CHECK_TEXT(!strncmp(p, want, strlen(want)), e, "%s/%s: parameter %u is not '%s' (PTX on stderr)", what, sm, i, want);
    p += strlen(want);
    ck_assert_msg(*p == (i + 1 < k->nbufs + k->nvars ? ',' : '\n'), "%s/%s: parameter %u ends with '%c'", what, sm, i, *p);
    p += *p == ',' ? 2 : 1;
  }
  CHECK_TEXT(!strncmp(p, ")\n", 2), e, "%s/%s: more parameters than the render's %u (PTX on stderr)", what, sm,
             k->nbufs + k->nvars);
  snprintf(want, sizeof want, ".reqntid %u, %u, %u\n", k->lsz[0], k->lsz[1], k->lsz[2]);
  CHECK_TEXT(strstr(p, want), e, "%s/%s: no '%s' (PTX on stderr)", what, sm, want);
}


START_TEST(compile_ptx) {
  int ki_ = _i / NSMS;
  const char *sm = SMS[_i % NSMS];
  if (!bg_llvm_nvptx_knows(sm)) {
    if (ki_ == 0) printf("nvptx: LLVM %s has no %s: skipped\n", bg_llvm_version(), sm);
    return;
  }
  const char *what;
  for (int opt = 0; opt < 2; opt++) {
    static const bg_kopts NO_OPT = {.no_opt = true};
    bg_kernel k;
    OK(bg_kernel_render_nvptx(C, kernel_ast(ki_, &what), opt ? &NO_OPT : NULL, &k));
    char *ptx = NULL;
    int rc = bg_llvm_nvptx_compile(k.src, sm, &ptx);
    CHECK_TEXT(rc == 0, k.src, "%s/%s: %.400s (IR on stderr)", what, sm, bg_last_error());
    if (dump()) printf("---- %s %s\n%s", what, sm, ptx);
    if (g_ptxas[0]) {
      char log[4096];
      rc = run_ptxas(ptx, sm, k.name, log, sizeof log);
      CHECK_TEXT(rc == 0, ptx, "%s/%s: %s -arch=%s exited %d: %.400s (PTX on stderr)", what, sm, g_ptxas, sm, rc, log);
    }
    check_ptx(&k, what, sm, ptx);
    free(ptx);
    bg_kernel_free(&k);
  }
}
END_TEST

/* bg_kernel_compile_nvptx (bg_kernel_build's path for an "sm_XY" device): the checked PTX of each
 * kernel, and a clear error for a processor that is not NVIDIA's. */
START_TEST(kernel_compile_nvptx) {
  const char *what;
  bg_kernel k;
  char *ptx = NULL;
  OK(bg_kernel_compile_nvptx(C, kernel_ast(_i, &what), NULL, "sm_90", &k, &ptx));
  check_ptx(&k, what, "sm_90", ptx);
  free(ptx);
  bg_kernel_free(&k);
  ptx = (char *)1;
  FAILS(bg_kernel_compile_nvptx(C, kernel_ast(_i, &what), NULL, "gfx1100", &k, &ptx), BG_EINVAL, "'gfx1100'");
  ck_assert_ptr_null(ptx);
}
END_TEST

/* An unknown processor is an error naming it and the known ones; bad IR is LLVM's message. */
START_TEST(llvm_errors) {
  char *ptx = (char *)1;
  FAILS(bg_llvm_nvptx_compile("define ptx_kernel void @f() {\n ret void\n}\n", "sm_75", &ptx), BG_EINVAL, "'sm_75'");
  ck_assert_ptr_null(ptx);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "sm_80 sm_86 sm_89 sm_90"));
  FAILS(bg_llvm_nvptx_compile("define ptx_kernel void @f() {\n ret void\n}\n", "gfx1100", &ptx), BG_EINVAL, "'gfx1100'");
  FAILS(bg_llvm_nvptx_compile("define void @f( {", "sm_90", &ptx), BG_ECOMPILE, "parse");
  ck_assert_ptr_null(ptx);
  ck_assert(bg_nvptx_features("sm_90") && !strcmp(bg_nvptx_features("sm_90"), "+ptx78"));
  ck_assert_ptr_null(bg_nvptx_features("sm_91"));
  unsigned known = 0;
  for (unsigned i = 0; i < NSMS; i++) known += bg_llvm_nvptx_knows(SMS[i]);
  ck_assert_uint_ge(known, 4);   /* sm_80..sm_90 are in every LLVM baregpu builds with */
}
END_TEST
#endif

int main(void) {
  Suite *s = suite_create("nvptx");
  TCase *tc = tcase_create("codegen");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, render_ir, 0, NKERNELS);
  tcase_add_test(tc, f64_math_refused);
#if BG_HAVE_LLVM
  find_ptxas();
  if (g_ptxas[0]) printf("nvptx: assembling every PTX with %s\n", g_ptxas);
  else printf("nvptx: ptxas check skipped: %s\n", g_ptxas_why);
  tcase_add_loop_test(tc, compile_ptx, 0, NKERNELS * NSMS);
  tcase_add_test(tc, llvm_errors);
  tcase_add_loop_test(tc, kernel_compile_nvptx, 0, NKERNELS);
#else
  printf("nvptx: PTX compile and ptxas check skipped: built without LLVM (install llvm-22-dev)\n");
#endif
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
