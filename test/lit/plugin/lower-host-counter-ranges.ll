; A loop counter kept across a barrier (the tiled matmul's `for i in
; range(bpg)`) is resumed with assumptions of the range it had there before
; the sync points split its loop: ScalarEvolution's range, narrowed by the
; branches that lead to the barrier (`i < nctaid.x`, nctaid.x < 2^31). So
; LLVM still knows that `tx + (i + 1) * 16` is not negative: the wrap of a
; negative index goes, and the tile loads are contiguous vector loads
; instead of gathers. The assumptions do not stop the thread loops' parallel
; marking.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-host -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S %s | FileCheck %s --check-prefix=HOST

; CHECK-LABEL: define internal i32 @tiles.thread(
; CHECK:       resume.1:
; CHECK-NEXT:    %i.resumed = load i32, ptr %i.uniform, align 16, !llvm.access.group
; CHECK-NEXT:    [[LOW:%.*]] = icmp sge i32 %i.resumed, 0
; CHECK-NEXT:    call void @llvm.assume(i1 [[LOW]])
; CHECK-NEXT:    [[HIGH:%.*]] = icmp sle i32 %i.resumed, 2147483646
; CHECK-NEXT:    call void @llvm.assume(i1 [[HIGH]])
; CHECK-LABEL: define void @__tidal_block_tiles(
; CHECK:         call i32 @tiles.thread({{.*}}), !llvm.access.group

; HOST-LABEL: define void @__tidal_block_tiles(
; HOST-NOT:      1000000
; HOST-NOT:      select
; HOST-NOT:      gather
; HOST:          load <8 x float>
; HOST-NOT:      1000000
; HOST-NOT:      select
; HOST-NOT:      gather
; HOST:        ret void

declare i32 @tidal.tid.x()
declare i32 @tidal.nctaid.x()
declare void @tidal.syncthreads()
declare ptr @tidal.shared.array(i64, i64)

define void @tiles(ptr %a, ptr %out) {
entry:
  %tile = call ptr @tidal.shared.array(i64 64, i64 4)
  %n = call i32 @tidal.nctaid.x()
  %tid = call i32 @tidal.tid.x()
  %tid64 = sext i32 %tid to i64
  %sp = getelementptr float, ptr %tile, i64 %tid64
  br label %header
header:
  %i = phi i32 [ 0, %entry ], [ %i.next, %body ]
  %more = icmp slt i32 %i, %n
  br i1 %more, label %body, label %exit
body:
  ; a[tx + i * 16], with the frontend's wrap of a negative index
  %i64 = sext i32 %i to i64
  %base = mul i64 %i64, 16
  %index = add i64 %tid64, %base
  %negative = icmp slt i64 %index, 0
  %wrapped = add i64 %index, 1000000
  %at = select i1 %negative, i64 %wrapped, i64 %index
  %ap = getelementptr float, ptr %a, i64 %at
  %v = load float, ptr %ap
  store float %v, ptr %sp
  call void @tidal.syncthreads()
  %w = load float, ptr %tile
  %op = getelementptr float, ptr %out, i64 %tid64
  %old = load float, ptr %op
  %sum = fadd float %old, %w
  store float %sum, ptr %op
  %i.next = add i32 %i, 1
  br label %header
exit:
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @tiles}
