; Row-wise log-softmax as a fused reduce kernel: one work-item per row, a max loop, a sum of
; exp2((x - max) * log2(e)) loop, then log2 and the output loop; rows of a runtime length.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare float @llvm.maxnum.f32(float, float)
declare float @llvm.exp2.f32(float)
declare float @llvm.log2.f32(float)

define amdgpu_kernel void @logsoftmax(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %in, i32 %len) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %wb = shl i32 %wg, 5
  %row = add i32 %wb, %tid
  %base = mul i32 %row, %len
  br label %mx
mx:
  %i = phi i32 [ 0, %entry ], [ %i1, %mx ]
  %m = phi float [ 0xFFF0000000000000, %entry ], [ %m1, %mx ]
  %ix = add i32 %base, %i
  %ixx = zext i32 %ix to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %in, i64 %ixx
  %v = load float, ptr addrspace(1) %p, align 4
  %m1 = call float @llvm.maxnum.f32(float %m, float %v)
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, %len
  br i1 %c, label %mx, label %sm
sm:
  %j = phi i32 [ 0, %mx ], [ %j1, %sm ]
  %s = phi float [ 0.0, %mx ], [ %s1, %sm ]
  %jx = add i32 %base, %j
  %jxx = zext i32 %jx to i64
  %q = getelementptr inbounds float, ptr addrspace(1) %in, i64 %jxx
  %w = load float, ptr addrspace(1) %q, align 4
  %d = fsub float %w, %m1
  %dl = fmul float %d, 0x3FF7154760000000
  %e = call float @llvm.exp2.f32(float %dl)
  %s1 = fadd float %s, %e
  %j1 = add i32 %j, 1
  %c2 = icmp ult i32 %j1, %len
  br i1 %c2, label %sm, label %lg
lg:
  %l2 = call float @llvm.log2.f32(float %s1)
  %ln = fmul float %l2, 0x3FE62E4300000000
  br label %wr
wr:
  %k = phi i32 [ 0, %lg ], [ %k1, %wr ]
  %kx = add i32 %base, %k
  %kxx = zext i32 %kx to i64
  %r = getelementptr inbounds float, ptr addrspace(1) %in, i64 %kxx
  %y = load float, ptr addrspace(1) %r, align 4
  %dy = fsub float %y, %m1
  %o = fsub float %dy, %ln
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %kxx
  store float %o, ptr addrspace(1) %po, align 4
  %k1 = add i32 %k, 1
  %c3 = icmp ult i32 %k1, %len
  br i1 %c3, label %wr, label %done
done:
  ret void
}
attributes #0 = { nounwind "amdgpu-flat-work-group-size"="1,32" "amdgpu-no-implicitarg-ptr" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" }
