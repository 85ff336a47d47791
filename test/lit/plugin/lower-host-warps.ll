; tidal-lower-host on kernels with warp sync points: warp rounds
; (docs/cpu-target.md) when a divergent branch controls one of them. The
; collectives, activemask included, are sync points after the block
; barriers, in reverse post-order; each lane stores its mask before a
; collective. A round runs every thread from its resume point (one thread
; loop per point); if all then wait at one warp point, it is completed for
; the whole block; else each warp with lanes at a warp point asks
; __tidal_cpu_warp_step to complete a group and runs that group's lanes from
; there (one lane loop per warp point), until the warp settles; then the
; block is checked as in the block rounds. A kernel with only block barriers
; keeps the block rounds.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

; CHECK: @lastwarp.sync.kinds = private constant [3 x i8] c"\00\01\02"
; CHECK-NOT: @blockonly.sync.kinds

; CHECK-LABEL: define internal i32 @lastwarp.thread(
; CHECK:         %masks = getelementptr inbounds i8, ptr %frame, i64
; CHECK:       warp:
; CHECK:         store i32 -1, ptr %{{.+}}, align 4
; CHECK:         store i64 %{{.+}}, ptr %{{.+}}, align 8
; CHECK-NEXT:    ret i32 1
; CHECK:       masked:
; CHECK-NEXT:    ret i32 2
; CHECK:       sync.2.after:
; CHECK:         %[[M:.+]] = load i64, ptr %{{.+}}, align 8
; CHECK-NEXT:    %m = trunc i64 %[[M]] to i32

; CHECK-LABEL: define void @__tidal_block_lastwarp(
; CHECK:         %next = getelementptr inbounds i8, ptr %frame
; CHECK:       round:
; CHECK-NEXT:    %resume = phi i32 [ 0, %entry ], [ %{{.+}}, %together.next ], [ %{{.+}}, %round.next ]
; CHECK-NEXT:    %phase = phi i32
; CHECK:         switch i32 %resume, label %round.invalid [
; CHECK-NEXT:      i32 0, label %from.0
; CHECK-NEXT:      i32 1, label %from.1
; CHECK-NEXT:      i32 2, label %from.2
; CHECK-NEXT:    ]
; CHECK:         %reached = call i32 @lastwarp.thread(ptr %out, ptr %ctx, ptr null, ptr %frame, ptr null, i32 %tid.x, i32 %tid.y, i32 %tid.z, i32 0, i32 %phase), !llvm.access.group
; Every thread at one warp point: completed for the whole block at once.
; CHECK:       round.together:
; CHECK:         getelementptr inbounds i8, ptr @lastwarp.sync.kinds
; CHECK:       together.next:
; CHECK-NEXT:    xor i32 %phase, 1
; CHECK-NEXT:    br label %round
; CHECK:       warps:
; CHECK:         %warp.count = lshr i32 %{{.+}}, 5
; CHECK:       warp.body:
; CHECK:         %lanes = call i32 @llvm.umin.i32(i32 %{{.+}}, i32 32)
; CHECK:       warp.step:
; CHECK:         %outcome = call i32 @__tidal_cpu_warp_step(ptr %{{.+}}, i32 %lanes, ptr %{{.+}}, ptr %{{.+}}, ptr %{{.+}}, ptr @lastwarp.sync.kinds)
; CHECK-NEXT:    switch i32 %outcome, label %warp.settled [
; CHECK-NEXT:      i32 2, label %done
; CHECK-NEXT:      i32 16777217, label %warp.from.1
; CHECK-NEXT:      i32 16777218, label %warp.from.2
; CHECK-NEXT:    ]
; CHECK:       warp.from.1:
; CHECK:         %state = load i32, ptr %[[STATE:.+]], align 4
; CHECK-NEXT:    %[[RELEASED:.+]] = icmp eq i32 %state, 16777217
; CHECK-NEXT:    br i1 %[[RELEASED]], label %lane.resume, label %lane.next
; CHECK:         %reached{{.*}} = call i32 @lastwarp.thread(ptr %out, ptr %ctx, ptr null, ptr %frame, ptr null, i32 %x, i32 %y, i32 %z, i32 1, i32 %phase)
; CHECK-NEXT:    store i32 %reached{{.*}}, ptr %[[STATE]], align 4
; CHECK:       round.diverged:
; CHECK-NEXT:    call void @__tidal_cpu_barrier_error(ptr %ctx, ptr @lastwarp.name, ptr %next, i32 %nthreads, ptr @lastwarp.sync.names, i32 3)

; CHECK-LABEL: define void @__tidal_block_blockonly(
; CHECK-NOT:     __tidal_cpu_warp_step
; CHECK:         switch i32 %resume, label %round.invalid [
; CHECK-NOT:     __tidal_cpu_warp_step
; CHECK:         %{{.+}} = xor i32 %phase, 1
; CHECK-NEXT:    br label %round
; CHECK-NEXT:  }

; The first warp alone shuffles; lanes 0..15 of it then take activemask.
declare i32 @tidal.tid.x()
declare i32 @tidal.laneid()
declare i32 @tidal.activemask()
declare void @tidal.syncthreads()
declare i32 @tidal.shfl.down.i32(i32, i32, i32)

define void @lastwarp(ptr %out) {
entry:
  %t = call i32 @tidal.tid.x()
  %first = icmp ult i32 %t, 32
  br i1 %first, label %warp, label %done
warp:
  %d = call i32 @tidal.shfl.down.i32(i32 -1, i32 %t, i32 1)
  %lane = call i32 @tidal.laneid()
  %low = icmp ult i32 %lane, 16
  br i1 %low, label %masked, label %store
masked:
  %m = call i32 @tidal.activemask()
  br label %store
store:
  %r = phi i32 [ %d, %warp ], [ %m, %masked ]
  %t64 = zext i32 %t to i64
  %p = getelementptr i32, ptr %out, i64 %t64
  store i32 %r, ptr %p
  br label %done
done:
  ret void
}

define void @blockonly(ptr %out) {
  %t = call i32 @tidal.tid.x()
  call void @tidal.syncthreads()
  %t64 = zext i32 %t to i64
  %p = getelementptr i32, ptr %out, i64 %t64
  store i32 %t, ptr %p
  ret void
}
!tidal.kernels = !{!0, !1}
!0 = !{ptr @lastwarp}
!1 = !{ptr @blockonly}
