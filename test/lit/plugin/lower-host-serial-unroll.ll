; A thread loop that stays scalar (the kernel has atomics, so K.thread's
; accesses get no access group) is unrolled by 4 when K.thread is small and
; has no loop of its own (serialThreadUnroll, docs/cpu-speed.md): the
; innermost thread loop carries llvm.loop.unroll.count 4, with the
; vectoriser's followup attributes saying that a loop it vectorises is not
; unrolled again. Loops with an access group carry only that.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-host -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S %s | FileCheck %s --check-prefix=O3

declare i32 @tidal.tid.x()
declare i32 @tidal.atomic.add.i32(ptr, i32)

; bins[x[tid]] += 1: only the tid.x loops (of the atomic and the alone
; block functions) are marked; tid.y and tid.z are not.
; CHECK-LABEL: define internal void @__tidal_block_hist.atomic(
; CHECK: br label %tid.x.cond, !llvm.loop ![[UNROLLED:[0-9]+]]
; CHECK: tid.x.end:
; CHECK-NEXT: %tid.y.next =
; CHECK-NEXT: br label %tid.y.cond{{$}}
; CHECK-LABEL: define internal void @__tidal_block_hist.alone(
; CHECK: br label %tid.x.cond, !llvm.loop ![[UNROLLED2:[0-9]+]]
; After optimisation: four atomics per iteration of the atomic block
; function's loop, then the remainder loop with one.
; O3-LABEL: define {{.*}}void @__tidal_block_hist(
; O3: tid.x.body.i{{[0-9]*}}:
; O3-COUNT-4: atomicrmw add ptr
; O3-NOT: atomicrmw
; O3: .epil:
; O3: atomicrmw add ptr
; O3-NOT: atomicrmw
; O3: ret void
define void @hist(ptr %x, i64 %x.shape.0, i64 %x.stride.0, ptr %bins, i64 %bins.shape.0, i64 %bins.stride.0) {
  %tid = call i32 @tidal.tid.x()
  %i = zext i32 %tid to i64
  %xp = getelementptr inbounds i32, ptr %x, i64 %i
  %v = load i32, ptr %xp, align 4
  %k = sext i32 %v to i64
  %bp = getelementptr inbounds i32, ptr %bins, i64 %k
  %old = call i32 @tidal.atomic.add.i32(ptr %bp, i32 1)
  ret void
}

; A loop in K.thread: its thread loops are left to LLVM.
; CHECK-LABEL: define internal void @__tidal_block_looped.atomic(
; CHECK-NOT: !llvm.loop
; CHECK-LABEL: define internal i32 @looped.thread.alone(
define void @looped(ptr %x, i64 %x.shape.0, i64 %x.stride.0, ptr %bins, i64 %bins.shape.0, i64 %bins.stride.0, i64 %n) {
entry:
  %tid = call i32 @tidal.tid.x()
  br label %loop
loop:
  %j = phi i64 [ 0, %entry ], [ %j1, %loop ]
  %xp = getelementptr inbounds i32, ptr %x, i64 %j
  %v = load i32, ptr %xp, align 4
  %k = sext i32 %v to i64
  %bp = getelementptr inbounds i32, ptr %bins, i64 %k
  %old = call i32 @tidal.atomic.add.i32(ptr %bp, i32 1)
  %j1 = add i64 %j, 1
  %c = icmp slt i64 %j1, %n
  br i1 %c, label %loop, label %done
done:
  ret void
}

; Plain accesses: the access group on every thread loop, no unroll count.
; CHECK-LABEL: define void @__tidal_block_scale(
; CHECK: br label %tid.x.cond, !llvm.loop ![[PX:[0-9]+]]
; CHECK: br label %tid.y.cond, !llvm.loop ![[PY:[0-9]+]]
; CHECK: br label %tid.z.cond, !llvm.loop ![[PZ:[0-9]+]]
define void @scale(ptr %x, i64 %x.shape.0, i64 %x.stride.0) {
  %tid = call i32 @tidal.tid.x()
  %i = zext i32 %tid to i64
  %xp = getelementptr inbounds float, ptr %x, i64 %i
  %v = load float, ptr %xp, align 4
  %w = fmul float %v, 2.0
  store float %w, ptr %xp, align 4
  ret void
}

; CHECK: ![[UNROLLED]] = distinct !{![[UNROLLED]], ![[COUNT:[0-9]+]], ![[FOLLOWUP:[0-9]+]]}
; CHECK-NEXT: ![[COUNT]] = !{!"llvm.loop.unroll.count", i32 4}
; CHECK-NEXT: ![[FOLLOWUP]] = !{!"llvm.loop.vectorize.followup_all", ![[DONE:[0-9]+]]}
; CHECK-NEXT: ![[DONE]] = !{!"llvm.loop.isvectorized", i32 1}
; CHECK-NEXT: ![[UNROLLED2]] = distinct !{![[UNROLLED2]], ![[COUNT]], ![[FOLLOWUP]]}
; CHECK: ![[PX]] = distinct !{![[PX]], ![[PARALLEL:[0-9]+]]}
; CHECK-NEXT: ![[PARALLEL]] = !{!"llvm.loop.parallel_accesses", !{{[0-9]+}}}
; CHECK-NEXT: ![[PY]] = distinct !{![[PY]], ![[PARALLEL]]}
; CHECK-NEXT: ![[PZ]] = distinct !{![[PZ]], ![[PARALLEL]]}

!tidal.kernels = !{!0, !1, !2}
!0 = !{ptr @hist}
!1 = !{ptr @looped}
!2 = !{ptr @scale}
