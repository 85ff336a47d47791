; The research example's pass (examples/research/CountMemoryAccesses.cpp,
; built by make build into build/examples/research): before each access
; through an array parameter other than counts, the thread's counter is
; incremented; counts itself and locals are not counted.
; RUN: opt -load-pass-plugin=%research_plugin -passes=count-memory-accesses -S %s | FileCheck %s

; CHECK-LABEL: define void @k(
; The thread's slots: counts[2t] (loads), counts[2t + 1] (stores), or a
; local pair past the end of counts.
; CHECK:      %[[BLOCK:.*]] = call i32 @tidal.ctaid.x()
; CHECK:      %[[SIZE:.*]] = call i32 @tidal.ntid.x()
; CHECK:      %[[TID:.*]] = call i32 @tidal.tid.x()
; CHECK:      %count.spare = alloca i64, i64 2
; CHECK:      %count.slots = select i1 %{{.*}}, ptr %{{.*}}, ptr %count.spare
; The load of a[i]: counter 0 + 1 first.
; CHECK:      %[[LOADS:.*]] = getelementptr i64, ptr %count.slots, i64 0
; CHECK-NEXT: %[[N:.*]] = load i64, ptr %[[LOADS]]
; CHECK-NEXT: %[[N1:.*]] = add i64 %[[N]], 1
; CHECK-NEXT: store i64 %[[N1]], ptr %[[LOADS]]
; CHECK-NEXT: %v = load float, ptr %a.elem
; The store to b[i]: counter 1.
; CHECK:      %[[STORES:.*]] = getelementptr i64, ptr %count.slots, i64 1
; CHECK:      store float %v, ptr %b.elem
; The local's store is not counted.
; CHECK-NEXT: store float %v, ptr %local
; CHECK-NEXT: ret void
define void @k(ptr %a, i64 %a.shape.0, i64 %a.stride.0, ptr %b, i64 %b.shape.0, i64 %b.stride.0, ptr %counts, i64 %counts.shape.0, i64 %counts.stride.0) {
entry:
  %local = alloca float
  %tid.x = call i32 @tidal.tid.x()
  %i = zext i32 %tid.x to i64
  %a.elem = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %a.elem
  %b.elem = getelementptr inbounds float, ptr %b, i64 %i
  store float %v, ptr %b.elem
  store float %v, ptr %local
  ret void
}

; A kernel without a counts parameter is left as it is.
; CHECK-LABEL: define void @uncounted(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    store float 0.000000e+00, ptr %out
define void @uncounted(ptr %out) {
entry:
  store float 0.0, ptr %out
  ret void
}

declare i32 @tidal.tid.x()

!tidal.kernels = !{!0, !1}
!0 = !{ptr @k}
!1 = !{ptr @uncounted}
