; Work-item and workgroup ids in x/y/z: out[linear global id] = packed ids, with a 4x2x2
; workgroup over a 3x2x2 grid.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
declare i32 @llvm.amdgcn.workitem.id.z()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()

define amdgpu_kernel void @grid3d(ptr addrspace(1) noalias %out) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %ty = call i32 @llvm.amdgcn.workitem.id.y()
  %tz = call i32 @llvm.amdgcn.workitem.id.z()
  %gx = call i32 @llvm.amdgcn.workgroup.id.x()
  %gy = call i32 @llvm.amdgcn.workgroup.id.y()
  %gz = call i32 @llvm.amdgcn.workgroup.id.z()
  %x0 = shl i32 %gx, 2
  %x = add i32 %x0, %tx
  %y0 = shl i32 %gy, 1
  %y = add i32 %y0, %ty
  %z0 = shl i32 %gz, 1
  %z = add i32 %z0, %tz
  %zy = mul i32 %z, 4
  %zyy = add i32 %zy, %y
  %l0 = mul i32 %zyy, 12
  %l = add i32 %l0, %x
  %v0 = shl i32 %gz, 24
  %v1 = shl i32 %gy, 20
  %v2 = shl i32 %gx, 16
  %v3 = shl i32 %tz, 8
  %v4 = shl i32 %ty, 4
  %w0 = or i32 %v0, %v1
  %w1 = or i32 %w0, %v2
  %w2 = or i32 %w1, %v3
  %w3 = or i32 %w2, %v4
  %w = or i32 %w3, %tx
  %lx = zext i32 %l to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %lx
  store i32 %w, ptr addrspace(1) %p, align 4
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="16,16" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" }
