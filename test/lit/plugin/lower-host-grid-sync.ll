; tidal-lower-host on a kernel with grid.sync(): the grid barrier is a sync
; point like syncthreads (K.thread returns its number there and resumes
; after it, values live across it in the frame); when every thread of the
; block is there, the block function calls __tidal_cpu_grid_sync(ctx), which
; waits for the other blocks of the cooperative launch, and leaves the block
; when it returns non-zero (a failure elsewhere). tidal.grid.group leaves
; nothing.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

declare i32 @tidal.tid.x()
declare void @tidal.grid.group()
declare void @tidal.grid.sync()

; CHECK-NOT: @tidal.grid
; CHECK-LABEL: define internal i32 @two_phases.thread(
; CHECK:         switch i32 %resume, label %resume.invalid [
; CHECK-NEXT:      i32 0, label %[[START:.+]]
; CHECK-NEXT:      i32 1, label %resume.1
; CHECK-NEXT:    ]
; CHECK:       [[START]]:
; CHECK:         ret i32 1
; CHECK:       resume.1:
; CHECK:         ret i32 -1
; CHECK-LABEL: define void @__tidal_block_two_phases(
; Threads that finished stay finished after a grid barrier (a GPU lets
; exited threads through it): later rounds skip them, and a round whose
; threads are finished or at the grid barrier goes on from there.
; CHECK:       finished.skip:
; CHECK:       round.next:
; CHECK-NEXT:    %resume.at = phi i32 [ %lowest.value, %round.agreed ], [ %highest.value, %partial.thread.end ]
; CHECK:       round.partial:
; CHECK:       grid.sync:
; CHECK-NEXT:    %[[SYNCED:.+]] = call i32 @__tidal_cpu_grid_sync(ptr %ctx)
; CHECK-NEXT:    %[[FAILED:.+]] = icmp ne i32 %[[SYNCED]], 0
; CHECK-NEXT:    br i1 %[[FAILED]], label %done, label %grid.synced
; CHECK: declare i32 @__tidal_cpu_grid_sync(ptr)
define void @two_phases(ptr %data, ptr %out) {
  call void @tidal.grid.group()
  %t = call i32 @tidal.tid.x()
  %i = zext i32 %t to i64
  %p = getelementptr i32, ptr %data, i64 %i
  store i32 %t, ptr %p
  call void @tidal.grid.sync()
  %q = getelementptr i32, ptr %out, i64 %i
  %v = load i32, ptr %data
  %w = add i32 %v, %t
  store i32 %w, ptr %q
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @two_phases}
