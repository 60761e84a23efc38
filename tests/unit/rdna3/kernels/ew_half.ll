; Half precision: loads of half, arithmetic in half and in float, a float16 result and a float
; result; vectorised pairs (<2 x half>) as an upcasting renderer writes them.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare half @llvm.maxnum.f16(half, half)
declare half @llvm.exp2.f16(half)
declare half @llvm.sqrt.f16(half)

define amdgpu_kernel void @ew_half(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %outf,
                                   ptr addrspace(1) noalias %a, ptr addrspace(1) noalias %b) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %wg, 5
  %i = add i32 %base, %tid
  %i2 = shl i32 %i, 1
  %idx = zext i32 %i2 to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr inbounds half, ptr addrspace(1) %b, i64 %idx
  %va = load <2 x half>, ptr addrspace(1) %pa, align 4
  %vb = load <2 x half>, ptr addrspace(1) %pb, align 4
  %m = fmul <2 x half> %va, %vb
  %s = fadd <2 x half> %m, <half 1.0, half -0.5>
  %a0 = extractelement <2 x half> %va, i32 0
  %b1 = extractelement <2 x half> %vb, i32 1
  %mx = call half @llvm.maxnum.f16(half %a0, half %b1)
  %e = call half @llvm.exp2.f16(half %a0)
  %sq = call half @llvm.sqrt.f16(half %mx)
  %q = fdiv half %a0, %b1
  %af = fpext half %a0 to float
  %bf = fpext half %b1 to float
  %ff = fmul float %af, %bf
  %po = getelementptr inbounds half, ptr addrspace(1) %out, i64 %idx
  store <2 x half> %s, ptr addrspace(1) %po, align 4
  %j = mul i32 %i, 4
  %jx = zext i32 %j to i64
  %pf = getelementptr inbounds float, ptr addrspace(1) %outf, i64 %jx
  store float %ff, ptr addrspace(1) %pf, align 4
  %ef = fpext half %e to float
  %pf1 = getelementptr inbounds float, ptr addrspace(1) %pf, i64 1
  store float %ef, ptr addrspace(1) %pf1, align 4
  %sqf = fpext half %sq to float
  %pf2 = getelementptr inbounds float, ptr addrspace(1) %pf, i64 2
  store float %sqf, ptr addrspace(1) %pf2, align 4
  %qf = fpext half %q to float
  %pf3 = getelementptr inbounds float, ptr addrspace(1) %pf, i64 3
  store float %qf, ptr addrspace(1) %pf3, align 4
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="1,32" }
