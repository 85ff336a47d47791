; tidal-lower-host turns each kernel K into an internal K.thread (markers
; replaced by its thread-index parameters and loads of the block context) and
; the external entry __tidal_block_K(params, ctx) looping over the block.
; Barriers and the other markers: lower-host-barriers.ll, lower-host-markers.ll.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

declare i32 @tidal.tid.x()
declare i32 @tidal.tid.y()
declare i32 @tidal.tid.z()
declare i32 @tidal.ntid.x()
declare i32 @tidal.ntid.y()
declare i32 @tidal.ntid.z()
declare i32 @tidal.ctaid.x()
declare i32 @tidal.ctaid.y()
declare i32 @tidal.ctaid.z()
declare i32 @tidal.nctaid.x()
declare i32 @tidal.nctaid.y()
declare i32 @tidal.nctaid.z()

; A function without markers is left alone; the kernels and the helper that
; uses markers are gone.
; CHECK-NOT: define {{.*}} @all_registers(
; CHECK-NOT: define {{.*}} @uses_helper(
; CHECK-NOT: define {{.*}} @linear_index(
; CHECK-LABEL: define i32 @square(
; CHECK-NEXT:    %s = mul i32 %v, %v
; CHECK-NOT: define {{.*}} @all_registers(
; CHECK-NOT: define {{.*}} @uses_helper(
; CHECK-NOT: define {{.*}} @linear_index(
define i32 @square(i32 %v) {
  %s = mul i32 %v, %v
  ret i32 %s
}

; Every marker: tid.* are the thread function's parameters; ntid.*, ctaid.*
; and nctaid.* load TidalBlockContext's fields 0 (block_dim), 2 (block_idx)
; and 1 (grid_dim) once, in the thread's dispatch entry, with CUDA's limits
; as ranges (the runtime enforces them). A kernel without sync points runs
; from its start to its end: it returns -1 (finished).
; CHECK-LABEL: define internal i32 @all_registers.thread(
; CHECK-SAME:    ptr %out, i64 %n, ptr %ctx, ptr %shared, ptr %frame, ptr %uniforms, i32 %tid.x, i32 %tid.y, i32 %tid.z, i32 %resume, i32 %phase) #[[THREAD:[0-9]+]] {
; CHECK-NEXT:  thread.entry:
; CHECK-NEXT:    %[[A:.+]] = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 0, i32 0
; CHECK-NEXT:    %ntid.x = load i32, ptr %[[A]], align 4, !range ![[BDX:[0-9]+]], !invariant.load
; CHECK-NEXT:    %[[A:.+]] = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 0, i32 1
; CHECK-NEXT:    %ntid.y = load i32, ptr %[[A]], align 4, !range ![[BDX]], !invariant.load
; CHECK-NEXT:    %[[A:.+]] = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 0, i32 2
; CHECK-NEXT:    %ntid.z = load i32, ptr %[[A]], align 4, !range ![[BDZ:[0-9]+]], !invariant.load
; CHECK-NEXT:    %[[A:.+]] = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 2, i32 0
; CHECK-NEXT:    %ctaid.x = load i32, ptr %[[A]], align 4, !range ![[BIX:[0-9]+]], !invariant.load
; CHECK-NEXT:    %[[A:.+]] = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 2, i32 1
; CHECK-NEXT:    %ctaid.y = load i32, ptr %[[A]], align 4, !range ![[BIY:[0-9]+]], !invariant.load
; CHECK-NEXT:    %[[A:.+]] = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 2, i32 2
; CHECK-NEXT:    %ctaid.z = load i32, ptr %[[A]], align 4, !range ![[BIY]], !invariant.load
; CHECK-NEXT:    %[[A:.+]] = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 1, i32 0
; CHECK-NEXT:    %nctaid.x = load i32, ptr %[[A]], align 4, !range ![[GDX:[0-9]+]], !invariant.load
; CHECK-NEXT:    %[[A:.+]] = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 1, i32 1
; CHECK-NEXT:    %nctaid.y = load i32, ptr %[[A]], align 4, !range ![[GDY:[0-9]+]], !invariant.load
; CHECK-NEXT:    %[[A:.+]] = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 1, i32 2
; CHECK-NEXT:    %nctaid.z = load i32, ptr %[[A]], align 4, !range ![[GDY]], !invariant.load
; CHECK-NEXT:    br label %[[BODY:.+]]
; CHECK:         store volatile i32 %tid.x, ptr %out
; CHECK-NEXT:    store volatile i32 %tid.y, ptr %out
; CHECK-NEXT:    store volatile i32 %tid.z, ptr %out
; CHECK-NEXT:    store volatile i32 %ntid.x, ptr %out
; CHECK-NEXT:    store volatile i32 %ntid.y, ptr %out
; CHECK-NEXT:    store volatile i32 %ntid.z, ptr %out
; CHECK-NEXT:    store volatile i32 %ctaid.x, ptr %out
; CHECK-NEXT:    store volatile i32 %ctaid.y, ptr %out
; CHECK-NEXT:    store volatile i32 %ctaid.z, ptr %out
; CHECK-NEXT:    store volatile i32 %nctaid.x, ptr %out
; CHECK-NEXT:    store volatile i32 %nctaid.y, ptr %out
; CHECK-NEXT:    store volatile i32 %nctaid.z, ptr %out
; CHECK-NEXT:    ret i32 -1

; The block entry: parameter i is *params[i]; then z, y, x loops over
; block_dim (x innermost) call the thread function from its start (resume
; point 0), without shared memory or frame (null).
; CHECK-LABEL: define void @__tidal_block_all_registers(
; CHECK-SAME:    ptr nocapture readonly %params, ptr noalias nocapture readonly %ctx) [[BLOCKATTRS:#[0-9]+]] {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %out.slot = getelementptr inbounds ptr, ptr %params, i64 0
; CHECK-NEXT:    %out.addr = load ptr, ptr %out.slot
; CHECK-NEXT:    %out = load ptr, ptr %out.addr
; CHECK-NEXT:    %n.slot = getelementptr inbounds ptr, ptr %params, i64 1
; CHECK-NEXT:    %n.addr = load ptr, ptr %n.slot
; CHECK-NEXT:    %n = load i64, ptr %n.addr
; CHECK-NEXT:    %ntid.x.addr = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 0, i32 0
; CHECK-NEXT:    %ntid.x = load i32, ptr %ntid.x.addr
; CHECK-NEXT:    %ntid.y.addr = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 0, i32 1
; CHECK-NEXT:    %ntid.y = load i32, ptr %ntid.y.addr
; CHECK-NEXT:    %ntid.z.addr = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 0, i32 2
; CHECK-NEXT:    %ntid.z = load i32, ptr %ntid.z.addr
; CHECK:         br label %tid.z.cond
; CHECK:       tid.z.cond:
; CHECK-NEXT:    %tid.z = phi i32 [ 0, %entry ], [ %tid.z.next, %tid.y.end ]
; CHECK-NEXT:    %tid.z.inrange = icmp ult i32 %tid.z, %ntid.z
; CHECK-NEXT:    br i1 %tid.z.inrange, label %tid.z.body, label %tid.z.end
; CHECK:       tid.y.cond:
; CHECK-NEXT:    %tid.y = phi i32 [ 0, %tid.z.body ], [ %tid.y.next, %tid.x.end ]
; CHECK-NEXT:    %tid.y.inrange = icmp ult i32 %tid.y, %ntid.y
; CHECK-NEXT:    br i1 %tid.y.inrange, label %tid.y.body, label %tid.y.end
; CHECK:       tid.x.cond:
; CHECK-NEXT:    %tid.x = phi i32 [ 0, %tid.y.body ], [ %tid.x.next, %tid.x.body ]
; CHECK-NEXT:    %tid.x.inrange = icmp ult i32 %tid.x, %ntid.x
; CHECK-NEXT:    br i1 %tid.x.inrange, label %tid.x.body, label %tid.x.end
; CHECK:       tid.x.body:
; CHECK-NEXT:    call i32 @all_registers.thread(ptr %out, i64 %n, ptr %ctx, ptr null, ptr null, ptr null, i32 %tid.x, i32 %tid.y, i32 %tid.z, i32 0, i32 0)
; CHECK-NEXT:    %tid.x.next = add nuw i32 %tid.x, 1
; CHECK-NEXT:    br label %tid.x.cond
; CHECK:       tid.x.end:
; CHECK-NEXT:    %tid.y.next = add nuw i32 %tid.y, 1
; CHECK-NEXT:    br label %tid.y.cond
; CHECK:       tid.y.end:
; CHECK-NEXT:    %tid.z.next = add nuw i32 %tid.z, 1
; CHECK-NEXT:    br label %tid.z.cond
; CHECK:       tid.z.end:
; CHECK-NEXT:    ret void
define void @all_registers(ptr %out, i64 %n) {
  %r0 = call i32 @tidal.tid.x()
  store volatile i32 %r0, ptr %out
  %r1 = call i32 @tidal.tid.y()
  store volatile i32 %r1, ptr %out
  %r2 = call i32 @tidal.tid.z()
  store volatile i32 %r2, ptr %out
  %r3 = call i32 @tidal.ntid.x()
  store volatile i32 %r3, ptr %out
  %r4 = call i32 @tidal.ntid.y()
  store volatile i32 %r4, ptr %out
  %r5 = call i32 @tidal.ntid.z()
  store volatile i32 %r5, ptr %out
  %r6 = call i32 @tidal.ctaid.x()
  store volatile i32 %r6, ptr %out
  %r7 = call i32 @tidal.ctaid.y()
  store volatile i32 %r7, ptr %out
  %r8 = call i32 @tidal.ctaid.z()
  store volatile i32 %r8, ptr %out
  %r9 = call i32 @tidal.nctaid.x()
  store volatile i32 %r9, ptr %out
  %r10 = call i32 @tidal.nctaid.y()
  store volatile i32 %r10, ptr %out
  %r11 = call i32 @tidal.nctaid.z()
  store volatile i32 %r11, ptr %out
  ret void
}

; A device function that uses markers is inlined into the kernel and then
; erased; one that does not (@square) stays a call.
; CHECK-LABEL: define internal i32 @uses_helper.thread(
; CHECK-SAME:    ptr %out, ptr %ctx, ptr %shared, ptr %frame, ptr %uniforms, i32 %tid.x, i32 %tid.y, i32 %tid.z, i32 %resume, i32 %phase) #[[THREAD]] {
; CHECK-NEXT:  thread.entry:
; CHECK-NEXT:    %[[A:.+]] = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 2, i32 0
; CHECK-NEXT:    %[[BLOCK:.+]] = load i32, ptr %[[A]], align 4, !range !{{[0-9]+}}, !invariant.load
; CHECK-NEXT:    %[[A:.+]] = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 0, i32 0
; CHECK-NEXT:    %[[SIZE:.+]] = load i32, ptr %[[A]], align 4, !range !{{[0-9]+}}, !invariant.load
; CHECK-NEXT:    br label
; CHECK:         %[[M:.+]] = mul i32 %[[BLOCK]], %[[SIZE]]
; CHECK-NEXT:    %[[I:.+]] = add i32 %[[M]], %tid.x
; CHECK-NEXT:    %s = call i32 @square(i32 %[[I]])
; CHECK-NEXT:    store i32 %s, ptr %out
; CHECK-NEXT:    ret i32 -1
; CHECK-LABEL: define void @__tidal_block_uses_helper(
; CHECK:         call i32 @uses_helper.thread(ptr %out, ptr %ctx, ptr null, ptr null, ptr null, i32 %tid.x, i32 %tid.y, i32 %tid.z, i32 0, i32 0)
define void @uses_helper(ptr %out) {
  %i = call i32 @linear_index()
  %s = call i32 @square(i32 %i)
  store i32 %s, ptr %out
  ret void
}

define i32 @linear_index() {
  %t = call i32 @tidal.tid.x()
  %b = call i32 @tidal.ctaid.x()
  %d = call i32 @tidal.ntid.x()
  %m = mul i32 %b, %d
  %i = add i32 %m, %t
  ret i32 %i
}

; No marker, no kernel list: the block entries are found by name.
; CHECK-NOT: @tidal.
; CHECK: attributes #[[THREAD]] = { alwaysinline }
; Block functions keep their copy and fill loops as loops (vectorised), not
; calls of libc's memcpy, memmove or memset.
; CHECK: attributes [[BLOCKATTRS]] = { "no-builtin-memcpy" "no-builtin-memmove" "no-builtin-memset" }
; CHECK-DAG: ![[BDX]] = !{i32 1, i32 1025}
; CHECK-DAG: ![[BDZ]] = !{i32 1, i32 65}
; CHECK-DAG: ![[BIX]] = !{i32 0, i32 2147483647}
; CHECK-DAG: ![[BIY]] = !{i32 0, i32 65535}
; CHECK-DAG: ![[GDX]] = !{i32 1, i32 -2147483648}
; CHECK-DAG: ![[GDY]] = !{i32 1, i32 65536}
; CHECK-NOT: tidal.kernels

; (@uses_helper is listed twice: it is still lowered once.)
!tidal.kernels = !{!0, !1, !1}
!0 = !{ptr @all_registers}
!1 = !{ptr @uses_helper}
