; Workgroup sum through LDS: 128 work-items (4 waves) each add 4 strided inputs, then a tree
; reduction with barriers; work-item 0 of each workgroup writes out[wg].
target triple = "amdgcn-amd-amdhsa"

@partial = internal addrspace(3) global [128 x float] poison, align 4

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare void @llvm.amdgcn.s.barrier()

define amdgpu_kernel void @reduce_lds(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %in) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %wbase = mul i32 %wg, 512
  br label %acc
acc:
  %k = phi i32 [ 0, %entry ], [ %k1, %acc ]
  %s = phi float [ 0.0, %entry ], [ %s1, %acc ]
  %kk = mul i32 %k, 128
  %j = add i32 %kk, %tid
  %g = add i32 %wbase, %j
  %gi = zext i32 %g to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %in, i64 %gi
  %v = load float, ptr addrspace(1) %p, align 4
  %s1 = fadd float %s, %v
  %k1 = add i32 %k, 1
  %c = icmp ult i32 %k1, 4
  br i1 %c, label %acc, label %tolds
tolds:
  %lp = getelementptr inbounds [128 x float], ptr addrspace(3) @partial, i32 0, i32 %tid
  store float %s1, ptr addrspace(3) %lp, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  br label %tree
tree:
  %w = phi i32 [ 64, %tolds ], [ %w1, %next ]
  %act = icmp ult i32 %tid, %w
  br i1 %act, label %add, label %next
add:
  %o = add i32 %tid, %w
  %op = getelementptr inbounds [128 x float], ptr addrspace(3) @partial, i32 0, i32 %o
  %x = load float, ptr addrspace(3) %op, align 4
  %y = load float, ptr addrspace(3) %lp, align 4
  %z = fadd float %x, %y
  store float %z, ptr addrspace(3) %lp, align 4
  br label %next
next:
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %w1 = lshr i32 %w, 1
  %more = icmp ugt i32 %w, 1
  br i1 %more, label %tree, label %fin
fin:
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %wr, label %done
wr:
  %r = load float, ptr addrspace(3) @partial, align 4
  %wi = zext i32 %wg to i64
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %wi
  store float %r, ptr addrspace(1) %po, align 4
  br label %done
done:
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="128,128" }
