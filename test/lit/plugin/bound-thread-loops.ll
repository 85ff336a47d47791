; tidal-bound-thread-loops (O3 runs it at the vectoriser's start): a thread
; loop of a block function whose body runs only for the threads below a
; loop-invariant bound (`if tid < s:`, `if tid == 0:`) ends at that bound,
; min(n, max(s, 1)), instead of running every thread with a test (and, once
; vectorised, masked loads that reach past the shared array). Where s >= 1 is
; not known, the loop is entered only for s >= 1 and the test goes as well.
; RUN: opt -load-pass-plugin=%plugin -passes='function(tidal-bound-thread-loops)' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-host -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S %s | FileCheck %s --check-prefix=HOST

; The tree reduction's round, under its unswitched `while s > 0:`:
; for t in 0..n: if t < s: buf[t] += buf[t + s]. With s > 0 known there,
; the test goes too: every iteration of the bounded loop passes it, and the
; vectorised loop has no mask.
; CHECK-LABEL: define void @__tidal_block_tree(
; CHECK:       rounds:
; CHECK-NEXT:    [[ONE:%.*]] = call i64 @llvm.umax.i64(i64 %s, i64 1)
; CHECK-NEXT:    [[BOUND:%.*]] = call i64 @llvm.umin.i64(i64 [[ONE]], i64 %n)
; CHECK:       body:
; CHECK-NEXT:    %t = phi i64 [ 0, %rounds ], [ %next, %latch ]
; CHECK-NEXT:    %in = icmp ult i64 %t, %s
; CHECK-NEXT:    br label %work
; CHECK:       latch:
; CHECK-NEXT:    %next = add nuw nsw i64 %t, 1
; CHECK-NEXT:    %done = icmp eq i64 %next, [[BOUND]]
; HOST-LABEL: define void @__tidal_block_tree(
; HOST:          @llvm.umin.i64(
; HOST-NOT:      masked.load
; HOST:          load <8 x float>
; HOST-NOT:      masked.load
; HOST:        ret void
define void @__tidal_block_tree(ptr noalias %buf, i64 %n, i64 %s) {
entry:
  %positive = icmp sgt i64 %s, 0
  br i1 %positive, label %rounds, label %exit
rounds:
  br label %body
body:
  %t = phi i64 [ 0, %rounds ], [ %next, %latch ]
  %in = icmp ult i64 %t, %s
  br i1 %in, label %work, label %latch
work:
  %far = add i64 %t, %s
  %p = getelementptr float, ptr %buf, i64 %far
  %q = getelementptr float, ptr %buf, i64 %t
  %a = load float, ptr %p, !llvm.access.group !0
  %b = load float, ptr %q, !llvm.access.group !0
  %sum = fadd float %a, %b
  store float %sum, ptr %q, !llvm.access.group !0
  br label %latch
latch:
  %next = add nuw nsw i64 %t, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %body, !llvm.loop !1
exit:
  ret void
}

; The same after InstCombine has made `while s > 0` (s = r >> 1) into
; `r >= 2`: s >= 1 still known, the test still goes.
; CHECK-LABEL: define void @__tidal_block_halved(
; CHECK:       body:
; CHECK-NEXT:    %t = phi i64 [ 0, %rounds ], [ %next, %latch ]
; CHECK-NEXT:    %in = icmp ult i64 %t, %s
; CHECK-NEXT:    br label %work
define void @__tidal_block_halved(ptr noalias %buf, i64 %n, i64 %r) {
entry:
  %s = lshr i64 %r, 1
  %few = icmp ult i64 %r, 2
  br i1 %few, label %exit, label %rounds
rounds:
  br label %body
body:
  %t = phi i64 [ 0, %rounds ], [ %next, %latch ]
  %in = icmp ult i64 %t, %s
  br i1 %in, label %work, label %latch
work:
  %q = getelementptr float, ptr %buf, i64 %t
  store float 1.0, ptr %q, !llvm.access.group !0
  br label %latch
latch:
  %next = add nuw nsw i64 %t, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %body
exit:
  ret void
}

; `if t == 0:` (a signed i32 counter, extended): one iteration.
; CHECK-LABEL: define void @__tidal_fitted_block_first(
; CHECK:         [[ONE:%.*]] = call i32 @llvm.umax.i32(i32 1, i32 1)
; CHECK:         [[BOUND:%.*]] = call i32 @llvm.umin.i32(i32 [[ONE]], i32 %n)
; CHECK:         %done = icmp ult i32 %next, [[BOUND]]
define void @__tidal_fitted_block_first(ptr %out, i32 %n) {
entry:
  br label %body
body:
  %t = phi i32 [ 0, %entry ], [ %next, %latch ]
  %first = icmp eq i32 %t, 0
  br i1 %first, label %work, label %latch
work:
  store i32 7, ptr %out
  br label %latch
latch:
  %next = add nuw i32 %t, 1
  %done = icmp ult i32 %next, %n
  br i1 %done, label %body, label %exit
exit:
  ret void
}

; A signed test of the sign-extended counter, inverted (`t >= s` skips);
; s >= 1 not known: the loop is skipped for s < 1, its test goes.
; CHECK-LABEL: define void @__tidal_block_signed(
; CHECK:         [[ONE:%.*]] = call i64 @llvm.smax.i64(i64 %s, i64 1)
; CHECK:         [[WIDE:%.*]] = zext i32 %n to i64
; CHECK:         [[MIN:%.*]] = call i64 @llvm.umin.i64(i64 [[ONE]], i64 [[WIDE]])
; CHECK:         [[BOUND:%.*]] = trunc i64 [[MIN]] to i32
; CHECK-NEXT:    [[ANY:%.*]] = icmp sge i64 %s, 1
; CHECK-NEXT:    br i1 [[ANY]], label %body, label %exit
; CHECK:       body:
; CHECK:         br label %work
; CHECK:         %done = icmp eq i32 %next, [[BOUND]]
define void @__tidal_block_signed(ptr %out, i32 %n, i64 %s) {
entry:
  br label %body
body:
  %t = phi i32 [ 0, %entry ], [ %next, %latch ]
  %wide = sext i32 %t to i64
  %past = icmp sge i64 %wide, %s
  br i1 %past, label %latch, label %work
work:
  %p = getelementptr i32, ptr %out, i64 %wide
  store i32 1, ptr %p
  br label %latch
latch:
  %next = add nuw nsw i32 %t, 1
  %done = icmp eq i32 %next, %n
  br i1 %done, label %exit, label %body
exit:
  ret void
}

; Left alone: the threads past s still do something (a store in the latch).
; CHECK-LABEL: define void @__tidal_block_latch_store(
; CHECK-NOT:     umin
; CHECK:       ret void
define void @__tidal_block_latch_store(ptr %out, ptr %next.state, i64 %n, i64 %s) {
entry:
  br label %body
body:
  %t = phi i64 [ 0, %entry ], [ %next, %latch ]
  %in = icmp ult i64 %t, %s
  br i1 %in, label %work, label %latch
work:
  %p = getelementptr i32, ptr %out, i64 %t
  store i32 1, ptr %p
  br label %latch
latch:
  %r = getelementptr i32, ptr %next.state, i64 %t
  store i32 2, ptr %r
  %next = add nuw nsw i64 %t, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %body
exit:
  ret void
}

; Left alone: a value of the skipped iterations is used after the loop.
; CHECK-LABEL: define i64 @__tidal_block_live_out(
; CHECK-NOT:     umin
; CHECK:       ret i64
define i64 @__tidal_block_live_out(ptr %out, i64 %n, i64 %s) {
entry:
  br label %body
body:
  %t = phi i64 [ 0, %entry ], [ %next, %latch ]
  %in = icmp ult i64 %t, %s
  br i1 %in, label %work, label %latch
work:
  %p = getelementptr i32, ptr %out, i64 %t
  store i32 1, ptr %p
  br label %latch
latch:
  %next = add nuw nsw i64 %t, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %body
exit:
  %last = phi i64 [ %next, %latch ]
  ret i64 %last
}

; Left alone: a bound that changes in the loop, and a function that is not
; a block function.
; CHECK-LABEL: define void @__tidal_block_variant(
; CHECK-NOT:     umin
; CHECK:       ret void
define void @__tidal_block_variant(ptr %out, ptr %bounds, i64 %n) {
entry:
  br label %body
body:
  %t = phi i64 [ 0, %entry ], [ %next, %latch ]
  %bp = getelementptr i64, ptr %bounds, i64 %t
  %s = load i64, ptr %bp
  %in = icmp ult i64 %t, %s
  br i1 %in, label %work, label %latch
work:
  %p = getelementptr i32, ptr %out, i64 %t
  store i32 1, ptr %p
  br label %latch
latch:
  %next = add nuw nsw i64 %t, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %body
exit:
  ret void
}

; CHECK-LABEL: define void @other(
; CHECK-NOT:     umin
; CHECK:       ret void
define void @other(ptr %out, i64 %n, i64 %s) {
entry:
  br label %body
body:
  %t = phi i64 [ 0, %entry ], [ %next, %latch ]
  %in = icmp ult i64 %t, %s
  br i1 %in, label %work, label %latch
work:
  %p = getelementptr i32, ptr %out, i64 %t
  store i32 1, ptr %p
  br label %latch
latch:
  %next = add nuw nsw i64 %t, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %body
exit:
  ret void
}

!0 = distinct !{}
!1 = distinct !{!1, !2}
!2 = !{!"llvm.loop.parallel_accesses", !0}

; cuda.grid's guard, `if base + t < n:` (the histogram's `i < x.size`, saxpy's
; `i < n`): the bound is n - base, saturated; the loop runs for the block's
; threads below n and is skipped for a block wholly past n (its test goes).
; CHECK-LABEL: define void @__tidal_block_grid_guard(
; CHECK:         [[PAST:%.*]] = call i64 @llvm.ssub.sat.i64(i64 %n, i64 %base)
; CHECK-NEXT:    [[ONE:%.*]] = call i64 @llvm.smax.i64(i64 [[PAST]], i64 1)
; CHECK-NEXT:    [[BOUND:%.*]] = call i64 @llvm.umin.i64(i64 [[ONE]], i64 %ntid)
; CHECK-NEXT:    [[ANY:%.*]] = icmp sge i64 [[PAST]], 1
; CHECK-NEXT:    br i1 [[ANY]], label %body, label %exit
; CHECK:       body:
; CHECK:         br label %work
; CHECK:         %done = icmp eq i64 %next, [[BOUND]]
define void @__tidal_block_grid_guard(ptr %out, i64 %ntid, i64 %base, i64 %n) {
entry:
  br label %body
body:
  %t = phi i64 [ 0, %entry ], [ %next, %latch ]
  %i = add nuw nsw i64 %base, %t
  %in = icmp slt i64 %i, %n
  br i1 %in, label %work, label %latch
work:
  %p = getelementptr i32, ptr %out, i64 %i
  store i32 1, ptr %p
  br label %latch
latch:
  %next = add nuw nsw i64 %t, 1
  %done = icmp eq i64 %next, %ntid
  br i1 %done, label %exit, label %body
exit:
  ret void
}

; Unsigned (`i u< n`, the offset on the left): usub.sat, entered for a
; bound != 0. A value carried around the loop is used after it: skipping the
; loop gives it its value before the loop.
; CHECK-LABEL: define i64 @__tidal_block_grid_guard_carried(
; CHECK:         [[PAST:%.*]] = call i64 @llvm.usub.sat.i64(i64 %n, i64 %base)
; CHECK:         [[ANY:%.*]] = icmp ne i64 [[PAST]], 0
; CHECK-NEXT:    br i1 [[ANY]], label %body, label %exit
; CHECK:       {{^}}exit:
; CHECK-NEXT:    %sum.out = phi i64 [ 5, %entry ], [ %added, %exit.loopexit ]
define i64 @__tidal_block_grid_guard_carried(ptr %out, i64 %ntid, i64 %base, i64 %n) {
entry:
  br label %body
body:
  %t = phi i64 [ 0, %entry ], [ %next, %latch ]
  %sum = phi i64 [ 5, %entry ], [ %sum.next, %latch ]
  %i = add nuw i64 %t, %base
  %in = icmp ult i64 %i, %n
  br i1 %in, label %work, label %latch
work:
  %added = add i64 %sum, %i
  br label %latch
latch:
  %sum.next = phi i64 [ %added, %work ], [ %sum, %body ]
  %next = add nuw nsw i64 %t, 1
  %done = icmp eq i64 %next, %ntid
  br i1 %done, label %exit, label %body
exit:
  %sum.out = phi i64 [ %sum.next, %latch ]
  ret i64 %sum.out
}

; Left alone: `base + t` may wrap (no nsw for the signed test).
; CHECK-LABEL: define void @__tidal_block_grid_guard_wraps(
; CHECK-NOT:     sub.sat
; CHECK:       ret void
define void @__tidal_block_grid_guard_wraps(ptr %out, i64 %ntid, i64 %base, i64 %n) {
entry:
  br label %body
body:
  %t = phi i64 [ 0, %entry ], [ %next, %latch ]
  %i = add nuw i64 %base, %t
  %in = icmp slt i64 %i, %n
  br i1 %in, label %work, label %latch
work:
  %p = getelementptr i32, ptr %out, i64 %i
  store i32 1, ptr %p
  br label %latch
latch:
  %next = add nuw nsw i64 %t, 1
  %done = icmp eq i64 %next, %ntid
  br i1 %done, label %exit, label %body
exit:
  ret void
}

; A value carried by the outer (y) thread loop through the bounded one, used
; past it without a phi of its exit (no LCSSA form): it gets one, whose value
; for a skipped loop is the one the loop started with.
; CHECK-LABEL: define i64 @__tidal_block_grid_guard_outer(
; CHECK:         %acc = phi i64 [ 0, %entry ], [ [[CARRIED:%.*]], %inner.end ]
; CHECK:         br i1 {{%.*}}, label %body, label %inner.end
; CHECK:       {{^}}inner.end:
; CHECK-NEXT:    [[CARRIED]] = phi i64 [ %acc, %outer ], [ {{%.*}}, %inner.end.loopexit ]
define i64 @__tidal_block_grid_guard_outer(i64 %ntid, i64 %ny, i64 %base, i64 %n) {
entry:
  br label %outer
outer:
  %y = phi i64 [ 0, %entry ], [ %y.next, %inner.end ]
  %acc = phi i64 [ 0, %entry ], [ %sum.next, %inner.end ]
  br label %body
body:
  %t = phi i64 [ 0, %outer ], [ %next, %latch ]
  %sum = phi i64 [ %acc, %outer ], [ %sum.next, %latch ]
  %i = add nuw nsw i64 %base, %t
  %in = icmp slt i64 %i, %n
  br i1 %in, label %work, label %latch
work:
  %added = add i64 %sum, %i
  br label %latch
latch:
  %sum.next = phi i64 [ %added, %work ], [ %sum, %body ]
  %next = add nuw nsw i64 %t, 1
  %done = icmp eq i64 %next, %ntid
  br i1 %done, label %inner.end, label %body
inner.end:
  %y.next = add nuw nsw i64 %y, 1
  %ydone = icmp eq i64 %y.next, %ny
  br i1 %ydone, label %exit, label %outer
exit:
  ret i64 %sum.next
}
