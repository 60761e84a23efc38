; One 16x16x16 f16 WMMA through LLVM's intrinsic, as a renderer emits it for gfx1100 (wave32):
; each lane loads its A row and its B column (B given transposed, bt[n][k]) for lane % 16, and
; the accumulator C / result D in the intrinsic's per-lane order (8 floats a lane: c[lane][r]).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16(<16 x half>, <16 x half>, <8 x float>)

define amdgpu_kernel void @wmma(ptr addrspace(1) noalias %d, ptr addrspace(1) noalias %a,
                                ptr addrspace(1) noalias %bt, ptr addrspace(1) noalias %c) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %row = and i32 %tid, 15
  %off = shl i32 %row, 4
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i32 %off
  %pb = getelementptr inbounds half, ptr addrspace(1) %bt, i32 %off
  %va = load <16 x half>, ptr addrspace(1) %pa, align 32
  %vb = load <16 x half>, ptr addrspace(1) %pb, align 32
  %coff = shl i32 %tid, 3
  %pc = getelementptr inbounds float, ptr addrspace(1) %c, i32 %coff
  %vc = load <8 x float>, ptr addrspace(1) %pc, align 32
  %vd = call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16(<16 x half> %va, <16 x half> %vb, <8 x float> %vc)
  %pd = getelementptr inbounds float, ptr addrspace(1) %d, i32 %coff
  store <8 x float> %vd, ptr addrspace(1) %pd, align 32
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="32,32" }
