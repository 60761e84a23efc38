; C = A x B for N x N float32 (N a kernel argument), one output per work-item: 2D workgroups of
; 8x8 work-items over an (N/8)x(N/8) grid, row = y, column = x, a loop over k.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()

define amdgpu_kernel void @matmul(ptr addrspace(1) noalias %c, ptr addrspace(1) noalias %a,
                                  ptr addrspace(1) noalias %b, i32 %n) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %ty = call i32 @llvm.amdgcn.workitem.id.y()
  %gx = call i32 @llvm.amdgcn.workgroup.id.x()
  %gy = call i32 @llvm.amdgcn.workgroup.id.y()
  %gx8 = shl i32 %gx, 3
  %gy8 = shl i32 %gy, 3
  %col = add i32 %gx8, %tx
  %row = add i32 %gy8, %ty
  %rown = mul i32 %row, %n
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %ai = add i32 %rown, %k
  %kn = mul i32 %k, %n
  %bi = add i32 %kn, %col
  %aix = zext i32 %ai to i64
  %bix = zext i32 %bi to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %aix
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %bix
  %va = load float, ptr addrspace(1) %pa, align 4
  %vb = load float, ptr addrspace(1) %pb, align 4
  %acc1 = call float @llvm.fma.f32(float %va, float %vb, float %acc)
  %k1 = add i32 %k, 1
  %cnd = icmp slt i32 %k1, %n
  br i1 %cnd, label %loop, label %done
done:
  %ci = add i32 %rown, %col
  %cix = zext i32 %ci to i64
  %pc = getelementptr inbounds float, ptr addrspace(1) %c, i64 %cix
  store float %acc1, ptr addrspace(1) %pc, align 4
  ret void
}
declare float @llvm.fma.f32(float, float, float)
attributes #0 = { "amdgpu-flat-work-group-size"="64,64" }
