; Elementwise float32: out[i] = a[i]*b[i] + c, guarded by i < n (grid rounded up).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @ew_f32(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %a,
                                  ptr addrspace(1) noalias %b, float %c, i32 %n) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %wg, 64
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %body, label %done
body:
  %idx = sext i32 %i to i64
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %idx
  %va = load float, ptr addrspace(1) %pa, align 4
  %vb = load float, ptr addrspace(1) %pb, align 4
  %m = fmul float %va, %vb
  %r = fadd float %m, %c
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %idx
  store float %r, ptr addrspace(1) %po, align 4
  br label %done
done:
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="1,64" }
