; Threefry-2x32, 20 rounds (Random123: rotations 13 15 26 6 / 17 29 16 24, key parity
; 0x1BD11BDA), straight-line as a kernel renderer writes its random-number helper; the rotates
; become v_alignbit_b32. out[i] = threefry(counter = i | (i * 7) << 32, key).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define internal i64 @tf(i64 %x, i64 %key) #1 {
entry:
  %k0 = trunc i64 %key to i32
  %kh = lshr i64 %key, 32
  %k1 = trunc i64 %kh to i32
  %k01 = xor i32 %k0, %k1
  %k2 = xor i32 %k01, 466688986
  %xl = trunc i64 %x to i32
  %xh64 = lshr i64 %x, 32
  %xh = trunc i64 %xh64 to i32
  %a0 = add i32 %xl, %k0
  %b0 = add i32 %xh, %k1
  %a1 = add i32 %a0, %b0
  %l0 = shl i32 %b0, 13
  %r0 = lshr i32 %b0, 19
  %o0 = or i32 %l0, %r0
  %b1 = xor i32 %o0, %a1
  %a2 = add i32 %a1, %b1
  %l1 = shl i32 %b1, 15
  %r1 = lshr i32 %b1, 17
  %o1 = or i32 %l1, %r1
  %b2 = xor i32 %o1, %a2
  %a3 = add i32 %a2, %b2
  %l2 = shl i32 %b2, 26
  %r2 = lshr i32 %b2, 6
  %o2 = or i32 %l2, %r2
  %b3 = xor i32 %o2, %a3
  %a4 = add i32 %a3, %b3
  %l3 = shl i32 %b3, 6
  %r3 = lshr i32 %b3, 26
  %o3 = or i32 %l3, %r3
  %b4 = xor i32 %o3, %a4
  %a5 = add i32 %a4, %k1
  %t0 = add i32 %k2, 1
  %b5 = add i32 %b4, %t0
  %a6 = add i32 %a5, %b5
  %l5 = shl i32 %b5, 17
  %r5 = lshr i32 %b5, 15
  %o5 = or i32 %l5, %r5
  %b6 = xor i32 %o5, %a6
  %a7 = add i32 %a6, %b6
  %l6 = shl i32 %b6, 29
  %r6 = lshr i32 %b6, 3
  %o6 = or i32 %l6, %r6
  %b7 = xor i32 %o6, %a7
  %a8 = add i32 %a7, %b7
  %l7 = shl i32 %b7, 16
  %r7 = lshr i32 %b7, 16
  %o7 = or i32 %l7, %r7
  %b8 = xor i32 %o7, %a8
  %a9 = add i32 %a8, %b8
  %l8 = shl i32 %b8, 24
  %r8 = lshr i32 %b8, 8
  %o8 = or i32 %l8, %r8
  %b9 = xor i32 %o8, %a9
  %a10 = add i32 %a9, %k2
  %t1 = add i32 %k0, 2
  %b10 = add i32 %b9, %t1
  %a11 = add i32 %a10, %b10
  %l10 = shl i32 %b10, 13
  %r10 = lshr i32 %b10, 19
  %o10 = or i32 %l10, %r10
  %b11 = xor i32 %o10, %a11
  %a12 = add i32 %a11, %b11
  %l11 = shl i32 %b11, 15
  %r11 = lshr i32 %b11, 17
  %o11 = or i32 %l11, %r11
  %b12 = xor i32 %o11, %a12
  %a13 = add i32 %a12, %b12
  %l12 = shl i32 %b12, 26
  %r12 = lshr i32 %b12, 6
  %o12 = or i32 %l12, %r12
  %b13 = xor i32 %o12, %a13
  %a14 = add i32 %a13, %b13
  %l13 = shl i32 %b13, 6
  %r13 = lshr i32 %b13, 26
  %o13 = or i32 %l13, %r13
  %b14 = xor i32 %o13, %a14
  %a15 = add i32 %a14, %k0
  %t2 = add i32 %k1, 3
  %b15 = add i32 %b14, %t2
  %a16 = add i32 %a15, %b15
  %l15 = shl i32 %b15, 17
  %r15 = lshr i32 %b15, 15
  %o15 = or i32 %l15, %r15
  %b16 = xor i32 %o15, %a16
  %a17 = add i32 %a16, %b16
  %l16 = shl i32 %b16, 29
  %r16 = lshr i32 %b16, 3
  %o16 = or i32 %l16, %r16
  %b17 = xor i32 %o16, %a17
  %a18 = add i32 %a17, %b17
  %l17 = shl i32 %b17, 16
  %r17 = lshr i32 %b17, 16
  %o17 = or i32 %l17, %r17
  %b18 = xor i32 %o17, %a18
  %a19 = add i32 %a18, %b18
  %l18 = shl i32 %b18, 24
  %r18 = lshr i32 %b18, 8
  %o18 = or i32 %l18, %r18
  %b19 = xor i32 %o18, %a19
  %a20 = add i32 %a19, %k1
  %t3 = add i32 %k2, 4
  %b20 = add i32 %b19, %t3
  %a21 = add i32 %a20, %b20
  %l20 = shl i32 %b20, 13
  %r20 = lshr i32 %b20, 19
  %o20 = or i32 %l20, %r20
  %b21 = xor i32 %o20, %a21
  %a22 = add i32 %a21, %b21
  %l21 = shl i32 %b21, 15
  %r21 = lshr i32 %b21, 17
  %o21 = or i32 %l21, %r21
  %b22 = xor i32 %o21, %a22
  %a23 = add i32 %a22, %b22
  %l22 = shl i32 %b22, 26
  %r22 = lshr i32 %b22, 6
  %o22 = or i32 %l22, %r22
  %b23 = xor i32 %o22, %a23
  %a24 = add i32 %a23, %b23
  %l23 = shl i32 %b23, 6
  %r23 = lshr i32 %b23, 26
  %o23 = or i32 %l23, %r23
  %b24 = xor i32 %o23, %a24
  %a25 = add i32 %a24, %k2
  %t4 = add i32 %k0, 5
  %b25 = add i32 %b24, %t4
  %lo = zext i32 %a25 to i64
  %hi0 = zext i32 %b25 to i64
  %hi = shl i64 %hi0, 32
  %res = or i64 %hi, %lo
  ret i64 %res
}

define amdgpu_kernel void @threefry(ptr addrspace(1) noalias %out, i64 %key) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %wg, 6
  %i = add i32 %base, %tid
  %lo = zext i32 %i to i64
  %i7 = mul i32 %i, 7
  %h = zext i32 %i7 to i64
  %hs = shl i64 %h, 32
  %x = or i64 %hs, %lo
  %r = call i64 @tf(i64 %x, i64 %key)
  %p = getelementptr inbounds i64, ptr addrspace(1) %out, i64 %lo
  store i64 %r, ptr addrspace(1) %p, align 8
  ret void
}
attributes #0 = { nounwind "amdgpu-flat-work-group-size"="1,64" "amdgpu-no-implicitarg-ptr" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" }
attributes #1 = { nounwind alwaysinline }
