; C[N][N] (f32) = A[N][N] * B[N][N] (bf16 bits, row-major) with v_mfma_f32_16x16x16_bf16: one wave64 per 16x16 tile of C,
; K in steps of 16 accumulated through the intrinsic's C operand. Lane l: A row l%16 and B column l%16 at
; k = 4*(l/16)..+3; result element i at row 4*(l/16)+i, column l%16 (CDNA3 ISA guide, MFMA operand layout).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16>, <4 x i16>, <4 x float>, i32, i32, i32)

define amdgpu_kernel void @mfma_bf16(ptr addrspace(1) noalias %c, ptr addrspace(1) noalias %a,
                                    ptr addrspace(1) noalias %b, i32 %n) #0 {
entry:
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %tx = call i32 @llvm.amdgcn.workgroup.id.x()
  %ty = call i32 @llvm.amdgcn.workgroup.id.y()
  %r16 = and i32 %l, 15
  %q = lshr i32 %l, 4
  %kq = shl i32 %q, 2
  %row0 = shl i32 %ty, 4
  %col0 = shl i32 %tx, 4
  %arow = add i32 %row0, %r16
  %bcol = add i32 %col0, %r16
  br label %loop
loop:
  %k0 = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi <4 x float> [ zeroinitializer, %entry ], [ %d, %loop ]
  %kk = add i32 %k0, %kq
  %ai = mul i32 %arow, %n
  %ai2 = add i32 %ai, %kk
  %ai64 = zext i32 %ai2 to i64
  %pa = getelementptr inbounds i16, ptr addrspace(1) %a, i64 %ai64
  %va = load <4 x i16>, ptr addrspace(1) %pa, align 8
  %b0i = mul i32 %kk, %n
  %b0j = add i32 %b0i, %bcol
  %b0 = zext i32 %b0j to i64
  %n64 = zext i32 %n to i64
  %b1 = add i64 %b0, %n64
  %b2 = add i64 %b1, %n64
  %b3 = add i64 %b2, %n64
  %pb0 = getelementptr inbounds i16, ptr addrspace(1) %b, i64 %b0
  %pb1 = getelementptr inbounds i16, ptr addrspace(1) %b, i64 %b1
  %pb2 = getelementptr inbounds i16, ptr addrspace(1) %b, i64 %b2
  %pb3 = getelementptr inbounds i16, ptr addrspace(1) %b, i64 %b3
  %h0 = load i16, ptr addrspace(1) %pb0, align 2
  %h1 = load i16, ptr addrspace(1) %pb1, align 2
  %h2 = load i16, ptr addrspace(1) %pb2, align 2
  %h3 = load i16, ptr addrspace(1) %pb3, align 2
  %v0 = insertelement <4 x i16> poison, i16 %h0, i32 0
  %v1 = insertelement <4 x i16> %v0, i16 %h1, i32 1
  %v2 = insertelement <4 x i16> %v1, i16 %h2, i32 2
  %vb = insertelement <4 x i16> %v2, i16 %h3, i32 3
  %d = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16> %va, <4 x i16> %vb, <4 x float> %acc, i32 0, i32 0, i32 0)
  %k1 = add i32 %k0, 16
  %more = icmp ult i32 %k1, %n
  br i1 %more, label %loop, label %store
store:
  %crow = add i32 %row0, %kq
  %ci = mul i32 %crow, %n
  %cij = add i32 %ci, %bcol
  %c0 = zext i32 %cij to i64
  %c1 = add i64 %c0, %n64
  %c2 = add i64 %c1, %n64
  %c3 = add i64 %c2, %n64
  %e0 = extractelement <4 x float> %d, i32 0
  %e1 = extractelement <4 x float> %d, i32 1
  %e2 = extractelement <4 x float> %d, i32 2
  %e3 = extractelement <4 x float> %d, i32 3
  %pc0 = getelementptr inbounds float, ptr addrspace(1) %c, i64 %c0
  %pc1 = getelementptr inbounds float, ptr addrspace(1) %c, i64 %c1
  %pc2 = getelementptr inbounds float, ptr addrspace(1) %c, i64 %c2
  %pc3 = getelementptr inbounds float, ptr addrspace(1) %c, i64 %c3
  store float %e0, ptr addrspace(1) %pc0, align 4
  store float %e1, ptr addrspace(1) %pc1, align 4
  store float %e2, ptr addrspace(1) %pc2, align 4
  store float %e3, ptr addrspace(1) %pc3, align 4
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="64,64" }
