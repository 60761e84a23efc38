; Global atomics with returned values: every work-item adds id+1 to a counter (integer) and 0.5 to a float sum, and
; stores the old counter value it got back. LLVM's atomic optimizer turns this into one atomic per wave64 with
; the wave's total (s_ff1_i32_b64 / v_readlane / v_writelane loop over EXEC, v_mbcnt for the lane order) and
; gives each lane old + the prefix sum of the lanes before it.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @atomics(ptr addrspace(1) %counter, ptr addrspace(1) %fsum, ptr addrspace(1) %olds) #0 {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %b = mul i32 %g, 96
  %i = add i32 %b, %t
  %v = add i32 %i, 1
  %old = atomicrmw add ptr addrspace(1) %counter, i32 %v syncscope("agent") seq_cst
  %f = atomicrmw fadd ptr addrspace(1) %fsum, float 0.5 syncscope("agent") monotonic
  %ix = zext i32 %i to i64
  %p = getelementptr i32, ptr addrspace(1) %olds, i64 %ix
  store i32 %old, ptr addrspace(1) %p
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="1,96" }
