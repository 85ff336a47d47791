; tidal-lower-host on kernels whose threads may return before a barrier that
; others go on to (`if i >= n: return` before syncthreads): the rounds skip
; finished threads (finished.skip: a test of next[t] before each thread's
; call in the rounds from a sync point), a round whose threads are finished
; or at one block barrier goes on from there (round.partial), and
; syncthreads_count/and/or count only the threads that arrived (the block
; function stores their number at frame + 4, which `and` compares with).
; A kernel whose threads never return early (the tree reduction: the branch
; on the thread index joins before the barrier; n-body's tiles: every branch
; on the thread index joins before any barrier and before the end) gets the
; rounds unchanged.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -debug-only=tidal-lower-host -disable-output %s 2>&1 | FileCheck %s --check-prefix=DEBUG

declare i32 @tidal.tid.x()
declare void @tidal.syncthreads()
declare i32 @tidal.syncthreads.and(i32)
declare ptr @tidal.shared.array(i64, i64)

; DEBUG: 'early_return': a thread may finish while others go on to a sync point: the rounds skip finished threads
; DEBUG-NOT: 'reduction': a thread may finish
; DEBUG: 'all_arrived': a thread may finish while others go on to a sync point
; DEBUG-NOT: 'tiles': a thread may finish

; a[i] = 1 for the threads below 8, after a barrier the others never reach.
; CHECK-LABEL: define void @__tidal_block_early_return(
; CHECK:       from.1:
; CHECK:         %[[STATE:.+]] = load i32, ptr %{{.+}}
; CHECK-NEXT:    %[[FINISHED:.+]] = icmp eq i32 %[[STATE]], -1
; CHECK-NEXT:    br i1 %[[FINISHED]], label %finished.skip, label %thread.run
; CHECK:       round.next:
; CHECK-NEXT:    %resume.at = phi i32 [ %lowest.value, %round.agreed ], [ %highest.value, %partial.thread.end ]
; CHECK:       round.partial:
; CHECK:       round.report:
; CHECK-NEXT:    call void @__tidal_cpu_barrier_error(
define void @early_return(ptr %a) {
  %t = call i32 @tidal.tid.x()
  %idle = icmp uge i32 %t, 8
  br i1 %idle, label %exit, label %work
work:
  call void @tidal.syncthreads()
  %i = zext i32 %t to i64
  %p = getelementptr i32, ptr %a, i64 %i
  store i32 1, ptr %p
  br label %exit
exit:
  ret void
}

; for s = 128, 64, ..., 1: if t < s: buf[t] += buf[t + s]; syncthreads().
; CHECK-LABEL: define void @__tidal_block_reduction(
; CHECK-NOT:   finished.skip
; CHECK-NOT:   round.partial
; CHECK:       round.diverged:
; CHECK-NEXT:    call void @__tidal_cpu_barrier_error(
define void @reduction(ptr %out) {
entry:
  %buf = call ptr @tidal.shared.array(i64 1024, i64 4)
  %t = call i32 @tidal.tid.x()
  %t64 = zext i32 %t to i64
  br label %loop
loop:
  %s = phi i32 [ 128, %entry ], [ %half, %next ]
  %active = icmp ult i32 %t, %s
  br i1 %active, label %add, label %join
add:
  %ts = add i32 %t, %s
  %ts64 = zext i32 %ts to i64
  %q = getelementptr float, ptr %buf, i64 %ts64
  %v = load float, ptr %q
  %p = getelementptr float, ptr %buf, i64 %t64
  %w = load float, ptr %p
  %sum = fadd float %v, %w
  store float %sum, ptr %p
  br label %join
join:
  call void @tidal.syncthreads()
  br label %next
next:
  %half = lshr i32 %s, 1
  %more = icmp ne i32 %half, 0
  br i1 %more, label %loop, label %done
done:
  %first = load float, ptr %buf
  store float %first, ptr %out
  ret void
}

; syncthreads_and after some threads returned: the threads count the
; predicates of those that arrived, and `and` compares with their number
; (frame + 4), not with the block's thread count.
; CHECK-LABEL: define internal i32 @all_arrived.thread(
; CHECK:         %syncthreads.count = load i32, ptr %frame, align 64
; CHECK:         %[[ARRIVED_AT:.+]] = getelementptr inbounds i8, ptr %frame, i64 4
; CHECK-NEXT:    %syncthreads.arrived = load i32, ptr %[[ARRIVED_AT]], align 4
; CHECK-NEXT:    icmp eq i32 %syncthreads.count, %syncthreads.arrived
; CHECK-LABEL: define void @__tidal_block_all_arrived(
; CHECK:       reduce.thread.end:
; CHECK-NEXT:    %[[REDUCED:.+]] = load i32, ptr %count
; CHECK-NEXT:    store i32 %[[REDUCED]], ptr %frame, align 64
; CHECK-NEXT:    %[[HEADER:.+]] = getelementptr inbounds i8, ptr %frame, i64 4
; CHECK-NEXT:    %[[COUNTED:.+]] = load i32, ptr %arrived
; CHECK-NEXT:    store i32 %[[COUNTED]], ptr %[[HEADER]], align 4
define void @all_arrived(ptr %a, ptr %out) {
  %t = call i32 @tidal.tid.x()
  %idle = icmp uge i32 %t, 24
  br i1 %idle, label %exit, label %work
work:
  %i = zext i32 %t to i64
  %p = getelementptr i32, ptr %a, i64 %i
  %v = load i32, ptr %p
  %all = call i32 @tidal.syncthreads.and(i32 %v)
  %o = getelementptr i32, ptr %out, i64 %i
  store i32 %all, ptr %o
  br label %exit
exit:
  ret void
}

!tidal.kernels = !{!0, !1, !2, !3}
!0 = !{ptr @early_return}
!1 = !{ptr @reduction}
!2 = !{ptr @all_arrived}
!3 = !{ptr @tiles}

; n-body's shape: `if t < n: x = pos[t]` joins before the loop over tiles,
; whose trip count (n, a parameter) may be 0, so a walk from that branch
; reaches the end as well as the barriers; but every thread leaves the
; branch at its join, and the loop's branches are uniform: no thread
; finishes while another waits, the rounds test no next[t].
; CHECK-LABEL: define void @__tidal_block_tiles(
; CHECK-NOT:   finished.skip
; CHECK-NOT:   round.partial
; CHECK:       round.diverged:
; CHECK-NEXT:    call void @__tidal_cpu_barrier_error(
define void @tiles(ptr %pos, ptr %acc, i32 %n) {
entry:
  %buf = call ptr @tidal.shared.array(i64 512, i64 4)
  %t = call i32 @tidal.tid.x()
  %t64 = zext i32 %t to i64
  %inside = icmp ult i32 %t, %n
  br i1 %inside, label %own, label %start
own:
  %p = getelementptr float, ptr %pos, i64 %t64
  %mine = load float, ptr %p
  br label %start
start:
  %x = phi float [ %mine, %own ], [ 0.0, %entry ]
  %any = icmp sgt i32 %n, 0
  br i1 %any, label %loop, label %done
loop:
  %base = phi i32 [ 0, %start ], [ %next.base, %loop ]
  %sum = phi float [ %x, %start ], [ %sum.next, %loop ]
  %slot = getelementptr float, ptr %buf, i64 %t64
  store float %sum, ptr %slot
  call void @tidal.syncthreads()
  %first = load float, ptr %buf
  %sum.next = fadd float %sum, %first
  call void @tidal.syncthreads()
  %next.base = add i32 %base, 128
  %more = icmp slt i32 %next.base, %n
  br i1 %more, label %loop, label %done
done:
  %result = phi float [ %x, %start ], [ %sum.next, %loop ]
  br i1 %inside, label %write, label %exit
write:
  %out = getelementptr float, ptr %acc, i64 %t64
  store float %result, ptr %out
  br label %exit
exit:
  ret void
}
