; Half-precision matmul with float accumulation, as a renderer writes float16 GEMM: half loads,
; fpext, fma in float over k, fptrunc to a half result. C[N x N] = A x B, N a kernel argument,
; one output per work-item over 2D 8x4 workgroups; a bool (i8) mask output where C > 0.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare float @llvm.fma.f32(float, float, float)

define amdgpu_kernel void @hgemm(ptr addrspace(1) noalias %c, ptr addrspace(1) noalias %pos,
                                 ptr addrspace(1) noalias %a, ptr addrspace(1) noalias %b, i32 %n) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %ty = call i32 @llvm.amdgcn.workitem.id.y()
  %gx = call i32 @llvm.amdgcn.workgroup.id.x()
  %gy = call i32 @llvm.amdgcn.workgroup.id.y()
  %gx8 = shl i32 %gx, 3
  %gy4 = shl i32 %gy, 2
  %col = add i32 %gx8, %tx
  %row = add i32 %gy4, %ty
  %rown = mul i32 %row, %n
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %ai = add i32 %rown, %k
  %kn = mul i32 %k, %n
  %bi = add i32 %kn, %col
  %aix = sext i32 %ai to i64
  %bix = sext i32 %bi to i64
  %pa = getelementptr inbounds half, ptr addrspace(1) %a, i64 %aix
  %pb = getelementptr inbounds half, ptr addrspace(1) %b, i64 %bix
  %va = load half, ptr addrspace(1) %pa, align 2
  %vb = load half, ptr addrspace(1) %pb, align 2
  %fa = fpext half %va to float
  %fb = fpext half %vb to float
  %acc1 = call float @llvm.fma.f32(float %fa, float %fb, float %acc)
  %k1 = add nsw i32 %k, 1
  %cnd = icmp slt i32 %k1, %n
  br i1 %cnd, label %loop, label %done
done:
  %ci = add i32 %rown, %col
  %cix = sext i32 %ci to i64
  %h = fptrunc float %acc1 to half
  %pc = getelementptr inbounds half, ptr addrspace(1) %c, i64 %cix
  store half %h, ptr addrspace(1) %pc, align 2
  %gt = fcmp ogt half %h, 0xH0000
  %g8 = zext i1 %gt to i8
  %pp = getelementptr inbounds i8, ptr addrspace(1) %pos, i64 %cix
  store i8 %g8, ptr addrspace(1) %pp, align 1
  ret void
}
attributes #0 = { nounwind "amdgpu-flat-work-group-size"="32,32" "amdgpu-no-implicitarg-ptr" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" }
