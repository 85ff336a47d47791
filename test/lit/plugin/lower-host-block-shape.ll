; Fitted block functions (LowerHostBlockShape.cpp): a store into a
; 256-element shared array at the thread index is checked
; (tidal.bounds.fault, the frontend's check of every store). The check stays
; in the thread loop of the block function, and its call keeps the loop
; scalar. The lowering records the condition under which a whole block
; passes it (ntid.x <= 256; for a cuda.grid index checked against a
; parameter, the block's last index below it) in !tidal.block.conditions and builds nothing
; more; the runtime lowers the module again with the flag tidal.host.fitted
; at the first launch that meets it, and then the lowering builds
; __tidal_fitted_block_K instead: the condition per block, then the block
; function over a copy of K.thread without the check (vectorised), else a
; call of __tidal_block_K, where a thread past the array gets its IndexError.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s --check-prefix=LOWER
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-host -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S %s | FileCheck %s --check-prefix=HOST
; RUN: sed 's/^; FITTED-FLAG: //' %s | opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S | FileCheck %s --check-prefix=FITTED
; RUN: sed 's/^; FITTED-FLAG: //' %s | opt -load-pass-plugin=%plugin -passes=tidal-host -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S | FileCheck %s --check-prefix=FITTED-HOST

; Without the flag: one block function per kernel, checks kept; fill's
; condition recorded.
; LOWER-LABEL: define void @__tidal_block_fill(
; LOWER-NOT:     fits
; LOWER:         call i32 @fill.thread(
; LOWER-LABEL: define void @__tidal_block_grid_store(
; LOWER-NOT:     fits
; LOWER-LABEL: define void @__tidal_block_by_block(
; LOWER-NOT:     __tidal_fitted_block
; LOWER-LABEL: define void @__tidal_block_guarded_load(
; LOWER-NOT:     fits
; LOWER:       !tidal.block.conditions = !{[[FILL:![0-9]+]], [[GRID:![0-9]+]], [[GUARD:![0-9]+]]}
; LOWER:       [[FILL]] = !{!"__tidal_block_fill", i32 0, i64 256, i32 -1}
; grid_store's: (ctaid.x + 1) * ntid.x <= its parameter 1, %n.
; LOWER:       [[GRID]] = !{!"__tidal_block_grid_store", i32 0, i64 0, i32 1}
; guarded_load's, from its guard `i < n` alone: the same, with its
; parameter 2.
; LOWER:       [[GUARD]] = !{!"__tidal_block_guarded_load", i32 0, i64 0, i32 2}

; HOST-LABEL: define void @__tidal_block_fill(
; HOST:          call void @__tidal_cpu_bounds_error(
; HOST:          ret void

; With the flag: fill's fitted block function only, whose entry tests the
; block size. No block function, nothing for by_block (no thread index in
; its check: the index is the block's).
; FITTED-NOT:    define void @__tidal_block_
; FITTED-LABEL: define internal i32 @fill.thread.fitted(
; FITTED:         br i1 false, label %fault, label %store
; FITTED-LABEL: define void @__tidal_fitted_block_fill(
; FITTED-NEXT:  fits.test:
; FITTED:         %fit.ntid.x = load i32
; FITTED-NEXT:    %ntid.x.fits = icmp ule i32 %fit.ntid.x, 256
; FITTED-NEXT:    br i1 %ntid.x.fits, label %entry, label %general
; FITTED:       general:
; FITTED-NEXT:    tail call void @__tidal_block_fill(ptr %params, ptr %ctx)
; FITTED-NEXT:    ret void
; FITTED:       declare void @__tidal_block_fill(ptr, ptr)
; `out[ctaid.x * ntid.x + tid.x]` checked against %n: the block's last
; index, (ctaid.x + 1) * ntid.x - 1, below %n.
; FITTED-LABEL: define internal i32 @grid_store.thread.fitted(
; FITTED:         br i1 false, label %fault, label %store
; FITTED-LABEL: define void @__tidal_fitted_block_grid_store(
; FITTED:         %fit.ntid.x = load i32
; FITTED:         %fit.n = load i64, ptr
; FITTED:         %fit.ctaid.x = load i32
; FITTED:         [[NEXT:%.+]] = add nuw i64 {{%.+}}, 1
; FITTED:         [[END:%.+]] = mul nuw i64 [[NEXT]],
; FITTED-NEXT:    %n.fits = icmp sle i64 [[END]], %fit.n
; FITTED-NEXT:    br i1 %n.fits, label %entry, label %general
; FITTED:       general:
; FITTED-NEXT:    tail call void @__tidal_block_grid_store(ptr %params, ptr %ctx)
; FITTED:       declare void @__tidal_block_grid_store(ptr, ptr)
; A guard of the kernel's own, `if i < n:` with an else, compares nothing
; in the fitted copy: every thread of a block that fits is below n. The
; entry's test is signed, so that n < 0 (no thread below it) is not a fit.
; FITTED-LABEL: define internal i32 @guarded_load.thread.fitted(
; FITTED:         %below = icmp slt i64 %i, %n
; FITTED-NEXT:    br i1 true, label %inside, label %outside
; FITTED-LABEL: define void @__tidal_fitted_block_guarded_load(
; FITTED:         %n.fits = icmp sle i64 {{%.+}}, %fit.n
; FITTED:       general:
; FITTED-NEXT:    tail call void @__tidal_block_guarded_load(ptr %params, ptr %ctx)
; FITTED-NOT:   __tidal_fitted_block_by_block
; FITTED-NOT:   !tidal.block.conditions

; After tidal-host: no check left where the block fits, and its loop is
; vectorised.
; FITTED-HOST-LABEL: define void @__tidal_fitted_block_fill(
; FITTED-HOST:         icmp ult i32 %fit.ntid.x, 257
; FITTED-HOST-NOT:     call void @__tidal_cpu_bounds_error(
; FITTED-HOST:         store <8 x float>
; FITTED-HOST:         tail call void @__tidal_block_fill(
; FITTED-HOST-LABEL: define void @__tidal_fitted_block_grid_store(
; FITTED-HOST-NOT:     call void @__tidal_cpu_bounds_error(
; FITTED-HOST:         store <8 x float>
; FITTED-HOST:         tail call void @__tidal_block_grid_store(
; The guarded load: plain vector loads (no mask for `i < n`), stored to the
; shared array by a loop, not a call of memcpy (block functions are
; no-builtin-memcpy).
; FITTED-HOST-LABEL: define void @__tidal_fitted_block_guarded_load(
; FITTED-HOST-NOT:     masked.load
; FITTED-HOST-NOT:     memcpy
; FITTED-HOST:         load <8 x float>
; FITTED-HOST-NOT:     masked.load
; FITTED-HOST-NOT:     memcpy
; FITTED-HOST:         tail call void @__tidal_block_guarded_load(

@where = private constant [16 x i8] c"kernel 'fill'..\00"

define void @fill(ptr %x, ptr %out) {
entry:
  %buf = call ptr @tidal.shared.array(i64 1024, i64 4)
  %tid = call i32 @tidal.tid.x()
  %tid64 = zext i32 %tid to i64
  %xp = getelementptr float, ptr %x, i64 %tid64
  %v = load float, ptr %xp
  %outside = icmp uge i64 %tid64, 256
  br i1 %outside, label %fault, label %store
fault:
  call void @tidal.bounds.fault(ptr @where, i64 %tid64, i64 256, i32 0)
  br label %store
store:
  %slot = getelementptr float, ptr %buf, i64 %tid64
  store float %v, ptr %slot
  call void @tidal.syncthreads()
  %first = load float, ptr %buf
  %op = getelementptr float, ptr %out, i64 %tid64
  store float %first, ptr %op
  ret void
}

define void @grid_store(ptr %out, i64 %n) {
entry:
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %bdim = call i32 @tidal.ntid.x()
  %tid64 = zext i32 %tid to i64
  %bid64 = zext i32 %bid to i64
  %bdim64 = zext i32 %bdim to i64
  %base = mul i64 %bid64, %bdim64
  %i = add i64 %base, %tid64
  %outside = icmp uge i64 %i, %n
  br i1 %outside, label %fault, label %store
fault:
  call void @tidal.bounds.fault(ptr @where, i64 %i, i64 %n, i32 0)
  br label %store
store:
  ; tid.x on its own: not coarsened (lower-host-coarsen.ll), so the fitted
  ; entry tests the condition itself
  %lane = uitofp i32 %tid to float
  %op = getelementptr float, ptr %out, i64 %i
  store float %lane, ptr %op
  ret void
}

; buf[tid] = x[i] if i < n else 0 (the tree reduction's first round), then
; out[i] = buf[tid] after the barrier, for i < n; checks left out.
define void @guarded_load(ptr %x, ptr %out, i64 %n) {
entry:
  %buf = call ptr @tidal.shared.array(i64 4096, i64 4)
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %bdim = call i32 @tidal.ntid.x()
  %tid64 = zext i32 %tid to i64
  %bid64 = zext i32 %bid to i64
  %bdim64 = zext i32 %bdim to i64
  %base = mul i64 %bid64, %bdim64
  %i = add i64 %base, %tid64
  %below = icmp slt i64 %i, %n
  br i1 %below, label %inside, label %outside
inside:
  %xp = getelementptr float, ptr %x, i64 %i
  %v = load float, ptr %xp
  br label %join
outside:
  br label %join
join:
  %value = phi float [ %v, %inside ], [ 0.0, %outside ]
  %slot = getelementptr float, ptr %buf, i64 %tid64
  store float %value, ptr %slot
  call void @tidal.syncthreads()
  %again = load float, ptr %slot
  %op = getelementptr float, ptr %out, i64 %i
  store float %again, ptr %op
  ret void
}

define void @by_block(ptr %out) {
entry:
  %bid = call i32 @tidal.ctaid.x()
  %bid64 = zext i32 %bid to i64
  %outside = icmp uge i64 %bid64, 256
  br i1 %outside, label %fault, label %store
fault:
  call void @tidal.bounds.fault(ptr @where, i64 %bid64, i64 256, i32 0)
  br label %store
store:
  %op = getelementptr float, ptr %out, i64 %bid64
  store float 1.0, ptr %op
  ret void
}

declare i32 @tidal.tid.x()
declare i32 @tidal.ctaid.x()
declare i32 @tidal.ntid.x()
declare void @tidal.syncthreads()
declare ptr @tidal.shared.array(i64, i64)
declare void @tidal.bounds.fault(ptr, i64, i64, i32)

!tidal.kernels = !{!0, !1, !2, !3}
!0 = !{ptr @fill}
!1 = !{ptr @grid_store}
!2 = !{ptr @by_block}
!3 = !{ptr @guarded_load}

; FITTED-FLAG: !llvm.module.flags = !{!100}
; FITTED-FLAG: !100 = !{i32 1, !"tidal.host.fitted", i32 1}
