; Rounds with one outcome: when every thread of a round from resume point r
; that does not fail stops at the same sync point (or all finish), the
; block function keeps no record per thread (no next[t] store, no min/max):
; each thread's call only says whether it failed and where it stopped, and
; the round goes on from where the last thread stopped. The tree
; reduction's rounds are such: `while s > 0` is uniform (s is a uniform
; slot), `if tid < s:` joins before the barrier. A round whose threads may
; stop at different barriers keeps the record, and its report.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

; CHECK-LABEL: define void @__tidal_block_reduction(
; CHECK-NOT:     @llvm.smin
; CHECK:       from.2:
; CHECK-NEXT:    store i1 false, ptr %failed
; CHECK:         %[[R:reached[0-9]*]] = call i32 @reduction.thread({{.*}}, i32 2, i32 %phase)
; CHECK-NEXT:    store i32 %[[R]], ptr %highest
; CHECK-NEXT:    icmp slt i32 %[[R]], -1
; CHECK-NOT:     @llvm.smin
; CHECK:         select i1 {{.*}}, i32 -2, i32 %reached.last
; CHECK-NOT:     @llvm.smin
; CHECK:       ret void
declare i32 @tidal.tid.x()
declare i32 @tidal.ntid.x()
declare i32 @tidal.ctaid.x()
declare void @tidal.syncthreads()
declare ptr @tidal.shared.array(i64, i64)

define void @reduction(ptr %x, i64 %n, ptr %partial) {
entry:
  %buf = call ptr @tidal.shared.array(i64 1024, i64 4)
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %bdim = call i32 @tidal.ntid.x()
  %tid64 = zext i32 %tid to i64
  %base = mul i32 %bid, %bdim
  %i = add i32 %base, %tid
  %i64 = zext i32 %i to i64
  %xp = getelementptr float, ptr %x, i64 %i64
  %xv = load float, ptr %xp
  %bp = getelementptr float, ptr %buf, i64 %tid64
  store float %xv, ptr %bp
  call void @tidal.syncthreads()
  br label %loop
loop:
  %s = phi i32 [ 128, %entry ], [ %s.next, %step ]
  %more = icmp sgt i32 %s, 0
  br i1 %more, label %body, label %done
body:
  %in = icmp ult i32 %tid, %s
  br i1 %in, label %add, label %step
add:
  %far = add i32 %tid, %s
  %far64 = zext i32 %far to i64
  %fp = getelementptr float, ptr %buf, i64 %far64
  %a = load float, ptr %fp
  %b = load float, ptr %bp
  %sum = fadd float %a, %b
  store float %sum, ptr %bp
  br label %step
step:
  call void @tidal.syncthreads()
  %s.next = ashr i32 %s, 1
  br label %loop
done:
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %write, label %exit
write:
  %r = load float, ptr %buf
  %bid64 = zext i32 %bid to i64
  %pp = getelementptr float, ptr %partial, i64 %bid64
  store float %r, ptr %pp
  br label %exit
exit:
  ret void
}

; Threads below 8 stop at one barrier, the others at another: the round
; from the first barrier records where each stopped (next[t]) and its
; lowest and highest point, and reports them when they differ.
; CHECK-LABEL: define void @__tidal_block_split(
; CHECK:       from.0:
; CHECK-NEXT:    store i1 false, ptr %failed
; CHECK:       from.1:
; CHECK-NOT:     store i1 false, ptr %failed
; CHECK:         %[[S:reached[0-9]*]] = call i32 @split.thread({{.*}}, i32 1, i32 %phase)
; CHECK-NEXT:    store i32 %[[S]], ptr %{{.*}}, align 4, !llvm.access.group
; CHECK:         call i32 @llvm.smin.i32(i32 %{{.*}}, i32 %[[S]])
; CHECK:         call i32 @llvm.smax.i32(i32 %{{.*}}, i32 %[[S]])
; CHECK:         call void @__tidal_cpu_barrier_error(
define void @split(ptr %out) {
entry:
  %buf = call ptr @tidal.shared.array(i64 256, i64 4)
  %tid = call i32 @tidal.tid.x()
  %tid64 = zext i32 %tid to i64
  %bp = getelementptr float, ptr %buf, i64 %tid64
  store float 1.0, ptr %bp
  call void @tidal.syncthreads()
  %few = icmp ult i32 %tid, 8
  br i1 %few, label %left, label %right
left:
  call void @tidal.syncthreads()
  br label %join
right:
  call void @tidal.syncthreads()
  br label %join
join:
  %v = load float, ptr %buf
  %op = getelementptr float, ptr %out, i64 %tid64
  store float %v, ptr %op
  ret void
}

; Threads that may finish before a barrier (`if tid >= n: return`): the
; rounds keep their records (later rounds skip the finished threads).
; CHECK-LABEL: define void @__tidal_block_finishing(
; CHECK-NOT:     store i1 false, ptr %failed
; CHECK:         call i32 @llvm.smin.i32(
; CHECK:       ret void
define void @finishing(ptr %out, i32 %n) {
entry:
  %tid = call i32 @tidal.tid.x()
  %past = icmp uge i32 %tid, %n
  br i1 %past, label %exit, label %work
work:
  call void @tidal.syncthreads()
  %tid64 = zext i32 %tid to i64
  %op = getelementptr float, ptr %out, i64 %tid64
  store float 1.0, ptr %op
  br label %exit
exit:
  ret void
}

!tidal.kernels = !{!0, !1, !2}
!0 = !{ptr @reduction}
!1 = !{ptr @split}
!2 = !{ptr @finishing}
