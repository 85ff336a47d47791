; Coarsened block functions (LowerHostCoarsen.cpp): with the flag
; tidal.host.fitted, a kernel without sync points, shared memory or atomics
; whose tid.x, ctaid.x and ntid.x appear only in cuda.grid's x index, and
; whose fitted thread keeps no check, also gets
; `i32 __tidal_coarse_block_K(ptr %params, ptr %ctx, i32 %count)`: how many
; leading blocks of the run from ctx's block pass the fitted conditions
; (blocks below n / ntid.x), then one x loop over that many blocks' threads,
; the fitted K.thread called with tid.x up to blocks * ntid.x. Without the
; flag nothing changes.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s --check-prefix=LOWER
; RUN: sed 's/^; FITTED-FLAG: //' %s | opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S | FileCheck %s --check-prefix=COARSE
; RUN: sed 's/^; FITTED-FLAG: //' %s | opt -load-pass-plugin=%plugin -passes=tidal-host -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S | FileCheck %s --check-prefix=COARSE-HOST

; LOWER-NOT: __tidal_coarse_block_

; grid_copy's fitted entry runs its one block through the coarsened function
; (count 1), else the block function: no second copy of the kernel's body.
; COARSE-NOT:   @grid_copy.thread.fitted(
; COARSE-LABEL: define void @__tidal_fitted_block_grid_copy(
; COARSE-NEXT:  entry:
; COARSE-NEXT:    [[RAN:%.+]] = call i32 @__tidal_coarse_block_grid_copy(ptr %params, ptr %ctx, i32 1)
; COARSE-NEXT:    %fits = icmp ne i32 [[RAN]], 0
; COARSE-NEXT:    br i1 %fits, label %done, label %general
; COARSE:       general:
; COARSE-NEXT:    tail call void @__tidal_block_grid_copy(ptr %params, ptr %ctx)
; grid_copy: the linear loop over the run's threads.
; COARSE-LABEL: define internal i32 @grid_copy.thread.coarse(
; COARSE-NOT:     __tidal_cpu_bounds_error
; COARSE-LABEL: define i32 @__tidal_coarse_block_grid_copy(ptr nocapture readonly %params, ptr noalias nocapture readonly %ctx, i32 %count)
; COARSE:         %ntid.x = load i32, ptr %ntid.x.addr
; COARSE:         %ctaid.x = load i32, ptr %ctaid.x.addr
; COARSE:         [[N:%.+]] = call i64 @llvm.smax.i64(i64 %n, i64 0)
; COARSE:         %blocks.within = udiv i64 [[N]], [[WIDTH:%.+]]
; COARSE:         call i64 @llvm.umin.i64(
; COARSE:         %blocks = select i1
; COARSE:         br i1 {{%.+}}, label %done, label %run
; COARSE:       run:
; COARSE-NEXT:    %ntid.x.coarse = mul nuw i32 %blocks, %ntid.x
; COARSE:       done:
; COARSE-NEXT:    %ran = phi i32 [ 0, %entry ], [ %blocks, %tid.z.end ]
; COARSE-NEXT:    ret i32 %ran
; COARSE:       tid.x.cond:
; COARSE-NEXT:    %tid.x = phi i32
; COARSE-NEXT:    %tid.x.inrange = icmp ult i32 %tid.x, %ntid.x.coarse
; COARSE:         call i32 @grid_copy.thread.coarse(ptr %out, i64 %n, ptr %x, ptr %ctx, ptr null, ptr null, ptr null, i32 %tid.x, i32 %tid.y, i32 %tid.z, i32 0, i32 0)
; lane_store stores tid.x itself; with_barrier has a sync point.
; COARSE-NOT:   define internal i32 @lane_store.thread.coarse(
; COARSE-NOT:   define i32 @__tidal_coarse_block_lane_store(
; COARSE-NOT:   define i32 @__tidal_coarse_block_with_barrier(
; interior tests its index against 0 and n - 1 (a stencil's row): the x
; loop runs in three parts, [0, low) and [high, width) with the copy as it
; is, not vectorised (a few threads), and [low, high) with a copy in which
; both tests are true and assumed; low is where i > 0 starts to hold (1 -
; the run's first index), high where i < n - 1 stops (n - 1 as the kernel
; computes it, less the first index), both saturated and clamped to the
; run.
; COARSE-LABEL: define i32 @__tidal_coarse_block_interior(
; COARSE:         %x.first = mul nuw i64
; i > 0: from t = (0 - first) + 1, saturated (a bound near the ends of int64)
; COARSE:         [[FROM:%.+]] = call i64 @llvm.ssub.sat.i64(i64 0, i64 %x.first)
; COARSE-NEXT:    call i64 @llvm.sadd.sat.i64(i64 [[FROM]], i64 1)
; COARSE:         %x.inside.low = call i64 @llvm.umax.i64(i64 0,
; COARSE:         %x.inside.high = call i64 @llvm.umin.i64(
; COARSE:         %x.inside.end = call i64 @llvm.umax.i64(i64 %x.inside.high, i64 %x.inside.low)
; COARSE:         call i32 @interior.thread.coarse(
; COARSE:         br label %tid.x.edge.cond, !llvm.loop [[EDGE:![0-9]+]]
; COARSE:         call i32 @interior.thread.coarse.inside(
; COARSE:         br label %tid.x.inside.cond, !llvm.loop [[INSIDE:![0-9]+]]
; COARSE:         call i32 @interior.thread.coarse(
; COARSE:         br label %tid.x.edge.cond{{[0-9]+}}, !llvm.loop [[EDGE2:![0-9]+]]
; COARSE-LABEL: define internal i32 @interior.thread.coarse.inside(
; COARSE:         [[LOW:%.+]] = icmp sgt i64 %i, 0
; COARSE-NEXT:    call void @llvm.assume(i1 [[LOW]])
; COARSE:         [[HIGH:%.+]] = icmp slt i64 %i, %last
; COARSE-NEXT:    call void @llvm.assume(i1 [[HIGH]])
; COARSE-NEXT:    %inside = and i1 true, true
; COARSE-DAG:   [[EDGE]] = distinct !{[[EDGE]], [[NOVECTOR:![0-9]+]], [[NOUNROLL:![0-9]+]]}
; COARSE-DAG:   [[NOVECTOR]] = !{!"llvm.loop.vectorize.enable", i1 false}
; COARSE-DAG:   [[NOUNROLL]] = !{!"llvm.loop.unroll.disable"}
; COARSE-DAG:   [[INSIDE]] = distinct !{[[INSIDE]], [[PARALLEL:![0-9]+]]}
; COARSE-DAG:   [[PARALLEL]] = !{!"llvm.loop.parallel_accesses",

; After tidal-host: the run's loop is vectorised, with no check left.
; COARSE-HOST-LABEL: define i32 @__tidal_coarse_block_grid_copy(
; COARSE-HOST-NOT:     call void @__tidal_cpu_bounds_error(
; COARSE-HOST:         ret i32 %ran
; COARSE-HOST-NOT:     call void @__tidal_cpu_bounds_error(
; COARSE-HOST:         load <8 x float>
; COARSE-HOST-NOT:     call void @__tidal_cpu_bounds_error(
; COARSE-HOST:         store <8 x float>
; COARSE-HOST-NOT:     call void @__tidal_cpu_bounds_error(
; COARSE-HOST:       {{^}}}
; interior's middle part: vector stores of its inside value, no select
; between the two values per lane.
; COARSE-HOST-LABEL: define i32 @__tidal_coarse_block_interior(
; COARSE-HOST:         store <8 x float> <float 1.000000e+00,
; COARSE-HOST:       {{^}}}

@where = private constant [16 x i8] c"kernel 'copy'..\00"

define void @grid_copy(ptr %out, i64 %n, ptr %x) {
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
  %xp = getelementptr float, ptr %x, i64 %i
  %v = load float, ptr %xp
  %op = getelementptr float, ptr %out, i64 %i
  store float %v, ptr %op
  ret void
}

define void @lane_store(ptr %out, i64 %n) {
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
  %op = getelementptr i32, ptr %out, i64 %i
  store i32 %tid, ptr %op
  ret void
}

define void @with_barrier(ptr %out, i64 %n) {
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
  call void @tidal.syncthreads()
  %op = getelementptr float, ptr %out, i64 %i
  store float 1.0, ptr %op
  ret void
}

declare i32 @tidal.tid.x()
declare i32 @tidal.ctaid.x()
declare i32 @tidal.ntid.x()
declare void @tidal.syncthreads()
declare void @tidal.bounds.fault(ptr, i64, i64, i32)

; out[i] = 1 where 0 < i < n - 1, else 2 (checked against n)
define void @interior(ptr %out, i64 %n) {
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
  %low = icmp sgt i64 %i, 0
  %last = sub i64 %n, 1
  %high = icmp slt i64 %i, %last
  %inside = and i1 %low, %high
  %value = select i1 %inside, float 1.0, float 2.0
  %op = getelementptr float, ptr %out, i64 %i
  store float %value, ptr %op
  ret void
}

!tidal.kernels = !{!0, !1, !2, !3}
!0 = !{ptr @grid_copy}
!1 = !{ptr @lane_store}
!2 = !{ptr @with_barrier}
!3 = !{ptr @interior}

; FITTED-FLAG: !llvm.module.flags = !{!100}
; FITTED-FLAG: !100 = !{i32 1, !"tidal.host.fitted", i32 1}
