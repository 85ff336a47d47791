; tidal-vectorise-thread-nests (O3 runs it at the vectoriser's start): a
; block function's thread loop whose body is a loop carrying a per-thread
; floating-point sum (n-body's `for k in range(BODY_TILE): ax += ...`) asks
; the outer-loop vectoriser for it (llvm.loop.vectorize.enable), which then
; runs W threads at once, each lane adding in its own order; loops that
; vectoriser would not take (a min/max of the threads' records, a branch
; on the thread, an inner trip count per thread) or that the inner-loop
; vectoriser takes (an integer sum) are left alone.
; RUN: opt -load-pass-plugin=%plugin -passes='function(tidal-vectorise-thread-nests)' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes='function(tidal-vectorise-thread-nests,loop-vectorize)' -enable-vplan-native-path -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S %s | FileCheck %s --check-prefix=VECTOR
; tidal-scalarise-splat-inductions (O3 runs it last) then makes the inner
; counter, which that vectoriser widens to a vector of equal lanes, one
; scalar again: tile[k] is one load, broadcast, instead of a gather.
; RUN: opt -load-pass-plugin=%plugin -passes='function(tidal-vectorise-thread-nests,loop-vectorize,tidal-scalarise-splat-inductions)' -enable-vplan-native-path -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S %s | FileCheck %s --check-prefix=SCALAR

declare float @llvm.sqrt.f32(float)
declare i64 @llvm.smin.i64(i64, i64)

; acc[t] += sqrt(tile[k]) for k < 128: marked, and vectorised across the threads.
; CHECK-LABEL: define void @__tidal_block_sums(
; CHECK:         br i1 %t.done, label %exit, label %thread, !llvm.loop ![[SUMS:[0-9]+]]
; VECTOR-LABEL: define void @__tidal_block_sums(
; VECTOR:         call <8 x float> @llvm.sqrt.v8f32(
; SCALAR-LABEL: define void @__tidal_block_sums(
; SCALAR:       k.loop1:
; SCALAR-NEXT:    %[[K:.+]] = phi i64 [ 0, %vector.body ], [ %[[K_NEXT:.+]], %k.loop1 ]
; SCALAR-NEXT:    %[[SUM:.+]] = phi <8 x float>
; SCALAR-NEXT:    %[[AT:.+]] = getelementptr inbounds float, ptr %tile, i64 %[[K]]
; SCALAR-NEXT:    %[[TERM:.+]] = load float, ptr %[[AT]], align 4
; SCALAR-NOT:     masked.gather
; SCALAR:         %[[K_NEXT]] = add nuw nsw i64 %[[K]], 1
; SCALAR-NEXT:    icmp eq i64 %[[K_NEXT]], 128
define void @__tidal_block_sums(ptr noalias %acc, ptr noalias %tile, i64 %n, i64 %m) {
entry:
  br label %thread
thread:
  %t = phi i64 [ 0, %entry ], [ %t.next, %thread.end ]
  %slot = getelementptr inbounds float, ptr %acc, i64 %t
  %start = load float, ptr %slot, align 4, !llvm.access.group !0
  br label %k.loop
k.loop:
  %k = phi i64 [ 0, %thread ], [ %k.next, %k.loop ]
  %sum = phi float [ %start, %thread ], [ %sum.next, %k.loop ]
  %p = getelementptr inbounds float, ptr %tile, i64 %k
  %v = load float, ptr %p, align 4, !llvm.access.group !0
  %r = call float @llvm.sqrt.f32(float %v)
  %sum.next = fadd float %sum, %r
  %k.next = add nuw nsw i64 %k, 1
  %k.done = icmp eq i64 %k.next, 128
  br i1 %k.done, label %k.end, label %k.loop
k.end:
  store float %sum.next, ptr %slot, align 4, !llvm.access.group !0
  br label %thread.end
thread.end:
  %t.next = add nuw nsw i64 %t, 1
  %t.done = icmp eq i64 %t.next, %n
  br i1 %t.done, label %exit, label %thread, !llvm.loop !1
exit:
  ret void
}

; The same sum in integers: the inner-loop vectoriser may reorder it.
; CHECK-LABEL: define void @__tidal_block_integer_sums(
; CHECK:         br i1 %t.done, label %exit, label %thread, !llvm.loop ![[INTEGER:[0-9]+]]
define void @__tidal_block_integer_sums(ptr noalias %acc, ptr noalias %tile, i64 %n, i64 %m) {
entry:
  br label %thread
thread:
  %t = phi i64 [ 0, %entry ], [ %t.next, %thread.end ]
  %slot = getelementptr inbounds i32, ptr %acc, i64 %t
  %start = load i32, ptr %slot, align 4, !llvm.access.group !0
  br label %k.loop
k.loop:
  %k = phi i64 [ 0, %thread ], [ %k.next, %k.loop ]
  %sum = phi i32 [ %start, %thread ], [ %sum.next, %k.loop ]
  %p = getelementptr inbounds i32, ptr %tile, i64 %k
  %v = load i32, ptr %p, align 4, !llvm.access.group !0
  %r = mul i32 %v, %v
  %sum.next = add i32 %sum, %r
  %k.next = add nuw nsw i64 %k, 1
  %k.done = icmp eq i64 %k.next, 128
  br i1 %k.done, label %k.end, label %k.loop
k.end:
  store i32 %sum.next, ptr %slot, align 4, !llvm.access.group !0
  br label %thread.end
thread.end:
  %t.next = add nuw nsw i64 %t, 1
  %t.done = icmp eq i64 %t.next, %n
  br i1 %t.done, label %exit, label %thread, !llvm.loop !2
exit:
  ret void
}

; Thread t adds t terms: the lanes would leave the inner loop apart.
; CHECK-LABEL: define void @__tidal_block_thread_trips(
; CHECK:         br i1 %t.done, label %exit, label %thread, !llvm.loop ![[TRIPS:[0-9]+]]
; VECTOR-LABEL: define void @__tidal_block_thread_trips(
; VECTOR-NOT:     <8 x float>
; VECTOR:       exit:
define void @__tidal_block_thread_trips(ptr noalias %acc, ptr noalias %tile, i64 %n, i64 %m) {
entry:
  br label %thread
thread:
  %t = phi i64 [ 0, %entry ], [ %t.next, %thread.end ]
  %slot = getelementptr inbounds float, ptr %acc, i64 %t
  %start = load float, ptr %slot, align 4, !llvm.access.group !0
  br label %k.loop
k.loop:
  %k = phi i64 [ 0, %thread ], [ %k.next, %k.loop ]
  %sum = phi float [ %start, %thread ], [ %sum.next, %k.loop ]
  %p = getelementptr inbounds float, ptr %tile, i64 %k
  %v = load float, ptr %p, align 4, !llvm.access.group !0
  %r = call float @llvm.sqrt.f32(float %v)
  %sum.next = fadd float %sum, %r
  %k.next = add nuw nsw i64 %k, 1
  %k.done = icmp eq i64 %k.next, %t
  br i1 %k.done, label %k.end, label %k.loop
k.end:
  store float %sum.next, ptr %slot, align 4, !llvm.access.group !0
  br label %thread.end
thread.end:
  %t.next = add nuw nsw i64 %t, 1
  %t.done = icmp eq i64 %t.next, %n
  br i1 %t.done, label %exit, label %thread, !llvm.loop !3
exit:
  ret void
}

; Only the threads below m add: a branch the outer-loop vectoriser does not predicate.
; CHECK-LABEL: define void @__tidal_block_guarded(
; CHECK:         br i1 %t.done, label %exit, label %thread, !llvm.loop ![[GUARDED:[0-9]+]]
define void @__tidal_block_guarded(ptr noalias %acc, ptr noalias %tile, i64 %n, i64 %m) {
entry:
  br label %thread
thread:
  %t = phi i64 [ 0, %entry ], [ %t.next, %thread.end ]
  %slot = getelementptr inbounds float, ptr %acc, i64 %t
  %start = load float, ptr %slot, align 4, !llvm.access.group !0
  %inside = icmp ult i64 %t, %m
  br i1 %inside, label %k.loop, label %thread.end
k.loop:
  %k = phi i64 [ 0, %thread ], [ %k.next, %k.loop ]
  %sum = phi float [ %start, %thread ], [ %sum.next, %k.loop ]
  %p = getelementptr inbounds float, ptr %tile, i64 %k
  %v = load float, ptr %p, align 4, !llvm.access.group !0
  %r = call float @llvm.sqrt.f32(float %v)
  %sum.next = fadd float %sum, %r
  %k.next = add nuw nsw i64 %k, 1
  %k.done = icmp eq i64 %k.next, 128
  br i1 %k.done, label %k.end, label %k.loop
k.end:
  store float %sum.next, ptr %slot, align 4, !llvm.access.group !0
  br label %thread.end
thread.end:
  %t.next = add nuw nsw i64 %t, 1
  %t.done = icmp eq i64 %t.next, %n
  br i1 %t.done, label %exit, label %thread, !llvm.loop !4
exit:
  ret void
}

; A round that records where its threads stopped (a min over the threads).
; CHECK-LABEL: define void @__tidal_block_records(
; CHECK:         br i1 %t.done, label %exit, label %thread, !llvm.loop ![[RECORDS:[0-9]+]]
define void @__tidal_block_records(ptr noalias %acc, ptr noalias %tile, i64 %n, i64 %m) {
entry:
  br label %thread
thread:
  %t = phi i64 [ 0, %entry ], [ %t.next, %thread.end ]
  %low = phi i64 [ 0, %entry ], [ %low.next, %thread.end ]
  %slot = getelementptr inbounds float, ptr %acc, i64 %t
  %start = load float, ptr %slot, align 4, !llvm.access.group !0
  br label %k.loop
k.loop:
  %k = phi i64 [ 0, %thread ], [ %k.next, %k.loop ]
  %sum = phi float [ %start, %thread ], [ %sum.next, %k.loop ]
  %p = getelementptr inbounds float, ptr %tile, i64 %k
  %v = load float, ptr %p, align 4, !llvm.access.group !0
  %r = call float @llvm.sqrt.f32(float %v)
  %sum.next = fadd float %sum, %r
  %k.next = add nuw nsw i64 %k, 1
  %k.done = icmp eq i64 %k.next, 128
  br i1 %k.done, label %k.end, label %k.loop
k.end:
  store float %sum.next, ptr %slot, align 4, !llvm.access.group !0
  br label %thread.end
thread.end:
  %low.next = call i64 @llvm.smin.i64(i64 %low, i64 %t)
  %t.next = add nuw nsw i64 %t, 1
  %t.done = icmp eq i64 %t.next, %n
  br i1 %t.done, label %exit, label %thread, !llvm.loop !5
exit:
  store i64 %low.next, ptr %acc, align 8
  ret void
}

; CHECK-DAG: ![[SUMS]] = distinct !{![[SUMS]], ![[PARALLEL:[0-9]+]], ![[ENABLE:[0-9]+]]}
; CHECK-DAG: ![[ENABLE]] = !{!"llvm.loop.vectorize.enable", i32 1}
; CHECK-DAG: ![[INTEGER]] = distinct !{![[INTEGER]], ![[PARALLEL]]}
; CHECK-DAG: ![[TRIPS]] = distinct !{![[TRIPS]], ![[PARALLEL]]}
; CHECK-DAG: ![[GUARDED]] = distinct !{![[GUARDED]], ![[PARALLEL]]}
; CHECK-DAG: ![[RECORDS]] = distinct !{![[RECORDS]], ![[PARALLEL]]}
!0 = distinct !{}
!1 = distinct !{!1, !6}
!2 = distinct !{!2, !6}
!3 = distinct !{!3, !6}
!4 = distinct !{!4, !6}
!5 = distinct !{!5, !6}
!6 = !{!"llvm.loop.parallel_accesses", !0}
