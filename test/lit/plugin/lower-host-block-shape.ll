; Block-shape variant (LowerHostBlockShape.cpp): a store into a 256-element
; shared array at the thread index is checked (tidal.bounds.fault, the
; frontend's check of every store). With any block size the check stays in
; the thread loop, and its call keeps the loop scalar; so __tidal_block_K
; chooses, by the launch's block size, between a copy of the block function
; for blocks of at most 256 threads along x, where LLVM proves the check
; true and vectorises the loop, and the block function for any block, where
; a thread past the array still gets its IndexError.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s --check-prefix=LOWER
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-host -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S %s | FileCheck %s --check-prefix=HOST

; LOWER-LABEL: define void @__tidal_block_fill(
; LOWER:         %ntid.x = load i32, ptr %ntid.x.addr, align 4, !range [[ANY:![0-9]+]]
; LOWER-NEXT:    %ntid.x.fits = icmp ule i32 %ntid.x, 256
; LOWER-NEXT:    br i1 %ntid.x.fits, label %small, label %any
; LOWER:       small:
; LOWER:         load i32, ptr {{.*}}, !range [[SMALL:![0-9]+]]
; LOWER:         call i32 @fill.thread(
; LOWER:       any:
; LOWER-NEXT:    tail call void @__tidal_block_fill.any(ptr %params, ptr %ctx)
; The copy for any block: a function of its own, compiled for size.
; LOWER-LABEL: define internal void @__tidal_block_fill.any(
; LOWER-SAME:    #[[SIZE:[0-9]+]]
; LOWER:         load i32, ptr {{.*}}, !range [[ANY]]
; LOWER:         call i32 @fill.thread(

; HOST-LABEL: define void @__tidal_block_fill(
; HOST:          icmp ult i32 %ntid.x{{.*}}, 257
; HOST:          store <8 x float>
; HOST-LABEL: define internal {{.*}}void @__tidal_block_fill.any(
; HOST:          call void @__tidal_cpu_bounds_error(

; No thread index is checked (the index is the block's): no variant.
; LOWER-LABEL: define void @__tidal_block_by_block(
; LOWER-NOT:     small:
; LOWER:         ret void
; LOWER:       attributes #[[SIZE]] = { minsize noinline optsize }
; LOWER:       [[ANY]] = !{i32 1, i32 1025}
; LOWER:       [[SMALL]] = !{i32 1, i32 257}

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
declare void @tidal.syncthreads()
declare ptr @tidal.shared.array(i64, i64)
declare void @tidal.bounds.fault(ptr, i64, i64, i32)

!tidal.kernels = !{!0, !1}
!0 = !{ptr @fill}
!1 = !{ptr @by_block}
