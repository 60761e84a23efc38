/* tests/mockgpu/amd_test_kernels.h: LLVM IR kernels the AMD suites compile (compile/llvm_amdgpu.h) and dispatch on the
 * emulated GPU's RDNA3 core. */
#ifndef BAREGPU_TESTS_MOCKGPU_AMD_TEST_KERNELS_H
#define BAREGPU_TESTS_MOCKGPU_AMD_TEST_KERNELS_H

/* add1(out, in): out[i] = in[i] + 1.0f for i = workgroup id * 32 + work-item id (work-groups of 32). */
static const char AMD_TEST_ADD1_IR[] =
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "declare i32 @llvm.amdgcn.workgroup.id.x()\n"
    "define amdgpu_kernel void @add1(ptr addrspace(1) %out, ptr addrspace(1) %in) {\n"
    "  %l = call i32 @llvm.amdgcn.workitem.id.x()\n"
    "  %g = call i32 @llvm.amdgcn.workgroup.id.x()\n"
    "  %gs = mul i32 %g, 32\n"
    "  %i = add i32 %gs, %l\n"
    "  %pi = getelementptr float, ptr addrspace(1) %in, i32 %i\n"
    "  %v = load float, ptr addrspace(1) %pi\n"
    "  %r = fadd float %v, 1.0\n"
    "  %po = getelementptr float, ptr addrspace(1) %out, i32 %i\n"
    "  store float %r, ptr addrspace(1) %po\n"
    "  ret void\n"
    "}\n";

#endif
