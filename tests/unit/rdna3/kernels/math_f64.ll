; float64 as a renderer writes double kernels: division (div_scale/div_fmas/div_fixup f64),
; sqrt (v_rsq_f64 + Newton), fma, conversions to and from float and int, comparisons + select.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare double @llvm.sqrt.f64(double)
declare double @llvm.fma.f64(double, double, double)
declare double @llvm.fabs.f64(double)
declare double @llvm.floor.f64(double)

define amdgpu_kernel void @math_f64(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %a,
                                    ptr addrspace(1) noalias %b) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %wg, 5
  %i = add i32 %base, %tid
  %idx = zext i32 %i to i64
  %pa = getelementptr inbounds double, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr inbounds double, ptr addrspace(1) %b, i64 %idx
  %va = load double, ptr addrspace(1) %pa, align 8
  %vb = load double, ptr addrspace(1) %pb, align 8
  %d = fdiv double %va, %vb
  %ab = call double @llvm.fabs.f64(double %vb)
  %s = call double @llvm.sqrt.f64(double %ab)
  %f = call double @llvm.fma.f64(double %va, double %vb, double %d)
  %fl = call double @llvm.floor.f64(double %d)
  %tf = fptrunc double %va to float
  %te = fpext float %tf to double
  %ti = fptosi double %d to i32
  %tr = sitofp i32 %ti to double
  %lt = fcmp olt double %va, %vb
  %sel = select i1 %lt, double %va, double %s
  %o = mul i32 %i, 7
  %ox = zext i32 %o to i64
  %p0 = getelementptr inbounds double, ptr addrspace(1) %out, i64 %ox
  store double %d, ptr addrspace(1) %p0, align 8
  %p1 = getelementptr inbounds double, ptr addrspace(1) %p0, i64 1
  store double %s, ptr addrspace(1) %p1, align 8
  %p2 = getelementptr inbounds double, ptr addrspace(1) %p0, i64 2
  store double %f, ptr addrspace(1) %p2, align 8
  %p3 = getelementptr inbounds double, ptr addrspace(1) %p0, i64 3
  store double %fl, ptr addrspace(1) %p3, align 8
  %p4 = getelementptr inbounds double, ptr addrspace(1) %p0, i64 4
  store double %te, ptr addrspace(1) %p4, align 8
  %p5 = getelementptr inbounds double, ptr addrspace(1) %p0, i64 5
  store double %tr, ptr addrspace(1) %p5, align 8
  %p6 = getelementptr inbounds double, ptr addrspace(1) %p0, i64 6
  store double %sel, ptr addrspace(1) %p6, align 8
  ret void
}
attributes #0 = { nounwind "amdgpu-flat-work-group-size"="1,32" "amdgpu-no-implicitarg-ptr" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" }
