; The f16-result WMMA through LLVM's intrinsic (gfx1100, wave32), OP_SEL low: A row and B column (B given
; transposed, bt[n][k]) for lane % 16; C and D as the intrinsic's <16 x half> per lane (c[lane][e]), whose even
; elements (the low halves of the 8 VGPRs) carry the matrix.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare <16 x half> @llvm.amdgcn.wmma.f16.16x16x16.f16(<16 x half>, <16 x half>, <16 x half>, i1 immarg)

define amdgpu_kernel void @wmma_f16(ptr addrspace(1) noalias %d, ptr addrspace(1) noalias %a,
                                    ptr addrspace(1) noalias %bt, ptr addrspace(1) noalias %c) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %row = and i32 %tid, 15
  %off = shl i32 %row, 4
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i32 %off
  %pb = getelementptr inbounds half, ptr addrspace(1) %bt, i32 %off
  %va = load <16 x half>, ptr addrspace(1) %pa, align 32
  %vb = load <16 x half>, ptr addrspace(1) %pb, align 32
  %coff = shl i32 %tid, 4
  %pc = getelementptr inbounds half, ptr addrspace(1) %c, i32 %coff
  %vc = load <16 x half>, ptr addrspace(1) %pc, align 32
  %vd = call <16 x half> @llvm.amdgcn.wmma.f16.16x16x16.f16(<16 x half> %va, <16 x half> %vb, <16 x half> %vc, i1 0)
  %pd = getelementptr inbounds half, ptr addrspace(1) %d, i32 %coff
  store <16 x half> %vd, ptr addrspace(1) %pd, align 32
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="32,32" }
