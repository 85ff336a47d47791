; splitIndexWraps (tidal-lower-host): a bounds check tests the index as given
; (`k u< n`) and wraps a negative one (k + n) only when that test fails, so
; that an index in range costs one compare. The failure still reports k.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-host -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S %s | FileCheck %s --check-prefix=HOST

@bounds.where = private unnamed_addr constant [33 x i8] c"kernel 'histogram', array 'bins'\00", align 1

; The histogram: bins[x[i]] += 1 (atomically) for i < x.size.
; CHECK-LABEL: define internal i32 @histogram.thread(
; CHECK:         [[K:%.*]] = sext i32 {{%.*}} to i64
; CHECK:         %index.in.range = icmp ult i64 [[K]], %bins.shape.0
; CHECK-NEXT:    br i1 %index.in.range, label %bounds.ok, label %index.negative, !prof
; CHECK:       bounds.fault:
; CHECK-NEXT:    call void @__tidal_cpu_bounds_error(ptr %ctx, ptr @bounds.where, i64 [[K]], i64 %bins.shape.0,
; CHECK:       index.negative:
; CHECK-NEXT:    [[NEGATIVE:%.*]] = icmp slt i64 [[K]], 0
; CHECK-NEXT:    [[SUM:%.*]] = add i64 [[K]], %bins.shape.0
; CHECK-NEXT:    [[WRAPPED:%.*]] = select i1 [[NEGATIVE]], i64 [[SUM]], i64 [[K]]
; CHECK-NEXT:    [[OUTSIDE:%.*]] = icmp uge i64 [[WRAPPED]], %bins.shape.0
; CHECK-NEXT:    br i1 [[OUTSIDE]], label %bounds.fault, label %bounds.ok
; CHECK:       bounds.ok:
; CHECK-NEXT:    %index = phi i64 [ [[K]], %if.then ], [ [[WRAPPED]], %index.negative ]
; CHECK-NEXT:    getelementptr inbounds i32, ptr %bins, i64 %index
; The failure report is a cold call (its path out of the hot loop).
; CHECK:       declare void @__tidal_cpu_bounds_error(ptr, ptr, i64, i64, i32, i32, i32, i32) [[HOOK:#[0-9]+]]
; CHECK:       attributes [[HOOK]] = { cold nounwind }

; Optimised: the thread loop's block for an element loads x[i], compares and
; adds; the wrap is in the block taken for k u>= n only. The guard i < x.size
; bounds the loop (tidal-bound-thread-loops): no test of i in the loop,
; which runs four threads per iteration (lower-host-serial-unroll.ll): the
; thread's index and the iteration count.
; HOST-LABEL: define dso_local void @__tidal_block_histogram(
; HOST:          %threads.any = icmp sgt i64 %x.shape.0
; HOST:        if.then.i.i:
; HOST-NEXT:     phi i64
; HOST-NEXT:     %niter = phi i64
; HOST-NEXT:     getelementptr
; HOST-NEXT:     [[X:%.*]] = load i32
; HOST-NEXT:     [[K:%.*]] = sext i32 [[X]] to i64
; HOST-NEXT:     %index.in.range.i.i = icmp ugt i64 %bins.shape.0.i, [[K]]
; HOST-NEXT:     br i1 %index.in.range.i.i, label %bounds.ok.i.i, label %index.negative.i.i
; HOST:        index.negative.i.i:
; HOST:          select
; HOST:        bounds.ok.i.i:
; HOST-NEXT:     %index.i.i = phi i64 [ [[K]], %if.then.i.i ]
; HOST-NEXT:     getelementptr inbounds i32, ptr %bins.i, i64 %index.i.i

define void @histogram(ptr %x, i64 %x.shape.0, i64 %x.stride.0, ptr %bins, i64 %bins.shape.0, i64 %bins.stride.0) {
entry:
  %tid.x = call i32 @tidal.tid.x()
  %0 = zext i32 %tid.x to i64
  %ctaid.x = call i32 @tidal.ctaid.x()
  %1 = zext i32 %ctaid.x to i64
  %ntid.x = call i32 @tidal.ntid.x()
  %2 = zext i32 %ntid.x to i64
  %3 = mul i64 %1, %2
  %grid.x = add i64 %3, %0
  %4 = icmp slt i64 %grid.x, %x.shape.0
  br i1 %4, label %if.then, label %if.end

if.then:
  %elem.addr = getelementptr inbounds i32, ptr %x, i64 %grid.x
  %5 = load i32, ptr %elem.addr, align 4
  %6 = sext i32 %5 to i64
  %7 = add i64 %6, %bins.shape.0
  %8 = icmp slt i64 %6, 0
  %9 = select i1 %8, i64 %7, i64 %6
  %10 = icmp uge i64 %9, %bins.shape.0
  br i1 %10, label %bounds.fault, label %bounds.ok

if.end:
  ret void

bounds.fault:
  call void @tidal.bounds.fault(ptr @bounds.where, i64 %6, i64 %bins.shape.0, i32 0)
  unreachable

bounds.ok:
  %elem.addr11 = getelementptr inbounds i32, ptr %bins, i64 %9
  %11 = call i32 @tidal.atomic.add.i32(ptr %elem.addr11, i32 1)
  br label %if.end
}

declare i32 @tidal.tid.x()
declare i32 @tidal.ctaid.x()
declare i32 @tidal.ntid.x()
declare void @tidal.bounds.fault(ptr, i64, i64, i32)
declare i32 @tidal.atomic.add.i32(ptr, i32)

!tidal.kernels = !{!0}
!0 = !{ptr @histogram}
