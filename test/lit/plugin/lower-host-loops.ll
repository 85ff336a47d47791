; The thread loops of __tidal_block_K: y innermost when more of K's accesses
; are contiguous along tid.y than along tid.x (a row-major a[x, y]), chosen
; at run time only for blocks of more than one row; and declared parallel
; (llvm.loop.parallel_accesses) for K's plain loads and stores, which the
; inlined calls of K.thread carry as an access group, unless K has atomics.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

declare i32 @tidal.tid.x()
declare i32 @tidal.tid.y()
declare ptr @tidal.shared.array(i64, i64)
declare i32 @tidal.atomic.add.i32(ptr, i32)

; a[x * n + y] = a[x * n + y] + 1: contiguous along y.
; CHECK-LABEL: define void @__tidal_block_rows(
; CHECK:         %[[ROWS:.*]] = icmp ugt i32 %ntid.y, 1
; CHECK-NEXT:    br i1 %[[ROWS]], label %y.innermost, label %x.innermost
; CHECK:       y.innermost:
; CHECK:       x.innermost:
; CHECK:       tid.y.body:
; CHECK-NEXT:    call i32 @rows.thread({{.*}}), !llvm.access.group ![[GROUP:[0-9]+]]
; CHECK-NEXT:    %tid.y.next = add nuw i32 %tid.y, 1
; CHECK-NEXT:    br label %tid.y.cond, !llvm.loop ![[LOOP:[0-9]+]]
; CHECK:         call i32 @rows.thread({{.*}}), !llvm.access.group ![[GROUP]]
define void @rows(ptr %a, i64 %n) {
  %tx = call i32 @tidal.tid.x()
  %ty = call i32 @tidal.tid.y()
  %x = zext i32 %tx to i64
  %y = zext i32 %ty to i64
  %row = mul i64 %x, %n
  %i = add i64 %row, %y
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p
  %w = fadd float %v, 1.0
  store float %w, ptr %p
  ret void
}

; a[y * n + x]: contiguous along x, the usual order only.
; CHECK-LABEL: define void @__tidal_block_columns(
; CHECK-NOT:     y.innermost
; CHECK:         call i32 @columns.thread({{.*}}), !llvm.access.group
; CHECK:         ret void
define void @columns(ptr %a, i64 %n) {
  %tx = call i32 @tidal.tid.x()
  %ty = call i32 @tidal.tid.y()
  %x = zext i32 %tx to i64
  %y = zext i32 %ty to i64
  %row = mul i64 %y, %n
  %i = add i64 %row, %x
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p
  ret void
}

; A shared-memory atomic becomes a plain load and store: no access group,
; its loop is left to LLVM's own dependence analysis.
; CHECK-LABEL: define void @__tidal_block_shared_atomic(
; CHECK:         call i32 @shared_atomic.thread(
; CHECK-NOT:     !llvm.access.group
; CHECK:         ret void
define void @shared_atomic(ptr %bins) {
  %s = call ptr @tidal.shared.array(i64 1024, i64 4)
  %tx = call i32 @tidal.tid.x()
  %bin = and i32 %tx, 7
  %i = zext i32 %bin to i64
  %p = getelementptr inbounds i32, ptr %s, i64 %i
  %old = call i32 @tidal.atomic.add.i32(ptr %p, i32 1)
  ret void
}

; CHECK: ![[LOOP]] = distinct !{![[LOOP]], ![[PARALLEL:[0-9]+]]}
; CHECK: ![[PARALLEL]] = !{!"llvm.loop.parallel_accesses", ![[GROUP]]}

!tidal.kernels = !{!0, !1, !2}
!0 = !{ptr @rows}
!1 = !{ptr @columns}
!2 = !{ptr @shared_atomic}
