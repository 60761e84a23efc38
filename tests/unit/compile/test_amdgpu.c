/* tests/unit/compile/test_amdgpu.c: AMD GPU code generation without a device: tiny-suite style
 * kernel ASTs (elementwise add, reduces, matmul, casts, float16, threefry, gated loads, math,
 * symbolic sizes) rendered to LLVM IR, compiled for gfx1100, gfx1201, gfx942 (and gfx950 when the
 * linked LLVM knows it), loaded with the code-object loader, and the kernel descriptor / metadata
 * checked against what the renderer produced (kernarg bytes, work-group size, wave size, launch
 * dims covering the output). The text is disassembled with llvm-objdump-22/-19 when installed, and
 * linked with ld.lld-22/-19 into an ET_DYN object that must load alike. The IR's semantics are
 * checked on the host: the same body in the KLLVM_HOST_TEST flavour, run by an LLVM JIT for every
 * work-item of the launch, must produce what the CPU device's C produces (every kernel, both
 * optimization settings, every integer op in 8 widths with edge values). Without LLVM, the IR is
 * still rendered and checked, and the compile must fail with the message naming the package.
 * AMDGPU_DUMP=1 prints every IR. */
#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "bg_config.h"
#include "formats/amdgpu_elf.h"
#include "compile/kernel.h"
#include "compile/krender_llvm.h"
#include "ast_build.h"
#if BG_HAVE_LLVM
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm/Config/llvm-config.h>
#include <math.h>

#include "baregpu/hcq.h"
#include "compile/llvm_amdgpu.h"
#endif

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

static void setup(void) { ck_assert_ptr_nonnull(C = ir_new()); }
static void teardown(void) {
  ir_free(C);
  C = NULL;
}

/* ---------------- the kernels ---------------- */

typedef struct tk {
  const char *what;
  N sink;
  uint64_t out_elems;      /* output elements the launch must cover (0: not checked) */
  bool symbolic;
} tk;

enum { NKERNELS = 12 };

/* Builds kernel i (in the current context). */
static tk kernel_ast(int i) {
  const enum ir_scalar F = IR_DT_FLOAT32, H = IR_DT_FLOAT16, I32 = IR_DT_INT32, U64 = IR_DT_UINT64;
  N o, a, b, r, j, k;
  switch (i) {
  case 0:   /* elementwise add, 16 floats */
    o = buf(0, F), a = buf(1, F), b = buf(2, F), r = out_r(0, 16);
    return (tk){"add", sink1(st(o, r, add(ld(a, r), ld(b, r)))), 16, false};
  case 1:   /* broadcast int add over 3 x 4 */
    o = buf(0, I32), a = buf(1, I32), b = buf(2, I32), r = out_r(0, 3), j = out_r(1, 4);
    return (tk){"add_broadcast_i32", sink1(st(o, add(mul(r, ki(4)), j), add(ld(a, add(mul(r, ki(4)), j)), ld(b, j)))), 12,
                false};
  case 2:   /* sum of 256 */
    o = buf(0, F), a = buf(1, F), r = red_r(0, 256);
    return (tk){"sum256", sink1(st(o, ki(0), reduce(IR_ADD, ld(a, r), r, NULL))), 1, false};
  case 3:   /* 2x2 max reduce over axis 1 */
    o = buf(0, F), a = buf(1, F), r = out_r(0, 2), j = red_r(1, 2);
    return (tk){"max_2_2", sink1(st(o, r, reduce(IR_MAX, ld(a, add(mul(r, ki(2)), j)), j, NULL))), 2, false};
  case 4:   /* matmul 64^3 */
    o = buf(0, F), a = buf(1, F), b = buf(2, F), r = out_r(0, 64), j = out_r(1, 64), k = red_r(2, 64);
    return (tk){"matmul64",
                sink1(st(o, add(mul(r, ki(64)), j),
                         reduce(IR_ADD, mul(ld(a, add(mul(r, ki(64)), k)), ld(b, add(mul(k, ki(64)), j))), k, NULL))),
                64 * 64, false};
  case 5: {   /* casts: float -> int32, int32 -> float, -> bool -> float, -> uint64 */
    N ob = buf(0, I32), of = buf(1, F), obool = buf(2, IR_DT_BOOL), ou = buf(3, U64), af = buf(4, F), ai = buf(5, I32);
    r = out_r(0, 8);
    N st4[4] = {st(ob, r, ir_cast(C, I32, ld(af, r))), st(of, r, add(ir_cast(C, F, ld(ai, r)), ir_cast(C, F, ld(obool, r)))),
                st(obool, r, ir_cast(C, IR_DT_BOOL, ld(af, r))), st(ou, r, ir_cast(C, U64, ld(ai, r)))};
    return (tk){"casts", sinkv(4, st4), 8, false};
  }
  case 6: {   /* float16: out = half(float(a) * 2 + 1) */
    o = buf(0, H), a = buf(1, H), r = out_r(0, 32);
    N v = ir_cast(C, H, add(mul(ir_cast(C, F, ld(a, r)), kf(2)), kf(1)));
    return (tk){"half", sink1(st(o, r, v)), 32, false};
  }
  case 7:   /* threefry */
    o = buf(0, U64), a = buf(1, U64), b = buf(2, U64), r = out_r(0, 8);
    return (tk){"threefry", sink1(st(o, r, ir_alu2(C, IR_THREEFRY, ld(a, r), ld(b, r)))), 8, false};
  case 8:   /* gated load: pad 8 -> 16 with zeros */
    o = buf(0, F), a = buf(1, F), r = out_r(0, 16);
    return (tk){"gated", sink1(st(o, r, ldg(a, r, lt(r, ki(8))))), 16, false};
  case 9: {   /* math: exp2, log2, sin, sqrt */
    o = buf(0, F), a = buf(1, F), r = out_r(0, 64);
    N x = ld(a, r);
    N v = add(add(ir_alu1(C, IR_EXP2, x), ir_alu1(C, IR_LOG2, x)), add(ir_alu1(C, IR_SIN, x), ir_alu1(C, IR_SQRT, x)));
    return (tk){"math", sink1(st(o, r, v)), 64, false};
  }
  case 10: {   /* symbolic size: out[i] = a[i] + off for i < n */
    N n = ir_var(C, IDX, "n", 1, 64), off = ir_var(C, I32, "off", 0, 16);
    o = buf(0, I32), a = buf(1, I32), r = rng(0, 0, n);
    return (tk){"symbolic", sink1(st(o, r, add(ld(a, r), off))), 0, true};
  }
  default:   /* big elementwise: 3 axes, more threads than one work-group holds */
    o = buf(0, F), a = buf(1, F), r = out_r(0, 8), j = out_r(1, 30), k = out_r(2, 1024);
    N flat = add(add(mul(r, ki(30 * 1024)), mul(j, ki(1024))), k);
    return (tk){"big3d", sink1(st(o, flat, mul(ld(a, flat), kf(3)))), 8 * 30 * 1024, false};
  }
}

static const enum ir_op INT_OPS[] = {IR_ADD, IR_SUB, IR_MUL, IR_IDIV, IR_MOD, IR_MAX, IR_CMPLT,
                                     IR_CMPNE, IR_CMPEQ, IR_AND, IR_OR, IR_XOR, IR_SHL, IR_SHR};
enum { NOPS = sizeof INT_OPS / sizeof *INT_OPS, INT_OPS_A = NOPS + 1, INT_OPS_B = NOPS + 2, INT_OPS_D = NOPS + 3 };

/* out_o[i] = a[i] op b[i] (divisors from d) for every op, plus where(a < b, -a, a * b + a). */
static N int_ops_kernel(enum ir_scalar sc) {
  N a = buf(INT_OPS_A, sc), b = buf(INT_OPS_B, sc), d = buf(INT_OPS_D, sc), i = out_r(0, 512);
  N stores[NOPS + 1];
  for (int o = 0; o < NOPS; o++) {
    enum ir_op op = INT_OPS[o];
    bool cmp = op == IR_CMPLT || op == IR_CMPNE || op == IR_CMPEQ;
    stores[o] = st(buf(o, cmp ? IR_DT_BOOL : sc), i, ir_alu2(C, op, ld(a, i), ld(op == IR_IDIV || op == IR_MOD ? d : b, i)));
  }
  N neg = ir_alu1(C, IR_NEG, ld(a, i));
  stores[NOPS] = st(buf(NOPS, sc), i, ir_alu3(C, IR_WHERE, lt(ld(a, i), ld(b, i)), neg, ir_alu3(C, IR_MULACC, ld(a, i), ld(b, i), ld(a, i))));
  return sinkv(NOPS + 1, stores);
}

static bool dump(void) {
  const char *e = getenv("AMDGPU_DUMP");
  return e && *e && *e != '0';
}

/* ---------------- rendering (no LLVM needed) ---------------- */

START_TEST(render_ir) {
  static const bg_kopts NO_OPT = {.no_opt = true};
  for (int opt = 0; opt < 2; opt++) {
    tk t = kernel_ast(_i);
    bg_kernel k;
    OK(bg_kernel_render_amdgpu(C, t.sink, opt ? &NO_OPT : NULL, &k));
    if (dump()) printf("---- %s (%s)\n%s", k.name, t.what, k.src);
    ck_assert_ptr_nonnull(strstr(k.src, "define amdgpu_kernel void @"));
    ck_assert_ptr_nonnull(strstr(k.src, k.name));
    ck_assert_ptr_nonnull(strstr(k.src, "ptr addrspace(1) noalias align 16 %data0"));
    uint32_t threads = k.lsz[0] * k.lsz[1] * k.lsz[2];
    ck_assert_uint_ge(threads, 1);
    ck_assert_uint_le(threads, KLLVM_MAX_LOCAL);
    char attr[64];
    snprintf(attr, sizeof attr, "\"amdgpu-flat-work-group-size\"=\"1,%u\"", threads);
    ck_assert_msg(strstr(k.src, attr), "%s: no %s in\n%s", t.what, attr, k.src);
    char reqd[64];
    snprintf(reqd, sizeof reqd, "!{i32 %u, i32 %u, i32 %u}", k.lsz[0], k.lsz[1], k.lsz[2]);
    ck_assert_msg(strstr(k.src, reqd), "%s: no reqd_work_group_size %s", t.what, reqd);
    /* the grid covers the output exactly: no thread without work, none missing (upcast copies
     * per thread divide it) */
    uint64_t cover = (uint64_t)k.gsz[0] * k.gsz[1] * k.gsz[2] * threads / (k.opts.group > 1 ? k.opts.group : 1);
    if (t.out_elems) ck_assert_msg(t.out_elems % cover == 0, "%s: %llu threads for %llu outputs", t.what,
                                   (unsigned long long)cover, (unsigned long long)t.out_elems);
    if (t.symbolic) ck_assert_ptr_nonnull(strstr(k.src, "phi i32 [ 0, %entry ]"));   /* stays a loop */
    for (unsigned v = 0; v < k.nvars; v++) {
      char p[32];
      snprintf(p, sizeof p, "i32 %%var%u", v);
      ck_assert_ptr_nonnull(strstr(k.src, p));
    }
    bg_kernel_free(&k);
  }
}
END_TEST

static const enum ir_scalar INT_TYPES[] = {IR_DT_INT8, IR_DT_UINT8, IR_DT_INT16, IR_DT_UINT16,
                                           IR_DT_INT32, IR_DT_UINT32, IR_DT_INT64, IR_DT_UINT64};

/* Integer ops render with the signedness of their type; signed division is guarded against
 * MIN / -1 in every width (LLVM, unlike C, does not promote narrow types). */
START_TEST(render_int_ops) {
  enum ir_scalar sc = INT_TYPES[_i];
  bg_kernel k;
  OK(bg_kernel_render_amdgpu(C, int_ops_kernel(sc), NULL, &k));
  bool sg = ir_scalar_is_signed(sc);
  ck_assert_ptr_nonnull(strstr(k.src, sg ? " sdiv " : " udiv "));
  ck_assert_ptr_nonnull(strstr(k.src, sg ? " srem " : " urem "));
  ck_assert_ptr_nonnull(strstr(k.src, sg ? " ashr " : " lshr "));
  ck_assert_ptr_nonnull(strstr(k.src, sg ? "icmp slt" : "icmp ult"));
  char guard[32];   /* "%vN = icmp eq iW %divisor, -1" */
  snprintf(guard, sizeof guard, "icmp eq i%u ", ir_scalar_size(sc) * 8);
  bool guarded = false;
  for (const char *l = strstr(k.src, guard); l && !guarded; l = strstr(l + 1, guard)) {
    const char *eol = strchr(l, '\n');
    guarded = eol && eol - l > 4 && !strncmp(eol - 4, ", -1", 4);
  }
  ck_assert_msg(guarded == sg, "%s: division guard %s", ir_scalar_name(sc), sg ? "missing" : "present");
  bg_kernel_free(&k);
}
END_TEST

/* The mapping of output axes to the launch grid on known shapes. */
START_TEST(grid_mapping) {
  static const bg_kopts NO_OPT = {.no_opt = true};
  bg_kernel k;
  OK(bg_kernel_render_amdgpu(C, kernel_ast(0).sink, &NO_OPT, &k));   /* 16: one work-group of 16 */
  ck_assert_uint_eq(k.lsz[0], 16);
  ck_assert_uint_eq(k.gsz[0], 1);
  ck_assert_ptr_nonnull(strstr(k.src, "@llvm.amdgcn.workitem.id.x()"));
  ck_assert_ptr_null(strstr(k.src, "workgroup.id"));
  bg_kernel_free(&k);
  OK(bg_kernel_render_amdgpu(C, kernel_ast(11).sink, &NO_OPT, &k));   /* 8 x 30 x 1024 */
  ck_assert_uint_eq(k.lsz[0], 256);   /* innermost 1024 = 4 x 256 threads */
  ck_assert_uint_eq(k.lsz[1] * k.lsz[2], 1);
  ck_assert_uint_eq(k.gsz[0], 4);
  ck_assert_uint_eq(k.gsz[1], 30);
  ck_assert_uint_eq(k.gsz[2], 8);
  ck_assert_ptr_nonnull(strstr(k.src, "@llvm.amdgcn.workgroup.id.z()"));
  bg_kernel_free(&k);
  OK(bg_kernel_render_amdgpu(C, kernel_ast(4).sink, &NO_OPT, &k));   /* matmul 64 x 64 -> 64 threads x 64 x 4 */
  ck_assert_uint_eq(k.lsz[0] * k.lsz[1], 256);
  ck_assert_uint_eq((uint64_t)k.gsz[0] * k.gsz[1] * k.gsz[2] * k.lsz[0] * k.lsz[1], 64 * 64);
  bg_kernel_free(&k);
  OK(bg_kernel_render_amdgpu(C, kernel_ast(2).sink, &NO_OPT, &k));   /* no output axis: one thread */
  ck_assert_uint_eq(k.gsz[0] * k.gsz[1] * k.gsz[2] * k.lsz[0] * k.lsz[1] * k.lsz[2], 1);
  bg_kernel_free(&k);
}
END_TEST

/* ---------------- compile + load ---------------- */

#if BG_HAVE_LLVM

static const char *const MCPUS[] = {"gfx1100", "gfx1201", "gfx942", "gfx950"};

static const char *objdump(void) {
  static const char *const tools[] = {"/usr/bin/llvm-objdump-22", "/usr/bin/llvm-objdump-19"};
  for (size_t i = 0; i < 2; i++)
    if (access(tools[i], X_OK) == 0) return tools[i];
  return NULL;
}

/* Disassembles the code object; every instruction must decode and the kernel must end. When need is
 * given, each of its NULL-terminated mnemonic prefixes must occur. */
static void check_disassembly_has(const char *what, const char *mcpu, const void *elf, size_t n, const char *const *need) {
  const char *tool = objdump();
  if (!tool) return;
  unsigned found = 0;
  char path[] = "/tmp/bg_amdgpu_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, elf, n), (ssize_t)n);
  close(fd);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s -d --mcpu=%s %s 2>&1", tool, mcpu, path);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  char line[512];
  int endpgm = 0, unknown = 0, insts = 0;
  while (fgets(line, sizeof line, p)) {
    if (strstr(line, "s_endpgm")) endpgm++;
    if (strstr(line, "<unknown>") || strstr(line, "error")) unknown++;
    if (strstr(line, "//")) insts++;
    for (unsigned i = 0; need && need[i]; i++)
      if (strstr(line, need[i])) found |= 1u << i;
  }
  int rc = pclose(p);
  unlink(path);
  ck_assert_msg(rc == 0 && endpgm >= 1 && unknown == 0 && insts > 1, "%s (%s): %s: rc %d, %d s_endpgm, %d undecodable", what,
                mcpu, tool, rc, endpgm, unknown);
  for (unsigned i = 0; need && need[i]; i++)
    ck_assert_msg(found & (1u << i), "%s (%s): no %s in the disassembly", what, mcpu, need[i]);
}

static void check_disassembly(const char *what, const char *mcpu, const void *elf, size_t n) {
  check_disassembly_has(what, mcpu, elf, n, NULL);
}

START_TEST(compile_and_load) {
  int kernel = _i / 4, m = _i % 4;
  const char *mcpu = MCPUS[m];
  if (!strcmp(mcpu, "gfx950") && !bg_llvm_amdgpu_knows(mcpu)) {
    printf("skip: LLVM %s does not know gfx950\n", bg_llvm_version());
    return;
  }
  tk t = kernel_ast(kernel);
  bg_kernel k;
  void *elf = NULL;
  size_t n = 0;
  OK(bg_kernel_compile_amdgpu(C, t.sink, NULL, mcpu, &k, &elf, &n));
  bg_amdgpu_image img;
  OK(bg_amdgpu_elf_load(elf, n, k.name, &img));
  uint32_t args = 8 * k.nbufs + 4 * k.nvars, threads = k.lsz[0] * k.lsz[1] * k.lsz[2];
  unsigned wave = bg_amdgpu_wave_size(mcpu);
  ck_assert_str_eq(img.mcpu, mcpu);
  ck_assert_str_eq(img.name, k.name);
  ck_assert_uint_eq(img.kernarg_segment_size, args);
  ck_assert_uint_eq(img.kd.kernarg_size, args);
  ck_assert_uint_eq(img.max_flat_workgroup_size, threads);
  for (int d = 0; d < 3; d++) ck_assert_uint_eq(img.reqd_workgroup_size[d], k.lsz[d]);
  ck_assert_uint_eq(img.wavefront_size, wave);
  ck_assert_uint_eq(!!(img.kd.kernel_code_properties & (1u << 10)), wave == 32);   /* ENABLE_WAVEFRONT_SIZE32 */
  ck_assert_uint_ne(img.kd.kernel_code_properties & (1u << 3), 0);                  /* ENABLE_SGPR_KERNARG_SEGMENT_PTR */
  ck_assert_uint_eq(img.kd.kernel_code_properties & 0x7u, 0);                       /* no dispatch/queue ptr, no scratch buffer */
  ck_assert_uint_eq(img.kd.private_segment_fixed_size, 0);                          /* accumulators promoted to registers */
  if (k.opts.tile > 1)   /* local tiles: two T x T tiles in LDS */
    ck_assert_uint_ge(img.kd.group_segment_fixed_size, 2 * 4 * threads);
  else if (k.opts.group > 1)   /* a work-group reduce: one partial per thread in LDS */
    ck_assert_uint_ge(img.kd.group_segment_fixed_size, 4 * threads);
  else
    ck_assert_uint_eq(img.kd.group_segment_fixed_size, 0);
  for (int d = 0; d < 3; d++)                                                       /* ENABLE_SGPR_WORKGROUP_ID_X/Y/Z */
    if (k.gsz[d] > 1) ck_assert_msg(img.kd.compute_pgm_rsrc2 & (1u << (7 + d)), "%s: work-group id %d not enabled", t.what, d);
  ck_assert_uint_eq(img.code_offset % 256, 0);
  ck_assert_uint_eq(img.code_offset, img.kd_offset + (uint64_t)img.kd.kernel_code_entry_byte_offset);
  ck_assert_uint_gt(img.sgpr_count, 0);
  ck_assert_uint_gt(img.vgpr_count, 0);
  ck_assert_uint_eq(img.size % 4096, 0);
  /* relocating elsewhere keeps the descriptor's entry offset (position independent) */
  bg_amdgpu_kd before = img.kd;
  OK(bg_amdgpu_image_relocate(&img, 0x123456789000ull));
  uint64_t entry = 0;
  for (int b = 7; b >= 0; b--) entry = entry << 8 | img.data[img.kd_offset + 16 + (unsigned)b];
  ck_assert_int_eq((int64_t)entry, before.kernel_code_entry_byte_offset);
  check_disassembly(t.what, mcpu, elf, n);
  bg_amdgpu_image_free(&img);
  free(elf);
  bg_kernel_free(&k);
}
END_TEST

/* A work-group reduce (bg_kopts.group) for every processor: an LDS array and a barrier in the IR, lsz x
 * = the group, a group segment of one partial per thread and no scratch in the code object, LDS
 * stores/loads and s_barrier in the machine code. */
START_TEST(group_reduce_compile) {
  const char *mcpu = MCPUS[_i];
  if (!bg_llvm_amdgpu_knows(mcpu)) return;
  N o = buf(0, IR_DT_FLOAT32), a = buf(1, IR_DT_FLOAT32), r = out_r(0, 4), j = red_r(1, 1024);
  N sink = sink1(st(o, r, reduce(IR_MAX, ld(a, add(mul(r, ki(1024)), j)), j, NULL)));
  bg_kopts opts = {.group = 64, .unroll = 4};
  bg_kernel k;
  void *elf = NULL;
  size_t n = 0;
  OK(bg_kernel_compile_amdgpu(C, sink, &opts, mcpu, &k, &elf, &n));
  if (dump()) printf("---- %s (group 64)\n%s", k.name, k.src);
  ck_assert_uint_eq(k.opts.group, 64);
  ck_assert_uint_eq(k.lsz[0], 64);
  ck_assert_uint_eq(k.lsz[0] * k.lsz[1] * k.lsz[2] * k.gsz[0] * k.gsz[1] * k.gsz[2], 64 * 4);
  ck_assert_ptr_nonnull(strstr(k.src, "internal addrspace(3) global ["));
  ck_assert_ptr_nonnull(strstr(k.src, "fence syncscope(\"workgroup\") release\n  call void @llvm.amdgcn.s.barrier()"));
  ck_assert_ptr_nonnull(strstr(k.src, "br i1 %gl.first"));   /* one thread of the group stores */
  bg_amdgpu_image img;
  OK(bg_amdgpu_elf_load(elf, n, k.name, &img));
  ck_assert_uint_ge(img.kd.group_segment_fixed_size, 4 * 64 * k.lsz[1] * k.lsz[2]);
  ck_assert_uint_eq(img.kd.private_segment_fixed_size, 0);
  ck_assert_uint_eq(img.max_flat_workgroup_size, k.lsz[0] * k.lsz[1] * k.lsz[2]);
  static const char *const need[] = {"s_barrier", "ds_store", "ds_load", NULL};
  static const char *const need9[] = {"s_barrier", "ds_write", "ds_read", NULL};
  check_disassembly_has("group reduce", mcpu, elf, n, strncmp(mcpu, "gfx9", 4) ? need : need9);
  bg_amdgpu_image_free(&img);
  free(elf);
  bg_kernel_free(&k);
}
END_TEST

/* Tensor cores (bg_kopts.tc; compile/ktc.h) for each form: RDNA3 WMMA (gfx1100), RDNA4 WMMA (gfx1200), CDNA3 MFMA
 * (gfx942): the intrinsic in the IR, one wave (32 or 64 lanes) per 16 x 16 tile, the matrix instruction in the machine
 * code, no scratch. Loop index: dtype (float16, bfloat16) x processor. */
static const struct tc_case {
  const char *mcpu, *intr[2], *inst[2];
  unsigned wave;
} tc_cases[] = {
  {"gfx1100", {"@llvm.amdgcn.wmma.f32.16x16x16.f16(<16 x half>", "@llvm.amdgcn.wmma.f32.16x16x16.bf16(<16 x i16>"},
   {"v_wmma_f32_16x16x16_f16", "v_wmma_f32_16x16x16_bf16"}, 32},
  {"gfx1200", {"@llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16(<8 x half>", "@llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v8i16(<8 x i16>"},
   {"v_wmma_f32_16x16x16_f16", "v_wmma_f32_16x16x16_bf16"}, 32},
  {"gfx942", {"@llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>", "@llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16>"},
   {"v_mfma_f32_16x16x16_f16", "v_mfma_f32_16x16x16_bf16"}, 64},
};

static N tc_matmul(enum ir_scalar in) {
  const enum ir_scalar F = IR_DT_FLOAT32;
  N r = out_r(0, 32), c = out_r(1, 48), k = red_r(2, 64);
  N a = ir_cast(C, F, ld(buf(1, in), add(mul(r, ki(64)), k))), b = ir_cast(C, F, ld(buf(2, in), add(mul(k, ki(48)), c)));
  return sink1(st(buf(0, F), add(mul(r, ki(48)), c), reduce(IR_ADD, mul(a, b), k, NULL)));
}

START_TEST(wmma_compile) {
  static const enum ir_scalar in[2] = {IR_DT_FLOAT16, IR_DT_BFLOAT16};
  const struct tc_case *t = &tc_cases[_i / 2];
  int d = _i % 2;
  N sink = tc_matmul(in[d]);
  bg_kopts opts = {.tc = true};
  bg_kernel kk;
  void *elf = NULL;
  size_t n = 0;
  OK(bg_kernel_compile_amdgpu(C, sink, &opts, t->mcpu, &kk, &elf, &n));
  if (dump()) printf("---- %s (tc, %s)\n%s", kk.name, t->mcpu, kk.src);
  ck_assert(kk.opts.tc);
  ck_assert_msg(strstr(kk.src, t->intr[d]), "%s: no %s in\n%s", t->mcpu, t->intr[d], kk.src);
  ck_assert_uint_eq(kk.lsz[0] * kk.lsz[1] * kk.lsz[2], t->wave);
  ck_assert_uint_eq(kk.gsz[0], 48 / 16);
  ck_assert_uint_eq(kk.gsz[1], 32 / 16);
  bg_amdgpu_image img;
  OK(bg_amdgpu_elf_load(elf, n, kk.name, &img));
  ck_assert_uint_eq(img.kd.private_segment_fixed_size, 0);
  const char *const need[] = {t->inst[d], NULL};
  check_disassembly_has("tc", t->mcpu, elf, n, need);
  bg_amdgpu_image_free(&img);
  free(elf);
  bg_kernel_free(&kk);
}
END_TEST

/* A processor without a tensor-core form here (gfx90a: CDNA2, not among the chips; gfx1030: RDNA2 has none) refuses
 * tc with -BG_ENOTSUP naming it, before LLVM would abort on the intrinsic. */
START_TEST(tc_refused) {
  static const char *const cpus[] = {"gfx90a", "gfx1030"};
  bg_kopts opts = {.tc = true};
  bg_kernel kk;
  void *elf = NULL;
  size_t n = 0;
  ck_assert_int_eq(bg_kernel_compile_amdgpu(C, tc_matmul(IR_DT_FLOAT16), &opts, cpus[_i], &kk, &elf, &n), -BG_ENOTSUP);
  ck_assert_msg(strstr(bg_last_error(), cpus[_i]) && strstr(bg_last_error(), "no tensor-core form"), "%s", bg_last_error());
}
END_TEST

/* The default heuristics (no options) use the tensor cores for a float16/bfloat16 matmul that fits on RDNA4 and CDNA3,
 * not on RDNA3 (opt-in there), and not for a float32 matmul. */
START_TEST(tc_by_default) {
  static const char *const cpus[] = {"gfx1100", "gfx1200", "gfx942"};
  static const bool want[] = {false, true, true};
  for (unsigned i = 0; i < 3; i++)
    for (unsigned bf = 0; bf < 2; bf++) {
      bg_kernel kk;
      OK(bg_kernel_render_amdgpu_for(C, tc_matmul(bf ? IR_DT_BFLOAT16 : IR_DT_FLOAT16), NULL, cpus[i], &kk));
      ck_assert_msg(kk.opts.tc == want[i], "%s: tc %d by default", cpus[i], kk.opts.tc);
      bg_kernel_free(&kk);
    }
  const enum ir_scalar F = IR_DT_FLOAT32;
  N r = out_r(0, 32), c = out_r(1, 48), k = red_r(2, 64);
  N f32 = sink1(st(buf(0, F), add(mul(r, ki(48)), c),
                   reduce(IR_ADD, mul(ld(buf(1, F), add(mul(r, ki(64)), k)), ld(buf(2, F), add(mul(k, ki(48)), c))), k, NULL)));
  bg_kernel kk;
  OK(bg_kernel_render_amdgpu_for(C, f32, NULL, "gfx1200", &kk));
  ck_assert(!kk.opts.tc);
  bg_kernel_free(&kk);
}
END_TEST

/* Compiles a sink for mcpu and checks that the object loads without scratch. */
static void compile_only(N sink, const char *mcpu, const char *what) {
  bg_kernel k;
  void *elf = NULL;
  size_t n = 0;
  int rc = bg_kernel_compile_amdgpu(C, sink, NULL, mcpu, &k, &elf, &n);
  ck_assert_msg(rc == 0, "%s (%s): %s", what, mcpu, bg_last_error());
  if (dump()) printf("---- %s (%s)\n%s", k.name, what, k.src);
  bg_amdgpu_image img;
  OK(bg_amdgpu_elf_load(elf, n, k.name, &img));
  ck_assert_uint_eq(img.kd.private_segment_fixed_size, 0);
  bg_amdgpu_image_free(&img);
  free(elf);
  bg_kernel_free(&k);
}


/* Every cast pair and the bit casts between same-size types, float32/float64 arithmetic and math. */
START_TEST(casts_and_floats_compile) {
  static const enum ir_scalar types[] = {IR_DT_BOOL, IR_DT_INT8, IR_DT_UINT16, IR_DT_INT32, IR_DT_UINT32, IR_DT_INT64,
                                         IR_DT_UINT64, IR_DT_FLOAT16, IR_DT_BFLOAT16, IR_DT_FLOAT32, IR_DT_FLOAT64};
  enum { NT = sizeof types / sizeof *types };
  N i = out_r(0, 32);
  for (int f = 0; f < NT; f++) {   /* one kernel per source type: outputs in slots 0..NT-2, the source last */
    N src = buf(NT - 1, types[f]);
    N st_f[NT - 1];
    unsigned m = 0;
    for (int t = 0; t < NT; t++)
      if (f != t) {
        st_f[m] = st(buf((int)m, types[t]), i, ir_cast(C, types[t], ld(src, i)));
        m++;
      }
    char what[64];
    snprintf(what, sizeof what, "casts from %s", ir_scalar_name(types[f]));
    compile_only(sinkv(NT - 1, st_f), "gfx1100", what);
  }
  /* bit casts */
  N f32 = ld(buf(5, IR_DT_FLOAT32), i), h = ld(buf(6, IR_DT_FLOAT16), i), l = ld(buf(7, IR_DT_INT64), i);
  N bc[5] = {st(buf(0, IR_DT_UINT32), i, ir_intern(C, IR_BITCAST, IR_DT_UINT32, (ir_arg){.i = 0}, 1, &f32)),
             st(buf(1, IR_DT_INT16), i, ir_intern(C, IR_BITCAST, IR_DT_INT16, (ir_arg){.i = 0}, 1, &h)),
             st(buf(2, IR_DT_FLOAT64), i, ir_intern(C, IR_BITCAST, IR_DT_FLOAT64, (ir_arg){.i = 0}, 1, &l)),
             st(buf(3, IR_DT_FLOAT32), i, ir_alu1(C, IR_BITCAST, f32)),
             st(buf(4, IR_DT_INT32), i, ir_intern(C, IR_BITCAST, IR_DT_INT32, (ir_arg){.i = 0}, 1, &f32))};
  compile_only(sinkv(5, bc), "gfx1100", "bitcasts");
  /* float arithmetic in both widths */
  for (int w = 0; w < 2; w++) {
    enum ir_scalar fs = w ? IR_DT_FLOAT64 : IR_DT_FLOAT32;
    N x = ld(buf(1, fs), i), y = ld(buf(2, fs), i);
    N v = ir_alu2(C, IR_FDIV, ir_alu2(C, IR_MAX, x, y), ir_alu1(C, IR_RECIP, y));
    v = ir_alu3(C, IR_WHERE, ir_alu2(C, IR_CMPNE, x, y), ir_alu1(C, IR_NEG, v), ir_alu1(C, IR_TRUNC, v));
    v = ir_alu3(C, IR_MULACC, v, x, ir_alu2(C, IR_SUB, x, y));
    if (!w) v = add(v, ir_alu1(C, IR_SIN, ir_alu1(C, IR_EXP2, ir_alu1(C, IR_LOG2, ir_alu1(C, IR_SQRT, v)))));
    else v = add(v, ir_alu1(C, IR_SQRT, v));
    compile_only(sink1(st(buf(0, fs), i, v)), w ? "gfx942" : "gfx1201", ir_scalar_name(fs));
  }
}
END_TEST


/* The same kernel linked by ld.lld into an ET_DYN code object (when lld 22/19 is installed) loads
 * with the same descriptor and metadata as the relocatable object. */
START_TEST(linked_object) {
  static const char *const lld[] = {"/usr/bin/ld.lld-22", "/usr/bin/ld.lld-19"};
  const char *tool = NULL;
  for (size_t i = 0; i < 2 && !tool; i++)
    if (access(lld[i], X_OK) == 0) tool = lld[i];
  if (!tool) {
    printf("skip: no ld.lld-22/-19\n");
    return;
  }
  bg_kernel k;
  void *elf = NULL;
  size_t n = 0;
  OK(bg_kernel_compile_amdgpu(C, kernel_ast(4).sink, NULL, "gfx1100", &k, &elf, &n));
  char in[] = "/tmp/bg_amdgpu_in_XXXXXX", out[64];
  int fd = mkstemp(in);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, elf, n), (ssize_t)n);
  close(fd);
  snprintf(out, sizeof out, "%s.so", in);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s -shared -o %s %s", tool, out, in);
  ck_assert_int_eq(system(cmd), 0);
  FILE *f = fopen(out, "rb");
  ck_assert_ptr_nonnull(f);
  static uint8_t so[1 << 20];
  size_t sn = fread(so, 1, sizeof so, f);
  fclose(f);
  unlink(in);
  unlink(out);
  bg_amdgpu_image rel, dyn;
  OK(bg_amdgpu_elf_load(elf, n, k.name, &rel));
  OK(bg_amdgpu_elf_load(so, sn, k.name, &dyn));
  ck_assert_str_eq(dyn.mcpu, "gfx1100");
  /* every descriptor field but the entry offset (the linker moved the code) */
  ck_assert_uint_eq(dyn.kd.group_segment_fixed_size, rel.kd.group_segment_fixed_size);
  ck_assert_uint_eq(dyn.kd.private_segment_fixed_size, rel.kd.private_segment_fixed_size);
  ck_assert_uint_eq(dyn.kd.kernarg_size, rel.kd.kernarg_size);
  ck_assert_uint_eq(dyn.kd.compute_pgm_rsrc1, rel.kd.compute_pgm_rsrc1);
  ck_assert_uint_eq(dyn.kd.compute_pgm_rsrc2, rel.kd.compute_pgm_rsrc2);
  ck_assert_uint_eq(dyn.kd.compute_pgm_rsrc3, rel.kd.compute_pgm_rsrc3);
  ck_assert_uint_eq(dyn.kd.kernel_code_properties, rel.kd.kernel_code_properties);
  ck_assert_uint_eq(dyn.kd.kernarg_preload, rel.kd.kernarg_preload);
  ck_assert_uint_eq(dyn.code_offset, dyn.kd_offset + (uint64_t)dyn.kd.kernel_code_entry_byte_offset);
  ck_assert_uint_eq(dyn.code_offset % 256, 0);
  ck_assert_uint_eq(dyn.kernarg_segment_size, rel.kernarg_segment_size);
  ck_assert_uint_eq(dyn.max_flat_workgroup_size, rel.max_flat_workgroup_size);
  ck_assert_uint_eq(dyn.vgpr_count, rel.vgpr_count);
  /* the code is the same bytes in both images */
  ck_assert_int_eq(memcmp(rel.data + rel.code_offset, dyn.data + dyn.code_offset, 64), 0);
  OK(bg_amdgpu_image_relocate(&dyn, 0x200000000ull));
  bg_amdgpu_image_free(&rel);
  bg_amdgpu_image_free(&dyn);
  free(elf);
  bg_kernel_free(&k);
}
END_TEST

/* ---------------- the IR's semantics, on the host ----------------
 * The KLLVM_HOST_TEST flavour is the same body with ids as parameters; a host JIT runs it once per
 * (work-group, work-item) of the launch dims and the outputs must equal the CPU device's (the C
 * renderer) on the same inputs: index math, launch-dim mapping, gated loads, accumulators, casts,
 * float16, threefry and math are checked without a GPU. */

enum { HBUF = 1 << 20 };   /* bytes per buffer: the largest test kernel needs 983040 */

typedef void (*host_fn)(const void *args, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t);

static void fill(uint8_t *p, enum ir_scalar sc, uint32_t *seed) {
  size_t es = ir_scalar_size(sc);
  for (size_t i = 0; i + es <= HBUF; i += es) {
    *seed = *seed * 1664525u + 1013904223u;
    uint32_t x = *seed;
    uint64_t v = (uint64_t)x << 32 | (x * 2654435761u);
    switch (sc) {
    case IR_DT_BOOL: v = x >> 31; break;
    case IR_DT_FLOAT16: v = (x & 0x8000u) | ((10u + (x >> 8) % 10u) << 10) | (x >> 20 & 0x3ffu); break;
    case IR_DT_BFLOAT16: v = (x & 0x8000u) | ((120u + (x >> 8) % 10u) << 7) | (x >> 20 & 0x7fu); break;
    case IR_DT_FLOAT32: {
      float f = (float)((int32_t)(x >> 8) - (1 << 23)) / (float)(1 << 21);   /* [-4, 4) */
      memcpy(&v, &f, 4);
      break;
    }
    default: break;
    }
    memcpy(p + i, &v, es);
  }
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static bool same_value(const uint8_t *a, const uint8_t *b, enum ir_scalar sc) {
  size_t es = ir_scalar_size(sc);
  if (!memcmp(a, b, es)) return true;
  if (sc == IR_DT_FLOAT32) {   /* NaN payloads may differ between compilers */
    float x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    return isnan(x) && isnan(y);
  }
  if (sc == IR_DT_FLOAT16) return (get16(a) & 0x7fffu) > 0x7c00u && (get16(b) & 0x7fffu) > 0x7c00u;
  return false;
}

static host_fn jit(LLVMOrcLLJITRef *out_jit, const bg_kernel *k) {
  static int once;
  if (!once++) {
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
  }
  LLVMOrcLLJITRef j;
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&j, NULL);
  ck_assert_msg(!e, "LLJIT: %s", e ? LLVMGetErrorMessage(e) : "");
  LLVMOrcDefinitionGeneratorRef gen;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(j), NULL, NULL);
  ck_assert_msg(!e, "process symbols: %s", e ? LLVMGetErrorMessage(e) : "");
  LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(j), gen);
#if LLVM_VERSION_MAJOR >= 21   /* the thread-safe context takes a context of ours */
  LLVMContextRef ctx = LLVMContextCreate();
#else                           /* LLVM 19: the thread-safe context owns one */
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
#endif
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(k->src, strlen(k->src), k->name);
  LLVMModuleRef mod;
  char *msg = NULL;
  ck_assert_msg(!LLVMParseIRInContext(ctx, mb, &mod, &msg), "%s: %s\n%s", k->name, msg, k->src);
#if LLVM_VERSION_MAJOR >= 21
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContextFromLLVMContext(ctx);
#endif
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
  LLVMOrcDisposeThreadSafeContext(tsc);
  e = LLVMOrcLLJITAddLLVMIRModule(j, LLVMOrcLLJITGetMainJITDylib(j), tsm);
  ck_assert_msg(!e, "add module: %s", e ? LLVMGetErrorMessage(e) : "");
  LLVMOrcExecutorAddress addr = 0;
  e = LLVMOrcLLJITLookup(j, &addr, k->name);
  ck_assert_msg(!e, "%s: %s", k->name, e ? LLVMGetErrorMessage(e) : "");
  *out_jit = j;
  host_fn f;
  memcpy(&f, &addr, sizeof f);
  return f;
}

/* Runs sink on the CPU device and the host-flavour IR on the same inputs (prep may adjust each
 * input buffer after the random fill) and compares every buffer. */
typedef void (*prep_fn)(unsigned slot, enum ir_scalar sc, uint8_t *p);

static void host_compare(N sink, const bg_kopts *opts, const char *what, prep_fn prep) {
  /* the buffers: slot -> dtype, from the AST */
  const ir_node *const *topo;
  size_t nn = ir_toposort(C, sink, &topo);
  enum ir_scalar dts[32];
  unsigned nb = 0;
  for (size_t x = 0; x < nn; x++)
    if (topo[x]->op == IR_DEFINE_GLOBAL) {
      unsigned slot = (unsigned)topo[x]->arg.i;
      ck_assert_uint_lt(slot, 32);
      dts[slot] = IR_DT_SCALAR(topo[x]->dt);
      if (slot + 1 > nb) nb = slot + 1;
    }
  bg_dev *cpu;
  OK(bg_dev_open("CPU", &cpu));
  bg_kernel kc, kh;
  bg_program *prg;
  OK(bg_kernel_build(cpu, C, sink, opts, &kc, &prg));
  OK(bg_kernel_render_llvm_host(C, sink, opts, &kh));
  if (dump()) printf("---- %s host flavour\n%s", kh.name, kh.src);
  ck_assert_str_eq(kc.name, kh.name);
  uint64_t vars[16];
  for (unsigned v = 0; v < kh.nvars; v++) vars[v] = strcmp(ir_var_get(kh.vars[v])->name, "n") ? 5 : 37;
  uint8_t *in[32], *out[32];
  bg_buf *bufs[32];
  uint32_t seed = 1234u + (uint32_t)strlen(what);
  uint8_t args[32 * 8 + 16 * 4];
  for (unsigned b = 0; b < nb; b++) {
    in[b] = malloc(HBUF);
    out[b] = malloc(HBUF);
    fill(in[b], dts[b], &seed);
    if (prep) prep(b, dts[b], in[b]);
    OK(bg_buf_alloc(cpu, HBUF, 0, &bufs[b]));
    OK(bg_buf_write(bufs[b], 0, in[b], HBUF));
    uint64_t a = (uint64_t)(uintptr_t)in[b];
    memcpy(args + 8 * b, &a, 8);
  }
  for (unsigned v = 0; v < kh.nvars; v++) {
    int32_t x = (int32_t)vars[v];
    memcpy(args + 8 * nb + 4 * v, &x, 4);
  }
  OK(bg_program_run(prg, bufs, nb, vars, kh.nvars, kc.gsz, kc.lsz, true, NULL));
  LLVMOrcLLJITRef j;
  host_fn f = jit(&j, &kh);
  for (uint32_t gz = 0; gz < kh.gsz[2]; gz++)
    for (uint32_t gy = 0; gy < kh.gsz[1]; gy++)
      for (uint32_t gx = 0; gx < kh.gsz[0]; gx++)
        for (uint32_t lz = 0; lz < kh.lsz[2]; lz++)
          for (uint32_t ly = 0; ly < kh.lsz[1]; ly++)
            for (uint32_t lx = 0; lx < kh.lsz[0]; lx++) f(args, gx, gy, gz, lx, ly, lz);
  for (unsigned b = 0; b < nb; b++) {
    OK(bg_buf_read(bufs[b], 0, out[b], HBUF));
    size_t es = ir_scalar_size(dts[b]), x = 0;   /* one check assertion per buffer: each one costs a pipe write */
    while (x + es <= HBUF && same_value(out[b] + x, in[b] + x, dts[b])) x += es;
    ck_assert_msg(x + es > HBUF, "%s (%s, %s): buffer %u element %zu differs: C %02x.., LLVM %02x..", what, kh.name,
                  opts ? "no_opt" : "heuristics", b, x / es, out[b][x], in[b][x]);
    free(in[b]);
    free(out[b]);
    bg_buf_free(bufs[b]);
  }
  LLVMOrcDisposeLLJIT(j);
  bg_program_free(prg);
  bg_kernel_free(&kc);
  bg_kernel_free(&kh);
  bg_dev_close(cpu);
}

START_TEST(host_semantics) {
  static const bg_kopts NO_OPT = {.no_opt = true};
  tk t = kernel_ast(_i / 2);
  host_compare(t.sink, _i % 2 ? &NO_OPT : NULL, t.what, NULL);
}
END_TEST

/* Edge values in the first elements of every integer input (all pairs of a small set, as
 * test_kernel's ir_eval comparison); divisors (slot NOPS + 3) never 0. */
static void int_edges(unsigned slot, enum ir_scalar sc, uint8_t *p) {
  static const int64_t vals[] = {0, 1, -1, 2, 7, -7, 31, 32, 33, 63, 64, -128, 127, 255, INT32_MIN, INT32_MAX, INT64_MIN, INT64_MAX};
  enum { NV = sizeof vals / sizeof *vals };
  size_t es = ir_scalar_size(sc);
  for (int x = 0; x < NV; x++)
    for (int y = 0; y < NV; y++) {
      int64_t v = slot == INT_OPS_A ? vals[x] : vals[y];
      memcpy(p + (size_t)(x * NV + y) * es, &v, es);
    }
  if (slot == INT_OPS_D)
    for (size_t i = 0; i + es <= HBUF; i += es) {
      uint64_t v = 0;
      memcpy(&v, p + i, es);
      if (!v) p[i] = 1;
    }
}

/* Every integer op (wrapping arithmetic, guarded division, shifts by variable amounts, compares)
 * in every integer width: the IR verifies and compiles for RDNA and CDNA, and on the host it
 * computes what the C renderer computes, edge values included (MIN / -1, shifts >= width). */
START_TEST(integer_ops_compile) {
  N sink = int_ops_kernel(INT_TYPES[_i]);
  compile_only(sink, "gfx1100", ir_scalar_name(INT_TYPES[_i]));
  compile_only(sink, "gfx942", ir_scalar_name(INT_TYPES[_i]));
  host_compare(sink, NULL, ir_scalar_name(INT_TYPES[_i]), int_edges);
}
END_TEST

/* A second compile of the same IR comes from the cache, byte for byte. */
START_TEST(cache_hit) {
  bg_kernel k1, k2;
  void *e1, *e2;
  size_t n1, n2;
  OK(bg_kernel_compile_amdgpu(C, kernel_ast(0).sink, NULL, "gfx1100", &k1, &e1, &n1));
  OK(bg_kernel_compile_amdgpu(C, kernel_ast(0).sink, NULL, "gfx1100", &k2, &e2, &n2));
  ck_assert_uint_eq(n1, n2);
  ck_assert_int_eq(memcmp(e1, e2, n1), 0);
  free(e1);
  free(e2);
  bg_kernel_free(&k1);
  bg_kernel_free(&k2);
}
END_TEST

/* LLVM's diagnostics come back as -BG_ECOMPILE, never an exit. */
START_TEST(llvm_errors) {
  void *obj = NULL;
  size_t n = 0;
  ck_assert_int_eq(bg_llvm_amdgpu_compile("define amdgpu_kernel void @x( {", "gfx1100", &obj, &n), -BG_ECOMPILE);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "parse"));
  ck_assert_int_eq(bg_llvm_amdgpu_compile("define amdgpu_kernel void @x() {\nentry:\n  ret i32 0\n}\n", "gfx1100", &obj, &n),
                   -BG_ECOMPILE);
  ck_assert_int_eq(bg_llvm_amdgpu_compile("define amdgpu_kernel void @x() {\n  ret void\n}\n", "banana", &obj, &n), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "banana"));
  ck_assert_int_eq(bg_llvm_amdgpu_compile("define amdgpu_kernel void @x() {\n  ret void\n}\n", "gfx9999", &obj, &n),
                   -BG_ENOTSUP);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "does not know processor gfx9999"));
  ck_assert_ptr_null(obj);
  ck_assert_str_eq(bg_amdgpu_features("gfx1100"), "+wavefrontsize32");
  ck_assert_str_eq(bg_amdgpu_features("gfx942"), "+wavefrontsize64");
  ck_assert_str_eq(bg_amdgpu_features("gfx90a"), "+wavefrontsize64");
}
END_TEST

#else

START_TEST(no_llvm_message) {
  bg_kernel k;
  void *elf = NULL;
  size_t n = 0;
  ck_assert_int_eq(bg_kernel_compile_amdgpu(C, kernel_ast(0).sink, NULL, "gfx1100", &k, &elf, &n), -BG_ENOTSUP);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "install llvm-22-dev"));
  ck_assert_ptr_null(elf);
}
END_TEST

#endif

START_TEST(bad_mcpu) {
  bg_kernel k;
  void *elf = NULL;
  size_t n = 0;
  ck_assert_int_eq(bg_kernel_compile_amdgpu(C, kernel_ast(0).sink, NULL, "host", &k, &elf, &n), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "host"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("amdgpu");
  TCase *tc = tcase_create("codegen");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, render_ir, 0, NKERNELS);
  tcase_add_test(tc, grid_mapping);
  tcase_add_loop_test(tc, render_int_ops, 0, 8);
  tcase_add_test(tc, bad_mcpu);
#if BG_HAVE_LLVM
  tcase_add_loop_test(tc, compile_and_load, 0, NKERNELS * 4);
  tcase_add_loop_test(tc, integer_ops_compile, 0, 8);
  tcase_add_loop_test(tc, group_reduce_compile, 0, 4);
  tcase_add_loop_test(tc, wmma_compile, 0, 6);
  tcase_add_loop_test(tc, tc_refused, 0, 2);
  tcase_add_test(tc, tc_by_default);
  tcase_add_test(tc, casts_and_floats_compile);
  tcase_add_test(tc, linked_object);
  tcase_add_loop_test(tc, host_semantics, 0, NKERNELS * 2);
  tcase_add_test(tc, cache_hit);
  tcase_add_test(tc, llvm_errors);
#else
  tcase_add_test(tc, no_llvm_message);
#endif
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
