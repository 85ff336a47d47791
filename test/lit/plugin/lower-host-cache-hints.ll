; tidal-lower-host on the cache-hinted accesses: plain aligned loads and
; stores (the host has no cache operators; the values are the same); ld.cv,
; which reads memory again each time, a volatile load.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

declare i32 @tidal.ld.ca.i32(ptr)
declare double @tidal.ld.cv.f64(ptr)
declare void @tidal.st.wt.f32(ptr, float)
declare void @tidal.st.cs.u64(ptr, i64)

; CHECK-LABEL: define internal i32 @hints.thread(
; CHECK: %a = load i32, ptr %p, align 4
; CHECK: %b = load volatile double, ptr %q, align 8
; CHECK: store float %f, ptr %q, align 4
; CHECK: store i64 %l, ptr %p, align 8
; CHECK-NOT: @tidal.
define void @hints(ptr %p, ptr %q, float %f, i64 %l, ptr %out) {
  %a = call i32 @tidal.ld.ca.i32(ptr %p)
  %b = call double @tidal.ld.cv.f64(ptr %q)
  call void @tidal.st.wt.f32(ptr %q, float %f)
  call void @tidal.st.cs.u64(ptr %p, i64 %l)
  store i32 %a, ptr %out
  store double %b, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @hints}
