; tidal-lower-host on a kernel with a barrier: K.thread becomes resumable
; (sync point k returns k, the entry switches on %resume), the value live
; across the barrier goes to the thread's frame slot, and the block entry
; runs rounds, one thread loop per resume point, reporting threads that
; reach different barriers.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

declare i32 @tidal.tid.x()
declare void @tidal.syncthreads()
declare ptr @tidal.shared.array(i64, i64)

; out[t] = shared[t ^ 1] + out[t] * v after every thread stored its
; out[t] * v (loaded before the barrier: kept in the frame; the thread index
; arithmetic is recomputed instead).
; CHECK-LABEL: define internal i32 @swap.thread(
; CHECK-SAME:    ptr %out, i32 %v, ptr %ctx, ptr %shared, ptr %frame, ptr %uniforms, i32 %tid.x, i32 %tid.y, i32 %tid.z, i32 %resume, i32 %phase)
; CHECK:       thread.entry:
; CHECK:         %sh = getelementptr inbounds i8, ptr %shared, i64 0
; CHECK:         %[[SLOT:.+]] = getelementptr inbounds i8, ptr %{{.+}}.frame, i64 %{{.+}}
; CHECK:         switch i32 %resume, label %resume.invalid [
; CHECK-NEXT:      i32 0, label %[[START:.+]]
; CHECK-NEXT:      i32 1, label %resume.1
; CHECK-NEXT:    ]
; CHECK:       [[START]]:
; CHECK:         %prod = mul i32 %x, %v
; CHECK:         store i32 %prod, ptr %[[SLOT]]
; CHECK:         ret i32 1
; CHECK:       resume.1:
; CHECK:         load i32, ptr %[[SLOT]]
; CHECK:         ret i32 -1
; CHECK-LABEL: define void @__tidal_block_swap(
; CHECK:         %shared = call ptr @__tidal_cpu_shared(ptr %ctx, i64 64, i32 0)
; CHECK:         %frame = call ptr @__tidal_cpu_frame(ptr %ctx, i64
; CHECK:       round:
; CHECK:         switch i32 %resume, label %round.invalid [
; CHECK-NEXT:      i32 0, label %from.0
; CHECK-NEXT:      i32 1, label %from.1
; CHECK-NEXT:    ]
; CHECK:         %reached = call i32 @swap.thread(ptr %out, i32 %v, ptr %ctx, ptr %shared, ptr %frame, ptr null, i32 %tid.x, i32 %tid.y, i32 %tid.z, i32 0, i32 %phase)
; CHECK:         %reached{{.*}} = call i32 @swap.thread(ptr %out, i32 %v, ptr %ctx, ptr %shared, ptr %frame, ptr null, i32 %tid.x{{.*}}, i32 %tid.y{{.*}}, i32 %tid.z{{.*}}, i32 1, i32 %phase)
; CHECK:       round.diverged:
; CHECK-NEXT:    call void @__tidal_cpu_barrier_error(ptr %ctx, ptr @swap.name, ptr %next, i32 %nthreads, ptr @swap.sync.names, i32 2)
; CHECK:       declare noalias ptr @__tidal_cpu_shared(ptr nocapture, i64, i32)
; CHECK:       declare noalias ptr @__tidal_cpu_frame(ptr nocapture, i64)
; CHECK-NOT:   @tidal.
define void @swap(ptr %out, i32 %v) {
  %sh = call ptr @tidal.shared.array(i64 16, i64 4)
  %t = call i32 @tidal.tid.x()
  %t64 = zext i32 %t to i64
  %in = getelementptr i32, ptr %out, i64 %t64
  %x = load i32, ptr %in
  %prod = mul i32 %x, %v
  %p = getelementptr i32, ptr %sh, i64 %t64
  store i32 %prod, ptr %p
  call void @tidal.syncthreads()
  %o = xor i64 %t64, 1
  %q = getelementptr i32, ptr %sh, i64 %o
  %w = load i32, ptr %q
  %sum = add i32 %w, %prod
  %r = getelementptr i32, ptr %out, i64 %t64
  store i32 %sum, ptr %r
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @swap}
