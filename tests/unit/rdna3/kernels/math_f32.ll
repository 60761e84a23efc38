; Transcendentals and division as a kernel renderer writes them: exp2, log2, sqrt, sin, fdiv,
; max, floor, comparisons + select. out[i*8+k] for k in 0..7.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare float @llvm.exp2.f32(float)
declare float @llvm.log2.f32(float)
declare float @llvm.sqrt.f32(float)
declare float @llvm.sin.f32(float)
declare float @llvm.floor.f32(float)
declare float @llvm.maxnum.f32(float, float)
declare float @llvm.fabs.f32(float)

define amdgpu_kernel void @math_f32(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %a,
                                    ptr addrspace(1) noalias %b) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %wg, 5
  %i = add i32 %base, %tid
  %idx = zext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %idx
  %va = load float, ptr addrspace(1) %pa, align 4
  %vb = load float, ptr addrspace(1) %pb, align 4
  %e = call float @llvm.exp2.f32(float %va)
  %ab = call float @llvm.fabs.f32(float %vb)
  %ab1 = fadd float %ab, 1.0
  %l = call float @llvm.log2.f32(float %ab1)
  %s = call float @llvm.sqrt.f32(float %ab)
  %sn = call float @llvm.sin.f32(float %va)
  %d = fdiv float %va, %vb
  %mx = call float @llvm.maxnum.f32(float %va, float %vb)
  %fl = call float @llvm.floor.f32(float %d)
  %lt = fcmp olt float %va, %vb
  %sel = select i1 %lt, float %va, float %e
  %o = mul i32 %i, 8
  %oi = zext i32 %o to i64
  %p0 = getelementptr inbounds float, ptr addrspace(1) %out, i64 %oi
  store float %e, ptr addrspace(1) %p0, align 4
  %p1 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 1
  store float %l, ptr addrspace(1) %p1, align 4
  %p2 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 2
  store float %s, ptr addrspace(1) %p2, align 4
  %p3 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 3
  store float %sn, ptr addrspace(1) %p3, align 4
  %p4 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 4
  store float %d, ptr addrspace(1) %p4, align 4
  %p5 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 5
  store float %mx, ptr addrspace(1) %p5, align 4
  %p6 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 6
  store float %fl, ptr addrspace(1) %p6, align 4
  %p7 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 7
  store float %sel, ptr addrspace(1) %p7, align 4
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="1,32" }
