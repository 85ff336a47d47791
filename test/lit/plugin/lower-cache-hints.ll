; tidal-lower-memory-spaces on the cache-hinted accesses: PTX's
; ld.global.<op> / st.global.<op> as inline asm on the address in
; addrspace(1), with the register class of the value's type.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-memory-spaces -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx %s | llc -mtriple=nvptx64-nvidia-cuda -mcpu=sm_75 | FileCheck --check-prefix=PTX %s

target triple = "nvptx64-nvidia-cuda"

declare i32 @tidal.ld.ca.i32(ptr)
declare float @tidal.ld.cg.f32(ptr)
declare i64 @tidal.ld.cs.u64(ptr)
declare double @tidal.ld.lu.f64(ptr)
declare i32 @tidal.ld.cv.u32(ptr)
declare void @tidal.st.cg.i32(ptr, i32)
declare void @tidal.st.cs.f32(ptr, float)
declare void @tidal.st.wb.i64(ptr, i64)
declare void @tidal.st.wt.f64(ptr, double)

; Each load: its operator and type.
; CHECK-LABEL: define void @loads(
; CHECK: %[[G0:.*]] = addrspacecast ptr %p to ptr addrspace(1)
; CHECK: call i32 asm "ld.global.ca.b32 $0, [$1];", "=r,l"(ptr addrspace(1) %[[G0]])
; CHECK: call float asm "ld.global.cg.f32 $0, [$1];", "=f,l"(
; CHECK: call i64 asm "ld.global.cs.b64 $0, [$1];", "=l,l"(
; CHECK: call double asm "ld.global.lu.f64 $0, [$1];", "=d,l"(
; CHECK: call i32 asm sideeffect "ld.global.cv.b32 $0, [$1];", "=r,l"(
; CHECK-NOT: @tidal.
; PTX-LABEL: .entry loads(
; PTX: ld.global.ca.b32
; PTX: ld.global.cg.f32
; PTX: ld.global.cs.b64
; PTX: ld.global.lu.f64
; PTX: ld.global.cv.b32
define void @loads(ptr %p, ptr %o1, ptr %o2, ptr %o3, ptr %o4, ptr %o5) {
  %a = call i32 @tidal.ld.ca.i32(ptr %p)
  %b = call float @tidal.ld.cg.f32(ptr %p)
  %c = call i64 @tidal.ld.cs.u64(ptr %p)
  %d = call double @tidal.ld.lu.f64(ptr %p)
  %e = call i32 @tidal.ld.cv.u32(ptr %p)
  store i32 %a, ptr %o1
  store float %b, ptr %o2
  store i64 %c, ptr %o3
  store double %d, ptr %o4
  store i32 %e, ptr %o5
  ret void
}

; Each store: its operator, the value in its register class, a memory clobber.
; CHECK-LABEL: define void @stores(
; CHECK: call void asm sideeffect "st.global.cg.b32 [$0], $1;", "l,r,~{memory}"(ptr addrspace(1) %{{.*}}, i32 %i)
; CHECK: call void asm sideeffect "st.global.cs.f32 [$0], $1;", "l,f,~{memory}"(
; CHECK: call void asm sideeffect "st.global.wb.b64 [$0], $1;", "l,l,~{memory}"(
; CHECK: call void asm sideeffect "st.global.wt.f64 [$0], $1;", "l,d,~{memory}"(
; CHECK-NOT: @tidal.
; PTX-LABEL: .entry stores(
; PTX: st.global.cg.b32
; PTX: st.global.cs.f32
; PTX: st.global.wb.b64
; PTX: st.global.wt.f64
define void @stores(ptr %p, i32 %i, float %f, i64 %l, double %d) {
  call void @tidal.st.cg.i32(ptr %p, i32 %i)
  call void @tidal.st.cs.f32(ptr %p, float %f)
  call void @tidal.st.wb.i64(ptr %p, i64 %l)
  call void @tidal.st.wt.f64(ptr %p, double %d)
  ret void
}

!tidal.kernels = !{!0, !1}
!0 = !{ptr @loads}
!1 = !{ptr @stores}
