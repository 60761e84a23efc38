; Register and scratch arrays, as a renderer's accumulator allocas in addrspace(5) become after
; SROA: a 16-entry array indexed by a loop counter (LLVM keeps it in VGPRs: v_movreld with M0)
; and a 256-entry one it must spill to scratch (scratch_store/scratch_load, private segment).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @private_array(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %in) #0 {
entry:
  %small = alloca [16 x float], align 4, addrspace(5)
  %big = alloca [256 x float], align 4, addrspace(5)
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %wgf = uitofp i32 %wg to float
  br label %fill
fill:
  %i = phi i32 [ 0, %entry ], [ %i1, %fill ]
  %ix = zext i32 %i to i64
  %pi = getelementptr inbounds float, ptr addrspace(1) %in, i64 %ix
  %v = load float, ptr addrspace(1) %pi, align 4
  %vw = fadd float %v, %wgf
  %ps = getelementptr inbounds [256 x float], ptr addrspace(5) %big, i32 0, i32 %i
  store float %vw, ptr addrspace(5) %ps, align 4
  %i16 = and i32 %i, 15
  %pm = getelementptr inbounds [16 x float], ptr addrspace(5) %small, i32 0, i32 %i16
  store float %v, ptr addrspace(5) %pm, align 4
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, 256
  br i1 %c, label %fill, label %read
read:
  %t = and i32 %tid, 255
  %q = getelementptr inbounds [256 x float], ptr addrspace(5) %big, i32 0, i32 %t
  %r = load float, ptr addrspace(5) %q, align 4
  %t16 = and i32 %tid, 15
  %q16 = getelementptr inbounds [16 x float], ptr addrspace(5) %small, i32 0, i32 %t16
  %r16 = load float, ptr addrspace(5) %q16, align 4
  %sum = fadd float %r, %r16
  %base = shl i32 %wg, 6
  %o = add i32 %base, %tid
  %ox = zext i32 %o to i64
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %ox
  store float %sum, ptr addrspace(1) %po, align 4
  ret void
}
attributes #0 = { nounwind "amdgpu-flat-work-group-size"="1,64" "uniform-work-group-size"="true" "amdgpu-no-implicitarg-ptr" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-hostcall-ptr" "amdgpu-no-heap-ptr" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-default-queue" "amdgpu-no-completion-action" "amdgpu-no-lds-kernel-id" }
