; One 16x16x16 f16 WMMA through LLVM's intrinsic as a renderer emits it for gfx1200 (RDNA4, wave32): the
; operands are <8 x half> a lane. Lane l loads 8 elements of its A row (B given transposed, bt[n][k]) l % 16,
; k = 8 * (l / 16) .. +7; the accumulator C / result D in the intrinsic's per-lane order (8 floats a lane:
; c[lane][r], element row 8 * (lane / 16) + r, column lane % 16; RDNA4 ISA guide "WMMA").
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16(<8 x half>, <8 x half>, <8 x float>)

define amdgpu_kernel void @wmma_gfx12(ptr addrspace(1) noalias %d, ptr addrspace(1) noalias %a,
                                      ptr addrspace(1) noalias %bt, ptr addrspace(1) noalias %c) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %row = and i32 %tid, 15
  %half = lshr i32 %tid, 4
  %r16 = shl i32 %row, 4
  %k0 = shl i32 %half, 3
  %off = add i32 %r16, %k0
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i32 %off
  %pb = getelementptr inbounds half, ptr addrspace(1) %bt, i32 %off
  %va = load <8 x half>, ptr addrspace(1) %pa, align 16
  %vb = load <8 x half>, ptr addrspace(1) %pb, align 16
  %coff = shl i32 %tid, 3
  %pc = getelementptr inbounds float, ptr addrspace(1) %c, i32 %coff
  %vc = load <8 x float>, ptr addrspace(1) %pc, align 32
  %vd = call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16(<8 x half> %va, <8 x half> %vb, <8 x float> %vc)
  %pd = getelementptr inbounds float, ptr addrspace(1) %d, i32 %coff
  store <8 x float> %vd, ptr addrspace(1) %pd, align 32
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="32,32" }
