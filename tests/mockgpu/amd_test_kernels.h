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

/* spin(out, n): a loop that runs long on the emulated shader core: out[lane] = n (n additions of 1.0). The USB suites
 * time synchronizes of work longer than a bridge round trip with it (tests/unit/usb/test_hcq.c, bench-usb). */
static const char AMD_TEST_SPIN_IR[] =
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "define amdgpu_kernel void @spin(ptr addrspace(1) %out, i32 %n) {\n"
    "entry:\n"
    "  br label %loop\n"
    "loop:\n"
    "  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]\n"
    "  %acc = phi float [ 0.0, %entry ], [ %acc1, %loop ]\n"
    "  %acc1 = fadd float %acc, 1.0\n"
    "  %i1 = add i32 %i, 1\n"
    "  %c = icmp ult i32 %i1, %n\n"
    "  br i1 %c, label %loop, label %done\n"
    "done:\n"
    "  %l = call i32 @llvm.amdgcn.workitem.id.x()\n"
    "  %p = getelementptr float, ptr addrspace(1) %out, i32 %l\n"
    "  store float %acc1, ptr addrspace(1) %p\n"
    "  ret void\n"
    "}\n";

#endif
