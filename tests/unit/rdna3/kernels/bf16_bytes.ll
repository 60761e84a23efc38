; bfloat16 storage (fpext by shift, fptrunc rounding to nearest even with integer ops) and a
; shuffled uchar4 add: gfx11 true16 VOP3 ops on register halves (v_add_nc_u16 v0.l, v4.h, ...),
; v_and_b16/v_or_b16, global_store_d16_hi_b16.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @bf16_bytes(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %in,
                                      ptr addrspace(1) noalias %bytes) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %wg, 5
  %i = add i32 %base, %tid
  %x = zext i32 %i to i64
  %p = getelementptr inbounds bfloat, ptr addrspace(1) %in, i64 %x
  %v = load bfloat, ptr addrspace(1) %p, align 2
  %f = fpext bfloat %v to float
  %g = fmul float %f, 3.0
  %h = fptrunc float %g to bfloat
  %q = getelementptr inbounds bfloat, ptr addrspace(1) %out, i64 %x
  store bfloat %h, ptr addrspace(1) %q, align 2
  %pc = getelementptr inbounds <4 x i8>, ptr addrspace(1) %bytes, i64 %x
  %cv = load <4 x i8>, ptr addrspace(1) %pc, align 4
  %cs = shufflevector <4 x i8> %cv, <4 x i8> poison, <4 x i32> <i32 3, i32 1, i32 2, i32 0>
  %ca = add <4 x i8> %cs, <i8 1, i8 2, i8 3, i8 4>
  store <4 x i8> %ca, ptr addrspace(1) %pc, align 4
  ret void
}
attributes #0 = { nounwind "amdgpu-flat-work-group-size"="1,32" "amdgpu-no-implicitarg-ptr" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" }
