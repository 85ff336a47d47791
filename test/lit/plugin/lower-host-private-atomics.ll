; tidal-lower-host lists in !tidal.private.atomics the kernels whose global
; atomics may go to a private copy of their array per host thread
; (docs/cpu-target.md, "Privatised atomics"): every atomic an integer
; add/sub/and/or/xor/max/min with its old value unused, on an array whose
; every use is such an atomic of one operation. Entry: the block function,
; the parameter count, then per array parameter !{data, dimensions, combine,
; bytes} (combine 0: not privatised; 1 add, 2 and, 3 or, 4 xor, 5 max,
; 6 min, 7 umax, 8 umin).
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

; Every kernel with global atomics runs alone; the privatisable ones also
; have an entry (in the order lowered: hist, maxmin, sub2d).
; CHECK: !tidal.run.alone = !{![[A0:[0-9]+]], ![[A1:[0-9]+]], ![[A2:[0-9]+]], ![[A3:[0-9]+]], ![[A4:[0-9]+]], ![[A5:[0-9]+]], ![[A6:[0-9]+]], ![[A7:[0-9]+]]}
; CHECK: !tidal.private.atomics = !{![[HIST:[0-9]+]], ![[MAXMIN:[0-9]+]], ![[SUB2D:[0-9]+]]}
; The histogram: x read (not privatised), bins an int32 add.
; CHECK: ![[HIST]] = !{ptr @__tidal_block_hist, i32 6, ![[HX:[0-9]+]], ![[HB:[0-9]+]]}
; CHECK-NEXT: ![[HX]] = !{i32 0, i32 1, i32 0, i32 0}
; CHECK-NEXT: ![[HB]] = !{i32 3, i32 1, i32 1, i32 4}
; A scalar between arrays; an int64 max array and a uint32 min array.
; CHECK: ![[MAXMIN]] = !{ptr @__tidal_block_maxmin, i32 7, ![[MX:[0-9]+]], ![[MN:[0-9]+]]}
; CHECK-NEXT: ![[MX]] = !{i32 0, i32 1, i32 5, i32 8}
; CHECK-NEXT: ![[MN]] = !{i32 4, i32 1, i32 8, i32 4}
; A 2-D array updated by sub (combined by adding), through a phi.
; CHECK: ![[SUB2D]] = !{ptr @__tidal_block_sub2d, i32 5, ![[S:[0-9]+]]}
; CHECK-NEXT: ![[S]] = !{i32 0, i32 2, i32 1, i32 4}

declare i32 @tidal.tid.x()
declare i32 @tidal.atomic.add.i32(ptr, i32)
declare i32 @tidal.atomic.sub.i32(ptr, i32)
declare i32 @tidal.atomic.or.i32(ptr, i32)
declare i32 @tidal.atomic.exch.i32(ptr, i32)
declare i32 @tidal.atomic.inc.u32(ptr, i32)
declare i64 @tidal.atomic.max.i64(ptr, i64)
declare i32 @tidal.atomic.min.u32(ptr, i32)
declare float @tidal.atomic.add.f32(ptr, float)

; bins[x[tid]] += 1: privatised.
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

; max into an int64 array, min into a uint32 array: both privatised.
define void @maxmin(ptr %hi, i64 %hi.shape.0, i64 %hi.stride.0, i64 %n, ptr %lo, i64 %lo.shape.0, i64 %lo.stride.0) {
  %tid = call i32 @tidal.tid.x()
  %i = zext i32 %tid to i64
  %k = urem i64 %i, %n
  %hp = getelementptr inbounds i64, ptr %hi, i64 %k
  %a = call i64 @tidal.atomic.max.i64(ptr %hp, i64 %i)
  %lp = getelementptr inbounds i32, ptr %lo, i64 %k
  %b = call i32 @tidal.atomic.min.u32(ptr %lp, i32 %tid)
  ret void
}

; a[r, c] -= 1 with the address from either of two GEPs: privatised.
define void @sub2d(ptr %a, i64 %a.shape.0, i64 %a.shape.1, i64 %a.stride.0, i64 %a.stride.1) {
entry:
  %tid = call i32 @tidal.tid.x()
  %i = zext i32 %tid to i64
  %odd = trunc i32 %tid to i1
  br i1 %odd, label %one, label %two
one:
  %p1 = getelementptr inbounds i8, ptr %a, i64 %i
  br label %join
two:
  %p2 = getelementptr inbounds i8, ptr %a, i64 %a.stride.0
  br label %join
join:
  %p = phi ptr [ %p1, %one ], [ %p2, %two ]
  %old = call i32 @tidal.atomic.sub.i32(ptr %p, i32 1)
  ret void
}

; The old value is used: not privatised.
define void @old_used(ptr %a, i64 %a.shape.0, i64 %a.stride.0, ptr %out, i64 %out.shape.0, i64 %out.stride.0) {
  %old = call i32 @tidal.atomic.add.i32(ptr %a, i32 1)
  store i32 %old, ptr %out, align 4
  ret void
}

; The array is also stored to: not privatised.
define void @mixed_store(ptr %a, i64 %a.shape.0, i64 %a.stride.0) {
  %old = call i32 @tidal.atomic.add.i32(ptr %a, i32 1)
  %p = getelementptr inbounds i32, ptr %a, i64 1
  store i32 0, ptr %p, align 4
  ret void
}

; Two operations on one array (add and or): not privatised.
define void @two_operations(ptr %a, i64 %a.shape.0, i64 %a.stride.0) {
  %x = call i32 @tidal.atomic.add.i32(ptr %a, i32 1)
  %y = call i32 @tidal.atomic.or.i32(ptr %a, i32 2)
  ret void
}

; exch, inc (wraps at a bound) and float add (rounding depends on the
; order): not privatised.
define void @order_dependent(ptr %a, i64 %a.shape.0, i64 %a.stride.0, ptr %b, i64 %b.shape.0, i64 %b.stride.0, ptr %f, i64 %f.shape.0, i64 %f.stride.0) {
  %x = call i32 @tidal.atomic.exch.i32(ptr %a, i32 1)
  %y = call i32 @tidal.atomic.inc.u32(ptr %b, i32 7)
  %z = call float @tidal.atomic.add.f32(ptr %f, float 1.0)
  ret void
}

; A pointer parameter that is not an array (no shape): its extent is
; unknown, so the launch could not check that it does not overlap: not
; privatised.
define void @raw_pointer(ptr %a, i64 %a.shape.0, i64 %a.stride.0, ptr %raw) {
  %x = call i32 @tidal.atomic.add.i32(ptr %a, i32 1)
  %v = load i32, ptr %raw, align 4
  ret void
}

!tidal.kernels = !{!0, !1, !2, !3, !4, !5, !6, !7}
!0 = !{ptr @hist}
!1 = !{ptr @maxmin}
!2 = !{ptr @sub2d}
!3 = !{ptr @old_used}
!4 = !{ptr @mixed_store}
!5 = !{ptr @two_operations}
!6 = !{ptr @order_dependent}
!7 = !{ptr @raw_pointer}
