; Values live across a sync point: stored just before it, loaded on resume,
; and kept as one scalar per block (%uniforms, an alloca of the block
; function that SROA promotes) when every thread computes them alike. The
; reduction's stride %s is such a value, so after tidal-host the region loop
; reads a loop-invariant %s and `buf[tid] += buf[tid + s]` becomes contiguous
; vector loads and stores, not gathers (unmasked: the `tid < s` guard bounds
; the loop, tidal-bound-thread-loops).
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s --check-prefix=LOWER
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-host -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S %s | FileCheck %s --check-prefix=HOST

; LOWER-LABEL: define internal i32 @reduction.thread(
; LOWER-SAME:    ptr %ctx, ptr %shared, ptr %frame, ptr %uniforms, i32 %tid.x, i32 %tid.y, i32 %tid.z, i32 %resume, i32 %phase)
; LOWER:         %s.uniform = getelementptr inbounds i8, ptr %uniforms, i64 0
; LOWER:         %s.pending = getelementptr inbounds i8, ptr %uniforms, i64 16
; LOWER:       step:
; LOWER-NEXT:    store i32 %s, ptr %s.pending, align 16
; LOWER-NEXT:    ret i32 2
; LOWER:       resume.2:
; LOWER-NEXT:    %s.resumed = load i32, ptr %s.uniform, align 16
; LOWER:       sync.2.after:
; LOWER-NEXT:    %s.next = ashr i32 %s.resumed, 1
; LOWER-LABEL: define void @__tidal_block_reduction(
; LOWER:         %uniforms = alloca [32 x i8], align 16
; LOWER:       round.next:
; LOWER:         load i32, ptr {{.*}}, align 16
; LOWER:         store i32 {{.*}}, ptr {{.*}}, align 16

; HOST-LABEL: define void @__tidal_block_reduction(
; HOST-NOT:      alloca
; HOST:          load <8 x float>
; HOST:          load <8 x float>
; HOST:          fadd <8 x float>
; HOST:          store <8 x float>
; HOST-NOT:      gather

declare i32 @tidal.tid.x()
declare i32 @tidal.ntid.x()
declare i32 @tidal.ctaid.x()
declare void @tidal.syncthreads()
declare ptr @tidal.shared.array(i64, i64)

; Numba's shared-memory tree reduction: partial[block] = sum of its x.
define void @reduction(ptr %x, i64 %n, ptr %partial) {
entry:
  %buf = call ptr @tidal.shared.array(i64 1024, i64 4)
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %bdim = call i32 @tidal.ntid.x()
  %tid64 = zext i32 %tid to i64
  %base = mul i32 %bid, %bdim
  %i = add i32 %base, %tid
  %i64 = zext i32 %i to i64
  %in = icmp ult i64 %i64, %n
  br i1 %in, label %read, label %zero
read:
  %xp = getelementptr float, ptr %x, i64 %i64
  %xv = load float, ptr %xp
  br label %fill
zero:
  br label %fill
fill:
  %v = phi float [ %xv, %read ], [ 0.0, %zero ]
  %slot = getelementptr float, ptr %buf, i64 %tid64
  store float %v, ptr %slot
  call void @tidal.syncthreads()
  br label %head
head:
  %s = phi i32 [ 128, %fill ], [ %s.next, %step ]
  %more = icmp sgt i32 %s, 0
  br i1 %more, label %test, label %done
test:
  %active = icmp slt i32 %tid, %s
  br i1 %active, label %add, label %step
add:
  %j = add i32 %tid, %s
  %j64 = zext i32 %j to i64
  %other = getelementptr float, ptr %buf, i64 %j64
  %ov = load float, ptr %other
  %mine = load float, ptr %slot
  %sum = fadd float %mine, %ov
  store float %sum, ptr %slot
  br label %step
step:
  call void @tidal.syncthreads()
  %s.next = ashr i32 %s, 1
  br label %head
done:
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %write, label %exit
write:
  %r = load float, ptr %buf
  %bid64 = zext i32 %bid to i64
  %pp = getelementptr float, ptr %partial, i64 %bid64
  store float %r, ptr %pp
  br label %exit
exit:
  ret void
}

; %pick is chosen by a branch on the thread index: though both arms are
; constants it differs between threads and takes a frame element per thread.
; LOWER-LABEL: define internal i32 @per_thread.thread(
; LOWER:         %pick.frame = getelementptr inbounds i8, ptr %frame,
; LOWER:       join:
; LOWER:         store i32 %pick, ptr %[[PICK:.+]], align 4
; LOWER-NEXT:    ret i32 1
; LOWER:       resume.1:
; LOWER-NEXT:    %pick.resumed = load i32, ptr %[[PICK]], align 4
; LOWER-LABEL: define void @__tidal_block_per_thread(
; LOWER-NOT:     %uniforms = alloca
; LOWER:         call i32 @per_thread.thread({{.*}}, ptr %frame, ptr null,
define void @per_thread(ptr %out) {
entry:
  %t = call i32 @tidal.tid.x()
  %small = icmp ult i32 %t, 5
  br i1 %small, label %few, label %many
few:
  br label %join
many:
  br label %join
join:
  %pick = phi i32 [ 1, %few ], [ 2, %many ]
  call void @tidal.syncthreads()
  %t64 = zext i32 %t to i64
  %p = getelementptr i32, ptr %out, i64 %t64
  store i32 %pick, ptr %p
  ret void
}

!tidal.kernels = !{!0, !1}
!0 = !{ptr @reduction}
!1 = !{ptr @per_thread}
