; Integer kernels: int32 arithmetic, signed/unsigned division and remainder, shifts, int64
; multiply-add, comparisons + select, bool (i8) and int8/int16 loads and stores.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @ew_int(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %out64,
                                  ptr addrspace(1) noalias %outb, ptr addrspace(1) noalias %a,
                                  ptr addrspace(1) noalias %b, ptr addrspace(1) noalias %c8,
                                  ptr addrspace(1) noalias %d16) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %wg, 5
  %i = add i32 %base, %tid
  %idx = zext i32 %i to i64
  %pa = getelementptr inbounds i32, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr inbounds i32, ptr addrspace(1) %b, i64 %idx
  %va = load i32, ptr addrspace(1) %pa, align 4
  %vb = load i32, ptr addrspace(1) %pb, align 4
  %pc = getelementptr inbounds i8, ptr addrspace(1) %c8, i64 %idx
  %vc = load i8, ptr addrspace(1) %pc, align 1
  %pd = getelementptr inbounds i16, ptr addrspace(1) %d16, i64 %idx
  %vd = load i16, ptr addrspace(1) %pd, align 2
  %vcx = sext i8 %vc to i32
  %vdx = zext i16 %vd to i32
  %sd = sdiv i32 %va, %vb
  %sr = srem i32 %va, %vb
  %ud = udiv i32 %va, %vb
  %ur = urem i32 %va, %vb
  %ml = mul i32 %va, %vb
  %sh = shl i32 %va, 3
  %as = ashr i32 %va, %vcx
  %ls = lshr i32 %vb, 5
  %mn = call i32 @llvm.smin.i32(i32 %va, i32 %vb)
  %um = call i32 @llvm.umax.i32(i32 %va, i32 %vdx)
  %x = xor i32 %ml, %sh
  %y = add i32 %x, %vcx
  %cmp = icmp sgt i32 %va, %vb
  %sel = select i1 %cmp, i32 %ls, i32 %um
  %o = mul i32 %i, 8
  %ox = zext i32 %o to i64
  %p0 = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %ox
  store i32 %sd, ptr addrspace(1) %p0, align 4
  %p1 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 1
  store i32 %sr, ptr addrspace(1) %p1, align 4
  %p2 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 2
  store i32 %ud, ptr addrspace(1) %p2, align 4
  %p3 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 3
  store i32 %ur, ptr addrspace(1) %p3, align 4
  %p4 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 4
  store i32 %y, ptr addrspace(1) %p4, align 4
  %p5 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 5
  store i32 %as, ptr addrspace(1) %p5, align 4
  %p6 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 6
  store i32 %mn, ptr addrspace(1) %p6, align 4
  %p7 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 7
  store i32 %sel, ptr addrspace(1) %p7, align 4
  %a64 = sext i32 %va to i64
  %b64 = zext i32 %vb to i64
  %m64 = mul i64 %a64, %b64
  %s64 = add i64 %m64, 1234567890123
  %d64 = sdiv i64 %s64, 1000
  %r64 = xor i64 %s64, %d64
  %q64 = getelementptr inbounds i64, ptr addrspace(1) %out64, i64 %idx
  store i64 %r64, ptr addrspace(1) %q64, align 8
  %lt = icmp ult i32 %va, %vb
  %bz = zext i1 %lt to i8
  %pbz = getelementptr inbounds i8, ptr addrspace(1) %outb, i64 %idx
  store i8 %bz, ptr addrspace(1) %pbz, align 1
  ret void
}
declare i32 @llvm.smin.i32(i32, i32)
declare i32 @llvm.umax.i32(i32, i32)
attributes #0 = { "amdgpu-flat-work-group-size"="1,32" }
