/* tests/conformance/cf_kernels.c: the suite's two kernels for every device arch.
 *
 * add1(out f32*, in f32*, n i32): out[i] = in[i] + 1 for i = gid.x * lsz.x + lid.x < n
 * count(out i32*): out[0] += 1 per work-item; work-group (0,0,0) writes gsz to out[1..3], lsz to out[4..6]
 *
 * Both read the launch's local size (and count the grid) at run time, because the tests change grid and
 * local size through queue variables between submits; a kernel AST (bg_kernel_build) fixes its launch
 * dims when it is compiled, so it cannot express them. Arch "host": C through bg_compile_c. A GPU arch
 * ("gfx*"): LLVM IR compiled for it through the library's LLVM-C path (compile/llvm_amdgpu.h, as
 * tests/bench does); the local and grid sizes come from the HSA dispatch packet (llvm.amdgcn.dispatch.ptr:
 * workgroup_size_x/y/z u16 at +4, grid_size_x/y/z u32 at +12, in work-items). An NVIDIA arch ("sm_XY"):
 * PTX text, one module per kernel, loaded as text (the NV backend makes the cubin: ptxas/nvJitLink, or the
 * emulated GPU's assembler); the sizes are the special registers %ntid (threads per CTA) and %nctaid (CTAs),
 * which the hardware fills from the launch's QMD. No LLVM needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/compile.h"
#include "bg_config.h"
#include "conformance.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"
#endif

/* CPU kernels (baregpu/compile.h ABI): called once per work-group; each loops over its locals. */
static const char cpu_kernels_src[] =
  "#include <stdint.h>\n"
  "void cf_add1(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]);\n"
  "void cf_count(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]);\n"
  "void cf_add1(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  float *out; const float *in; int32_t n;\n"
  "  const unsigned char *p = ka;\n"
  "  __builtin_memcpy(&out, p, 8); __builtin_memcpy(&in, p + 8, 8); __builtin_memcpy(&n, p + 16, 4);\n"
  "  (void)gsz;\n"
  "  for (uint32_t l = 0; l < lsz[0]; l++) {\n"
  "    int64_t i = (int64_t)gid[0] * lsz[0] + l;\n"
  "    if (i < n) out[i] = in[i] + 1.0f;\n"
  "  }\n"
  "}\n"
  "void cf_count(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  int32_t *out;\n"
  "  __builtin_memcpy(&out, ka, 8);\n"
  "  for (uint32_t z = 0; z < lsz[2]; z++)\n"
  "    for (uint32_t y = 0; y < lsz[1]; y++)\n"
  "      for (uint32_t x = 0; x < lsz[0]; x++) __atomic_fetch_add(&out[0], 1, __ATOMIC_RELAXED);\n"
  "  if (gid[0] == 0 && gid[1] == 0 && gid[2] == 0)\n"
  "    for (int k = 0; k < 3; k++) { out[1 + k] = (int32_t)gsz[k]; out[4 + k] = (int32_t)lsz[k]; }\n"
  "}\n";

#if BG_HAVE_LLVM
/* The same two kernels for amdgcn-amd-amdhsa. No hidden arguments: the kernarg segment is exactly the
 * arguments, as bg_program's C-like layout puts them (8, 8, 4 bytes). */
static const char gpu_kernels_ir[] =
  "declare i32 @llvm.amdgcn.workitem.id.x()\n"
  "declare i32 @llvm.amdgcn.workgroup.id.x()\n"
  "declare i32 @llvm.amdgcn.workgroup.id.y()\n"
  "declare i32 @llvm.amdgcn.workgroup.id.z()\n"
  "declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()\n"
  "\n"
  "define amdgpu_kernel void @cf_add1(ptr addrspace(1) %out, ptr addrspace(1) %in, i32 %n) #0 {\n"
  "entry:\n"
  "  %dp = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()\n"
  "  %plx = getelementptr i8, ptr addrspace(4) %dp, i64 4\n"
  "  %lx16 = load i16, ptr addrspace(4) %plx, align 4\n"
  "  %lx = zext i16 %lx16 to i64\n"
  "  %g32 = call i32 @llvm.amdgcn.workgroup.id.x()\n"
  "  %l32 = call i32 @llvm.amdgcn.workitem.id.x()\n"
  "  %g = zext i32 %g32 to i64\n"
  "  %l = zext i32 %l32 to i64\n"
  "  %gl = mul i64 %g, %lx\n"
  "  %i = add i64 %gl, %l\n"
  "  %n64 = sext i32 %n to i64\n"
  "  %ok = icmp slt i64 %i, %n64\n"
  "  br i1 %ok, label %body, label %done\n"
  "body:\n"
  "  %pi = getelementptr float, ptr addrspace(1) %in, i64 %i\n"
  "  %v = load float, ptr addrspace(1) %pi, align 4\n"
  "  %r = fadd float %v, 1.0\n"
  "  %po = getelementptr float, ptr addrspace(1) %out, i64 %i\n"
  "  store float %r, ptr addrspace(1) %po, align 4\n"
  "  br label %done\n"
  "done:\n"
  "  ret void\n"
  "}\n"
  "\n"
  "define amdgpu_kernel void @cf_count(ptr addrspace(1) %out) #0 {\n"
  "entry:\n"
  "  %old = atomicrmw add ptr addrspace(1) %out, i32 1 monotonic, align 4\n"
  "  %gx = call i32 @llvm.amdgcn.workgroup.id.x()\n"
  "  %gy = call i32 @llvm.amdgcn.workgroup.id.y()\n"
  "  %gz = call i32 @llvm.amdgcn.workgroup.id.z()\n"
  "  %gxy = or i32 %gx, %gy\n"
  "  %gxyz = or i32 %gxy, %gz\n"
  "  %first = icmp eq i32 %gxyz, 0\n"
  "  br i1 %first, label %dims, label %done\n"
  "dims:\n"
  "  %dp = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()\n"
  "  br label %loop\n"
  "loop:\n"
  "  %k = phi i64 [ 0, %dims ], [ %k1, %loop ]\n"
  "  %lo = mul i64 %k, 2\n"
  "  %plo = add i64 %lo, 4\n"
  "  %pl = getelementptr i8, ptr addrspace(4) %dp, i64 %plo\n"
  "  %l16 = load i16, ptr addrspace(4) %pl, align 2\n"
  "  %lsz = zext i16 %l16 to i32\n"
  "  %go = mul i64 %k, 4\n"
  "  %pgo = add i64 %go, 12\n"
  "  %pg = getelementptr i8, ptr addrspace(4) %dp, i64 %pgo\n"
  "  %grid = load i32, ptr addrspace(4) %pg, align 4\n"
  "  %gsz = udiv i32 %grid, %lsz\n"
  "  %og = add i64 %k, 1\n"
  "  %pog = getelementptr i32, ptr addrspace(1) %out, i64 %og\n"
  "  store i32 %gsz, ptr addrspace(1) %pog, align 4\n"
  "  %ol = add i64 %k, 4\n"
  "  %pol = getelementptr i32, ptr addrspace(1) %out, i64 %ol\n"
  "  store i32 %lsz, ptr addrspace(1) %pol, align 4\n"
  "  %k1 = add i64 %k, 1\n"
  "  %more = icmp ult i64 %k1, 3\n"
  "  br i1 %more, label %loop, label %done\n"
  "done:\n"
  "  ret void\n"
  "}\n"
  "\n"
  "attributes #0 = { nounwind \"amdgpu-no-implicitarg-ptr\" \"amdgpu-no-queue-ptr\" \"amdgpu-no-dispatch-id\" "
  "\"amdgpu-no-hostcall-ptr\" \"amdgpu-no-heap-ptr\" \"amdgpu-no-multigrid-sync-arg\" \"amdgpu-no-default-queue\" "
  "\"amdgpu-no-completion-action\" \"amdgpu-no-lds-kernel-id\" }\n";
#endif

/* The same two kernels in PTX (PTX ISA: "Special Registers" %tid/%ntid/%ctaid/%nctaid; "Parallel
 * Synchronization and Communication Instructions: red"), written to the subset LLVM's NVPTX backend emits, which
 * the emulated GPU's interpreter runs (tests/mockgpu/ptx/README.md). The header (.version for the sm, .target) is
 * written per arch by nv_module. */
static const char ptx_add1_body[] =
  ".visible .entry cf_add1(\n"
  "\t.param .u64 .ptr .global .align 4 cf_add1_param_0,\n"
  "\t.param .u64 .ptr .global .align 4 cf_add1_param_1,\n"
  "\t.param .u32 cf_add1_param_2\n"
  ")\n"
  "{\n"
  "\t.reg .pred %p<2>;\n"
  "\t.reg .b32 %r<8>;\n"
  "\t.reg .b64 %rd<12>;\n"
  "\n"
  "\tld.param.u64 %rd1, [cf_add1_param_0];\n"
  "\tld.param.u64 %rd2, [cf_add1_param_1];\n"
  "\tld.param.u32 %r1, [cf_add1_param_2];\n"
  "\tmov.u32 %r2, %ctaid.x;\n"
  "\tmov.u32 %r3, %ntid.x;\n"
  "\tmov.u32 %r4, %tid.x;\n"
  "\tmul.wide.u32 %rd3, %r2, %r3;\n"
  "\tcvt.u64.u32 %rd4, %r4;\n"
  "\tadd.s64 %rd5, %rd3, %rd4;\n"
  "\tcvt.s64.s32 %rd6, %r1;\n"
  "\tsetp.ge.s64 %p1, %rd5, %rd6;\n"
  "\t@%p1 bra $L__done;\n"
  "\tcvta.to.global.u64 %rd7, %rd1;\n"
  "\tcvta.to.global.u64 %rd8, %rd2;\n"
  "\tshl.b64 %rd9, %rd5, 2;\n"
  "\tadd.s64 %rd10, %rd8, %rd9;\n"
  "\tld.global.b32 %r5, [%rd10];\n"
  "\tadd.f32 %r6, %r5, 0f3F800000;\n"
  "\tadd.s64 %rd11, %rd7, %rd9;\n"
  "\tst.global.b32 [%rd11], %r6;\n"
  "$L__done:\n"
  "\tret;\n"
  "}\n";

static const char ptx_count_body[] =
  ".visible .entry cf_count(\n"
  "\t.param .u64 .ptr .global .align 4 cf_count_param_0\n"
  ")\n"
  "{\n"
  "\t.reg .pred %p<2>;\n"
  "\t.reg .b32 %r<16>;\n"
  "\t.reg .b64 %rd<3>;\n"
  "\n"
  "\tld.param.u64 %rd1, [cf_count_param_0];\n"
  "\tcvta.to.global.u64 %rd2, %rd1;\n"
  "\tred.global.add.u32 [%rd2], 1;\n"
  "\tmov.u32 %r1, %ctaid.x;\n"
  "\tmov.u32 %r2, %ctaid.y;\n"
  "\tmov.u32 %r3, %ctaid.z;\n"
  "\tmov.u32 %r4, %tid.x;\n"
  "\tmov.u32 %r5, %tid.y;\n"
  "\tmov.u32 %r6, %tid.z;\n"
  "\tor.b32 %r7, %r1, %r2;\n"
  "\tor.b32 %r7, %r7, %r3;\n"
  "\tor.b32 %r7, %r7, %r4;\n"
  "\tor.b32 %r7, %r7, %r5;\n"
  "\tor.b32 %r7, %r7, %r6;\n"
  "\tsetp.ne.s32 %p1, %r7, 0;\n"
  "\t@%p1 bra $L__done;\n"
  "\tmov.u32 %r8, %nctaid.x;\n"
  "\tmov.u32 %r9, %nctaid.y;\n"
  "\tmov.u32 %r10, %nctaid.z;\n"
  "\tmov.u32 %r11, %ntid.x;\n"
  "\tmov.u32 %r12, %ntid.y;\n"
  "\tmov.u32 %r13, %ntid.z;\n"
  "\tst.global.u32 [%rd2+4], %r8;\n"
  "\tst.global.u32 [%rd2+8], %r9;\n"
  "\tst.global.u32 [%rd2+12], %r10;\n"
  "\tst.global.u32 [%rd2+16], %r11;\n"
  "\tst.global.u32 [%rd2+20], %r12;\n"
  "\tst.global.u32 [%rd2+24], %r13;\n"
  "$L__done:\n"
  "\tret;\n"
  "}\n";

/* The PTX ISA version that introduced each target (PTX ISA "Release Notes"; as compile/llvm_nvptx.c). */
static const struct { const char *sm, *isa; } ptx_isas[] = {
    {"sm_80", "7.0"}, {"sm_86", "7.1"}, {"sm_89", "7.8"}, {"sm_90", "7.8"}, {"sm_100", "8.6"}, {"sm_120", "8.7"},
};

/* One PTX module (NUL-terminated text; *size counts the NUL, as bg_program_load takes PTX) with body for arch. */
static int nv_module(const char *arch, const char *body, void **bin, size_t *size) {
  const char *isa = NULL;
  for (size_t i = 0; i < sizeof ptx_isas / sizeof *ptx_isas; i++)
    if (!strcmp(ptx_isas[i].sm, arch)) isa = ptx_isas[i].isa;
  if (!isa) return -BG_ENOTSUP;
  static const char fmt[] = "//\n// baregpu conformance kernel\n//\n\n.version %s\n.target %s\n.address_size 64\n\n%s";
  int n = snprintf(NULL, 0, fmt, isa, arch, body);
  char *p = n < 0 ? NULL : malloc((size_t)n + 1);
  if (!p) return bg_error(BG_ENOMEM, "conformance: out of memory writing PTX for %s", arch);
  snprintf(p, (size_t)n + 1, fmt, isa, arch, body);
  *bin = p;
  *size = (size_t)n + 1;
  return 0;
}

/* One binary per arch, compiled once per process (a reopened device reuses it). */
typedef struct cf_bin {
  char arch[32];
  void *bin;         /* both kernels (host, gfx*), or cf_add1 alone (sm_*: one PTX module per kernel) */
  size_t size;
  void *bin_count;   /* sm_*: cf_count's module; NULL: bin holds it too */
  size_t size_count;
  int err;         /* < 0: compiling failed (msg) */
  bool unsupported; /* no compiler for this arch in this build: the kernel tests skip (msg) */
  char msg[1024];
} cf_bin;

#define CF_MAX_ARCHS 8
static cf_bin bins[CF_MAX_ARCHS];

static cf_bin *bin_for(const char *arch) {
  for (int i = 0; i < CF_MAX_ARCHS; i++)
    if (bins[i].arch[0] && strcmp(bins[i].arch, arch) == 0) return &bins[i];
  for (int i = 0; i < CF_MAX_ARCHS; i++) {
    if (bins[i].arch[0]) continue;
    cf_bin *b = &bins[i];
    snprintf(b->arch, sizeof b->arch, "%s", arch);
    if (strcmp(arch, "host") == 0) {
      b->err = bg_compile_c(cpu_kernels_src, NULL, &b->bin, &b->size);
    } else if (strncmp(arch, "sm_", 3) == 0) {
      b->err = nv_module(arch, ptx_add1_body, &b->bin, &b->size);
      if (!b->err) b->err = nv_module(arch, ptx_count_body, &b->bin_count, &b->size_count);
      if (b->err == -BG_ENOTSUP) {
        b->unsupported = true;
        snprintf(b->msg, sizeof b->msg, "the conformance suite has PTX for sm_80, 86, 89, 90, 100 and 120, not %s", arch);
        return b;
      }
    } else if (strncmp(arch, "gfx", 3) != 0) {
      b->unsupported = true;
      snprintf(b->msg, sizeof b->msg, "the conformance suite has kernels for arch host, gfx* and sm_*, not %s", arch);
      return b;
    } else {
#if BG_HAVE_LLVM
      b->err = bg_llvm_amdgpu_compile(gpu_kernels_ir, arch, &b->bin, &b->size);
      if (b->err == -BG_ENOTSUP) {
        b->unsupported = true;
        snprintf(b->msg, sizeof b->msg, "LLVM %s does not generate code for %s: %s", bg_llvm_version(), arch,
                 bg_last_error());
        return b;
      }
#else
      b->unsupported = true;
      snprintf(b->msg, sizeof b->msg, "this build has no LLVM (meson -Dllvm): no kernels for arch %s", arch);
      return b;
#endif
    }
    if (b->err < 0) snprintf(b->msg, sizeof b->msg, "compiling the %s kernels: %s", arch, bg_last_error());
    return b;
  }
  return NULL;
}

int cf_load_kernels(cf_ctx *c) {
  const char *arch = bg_dev_arch(c->d);
  cf_bin *b = bin_for(arch);
  if (!b) return bg_error(BG_ENOMEM, "conformance: more than %d device archs", CF_MAX_ARCHS);
  if (b->unsupported) {
    snprintf(c->no_kernels, sizeof c->no_kernels, "%s", b->msg);
    return 0;
  }
  if (b->err < 0) return bg_error(-b->err, "%s", b->msg);
  static const uint8_t add1_sizes[] = {8, 8, 4}, count_sizes[] = {8};
  bg_program_info add1 = {"cf_add1", 3, add1_sizes}, count = {"cf_count", 1, count_sizes};
  int r = bg_program_load(c->d, b->bin, b->size, &add1, &c->add1);
  if (r == 0)
    r = bg_program_load(c->d, b->bin_count ? b->bin_count : b->bin, b->bin_count ? b->size_count : b->size, &count,
                        &c->count);
  if (r < 0) return r;
  if (bg_program_nargs(c->add1) != 3 || bg_program_kernargs_size(c->add1) < 20)
    return bg_error(BG_EINVAL, "program cf_add1 on %s: nargs %u, kernargs size %u (expected 3 and >= 20)", arch,
                    bg_program_nargs(c->add1), bg_program_kernargs_size(c->add1));
  c->kernels = true;
  return 0;
}

void cf_kernels_free(void) {
  for (int i = 0; i < CF_MAX_ARCHS; i++) {
    free(bins[i].bin);
    free(bins[i].bin_count);
    memset(&bins[i], 0, sizeof bins[i]);
  }
}
